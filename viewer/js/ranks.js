/* Ranks: the processes of a distributed program the lecture started (trace format version 2,
   `ranks`). Each rank's steps are one contiguous range of the trace, spliced in after the step
   that started it. While a step of a rank is shown, a bar above the code names the ranks of its
   group; `[` and `]` (or a click) move to the same point of the program on another rank: the
   same line, executed the same number of times so far on that rank. A step that called a
   collective (all-reduce, all-gather, ...) gets a table of the tensors before and after the call
   on every rank of the group. */

import { el } from './dom.js';
import { t } from './i18n.js';
import { safeRender } from './env.js';

const STATUS_SENTENCES = {
  error: (rank) => t('Rank {rank} failed', { rank }),
  aborted: (rank) => t('Rank {rank} stopped after another rank failed', { rank }),
  terminated: (rank) => t('Rank {rank} was stopped', { rank }),
  lost: (rank) => t('Rank {rank} left no steps', { rank }),
  max_steps: (rank) => t('Rank {rank} hit its step limit', { rank }),
  timeout: (rank) => t('Rank {rank} timed out', { rank }),
};

/** The bar above the code while a rank's step is shown, and the collective table under it. */
export class RanksBar {
  constructor(root, go) {
    this.root = root;
    this.go = go; // go(step): show that step, as a move of the reader's
  }

  update(trace, s) {
    const ranks = trace.ranks;
    const here = ranks.at(s);
    this.root.hidden = !here;
    if (!here) return;
    const members = ranks.group(here.group);
    const buttons = members.map((entry) => el('button', {
      class: `rank-button rank-${entry.status}${entry === here ? ' current' : ''}`, type: 'button',
      'aria-pressed': String(entry === here), 'data-rank': entry.rank,
      title: entry.message ? `rank ${entry.rank}: ${entry.message}` : `rank ${entry.rank}: ${entry.status}`,
      text: String(entry.rank),
      onclick: () => {
        const target = entry === here ? s : ranks.samePoint(s, here, entry);
        if (target >= 0) this.go(target);
      },
    }));
    const line = el('div', { class: 'ranks-line' }, el('span', { class: 'ranks-label', text: t('rank') }), ...buttons,
      el('span', { class: 'ranks-hint', text: t('of {n} · [ and ] switch rank at this point', { n: members.length }) }));
    const parts = [line];
    if (here.status !== 'ok') {
      const sentence = STATUS_SENTENCES[here.status] ? STATUS_SENTENCES[here.status](here.rank)
        : t('Rank {rank} ended: {status}', { rank: here.rank, status: here.status });
      const why = here.message ? `${sentence}: ${here.message}` : sentence;
      const note = el('div', { class: `ranks-note rank-${here.status}` }, el('span', { text: why }));
      if (here.last >= here.first && s !== trace.snap(here.last)) {
        note.append(' ', el('button', { class: 'linklike', type: 'button', text: t('go to its last step'), onclick: () => this.go(trace.snap(here.last)) }));
      }
      parts.push(note);
    }
    const table = this.collectives(trace, s, here, members);
    if (table) parts.push(table);
    this.root.replaceChildren(...parts);
  }

  /** Before and after of every tensor of the collectives step s called, on every rank. */
  collectives(trace, s, here, members) {
    const records = trace.extras(s).collective;
    if (!Array.isArray(records) || !records.length) return null;
    const box = el('div', { class: 'collective' });
    records.forEach((record, index) => {
      const rows = [];
      for (const entry of members) {
        const point = entry === here ? s : trace.ranks.samePoint(s, here, entry);
        const theirs = point >= 0 ? trace.extras(point).collective : null;
        const same = Array.isArray(theirs) && theirs[index] && theirs[index].op === record.op ? theirs[index] : null;
        if (!same) {
          rows.push(el('tr', { class: 'collective-missing' }, el('th', { text: String(entry.rank) }),
            el('td', { colspan: 3, text: t('did not reach this call') })));
          continue;
        }
        same.values.forEach(([name, before, after], i) => {
          rows.push(el('tr', { class: entry === here ? 'current' : null },
            i === 0 ? el('th', { rowspan: same.values.length, text: String(entry.rank) }) : null,
            el('td', { class: 'collective-arg', text: name }),
            el('td', { class: 'collective-before' }, safeRender(before)), el('td', { class: 'collective-after' }, safeRender(after))));
        });
      }
      box.append(el('div', { class: 'collective-title', text: t('{op} on every rank', { op: record.op }) }),
        el('table', { class: 'collective-table' },
          el('thead', {}, el('tr', {}, el('th', { text: t('rank') }), el('th', { text: t('argument') }),
            el('th', { text: t('before the call') }), el('th', { text: t('after') }))),
          el('tbody', {}, rows)));
    });
    return box;
  }
}
