"""The local server: the viewer and its traces over HTTP, plus live re-tracing and editing.

`cs336-lectures serve lectures/lecture_01.py` serves the site (see site.py) from memory and
disk, traces the lectures that have no fresh trace, watches their files (watch.py), and
whenever one changes re-runs what the edit affects in the lecture's warm kernel (kernel.py;
a tracer subprocess where fork is missing); open viewers hear about it over Server-Sent
Events and reload. The viewer can also edit a lecture (POST /api/source) — so this server runs code,
and guards itself the way Jupyter does:

- it binds 127.0.0.1 unless told otherwise;
- anything that writes or runs code needs the random token printed at start-up;
- a request whose Host is not the server's own (DNS rebinding) is refused, and so is one
  whose Origin is foreign (a browser sends Origin with any request another site's page makes);
- paths are resolved and must stay inside the served folders; only the lectures named on
  the command line can be read as source, edited or re-traced.

A re-trace writes into a temporary folder and replaces the served trace only when it
succeeded, so a syntax error or an exception leaves the last good trace in place.

    cs336-lectures serve lectures/lecture_01.py --port 8336
"""

from __future__ import annotations

import argparse
import errno
import hmac
import ipaddress
import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import webbrowser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import parse_qs, unquote, urlsplit

from cs336_lectures.runtime.atomic import write_bytes_atomically
from cs336_lectures.runtime.catalog import LANGUAGES, catalog_path
from cs336_lectures.runtime.editing import SourceError, read_source, save_source
from cs336_lectures.runtime.kernel import EARLY_SUFFIX
from cs336_lectures.runtime.kernel_client import KernelProcess, KernelUnavailable, OutputTail, forking_supported
from cs336_lectures.runtime.notes import Note, count_of, maybe_note, note
from cs336_lectures.runtime.site import (CONTENT_SECURITY_POLICY, DEFAULT_TRACES, FAILED_SUFFIX, INDEX_NAME, VIEWER_DIR,
                                         build_index)
from cs336_lectures.runtime.watch import FileWatcher

TOKEN_HEADER = "X-CS336-Token"
# On every response, so the viewer can tell this server from a static host without asking a
# static host for /api/info (a 404 each page load, logged as an error by browsers).
SERVER_HEADER = "X-CS336-Server"
TRACER_COMMAND = [sys.executable, "-m", "cs336_lectures", "trace"]
# The tracer's watchdog and the server's waits cannot count further (epoll's limit is 2**31 ms).
MAX_TIMEOUT_SECONDS = 1_000_000
SSE_KEEPALIVE_SECONDS = 15.0
MAX_SOURCE_BYTES = 5 * 1024 * 1024
# A file name longer than this cannot exist (NAME_MAX on Linux and macOS); refused before the
# file system says "File name too long".
MAX_NAME_BYTES = 255
# Seconds one read or write on a connection may wait: a client that stops sending in the
# middle of its headers or body, or stops reading an event stream, frees its thread after this.
CONNECTION_TIMEOUT_SECONDS = 60.0
# Under the traces folder: a resumed run's trace up to the section after the edit, while the
# sections after it still run (not listed in the index; removed when the run ends).
EARLY_DIR = "early"
ERROR_TAIL_LINES = 30
# The tracer enforces --timeout itself; this only catches a tracer that hangs regardless.
TRACER_GRACE_SECONDS = 60.0
DEFAULT_TRACER_LIMIT_SECONDS = 3600.0
DEFAULT_MAX_STEPS = 500_000
DEFAULT_TIMEOUT_SECONDS = 300.0

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}


class Refused(Exception):
    """A request the server will not serve; carries the HTTP status and a one-line reason."""

    def __init__(self, status: HTTPStatus, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def contained_file(root: Path, relative: str) -> Path:
    """The file `relative` names inside `root`, refusing anything that could leave it.

    contained_file(VIEWER_DIR, "js/main.js") is viewer/js/main.js, resolved;
    "../pyproject.toml", or a symlink to a file outside, raises Refused (403).
    """
    parts = relative.split("/")
    if any(part in ("..", ".") or "\\" in part or "\0" in part for part in parts):
        raise Refused(HTTPStatus.FORBIDDEN, "path not allowed")
    if any(part.startswith(".") for part in parts if part):
        raise Refused(HTTPStatus.NOT_FOUND, "not found")  # hidden files, e.g. a re-trace in progress
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in parts):
        raise Refused(HTTPStatus.NOT_FOUND, f"not found (a name in the path is longer than {MAX_NAME_BYTES} bytes)")
    try:
        root = root.resolve()
        path = (root / "/".join(part for part in parts if part)).resolve()
        if path != root and root not in path.parents:
            raise Refused(HTTPStatus.FORBIDDEN, "path leaves the served folder")
        if not path.is_file():
            raise Refused(HTTPStatus.NOT_FOUND, "not found")
    except (OSError, RuntimeError) as error:  # e.g. a symlink loop; Python 3.11 reports some as RuntimeError
        raise Refused(HTTPStatus.NOT_FOUND, f"not found ({getattr(error, 'strerror', None) or error})") from None
    return path


