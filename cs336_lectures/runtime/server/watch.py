"""Watching lecture files and the modules they import, with the OS's file events (watchfiles:
inotify on Linux, FSEvents on macOS) instead of polling.

Folders are watched, not files: an editor that saves by writing a temporary file and renaming
it over the lecture replaces the file, and a watch on the old file would hear nothing more.
Changes are debounced (a save is often several events) and handed on as one set of paths.

A new folder to watch (a module's, or a catalog's as it appears) means a new watch, and a save in
the moment between the two watches gives no event. So the watcher keeps each file's last known
state (mtime, size, inode), and once a new watch is in place it reports every file whose state
moved on meanwhile.

    watcher = FileWatcher(on_change=print)
    watcher.watch([Path("lectures/lecture_01.py")])
    watcher.start()
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable, Iterable

import watchfiles

STEP_MS = 30  # quiet time that ends a burst of events (one save)
DEBOUNCE_MS = 400  # the longest a burst is held before it is reported anyway
TIMEOUT_MS = 200  # how often the loop looks at its stop event


class FileWatcher(threading.Thread):
    """Calls `on_change(paths)` with the watched files that changed; `watch` adds files at any time."""

    def __init__(self, on_change: Callable[[set[Path]], None]):
        super().__init__(name="watch-files", daemon=True)
        self.on_change = on_change
        self.lock = threading.Lock()
        self.files: set[Path] = set()
        self.states: dict[Path, FileState] = {}  # each file as last reported (or as first watched)
        self.stopped = threading.Event()
        self.restart = threading.Event()  # the set of folders changed: begin a new watch
        self.ready = threading.Event()  # the first watch is in place

    def watch(self, files: Iterable[Path]) -> None:
        with self.lock:
            new = {Path(os.path.realpath(file)) for file in files} - self.files
            if not new:
                return
            folders_before = {file.parent for file in self.files}
            self.files |= new
            self.states.update((file, _state(file)) for file in new)
            if {file.parent for file in new} - folders_before:
                self.restart.set()

    def run(self) -> None:
        while not self.stopped.is_set():
            self.restart.clear()
            with self.lock:
                folders = sorted({_nearest_folder(file) for file in self.files} - {None})
                # Files whose folder does not exist yet (a first translation catalog): the nearest
                # folder above is watched instead, until theirs appears.
                awaited = {file for file in self.files if not file.parent.is_dir()}
            if not folders:
                self.ready.set()
                self.restart.wait(TIMEOUT_MS / 1000)
                continue
            stop = _AnyEvent(self.stopped, self.restart)
            in_place = False
            for changes in watchfiles.watch(*folders, watch_filter=self._wanted, debounce=DEBOUNCE_MS, step=STEP_MS,
                                            stop_event=stop, rust_timeout=TIMEOUT_MS, yield_on_timeout=True,
                                            recursive=False, raise_interrupt=False):
                paths = {Path(path) for change, path in changes if Path(path) in self.files}
                if not in_place:  # from here on every save gives an event; before, only its state shows it
                    in_place = True
                    self.ready.set()
                    with self.lock:
                        paths |= {file for file, state in self.states.items() if _state(file) != state}
                arrived = {file for file in awaited if file.parent.is_dir()}
                if arrived:
                    awaited -= arrived
                    self.restart.set()  # watch the new folder itself from now on
                if paths:
                    with self.lock:
                        self.states.update((file, _state(file)) for file in paths)
                    self.on_change(paths)

    def _wanted(self, change: watchfiles.Change, path: str) -> bool:
        # A deleted lecture is usually an editor's save in progress: the new file follows. A folder
        # created above a watched file may be the start of the path to it.
        changed = Path(path)
        return change != watchfiles.Change.deleted and (
            changed in self.files or any(changed in file.parents for file in self.files))

    def stop(self) -> None:
        self.stopped.set()


FileState = tuple[int, int, int] | None  # mtime_ns, size, inode; None while the file is missing


def _state(file: Path) -> FileState:
    try:
        stat = file.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size, stat.st_ino


def _nearest_folder(file: Path) -> Path | None:
    """The file's folder, or while it is missing the nearest existing folder above it."""
    for folder in file.parents:
        if folder.is_dir():
            return folder
    return None


class _AnyEvent:
    """What watchfiles' stop_event needs (is_set), true once either event is."""

    def __init__(self, *events: threading.Event):
        self.events = events

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)
