"""The Stanford course's `execute_util` interface, recording into our traces.

The CS336 (spring 2025) repository's lectures import `text`, `image`, `link` and
`system_text` from its own small runtime, `execute_util.py`. To trace such a lecture as it is,
the tracer puts this module into `sys.modules` under the name `execute_util` for the length of
the run (`installed_for`), so the lecture and its helpers (`lecture_util`, ...) call these
functions instead, and they hand everything to our primitives. The course's conventions kept:

- `text(message, style, verbatim)`: `style` holds CSS properties in camelCase (React's form);
- `image(url)` reads a URL from the course's download cache, `var/files/image-<md5>-<name>`;
- `link(...)` takes the course's `reference.Reference` (any dataclass with its fields), a
  function or class, an arXiv URL (looked up with the course's `arxiv_util` when it can be
  imported, else in its cache of arXiv answers) or any other URL;
- `system_text(command)` runs a command and shows its output.

    >>> with installed_for(read_source("lecture_02.py")):  # `import execute_util` now finds this module
    ...     run_the_lecture()
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

from cs336_lectures.runtime.lecture import primitives
__all__ = ["image", "link", "system_text", "text"]

MODULE_NAME = "execute_util"
CACHE_DIR = Path("var/files")  # relative to the working directory, as in the course
ARXIV_API = "http://export.arxiv.org/api/query?id_list="
ARXIV_ID = re.compile(r"arxiv\.org/[a-z]+/(\d+\.\d+)(v\d+)?(\.pdf)?$")
ATOM = "{http://www.w3.org/2005/Atom}"
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
REFERENCE_FIELDS = ("title", "authors", "organization", "date", "url", "description", "notes")
# CSS properties whose bare numbers are not lengths (React adds "px" to every other one).
UNITLESS = {"opacity", "z-index", "font-weight", "line-height", "flex", "flex-grow", "flex-shrink", "order", "zoom"}


# ---------------------------------------------------------------- the lecture-facing functions


def text(message: str, style: dict | None = None, verbatim: bool = False) -> None:
    """Markdown on this line; `verbatim=True` shows it as preformatted lines.

    >>> text("Memory is **bytes**", style={"color": "gray"})
    """
    primitives.text(message, verbatim=verbatim, style=css_style(style))


def image(url: str, style: dict | None = None, width: int | str | None = None) -> None:
    """An image from a path relative to the working directory or from a URL (read from the
    course's download cache when the course fetched it before, so a clone works offline)."""
    if width is None and style:
        width = style.get("width")
    if isinstance(url, str) and _is_web_url(url):
        cached = course_cache_path(url, "image")
        if cached.is_file():
            primitives.image(str(cached), width=width, alt=_url_name(url))
            return
    primitives.image(url, width=width)


def link(arg: Any = None, style: dict | None = None, **fields: Any) -> None:
    """A link, in each of the course's forms; `style` is accepted and links keep the viewer's look.

    >>> link(title="GPT-2", url="https://openai.com/...", organization="OpenAI", notes="1.5B parameters")
    >>> link(sennrich_2016)                         # a course Reference
    >>> link(train_bpe)                             # the source of a function or class
    >>> link("https://arxiv.org/abs/1508.07909")    # the paper, from the arXiv cache
    """
    unknown = set(fields) - set(REFERENCE_FIELDS)
    if unknown:
        raise TypeError(f"link() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    if arg is None:
        _show_reference(fields)
    elif is_course_reference(arg):
        _show_reference({**reference_fields(arg), **fields})
    elif isinstance(arg, str):
        if fields.get("url") is not None:  # link("[docs]", url=...): the text is the title
            _show_reference({"title": arg, **fields})
        elif is_arxiv_url(arg):
            _show_reference({**arxiv_fields(arg), **fields})
        else:
            _show_reference({"url": arg, **fields})
    elif isinstance(arg, type) or callable(arg):
        primitives.link(arg, title=fields.get("title"))
    else:
        raise TypeError(f"link() expects a Reference, a URL, or a function or class, not {type(arg).__name__}")


def system_text(command: list[str] | str) -> None:
    """Run `command` and show what it printed (terminal colour codes removed), as verbatim text.
    A failing command raises CalledProcessError, as it does in the course."""
    output = subprocess.check_output(command, stdin=subprocess.DEVNULL).decode("utf-8", "replace")
    text(ANSI_ESCAPE.sub("", output), verbatim=True)


# ---------------------------------------------------------------- installing this module


def uses_course_runtime(source: str) -> bool:
    """Whether Python `source` imports the course's `execute_util` (then it is traced with its
    conventions: this module in its place, directives read leniently)."""
    if MODULE_NAME not in source:  # most files: no parse needed
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name == MODULE_NAME for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == MODULE_NAME and node.level == 0:
            return True
    return False


@contextmanager
def installed_for(source: str) -> Iterator[None]:
    """While tracing a lecture whose `source` uses the course's runtime, `import execute_util`
    gives this module (the course's own file beside the lecture is never run); undone after."""
    if not uses_course_runtime(source):
        yield
        return
    saved = sys.modules.get(MODULE_NAME)
    sys.modules[MODULE_NAME] = sys.modules[__name__]
    try:
        yield
    finally:
        if saved is not None:
            sys.modules[MODULE_NAME] = saved
        else:
            sys.modules.pop(MODULE_NAME, None)


# ---------------------------------------------------------------- the course's conventions


def css_style(style: dict | None) -> dict[str, str] | None:
    """React's camelCase style (`{"fontFamily": "monospace", "width": 400}`) as CSS declarations
    (`{"font-family": "monospace", "width": "400px"}`); None values are left out."""
    if style is None:
        return None
    if not isinstance(style, dict):
        raise TypeError(f"style must be a dict of CSS properties, not {type(style).__name__}")
    css: dict[str, str] = {}
    for name, value in style.items():
        if value is None:
            continue
        if not isinstance(name, str):
            raise TypeError(f"style: property names must be strings, not {type(name).__name__}")
        property_name = re.sub(r"(?<=[a-z0-9])([A-Z])", lambda match: "-" + match.group(1).lower(), name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = f"{value:g}" if property_name in UNITLESS else f"{value:g}px"
        css[property_name] = value
    return css


def course_cache_path(url: str, prefix: str) -> Path:
    """Where the course's runtime keeps a download of `url`: var/files/PREFIX-MD5-NAME, NAME being
    the URL with every run of characters other than letters, digits, _ and - turned into _."""
    digest = hashlib.md5(url.encode("utf-8")).hexdigest()
    name = re.sub(r"[^\w-]+", "_", url)
    return CACHE_DIR / f"{prefix}-{digest}-{name}"


def is_course_reference(value: Any) -> bool:
    """A `reference.Reference` of the course: any dataclass instance with a url and a title field."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return False
    names = {field.name for field in dataclasses.fields(value)}
    return {"url", "title"} <= names


def reference_fields(reference: Any) -> dict[str, Any]:
    """The reference's fields that a link shows, by name."""
    return {name: getattr(reference, name) for name in REFERENCE_FIELDS if hasattr(reference, name)}


def is_arxiv_url(url: str) -> bool:
    return url.startswith(("https://arxiv.org/", "http://arxiv.org/"))


def arxiv_fields(url: str) -> dict[str, Any]:
    """The paper's reference: from the course's own `arxiv_util` when it imports (it reuses and
    fills the course's cache), else from that cache read here, else just the URL."""
    try:
        arxiv_util = importlib.import_module("arxiv_util")
    except ImportError:  # e.g. the `arxiv` package the course's module needs is not installed
        arxiv_util = None
    if arxiv_util is not None and hasattr(arxiv_util, "arxiv_reference"):
        return reference_fields(arxiv_util.arxiv_reference(url))
    match = ARXIV_ID.search(url)
    cached = course_cache_path(ARXIV_API + match.group(1), "arxiv") if match else None
    if cached is None or not cached.is_file():
        return {"url": url}
    return {**parse_arxiv_answer(cached.read_bytes()), "url": url}


def parse_arxiv_answer(xml: bytes) -> dict[str, Any]:
    """Title, authors, abstract and date of the first entry of an arXiv API answer (Atom XML)."""
    entry = ElementTree.fromstring(xml).find(f"{ATOM}entry")
    if entry is None:
        return {}

    def field(tag: str) -> str | None:
        node = entry.find(f"{ATOM}{tag}")
        return " ".join(node.text.split()) if node is not None and node.text else None

    authors = [" ".join(name.text.split()) for name in entry.findall(f"{ATOM}author/{ATOM}name") if name.text]
    return {"title": field("title"), "authors": authors, "description": field("summary"), "date": field("published")}


def _show_reference(fields: dict[str, Any]) -> None:
    """An external link; a reference without a usable URL shows its title as text."""
    url = fields.get("url")
    title = fields.get("title") or url
    if not (isinstance(url, str) and _is_absolute_url(url)):
        if title:
            text(str(title))
        return
    primitives.link(title=title, url=url, authors=fields.get("authors") or None, date=fields.get("date"),
                    organization=fields.get("organization"), description=fields.get("description"),
                    notes=fields.get("notes"))


def _is_web_url(url: str) -> bool:
    return urlsplit(url).scheme.lower() in ("http", "https")


def _is_absolute_url(url: str) -> bool:
    return urlsplit(url).scheme.lower() in primitives.LINK_SCHEMES


def _url_name(url: str) -> str:
    return os.path.basename(urlsplit(url).path) or url
