/* A small code editor for lecture sources, in plain JavaScript over a native <textarea> (see
   DEVELOPERS.md "The editor" for why not a vendored component): line numbers in a gutter that
   scrolls with the text, the cursor's line highlighted, Tab / Shift+Tab to indent and
   outdent the selected lines, Enter keeping the indentation (one level more after a colon).
   Edits go through the browser's own editing commands where it has them, so undo keeps working. */

import { el } from './dom.js';

const INDENT = '    ';

/** The 1-based line holding character `offset` of `text`. */
function lineAt(text, offset) {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

export class CodeEditor {
  /** new CodeEditor({label, onInput}): `root` goes in the page; `area` is the textarea. */
  constructor({ label, onInput = () => {} }) {
    this.onInput = onInput;
    this.numbers = el('div', { class: 'ce-numbers' });
    this.gutter = el('div', { class: 'ce-gutter', 'aria-hidden': 'true' }, this.numbers);
    this.highlight = el('div', { class: 'ce-current', 'aria-hidden': 'true' });
    this.area = el('textarea', { class: 'ce-text', spellcheck: 'false', autocomplete: 'off', autocapitalize: 'off',
      wrap: 'off', 'aria-label': label });
    this.root = el('div', { class: 'code-editor' }, this.gutter, el('div', { class: 'ce-body' }, this.highlight, this.area));
    this.lineCount = 0;
    this.line = 0;
    this.area.addEventListener('input', () => {
      this.refresh();
      this.onInput();
    });
    this.area.addEventListener('scroll', () => this.follow());
    this.area.addEventListener('keydown', (event) => this.onKey(event));
    for (const type of ['keyup', 'click', 'select', 'focus']) this.area.addEventListener(type, () => this.markLine());
  }

  get value() {
    return this.area.value;
  }

  set value(text) {
    this.area.value = text;
    this.refresh();
  }

  focus() {
    this.area.focus();
  }

  /** The line the cursor is on (1-based). */
  get currentLine() {
    return lineAt(this.area.value, this.area.selectionStart);
  }

  /** Put the cursor at the start of `line` and scroll it to a third of the way down. */
  goToLine(line) {
    const text = this.area.value;
    let offset = 0;
    for (let l = 1; l < line; l++) {
      const next = text.indexOf('\n', offset);
      if (next < 0) break;
      offset = next + 1;
    }
    this.area.setSelectionRange(offset, offset);
    this.area.scrollTop = Math.max(0, (this.currentLine - 1) * this.lineHeight() - this.area.clientHeight / 3);
    this.markLine();
  }

  lineHeight() {
    return parseFloat(getComputedStyle(this.area).lineHeight) || 20;
  }

  /** Renumber the gutter when the number of lines changed; re-mark the current line. */
  refresh() {
    const count = this.area.value.split('\n').length;
    if (count !== this.lineCount) {
      this.lineCount = count;
      this.numbers.textContent = Array.from({ length: count }, (_, i) => i + 1).join('\n');
    }
    this.markLine();
  }

  markLine() {
    this.line = this.currentLine;
    this.follow();
  }

  /** Keep the gutter and the highlight level with the text as it scrolls. */
  follow() {
    const top = parseFloat(getComputedStyle(this.area).paddingTop) || 0;
    this.gutter.scrollTop = this.area.scrollTop;
    this.highlight.style.transform = `translateY(${top + (this.line - 1) * this.lineHeight() - this.area.scrollTop}px)`;
  }

  onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === 'Tab') {
      event.preventDefault();
      this.indent(event.shiftKey);
    } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.newline();
    }
  }

  /** Replace the selection with `text` (as typing would, so undo can take it back) and select
      it when `select`; input listeners run as for typing. */
  insert(text, select = false) {
    const area = this.area;
    const start = area.selectionStart;
    if (!document.execCommand('insertText', false, text)) {
      area.setRangeText(text, start, area.selectionEnd, 'end');
      area.dispatchEvent(new Event('input'));
    }
    if (select) area.setSelectionRange(start, start + text.length);
  }

  /** Tab inserts spaces (or indents the selected lines); Shift+Tab removes one level. */
  indent(outdent) {
    const area = this.area;
    const { selectionStart: start, selectionEnd: end, value } = area;
    if (!outdent && !value.slice(start, end).includes('\n')) {
      this.insert(INDENT);
      return;
    }
    const first = value.lastIndexOf('\n', start - 1) + 1;
    // A selection that ends at the start of a line does not take that line in.
    const last = end > start && value[end - 1] === '\n' ? end - 1 : end;
    const block = value.slice(first, last);
    const changed = block.split('\n').map((line) => (outdent ? line.slice(line.match(/^ {0,4}/)[0].length) : INDENT + line)).join('\n');
    if (changed === block) return;
    area.setSelectionRange(first, last);
    this.insert(changed, true);
  }

  /** A new line indented like the current one, one level deeper after a line ending in ':'. */
  newline() {
    const { selectionStart: start, value } = this.area;
    const lineStart = value.lastIndexOf('\n', start - 1) + 1;
    const before = value.slice(lineStart, start);
    const indent = before.match(/^[ \t]*/)[0] + (/:\s*$/.test(before) ? INDENT : '');
    this.insert(`\n${indent}`);
  }
}
