"""Following a lecture into the processes it starts: every rank of a distributed program.

A lecture that runs `torch.multiprocessing.spawn(worker, ...)`, or starts
`multiprocessing.Process(target=worker, ...)` with a function of its own, runs that function
in other processes, where the parent's `sys.settrace` does not reach. While a lecture is
traced, `follow_ranks` wraps the start of every process whose entry point is a function of a
traced file: the child then runs the function under a tracer of its own (a `_RankEntry`, pickled
with the process like any target) and, when it ends, writes its steps to a per-rank file in a
staging folder (atomically). After the run `RankCollector.merge` splices each rank's steps into
the parent's trace, right after the step that started the process, and lists the ranks in the
trace's `ranks` field (trace/README.md, "ranks").

What else a rank records:
- Collectives. `torch.distributed.all_reduce`, `all_gather`, `reduce_scatter`, `broadcast`
  and their relatives are wrapped in the child (also where a lecture module imported one by
  name), so the line calling one carries the tensors it was given, before and after the call
  (step extras key `collective`).
- Failure. A rank whose function raises records the error on its failing line, writes its
  steps and exits with the error, which makes torch end the other ranks (for plain
  `Process`es a watcher thread here does the same). A rank ended by SIGTERM while it waits in
  a collective (its main thread inside C++) still writes its steps: SIGTERM wakes a thread of
  the tracer's, not only the main thread.

Groups: the processes of one `spawn` call form a group (torch passes each its index, the rank);
plain processes started while earlier ones still run join their group, in start order.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import multiprocessing.connection
import multiprocessing.process
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from cs336_lectures.atomic import write_bytes_atomically

if TYPE_CHECKING:
    from cs336_lectures.runtime.tracing.engine import Tracer

# The collectives whose tensors are recorded before and after the call.
COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
               "broadcast", "reduce", "scatter", "gather", "all_to_all", "all_to_all_single")
STAGING_PREFIX = "cs336-ranks-"  # ranks' staging folders, in the temporary folder
WATCH_INTERVAL_S = 0.2  # how often the watcher looks for a failed plain process
END_GRACE_S = 5.0  # how long a still-running rank gets after the lecture ended, before SIGTERM


class RankStopped(Exception):
    """A rank's tracing was cut off (--max-steps in that process): it ends as a failure."""


@dataclass(frozen=True)
class RankSettings:
    """What a child needs to trace like its parent (picklable: plain strings and numbers)."""

    traced_paths: tuple[str, ...]
    staging: str  # the folder ranks write their steps to; made when the first rank starts
    assets_dir: str
    files_dir: str
    inspect_all: bool
    max_steps: int | None
    seed: int


@dataclass
class _RankEntry:
    """The entry point given to a child process in place of the lecture's function."""

    function: Callable
    settings: RankSettings
    group: int
    rank: int

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        _run_rank(self, args, kwargs)


@dataclass
class _Started:
    process: multiprocessing.process.BaseProcess
    group: int
    rank: int
    origin: int  # the parent's step that started it
    torch_spawn: bool  # torch ends the other ranks of a spawn group itself
    part: dict | None = None  # its steps, once read (a process forked from the run reads them early)


