"""A lecture's source as the browser's editor reads and saves it (GET/POST /api/source).

Three promises, each kept here so the server's request handler stays about HTTP:

- the text is read and written in the encoding the file declares, the way Python itself
  reads it (PEP 263: a `# -*- coding: latin-1 -*-` comment on one of the first two lines,
  else UTF-8; a byte-order mark stays in the text as U+FEFF, so a save writes it back);
- nothing changes on disk until the new text is known to encode: a source the declared
  encoding cannot hold (a lone surrogate, a character latin-1 lacks) is refused with the
  reason, and the file and its backups stay as they were;
- a save names the version it replaces (`version` of the text the editor loaded) and is
  refused with SourceConflict when the file on disk is another one by then (saved by another
  editor meanwhile), so that nobody's work is overwritten unseen;
- the version a save replaces is kept in the backups folder (var/backups/ under the server)
  as LECTURE.py.bak, the one before as .bak.1, and so on for the last BACKUPS_KEPT saves, each
  with the lecture's own permissions (a private lecture must not get a world-readable copy).
  Nothing is written beside the lecture, so a clone's `git status` stays clean.

    text, version = read_source(Path("lectures/lecture_01.py"))
    save_source(Path("lectures/lecture_01.py"), "text('hi')\\n", Path("var/backups"), base=version)
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tokenize
from pathlib import Path

from cs336_lectures.atomic import write_bytes_atomically

BACKUPS_KEPT = 5


class SourceError(ValueError):
    """A source that cannot be read or written as text; the message says why, in one line."""


class SourceConflict(Exception):
    """The file on disk is no longer the version a save was based on: `source` and `version` are
    what is there now (None and None when the file is gone)."""

    def __init__(self, source: str | None, version: str | None):
        super().__init__("the file changed on disk since it was loaded")
        self.source = source
        self.version = version


def version_of(data: bytes) -> str:
    """A short name for the exact bytes of a file, which changes with any edit."""
    return hashlib.sha256(data).hexdigest()[:16]


def declared_encoding(data: bytes) -> str:
    """The encoding Python reads `data` in: its coding comment, else UTF-8 (a BOM is kept as text)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown encoding, or a coding comment that contradicts a BOM
        raise SourceError(str(error)) from None
    return "utf-8" if encoding == "utf-8-sig" else encoding


def read_source(path: Path) -> tuple[str, str]:
    """The lecture's text, decoded as declared, with line ends as Python reads them (\\n), and its version."""
    data = path.read_bytes()
    return decode_source(data), version_of(data)


def decode_source(data: bytes) -> str:
    """A lecture file's bytes as text (see read_source); SourceError if they do not decode."""
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


def backup_path(backups: Path, lecture: Path, generation: int = 0) -> Path:
    """In the backups folder: LECTURE.py.bak for the latest backup, LECTURE.py.bak.N for the N-th before it."""
    return backups / (f"{lecture.name}.bak" + (f".{generation}" if generation else ""))


def save_source(path: Path, source: str, backups: Path, base: str | None = None) -> str:
    """Write `source` to `path` (atomically, keeping its mode), keep what it replaces as a backup
    in `backups`, and return the new version. With `base`, only over that version of the file
    (else SourceConflict); without, over whatever is there.

    The old bytes are first copied to a hidden pending file with the lecture's mode; the
    backups move along only once the new text is in place, so a failed save changes nothing.
    """
    data = encode_source(source)
    try:
        previous = path.read_bytes()
    except FileNotFoundError:  # the lecture was deleted: nothing to back up
        previous = None
    if base is not None and (previous is None or version_of(previous) != base):
        raise SourceConflict(None, None) if previous is None else SourceConflict(decode_source(previous), version_of(previous))
    pending = backups / f".{path.name}.bak.pending"
    if previous is not None:
        backups.mkdir(parents=True, exist_ok=True)
        _write_with_mode(previous, stat.S_IMODE(path.stat().st_mode), pending)
    try:
        write_bytes_atomically(path, data, keep_mode=True)
    except BaseException:
        pending.unlink(missing_ok=True)
        raise
    if previous is not None:
        for generation in range(BACKUPS_KEPT - 1, 0, -1):
            older = backup_path(backups, path, generation - 1)
            if older.exists():
                os.replace(older, backup_path(backups, path, generation))
        os.replace(pending, backup_path(backups, path))
    return version_of(data)


def _write_with_mode(data: bytes, mode: int, target: Path) -> None:
    """Write `data` to `target`, which is private from its creation and then gets `mode`.

    A copy made with the umask's mode would be readable by others for a moment, or for good.
    A stale `target` (a save killed half-way) is replaced.
    """
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
