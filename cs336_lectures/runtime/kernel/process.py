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
DEVELOPERS.md has the safety argument.

Messages are JSON, one per line: from the server over the socket given as --fd, from runs and
checkpoints over a Unix socket the kernel listens on.
"""

from __future__ import annotations

import __future__
import argparse
import ast
import ctypes
import faulthandler
import functools
import gc
import operator
import importlib
import inspect
import json
import linecache
import os
import platform
import random
import selectors
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cs336_lectures.runtime.kernel import edits
from cs336_lectures.runtime.kernel.effects import Effects, first_hazard
from cs336_lectures.runtime.kernel.protocol import EARLY_SUFFIX, RUN_GRACE_SECONDS, STACKS_SIGNAL, MessageLines, send
from cs336_lectures.runtime.lecture.directives import parse_directives
from cs336_lectures.runtime.i18n.run_messages import Note, maybe_note, note
from cs336_lectures.runtime.render.rendering import highlight_lines
from cs336_lectures.runtime.trace.format import write_trace
from cs336_lectures.runtime.tracing import ranks
from cs336_lectures.runtime.tracing.engine import Tracer
from cs336_lectures.runtime.tracing.lecture_run import creation_time, trace_lecture
from cs336_lectures.runtime.tracing.result import LectureError

# Imported once by the kernel, so that no run pays for them. Only libraries and the runtime:
# the lecture and its own modules are imported by each run (they may change).
PREWARM = ("numpy", "torch", "torch.nn.functional", "einops", "jaxtyping", "regex", "tiktoken", "matplotlib.figure",
           "matplotlib.backends.backend_svg", "pygments.lexers.python", "cs336_lectures.runtime.render.rendering",
           "cs336_lectures.runtime.trace.values", "cs336_lectures.runtime.lecture.primitives", "cs336_lectures.runtime.render.assets")
CONNECT_WAIT_SECONDS = 10.0
_PR_SET_CHILD_SUBREAPER = 36


# --- inside a run: checkpoints and resuming ----------------------------------------------------


def _top_name(code: types.CodeType) -> str:
    """The top-level definition a code object belongs to: 'bpe' for bpe.<locals>.merge."""
    return code.co_qualname.split(".", 1)[0]


def _child_processes() -> list[int] | None:
    """This process's live child processes, or None where the platform cannot list them."""
    children: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as file:
                children += [int(pid) for pid in file.read().split()]
    except OSError:
        return None
    live = []
    for pid in children:
        try:
            with open(f"/proc/{pid}/stat") as file:
                state = file.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            live.append(pid)
    return live


def _openmp_is_fork_safe() -> bool:
    """Whether LLVM's OpenMP runtime was loaded in place of GNU's (kernel_client.fork_safe_openmp)."""
    try:
        with open("/proc/self/maps") as maps:
            return any("/libomp" in line for line in maps)
    except OSError:
        return False


def _os_thread_count() -> int | None:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


