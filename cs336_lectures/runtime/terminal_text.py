"""Text for the user's terminal, with the control characters of lectures, traces and file names made visible.

A lecture's text, a printed line, an exception's message, a catalog entry or a file name can hold
escape sequences: OSC 52 writes the clipboard, OSC 0 retitles the window, CSI 2J clears the
screen. Every line the commands print that may carry such text goes through `visible`, so the
terminal shows the sequence and never obeys it, whether it is a terminal or a pipe.
"""

from __future__ import annotations

import re
import sys
import warnings
from typing import TextIO

__all__ = ["visible", "print_visible", "show_warnings_visibly"]

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # every control character but tab and newline


def visible(text: str) -> str:
    """`text` with each control character written as a Python literal writes it.

    >>> visible("a\\x1b]0;title\\x07b\\r")
    'a\\\\x1b]0;title\\\\x07b\\\\r'
    """
    return CONTROL.sub(lambda found: repr(found[0])[1:-1], text)


def print_visible(message: str, file: TextIO | None = None) -> None:
    """print(visible(message)) to `file`, sys.stderr unless given: the commands' messages and errors."""
    print(visible(message), file=sys.stderr if file is None else file)


def show_warnings_visibly() -> None:
    """Python's warning lines quote the lecture's source line: from now on they go through `visible`."""
    if getattr(warnings.formatwarning, "shows_controls_visibly", False):
        return
    plain = warnings.formatwarning

    def formatwarning(*args, **kwargs) -> str:
        return visible(plain(*args, **kwargs))

    formatwarning.shows_controls_visibly = True
    warnings.formatwarning = formatwarning
