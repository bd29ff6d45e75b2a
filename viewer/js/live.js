/* Live mode: what the viewer gains when the local server (`cs336-lectures serve`) is behind it.

   On plain static hosting this module does nothing: it learns which it is from a header the
   server puts on every response (asking a static host for api/info would log a 404). Under the
   server it
   - keeps the start-up token (from ?token=..., once) in sessionStorage and out of the address bar;
   - listens to the server's events (server_events.js: one stream shared by all tabs): a fresh trace of the lecture on screen reloads it at the same line
     and says for a few seconds what ran ("re-ran `bpe` (0.21 s); 27 sections reused", or why
     the whole lecture ran); while the sections after an edited one run again, a reader inside
     what already re-ran is shown the trace so far (the server's early view),
     a failed re-trace is shown as a message while the last good trace stays;
   - adds an Edit button (key `e`, offered only with the token): an editor pane under the
     code (editor.js), or under the failure message when the lecture has no trace to show yet,
     that saves with Ctrl/Cmd+S, after which the server re-traces and the viewer reloads. A save
     names the version of the file it was loaded from; when the file changed on disk meanwhile
     (the server refuses such a save, or says at once that the file changed) a bar offers to
     reload theirs, keep mine or show the difference;
   - shows a failed re-trace as a one-line banner with its actions (retrace_failure.js);
   - marks a resumed run's trace as being checked, verified or corrected by a whole run (verification.js).
   Everything from the server or the lecture is inserted as text. */

import { el, isEditable } from './dom.js';
import { CodeEditor } from './editor.js';
import { lineDiff } from './line_diff.js';
import { listenToServer } from './server_events.js';
import { t, translatable } from './i18n.js';
import { RetraceFailure, lectureOf } from './retrace_failure.js';
import { runNote } from './run_notes.js';
import { VerificationMark } from './verification.js';

