/* The viewer: routes between the list of traces and a lecture, keeps the step in the URL,
   maps keys and buttons to the moves of Stanford's executable lectures, and exposes
   window.cs336Viewer for live.js (the local server's reload and edit layer). */

import { el, formatCount, isEditable } from './dom.js';
import { followLine, loadTrace } from './trace.js';
import { CodeView } from './code.js';
import { EnvPanel } from './env.js';
import { fetchIndex, renderIndex } from './index_page.js';
import { makeDivider } from './divider.js';
import { headingText, installLanguageSwitch, onLanguageChange, t, translatePage } from './i18n.js';
import { RanksBar } from './ranks.js';
import { TraceChanges } from './changes.js';

const $ = (id) => document.getElementById(id);
const TRACE_NAME = /^[\w-][\w.-]*$/;
// The step in the URL, counted from 1 as the counter and the terminal viewer count (?at=342 is
// "step 342 of 855"). Links made before it name the 0-based index as ?step=341, still read.
const STEP_PARAM = 'at';
const OLD_STEP_PARAM = 'step';

/** The step index (from 0) a URL's parameters name, or null for none. */
function stepFromUrl(params) {
  const number = Number(params.get(STEP_PARAM));
  if (params.has(STEP_PARAM) && Number.isInteger(number)) return Math.max(0, number - 1);
  const index = Number(params.get(OLD_STEP_PARAM));
  return params.has(OLD_STEP_PARAM) && Number.isInteger(index) ? index : null;
}
const TRACE_FILE = /^[\w-][\w.\-/]*\.json$/;

// Looked up in lower case, so that Caps Lock (or Shift) changes nothing.
const MODES = ['raw', 'reveal']; // view modes, kept in the URL (?raw=1&reveal=1) so a link reproduces the view
const KEYS = { l: 'forward', h: 'back', j: 'over', k: 'over-back', u: 'out', r: 'raw', a: 'reveal', g: 'traces', '?': 'help',
  '[': 'rank-back', ']': 'rank-next', c: 'next-change' };

function keyAction(event) {
  if (event.key === 'ArrowRight') return event.shiftKey ? 'over' : 'forward';
  if (event.key === 'ArrowLeft') return event.shiftKey ? 'over-back' : 'back';
  if (event.key === 'Escape') return 'escape';
  return (typeof event.key === 'string' && event.key.length === 1 && KEYS[event.key.toLowerCase()]) || null;
}

class Viewer {
  constructor() {
    this.toolbar = $('toolbar');
    this.codePane = $('code');
    this.env = new EnvPanel($('env'));
    this.ranksBar = new RanksBar($('ranks'), (s) => this.show(s, { history: 'push' }));
    this.trace = null;
    this.name = null;
    this.step = -1;
    this.call = -1;
    this.heading = -2;
    this.views = new Map();
    this.view = null;
    this.loading = 0;
    this.raw = false;
    this.reveal = false;

    document.addEventListener('keydown', (event) => this.onKey(event));
    window.addEventListener('popstate', () => this.route());
    for (const button of document.querySelectorAll('[data-action]')) {
      button.addEventListener('click', () => this.act(button.dataset.action, false));
    }
    this.codePane.addEventListener('click', (event) => {
      const number = event.target instanceof Element && event.target.closest('a.no');
      if (number) this.clickLine(+number.dataset.line);
    });
    $('progress').addEventListener('click', (event) => this.seek(event));
    makeDivider($('divider'), $('lecture-view'), $('env'));
    $('home').addEventListener('click', (event) => {
      event.preventDefault();
      this.goIndex();
    });
    installLanguageSwitch($('language'));
    translatePage();
    onLanguageChange(() => this.changeLanguage());
  }

  /** Draw the page again in the newly chosen language, at the same step and scroll position. */
  changeLanguage() {
    if (this.mode === 'index') this.showIndex();
    else if (this.trace && this.mode === 'lecture') this.install(this.name, this.trace, this.step, this.codePane.scrollTop);
  }

  // ---- routing -------------------------------------------------------------------------

