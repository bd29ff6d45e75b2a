"""What a run did outside its own process: files it wrote or removed, programs it ran, processes
it forked. A checkpoint of the warm kernel (kernel.py) holds a process, not the disk.

A resumed run meets the disk as the whole previous run left it. A fresh run meets it that way
too, but runs the sections before the checkpoint on it first: if the previous run changed a file
at any point, those sections may find it changed (a file's existence can be looked at without
opening it, which no audit event reports), and then the checkpoint's memory is not what a fresh
run would have. So (`Effects.hazards`):

- a file written, created, renamed, truncated or removed by the run, at any step, closes every
  checkpoint; unless it lay in a folder, or was a file, that the run itself created and removed
  again (a `with tempfile.TemporaryDirectory():` inside a section): a fresh run finds the disk
  as the previous run found it, and only checkpoints taken while the file existed are closed;
- so does a program the run started (what it wrote cannot be followed). Processes the run forks
  are followed: their writes reach the run's record through a pipe.

Writes under the run's own output folder (the trace, its assets), the image cache and compiled
bytecode do not count. The record comes from an audit hook (`sys.addaudithook`) in the run's
process, never in the kernel; the hook cannot be removed, but the run's process ends with the run.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from cs336_lectures.runtime.i18n.run_messages import Note, note

_WRITE_FLAGS = os.O_CREAT | os.O_TRUNC | os.O_APPEND
_CHANGES = frozenset({"os.truncate", "os.chmod", "os.chown", "os.utime", "os.chflags", "os.setxattr",
                      "os.removexattr"})
_REMOVES = frozenset({"os.remove", "os.rmdir", "shutil.rmtree"})
_PROGRAMS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile"})
_WATCHED = frozenset({"open", "os.mkdir", "os.rename", "os.link", "os.symlink", "sqlite3.connect",
                      *_CHANGES, *_REMOVES, *_PROGRAMS})


@dataclass
class _Write:
    path: str
    step: int


@dataclass
class Effects:
    """The audit hook's record of one run; `step()` says where the run is (-1: at import)."""

    step: Callable[[], int]
    exempt: tuple[str, ...]  # folders whose files are the runtime's own (absolute, ending in os.sep)
    writes: list[_Write] = field(default_factory=list)
    created: dict[str, int] = field(default_factory=dict)  # path the run created -> step
    removed: dict[str, int] = field(default_factory=dict)  # path the run created, then removed -> step
    outside: list[Note] = field(default_factory=list)  # programs it ran, what its forked processes wrote
    owner: int = 0  # the run's process; a process it forks reports through the pipe
    pipe: tuple[int, int] = (-1, -1)

    def install(self) -> None:
        self.adopt()
        record = self.hook

        # Called for every audit event of the process, about six million in lecture 2 (each
        # Python call reads frame.f_code, which is audited): a plain function with its set bound
        # costs a third of what the bound method does (240 ns an event against 670).
        def hook(event: str, args: tuple, watched: frozenset = _WATCHED) -> None:
            if event in watched:
                record(event, args)

        sys.addaudithook(hook)

    def adopt(self) -> None:
        """This process is the run (a resumed run forked from a checkpoint, too): a pipe of its own."""
        self.owner = os.getpid()
        self.pipe = os.pipe()
        for end in self.pipe:
            os.set_blocking(end, False)

    def hook(self, event: str, args: tuple) -> None:
        if event not in _WATCHED:
            return
        try:
            self._record(event, args)
        except Exception:  # noqa: BLE001 - never the lecture's failure; an unreadable event is a hazard
            self.outside.append(note("the lecture did something the kernel cannot follow ({event})", event=event))

    def _tell_owner(self, what: str) -> bool:
        """In a process the lecture forked (a Pool worker, a rank): pass `what` on to the run, and
        say so (False in the run itself)."""
        if os.getpid() == self.owner:
            return False
        try:
            os.write(self.pipe[1], what.replace("\n", " ").encode(errors="replace") + b"\n")
        except OSError:
            pass
        return True

    def _record(self, event: str, args: tuple) -> None:
        step = self.step()
        if event == "open":
            path, _, flags = args
            if isinstance(path, int) or flags is None or not (flags & os.O_ACCMODE != os.O_RDONLY
                                                              or flags & _WRITE_FLAGS):
                return
            path = self._path(path)
            if path is not None:
                self._write(path, step, creates=bool(flags & os.O_CREAT))
        elif event == "os.mkdir":
            path = self._path(args[0], args[2] if len(args) > 2 else None)
            if path is not None and not os.path.lexists(path):  # one that exists is left as it is
                self._write(path, step, creates=True)
        elif event in ("os.rename", "os.link", "os.symlink"):
            for index in (0, 1):
                path = self._path(args[index])
                if path is not None:
                    self._write(path, step, creates=index == 1)
        elif event in _REMOVES:
            path = self._path(args[0], args[1] if len(args) > 1 else None)
            if path is not None:
                if path in self.created:
                    self.removed.setdefault(path, step)
                else:
                    self._write(path, step, creates=False)
        elif event in _CHANGES or event == "sqlite3.connect":
            path = self._path(args[0])
            if path is not None:
                self._write(path, step, creates=False)
        elif event in _PROGRAMS and not self._tell_owner(_program(args)):
            self.outside.append(note("the lecture ran a program ({name})", name=_program(args)))

    def _path(self, path: Any, dir_fd: Any = None) -> str | None:
        """The absolute path an event names, or None when it is the runtime's own or not a file."""
        if isinstance(dir_fd, int) and dir_fd >= 0:
            return None  # relative to a folder descriptor: shutil.rmtree's own steps, reported as one event
        try:
            path = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return None
        if path.startswith(("/dev/", "/proc/", "/sys/")) or f"{os.sep}__pycache__{os.sep}" in path \
                or path == ":memory:" or (path + os.sep).startswith(self.exempt):
            return None
        return path

    def _write(self, path: str, step: int, creates: bool) -> None:
        if self._tell_owner(_shown(path)):
            return
        if creates and path not in self.created and not os.path.lexists(path):
            self.created[path] = step
        self.writes.append(_Write(path, step))

    def hazards(self) -> list[dict]:
        """Spans of steps in which no checkpoint may be used: {"from", "until", "note"}. A checkpoint
        taken at step count s falls in one when from < s and (until is None or s <= until)."""
        self._read_pipe()
        spans = [{"from": -1, "until": None, "note": what.to_json()} for what in self.outside]
        for write in self.writes:
            until = self._settled(write)
            spans.append({"from": -1 if until is None else write.step, "until": until,
                          "note": note("the lecture wrote {path}", path=_shown(write.path)).to_json()})
        return _merged(spans)

    def _read_pipe(self) -> None:
        try:
            data = os.read(self.pipe[0], 1 << 16) if self.pipe[0] >= 0 else b""
        except (BlockingIOError, OSError):
            data = b""
        for what in sorted(set(data.decode(errors="replace").splitlines())):
            self.outside.append(note("a process the lecture started wrote or ran {what}", what=what))

    def _settled(self, write: _Write) -> int | None:
        """The step at which what `write` wrote was gone again: a file or folder the run created
        (before the write), holding it, was removed. None while it stays."""
        ends = []
        for folder, created in self.created.items():
            removed = self.removed.get(folder)
            if removed is not None and created <= write.step <= removed and (
                    write.path == folder or write.path.startswith(folder + os.sep)):
                ends.append(removed)
        return min(ends) if ends else None


def first_hazard(hazards: list[dict], steps: int) -> Note | None:
    """Why a checkpoint taken at step count `steps` cannot be used, or None."""
    for span in hazards:
        if span["from"] < steps and (span["until"] is None or steps <= span["until"]):
            return Note.from_json(span["note"])
    return None


def _merged(spans: list[dict]) -> list[dict]:
    """The spans, earliest first, without those that an earlier open-ended one covers."""
    spans.sort(key=lambda span: span["from"])
    kept = []
    for span in spans:
        if kept and kept[-1]["until"] is None:
            break
        kept.append(span)
    return kept


def _program(args: tuple) -> str:
    first = args[0] if args else "?"
    if isinstance(first, (list, tuple)) and first:
        first = first[0]
    return os.path.basename(os.fsdecode(first)) if isinstance(first, (str, bytes, os.PathLike)) else str(first)


def _shown(path: str) -> str:
    """A path as the run line shows it: relative to the working folder when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative
