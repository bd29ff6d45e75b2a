"""Rendering: markdown, math and Python source turned into HTML once, when a trace is written.

The viewer is plain JavaScript with no libraries, so everything that needs a parser happens
here, in Python: markdown (markdown-it-py, CommonMark plus tables), ``$...$`` and ``$$...$$``
math as MathML (latex2mathml, which browsers display natively), and syntax highlighting of
lecture sources (pygments), split per line so the viewer can show any line on its own.
Raw HTML in lecture text is escaped, never passed through.

    >>> render_markdown("# Tokens\\nSize is $O(n^2)$.")
    ('<h1 id="tokens">Tokens</h1>\\n<p>Size is <span class="math inline"><math ...', [[1, 'Tokens', 'tokens']])
    >>> highlight_lines("x = 1  # one")
    ['<span class="tok-n">x</span> <span class="tok-o">=</span> <span class="tok-mi">1</span>  <span class="tok-c1"># one</span>']
"""

from __future__ import annotations

import html
import re
import unicodedata
import xml.etree.ElementTree as ElementTree
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from pygments.lexers import PythonLexer

__all__ = ["highlight_lines", "render_markdown", "render_verbatim"]

MATHML_NAMESPACE = "{http://www.w3.org/1998/Math/MathML}"
# Presentation MathML that latex2mathml emits; anything else (for instance raw HTML smuggled
# in through \text{...}) makes the formula fall back to its escaped source.
MATHML_ELEMENTS = frozenset(
    "math mrow mi mn mo ms mtext mspace mfrac msqrt mroot mstyle merror mpadded mphantom "
    "menclose msub msup msubsup munder mover munderover mmultiscripts mprescripts none "
    "mtable mtr mtd mlabeledtr semantics annotation mfenced".split()
)
UNSAFE_ATTRIBUTE_VALUE = re.compile(r"javascript:|url\(|expression\(", re.IGNORECASE)


# ---------------------------------------------------------------- markdown and math


def render_markdown(text: str, anchors: set[str] | None = None, reuse: Sequence[str] = ()) -> tuple[str, list[list]]:
    """Markdown (with $math$) to HTML, plus its headings as [[level, text, anchor], ...].

    `anchors` holds the heading ids already used in the document; new ones are made unique
    against it and added, so several text() calls in one lecture never share an id. The i-th
    heading takes `reuse[i]` instead when given: a translation keeps the English anchors.

    >>> render_markdown("## Byte pairs")
    ('<h2 id="byte-pairs">Byte pairs</h2>\\n', [[2, 'Byte pairs', 'byte-pairs']])
    """
    if not isinstance(text, str):
        raise TypeError(f"markdown must be a string, not {type(text).__name__}")
    parser = _markdown_parser()
    tokens = parser.parse(text)
    used = anchors if anchors is not None else set()
    headings = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            title = _plain_text(tokens[index + 1])
            anchor = reuse[len(headings)] if len(headings) < len(reuse) else _unique_anchor(_slug(title), used)
            token.attrSet("id", anchor)
            headings.append([int(token.tag[1]), title, anchor])
    return parser.renderer.render(tokens, parser.options, {}), headings


def render_verbatim(text: str) -> str:
    """Text shown exactly as written, escaped, in a <pre>.

    >>> render_verbatim("a < b")
    '<pre class="verbatim">a &lt; b</pre>'
    """
    if not isinstance(text, str):
        raise TypeError(f"verbatim text must be a string, not {type(text).__name__}")
    return f'<pre class="verbatim">{html.escape(text, quote=False)}</pre>'


@lru_cache(maxsize=4096)  # lectures repeat formulas, and conversion is the slow part of text()
def render_math(latex: str, display: bool) -> str:
    """LaTeX to MathML; a formula latex2mathml cannot handle shows as its escaped source."""
    from latex2mathml.converter import convert

    try:
        mathml = convert(latex, display="block" if display else "inline")
        _check_mathml(mathml)
    except Exception as error:
        reason = html.escape(f"cannot render math: {error}".strip(": "))
        return f'<code class="math-error" title="{reason}">{html.escape(latex)}</code>'
    return mathml


