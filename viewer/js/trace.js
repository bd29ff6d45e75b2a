/* The trace model: checks a parsed trace (trace/README.md) and precomputes the indexes that
   make every navigation a few binary searches, whatever the trace's size:
     - visible steps in execution order (steps on @hide lines are never stopped on, nor the
       steps inside a rendering statement before its last one: see passedOver),
     - visible steps grouped by frame (a call plus the activations that `continue` it) and
       by source line,
     - steps carrying renderings grouped by line,
     - value updates grouped by frame, with environment snapshots every SNAPSHOT_EVERY
       updates, made on first use.
   Indexes are flat Int32Arrays in CSR form: the items of key k are
   items[offsets[k] .. offsets[k + 1]), sorted by step. */

import { readSolutions } from './solution.js';
import { readRanks } from './ranks_model.js';
import { isIndex, upper } from './sorted.js';

const FORMAT = 'cs336-lectures-trace';
const READABLE_VERSIONS = [1, 2]; // version 2 only adds optional fields
const SNAPSHOT_EVERY = 64;
/** A step number later than any step: "never runs" sorts after every real step. */
export const NEVER = 0x7fffffff;
const MAX_DIFF_CELLS = 4_000_000; // beyond this an edit is a rewrite: no matching, the same line number

/** A trace that cannot be shown; the message says why, in words for the reader. */
class TraceError extends Error {}

function fail(message) {
  throw new TraceError(message);
}

/** Fetch and check the trace at `url` (or take the response already requested for it):
    loadTrace('traces/lecture_01.json') -> Trace */
export async function loadTrace(url, pending = fetch(url, { cache: 'no-store' })) {
  let response;
  try {
    response = await pending;
  } catch (error) {
    fail(`Could not fetch ${url}: ${error.message}`);
  }
  if (!response.ok) fail(`The trace file ${url} could not be loaded (HTTP ${response.status}).`);
  let data;
  try {
    data = await response.json();
  } catch (error) {
    fail(`${url} is not valid JSON, so it is probably truncated or corrupted (${error.message}). Trace the lecture again.`);
  }
  return new Trace(data, url);
}

/** Where line `line` of `before` went in `after`, an edited version of the same file. Lines
    above the first change and below the last keep their place; inside the change the two
    versions are matched line by line (a longest common subsequence), and a line that was
    replaced goes to its replacement (the k-th line of a replaced block to the k-th line that
    replaced it), and one removed to the line that now follows its place.
    followLine('a\nb', 'new\na\nb', 2) -> 3 */
export function followLine(before, after, line) {
  return lineFollower(before, after)(line);
}

/** followLine for many lines of one edit: the files are split and compared once.
    lineFollower('a\nb', 'new\na\nb')(1) -> 2 */
export function lineFollower(before, after) {
  const old = before.split('\n');
  const now = after.split('\n');
  let prefix = 0;
  while (prefix < old.length && prefix < now.length && old[prefix] === now[prefix]) prefix++;
  let suffix = 0;
  while (suffix < old.length - prefix && suffix < now.length - prefix
    && old[old.length - 1 - suffix] === now[now.length - 1 - suffix]) suffix++;
  const a = old.slice(prefix, old.length - suffix);
  const b = now.slice(prefix, now.length - suffix);
  const width = b.length + 1;
  let common = null; // common[i * width + j]: LCS of a[i:], b[j:]; made when a line inside the change is asked for
  const removes = (i, j) => a[i] !== b[j] && common[(i + 1) * width + j] >= common[i * width + j + 1];
  return (line) => {
    if (line <= prefix) return line;
    if (line > old.length - suffix) return line + now.length - old.length;
    if (a.length * b.length > MAX_DIFF_CELLS) return Math.min(line, now.length);
    common ??= commonSuffixLengths(a, b);
    const target = line - prefix - 1;
    let i = 0;
    let j = 0;
    let removed = 0; // lines removed since the last kept or added one
    while (i < a.length && j < b.length) {
      if (!removes(i, j) && a[i] !== b[j]) {
        j++; // b[j] is new
        removed = 0;
        continue;
      }
      if (i === target) {
        if (a[i] === b[j]) return prefix + j + 1; // kept
        // Replaced: a block of removed lines followed by added ones is matched line by line;
        // past the added ones, it goes to the first of them.
        let end = i;
        while (end < a.length && removes(end, j)) end++;
        let added = 0;
        while (j + added < b.length && (end >= a.length || (a[end] !== b[j + added] && !removes(end, j + added)))) added++;
        return prefix + j + (removed < added ? removed : 0) + 1;
      }
      if (a[i] === b[j]) {
        j++;
        removed = 0;
      } else {
        removed++;
      }
      i++;
    }
    return Math.min(prefix + j + 1, now.length);
  };
}

