"""The viewer's trace model (viewer/js/trace.js) against plain reference definitions written
here in Python: every move and every environment, on every step of traces with nested calls,
hidden lines, clears and resumed generators. Runs the module in Chromium."""

from __future__ import annotations

import ast
import sys

import pytest

from static_site import ROOT, TRACE_MOVES
from trace_builders import demo_trace, multiline_trace

sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic_trace import synthetic_trace  # noqa: E402

pytestmark = pytest.mark.browser


def statement_heads(source: str) -> dict[int, int]:
    """line -> first line of its simple statement, from Python's own parser."""
    heads = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and not hasattr(node, "body"):
            heads.update({line: node.lineno for line in range(node.lineno, node.end_lineno + 1)})
    return heads


class Reference:
    """trace/README.md read literally, plus the viewer's one rule of its own (steps inside a
    rendering statement before its last one are passed over): slow, obvious answers."""

    def __init__(self, trace: dict):
        self.trace = trace
        self.steps = trace["steps"]
        self.calls = trace["calls"]
        hidden = [set(f["hidden"]) for f in trace["files"]]
        heads = [statement_heads(f["source"]) for f in trace["files"]]
        shown = [step[1] not in hidden[self.file(step[0])] for step in self.steps]

        def statement(t: int) -> tuple[int, int, int]:
            call, line = self.steps[t][:2]
            return call, self.file(call), heads[self.file(call)].get(line, line)

        def extras(t: int) -> dict:
            return self.steps[t][2] if len(self.steps[t]) == 3 else {}

        rendering = {statement(t)[1:] for t in range(len(self.steps)) if shown[t] and extras(t).get("r")}

        def passed_over(t: int) -> bool:
            return (t + 1 < len(self.steps) and shown[t + 1] and statement(t + 1) == statement(t)
                    and statement(t)[1:] in rendering and not set(extras(t)) & {"r", "o", "e", "x"})

        self.visible = [shown[t] and not passed_over(t) for t in range(len(self.steps))]

    def file(self, call: int) -> int:
        return self.trace["functions"][self.calls[call][0]][0]

    def parent(self, call: int) -> int:
        parent_step = self.calls[call][1]
        return -1 if parent_step < 0 else self.steps[parent_step][0]

    def ancestors(self, call: int) -> list[int]:
        chain = []
        while call >= 0:
            chain.append(call)
            call = self.parent(call)
        return chain

    def scan(self, s: int, direction: int, calls: list[int]) -> int:
        """The nearest visible step in the frame of one of `calls` (a generator's activations share one)."""
        frames = {self.root(call) for call in calls}
        t = s + direction
        while 0 <= t < len(self.steps):
            if self.visible[t] and self.root(self.steps[t][0]) in frames:
                return t
            t += direction
        return -1

    def step_over(self, s: int, direction: int) -> int:
        return self.scan(s, direction, self.ancestors(self.steps[s][0]))

    def step_out(self, s: int) -> int:
        return self.scan(s, 1, self.ancestors(self.steps[s][0])[1:])

    def root(self, call: int) -> int:
        while len(self.calls[call]) == 3:
            call = self.calls[call][2]
        return call

    def environment(self, s: int) -> dict[str, int]:
        """name -> the step that wrote its current value."""
        root = self.root(self.steps[s][0])
        env: dict[str, int] = {}
        for t in range(s + 1):
            extras = self.steps[t][2] if len(self.steps[t]) == 3 else {}
            if self.root(self.steps[t][0]) != root:
                continue
            env.update({name: t for name in extras.get("v", {})})
            for name in extras.get("c", []):
                env.pop(name, None)
        return env


@pytest.fixture(scope="module")
def site(serve_module_site):
    return serve_module_site()


@pytest.mark.parametrize("trace", [demo_trace(), multiline_trace(), synthetic_trace(num_steps=2_000, num_lines=120)],
                         ids=["demo", "multiline", "synthetic"])
def test_moves_and_environments_match_the_reference(page, site, trace):
    page.goto(site.url + "index.html")
    reference = Reference(trace)
    samples = [s for s in range(len(trace["steps"])) if reference.visible[s]]
    results = page.evaluate(TRACE_MOVES, {"data": trace, "samples": samples})
    visible = samples
    for position, (s, got) in enumerate(zip(samples, results)):
        expected = {
            "step": s,
            "next": visible[position + 1] if position + 1 < len(visible) else -1,
            "previous": visible[position - 1] if position else -1,
            "over": reference.step_over(s, 1),
            "overBack": reference.step_over(s, -1),
            "out": reference.step_out(s),
            "env": reference.environment(s),
        }
        assert got == expected, f"step {s}"


