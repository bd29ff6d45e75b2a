"""A traced file's text and the name it is shown under.

    display_path("/home/me/lectures/lecture_01.py")  # -> "lectures/lecture_01.py" from /home/me
"""

from __future__ import annotations

import os
import tokenize
from pathlib import Path


def read_source(path: str | os.PathLike) -> str:
    """A Python file's text as the interpreter reads it: a BOM or a `# coding:` line is honoured."""
    with tokenize.open(path) as file:
        return file.read()


def display_path(path: str) -> str:
    """`path` relative to the working folder when it lies inside it, else as given."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
