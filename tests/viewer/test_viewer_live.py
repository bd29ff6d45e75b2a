"""Live mode in a real browser: the real `cs336-lectures serve` (a subprocess), the real tracer and
viewer, editing a lecture through the page and watching it re-trace."""

from __future__ import annotations

import http.client
import json
import re

import pytest

from live_server import LECTURE, TOTAL_LINE, LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def live(serve_module_live):
    server = serve_module_live()
    yield server
    server.close()  # before the fixture's own teardown would: how the server exits is checked here
    assert server.process.returncode == 0, "the server did not stop cleanly on Ctrl-C:\n" + "".join(server.output)


def current_line(page) -> int:
    return int(page.locator(".code .line.current").first.get_attribute("data-line"))


EDITOR = ".cs336-live-editor .cm-content"  # where the editor's keys go
# The page's CodeMirror view: the same module instance as the editor's (the same URL).
EDITOR_VIEW = ("(await import('/vendor/codemirror/view.js')).EditorView"
               ".findFromDOM(document.querySelector('.cs336-live-editor .cm-editor'))")


def editor_text(page) -> str:
    return page.evaluate(f"async () => {EDITOR_VIEW}.state.doc.toString()")


def editor_line(page) -> int:
    """The 1-based line of the editor's cursor."""
    return page.evaluate(f"async () => {{ const state = {EDITOR_VIEW}.state; "
                         "return state.doc.lineAt(state.selection.main.head).number; }")


def replace_editor_text(page, text: str) -> None:
    """Put `text` in the editor as one edit (a paste over everything)."""
    page.evaluate(f"async (text) => {{ const view = {EDITOR_VIEW}; "
                  "view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: text}, userEvent: 'input.paste'}); }",
                  text)


def press_edit(page) -> None:
    """Press `e` once live mode is up (its Edit button shows): a key pressed while the page is
    still asking the server what it is goes to the plain viewer, which has no editor."""
    page.locator(".cs336-live-edit").wait_for(state="visible")
    page.keyboard.press("e")


def open_at_total_line(page, live: LiveServer) -> None:
    page.goto(f"{live.url}&trace=live_lecture")
    page.wait_for_selector(".code .line.current", state="attached")
    for _ in range(30):
        if current_line(page) == TOTAL_LINE:
            return
        page.keyboard.press("l")
    raise AssertionError("stepping never reached the line of `total`")


def test_edit_and_retrace_through_the_page_keeps_the_reader_in_place(page, live):
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    open_at_total_line(page, live)
    assert "token" not in page.evaluate("location.href")  # kept in sessionStorage, not in the address bar or history
    assert page.evaluate("sessionStorage.getItem('cs336-lectures-token')") == live.token

    press_edit(page)
    editor = page.locator(EDITOR)
    editor.wait_for(state="visible")
    assert editor_text(page) == LECTURE
    edited = LECTURE.replace("First version", "Second version")
    replace_editor_text(page, edited)
    editor.press("Control+s")

    page.get_by_text("Second version of the lecture", exact=True).wait_for(timeout=120_000)
    page.locator(".cs336-live-editor").wait_for(state="hidden")
    assert current_line(page) == TOTAL_LINE
    assert live.lecture.read_text() == edited
    assert (live.folder / "backups" / "live_lecture.py.bak").read_text() == LECTURE  # beside the traces
    assert sorted(path.name for path in live.folder.iterdir()) == ["backups", "live_lecture.py", "traces"]
    good_trace = live.trace.read_bytes()

    # A syntax error: the page says why, the last good trace stays on screen and on disk.
    page.locator(".cs336-live-edit").click()
    editor.wait_for(state="visible")
    replace_editor_text(page, edited.replace("    text(\"The end\")", "    text(\"The end\"\n    oops = (]"))
    page.locator(".cs336-live-save").click()
    status = page.locator(".cs336-live-status")
    status.filter(has_text=re.compile("syntax", re.I)).wait_for(timeout=120_000)
    assert "last good trace" in status.inner_text()
    banner = page.locator(".retrace-failure")
    banner.filter(has_text="Re-tracing live_lecture failed").wait_for()
    # No trace to open for a syntax error, but the line it names can be edited.
    syntax_line = edited.count("\n", 0, edited.index('text("The end")')) + 2
    assert banner.locator(".rf-edit").inner_text() == f"edit line {syntax_line}"
    assert banner.locator(".rf-show").count() == 0
    assert page.get_by_text("Second version of the lecture", exact=True).count() >= 1
    assert live.trace.read_bytes() == good_trace
    assert current_line(page) == TOTAL_LINE
    assert problems == []  # no script error, no Content-Security-Policy violation


