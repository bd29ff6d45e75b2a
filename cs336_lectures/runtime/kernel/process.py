"""The warm kernel: one long-lived process per served lecture that re-runs only what an edit affects.

    server ── kernel (python -m cs336_lectures.runtime.kernel.process; own session; torch, numpy... imported once)
                ├─ run (fork of the kernel: traces the whole lecture exactly as `cs336-lectures trace`)
                │    └─ checkpoint i (fork of the run at main()'s line that calls section i; it waits)
                │         └─ resumed run (fork of checkpoint i: the edited functions swapped in, main() goes on)

A run forks a checkpoint at each line of main() that calls a section, just after that line's step
is recorded and before the line runs. A checkpoint is the whole process at that moment: module
globals, the random generators of Python, numpy and torch, open files, and the tracer's steps
so far. On an edit, `plan` compares the new source with each checkpoint's (edits.py) and picks
the latest checkpoint before the first step that ran changed code; that checkpoint forks a
child that swaps the new code into the changed functions (`function.__code__`, so every
reference sees it), re-reads the directives, and returns into main(), which runs the remaining
sections and writes the whole trace. Whenever that is not known to be safe, the kernel forks a
fresh run from itself instead (a full re-trace, still without Python's start-up and imports).
DEVELOPERS.md has the safety argument. What happens inside a run, a checkpoint and a resumed
run is forked_run.py; this module is the kernel's side: which checkpoint, starting, watching
and ending runs.

Messages are JSON, one per line: from the server over the socket given as --fd, from runs and
checkpoints over a Unix socket the kernel listens on.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import gc
import importlib
import json
import os
import platform
import selectors
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from cs336_lectures.runtime.kernel import edits
from cs336_lectures.runtime.kernel.forked_run import run_whole, set_fork_safe_openmp
from cs336_lectures.runtime.processes import alive, child_processes, kill_group, openmp_is_fork_safe, reap_children
from cs336_lectures.runtime.kernel.effects import first_hazard
from cs336_lectures.runtime.kernel.protocol import (RUN_GRACE_SECONDS, STACKS_SIGNAL, CancelOrder, CheckpointHello,
                                                    EarlyView, MessageLines, ResumeOrder, RunDone, RunHello, RunOrder,
                                                    StopOrder, send)
from cs336_lectures.runtime.i18n.run_messages import Note, maybe_note, note

# Imported once by the kernel, so that no run pays for them. Only libraries and the runtime:
# the lecture and its own modules are imported by each run (they may change).
PREWARM = ("numpy", "torch", "torch.nn.functional", "einops", "jaxtyping", "regex", "tiktoken", "matplotlib.figure",
           "matplotlib.backends.backend_svg", "pygments.lexers.python", "cs336_lectures.runtime.render.rendering",
           "cs336_lectures.runtime.trace.values", "cs336_lectures.runtime.lecture.primitives", "cs336_lectures.runtime.render.assets")
CONNECT_WAIT_SECONDS = 10.0
_PR_SET_CHILD_SUBREAPER = 36


# --- the kernel process ------------------------------------------------------------------------


@dataclass
class Checkpoint:
    pid: int
    index: int
    section: str
    line: int  # main()'s line that calls the section
    steps: int
    source: str  # the source its code was compiled from
    connection: socket.socket | None = None


@dataclass
class Run:
    id: int
    mode: str  # "incremental" or "full"
    reason: Note | None  # why the whole lecture runs
    resumed: Checkpoint | None
    started: float
    deadline: float | None
    pid: int = 0  # known once the run says hello
    dead_since: float | None = None
    process: subprocess.Popen | None = None  # a run in a new process (the lecture looks at its own)


@dataclass
class LastGoodRun:
    """The last run that ended well: its checkpoints and where each definition first ran."""

    first_step: dict[str, int]
    checkpoints: list[Checkpoint]
    unsafe: Note | None  # why checkpoints stopped being taken
    sections: int
    reached: list[dict] = field(default_factory=list)  # each section main() called: index, section, line, steps
    hazards: list[dict] = field(default_factory=list)  # effects.Effects.hazards of the run


class Kernel:
    def __init__(self, lecture: Path, folder: Path, control: socket.socket, command: list[str]):
        self.lecture = lecture
        self.out = folder / "out"
        self.control = control
        self.control_lines = MessageLines(control)
        self.command = command
        self.socket_path = str(folder / "socket")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.socket_path)
        self.listener.listen(64)
        self.listener.setblocking(False)  # a connection select() reported may be gone before accept()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(control, selectors.EVENT_READ, "control")
        self.finished: LastGoodRun | None = None
        self.no_state_reason = note("the first run of the lecture")
        self.run: Run | None = None
        self.hellos: dict[int, tuple[socket.socket, dict]] = {}  # checkpoint pid -> connection, hello
        self.outlines: dict[str, edits.Outline | None] = {}
        self.accepting: int | None = None  # the run whose checkpoints are welcome
        self.stopping = False

    # the loop

    def serve(self) -> None:
        try:
            while not self.stopping:
                self.poll(0.2)
                self.check_run()
        finally:
            self.shut_down()

    def poll(self, timeout: float, orders: bool = True) -> None:
        for key, _ in self.selector.select(timeout=timeout):
            if key.data == "control" and not orders:
                continue
            if key.data == "accept":
                try:
                    connection, _ = self.listener.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                connection.setblocking(True)
                self.selector.register(connection, selectors.EVENT_READ, MessageLines(connection))
            elif key.data == "control":
                messages = self.control_lines.read_available()
                if messages is None:
                    self.stopping = True
                for message in messages or []:
                    self.on_order(message)
            else:
                self.on_worker(key.fileobj, key.data)

    def on_order(self, order: dict) -> None:
        """An order from the server (protocol.ORDERS names them), dispatched from ORDER_HANDLERS."""
        handler = ORDER_HANDLERS.get(order.get("op"))
        if handler is not None:
            handler(self, order)

    def on_stop(self, order: StopOrder) -> None:
        self.stopping = True

    def on_cancel(self, order: CancelOrder) -> None:
        self.cancel()

    def on_run(self, order: RunOrder) -> None:
        self.cancel()
        self.start(order)

    def on_worker(self, connection: socket.socket, lines: MessageLines) -> None:
        """Messages from runs and checkpoints (protocol.WORKER_MESSAGES), dispatched from WORKER_HANDLERS."""
        try:
            messages = lines.read_available()
        except (OSError, ValueError):
            messages = None
        if messages is None:
            try:
                self.selector.unregister(connection)
            except (KeyError, ValueError):  # already gone, in a nested poll
                pass
            connection.close()
            return
        for message in messages:
            handler = WORKER_HANDLERS.get(message.get("role"))
            if handler is not None:
                handler(self, connection, message)

    def _current(self, message: dict) -> Run | None:
        """The run in progress, if `message` is from it (a cancelled run may still be talking)."""
        run = self.run
        return run if run is not None and message.get("id") == run.id else None

    def on_checkpoint_hello(self, connection: socket.socket, message: CheckpointHello) -> None:
        self.selector.unregister(connection)  # from now on it only hears from us
        if message["run"] == self.accepting:
            self.hellos[message["pid"]] = (connection, message)
        else:  # from a run that was cancelled or failed
            kill_group(message["pid"])
            connection.close()

    def on_run_hello(self, connection: socket.socket, message: RunHello) -> None:
        run = self._current(message)
        if run is not None:
            run.pid = message["pid"]

    def on_run_done(self, connection: socket.socket, message: RunDone) -> None:
        if self._current(message) is not None:
            self.on_done(message)

    def on_early_view(self, connection: socket.socket, message: EarlyView) -> None:
        run = self._current(message)
        if run is None or run.resumed is None:
            return
        following = self._next_checkpoint(run.resumed)
        # The resumed run's own time: its trace's header also counts the run it resumed.
        self.reply({"id": run.id, "state": "early", "steps": message["steps"],
                    "elapsed_s": round(time.monotonic() - run.started, 3), "section": run.resumed.section,
                    "sections": self.finished.sections, "reused": run.resumed.index,
                    "until": following.steps if following is not None else 0})

    # running

    def start(self, order: dict) -> None:
        try:
            source = self.lecture.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            self.reply({"id": order["id"], "state": "error", "message": f"cannot read {self.lecture}: {error}"})
            return
        looking = _looks_at_its_process(self.outline(source))
        if looking is not None:
            self.start_new_process(order, note("the lecture looks at its own process (`{name}`), which only a new "
                                               "process shows as `cs336-lectures trace` would", name=looking))
            return
        checkpoint, changed, reason = self.plan(source, maybe_note(order.get("full")))
        order = {**order, "starts": self.starts(source)}
        self.accepting = order["id"]
        now = time.monotonic()
        timeout = order.get("timeout")
        deadline = now + timeout + RUN_GRACE_SECONDS if timeout else None
        if checkpoint is not None:
            if self.resume(checkpoint, order, source, changed):
                self.run = Run(order["id"], "incremental", reason, checkpoint, now, deadline)
                return
            reason = note("the checkpoint before `{section}` was gone", section=checkpoint.section)
        pid = os.fork()
        if pid == 0:
            self.selector.close()
            self.listener.close()
            self.control.close()
            run_whole(self.lecture, self.out, self.socket_path, order, source, self.command)
        self.run = Run(order["id"], "full", reason, None, now, deadline, pid)

    def start_new_process(self, order: dict, reason: Note) -> None:
        """Trace the lecture with `cs336-lectures trace` in a new process (its own process group)."""
        self.retire(self.finished.checkpoints if self.finished else [])
        self.finished, self.no_state_reason = None, reason  # what it did to files is not known here
        timeout = order.get("timeout")
        command = [sys.executable, "-m", "cs336_lectures", "trace", str(self.lecture), "-o", str(self.out), "--quiet"]
        if order.get("max_steps"):
            command += ["--max-steps", str(order["max_steps"])]
        if timeout:
            command += ["--timeout", f"{timeout:g}"]
        (self.out / f"{self.lecture.stem}.json").unlink(missing_ok=True)
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, process_group=0)
        now = time.monotonic()
        self.run = Run(order["id"], "full", reason, None, now, now + timeout + RUN_GRACE_SECONDS if timeout else None,
                       process.pid, process=process)

    def on_new_process_end(self, run: Run) -> None:
        self.run = None
        try:
            trace = json.loads((self.out / f"{self.lecture.stem}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.reply({"id": run.id, "state": "error", "mode": run.mode,
                        "message": f"the tracer exited with status {run.process.returncode} and wrote no trace"})
            return
        header = trace["header"]
        self.reply({"id": run.id, "state": "ok" if header.get("status") == "ok" else "error", "mode": run.mode,
                    "elapsed_s": round(time.monotonic() - run.started, 3), "status": header.get("status"),
                    "message": header.get("message"), "modules": [], "steps": len(trace["steps"]), "sections": None,
                    "unsafe": None, "reason": str(run.reason), "reason_note": run.reason.to_json()})

    def outline(self, source: str) -> edits.Outline | None:
        """edits.outline, remembered for the sources checkpoints hold; None if it does not parse."""
        if source not in self.outlines:
            try:
                self.outlines[source] = edits.outline(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self.outlines[source] = None
        return self.outlines[source]

    def starts(self, source: str) -> list[int]:
        outline = self.outline(source)
        if outline is None:
            return []
        return sorted({*(definition.first for definition in outline.functions.values()),
                       *(statement.first for statement in outline.statements)})

    def plan(self, source: str, forced: Note | None) -> tuple[Checkpoint | None, list[dict], Note | None]:
        """The checkpoint to resume from, the functions to swap, and why it is not a later one; or
        (None, [], why the whole lecture runs).

        The rule (DEVELOPERS.md, "Which checkpoint"): a checkpoint is usable when no name the edit
        touched is within reach of the code that ran before it, nothing it reached looks names up
        at run time, and the run had done nothing to files or processes before it that a resumed
        run would meet changed."""
        if forced:
            return None, [], forced
        finished = self.finished
        if finished is None:
            return None, [], self.no_state_reason
        new = self.outline(source)
        if new is None:
            return None, [], note("the lecture does not parse")
        earlier: Note | None = None  # why a checkpoint after the edited code could not be used
        for checkpoint in reversed(finished.checkpoints):
            edit = edits.compare(self.outline(checkpoint.source), new)
            if edit.unsafe is not None:
                return None, [], edit.unsafe
            if any(finished.first_step.get(name, sys.maxsize) < checkpoint.steps for name in edit.changed):
                continue  # changed code ran before it: the edit's own section or an earlier one
            refusal = self.refusal(checkpoint, edit.changed)
            if refusal is None:
                earlier = earlier or self.stopped_before(checkpoint, edit.changed)
                return checkpoint, [_describe_change(name, new) for name in sorted(edit.changed)], earlier
            earlier = earlier or note("{reason}, before `{section}`", reason=refusal, section=checkpoint.section)
        if earlier is not None:
            return None, [], earlier
        if not finished.checkpoints:
            if finished.unsafe is not None:
                return None, [], note("no checkpoint: {reason}", reason=finished.unsafe)
            if not finished.sections:
                return None, [], note("{entry}() calls no top-level function of the lecture", entry=edits.ENTRY)
            return None, [], note("no checkpoint was kept")
        return None, [], note("the edit changes code that ran before the first section")

    def refusal(self, checkpoint: Checkpoint, changed: frozenset[str]) -> Note | None:
        """Why resuming from `checkpoint` could show what a fresh run of the edit would not, or None
        (given that no changed function ran traced before it)."""
        finished = self.finished
        old = self.outline(checkpoint.source)
        if changed:
            ran = {name for name, step in finished.first_step.items() if step < checkpoint.steps}
            ran.discard(edits.ENTRY)  # main()'s part before the checkpoint is read line by line
            reach = old.reach(old.at_import() | old.entry_names_before(checkpoint.line) | ran)
            touched = sorted(changed & reach)
            if touched:
                return note("`{name}` changed, and code that ran earlier refers to it", name=touched[0])
            reflective = sorted(reach & edits.REFLECTIVE)
            if reflective:
                return note("code that ran earlier looks names up at run time (`{name}`)", name=reflective[0])
        return first_hazard(finished.hazards, checkpoint.steps)

    def stopped_before(self, checkpoint: Checkpoint, changed: frozenset[str]) -> Note | None:
        """When checkpoints stopped between `checkpoint` and the section the edit first affects: why."""
        finished = self.finished
        if finished.unsafe is None or any(kept.index > checkpoint.index for kept in finished.checkpoints):
            return None
        first = min((finished.first_step.get(name, sys.maxsize) for name in changed), default=sys.maxsize)
        later = [section for section in finished.reached if checkpoint.steps < section["steps"] <= first]
        return finished.unsafe if later else None

    def resume(self, checkpoint: Checkpoint, order: dict, source: str, changed: list[dict]) -> bool:
        try:
            resume: ResumeOrder = {"op": "resume", "id": order["id"], "source": source, "changed": changed,
                                         "starts": order["starts"], "max_steps": order.get("max_steps"),
                                         "timeout": order.get("timeout"),
                                         "early": self._next_checkpoint(checkpoint) is not None}
            send(checkpoint.connection, resume)
            return True
        except (OSError, AttributeError):  # the checkpoint died: drop it and every later one
            self.retire([kept for kept in self.finished.checkpoints if kept.steps >= checkpoint.steps])
            self.finished.checkpoints = [kept for kept in self.finished.checkpoints if kept.steps < checkpoint.steps]
            return False

    def _next_checkpoint(self, checkpoint: Checkpoint) -> Checkpoint | None:
        """The last good run's checkpoint of the section after `checkpoint`'s, if it took one."""
        later = [kept for kept in self.finished.checkpoints if kept.index == checkpoint.index + 1] if self.finished else []
        return later[0] if later else None

    def on_done(self, message: dict) -> None:
        run, self.run = self.run, None
        elapsed = time.monotonic() - run.started
        self.collect_hellos([entry["pid"] for entry in message.get("checkpoints", [])])
        checkpoints = [Checkpoint(**entry, source=message["source"],
                                  connection=self.hellos.pop(entry["pid"], (None,))[0])
                       for entry in message.get("checkpoints", [])]
        ok = message.get("status") == "ok"
        unsafe = maybe_note(message.get("unsafe"))
        reply = {"id": run.id, "state": "ok" if ok else "error", "mode": run.mode, "elapsed_s": round(elapsed, 3),
                 "status": message.get("status"), "message": message.get("message"),
                 "modules": message.get("modules", []), "steps": message.get("steps"),
                 "sections": message.get("sections"), "unsafe": str(unsafe) if unsafe else None}
        if run.reason is not None:  # a resumed run's says why it resumed earlier than the edit
            reply["reason"], reply["reason_note"] = str(run.reason), run.reason.to_json()
        if run.mode == "incremental":
            reply["section"] = run.resumed.section
            reply["reused"] = run.resumed.index
        if ok:
            old = self.finished.checkpoints if self.finished is not None else []
            kept = [checkpoint for checkpoint in old if run.resumed is not None and checkpoint.steps <= run.resumed.steps]
            self.retire([checkpoint for checkpoint in old if checkpoint not in kept])
            self.finished = LastGoodRun(message["first_step"], kept + checkpoints, unsafe,
                                     message.get("sections") or 0, message.get("reached", []),
                                     message.get("hazards", []))
            held = {checkpoint.source for checkpoint in self.finished.checkpoints}
            self.outlines = {source: outline for source, outline in self.outlines.items() if source in held}
        else:  # a failed run's checkpoints go; the last good run's stay, and stay valid
            self.retire(checkpoints)
            if self.finished is None:
                self.no_state_reason = note("the previous run failed")
        self.kill_run(run)
        self.accepting = None
        self.reply(reply)

    def collect_hellos(self, pids: list[int]) -> None:
        """Wait (briefly) for the hellos of checkpoints a run reported: they were sent before its
        report, on other connections, and may not have been read yet."""
        deadline = time.monotonic() + CONNECT_WAIT_SECONDS
        while any(pid not in self.hellos for pid in pids) and time.monotonic() < deadline:
            self.poll(0.05, orders=False)

    def retire(self, checkpoints: list[Checkpoint]) -> None:
        for checkpoint in checkpoints:
            kill_group(checkpoint.pid)
            if checkpoint.connection is not None:
                checkpoint.connection.close()

    def check_run(self) -> None:
        """Reap children; notice a run that died without a word, or ran past its deadline; between
        runs, end what earlier runs left behind."""
        reap_children()
        run = self.run
        if run is None:
            self.sweep()
            return
        now = time.monotonic()
        if run.process is not None and run.process.poll() is not None:
            self.on_new_process_end(run)
        elif run.deadline is not None and now > run.deadline:
            self.cancel()
            self.reply({"id": run.id, "state": "error", "mode": run.mode,
                        "message": "the run did not end within its time limit and was stopped"})
        elif run.pid and not alive(run.pid):
            # Its report may still be on the way: give it a moment before calling it lost.
            run.dead_since = run.dead_since or now
            if now - run.dead_since > 1.0:
                self.run = None
                self.kill_run(run)
                self.reply({"id": run.id, "state": "error", "mode": run.mode,
                            "message": "the run ended without writing a trace (it was killed or crashed)"})

    def cancel(self) -> None:
        run, self.run = self.run, None
        self.accepting = None
        if run is not None:
            self.kill_run(run)

    def kill_run(self, run: Run) -> None:
        """Kill the run's process group (what the lecture started too), and its checkpoints unless kept."""
        if run.pid:
            kill_group(run.pid)
        kept = {checkpoint.pid for checkpoint in self.finished.checkpoints} if self.finished else set()
        for pid, (connection, hello) in list(self.hellos.items()):
            if hello["run"] == run.id and pid not in kept:
                kill_group(pid)
                connection.close()
                del self.hellos[pid]

    def reply(self, message: dict) -> None:
        try:
            send(self.control, message)
        except OSError:
            self.stopping = True

    def sweep(self, everything: bool = False) -> None:
        """Kill the kernel's children other than the checkpoints it keeps. Between runs these can
        only be what a run left outside its process group (a lecture's process that called setsid):
        when its parent ended it came back to the kernel, the subreaper of all its descendants."""
        kept = set() if everything else {*self.hellos, *(checkpoint.pid for checkpoint in
                                                        (self.finished.checkpoints if self.finished else []))}
        for pid in child_processes() or []:
            if pid not in kept:
                kill_group(pid)  # a process that called setsid leads its own group
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def shut_down(self) -> None:
        if self.run is not None:
            self.kill_run(self.run)
        for checkpoint in self.finished.checkpoints if self.finished else []:
            kill_group(checkpoint.pid)
        for pid in self.hellos:
            kill_group(pid)
        self.sweep(everything=True)
        reap_children()
        self.listener.close()