  async route() {
    const params = new URLSearchParams(location.search);
    const name = params.get('trace');
    if (!name) return this.showIndex();
    const step = stepFromUrl(params);
    for (const mode of MODES) this.setViewMode(mode, params.get(mode) === '1');
    if (this.trace && name === this.name) {
      if (this.mode !== 'lecture') this.showLecture();
      return this.show(this.trace.snap(step ?? this.trace.openingStep()));
    }
    return this.open(name, step);
  }

  urlWith(name, step) {
    const url = new URL(location.href);
    if (name === null) {
      for (const key of ['trace', STEP_PARAM, OLD_STEP_PARAM, ...MODES]) url.searchParams.delete(key);
    } else {
      url.searchParams.set('trace', name);
      url.searchParams.delete(OLD_STEP_PARAM);
      if (step === null) url.searchParams.delete(STEP_PARAM);
      else url.searchParams.set(STEP_PARAM, String(step + 1));
    }
    return url;
  }

  /** Put the step in the URL: 'push' a history entry, 'replace' the current one, 'none', or
      'replace-later' for held-down keys: Chrome ignores history calls beyond about a hundred
      in a few seconds, so those are coalesced into one replacement shortly after the key rests. */
  writeUrl(how) {
    clearTimeout(this.urlTimer);
    if (how === 'none') return;
    if (how === 'replace-later') {
      this.urlTimer = setTimeout(() => this.writeUrl('replace'), 120);
      return;
    }
    const url = this.urlWith(this.name, this.step);
    for (const mode of MODES) {
      if (this[mode]) url.searchParams.set(mode, '1');
      else url.searchParams.delete(mode);
    }
    if (url.href === location.href) return;
    if (how === 'push') history.pushState(null, '', url);
    else history.replaceState(null, '', url);
  }

  setMode(mode) {
    this.mode = mode;
    document.body.dataset.mode = mode;
    $('index-view').hidden = mode !== 'index';
    $('lecture-view').hidden = mode !== 'lecture';
    $('failure').hidden = mode !== 'failure';
    // live.js offers Edit only while a lecture (or the failure to show one) is on screen.
    window.dispatchEvent(new CustomEvent('cs336:mode-changed', { detail: { mode } }));
  }

  /** Open trace `name` at `step` (null: where it opens) as a new history entry. */
  go(name, step) {
    history.pushState(null, '', this.urlWith(name, step));
    this.route();
  }

  goIndex() {
    if (this.mode === 'index') return;
    history.pushState(null, '', this.urlWith(null));
    this.route();
  }

  async showIndex() {
    this.loading++;
    this.setMode('index');
    this.showMessage('');
    document.title = 'cs336 lectures';
    $('title').textContent = '';
    const container = $('index-view');
    try {
      const entries = await fetchIndex();
      renderIndex(container, entries, (name) => this.urlWith(name, null).href);
      window.dispatchEvent(new CustomEvent('cs336:index-shown'));
      for (const link of container.querySelectorAll('a[data-trace]')) {
        link.addEventListener('click', (event) => {
          if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
          event.preventDefault();
          history.pushState(null, '', link.href);
          this.route();
        });
      }
    } catch (error) {
      container.replaceChildren(el('h1', { text: t('Lectures') }), el('p', { class: 'failure-text', text: error.message }));
    }
  }

  showFailure(title, message) {
    this.trace = null;
    this.setMode('failure');
    this.clearLoadingMessage();
    $('failure-title').textContent = title;
    $('failure-text').textContent = message;
    $('failure-back').href = this.urlWith(null).href;
  }

  /** The trace `name`: its file is the one the index lists, normally NAME.json, which is
      requested at the same time as the index so the two downloads overlap. */
  async fetchTrace(name) {
    if (!TRACE_NAME.test(name)) throw new Error(`"${name}" is not a trace name (letters, digits, "_", "-" and "." only).`);
    const guess = `${name}.json`;
    const early = new AbortController();
    const pending = fetch(`traces/${guess}`, { cache: 'no-store', signal: early.signal });
    pending.catch(() => {}); // a failure matters only if this is the file after all
    let file = guess;
    try {
      const entry = (await fetchIndex()).find((e) => e.name === name);
      if (entry && typeof entry.file === 'string' && TRACE_FILE.test(entry.file) && !entry.file.includes('..')) file = entry.file;
    } catch {
      // No index (a bare folder of traces): the conventional name it is.
    }
    if (file === guess) return loadTrace(`traces/${guess}`, pending);
    early.abort();
    return loadTrace(`traces/${file}`);
  }

