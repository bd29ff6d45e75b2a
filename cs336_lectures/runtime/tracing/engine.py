"""The tracer: run a lecture under sys.settrace and record one step per executed line.

What this layer adds on top of `sys.settrace`:

- Speed. The global trace function sees every call in the process, so it does one dict
  lookup (by code object id) and returns None for code outside the traced files: those
  frames then get no line events at all. Each traced activation gets a small `_Activation`
  whose bound method is the frame's local tracer; it appends `[call, line]` and looks the
  line up in a dict of directives parsed once per file. The stack is kept from call and
  return events (each activation knows its parent), never rebuilt from a traceback.
- Semantics. A line's extras are filled when the line completes, i.e. at the frame's next
  line or return event: inspected values are read after the line ran. Renderings, stdout and
  stderr go to the current step of the innermost traced activation. A resumed generator or
  coroutine gets a new call that `continues` the previous activation of its frame.
- Robustness. An exception in the lecture (Ctrl-C included) still yields a trace, ending in an
  error step; `max_steps` and `timeout` stop a runaway lecture and keep the partial trace. The
  lecture's stdin is empty while it is traced, so input() fails at once instead of waiting.

`trace_lecture` (lecture_run.py) sets a lecture up and runs it under a `Tracer`:

    >>> tracer = Tracer([Path("lectures/lecture_01.py").resolve()])
    >>> failure = tracer.run(module.main)
    >>> trace = tracer.to_dict(header)
"""

from __future__ import annotations

import builtins
import dis
import gc
import inspect
import io
import os
import signal
import sys
import threading
import time
import types
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from cs336_lectures.runtime.course import compat as course_compat
from cs336_lectures.runtime.lecture.directives import Directive, parse_directives
from cs336_lectures.runtime.trace.format import FORMAT, VERSION
from cs336_lectures.runtime.tracing.failures import format_traceback, message_of, traceback_entries
from cs336_lectures.runtime.tracing.output_capture import StepWriter
from cs336_lectures.runtime.tracing.source_text import display_path, read_source

if TYPE_CHECKING:
    from pathlib import Path

    from cs336_lectures.runtime.render.assets import AssetStore

MAX_OUTPUT = 10_000_000  # characters of stdout + stderr kept in one trace
OUTPUT_CUT = f"\n[output limit of {MAX_OUTPUT:,} characters reached: the rest of the output is not in the trace]\n"
CHECK_EVERY = 4096  # steps between checks of --max-steps / --timeout / the progress display
_NOT_FOUND = object()
_YIELD_VALUE = dis.opmap["YIELD_VALUE"]  # the instruction a suspended generator or coroutine stopped at


class _StopTracing(BaseException):
    """Raised from the trace function to end a runaway lecture (a BaseException so that the
    lecture's own `except Exception` does not swallow it). The tracer notes why before raising
    it: a bare `except:` in the lecture may still swallow it, and the trace must say so anyway."""


@dataclass
class _File:
    path: str  # as shown in the trace: relative to the working directory when under it
    source: str
    directives: dict[int, Directive]


class _Activation:
    """One activation of a traced frame; its bound `trace` is the frame's local tracer.

    This is the hot path: one call per executed line, no allocation but the step itself.
    """

    __slots__ = ("tracer", "steps", "call_id", "parent", "step", "directives", "default", "pending",
                 "values", "callback", "arguments")

    def __init__(self, tracer: Tracer, call_id: int, parent: _Activation | None, directives: dict,
                 values: dict):
        self.tracer = tracer
        self.steps = tracer.steps
        self.call_id = call_id
        self.parent = parent
        self.step = parent.step if parent is not None else -1  # output before the first line goes to the caller
        self.directives = directives
        self.default = tracer.every_line  # None, or an empty Directive under --inspect-all
        self.pending: Directive | None = None
        self.values = values  # name -> last encoded value written in this call chain
        self.callback = self.trace  # returned on every event: one bound method, not one per event

    def trace(self, frame: types.FrameType, event: str, arg: Any):
        if self.pending is not None and event != "exception":
            self.tracer.finish_line(self, frame, event)
        if event == "line":
            steps = self.steps
            index = len(steps)
            if index >= self.tracer.checkpoint:
                self.tracer.check_limits()
            self.step = index
            line = frame.f_lineno
            steps.append([self.call_id, line])
            directive = self.directives.get(line, self.default)
            if directive is not None:
                self.pending = directive
                if directive.stepover:
                    self.tracer.suppress = True
        elif event == "return":
            self.tracer.current = self.parent
        return self.callback

    def enter(self, frame: types.FrameType, event: str, arg: Any):
        """The local tracer until the first line of a call whose `def` line inspects arguments
        (`def f(a, b):  # @inspect a b`): their values on entry go on that first step."""
        self.callback = self.trace
        result = self.trace(frame, event, arg)
        if event == "line":
            for name, path in self.arguments:
                value = _lookup(frame, path)
                if value is not _NOT_FOUND:
                    self.tracer._record_value(self, name, value)
        return result

    def dormant(self, frame: types.FrameType, event: str, arg: Any):
        """The local tracer of a generator frame resumed inside a @stepover line: ignores it all,
        but keeps this activation reachable (frame.f_trace) for the next traced resumption."""
        return None


