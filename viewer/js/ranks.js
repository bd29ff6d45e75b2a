/* Ranks: the processes of a distributed program the lecture started (trace format version 2,
   `ranks`). Each rank's steps are one contiguous range of the trace, spliced in after the step
   that started it. While a step of a rank is shown, a bar above the code names the ranks of its
   group; `[` and `]` (or a click) move to the same point of the program on another rank: the
   same line, executed the same number of times so far on that rank. A step that called a
   collective (all-reduce, all-gather, ...) gets a table of the tensors before and after the call
   on every rank of the group. */

import { el } from './dom.js';
import { t } from './i18n.js';
import { upper } from './trace.js';
import { safeRender } from './env.js';

const isIndex = (value, length) => Number.isInteger(value) && value >= 0 && value < length;
const STATUS_SENTENCES = {
  error: (rank) => t('Rank {rank} failed', { rank }),
  aborted: (rank) => t('Rank {rank} stopped after another rank failed', { rank }),
  terminated: (rank) => t('Rank {rank} was stopped', { rank }),
  lost: (rank) => t('Rank {rank} left no steps', { rank }),
  max_steps: (rank) => t('Rank {rank} hit its step limit', { rank }),
  timeout: (rank) => t('Rank {rank} timed out', { rank }),
};

/** The trace's ranks, checked; `fail(message)` reports a malformed entry. */
export function readRanks(raw, trace, fail) {
  if (raw === undefined) return new Ranks([], trace);
  if (!Array.isArray(raw)) fail('Malformed trace: "ranks" is not a list.');
  let end = 0;
  const entries = raw.map((entry, i) => {
    const where = `ranks[${i}]`;
    if (!entry || typeof entry !== 'object') fail(`Malformed trace: ${where} is not an object.`);
    const { group, rank, steps, status } = entry;
    if (!Number.isInteger(group) || !Number.isInteger(rank) || typeof status !== 'string') {
      fail(`Malformed trace: ${where} lacks its group, rank or status.`);
    }
    if (!Array.isArray(steps) || steps.length !== 2 || !isIndex(steps[0], trace.steps.length + 1)
        || !Number.isInteger(steps[1]) || steps[1] < steps[0] - 1 || steps[1] >= trace.steps.length || steps[0] < end) {
      fail(`Malformed trace: ${where} has steps ${JSON.stringify(steps)}, not a range of the trace's steps after the previous rank's.`);
    }
    end = steps[1] + 1;
    return { group, rank, status, message: typeof entry.message === 'string' ? entry.message : '', first: steps[0], last: steps[1] };
  });
  return new Ranks(entries, trace);
}

export class Ranks {
  constructor(entries, trace) {
    this.entries = entries;
    this.trace = trace;
    this.firsts = Int32Array.from(entries, (entry) => entry.first);
  }

  /** The rank entry whose steps include s, or null (a step of the lecture's own process). */
  at(s) {
    const i = upper(this.firsts, 0, this.firsts.length, s) - 1;
    const entry = this.entries[i];
    return entry && s <= entry.last ? entry : null;
  }

  /** The ranks of a group, by rank. */
  group(group) {
    return this.entries.filter((entry) => entry.group === group).sort((a, b) => a.rank - b.rank);
  }

  /** The visible step of `target` at the same point as step s of rank `from`: the k-th run of the
      same line, or of the nearest earlier line of `from` that ran as often on `target`; failing
      that the first step of `target`. -1 when `target` left no visible step. */
  samePoint(s, from, target) {
    const trace = this.trace;
    for (let t = s; t >= from.first; t = trace.previous(t)) {
      const match = this.occurrence(t, from, target);
      if (match >= 0) return match;
    }
    const first = trace.snap(target.first);
    return first >= target.first && first <= target.last ? first : -1;
  }

  occurrence(t, from, target) {
    const { offsets, items } = this.trace.byLine;
    const key = this.trace.stepKey[t];
    const lo = offsets[key];
    const hi = offsets[key + 1];
    const k = upper(items, lo, hi, t) - upper(items, lo, hi, from.first - 1) - 1;
    const start = upper(items, lo, hi, target.first - 1);
    const end = upper(items, lo, hi, target.last);
    return k >= 0 && start + k < end ? items[start + k] : -1;
  }

  /** The step at the same point on the rank `direction` (+1, -1) away from s's, cycling; -1 outside ranks. */
  switchFrom(s, direction) {
    const here = this.at(s);
    if (!here) return -1;
    const members = this.group(here.group);
    for (let i = 1; i < members.length; i++) {
      const target = members[(members.indexOf(here) + direction * i + members.length * i) % members.length];
      const point = this.samePoint(s, here, target);
      if (point >= 0) return point;
    }
    return -1;
  }
}

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
