/* The difference between two texts, line by line, as an editor's "show the difference" lists
   it: lines both have, lines only the first has, lines only the second has, in reading order.
   A longest common subsequence of the lines, after the common start and end are set aside. */

const MAX_CELLS = 16_000_000; // past this (two files of 4,000 changed lines), the middle is shown as replaced

/** lineDiff('a\nb\n', 'a\nc\n') -> [['same', 'a'], ['theirs', 'b'], ['mine', 'c'], ['same', '']] */
export function lineDiff(theirs, mine) {
  const a = theirs.split('\n');
  const b = mine.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head = a.slice(0, start).map((line) => ['same', line]);
  const tail = a.slice(endA).map((line) => ['same', line]);
  return [...head, ...middle(a.slice(start, endA), b.slice(start, endB)), ...tail];
}

function middle(a, b) {
  const n = a.length;
  const m = b.length;
  if (!n || !m || n * m > MAX_CELLS) return [...a.map((line) => ['theirs', line]), ...b.map((line) => ['mine', line])];
  // common[i * (m + 1) + j]: the length of the longest common subsequence of a[i:] and b[j:].
  const common = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      common[i * (m + 1) + j] = a[i] === b[j] ? common[(i + 1) * (m + 1) + j + 1] + 1
        : Math.max(common[(i + 1) * (m + 1) + j], common[i * (m + 1) + j + 1]);
    }
  }
  const lines = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      lines.push(['same', a[i++]]);
      j++;
    } else if (common[(i + 1) * (m + 1) + j] >= common[i * (m + 1) + j + 1]) {
      lines.push(['theirs', a[i++]]);
    } else {
      lines.push(['mine', b[j++]]);
    }
  }
  while (i < n) lines.push(['theirs', a[i++]]);
  while (j < m) lines.push(['mine', b[j++]]);
  return lines;
}
