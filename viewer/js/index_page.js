/* The list of traces, from traces/index.json (written by `cs336-lectures build`, served
   live by `cs336-lectures serve`). */

import { el, formatCount } from './dom.js';
import { t } from './i18n.js';

const INDEX_URL = 'traces/index.json';

/** fetchIndex() -> [{name, file, title, num_steps, created, status, message?}]; throws Error with a reader's message. */
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

function when(created) {
  const date = new Date(created);
  return Number.isNaN(date.getTime()) ? String(created || '') : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** renderIndex(container, entries, hrefOf) fills container with one card per trace. */
export function renderIndex(container, entries, hrefOf) {
  const heading = el('h1', { text: t('Lectures') });
  if (!entries.length) {
    container.replaceChildren(heading, el('p', { class: 'index-empty', text: t('No traces yet. Trace a lecture with {command}.', { command: '"cs336-lectures trace lectures/lecture_01.py -o var/traces"' }) }));
    return;
  }
  const cards = entries.map((entry) => {
    const status = entry.status || 'ok';
    return el('li', { class: `trace-card status-${status}` },
      el('a', { class: 'trace-link', href: hrefOf(entry.name), 'data-trace': entry.name },
        el('span', { class: 'trace-title', text: entry.title || entry.name }),
        el('span', { class: 'trace-meta' },
          el('span', { text: t('{n} steps', { n: formatCount(entry.num_steps ?? 0) }) }),
          entry.created ? el('span', { text: t('traced {when}', { when: when(entry.created) }) }) : null,
          el('span', { class: `badge badge-${status}`, text: status === 'ok' ? 'ok' : status.replace('_', ' ') })),
        entry.message ? el('span', { class: 'trace-message', text: entry.message }) : null));
  });
  container.replaceChildren(heading, el('ul', { class: 'trace-list' }, cards),
    el('p', { class: 'index-hint', text: t('Keys in a lecture: l / h step, j / k step over, u step out, R raw code, A reveal, g back here, ? help.') }));
}
