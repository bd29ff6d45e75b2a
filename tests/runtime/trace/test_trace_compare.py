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
