"""`cs336-lectures import`: the Stanford course's published traces, converted into ours.

The course's `execute.py` writes one JSON object per lecture:

    {"files": {path: source},
     "steps": [{"stack": [{"path", "line_number", "function_name", "code"}, ...],   # outermost first
                "env": {name: plain JSON}, "renderings": [...], "stdout": str, "stderr": str}]}

Every step repeats its whole stack and the renderings carry markdown source, so a course
trace is several times the size of ours. The converter walks the steps once, keeping the
stack of activations of the previous step: a frame continues an activation when every frame
above it did and its caller is still on the line that made the call; a frame at its
function's first line (the course records a `call` event there) always starts a new call.
Values go through our encoder (a value is written only when it changed within its call),
markdown through our renderer (math included), and images into our assets, from the course
repository (`--root`) when the file is there, else as a placeholder.

    $ cs336-lectures import ../spring2025-lectures/var/traces/lecture_01.json -o var/course
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cs336_lectures.runtime.render.assets import AssetStore, sniff_image_suffix
from cs336_lectures.runtime.course.compat import css_style
from cs336_lectures.runtime.lecture.primitives import LINK_SCHEMES, _check_style
from cs336_lectures.runtime.render.rendering import highlight_lines, render_markdown, render_verbatim
from cs336_lectures.runtime.publish.site import SiteError, read_header
from cs336_lectures.runtime.trace.format import FORMAT, VERSION, write_trace
from cs336_lectures.runtime.trace.values import ValueEncoder

PROG = "cs336-lectures"
DEFAULT_OUTPUT = Path("var/traces")
IMPORTED_FROM = "stanford-cs336 execute.py"  # header.imported.format: the only format read here
PROBE_BYTES = 4096
UNKNOWN = "unknown"  # header fields the course's traces do not record
# What the course's text(verbatim=True) adds to each line's style (one rendering per line).
VERBATIM_STYLE = {"fontFamily": "monospace", "whiteSpace": "pre"}


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


@dataclass
class _Frame:
    """One activation on the converter's stack."""

    key: tuple[str, str]  # (path, function name)
    call: int
    line: int
    last_step: int | None  # our step that last ran in this activation
    values: dict[str, Any] = field(default_factory=dict)  # name -> last encoded value written


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
            print(f"{PROG}: error: {error}", file=sys.stderr)
            status = 2
            continue
        missing = f", {result.missing_images} image(s) not found under {root}" if result.missing_images else ""
        print(f"{result.path}: imported {result.num_steps} steps from {path} "
              f"({_megabytes(result.bytes_in)} -> {_megabytes(result.bytes_out)}) in {result.elapsed_s:.2f} s{missing}",
              file=sys.stderr)
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
    out = output_dir / f"{path.stem}.json"
    _check_target(out, path)
    assets = AssetStore(output_dir / "assets", root / "var" / "files")
    converter = _Converter(root, assets)
    try:  # images are written into assets/ while converting
        trace = converter.convert(course, str(path), command)
        trace["header"]["imported"] = {"format": IMPORTED_FROM, "path": str(path), "bytes": len(raw)}
        write_trace(trace, out)
    except OSError as error:
        raise CourseTraceError(f"{out}: cannot write the trace: {error.strerror or error}") from None
    return ImportResult(out, len(trace["steps"]), len(raw), out.stat().st_size,
                        time.perf_counter() - started, converter.missing_images)


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


