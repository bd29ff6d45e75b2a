/* Live mode: what the viewer gains when the local server (`cs336-lectures serve`) is behind it.

   On plain static hosting this module does nothing: it learns which it is from a header the
   server puts on every response (asking a static host for api/info would log a 404). Under the
   server it
   - keeps the start-up token (from ?token=..., once) in sessionStorage and out of the address bar;
   - listens to api/events: a fresh trace of the lecture on screen reloads it at the same line and
     says for a few seconds what ran ("re-ran `bpe` (0.21 s); 27 sections reused", or why the
     whole lecture ran); a failed re-trace is shown as a message while the last good trace stays;
   - adds an Edit button (key `e`): an editor over the lecture source that saves with
     Ctrl/Cmd+S, after which the server re-traces and the viewer reloads.
   Everything from the server or the lecture is inserted as text. */

import { el, isEditable } from './dom.js';

const TOKEN_KEY = 'cs336-lectures-token';
const SERVER_HEADER = 'X-CS336-Server'; // on every response of cs336-lectures serve
const INDENT = '    ';
const RUN_NOTE_MS = 5000;
const viewer = window.cs336Viewer;

/** The token from the URL (then removed from it), or the one kept earlier in this tab. */
function takeToken() {
  const url = new URL(window.location.href);
  const given = url.searchParams.get('token');
  if (given) {
    try {
      sessionStorage.setItem(TOKEN_KEY, given);
    } catch {
      /* storage disabled: the token lives until this page is left */
    }
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.href);
    return given;
  }
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** The server's api/info, or null on a static host. This module's own file exists on every
    host, so asking for it first tells the two apart without a failed request. */
async function serverInfo() {
  try {
    const probe = await fetch(import.meta.url);
    if (!probe.headers.has(SERVER_HEADER)) return null;
    const response = await fetch('api/info', { cache: 'no-store' });
    if (!response.ok) return null;
    const info = await response.json();
    return info && info.server === true ? info : null;
  } catch {
    return null;
  }
}

function addStylesheet() {
  const href = new URL('../css/live.css', import.meta.url).href;
  if ([...document.styleSheets].some((sheet) => sheet.href === href)) return;
  document.head.append(el('link', { rel: 'stylesheet', href }));
}

/** The 1-based line the reader is on, if the code pane marks it; else null. */
function currentLine() {
  const pane = viewer.codePane;
  const marked = pane && (pane.querySelector('.line.current[data-line]') || pane.querySelector('.current [data-line]'));
  const line = marked ? Number(marked.dataset.line) : NaN;
  return Number.isInteger(line) && line > 0 ? line : null;
}