  async open(name, step) {
    const token = ++this.loading;
    this.early = false;
    this.name = name;
    this.showMessage(t('Loading {name}…', { name }), 'info');
    this.loadingMessage = $('message').textContent;
    let trace;
    try {
      trace = await this.fetchTrace(name);
    } catch (error) {
      if (token === this.loading) this.showFailure(t('Cannot show the trace "{name}"', { name }), error.message);
      return;
    }
    if (token === this.loading) this.install(name, trace, step);
  }

  // ---- a trace ---------------------------------------------------------------------------

  /** Show a freshly loaded trace at (or near) step. A reload passes the code pane's scrollTop
      so the reader's view does not jump. */
  install(name, trace, step, scrollTop = null) {
    if (!trace.visibleSteps.length) {
      const why = trace.header.message ? ` (${trace.header.status}: ${trace.header.message})` : '';
      this.showFailure(t('The trace "{name}" is empty', { name }), t('It records no steps to show{why}. Trace the lecture again.', { why }));
      return;
    }
    // A re-traced lecture keeps the solutions the reader had opened.
    if (this.trace && this.name === name) trace.solutions.open = new Set(this.trace.solutions.open);
    this.trace = trace;
    this.name = name;
    this.views.clear();
    this.view = null;
    this.step = -1;
    this.call = -1;
    this.heading = -2;
    this.env = new EnvPanel($('env'));
    trace.solutions.onChange = () => this.env.update(trace, this.step, trace.previous(this.step));
    this.showLecture();
    this.buildStatus();
    this.buildToc();
    this.show(trace.snap(step ?? trace.openingStep()), { history: 'replace', scroll: scrollTop === null });
    if (scrollTop !== null) {
      // Where the reader was, unless lines inserted or removed above moved the step out of sight.
      this.codePane.scrollTop = scrollTop;
      this.scrollToCurrent();
    }
    window.dispatchEvent(new CustomEvent('cs336:trace-loaded', { detail: { trace: name, steps: trace.numSteps } }));
  }

  showLecture() {
    this.loading++;
    this.setMode('lecture');
    this.clearLoadingMessage();
    // A failed re-trace the server kept beside the good one (NAME.failed) says so in the title.
    const name = this.trace.header.title || this.name;
    const title = this.name.endsWith('.failed') ? t('{title} (failed run)', { title: name }) : name;
    document.title = `${title} · cs336 lectures`;
    $('title').textContent = title;
  }

  /** Re-fetch the current trace, keeping the reader at the same file and line. `file` (under
      traces/) loads another version of it instead: the server's early view of a run, whose
      edited section has run while the sections after it still run. */
  async reload(file = null) {
    if (!this.name || this.mode === 'index') return;
    const name = this.name;
    if (!this.trace) {
      if (file) return;
      const params = new URLSearchParams(location.search);
      await this.open(name, stepFromUrl(params));
      return;
    }
    const old = this.trace;
    const token = ++this.loading;
    let trace;
    try {
      trace = file ? await loadTrace(`traces/${file}`) : await this.fetchTrace(name);
    } catch (error) {
      // An early view gone by the time it was asked for: the run ended, and its trace comes next.
      if (token === this.loading && !file) this.showMessage(error.message, 'error');
      return;
    }
    if (token !== this.loading) return;
    // What changed is told against the last whole trace: an early view is only part of the new run.
    trace.changes = new TraceChanges(this.early && old.changes ? old.changes.previous : old, trace);
    this.early = Boolean(file);
    const same = this.step >= 0 ? this.sameLine(old, trace) : -1;
    this.install(name, trace, same >= 0 ? same : this.step, same >= 0 ? this.codePane.scrollTop : null);
  }

