/* The ranks of a trace as data (trace format version 2, `ranks`): each rank's steps are one
   contiguous range of the trace, spliced in after the step that started it. `Ranks` answers which
   rank a step belongs to and what "the same point" is on another rank: the same line, executed
   the same number of times so far on that rank. Drawn by ranks.js. */

import { isIndex, upper } from './sorted.js';

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