/** The longest-common-subsequence table of two line lists, row by row: entry i * (b.length + 1) + j
    is the LCS length of a[i:] and b[j:]. */
function commonSuffixLengths(a, b) {
  const width = b.length + 1;
  const common = new Int32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i * width + j] = a[i] === b[j] ? common[(i + 1) * width + j + 1] + 1
        : Math.max(common[(i + 1) * width + j], common[i * width + j + 1]);
    }
  }
  return common;
}

/** For each 1-based line, the first line of the statement it belongs to: a statement goes on
    while brackets are open, a triple-quoted string is open, or a line ends with a backslash.
    statementHeads(['text("""', 'hi', '""")']) -> [0, 1, 1, 1] */
export function statementHeads(lines) {
  const heads = new Int32Array(lines.length + 1);
  let depth = 0;
  let openString = null;
  let continued = false;
  let head = 1;
  for (let i = 1; i <= lines.length; i++) {
    if (depth === 0 && !openString && !continued) head = i;
    heads[i] = head;
    const text = lines[i - 1];
    let j = 0;
    continued = false;
    while (j < text.length) {
      if (openString) {
        const end = closingQuote(text, j, openString);
        if (end < 0) break;
        j = end + openString.length;
        openString = null;
        continue;
      }
      const ch = text[j];
      if (ch === '#') break;
      if (ch === '"' || ch === "'") {
        const quote = text.startsWith(ch.repeat(3), j) ? ch.repeat(3) : ch;
        const end = closingQuote(text, j + quote.length, quote);
        if (end < 0) {
          if (quote.length === 3) openString = quote;
          break;
        }
        j = end + quote.length;
        continue;
      }
      if (ch === '(' || ch === '[' || ch === '{') depth++;
      else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
      else if (ch === '\\' && j === text.length - 1) continued = true;
      j++;
    }
  }
  return heads;
}

function closingQuote(text, from, quote) {
  for (let k = from; k < text.length; k++) {
    if (text[k] === '\\') k++;
    else if (text.startsWith(quote, k)) return k;
  }
  return -1;
}



/** Group positions 0..n-1 by keys[i] (skipping -1) into {offsets, items}. */
function groupBy(keys, numKeys) {
  const offsets = new Int32Array(numKeys + 1);
  for (let i = 0; i < keys.length; i++) if (keys[i] >= 0) offsets[keys[i] + 1]++;
  for (let k = 0; k < numKeys; k++) offsets[k + 1] += offsets[k];
  const items = new Int32Array(offsets[numKeys]);
  const fill = offsets.slice(0, numKeys);
  for (let i = 0; i < keys.length; i++) if (keys[i] >= 0) items[fill[keys[i]]++] = i;
  return { offsets, items };
}

/** {language: text} of the index-th heading of a markdown rendering, from its translations. */
function translatedHeadings(rendering, index) {
  const texts = {};
  for (const [language, translation] of Object.entries(rendering.translations || {})) {
    const heading = translation && Array.isArray(translation.headings) && translation.headings[index];
    if (Array.isArray(heading) && typeof heading[1] === 'string') texts[language] = heading[1];
  }
  return texts;
}

function checkTop(data) {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) fail('This file holds JSON, but not a trace object.');
  if (data.format !== FORMAT) {
    fail(`This is not a cs336-lectures trace: its format is ${JSON.stringify(data.format ?? null)}, expected "${FORMAT}".`);
  }
  if (!READABLE_VERSIONS.includes(data.version)) {
    fail(`This trace has version ${JSON.stringify(data.version ?? null)}, but this viewer reads versions ${READABLE_VERSIONS.join(', ')}. Trace the lecture again with this version of cs336-lectures.`);
  }
  if (!data.header || typeof data.header !== 'object') fail('Malformed trace: the "header" is missing.');
  for (const key of ['files', 'functions', 'calls', 'steps']) {
    if (!Array.isArray(data[key])) fail(`Malformed trace: "${key}" is missing or is not a list.`);
  }
}