class Tracer:
    """Records the steps of one run; also the Recorder that text(), image()... report to."""

    def __init__(self, traced_paths: list[Path], *, assets: AssetStore | None = None, inspect_all: bool = False,
                 max_steps: int | None = None, timeout: float | None = None, timeout_source: str = "--timeout",
                 on_progress: Callable[[int, float], None] | None = None):
        from cs336_lectures.runtime.trace.values import ValueEncoder

        self.assets = assets
        self.encoder = ValueEncoder()
        self.inspect_all = inspect_all
        self.every_line = Directive() if inspect_all else None
        self.max_steps = max_steps
        self.timeout = timeout
        self.timeout_source = timeout_source  # who set the limit, for the message
        self.on_progress = on_progress

        self.files: list[_File] = []
        self.functions: list[list] = []
        self.calls: list[list] = []
        self.steps: list[list] = []
        self._file_ids: dict[str, int] = {}  # absolute real path -> index in files
        self._file_of_filename: dict[str, int] = {}  # co_filename -> index in files, -1 if untraced
        # A module's __file__ -> whether frames running with that module's globals go untraced
        # (None: globals without a __file__, answered by the code's file).
        self._untraced_modules: dict[str | None, bool] = {None: False}
        self._function_of_code: dict[int, int] = {}  # id(code) -> index in functions, -1 if untraced
        self._codes: list[types.CodeType] = []  # keeps ids in _function_of_code from being reused
        # Directives are parsed before the run, so that warnings about them reach the real stderr.
        self._traced: dict[str, tuple[str, dict[int, Directive]]] = {}  # real path -> (source, directives)
        for path in traced_paths:
            real = os.path.realpath(path)
            if real not in self._traced:
                source = read_source(real)
                lenient = course_compat.uses_course_runtime(source)  # the Stanford course's comment style
                self._traced[real] = source, parse_directives(source, display_path(real), lenient)
        if traced_paths:
            self.file_index(str(traced_paths[0]))  # the lecture is files[0]; modules join when they run

        self.current: _Activation | None = None
        self.suppress = False  # inside a @stepover line: calls are not traced
        self.checkpoint = 0
        self.started = 0.0
        self.elapsed_s = 0.0
        self.stop_status: str | None = None
        self.stop_message: str | None = None
        self.on_stop: Callable[[], None] | None = None  # told when a limit is reached (supervisor.py)
        self._watchdog_fired = False
        self._sigints = 0  # SIGINTs delivered during the run: real Ctrl-C, or the watchdog's
        self._previous_sigint: Any = None
        self._html: dict[str, list[str]] = {}  # file source -> highlighted lines, computed once
        self.watchdog: threading.Timer | None = None
        # Hooks for the warm kernel (kernel.py); None in a batch trace. `on_new_code(code, steps)`
        # hears of each code object the first time it runs, wherever it runs (even under @stepover);
        # `section_watch = (code, lines, hook)` calls hook() after the step of each of those lines
        # of the root activation of `code` (main()'s lines that call a section) is recorded.
        self.on_new_code: Callable[[types.CodeType, int], None] | None = None
        self.section_watch: tuple[types.CodeType, frozenset[int], Callable[[], None]] | None = None
        self.highlight: Callable[[str], list[str]] | None = None  # the kernel's, which reuses unchanged parts
        # Output as pieces per (step, "o" or "e"), joined once when the trace is written: adding
        # to a growing string would be quadratic for a line that prints thousands of times.
        self._output: dict[tuple[int, str], list[str]] = {}
        self._output_left = MAX_OUTPUT
        self.solutions: list[dict] = []  # `with solution():` blocks, in the order they opened
        self._solution_headers: list[list | None] = []  # [call, line] of each block's `with` step

    # --- the Recorder protocol (primitives.py) ---------------------------------------------

    def add_rendering(self, rendering: dict) -> None:
        index = self._current_step()
        if index >= 0:
            _extras(self.steps[index]).setdefault("r", []).append(rendering)

    def file_index(self, path: str) -> int:
        """The index of `path` in the trace's files, adding it (source, directives) if new."""
        real = os.path.realpath(path)
        index = self._file_ids.get(real)
        if index is None:
            shown = display_path(real)
            if real in self._traced:
                source, directives = self._traced[real]
            else:  # only linked to: its directives matter for @hide alone, so stay quiet
                source = read_source(real)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    directives = parse_directives(source, shown, course_compat.uses_course_runtime(source))
            index = self._file_ids[real] = len(self.files)
            self.files.append(_File(shown, source, directives))
        return index

    def traces_file(self, filename: str) -> bool:
        """Whether code from `filename` (a co_filename) is traced: lecture code, not library code."""
        return os.path.realpath(filename) in self._traced

    def traced_files(self) -> list[str]:
        """The real paths of the files traced (the lecture first)."""
        return list(self._traced)

    def add_collective(self, record: dict) -> None:
        """A torch.distributed collective the current line called, with its tensors before and
        after (runtime/tracing/ranks.py records it in a rank's process)."""
        index = self._current_step()
        if index >= 0:
            _extras(self.steps[index]).setdefault("collective", []).append(record)

    def open_solution(self, path: str, first_line: int, last_line: int) -> int:
        # The block's steps are the ones recorded from now on: the `with` line's own step is before.
        self.solutions.append({"file": self.file_index(path), "lines": [first_line, last_line],
                               "steps": [len(self.steps), len(self.steps) - 1]})
        self._solution_headers.append(self.steps[-1][:2] if self.steps else None)
        return len(self.solutions) - 1

    def close_solution(self, solution: int) -> None:
        last = len(self.steps) - 1
        # Leaving the block runs the `with` line once more: that step is not the solution's.
        if last >= 0 and self.steps[last][:2] == self._solution_headers[solution]:
            last -= 1
        self.solutions[solution]["steps"][1] = last

    # --- running ---------------------------------------------------------------------------

    def run(self, function: Callable[[], Any]) -> BaseException | None:
        """Call `function` with tracing on; return the exception that ended it, if any
        (sys.exit() with a non-zero code counts as one).

        A stop by max_steps / timeout is not returned: it sets stop_status and stop_message.
        """
        from cs336_lectures.runtime.lecture import primitives
        stdin, stdout, stderr = sys.stdin, sys.stdout, sys.stderr
        cwd = os.getcwd()  # a lecture may chdir; the trace is still written where it was asked for
        previous_trace = sys.gettrace()
        self._catch_sigint()
        watchdog = self.watchdog = self._start_watchdog()
        self.started = time.perf_counter()
        self.checkpoint = min(CHECK_EVERY, self.max_steps if self.max_steps is not None else CHECK_EVERY)
        failure: BaseException | None = None
        primitives.set_recorder(self)
        sys.stdout, sys.stderr = StepWriter(self, "o", stdout), StepWriter(self, "e", stderr)
        sys.stdin = io.StringIO()  # input() gets EOFError at once: a trace never waits for a keyboard
        # The steps are many small containers; each collection they trigger would otherwise
        # rescan everything alive before the run (torch's import alone is ~10^5 objects).
        gc.freeze()
        try:
            try:
                global_tracer = self._global_tracer()
                sys.settrace(global_tracer)
                try:
                    result = function()
                    if inspect.iscoroutine(result):  # an `async def main()`
                        import asyncio

                        asyncio.run(result)
                    if sys.gettrace() is not global_tracer and self.stop_status is None:
                        self._note_tracing_lost()
                finally:
                    sys.settrace(previous_trace)
                    self._stop_watchdog(watchdog)
            except _StopTracing:
                pass  # check_limits has set stop_status and stop_message
        except KeyboardInterrupt as interrupt:
            if not self._watchdog_fired:
                failure = interrupt  # Ctrl-C: the partial trace is kept, ending in an error step
        except SystemExit as exit:  # sys.exit() in a lecture: a failure unless it says success
            if exit.code not in (None, 0):
                failure = exit
        except BaseException as error:  # the lecture failed (its own BaseException subclasses too): into the trace
            failure = error
        finally:
            self._release_sigint()
            gc.unfreeze()
            sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
            os.chdir(cwd)
            primitives.set_recorder(None)
            self.current = None
        if self._watchdog_fired and self.stop_status is None:
            self._note_timeout()
        self.elapsed_s = time.perf_counter() - self.started
        if failure is not None:
            self._record_error(failure)
        return failure

    def _global_tracer(self) -> Callable:
        """The function given to sys.settrace: called for every call event in the thread.

        Most calls are library calls, and the warm kernel's runs carry an audit hook (effects.py)
        that frame.f_code and id() would wake on every one. So a call is first answered from the
        module its frame runs in (f_globals is not audited): once a frame of a module's own,
        untraced code has run with that module's globals, later frames with them are not traced,
        whatever their code (a lecture function re-made with a library's globals after that
        library ran, `types.FunctionType(f.__code__, numpy.__dict__)`, runs untraced; the same
        in a fresh and in a resumed run, which replay the same calls). Other frames are answered
        by their code's file name, then by the code object."""
        function_of_code = self._function_of_code.get
        file_of_filename = self._file_of_filename.get
        untraced_module = self._untraced_modules.get
        globals_file = dict.get  # the dict's own, never a method a globals subclass overrides
        register = self._register_code
        start = self._start_call
        note_module = self._note_untraced_module

        def on_call(frame: types.FrameType, event: str, arg: Any):
            module_file = globals_file(frame.f_globals, "__file__")
            try:
                untraced = untraced_module(module_file)
            except TypeError:  # a module that set its __file__ to something unhashable
                untraced = False
            if untraced or (untraced is None and note_module(module_file, frame.f_code)):
                return None
            code = frame.f_code
            if file_of_filename(code.co_filename) == -1:
                return None
            function = function_of_code(id(code))
            if function is None:
                function = register(code)
            if function < 0:
                return None
            return start(frame, function)

        return on_call

    def _note_untraced_module(self, module_file: Any, code: types.CodeType) -> bool:
        """Whether a frame running `code`, the first of the run with globals whose `__file__` is
        `module_file`, goes untraced, and with it the later frames with those globals: when
        neither that file nor the code's file is traced (a lecture that rebinds its own
        `__file__` stays traced)."""
        if type(module_file) is not str:
            return False
        untraced = not self.traces_file(module_file) and not self.traces_file(code.co_filename)
        self._untraced_modules[module_file] = untraced
        return untraced

    def _register_code(self, code: types.CodeType) -> int:
        if self.on_new_code is not None:
            self.on_new_code(code, len(self.steps))
        file = self._file_of_filename.get(code.co_filename)
        if file is None:
            real = os.path.realpath(code.co_filename)
            file = self.file_index(real) if real in self._traced else -1
            self._file_of_filename[code.co_filename] = file
        function = -1
        if file >= 0:
            function = len(self.functions)
            self.functions.append([file, getattr(code, "co_qualname", code.co_name), code.co_firstlineno])
        self._function_of_code[id(code)] = function
        self._codes.append(code)
        return function

    def _start_call(self, frame: types.FrameType, function: int):
        # frame.f_trace is set only when this frame ran before under us: a resumed generator.
        resumed = getattr(frame.f_trace, "__self__", None)
        if resumed is not None and not (isinstance(resumed, _Activation) and resumed.tracer is self):
            resumed = None  # someone else's tracer, or an earlier trace's
        if self.suppress:
            frame.f_trace = resumed.dormant if resumed is not None else None
            if resumed is not None:  # its suspended line now finishes untraced: nothing is left pending
                resumed.step, resumed.pending = -1, None
            return None
        parent = self.current
        parent_step = parent.step if parent is not None else -1
        call_id = len(self.calls)
        if resumed is None:
            self.calls.append([function, parent_step])
            values = {}
        else:
            self.calls.append([function, parent_step, resumed.call_id])
            values = resumed.values
        directives = self.files[self.functions[function][0]].directives
        activation = _Activation(self, call_id, parent, directives, values)
        if resumed is not None and resumed.step >= 0:  # the suspended line (yield, await) is still running
            activation.step, activation.pending, resumed.pending = resumed.step, resumed.pending, None
        else:
            activation.arguments = _inspected_arguments(frame.f_code, directives)
            if activation.arguments:
                activation.callback = activation.enter
        self.current = activation
        if self.section_watch is not None and parent is None and frame.f_code is self.section_watch[0]:
            _watch_sections(activation, *self.section_watch[1:])
        return activation.callback

    def finish_line(self, activation: _Activation, frame: types.FrameType, event: str) -> None:
        """Called at the next event of the frame after a line with a directive: the line has run.

        A frame only suspending (yield, await) has run its line up to there: its values are recorded
        now, since it may never be resumed, and again (when changed) by the resumed activation,
        which finishes the line."""
        directive = activation.pending
        sigints = self._sigints
        if directive.stepover:
            self.suppress = False
        suspending = event == "return" and frame.f_code.co_code[frame.f_lasti] == _YIELD_VALUE
        if not suspending:
            activation.pending = None
        for name, path in directive.inspect:
            value = _lookup(frame, path)
            if value is not _NOT_FOUND:
                self._record_value(activation, name, value)
        if self.inspect_all:
            for name, value in list(frame.f_locals.items()):
                # Not dunders, nor a comprehension's hidden iterator (named ".0"), nor definitions.
                if name.isidentifier() and not (name.startswith("__") or isinstance(
                        value, (types.ModuleType, types.FunctionType, type))):
                    self._record_value(activation, name, value)
        if directive.clear and not suspending:
            extras = _extras(self.steps[activation.step])
            cleared = extras.setdefault("c", [])
            for name in directive.clear:
                activation.values.pop(name, None)
                cleared.append(name)
        if self._sigints != sigints:  # a real Ctrl-C arrived while values were read, and reading swallowed it
            raise KeyboardInterrupt

    def _record_value(self, activation: _Activation, name: str, value: Any) -> None:
        try:
            encoded = self.encoder.encode(value)
        except BaseException as error:  # the encoder is meant never to raise; reading a value never ends a run
            encoded = {"t": "object", "cls": type(value).__qualname__, "repr": None, "error": repr(error)[:200]}
        if activation.values.get(name, _NOT_FOUND) != encoded:
            activation.values[name] = encoded
            _extras(self.steps[activation.step]).setdefault("v", {})[name] = encoded

    def add_output(self, key: str, text: str) -> None:
        """Text the lecture wrote to stdout ("o") or stderr ("e"), for the current step."""
        index = self._current_step()
        if index < 0 or not text or self._output_left <= 0 or self.stop_status is not None:
            return  # nothing of what a lecture does after a limit stopped it belongs in the trace
        if len(text) > self._output_left:
            text = text[: self._output_left] + OUTPUT_CUT
        self._output_left -= len(text)
        self._output.setdefault((index, key), []).append(text)

    def _current_step(self) -> int:
        """The step that output and renderings belong to: the innermost traced line (-1: none yet)."""
        return self.current.step if self.current is not None else len(self.steps) - 1

    # --- limits and progress ---------------------------------------------------------------

    def check_limits(self) -> None:
        """Called every CHECK_EVERY steps (and at exactly max_steps)."""
        count = len(self.steps)
        if self.max_steps is not None and count >= self.max_steps:
            self.stop_status = "max_steps"
            self.stop_message = f"stopped after {count} steps (the limit set by --max-steps)"
            self._stopping()
            raise _StopTracing
        elapsed = time.perf_counter() - self.started
        if self.timeout is not None and elapsed >= self.timeout:
            self._note_timeout()
            self._stopping()
            raise _StopTracing
        if self.on_progress is not None:
            self.on_progress(count, elapsed)
        self.checkpoint = count + CHECK_EVERY
        if self.max_steps is not None:
            self.checkpoint = min(self.checkpoint, self.max_steps)

    def _start_watchdog(self) -> threading.Timer | None:
        """Time out even while the lecture is inside untraced code, where no step is checked."""
        if self.timeout is None or threading.current_thread() is not threading.main_thread():
            return None
        self._watchdog_lock = threading.Lock()
        self._watchdog_armed = True

        def fire() -> None:
            with self._watchdog_lock:
                # A run the step check has stopped is left to what enforces the stop (supervisor.py,
                # the kernel): an interrupt now would land anywhere in what a lecture that caught the
                # stop does next, the tracer's own code included.
                if self._watchdog_armed and self.stop_status is None:
                    self._watchdog_fired = True
                    # The stop holds from now on: a lecture that catches the interrupt below and
                    # goes on adds no output, and its next traced line ends the tracing.
                    self._note_timeout()
                    self.checkpoint = 0
                    # A real SIGINT also wakes a main thread blocked in sleep() or I/O.
                    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            if self._watchdog_fired:
                self._stopping()

        timer = threading.Timer(self.timeout + 0.5, fire)  # the step check normally fires first
        timer.daemon = True
        timer.start()
        return timer

    def _stop_watchdog(self, timer: threading.Timer | None) -> None:
        if timer is None:
            return
        with self._watchdog_lock:
            self._watchdog_armed = False
        timer.cancel()
        # A signal sent but not yet handled raises soon: let that happen here, not later.
        for _ in range(100):
            if not self._watchdog_fired or self._sigints:
                break
            time.sleep(0.01)

    def _catch_sigint(self) -> None:
        """Count SIGINTs, so that reading a value can tell a real Ctrl-C (or the watchdog's signal)
        from a KeyboardInterrupt raised by the value's own code. Our own handler also works when
        the process was started with SIGINT ignored."""
        if threading.current_thread() is not threading.main_thread():
            return

        def on_sigint(signum: int, frame: types.FrameType | None) -> None:
            self._sigints += 1
            raise KeyboardInterrupt

        self._previous_sigint = signal.signal(signal.SIGINT, on_sigint)

    def _release_sigint(self) -> None:
        if self._previous_sigint is not None:
            signal.signal(signal.SIGINT, self._previous_sigint)
            self._previous_sigint = None

    def _stopping(self) -> None:
        """A limit is reached: a supervisor makes sure the run ends even if the lecture catches the stop."""
        hook, self.on_stop = self.on_stop, None  # once, though both the step check and the watchdog may stop
        if hook is not None:
            hook()

    def _note_tracing_lost(self) -> None:
        # CPython switches tracing off for good when the trace function itself raises, and at the
        # recursion limit the call into it is what raises; the lecture may then catch the error.
        self.stop_status = "error"
        self.stop_message = (f"tracing stopped at step {len(self.steps)}, before the lecture ended: it reached "
                             f"Python's recursion limit (or called sys.settrace); the rest of the run is not in the trace")

    def _note_timeout(self) -> None:
        self.stop_status = "timeout"
        self.stop_message = (f"stopped after {self.timeout:g} s (the limit set by {self.timeout_source}), "
                             f"at step {len(self.steps)}")

    # --- the error step --------------------------------------------------------------------

    def _record_error(self, error: BaseException) -> None:
        """Put the error on the failing line of the innermost traced frame (a final step)."""
        site = None
        for tb in traceback_entries(error.__traceback__):  # outermost first: the last match wins
            activation = getattr(tb.tb_frame.f_trace, "__self__", None)
            if isinstance(activation, _Activation) and activation.tracer is self:
                site = (activation, tb.tb_lineno)
        info = {"type": type(error).__qualname__, "message": message_of(error), "traceback": format_traceback(error, __file__)}
        if site is None:  # it failed outside any traced line: the last step carries it
            if self.steps:
                _extras(self.steps[-1])["x"] = info
            return
        activation, line = site
        last = self.steps[-1] if self.steps else None
        if last is not None and last[0] == activation.call_id and last[1] == line:
            _extras(last)["x"] = info
        else:
            self.steps.append([activation.call_id, line, {"x": info}])

    # --- output ----------------------------------------------------------------------------

    def to_dict(self, header: dict) -> dict:
        """The trace as the JSON-able dict trace/README.md describes."""
        for (index, key), pieces in self._output.items():
            _extras(self.steps[index])[key] = "".join(pieces)
        return self._trace_dict(header, self.steps, self.calls, self.functions, self.files, self.solutions)

    def snapshot(self, header: dict) -> dict:
        """The trace so far, for another thread while the run goes on: it changes nothing of the
        tracer's state, and copies the lists first (steps before the calls they refer to)."""
        steps = list(self.steps)
        calls, functions, files = list(self.calls), list(self.functions), list(self.files)
        for (index, key), pieces in list(self._output.items()):
            if index < len(steps):
                step = steps[index]
                steps[index] = [step[0], step[1], {**(step[2] if len(step) > 2 else {}), key: "".join(pieces)}]
        # A block closed after the steps were copied may end past them: cut it at the copy's end.
        solutions = [{**entry, "steps": [min(entry["steps"][0], len(steps)), min(entry["steps"][1], len(steps) - 1)]}
                     for entry in list(self.solutions)]
        return self._trace_dict(header, steps, calls, functions, files, solutions)

    def highlighted(self, source: str) -> list[str]:
        """A file's source as highlighted HTML lines, computed once per text (the warm kernel asks
        before it forks a checkpoint, so that resumed runs inherit them)."""
        if source not in self._html:
            from cs336_lectures.runtime.render.rendering import highlight_lines

            highlight = self.highlight or highlight_lines  # the kernel's reuses the unchanged parts of an edited file
            self._html[source] = highlight(source)
        return self._html[source]

    def _trace_dict(self, header: dict, steps: list, calls: list, functions: list, files: list[_File],
                    solutions: list[dict]) -> dict:
        listed = []
        for file in files:
            listed.append({
                "path": file.path,
                "source": file.source,
                "html": self.highlighted(file.source),
                "hidden": sorted(line for line, directive in file.directives.items() if directive.hide),
            })
        header = {**header, "num_steps": len(steps)}
        trace = {"format": FORMAT, "version": VERSION, "header": header, "files": listed,
                 "functions": functions, "calls": calls, "steps": steps}
        if solutions:
            trace["solutions"] = solutions
        return trace


