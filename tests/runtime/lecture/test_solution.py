"""`with solution():` blocks: what the tracer records (trace format version 2), what load_trace
returns, how a misuse is reported, and that version-1 traces still load."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cs336_lectures import solution
from cs336_lectures.runtime.trace.format import TraceFormatError, load_trace
from cs336_lectures.runtime.tracing.lecture_run import trace_lecture


def trace_program(tmp_path: Path, source: str, validate_trace):
    """Trace `source` as tmp_path/lecture.py; (result, raw trace dict, Trace)."""
    path = tmp_path / "lecture.py"
    path.write_text(textwrap.dedent(source))
    result = trace_lecture(path, output_dir=tmp_path / "traces", quiet=True)
    raw = validate_trace(result.path)
    return result, raw, load_trace(result.path)


EXERCISE = """
    from cs336_lectures import solution, text


    def main():
        text("How much is 6 x 7?")
        with solution():
            answer = times(6, 7)  # @inspect answer
            text(f"It is {answer}.")
        after = 1  # @inspect after
        with solution():  # a second block, on two lines
            second = (answer
                      + 1)  # @inspect second


    def times(a, b):
        return a * b
"""


def test_a_block_records_its_lines_and_steps(tmp_path, validate_trace):
    _, raw, trace = trace_program(tmp_path, EXERCISE, validate_trace)
    assert raw["version"] == 2
    first, second = trace.solutions
    assert first.file.endswith("lecture.py") and (first.first_line, first.last_line) == (8, 9)
    # The block's steps: its two lines and the call they make, not the `with` line around them.
    assert [(step.function, step.line) for step in first.steps] == [("main", 8), ("times", 17), ("main", 9)]
    assert first.values_of("answer") == [42]
    assert [r["html"] for r in first.renderings] == ["<p>It is 42.</p>\n"]
    assert (second.first_line, second.last_line) == (12, 13)
    assert second.values_of("second") == [43]
    # Steps outside the blocks are not part of them.
    assert trace.values_of("after") == [1] and not first.values_of("after")


def test_a_block_that_raises_still_closes(tmp_path, validate_trace):
    result, raw, trace = trace_program(tmp_path, """
        from cs336_lectures import solution


        def main():
            with solution():
                x = 1  # @inspect x
                y = x / 0
    """, validate_trace)
    assert raw["header"]["status"] == "error"
    [block] = trace.solutions
    assert [step.line for step in block.steps] == [7, 8]
    assert block.values_of("x") == [1]


def test_solution_outside_a_with_statement_is_refused(tmp_path, validate_trace):
    result, raw, _ = trace_program(tmp_path, """
        from cs336_lectures import solution


        def main():
            block = solution()
            block.__enter__()
    """, validate_trace)
    assert raw["header"]["status"] == "error"
    assert "must be used as `with solution():`" in raw["header"]["message"]


def test_outside_the_tracer_a_block_just_runs():
    with solution():
        value = 6 * 7
    assert value == 42


def test_a_version_1_trace_still_loads(tmp_path, validate_trace):
    _, raw, _ = trace_program(tmp_path, EXERCISE, validate_trace)
    old = {key: value for key, value in raw.items() if key != "solutions"} | {"version": 1}
    validate_trace(old)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    trace = load_trace(path)
    assert trace.solutions == [] and trace.values_of("answer") == [42]


@pytest.mark.parametrize("steps", [[5, 9999], [-1, 2], [3, 1]])
def test_load_trace_refuses_a_block_outside_the_steps(tmp_path, validate_trace, steps):
    _, raw, _ = trace_program(tmp_path, EXERCISE, validate_trace)
    raw["solutions"][0]["steps"] = steps
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(TraceFormatError, match="malformed trace"):
        load_trace(path)