class _Converter:
    """Turns one course trace (parsed JSON) into one of ours."""

    def __init__(self, root: Path, assets: AssetStore):
        self.root = root
        self.assets = assets
        self.encoder = ValueEncoder()
        self.anchors: set[str] = set()  # heading ids, unique across the trace
        self.missing_images = 0
        self.files: list[dict] = []
        self.file_ids: dict[str, int] = {}
        self.sources: dict[str, str] = {}  # the course's files, by path
        self.quoted: dict[str, dict[int, str]] = {}  # lines of files the trace lacks, from stack `code`
        self.first_lines: dict[str, dict[str, list[tuple[int, int]]]] = {}  # path -> name -> (first, last)
        self.functions: list[list] = []
        self.function_ids: dict[tuple[int, str, int], int] = {}
        self.calls: list[list] = []
        self.steps: list[list] = []

    def convert(self, course: Any, source: str, command: tuple[str, ...]) -> dict:
        if not isinstance(course, dict) or not isinstance(course.get("steps"), list):
            raise CourseTraceError(f"{source}: not a course trace (expected an object with \"files\" and \"steps\")")
        files = course.get("files", {})
        if not isinstance(files, dict) or not all(isinstance(text, str) for text in files.values()):
            raise CourseTraceError(f"{source}: \"files\" must map each path to its source text")
        self.sources = dict(files)
        stacks = [self._check_step(step, index, source) for index, step in enumerate(course["steps"])]
        for path in self.sources:  # the lecture first, as in our traces
            self._file(path)
        active: list[_Frame] = []
        for step, stack in zip(course["steps"], stacks):
            active = self._add_step(step, stack, active)
        header = {"title": Path(source).stem, "source": source, "entry": "main",
                  "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "elapsed_s": 0, "python": UNKNOWN, "torch": UNKNOWN, "platform": UNKNOWN, "device": UNKNOWN,
                  "command": list(command), "seed": 0, "status": "ok",
                  "num_steps": len(self.steps)}
        for file in self.files:
            file["html"] = highlight_lines(file["source"])
        return {"format": FORMAT, "version": VERSION, "header": header, "files": self.files,
                "functions": self.functions, "calls": self.calls, "steps": self.steps}

    # --- input checks ----------------------------------------------------------------------

    def _check_step(self, step: Any, index: int, source: str) -> list[tuple[str, str, int]]:
        """The step's stack as (path, function, line), outermost first; CourseTraceError if malformed."""
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
            if path not in self.sources and isinstance(code, str):
                self.quoted.setdefault(path, {})[line] = code
            frames.append((path, name, line))
        for key, expected in (("env", dict), ("renderings", list)):
            if step.get(key) is not None and not isinstance(step[key], expected):
                raise CourseTraceError(f"{where}: \"{key}\" must be {'an object' if expected is dict else 'a list'}")
        for key in ("stdout", "stderr"):
            if step.get(key) is not None and not isinstance(step[key], str):
                raise CourseTraceError(f"{where}: \"{key}\" must be a string")
        return frames

    # --- stack and steps -------------------------------------------------------------------

    def _add_step(self, step: dict, stack: list[tuple[str, str, int]], active: list[_Frame]) -> list[_Frame]:
        """Append the step (and the calls it enters); returns the new stack of activations."""
        depth = 0
        while depth < len(stack) and depth < len(active) and self._continues(stack, depth, active):
            depth += 1
        active = active[:depth]
        for level in range(depth, len(stack)):
            path, name, line = stack[level]
            parent_step = self._caller_step(active[level - 1], stack[level - 1][2]) if level else -1
            call = len(self.calls)
            self.calls.append([self._function(path, name, line), parent_step])
            active.append(_Frame((path, name), call, line, None))
        innermost = active[-1]
        innermost.line = stack[-1][2]
        innermost.last_step = len(self.steps)
        our_step: list = [innermost.call, innermost.line]
        extras = self._extras(step, innermost)
        if extras:
            our_step.append(extras)
        self.steps.append(our_step)
        return active

    def _continues(self, stack: list[tuple[str, str, int]], level: int, active: list[_Frame]) -> bool:
        path, name, line = stack[level]
        frame = active[level]
        if frame.key != (path, name):
            return False
        if level > 0 and stack[level - 1][2] != active[level - 1].line:
            return False  # the caller moved on: this is another call of the same function
        is_innermost = level == len(stack) - 1
        return not (is_innermost and line == self._first_line(path, name, line))

    def _caller_step(self, caller: _Frame, line: int) -> int:
        """Our step, in the caller, on the line that made a call: the caller's own step when the
        course recorded one there, else a bare step for it (the course may skip such lines)."""
        if caller.last_step is None or caller.line != line:
            caller.line = line
            caller.last_step = len(self.steps)
            self.steps.append([caller.call, line])
        return caller.last_step

    def _function(self, path: str, name: str, line: int) -> int:
        file = self._file(path)
        key = (file, name, self._first_line(path, name, line))
        function = self.function_ids.get(key)
        if function is None:
            function = self.function_ids[key] = len(self.functions)
            self.functions.append(list(key))
        return function

    def _first_line(self, path: str, name: str, line: int) -> int:
        """The line where the definition of `name` enclosing `line` starts (its first decorator);
        `line` itself when the source has no such definition (a comprehension, a missing file)."""
        if name == "<module>":
            return 1
        spans = self.first_lines.get(path)
        if spans is None:
            spans = self.first_lines[path] = _definition_spans(self.sources.get(path, ""))
        enclosing = [first for first, last in spans.get(name, ()) if first <= line <= last]
        return max(enclosing) if enclosing else line

    def _file(self, path: str) -> int:
        """The index of `path` in our files; a file the trace lacks is read from the course
        repository, else pieced together from the lines its stacks quote."""
        index = self.file_ids.get(path)
        if index is not None:
            return index
        source = self.sources.get(path)
        if source is None:
            inside = _inside(self.root, path)
            source = _read_text(inside) if inside is not None else None
            if source is None:
                quoted = self.quoted.get(path, {})
                source = "".join(f"{quoted.get(number, '')}\n" for number in range(1, max(quoted, default=0) + 1))
            self.sources[path] = source
        index = self.file_ids[path] = len(self.files)
        self.files.append({"path": path, "source": source, "html": [], "hidden": []})
        return index

    # --- what a step carries ---------------------------------------------------------------

    def _extras(self, step: dict, frame: _Frame) -> dict:
        extras: dict[str, Any] = {}
        values = {}
        for name, value in (step.get("env") or {}).items():
            encoded = self.encoder.encode(value)
            if frame.values.get(name, _ABSENT) != encoded:
                frame.values[name] = values[name] = encoded
        if values:
            extras["v"] = values
        renderings = self._renderings(step.get("renderings") or [])
        if renderings:
            extras["r"] = renderings
        if step.get("stdout"):
            extras["o"] = step["stdout"]
        if step.get("stderr"):
            extras["e"] = step["stderr"]
        return extras

    def _renderings(self, renderings: list) -> list[dict]:
        converted: list[dict] = []
        verbatim_lines: list[str] = []  # the course splits text(verbatim=True) into one rendering per line
        verbatim_style: dict | None = None
        for rendering in renderings:
            if not isinstance(rendering, dict):
                continue
            kind, data, style = rendering.get("type"), rendering.get("data"), rendering.get("style") or {}
            rest = _verbatim_rest(kind, style)
            if rest is not None and isinstance(data, str):
                if verbatim_lines and rest != verbatim_style:
                    converted.append(self._verbatim(verbatim_lines, verbatim_style))
                    verbatim_lines = []
                verbatim_lines.append(data)
                verbatim_style = rest
                continue
            if verbatim_lines:
                converted.append(self._verbatim(verbatim_lines, verbatim_style))
                verbatim_lines = []
            if kind == "markdown" and isinstance(data, str):
                html, headings = render_markdown(data, self.anchors)
                converted.append(_styled({"type": "markdown", "html": html, "headings": headings}, style))
            elif kind == "image":
                converted.append(self._image(data, style))
            elif kind == "link":
                converted.append(self._link(rendering))
            else:
                converted.append(self._verbatim([f"[a {kind!r} rendering the viewer cannot show: {data!r}]"], None))
        if verbatim_lines:
            converted.append(self._verbatim(verbatim_lines, verbatim_style))
        return converted

    def _verbatim(self, lines: list[str], style: dict | None) -> dict:
        rendering = {"type": "markdown", "html": render_verbatim("\n".join(lines)), "headings": [], "verbatim": True}
        return _styled(rendering, style or {})

    def _image(self, data: Any, style: dict) -> dict:
        location = data if isinstance(data, str) else ""
        alt = _image_alt(location)
        rendering: dict[str, Any] = {"type": "image", "src": None, "alt": alt}
        width = style.get("width") if isinstance(style, dict) else None
        if isinstance(width, (int, float, str)) and not isinstance(width, bool):
            rendering["width"] = width
        inside = _inside(self.root, location) if location and not urlsplit(location).scheme else None
        content = _read_bytes(inside) if inside is not None else None
        suffix = sniff_image_suffix(content) if content else None
        if suffix is None and content and location.lower().endswith(".svg") and b"<svg" in content.lower():
            suffix = "svg"
        if suffix is None:
            self.missing_images += 1
            rendering["error"] = f"{location or 'an image'}: not found in the course repository {self.root}"
        else:
            rendering["src"] = self.assets.add(content, suffix)
        return rendering

    def _link(self, rendering: dict) -> dict:
        internal = rendering.get("internal_link")
        if isinstance(internal, dict) and isinstance(internal.get("path"), str):
            line = internal.get("line_number")
            line = line if isinstance(line, int) and not isinstance(line, bool) and line >= 1 else 1
            title = rendering.get("data") if isinstance(rendering.get("data"), str) else Path(internal["path"]).name
            return {"type": "link", "title": title, "file": self._file(internal["path"]), "line": line}
        reference = rendering.get("external_link") if isinstance(rendering.get("external_link"), dict) else {}
        url, title = reference.get("url"), reference.get("title")
        if not (isinstance(url, str) and urlsplit(url).scheme.lower() in LINK_SCHEMES):
            shown = title if isinstance(title, str) and title else str(url or "a link without a URL")
            html, headings = render_markdown(shown, self.anchors)
            return {"type": "markdown", "html": html, "headings": headings}
        link: dict[str, Any] = {"type": "link", "title": title if isinstance(title, str) and title else url, "url": url}
        authors = reference.get("authors")
        if isinstance(authors, list) and authors and all(isinstance(author, str) for author in authors):
            link["authors"] = authors
        for key in ("date", "organization", "description", "notes"):
            if isinstance(reference.get(key), str) and reference[key]:
                link[key] = reference[key]
        return link


