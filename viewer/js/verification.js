/* The mark saying whether the trace on screen was checked against a whole run (live mode only).

   After a run resumed from a checkpoint, `cs336-lectures serve` runs the whole lecture in the
   background and compares the two traces (cs336_lectures/runtime/server/verification.py). Its events
   carry `verification`: "pending" while that run goes on, "verified" when it gave the same
   trace, "corrected" when it did not and its trace replaced the resumed one. The mark shows
   that state for the lecture on screen, in the toolbar; a trace nobody checks (a whole run, a
   server started with --no-verify, a static site) shows none. */

import { el } from './dom.js';
import { onLanguageChange, t } from './i18n.js';
import { runNote } from './run_notes.js';

function wording(entry) {
  if (entry.state === 'pending') {
    return [t('Checking…'), t('A whole run of the lecture is checking this resumed run')];
  }
  if (entry.state === 'verified') {
    return [t('Verified'), t('A fresh whole run of the lecture gave this same trace')];
  }
  return [t('Corrected'), t('The resumed run differed from a fresh whole run, whose trace this is: {line}',
    { line: runNote(entry.event) })];
}

export class VerificationMark {
  /** `lectureOnScreen()` names the lecture shown (null for the list of lectures). */
  constructor(toolbar, lectureOnScreen) {
    this.lectureOnScreen = lectureOnScreen;
    this.states = new Map(); // lecture -> { state, event } from its last event
    this.node = el('span', { class: 'cs336-verification', role: 'status', hidden: true });
    toolbar?.append(this.node);
    window.addEventListener('cs336:trace-loaded', () => this.draw());
    window.addEventListener('cs336:mode-changed', () => this.draw());
    onLanguageChange(() => this.draw());
  }

  /** Take an event of the server: one with a verification state sets it, any other run of the
      lecture clears it (its trace is not the one checked). */
  update(event) {
    if (typeof event.verification === 'string') this.states.set(event.trace, { state: event.verification, event });
    else this.states.delete(event.trace);
    this.draw();
  }

  draw() {
    const entry = this.states.get(this.lectureOnScreen());
    this.node.hidden = !entry;
    if (!entry) return;
    const [label, title] = wording(entry);
    this.node.dataset.state = entry.state;
    this.node.textContent = label;
    this.node.title = title;
  }
}
