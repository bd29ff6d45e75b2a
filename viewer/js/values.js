/* Inspected values (trace/README.md "Values") as DOM, Python-flavoured: 'str', True, None,
   [1, 2], tensors as tables headed by shape, dtype and device. Every piece of a value goes in
   as text. Long values start collapsed in a <details> that opens on click. */

import { el, formatCount } from './dom.js';

const INLINE_ITEMS = 8; // containers with more items (or nested ones) get a collapsible list
const LONG_TEXT = 160; // strings and reprs longer than this start collapsed
const OPEN_TENSOR = 64; // tensors with more elements start with their table collapsed
const MAX_SLICES = 8; // slices of a >2-d tensor shown as tables
const ROW_WRAP = 8; // cells to a row for 1-d tensors

/** Python's float repr: 0.1 -> "0.1", 2 -> "2.0", 6.1e-05 -> "6.1e-05", "nan" -> "nan". */
function formatFloat(v) {
  if (typeof v === 'string') return v;
  const abs = Math.abs(v);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e16)) {
    const [mantissa, exponent] = v.toExponential().split('e');
    return `${mantissa}e${exponent[0]}${exponent.slice(1).padStart(2, '0')}`;
  }
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

/** A tensor cell: short, so tables stay narrow. */
function formatCell(v, isFloat) {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return v;
  if (!isFloat) return String(v);
  const abs = Math.abs(v);
  if (Number.isInteger(v) && abs < 1e5) return `${v}.`; // torch prints whole floats as "3."
  if (abs >= 1e5 || abs < 1e-4) return v.toExponential(3).replace(/\.?0+e/, 'e');
  return String(Number(v.toPrecision(4)));
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
  return collapsible(`${text.slice(0, 80)}… ${note || `(${formatCount(text.length)} characters)`}`.trim(), el('pre', { class: `${cls} v-full`, text: text + note }));
}

const isSimple = (v) => v === null || typeof v !== 'object' || ['float', 'int', 'dtype', 'device'].includes(v.t);

/** renderValue({"t": "float", "v": 0.5}) -> <span class="v-num">0.5</span> */
export function renderValue(value) {
  if (value === null || value === undefined) return el('span', { class: 'v-none', text: 'None' });
  if (typeof value === 'boolean') return el('span', { class: 'v-bool', text: value ? 'True' : 'False' });
  if (typeof value === 'number') return el('span', { class: 'v-num', text: String(value) });
  if (typeof value === 'string') return longText(quote(value), 'v-str');
  if (typeof value !== 'object' || Array.isArray(value)) return el('span', { class: 'v-obj', text: JSON.stringify(value) });
  switch (value.t) {
    case 'float':
      return el('span', { class: 'v-num', text: formatFloat(value.v) });
    case 'int':
      return longText(String(value.v), 'v-num');
    case 'dtype':
    case 'device':
      return el('span', { class: 'v-obj', text: String(value.v) });
    case 'str':
      return longText(quote(String(value.v)), 'v-str', ` … (${formatCount(value.len)} characters)`);
    case 'bytes':
      return longText(String(value.v), 'v-str', ` (${formatCount(value.len)} bytes)`);
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
      if (value.error) return el('span', {}, node, el('span', { class: 'v-note', text: ` (repr failed: ${value.error})` }));
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
  const more = total > items.length ? `, … ${formatCount(total - items.length)} more` : '';
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
  return collapsible(`${value.t} of ${formatCount(total)} items ${open}…${close}`, list, items.length <= INLINE_ITEMS);
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
  if (count > pairs.length) table.append(el('tr', {}, el('td', { class: 'v-note', colspan: '2', text: `… ${formatCount(count - pairs.length)} more` })));
  return collapsible(`${label} with ${formatCount(count)} ${label === 'dict' ? 'items' : 'fields'}`, table, pairs.length <= INLINE_ITEMS);
}

function renderInfo(value) {
  const keys = ['bits', 'min', 'max', 'eps', 'tiny', 'resolution'].filter((k) => value[k] !== undefined);
  const show = (k) => (value.t === 'finfo' && k !== 'bits' ? formatFloat(value[k]) : String(value[k]));
  return el('div', { class: 'v-info' },
    el('div', { class: 'v-tensor-head', text: `${value.t}(${value.dtype})` }),
    el('table', { class: 'v-pairs' }, keys.map((k) => el('tr', {}, el('th', { text: k }), el('td', { text: show(k) })))));
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
  if (!value.contiguous) notes.push(`non-contiguous, stride (${(value.stride || []).join(', ')})`);
  if (value.offset) notes.push(`storage offset ${value.offset}`);
  if (notes.length) head.append(' ', el('span', { class: 'v-note', text: notes.join(' · ') }));
  return head;
}

function row(cells, isFloat) {
  return el('tr', {}, cells.map((v) => el('td', { text: formatCell(v, isFloat) })));
}

/** A 1-d or 2-d block of numbers as a table; a long 1-d one wraps, ROW_WRAP to a row, the way
    numpy and torch wrap long vectors when printing. */
function matrix(data, isFloat) {
  let rows = data;
  if (!Array.isArray(data[0])) {
    rows = [];
    for (let i = 0; i < data.length || i === 0; i += ROW_WRAP) rows.push(data.slice(i, i + ROW_WRAP));
  }
  return el('table', { class: 'v-matrix' }, rows.map((r) => row(r, isFloat)));
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
    if (!Array.isArray(value.data)) {
      // A lone scalar (a loss, say) has the room for every digit a table cell cannot spare.
      const scalar = isFloat && typeof value.data === 'number' ? formatFloat(value.data) : formatCell(value.data, isFloat);
      node.append(el('span', { class: 'v-num', text: scalar }));
      return node;
    }
    if (shape.length <= 2) body = matrix(value.data, isFloat);
    else {
      const tables = [];
      slices(value.data, shape.length, [], isFloat, tables);
      body = el('div', {}, tables);
      if (tables.length * shape[shape.length - 1] * shape[shape.length - 2] < numel) body.append(el('div', { class: 'v-note', text: `first ${tables.length} slices shown` }));
    }
  } else {
    const stats = ['min', 'max', 'mean'].filter((k) => value[k] !== undefined).map((k) => `${k} ${formatCell(value[k], isFloat || k === 'mean')}`);
    body = el('div', {}, matrix(value.preview || [], isFloat),
      el('div', { class: 'v-note', text: `first ${(value.preview || []).length} of ${formatCount(numel)} elements${stats.length ? ' · ' + stats.join(' · ') : ''}` }));
  }
  if (numel <= OPEN_TENSOR) node.append(body);
  else node.append(collapsible(`${formatCount(numel)} elements`, body));
  return node;
}