class Runner:
    """The kernel's hooks into one run of trace_lecture (tracer.TraceHooks), in the run's process.

    It records where each top-level definition first ran (the step count at the time, -1 for the
    import), forks a checkpoint at each section call of main(), and in a resumed child applies
    the edit. The object lives on in every fork: a resumed run sees what its checkpoint saw.
    """

    def __init__(self, lecture: Path, out: Path, socket_path: str, run_id: int, source: str):
        self.lecture = lecture
        self.out = out
        self.real = os.path.realpath(lecture)
        self.socket_path = socket_path
        self.run_id = run_id
        self.first_step: dict[str, int] = {}
        self.lecture_filenames: dict[str, bool] = {}  # co_filename -> whether it names the lecture
        self.checkpoints: list[dict] = []  # this run's: {"pid", "index", "section", "steps"}
        self.unsafe: Note | None = None  # why checkpoints stopped being taken
        self.source = source  # the source this process's code was compiled from
        self.tracer: Tracer | None = None
        self.module: types.ModuleType | None = None
        self.sections: dict[int, tuple[int, str]] = {}  # main() line -> (section index, name)
        self.channel: socket.socket | None = None
        self.python_threads: set[threading.Thread] = set()
        self.random_state: tuple = ()
        self.starts: list[int] = []  # lines where the top-level statements of `source` begin
        self.modules_at_resume: frozenset[str] | None = None  # sys.modules' names when this run resumed
        self.header: dict = {}
        self.early = False  # a resumed run: write the trace so far at the next section, for the viewer
        self.future_flags = 0
        self.reached: list[dict] = []  # every section main() called: {"index", "section", "line", "steps"}
        self.descriptors: list[tuple[int, int, int]] = []  # at the last checkpoint: (fd, flags, offset) of files
        exempt = {os.path.join(folder, "") for root in (out, Path("var/files"))
                  for folder in (os.path.abspath(root), os.path.realpath(root))}
        exempt.add(os.path.join(tempfile.gettempdir(), ranks.STAGING_PREFIX))
        self.effects = Effects(self._step_now, tuple(sorted(exempt)))

    # tracer.TraceHooks

    def importing(self, load: Callable[[], None]) -> Callable[[], None]:
        def traced_load() -> None:
            self.python_threads = set(threading.enumerate())  # a thread the import starts is the lecture's
            self.effects.install()  # what the lecture does to files from its import on
            previous = sys.gettrace()
            sys.settrace(self._import_touch)
            try:
                load()
            finally:
                sys.settrace(previous)

        return traced_load

    def starting(self, tracer: Tracer, module: types.ModuleType, entry: str, header: dict) -> None:
        self.tracer, self.module, self.header = tracer, module, header
        if tracer.files[0].source != self.source:  # the file changed since the kernel read it
            self.source, self.starts = tracer.files[0].source, []
        tracer.on_new_code = self._touch
        tracer.highlight = self.highlight
        threading.settrace(self._thread_touch)
        main = vars(module).get(edits.ENTRY)
        if entry != edits.ENTRY or not isinstance(main, types.FunctionType):
            self.unsafe = note("the lecture has no {entry}() calling sections", entry=edits.ENTRY)
            return
        try:
            outline = edits.outline(self.source)
        except (SyntaxError, ValueError):
            self.unsafe = note("the lecture could not be parsed")
            return
        definition = outline.functions.get(edits.ENTRY)
        if definition is None:
            self.unsafe = note("the lecture has no {entry}() calling sections", entry=edits.ENTRY)
            return
        index = 0
        for statement in definition.node.body:
            call = getattr(statement, "value", None)
            if (isinstance(statement, ast.Expr) and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and call.func.id in outline.functions):
                self.sections[statement.lineno] = (index, call.func.id)
                index += 1
        self.future_flags = _future_flags(module)
        tracer.section_watch = (main.__code__, frozenset(self.sections), self._at_section)

    def _step_now(self) -> int:
        return len(self.tracer.steps) if self.tracer is not None else -1

    # where code first ran

    def _touch(self, code: types.CodeType, step: int) -> None:
        ours = self.lecture_filenames.get(code.co_filename)
        if ours is None:
            ours = self.lecture_filenames[code.co_filename] = os.path.realpath(code.co_filename) == self.real
        if ours:
            name = _top_name(code)
            if step < self.first_step.get(name, step + 1):
                self.first_step[name] = step

    def _import_touch(self, frame: types.FrameType, event: str, arg: Any):
        self._touch(frame.f_code, -1)
        return None

    def _thread_touch(self, frame: types.FrameType, event: str, arg: Any):
        """Code that other threads run: at the step the main thread is at (threads are not traced)."""
        self._touch(frame.f_code, len(self.tracer.steps) if self.tracer is not None else -1)
        return None

    # checkpoints

    def _fork_refusal(self) -> Note | None:
        """Why this process cannot be forked into a faithful checkpoint now, or None."""
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            return note("CUDA was initialised (a process cannot fork after that)")
        extra = [thread for thread in threading.enumerate()
                 if thread not in self.python_threads and thread is not self.tracer.watchdog]
        if extra:
            return note("the lecture started a thread ({name})", name=extra[0].name)
        os_threads = _os_thread_count()
        if not _FORK_SAFE_OPENMP and os_threads is not None and os_threads > len(threading.enumerate()):
            # torch's OpenMP pool: a forked child that runs a parallel operation would hang, and
            # one limited to a single thread could compute different sums than a full run.
            return note("torch's thread pool is running (parallel operations cannot be forked; install LLVM's OpenMP: apt-get install libomp5)")
        children = _child_processes()
        if children is None:
            return note("this platform cannot list child processes")
        own = {checkpoint["pid"] for checkpoint in self.checkpoints}
        if any(pid not in own for pid in children):
            return note("the lecture left a child process running")
        return None

    def _at_section(self) -> None:
        tracer = self.tracer
        line = tracer.steps[-1][1]
        index, name = self.sections[line]
        self.reached.append({"index": index, "section": name, "line": line, "steps": len(tracer.steps)})
        if self.early:
            self.early = False
            self._write_early()
        if self.unsafe is None:
            refusal = self._fork_refusal()
            if refusal is not None:
                self.unsafe = note("{reason}, before `{section}`", reason=refusal, section=name)
        if self.unsafe is not None:
            return
        if not self.checkpoints:  # checkpoints inherit these: a resumed run redoes only what changed
            self.directives(self.source)
            self.highlight(self.source)
        for file in tracer.files:  # the modules linked to so far, which a resumed run would highlight again
            tracer.highlighted(file.source)
        for stream in (sys.__stdout__, sys.__stderr__):
            stream.flush()
        steps = len(tracer.steps)
        # Python reseeds its global generator in every fork child; the checkpoint puts it back.
        self.random_state = random.getstate()
        self.descriptors = _file_descriptors()
        if ranks.following is not None:
            ranks.following.hold_parts()  # the run removes its staging folder when it ends
        pid = os.fork()
        if pid == 0:
            self._checkpoint(index, name, steps)  # returns only in a resumed child
        else:
            self.checkpoints.append({"pid": pid, "index": index, "section": name, "line": line, "steps": steps})

    def _checkpoint(self, index: int, name: str, steps: int) -> None:
        """The checkpoint's life: wait for orders; return (in a forked child) to resume the run."""
        paused = time.perf_counter()
        try:
            random.setstate(self.random_state)
            os.setpgid(0, 0)
            channel = _connect(self.socket_path)
            send(channel, {"role": "checkpoint", "run": self.run_id, "pid": os.getpid(), "index": index,
                           "section": name, "steps": steps})
            lines = MessageLines(channel)
            while True:
                try:
                    order = lines.read(timeout=1.0)
                except EOFError:  # the kernel is gone
                    os._exit(0)
                _reap()  # resumed runs that ended
                if order is None:
                    continue
                if order.get("op") != "resume":
                    os._exit(0)
                if os.fork() == 0:
                    channel.close()
                    self._resume(order, paused)
                    return
        except BaseException:  # noqa: BLE001 - a checkpoint never unwinds into the lecture
            os._exit(1)

    def _write_early(self) -> None:
        """In a resumed run, once the edited section has run: the trace so far, which the viewer shows
        while the sections after it run again (the whole trace replaces it when they are done)."""
        tracer = self.tracer
        if not _recorded_steps_are_final(tracer):
            return  # the viewer waits for the whole trace: it must never show what that trace then changes
        header = {**self.header, "elapsed_s": round(time.perf_counter() - tracer.started, 3)}
        try:
            write_trace(tracer.snapshot(header), self.out / f"{self.lecture.stem}{EARLY_SUFFIX}")
        except Exception:  # noqa: BLE001 - never the lecture's failure: the whole trace still comes
            return
        send(self.channel, {"role": "early", "id": self.run_id, "steps": len(tracer.steps)})

    def _resume(self, order: dict, paused: float) -> None:
        """In the child of a checkpoint: swap in the edited code and go on with main()."""
        random.setstate(self.random_state)
        os.setpgid(0, 0)
        _reopen(self.descriptors)  # offsets of its own: the run it forked from went on reading
        self.effects.adopt()
        if ranks.following is not None:
            ranks.following.continue_in_this_process()
        self.run_id = order["id"]
        self.channel = _connect(self.socket_path)
        send(self.channel, {"role": "run", "id": self.run_id, "pid": os.getpid()})
        self.checkpoints = []
        self.header["created"] = creation_time()  # the trace is this run's, though it began in an earlier one
        self.modules_at_resume = frozenset(sys.modules)
        self.early = bool(order.get("early"))
        self.apply(order["source"], order["changed"], order["starts"])
        tracer = self.tracer
        tracer.started += time.perf_counter() - paused  # the run's time, not the wait
        tracer.max_steps = order.get("max_steps")
        tracer.timeout = order.get("timeout")
        tracer.checkpoint = len(tracer.steps)  # check the new limits at the next step

    def apply(self, source: str, changed: list[dict], starts: list[int]) -> None:
        """Make the module's functions those of `source` and the tracer's view of the file its text
        and directives. `changed` describes each function that differs ({"name", "first", "text",
        "docstring"}, no "text" for one removed); `starts` are the lines where top-level statements begin."""
        module, tracer = self.module, self.tracer
        namespace = vars(module)
        for definition in changed:
            name = definition["name"]
            current = namespace.get(name)
            if definition.get("text") is None:
                namespace.pop(name, None)
                continue
            # Compiled alone, at its own line numbers, with the module's __future__ features.
            padded = "\n" * (definition["first"] - 1) + definition["text"] + "\n"
            code = compile(padded, module.__spec__.origin, "exec", flags=self.future_flags, dont_inherit=True)
            if isinstance(current, types.FunctionType) and current.__code__.co_qualname == name:
                current.__code__ = next(constant for constant in code.co_consts
                                        if isinstance(constant, types.CodeType) and constant.co_name == name)
                current.__doc__ = definition["docstring"]
            else:  # a new function, made as the import would make it (edits.py vetted its defaults)
                exec(code, namespace)
        self.source, self.starts = source, starts
        linecache.checkcache(self.real)
        directives = self.directives(source)
        tracer._traced[self.real] = (source, directives)
        lecture = tracer.files[0]
        lecture.source = source
        lecture.directives.clear()  # in place: activations hold this dict
        lecture.directives.update(directives)
        self.highlight(source)  # its new parts, so that checkpoints forked from here have them

    # per-statement caches: a resumed run parses and highlights only what changed

    def segments(self, source: str) -> list[tuple[int, str]] | None:
        """The source cut where top-level statements begin: (first line, text), or None unknown."""
        if source != self.source or not self.starts:
            return None
        lines = source.splitlines(keepends=True)
        bounds = sorted({1, *self.starts}) + [len(lines) + 1]
        return [(first, "".join(lines[first - 1:end - 1])) for first, end in zip(bounds, bounds[1:]) if first <= len(lines)]

    def directives(self, source: str) -> dict:
        parts = self.segments(source)
        if parts is None:
            return _quiet_directives(source, self.tracer.files[0].path)
        directives: dict = {}
        for first, text in parts:
            key = (first, text)
            if key not in _DIRECTIVES:
                _DIRECTIVES[key] = _quiet_directives("\n" * (first - 1) + text, self.tracer.files[0].path)
            directives.update(_DIRECTIVES[key])
        return directives

    def highlight(self, source: str) -> list[str]:
        parts = self.segments(source)
        if parts is None:
            return highlight_lines(source)
        html: list[str] = []
        for _, text in parts:
            if text not in _HIGHLIGHTED:
                _HIGHLIGHTED[text] = highlight_lines(text)
            html += _HIGHLIGHTED[text]
        return html

    def report(self, message: dict) -> None:
        channel = self.channel or _connect(self.socket_path)
        # A resumed run reports only the modules it imported itself: the run it resumed reported
        # the others, and looking at every module would copy their pages out of the checkpoint (~50 ms).
        if self.modules_at_resume is None:
            modules = _local_modules(self.lecture)
        else:
            modules = _local_modules(self.lecture, [name for name in list(sys.modules) if name not in self.modules_at_resume])
        send(channel, {"role": "done", "id": self.run_id, "first_step": self.first_step,
                       "checkpoints": self.checkpoints, "unsafe": self.unsafe.to_json() if self.unsafe else None,
                       "reached": self.reached, "hazards": self.effects.hazards(),
                       "source": self.source,
                       "sections": len(self.sections),
                       "modules": modules, **message})