export class Trace {
  constructor(data, url = '') {
    checkTop(data);
    this.url = url;
    this.header = data.header;
    this.files = data.files;
    this.functions = data.functions;
    this.calls = data.calls;
    this.steps = data.steps;
    this.indexFiles();
    this.indexCalls();
    this.indexSteps();
    this.indexFrames();
    this.snapshots = new Map();
    this.solutions = readSolutions(data.solutions, this, fail);
    this.ranks = readRanks(data.ranks, this, fail);
  }

  /** Check the files; number every (file, line) pair; find statements and @hide lines. */
  indexFiles() {
    // A (file, line) pair becomes one integer key: lineBase[file] + line.
    this.lineBase = new Int32Array(this.files.length + 1);
    this.files.forEach((file, i) => {
      if (!file || typeof file.path !== 'string' || typeof file.source !== 'string' || !Array.isArray(file.html)) {
        fail(`Malformed trace: files[${i}] lacks its path, source or highlighted lines.`);
      }
      this.lineBase[i + 1] = this.lineBase[i] + file.html.length + 1;
    });
    this.numKeys = this.lineBase[this.files.length];
    this.heads = this.files.map((file) => {
      const source = file.source.split('\n');
      return statementHeads(Array.from(file.html, (_, i) => source[i] ?? ''));
    });
    this.hiddenKey = new Uint8Array(this.numKeys);
    this.files.forEach((file, i) => {
      for (const line of file.hidden || []) {
        if (isIndex(line, file.html.length + 1)) this.hiddenKey[this.lineBase[i] + line] = 1;
      }
    });
  }

  /** Check functions and calls; map each call to its function and to its frame's first activation. */
  indexCalls() {
    const { functions, calls } = this;
    functions.forEach((fn, f) => {
      if (!Array.isArray(fn) || !isIndex(fn[0], this.files.length) || typeof fn[1] !== 'string') {
        fail(`Malformed trace: functions[${f}] is not [file, name, line] with a known file.`);
      }
    });
    this.callFunc = new Int32Array(calls.length);
    this.frameRoot = new Int32Array(calls.length); // the first activation of the call's frame
    calls.forEach((call, c) => {
      if (!Array.isArray(call) || !isIndex(call[0], functions.length)) {
        fail(`Malformed trace: calls[${c}] does not name one of the ${functions.length} functions.`);
      }
      const continues = call[2];
      if (continues !== undefined && !isIndex(continues, c)) {
        fail(`Malformed trace: calls[${c}] continues call ${continues}, which is not an earlier call.`);
      }
      this.callFunc[c] = call[0];
      this.frameRoot[c] = continues === undefined ? c : this.frameRoot[continues];
    });
  }

  /** Check every step and find the statements that render (the code view shows them as one
      block): a step is [call, line] or [call, line, extras] with a known call and line. */
  checkSteps() {
    const { steps, calls, lineBase, hiddenKey } = this;
    const n = steps.length;
    const callFile = Int32Array.from(this.callFunc, (f) => this.functions[f][0]);
    this.stepCall = new Int32Array(n);
    this.stepKey = new Int32Array(n);
    this.statementKey = new Int32Array(n); // the key of the first line of the step's statement
    this.rendersInStatement = new Uint8Array(this.numKeys);
    for (let s = 0; s < n; s++) {
      const step = steps[s];
      if (!Array.isArray(step) || !isIndex(step[0], calls.length) || !Number.isInteger(step[1])) {
        fail(`Malformed trace: steps[${s}] is not [call, line] with a known call.`);
      }
      const [call, line, extras] = step;
      const file = callFile[call];
      const numLines = this.files[file].html.length;
      if (line < 1 || line > numLines) {
        fail(`Malformed trace: steps[${s}] points at line ${line} of ${this.files[file].path}, which has ${numLines} lines.`);
      }
      if (extras !== undefined && (extras === null || typeof extras !== 'object' || Array.isArray(extras))) {
        fail(`Malformed trace: the extras of steps[${s}] are not an object.`);
      }
      this.stepCall[s] = call;
      this.stepKey[s] = lineBase[file] + line;
      this.statementKey[s] = lineBase[file] + this.heads[file][line];
      if (hiddenKey[this.stepKey[s]] === 0 && extras && Array.isArray(extras.r) && extras.r.length) {
        this.rendersInStatement[this.statementKey[s]] = 1;
      }
    }
  }

