"""Format version 2's lecture docstring: recorded in the header by the tracer, turned into the
index's one-line summary, and version-1 traces (without it) still read everywhere."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from cs336_lectures.runtime.publish import site
from cs336_lectures.runtime.server.http_server import _mark_failing
from cs336_lectures.runtime.trace.format import VERSION, load_trace
from cs336_lectures.runtime.tracing.lecture_run import MAX_DOCSTRING, trace_lecture

LECTURE = '''\
"""Lecture 9: scaling laws, measured.

    What the loss does as parameters and data grow.
"""


def main():
    x = 1  # @inspect x
'''


def trace(tmp_path: Path, source: str, name: str = "lecture_09") -> dict:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    result = trace_lecture(path, output_dir=tmp_path / "traces", quiet=True)
    return json.loads(result.path.read_text())


def test_the_tracer_records_the_lecture_docstring(tmp_path, validate_trace):
    data = validate_trace(trace(tmp_path, LECTURE))
    assert data["version"] == VERSION == 2
    assert data["header"]["docstring"] == "Lecture 9: scaling laws, measured.\n\nWhat the loss does as parameters and data grow."


def test_a_lecture_without_a_docstring_has_none_and_a_long_one_is_bounded(tmp_path, validate_trace):
    assert "docstring" not in validate_trace(trace(tmp_path, "def main():\n    pass\n", "bare"))["header"]
    long = f'"""{"word " * 1000}"""\n\ndef main():\n    pass\n'
    assert len(validate_trace(trace(tmp_path, long, "long"))["header"]["docstring"]) == MAX_DOCSTRING


def test_the_index_summary_is_the_docstrings_first_line(tmp_path):
    trace(tmp_path, LECTURE)
    (entry,) = site.build_index(tmp_path / "traces")["traces"]
    assert entry["summary"] == "Lecture 9: scaling laws, measured."


def test_version_1_traces_still_read_and_list(tmp_path, validate_trace):
    data = trace(tmp_path, textwrap.dedent(LECTURE))
    data["version"] = 1
    del data["header"]["docstring"]
    path = tmp_path / "traces" / "old.json"
    path.write_text(json.dumps(data))
    validate_trace(data)
    assert load_trace(path).header["title"] == "lecture_09"
    entries = {entry["name"]: entry for entry in site.build_index(tmp_path / "traces")["traces"]}
    assert entries["old"]["status"] == "ok" and "summary" not in entries["old"]


def test_failed_reruns_stay_out_of_the_index_and_failing_lectures_are_marked(tmp_path):
    trace(tmp_path, LECTURE)
    folder = tmp_path / "traces"
    (folder / "lecture_09.failed.json").write_text((folder / "lecture_09.json").read_text())
    index = site.build_index(folder)
    assert [entry["name"] for entry in index["traces"]] == ["lecture_09"]
    latest = {"lecture_09": {"trace": "lecture_09", "state": "error", "message": "NameError: x\nTraceback ..."}}
    assert _mark_failing(index, latest)["traces"][0]["failing"] == "NameError: x"
    installed = {"lecture_09": {**latest["lecture_09"], "installed": True}}  # the failure is the trace itself
    assert "failing" not in _mark_failing(site.build_index(folder), installed)["traces"][0]
    # A served lecture whose runs never wrote a trace (a syntax error) is still listed, as failing.
    never = {"lecture_10": {"trace": "lecture_10", "state": "error", "message": "lecture_10.py:3: SyntaxError"}}
    entries = _mark_failing(site.build_index(folder), never, ["lecture_09", "lecture_10"])["traces"]
    assert [(entry["name"], entry["status"], entry.get("failing")) for entry in entries] == [
        ("lecture_09", "ok", None), ("lecture_10", "error", "lecture_10.py:3: SyntaxError")]
