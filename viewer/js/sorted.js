/* Small helpers over sorted arrays and indices, shared by the trace model and its parts
   (ranks, solutions). */

/** Whether value is a valid index into something of the given length. */
export const isIndex = (value, length) => Number.isInteger(value) && value >= 0 && value < length;

/** First position in the sorted items[lo, hi) holding a value > s: upper([1, 3, 3, 7], 0, 4, 3) -> 3 */
export function upper(items, lo, hi, s) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (items[mid] <= s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
