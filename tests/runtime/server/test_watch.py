"""The file watcher (server/watch.py) hears a file saved for the first time into folders that did
not exist yet, however quickly the folders and the file appear (a first translation catalog)."""

from __future__ import annotations

import threading
from pathlib import Path

from cs336_lectures.runtime.server.watch import FileWatcher


def test_a_file_saved_into_new_folders_is_heard(tmp_path):
    catalog = tmp_path / "locales" / "ru" / "lecture.yaml"
    heard: set[Path] = set()
    got = threading.Event()

    def on_change(paths: set[Path]) -> None:
        heard.update(paths)
        if catalog in paths:
            got.set()

    watcher = FileWatcher(on_change)
    watcher.watch([catalog])
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        catalog.parent.mkdir(parents=True)  # both folders at once, then the file: no watch sees it being written
        catalog.write_text("language: ru\n", encoding="utf-8")
        assert got.wait(10), heard
    finally:
        watcher.stop()


def test_a_file_saved_into_a_folder_made_after_its_parent_is_heard(tmp_path):
    """locales/ first, locales/ru/ and the file later: the watch of the folder above sees only the
    first; the watcher must move down to each new folder on the way to the file."""
    catalog = tmp_path / "locales" / "ru" / "lecture.yaml"
    got = threading.Event()
    watcher = FileWatcher(lambda paths: catalog in paths and got.set())
    watcher.watch([catalog])
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        (tmp_path / "locales").mkdir()
        assert not got.wait(1.0)  # nothing to hear yet; meanwhile the watcher moved on to locales/
        catalog.parent.mkdir()
        catalog.write_text("language: ru\n", encoding="utf-8")
        assert got.wait(10)
    finally:
        watcher.stop()


class HeldRestarts:
    """watchfiles.watch, where each watch after the first waits for `release` before it starts, so
    that a test can save a file in the moment between two watches."""

    def __init__(self, monkeypatch):
        import watchfiles

        self.watch = watchfiles.watch
        self.restarting, self.release = threading.Event(), threading.Event()
        self.calls = 0
        monkeypatch.setattr(watchfiles, "watch", self)

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls > 1:
            self.restarting.set()
            assert self.release.wait(10)
        yield from self.watch(*args, **kwargs)


def test_a_catalog_written_while_the_watch_moves_to_its_new_folder_is_heard(tmp_path, monkeypatch):
    catalog = tmp_path / "locales" / "ru" / "lecture.yaml"
    got = threading.Event()
    held = HeldRestarts(monkeypatch)
    watcher = FileWatcher(lambda paths: catalog in paths and got.set())
    watcher.watch([catalog])
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        catalog.parent.mkdir(parents=True)
        assert held.restarting.wait(10)  # the folder was heard; the next watch is not in place yet
        catalog.write_text("language: ru\n", encoding="utf-8")
        held.release.set()
        assert got.wait(10)
    finally:
        held.release.set()
        watcher.stop()


def test_a_lecture_saved_while_the_watch_restarts_for_a_new_module_folder_is_heard(tmp_path, monkeypatch):
    lecture, module = tmp_path / "lecture.py", tmp_path / "package" / "module.py"
    lecture.write_text("x = 1\n")
    module.parent.mkdir()
    module.write_text("y = 2\n")
    heard: list[set[Path]] = []
    got = threading.Event()
    held = HeldRestarts(monkeypatch)
    watcher = FileWatcher(lambda paths: (heard.append(paths), lecture in paths and got.set()))
    watcher.watch([lecture])
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        watcher.watch([module])  # a run imported it: its folder is new, so the watch starts again
        assert held.restarting.wait(10)
        lecture.write_text("x = 10\n")
        held.release.set()
        assert got.wait(10), heard
        assert not any(module in paths for paths in heard)  # unchanged files are not reported
    finally:
        held.release.set()
        watcher.stop()
