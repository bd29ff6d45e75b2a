"""Atomic file writes: a path holds its old contents or the complete new ones, never half a file.

Traces, assets, lecture edits, token files, checkpoints and tokenizer files all go through
`write_atomically`: the data is written to a temporary file beside the target, flushed to
disk, and moved over it with os.replace, so whatever stops the writer leaves no torn file.

A writer killed mid-write (SIGKILL, a power cut) leaves its temporary file behind. Each
writer holds an exclusive flock on its temporary file while it writes; the next write of the
same target removes the temporary files of that target whose lock it can take, i.e. whose
writer is gone, and leaves those of writers still at work.

    write_atomically("out.bin", lambda file: file.write(b"ok"))   # writes 2 bytes
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # Windows: no flock, and no stale temporary files are removed
    fcntl = None


def write_atomically(path: str | os.PathLike, write: Callable[[BinaryIO], object], *,
                     keep_mode: bool = False) -> Path:
    """Call write(file) on a temporary file beside `path`, then move it into place; return the path.

    The new file gets the permissions of any new file (the umask decides), or with
    `keep_mode` those of the file it replaces. The folder must exist.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: there is no folder {path.parent}")
    remove_stale_temporaries(path)
    file, temp = _locked_temporary(path)
    try:
        with file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        if keep_mode and path.exists():
            shutil.copymode(path, temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return path


def write_bytes_atomically(path: str | os.PathLike, data: bytes, *, keep_mode: bool = False) -> Path:
    """`data` into `path`, atomically: write_bytes_atomically("a.txt", b"hi")."""
    return write_atomically(path, lambda file: file.write(data), keep_mode=keep_mode)


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files that writers of `path` left when they died; return them."""
    if fcntl is None:
        return []
    path = Path(path)
    removed = []
    for name in glob.glob(f".{glob.escape(path.name)}.{'[0-9a-f]' * 16}.tmp", root_dir=path.parent):
        temp = path.parent / name
        try:
            with open(temp, "rb") as file:
                fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: its writer is alive
                temp.unlink()
        except OSError:
            continue
        removed.append(temp)
    return removed


def _locked_temporary(path: Path) -> tuple[BinaryIO, Path]:
    """A new temporary file beside `path`, flocked for as long as it is open."""
    while True:
        temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        file = open(temp, "xb")
        if fcntl is None:
            return file, temp
        fcntl.flock(file, fcntl.LOCK_EX)
        if os.fstat(file.fileno()).st_nlink:
            return file, temp
        file.close()  # another writer took it for stale between its creation and our lock: a new one