const TOKEN_KEY = 'cs336-lectures-token';
const SERVER_HEADER = 'X-CS336-Server'; // on every response of cs336-lectures serve
const RUN_NOTE_MS = 5000;
const EARLY_FILE = /^early\/[\w.-]+\.json$/; // where the server puts a run's early view, under traces/
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
    this.saved = ''; // the text on disk as this editor last loaded or saved it
    this.base = null; // its version: a save is refused when the file on disk is another one
    this.saving = false;
    this.newerOnDisk = null; // a version seen on disk while a save was on its way
    this.discardArmed = false;
    this.code = null;
    this.title = el('span', { class: 'cs336-live-title' });
    this.status = el('span', { class: 'cs336-live-status', role: 'status', 'aria-live': 'polite' });
    this.position = el('span', { class: 'cs336-live-position' });
    const marked = { 'data-i18n': '', 'data-i18n-attrs': 'title' };
    this.saveButton = translatable(el('button', { type: 'button', class: 'cs336-live-save', text: 'Save',
      title: 'Save and re-trace (Ctrl+S)', onclick: () => this.save(), ...marked }));
    const retrace = translatable(el('button', { type: 'button', text: 'Re-trace',
      title: 'Trace the lecture again without changing it', onclick: () => this.live.retrace(this.trace), ...marked }));
    const close = translatable(el('button', { type: 'button', text: 'Close', title: 'Close the editor (Escape)',
      onclick: () => this.close(), ...marked }));
    this.conflict = new Conflict(this);
    this.body = el('div', { class: 'cs336-live-body' });
    this.panel = el('section', { class: 'cs336-live-editor', 'aria-label': 'Edit lecture', hidden: true },
      el('header', {}, this.title, this.status, this.position, el('span', { class: 'cs336-live-buttons' }, this.saveButton, retrace, close)),
      this.conflict.root, this.body);
    this.panel.addEventListener('keydown', (event) => {
      // CodeMirror's own Escape (closing its search panel) comes first and marks the event.
      if (event.key === 'Escape' && !event.defaultPrevented) {
        event.preventDefault();
        this.close();
      }
      event.stopPropagation(); // the viewer's navigation keys must not fire while editing
    });
    this.place();
    window.addEventListener('cs336:mode-changed', () => this.place());
  }

  /** Under the code, in its column, so the values panel stays in sight while editing; or, when
      the lecture cannot be shown (its first trace failed, or there is none yet), under the
      message saying so, so that the file can still be fixed from here. */
  place() {
    const host = { lecture: viewer.codePane?.parentElement, failure: viewer.failurePane }[viewer.mode()];
    if (host && this.panel.parentElement !== host) host.append(this.panel);
  }

  get isOpen() {
    return !this.panel.hidden;
  }

  get dirty() {
    return Boolean(this.code) && this.code.value !== this.saved;
  }

  /** One line: the whole text stays reachable on hover. */
  setStatus(text, kind = 'info') {
    this.status.textContent = text;
    this.status.title = text;
    this.status.dataset.kind = kind;
  }

  showDirty() {
    this.discardArmed = false;
    this.setStatus(this.dirty ? t('Unsaved changes') : '');
  }

  showPosition() {
    const { line, column } = this.code.cursor;
    this.position.textContent = t('Ln {line}, Col {column}', { line, column });
  }

  /** The editor itself, made the first time it is needed (CodeMirror loads then). */
  async ensureCode() {
    if (this.code) return;
    this.setStatus(t('Loading the editor…'));
    this.code = await CodeEditor.create({ label: t('Lecture source'), onChange: () => this.showDirty(),
      onSave: () => this.save(), onCursor: () => this.showPosition() });
    this.body.append(this.code.root);
  }

  /** Open the source of `trace` at `line` (default: the line the reader is on). */
  async open(trace, line = null) {
    const at = line || currentLine() || 1;
    const [response] = await Promise.all([fetch(`api/source?trace=${encodeURIComponent(trace)}`, { cache: 'no-store' }),
      this.ensureCode().catch((error) => error)]);
    if (!this.code) {
      viewer.showMessage(t('Cannot edit {name}: {error}', { name: trace, error: t('the editor did not load') }), 'error');
      return;
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      viewer.showMessage(t('Cannot edit {name}: {error}', { name: trace, error: body.error || response.statusText }), 'error');
      return;
    }
    this.trace = trace;
    this.title.textContent = body.path;
    this.title.title = body.path;
    this.load(body.source, body.version);
    this.setStatus(this.live.token ? '' : t('No token: saving needs the URL the server printed'), this.live.token ? 'info' : 'error');
    this.panel.hidden = false;
    document.body.classList.add('editing');
    this.code.focus();
    this.code.goToLine(at);
  }

  /** Take `source` (version `version`) as the text on disk, replacing what the editor holds. */
  load(source, version) {
    this.saved = source;
    this.base = version;
    this.code.value = source;
    this.conflict.hide();
    this.showPosition();
  }

  close() {
    if (this.dirty && !this.discardArmed) {
      this.discardArmed = true;
      this.setStatus(t('Unsaved changes: Ctrl+S saves, Escape again discards them'), 'error');
      return;
    }
    this.panel.hidden = true;
    document.body.classList.remove('editing');
    this.discardArmed = false;
    this.conflict.hide();
    viewer.codePane?.focus?.();
  }

  /** Save over the version loaded (or, with `over`, over that version on disk: "keep mine"). */
  async save(over = this.base) {
    if (!this.trace || this.saving) return;
    const source = this.code.value;
    this.saving = true;
    this.setStatus(t('Saving…'));
    const result = await this.live.post(`api/source?trace=${encodeURIComponent(this.trace)}`, { source, base: over });
    this.saving = false;
    if (result.status === 409 && result.body.conflict) {
      this.setStatus(t('Not saved: the file changed on disk'), 'error');
      this.conflict.show(result.body.source, result.body.version, false);
      return;
    }
    if (!result.ok) {
      this.setStatus(t('Not saved: {error}', { error: result.error }), 'error');
      return;
    }
    this.saved = source;
    this.base = result.body.version;
    this.conflict.hide();
    this.live.awaiting = this.trace;
    this.setStatus(t('Saved; re-tracing…'));
    if (this.newerOnDisk !== null) this.onDiskVersion(this.newerOnDisk);
  }

  /** The file on disk is now version `version` (the server saw it change): nothing to do when
      that is ours; taken in silently when nothing here is unsaved; else said at once. */
  async onDiskVersion(version) {
    if (this.saving) {
      this.newerOnDisk = version;
      return;
    }
    this.newerOnDisk = null;
    if (!this.isOpen || version === this.base) return;
    const response = await fetch(`api/source?trace=${encodeURIComponent(this.trace)}`, { cache: 'no-store' }).catch(() => null);
    const body = response && response.ok ? await response.json().catch(() => null) : null;
    if (!body || body.version === this.base) return;
    if (!this.dirty) {
      const { line } = this.code.cursor;
      this.load(body.source, body.version);
      this.code.goToLine(line);
      this.setStatus(t('Reloaded: the file changed on disk'));
      return;
    }
    this.setStatus(t('The file changed on disk: your changes are not saved'), 'error');
    this.conflict.show(body.source, body.version, true);
  }

  /** A re-trace of the lecture being edited finished: after this editor's own save, close on
      success; show why on failure. */
  onResult(event, ownSave) {
    if (event.state === 'ok') {
      const note = runNote(event);
      this.setStatus(note ? t('Re-traced: {message}', { message: note }) : t('Re-traced'));
      if (ownSave && !this.dirty) this.close();
    } else {
      // One line here; the banner above the code has the traceback and the way to the failing step.
      const error = String(event.message || '').split('\n')[0];
      this.setStatus(event.installed ? t('Re-trace failed: {error}', { error })
        : t('Re-trace failed (the last good trace is still shown): {error}', { error }), 'error');
    }
  }
}

