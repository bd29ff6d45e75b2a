"""How a lecture's failure is told: its traceback as Python prints it, less the runtime's own
frames, and its message even when the lecture's exception cannot say it.

    message_of(ValueError("bad width"))  # -> "bad width"
"""

from __future__ import annotations

import traceback
import types
from typing import Iterator


def traceback_entries(tb: types.TracebackType | None) -> Iterator[types.TracebackType]:
    """The entries of a traceback, outermost first."""
    while tb is not None:
        yield tb
        tb = tb.tb_next


def format_traceback(error: BaseException, hidden_file: str) -> str:
    """The traceback as Python prints it (chained exceptions too), minus the frames of `hidden_file`
    (the tracer's own)."""
    summary = traceback.TracebackException.from_exception(error)
    pending, seen = [summary], set()
    while pending:
        part = pending.pop()
        if id(part) in seen:
            continue
        seen.add(id(part))
        part.stack = traceback.StackSummary.from_list([frame for frame in part.stack if frame.filename != hidden_file])
        pending += [chained for chained in (part.__cause__, part.__context__) if chained is not None]
    return "".join(summary.format())


def message_of(error: BaseException) -> str:
    """str(error): the lecture's own code, which may fail too (then as the traceback module says it)."""
    try:
        return str(error)
    except Exception:
        return "<exception str() failed>"