def _watch_sections(activation: _Activation, lines: frozenset[int], hook: Callable[[], None]) -> None:
    """Give the activation a local tracer that also calls hook() once a line in `lines` is recorded."""
    trace = activation.trace

    def watch(owner: _Activation, frame: types.FrameType, event: str, arg: Any):
        trace(frame, event, arg)
        if event == "line" and frame.f_lineno in lines:
            hook()
        return watched

    # A bound method, like every local tracer: the error step finds the activation as f_trace.__self__.
    watched = types.MethodType(watch, activation)
    activation.callback = watched


def _extras(step: list) -> dict:
    """A step's extras dict (index 2), added on first use: most steps have none."""
    if len(step) == 2:
        step.append({})
    return step[2]


def _inspected_arguments(code: types.CodeType, directives: dict[int, Directive]) -> tuple:
    """The (name, path) pairs that the `def` line of a function inspects among its parameters."""
    directive = directives.get(code.co_firstlineno)
    if directive is None or not directive.inspect or code.co_name.startswith("<"):
        return ()  # most calls; a comprehension or lambda shares its line with other code
    count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS) \
        + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    parameters = code.co_varnames[:count]
    return tuple((name, path) for name, path in directive.inspect if path[0] in parameters)


def _lookup(frame: types.FrameType, path: tuple[str, ...]) -> Any:
    """The value of a dotted name in the frame (locals, globals, builtins), or _NOT_FOUND."""
    name = path[0]
    value = frame.f_locals.get(name, _NOT_FOUND)
    if value is _NOT_FOUND:
        value = frame.f_globals.get(name, _NOT_FOUND)
    if value is _NOT_FOUND:
        value = getattr(builtins, name, _NOT_FOUND)
    for attribute in path[1:]:
        if value is _NOT_FOUND:
            break
        try:
            value = getattr(value, attribute)
        except BaseException:  # a property may raise anything, SystemExit too; an unreadable value is just absent
            value = _NOT_FOUND
    return value


def error_line(error: BaseException, tracer: Tracer) -> str:
    where = ""
    last = tracer.steps[-1] if tracer.steps else None
    if last is not None and len(last) > 2 and "x" in last[2]:
        file = tracer.files[tracer.functions[tracer.calls[last[0]][0]][0]].path
        where = f" ({file}:{last[1]})"
    message = message_of(error).strip().splitlines()
    return f"{type(error).__name__}{': ' + message[0] if message else ''}{where}"
