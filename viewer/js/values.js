/* Inspected values (trace/README.md "Values") as DOM, Python-flavoured: 'str', True, None,
   [1, 2], tensors as tables headed by shape, dtype and device. Every piece of a value goes in
   as text. Long values start collapsed in a <details> that opens on click. */

import { el } from './dom.js';
import { t, tCount } from './i18n.js';
import { exactFloat, groupDigits, shortFloat } from './numbers.js';

const INLINE_ITEMS = 8; // containers with more items (or nested ones) get a collapsible list
const LONG_TEXT = 160; // strings and reprs longer than this start collapsed
const OPEN_TENSOR = 64; // tensors with more elements start with their table collapsed
const MAX_SLICES = 8; // slices of a >2-d tensor shown as tables

/** A number as shown (rounded, grouped) with its exact value on hover when they differ. */
function number(shown, exact, tag = 'span', cls = 'v-num') {
  return el(tag, { class: cls, text: shown, title: shown === exact ? null : exact });
}

/** A tensor cell: short, so tables stay narrow. Whole floats read "3." as torch prints them. */
function formatCell(v, isFloat) {
  if (isPair(v)) return complexText(v, (part) => formatCell(part, true));
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return v;
  if (!isFloat) return groupDigits(v);
  if (Number.isInteger(v) && Math.abs(v) < 1e5) return `${groupDigits(v)}.`;
  return shortFloat(v);
}

function exactCell(v, isFloat) {
  if (isPair(v)) return complexText(v, exactFloat);
  if (typeof v !== 'number') return formatCell(v, isFloat);
  return isFloat ? exactFloat(v) : String(v);
}

/** A complex element: the trace writes it as a [real, imag] pair. */
function isPair(v) {
  return Array.isArray(v) && v.length === 2 && v.every((part) => typeof part === 'number' || typeof part === 'string');
}

/** A complex element as Python writes one: complexText([1, -2], String) -> "(1-2j)" */
function complexText([real, imag], part) {
  const imagText = part(imag);
  const sign = imagText.startsWith('-') ? '' : '+';
  return `(${part(real)}${sign}${imagText}j)`;
}

function cell(v, isFloat, tag = 'td') {
  return number(formatCell(v, isFloat), exactCell(v, isFloat), tag, null);
}

