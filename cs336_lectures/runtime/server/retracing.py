"""Re-tracing on save: which lecture to run again, where, and what to publish.

A `Lecture` (served_lecture.py) is a file named on `serve`'s command line and its re-trace state. The `Retracer`
runs one re-trace of a lecture at a time (requests while one runs coalesce into one more): in
the lecture's warm kernel (kernel/), which resumes from a checkpoint where the edit allows, or
in a `cs336-lectures trace` subprocess where the platform cannot fork. A run writes into a
temporary folder; its trace replaces the served one only when it succeeded, so a syntax error
or an exception leaves the last good trace in place (the failed one is kept beside it). The
`LectureWatcher` turns file changes into requests: a lecture's own edit re-runs what it
affects, a change to a project module it imported the whole lecture. Where runs write and
how they are installed is traces_folder.py; the tracer subprocess, tracer_subprocess.py; the
check of a resumed run by a whole one, verification.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from cs336_lectures.runtime.i18n.run_messages import Note, count_of, maybe_note, note
from cs336_lectures.runtime.kernel.client import KernelProcess, KernelUnavailable
from cs336_lectures.runtime.kernel.protocol import EARLY_SUFFIX
from cs336_lectures.runtime.processes import kernel_can_fork
from cs336_lectures.runtime.server.events import EventHub
from cs336_lectures.runtime.server.served_lecture import Lecture
from cs336_lectures.runtime.server.tracer_subprocess import TracerProcesses, no_trace_reason
from cs336_lectures.runtime.server.traces_folder import (TracesFolder, early_trace, failure_message, lecture_source, move,
                                                         read_trace, shown_early_trace, tail)
from cs336_lectures.runtime.server.verification import ResumedRun, Verifier
from cs336_lectures.runtime.server.watch import FileWatcher


class Retracer:
    """Runs `cs336-lectures trace` for one lecture at a time; requests while one runs coalesce.

    With a `verification_log`, a published run resumed from a checkpoint is then checked by a
    whole run (verification.py): a difference replaces it, and is said and logged."""

    def __init__(self, traces_dir: Path, hub: EventHub, tracer_command: list[str],
                 max_steps: int | None, timeout: float | None, log: Callable[[str], None] = print,
                 verification_log: Path | None = None):
        self.folder = TracesFolder(traces_dir)
        self.hub = hub
        self.max_steps = max_steps
        self.timeout = timeout
        self.log = log
        self.closed = threading.Event()
        self.processes = TracerProcesses(tracer_command, max_steps, timeout, self.closed)
        self.verifier = Verifier(self, verification_log) if verification_log is not None else None
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self.use_kernels = kernel_can_fork()
        self._kernels: dict[str, KernelProcess] = {}
        self.on_modules: Callable[[Lecture, list[str]], None] = lambda lecture, modules: None

    def request(self, lecture: Lecture, *, full: Note | None = None, supersede: bool = False) -> None:
        """Queue a re-trace; if one is running, exactly one more follows it. `supersede` (an edit)
        cancels the running one first; `full` says why the next run must be a whole one."""
        with lecture.lock:
            if full is not None:
                lecture.pending_full = full
            if lecture.running:
                lecture.pending = True
                if supersede or lecture.verifying:  # any request outranks checking a run already shown
                    self._cancel(lecture)
                return
            lecture.running = True
        self._start_thread(self._work, lecture, f"retrace-{lecture.name}")

    def warm(self, lecture: Lecture) -> None:
        """Start the lecture's kernel and run it once, publishing and installing nothing (its
        trace is fresh already): the first edit then finds checkpoints to resume from."""
        if not self.use_kernels:
            return
        with lecture.lock:
            if lecture.running:
                return
            lecture.running = True
        self._start_thread(self._warm_up, lecture, f"warm-{lecture.name}")

    def _start_thread(self, target: Callable[[Lecture], None], lecture: Lecture, name: str) -> None:
        thread = threading.Thread(target=target, args=(lecture,), name=name, daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _warm_up(self, lecture: Lecture) -> None:
        try:
            lecture.traced_source = lecture.path.read_text(encoding="utf-8")  # the fresh trace's (for the log)
        except (OSError, UnicodeDecodeError):
            pass
        try:
            self.kernel(lecture).run(max_steps=self.max_steps, timeout=self.timeout)
        except KernelUnavailable as error:
            self.log(f"{lecture.name}: {error}")
            self.drop_kernel(lecture)
        finally:
            with lecture.lock:
                lecture.running = False
                edited_meanwhile = lecture.pending
            with self._lock:
                self._threads.discard(threading.current_thread())
        if edited_meanwhile and not self.closed.is_set():
            self.request(lecture)

    def _work(self, lecture: Lecture) -> None:
        try:
            while not self.closed.is_set():
                with lecture.lock:
                    lecture.pending = False
                    full, lecture.pending_full = lecture.pending_full, None
                    lecture.generation += 1
                    generation = lecture.generation
                self.hub.publish({"trace": lecture.name, "state": "running", "generation": generation})
                self.log(f"tracing {lecture.given} ...")
                try:
                    outcome = self.retrace(lecture, full)
                except Exception as error:  # e.g. the tracer could not be started: say so, keep serving
                    outcome = {"state": "error", "message": f"could not run the tracer: {error}"}
                if self.closed.is_set():
                    return
                if outcome is None:  # cancelled by a newer edit, which runs next
                    continue
                resumed = outcome.pop("resumed", None)
                if "message" in outcome:  # named as everywhere else (a kernel's run knows the absolute path)
                    outcome = {**outcome, "message": outcome["message"].replace(str(lecture.path), lecture.shown)}
                self.hub.publish({"trace": lecture.name, "generation": generation, **outcome})
                self.log(f"{lecture.name}: {outcome['message']}" if outcome["state"] == "ok"
                         else f"{lecture.name}: failed: {outcome['message']}")
                with lecture.lock:
                    if lecture.pending:
                        continue
                    lecture.verifying = resumed is not None
                if resumed is None:
                    return
                try:
                    self.verifier.check(lecture, generation, resumed)
                except Exception as error:  # noqa: BLE001 - a check that fails leaves the published run as it is
                    self.log(f"{lecture.name}: could not check the resumed run: {error}")
                finally:
                    with lecture.lock:
                        lecture.verifying = False
                with lecture.lock:
                    if not lecture.pending:
                        return
        finally:
            with lecture.lock:
                lecture.running = False
            with self._lock:
                self._threads.discard(threading.current_thread())

    def retrace(self, lecture: Lecture, full: Note | None = None) -> dict | None:
        """Run the lecture (in its warm kernel where the platform allows) and install the result
        if it is good (or nothing better exists); None when a newer edit cancelled the run.

        Returns the outcome part of the event: state "ok" or "error", a message, and for a failed
        run `installed: True` when its trace replaced one that was no better; for a resumed run
        that a whole run is to check, `verification: "pending"` and `resumed` (a ResumedRun, for
        the worker, not the event).
        """
        self.folder.path.mkdir(parents=True, exist_ok=True)
        if self.use_kernels and not self.closed.is_set():
            try:
                return self._retrace_in_kernel(lecture, full)
            except KernelUnavailable as error:
                self.log(f"{lecture.name}: {error}; tracing in a new process instead")
                self.drop_kernel(lecture)
        return self._retrace_in_subprocess(lecture)

    def kernel(self, lecture: Lecture) -> KernelProcess:
        with self._lock:
            kernel = self._kernels.get(lecture.name)
            if kernel is None:
                kernel = self._kernels[lecture.name] = KernelProcess(lecture.path, [], log=self.log)
                kernel.command = self.processes.command(lecture, kernel.out)
        return kernel

    def drop_kernel(self, lecture: Lecture) -> None:
        with self._lock:
            kernel = self._kernels.pop(lecture.name, None)
        if kernel is not None:
            kernel.close()

    def _retrace_in_kernel(self, lecture: Lecture, full: Note | None) -> dict | None:
        kernel = self.kernel(lecture)
        served_early = early_trace(self.folder.path, lecture.name)
        shown = shown_early_trace(self.folder.path, lecture.name)
        shown.unlink(missing_ok=True)  # the last run's, checked by now
        try:
            reply = kernel.run(max_steps=self.max_steps, timeout=self.timeout, full=full,
                               on_early=lambda message: self._show_early(lecture, kernel, message))
        finally:
            if self.verifier is not None and served_early.is_file():
                os.replace(served_early, shown)  # for the check: was it the start of the whole trace?
            served_early.unlink(missing_ok=True)
        if reply is None:
            return None
        self.on_modules(lecture, reply.get("modules") or [])
        produced = kernel.out / f"{lecture.name}.json"
        self.folder.install_assets(kernel.out)  # content-addressed: harmless, and a later resumed run may need them
        trace = read_trace(produced) if reply.get("status") is not None else None
        if trace is None:
            reason = reply.get("message") or "the run wrote no trace"
            output = kernel.output_tail()
            return {"state": "error", "message": f"{reason}\n{output}".strip()}
        summary = run_summary(reply)
        if reply["state"] == "ok":
            self.folder.install_good(kernel.out, produced, lecture.name)
            outcome = {"state": "ok", "message": str(summary), "note": summary.to_json(), "mode": reply["mode"]}
        else:
            outcome = self.folder.install_failure(lecture.name, kernel.out, produced,
                                            failure_message(trace, kernel.output_tail(), 2))
        old_source, lecture.traced_source = lecture.traced_source, lecture_source(trace)
        if reply["mode"] == "incremental" and self.verifier is not None:
            outcome["verification"] = "pending"
            outcome["resumed"] = ResumedRun(trace, summary, outcome["state"], old_source,
                                            shown if shown.is_file() else None)
        return outcome

    def _show_early(self, lecture: Lecture, kernel: KernelProcess, message: dict) -> None:
        """The edited section has run again and the sections after it are running: let viewers
        show the trace so far (the whole trace follows)."""
        produced = kernel.out / f"{lecture.name}{EARLY_SUFFIX}"
        if not produced.is_file():
            return
        self.folder.install_assets(kernel.out)
        served = early_trace(self.folder.path, lecture.name)
        served.parent.mkdir(exist_ok=True)
        move(produced, served)
        with lecture.lock:
            generation = lecture.generation
        summary = early_summary(message)
        self.hub.publish({"trace": lecture.name, "state": "early", "generation": generation,
                          "file": served.relative_to(self.folder.path).as_posix(), "until": message.get("until", 0),
                          "message": str(summary), "note": summary.to_json()})

    def _cancel(self, lecture: Lecture) -> None:
        """Stop the run in progress for `lecture` (called with lecture.lock held)."""
        with self._lock:
            kernel = self._kernels.get(lecture.name)
        if kernel is not None:
            kernel.cancel()
        self.processes.cancel(lecture.name)

    def _retrace_in_subprocess(self, lecture: Lecture) -> dict | None:
        staging = Path(tempfile.mkdtemp(prefix=f".retrace-{lecture.name}.", dir=self.folder.path))
        try:
            started = time.monotonic()
            returncode, stderr = self.processes.run(self.processes.command(lecture, staging), lecture.name)
            if returncode is None:
                return None
            produced = staging / f"{lecture.name}.json"
            trace = read_trace(produced)
            if trace is None:
                reason = tail(stderr) or no_trace_reason(returncode)
                return {"state": "error", "message": reason}
            header = trace["header"]
            lecture.traced_source = lecture_source(trace)
            if returncode == 0 and header.get("status") == "ok":
                self.folder.install_good(staging, produced, lecture.name)
                summary = note("traced {steps} in {seconds} s", steps=count_of(header.get("num_steps", 0), "step", "steps"),
                               seconds=f"{time.monotonic() - started:.1f}")
                return {"state": "ok", "message": str(summary), "note": summary.to_json()}
            return self.folder.install_failure(lecture.name, staging, produced, failure_message(trace, stderr, returncode))
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def close(self) -> None:
        """Kill every run and kernel (and what they started), remove their folders, end the threads."""
        self.closed.set()
        with self._lock:
            threads = list(self._threads)
            kernels = list(self._kernels.values())
            self._kernels.clear()
        self.processes.kill_all()
        for kernel in kernels:
            kernel.close()
        for thread in threads:
            thread.join(timeout=5)


def run_summary(reply: dict) -> Note:
    """What the viewer says after a run: "re-ran `bpe` (0.21 s); 27 sections reused", or why it all ran."""
    seconds = f"{reply.get('elapsed_s', 0):.2f}"
    if reply.get("mode") == "incremental":
        after, reused = _sections_after(reply), _sections(reply["reused"])
        if after > 0:
            summary = note("re-ran `{section}` and the {after} after it ({seconds} s); {reused} reused",
                           section=reply["section"], after=_sections(after), seconds=seconds, reused=reused)
        else:
            summary = note("re-ran `{section}` ({seconds} s); {reused} reused", section=reply["section"],
                           seconds=seconds, reused=reused)
        earlier = maybe_note(reply.get("reason_note"))  # why it resumed before the edited section
        return summary if earlier is None else note("{run}; resumed early: {reason}", run=summary, reason=earlier)
    reason = maybe_note(reply.get("reason_note")) or note("no checkpoint to resume from")
    return note("re-ran the whole lecture ({seconds} s): {reason}", seconds=seconds, reason=reason)


def early_summary(message: dict) -> Note:
    """What the viewer says while the sections after an edit run: "re-ran `bpe` (0.12 s); running
    the 3 sections after it…"."""
    after = _sections_after(message)
    fields = {"section": str(message.get("section")), "seconds": f"{message.get('elapsed_s', 0):.2f}"}
    if after > 0:
        return note("re-ran `{section}` ({seconds} s); running the {after} after it…", after=_sections(after), **fields)
    return note("re-ran `{section}` ({seconds} s); finishing…", **fields)