@dataclass
class RankCollector:
    """The processes a traced lecture started, and the merge of their steps into its trace."""

    tracer: Tracer
    settings: RankSettings
    started: list[_Started] = field(default_factory=list)
    parts: list[tuple[int, int, int, dict]] = field(default_factory=list)  # (origin, group, rank, part)
    pid: int = field(default_factory=os.getpid)  # a forked rank inherits this collector: it must not adopt
    _stop: threading.Event = field(default_factory=threading.Event)
    _watcher: threading.Thread | None = None

    def adopt(self, process: multiprocessing.process.BaseProcess) -> None:
        """Called as `process.start()` begins: wrap its entry point when it is lecture code."""
        target, args = process._target, tuple(process._args)
        spawned = (getattr(target, "__module__", None) == "torch.multiprocessing.spawn"
                   and getattr(target, "__name__", None) == "_wrap" and len(args) >= 2)
        function = args[0] if spawned else target
        if os.getpid() != self.pid or not self._is_lecture_code(function):
            return
        if not self.settings.staging:  # the first rank of the run
            self.settings = dataclasses.replace(self.settings, staging=tempfile.mkdtemp(prefix=STAGING_PREFIX))
        if spawned:
            rank = int(args[1])
            group = self._group(new=rank == 0)
            process._args = (_RankEntry(function, self.settings, group, rank), *args[1:])
        else:
            group = self._group(new=all(_has_ended(s.process) for s in self._members(self._last_group())))
            rank = len(self._members(group))
            process._target = _RankEntry(function, self.settings, group, rank)
        self.started.append(_Started(process, group, rank, self.tracer._current_step(), spawned))
        if not spawned and self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, name="cs336-ranks-watcher", daemon=True)
            self._watcher.start()

    def hold_parts(self) -> None:
        """Read the steps of the ranks that have ended into memory: a process forked from here (a
        checkpoint of the warm kernel) outlives the staging folder, which the run removes at its end."""
        for started in self.started:
            if started.part is None and _has_ended(started.process):
                started.part = self._read(started)

    def continue_in_this_process(self) -> None:
        """This process (a resumed run, forked from a checkpoint) goes on with the run that made the
        collector: it adopts the processes it starts, into a staging folder of its own."""
        self.pid = os.getpid()
        self.hold_parts()
        if self.settings.staging:
            self.settings = dataclasses.replace(self.settings, staging=tempfile.mkdtemp(prefix=STAGING_PREFIX))

    def forget(self, process: multiprocessing.process.BaseProcess) -> None:
        """Undo `adopt` for a process whose `start()` failed."""
        self.started = [started for started in self.started if started.process is not process]

    def _is_lecture_code(self, function: Any) -> bool:
        code = getattr(function, "__code__", None)
        return code is not None and self.tracer.traces_file(code.co_filename)

    def _last_group(self) -> int:
        return self.started[-1].group if self.started else -1

    def _group(self, new: bool) -> int:
        return self._last_group() + 1 if new or not self.started else self._last_group()

    def _members(self, group: int) -> list[_Started]:
        return [started for started in self.started if started.group == group]

    def _watch(self) -> None:
        """End the other ranks of a group as soon as one of its plain processes fails.

        This thread only looks: it must not reap a child (`is_alive()` and `exitcode` call
        `waitpid`), or the lecture's own `join()`, blocked in `waitpid` on another thread, finds
        no child and leaves `exitcode` at None."""
        ended: set[int] = set()
        while not self._stop.is_set():
            try:
                self._end_failed_groups(ended)
            except (ValueError, OSError):  # the lecture closed a process while it was looked at
                self._stop.wait(WATCH_INTERVAL_S)

    def _end_failed_groups(self, ended: set[int]) -> None:
        watched = [s for s in self.started if not s.torch_spawn and s.group not in ended]
        running = [s.process.sentinel for s in watched if _has_started(s.process) and not _has_ended(s.process)]
        if running:
            multiprocessing.connection.wait(running, timeout=WATCH_INTERVAL_S)
        else:
            self._stop.wait(WATCH_INTERVAL_S)
        for started in watched:
            if started.group in ended or not _has_ended(started.process):
                continue
            if _peek_exit_code(started.process) in (None, 0):
                continue
            ended.add(started.group)
            for sibling in self._members(started.group):
                if _has_started(sibling.process) and not _has_ended(sibling.process):
                    sibling.process.terminate()

    def finish(self) -> None:
        """After the lecture: stop watching; give ranks still running a moment, then end them;
        read what every rank wrote."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
        deadline = time.monotonic() + END_GRACE_S  # one grace period for all of them, not one each
        # A process the lecture closed was joined and has ended; it answers nothing now.
        # A rank whose steps are held ended before a fork: in a resumed run it is not our child.
        unclosed = [started.process for started in self.started
                    if started.part is None and not _is_closed(started.process)]
        for process in unclosed:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in unclosed:
            if process.is_alive():
                process.terminate()
        for process in unclosed:
            process.join()
        self.parts = [(started.origin, started.group, started.rank, self._read(started)) for started in self.started]
        self.parts.sort(key=lambda part: part[:3])

    def merge(self, trace: dict) -> dict:
        """`trace` (a Tracer.to_dict) with every rank's steps spliced in after the step that
        started the rank, and the `ranks` list; unchanged when the lecture started no process."""
        return merge_parts(trace, self.parts) if self.parts else trace

    def _read(self, started: _Started) -> dict:
        if started.part is not None:
            return started.part
        path = Path(self.settings.staging) / _part_name(started.group, started.rank)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            ending = ("the lecture closed its process first" if _is_closed(started.process)
                      else f"its process ended with exit code {started.process.exitcode} before it could write them")
            return {"status": "lost", "message": f"rank {started.rank} left no steps ({ending})"}


def _is_closed(process: multiprocessing.process.BaseProcess) -> bool:
    """Whether the lecture called `process.close()` (after which the object answers nothing)."""
    return getattr(process, "_closed", False)


def _has_started(process: multiprocessing.process.BaseProcess) -> bool:
    """False while `start()` is still under way (a rank is adopted as its start begins)."""
    return process._popen is not None


def _has_ended(process: multiprocessing.process.BaseProcess) -> bool:
    """Whether a started process has ended, read from its sentinel (reaps nothing)."""
    return _has_started(process) and bool(multiprocessing.connection.wait([process.sentinel], timeout=0))


def _peek_exit_code(process: multiprocessing.process.BaseProcess) -> int | None:
    """An ended process's exit code, in `Process.exitcode`'s convention (-N for signal N),
    read without reaping it; None while it is not known yet."""
    known = getattr(process._popen, "returncode", None)
    if known is not None:
        return known
    if not hasattr(os, "waitid"):  # Windows: reading the code reaps nothing
        return process.exitcode
    try:
        status = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # its owner reaped it meanwhile: the code is (about to be) stored
        return getattr(process._popen, "returncode", None)
    if status is None:
        return None
    return status.si_status if status.si_code == os.CLD_EXITED else -status.si_status


following: RankCollector | None = None  # the collector of the run in this process (the warm kernel asks)


@contextmanager
def follow_ranks(tracer: Tracer, *, assets_dir: Path, files_dir: Path, inspect_all: bool,
                 max_steps: int | None, seed: int) -> Iterator[RankCollector]:
    """While the block runs, processes started with lecture functions as their entry are traced."""
    settings = RankSettings(tuple(tracer.traced_files()), "", str(assets_dir), str(files_dir),
                            inspect_all, max_steps, seed)
    collector = RankCollector(tracer, settings)
    global following
    following = collector
    base = multiprocessing.process.BaseProcess
    original_start = base.start

    @functools.wraps(original_start)
    def start(process: multiprocessing.process.BaseProcess) -> None:
        entry = process._target, process._args
        collector.adopt(process)
        try:
            original_start(process)
        except BaseException:
            if not _has_started(process):  # it never ran: no rank, and as it was for a second start()
                collector.forget(process)
                process._target, process._args = entry
            raise

    base.start = start
    try:
        yield collector
    finally:
        base.start = original_start
        following = None
        try:
            collector.finish()
        finally:
            if collector.settings.staging:
                shutil.rmtree(collector.settings.staging, ignore_errors=True)


def merge_parts(trace: dict, parts: list[tuple[int, int, int, dict]]) -> dict:
    """Splice rank parts `(origin, group, rank, part)`, sorted by origin, into the parent's trace.

    A part is what a rank wrote: `status`, maybe `message`, and `trace` (its own Tracer.to_dict)
    unless it was lost. Parent steps move down by the rank steps inserted before them; a
    rank's calls, functions and files are appended (files shared by path)."""
    parent_steps = trace["steps"]
    inserted_after = [0] * (len(parent_steps) + 1)  # rank steps spliced in after parent step i (slot i + 1)
    for origin, _, _, part in parts:
        inserted_after[origin + 1] += len(part["trace"]["steps"]) if "trace" in part else 0
    moved = []  # parent step i -> its index in the merged trace; moved[n] = the merged length
    total = 0
    for index in range(len(parent_steps) + 1):
        total += inserted_after[index]
        moved.append(index + total)
    files, functions = list(trace["files"]), [list(function) for function in trace["functions"]]
    calls = [[call[0], moved[call[1]] if call[1] >= 0 else -1, *call[2:]] for call in trace["calls"]]
    solutions = [{**solution, "steps": [moved[solution["steps"][0]], moved[solution["steps"][1] + 1] - 1]}
                 for solution in trace.get("solutions", [])]
    file_of_path = {file["path"]: index for index, file in enumerate(files)}
    function_index = {tuple(function): index for index, function in enumerate(functions)}
    merged: list[list] = []
    ranks: list[dict] = []
    pending = list(parts)

    def splice(origin: int) -> None:
        while pending and pending[0][0] == origin:
            _, group, rank, part = pending.pop(0)
            first = len(merged)
            if "trace" in part:
                _append_part(part["trace"], moved[origin] if origin >= 0 else -1, merged, files, file_of_path,
                             functions, function_index, calls, solutions)
            entry = {"group": group, "rank": rank, "steps": [first, len(merged) - 1], "status": part["status"]}
            if part.get("message"):
                entry["message"] = part["message"]
            ranks.append(entry)

    splice(-1)
    for index, step in enumerate(parent_steps):
        merged.append(step)
        splice(index)
    _name_the_first_failure(ranks, [part for *_, part in parts])
    header = {**trace["header"], "num_steps": len(merged)}
    cause = next((entry for entry in ranks if entry["status"] in ("error", "max_steps")), None)
    if header.get("status") == "error" and cause is not None:
        # torch's own message ("-- Process 1 terminated with the following error:") says less.
        header["message"] = f"rank {cause['rank']} failed: {cause.get('message', cause['status'])}"
    result = {**trace, "files": files, "functions": functions, "calls": calls, "steps": merged,
              "header": header, "ranks": ranks}
    if solutions:
        result["solutions"] = sorted(solutions, key=lambda solution: solution["steps"][0])
    return result