/** The editor's text and the file on disk went different ways: a bar offering to take theirs,
    keep mine (save over theirs), or show the difference between the two. */
class Conflict {
  constructor(editor) {
    this.editor = editor;
    this.theirs = null;
    this.version = null;
    this.message = el('span', { class: 'cs336-conflict-message' });
    this.diff = el('pre', { class: 'cs336-conflict-diff', hidden: true });
    const marked = { 'data-i18n': '', 'data-i18n-attrs': 'title' };
    this.diffButton = translatable(el('button', { type: 'button', class: 'cs336-conflict-diff-button', text: 'Show the difference',
      title: 'Lines only on disk (−) and only here (+)', onclick: () => this.toggleDiff(), ...marked }));
    this.root = el('div', { class: 'cs336-conflict', role: 'alert', hidden: true }, el('div', { class: 'cs336-conflict-bar' },
      this.message,
      translatable(el('button', { type: 'button', class: 'cs336-conflict-theirs', text: 'Reload theirs',
        title: 'Take the file as it is on disk; your changes here are dropped', onclick: () => this.takeTheirs(), ...marked })),
      translatable(el('button', { type: 'button', class: 'cs336-conflict-mine', text: 'Keep mine',
        title: 'Save your text over the file on disk (its version goes to the backups)', onclick: () => this.keepMine(), ...marked })),
      this.diffButton), this.diff);
  }

  show(theirs, version, beforeSave) {
    this.theirs = theirs;
    this.version = version;
    this.message.textContent = theirs === null ? t('The file was deleted on disk.')
      : beforeSave ? t('The file changed on disk while you were editing.') : t('The file changed on disk since you opened it.');
    this.diff.hidden = true;
    this.diffButton.hidden = theirs === null;
    this.root.hidden = false;
  }

  hide() {
    this.root.hidden = true;
    this.diff.hidden = true;
  }