def _sections_after(reply: dict) -> int:
    """How many sections of an incremental run come after the one it resumed at."""
    return (reply.get("sections") or 0) - reply.get("reused", 0) - 1


def _sections(count: int) -> Note:
    return count_of(count, "section", "sections")


class LectureWatcher:
    """Watches the lectures and the project modules their runs imported (watch.py); a change to a
    lecture re-runs what it affects, a change to one of its modules the whole lecture."""

    def __init__(self, lectures: dict[str, Lecture], retracer: Retracer):
        self.lectures = lectures
        self.retracer = retracer
        self.users: dict[Path, set[str]] = {}  # module file -> lectures that import it
        self.files = FileWatcher(self.on_change)
        self.files.watch(source for lecture in lectures.values() for source in lecture.sources())
        retracer.on_modules = self.add_modules

    def start(self) -> None:
        self.files.start()

    def stop(self) -> None:
        self.files.stop()

    def add_modules(self, lecture: Lecture, modules: list[str]) -> None:
        for module in modules:
            self.users.setdefault(Path(os.path.realpath(module)), set()).add(lecture.name)
        self.files.watch(Path(module) for module in modules)

    def on_change(self, paths: set[Path]) -> None:
        for lecture in self.lectures.values():
            touched = {Path(os.path.realpath(source)) for source in lecture.sources()} & paths
            if touched:
                with lecture.lock:  # a save from the browser updates `seen` under this lock too
                    stamp = lecture.stamp()
                    changed = stamp is not None and stamp != lecture.seen
                    if changed:
                        lecture.seen = stamp
                if changed and Path(os.path.realpath(lecture.path)) in touched:
                    self.retracer.hub.say_source_changed(lecture.name, lecture.path)
                if changed:
                    # A catalog feeds every text() of the run: only a whole run shows its edit everywhere.
                    catalogs = touched - {Path(os.path.realpath(lecture.path))}
                    full = note("the {language} translation changed", language=min(catalogs).parent.name) if catalogs else None
                    self.retracer.request(lecture, full=full, supersede=True)
        for path in paths:
            for name in sorted(self.users.get(path, ())):
                shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
                self.retracer.request(self.lectures[name], full=note("{module} changed", module=shown), supersede=True)


