"""In Chromium, under the real `cs336-lectures serve`: the trace of a resumed run is marked as
being checked, then verified by a whole run, or corrected (the whole run's trace shown, with
the step where the two parted)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from cs336_lectures.runtime.processes import kernel_can_fork

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not kernel_can_fork(), reason="resumed runs need the kernel: fork() and /proc")]

# intro() reads a file that no edit of the lecture changes: when it changes between two runs, a run
# reusing intro's checkpoint shows the old contents, the whole run the new ones.
LECTURE = '''from pathlib import Path

from cs336_lectures import text


def main():
    intro()
    body()


def intro():
    setting = Path("setting.txt").read_text()  # @inspect setting
    text(f"The setting is {setting}.")


def body():
    value = 2 * 3  # @inspect value
    text("Body, version one")
'''


def test_a_corrected_then_a_verified_trace_are_marked(page, tmp_path, serve_live):
    (tmp_path / "setting.txt").write_text("one")
    server = serve_live(LECTURE, folder=tmp_path)
    page.goto(f"{server.url}&trace=live_lecture")
    page.wait_for_selector(".code .line.current", state="attached")
    mark = page.locator(".cs336-verification")
    expect(mark).to_be_hidden()  # the first run was a whole one: nothing to check

    (tmp_path / "setting.txt").write_text("two")
    server.lecture.write_text(LECTURE.replace("version one", "version two"))
    expect(mark).to_have_attribute("data-state", "corrected", timeout=120_000)
    expect(mark).to_have_text("Corrected")
    page.get_by_text("The setting is two.", exact=True).wait_for()  # the whole run's trace, loaded
    title = mark.get_attribute("title")
    assert re.fullmatch(r"The resumed run differed from a fresh whole run, whose trace this is: "
                        r"corrected: the resumed run differed at step \d+", title), title
    page.screenshot(path=str(tmp_path / "corrected.png"))

    server.lecture.write_text(LECTURE.replace("version one", "version three"))
    page.get_by_text("Body, version three", exact=True).wait_for(timeout=120_000)
    expect(mark).to_have_attribute("data-state", "verified", timeout=120_000)
    expect(mark).to_have_text("Verified")
    assert mark.get_attribute("title") == "A fresh whole run of the lecture gave this same trace"
    page.locator("#language").select_option("ru")
    expect(mark).to_have_text("Проверено")
    page.screenshot(path=str(tmp_path / "verified.png"))
