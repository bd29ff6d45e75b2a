"""The viewer's rank switch (viewer/js/ranks.js) on real traces of a distributed lecture: `[` and
`]` move to the same point on another rank, a collective shows its tensors before and after on
every rank, and a failed rank says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from test_ranks import FAILING_SPAWN
from trace_builders import line_of

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
LECTURE = ROOT / "lectures" / "example_distributed.py"
SCREENSHOTS = os.environ.get("CS336_SCREENSHOTS")  # a folder to keep screenshots in, for a person to look at


def traced(lecture: Path, out: Path) -> dict:
    subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(lecture), "-o", str(out), "--quiet"],
                   cwd=lecture.parent, capture_output=True, text=True, timeout=300,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads((out / f"{lecture.stem}.json").read_text())


@pytest.fixture(scope="module")
def traces(tmp_path_factory, validate_trace):
    work = tmp_path_factory.mktemp("ranks")
    (work / "failing_spawn.py").write_text(FAILING_SPAWN)
    example = validate_trace(traced(LECTURE, work / "out"))
    failing = validate_trace(traced(work / "failing_spawn.py", work / "out"))
    return {"example_distributed": example, "failing_spawn": failing}


@pytest.fixture(scope="module")
def site(serve_module_site, traces):
    return serve_module_site(traces)


def step_at(trace: dict, rank: int, source: str, snippet: str, occurrence: int = 0) -> int:
    [entry] = [entry for entry in trace["ranks"] if entry["rank"] == rank]
    line = line_of(source, snippet)
    first, last = entry["steps"]
    return [s for s in range(first, last + 1) if trace["steps"][s][1] == line][occurrence]


def current(page) -> int:
    return int(page.evaluate("new URLSearchParams(location.search).get('at')")) - 1  # the URL counts from 1


def shoot(page, name: str) -> None:
    if SCREENSHOTS:
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=False)


def test_brackets_move_between_ranks_at_the_same_point(page, site, traces):
    trace = traces["example_distributed"]
    source = LECTURE.read_text()
    start = step_at(trace, 0, source, "dist.all_reduce(grad")
    page.goto(site.url + f"index.html?trace=example_distributed&step={start}")
    bar = page.locator("#ranks")
    expect(bar).to_be_visible()
    expect(bar.locator(".rank-button.current")).to_have_text("0")
    expect(bar.locator(".rank-button")).to_have_text(["0", "1"])
    page.keyboard.press("]")
    expect(bar.locator(".rank-button.current")).to_have_text("1")
    assert current(page) == step_at(trace, 1, source, "dist.all_reduce(grad")
    # Each rank's own inspected values: rank 1's loss is not rank 0's.
    expect(page.locator("#env .env-row[data-name=loss]")).to_be_visible()
    loss_one = page.locator("#env .env-row[data-name=loss] .env-value").inner_text()
    page.keyboard.press("[")
    expect(bar.locator(".rank-button.current")).to_have_text("0")
    assert current(page) == start
    assert page.locator("#env .env-row[data-name=loss] .env-value").inner_text() != loss_one
    # Cycling: `[` from rank 0 goes to the last rank; a click on a rank goes there too.
    page.keyboard.press("[")
    expect(bar.locator(".rank-button.current")).to_have_text("1")
    bar.locator(".rank-button", has_text="0").click()
    assert current(page) == start
    # Outside the ranks (the lecture's own main()) there is no bar, and the keys say why.
    page.goto(site.url + "index.html?trace=example_distributed&step=0")
    expect(page.locator(".unit.current")).to_be_visible()
    expect(bar).to_be_hidden()
    page.keyboard.press("]")
    expect(page.locator("#message")).to_contain_text("not in a rank")


def elements(cell) -> list[str]:
    """The elements of a 1-d tensor drawn in `cell`, without their index labels."""
    return cell.locator(".v-el").evaluate_all("els => els.map((e) => e.lastChild.textContent)")


def test_a_collective_shows_before_and_after_on_every_rank(page, site, traces):
    trace = traces["example_distributed"]
    step = step_at(trace, 1, LECTURE.read_text(), "dist.all_reduce(x")
    page.goto(site.url + f"index.html?trace=example_distributed&step={step}")
    table = page.locator("#ranks .collective-table")
    expect(page.locator("#ranks .collective-title")).to_have_text("all_reduce on every rank")
    rows = table.locator(":scope > tbody > tr")
    expect(rows).to_have_count(2)
    for rank, before in enumerate(["1.  2.  3.", "2.  4.  6."]):
        cells = rows.nth(rank).locator(":scope > td")
        expect(rows.nth(rank).locator(":scope > th")).to_have_text(str(rank))
        expect(cells.nth(0)).to_have_text("tensor")
        assert elements(cells.nth(1)) == before.split()
        assert elements(cells.nth(2)) == "3. 6. 9.".split()
    expect(rows.nth(1)).to_have_class("current")
    shoot(page, "ranks-collective")


def test_a_failed_rank_is_marked_and_its_error_shown(page, site, traces):
    trace = traces["failing_spawn"]
    step = step_at(trace, 0, FAILING_SPAWN, "x = torch.ones")
    page.goto(site.url + f"index.html?trace=failing_spawn&step={step}")
    bar = page.locator("#ranks")
    expect(bar.locator(".rank-button.rank-error")).to_have_text("1")
    expect(bar.locator(".ranks-note")).to_contain_text("Rank 0 stopped after another rank failed")
    page.keyboard.press("]")
    expect(bar.locator(".ranks-note")).to_contain_text("Rank 1 failed: ValueError: rank 1 gives up")
    bar.get_by_role("button", name="go to its last step").click()
    expect(page.locator(".unit.current + .step-output .error-title")).to_have_text("ValueError: rank 1 gives up")
    shoot(page, "ranks-failed")
