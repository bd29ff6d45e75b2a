"""`cs336-lectures import`: the Stanford course's published traces, converted into ours.

The course's `execute.py` writes one JSON object per lecture:

    {"files": {path: source},
     "steps": [{"stack": [{"path", "line_number", "function_name", "code"}, ...],   # outermost first
                "env": {name: plain JSON}, "renderings": [...], "stdout": str, "stderr": str}]}

Every step repeats its whole stack and the renderings carry markdown source, so a course
trace is several times the size of ours. This module is the command and the assembly: it
checks the input, has `stacks` rebuild our functions, calls and steps and `renderings`
convert what each step shows (`files` supplies the sources), then writes the trace with a
header of ours (title and card line from the lecture itself), replacing only an earlier import.

    $ cs336-lectures import ../spring2025-lectures/var/traces/lecture_01.json -o var/course
"""

from __future__ import annotations

import argparse
import ast
import datetime
import html
import inspect
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cs336_lectures.runtime.course.files import TraceFiles
from cs336_lectures.runtime.course.renderings import RenderingConverter
from cs336_lectures.runtime.course.stacks import CallStackRebuilder, Stack
from cs336_lectures.runtime.publish.site import SiteError, read_header
from cs336_lectures.runtime.render.assets import AssetStore
from cs336_lectures.runtime.render.rendering import highlight_lines
from cs336_lectures.runtime.trace.format import FORMAT, VERSION, write_trace
from cs336_lectures.runtime.terminal_text import print_visible

PROG = "cs336-lectures"
DEFAULT_OUTPUT = Path("var/traces")
IMPORTED_FROM = "stanford-cs336 execute.py"  # header.imported.format: the only format read here
PROBE_BYTES = 4096
UNKNOWN = "unknown"  # header fields the course's traces do not record
DOCSTRING_LIMIT = 2000  # header.docstring's limit in the trace format


class CourseTraceError(ValueError):
    """A file that is not a readable course trace, or an import that would overwrite something."""


@dataclass
class ImportResult:
    path: Path
    num_steps: int
    bytes_in: int
    bytes_out: int
    elapsed_s: float
    missing_images: int


# ---------------------------------------------------------------- the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `cs336-lectures import` (cli.py adds them to its subcommand)."""
    parser.add_argument("traces", nargs="+", metavar="COURSE_TRACE.json",
                        help="traces written by the course's execute.py (its var/traces/lecture_*.json)")
    parser.add_argument("-o", "--output", default=str(DEFAULT_OUTPUT), metavar="DIR",
                        help=f"folder for the converted traces and their assets/ (default: {DEFAULT_OUTPUT})")
    parser.add_argument("--root", metavar="DIR",
                        help="the course repository, where the traces' images are (images/..., var/files/...); "
                             "default: the folder holding var/traces/ for a trace there, else the current one")


def run(args: argparse.Namespace) -> int:
    """`cs336-lectures import`: convert each trace; exit status 0, or 2 when one could not be converted."""
    status = 0
    output_dir = Path(args.output)
    for given in args.traces:
        path = Path(given)
        root = Path(args.root) if args.root else default_root(path)
        command = (PROG, "import", given, "-o", str(output_dir), "--root", str(root))
        try:
            result = import_course_trace(path, output_dir, root, command)
        except CourseTraceError as error:
            print_visible(f"{PROG}: error: {error}")
            status = 2
            continue
        missing = f", {result.missing_images} image(s) not found under {root}" if result.missing_images else ""
        sizes = f"{_megabytes(result.bytes_in)} -> {_megabytes(result.bytes_out)}"
        print_visible(f"{result.path}: imported {result.num_steps} steps from {path} ({sizes}) "
                      f"in {result.elapsed_s:.2f} s{missing}")
    return status


def default_root(trace: Path) -> Path:
    """The course repository a trace belongs to: ROOT for ROOT/var/traces/NAME.json, else the working directory."""
    folder = trace.absolute().parent
    if folder.name == "traces" and folder.parent.name == "var":
        return folder.parent.parent
    return Path.cwd()


