/* The list of traces, from traces/index.json (written by `cs336-lectures build`, served
   live by `cs336-lectures serve`). */

import { el } from './dom.js';
import { language, t, tCount } from './i18n.js';

const INDEX_URL = 'traces/index.json';

/** fetchIndex() -> [{name, file, title, num_steps, created, status, message?, summary?, failing?, running?}]; throws Error with a reader's message. */
export async function fetchIndex() {
  let response;
  try {
    response = await fetch(INDEX_URL, { cache: 'no-store' });
  } catch (error) {
    throw new Error(`Could not fetch ${INDEX_URL}: ${error.message}`);
  }
  if (!response.ok) {
    throw new Error(`No list of traces here: ${INDEX_URL} could not be loaded (HTTP ${response.status}). `
      + 'Trace a lecture and serve it with "cs336-lectures serve lectures/lecture_01.py", or export a site with "cs336-lectures build".');
  }
  let data;
  try {
    data = await response.json();
  } catch (error) {
    throw new Error(`${INDEX_URL} is not valid JSON (${error.message}).`);
  }
  if (!data || !Array.isArray(data.traces)) throw new Error(`${INDEX_URL} has no "traces" list.`);
  return data.traces.filter((entry) => entry && typeof entry.name === 'string');
}

/** When a trace was made, written the chosen language's way. */
function when(created) {
  const date = new Date(created);
  return Number.isNaN(date.getTime()) ? String(created || '') : date.toLocaleString(language(), { dateStyle: 'medium', timeStyle: 'short' });
}

/** Lectures first, in their order (lecture_2 before lecture_10, each followed by its sections),
    then examples and anything else by name. */
function byLectureOrder(a, b) {
  const key = (entry) => {
    const match = /^lecture_(\d+)/.exec(entry.name);
    return match ? [0, Number(match[1]), entry.name] : [1, 0, entry.name];
  };
  const [x, y] = [key(a), key(b)];
  return x[0] - y[0] || x[1] - y[1] || (x[2] < y[2] ? -1 : x[2] > y[2] ? 1 : 0);
}

/** A card's heading and one-line summary, from the first line of the lecture's docstring
    ("CS336 lecture 1: why build ... tokenization." -> "CS336 lecture 1", "Why build ..."). */
export function headline(entry) {
  const first = typeof entry.summary === 'string' ? entry.summary.trim() : '';
  if (!first) return { title: entry.title || entry.name, summary: '' };
  const colon = first.indexOf(': ');
  if (colon < 0) return { title: first, summary: '' };
  const rest = first.slice(colon + 2);
  return { title: first.slice(0, colon), summary: rest.charAt(0).toUpperCase() + rest.slice(1) };
}

/** renderIndex(container, entries, hrefOf) fills container with one card per trace. */
export function renderIndex(container, entries, hrefOf) {
  const heading = el('h1', { text: t('Lectures') });
  if (!entries.length) {
    container.replaceChildren(heading, el('p', { class: 'index-empty', text: t('No traces yet. Trace a lecture with {command}.', { command: '"cs336-lectures trace lectures/lecture_01.py -o var/traces"' }) }));
    return;
  }
  const cards = [...entries].sort(byLectureOrder).map((entry) => {
    const status = entry.status || 'ok';
    const { title, summary } = headline(entry);
    const failing = typeof entry.failing === 'string' ? entry.failing : null;
    // Being traced now (the server traces stale lectures once it is up); with no trace yet there is nothing to open.
    const running = entry.running === true;
    const opens = status !== 'running';
    return el('li', { class: `trace-card status-${status}${failing ? ' failing' : ''}${running ? ' running' : ''}`, 'data-name': entry.name },
      el(opens ? 'a' : 'div', opens ? { class: 'trace-link', href: hrefOf(entry.name), 'data-trace': entry.name } : { class: 'trace-link' },
        el('span', { class: 'trace-title', text: title }),
        summary ? el('span', { class: 'trace-summary', text: summary }) : null,
        el('span', { class: 'trace-meta' },
          el('span', { class: 'trace-name', text: entry.name }),
          opens ? el('span', { text: tCount(entry.num_steps ?? 0, '{count} step', '{count} steps') }) : null,
          entry.created ? el('span', { text: t('traced {when}', { when: when(entry.created) }) }) : null,
          running ? el('span', { class: 'badge badge-running', text: t('tracing now…') })
            : failing ? el('span', { class: 'badge badge-failing', text: t('file fails now') })
              : el('span', { class: `badge badge-${status}`, text: status === 'ok' ? 'ok' : status.replace('_', ' ') })),
        entry.message ? el('span', { class: 'trace-message', text: entry.message }) : null,
        failing ? el('span', { class: 'trace-message', text: entry.created
          ? t('The file on disk fails to trace (this trace is the last good one): {error}', { error: failing })
          : t('The file on disk fails to trace, and no run of it has written a trace yet: {error}', { error: failing }) }) : null));
  });
  container.replaceChildren(heading, el('ul', { class: 'trace-list' }, cards),
    el('p', { class: 'index-hint', text: t('Keys in a lecture: l / h step, j / k step over, u step out, R raw code, A reveal, e edit (under cs336-lectures serve; Ctrl+S saves and re-traces), g back here, ? help.') }));
}
