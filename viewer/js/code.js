/* One source file of a trace as a column of "units": a plain code line, or a rendering block
   (the statement that called text()/image()/link()/plot(), shown as its renderings, with its
   code underneath for raw mode). The DOM is built once per file, in chunks that layout skips
   while they are off screen; moving to another step only touches what differs: the current
   unit, the step's output, the units revealed or hidden between the two steps, and the
   blocks whose renderings change between them. */

import { el } from './dom.js';
import { t } from './i18n.js';
import { renderRenderings } from './renderings.js';
import { sanitizedHtml } from './sanitize.js';
import { NEVER } from './trace.js';
import { upper } from './sorted.js';

const CHUNK = 100; // units to a chunk
const LINE_HEIGHT = 21.6; // px, a code line (13.5px font, line-height 1.6)
const BLOCK_HEIGHT = 80; // px, a guess for a rendering block
const DEF = /^\s*(async\s+def|def|class)\b/;
const MAX_DECORATOR_LINES = 20; // lines searched from a function's first line (its decorators) to its `def`

// A comment that is a directive (`# @inspect x`), as pygments marks comments: dimmed, since
// it tells the tracer what to record and is not part of what the lecture says.
const DIRECTIVE = /<span class="(tok-c1?)">(#\s*@)/g;

// A line's highlighted HTML as shown, by the HTML in the trace: a re-trace after an edit changes
// few lines, and the new trace's code view is built from these instead of sanitizing every line again.
const shownLines = new Map();
const MAX_SHOWN_LINES = 50_000;

/** A code line's highlighted HTML, sanitized and with its directive comments dimmed. */
function shownCode(html) {
  let code = shownLines.get(html);
  if (code === undefined) {
    const source = sanitizedHtml(html); // highlighted by our renderer, but the trace may be hand-made
    code = source ? source.replace(DIRECTIVE, '<span class="$1 directive">$2') : ' ';
    if (shownLines.size >= MAX_SHOWN_LINES) shownLines.clear();
    shownLines.set(html, code);
  }
  return code;
}

/** A code line; `indent` (its leading spaces) sets the hanging indent of its wrapped parts. */
function lineHtml(number, html, indent, cls = 'line') {
  const style = indent ? ` style="--indent:${indent}ch"` : '';
  const code = shownCode(html);
  return `<div class="${cls}" data-line="${number}"${style}><a class="no" data-line="${number}">${number}</a><span class="src">${code}</span></div>`;
}

function indentOf(text = '') {
  return text.length - text.trimStart().length;
}

export class CodeView {
  /** new CodeView(trace, fileIndex, openFile) builds the DOM of one file into view.root. */
  constructor(trace, file, openFile) {
    this.trace = trace;
    this.file = file;
    this.openFile = openFile;
    this.root = el('div', { class: 'code', 'data-file': trace.files[file].path });
    this.step = -1;
    this.current = null;
    this.output = null;
    this.build();
    trace.solutions.decorate(this);
  }

  build() {
    const { trace, file } = this;
    const { html } = trace.files[file];
    const source = trace.files[file].source.split('\n');
    const n = html.length;
    const heads = trace.heads[file];
    // Units go in chunks of CHUNK; layout skips the chunks off screen (content-visibility:
    // auto), which then take an estimated height until they are first shown.
    const parts = [];
    const unitLines = []; // the lines of each unit
    let chunk = null;
    const openChunk = () => {
      chunk = { at: parts.length, units: 0, height: 0 };
      parts.push('');
    };
    const closeChunk = () => {
      parts[chunk.at] = `<div class="chunk" style="contain-intrinsic-size: auto ${Math.round(chunk.height)}px">`;
      parts.push('</div>');
    };
    openChunk();
    for (let line = 1; line <= n; line++) {
      if (trace.isHidden(file, line)) continue;
      if (chunk.units === CHUNK) {
        closeChunk();
        openChunk();
      }
      chunk.units++;
      if (heads[line] === line && trace.statementRenders(file, line)) {
        const lines = [];
        for (let l = line; l <= n && heads[l] === line; l++) if (!trace.isHidden(file, l)) lines.push(l);
        parts.push('<div class="unit block"><div class="rendered"></div><div class="raw-code">');
        for (const l of lines) parts.push(lineHtml(l, html[l - 1], indentOf(source[l - 1])));
        parts.push('</div></div>');
        unitLines.push(lines);
        line = lines[lines.length - 1];
        chunk.height += BLOCK_HEIGHT;
      } else {
        parts.push(lineHtml(line, html[line - 1], indentOf(source[line - 1]), 'unit line'));
        unitLines.push([line]);
        chunk.height += LINE_HEIGHT;
      }
    }
    closeChunk();
    this.root.innerHTML = parts.join('');

    this.lineEl = new Array(n + 1).fill(null);
    this.unitOfLine = new Int32Array(n + 1).fill(-1);
    this.units = Array.from(this.root.querySelectorAll('.unit'));
    for (const lineNode of this.root.querySelectorAll('.line')) this.lineEl[+lineNode.dataset.line] = lineNode;
    // A unit appears in reveal mode once any of its lines (or its statement's first line) ran,
    // or, for a function's header, once the function was first called.
    const headerFirst = this.headerSteps(source);
    this.unitFirst = new Int32Array(unitLines.length);
    this.blocks = [];
    unitLines.forEach((lines, u) => {
      let first = NEVER;
      for (const line of lines) {
        this.unitOfLine[line] = u;
        first = Math.min(first, trace.firstStepOf(file, line), trace.firstStepOf(file, heads[line]), headerFirst.get(line) ?? NEVER);
      }
      this.unitFirst[u] = first;
      if (this.units[u].classList.contains('block')) {
        this.blocks.push({ lines: lines.filter((l) => trace.hasRenderings(file, l)), shown: null, node: this.units[u].firstChild });
      }
    });
    this.revealOrder = Int32Array.from(this.unitFirst.keys()).sort((a, b) => this.unitFirst[a] - this.unitFirst[b]);
    this.revealSorted = Int32Array.from(this.revealOrder, (u) => this.unitFirst[u]);
    this.blockOfLine = new Map();
    for (const block of this.blocks) for (const line of block.lines) this.blockOfLine.set(line, block);
  }

  /** line -> the first step of the function whose header (decorators, `def` and its whole
      signature) holds that line, for the functions of this file that ran. Their `def` lines ran
      when the module was imported, before the trace began, so they have no step of their own. */
  headerSteps(source) {
    const { trace, file } = this;
    const heads = trace.heads[file];
    const firstSteps = trace.functionFirstSteps();
    const found = new Map();
    trace.functions.forEach(([f, name, firstLine], index) => {
      const step = firstSteps[index];
      if (f !== file || step === NEVER || name.startsWith('<')) return;
      for (let line = firstLine; line < firstLine + MAX_DECORATOR_LINES && line < heads.length; line++) {
        found.set(line, Math.min(found.get(line) ?? NEVER, step));
        if (!DEF.test(source[line - 1] || '')) continue;
        for (let l = line + 1; l < heads.length && heads[l] === line; l++) found.set(l, Math.min(found.get(l) ?? NEVER, step));
        break;
      }
    });
    return found;
  }

  /** The element to highlight and scroll to for a line: its unit. */
  unitElement(line) {
    const u = this.unitOfLine[line];
    return u >= 0 ? this.units[u] : null;
  }

  /** Show the file as of step s (s need not be in this file): current line, output, reveal, renderings. */
  setStep(s) {
    const { trace } = this;
    const previous = this.step;
    this.step = s;
    this.updateReveal(previous, s);
    this.updateRenderings(previous, s);
    if (this.current) {
      this.current.unit.classList.remove('current');
      this.current.line.classList.remove('current');
      this.current = null;
    }
    if (this.output) {
      this.output.remove();
      this.output = null;
    }
    if (trace.fileOfStep(s) !== this.file) return null;
    const line = trace.lineOfStep(s);
    const unit = this.unitElement(line);
    const lineNode = this.lineEl[line];
    if (!unit || !lineNode) return null;
    unit.classList.add('current');
    lineNode.classList.add('current');
    this.current = { unit, line: lineNode };
    this.output = this.outputOf(s);
    if (this.output) unit.after(this.output);
    return unit;
  }

  /** stdout, stderr and the error of step s, shown under its line; null when it has none. */
  outputOf(s) {
    const { o, e, x } = this.trace.extras(s);
    if (!o && !e && !x) return null;
    const box = el('div', { class: 'step-output' });
    if (o) box.append(el('pre', { class: 'stdout', 'aria-label': 'stdout', text: o }));
    if (e) box.append(el('pre', { class: 'stderr', 'aria-label': 'stderr', text: e }));
    if (x) {
      box.append(el('div', { class: 'error' },
        el('div', { class: 'error-title', text: `${x.type}: ${x.message}` }),
        el('pre', { class: 'traceback', text: x.traceback })));
    }
    return box;
  }

  /** Mark the units not yet run at s as "future" (hidden in reveal mode). Only units first run
      between the previous step and s change, so only those are touched. */
  updateReveal(previous, s) {
    const lo = previous < 0 ? -1 : Math.min(previous, s);
    const hi = previous < 0 ? NEVER : Math.max(previous, s);
    const sorted = this.revealSorted;
    let i = upper(sorted, 0, sorted.length, lo);
    for (; i < sorted.length && sorted[i] <= hi; i++) this.units[this.revealOrder[i]].classList.toggle('future', sorted[i] > s);
  }

  /** Redraw the blocks whose shown renderings differ at s: those with a rendering step between
      the previous step and s (all of them on the first call), unless the content is the same. */
  updateRenderings(previous, s) {
    if (!this.blocks.length) return;
    let blocks = this.blocks;
    if (previous >= 0) {
      const changed = this.trace.renderStepsBetween(previous, s);
      if (changed.length < this.blocks.length) {
        blocks = new Set();
        for (const step of changed) {
          if (this.trace.fileOfStep(step) !== this.file) continue;
          const block = this.blockOfLine.get(this.trace.lineOfStep(step));
          if (block) blocks.add(block);
        }
      }
    }
    for (const block of blocks) {
      const shown = block.lines.map((line) => this.trace.renderingStep(this.file, line, s));
      const content = shown.map((step) => (step < 0 ? -1 : this.trace.renderingContent[step]));
      if (block.shown && content.every((id, i) => id === block.shown[i])) continue;
      block.shown = content;
      const fragment = document.createDocumentFragment();
      try {
        for (const step of shown) if (step >= 0) fragment.append(renderRenderings(this.trace.extras(step).r, this.trace, this.openFile));
      } catch (error) {
        fragment.append(el('div', { class: 'r-error', text: `(this rendering cannot be shown: ${error.message})` }));
      }
      block.node.replaceChildren(fragment);
      // After a re-trace: a rendering whose text differs from the previous run's at the same point.
      const changed = Boolean(this.trace.changes) && shown.some((step) => step >= 0 && this.trace.changes.renderingChanged(step));
      block.node.classList.toggle('changed', changed);
      block.node.title = changed ? t('Changed by the edit') : '';
    }
  }
}
