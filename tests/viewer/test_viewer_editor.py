"""The lecture editor in a real browser (CodeMirror, vendored): highlighting, search and replace,
undo, Python's indentation, saves that lose nothing (409 and the editor's choice), many tabs."""

from __future__ import annotations

import re

import pytest

from live_server import LECTURE, TOTAL_LINE
from static_site import VIEWER
from test_viewer_live import EDITOR, current_line, editor_line, editor_text, open_at_total_line, press_edit

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def live(serve_module_live):
    return serve_module_live()


@pytest.fixture
def editing(page, live):
    """The page with the editor open at the line of `total`; the lecture as it was, afterwards."""
    live.lecture.write_text(LECTURE)
    open_at_total_line(page, live)
    press_edit(page)
    page.locator(EDITOR).wait_for(state="visible")
    page.wait_for_function(f"() => document.querySelector('{EDITOR}').textContent.includes('First version')")
    yield page
    live.lecture.write_text(LECTURE)


def vendor_requests(page) -> list[str]:
    return page.evaluate("performance.getEntriesByType('resource').map((r) => r.name).filter((n) => n.includes('/vendor/'))")


def colour(page, selector: str) -> str:
    return page.locator(selector).first.evaluate("(node) => getComputedStyle(node).color")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_editor_loads_on_opening_and_highlights_python_as_the_code_pane_does(browser, live, scheme):
    context = browser.new_context(bypass_csp=True, color_scheme=scheme)
    page = context.new_page()
    try:
        live.lecture.write_text(LECTURE)
        open_at_total_line(page, live)
        page.locator(".cs336-live-edit").wait_for(state="visible")
        assert vendor_requests(page) == []  # a reader who does not edit fetches none of it
        press_edit(page)
        page.locator(".cs336-live-editor .cm-content .tok-k").first.wait_for()
        assert any(name.endswith("/vendor/codemirror/view.js") for name in vendor_requests(page))
        content = ".cs336-live-editor .cm-content"
        assert page.locator(f"{content} .tok-k", has_text="def").count() == 1
        assert page.locator(f"{content} .tok-s", has_text='"hello"').count() == 1
        assert page.locator(f"{content} .tok-c", has_text="# @inspect total").count() == 1
        assert page.locator(f"{content} .tok-nf", has_text="main").count() == 1
        # The code pane has pygments' finer classes (a double-quoted string, an integer).
        for ours, pygments in (("tok-k", "tok-k"), ("tok-s", "tok-s2"), ("tok-m", "tok-mi"), ("tok-c", "tok-c1")):
            assert colour(page, f"{content} .{ours}") == colour(page, f".code .{pygments}"), ours
        background = page.locator(".cs336-live-editor .cm-editor").evaluate("(node) => getComputedStyle(node).backgroundColor")
        dark = sum(int(part) for part in re.findall(r"\d+", background)[:3]) < 200
        assert dark == (scheme == "dark")
    finally:
        context.close()


def test_search_and_replace_and_one_undo_takes_back_the_replacement(editing):
    page = editing
    page.locator(EDITOR).press("Control+f")
    search = page.locator(".cm-search input[name=search]")
    search.wait_for()
    search.press_sequentially("greeting")  # CodeMirror takes the query on each key
    page.locator(".cm-searchMatch").first.wait_for()
    assert page.locator(".cm-searchMatch").count() == 3  # the name twice and the @inspect comment
    page.locator(".cm-search input[name=replace]").press_sequentially("salutation")
    page.locator(".cm-search button[name=replaceAll]").click()
    assert "greeting" not in editor_text(page) and editor_text(page).count("salutation") == 3
    page.locator(EDITOR).press("Control+z")
    assert editor_text(page) == LECTURE
    assert page.locator(".cs336-live-status").inner_text() == ""  # nothing unsaved


def test_undo_takes_back_typing_over_a_selection_as_one_edit_and_redo_brings_it_back(editing):
    page = editing
    editor = page.locator(EDITOR)
    editor.press("End")
    for _ in range(len("  # @inspect total")):
        editor.press("ArrowLeft")
    editor.press("Shift+Home")  # from the indentation's end: `total = len(greeting) + 1`
    page.keyboard.type("total = 7")
    edited = LECTURE.replace("total = len(greeting) + 1", "total = 7")
    assert editor_text(page) == edited
    assert page.locator(".cs336-live-status").inner_text() == "Unsaved changes"
    editor.press("Control+z")
    assert editor_text(page) == LECTURE
    editor.press("Control+Shift+z")
    assert editor_text(page) == edited