_ABSENT = object()


def _verbatim_rest(kind: Any, style: Any) -> dict | None:
    """For a line of the course's verbatim text, its style minus what verbatim added; else None."""
    if kind == "text":
        return dict(style) if isinstance(style, dict) else {}
    if kind != "markdown" or not isinstance(style, dict) or style.get("whiteSpace") != "pre":
        return None
    return {key: value for key, value in style.items() if VERBATIM_STYLE.get(key) != value}


def _styled(rendering: dict, style: Any) -> dict:
    """The rendering with the course's camelCase style as CSS; a style our checks refuse is left out."""
    try:
        css = _check_style(css_style(style)) if style else None
    except (TypeError, ValueError):
        css = None
    if css:
        rendering["style"] = css
    return rendering


def _image_alt(location: str) -> str:
    """The image's name: for a download the course cached (var/files/image-MD5-URL), the URL's tail."""
    name = Path(urlsplit(location).path).name or location or "image"
    if name.startswith("image-") and name.count("-") >= 2:
        return name.split("-", 2)[2]
    return name


def _definition_spans(source: str) -> dict[str, list[tuple[int, int]]]:
    """For each function or class name: the (first line, last line) of each of its definitions,
    the first line being that of its first decorator, as Python reports for a call."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    spans: dict[str, list[tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            spans.setdefault(node.name, []).append((first, node.end_lineno or node.lineno))
    return spans


def _inside(root: Path, relative: str) -> Path | None:
    """root/relative when that stays inside root: a trace must not pull other files of the
    machine into a converted trace that may then be published."""
    path = (root / relative).resolve()
    return path if path.is_relative_to(root.resolve()) else None


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None