  /** Whether step s is passed over: Python reports a line event for each line of a statement
      spread over several lines as its arguments are evaluated, but the code view shows a
      rendering statement as one block, so only the last of those steps is a stop. A step
      with renderings, output or an error is always a stop. */
  passedOver(s) {
    const next = s + 1;
    if (next >= this.steps.length || this.stepCall[next] !== this.stepCall[s]) return false;
    if (this.statementKey[next] !== this.statementKey[s] || !this.rendersInStatement[this.statementKey[s]]) return false;
    if (this.hiddenKey[this.stepKey[next]]) return false;
    const extras = this.steps[s][2];
    return !extras || !['r', 'o', 'e', 'x'].some((key) => key in extras);
  }

  /** The indexes navigation reads: visible steps, grouped by frame and by line, rendering
      steps by line, and the contents' headings. */
  indexSteps() {
    this.checkSteps();
    const { steps, calls, hiddenKey, stepCall, stepKey } = this;
    const n = steps.length;
    const visibleFlags = (this.visible = new Uint8Array(n));
    const visibleKeys = new Int32Array(n);
    const frameKeys = new Int32Array(n);
    const renderKeys = new Int32Array(n);
    const renderSteps = [];
    // Equal renderings from different steps share a content id, so the code view can keep
    // what it shows when a line's rendering step changes but its content does not.
    this.renderingContent = new Int32Array(n).fill(-1);
    const contentIds = new Map();
    this.headings = [];
    const seenHeadings = new Set();
    let numVisible = 0;
    for (let s = 0; s < n; s++) {
      const key = stepKey[s];
      const call = stepCall[s];
      renderKeys[s] = -1;
      if (hiddenKey[key] || this.passedOver(s)) {
        visibleKeys[s] = -1;
        frameKeys[s] = -1;
        continue;
      }
      visibleFlags[s] = 1;
      numVisible++;
      visibleKeys[s] = key;
      frameKeys[s] = this.frameRoot[call];
      const extras = steps[s][2];
      const renderings = extras && extras.r;
      if (!Array.isArray(renderings) || !renderings.length) continue;
      renderKeys[s] = key;
      renderSteps.push(s);
      const content = JSON.stringify(renderings);
      if (!contentIds.has(content)) contentIds.set(content, contentIds.size);
      this.renderingContent[s] = contentIds.get(content);
      for (const rendering of renderings) {
        ((rendering && rendering.headings) || []).forEach((heading, index) => {
          const id = `${key}|${heading[2]}|${heading[1]}`;
          if (seenHeadings.has(id)) return;
          seenHeadings.add(id);
          this.headings.push({ level: heading[0], text: String(heading[1]), anchor: heading[2], step: s, texts: translatedHeadings(rendering, index) });
        });
      }
    }
    this.visibleSteps = new Int32Array(numVisible);
    this.visPos = new Int32Array(n); // position in visibleSteps of the last visible step <= s
    for (let s = 0, p = -1; s < n; s++) {
      if (visibleFlags[s]) this.visibleSteps[++p] = s;
      this.visPos[s] = p;
    }
    this.byFrame = groupBy(frameKeys, calls.length);
    this.byLine = groupBy(visibleKeys, this.numKeys);
    this.rendersByLine = groupBy(renderKeys, this.numKeys);
    this.renderSteps = Int32Array.from(renderSteps);
    this.headingSteps = Int32Array.from(this.headings, (h) => h.step);
    const last = steps[n - 1];
    this.errorStep = last && last[2] && last[2].x ? n - 1 : -1;
  }

  /** Each call's caller (for stepping over and out), and the steps writing values grouped by
      frame (for environment()). */
  indexFrames() {
    const { calls, steps } = this;
    const numCalls = calls.length;
    this.callParent = new Int32Array(numCalls);
    for (let c = 0; c < numCalls; c++) {
      const parentStep = calls[c][1];
      if (!Number.isInteger(parentStep) || parentStep < -1 || parentStep >= steps.length) {
        fail(`Malformed trace: calls[${c}] names a parent step ${parentStep} that does not exist.`);
      }
      this.callParent[c] = parentStep < 0 ? -1 : this.stepCall[parentStep];
    }
    const frameKeys = new Int32Array(steps.length);
    for (let s = 0; s < steps.length; s++) {
      // A call starts after the step that made it; so walking up a stack always ends.
      if (calls[this.stepCall[s]][1] >= s) fail(`Malformed trace: steps[${s}] runs in a call made by a later step.`);
      const extras = steps[s][2];
      frameKeys[s] = extras && (extras.v || extras.c) ? this.frameRoot[this.stepCall[s]] : -1;
    }
    this.updates = groupBy(frameKeys, numCalls);
  }