def test_saving_the_file_elsewhere_reloads_the_open_viewer(page, live):
    open_at_total_line(page, live)
    live.lecture.write_text(LECTURE.replace("First version", "Edited in another editor"))
    page.get_by_text("Edited in another editor of the lecture", exact=True).wait_for(timeout=120_000)
    assert current_line(page) == TOTAL_LINE


def test_lines_inserted_above_keep_the_reader_on_the_same_statement(page, live):
    open_at_total_line(page, live)
    inserted = LECTURE.replace('    greeting = "hello"', '    text("Inserted above")\n    text("And again")\n    greeting = "hello"')
    live.lecture.write_text(inserted)
    page.get_by_text("And again", exact=True).wait_for(timeout=120_000)
    assert current_line(page) == TOTAL_LINE + 2
    assert "total = len(greeting)" in page.locator(".code .line.current").inner_text()
    live.lecture.write_text(LECTURE)
    page.get_by_text("And again", exact=True).wait_for(state="detached", timeout=120_000)
    assert current_line(page) == TOTAL_LINE


def test_tab_indents_and_escape_asks_before_discarding(page, live):
    open_at_total_line(page, live)
    press_edit(page)
    editor = page.locator(EDITOR)
    editor.wait_for(state="visible")
    editor.press("Control+Home")
    editor.press("Tab")
    assert editor_text(page).startswith("    from cs336_lectures")
    editor.press("Escape")
    assert page.locator(".cs336-live-editor").is_visible()  # unsaved: the first Escape only warns
    assert "Escape again" in page.locator(".cs336-live-status").inner_text()
    editor.press("Escape")
    page.locator(".cs336-live-editor").wait_for(state="hidden")


def test_server_refuses_without_token_and_with_a_foreign_host(page, live):
    page.goto(f"http://127.0.0.1:{live.port}/")
    status = page.evaluate("""async () => (await fetch('api/retrace?trace=live_lecture', {method: 'POST'})).status""")
    assert status == 403
    connection = http.client.HTTPConnection("127.0.0.1", live.port, timeout=10)
    connection.request("GET", "/api/source?trace=live_lecture", headers={"Host": f"attacker.example:{live.port}"})
    response = connection.getresponse()
    assert response.status == 403 and "not this server" in json.loads(response.read())["error"]
    connection.close()