def tail(text: str, lines: int = ERROR_TAIL_LINES) -> str:
    """The last `lines` lines of `text`: where a traceback or a tracer's stderr says what went wrong."""
    return "\n".join(text.strip().splitlines()[-lines:])


class EventHub:
    """Fans re-trace events out to every open /api/events stream; remembers the last per trace."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: set[queue.Queue] = set()
        self.latest: dict[str, dict] = {}

    def publish(self, event: dict) -> None:
        with self._lock:
            self.latest[event["trace"]] = event
            for listener in self._listeners:
                listener.put(event)

    def subscribe(self) -> tuple[queue.Queue, list[dict]]:
        """A new listener queue, plus the latest event of each trace (for a viewer just arriving)."""
        listener: queue.Queue = queue.Queue()
        with self._lock:
            self._listeners.add(listener)
            return listener, list(self.latest.values())

    def unsubscribe(self, listener: queue.Queue) -> None:
        with self._lock:
            self._listeners.discard(listener)

    def close(self) -> None:
        with self._lock:
            for listener in self._listeners:
                listener.put(None)


class Lecture:
    """A lecture file registered on the command line, and its re-trace state."""

    def __init__(self, path: Path):
        self.path = path.resolve()
        self.given = str(path)
        self.name = path.stem
        self.lock = threading.Lock()
        self.running = False
        self.pending = False
        self.pending_full: Note | None = None  # why the next run must be a whole one (an imported module changed...)
        self.generation = 0
        self.seen = self.stamp()

    def sources(self) -> list[Path]:
        """The files its trace is made from: the lecture, then its translation catalogs (which may not exist)."""
        return [self.path, *(catalog_path(self.path, language) for language in LANGUAGES)]

    def stamp(self) -> tuple | None:
        """(mtime, size) of each of its sources (None for a missing catalog), so that a translator's
        save re-traces too; None while the lecture itself is missing."""
        stamps = []
        for path in self.sources():
            try:
                stat = path.stat()
            except OSError:
                if path == self.path:
                    return None
                stamps.append(None)
                continue
            stamps.append((stat.st_mtime_ns, stat.st_size))
        return tuple(stamps)


class Retracer:
    """Runs `cs336-lectures trace` for one lecture at a time; requests while one runs coalesce."""

    def __init__(self, traces_dir: Path, hub: EventHub, tracer_command: list[str],
                 max_steps: int | None, timeout: float | None, log: Callable[[str], None] = print):
        self.traces_dir = traces_dir
        self.hub = hub
        self.tracer_command = tracer_command
        self.max_steps = max_steps
        self.timeout = timeout
        self.log = log
        self.closed = threading.Event()
        self._processes: set[subprocess.Popen] = set()
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self.use_kernels = forking_supported()
        self._kernels: dict[str, KernelProcess] = {}
        self._running_process: dict[str, subprocess.Popen] = {}  # lecture name -> its tracer subprocess
        self.on_modules: Callable[[Lecture, list[str]], None] = lambda lecture, modules: None

    def request(self, lecture: Lecture, *, full: Note | None = None, supersede: bool = False) -> None:
        """Queue a re-trace; if one is running, exactly one more follows it. `supersede` (an edit)
        cancels the running one first; `full` says why the next run must be a whole one."""
        with lecture.lock:
            if full is not None:
                lecture.pending_full = full
            if lecture.running:
                lecture.pending = True
                if supersede:
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
            self._kernel(lecture).run(max_steps=self.max_steps, timeout=self.timeout)
        except KernelUnavailable as error:
            self.log(f"{lecture.name}: {error}")
            self._drop_kernel(lecture)
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
                self.hub.publish({"trace": lecture.name, "generation": generation, **outcome})
                self.log(f"{lecture.name}: {outcome['message']}" if outcome["state"] == "ok"
                         else f"{lecture.name}: failed: {outcome['message']}")
                with lecture.lock:
                    if not lecture.pending:
                        return
        finally:
            with lecture.lock:
                lecture.running = False
            with self._lock:
                self._threads.discard(threading.current_thread())

    def command(self, lecture: Lecture, out: Path) -> list[str]:
        command = [*self.tracer_command, lecture.given, "-o", str(out), "--quiet"]
        if self.max_steps is not None:
            command += ["--max-steps", str(self.max_steps)]
        if self.timeout is not None:
            command += ["--timeout", f"{self.timeout:g}"]
        return command

    def retrace(self, lecture: Lecture, full: Note | None = None) -> dict | None:
        """Run the lecture (in its warm kernel where the platform allows) and install the result
        if it is good (or nothing better exists); None when a newer edit cancelled the run.

        Returns the outcome part of the event: state "ok" or "error", a message, and for a failed
        run `installed: True` when its trace replaced one that was no better.
        """
        self.traces_dir.mkdir(parents=True, exist_ok=True)
        if self.use_kernels and not self.closed.is_set():
            try:
                return self._retrace_in_kernel(lecture, full)
            except KernelUnavailable as error:
                self.log(f"{lecture.name}: {error}; tracing in a new process instead")
                self._drop_kernel(lecture)
        return self._retrace_in_subprocess(lecture)

    def _kernel(self, lecture: Lecture) -> KernelProcess:
        with self._lock:
            kernel = self._kernels.get(lecture.name)
            if kernel is None:
                kernel = self._kernels[lecture.name] = KernelProcess(lecture.path, [], log=self.log)
                kernel.command = self.command(lecture, kernel.out)
        return kernel

    def _drop_kernel(self, lecture: Lecture) -> None:
        with self._lock:
            kernel = self._kernels.pop(lecture.name, None)
        if kernel is not None:
            kernel.close()

    def _retrace_in_kernel(self, lecture: Lecture, full: Note | None) -> dict | None:
        kernel = self._kernel(lecture)
        try:
            reply = kernel.run(max_steps=self.max_steps, timeout=self.timeout, full=full,
                               on_early=lambda message: self._show_early(lecture, kernel, message))
        finally:
            early_trace(self.traces_dir, lecture.name).unlink(missing_ok=True)
        if reply is None:
            return None
        self.on_modules(lecture, reply.get("modules") or [])
        produced = kernel.out / f"{lecture.name}.json"
        self._install_assets(kernel.out)  # content-addressed: harmless, and a later resumed run may need them
        trace = _read_trace(produced) if reply.get("status") is not None else None
        if trace is None:
            reason = reply.get("message") or "the run wrote no trace"
            output = kernel.output_tail()
            return {"state": "error", "message": f"{reason}\n{output}".strip()}
        if reply["state"] == "ok":
            self._install(kernel.out, produced)
            (self.traces_dir / f"{lecture.name}{FAILED_SUFFIX}").unlink(missing_ok=True)
            summary = run_summary(reply)
            return {"state": "ok", "message": str(summary), "note": summary.to_json(), "mode": reply["mode"]}
        return self._install_failure(lecture, kernel.out, produced, _failure_message(trace, kernel.output_tail(), 2))

    def _show_early(self, lecture: Lecture, kernel: KernelProcess, message: dict) -> None:
        """The edited section has run again and the sections after it are running: let viewers
        show the trace so far (the whole trace follows)."""
        produced = kernel.out / f"{lecture.name}{EARLY_SUFFIX}"
        if not produced.is_file():
            return
        self._install_assets(kernel.out)
        served = early_trace(self.traces_dir, lecture.name)
        served.parent.mkdir(exist_ok=True)
        _move(produced, served)
        with lecture.lock:
            generation = lecture.generation
        summary = early_summary(message)
        self.hub.publish({"trace": lecture.name, "state": "early", "generation": generation,
                          "file": served.relative_to(self.traces_dir).as_posix(), "until": message.get("until", 0),
                          "message": str(summary), "note": summary.to_json()})

    def _cancel(self, lecture: Lecture) -> None:
        """Stop the run in progress for `lecture` (called with lecture.lock held)."""
        with self._lock:
            kernel = self._kernels.get(lecture.name)
            process = self._running_process.get(lecture.name)
        if kernel is not None:
            kernel.cancel()
        if process is not None:
            _kill_process_group(process)

    def _retrace_in_subprocess(self, lecture: Lecture) -> dict | None:
        staging = Path(tempfile.mkdtemp(prefix=f".retrace-{lecture.name}.", dir=self.traces_dir))
        try:
            started = time.monotonic()
            returncode, stderr = self._run(self.command(lecture, staging), lecture)
            if returncode is None:
                return None
            produced = staging / f"{lecture.name}.json"
            trace = _read_trace(produced)
            if trace is None:
                reason = tail(stderr) or f"the tracer exited with status {returncode} and wrote no trace"
                return {"state": "error", "message": reason}
            header = trace["header"]
            if returncode == 0 and header.get("status") == "ok":
                self._install(staging, produced)
                (self.traces_dir / f"{lecture.name}{FAILED_SUFFIX}").unlink(missing_ok=True)
                summary = note("traced {steps} in {seconds} s", steps=count_of(header.get("num_steps", 0), "step", "steps"),
                               seconds=f"{time.monotonic() - started:.1f}")
                return {"state": "ok", "message": str(summary), "note": summary.to_json()}
            return self._install_failure(lecture, staging, produced, _failure_message(trace, stderr, returncode))
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _run(self, command: list[str], lecture: Lecture) -> tuple[int | None, str]:
        """Run the tracer in its own session, its output read with a bound; (None, "") when cancelled."""
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
        output = [OutputTail(process.stdout), OutputTail(process.stderr)]
        with self._lock:
            self._processes.add(process)
            self._running_process[lecture.name] = process
        try:
            limit = (self.timeout or DEFAULT_TRACER_LIMIT_SECONDS) + TRACER_GRACE_SECONDS
            note = ""
            try:
                process.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                note = f"\nthe tracer did not finish within {limit:.0f} s and was stopped"
            _kill_process_group(process)  # whatever the lecture started dies with the run
            for tail in output:
                tail.thread.join(timeout=5)
            if process.returncode == -signal.SIGKILL and not note:
                return None, ""
            stdout, stderr = (tail.text() for tail in output)
            return process.returncode, (stderr or stdout) + note
        finally:
            with self._lock:
                self._processes.discard(process)
                self._running_process.pop(lecture.name, None)

    def _has_good_trace(self, lecture: Lecture) -> bool:
        trace = _read_trace(self.traces_dir / f"{lecture.name}.json")
        return trace is not None and trace["header"].get("status") == "ok"

    def _install(self, staging: Path, produced: Path, name: str | None = None) -> None:
        """Assets first (content-addressed, so overwriting is harmless), then the trace (as `name`)."""
        self._install_assets(staging)
        _move(produced, self.traces_dir / (name or produced.name))

    def _install_failure(self, lecture: Lecture, staging: Path, produced: Path, message: str) -> dict:
        """A failed run's outcome: its trace replaces one that is no better, else it is kept beside
        the good trace as NAME.failed.json (out of the index) so the viewer can open it at its error."""
        outcome = {"state": "error", "message": message}
        if not self._has_good_trace(lecture):
            self._install(staging, produced)
            outcome["installed"] = True
            outcome["failed_trace"] = lecture.name
        else:
            self._install(staging, produced, f"{lecture.name}{FAILED_SUFFIX}")
            outcome["failed_trace"] = f"{lecture.name}{FAILED_SUFFIX}".removesuffix(".json")
        return outcome

    def _install_assets(self, staging: Path) -> None:
        assets = staging / "assets"
        if assets.is_dir():
            (self.traces_dir / "assets").mkdir(exist_ok=True)
            for asset in assets.iterdir():
                _move(asset, self.traces_dir / "assets" / asset.name)

    def close(self) -> None:
        """Kill every run and kernel (and what they started), remove their folders, end the threads."""
        self.closed.set()
        with self._lock:
            processes = list(self._processes)
            threads = list(self._threads)
            kernels = list(self._kernels.values())
            self._kernels.clear()
        for process in processes:
            _kill_process_group(process)
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


def early_trace(traces_dir: Path, name: str) -> Path:
    """Where the server serves the early view of lecture `name`'s run in progress."""
    return traces_dir / EARLY_DIR / f"{name}.json"