  /** The step of the new trace at the line the reader was on in the old one (followed through
      the edit; if it no longer runs, the first line after it that does), or -1. */
  sameLine(old, trace) {
    const before = old.files[old.fileOfStep(this.step)];
    const file = trace.files.findIndex((f) => f.path === before.path);
    if (file < 0) return -1;
    const numLines = trace.files[file].html.length;
    let line = followLine(before.source, trace.files[file].source, old.lineOfStep(this.step));
    let same = -1;
    for (; same < 0 && line <= numLines; line++) same = trace.nearestStepAtLine(this.step, file, line);
    return same;
  }

  buildStatus() {
    const { header } = this.trace;
    const box = $('status');
    if (!header.status || header.status === 'ok') {
      box.hidden = true;
      return;
    }
    const what = { error: t('The lecture raised an error'), max_steps: t('The run hit its step limit'), timeout: t('The run timed out') }[header.status]
      || t('The run ended with status {status}', { status: header.status });
    box.replaceChildren(el('span', { text: `${what}${header.message ? `: ${header.message}` : ''}` }));
    if (this.trace.errorStep >= 0) {
      box.append(' ', el('button', { class: 'linklike', text: t('show the error'), onclick: () => this.show(this.trace.snap(this.trace.errorStep), { history: 'push' }) }));
    }
    box.className = `status status-${header.status}`;
    box.hidden = false;
  }

  buildToc() {
    const toc = $('toc');
    const { headings } = this.trace;
    $('lecture-view').classList.toggle('no-toc', !headings.length);
    toc.replaceChildren(el('div', { class: 'toc-title', text: t('Contents') }),
      el('ol', {}, headings.map((h, i) => el('li', { class: `toc-h${h.level}`, 'data-heading': i },
        el('a', { href: this.urlWith(this.name, h.step).href, text: headingText(h), title: headingText(h), onclick: (event) => {
          event.preventDefault();
          this.toggleContents(false);
          this.show(h.step, { history: 'push' });
        } })))));
    this.tocItems = Array.from(toc.querySelectorAll('li'));
  }

  /** Put file's code in the pane (kept per file, with its scroll position). */
  showFile(file) {
    let view = this.views.get(file);
    if (!view) {
      view = new CodeView(this.trace, file, (f, line) => this.openFile(f, line));
      this.views.set(file, view);
    }
    if (this.view !== view) {
      if (this.view) this.view.scrollTop = this.codePane.scrollTop;
      this.codePane.replaceChildren(view.root);
      this.codePane.scrollTop = view.scrollTop || 0;
      this.view = view;
    }
    return view;
  }

  /** Go to step s and show it: the one place where the screen follows the step. */
  show(s, { history = 'none', scroll = true } = {}) {
    const trace = this.trace;
    if (!trace || s < 0) return;
    this.step = s;
    $('elsewhere').hidden = true;
    trace.solutions.visit(s);
    const view = this.showFile(trace.fileOfStep(s));
    const unit = view.setStep(s);
    if (unit && scroll) this.scrollToCurrent();
    this.env.update(trace, s, trace.previous(s));
    this.ranksBar.update(trace, s);
    if (trace.stepCall[s] !== this.call) this.buildCrumbs(s);
    else this.crumbLine.textContent = t('line {n}', { n: trace.lineOfStep(s) });
    const heading = trace.headingAt(s);
    if (heading !== this.heading) this.markHeading(heading);
    const position = trace.visPos[s];
    const count = trace.visibleSteps.length;
    $('bar').style.width = `${((position + 1) / count) * 100}%`;
    // Counted from 1, as the list of lectures counts steps ("519 steps" ends at "step 519 of 519").
    $('counter').textContent = t('step {n} of {total}', { n: formatCount(s + 1), total: formatCount(trace.numSteps) });
    this.writeUrl(history);
  }

