"""The files an imported trace shows, and the course repository some of them come from.

A course trace carries the source of the files it ran; a file it only names (a helper module
an internal link points to, a library frame on a stack) is read from the course repository
(`--root`), else pieced together from the lines the trace's stacks quote. The repository is
read only inside its folder: a trace must not pull other files of the machine into a
converted trace that may then be published.
"""

from __future__ import annotations

from pathlib import Path


class TraceFiles:
    """Our trace's files in the order they are first needed, the course trace's own first."""

    def __init__(self, root: Path, sources: dict[str, str]):
        self.root = root
        self.sources = dict(sources)  # path -> source, the trace's own and those pieced together since
        self.quoted: dict[str, dict[int, str]] = {}  # lines of files the trace lacks, from stack `code`
        self.entries: list[dict] = []
        self.ids: dict[str, int] = {}

    def quote(self, path: str, line: int, code: str) -> None:
        """Keep a line a stack quotes from a file the trace lacks, should the repository lack it too."""
        if path not in self.sources:
            self.quoted.setdefault(path, {})[line] = code

    def index(self, path: str) -> int:
        """The index of `path` in our files, adding it on first use."""
        index = self.ids.get(path)
        if index is not None:
            return index
        source = self.sources.get(path)
        if source is None:
            source = read_text_inside(self.root, path)
            if source is None:
                quoted = self.quoted.get(path, {})
                source = "".join(f"{quoted.get(number, '')}\n" for number in range(1, max(quoted, default=0) + 1))
            self.sources[path] = source
        index = self.ids[path] = len(self.entries)
        self.entries.append({"path": path, "source": source, "html": [], "hidden": []})
        return index

    def source(self, path: str) -> str:
        """The source of `path` as far as it is known ("" for a file not yet added and not in the trace)."""
        return self.sources.get(path, "")


def read_text_inside(root: Path, relative: str) -> str | None:
    """The UTF-8 text of root/relative; None when it is outside root or cannot be read."""
    path = _inside(root, relative)
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def read_bytes_inside(root: Path, relative: str) -> bytes | None:
    """The bytes of the file root/relative; None when it is outside root, not a file, or unreadable."""
    path = _inside(root, relative)
    if path is None:
        return None
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _inside(root: Path, relative: str) -> Path | None:
    path = (root / relative).resolve()
    return path if path.is_relative_to(root.resolve()) else None