class Editor {
  constructor(live) {
    this.live = live;
    this.trace = null;
    this.saved = '';
    this.discardArmed = false;
    this.title = el('span', { class: 'cs336-live-title' });
    this.status = el('span', { class: 'cs336-live-status', role: 'status', 'aria-live': 'polite' });
    this.saveButton = el('button', { type: 'button', class: 'cs336-live-save', text: 'Save',
      title: 'Save and re-trace (Ctrl+S)', onclick: () => this.save() });
    const retrace = el('button', { type: 'button', text: 'Re-trace',
      title: 'Trace the lecture again without changing it', onclick: () => this.live.retrace(this.trace) });
    const close = el('button', { type: 'button', text: 'Close', title: 'Close the editor (Escape)',
      onclick: () => this.close() });
    this.text = el('textarea', { class: 'cs336-live-text', spellcheck: 'false', autocomplete: 'off',
      autocapitalize: 'off', wrap: 'off', 'aria-label': 'Lecture source' });
    this.text.addEventListener('keydown', (event) => this.onKey(event));
    this.text.addEventListener('input', () => this.showDirty());
    this.panel = el('section', { class: 'cs336-live-editor', role: 'dialog', 'aria-label': 'Edit lecture', hidden: true },
      el('header', {}, this.title, this.status, el('span', { class: 'cs336-live-buttons' }, this.saveButton, retrace, close)),
      this.text);
    this.panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        this.close();
      }
      event.stopPropagation(); // the viewer's navigation keys must not fire while editing
    });
    document.body.append(this.panel);
  }

  get isOpen() {
    return !this.panel.hidden;
  }

  get dirty() {
    return this.text.value !== this.saved;
  }

  setStatus(text, kind = 'info') {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
  }

  showDirty() {
    this.discardArmed = false;
    this.setStatus(this.dirty ? 'Unsaved changes' : '');
  }

  async open(trace) {
    const response = await fetch(`api/source?trace=${encodeURIComponent(trace)}`, { cache: 'no-store' });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      viewer.showMessage(`Cannot edit ${trace}: ${body.error || response.statusText}`, 'error');
      return;
    }
    this.trace = trace;
    this.saved = body.source;
    this.text.value = body.source;
    this.title.textContent = body.path;
    this.setStatus(this.live.token ? '' : 'No token: saving needs the URL the server printed', this.live.token ? 'info' : 'error');
    // Below the viewer's top bar, so its messages and buttons stay in sight.
    const bar = viewer.toolbar?.closest('header') || viewer.toolbar;
    this.panel.style.setProperty('--live-top', `${bar ? Math.max(0, bar.getBoundingClientRect().bottom) : 0}px`);
    this.panel.hidden = false;
    this.text.focus();
    this.goToLine(currentLine() || 1);
  }

  goToLine(line) {
    const lines = this.text.value.split('\n');
    const offset = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
    this.text.setSelectionRange(offset, offset);
    const height = parseFloat(getComputedStyle(this.text).lineHeight) || 18;
    this.text.scrollTop = Math.max(0, (line - 5) * height);
  }

  close() {
    if (this.dirty && !this.discardArmed) {
      this.discardArmed = true;
      this.setStatus('Unsaved changes: Ctrl+S saves, Escape again discards them', 'error');
      return;
    }
    this.panel.hidden = true;
    this.discardArmed = false;
    viewer.codePane?.focus?.();
  }

  onKey(event) {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 's') {
      event.preventDefault();
      this.save();
    } else if (event.key === 'Tab' && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      this.indent(event.shiftKey);
    }
  }

  /** Tab inserts spaces (or indents the selected lines); Shift+Tab removes one level. */
  indent(outdent) {
    const area = this.text;
    const { selectionStart: start, selectionEnd: end, value } = area;
    if (!outdent && !value.slice(start, end).includes('\n')) {
      area.setRangeText(INDENT, start, end, 'end');
    } else {
      const first = value.lastIndexOf('\n', start - 1) + 1;
      const block = value.slice(first, end);
      const changed = block.split('\n').map((line) => {
        if (!outdent) return INDENT + line;
        const spaces = line.match(/^ {0,4}/)[0].length;
        return line.slice(spaces);
      }).join('\n');
      area.setRangeText(changed, first, end, 'select');
    }
    this.showDirty();
  }

  async save() {
    if (!this.trace) return;
    const source = this.text.value;
    this.setStatus('Saving…');
    const result = await this.live.post(`api/source?trace=${encodeURIComponent(this.trace)}`, { source });
    if (!result.ok) {
      this.setStatus(`Not saved: ${result.error}`, 'error');
      return;
    }
    this.saved = source;
    this.live.awaiting = this.trace;
    this.setStatus('Saved; re-tracing…');
  }

  /** A re-trace of the lecture being edited finished: close on success, show why on failure. */
  onResult(event) {
    if (event.state === 'ok') {
      this.setStatus(event.message ? `Re-traced: ${event.message}` : 'Re-traced');
      if (!this.dirty) this.close();
    } else {
      const kept = event.installed ? '' : ' (the last good trace is still shown)';
      this.setStatus(`Re-trace failed${kept}:\n${event.message || ''}`, 'error');
    }
  }
}