def _move(source: Path, target: Path) -> None:
    """Rename, or copy atomically where the two are on different file systems."""
    try:
        os.replace(source, target)
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
        write_bytes_atomically(target, source.read_bytes())
        source.unlink()


def _kill_process_group(process: subprocess.Popen) -> None:
    """SIGKILL to the process's group (it leads one: start_new_session), then reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _read_trace(path: Path) -> dict | None:
    """The trace at `path` as parsed JSON, or None unless it is readable and has a header."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("header"), dict) else None


def _mark_failing(index: dict, latest: dict[str, dict], served: Iterable[str] = ()) -> dict:
    """Mark the lectures whose file on disk currently fails to trace (their last re-trace failed
    while an older good trace stays), with the first line of why. A served lecture that has no
    trace at all because its only runs failed before writing one (a syntax error) is listed too."""
    listed = {entry["name"] for entry in index["traces"]}
    for name in served:
        event = latest.get(name)
        if name not in listed and event and event.get("state") == "error":
            index["traces"].append({"name": name, "file": f"{name}.json", "title": name, "num_steps": 0,
                                    "created": None, "status": "error"})
    for entry in index["traces"]:
        event = latest.get(entry["name"])
        if event and event.get("state") == "error" and not event.get("installed"):
            entry["failing"] = str(event.get("message") or "the re-trace failed").splitlines()[0]
    return index