  /** Mark the section the step is in, in the contents, and keep it in sight there. */
  markHeading(heading) {
    if (this.tocItems[this.heading]) this.tocItems[this.heading].classList.remove('here');
    this.heading = heading;
    const item = this.tocItems[heading];
    if (!item) return;
    item.classList.add('here');
    const toc = $('toc');
    if (item.offsetTop < toc.scrollTop || item.offsetTop + item.offsetHeight > toc.scrollTop + toc.clientHeight) {
      toc.scrollTop = item.offsetTop - toc.clientHeight / 3;
    }
  }

  buildCrumbs(s) {
    const trace = this.trace;
    this.call = trace.stepCall[s];
    const frames = trace.stack(s);
    const crumbs = $('crumbs');
    crumbs.replaceChildren();
    frames.forEach((frame, i) => {
      if (i) crumbs.append(el('span', { class: 'crumb-sep', text: '›' }));
      const name = trace.functionName(frame.call);
      const path = trace.files[trace.fileOfStep(frame.step)].path;
      if (i === frames.length - 1) {
        this.crumbLine = el('span', { class: 'crumb-line', text: t('line {n}', { n: trace.lineOfStep(s) }) });
        crumbs.append(el('span', { class: 'crumb current', title: path }, el('span', { text: name }), ' ', this.crumbLine));
      } else {
        const target = trace.snap(frame.step); // the calling line, or the next stop when it is not one
        crumbs.append(el('button', { class: 'crumb', title: t('{where} (step {n})', { where: `${path}:${trace.lineOfStep(frame.step)}`, n: formatCount(frame.step + 1) }), text: name,
          onclick: () => this.show(target, { history: 'push' }) }));
      }
    });
  }

  /** Scroll the code pane so `node` is in sight, a third of the way down, if it is not already.
      (Positions come from bounding boxes: the code's chunks contain layout, so offsetTop
      would be relative to a chunk.) */
  scrollTo(node) {
    const pane = this.codePane;
    const box = node.getBoundingClientRect();
    const top = box.top - pane.getBoundingClientRect().top + pane.scrollTop;
    const bottom = top + Math.min(box.height, pane.clientHeight / 2);
    const margin = Math.min(60, pane.clientHeight / 6);
    if (top < pane.scrollTop + margin || bottom > pane.scrollTop + pane.clientHeight - margin) {
      pane.scrollTop = Math.max(0, top - pane.clientHeight * 0.3);
    }
  }

  /** Keep the current step in sight: its own line in raw mode, else its unit. */
  scrollToCurrent() {
    const current = this.view && this.view.current;
    if (current) this.scrollTo(this.raw ? current.line : current.unit);
  }

  /** An internal link: show `file` at `line` without moving the step. */
  openFile(file, line) {
    const trace = this.trace;
    if (!trace || !trace.files[file]) return;
    const view = this.showFile(file);
    view.setStep(this.step);
    const unit = view.unitElement(line);
    if (unit) {
      this.scrollTo(unit);
      unit.classList.remove('target');
      void unit.offsetWidth; // restart the highlight animation
      unit.classList.add('target');
    }
    if (file !== trace.fileOfStep(this.step)) {
      const box = $('elsewhere');
      box.replaceChildren(el('span', { text: t('Viewing {where}. ', { where: `${trace.files[file].path}:${line}` }) }),
        el('button', { class: 'linklike', text: t('Back to the current step (Esc)'), onclick: () => this.show(this.step) }));
      box.hidden = false;
    }
  }

  clickLine(line) {
    const trace = this.trace;
    if (!trace || !this.view) return;
    const { file } = this.view;
    let target = trace.stepAtLine(this.step, file, line);
    // A line inside a statement spread over several lines may have no step of its own: its statement's.
    if (target < 0) target = trace.stepAtLine(this.step, file, trace.heads[file][line]);
    if (target >= 0) this.show(target, { history: 'push' });
    else this.showMessage(t('Line {n} never ran in this trace.', { n: line }), 'info', 2500);
  }

  seek(event) {
    if (!this.trace) return;
    const box = $('progress').getBoundingClientRect();
    const fraction = Math.min(Math.max((event.clientX - box.left) / box.width, 0), 1);
    const steps = this.trace.visibleSteps;
    this.show(steps[Math.min(steps.length - 1, Math.floor(fraction * steps.length))], { history: 'push' });
  }