def test_a_failed_retrace_is_one_line_with_the_way_to_its_failing_step(page, live):
    assert any(line.startswith("    Open http://127.0.0.1:") for line in live.output)  # the URL stands out at start-up
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    open_at_total_line(page, live)
    good_trace = live.trace.read_bytes()
    live.lecture.write_text(LECTURE.replace("len(greeting) + 1", "len(greeting) / 0"))
    banner = page.locator(".retrace-failure")
    banner.locator(".rf-show").wait_for(timeout=120_000)
    # One compact line, the traceback folded away until asked for.
    assert banner.locator(".rf-summary").inner_text().startswith("Re-tracing live_lecture failed: ZeroDivisionError")
    assert banner.locator(".rf-summary").bounding_box()["height"] < 30
    assert not banner.locator(".rf-traceback").is_visible()
    assert banner.bounding_box()["height"] < 45  # everything on one line at 1280 px
    banner.locator(".rf-toggle").click()
    assert "ZeroDivisionError" in banner.locator(".rf-traceback").inner_text()
    assert banner.locator(".rf-show").inner_text() == f"go to line {TOTAL_LINE}"
    assert banner.locator(".rf-edit").inner_text() == f"edit line {TOTAL_LINE}"
    assert live.trace.read_bytes() == good_trace  # the good trace stays; the failed run is kept beside it

    # The list of lectures marks the lecture whose file fails now; from there, "edit line"
    # opens the lecture with the editor at the failing line of the file as it is on disk.
    page.locator("#home").click()
    card = page.locator(".trace-card", has_text="live_lecture")
    card.locator(".badge-failing").wait_for()
    assert "ZeroDivisionError" in card.inner_text()
    banner.locator(".rf-edit").click()
    editor = page.locator(EDITOR)
    editor.wait_for(state="visible")
    assert "trace=live_lecture" in page.evaluate("location.href")
    assert "len(greeting) / 0" in editor_text(page)
    assert editor_line(page) == TOTAL_LINE
    editor.press("Escape")
    page.locator(".cs336-live-editor").wait_for(state="hidden")

    # The failed run opens at its error step, showing the current code and the error.
    banner.locator(".rf-show").click()
    page.locator(".step-output .error").wait_for()
    assert "trace=live_lecture.failed" in page.evaluate("location.href")
    assert current_line(page) == TOTAL_LINE
    assert "len(greeting) / 0" in page.locator(".code .line.current").inner_text()
    assert "ZeroDivisionError" in page.locator(".step-output .error").inner_text()
    assert "(failed run)" in page.locator("#title").inner_text()
    assert banner.locator(".rf-back").is_visible()

    # Dismissed, it goes; the fix brings the good trace back everywhere.
    banner.locator(".rf-close").click()
    assert not banner.is_visible()
    live.lecture.write_text(LECTURE)
    page.wait_for_function("() => new URL(location.href).searchParams.get('trace') === 'live_lecture'", timeout=120_000)
    page.locator(".code .unit.current").wait_for()
    assert not banner.is_visible()
    assert not live.trace.with_name("live_lecture.failed.json").exists()
    assert problems == []


def test_the_editor_is_a_pane_under_the_code_with_line_numbers(page, live):
    open_at_total_line(page, live)
    press_edit(page)
    editor = page.locator(EDITOR)
    editor.wait_for(state="visible")
    # It opens at the reader's line, which it marks; the code and the values stay in sight.
    assert editor_line(page) == TOTAL_LINE
    numbers = page.locator(".cs336-live-editor .cm-gutter.cm-lineNumbers .cm-gutterElement").all_inner_texts()
    assert [n for n in numbers if n][:3] == ["1", "2", "3"]
    assert page.locator(".cs336-live-editor .cm-activeLineGutter").inner_text() == str(TOTAL_LINE)
    assert "total = len(greeting)" in page.locator(".cs336-live-editor .cm-activeLine").inner_text()
    assert page.locator(".cs336-live-position").inner_text() == f"Ln {TOTAL_LINE}, Col 1"
    box = page.locator(".cs336-live-editor .cm-editor").bounding_box()
    assert page.locator("#env").is_visible() and page.locator(".env-row[data-name=total]").is_visible()
    assert page.locator("#code").is_visible()
    assert page.locator("#code").bounding_box()["y"] < box["y"]  # the code above, the editor below
    header = page.locator(".cs336-live-editor header").bounding_box()
    assert header["height"] < 45  # the status line is one line
    # Tab indents the selected lines, Shift+Tab takes them back; Enter keeps the indentation.
    editor.press("Home")
    editor.press("Shift+ArrowDown")
    editor.press("Tab")
    lines = editor_text(page).split("\n")
    assert lines[TOTAL_LINE - 1].startswith("        total")
    editor.press("Shift+Tab")
    assert editor_text(page) == LECTURE
    editor.press("ArrowLeft")  # the selection collapses to its start, on the line of `total`
    editor.press("End")
    editor.press("Enter")
    assert editor_text(page).split("\n")[TOTAL_LINE] == "    "
    editor.press("Control+z")
    assert editor_text(page) == LECTURE  # undo
    editor.press("Escape")
    page.locator(".cs336-live-editor").wait_for(state="hidden")