function quote(text) {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

function collapsible(summaryText, body, open = false) {
  const details = el('details', { class: 'v-long' }, el('summary', { text: summaryText }), body);
  details.open = open;
  return details;
}

function longText(text, cls, note = '') {
  if (text.length <= LONG_TEXT) return el('span', { class: cls, text: text + note });
  const count = `(${tCount(text.length, '{count} character', '{count} characters')})`;
  return collapsible(`${text.slice(0, 80)}… ${note || count}`.trim(), el('pre', { class: `${cls} v-full`, text: text + note }));
}

const isSimple = (v) => v === null || typeof v !== 'object' || ['float', 'int', 'dtype', 'device'].includes(v.t);

/** renderValue({"t": "float", "v": 0.5}) -> <span class="v-num">0.5</span> */
export function renderValue(value) {
  if (value === null || value === undefined) return el('span', { class: 'v-none', text: 'None' });
  if (typeof value === 'boolean') return el('span', { class: 'v-bool', text: value ? 'True' : 'False' });
  if (typeof value === 'number') return number(groupDigits(value), String(value));
  if (typeof value === 'string') return longText(quote(value), 'v-str');
  if (typeof value !== 'object' || Array.isArray(value)) return el('span', { class: 'v-obj', text: JSON.stringify(value) });
  switch (value.t) {
    case 'float':
      return number(shortFloat(value.v), exactFloat(value.v));
    case 'int':
      return String(value.v).length > LONG_TEXT ? longText(String(value.v), 'v-num') : number(groupDigits(value.v), String(value.v));
    case 'dtype':
    case 'device':
      return el('span', { class: 'v-obj', text: String(value.v) });
    case 'str':
      return longText(quote(String(value.v)), 'v-str', ` … (${tCount(value.len, '{count} character', '{count} characters')})`);
    case 'bytes':
      return longText(String(value.v), 'v-str', ` (${tCount(value.len, '{count} byte', '{count} bytes')})`);
    case 'list':
    case 'tuple':
    case 'set':
    case 'frozenset':
      return renderSequence(value);
    case 'dict':
      return renderPairs(value.items || [], { open: '{', close: '}', separator: ': ', total: value.len, label: 'dict', renderKey: renderValue });
    case 'dataclass':
      return renderPairs(value.fields || [], { open: `${value.cls}(`, close: ')', separator: '=', label: value.cls,
        renderKey: (k) => el('span', { class: 'v-key', text: k }) });
    case 'tensor':
    case 'ndarray':
      return renderTensor(value);
    case 'finfo':
    case 'iinfo':
      return renderInfo(value);
    case 'object':
    case 'truncated': {
      const node = longText(value.repr === null || value.repr === undefined ? `<${value.cls}>` : String(value.repr), 'v-obj');
      if (value.error) return el('span', {}, node, el('span', { class: 'v-note', text: t(' (repr failed: {error})', { error: value.error }) }));
      return node;
    }
    default:
      return el('span', { class: 'v-obj', text: JSON.stringify(value) });
  }
}

function brackets(t) {
  if (t === 'tuple') return ['(', ')'];
  if (t === 'set' || t === 'frozenset') return ['{', '}'];
  return ['[', ']'];
}

function renderSequence(value) {
  const items = value.items || [];
  const [open, close] = brackets(value.t);
  const total = value.len ?? items.length;
  const more = total > items.length ? `, ${t('… {n} more', { n: groupDigits(total - items.length) })}` : '';
  if (items.length <= INLINE_ITEMS && items.every(isSimple)) {
    const node = el('span', { class: 'v-seq' }, open);
    items.forEach((item, i) => {
      if (i) node.append(', ');
      node.append(renderValue(item));
    });
    if (value.t === 'tuple' && items.length === 1) node.append(',');
    node.append(more + close);
    return node;
  }
  const list = el('ol', { class: 'v-items', start: '0' }, items.map((item) => el('li', {}, renderValue(item))));
  if (more) list.append(el('li', { class: 'v-note', text: more.slice(2) }));
  const summary = t('{type} of {items} {open}…{close}', { type: value.t, items: tCount(total, '{count} item', '{count} items'), open, close });
  return collapsible(summary, list, items.length <= INLINE_ITEMS);
}

/** Key-value pairs (a dict's items, a dataclass's fields): inline when few and simple, else a
    collapsible table. `total` is the count before truncation, when the trace cut some off. */
function renderPairs(pairs, { open, close, separator, total, label, renderKey }) {
  const count = total ?? pairs.length;
  const simple = pairs.length <= INLINE_ITEMS / 2 && pairs.every(([k, v]) => isSimple(k) && isSimple(v));
  if (simple) {
    const node = el('span', { class: 'v-seq' }, open);
    pairs.forEach(([k, v], i) => {
      if (i) node.append(', ');
      node.append(renderKey(k), separator, renderValue(v));
    });
    node.append(close);
    return node;
  }
  const table = el('table', { class: 'v-pairs' }, pairs.map(([k, v]) => el('tr', {}, el('th', {}, renderKey(k)), el('td', {}, renderValue(v)))));
  if (count > pairs.length) table.append(el('tr', {}, el('td', { class: 'v-note', colspan: '2', text: t('… {n} more', { n: groupDigits(count - pairs.length) }) })));
  const items = label === 'dict' ? tCount(count, '{count} item', '{count} items') : tCount(count, '{count} field', '{count} fields');
  return collapsible(t('{label} with {items}', { label, items }), table, pairs.length <= INLINE_ITEMS);
}

function renderInfo(value) {
  const keys = ['bits', 'min', 'max', 'eps', 'tiny', 'resolution'].filter((k) => value[k] !== undefined);
  const isFloat = (k) => value.t === 'finfo' && k !== 'bits';
  return el('div', { class: 'v-info' },
    el('div', { class: 'v-tensor-head', text: `${value.t}(${value.dtype})` }),
    el('table', { class: 'v-pairs' }, keys.map((k) => el('tr', {}, el('th', { text: k }),
      isFloat(k) ? number(shortFloat(value[k]), exactFloat(value[k]), 'td') : number(groupDigits(value[k]), String(value[k]), 'td')))));
}

function tensorHead(value) {
  const shape = `[${(value.shape || []).join(', ')}]`;
  const head = el('div', { class: 'v-tensor-head' },
    el('span', { class: 'v-shape', text: shape }), ' ',
    el('span', { class: 'v-dtype', text: value.dtype }), ' ',
    el('span', { class: 'v-device', text: value.device }));
  const notes = [];
  if (value.t === 'ndarray') notes.push('ndarray');
  if (value.requires_grad) notes.push('requires_grad');
  if (!value.contiguous) notes.push(t('non-contiguous, stride ({stride})', { stride: (value.stride || []).join(', ') }));
  if (value.offset) notes.push(t('storage offset {n}', { n: groupDigits(value.offset) }));
  if (notes.length) head.append(' ', el('span', { class: 'v-note', text: notes.join(' · ') }));
  return head;
}

/** A 2-d block of numbers as a table, in a box that scrolls sideways when it is wider than the panel. */
function matrix(data, isFloat) {
  const table = el('table', { class: 'v-matrix' }, data.map((r) => el('tr', {}, r.map((v) => cell(v, isFloat)))));
  return el('div', { class: 'v-scroll' }, table);
}

/** A 1-d run of numbers as one row that wraps at the panel's edge, each cell labelled with its
    index, so it cannot be mistaken for a matrix. `first` is the index of data[0]. */
function vector(data, isFloat, first = 0) {
  const cells = data.map((v) => cell(v, isFloat, 'span'));
  // Columns as wide as the widest cell, so the wrapped rows line up.
  const chars = Math.max(2, ...cells.map((node) => node.textContent.length), String(first + data.length - 1).length);
  return el('div', { class: 'v-vector', style: `--cell-chars: ${chars}` }, cells.map((node, i) => el('span', { class: 'v-el' },
    el('span', { class: 'v-index', text: String(first + i) }), node)));
}

/** The 2-d tables of a tensor with more dimensions, each captioned with its leading indexes. */
function slices(data, depth, prefix, isFloat, out) {
  if (depth === 2) {
    out.push(el('div', { class: 'v-slice' }, el('div', { class: 'v-note', text: `[${prefix.join(', ')}, :, :]` }), matrix(data, isFloat)));
    return;
  }
  for (let i = 0; i < data.length && out.length < MAX_SLICES; i++) slices(data[i], depth - 1, [...prefix, i], isFloat, out);
}

function renderTensor(value) {
  const shape = value.shape || [];
  const numel = shape.reduce((a, b) => a * b, 1);
  const isFloat = /float|half|bfloat|complex|double/.test(value.dtype);
  const node = el('div', { class: 'v-tensor' }, tensorHead(value));
  let body;
  if (value.data !== undefined) {
    if (!Array.isArray(value.data) || (shape.length === 0 && isPair(value.data))) {
      const scalar = value.data;
      node.append(isFloat && typeof scalar === 'number' ? number(shortFloat(scalar), exactFloat(scalar)) : cell(scalar, isFloat, 'span'));
      return node;
    }
    if (shape.length === 1) body = vector(value.data, isFloat);
    else if (shape.length === 2) body = matrix(value.data, isFloat);
    else {
      const tables = [];
      slices(value.data, shape.length, [], isFloat, tables);
      body = el('div', {}, tables);
      if (tables.length * shape[shape.length - 1] * shape[shape.length - 2] < numel) body.append(el('div', { class: 'v-note', text: t('first {n} slices shown', { n: tables.length }) }));
    }
  } else {
    const stats = ['min', 'max', 'mean'].filter((k) => value[k] !== undefined).map((k) => `${k} ${formatCell(value[k], isFloat || k === 'mean')}`);
    const preview = value.preview || [];
    body = el('div', {}, vector(preview, isFloat),
      el('div', { class: 'v-note', text: t('first {n} of {elements} (flattened)', { n: groupDigits(preview.length), elements: tCount(numel, '{count} element', '{count} elements') })
        + (stats.length ? ' · ' + stats.join(' · ') : '') }));
  }
  if (numel <= OPEN_TENSOR) node.append(body);
  else node.append(collapsible(tCount(numel, '{count} element', '{count} elements'), body));
  return node;
}

/** The value written out in full, Python-flavoured, every digit kept: what "copy exact" copies.
    exactText({"t": "float", "v": 0.30769}) -> "0.30769" */
export function exactText(value) {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return quote(value);
  if (typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value);
  const many = (items) => items.map(exactText).join(', ');
  const pairs = (items, separator, key = exactText) => items.map(([k, v]) => `${key(k)}${separator}${exactText(v)}`).join(', ');
  const cut = (shown, total) => (total > shown ? `, … ${total - shown} more` : '');
  switch (value.t) {
    case 'float': return exactFloat(value.v);
    case 'int': case 'dtype': case 'device': return String(value.v);
    case 'str': return quote(String(value.v)) + (value.len > String(value.v).length ? ` … (${value.len} characters)` : '');
    case 'bytes': return String(value.v);
    case 'list': case 'tuple': case 'set': case 'frozenset': {
      const items = value.items || [];
      const [open, close] = brackets(value.t);
      const single = value.t === 'tuple' && items.length === 1 ? ',' : '';
      return `${open}${many(items)}${single}${cut(items.length, value.len ?? items.length)}${close}`;
    }
    case 'dict': return `{${pairs(value.items || [], ': ')}${cut((value.items || []).length, value.len ?? 0)}}`;
    case 'dataclass': return `${value.cls}(${pairs(value.fields || [], '=', String)})`;
    case 'tensor': case 'ndarray': {
      const isFloat = /float|half|bfloat|complex|double/.test(value.dtype);
      const complex = /complex/.test(value.dtype); // its innermost arrays are [real, imag] pairs
      const write = (data) => (Array.isArray(data) && !(complex && isPair(data)) ? `[${data.map(write).join(', ')}]` : exactCell(data, isFloat));
      const data = value.data !== undefined ? write(value.data) : `${write(value.preview || [])} (first ${(value.preview || []).length} of the elements, flattened)`;
      const shape = value.shape || [];
      return `${value.t}(${data}, shape=(${shape.join(', ')}${shape.length === 1 ? ',' : ''}), dtype=${value.dtype})`;
    }
    case 'finfo': case 'iinfo':
      return `${value.t}(${['bits', 'min', 'max', 'eps', 'tiny', 'resolution'].filter((k) => value[k] !== undefined)
        .map((k) => `${k}=${value.t === 'finfo' && k !== 'bits' ? exactFloat(value[k]) : value[k]}`).join(', ')}, dtype=${value.dtype})`;
    default:
      return value.repr === null || value.repr === undefined ? `<${value.cls}>` : String(value.repr);
  }
}
