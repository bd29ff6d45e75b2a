"""The command line: `cs336-lectures new | trace | serve | build | ...` (also `python -m cs336_lectures`).

`trace` runs lectures under the tracer and writes their traces; `serve` and `build` belong to
cs336_lectures.runtime.server.http_server and cs336_lectures.runtime.publish.site, imported only when asked for, so that tracing
starts fast. Exit status: 0 success, 1 a lecture failed or was stopped (its trace is still
written), 2 the command could not run (missing file, syntax error, failed import, bad flag).

    $ cs336-lectures trace lectures/lecture_01.py -o var/traces
"""

from __future__ import annotations

import argparse
import functools
import importlib
import math
import os
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from cs336_lectures.resources import version
from cs336_lectures.runtime.tracing import DEFAULT_MAX_STEPS
from cs336_lectures.runtime.terminal_text import print_visible, show_warnings_visibly, visible

if TYPE_CHECKING:
    from cs336_lectures.runtime.tracing.result import TraceResult

PROG = "cs336-lectures"
DELEGATED = {  # subcommand -> (module defining add_arguments(parser) and run(args), summary)
    "new": ("cs336_lectures.runtime.cli.new_lecture", "write a short lecture to start from (and its translation catalogs)"),
    "serve": ("cs336_lectures.runtime.cli.serve", "serve the viewer and traces; re-trace lectures when they change"),
    "build": ("cs336_lectures.runtime.publish.site", "export the viewer and traces as a static site"),
    "import": ("cs336_lectures.runtime.course.importer", "convert traces published by the Stanford course into ours"),
    "export": ("cs336_lectures.runtime.notebooks.export", "write a lecture or a trace as a Jupyter notebook or markdown"),
    "show": ("cs336_lectures.runtime.readers.terminal", "show a trace in the terminal, step by step"),
    "i18n": ("cs336_lectures.runtime.i18n.commands", "extract and check the translation catalogs of lectures"),
    "jobs": ("cs336_lectures.runtime.cli.jobs", "list trace jobs submitted with --executor, or wait for one"),
}

TRACE_DESCRIPTION = """\
Run each lecture's main() under the tracer (a --section function instead, or the top level
when the file has no main) and write OUT/STEM.json (OUT/STEM.SECTION.json with --section),
with its images and plots in OUT/assets/. The top level of a file with a main() runs first,
untraced, as an import of the module STEM with the file's folder on sys.path; a file without
one runs as `python FILE` runs it, as __main__. main() or the section must take no arguments.
Modules named by --trace-module are found as the lecture's imports are. What the lecture
prints goes into the trace; its stdin is empty, so input() raises EOFError instead of waiting."""
TRACE_EPILOG = """\
directives, in a comment on a line of the lecture:
  # @inspect x y.attr   record these values after the line runs (when they changed)
  # @clear x            stop showing x
  # @stepover           do not trace into calls made on this line
  # @hide               never show this line in the viewer

exit status: 0 every trace is complete; 1 a lecture raised, or was stopped by --max-steps
or --timeout (its trace is written, ending where it stopped); 2 a lecture could not start
(missing file, syntax error, failed import, unknown --section or --trace-module)."""


def main(argv: list[str] | None = None) -> int:
    """Run the command line (sys.argv[1:] when `argv` is None); returns the exit status."""
    show_warnings_visibly()
    if argv is None and sys.argv[1:2] in (["trace"], ["export"]):  # export traces a lecture first
        _fix_hash_seed()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "trace":
        return trace(args, argv)
    module = _delegate(args.command)
    if module is None:
        return 2
    return module.run(args)


class _Parser(argparse.ArgumentParser):
    """argparse whose error line shows control characters as literals: an argument it quotes can be
    a file name (from a glob) holding escape sequences. Subcommands' parsers are of this class too."""

    def error(self, message: str):
        super().error(visible(message))


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser; serve/build options come from their modules when that command is asked for."""
    parser = _Parser(
        prog=PROG,
        description="Executable lectures: trace a lecture into a JSON trace, then view it in the browser.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers = [commands.add_parser(
        "trace", help="run lectures under the tracer and write their traces",
        formatter_class=argparse.RawDescriptionHelpFormatter, description=TRACE_DESCRIPTION,
        epilog=TRACE_EPILOG,
    )]
    add_trace_arguments(subparsers[0])
    # The top-level --help shows every command's usage, so serve/build options are loaded for it too.
    top_level_help = not argv or argv[0] in ("-h", "--help")
    for name, (module_name, about) in DELEGATED.items():
        sub = commands.add_parser(name, help=about, description=about)
        if top_level_help or argv[0] == name:
            module = _delegate(name)
            if module is not None:
                module.add_arguments(sub)
        subparsers.append(sub)
    usages = "".join(_indented_usage(sub) for sub in subparsers)
    parser.epilog = f"usage of each command:\n{usages}\nRun '{PROG} COMMAND --help' for the options of a command."
    return parser


def _indented_usage(parser: argparse.ArgumentParser) -> str:
    """The parser's usage with 'usage: ' (7 characters) replaced by a 2-space indent, alignment kept."""
    first, *rest = parser.format_usage().removeprefix("usage: ").splitlines()
    return "".join([f"  {first}\n", *(f"{line[5:]}\n" for line in rest)])