  get numSteps() {
    return this.steps.length;
  }

  fileOfStep(s) {
    return this.functions[this.callFunc[this.stepCall[s]]][0];
  }

  lineOfStep(s) {
    return this.steps[s][1];
  }

  extras(s) {
    return this.steps[s][2] || {};
  }

  functionName(call) {
    return this.functions[this.callFunc[call]][1];
  }

  isHidden(file, line) {
    return this.hiddenKey[this.lineBase[file] + line] === 1;
  }

  /** The first visible step executing (file, line), or NEVER. */
  firstStepOf(file, line) {
    const key = this.lineBase[file] + line;
    const { offsets, items } = this.byLine;
    return offsets[key] < offsets[key + 1] ? items[offsets[key]] : NEVER;
  }

  /** For each function, the first visible step run in any call of it (NEVER if none); made on
      first use. Reveal mode shows a function's `def` line from then on, so the lines of a
      helper that ran appear under their own header. */
  functionFirstSteps() {
    if (!this.functionFirst) {
      const first = new Int32Array(this.functions.length).fill(NEVER);
      for (let s = 0; s < this.steps.length; s++) {
        const f = this.callFunc[this.stepCall[s]];
        if (this.visible[s] && s < first[f]) first[f] = s;
      }
      this.functionFirst = first;
    }
    return this.functionFirst;
  }

  /** Whether the statement starting at (file, line) carries renderings (the code view shows it as a block). */
  statementRenders(file, line) {
    return this.rendersInStatement[this.lineBase[file] + line] === 1;
  }

  hasRenderings(file, line) {
    const key = this.lineBase[file] + line;
    return this.rendersByLine.offsets[key] < this.rendersByLine.offsets[key + 1];
  }

  /** A visible step close to s (s itself, else the next visible, else the previous), or -1. */
  snap(s) {
    const n = this.visibleSteps.length;
    if (!n) return -1;
    if (!Number.isInteger(s) || s < 0) return this.visibleSteps[0];
    if (s >= this.steps.length) return this.visibleSteps[n - 1];
    if (this.visible[s]) return s;
    const p = this.visPos[s];
    return p + 1 < n ? this.visibleSteps[p + 1] : this.visibleSteps[p];
  }

  /** Where a lecture opens when the URL names no step: the first step that puts something on
      the page (its title, usually), rather than main()'s first line; else the first step. */
  openingStep() {
    return this.renderSteps.length ? this.renderSteps[0] : this.snap(0);
  }

  next(s) {
    const p = this.visPos[s] + 1;
    return p < this.visibleSteps.length ? this.visibleSteps[p] : -1;
  }

  previous(s) {
    const p = this.visible[s] ? this.visPos[s] - 1 : this.visPos[s];
    return p >= 0 ? this.visibleSteps[p] : -1;
  }

  nextInFrame(frame, s) {
    const { offsets, items } = this.byFrame;
    const i = upper(items, offsets[frame], offsets[frame + 1], s);
    return i < offsets[frame + 1] ? items[i] : -1;
  }

  previousInFrame(frame, s) {
    const { offsets, items } = this.byFrame;
    const i = upper(items, offsets[frame], offsets[frame + 1], s - 1) - 1;
    return i >= offsets[frame] ? items[i] : -1;
  }

  /** The nearest visible step after (direction 1) or before (-1) s in the frame of `call` (a
      generator's activations are one frame) or of one of its callers: stepping over a line
      runs its callees without stopping inside them, and stepping over the last line of a
      function lands in its caller. */
  stepOver(s, direction, call = this.stepCall[s]) {
    let best = -1;
    for (let c = call; c >= 0; c = this.callParent[c]) {
      const frame = this.frameRoot[c];
      const t = direction > 0 ? this.nextInFrame(frame, s) : this.previousInFrame(frame, s);
      if (t >= 0 && (best < 0 || (direction > 0 ? t < best : t > best))) best = t;
    }
    return best;
  }

  /** The first visible step, after the current call returns, in one of its callers; -1 at the top. */
  stepOut(s) {
    const parent = this.callParent[this.stepCall[s]];
    return parent < 0 ? -1 : this.stepOver(s, 1, parent);
  }