  // ---- keys and buttons --------------------------------------------------------------------

  onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented || isEditable(event.target)) return;
    const action = keyAction(event);
    if (!action) return;
    event.preventDefault();
    this.act(action, event.repeat);
  }

  act(action, repeat) {
    if (action === 'help') return this.toggleHelp();
    if (action === 'escape') {
      $('help').hidden = true;
      this.toggleContents(false);
      if (this.trace && !$('elsewhere').hidden) this.show(this.step);
      return;
    }
    if (action === 'traces') return this.goIndex();
    if (action === 'contents') return this.toggleContents();
    const trace = this.trace;
    if (!trace || this.mode !== 'lecture') return;
    if (MODES.includes(action)) {
      this.setViewMode(action, !this[action]);
      this.writeUrl('replace');
      this.scrollToCurrent();
      return;
    }
    const s = this.step;
    const moves = {
      forward: () => trace.next(s),
      back: () => trace.previous(s),
      over: () => trace.stepOver(s, 1),
      'over-back': () => trace.stepOver(s, -1),
      out: () => trace.stepOut(s),
      'rank-next': () => trace.ranks.switchFrom(s, 1),
      'rank-back': () => trace.ranks.switchFrom(s, -1),
      'next-change': () => (trace.changes ? trace.changes.nextChange(s) : -1),
    };
    const target = moves[action] ? moves[action]() : -1;
    if (target >= 0) this.show(target, { history: repeat ? 'replace-later' : 'push' });
    else if (!$('elsewhere').hidden) this.show(s);
    else if (action === 'out') this.showMessage(t('Already in the outermost call.'), 'info', 2000);
    else if (action === 'next-change') {
      this.showMessage(trace.changes ? t('Nothing changed by the edit after this step.')
        : t('Changes are marked once the lecture is re-traced after an edit.'), 'info', 2500);
    }
    else if (action.startsWith('rank-')) this.showMessage(t('This step runs in the lecture\'s own process, not in a rank.'), 'info', 2000);
  }

  /** Turn raw or reveal mode on or off (the URL follows at the next writeUrl). */
  setViewMode(mode, on) {
    this[mode] = on;
    this.codePane.classList.toggle(mode, on);
    $(`${mode}-button`).setAttribute('aria-pressed', String(on));
  }

  /** On a narrow screen the contents live behind a button, over the code while open. */
  toggleContents(open = !document.body.classList.contains('toc-open')) {
    document.body.classList.toggle('toc-open', open);
    $('contents-button').setAttribute('aria-pressed', String(open));
  }

  toggleHelp() {
    $('help').hidden = !$('help').hidden;
  }

  /** Clear "Loading …" once the trace is shown, but not a message live.js put there since. */
  clearLoadingMessage() {
    if ($('message').textContent === this.loadingMessage) this.showMessage('');
  }

  /** showMessage(text, kind) shows a line above the page; an empty text clears it. */
  showMessage(text, kind = 'info', clearAfterMs = 0) {
    const box = $('message');
    clearTimeout(this.messageTimer);
    box.textContent = text || '';
    box.className = `message message-${kind === 'error' ? 'error' : 'info'}`;
    box.hidden = !text;
    if (text && clearAfterMs) this.messageTimer = setTimeout(() => this.showMessage(''), clearAfterMs);
  }
}

$('no-modules').remove();
const viewer = new Viewer();
window.cs336Viewer = {
  currentTrace: () => (viewer.mode === 'index' ? null : viewer.name),
  mode: () => viewer.mode,
  failurePane: $('failure'),
  reload: (file) => viewer.reload(file),
  stepNow: () => (viewer.trace ? viewer.step : -1),
  showsEarly: () => Boolean(viewer.early),
  go: (name, step) => viewer.go(name, step),
  showMessage: (text, kind) => viewer.showMessage(text, kind),
  toolbar: viewer.toolbar,
  codePane: viewer.codePane,
};
viewer.route();
