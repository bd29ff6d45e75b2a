"""The folder of served traces, as the server fills it, and what it reads back from a trace.

A run writes into a folder of its own; its trace (and its assets, which are content-addressed)
move into the served folder only once it is good, or when nothing better is there. A failed
run is otherwise kept beside the good trace as NAME.failed.json, out of the index, so the
viewer can open it at its error. The early view of a run in progress has a folder of its own.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

from cs336_lectures.atomic import write_bytes_atomically
from cs336_lectures.runtime.processes import killed_by
from cs336_lectures.runtime.publish.site import FAILED_SUFFIX

# Under the traces folder: a resumed run's trace up to the section after the edit, while the
# sections after it still run (not listed in the index; removed when the run ends).
EARLY_DIR = "early"
ERROR_TAIL_LINES = 30


class TracesFolder:
    """The served traces folder of `serve`, into which finished runs are installed."""

    def __init__(self, path: Path):
        self.path = path

    def has_good_trace(self, name: str) -> bool:
        trace = read_trace(self.path / f"{name}.json")
        return trace is not None and trace["header"].get("status") == "ok"

    def install(self, staging: Path, produced: Path, name: str | None = None) -> None:
        """Assets first (content-addressed, so overwriting is harmless), then the trace (as `name`)."""
        self.install_assets(staging)
        move(produced, self.path / (name or produced.name))

    def install_good(self, staging: Path, produced: Path, name: str) -> None:
        """A good run's trace replaces the served one, and the failed run kept beside it goes."""
        self.install(staging, produced)
        (self.path / f"{name}{FAILED_SUFFIX}").unlink(missing_ok=True)

    def install_failure(self, name: str, staging: Path, produced: Path, message: str) -> dict:
        """A failed run's outcome: its trace replaces one that is no better, else it is kept beside
        the good trace as NAME.failed.json (out of the index) so the viewer can open it at its error."""
        outcome = {"state": "error", "message": message}
        if not self.has_good_trace(name):
            self.install(staging, produced)
            outcome["installed"] = True
            outcome["failed_trace"] = name
        else:
            self.install(staging, produced, f"{name}{FAILED_SUFFIX}")
            outcome["failed_trace"] = f"{name}{FAILED_SUFFIX}".removesuffix(".json")
        return outcome

    def install_assets(self, staging: Path) -> None:
        assets = staging / "assets"
        if assets.is_dir():
            (self.path / "assets").mkdir(exist_ok=True)
            for asset in assets.iterdir():
                move(asset, self.path / "assets" / asset.name)


def early_trace(traces_dir: Path, name: str) -> Path:
    """Where the server serves the early view of lecture `name`'s run in progress."""
    return traces_dir / EARLY_DIR / f"{name}.json"


def shown_early_trace(traces_dir: Path, name: str) -> Path:
    """Where the early view of the run that ended waits for its check (hidden: no longer served)."""
    return traces_dir / EARLY_DIR / f".{name}.shown.json"


def move(source: Path, target: Path) -> None:
    """Rename, or copy atomically where the two are on different file systems."""
    try:
        os.replace(source, target)
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
        write_bytes_atomically(target, source.read_bytes())
        source.unlink()


def read_trace(path: Path) -> dict | None:
    """The trace at `path` as parsed JSON, or None unless it is readable and has a header."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("header"), dict) else None


def lecture_source(trace: dict) -> str | None:
    """The lecture's source as a trace recorded it (its first file)."""
    try:
        return trace["files"][0]["source"]
    except (KeyError, IndexError, TypeError):
        return None


def failure_message(trace: dict, stderr: str, returncode: int) -> str:
    """Why a traced run is not good: the header's message and the traceback of the error step, or
    the signal that ended the tracer (a lecture may signal its own process or session, after its
    trace was written or while the tracer wrote the last snapshot)."""
    header = trace["header"]
    signal_name = killed_by(returncode)
    lines = [f"the run was killed by {signal_name} (did the lecture signal its own process or session?)"
             if signal_name is not None else
             header.get("message") or f"the lecture stopped with status {header.get('status')}"]
    try:
        steps = trace.get("steps") or []
        extras = steps[-1][2] if steps and len(steps[-1]) > 2 else {}
        error = extras.get("x") if isinstance(extras, dict) else None
        if error and error.get("traceback"):
            lines.append(tail(error["traceback"]))
    except (IndexError, AttributeError):  # a malformed trace: the header's message alone
        pass
    if returncode not in (0, 1) and stderr.strip():
        lines.append(tail(stderr))
    return "\n".join(lines)


def tail(text: str, lines: int = ERROR_TAIL_LINES) -> str:
    """The last `lines` lines of `text`: where a traceback or a tracer's stderr says what went wrong."""
    return "\n".join(text.strip().splitlines()[-lines:])