def test_without_the_token_edit_is_not_offered_and_e_says_how(browser, live):
    context = browser.new_context()  # a new tab: no token in its sessionStorage
    page = context.new_page()
    try:
        page.goto(f"http://127.0.0.1:{live.port}/?trace=live_lecture")
        page.wait_for_selector(".code .line.current", state="attached")
        page.wait_for_function("() => document.documentElement.classList.contains('cs336-live')")
        assert not page.locator(".cs336-live-edit").is_visible()
        page.keyboard.press("e")
        message = page.locator("#message")
        message.filter(has_text="token").wait_for()
        assert "?token=" in message.inner_text() and "cs336-lectures serve" in message.inner_text()
        assert not page.locator(".cs336-live-editor").is_visible()
    finally:
        context.close()


def test_a_failed_retrace_speaks_the_chosen_language(page, live):
    page.goto(f"{live.url}&trace=live_lecture&lang=ru")
    page.wait_for_selector(".code .line.current", state="attached")
    # The editor's messages too: an unsaved change, then the warning before discarding it.
    press_edit(page)
    editor = page.locator(".cs336-live-editor .cm-editor")
    editor.wait_for(state="visible")
    assert page.locator(".cs336-live-save").inner_text() == "Сохранить"
    editor.press("Control+Home")
    editor.press("Tab")
    assert page.locator(".cs336-live-status").inner_text() == "Есть несохранённые изменения"
    editor.press("Escape")
    assert page.locator(".cs336-live-status").inner_text().startswith("Есть несохранённые изменения: Ctrl+S сохраняет")
    editor.press("Escape")
    page.locator(".cs336-live-editor").wait_for(state="hidden")
    live.lecture.write_text(LECTURE.replace("len(greeting) + 1", "len(greeting) / 0"))
    banner = page.locator(".retrace-failure")
    banner.locator(".rf-show").wait_for(timeout=120_000)
    assert banner.locator(".rf-summary").inner_text().startswith("Повторная трассировка live_lecture не удалась: ZeroDivisionError")
    assert banner.locator(".rf-show").inner_text() == f"к строке {TOTAL_LINE}"
    assert banner.locator(".rf-toggle").inner_text() == "трассировка стека"
    # Switching language relabels the banner in place: its summary, actions and buttons.
    page.locator("#language").select_option("zh")
    page.wait_for_function("(text) => document.querySelector('.rf-summary').textContent.startsWith(text)",
                           arg="重新追踪 live_lecture 失败：ZeroDivisionError")
    assert banner.locator(".rf-show").inner_text() == f"转到第 {TOTAL_LINE} 行"
    assert banner.locator(".rf-close").get_attribute("title") == "关闭提示"
    page.locator("#home").click()
    card = page.locator(".trace-card", has_text="live_lecture")
    card.locator(".badge-failing").wait_for()
    assert card.locator(".badge-failing").inner_text() == "文件当前出错"
    assert "磁盘上的文件追踪失败" in card.inner_text()
    live.lecture.write_text(LECTURE)
    banner.wait_for(state="hidden", timeout=120_000)


def test_the_run_line_speaks_the_chosen_language(page, live):
    """What the server says about a run is a note the viewer words in its own language."""
    page.goto(f"{live.url}&trace=live_lecture&lang=ru")
    page.wait_for_selector(".code .line.current", state="attached")
    page.locator(".cs336-live-edit").wait_for(state="visible")  # live mode is up: it hears the run
    try:
        live.lecture.write_text(LECTURE.replace("First version", "Second version"))
        message = page.locator("#message").filter(has_text="лекция выполнена заново целиком")
        message.wait_for(timeout=120_000)
        # this lecture's main() calls only text(): there is no section to resume at
        assert re.fullmatch(r"лекция выполнена заново целиком \(\d+\.\d\d с\): "
                            r"main\(\) не вызывает ни одной функции верхнего уровня лекции", message.inner_text())
    finally:
        live.lecture.write_text(LECTURE)
        page.get_by_text("First version of the lecture", exact=True).wait_for(timeout=120_000)