def add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `cs336-lectures trace`."""
    parser.add_argument("files", nargs="+", metavar="LECTURE.py", help="lecture files to trace")
    parser.add_argument("-o", "--output", metavar="DIR",
                        help="folder for the traces and their assets/ (default: var/traces, under the working "
                             "directory when the lecture is inside it, else beside the lecture)")
    parser.add_argument("--section", metavar="NAME",
                        help="trace only this top-level function of the lecture, instead of main()")
    parser.add_argument("--trace-module", action="append", default=[], metavar="MODULE",
                        help="also trace the code of this module (every file of a package); repeatable")
    parser.add_argument("--inspect-all", action="store_true",
                        help="record every local variable after each line, not only those named by @inspect")
    parser.add_argument("--max-steps", type=_positive_int, default=DEFAULT_MAX_STEPS, metavar="N",
                        help="stop after N steps and write the partial trace (status max_steps; default: "
                             f"{DEFAULT_MAX_STEPS:,}, so that a runaway loop stops before it fills the memory)")
    parser.add_argument("--timeout", type=_positive_float, metavar="SECONDS",
                        help="stop after this long and write the partial trace (status timeout)")
    parser.add_argument("--seed", type=_seed, default=0, metavar="N",
                        help="seed for random, numpy and torch (default: 0)")
    parser.add_argument("--quiet", action="store_true", help="no progress display, no summary lines")
    from cs336_lectures.runtime.cli import batch as executor
    executor.add_arguments(parser)


def trace(args: argparse.Namespace, argv: list[str]) -> int:
    """`cs336-lectures trace`: trace each lecture in turn; returns the exit status."""
    from cs336_lectures.runtime.course.importer import refuse_to_replace_course_trace
    from cs336_lectures.runtime.tracing.lecture_run import TraceSettings, trace_lecture, trace_title
    from cs336_lectures.runtime.tracing.result import LectureError

    from cs336_lectures.runtime.publish.site import default_traces_dir

    outputs = {file: Path(args.output) if args.output else default_traces_dir(Path(file)) for file in args.files}
    writers: dict[Path, str] = {}  # trace path -> the lecture that writes it
    for file, output_dir in outputs.items():
        written = output_dir / f"{trace_title(Path(file), args.section)}.json"
        if writers.setdefault(written.absolute(), file) != file:
            print_visible(f"{PROG}: error: {writers[written.absolute()]} and {file} would both write {written}")
            return 2
        refusal = refuse_to_replace_course_trace(written, "-o")
        if refusal:  # a clone of the Stanford course keeps its published traces in var/traces
            print_visible(f"{PROG}: error: {refusal}")
            return 2
    if args.executor is not None:
        from cs336_lectures.runtime.cli import batch as executor

        if len(set(outputs.values())) > 1:
            print_visible(f"{PROG}: error: the lectures are in different folders; "
                          "name one folder for their traces with -o")
            return 2
        args.output = str(next(iter(outputs.values())))
        return executor.run(args, argv, PROG)
    status = 0
    for file, output_dir in outputs.items():
        traced = functools.partial(trace_lecture, Path(file), output_dir=output_dir, quiet=args.quiet,
                                   **TraceSettings.from_options(args, (PROG, *argv)).arguments())
        try:
            result = _supervised(traced, output_dir / f"{trace_title(Path(file), args.section)}.json", args.timeout)
        except LectureError as error:
            print_visible(f"{PROG}: error: {error}")
            status = 2
            continue
        except KeyboardInterrupt:
            print_visible(f"{PROG}: interrupted while tracing {file}; no trace written")
            return 130
        if result.status != "ok" or not args.quiet:  # failures are reported even with --quiet
            print_visible(result.summary())
        if result.interrupted:
            return 130
        if result.status != "ok":
            status = 1
    return status


def _supervised(traced: Callable[..., TraceResult], trace_path: Path, timeout: float | None) -> TraceResult:
    """traced() in a supervised child process where the system can fork (supervisor.py), so that a
    limit always ends the lecture; in this process elsewhere."""
    from cs336_lectures.runtime.processes import can_fork
    from cs336_lectures.runtime.tracing import supervisor
    if not can_fork():
        return traced()
    return supervisor.run_supervised(lambda supervision: traced(supervision=supervision),
                                     trace_path=trace_path, timeout=timeout)


def _fix_hash_seed() -> None:
    """Re-run this command with PYTHONHASHSEED=0 unless it is set: the iteration order of a set
    of strings depends on it, and a trace must not change from one run to the next."""
    if os.environ.get("PYTHONHASHSEED") is not None or os.name != "posix":
        return
    os.environ["PYTHONHASHSEED"] = "0"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "cs336_lectures", *sys.argv[1:]])


@functools.cache
def _delegate(name: str) -> types.ModuleType | None:
    """The module of a delegated command, or None (with one line on stderr) when it cannot be imported."""
    module_name = DELEGATED[name][0]
    try:
        return importlib.import_module(module_name)
    except Exception as error:  # a broken or missing optional part must not hide the others
        print_visible(f"{PROG}: error: the '{name}' command is unavailable ({module_name}: {error})")
        return None


def _checked(convert: Callable[[str], float], accept: Callable[[float], bool], expected: str) -> Callable:
    """An argparse type: `convert` the text, refusing it unless `accept` says yes."""

    def parse(text: str) -> float:
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not accept(value):
            raise argparse.ArgumentTypeError(f"must be {expected}, not {text!r}")
        return value

    return parse


_positive_int = _checked(int, lambda value: value > 0, "a positive integer")
_positive_float = _checked(float, lambda value: 0 < value < math.inf, "a positive number of seconds")
_seed = _checked(int, lambda value: 0 <= value < 2**32, "an integer from 0 to 2**32 - 1")  # numpy's range
