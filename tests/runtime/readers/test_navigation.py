"""The terminal viewer's moves (cs336_lectures.runtime.readers.navigation) against the web viewer's
(viewer/js/trace.js): both are checked against the same cases, the literal reading of
trace/README.md in test_viewer_model.Reference, on the same traces; and, in Chromium, the two
implementations are compared move by move."""

from __future__ import annotations

import sys

import pytest

from cs336_lectures.runtime.readers.navigation import TraceModel, statement_heads
from test_viewer_model import Reference, line_click, shown_rendering
from static_site import ROOT, TRACE_MOVES, StaticSite, write_site
from trace_builders import demo_trace, multiline_trace

sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic_trace import synthetic_trace  # noqa: E402

TRACES = {"demo": demo_trace(), "multiline": multiline_trace(),
          "synthetic": synthetic_trace(num_steps=1_500, num_lines=100)}


def cases(trace: dict) -> list[dict]:
    """For every stop: where each move goes and which step wrote each value in its environment."""
    reference = Reference(trace)
    stops = [s for s in range(len(trace["steps"])) if reference.visible[s]]
    return [{"step": s,
             "next": stops[i + 1] if i + 1 < len(stops) else -1,
             "previous": stops[i - 1] if i else -1,
             "over": reference.step_over(s, 1), "overBack": reference.step_over(s, -1),
             "out": reference.step_out(s), "env": reference.environment(s)}
            for i, s in enumerate(stops)]


def python_moves(model: TraceModel, s: int) -> dict:
    return {"step": s, "next": model.next(s), "previous": model.previous(s),
            "over": model.step_over(s, 1), "overBack": model.step_over(s, -1), "out": model.step_out(s),
            "env": {name: step for name, (_, step) in model.environment(s).items()}}


@pytest.mark.parametrize("name", TRACES)
def test_python_moves_match_the_cases(name):
    trace = TRACES[name]
    model = TraceModel(trace)
    expected = cases(trace)
    assert model.stops == [case["step"] for case in expected]
    for case in expected:
        assert python_moves(model, case["step"]) == case, f"step {case['step']}"


@pytest.mark.parametrize("name", TRACES)
def test_python_line_clicks_and_renderings_match_the_cases(name):
    trace = TRACES[name]
    model, reference = TraceModel(trace), Reference(trace)
    lines = range(1, len(trace["files"][0]["html"]) + 1)
    for s in model.stops[::7]:
        for line in lines:
            assert model.rendering_step(0, line, s) == shown_rendering(reference, s, line), f"step {s}, line {line}"


def test_statement_heads_match_the_viewers_scan():
    source = ['text("a (b")  # not ( open', 'text("""', "it's (here) \"quoted\"", '""" + f"{x[0]}",', ")",
              "total = 1 + \\", "    2", "items = [", "    'a]',", "]", "done = True"]
    assert statement_heads(source)[1:] == [1, 2, 2, 2, 2, 6, 6, 8, 8, 8, 11]  # as test_viewer_model asserts for JS


def test_snap_and_headings():
    model = TraceModel(TRACES["demo"])
    assert model.snap(-5) == model.stops[0] and model.snap(10**9) == model.stops[-1]
    hidden = next(s for s in range(model.num_steps) if not model.visible[s])
    assert model.snap(hidden) == model.next(hidden)
    assert [heading.text for heading in model.headings] == ["Demo lecture", "Tensors", "Links and images"]
    assert model.heading_at(model.stops[-1]) == 2


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = write_site(tmp_path_factory.mktemp("site"), {})
    with StaticSite(root) as served:
        yield served


@pytest.mark.browser
@pytest.mark.parametrize("name", TRACES)
def test_web_and_terminal_viewers_move_alike(page, site, name):
    trace = TRACES[name]
    model = TraceModel(trace)
    page.goto(site.url + "index.html")
    from_js = page.evaluate(TRACE_MOVES, {"data": trace, "samples": model.stops})
    assert from_js == [python_moves(model, s) for s in model.stops]
