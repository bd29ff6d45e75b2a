"""Atomic file writes: a path holds its old contents or the complete new ones, never half a file.

Traces, assets, lecture edits, token files, checkpoints and tokenizer files all go through
`write_atomically`: the data is written to a temporary file beside the target, flushed to
disk, and moved over it with os.replace, so whatever stops the writer leaves no torn file.

    write_atomically("out.bin", lambda file: file.write(b"ok"))   # writes 2 bytes
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomically(path: str | os.PathLike, write: Callable[[BinaryIO], object], *,
                     keep_mode: bool = False) -> Path:
    """Call write(file) on a temporary file beside `path`, then move it into place; return the path.

    The new file gets the permissions of any new file (the umask decides), or with
    `keep_mode` those of the file it replaces. The folder must exist.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: there is no folder {path.parent}")
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    file = open(temp, "xb")
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