_FUTURE_FLAGS = functools.reduce(operator.or_, (feature.compiler_flag for feature in (
    __future__.annotations, __future__.generator_stop, __future__.division)))
_FORK_SAFE_OPENMP = False  # set by main() once torch is loaded
_DIRECTIVES: dict[tuple[int, str], dict] = {}  # (first line, text of a top-level statement) -> its directives
_HIGHLIGHTED: dict[str, list[str]] = {}  # text of a top-level statement -> its highlighted lines


def _recorded_steps_are_final(tracer: Tracer) -> bool:
    """Whether the steps recorded so far stay as they are for the rest of the run, so that a
    snapshot now is the start of the whole trace. Called at a section line of main(), the only
    traced frame on the stack. A line still pending (a directive, read after the line runs) is
    finished later; so is the line a suspended generator or coroutine of the lecture stopped on:
    resumed, it records values and output into that old step."""
    if tracer.current is None or tracer.current.pending is not None:
        return False
    suspendable = [code for code in tracer._codes if code.co_flags & _SUSPENDABLE]
    if not suspendable:
        return True
    # A live generator refers to its code: one pass of the collector's C traversal over the
    # objects made since the kernel's gc.freeze (the lecture's) finds them.
    for referrer in gc.get_referrers(*suspendable):
        if isinstance(referrer, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
            frame = getattr(referrer, "gi_frame", None) or getattr(referrer, "cr_frame", None) or getattr(
                referrer, "ag_frame", None)
            activation = getattr(getattr(frame, "f_trace", None), "__self__", None)
            if getattr(activation, "tracer", None) is tracer and getattr(activation, "step", -1) >= 0:
                return False
    return True


_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _quiet_directives(source: str, shown: str) -> dict:
    """parse_directives, its warnings to the real stderr (sys.stderr is the trace's during a run)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        directives = parse_directives(source, shown)
    for warning in caught:
        sys.__stderr__.write(f"{warning.message}\n")
    return directives


def _future_flags(module: types.ModuleType) -> int:
    """The compiler flags of the `from __future__ import ...` the lecture made."""
    flags = 0
    for value in vars(module).values():
        if isinstance(value, __future__._Feature):
            flags |= value.compiler_flag
    return flags & _FUTURE_FLAGS


def _local_modules(lecture: Path, names: list[str] | None = None) -> list[str]:
    """Source files of modules the run imported from the project (the working directory or the
    lecture's folder), not from an installed environment nor the runtime itself; of the modules
    `names` only, when given."""
    roots = tuple({os.path.join(os.getcwd(), ""), os.path.join(os.path.dirname(os.path.abspath(lecture)), "")})
    runtime = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
    skip = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep, os.sep + ".venv" + os.sep)
    files = set()
    modules = list(sys.modules.values()) if names is None else [sys.modules.get(name) for name in names]
    for module in modules:
        origin = getattr(module, "__file__", None)
        if (isinstance(origin, str) and origin.endswith(".py") and os.path.isabs(origin) and origin.startswith(roots)
                and not origin.startswith(runtime) and not any(part in origin for part in skip)):
            files.add(origin)
    files.discard(os.path.abspath(lecture))
    return sorted(files)


def _file_descriptors() -> list[tuple[int, int, int]]:
    """This process's open regular files: (descriptor, flags, offset)."""
    found = []
    try:
        descriptors = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return found
    for descriptor in descriptors:
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                continue
            with open(f"/proc/self/fdinfo/{descriptor}") as info:
                fields = dict(line.split(":", 1) for line in info if ":" in line)
            found.append((descriptor, int(fields["flags"].strip(), 8), int(fields["pos"].strip())))
        except (OSError, KeyError, ValueError):
            continue
    return found


def _reopen(descriptors: list[tuple[int, int, int]]) -> None:
    """Give each open file a description of its own at the offset it had at the checkpoint. A forked
    process shares its parent's: the run that went on from the checkpoint moved those offsets."""
    for descriptor, flags, offset in descriptors:
        try:
            fresh = os.open(f"/proc/self/fd/{descriptor}", flags & (os.O_ACCMODE | os.O_APPEND))
        except OSError:
            continue
        os.dup2(fresh, descriptor, inheritable=not flags & os.O_CLOEXEC)
        os.close(fresh)
        os.lseek(descriptor, offset, os.SEEK_SET)


def _connect(path: str) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    return connection


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


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
class Finished:
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
        self.finished: Finished | None = None
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
        if order["op"] == "stop":
            self.stopping = True
        elif order["op"] == "cancel":
            self.cancel()
        elif order["op"] == "run":
            self.cancel()
            self.start(order)

    def on_worker(self, connection: socket.socket, lines: MessageLines) -> None:
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
        run = self.run
        for message in messages:
            role = message.get("role")
            if role == "checkpoint":
                self.selector.unregister(connection)  # from now on it only hears from us
                if message["run"] == self.accepting:
                    self.hellos[message["pid"]] = (connection, message)
                else:  # from a run that was cancelled or failed
                    _kill_group(message["pid"])
                    connection.close()
            elif role == "run" and run is not None and message["id"] == run.id:
                run.pid = message["pid"]
            elif role == "done" and run is not None and message["id"] == run.id:
                self.on_done(message)
            elif role == "early" and run is not None and message["id"] == run.id and run.resumed is not None:
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
            _run_full(self.lecture, self.out, self.socket_path, order, source, self.command)
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
            send(checkpoint.connection, {"op": "resume", "id": order["id"], "source": source, "changed": changed,
                                         "starts": order["starts"], "max_steps": order.get("max_steps"),
                                         "timeout": order.get("timeout"),
                                         "early": self._next_checkpoint(checkpoint) is not None})
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
            self.finished = Finished(message["first_step"], kept + checkpoints, unsafe,
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
            _kill_group(checkpoint.pid)
            if checkpoint.connection is not None:
                checkpoint.connection.close()

    def check_run(self) -> None:
        """Reap children; notice a run that died without a word, or ran past its deadline; between
        runs, end what earlier runs left behind."""
        _reap()
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
        elif run.pid and not _alive(run.pid):
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
            _kill_group(run.pid)
        kept = {checkpoint.pid for checkpoint in self.finished.checkpoints} if self.finished else set()
        for pid, (connection, hello) in list(self.hellos.items()):
            if hello["run"] == run.id and pid not in kept:
                _kill_group(pid)
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
        for pid in _child_processes() or []:
            if pid not in kept:
                _kill_group(pid)  # a process that called setsid leads its own group
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def shut_down(self) -> None:
        if self.run is not None:
            self.kill_run(self.run)
        for checkpoint in self.finished.checkpoints if self.finished else []:
            _kill_group(checkpoint.pid)
        for pid in self.hellos:
            _kill_group(pid)
        self.sweep(everything=True)
        _reap()
        self.listener.close()


# Names with which a lecture reads what differs between a kernel's run and a new process: modules
# the kernel imported, the threads it runs, the process group and session it made.
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


def _alive(pid: int) -> bool:
    """Whether the process exists (a resumed run is not our child, so waitpid cannot tell)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _run_full(lecture: Path, out: Path, socket_path: str, order: dict, source: str, command: list[str]) -> None:
    """The child of the kernel that traces the whole lecture; never returns."""
    status = 1
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a fresh Python process
        faulthandler.unregister(STACKS_SIGNAL)  # SIGUSR1 as in a fresh Python process (checkpoints inherit it)
        runner = Runner(lecture, out, socket_path, order["id"], source)
        runner.starts = order["starts"]
        runner.channel = _connect(socket_path)
        send(runner.channel, {"role": "run", "id": order["id"], "pid": os.getpid()})
        try:
            result = trace_lecture(lecture, output_dir=out, max_steps=order.get("max_steps"),
                                   timeout=order.get("timeout"), quiet=True, command=tuple(command), hooks=runner)
        except LectureError as error:
            runner.report({"status": "error", "message": str(error)})
        else:
            # In a resumed child this is reached too, with its own run id and channel.
            runner.report({"status": result.status, "message": result.message, "steps": result.num_steps,
                           "trace": str(result.path)})
        status = 0
    except BaseException as error:  # noqa: BLE001 - the child must never return into the kernel
        try:
            sys.__stderr__.write(f"cs336-lectures kernel: the run failed: {type(error).__name__}: {error}\n")
            sys.__stderr__.flush()
        finally:
            os._exit(1)
    finally:
        for stream in (sys.__stdout__, sys.__stderr__):
            stream.flush()
        os._exit(status)


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
    global _FORK_SAFE_OPENMP
    _FORK_SAFE_OPENMP = _openmp_is_fork_safe()
    control = socket.socket(fileno=args.fd)
    kernel = Kernel(Path(args.lecture), Path(args.folder), control, json.loads(args.command) if args.command else [])
    send(control, {"ready": True, "pid": os.getpid()})
    kernel.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