def import_course_trace(path: Path, output_dir: Path, root: Path, command: tuple[str, ...] = ()) -> ImportResult:
    """Convert the course trace at `path` into OUTPUT_DIR/<stem>.json (assets in OUTPUT_DIR/assets).

    Refuses (CourseTraceError) to replace anything but an earlier import of a course trace.
    """
    started = time.perf_counter()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CourseTraceError(f"{path}: no such file") from None
    except OSError as error:
        raise CourseTraceError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        course = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CourseTraceError(f"{path}: not valid JSON ({error}); the file may be truncated") from None
    except RecursionError:
        raise CourseTraceError(f"{path}: JSON nested too deeply to read (thousands of levels); "
                               f"not a trace the course writes") from None
    except ValueError as error:  # an integer past Python's digit limit (sys.get_int_max_str_digits)
        raise CourseTraceError(f"{path}: cannot read a number: {str(error).split(':')[0]}; "
                               f"not a trace the course writes") from None
    out = output_dir / f"{path.stem}.json"
    _check_target(out, path)
    assets = AssetStore(output_dir / "assets", root / "var" / "files")
    try:  # images are written into assets/ while converting
        trace, missing_images = _convert(course, str(path), command, root, assets)
        trace["header"]["imported"] = {"format": IMPORTED_FROM, "path": str(path), "bytes": len(raw)}
        write_trace(trace, out)
    except OSError as error:
        raise CourseTraceError(f"{out}: cannot write the trace: {error.strerror or error}") from None
    return ImportResult(out, len(trace["steps"]), len(raw), out.stat().st_size,
                        time.perf_counter() - started, missing_images)


def course_trace_at(path: Path) -> bool:
    """Whether `path` holds a trace in the course's format (a JSON object opening on "files" or
    "steps"), read from its first bytes only: such files can be hundreds of megabytes."""
    try:
        with open(path, "rb") as file:
            head = file.read(PROBE_BYTES).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    except OSError:
        return False
    if not head.startswith("{"):
        return False
    first_key = head[1:].lstrip(" \t\r\n")
    return first_key.startswith(('"files"', '"steps"'))


def refuse_to_replace_course_trace(path: Path, option: str) -> str | None:
    """The one-line reason not to write our trace at `path`, when a course trace is there."""
    if not course_trace_at(path):
        return None
    return (f"{path} is a trace published by the Stanford course, in its own format: it is left as it is; "
            f"write ours elsewhere ({option} DIR), or convert it with `{PROG} import {path} -o DIR`")


def _check_target(out: Path, source: Path) -> None:
    """Only an earlier import may be replaced: not the input, a course trace, or a trace of ours."""
    if not out.exists():
        return
    try:
        header = read_header(out)
    except SiteError:
        header = None
    if header is not None and "imported" in header:
        return
    if out.resolve() == source.resolve():
        raise CourseTraceError(f"{out}: the converted trace would replace its input; choose another folder with -o")
    what = "a course trace" if course_trace_at(out) else "not an earlier import"
    raise CourseTraceError(f"{out}: exists and is {what}, so it is kept; import into another folder with -o")


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.2f} MB"


# ---------------------------------------------------------------- the conversion