# Names with which a lecture reads what differs between a kernel's run and a new process: modules
# the kernel imported, the threads it runs, the process group and session it made.
# Each message the kernel hears, by its "op" (from the server) or "role" (from its runs and checkpoints).
ORDER_HANDLERS: dict[str, Callable[[Kernel, dict], None]] = {
    "stop": Kernel.on_stop, "cancel": Kernel.on_cancel, "run": Kernel.on_run,
}
WORKER_HANDLERS: dict[str, Callable[[Kernel, socket.socket, dict], None]] = {
    "checkpoint": Kernel.on_checkpoint_hello, "run": Kernel.on_run_hello, "done": Kernel.on_run_done,
    "early": Kernel.on_early_view,
}


_PROCESS_LOOKS = (("sys", "modules"), ("threading", "active_count"), ("threading", "enumerate"),
                  ("os", "getpgrp"), ("os", "getpgid"), ("os", "getsid"), ("os", "tcgetpgrp"))


def _looks_at_its_process(outline: edits.Outline | None) -> str | None:
    """How the lecture's code looks at its own process (`sys.modules`...), or None."""
    if outline is None:
        return None
    names = outline.reach(outline.at_import() | {edits.ENTRY})
    return next((f"{module}.{name}" for module, name in _PROCESS_LOOKS if module in names and name in names), None)