  /** Where clicking line `line` of `file` goes from step s: the next step executing it when the
      line is at or below the current one (or in another file), the previous one when it lies
      above; failing that, the nearest in the other direction. -1 when the line never ran. */
  stepAtLine(s, file, line) {
    const key = this.lineBase[file] + line;
    const { offsets, items } = this.byLine;
    const lo = offsets[key];
    const hi = offsets[key + 1];
    if (lo === hi) return -1;
    const above = file === this.fileOfStep(s) && line < this.lineOfStep(s);
    const after = upper(items, lo, hi, s);
    const before = upper(items, lo, hi, s - 1) - 1;
    const forward = after < hi ? items[after] : -1;
    const backward = before >= lo ? items[before] : -1;
    if (above) return backward >= 0 ? backward : forward;
    return forward >= 0 ? forward : backward;
  }

  /** The visible step executing (file, line) nearest to s, or -1. */
  nearestStepAtLine(s, file, line) {
    const key = this.lineBase[file] + line;
    const { offsets, items } = this.byLine;
    const lo = offsets[key];
    const hi = offsets[key + 1];
    const i = upper(items, lo, hi, s - 1); // the first step >= s
    const forward = i < hi ? items[i] : -1;
    const backward = i > lo ? items[i - 1] : -1;
    if (forward < 0 || backward < 0) return Math.max(forward, backward);
    return forward - s <= s - backward ? forward : backward;
  }

  /** The step whose renderings line (file, line) shows at step s: the latest step at or before
      s that rendered on it, else the first one in the trace, so that the parts of the lecture
      ahead of the cursor read like a document. -1 when the line never rendered. */
  renderingStep(file, line, s) {
    const key = this.lineBase[file] + line;
    const { offsets, items } = this.rendersByLine;
    const lo = offsets[key];
    const hi = offsets[key + 1];
    if (lo === hi) return -1;
    const i = upper(items, lo, hi, s) - 1;
    return i >= lo ? items[i] : items[lo];
  }

  /** Steps carrying renderings in (a, b]: the lines whose shown renderings may differ between a and b. */
  renderStepsBetween(a, b) {
    const lo = upper(this.renderSteps, 0, this.renderSteps.length, Math.min(a, b));
    const hi = upper(this.renderSteps, 0, this.renderSteps.length, Math.max(a, b));
    return this.renderSteps.subarray(lo, hi);
  }

  /** Index into this.headings of the section step s is in, or -1 before the first heading. */
  headingAt(s) {
    return upper(this.headingSteps, 0, this.headingSteps.length, s) - 1;
  }

  /** The stack of step s, outermost first: [{call, step}] where step is the line running in that call. */
  stack(s) {
    const frames = [];
    for (let step = s; step >= 0; step = this.calls[this.stepCall[step]][1]) {
      frames.push({ call: this.stepCall[step], step });
    }
    return frames.reverse();
  }

  /** The inspected values of step s's frame after its line ran: Map name -> {value, step}, where
      step is the step that last wrote the value. Follows `continues` chains, applies clears. */
  environment(s) {
    const root = this.frameRoot[this.stepCall[s]];
    const { offsets, items } = this.updates;
    const lo = offsets[root];
    const count = upper(items, lo, offsets[root + 1], s) - lo;
    const snapshots = this.frameSnapshots(root);
    const k = Math.floor(count / SNAPSHOT_EVERY);
    const env = new Map(snapshots[k]);
    for (let u = lo + k * SNAPSHOT_EVERY; u < lo + count; u++) this.applyUpdate(env, items[u]);
    return env;
  }

  frameSnapshots(root) {
    let snapshots = this.snapshots.get(root);
    if (snapshots) return snapshots;
    const { offsets, items } = this.updates;
    const env = new Map();
    snapshots = [new Map()];
    for (let u = offsets[root], i = 1; u < offsets[root + 1]; u++, i++) {
      this.applyUpdate(env, items[u]);
      if (i % SNAPSHOT_EVERY === 0) snapshots.push(new Map(env));
    }
    this.snapshots.set(root, snapshots);
    return snapshots;
  }

  applyUpdate(env, s) {
    const extras = this.steps[s][2];
    if (extras.v && typeof extras.v === 'object') {
      for (const name of Object.keys(extras.v)) env.set(name, { value: extras.v[name], step: s });
    }
    if (Array.isArray(extras.c)) for (const name of extras.c) env.delete(name);
  }
}