def _convert(course: Any, source: str, command: tuple[str, ...], root: Path,
             assets: AssetStore) -> tuple[dict, int]:
    """One course trace (parsed JSON) as one of ours, and how many of its images were not found."""
    if not isinstance(course, dict) or not isinstance(course.get("steps"), list):
        raise CourseTraceError(f"{source}: not a course trace (expected an object with \"files\" and \"steps\")")
    given = course.get("files", {})
    if not isinstance(given, dict) or not all(isinstance(text, str) for text in given.values()):
        raise CourseTraceError(f"{source}: \"files\" must map each path to its source text")
    files = TraceFiles(root, given)
    stacks = [_checked_stack(step, index, source, files) for index, step in enumerate(course["steps"])]
    for path in given:  # the lecture first, as in our traces
        files.index(path)
    renderings = RenderingConverter(root, assets, files.index)
    rebuilder = CallStackRebuilder(files, renderings.convert)
    for step, stack in zip(course["steps"], stacks):
        rebuilder.add_step(step, stack)
    steps = rebuilder.steps
    title, card = _card(steps, files.source(stacks[0][0][0]) if stacks and stacks[0] else "")
    header = {"title": title or Path(source).stem, "source": source, "entry": "main",
              "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "elapsed_s": 0, "python": UNKNOWN, "torch": UNKNOWN, "platform": UNKNOWN, "device": UNKNOWN,
              "command": list(command), "seed": 0, "status": "ok",
              "num_steps": len(steps)}
    if card:
        header["docstring"] = card[:DOCSTRING_LIMIT]
    for file in files.entries:
        file["html"] = highlight_lines(file["source"])
    trace = {"format": FORMAT, "version": VERSION, "header": header, "files": files.entries,
             "functions": rebuilder.functions, "calls": rebuilder.calls, "steps": steps}
    return trace, renderings.missing_images


def _checked_stack(step: Any, index: int, source: str, files: TraceFiles) -> Stack:
    """The step's stack as (path, function, line), outermost first, keeping the lines it quotes
    from files the trace lacks; CourseTraceError if the step is malformed."""
    where = f"{source}: step {index}"
    if not isinstance(step, dict):
        raise CourseTraceError(f"{where}: not an object")
    stack = step.get("stack")
    if not isinstance(stack, list) or not stack:
        raise CourseTraceError(f"{where}: \"stack\" must be a non-empty list of frames")
    frames = []
    for frame in stack:
        if not isinstance(frame, dict):
            raise CourseTraceError(f"{where}: a stack frame is not an object")
        path, name, line = frame.get("path"), frame.get("function_name"), frame.get("line_number")
        if not (isinstance(path, str) and isinstance(name, str) and isinstance(line, int)
                and not isinstance(line, bool) and line >= 1):
            raise CourseTraceError(f"{where}: a stack frame needs a path, a function_name and a line_number >= 1")
        code = frame.get("code")
        if isinstance(code, str):
            files.quote(path, line, code)
        frames.append((path, name, line))
    for key, expected in (("env", dict), ("renderings", list)):
        if step.get(key) is not None and not isinstance(step[key], expected):
            raise CourseTraceError(f"{where}: \"{key}\" must be {'an object' if expected is dict else 'a list'}")
    for key in ("stdout", "stderr"):
        if step.get(key) is not None and not isinstance(step[key], str):
            raise CourseTraceError(f"{where}: \"{key}\" must be a string")
    return frames


def _card(steps: list[list], lecture_source: str) -> tuple[str | None, str | None]:
    """(title, card line) of an imported lecture for the list of lectures: the title is its first
    level-1 heading; the card reads "Title: summary", the summary being the first line of the
    lecture's module docstring, else the first sentence of the text after the title."""
    title, paragraph = None, None
    for step in steps:
        for rendering in step[2].get("r", ()) if len(step) > 2 else ():
            if rendering.get("type") != "markdown" or rendering.get("verbatim"):
                continue
            level_one = [text for level, text, _ in rendering.get("headings", ()) if level == 1]
            if title is None and level_one:
                title = level_one[0]
            elif title is not None and paragraph is None and not rendering.get("headings"):
                paragraph = _first_sentence(rendering.get("html", ""))
        if title is not None and paragraph is not None:
            break
    docstring = _module_docstring(lecture_source)
    summary = docstring.splitlines()[0] if docstring else paragraph
    if title is None:
        return None, docstring or None
    card = f"{title}: {summary}" if summary else title
    rest = "\n".join(docstring.splitlines()[1:]).strip() if docstring else ""
    return title, card + (f"\n\n{rest}" if rest else "")


def _module_docstring(source: str) -> str:
    try:
        return inspect.cleandoc(ast.get_docstring(ast.parse(source), clean=False) or "")
    except (SyntaxError, ValueError):
        return ""


def _first_sentence(html_text: str) -> str:
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", html_text)).split())
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]
