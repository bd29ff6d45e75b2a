/* What changed since the previous trace of the same lecture (after a re-trace): the values and
   renderings that differ from the previous run at the same point, and the next step where
   something does.

   "The same point" of a step is the k-th run of the same line (followed through the edit, as
   the reader's place is: trace.js lineFollower) in the previous trace. A line that is new has no
   same point: its renderings count as changed, its values are not compared. Values are
   compared as the trace encodes them, less what differs between two runs of the same program
   (tensor storage numbers, addresses in reprs). */

import { lineFollower } from './trace.js';
import { exactText } from './values.js';

const ADDRESS = /0x[0-9a-f]{6,}/gi;
const HOVER_CHARS = 400;

/** A value as text that two runs of the same program write alike. */
function comparable(value) {
  return JSON.stringify(value, (key, item) => (key === 'storage' ? undefined : item)).replace(ADDRESS, '0x…');
}

export class TraceChanges {
  /** new TraceChanges(previous, trace): both Trace objects of one lecture. */
  constructor(previous, trace) {
    this.previous = previous;
    this.trace = trace;
    this.before = samePoints(previous, trace);
  }

  /** The step of the previous trace at the same point as step s, or -1. */
  samePoint(s) {
    return this.before[s];
  }

  /** The values of step s's frame at the same point of the previous run, or null when there is none. */
  previousEnvironment(s) {
    return this.before[s] < 0 ? null : this.previous.environment(this.before[s]);
  }

  /** How `name`'s value at step s differs from the previous run's at the same point (whose
      values are `before`, from previousEnvironment): null when it does not (or there is no
      such point); else {before: text of the old value, or null when the name had none there}. */
  valueChange(name, value, before) {
    if (!before) return null;
    const old = before.get(name);
    if (!old) return { before: null };
    if (comparable(old.value) === comparable(value)) return null;
    const text = exactText(old.value);
    return { before: text.length > HOVER_CHARS ? `${text.slice(0, HOVER_CHARS)}…` : text };
  }

  /** Whether the renderings step s made differ from those of the same point before (or it had none). */
  renderingChanged(s) {
    const now = this.trace.extras(s).r;
    if (!now) return false;
    const o = this.before[s];
    return o < 0 || comparable(this.previous.extras(o).r || null) !== comparable(now);
  }

  /** Whether step s itself wrote a value or made a rendering that differs from the previous run. */
  stepChanged(s) {
    if (this.renderingChanged(s)) return true;
    const written = this.trace.extras(s).v;
    if (!written || typeof written !== 'object' || this.before[s] < 0) return false;
    const before = this.previousEnvironment(s);
    return Object.keys(written).some((name) => this.valueChange(name, written[name], before) !== null);
  }

  /** The first step after s, among those the viewer stops at, where something changed; -1 for none. */
  nextChange(s) {
    const { visibleSteps, visPos } = this.trace;
    for (let i = visPos[s] + 1; i < visibleSteps.length; i++) {
      if (this.stepChanged(visibleSteps[i])) return visibleSteps[i];
    }
    return -1;
  }
}

/** For each step of `trace`, the step of `previous` that ran the same line (followed through
    the edit) the same number of times before, or -1. */
function samePoints(previous, trace) {
  const lineNow = previous.files.map((file, index) => {
    const now = trace.files.find((other) => other.path === file.path);
    if (!now) return null;
    if (file.source === now.source) return (line) => line;
    const follow = lineFollower(file.source, now.source);
    const map = new Map();
    return (line) => {
      if (!map.has(line)) map.set(line, follow(line));
      return map.get(line);
    };
  });
  const runs = new Map(); // "path:line in the new file" -> steps of the previous trace, in order
  for (let o = 0; o < previous.steps.length; o++) {
    const follow = lineNow[previous.fileOfStep(o)];
    if (!follow) continue;
    const key = `${previous.files[previous.fileOfStep(o)].path}:${follow(previous.lineOfStep(o))}`;
    if (!runs.has(key)) runs.set(key, []);
    runs.get(key).push(o);
  }
  const seen = new Map();
  const before = new Int32Array(trace.steps.length).fill(-1);
  for (let s = 0; s < trace.steps.length; s++) {
    const key = `${trace.files[trace.fileOfStep(s)].path}:${trace.lineOfStep(s)}`;
    const k = seen.get(key) || 0;
    seen.set(key, k + 1);
    const old = runs.get(key);
    if (old && k < old.length) before[s] = old[k];
  }
  return before;
}
