"""The renderings of a course trace's steps (markdown source, images by path, links) as ours.

Markdown goes through our renderer (math included), heading ids kept unique across the
trace; the course's text(verbatim=True), which it writes one rendering per line, becomes one
verbatim block again; images are copied into our assets from the course repository when the
file is there, else shown as a placeholder saying so; internal links point into our files;
references keep what our link rendering shows, their dates as years.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cs336_lectures.runtime.course.compat import css_style
from cs336_lectures.runtime.course.files import read_bytes_inside
from cs336_lectures.runtime.lecture.primitives import LINK_SCHEMES, _check_style
from cs336_lectures.runtime.render.assets import AssetStore, sniff_image_suffix
from cs336_lectures.runtime.render.rendering import render_markdown, render_verbatim

# What the course's text(verbatim=True) adds to each line's style (one rendering per line).
VERBATIM_STYLE = {"fontFamily": "monospace", "whiteSpace": "pre"}
ISO_DATE = re.compile(r"(\d{4})-\d{2}(?:-\d{2})?(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")


class RenderingConverter:
    """Converts the renderings of one course trace, step after step, into ours."""

    def __init__(self, root: Path, assets: AssetStore, file_index: Callable[[str], int]):
        self.root = root  # the course repository, where images are
        self.assets = assets
        self.file_index = file_index  # our file index of a path an internal link names
        self.anchors: set[str] = set()  # heading ids, unique across the trace
        self.missing_images = 0

    def convert(self, renderings: list) -> list[dict]:
        """One step's renderings as ours; an entry that is not an object is dropped."""
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
        content = read_bytes_inside(self.root, location) if location and not urlsplit(location).scheme else None
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
            return {"type": "link", "title": title, "file": self.file_index(internal["path"]), "line": line}
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
        if "date" in link:
            link["date"] = _year(link["date"])
        return link


def _year(date: str) -> str:
    """A reference's date as our lectures write one: the year ("2015-08-31T16:37:31Z" -> "2015"),
    since arXiv's timestamps are when a version was posted, to the second."""
    match = ISO_DATE.fullmatch(date.strip())
    return match.group(1) if match else date


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
