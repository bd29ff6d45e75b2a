"""The viewer on a trace made by the real tracer (`cs336-lectures trace`) from a small
lecture-like file: what the tracer writes is what the viewer shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from trace_builders import line_of

pytestmark = pytest.mark.browser

LECTURE = '''import torch

from cs336_lectures import link, text


def main():
    text("# Mini lecture")
    text("## Tensors")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)  # @inspect x
    row = x[1]  # @inspect row
    note = "<script>window.__pwned = 1</script>"  # @inspect note
    secret = 7  # @hide
    total = double(secret)  # @inspect total
    link(double)
    print("done")
    text("## The end")


def double(value):
    result = 2 * value  # @inspect result
    return result
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory, serve_module_site, validate_trace):
    work = tmp_path_factory.mktemp("lecture")
    (work / "mini_lecture.py").write_text(LECTURE)
    out = work / "traces"
    done = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", "mini_lecture.py", "-o", str(out), "--quiet"],
                          cwd=work, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    trace = validate_trace(out / "mini_lecture.json")
    return serve_module_site({"mini_lecture": trace}, assets=out / "assets")


def url_step(page) -> int:
    return int(parse_qs(urlparse(page.evaluate("location.href")).query)["at"][0]) - 1  # the URL counts from 1


def current_line(page) -> int:
    return int(page.locator(".line.current").get_attribute("data-line"))


def test_real_trace_reads_and_steps(page, site):
    page.goto(site.url + "index.html")
    page.locator(".trace-card", has_text="mini_lecture").locator("a").click()
    page.wait_for_selector(".unit.current")
    assert page.locator("#toc li").all_inner_texts() == ["Mini lecture", "Tensors", "The end"]
    assert page.locator(".block .rendered h1").inner_text() == "Mini lecture"
    assert "secret = 7" not in page.locator("#code").inner_text()

    page.keyboard.press("l")
    page.keyboard.press("l")
    assert current_line(page) == line_of(LECTURE, "x = torch.arange")
    x = page.locator(".env-row[data-name=x]")
    assert "[2, 3]" in x.locator(".v-tensor-head").inner_text()
    assert x.locator(".v-matrix tr").nth(1).locator("td").all_inner_texts() == ["3.", "4.", "5."]

    page.keyboard.press("l")
    assert "shares storage with x" in page.locator(".env-row[data-name=row]").inner_text()
    assert "storage offset 3" in page.locator(".env-row[data-name=row]").inner_text()

    page.keyboard.press("l")
    assert page.locator(".env-row[data-name=note] .env-value").inner_text().strip() == "'<script>window.__pwned = 1</script>'"
    assert page.evaluate("window.__pwned") is None

    page.keyboard.press("l")  # the hidden line is skipped: on to the call of double()
    assert current_line(page) == line_of(LECTURE, "total = double")
    page.keyboard.press("l")
    assert current_line(page) == line_of(LECTURE, "result = 2 * value")
    assert page.locator(".env-row[data-name=result] .env-value").inner_text().strip() == "14"
    page.keyboard.press("u")
    assert current_line(page) == line_of(LECTURE, "link(double)")
    assert page.locator(".env-row[data-name=total] .env-value").inner_text().strip() == "14"

    page.keyboard.press("j")
    assert page.locator(".unit.current + .step-output .stdout").inner_text() == "done\n"
    page.click("a.r-internal")
    expect(page.locator(".target")).to_contain_text("def double")


def test_real_trace_header_is_what_the_index_shows(page, site):
    page.goto(site.url + "index.html")
    card = page.locator(".trace-card", has_text="mini_lecture")
    card.wait_for()
    index = json.loads(page.evaluate("fetch('traces/index.json').then((r) => r.text())"))
    assert f"{index['traces'][0]['num_steps']} steps" in card.inner_text()


def test_the_url_the_counter_and_the_terminal_name_a_step_alike(page, site):
    """Counted from 1 everywhere: ?at=N, "step N of M" on the page, "step N of M" in `show`."""
    total = len(json.loads((site.traces / "mini_lecture.json").read_text())["steps"])
    page.goto(site.url + "index.html?trace=mini_lecture")
    page.wait_for_selector(".unit.current")
    page.keyboard.press("l")
    page.keyboard.press("l")
    number = url_step(page) + 1
    assert page.locator("#counter").inner_text() == f"step {number} of {total}"
    shown = subprocess.run([sys.executable, "-m", "cs336_lectures", "show", str(site.traces / "mini_lecture.json"), "--step", str(number),
                            "--width", "100"], capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stderr
    assert f"step {number} of {total} (" in shown.stdout.splitlines()[0]
    assert f"mini_lecture.py:{current_line(page)}" in shown.stdout

    # A link made before (?step= named the index from 0) opens the same step, and says it the new way.
    page.goto(site.url + f"index.html?trace=mini_lecture&step={number - 1}")
    page.wait_for_selector(".unit.current")
    assert page.locator("#counter").inner_text() == f"step {number} of {total}"
    assert f"at={number}" in page.evaluate("location.href") and "step=" not in page.evaluate("location.href")
