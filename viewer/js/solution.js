/* Solution blocks: the body of a `with solution():` in a lecture (trace format version 2,
   `solutions`). Until the student asks, or steps into it, a block is folded: its code lines and
   renderings are hidden behind a "Show solution" bar, and the values it wrote show as hidden.
   Opening is for good: a solution once seen stays open while the trace is shown. */

import { el } from './dom.js';
import { t } from './i18n.js';
import { isIndex } from './sorted.js';


/** The trace's solution blocks, checked; `fail(message)` reports a malformed entry. */
export function readSolutions(raw, trace, fail) {
  if (raw === undefined) return new Solutions([]);
  if (!Array.isArray(raw)) fail('Malformed trace: "solutions" is not a list.');
  const blocks = raw.map((entry, i) => {
    const where = `solutions[${i}]`;
    if (!entry || typeof entry !== 'object') fail(`Malformed trace: ${where} is not an object.`);
    const { file, lines, steps } = entry;
    if (!isIndex(file, trace.files.length)) fail(`Malformed trace: ${where} names no file of the trace.`);
    const numLines = trace.files[file].html.length;
    if (!Array.isArray(lines) || lines.length !== 2 || !lines.every((line) => isIndex(line - 1, numLines)) || lines[0] > lines[1]) {
      fail(`Malformed trace: ${where} has lines ${JSON.stringify(lines)}, not a range of lines of ${trace.files[file].path}.`);
    }
    if (!Array.isArray(steps) || steps.length !== 2 || !isIndex(steps[0], trace.steps.length + 1)
        || !Number.isInteger(steps[1]) || steps[1] < steps[0] - 1 || steps[1] >= trace.steps.length) {
      fail(`Malformed trace: ${where} has steps ${JSON.stringify(steps)}, not a range of the trace's steps.`);
    }
    return { index: i, file, first: lines[0], last: lines[1], firstStep: steps[0], lastStep: steps[1] };
  });
  return new Solutions(blocks);
}

export class Solutions {
  constructor(blocks) {
    this.blocks = blocks;
    this.open = new Set();
    this.views = []; // code views decorated so far, redrawn when a block opens
  }

  /** The block whose steps include s, or null. */
  blockOfStep(s) {
    return this.blocks.find((block) => block.firstStep <= s && s <= block.lastStep) || null;
  }

  /** Whether what step s produced (its renderings, the values it wrote) is still hidden. */
  conceals(s) {
    const block = this.blockOfStep(s);
    return block !== null && !this.open.has(block.index);
  }

  /** Stepping into a block opens it. */
  visit(s) {
    const block = this.blockOfStep(s);
    if (block) this.setOpen(block, true);
  }

  setOpen(block, open) {
    if (this.open.has(block.index) === open) return;
    if (open) this.open.add(block.index);
    else this.open.delete(block.index);
    for (const view of this.views) this.drawBlock(view, block);
    if (this.onChange) this.onChange();
  }

  /** Give a code view its solution bars and fold its closed blocks. */
  decorate(view) {
    const blocks = this.blocks.filter((block) => block.file === view.file);
    if (!blocks.length) return;
    this.views.push(view);
    view.solutionParts = new Map();
    for (const block of blocks) {
      const units = [];
      for (let line = block.first; line <= block.last; line++) {
        const unit = view.unitElement(line);
        if (unit && !units.includes(unit)) units.push(unit);
      }
      if (!units.length) continue;
      const button = el('button', { class: 'solution-toggle', type: 'button',
        onclick: () => this.setOpen(block, !this.open.has(block.index)) });
      const bar = el('div', { class: 'solution-bar' }, button);
      units[0].before(bar);
      for (const unit of units) unit.classList.add('solution-body');
      view.solutionParts.set(block.index, { bar, button, units });
      this.drawBlock(view, block);
    }
  }

  drawBlock(view, block) {
    const parts = view.solutionParts && view.solutionParts.get(block.index);
    if (!parts) return;
    const open = this.open.has(block.index);
    parts.bar.classList.toggle('open', open);
    parts.button.textContent = open ? t('Hide solution') : t('Show solution');
    parts.button.setAttribute('aria-expanded', String(open));
    for (const unit of parts.units) unit.classList.toggle('solution-folded', !open);
  }
}
