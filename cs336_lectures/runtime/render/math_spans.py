"""The formulas of a lecture's markdown, found by the rules of our own renderer, rewritten.

What is a formula is decided once, by the markdown parser of rendering.py ("$5 and $10" is
money, `$x$` in a code span is code). Other targets write math differently: Jupyter and
GitHub take any two dollars for a formula, so there a plain dollar must be escaped; a
terminal has no math at all, so there a formula becomes text. `rewrite_math` walks the source
once and lets each caller say what a formula and a plain dollar become.

    >>> rewrite_math("$5 buys $x^2$", formula=lambda markup, latex: f"<{latex}>", dollar="\\\\$")
    '\\\\$5 buys <x^2>'
"""

from __future__ import annotations

import re
from typing import Callable

CODE_SPAN = re.compile(r"(`+)[\s\S]*?\1")  # code spans and fenced blocks keep their dollars as written


def rewrite_math(source: str, formula: Callable[[str, str], str], dollar: str) -> str:
    """`source` with each formula replaced by `formula(markup, latex)` (markup is `$` or `$$`) and
    each dollar that is not part of a formula, outside code, by `dollar`."""
    from cs336_lectures.runtime.render.rendering import _markdown_parser

    formulas: list[tuple[str, str]] = []  # (markup, latex) in the order they appear
    for token in _markdown_parser().parse(source):
        if token.type == "math_block":
            formulas.append(("$$", token.content))
        formulas.extend((child.markup, child.content) for child in token.children or ()
                        if child.type.startswith("math_inline"))
    out: list[str] = []
    i = 0
    while i < len(source):
        code = CODE_SPAN.match(source, i) if source[i] == "`" else None
        if code:
            out.append(code.group())
            i = code.end()
        elif source[i] == "\\":
            out.append(source[i:i + 2])
            i += 2
        elif source[i] == "$" and formulas and source.startswith(_written(*formulas[0]), i):
            markup, latex = formulas.pop(0)
            out.append(formula(markup, latex))
            i += len(_written(markup, latex))
        else:
            out.append(dollar if source[i] == "$" else source[i])
            i += 1
    return "".join(out)


def _written(markup: str, latex: str) -> str:
    return f"{markup}{latex}{markup}"
