"""trace_compare.py and the @measured directive: what two faithful runs may differ in."""

from __future__ import annotations

import json
from pathlib import Path

from cs336_lectures.runtime.lecture.directives import parse_directives
from cs336_lectures.runtime.trace.compare import comparable, first_difference
from cs336_lectures.runtime.tracing.lecture_run import trace_lecture

LECTURE = '''import time


def main():
    started = time.perf_counter()  # @inspect started @measured
    total = sum(range(10))  # @inspect total
    print("took", time.perf_counter() - started)  # @measured
'''


def test_measured_is_a_directive_of_the_whole_statement():
    directives = parse_directives("x = (1 +  # @measured\n     2)  # @inspect x\n")
    assert directives[1].measured and directives[2].measured and directives[2].inspect == (("x", ("x",)),)


def test_two_runs_differ_only_where_the_lecture_says_so(tmp_path):
    lecture = tmp_path / "timed.py"
    lecture.write_text(LECTURE)
    traces = []
    for run in ("a", "b"):
        result = trace_lecture(lecture, output_dir=tmp_path / run, quiet=True)
        traces.append(json.loads(Path(result.path).read_text()))
    a, b = traces
    assert a["steps"][0][2]["v"]["started"] != b["steps"][0][2]["v"]["started"]
    assert first_difference(comparable(a), comparable(b)) is None
    assert comparable(a)["steps"][1][2]["v"] == {"total": 45}  # unmarked values stay compared
    b["steps"][1][2]["v"]["total"] = 46
    assert first_difference(comparable(a), comparable(b)).startswith("steps[1]")


def hand_made_trace(**header) -> dict:
    """Two files whose line 2 is measured only in the first; main (file 0) calls helper (file 1)."""
    return {
        "header": {"title": "t", "created": "2026-01-01T00:00:00", "elapsed_s": 1.5, "command": ["trace"], **header},
        "files": [{"source": "def main():\n    t = clock()  # @inspect t @measured\n    u = 1  # @inspect u\n"},
                  {"source": "def helper():\n    t = clock()  # @inspect t\n"}],
        "functions": [[0, "main", 1], [1, "helper", 1]],
        "calls": [[0, -1], [1, 1]],
        "steps": [[0, 1], [0, 2, {"v": {"t": 0.25}, "r": [{"type": "markdown"}], "o": "took 0.25\n", "e": "w\n", "x": 1}],
                  [1, 2, {"v": {"t": 0.5}, "o": "helper\n"}], [0, 3, {"v": {"u": 1}}]],
    }


def test_comparable_drops_only_timing_fields_and_measured_steps_of_their_own_file():
    trace = hand_made_trace()
    original = json.loads(json.dumps(trace))
    kept = comparable(trace)
    assert trace == original  # a copy: the trace itself is left as it was
    assert kept["header"] == {"title": "t"}
    assert kept["steps"] == [[0, 1], [0, 2, {"x": 1}], [1, 2, {"v": {"t": 0.5}, "o": "helper\n"}], [0, 3, {"v": {"u": 1}}]]


def test_first_difference_names_the_first_place_two_traces_differ():
    a, b = hand_made_trace(), hand_made_trace()
    assert first_difference(a, b) is None
    b["steps"][3][2]["v"]["u"] = 2
    assert first_difference(a, b) == "steps[3]: [0, 3, {'v': {'u': 1}}] != [0, 3, {'v': {'u': 2}}]"
    b["header"]["title"] = "other"
    assert first_difference(a, b) == "header.title: t != other"  # keys in order: header before steps
    c = hand_made_trace()
    c["steps"].append([0, 3])
    assert first_difference(a, c) == "steps: 4 entries != 5"
    c = hand_made_trace(extra="x" * 400)
    assert first_difference(a, c) == "header.extra: None != " + "x" * 300
    assert first_difference({"a": 1, "b": 2}, {"a": 1, "b": 3}) == "b: 2 != 3"
    assert first_difference({"a": [1, "y" * 400]}, {"a": [1, "z"]}) == "a[1]: " + "y" * 300 + " != z"
    assert first_difference({"a": [1, "z"]}, {"a": [1, "y" * 400]}) == "a[1]: z != " + "y" * 300
    assert first_difference({"a": "x" * 400}, {"a": 1}) == "a: " + "x" * 300 + " != 1"
    assert first_difference({"a": [1]}, {"a": None}) == "a: [1] != None"  # only two lists are walked
    assert first_difference({"a": None}, {"a": [1]}) == "a: None != [1]"
    assert first_difference({"a": {"b": 1}}, {"a": 2}) == "a: {'b': 1} != 2"  # only two dicts are walked
    assert first_difference({"a": 2}, {"a": {"b": 1}}) == "a: 2 != {'b': 1}"


def test_comparable_takes_traces_without_timing_fields_or_with_partly_measured_steps():
    trace = hand_made_trace()
    for field in ("created", "elapsed_s", "command"):
        del trace["header"][field]
    trace["steps"] += [[0, 2], [0, 2, {"v": {"t": 1.0}}]]  # the measured line again: no extras, then a value only
    assert comparable(trace)["header"] == {"title": "t"}
    assert comparable(trace)["steps"][-2:] == [[0, 2], [0, 2, {}]]
