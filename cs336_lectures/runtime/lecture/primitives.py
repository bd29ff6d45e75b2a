"""Primitives: what a lecture calls to put text, images, links and plots on its current line.

A lecture is an ordinary Python program. While the tracer runs it, a *recorder* is active
and each primitive turns its arguments into a rendering (a small dict, see
trace/README.md "Renderings") that the recorder attaches to the line being executed. Run
with plain ``python``, no recorder is active and the primitives do nothing, so a lecture
costs nothing extra outside the tracer. Inside an IPython kernel (Jupyter, Colab) they show
each rendering inline instead (cs336_lectures.runtime.notebooks.outputs). Arguments are checked
either way, so a mistake shows up the same everywhere.

    >>> text("Tokenization turns **strings** into integers: $s \\\\mapsto (t_1, \\\\dots, t_n)$")
    >>> link(title="Neural Machine Translation of Rare Words with Subword Units",
    ...      url="https://arxiv.org/abs/1508.07909", authors=["Sennrich", "Haddow", "Birch"])
    >>> link(BPETokenizer)        # an internal link to the class's source
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import io
import linecache
import math
import os
import re
import sys
import tokenize
import types
from dataclasses import dataclass
from datetime import date as Date
from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence
from urllib.parse import urlsplit

from cs336_lectures.runtime.render.assets import AssetStore, sniff_image_suffix
from cs336_lectures.runtime.render.rendering import render_markdown, render_verbatim
from cs336_lectures.runtime.i18n.translation import translate_figure, translate_text

__all__ = ["Recorder", "Reference", "image", "link", "plot", "set_recorder", "solution", "text"]

LINK_SCHEMES = ("http", "https", "mailto", "ftp")
CSS_PROPERTY = re.compile(r"--[A-Za-z0-9_-]+|-?[A-Za-z][A-Za-z0-9-]*")
CSS_UNSAFE = re.compile(r"[;{}<>\\\n\r]|/\*|url\s*\(|expression\s*\(|javascript:|@import", re.IGNORECASE)
IMAGE_WIDTH = re.compile(r"\d+(\.\d+)?(px|%|em|rem|vw|ch)?")
SVG_HASH_SALT = "cs336-lectures"  # fixes the ids matplotlib writes into SVGs


class Recorder(Protocol):
    """What the tracer provides while a lecture runs (the primitives' only dependency)."""

    assets: AssetStore

    def add_rendering(self, rendering: dict) -> None:
        """Attach `rendering` to the line being executed."""

    def file_index(self, path: str) -> int:
        """The index of source file `path` in the trace's files, adding it if needed."""

    def open_solution(self, path: str, first_line: int, last_line: int) -> int:
        """Start a solution block over lines first_line..last_line of `path`; returns its id."""

    def close_solution(self, solution: int) -> None:
        """End solution block `solution`: the steps recorded since it opened belong to it."""


_recorder: Recorder | None = None
_anchors: set[str] = set()  # heading ids used so far in the current trace


def set_recorder(recorder: Recorder | None) -> Recorder | None:
    """Make `recorder` receive the renderings (None: primitives do nothing); returns the previous one."""
    global _recorder, _anchors
    previous, _recorder = _recorder, recorder
    _anchors = set()
    return previous


def _recording() -> bool:
    """Whether the primitives render: inside a trace, or inside an IPython kernel, where the first
    primitive called installs a recorder that displays each rendering inline."""
    if _recorder is None:
        from cs336_lectures.runtime.notebooks.outputs import kernel_recorder  # light: imports IPython only in a kernel

        set_recorder(kernel_recorder())
    return _recorder is not None


@dataclass
class Reference:
    """An external reference (paper, blog post, code) to show with link().

    >>> bpe = Reference("Neural Machine Translation of Rare Words with Subword Units",
    ...                 "https://arxiv.org/abs/1508.07909", authors=("Sennrich", "Haddow", "Birch"), date="2015")
    """

    title: str
    url: str
    authors: Sequence[str] = ()
    date: str | None = None
    organization: str | None = None
    description: str | None = None
    notes: str | None = None

    def __post_init__(self) -> None:
        _external_link(self.title, self.url, self.authors, self.date, self.organization, self.description,
                       self.notes)


# ---------------------------------------------------------------- text


def text(markdown: str, verbatim: bool = False, style: dict[str, str] | None = None) -> None:
    """Show markdown (with $inline$ and $$display$$ math) on this line; verbatim=True shows it as-is.

    >>> text("## Byte-pair encoding", style={"color": "darkblue"})
    """
    if not isinstance(markdown, str):
        raise TypeError(f"text() expects a markdown string, not {type(markdown).__name__}")
    style = _check_style(style)
    if not _recording():
        return
    if verbatim:
        rendering = {"type": "markdown", "html": render_verbatim(markdown), "headings": [], "verbatim": True}
    else:
        html, headings = render_markdown(markdown, _anchors)
        rendering = {"type": "markdown", "html": html, "headings": headings}
        rendering.update(translate_text(markdown, sys._getframe(1), headings, _anchors))
    rendering["source"] = markdown  # what a notebook or a terminal shows instead of the HTML
    if style:
        rendering["style"] = style
    _recorder.add_rendering(rendering)


def _check_style(style: dict[str, str] | None) -> dict[str, str] | None:
    """CSS declarations for a text block; refuses anything that could escape the style attribute."""
    if style is None:
        return None
    if not isinstance(style, dict):
        raise TypeError(f"style must be a dict of CSS properties, not {type(style).__name__}")
    for name, value in style.items():
        if not isinstance(name, str) or not CSS_PROPERTY.fullmatch(name):
            raise ValueError(f"style: {name!r} is not a CSS property name")
        if not isinstance(value, str):
            raise TypeError(f"style: the value of {name!r} must be a string, not {type(value).__name__}")
        if CSS_UNSAFE.search(value):
            raise ValueError(f"style: the value of {name!r} ({value!r}) may not contain ; {{ }} < > \\ url( or comments")
    return dict(style)


# ---------------------------------------------------------------- image


def image(path_or_url: str | os.PathLike, width: int | float | str | None = None, *, alt: str | None = None) -> None:
    """Show an image from a local file or a URL; one that cannot be had shows as a placeholder.
    `alt` describes it (default: its file name).

    >>> image("images/bpe-merges.png", width=400)
    >>> image("https://example.org/figure.png", width="50%")
    """
    source = os.fspath(path_or_url) if isinstance(path_or_url, os.PathLike) else path_or_url
    if not isinstance(source, str):
        raise TypeError(f"image() expects a file path or a URL, not {type(path_or_url).__name__}")
    width = _check_width(width)
    if not _recording():
        return
    url = urlsplit(source)
    is_url = url.scheme.lower() in ("http", "https")
    if alt is not None and not isinstance(alt, str):
        raise TypeError(f"image(): alt must be a string, not {type(alt).__name__}")
    alt = alt or Path(url.path if is_url else source).name or source
    rendering: dict[str, Any] = {"type": "image", "src": None, "alt": alt}
    if width is not None:
        rendering["width"] = width
    try:
        data = _recorder.assets.fetch(source) if is_url else _read_local_image(source, sys._getframe(1))
        rendering["src"] = _add_image(data, source)
    except Exception as error:  # a missing picture must not stop the lecture
        rendering["error"] = str(error) or type(error).__name__
    _recorder.add_rendering(rendering)


def _check_width(width: Any) -> int | float | str | None:
    """A width in pixels (a positive number) or a CSS length ('400px', '50%'), or None."""
    if width is None:
        return None
    if isinstance(width, bool) or not isinstance(width, (int, float, str)):
        raise TypeError(f"image width must be a number of pixels or a CSS length, not {type(width).__name__}")
    if isinstance(width, str):
        if not IMAGE_WIDTH.fullmatch(width.strip()):
            raise ValueError(f"image width {width!r} is not a CSS length like '400px' or '50%'")
        return width.strip()
    if not (math.isfinite(width) and width > 0):
        raise ValueError(f"image width must be a positive number of pixels, not {width}")
    return width


def _read_local_image(source: str, caller: types.FrameType) -> bytes:
    """The file's bytes; a relative path is looked up from the working directory, then beside the lecture."""
    path = Path(source)
    candidates = [path]
    if not path.is_absolute():
        candidates.append(Path(caller.f_code.co_filename).resolve().parent / path)
    for candidate in candidates:
        if candidate.is_file():
            return candidate.read_bytes()
    raise FileNotFoundError(f"image not found: {source}")


def _add_image(data: bytes, source: str) -> str:
    suffix = sniff_image_suffix(data)
    if suffix is None:
        # Every binary format is known by its first bytes; only an SVG may open with a long preamble.
        named = Path(urlsplit(source).path).suffix.lower()
        if named != ".svg" or b"<svg" not in data.lower():
            raise ValueError(f"not an image: {source}")
        suffix = "svg"
    return _recorder.assets.add(data, suffix)


# ---------------------------------------------------------------- link


def link(
    arg: Any = None,
    *,
    title: str | None = None,
    url: str | None = None,
    authors: Sequence[str] | None = None,
    date: str | Date | None = None,
    organization: str | None = None,
    description: str | None = None,
    notes: str | None = None,
) -> None:
    """Show a link: to a Reference, a URL, or (for a function or class) to its source code.
    `notes` says what to remember about the work (shown with its description).

    >>> link("https://arxiv.org/abs/1508.07909")
    >>> link(title="GPT-2", url="https://openai.com/blog/better-language-models/", organization="OpenAI")
    >>> link(bpe_reference)
    >>> link(train_bpe)          # jumps to the definition of train_bpe in the viewer
    """
    if isinstance(arg, Reference):
        rendering = _external_link(
            title if title is not None else arg.title,
            url if url is not None else arg.url,
            authors if authors is not None else arg.authors,
            date if date is not None else arg.date,
            organization if organization is not None else arg.organization,
            description if description is not None else arg.description,
            notes if notes is not None else arg.notes,
        )
    elif isinstance(arg, str):
        if url is not None:
            raise ValueError("link(): give the URL either as the first argument or as url=, not both")
        rendering = _external_link(title if title is not None else arg, arg, authors, date, organization, description,
                                   notes)
    elif arg is None:
        if url is None:
            raise TypeError("link() needs a URL, a Reference, or a function or class (or url=...)")
        rendering = _external_link(title if title is not None else url, url, authors, date, organization, description,
                                   notes)
    elif _is_code(arg):
        if url is not None or authors or date or organization or description or notes:
            raise ValueError("link(): a link to code takes only title=, not url/authors/date/organization/description/notes")
        if title is not None and not isinstance(title, str):
            raise TypeError(f"link(): title must be a string, not {type(title).__name__}")
        # Looked up even without a recorder: code with no Python source fails the same way in both.
        path, line, name = _code_location(arg, title)
        if not _recording():
            return
        rendering = {"type": "link", "title": name, "file": _recorder.file_index(path), "line": line}
    else:
        raise TypeError(
            f"link() expects a URL, a Reference, or a function/class/module, not {type(arg).__name__}"
        )
    if _recording():
        _recorder.add_rendering(rendering)


def _external_link(title, url, authors, date, organization, description, notes) -> dict[str, Any]:
    """The rendering of an external link, checking every field."""
    if not isinstance(url, str):
        raise TypeError(f"link: url must be a string, not {type(url).__name__}")
    scheme = urlsplit(url).scheme.lower()
    if scheme not in LINK_SCHEMES:
        raise ValueError(f"link: {url!r} is not an absolute URL (expected one of {', '.join(LINK_SCHEMES)})")
    if not isinstance(title, str) or not title:
        raise TypeError(f"link: title must be a non-empty string, not {title!r}")
    rendering: dict[str, Any] = {"type": "link", "title": title, "url": url}
    if isinstance(authors, str):
        authors = [authors]
    if authors:
        if not isinstance(authors, (list, tuple)) or not all(isinstance(a, str) for a in authors):
            raise TypeError(f"link: authors must be a list of strings, not {authors!r}")
        rendering["authors"] = list(authors)
    if isinstance(date, Date):
        date = date.isoformat()
    for key, value in (("date", date), ("organization", organization), ("description", description), ("notes", notes)):
        if value is not None:
            if not isinstance(value, str):
                raise TypeError(f"link: {key} must be a string, not {type(value).__name__}")
            rendering[key] = value
    return rendering


def _is_code(obj: Any) -> bool:
    return inspect.ismodule(obj) or callable(obj) or isinstance(obj, (property, staticmethod, classmethod))


def _code_location(obj: Any, title: str | None) -> tuple[str, int, str]:
    """(source file, line, title) of the definition of a function, class or module."""
    target = _unwrap(obj)
    if not (inspect.isclass(target) or inspect.ismodule(target) or inspect.isroutine(target)):
        target = type(target)  # a callable object: link to its class
    path, line = _source_location(target)
    name = title or getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    return path, line, name


def _unwrap(obj: Any) -> Any:
    """The function or class a decorator, bound method, partial or property stands for."""
    while True:
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif inspect.ismethod(obj):
            obj = obj.__func__
        elif isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        elif isinstance(obj, property) and obj.fget is not None:
            obj = obj.fget
        elif hasattr(obj, "__wrapped__") and not inspect.isclass(obj):
            obj = inspect.unwrap(obj)
        else:
            return obj


def _source_location(target: Any) -> tuple[str, int]:
    """(source file, first line) of `target`; ValueError when it has no Python source."""
    try:
        path = inspect.getsourcefile(target)
        if path is None:
            raise TypeError("no source file")
        if inspect.ismodule(target):
            return path, 1
        return path, max(1, inspect.getsourcelines(target)[1])
    except (TypeError, OSError) as error:
        if inspect.isclass(target):
            location = _class_location_from_methods(target)
            if location:
                return location
        raise ValueError(f"link(): cannot find the Python source of {target!r} ({error})") from None


def _class_location_from_methods(cls: type) -> tuple[str, int] | None:
    """Find a class whose module is not importable (a traced lecture) through its methods' code."""
    pattern = re.compile(rf"\s*class\s+{re.escape(cls.__name__)}\b")
    for member in vars(cls).values():
        code = getattr(_unwrap(member), "__code__", None)
        if code is None or not getattr(member, "__qualname__", "").startswith(cls.__qualname__ + "."):
            continue
        try:
            with tokenize.open(code.co_filename) as file:  # the file's own encoding, as Python reads it
                lines = file.read().splitlines()
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for number in range(min(code.co_firstlineno, len(lines)), 0, -1):
            if pattern.match(lines[number - 1]):
                return code.co_filename, number
    return None


# ---------------------------------------------------------------- plot


def plot(figure: Any) -> None:
    """Show a matplotlib figure (or the figure of an Axes), stored as SVG. A figure that cannot
    be drawn (bad mathtext in a label, say) shows as an image placeholder saying why.

    >>> fig, ax = plt.subplots(); ax.plot(losses); plot(fig)
    """
    if not hasattr(figure, "savefig") and hasattr(getattr(figure, "figure", None), "savefig"):
        figure = figure.figure  # an Axes
    if not hasattr(figure, "savefig"):
        raise TypeError(f"plot() expects a matplotlib figure, not {type(figure).__name__}")
    if not _recording():
        return
    title = _figure_title(figure)
    try:
        rendering = {"type": "plot", "src": _recorder.assets.add(figure_svg(figure), "svg"), "alt": title}
        translations = {}
        drawn = translate_figure(figure, sys._getframe(1), lambda translated: (figure_svg(translated), _figure_title(translated)))
        for language, (svg, alt) in drawn.items():
            translations[language] = {"src": _recorder.assets.add(svg, "svg"), "alt": alt}
        if translations:
            rendering["translations"] = translations
    except Exception as error:  # run without the tracer, the lecture would not have failed here
        rendering = {"type": "image", "src": None, "alt": title,
                     "error": f"cannot draw the plot: {type(error).__name__}: {error}"}
    _recorder.add_rendering(rendering)


def figure_svg(figure: Any) -> bytes:
    """The figure as SVG bytes, identical for identical figures (no date, fixed id salt)."""
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": SVG_HASH_SALT}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _figure_title(figure: Any) -> str:
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        return suptitle.get_text()
    for axes in figure.get_axes():
        if axes.get_title():
            return axes.get_title()
    return "plot"


# ---------------------------------------------------------------- solution


@contextlib.contextmanager
def solution() -> Iterator[None]:
    """Mark the body of a `with` block as the worked answer to an exercise: the viewer keeps its
    renderings and values folded under "Show solution" until the student asks, or steps into it.

    >>> text("How many merges until the word is one token?")
    >>> with solution():
    ...     params = train_simple_bpe(string, num_merges=8)
    ...     text(f"At merge {merge_number}.")
    """
    if not _recording():
        yield
        return
    caller = sys._getframe(2)  # past contextmanager's __enter__
    first_line, last_line = _with_body_lines(caller.f_code.co_filename, caller.f_lineno)
    handle = _recorder.open_solution(caller.f_code.co_filename, first_line, last_line)
    try:
        yield
    finally:
        _recorder.close_solution(handle)


def _with_body_lines(path: str, line: int) -> tuple[int, int]:
    """(first, last) line of the body of the `with solution():` statement running at `line` of `path`."""
    statement = _with_statements(path).get(line)
    if statement is None:
        raise RuntimeError(f"solution() must be used as `with solution():` in a source file ({path}:{line})")
    return statement


def _with_statements(path: str) -> dict[int, tuple[int, int]]:
    """For each line a `with` statement's header spans in `path`: its body's first and last lines."""
    # linecache rather than the file: it also holds the cells of an IPython kernel, which have no file.
    # It is checked on each call, since the server's kernel re-runs a lecture after every save.
    linecache.checkcache(path)
    return _with_statements_in("".join(linecache.getlines(path)), path)


@functools.lru_cache(maxsize=8)
def _with_statements_in(source: str, path: str) -> dict[int, tuple[int, int]]:
    """_with_statements for one version of a file's text: parsed once, not once per block."""
    try:
        tree = ast.parse(source, path)
    except SyntaxError:
        return {}
    spans: dict[int, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            body = (node.body[0].lineno, max(statement.end_lineno or statement.lineno for statement in node.body))
            for header_line in range(node.lineno, node.body[0].lineno):
                spans.setdefault(header_line, body)
    return spans