def _name_the_first_failure(ranks: list[dict], parts: list[dict]) -> None:
    """In a group where a rank failed (or was cut off by --max-steps), the rank that did so first
    keeps its status; a rank that failed or was ended after it (a collective whose peer vanished,
    SIGTERM) is `aborted`."""
    first: dict[int, tuple[float, int]] = {}
    for entry, part in zip(ranks, parts):
        if entry["status"] in ("error", "max_steps"):
            first[entry["group"]] = min(first.get(entry["group"], (part["ended"], entry["rank"])),
                                        (part["ended"], entry["rank"]))
    for entry, part in zip(ranks, parts):
        cause = first.get(entry["group"])
        if cause is None or entry["status"] not in ("error", "terminated") or cause[1] == entry["rank"]:
            continue
        entry["status"] = "aborted"
        entry["message"] = f"after rank {cause[1]} failed: {entry.get('message', 'ended')}"


def _append_part(part: dict, origin: int, merged: list, files: list, file_of_path: dict, functions: list,
                 function_index: dict, calls: list, solutions: list) -> None:
    """Append one rank's own trace to the merged lists; its outermost calls hang under `origin`."""
    file_map = []
    for file in part["files"]:
        index = file_of_path.get(file["path"])
        if index is None:
            index = file_of_path[file["path"]] = len(files)
            files.append(file)
        file_map.append(index)
    function_map = []
    for file, name, line in part["functions"]:
        key = (file_map[file], name, line)
        if key not in function_index:
            function_index[key] = len(functions)
            functions.append(list(key))
        function_map.append(function_index[key])
    call_base, step_base = len(calls), len(merged)
    for call in part["calls"]:
        parent = origin if call[1] < 0 else step_base + call[1]
        calls.append([function_map[call[0]], parent, *(call_base + c for c in call[2:])])
    for call, line, *extras in part["steps"]:
        for rendering in extras[0].get("r", []) if extras else []:
            if "file" in rendering:  # an internal link names a file of the rank's own list
                rendering["file"] = file_map[rendering["file"]]
        merged.append([call_base + call, line, *extras])
    for solution in part.get("solutions", []):
        first, last = solution["steps"]
        solutions.append({**solution, "file": file_map[solution["file"]],
                          "steps": [step_base + first, step_base + last]})


