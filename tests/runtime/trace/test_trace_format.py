"""The trace file: compact atomic writing, reading back into Steps, refusing what is not a trace."""

from __future__ import annotations

import json
import math
import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cs336_lectures.runtime.trace.format import FORMAT, VERSION, TraceFormatError, load_trace, write_trace
from cs336_lectures.runtime.trace.values import ValueEncoder


def make_trace(steps: list, calls: list | None = None, functions: list | None = None) -> dict:
    header = {"title": "t", "source": "t.py", "entry": "main", "created": "2026-01-01T00:00:00+00:00",
              "elapsed_s": 0.5, "python": "3.11", "torch": "2", "platform": "linux", "device": "cpu",
              "command": ["cs336-lectures", "trace", "t.py"], "seed": 0, "status": "ok", "num_steps": len(steps)}
    source = "def main():\n    x = f()\n\ndef f():\n    return 1\n"
    files = [{"path": "t.py", "source": source, "html": source.splitlines(), "hidden": []}]
    return {"format": FORMAT, "version": VERSION, "header": header, "files": files,
            "functions": functions if functions is not None else [[0, "main", 1], [0, "f", 4]],
            "calls": calls if calls is not None else [[0, -1], [1, 0]], "steps": steps}


def test_write_is_compact_utf8_and_leaves_no_temporary_file(tmp_path, validate_trace):
    trace = make_trace([[0, 2, {"o": "héllo ✓\n"}], [1, 5], [0, 2, {"v": {"x": 1}}]])
    path = write_trace(trace, tmp_path / "deep" / "t.json")
    text = path.read_text(encoding="utf-8")
    assert ", " not in text and ": " not in text and "héllo ✓" in text
    assert json.loads(text) == validate_trace(path)
    assert [p.name for p in path.parent.iterdir()] == ["t.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # what any new file gets, not a private 0o600


def test_a_failed_write_keeps_the_previous_file(tmp_path):
    path = write_trace(make_trace([[0, 2]]), tmp_path / "t.json")
    before = path.read_text()
    with pytest.raises(TypeError):
        write_trace(make_trace([[0, 2, {"v": {"x": object()}}]]), path)
    with pytest.raises(ValueError):
        write_trace(make_trace([[0, 2, {"v": {"x": float("nan")}}]]), path)  # not JSON: refused
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_steps_expand_stacks_values_and_extras(tmp_path):
    steps = [
        [0, 2, {"r": [{"type": "markdown", "html": "<p>a</p>", "headings": []}]}],
        [1, 5, {"v": {"y": {"t": "float", "v": 0.5}}, "o": "out", "e": "err"}],
        [0, 2, {"v": {"x": 1}, "c": ["y"]}],
        [2, 5, {"x": {"type": "ValueError", "message": "m", "traceback": "tb"}}],
    ]
    calls = [[0, -1], [1, 0], [1, 2, 1]]
    trace = load_trace(write_trace(make_trace(steps, calls), tmp_path / "t.json"))
    assert [step.index for step in trace.steps] == [0, 1, 2, 3]
    assert trace.steps[0].stack == [("t.py", "main", 2)]
    assert trace.steps[1].stack == [("t.py", "main", 2), ("t.py", "f", 5)]
    assert trace.steps[3].stack == [("t.py", "main", 2), ("t.py", "f", 5)]
    assert trace.steps[1].values == {"y": 0.5}
    assert (trace.steps[1].stdout, trace.steps[1].stderr) == ("out", "err")
    assert trace.steps[2].cleared == ["y"]
    assert trace.steps[0].renderings[0]["html"] == "<p>a</p>"
    assert trace.steps[3].error["type"] == "ValueError"
    assert trace.inspected_names() == ["y", "x"]
    assert trace.values_of("x") == [1] and trace.values_of("nothing") == []
    assert trace.header["status"] == "ok" and trace.files[0]["path"] == "t.py"


def test_deep_stacks_expand_without_recursion(tmp_path):
    depth = 5000
    calls = [[0, -1]] + [[1, step] for step in range(depth - 1)]
    steps = [[call, 2 if call == 0 else 5] for call in range(depth)]
    trace = load_trace(write_trace(make_trace(steps, calls), tmp_path / "t.json"))
    assert len(trace.steps[-1].stack) == depth


def test_refuses_other_formats_and_versions(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**make_trace([]), "version": 7}))
    with pytest.raises(TraceFormatError, match="trace version 7 is not supported"):
        load_trace(path)
    path.write_text(json.dumps({"format": "something-else", "version": 1}))
    with pytest.raises(TraceFormatError, match="not a cs336-lectures-trace file"):
        load_trace(path)
    path.write_text("[1, 2]")
    with pytest.raises(TraceFormatError, match="not a cs336-lectures-trace file"):
        load_trace(path)
    path.write_text(json.dumps(make_trace([[0, 2]]))[:-20])
    with pytest.raises(TraceFormatError, match="not valid JSON"):
        load_trace(path)
    path.write_text(json.dumps(make_trace([[5, 2]])))
    with pytest.raises(TraceFormatError, match="malformed trace"):
        load_trace(path)


plain_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**60, 2**60) | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=plain_values)
def test_any_plain_value_round_trips_through_a_valid_trace(tmp_path, validate_trace, value):
    encoded = ValueEncoder().encode(value)
    path = write_trace(make_trace([[0, 2, {"v": {"x": encoded}}]]), tmp_path / "t.json")
    validate_trace(path)
    assert load_trace(path).values_of("x") == [value]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.floats() | st.lists(st.floats(), max_size=3))
def test_non_finite_floats_are_written_as_valid_json(tmp_path, validate_trace, value):
    encoded = ValueEncoder().encode(value)
    path = write_trace(make_trace([[0, 2, {"v": {"x": encoded}}]]), tmp_path / "t.json")
    validate_trace(path)
    [loaded] = load_trace(path).values_of("x")
    expected = value if isinstance(value, list) else [value]
    loaded = loaded if isinstance(loaded, list) else [loaded]
    assert len(loaded) == len(expected)
    for got, want in zip(loaded, expected):
        assert (math.isnan(got) and math.isnan(want)) or got == want
