"""A lecture file that `serve` watches, and its re-trace state: whether a run is going or
waiting, the generation of the trace served, the source that trace was made from.

    >>> lecture = Lecture(Path("lectures/lecture_01.py"))
    >>> lecture.sources()   # the file, then its translation catalogs (which may not exist)
"""

from __future__ import annotations

import threading
from pathlib import Path

from cs336_lectures.runtime.i18n.catalog import LANGUAGES, catalog_path
from cs336_lectures.runtime.i18n.run_messages import Note


class Lecture:
    """A lecture file registered on the command line, and its re-trace state."""

    def __init__(self, path: Path):
        self.path = path.resolve()
        self.given = str(path)
        # How messages and the editor name it: from the folder the server runs in, if inside it.
        inside = self.path.is_relative_to(Path.cwd().resolve())
        self.shown = str(self.path.relative_to(Path.cwd().resolve()) if inside else self.path)
        self.name = path.stem
        self.lock = threading.Lock()
        self.running = False
        self.pending = False
        self.pending_full: Note | None = None  # why the next run must be a whole one (an imported module changed...)
        self.generation = 0
        self.verifying = False  # a whole run is checking the last resumed one
        self.traced_source: str | None = None  # the source of the trace served, once known (for the log)
        self.seen = self.stamp()

    def sources(self) -> list[Path]:
        """The files its trace is made from: the lecture, then its translation catalogs (which may not exist)."""
        return [self.path, *(catalog_path(self.path, language) for language in LANGUAGES)]

    def stamp(self) -> tuple | None:
        """(mtime, size) of each of its sources (None for a missing catalog), so that a translator's
        save re-traces too; None while the lecture itself is missing."""
        stamps = []
        for path in self.sources():
            try:
                stat = path.stat()
            except OSError:
                if path == self.path:
                    return None
                stamps.append(None)
                continue
            stamps.append((stat.st_mtime_ns, stat.st_size))
        return tuple(stamps)
