/* The environment panel: the inspected values of the current frame as of the current step.
   Rows are kept per name and rebuilt only when the value object changes, so stepping through
   a frame costs a few class toggles. */

import { el } from './dom.js';
import { t } from './i18n.js';
import { exactText, renderValue } from './values.js';

const isTensor = (v) => v && typeof v === 'object' && (v.t === 'tensor' || v.t === 'ndarray');

/** A value the trace encodes in a way this viewer does not know still gets a row, saying so. */
export function safeRender(value) {
  try {
    return renderValue(value);
  } catch (error) {
    return el('span', { class: 'v-note', text: `(this value cannot be shown: ${error.message})` });
  }
}

/** Put the value, every digit of it, on the clipboard; the button says it worked. */
async function copyExact(value, button) {
  const text = exactText(value);
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (a page not served from localhost or HTTPS): the old way.
    const area = el('textarea', { class: 'env-copy-buffer' });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  button.textContent = t('copied');
  setTimeout(() => { button.textContent = t('copy exact'); }, 1200);
}

export class EnvPanel {
  constructor(root) {
    this.root = root;
    this.heading = el('div', { class: 'env-head' });
    this.list = el('div', { class: 'env-list' });
    this.empty = el('div', { class: 'env-empty', text: t('No inspected values in this frame yet. A "# @inspect x" comment on a line records x.') });
    root.replaceChildren(this.heading, this.list);
    this.frame = -1;
    this.rows = new Map();
  }

  /** Show the frame of step s; values written after step `since` are highlighted as changed. */
  update(trace, s, since) {
    const call = trace.stepCall[s];
    const frame = trace.frameRoot[call];
    if (frame !== this.frame) {
      this.frame = frame;
      this.rows.clear();
    }
    const file = trace.files[trace.fileOfStep(s)];
    this.heading.replaceChildren(el('span', { class: 'env-fn', text: trace.functionName(call) }),
      el('span', { class: 'env-where', text: ` ${file.path}:${trace.lineOfStep(s)}` }));
    const env = trace.environment(s);
    const before = trace.changes ? trace.changes.previousEnvironment(s) : null; // after a re-trace
    const rows = [];
    const storages = new Map();
    for (const [name, entry] of env) {
      let row = this.rows.get(name);
      const concealed = trace.solutions.conceals(entry.step);
      if (!row || row.value !== entry.value || row.concealed !== concealed) {
        const note = el('div', { class: 'env-note' });
        const value = entry.value;
        const copy = el('button', { type: 'button', class: 'env-copy', text: t('copy exact'),
          title: t('Copy {name} with every digit', { name }), onclick: () => copyExact(value, copy) });
        const shown = concealed ? el('span', { class: 'v-note solution-concealed', text: t('(in a solution: show it to see this value)') })
          : safeRender(value);
        const differs = el('span', { class: 'env-differs', hidden: true });
        const node = el('div', { class: 'env-row', 'data-name': name },
          el('div', { class: 'env-title' }, el('div', { class: 'env-name', text: name }), differs, concealed ? null : copy),
          el('div', { class: 'env-value' }, shown, note));
        row = { value: entry.value, concealed, note, node, differs };
        this.rows.set(name, row);
      }
      row.node.classList.toggle('changed', entry.step > since);
      this.markDifference(row, concealed ? null : trace.changes?.valueChange(name, entry.value, before));
      rows.push(row);
      if (isTensor(entry.value) && !concealed) {
        const names = storages.get(entry.value.storage) || [];
        names.push(name);
        storages.set(entry.value.storage, names);
      }
    }
    for (const name of [...this.rows.keys()]) if (!env.has(name)) this.rows.delete(name);
    for (const [name, row] of this.rows) {
      const shared = isTensor(row.value) && !row.concealed ? storages.get(row.value.storage).filter((other) => other !== name) : [];
      row.note.textContent = shared.length ? t('shares storage with {names}', { names: shared.join(', ') }) : '';
    }
    const nodes = rows.length ? rows.map((row) => row.node) : [this.empty];
    const same = nodes.length === this.list.childElementCount && nodes.every((node, i) => this.list.children[i] === node);
    if (!same) this.list.replaceChildren(...nodes);
  }

  /** A value that differs from the previous run's at the same point says so, the old value on hover. */
  markDifference(row, change) {
    row.node.classList.toggle('differs', Boolean(change));
    row.differs.hidden = !change;
    if (!change) return;
    row.differs.textContent = change.before === null ? t('new since the edit') : t('changed by the edit');
    row.differs.title = change.before === null ? t('Not there at this point in the previous run')
      : t('Before the edit: {value}', { value: change.before });
  }
}
