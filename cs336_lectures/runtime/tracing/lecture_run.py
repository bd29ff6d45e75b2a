"""Tracing one lecture file: `trace_lecture` checks the file, imports it as a fresh module,
seeds the generators, runs its main() (a section, or its top level) under a `Tracer`, follows
the processes it starts (ranks) and writes the trace. Everything that calls the engine goes
through here: the `trace` command, its supervised child, the warm kernel, batch jobs.

    >>> result = trace_lecture(Path("lectures/lecture_01.py"), output_dir=Path("var/traces"))
    >>> result.status, result.num_steps
    ('ok', 5123)
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import importlib.util
import inspect
import os
import platform
import sys
import types
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

from cs336_lectures.resources import version
from cs336_lectures.runtime.course import compat as course_compat
from cs336_lectures.runtime.trace.format import write_trace
from cs336_lectures.runtime.tracing.engine import Tracer, error_line
from cs336_lectures.runtime.tracing.failures import message_of, traceback_entries
from cs336_lectures.runtime.tracing.source_text import read_source
from cs336_lectures.runtime.tracing.ranks import follow_ranks
from cs336_lectures.runtime.tracing.result import LectureError, TraceResult
from cs336_lectures.runtime.tracing.seeding import seed_everything

if TYPE_CHECKING:
    from cs336_lectures.runtime.tracing.supervisor import Supervision


MAX_DOCSTRING = 2000  # characters kept in the header: the list of lectures reads it from the file's start


def _module_docstring(module: types.ModuleType) -> str | None:
    """The lecture's docstring, dedented and bounded: the list of lectures shows its first line."""
    doc = module.__doc__
    if not isinstance(doc, str) or not doc.strip():
        return None
    return inspect.cleandoc(doc)[:MAX_DOCSTRING]


