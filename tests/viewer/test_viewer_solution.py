"""Solution blocks in the viewer: a `with solution():` body stays folded behind "Show solution"
(its code, renderings and values) until the student opens it or steps into it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from trace_builders import line_of

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]

LECTURE = '''from cs336_lectures import solution, text


def main():
    text("# Mini exercise")
    text("What is six times seven?")
    with solution():
        answer = times(6, 7)  # @inspect answer
        text("The product is forty-two.")
    text("## After the exercise")
    after = 1  # @inspect after


def times(a, b):
    return a * b
'''


@pytest.fixture(scope="module")
def traced(tmp_path_factory, validate_trace):
    work = tmp_path_factory.mktemp("lecture")
    (work / "mini_exercise.py").write_text(LECTURE)
    out = work / "traces"
    done = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", "mini_exercise.py", "-o", str(out), "--quiet"],
                          cwd=work, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return validate_trace(out / "mini_exercise.json")


@pytest.fixture(scope="module")
def site(serve_module_site, traced):
    broken = dict(traced, solutions=[{"file": 0, "lines": [7, 9999], "steps": [0, 1]}])
    return serve_module_site({"mini_exercise": traced, "broken_solution": broken})


def step_of_line(trace: dict, snippet: str) -> int:
    line = line_of(LECTURE, snippet)
    return next(index for index, step in enumerate(trace["steps"]) if step[1] == line)


def open_at(page, site, step: int) -> None:
    page.goto(site.url + f"index.html?trace=mini_exercise&step={step}")
    page.wait_for_selector(".unit.current")


def test_the_trace_records_the_block(traced):
    [block] = traced["solutions"]
    assert block["lines"] == [line_of(LECTURE, "answer = times"), line_of(LECTURE, "The product is")]
    first, last = block["steps"]
    lines = [traced["steps"][s][1] for s in range(first, last + 1)]
    assert lines == [line_of(LECTURE, "answer = times"), line_of(LECTURE, "return a * b"), line_of(LECTURE, "The product is")]


def test_a_solution_is_folded_until_asked_for(page, site, traced):
    open_at(page, site, step_of_line(traced, "What is six"))
    code = page.locator("#code .rendered")
    expect(code.get_by_text("What is six times seven?")).to_be_visible()
    button = page.get_by_role("button", name="Show solution")
    expect(button).to_be_visible()
    expect(code.get_by_text("The product is forty-two.")).to_be_hidden()
    expect(page.locator(".unit.solution-folded")).to_have_count(2)

    button.click()
    expect(code.get_by_text("The product is forty-two.")).to_be_visible()
    expect(page.get_by_role("button", name="Hide solution")).to_have_attribute("aria-expanded", "true")
    page.get_by_role("button", name="Hide solution").click()
    expect(code.get_by_text("The product is forty-two.")).to_be_hidden()


def test_values_written_inside_a_folded_solution_are_hidden(page, site, traced):
    open_at(page, site, step_of_line(traced, "after = 1"))
    answer = page.locator(".env-row[data-name=answer] .env-value")
    expect(answer).to_contain_text("in a solution")
    expect(answer).not_to_contain_text("42")
    expect(page.locator(".env-row[data-name=after] .env-value")).to_have_text("1")
    page.get_by_role("button", name="Show solution").click()
    expect(answer).to_have_text("42")
    expect(page.locator("#code .rendered").get_by_text("The product is forty-two.")).to_be_visible()


def test_stepping_into_a_solution_opens_it(page, site, traced):
    open_at(page, site, step_of_line(traced, "What is six"))
    expect(page.get_by_role("button", name="Show solution")).to_be_visible()
    page.keyboard.press("l")  # the `with` line
    page.keyboard.press("l")  # the first line of the block
    expect(page.locator(".line.current")).to_have_attribute("data-line", str(line_of(LECTURE, "answer = times")))
    expect(page.get_by_role("button", name="Hide solution")).to_be_visible()
    expect(page.locator(".unit.solution-folded")).to_have_count(0)
    expect(page.locator(".env-row[data-name=answer] .env-value")).to_have_text("42")
    # Once seen, it stays open when the student steps on past it.
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(page.locator("#code .rendered").get_by_text("The product is forty-two.")).to_be_visible()


def test_reveal_mode_hides_the_bar_of_a_solution_not_reached_yet(page, site, traced):
    open_at(page, site, step_of_line(traced, "Mini exercise"))
    page.keyboard.press("a")
    expect(page.get_by_role("button", name="Show solution")).to_be_hidden()
    page.goto(page.evaluate("location.href").replace(f"at={step_of_line(traced, 'Mini exercise') + 1}",
                                                     f"at={step_of_line(traced, 'after = 1') + 1}"))
    page.wait_for_selector(".unit.current")
    page.keyboard.press("a")
    expect(page.get_by_role("button", name="Show solution")).to_be_visible()


def test_a_malformed_solution_gets_a_clear_message(page, site):
    page.goto(site.url + "index.html?trace=broken_solution")
    expect(page.locator("body")).to_contain_text("solutions[0] has lines [7,9999]")


def test_the_lecture_exercises_are_folded(page, tmp_path, serve_site, validate_trace):
    """The real lecture 2: its exercise answers start folded."""
    out = tmp_path / "traces"
    done = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", "lectures/lecture_02.py",
                           "--section", "exercise_napkin_math_rtx4080", "-o", str(out), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    trace = validate_trace(out / "lecture_02.exercise_napkin_math_rtx4080.json")
    site = serve_site({"exercise": trace}, assets=out / "assets")
    page.goto(site.url + "index.html?trace=exercise&step=0")
    page.wait_for_selector(".unit.current")
    expect(page.get_by_role("button", name="Show solution")).to_have_count(1)
    expect(page.locator("#code .rendered").get_by_text("Will the run be done in an afternoon")).to_be_visible()
    expect(page.locator("#code .rendered").get_by_text("hours, an afternoon")).to_be_hidden()
    page.get_by_role("button", name="Show solution").click()
    expect(page.locator("#code .rendered").get_by_text("hours, an afternoon")).to_be_visible()
    assert json.loads((out / "lecture_02.exercise_napkin_math_rtx4080.json").read_text())["version"] == 2


@pytest.mark.slow
def test_an_opened_solution_stays_open_when_the_lecture_is_retraced(page, serve_live):
    """Live mode: saving the lecture re-traces it; the solutions the reader opened stay open."""
    live = serve_live()
    page.goto(f"{live.url}&trace=live_lecture")
    page.wait_for_selector(".code .line.current", state="attached")
    page.locator(".cs336-live-edit").wait_for(state="visible")  # live mode is up: it hears the run
    live.lecture.write_text(LECTURE)
    rendered = page.locator("#code .rendered")
    rendered.get_by_text("What is six times seven?").wait_for(timeout=120_000)
    page.get_by_role("button", name="Show solution").click()
    expect(rendered.get_by_text("The product is forty-two.")).to_be_visible()
    live.lecture.write_text(LECTURE.replace("After the exercise", "After the edited exercise"))
    rendered.get_by_text("After the edited exercise").wait_for(timeout=120_000)
    expect(rendered.get_by_text("The product is forty-two.")).to_be_visible()
    expect(page.get_by_role("button", name="Hide solution")).to_be_visible()