# --- in the child process ------------------------------------------------------------------------


def _part_name(group: int, rank: int) -> str:
    return f"group{group}-rank{rank}.json"


def _run_rank(entry: _RankEntry, args: tuple, kwargs: dict) -> None:
    """Run the lecture's function under a tracer of this process's own; write the steps; end as
    the function did (its exception is raised again, so that the parent sees the rank fail). Its
    return value is dropped, as spawn and Process drop it."""
    from cs336_lectures.runtime.render.assets import AssetStore
    from cs336_lectures.runtime.render.rendering import highlight_lines
    from cs336_lectures.runtime.tracing.engine import Tracer, error_line
    from cs336_lectures.runtime.tracing.seeding import seed_everything

    settings = entry.settings
    sys.settrace(None)  # a forked child inherits the parent's trace function
    tracer = Tracer([Path(path) for path in settings.traced_paths],
                    assets=AssetStore(Path(settings.assets_dir), Path(settings.files_dir)),
                    inspect_all=settings.inspect_all, max_steps=settings.max_steps)
    highlight_lines("x = 1\n")  # loaded now: the SIGTERM thread must not wait on an import
    writer = _PartWriter(tracer, Path(settings.staging) / _part_name(entry.group, entry.rank))
    writer.on_sigterm()
    seed_everything(settings.seed)
    with _recording_collectives(tracer):
        # A partial, not a lambda: it adds no frame of ours to the traceback of the lecture's error.
        failure = tracer.run(functools.partial(entry.function, *args, **kwargs))
    if failure is not None:
        writer.write("error", error_line(failure, tracer))
        raise failure
    if tracer.stop_status is not None:
        writer.write(tracer.stop_status, tracer.stop_message)
        # The other ranks may wait for this one in a collective: fail, so that they are ended too.
        raise RankStopped(f"rank {entry.rank}: {tracer.stop_message}")
    writer.write("ok", None)


