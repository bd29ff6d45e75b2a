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