LINES = """async ({data, samples, lines}) => {
  const { Trace } = await import('./js/trace.js');
  const trace = new Trace(data);
  return samples.map((s) => lines.map((line) => [trace.stepAtLine(s, 0, line), trace.renderingStep(0, line, s)]));
}"""


def line_click(reference: Reference, s: int, line: int) -> int:
    """Next visible step running `line` of file 0, or the previous one when it lies above."""
    runs = [t for t, step in enumerate(reference.steps)
            if reference.visible[t] and step[1] == line and reference.file(step[0]) == 0]
    after = [t for t in runs if t > s]
    before = [t for t in runs if t < s]
    current = reference.steps[s]
    above = reference.file(current[0]) == 0 and line < current[1]
    first, second = (before[-1:], after[:1]) if above else (after[:1], before[-1:])
    return (first or second or [-1])[0]


def shown_rendering(reference: Reference, s: int, line: int) -> int:
    """The latest step at or before s that rendered on the line, else the first one."""
    runs = [t for t, step in enumerate(reference.steps)
            if reference.visible[t] and step[1] == line and len(step) == 3 and step[2].get("r")]
    done = [t for t in runs if t <= s]
    return done[-1] if done else (runs[0] if runs else -1)


@pytest.mark.parametrize("trace, every", [(demo_trace(), 1), (multiline_trace(), 1),
                                          (synthetic_trace(num_steps=1_500, num_lines=100), 37)],
                         ids=["demo", "multiline", "synthetic"])
def test_line_clicks_and_shown_renderings_match_the_reference(page, site, trace, every):
    page.goto(site.url + "index.html")
    reference = Reference(trace)
    samples = [s for s in range(0, len(trace["steps"]), every) if reference.visible[s]]
    lines = list(range(1, len(trace["files"][0]["html"]) + 1))
    results = page.evaluate(LINES, {"data": trace, "samples": samples, "lines": lines})
    for s, row in zip(samples, results):
        for line, (click, rendering) in zip(lines, row):
            assert click == line_click(reference, s, line), f"step {s}, line {line}"
            assert rendering == shown_rendering(reference, s, line), f"step {s}, line {line}"


def test_statement_heads_follow_python_statements(page, site):
    page.goto(site.url + "index.html")
    source = [
        'text("a (b")  # not ( open',             # 1: brackets inside a string or comment do not count
        'text("""',                                # 2: a triple-quoted string spans 2-5
        "it's (here) \"quoted\"",                  # 3
        '""" + f"{x[0]}",',                        # 4: the call is still open
        ")",                                       # 5
        "total = 1 + \\",                          # 6: a backslash continues onto 7
        "    2",                                   # 7
        "items = [",                               # 8: brackets span 8-10
        "    'a]',",                               # 9
        "]",                                       # 10
        "done = True",                             # 11
    ]
    heads = page.evaluate("""async (lines) => {
        const { statementHeads } = await import('./js/trace.js');
        return Array.from(statementHeads(lines)).slice(1);
    }""", source)
    assert heads == [1, 2, 2, 2, 2, 6, 6, 8, 8, 8, 11]


def test_steps_inside_a_rendering_statement_are_passed_over(page, site):
    trace = multiline_trace()
    page.goto(site.url + "index.html")
    visible = page.evaluate("""async (data) => {
        const { Trace } = await import('./js/trace.js');
        return Array.from(new Trace(data).visibleSteps);
    }""", trace)
    # link(...) stops once, after its arguments; text(...) also where it printed; print(...) is no rendering.
    assert visible == [2, 3, 5, 6, 7, 8, 9, 10]


def test_a_multiline_rendering_statement_is_one_stop_in_the_page(page, serve_site):
    trace = multiline_trace()
    site = serve_site({"multiline": trace})
    page.goto(site.url + "index.html?trace=multiline&step=0")
    page.wait_for_selector(".unit.current")
    assert "at=3" in page.evaluate("location.href")  # step 0 is passed over: the link's own step is the first stop
    assert page.locator("#env [data-name='x']").inner_text().endswith("0")  # written at step 1
    page.keyboard.press("l")
    assert "at=4" in page.evaluate("location.href")
    page.keyboard.press("R")  # raw: the lines inside the statements can be clicked
    page.click('.code a.no[data-line="3"]')  # no step of its own: the statement's
    assert "at=3" in page.evaluate("location.href")
