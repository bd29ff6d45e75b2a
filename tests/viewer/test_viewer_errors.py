"""The viewer on bad input (never a blank page), in dark mode and on a narrow screen, and the
synthetic trace the benchmark uses."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from static_site import ROOT
from trace_builders import demo_trace, markdown

sys.path.insert(0, str(ROOT / "benchmarks"))
from synthetic_trace import synthetic_trace  # noqa: E402

pytestmark = pytest.mark.browser


def bad_traces() -> dict[str, str]:
    good = demo_trace()
    text = json.dumps(good)
    wrong_version = dict(good, version=3)
    wrong_format = dict(good, format="something-else")
    bad_step = json.loads(text)
    bad_step["steps"][3] = [0, 9999]
    cycle = json.loads(text)
    cycle["calls"][1][1] = 30  # add() called by a step that comes after it
    return {
        "truncated": text[: len(text) // 2],
        "wrong_version": json.dumps(wrong_version),
        "wrong_format": json.dumps(wrong_format),
        "bad_step": json.dumps(bad_step),
        "not_a_trace": "[1, 2, 3]",
        "cycle": json.dumps(cycle),
        "empty": json.dumps(dict(good, steps=[], calls=[], header=dict(good["header"], num_steps=0))),
    }


@pytest.fixture(scope="module")
def site(serve_module_site):
    return serve_module_site({"demo": demo_trace(), **bad_traces()})


@pytest.mark.parametrize("name, expected", [
    ("truncated", "not valid JSON"),
    ("wrong_version", "version 3, but this viewer reads versions 1, 2"),
    ("wrong_format", 'not a cs336-lectures trace: its format is "something-else"'),
    ("bad_step", "steps[3] points at line 9999"),
    ("not_a_trace", "not a trace object"),
    ("cycle", "runs in a call made by a later step"),
    ("empty", "records no steps"),
    ("no_such_lecture", "could not be loaded (HTTP 404)"),
    ("..%2Fetc", "is not a trace name"),
])
def test_broken_traces_show_a_clear_message(page, site, name, expected):
    page.goto(site.url + f"index.html?trace={name}")
    failure = page.locator("#failure")
    failure.wait_for()
    assert expected in page.locator("#failure-text").inner_text()
    assert page.locator("#failure-title").inner_text().startswith("Cannot show" if name != "empty" else "The trace")
    page.click("#failure-back")
    page.locator(".trace-card").first.wait_for()


def test_missing_index_says_how_to_make_one(page, serve_site):
    site = serve_site()
    (site.traces / "index.json").unlink()
    page.goto(site.url + "index.html")
    message = page.locator("#index-view .failure-text")
    message.wait_for()
    assert "traces/index.json could not be loaded (HTTP 404)" in message.inner_text()
    assert "cs336-lectures serve" in message.inner_text()


def luminance(css_color: str) -> float:
    red, green, blue = (float(part) for part in re.findall(r"[\d.]+", css_color)[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def test_dark_mode_is_readable(browser, site):
    context = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(site.url + "index.html?trace=demo&step=3")
    page.wait_for_selector(".unit.current")
    colors = page.evaluate("""() => {
        const style = (selector) => getComputedStyle(document.querySelector(selector));
        return {page: style('body').backgroundColor, text: style('body').color,
                code: style('.code-pane').backgroundColor, codeText: style('.line .src').color,
                env: style('.env').backgroundColor, envText: style('.env-name').color};
    }""")
    page.screenshot(path=str(Path("/tmp") / "cs336_viewer_dark.png"))
    context.close()
    for background, foreground in [("page", "text"), ("code", "codeText"), ("env", "envText")]:
        assert luminance(colors[background]) < 0.2, colors
        assert luminance(colors[foreground]) > 0.7, colors


@pytest.fixture
def phone(browser):
    """A page on a phone-sized touch screen."""
    context = browser.new_context(viewport={"width": 390, "height": 800}, is_mobile=True, has_touch=True)
    yield context.new_page()
    context.close()


def test_narrow_screen_stacks_values_under_the_code(phone, site):
    page = phone
    page.goto(site.url + "index.html?trace=demo&step=3")
    page.wait_for_selector(".unit.current")
    assert not page.locator("#toc").is_visible()
    code = page.locator("#code").bounding_box()
    env = page.locator("#env").bounding_box()
    assert env["y"] >= code["y"] + code["height"] - 1
    assert env["width"] > 300 and code["width"] > 300
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.click("button[data-action=forward]")
    assert "at=5" in page.evaluate("location.href")
    page.screenshot(path=str(Path("/tmp") / "cs336_viewer_narrow.png"))


def test_narrow_screen_reaches_the_contents_through_a_button(phone, site):
    page = phone
    page.goto(site.url + "index.html?trace=demo&step=0")
    page.wait_for_selector(".unit.current")
    assert not page.locator("#toc").is_visible()
    page.click("#contents-button")
    assert page.locator("#toc").is_visible()
    page.locator("#toc a", has_text="Links and images").click()
    assert not page.locator("#toc").is_visible()  # it closes on the way to the section
    assert "Links and images" in page.locator(".block.current").inner_text()


def test_synthetic_trace_follows_the_schema(validate_trace):
    trace = validate_trace(synthetic_trace(num_steps=3_000, num_lines=200))
    assert len(trace["steps"]) == trace["header"]["num_steps"] == 3_000
    assert max(step[1] for step in trace["steps"]) <= 200
    assert len(trace["calls"]) > 10 and any(len(step) == 3 and "r" in step[2] for step in trace["steps"])


def current_in_sight(page) -> bool:
    return page.evaluate("""() => {
        const pane = document.getElementById('code').getBoundingClientRect();
        const unit = document.querySelector('.unit.current').getBoundingClientRect();
        return unit.top >= pane.top && unit.bottom <= pane.bottom;
    }""")


def test_large_trace_opens_steps_and_keeps_the_step_in_sight(page, serve_site):
    site = serve_site({"big": synthetic_trace(num_steps=20_000, num_lines=1_000)})
    page.goto(site.url + "index.html?trace=big&step=15000")
    page.wait_for_selector(".unit.current")
    assert current_in_sight(page)
    for key in "ljkuhjjjl":
        page.keyboard.press(key)
        assert page.locator(".unit.current").count() == 1
        assert current_in_sight(page)
    box = page.locator("#progress").bounding_box()
    for fraction in (0.9, 0.1, 0.6):
        page.mouse.click(box["x"] + fraction * box["width"], box["y"] + 2)
        assert current_in_sight(page)
    assert page.locator("#toc li").count() == 50


def test_reload_recovers_from_a_failed_load(page, serve_site):
    site = serve_site({"late": "{"})
    page.goto(site.url + "index.html?trace=late&step=2")
    page.locator("#failure").wait_for()
    assert page.evaluate("window.cs336Viewer.currentTrace()") == "late"
    (site.traces / "late.json").write_text(json.dumps(demo_trace("late")))
    page.evaluate("window.cs336Viewer.reload()")
    page.wait_for_selector(".unit.current")
    assert "at=3" in page.evaluate("location.href")


def test_unknown_value_shapes_do_not_break_the_page(page, serve_site):
    trace = demo_trace("odd")
    trace["steps"][2][2]["v"]["weird"] = {"t": "dict", "items": [5]}
    trace["steps"][2][2]["v"]["future"] = {"t": "quaternion", "w": 1}
    site = serve_site({"odd": trace})
    page.goto(site.url + "index.html?trace=odd&step=2")
    page.wait_for_selector(".unit.current")
    assert "cannot be shown" in page.locator(".env-row[data-name=weird]").inner_text()
    assert "quaternion" in page.locator(".env-row[data-name=future]").inner_text()
    assert page.locator(".env-row[data-name=x] .v-matrix").count() == 1
    page.keyboard.press("l")
    assert "at=4" in page.evaluate("location.href")


def test_a_long_heading_takes_at_most_two_lines_in_the_contents(page, serve_site):
    trace = demo_trace("wordy")
    long = "A heading that goes on " + "and on " * 40
    trace["steps"][1][2]["r"] = [markdown(f"<h2>{long}</h2>", [[2, long, "wordy"]])]
    site = serve_site({"wordy": trace})
    page.goto(site.url + "index.html?trace=wordy&step=0")
    entry = page.locator("#toc li a", has_text="A heading that goes on")
    line_height = page.locator("#toc li a").first.bounding_box()["height"]
    assert entry.bounding_box()["height"] < 2.5 * line_height
    assert entry.get_attribute("title") == long
