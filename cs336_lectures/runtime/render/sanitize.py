"""The allow-list of viewer/js/sanitize.js, in Python: pre-rendered HTML from a trace, made safe
for other readers (a notebook's text/html outputs).

A trace is a file anyone can write by hand, and a version-1 trace carries its markdown only as
HTML. What passes is what our renderer produces (CommonMark with tables, latex2mathml's MathML):

- an element not on the list is dropped, its text kept, unless its content is never text for
  the reader (script, style, iframe, svg, ...): then the content goes with it;
- an attribute not on its element's list is dropped, and every on* handler;
- links keep http(s), mailto, relative and #fragment targets; images also data:image/;
- comments, doctypes and processing instructions go.

The result is written anew from the parse, never copied: text and attribute values are escaped
and every element is closed, so what a browser or Jupyter parses is exactly what was checked,
whatever the input's tricks with malformed markup. The two lists must stay the same as the
viewer's (tests/runtime/render/test_sanitize.py runs both on the same cases).
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

__all__ = ["sanitized_html"]

HEADING = ("id",)
TABLE_CELL = ("style",)
# tag -> the attributes it may keep (besides class and title, which any element may keep).
HTML_ELEMENTS: dict[str, tuple[str, ...]] = {
    "p": (), "div": ("id",),  # a labelled formula, $$...$$ (label), is a div with that id
    "span": (), "br": (), "hr": (), "blockquote": (), "pre": (), "code": (),
    "h1": HEADING, "h2": HEADING, "h3": HEADING, "h4": HEADING, "h5": HEADING, "h6": HEADING,
    "em": (), "strong": (), "s": (),
    "ul": (), "ol": ("start",), "li": (),
    "table": (), "thead": (), "tbody": (), "tr": (), "th": TABLE_CELL, "td": TABLE_CELL,
    "a": ("href", "target", "rel"), "img": ("src", "alt"),
}
COMMON_ATTRIBUTES = ("class", "title")
MATHML_ELEMENTS = frozenset((
    "math mrow mi mn mo ms mtext mspace mfrac msqrt mroot mstyle merror mpadded mphantom menclose msub msup "
    "msubsup munder mover munderover mmultiscripts mprescripts none mtable mtr mtd mlabeledtr semantics annotation "
    "mfenced").split())
# What latex2mathml writes; presentation only.
MATHML_ATTRIBUTES = frozenset((
    "xmlns display displaystyle mathvariant mathsize mathcolor mathbackground stretchy fence separator separators "
    "largeop movablelimits accent accentunder lspace rspace form minsize maxsize symmetric linethickness "
    "scriptlevel notation open close columnalign columnspacing columnlines rowalign rowspacing rowlines frame "
    "width height depth voffset linebreak encoding border-color class").split())
# Elements whose content is not text meant for the reader: removed whole.
DROP_WITH_CONTENT = frozenset((
    "script style template iframe frame frameset object embed applet noscript noembed noframes svg textarea "
    "select title xmp plaintext head link meta base").split())
VOID = frozenset("br hr img".split())  # the allowed HTML elements without content (MathML ones get a closing tag)
NO_CONTENT = frozenset("link meta base".split())  # dropped elements that never have a closing tag
UNSAFE_VALUE = re.compile(r"javascript:|vbscript:|url\(|expression\(", re.IGNORECASE)
TEXT_ALIGN = re.compile(r"^\s*text-align\s*:\s*(left|right|center)\s*;?\s*$", re.IGNORECASE)
REL = re.compile(r"^(noopener|noreferrer|nofollow|\s)*$")
# What browsers strip from a URL before reading its scheme ("java\tscript:" is javascript:).
URL_NOISE = re.compile(r"[\x00-\x20\x7f]")


def sanitized_html(text: str) -> str:
    """The allowed part of `text`, as HTML."""
    cleaner = _Cleaner()
    cleaner.feed(text)
    cleaner.close()
    return cleaner.result()


def _safe_target(value: str, image: bool) -> str | None:
    """A URL attribute's value if its target is safe to follow (or, for images, to load), else None."""
    trimmed = value.strip()
    if trimmed.startswith("#"):
        return trimmed
    scheme_text = URL_NOISE.sub("", trimmed).lower()
    if image and scheme_text.startswith("data:image/"):
        return trimmed
    scheme = urlsplit(scheme_text).scheme if ":" in scheme_text.split("/", 1)[0] else ""
    if scheme == "":  # relative
        return trimmed
    return trimmed if scheme in ("http", "https") or (scheme == "mailto" and not image) else None


def _allowed_attribute(tag: str, is_math: bool, name: str, value: str) -> str | None:
    if name.startswith("on"):
        return None
    if is_math:
        return value if name in MATHML_ATTRIBUTES and not UNSAFE_VALUE.search(value) else None
    if name not in COMMON_ATTRIBUTES and name not in HTML_ELEMENTS[tag]:
        return None
    if name in ("href", "src"):
        return _safe_target(value, tag == "img")
    if name == "style":
        return value if TEXT_ALIGN.match(value) else None
    if name == "target":
        return value if value == "_blank" else None
    if name == "rel":
        return value if REL.match(value) else None
    return value


class _Cleaner(HTMLParser):
    """Writes the allowed elements, attributes and text as it parses."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.open: list[str] = []  # the allowed elements written and not yet closed
        self.dropping: list[str] = []  # the elements, outermost first, whose content is being dropped
        self.math_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.dropping:
            if tag in DROP_WITH_CONTENT and tag not in NO_CONTENT:
                self.dropping.append(tag)
            return
        is_math = tag == "math" or (self.math_depth > 0 and tag in MATHML_ELEMENTS)
        allowed = is_math or (self.math_depth == 0 and tag in HTML_ELEMENTS)
        if not allowed:
            if tag in DROP_WITH_CONTENT and tag not in NO_CONTENT:
                self.dropping.append(tag)
            return
        kept = []
        for name, value in attrs:
            value = _allowed_attribute(tag, is_math, name.lower(), value or "")
            if value is not None:
                kept.append(f' {name.lower()}="{html.escape(value, quote=True)}"')
        self.parts.append(f"<{tag}{''.join(kept)}>")
        if tag in VOID:
            return
        self.open.append(tag)
        if tag == "math":
            self.math_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.dropping:
            if tag == self.dropping[-1]:
                self.dropping.pop()
            return
        if tag not in self.open:
            return  # a stray closing tag, or one of an element that was dropped
        while self.open:
            closed = self.open.pop()
            self.parts.append(f"</{closed}>")
            if closed == "math":
                self.math_depth -= 1
            if closed == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.dropping:
            self.parts.append(html.escape(data, quote=False))

    def result(self) -> str:
        return "".join(self.parts) + "".join(f"</{tag}>" for tag in reversed(self.open))