  takeTheirs() {
    const { line } = this.editor.code.cursor;
    if (this.theirs !== null) this.editor.load(this.theirs, this.version);
    this.editor.code.goToLine(line);
    this.editor.setStatus(t('Reloaded: the file changed on disk'));
    this.editor.code.focus();
  }

  keepMine() {
    this.editor.save(this.version);
    this.editor.code.focus();
  }

  toggleDiff() {
    if (this.diff.hidden) {
      this.diff.replaceChildren(...lineDiff(this.theirs, this.editor.code.value).map(([kind, text]) =>
        el('span', { class: `cs336-diff-${kind}`, text: `${{ same: ' ', theirs: '−', mine: '+' }[kind]} ${text}\n` })));
    }
    this.diff.hidden = !this.diff.hidden;
  }
}

class Live {
  constructor(info, token) {
    this.lectures = info.lectures || {};
    this.token = token;
    this.generations = new Map(); // trace -> generation of the last finished re-trace seen
    this.awaiting = null; // the trace whose re-trace the editor started
    this.editor = new Editor(this);
    this.failure = new RetraceFailure(viewer, token ? (trace, line) => this.editAt(trace, line) : null);
    this.verification = new VerificationMark(viewer.toolbar, () => lectureOf(viewer.currentTrace()));
    this.button = translatable(el('button', { type: 'button', class: 'cs336-live-edit', text: 'Edit',
      title: 'Edit this lecture and re-trace it (e)', hidden: true, onclick: () => this.edit(), 'data-i18n': '', 'data-i18n-attrs': 'title' }));
    viewer.toolbar?.append(this.button);
    window.addEventListener('cs336:trace-loaded', () => this.updateButton());
    window.addEventListener('cs336:mode-changed', () => this.updateButton());
    document.addEventListener('keydown', (event) => {
      if (event.key.toLowerCase() !== 'e' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      if (isEditable(event.target) || this.editor.isOpen) return;
      event.preventDefault();
      this.edit();
    });
    this.updateButton();
    // The last state heard of each trace: the list of lectures may be fetched before a run ended
    // and drawn after its event arrived, so it is checked against them once drawn.
    this.lastState = new Map();
    window.addEventListener('cs336:index-shown', () => {
      const ended = (name) => ['ok', 'error'].includes(this.lastState.get(name));
      if ([...document.querySelectorAll('.trace-card.running')].some((card) => ended(card.dataset.name))) {
        window.location.reload();
      }
    });
    listenToServer((event) => {
      if (['running', 'ok', 'error'].includes(event.state)) this.lastState.set(event.trace, event.state);
      this.onEvent(event);
    });
  }

  editable(trace) {
    return typeof trace === 'string' && Object.hasOwn(this.lectures, trace);
  }

  /** Edit is offered only where saving can work: a served lecture (or its failed run) on screen
      (not the list of lectures) and the token. */
  updateButton() {
    this.button.hidden = !this.token || !this.editable(lectureOf(viewer.currentTrace()));
  }

  edit() {
    const trace = lectureOf(viewer.currentTrace());
    if (!this.token) {
      viewer.showMessage(t('Editing needs the token the server printed at start-up: open the URL from the terminal where {command} runs, the one ending in ?token=…',
        { command: '"cs336-lectures serve" (or "make run")' }), 'info');
      return;
    }
    if (!this.editable(trace)) {
      viewer.showMessage(trace
        ? t('{name} cannot be edited here: start the server with its lecture file ({command})', { name: trace, command: 'cs336-lectures serve LECTURE.py' })
        : t('Open a lecture to edit it'), 'info');
      return;
    }
    this.editor.open(trace);
  }

  /** Open the editor on `trace` at `line`, first opening the lecture (the editor lives under its code). */
  editAt(trace, line) {
    if (lectureOf(viewer.currentTrace()) !== trace) viewer.go(trace, null);
    this.editor.open(trace, line);
  }

  /** POST with the token: {ok, status, body (the reply's JSON), error (a reason, when not ok)}. */
  async post(url, body) {
    if (!this.token) return { ok: false, status: 0, body: {}, error: 'no token: open the URL printed by cs336-lectures serve' };
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CS336-Token': this.token },
        body: JSON.stringify(body),
      });
      const reply = await response.json().catch(() => ({}));
      return { ok: response.ok, status: response.status, body: reply,
        error: response.ok ? null : reply.error || `${response.status} ${response.statusText}` };
    } catch (error) {
      return { ok: false, status: 0, body: {}, error: `the server is not reachable (${error.message})` };
    }
  }

  async retrace(trace) {
    const result = await this.post(`api/retrace?trace=${encodeURIComponent(trace)}`, {});
    if (!result.ok) viewer.showMessage(t('Cannot re-trace {name}: {error}', { name: trace, error: result.error }), 'error');
    else this.awaiting = trace;
  }

  onEvent(event) {
    if (event.state === 'source') { // the lecture file is another version now
      if (this.editor.trace === event.trace) this.editor.onDiskVersion(event.version);
      return;
    }
    const current = viewer.currentTrace();
    const mine = event.trace === lectureOf(current);
    this.verification.update(event);
    if (event.state === 'verified') return; // the trace on screen stays: a whole run agreed with it
    if (event.state === 'running') {
      if (mine) viewer.showMessage(t('Re-tracing {name}…', { name: event.trace }), 'info');
      if (this.editor.isOpen && this.editor.trace === event.trace) this.editor.setStatus(t('Re-tracing…'));
      return;
    }
    if (event.state === 'early') {
      // The edited section ran again; the sections after it are still running. A reader inside
      // what already re-ran sees it now; one further on waits for the whole trace.
      if (this.editor.isOpen && this.editor.trace === event.trace) this.editor.setStatus(runNote(event));
      if (mine && current === event.trace && !event.replay && EARLY_FILE.test(String(event.file))
          && viewer.stepNow() < event.until) {
        viewer.reload(event.file).then(() => {
          if (viewer.showsEarly()) viewer.showMessage(runNote(event), 'info'); // not if the whole trace came first
        });
      }
      return;
    }
    const known = this.generations.get(event.trace);
    this.generations.set(event.trace, event.generation);
    // A replayed event is the state from before this page connected: the trace on screen
    // already reflects it unless this page saw an older generation (a reconnect).
    const news = !event.replay || (known !== undefined && known !== event.generation);
    // A run that ended while this page (re)loaded reaches it as a replayed event: old news, but
    // the list of lectures on screen may have been fetched before it ended.
    const listStale = current === null && listedAsRunning(event.trace);
    if (event.state === 'ok' && !news && !listStale) return;
    if (this.editor.isOpen && this.editor.trace === event.trace && (this.awaiting === event.trace || news)) {
      this.editor.onResult(event, this.awaiting === event.trace);
    }
    if (this.awaiting === event.trace) this.awaiting = null;
    if (mine || current === null || event.state === 'ok') this.failure.update(event);
    if (current === null && (news || listStale)) {
      window.location.reload(); // the list of traces (its statuses, its failing marks) changed
      return;
    }
    if (!mine) return;
    viewer.showMessage('');
    // The trace on screen changed on disk: the good trace, or the failed run being read.
    const installed = event.state === 'ok' || event.installed;
    const changed = news && (current === event.trace ? installed || viewer.showsEarly() : current === event.failed_trace);
    const reloaded = changed ? viewer.reload() : Promise.resolve();
    const said = runNote(event);
    if (event.state === 'ok' && news && said) reloaded.then(() => showBriefly(said));
  }
}

/** Whether the list of lectures on screen still shows `name` as being traced: a run's end that
    reaches the page as a replayed event (the shared stream saw it while the page loaded) may
    have come after the list was fetched. */
function listedAsRunning(name) {
  return [...document.querySelectorAll('.trace-card.running')].some((card) => card.dataset.name === name);
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