def _failure_message(trace: dict, stderr: str, returncode: int) -> str:
    """Why a traced run is not good: the header's message and the traceback of the error step."""
    header = trace["header"]
    lines = [header.get("message") or f"the lecture stopped with status {header.get('status')}"]
    try:
        steps = trace.get("steps") or []
        extras = steps[-1][2] if steps and len(steps[-1]) > 2 else {}
        error = extras.get("x") if isinstance(extras, dict) else None
        if error and error.get("traceback"):
            lines.append(tail(error["traceback"]))
    except (IndexError, AttributeError):  # a malformed trace: the header's message alone
        pass
    if returncode not in (0, 1) and stderr.strip():
        lines.append(tail(stderr))
    return "\n".join(lines)


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
                if changed:
                    # A catalog feeds every text() of the run: only a whole run shows its edit everywhere.
                    catalogs = touched - {Path(os.path.realpath(lecture.path))}
                    full = note("the {language} translation changed", language=min(catalogs).parent.name) if catalogs else None
                    self.retracer.request(lecture, full=full, supersede=True)
        for path in paths:
            for name in sorted(self.users.get(path, ())):
                shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
                self.retracer.request(self.lectures[name], full=note("{module} changed", module=shown), supersede=True)


class LectureServer(ThreadingHTTPServer):
    """The HTTP server and everything it serves; `start()` runs it in a thread (tests), `serve_forever()` in this one."""

    daemon_threads = True

    def __init__(self, lectures: list[Path], traces_dir: Path, host: str = "127.0.0.1", port: int = 8336,
                 viewer_dir: Path = VIEWER_DIR, max_steps: int | None = None, timeout: float | None = None,
                 token: str | None = None, log: Callable[[str], None] = print):
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), RequestHandler)
        self.host = host
        self.port = self.server_address[1]
        self.viewer_dir = viewer_dir.resolve()
        self.traces_dir = traces_dir.resolve()
        self.token = token or secrets.token_urlsafe(32)
        self.log = log
        self.lectures: dict[str, Lecture] = {}
        for path in lectures:
            lecture = Lecture(path)
            if lecture.name in self.lectures and self.lectures[lecture.name].path == lecture.path:
                continue  # the same file named twice
            if lecture.name in self.lectures:
                raise ValueError(f"two lectures would both write the trace {lecture.name}.json: "
                                 f"{self.lectures[lecture.name].given} and {path}")
            self.lectures[lecture.name] = lecture
        self.hub = EventHub()
        self.retracer = Retracer(self.traces_dir, self.hub, TRACER_COMMAND, max_steps, timeout, log)
        self.watcher = LectureWatcher(self.lectures, self.retracer)
        self.allowed_hosts = {f"{name}:{self.port}" for name in ("127.0.0.1", "localhost", "[::1]")}
        self.allowed_hosts.add(f"{_url_host(host)}:{self.port}".lower())
        self.allowed_origins = {f"http://{allowed}" for allowed in self.allowed_hosts}
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else _url_host(self.host)
        return f"http://{host}:{self.port}/?token={self.token}"

    def begin(self) -> None:
        """Trace the lectures whose trace is missing or older than the file, then watch them all."""
        for lecture in self.lectures.values():
            early_trace(self.traces_dir, lecture.name).unlink(missing_ok=True)  # a killed server's
            trace = self.traces_dir / f"{lecture.name}.json"
            try:
                newest = max(path.stat().st_mtime for path in lecture.sources() if path == lecture.path or path.exists())
                stale = trace.stat().st_mtime < newest
            except FileNotFoundError:
                stale = True
            if stale:
                self.retracer.request(lecture)
            else:
                self.retracer.warm(lecture)
        self.watcher.start()

    def start(self) -> "LectureServer":
        self.begin()
        self._thread = threading.Thread(target=self.serve_forever, name="http", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop watching, end the event streams, kill running tracers, stop serving."""
        self.watcher.stop()
        self.hub.close()
        self.retracer.close()
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=5)
        self.server_close()

    def is_own_host(self, host: str) -> bool:
        """Our names with our port, or any IP address with our port (how other machines reach
        `--host 0.0.0.0`): DNS rebinding needs a host name, so an address is never foreign."""
        if host in self.allowed_hosts:
            return True
        name, _, port = host.rpartition(":")
        try:
            ipaddress.ip_address(name.removeprefix("[").removesuffix("]"))
        except ValueError:
            return False
        return port == str(self.port)

    def check_token(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def lecture_path_for_display(self, lecture: Lecture) -> str:
        try:
            return str(lecture.path.relative_to(Path.cwd().resolve()))
        except ValueError:
            return str(lecture.path)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class RequestHandler(BaseHTTPRequestHandler):
    server: LectureServer
    server_version = "cs336-lectures"
    protocol_version = "HTTP/1.1"
    timeout = CONNECTION_TIMEOUT_SECONDS  # socketserver applies it to every read and write

    # --- dispatch -------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._handle(write=False, head=False)

    def do_HEAD(self) -> None:
        self._handle(write=False, head=True)

    def do_POST(self) -> None:
        self._handle(write=True, head=False)

    def _handle(self, write: bool, head: bool) -> None:
        try:
            self._check_host()
            self._check_origin()
            url = urlsplit(self.path)
            path = unquote(url.path)
            query = parse_qs(url.query)
            if write:
                self._check_token()
                self._post(path, query)
            elif path == "/api/events":
                self._events(head)
            else:
                self._get(path, query, head)
        except Refused as refusal:
            self.close_connection = True  # a refused POST's body was never read
            self._send_json({"error": refusal.reason}, refusal.status, head=head)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _host(self) -> str:
        return (self.headers.get("Host") or "").strip().lower()

    def _check_host(self) -> None:
        host = self._host()
        if not self.server.is_own_host(host):
            raise Refused(HTTPStatus.FORBIDDEN, f"Host {host or '(none)'} is not this server")

    def _check_origin(self) -> None:
        """A page of this server sends its own origin: the Host it asked, or one of our names."""
        origin = self.headers.get("Origin")
        if origin is None:
            return
        origin = origin.strip().lower()
        if origin not in self.server.allowed_origins and origin != f"http://{self._host()}":
            raise Refused(HTTPStatus.FORBIDDEN, f"Origin {origin} is not this server")

    def _check_token(self) -> None:
        if not self.server.check_token(self.headers.get(TOKEN_HEADER)):
            raise Refused(HTTPStatus.FORBIDDEN, f"missing or wrong {TOKEN_HEADER}: open the URL the server printed")

    def _lecture(self, query: dict) -> Lecture:
        name = (query.get("trace") or [""])[0]
        lecture = self.server.lectures.get(name)
        if lecture is None:
            raise Refused(HTTPStatus.NOT_FOUND, f"no lecture named {name!r} is served for editing")
        return lecture

    # --- GET ------------------------------------------------------------------------------

    def _get(self, path: str, query: dict, head: bool) -> None:
        server = self.server
        if path == "/api/info":
            lectures = {name: server.lecture_path_for_display(lecture) for name, lecture in server.lectures.items()}
            self._send_json({"server": True, "lectures": lectures}, head=head)
        elif path == "/api/source":
            lecture = self._lecture(query)
            try:
                source = read_source(lecture.path)
            except (OSError, SourceError) as error:
                raise Refused(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot read {lecture.given}: {error}") from None
            self._send_json({"path": server.lecture_path_for_display(lecture), "source": source}, head=head)
        elif path.startswith("/api/"):
            raise Refused(HTTPStatus.NOT_FOUND, "no such API")
        elif path == f"/traces/{INDEX_NAME}":
            self._send_json(_mark_failing(build_index(server.traces_dir), server.hub.latest, server.lectures), head=head)
        elif path.startswith("/traces/"):
            self._send_file(contained_file(server.traces_dir, path[len("/traces/"):]), head)
        else:
            relative = path.lstrip("/") or "index.html"
            self._send_file(contained_file(server.viewer_dir, relative), head)

    # --- POST -----------------------------------------------------------------------------

    def _post(self, path: str, query: dict) -> None:
        server = self.server
        if path == "/api/source":
            lecture = self._lecture(query)
            source = self._read_source()
            try:
                self._save(lecture, source)
            except SourceError as error:
                raise Refused(HTTPStatus.BAD_REQUEST, f"cannot save {lecture.given}: {error}") from None
            except OSError as error:
                raise Refused(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot save {lecture.given}: {error}") from None
            server.retracer.request(lecture, supersede=True)
            server.log(f"{lecture.given} saved from the browser")
            self._send_json({"queued": True, "trace": lecture.name}, HTTPStatus.ACCEPTED)
        elif path == "/api/retrace":
            lecture = self._lecture(query)
            server.retracer.request(lecture, full=note("a re-trace was asked for"))
            self._send_json({"queued": True, "trace": lecture.name}, HTTPStatus.ACCEPTED)
        else:
            raise Refused(HTTPStatus.NOT_FOUND, "no such API")

    @staticmethod
    def _save(lecture: Lecture, source: str) -> None:
        """Write the lecture, keeping the versions it replaces as backups (editing.py)."""
        with lecture.lock:  # the watcher must not take this write for an outside change
            save_source(lecture.path, source)
            lecture.seen = lecture.stamp()

    def _read_source(self) -> str:
        given = (self.headers.get("Content-Length") or "").strip()
        if not given:
            raise Refused(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        if not (given.isascii() and given.isdigit()):  # int() would also take "-5", "+5" and "5_0"
            raise Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {given[:40]!r} is not a number of bytes")
        length = int(given)
        if length > MAX_SOURCE_BYTES:
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the source may be at most {MAX_SOURCE_BYTES} bytes")
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            raise Refused(HTTPStatus.REQUEST_TIMEOUT, f"the body did not arrive within {self.timeout:g} s") from None
        if len(raw) < length:
            raise Refused(HTTPStatus.BAD_REQUEST, f"the body ended after {len(raw)} of {length} bytes")
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise Refused(HTTPStatus.BAD_REQUEST, 'expected a JSON body {"source": "..."}') from None
        except RecursionError:
            raise Refused(HTTPStatus.BAD_REQUEST, "the JSON body is nested too deeply") from None
        if not isinstance(body, dict) or not isinstance(body.get("source"), str):
            raise Refused(HTTPStatus.BAD_REQUEST, 'expected a JSON body {"source": "..."}')
        return body["source"]

    # --- Server-Sent Events ---------------------------------------------------------------

    def _events(self, head: bool) -> None:
        """One stream per viewer: the latest state of each trace (marked replay), then live events."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if head:  # the headers a GET would get, and no stream
            return
        hub = self.server.hub
        listener, latest = hub.subscribe()  # `latest` includes anything published before this
        try:
            self.wfile.write(b"retry: 1000\n\n")
            for event in latest:
                self._send_event({**event, "replay": True})
            self.wfile.flush()
            while True:
                try:
                    event = listener.get(timeout=SSE_KEEPALIVE_SECONDS)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    continue
                if event is None:
                    return
                self._send_event(event)
                self.wfile.flush()
        finally:
            hub.unsubscribe(listener)

    def _send_event(self, event: dict) -> None:
        self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")

    # --- responses ------------------------------------------------------------------------

    def _common_headers(self) -> None:
        self.send_header(SERVER_HEADER, "1")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        # Scripts only from this server (never from HTML inside a trace), and no framing of the editor.
        # The static site carries the same policy as a <meta> (site.py), which cannot say frame-ancestors.
        self.send_header("Content-Security-Policy", f"{CONTENT_SECURITY_POLICY}; frame-ancestors 'none'")
        self.send_header("X-Frame-Options", "DENY")

    def _send_json(self, data: object, status: HTTPStatus = HTTPStatus.OK, head: bool = False) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self._common_headers()
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _send_file(self, path: Path, head: bool) -> None:
        try:
            body = path.read_bytes()
        except OSError:
            raise Refused(HTTPStatus.NOT_FOUND, "not found") from None
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", CONTENT_TYPES.get(path.suffix.lower(), "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self._common_headers()
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        """Quiet: the terminal shows re-traces and errors, not every request."""


# --- cs336-lectures serve ---------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `cs336-lectures serve` (cli.py adds them to its subcommand)."""
    parser.add_argument("lectures", nargs="*", metavar="LECTURE.py",
                        help="lectures to trace when stale, watch, re-trace on change and allow editing")
    parser.add_argument("--traces", default=str(DEFAULT_TRACES), metavar="DIR",
                        help=f"folder of traces to serve and write (default: {DEFAULT_TRACES})")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: 127.0.0.1; anything else exposes a server that runs code)")
    parser.add_argument("--port", type=int, default=8336, help="port (default: 8336; 0 picks a free one)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    # Limits by default: an edit that loops forever must end as a failed re-trace in seconds,
    # not fill the memory (a million steps is about half a gigabyte in the tracer).
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, metavar="N",
                        help=f"step limit passed to the tracer on every re-trace (default: {DEFAULT_MAX_STEPS:,})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS, metavar="SECONDS",
                        help=f"time limit passed to the tracer on every re-trace (default: {DEFAULT_TIMEOUT_SECONDS:g})")