def test_python_indentation_closing_brackets_and_comment_toggle(editing):
    page = editing
    editor = page.locator(EDITOR)
    editor.press("End")
    editor.press("Enter")
    page.keyboard.type("if total:")
    editor.press("Enter")
    page.keyboard.type("note = 1  # then:")  # a comment ending in ':' opens no block
    editor.press("Enter")
    page.keyboard.type("print(")  # the closing bracket comes with it
    lines = editor_text(page).split("\n")
    assert lines[TOTAL_LINE:TOTAL_LINE + 3] == ["    if total:", "        note = 1  # then:", "        print()"]
    assert page.locator(".cs336-live-editor .cm-matchingBracket").count() == 2
    page.keyboard.type(")")  # typed over the one that came with "("
    assert editor_text(page).split("\n")[TOTAL_LINE + 2] == "        print()"
    editor.press("Control+/")
    assert editor_text(page).split("\n")[TOTAL_LINE + 2] == "        # print()"
    editor.press("Control+/")
    assert editor_text(page).split("\n")[TOTAL_LINE + 2] == "        print()"
    assert page.locator(".cs336-live-position").inner_text() == f"Ln {TOTAL_LINE + 3}, Col 16"


def test_a_change_on_disk_is_said_at_once_and_the_save_over_it_is_refused_until_chosen(editing, live):
    page = editing
    editor = page.locator(EDITOR)
    editor.press("End")
    page.keyboard.type("  # mine")
    mine = editor_text(page)
    theirs = LECTURE.replace("The end", "Their ending")
    live.lecture.write_text(theirs)
    bar = page.locator(".cs336-conflict")
    bar.wait_for(timeout=60_000)  # before any save: the server said the file changed
    assert "changed on disk while you were editing" in bar.inner_text()
    assert editor_text(page) == mine  # nothing of mine is lost

    editor.press("Control+s")  # saved anyway: the server refuses (409), the bar stays
    page.locator(".cs336-live-status").filter(has_text="Not saved: the file changed on disk").wait_for()
    assert live.lecture.read_text() == theirs

    page.locator(".cs336-conflict-diff-button").click()
    diff = page.locator(".cs336-conflict-diff")
    theirs_lines = [line.rstrip("\n") for line in diff.locator(".cs336-diff-theirs").all_text_contents()]
    mine_lines = [line.rstrip("\n") for line in diff.locator(".cs336-diff-mine").all_text_contents()]
    assert theirs_lines == ['−     total = len(greeting) + 1  # @inspect total', '−     text("Their ending")']
    assert mine_lines == ['+     total = len(greeting) + 1  # @inspect total  # mine', '+     text("The end")']
    assert page.locator(".cs336-live-editor .cm-editor").bounding_box()["height"] > 60  # still in sight under it

    page.locator(".cs336-conflict-mine").click()  # keep mine: saved over theirs, theirs backed up
    bar.wait_for(state="hidden")  # the save went through
    assert live.lecture.read_text() == mine
    assert (live.folder / "backups" / "live_lecture.py.bak").read_text() == theirs

    # Reload theirs: the file on disk replaces the editor's unsaved text.
    page.locator(".cs336-live-editor").wait_for(state="hidden", timeout=120_000)  # the save re-traced
    press_edit(page)
    editor.wait_for(state="visible")
    page.wait_for_function(f"() => document.querySelector('{EDITOR}').textContent.includes('# mine')")
    editor.press("End")
    page.keyboard.type("  # again")
    live.lecture.write_text(theirs)
    bar.wait_for(timeout=60_000)
    page.locator(".cs336-conflict-theirs").click()
    assert editor_text(page) == theirs and not bar.is_visible()
    assert editor_line(page) == TOTAL_LINE


def test_a_change_on_disk_is_taken_in_when_nothing_is_unsaved(editing, live):
    page = editing
    theirs = LECTURE.replace("First version", "Version from disk")
    live.lecture.write_text(theirs)
    page.wait_for_function("(text) => document.querySelector('.cs336-live-status').textContent.includes(text)",
                           arg="Reloaded: the file changed on disk", timeout=60_000)
    assert editor_text(page) == theirs
    assert editor_line(page) == TOTAL_LINE


