/* What the reader sees when a lecture fails to re-trace under the local server: one line
   saying why, with the actions that help: open the failed run at its error step (the server
   keeps it beside the last good trace as NAME.failed), edit the failing line, show the full
   traceback, or dismiss. Everything from the server or the trace goes in as text. */

import { el } from './dom.js';
import { onLanguageChange, t } from './i18n.js';
import { loadTrace } from './trace.js';

const FAILED = '.failed';

/** The lecture a trace name belongs to: "lecture_01.failed" -> "lecture_01". */
export function lectureOf(name) {
  return typeof name === 'string' && name.endsWith(FAILED) ? name.slice(0, -FAILED.length) : name;
}

/** Where a failed run stopped: its error step (its last step when it was cut off) and that
    step's line in the lecture file itself (not in a helper it called). */
export function failurePoint(trace) {
  const step = trace.errorStep >= 0 ? trace.errorStep : trace.numSteps - 1;
  if (step < 0) return null;
  const frames = trace.stack(step);
  const inLecture = (frame) => trace.files[trace.fileOfStep(frame.step)].path === trace.header.source;
  const frame = [...frames].reverse().find(inLecture) || frames[frames.length - 1];
  return { step, line: trace.lineOfStep(frame.step) };
}

export class RetraceFailure {
  /** `viewer` is window.cs336Viewer; `edit(trace, line)` opens the editor, or is null without the token. */
  constructor(viewer, edit) {
    this.viewer = viewer;
    this.edit = edit;
    this.event = null;
    this.firstLine = ''; // the first line of the failure's message
    this.point = null;
    this.summary = el('span', { class: 'rf-summary' });
    this.actions = el('span', { class: 'rf-actions' });
    this.traceback = el('pre', { class: 'rf-traceback', hidden: true });
    this.toggle = el('button', { type: 'button', class: 'linklike rf-toggle', 'aria-expanded': 'false',
      onclick: () => this.showTraceback(this.traceback.hidden) });
    this.dismiss = el('button', { type: 'button', class: 'rf-close', text: '×', onclick: () => this.hide() });
    this.box = el('div', { class: 'retrace-failure', role: 'alert', hidden: true },
      el('div', { class: 'rf-line' }, el('span', { class: 'rf-icon', text: '✖' }), this.summary, this.actions, this.toggle, this.dismiss),
      this.traceback);
    this.label();
    document.getElementById('message').after(this.box);
    window.addEventListener('cs336:trace-loaded', () => this.renderActions());
    onLanguageChange(() => {
      this.label();
      this.renderActions(); // on the list of lectures too, where no trace is drawn again
    });
  }

  /** The banner's own words in the chosen language (its actions: renderActions). */
  label() {
    this.toggle.textContent = t('traceback');
    this.dismiss.title = t('Dismiss');
    this.dismiss.setAttribute('aria-label', t('Dismiss'));
    if (this.event) this.summary.textContent = t('Re-tracing {name} failed: {error}', { name: this.event.trace, error: this.firstLine || t('the re-trace failed') });
  }

  hide() {
    this.box.hidden = true;
  }

  showTraceback(open) {
    this.traceback.hidden = !open;
    this.toggle.setAttribute('aria-expanded', String(open));
  }

  /** A finished re-trace of `event.trace`: show its failure, or clear an earlier one. */
  async update(event) {
    if (event.state === 'ok') {
      if (this.event && this.event.trace === event.trace) {
        this.event = null;
        this.hide();
        // Reading the failed run of a lecture that now traces: over to the new good trace.
        if (this.viewer.currentTrace() === event.trace + FAILED) this.viewer.go(event.trace, null);
      }
      return;
    }
    this.event = event;
    this.point = null;
    const [first, ...rest] = String(event.message || '').split('\n');
    this.firstLine = first;
    this.label();
    this.traceback.textContent = rest.join('\n') || first;
    this.showTraceback(false);
    this.toggle.hidden = !rest.length;
    this.actions.replaceChildren();
    this.box.hidden = false;
    if (!event.failed_trace) {
      // No trace at all (a syntax error, say): the line its message names can still be edited.
      const named = /\.py:(\d+)/.exec(String(event.message || ''));
      this.point = named ? { step: null, line: Number(named[1]) } : null;
      this.renderActions();
      return;
    }
    let trace;
    try {
      trace = await loadTrace(`traces/${event.failed_trace}.json`);
    } catch (error) {
      this.actions.append(el('span', { class: 'rf-note', text: t('(the failed run cannot be opened: {error})', { error: error.message }) }));
      return;
    }
    if (this.event !== event) return; // a newer event came meanwhile
    this.point = failurePoint(trace);
    this.renderActions();
  }

  /** The actions for the failure shown, which depend on the trace on screen. */
  renderActions() {
    const { event, point } = this;
    this.actions.replaceChildren();
    if (!event || !point) return;
    const button = (cls, text, title, onclick) => el('button', { type: 'button', class: `linklike ${cls}`, text, title, onclick });
    if (point.step !== null) {
      this.actions.append(button('rf-show', t('go to line {n}', { n: point.line }), t('Open the failed run at the step that failed'),
        () => this.viewer.go(event.failed_trace, point.step)));
    }
    if (this.edit) {
      this.actions.append(button('rf-edit', t('edit line {n}', { n: point.line }), t('Open the lecture in the editor at the failing line'),
        () => this.edit(event.trace, point.line)));
    }
    if (event.failed_trace !== event.trace && this.viewer.currentTrace() === event.failed_trace) {
      this.actions.append(button('rf-back', t('last good trace'), t('The trace of the last version that ran to the end'),
        () => this.viewer.go(event.trace, null)));
    }
  }
}
