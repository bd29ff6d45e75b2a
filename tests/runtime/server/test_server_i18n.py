"""The local server re-traces a lecture when one of its translation catalogs is saved."""

from __future__ import annotations

import os

from cs336_lectures import load_trace
from cs336_lectures.runtime.i18n.catalog import Catalog, Entry, catalog_path, save_catalog
from test_server import Events, put_trace, serve, wait_for, watching, workspace  # noqa: F401 (serve, workspace: fixtures)


def test_saving_a_catalog_retraces_with_the_new_translation(serve, workspace):
    lecture = workspace / "lectures" / "lecture_t.py"
    lecture.write_text('from cs336_lectures import text\n\ntext("# Hello")\n', encoding="utf-8")
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    listener = Events(server)
    watching(server)  # a save before the watch is in place would go unseen
    catalog = Catalog("ru", lecture.name, [Entry("# Hello", "# Привет", where="<module>")])
    save_catalog(catalog, catalog_path(lecture, "ru"))
    assert wait_for(listener, "lecture_t")["state"] == "ok"
    [rendering] = [r for step in load_trace(workspace / "traces" / "lecture_t.json").steps for r in step.renderings]
    assert rendering["translations"]["ru"]["headings"] == [[1, "Привет", "hello"]]


def test_a_catalog_newer_than_the_trace_retraces_at_start(serve, workspace):
    lecture = workspace / "lectures" / "lecture_t.py"
    lecture.write_text('from cs336_lectures import text\n\ntext("# Hello")\n', encoding="utf-8")
    put_trace(workspace)
    path = catalog_path(lecture, "zh")
    save_catalog(Catalog("zh", lecture.name, [Entry("# Hello", "# 你好", where="<module>")]), path)
    trace = workspace / "traces" / "lecture_t.json"
    os.utime(path, (trace.stat().st_mtime + 10, trace.stat().st_mtime + 10))
    server = serve("lectures/lecture_t.py")
    listener = Events(server)
    assert wait_for(listener, "lecture_t")["state"] == "ok"
    [rendering] = [r for step in load_trace(trace).steps for r in step.renderings]
    assert rendering["translations"]["zh"]["headings"] == [[1, "你好", "hello"]]