def test_edit_is_offered_only_while_a_lecture_is_on_screen(page, live):
    page.goto(f"{live.url}&trace=live_lecture")
    page.wait_for_selector(".code .line.current", state="attached")
    edit = page.locator(".cs336-live-edit")
    edit.wait_for(state="visible")
    page.keyboard.press("g")  # to the list of lectures: nothing there to edit
    page.wait_for_selector(".index-view a[data-trace]")
    edit.wait_for(state="hidden")
    page.go_back()  # the lecture again
    page.wait_for_selector(".code .line.current", state="attached")
    edit.wait_for(state="visible")
    page.locator("#home").click()
    page.wait_for_selector(".index-view a[data-trace]")
    assert not edit.is_visible()
    page.keyboard.press("e")  # the key says what to do instead of opening an editor out of sight
    page.locator("#message").filter(has_text="Open a lecture to edit it").wait_for()
    assert not page.locator(".cs336-live-editor").is_visible()


def test_a_lecture_whose_first_run_fails_can_be_fixed_in_the_browser(page, serve_live):
    """No trace yet, so no lecture to show: the banner's edit action still opens the editor, in sight."""
    broken = LECTURE.replace('text("# A live lecture")', 'text("# A live lecture"')
    server = serve_live(broken, fails=True)
    page.goto(server.url)
    banner = page.locator(".retrace-failure")
    banner.locator("button, a").filter(has_text="edit line 5").click()
    editor = page.locator(EDITOR)
    editor.wait_for(state="visible")
    assert editor_line(page) == 5
    editor.press("End")
    editor.type(")")
    editor.press("Control+s")
    page.wait_for_selector(".code .line.current", state="attached", timeout=120_000)
    page.locator(".cs336-live-editor").wait_for(state="hidden")
    assert server.lecture.read_text() == LECTURE
    assert page.locator(".cs336-live-edit").is_visible()


SECTIONED = '''import gate

from cs336_lectures import text


def main():
    first()
    slow()


def first():
    text("Version one of the first section")
    value = 1  # @inspect value


def slow():
    gate.wait_until_open()
    text("The slow section ran")
'''
# Not traced (a module of the project, not the lecture): the lecture's last section waits on it,
# so the test decides when that section ends, whatever the machine's speed.
GATE = '''import time
from pathlib import Path

GATE = Path(__file__).with_name("gate.txt")


def wait_until_open(limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while GATE.read_text() != "open" and time.monotonic() < deadline:
        time.sleep(0.02)
'''


def test_an_edited_section_shows_before_the_slow_sections_after_it_have_run_again(page, tmp_path, serve_live):
    """The early view: the reader inside the edited section sees it re-run while the sections after
    it still run; the whole trace then replaces it, the reader still in place."""
    (tmp_path / "gate.py").write_text(GATE)
    gate = tmp_path / "gate.txt"
    gate.write_text("open")
    server = serve_live(SECTIONED, folder=tmp_path)
    try:
        page.goto(f"{server.url}&trace=live_lecture")
        page.wait_for_selector(".code .line.current", state="attached")
        value_line = SECTIONED.splitlines().index("    value = 1  # @inspect value") + 1
        for _ in range(30):
            if current_line(page) == value_line:
                break
            page.keyboard.press("l")
        assert current_line(page) == value_line
        whole_before = server.trace.read_text()

        gate.write_text("closed")
        server.lecture.write_text(SECTIONED.replace("Version one", "Version two"))
        page.get_by_text("Version two of the first section", exact=True).wait_for(timeout=120_000)
        assert page.evaluate("window.cs336Viewer.showsEarly()")
        assert server.trace.read_text() == whole_before  # the last section waits at the gate
        assert current_line(page) == value_line
        page.locator("#message").filter(has_text="re-ran `first`").wait_for()
        assert "running the 1 section after it" in page.locator("#message").inner_text()

        gate.write_text("open")
        page.wait_for_function("() => !window.cs336Viewer.showsEarly()", timeout=120_000)
        assert "Version two" in server.trace.read_text()
        assert current_line(page) == value_line
        assert not (server.folder / "traces" / "early" / "live_lecture.json").exists()
    finally:  # before the server stops: its run may be waiting at the gate
        gate.write_text("open")
