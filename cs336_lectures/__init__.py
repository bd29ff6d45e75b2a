"""cs336-lectures: executable lectures and the CS336 content they teach.

The public surface of the runtime is small:

- ``text``, ``image``, ``link``, ``plot``: put a rendering on the current line of a lecture;
- ``solution``: ``with solution():`` folds an exercise's worked answer until the student asks;
- ``translatable``: marks a word a figure shows, kept in data, for the translation catalogs;
- ``Reference``: an external reference (paper, blog post) to pass to ``link``;
- ``load_trace``: read a trace written by ``cs336-lectures trace``.

The runtime lives in ``cs336_lectures.runtime``; the course content in the other submodules
(``cs336_lectures.tokenization``, ``.accounting``, ...).
The names above are imported on first use, so that ``cs336-lectures`` starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cs336_lectures.runtime.lecture.primitives import Reference, image, link, plot, solution, text
    from cs336_lectures.runtime.trace.format import Trace, load_trace
    from cs336_lectures.runtime.i18n.translatable import translatable

_HOMES = {
    "Reference": "runtime.primitives",
    "image": "runtime.primitives",
    "link": "runtime.primitives",
    "plot": "runtime.primitives",
    "solution": "runtime.primitives",
    "text": "runtime.primitives",
    "Trace": "runtime.trace_format",
    "load_trace": "runtime.trace_format",
    "translatable": "runtime.translatable",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'cs336_lectures' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"cs336_lectures.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