def test_the_editor_speaks_russian_and_chinese(page, live):
    live.lecture.write_text(LECTURE)
    page.goto(f"{live.url}&trace=live_lecture&lang=ru")
    press_edit(page)
    page.locator(EDITOR).wait_for(state="visible")
    page.locator(EDITOR).press("Control+f")
    assert page.locator(".cm-search input[name=search]").get_attribute("placeholder") == "Найти"
    assert page.locator(".cm-search button[name=replaceAll]").inner_text() == "заменить все"
    assert page.locator(".cs336-live-position").inner_text().startswith("Стр ")
    page.locator(EDITOR).press("Escape")  # closes the search panel first
    page.locator("#language").select_option("zh")
    page.locator(EDITOR).press("Control+f")
    assert page.locator(".cm-search input[name=search]").get_attribute("placeholder") == "查找"


def test_ten_tabs_of_one_server_all_hear_a_retrace(browser, live):
    """Browsers open six connections to a host: with a stream per tab, the seventh never loaded."""
    live.lecture.write_text(LECTURE)
    context = browser.new_context(bypass_csp=True)
    try:
        pages = [context.new_page() for _ in range(10)]
        for page in pages:
            page.goto(f"{live.url}&trace=live_lecture")
            page.wait_for_selector(".code .line.current", state="attached", timeout=60_000)
            page.wait_for_function("() => document.documentElement.classList.contains('cs336-live')")
        live.lecture.write_text(LECTURE.replace("First version", "Seen by every tab"))
        for page in pages:
            page.get_by_text("Seen by every tab of the lecture", exact=True).wait_for(timeout=120_000)
        # A tab opened now still learns the latest state of each lecture (replayed by the shared stream).
        late = context.new_page()
        late.goto(f"{live.url}&trace=live_lecture")
        late.get_by_text("Seen by every tab of the lecture", exact=True).wait_for(timeout=60_000)
    finally:
        context.close()
        live.lecture.write_text(LECTURE)


def test_after_a_retrace_what_changed_is_marked_and_c_steps_to_it(page, live):
    live.lecture.write_text(LECTURE)
    open_at_total_line(page, live)
    live.lecture.write_text(LECTURE.replace("First version", "Second version").replace("len(greeting) + 1", "len(greeting) + 2"))
    page.get_by_text("Second version of the lecture", exact=True).wait_for(timeout=120_000)
    assert current_line(page) == TOTAL_LINE
    total = page.locator(".env-row[data-name=total]")
    assert "differs" in total.get_attribute("class")
    assert total.locator(".env-differs").get_attribute("title") == "Before the edit: 6"
    assert "differs" not in page.locator(".env-row[data-name=greeting]").get_attribute("class")
    changed = page.locator(".block .rendered.changed")
    assert changed.all_inner_texts() == ["Second version of the lecture"]  # the heading and "The end" are as before

    for _ in range(10):  # back to the first step
        page.keyboard.press("h")
    page.keyboard.press("c")
    page.wait_for_function(f"() => document.querySelector('.code .line.current').dataset.line === '{TOTAL_LINE - 1}'")
    page.keyboard.press("c")
    page.wait_for_function(f"() => document.querySelector('.code .line.current').dataset.line === '{TOTAL_LINE}'")
    page.keyboard.press("c")
    page.locator("#message").filter(has_text="Nothing changed by the edit after this step").wait_for()
    live.lecture.write_text(LECTURE)


def test_every_phrase_of_the_editors_panels_is_translated():
    """CodeMirror's own words in the parts the editor shows (search and replace, go to line, its
    announcements), read from the vendored modules, each have a Russian and a Chinese wording."""
    vendor = VIEWER / "vendor" / "codemirror"
    used = set()
    for module in ("search.js", "commands.js", "view.js"):
        used |= set(re.findall(r'phrase\((?:view, )?"([^"]+)"', (vendor / module).read_text(encoding="utf-8")))
    assert {"Find", "Replace", "replace all", "Go to line", "Selection deleted"} <= used
    source = (VIEWER / "js" / "editor.js").read_text(encoding="utf-8")
    for language in ("ru", "zh"):
        block = source.split(f"\n  {language}: {{\n", 1)[1].split("\n  },", 1)[0]
        assert used - set(re.findall(r"'([^']+)': '", block)) == set(), language