@dataclass(frozen=True)
class TraceSettings:
    """How to trace a lecture, besides which file and where to: what `trace`'s options set. The one
    record from which `trace`, its batch jobs and the warm kernel's runs make their trace_lecture
    call, so that the three trace a file alike.

        >>> trace_lecture(path, output_dir=out, **TraceSettings(max_steps=1000).arguments())
    """

    section: str | None = None
    trace_modules: tuple[str, ...] = ()
    inspect_all: bool = False
    max_steps: int | None = None
    timeout: float | None = None
    seed: int = 0
    command: tuple[str, ...] = ()  # the command line the trace's header records

    @classmethod
    def from_options(cls, args: Any, command: tuple[str, ...]) -> TraceSettings:
        """The settings `trace`'s parsed options give."""
        return cls(section=args.section, trace_modules=tuple(args.trace_module), inspect_all=args.inspect_all,
                   max_steps=args.max_steps, timeout=args.timeout, seed=args.seed, command=tuple(command))

    def arguments(self) -> dict[str, Any]:
        """trace_lecture's keyword arguments for these settings."""
        return dataclasses.asdict(self) | {"trace_modules": self.trace_modules, "command": self.command}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (a batch job's request): `TraceSettings.from_dict(s.to_dict()) == s`."""
        return dataclasses.asdict(self) | {"trace_modules": list(self.trace_modules), "command": list(self.command)}

    @classmethod
    def from_dict(cls, fields: dict[str, Any]) -> TraceSettings:
        return cls(**{**fields, "trace_modules": tuple(fields["trace_modules"]), "command": tuple(fields["command"])})


def trace_lecture(path: Path, *, output_dir: Path, section: str | None = None,
                  trace_modules: tuple[str, ...] = (), inspect_all: bool = False,
                  max_steps: int | None = None, timeout: float | None = None, timeout_source: str = "--timeout",
                  seed: int = 0, quiet: bool = False, command: tuple[str, ...] = (),
                  report_progress: Callable[..., None] | None = None,
                  supervision: Supervision | None = None, hooks: TraceHooks | None = None) -> TraceResult:
    """Trace `path` (its main(), a section, or its top level) into `<output_dir>/<stem>[.<section>].json`.

    `report_progress(steps, elapsed_s, phase)`, when given, replaces the terminal's progress display
    (a batch job reports to a file). Raises LectureError when the lecture cannot be started at all.
    `supervision` (supervisor.py, in the child process of `cs336-lectures trace`) watches the run,
    to end it whatever it does. `hooks` lets the warm kernel watch the import and the run
    (kernel.py); a batch trace has none.
    """
    entry = _check_lecture(path, section)
    title = trace_title(path, section)
    from cs336_lectures.runtime.render.assets import AssetStore

    with _progress_display(title, quiet or report_progress is not None) as on_progress:
        on_progress = report_progress or on_progress
        with _lecture_module(path, as_main=entry == "<module>") as (module, load), \
                course_compat.installed_for(read_source(path)):
            # Looked up as the lecture's own imports are: with the lecture's folder on sys.path.
            traced = [path.resolve(), *_module_files(trace_modules)]
            assets = AssetStore(output_dir.absolute() / "assets", Path("var/files").absolute())  # the lecture may chdir
            tracer = Tracer(traced, assets=assets,
                            inspect_all=inspect_all, max_steps=max_steps, timeout=timeout,
                            timeout_source=timeout_source, on_progress=on_progress)
            seed_everything(seed)
            created = creation_time()
            if entry == "<module>":
                run = load
            else:
                _import_untraced(path, hooks.importing(load) if hooks is not None else load)
                run = _entry_function(path, module, entry)
            _make_folder(output_dir)  # before the run, so that a bad -o does not cost a whole lecture
            header = {"title": title, "source": str(path), "entry": entry, "created": created,
                      "elapsed_s": 0.0, **environment(), "command": list(command), "seed": seed, "status": "ok"}
            if supervision is not None:
                supervision.watch(tracer, header)
            if hooks is not None:
                hooks.starting(tracer, module, entry, header)
            with follow_ranks(tracer, assets_dir=assets.folder, files_dir=assets.cache_dir,
                              inspect_all=inspect_all, max_steps=max_steps, seed=seed) as ranks:
                failure = tracer.run(run)
            if supervision is not None:
                supervision.run_returned()
            docstring = _module_docstring(module)
            if entry == "<module>" and _is_top_level_import_error(path, failure):
                raise _import_failure(path, failure)  # as it is for a lecture with a main()

        header["elapsed_s"] = round(tracer.elapsed_s, 3)
        if docstring:
            header["docstring"] = docstring
        message = None
        if failure is not None:
            header["status"] = "error"
            message = error_line(failure, tracer)
        elif tracer.stop_status is not None:
            header["status"] = tracer.stop_status
            message = tracer.stop_message
        if message is not None:
            header["message"] = message
        if on_progress is not None:
            on_progress(len(tracer.steps), tracer.elapsed_s, "writing")
        try:
            trace = ranks.merge(tracer.to_dict(header))
            out_path = write_trace(trace, output_dir / f"{title}.json")
        except OSError as error:
            raise LectureError(f"{output_dir / title}.json: cannot write the trace: {error.strerror or error}") from None
    message = trace["header"].get("message")  # the merge may say which rank failed
    return TraceResult(out_path, header["status"], len(trace["steps"]), header["elapsed_s"], message,
                       interrupted=isinstance(failure, KeyboardInterrupt))


class TraceHooks(Protocol):
    """What the warm kernel (kernel.py) adds to a run of trace_lecture."""

    def importing(self, load: Callable[[], None]) -> Callable[[], None]:
        """The untraced import of the lecture, wrapped."""

    def starting(self, tracer: Tracer, module: types.ModuleType, entry: str, header: dict) -> None:
        """Called once the tracer is ready, just before the traced run (`header`: the trace's, so far)."""


def creation_time() -> str:
    """Now, as a trace header's `created` (UTC, to the second)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def trace_title(path: Path, section: str | None = None) -> str:
    """The trace's name: the file stem, plus `.SECTION` for one section ('lecture_01.tokenization')."""
    return path.stem if section is None else f"{path.stem}.{section}"


def _check_lecture(path: Path, section: str | None) -> str:
    """The entry to trace (a function name or <module>); LectureError for what cannot run."""
    if not path.exists():
        raise LectureError(f"{path}: no such file")
    if not path.is_file():
        raise LectureError(f"{path}: not a file")
    try:
        tree = ast.parse(read_source(path), filename=str(path))
    except SyntaxError as error:
        where = f"{path}:{error.lineno}" if error.lineno else str(path)
        raise LectureError(f"{where}: syntax error: {error.msg}") from None
    except (RecursionError, MemoryError) as error:  # Python cannot compile it either
        raise LectureError(f"{path}: cannot compile: {error or type(error).__name__}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise LectureError(f"{path}: cannot read: {error}") from None
    functions = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if section is not None:
        if section not in functions:
            known = ", ".join(sorted(functions)) or "none"
            raise LectureError(f"{path}: no top-level function {section!r} to trace (functions: {known})")
        return section
    return "main" if "main" in functions else "<module>"


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LectureError(f"{folder}: cannot create the output folder: {error.strerror or error}") from None


def _module_files(names: tuple[str, ...]) -> list[Path]:
    """The source files of the modules named by --trace-module (every file of a package)."""
    files: list[Path] = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except Exception as error:  # ImportError, or anything a parent package raises while it is imported
            raise LectureError(f"--trace-module {name}: {type(error).__name__}: {message_of(error)}") from None
        if spec is not None and spec.submodule_search_locations:  # a package, maybe a namespace one
            for folder in spec.submodule_search_locations:
                files.extend(sorted(Path(folder).rglob("*.py")))
        elif spec is not None and spec.origin and spec.origin.endswith(".py"):
            files.append(Path(spec.origin))
        else:
            raise LectureError(f"--trace-module {name}: no such module with Python source")
    # The runtime itself is never traced: text() would then record its own lines, not the lecture's.
    runtime = Path(__file__).resolve().parents[1]
    package_entry = {runtime.parent / name for name in ("__init__.py", "__main__.py", "atomic.py")}
    return [file for file in files
            if runtime not in file.resolve().parents and file.resolve() not in package_entry]


@contextmanager
def _lecture_module(path: Path, as_main: bool = False) -> Iterator[tuple[types.ModuleType, Callable[[], None]]]:
    """A fresh module for the file, its folder first on sys.path and sys.argv as `python FILE`
    would set them (not the tracer's own arguments), all undone after.

    The module is named after the file's stem, so that the top level of a lecture with a main()
    runs as an import; `as_main` names it `__main__` instead, as `python FILE` does, for a lecture
    that is all top level (its `if __name__ == "__main__":` block runs)."""
    folder = str(path.resolve().parent)
    name = "__main__" if as_main else path.stem
    saved = sys.modules.get(name)
    saved_file = getattr(saved, "__file__", None)
    if not as_main and saved is not None and not (saved_file and os.path.samefile(saved_file, path)):
        # Replacing another module would hand the lecture to every `import <stem>` during the run.
        raise LectureError(f"{path}: the module name {path.stem!r} is already in use "
                           f"({saved_file or 'a built-in module'}); rename the lecture")
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, folder)
    argv, sys.argv = sys.argv, [str(path)]
    try:
        yield module, lambda: spec.loader.exec_module(module)
    finally:
        sys.argv = argv
        if folder in sys.path:
            sys.path.remove(folder)
        if saved is not None:
            sys.modules[name] = saved
        elif sys.modules.get(name) is module:
            del sys.modules[name]


def _import_untraced(path: Path, load: Callable[[], None]) -> None:
    try:
        load()
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # SystemExit and the lecture's own BaseException subclasses too
        raise _import_failure(path, error) from None


def _entry_function(path: Path, module: types.ModuleType, entry: str) -> Callable[[], Any]:
    """The lecture's function `entry` (main, a section), refused unless it can be called with no arguments."""
    function = vars(module).get(entry)
    if not callable(function):
        raise LectureError(f"{path}: {entry} is not a function once the top level has run")
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # no signature to read: the call will tell
        return function
    required = [parameter.name for parameter in parameters if parameter.default is parameter.empty
                and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]
    if required:
        raise LectureError(f"{path}: cannot trace {entry}(): it needs arguments ({', '.join(required)}), "
                           f"and the tracer calls it with none")
    return function


def _import_failure(path: Path, error: BaseException) -> LectureError:
    site = _lecture_frame(path, error)
    where = f"{path}:{site.tb_lineno}" if site is not None else str(path)
    return LectureError(f"{where}: import failed: {type(error).__name__}: {message_of(error)}")


def _is_top_level_import_error(path: Path, error: BaseException | None) -> bool:
    site = _lecture_frame(path, error) if isinstance(error, ImportError) else None
    return site is not None and site.tb_frame.f_code.co_name == "<module>"


def _lecture_frame(path: Path, error: BaseException) -> types.TracebackType | None:
    """The last traceback entry in `path` (where the lecture went wrong), if any."""
    real = os.path.realpath(path)
    site = None
    for tb in traceback_entries(error.__traceback__):
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == real:
            site = tb
    return site


def environment() -> dict:
    """The header fields saying what the trace ran on."""
    try:
        import torch
    except ImportError:
        torch_version, device = "not installed", "cpu"
    else:
        torch_version = torch.__version__
        device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    return {"cs336_lectures": version(), "python": platform.python_version(), "torch": torch_version,
            "platform": platform.platform(), "device": device}


@contextmanager
def _progress_display(title: str, quiet: bool) -> Iterator[Callable[..., None] | None]:
    """A rich spinner with the step count and elapsed time on a terminal's stderr, redrawn a few
    times a second by rich's own thread; yields `update(steps, elapsed, phase="tracing")`."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TextColumn("{task.completed} steps"),
                        TimeElapsedColumn(), console=Console(file=sys.stderr), transient=True,
                        refresh_per_second=4, redirect_stdout=False, redirect_stderr=False)
    task = progress.add_task(f"tracing {title}", total=None)

    def update(steps: int, elapsed: float, phase: str = "tracing") -> None:
        progress.update(task, completed=steps, description=f"{phase} {title}")

    with progress:
        yield update