class _PartWriter:
    """Writes a rank's steps to its staging file once: at the end of its function, or on SIGTERM."""

    def __init__(self, tracer: Tracer, path: Path):
        self.tracer = tracer
        self.path = path
        self.lock = threading.Lock()
        self.written = False

    def write(self, status: str, message: str | None) -> None:
        """The first call writes; a later one (the other thread) waits until that is on disk."""
        with self.lock:
            if self.written:
                return
            part = {"status": status, "ended": time.time(), "trace": self.tracer.to_dict({})}
            if message:
                part["message"] = message
            text = json.dumps(part, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
            write_bytes_atomically(self.path, text.encode("utf-8", "backslashreplace"))
            self.written = True

    def on_sigterm(self) -> None:
        """SIGTERM (the parent ending this rank because another failed, or the run was stopped)
        writes the steps so far and exits. A Python signal handler alone would wait for the main
        thread, which may be blocked in a collective for minutes, and the signal may land on any of
        torch's threads; so the handler does nothing but have Python write the signal's number to
        a pipe (signal.set_wakeup_fd), which a thread of ours reads."""
        if os.name != "posix":  # Windows wants a socket there, and has no SIGTERM from a parent to catch
            return
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        signal.signal(signal.SIGTERM, lambda signum, frame: None)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)

        def wait() -> None:
            while os.read(read_end, 1)[0] != signal.SIGTERM:  # other signals (SIGINT) pass through
                pass
            # Nothing else of this process runs while the steps are serialized (no I/O until then).
            sys.setswitchinterval(1000.0)
            steps = len(self.tracer.steps)
            self.write("terminated", f"ended by SIGTERM at step {steps} (another rank failed, or the run "
                                     f"was stopped)")
            os._exit(128 + signal.SIGTERM)

        threading.Thread(target=wait, name="cs336-rank-sigterm", daemon=True).start()


@contextmanager
def _recording_collectives(tracer: Tracer) -> Iterator[None]:
    """Wrap torch.distributed's collectives so that the calling line records its tensors: in
    torch.distributed, and where a traced module holds one under a name of its own
    (`from torch.distributed import all_reduce` ran before this rank's run began)."""
    try:
        import torch.distributed as dist
    except ImportError:
        yield
        return
    originals = {name: getattr(dist, name) for name in COLLECTIVES if hasattr(dist, name)}
    wrapped = {id(function): (function, _recorded(tracer, name, function)) for name, function in originals.items()}
    places: list[tuple[dict, str, Callable]] = [(vars(dist), name, function) for name, function in originals.items()]
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and tracer.traces_file(path):
            places += [(vars(module), key, value) for key, value in list(vars(module).items())
                       if id(value) in wrapped and wrapped[id(value)][0] is value]
    for namespace, key, function in places:
        namespace[key] = wrapped[id(function)][1]
    try:
        yield
    finally:
        for namespace, key, function in places:
            namespace[key] = function


def _recorded(tracer: Tracer, name: str, function: Callable) -> Callable:
    import torch

    signature = inspect.signature(function)

    def holds_tensors(value: Any) -> bool:
        return isinstance(value, torch.Tensor) or (
            isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, torch.Tensor) for v in value))

    @functools.wraps(function)
    def collective(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs).arguments
        except TypeError:  # the call itself is wrong: let torch say how
            return function(*args, **kwargs)
        tensors = {key: value for key, value in bound.items() if holds_tensors(value)}
        before = {key: tracer.encoder.encode(value) for key, value in tensors.items()}
        result = function(*args, **kwargs)
        record = {"op": name, "values": [[key, before[key], tracer.encoder.encode(value)]
                                         for key, value in tensors.items()]}
        tracer.add_collective(record)
        return result

    return collective