class Live {
  constructor(info, token) {
    this.lectures = info.lectures || {};
    this.token = token;
    this.generations = new Map(); // trace -> generation of the last finished re-trace seen
    this.awaiting = null; // the trace whose re-trace the editor started
    this.editor = new Editor(this);
    this.button = el('button', { type: 'button', class: 'cs336-live-edit', text: 'Edit',
      title: 'Edit this lecture and re-trace it (e)', hidden: true, onclick: () => this.edit() });
    viewer.toolbar?.append(this.button);
    window.addEventListener('cs336:trace-loaded', () => this.updateButton());
    document.addEventListener('keydown', (event) => {
      if (event.key.toLowerCase() !== 'e' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      if (isEditable(event.target) || this.editor.isOpen) return;
      event.preventDefault();
      this.edit();
    });
    this.updateButton();
    this.listen();
  }

  editable(trace) {
    return typeof trace === 'string' && Object.hasOwn(this.lectures, trace);
  }

  updateButton() {
    this.button.hidden = !this.editable(viewer.currentTrace());
  }

  edit() {
    const trace = viewer.currentTrace();
    if (!this.editable(trace)) {
      viewer.showMessage(trace
        ? `${trace} cannot be edited here: start the server with its lecture file (cs336-lectures serve LECTURE.py)`
        : 'Open a lecture to edit it', 'info');
      return;
    }
    this.editor.open(trace);
  }

  /** POST with the token; {ok: true} or {ok: false, error: reason}. */
  async post(url, body) {
    if (!this.token) return { ok: false, error: 'no token: open the URL printed by cs336-lectures serve' };
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CS336-Token': this.token },
        body: JSON.stringify(body),
      });
      if (response.ok) return { ok: true };
      const reply = await response.json().catch(() => ({}));
      return { ok: false, error: reply.error || `${response.status} ${response.statusText}` };
    } catch (error) {
      return { ok: false, error: `the server is not reachable (${error.message})` };
    }
  }

  async retrace(trace) {
    const result = await this.post(`api/retrace?trace=${encodeURIComponent(trace)}`, {});
    if (!result.ok) viewer.showMessage(`Cannot re-trace ${trace}: ${result.error}`, 'error');
    else this.awaiting = trace;
  }

  listen() {
    const events = new EventSource('api/events');
    events.addEventListener('message', (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (event && typeof event.trace === 'string') this.onEvent(event);
    });
  }

  onEvent(event) {
    const current = viewer.currentTrace();
    const mine = event.trace === current;
    if (event.state === 'running') {
      if (mine) viewer.showMessage(`Re-tracing ${event.trace}…`, 'info');
      if (this.editor.isOpen && this.editor.trace === event.trace) this.editor.setStatus('Re-tracing…');
      return;
    }
    const known = this.generations.get(event.trace);
    this.generations.set(event.trace, event.generation);
    // A replayed event is the state from before this page connected: the trace on screen
    // already reflects it unless this page saw an older generation (a reconnect).
    const news = !event.replay || (known !== undefined && known !== event.generation);
    if (event.state === 'ok' && !news) return;
    if (this.editor.isOpen && this.editor.trace === event.trace && (this.awaiting === event.trace || news)) {
      this.editor.onResult(event);
    }
    if (this.awaiting === event.trace) this.awaiting = null;
    const changedOnDisk = news && (event.state === 'ok' || event.installed);
    if (event.state === 'ok' && mine) viewer.showMessage('');
    if (changedOnDisk && current === null) {
      window.location.reload(); // the list of traces, or a trace that could not be shown, changed
      return;
    }
    if (!mine) return;
    const failure = event.state === 'ok' ? null : event.installed
      ? `${event.trace} failed:\n${event.message || ''}`
      : `Re-tracing ${event.trace} failed; showing the last good trace.\n${event.message || ''}`;
    const reloaded = changedOnDisk ? viewer.reload() : Promise.resolve();
    if (failure) reloaded.then(() => viewer.showMessage(failure, 'error'));
    else if (news && event.message) reloaded.then(() => showBriefly(event.message));
  }
}

/** What the server's run did ("re-ran `bpe` (0.21 s); 27 sections reused"), shown for a few
    seconds unless another message replaced it meanwhile. */
function showBriefly(text) {
  viewer.showMessage(text, 'info');
  const box = document.getElementById('message');
  setTimeout(() => {
    if (box && box.textContent === text) viewer.showMessage('');
  }, RUN_NOTE_MS);
}

async function start() {
  if (!viewer) return;
  const token = takeToken();
  const info = await serverInfo();
  if (!info) return;
  addStylesheet();
  document.documentElement.classList.add('cs336-live');
  new Live(info, token);
}

start();