def _describe_change(name: str, new: edits.Outline) -> dict:
    """What a resumed run needs to know of a changed function (no text: it was removed)."""
    definition = new.functions.get(name)
    if definition is None:
        return {"name": name}
    return {"name": name, "first": definition.first, "text": definition.text, "docstring": definition.docstring}


def _prewarm() -> None:
    for name in PREWARM:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a missing library is the lecture's problem, not the kernel's
            pass
    # The trace header's platform runs `uname -p` once per process: here, not as a program the run ran.
    platform.platform()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cs336_lectures.runtime.kernel.process",
                                     description="the warm kernel of one lecture (started by cs336-lectures serve)")
    parser.add_argument("lecture")
    parser.add_argument("--folder", required=True, help="the kernel's folder: traces go to out/, its socket is here")
    parser.add_argument("--fd", type=int, required=True, help="file descriptor of the socket to the server")
    parser.add_argument("--command", default="", help="the header's command field, as JSON")
    args = parser.parse_args(argv)
    try:  # orphaned descendants of runs come back to us, so they can be reaped and killed
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops us; Ctrl-C reaches the whole terminal group
    faulthandler.register(STACKS_SIGNAL, all_threads=True)  # where a stuck kernel is stuck, on stderr
    _prewarm()
    # What was imported lives as long as the kernel: the cyclic collector of the kernel and of
    # every fork stops walking it (a full collection over torch took ~100 ms mid-edit).
    gc.freeze()
    set_fork_safe_openmp(openmp_is_fork_safe())
    control = socket.socket(fileno=args.fd)
    kernel = Kernel(Path(args.lecture), Path(args.folder), control, json.loads(args.command) if args.command else [])
    send(control, {"ready": True, "pid": os.getpid()})
    kernel.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
