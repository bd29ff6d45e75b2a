"""The viewer as a newcomer meets it: the list of lectures, where a lecture opens, how steps are
counted, numbers on real lecture values, wide and 1-d tensors, the resizable values panel,
reveal mode's function headers, view modes in the URL, long lines and the narrow screen."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from static_site import ROOT, index_entry
from trace_builders import DEMO_SOURCE, TraceBuilder, demo_trace, line_of, markdown, tensor

pytestmark = pytest.mark.browser

DEMO = demo_trace()
at_demo = functools.partial(line_of, DEMO_SOURCE)

OPENING_SOURCE = '''def main():
    intro()


def intro():
    text("# The title")
    width = 1800000  # @inspect width
    wide = torch.ones(2, 32)  # @inspect wide
    vector = torch.arange(36) / 3  # @inspect vector
    explanation = "a long line that goes on and on, well past the edge of a narrow screen, so that it has to wrap"  # @inspect explanation
'''


def opening_trace() -> dict:
    """main() calls intro(), whose first line puts the title on the page: the lecture should open there."""
    at = functools.partial(line_of, OPENING_SOURCE)
    b = TraceBuilder("opening")
    f = b.file("lectures/opening.py", OPENING_SOURCE)
    for number, line in enumerate(OPENING_SOURCE.splitlines(), 1):  # comments marked as pygments marks them
        if "  # " in line:
            code, comment = line.split("  # ")
            b.files[f]["html"][number - 1] = f'{code}  <span class="tok-c1"># {comment}</span>'
    main = b.call(b.function(f, "main", 1))
    s = b.step(main, at("intro()"))
    intro = b.call(b.function(f, "intro", at("def intro")), s)
    b.step(intro, at('text("# The title")'), r=[markdown("<h1>The title</h1>", [[1, "The title", "the-title"]])])
    b.step(intro, at("width ="), v={"width": 1800000})
    b.step(intro, at("wide ="), v={"wide": tensor([2, 32], [[1.0 + i / 7 for i in range(32)]] * 2, storage=1)})
    b.step(intro, at("vector ="), v={"vector": tensor([36], [i / 3 for i in range(36)], storage=2)})
    b.step(intro, at("explanation ="), v={"explanation": "short"})
    return b.build()


@pytest.fixture(scope="module")
def site(serve_module_site):
    return serve_module_site({"demo": DEMO, "opening": opening_trace()})


def url_step(page) -> int:
    return int(re.search(r"[?&]at=(\d+)", page.evaluate("location.href")).group(1)) - 1  # the URL counts from 1


def open_trace(page, site, query: str) -> None:
    page.goto(site.url + f"index.html?{query}")
    page.wait_for_selector(".unit.current")


def test_index_cards_show_docstring_title_summary_counts_status_in_lecture_order(page, serve_site):
    traces = {name: demo_trace(name) for name in ("example_basics", "lecture_10", "lecture_02", "lecture_02.optimizers", "lecture_01")}
    site = serve_site(traces)
    entries = [index_entry(name, trace) for name, trace in traces.items()]
    summaries = {"lecture_01": "CS336 lecture 1: why build language models from scratch, and tokenization.",
                 "example_basics": "A tour of the framework: every primitive and every directive, once."}
    for entry in entries:
        if entry["name"] in summaries:
            entry["summary"] = summaries[entry["name"]]
    entries[1]["failing"] = "ZeroDivisionError: division by zero (lecture_10.py:3)"
    (site.traces / "index.json").write_text(json.dumps({"traces": entries}))
    page.goto(site.url + "index.html")
    page.wait_for_selector(".trace-card")
    names = page.locator(".trace-name").all_inner_texts()
    assert names == ["lecture_01", "lecture_02", "lecture_02.optimizers", "lecture_10", "example_basics"]
    first = page.locator(".trace-card").first
    assert first.locator(".trace-title").inner_text() == "CS336 lecture 1"
    assert first.locator(".trace-summary").inner_text() == "Why build language models from scratch, and tokenization."
    assert f"{len(DEMO['steps'])} steps" in first.inner_text() and "traced" in first.inner_text()
    assert first.locator(".badge-ok").inner_text() == "ok"
    failing = page.locator(".trace-card", has_text="lecture_10")
    assert failing.locator(".badge-failing").inner_text() == "file fails now"
    assert "ZeroDivisionError" in failing.inner_text()
    assert page.locator(".trace-card").nth(1).locator(".trace-title").inner_text() == "lecture_02"  # no docstring: the name
    hint = page.locator(".index-hint").inner_text()
    assert "e edit" in hint and "Ctrl+S" in hint


def test_a_lecture_opens_on_its_title_unless_the_url_names_a_step(page, site):
    open_trace(page, site, "trace=opening")
    assert url_step(page) == 1  # the title, not main()'s call to intro()
    assert page.locator(".unit.current").inner_text().strip() == "The title"
    open_trace(page, site, "trace=opening&step=0")
    assert url_step(page) == 0
    assert "intro()" in page.locator(".unit.current").inner_text()


def test_steps_are_counted_as_the_list_counts_them(page, site):
    page.goto(site.url + "index.html")
    total = len(DEMO["steps"])
    assert f"{total} steps" in page.locator(".trace-card", has_text="demo").inner_text()
    open_trace(page, site, f"trace=demo&step={total - 1}")
    assert page.locator("#counter").inner_text() == f"step {total} of {total}"
    open_trace(page, site, "trace=demo&step=0")
    assert page.locator("#counter").inner_text() == f"step 1 of {total}"


def test_reveal_shows_a_helpers_lines_under_its_own_def(page, site):
    inside_add = next(s for s, step in enumerate(DEMO["steps"]) if step[1] == at_demo("c = a + b"))
    before_add = inside_add - 2
    def_add = page.locator(f".line[data-line='{at_demo('def add')}']")
    def_count = page.locator(f".line[data-line='{at_demo('def count')}']")
    open_trace(page, site, f"trace=demo&step={before_add}&reveal=1")
    assert not def_add.is_visible()  # add() has not been called yet
    open_trace(page, site, f"trace=demo&step={inside_add}&reveal=1")
    assert def_add.is_visible()
    assert page.locator(f".line[data-line='{at_demo('c = a + b')}']").is_visible()
    assert not def_count.is_visible()  # count() runs later
    page.keyboard.press("A")
    assert "reveal" not in page.evaluate("location.href") and def_count.is_visible()


def test_raw_and_reveal_modes_are_in_the_url(page, site):
    open_trace(page, site, "trace=demo&step=3")
    page.keyboard.press("R")
    page.keyboard.press("A")
    href = page.evaluate("location.href")
    assert "raw=1" in href and "reveal=1" in href
    page.reload()
    page.wait_for_selector(".unit.current")
    assert page.locator("#raw-button").get_attribute("aria-pressed") == "true"
    assert page.locator("#reveal-button").get_attribute("aria-pressed") == "true"
    assert "raw" in page.locator("#code").get_attribute("class")
    page.keyboard.press("R")
    assert "raw=1" not in page.evaluate("location.href")
    page.keyboard.press("g")
    page.wait_for_selector(".trace-card")
    assert "reveal" not in page.evaluate("location.href")  # modes belong to a lecture's view


def test_long_lines_wrap_with_a_hanging_indent_and_directives_are_dimmed(page, site):
    page.set_viewport_size({"width": 400, "height": 800})
    open_trace(page, site, "trace=opening&step=5")
    boxes = page.evaluate("""() => {
        const src = document.querySelector('.line.current .src');
        const range = document.createRange();
        range.selectNodeContents(src);
        const lines = [...new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)))];
        const first = document.createRange();
        first.setStart(src.firstChild, 0);
        first.setEnd(src.firstChild, 1);
        const probe = document.createElement('span');
        probe.textContent = 'x';
        src.append(probe);
        const ch = probe.getBoundingClientRect().width;
        probe.remove();
        const rects = Array.from(range.getClientRects());
        const left = (top) => Math.min(...rects.filter((r) => Math.round(r.top) === top).map((r) => r.left));
        return { lines: lines.length, first: left(lines[0]), second: left(lines[1]), ch };
    }""")
    assert boxes["lines"] > 1
    # The line is indented 4 columns; its wrapped parts start 4 columns further in than that.
    assert abs(boxes["second"] - (boxes["first"] + 8 * boxes["ch"])) < 2
    directive = page.locator(".line.current .directive")
    assert directive.inner_text().startswith("# @inspect")
    assert float(directive.evaluate("(node) => getComputedStyle(node).opacity")) < 1
    assert page.locator(".line.current .no").inner_text() == str(line_of(OPENING_SOURCE, "explanation ="))


def test_wide_tensors_scroll_inside_the_panel_which_can_be_widened(page, site):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_trace(page, site, "trace=opening&step=3")
    panel = page.locator("#env")
    scroller = page.locator(".env-row[data-name=wide] .v-scroll")
    box, outer = scroller.bounding_box(), panel.bounding_box()
    assert box["x"] + box["width"] <= outer["x"] + outer["width"] + 1
    sizes = scroller.evaluate("""(n) => { n.scrollLeft = 50; const style = getComputedStyle(n);
        return { scroll: n.scrollWidth, client: n.clientWidth, left: n.scrollLeft, overflow: style.overflowX, edge: style.backgroundImage }; }""")
    assert sizes["scroll"] > sizes["client"] and sizes["left"] == 50 and sizes["overflow"] == "auto"
    # Headless Chromium hides scrollbars; the shading at the edge with more to see shows everywhere.
    assert sizes["edge"].count("radial-gradient") == 2
    before = outer["width"]
    handle = page.locator("#divider").bounding_box()
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + 200)
    page.mouse.down()
    page.mouse.move(handle["x"] - 300, handle["y"] + 200, steps=5)
    page.mouse.up()
    widened = panel.bounding_box()["width"]
    assert abs(widened - (before + 300 + handle["width"] / 2)) < 12
    page.reload()
    page.wait_for_selector(".unit.current")
    assert abs(panel.bounding_box()["width"] - widened) < 2  # remembered
    page.locator("#divider").focus()
    page.keyboard.press("ArrowLeft")
    assert abs(panel.bounding_box()["width"] - (widened + 24)) < 2
    assert url_step(page) == 3  # the arrow resized the panel; it did not step


def test_copy_exact_puts_every_digit_on_the_clipboard(browser, site):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        open_trace(page, site, "trace=opening&step=4")
        row = page.locator(".env-row[data-name=vector]")
        assert row.locator(".v-el").count() == 36 and row.locator("table").count() == 0
        assert row.locator(".v-el").nth(1).inner_text().split() == ["1", "0.3333"]
        assert row.locator(".v-el").nth(1).locator("[title]").get_attribute("title") == "0.3333333333333333"
        row.hover()
        row.locator(".env-copy").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied.startswith("tensor([0.0, 0.3333333333333333, 0.6666666666666666, 1.0,")
        assert row.locator(".env-copy").inner_text() == "copied"
        assert page.locator(".env-row[data-name=width] .env-value").inner_text() == "1,800,000"
    finally:
        context.close()


def test_the_narrow_screen_keeps_the_counter_lectures_and_help(page, site):
    page.set_viewport_size({"width": 400, "height": 800})
    open_trace(page, site, "trace=demo&step=3")
    for selector in ("#counter", "button[data-action=traces]", "button[data-action=help]"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 400, selector
    assert page.locator("#counter").inner_text() == f"step 4 of {len(DEMO['steps'])}"
    page.locator("button[data-action=help]").click()
    help_box = page.locator("#help")
    assert help_box.is_visible()
    keys = help_box.locator("dt").all_inner_texts()
    assert "e" in keys and "Ctrl+S" in keys
    box = help_box.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 400
    page.keyboard.press("Escape")
    page.locator("button[data-action=traces]").click()
    page.wait_for_selector(".trace-card")


def test_numbers_on_real_lecture_values(page, tmp_path_factory, serve_site):
    work = tmp_path_factory.mktemp("real")
    out = work / "traces"
    subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(ROOT / "lectures" / "lecture_02.py"), "-o", str(out), "--quiet"],
                   check=True, cwd=work)
    trace = json.loads((out / "lecture_02.json").read_text())
    assert trace["version"] == 2 and trace["header"]["docstring"].startswith("CS336 lecture 2")
    first_write = {}
    for s, step in enumerate(trace["steps"]):
        for name in (step[2].get("v", {}) if len(step) > 2 else {}):
            first_write.setdefault(name, s)
    expected = {"days": ("143.9", "143.92659381842682"), "h100_flop_per_sec": ("9.895e14", "989500000000000.0"),
                "gpt3_ffn_bytes": ("2,415,919,104", "2415919104"), "bf16_value": ("1.001e-8", "1.0011717677116394e-08")}
    site = serve_site({"lecture_02": trace}, assets=out / "assets")
    for name, (shown, exact) in expected.items():
        page.goto(site.url + f"index.html?trace=lecture_02&step={first_write[name]}")
        value = page.locator(f".env-row[data-name={name}] .env-value .v-num").first
        value.wait_for()
        assert value.inner_text() == shown, name
        assert value.get_attribute("title") == exact, name


@pytest.mark.parametrize("width", [800, 1280])
def test_at_400_pixels_high_the_values_and_figures_stay_usable(page, site, width):
    page.set_viewport_size({"width": width, "height": 400})
    open_trace(page, site, "trace=demo&at=1")
    code = page.locator("#code").bounding_box()
    values = page.locator("#env").bounding_box()
    assert values["x"] >= code["x"] + code["width"] - 1  # beside the code, not a third of the height under it
    assert values["height"] > 300 and code["height"] > 300
    assert page.locator(".topbar").bounding_box()["height"] < 45  # one row
    # A figure fits in the code pane whole (scaled down to its height, not cut off).
    largest = page.locator(".r-plot").first.evaluate("(img) => parseFloat(getComputedStyle(img).maxHeight)")
    assert largest <= code["height"] - 60