def _say(message: str) -> None:
    """One line to the terminal in a single write, so lines from re-trace threads never interleave."""
    sys.stdout.write(f"{message}\n")
    sys.stdout.flush()


def _stop(signum, frame) -> None:
    """SIGTERM stops the server the way Ctrl-C does: running tracers are killed, streams closed."""
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    """`cs336-lectures serve`: serve until Ctrl-C or SIGTERM; returns the exit status."""
    for flag, value in (("--max-steps", args.max_steps), ("--timeout", args.timeout)):
        if value is not None and not value > 0:
            print(f"cs336-lectures: error: {flag} must be positive, not {value}", file=sys.stderr)
            return 2
    if args.timeout is not None and not args.timeout <= MAX_TIMEOUT_SECONDS:
        print(f"cs336-lectures: error: --timeout must be at most {MAX_TIMEOUT_SECONDS:,} seconds, not {args.timeout:g}",
              file=sys.stderr)
        return 2
    missing = [path for path in args.lectures if not Path(path).is_file()]
    if missing:
        print(f"cs336-lectures: error: no such lecture file: {', '.join(missing)}", file=sys.stderr)
        return 2
    if not (VIEWER_DIR / "index.html").is_file():
        print(f"cs336-lectures: error: the viewer is missing ({VIEWER_DIR}/index.html)", file=sys.stderr)
        return 2
    from cs336_lectures.runtime.course_import import refuse_to_replace_course_trace

    for path in args.lectures:  # a clone of the Stanford course keeps its published traces in var/traces
        refusal = refuse_to_replace_course_trace(Path(args.traces) / f"{Path(path).stem}.json", "--traces")
        if refusal:
            print(f"cs336-lectures: error: {refusal}", file=sys.stderr)
            return 2
    try:
        server = LectureServer([Path(path) for path in args.lectures], Path(args.traces), host=args.host,
                               port=args.port, max_steps=args.max_steps, timeout=args.timeout,
                               log=_say)
    except ValueError as error:
        print(f"cs336-lectures: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"cs336-lectures: error: cannot listen on {args.host}:{args.port}: {error.strerror or error}", file=sys.stderr)
        return 1
    try:
        # The one line a newcomer needs, set apart so it is not lost among the others.
        _say(f"cs336-lectures: serving {server.traces_dir}\n\n    Open {server.url}\n")
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            _say(f"cs336-lectures: warning: listening on {args.host}; anyone who can reach it and has the token can run code")
        for lecture in server.lectures.values():
            _say(f"watching {lecture.given} (trace {lecture.name})")
        _say("press Ctrl-C to stop")
        signal.signal(signal.SIGTERM, _stop)
        server.begin()
        if not args.no_browser:
            webbrowser.open(server.url)
        server.serve_forever()
    except KeyboardInterrupt:
        _say("\nstopping")
    finally:
        # A second Ctrl-C (or a signal to the whole process group) must not cut the cleanup short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        server.close()
    return 0
