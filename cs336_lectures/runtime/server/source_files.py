"""A lecture's source as the browser's editor reads and saves it (GET/POST /api/source).

Three promises, each kept here so the server's request handler stays about HTTP:

- the text is read and written in the encoding the file declares, the way Python itself
  reads it (PEP 263: a `# -*- coding: latin-1 -*-` comment on one of the first two lines,
  else UTF-8; a byte-order mark stays in the text as U+FEFF, so a save writes it back);
- nothing changes on disk until the new text is known to encode: a source the declared
  encoding cannot hold (a lone surrogate, a character latin-1 lacks) is refused with the
  reason, and the file and its backups stay as they were;
- the version a save replaces is kept as LECTURE.py.bak, the one before as .bak.1, and so
  on for the last BACKUPS_KEPT saves, each with the lecture's own permissions (a private
  lecture must not get a world-readable copy).

    save_source(Path("lectures/lecture_01.py"), "text('hi')\\n")
"""

from __future__ import annotations

import io
import os
import stat
import tokenize
from pathlib import Path

from cs336_lectures.atomic import write_bytes_atomically

BACKUPS_KEPT = 5


class SourceError(ValueError):
    """A source that cannot be read or written as text; the message says why, in one line."""


def declared_encoding(data: bytes) -> str:
    """The encoding Python reads `data` in: its coding comment, else UTF-8 (a BOM is kept as text)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown encoding, or a coding comment that contradicts a BOM
        raise SourceError(str(error)) from None
    return "utf-8" if encoding == "utf-8-sig" else encoding


def read_source(path: Path) -> str:
    """The lecture's text, decoded as declared, with line ends as Python reads them (\\n)."""
    data = path.read_bytes()
    encoding = declared_encoding(data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise SourceError(f"not valid {encoding} at byte {error.start}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def encode_source(source: str) -> bytes:
    """`source` as bytes in the encoding its own coding comment declares; SourceError if it cannot be."""
    encoding = declared_encoding(source.encode("utf-8", "replace"))  # only the coding comment matters here
    try:
        return source.encode(encoding)
    except UnicodeEncodeError as error:
        character = source[error.start]
        raise SourceError(f"the source cannot be written in {encoding}: {character!r} at character "
                          f"{error.start} ({error.reason})") from None


def backup_path(path: Path, generation: int = 0) -> Path:
    """LECTURE.py.bak for the latest backup, LECTURE.py.bak.N for the N-th before it."""
    return path.with_name(f"{path.name}.bak" + (f".{generation}" if generation else ""))


def save_source(path: Path, source: str) -> None:
    """Write `source` to `path` (atomically, keeping its mode) and keep what it replaces as a backup.

    The old bytes are first copied to a hidden pending file with the lecture's mode; the
    backups move along only once the new text is in place, so a failed save changes nothing.
    """
    data = encode_source(source)
    pending = path.with_name(f".{path.name}.bak.pending")
    try:
        _copy_with_mode(path, pending)
        has_previous = True
    except FileNotFoundError:  # the lecture was deleted: nothing to back up
        has_previous = False
    try:
        write_bytes_atomically(path, data, keep_mode=True)
    except BaseException:
        pending.unlink(missing_ok=True)
        raise
    if has_previous:
        for generation in range(BACKUPS_KEPT - 1, 0, -1):
            older = backup_path(path, generation - 1)
            if older.exists():
                os.replace(older, backup_path(path, generation))
        os.replace(pending, backup_path(path))


def _copy_with_mode(source: Path, target: Path) -> None:
    """Copy `source` to `target`, which is private from its creation and then gets source's mode.

    A copy made with the umask's mode would be readable by others for a moment, or for good.
    A stale `target` (a save killed half-way) is replaced.
    """
    data = source.read_bytes()
    mode = stat.S_IMODE(source.stat().st_mode)
    target.unlink(missing_ok=True)
    try:
        with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
            os.fchmod(file.fileno(), mode)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
