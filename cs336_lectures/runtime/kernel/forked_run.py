"""Inside a run the kernel forked: the hooks that watch `trace_lecture` there, the checkpoints
it forks at main()'s section calls, and the resumed run a checkpoint becomes on an edit.

    kernel ── run (run_whole: traces the whole lecture exactly as `cs336-lectures trace`)
                └─ checkpoint i (ForkedRun forks it at main()'s line that calls section i; it waits)
                     └─ resumed run (the checkpoint, told to resume: the edit swapped in, main() goes on)

`ForkedRun` is the run's `TraceHooks`. It records what each top-level definition reached before
each checkpoint (effects.py), forks the checkpoints and tells the kernel about them, and in a
resumed child applies the edit: `function.__code__` swapped, directives and highlighting re-read.
The object lives on in every fork: a resumed run sees what its checkpoint saw. The kernel's side
(which checkpoint, or a whole run) is process.py; DEVELOPERS.md has the safety argument.
"""

from __future__ import annotations

import __future__
import ast
import faulthandler
import functools
import gc
import operator
import inspect
import linecache
import os
import random
import signal
import socket
import stat
import sys
import tempfile
import threading
import time
import types
import warnings
from pathlib import Path
from typing import Any, Callable

from cs336_lectures.runtime.kernel import edits
from cs336_lectures.runtime.processes import child_processes, os_thread_count, reap_children
from cs336_lectures.runtime.kernel.effects import Effects
from cs336_lectures.runtime.kernel.protocol import EARLY_SUFFIX, STACKS_SIGNAL, MessageLines, send
from cs336_lectures.runtime.lecture.directives import parse_directives
from cs336_lectures.runtime.i18n.run_messages import Note, note
from cs336_lectures.runtime.render.rendering import highlight_lines
from cs336_lectures.runtime.trace.format import write_trace
from cs336_lectures.runtime.tracing import ranks
from cs336_lectures.runtime.tracing.engine import Tracer
from cs336_lectures.runtime.tracing.lecture_run import TraceSettings, creation_time, trace_lecture
from cs336_lectures.runtime.tracing.result import LectureError
from cs336_lectures.runtime.terminal_text import visible


def _top_name(code: types.CodeType) -> str:
    """The top-level definition a code object belongs to: 'bpe' for bpe.<locals>.merge."""
    return code.co_qualname.split(".", 1)[0]


class ForkedRun:
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
        os_threads = os_thread_count()
        if not _FORK_SAFE_OPENMP and os_threads is not None and os_threads > len(threading.enumerate()):
            # torch's OpenMP pool: a forked child that runs a parallel operation would hang, and
            # one limited to a single thread could compute different sums than a full run.
            return note("torch's thread pool is running (parallel operations cannot be forked; install LLVM's OpenMP: apt-get install libomp5)")
        children = child_processes()
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
                reap_children()  # resumed runs that ended
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
_FORK_SAFE_OPENMP = False  # whether LLVM's OpenMP replaced GNU's in the kernel: set_fork_safe_openmp()
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
        sys.__stderr__.write(visible(f"{warning.message}\n"))
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


def run_whole(lecture: Path, out: Path, socket_path: str, order: dict, source: str, command: list[str]) -> None:
    """The child of the kernel that traces the whole lecture; never returns."""
    status = 1
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a fresh Python process
        faulthandler.unregister(STACKS_SIGNAL)  # SIGUSR1 as in a fresh Python process (checkpoints inherit it)
        runner = ForkedRun(lecture, out, socket_path, order["id"], source)
        runner.starts = order["starts"]
        runner.channel = _connect(socket_path)
        send(runner.channel, {"role": "run", "id": order["id"], "pid": os.getpid()})
        try:
            # The same settings `cs336-lectures trace` takes from serve's options (server/tracer_subprocess.py).
            settings = TraceSettings(max_steps=order.get("max_steps"), timeout=order.get("timeout"), command=tuple(command))
            result = trace_lecture(lecture, output_dir=out, quiet=True, hooks=runner, **settings.arguments())
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


def set_fork_safe_openmp(safe: bool) -> None:
    """The kernel says, once torch is loaded, whether forks survive torch's thread pool."""
    global _FORK_SAFE_OPENMP
    _FORK_SAFE_OPENMP = safe