def _check_mathml(mathml: str) -> None:
    """Raise ValueError unless `mathml` is well-formed MathML without active content."""
    root = ElementTree.fromstring(mathml)  # ParseError (a ValueError) when malformed
    for element in root.iter():
        name = element.tag.removeprefix(MATHML_NAMESPACE)
        if name not in MATHML_ELEMENTS:
            raise ValueError(f"unexpected element <{name}> in the formula")
        for attribute, value in element.attrib.items():
            lowered = attribute.lower()
            if "}" in lowered or lowered.startswith("on") or lowered in ("href", "src", "style"):
                raise ValueError(f"unexpected attribute {attribute!r} in the formula")
            if UNSAFE_ATTRIBUTE_VALUE.search(value):
                raise ValueError(f"unexpected value {value!r} in the formula")


@lru_cache(maxsize=1)
def _markdown_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    parser.enable(["table", "strikethrough"])
    dollarmath_plugin(
        parser,
        allow_space=False,  # "$5 and $10" is money, not math
        allow_digits=False,
        double_inline=True,  # $$...$$ in the middle of a sentence is display math
        renderer=lambda latex, options: render_math(latex, options["display_mode"]),
    )
    parser.add_render_rule("link_open", _render_link_open)
    parser.add_render_rule("math_inline_double", _render_display_math_in_paragraph)
    return parser


def _render_display_math_in_paragraph(renderer, tokens, index, options, env) -> str:
    # The plugin would emit a <div>, which is not allowed inside the surrounding <p>.
    mathml = render_math(tokens[index].content.strip(), display=True)
    return f'<span class="math display">{mathml}</span>'


def _render_link_open(renderer, tokens, index, options, env) -> str:
    token = tokens[index]
    href = (token.attrGet("href") or "").lower()
    if href.startswith(("http://", "https://", "//")):
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener")
    return renderer.renderToken(tokens, index, options, env)


def _plain_text(inline) -> str:
    """The visible text of an inline token (a heading's content), without markup."""
    parts = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline", "math_inline", "math_inline_double"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(_plain_text(child))
    return "".join(parts).strip()


def _slug(title: str) -> str:
    """'Byte-pair encoding (BPE)' -> 'byte-pair-encoding-bpe'; letters of any script are kept."""
    text = unicodedata.normalize("NFKC", title).lower()
    text = re.sub(r"[^\w\s-]", "", text)
    text = re.sub(r"[\s_-]+", "-", text).strip("-")
    return text or "section"


def _unique_anchor(slug: str, used: set[str]) -> str:
    anchor, number = slug, 1
    while anchor in used:
        anchor = f"{slug}-{number}"
        number += 1
    used.add(anchor)
    return anchor


# ---------------------------------------------------------------- syntax highlighting


def highlight_lines(source: str) -> list[str]:
    """Python source to one HTML string per line; token spans never cross a line break.

    Lines are counted as Python counts them (\\n, \\r\\n or \\r ends a line); a final line
    break does not start another line.

    >>> highlight_lines("def f():\\n    pass\\n")
    ['<span class="tok-k">def</span> <span class="tok-nf">f</span><span class="tok-p">():</span>',
     '    <span class="tok-k">pass</span>']
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a string, not {type(source).__name__}")
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    num_lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    lines: list[list[str]] = [[]]
    for token_type, value in _python_lexer().get_tokens(text):
        css_class = _token_class(token_type)
        for position, piece in enumerate(value.split("\n")):
            if position:
                lines.append([])
            if piece:
                _append_span(lines[-1], css_class, piece)
    lines += [[] for _ in range(num_lines - len(lines))]
    return ["".join(parts) for parts in lines[:num_lines]]


def _append_span(parts: list[str], css_class: str, piece: str) -> None:
    escaped = html.escape(piece, quote=False)
    if not css_class:
        parts.append(escaped)
        return
    opening = f'<span class="{css_class}">'
    if parts and parts[-1].startswith(opening):  # merge neighbours of the same kind
        parts[-1] = parts[-1][: -len("</span>")] + escaped + "</span>"
    else:
        parts.append(f"{opening}{escaped}</span>")


@lru_cache(maxsize=1)
def _python_lexer() -> PythonLexer:
    from pygments.lexers import PythonLexer

    # stripnl would drop leading blank lines and shift every line number.
    return PythonLexer(stripnl=False, stripall=False, ensurenl=True)


@lru_cache(maxsize=None)
def _token_class(token_type: Any) -> str:
    """'tok-<short name>' for a pygments token type ('' for plain text and whitespace)."""
    from pygments.token import STANDARD_TYPES

    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    short = STANDARD_TYPES[token_type]
    return f"tok-{short}" if short and short != "w" else ""
