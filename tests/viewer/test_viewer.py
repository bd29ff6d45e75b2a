"""The static viewer in a real browser: index, navigation keys, line clicks, modes, URL state,
environment panel, renderings. Traces are built by hand (trace_builders) and served as a site
by the `serve_module_site` fixture (conftest.py)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from trace_builders import DEMO_SOURCE, demo_trace, error_trace, line_of

pytestmark = pytest.mark.browser

DEMO = demo_trace()


def step_at(snippet: str, occurrence: int = 0) -> int:
    """The index of the `occurrence`-th step of the demo trace running the line holding snippet."""
    line = line_of(DEMO_SOURCE, snippet)
    return [i for i, step in enumerate(DEMO["steps"]) if step[1] == line][occurrence]


@pytest.fixture(scope="module")
def site(serve_module_site, validate_trace):
    return serve_module_site({"demo": validate_trace(DEMO), "broken": validate_trace(error_trace())})


def open_lecture(page, site, step: int | None = None, name: str = "demo", extra: str = "") -> None:
    query = f"?trace={name}" + ("" if step is None else f"&step={step}") + extra
    page.goto(site.url + "index.html" + query)
    page.wait_for_selector(".unit.current")


def url_step(page) -> int:
    return int(parse_qs(urlparse(page.evaluate("location.href")).query)["at"][0]) - 1  # the URL counts from 1


def current_line(page) -> int:
    return int(page.locator(".line.current").get_attribute("data-line"))


def test_index_lists_traces_and_opens_one(page, site):
    page.goto(site.url + "index.html")
    cards = page.locator(".trace-card")
    cards.first.wait_for()
    assert cards.count() == 2
    demo = page.locator(".trace-card", has_text="demo")
    assert f"{len(DEMO['steps'])} steps" in demo.inner_text()
    broken = page.locator(".trace-card", has_text="broken")
    assert "error" in broken.inner_text()
    assert "ZeroDivisionError: division by zero" in broken.inner_text()
    demo.locator("a").click()
    page.wait_for_selector(".unit.current")
    assert parse_qs(urlparse(page.evaluate("location.href")).query)["trace"] == ["demo"]
    assert page.locator("#title").inner_text() == "demo"


def test_step_forward_and_back_keys(page, site):
    open_lecture(page, site, 0)
    assert url_step(page) == 0
    assert "No inspected values" in page.locator("#env").inner_text()
    page.keyboard.press("l")
    assert url_step(page) == 1
    page.keyboard.press("ArrowRight")
    assert url_step(page) == 2
    assert current_line(page) == line_of(DEMO_SOURCE, "x = torch")
    page.keyboard.press("h")
    assert url_step(page) == 1
    page.keyboard.press("ArrowLeft")
    assert url_step(page) == 0
    page.keyboard.press("h")  # already at the first step: stays
    assert url_step(page) == 0
    page.keyboard.press("Shift+L")  # Caps Lock on changes nothing
    assert url_step(page) == 1


def test_step_over_stays_in_the_function(page, site):
    call_line = step_at("total = add(2, 3)")
    open_lecture(page, site, call_line)
    page.keyboard.press("j")  # over the call into add()
    assert url_step(page) == step_at("print(")
    page.keyboard.press("k")
    assert url_step(page) == call_line
    page.keyboard.press("Shift+ArrowRight")
    assert url_step(page) == step_at("print(")
    page.keyboard.press("Shift+ArrowLeft")
    assert url_step(page) == call_line
    page.keyboard.press("l")  # into add()
    assert current_line(page) == line_of(DEMO_SOURCE, "c = a + b")
    page.keyboard.press("j")
    assert current_line(page) == line_of(DEMO_SOURCE, "return c")
    page.keyboard.press("j")  # off the end of add(): the next line of its caller
    assert url_step(page) == step_at("print(")


def test_step_over_a_yield_stays_in_the_generator(page, site):
    open_lecture(page, site, step_at("yield n"))
    page.keyboard.press("j")  # list() resumes the generator: its next line, not the caller's
    assert current_line(page) == line_of(DEMO_SOURCE, 'print("resumed")')
    page.keyboard.press("k")
    assert url_step(page) == step_at("yield n")
    page.keyboard.press("u")
    assert current_line(page) == line_of(DEMO_SOURCE, 'text("The end")')


def test_step_out_returns_to_the_caller(page, site):
    open_lecture(page, site, step_at("total = add(2, 3)") + 1)
    assert "add" in page.locator("#crumbs").inner_text()
    page.keyboard.press("u")
    assert url_step(page) == step_at("print(")
    assert page.locator("#crumbs .crumb").count() == 1
    page.keyboard.press("u")  # outermost call: stays, says so
    assert url_step(page) == step_at("print(")
    assert "outermost" in page.locator("#message").inner_text()


def test_buttons_move_like_keys(page, site):
    open_lecture(page, site, 0)
    page.click("button[data-action=forward]")
    assert url_step(page) == 1
    page.click("button[data-action=back]")
    assert url_step(page) == 0


def test_hidden_line_is_never_shown_or_stopped_on(page, site):
    hidden = step_at("secret = 42")
    open_lecture(page, site, hidden - 1)
    page.keyboard.press("l")
    assert url_step(page) == hidden + 1
    page.keyboard.press("h")
    assert url_step(page) == hidden - 1
    page.keyboard.press("R")
    assert "secret" not in page.locator("#code").inner_text()
    open_lecture(page, site, hidden)  # a deep link to it lands on the next visible step
    assert url_step(page) == hidden + 1


def test_clicking_a_line_number_goes_to_its_step(page, site):
    open_lecture(page, site, 0)
    add_body = line_of(DEMO_SOURCE, "c = a + b")
    page.click(f".line[data-line='{add_body}'] a.no")
    assert url_step(page) == step_at("c = a + b")
    # A line above the current one: the previous step that ran it.
    page.click(f".line[data-line='{line_of(DEMO_SOURCE, 'total = add(2, 3)')}'] a.no")
    assert url_step(page) == step_at("total = add(2, 3)")
    # Above the current line but never run before this step: the next time it runs.
    loop = line_of(DEMO_SOURCE, "total = add(total")
    page.click(f".line[data-line='{loop}'] a.no")
    assert url_step(page) == step_at("total = add(total")
    page.click(f".line[data-line='{loop}'] a.no")  # the same line again: its next run
    assert url_step(page) == step_at("total = add(total", 1)


def test_raw_mode_shows_code_under_renderings(page, site):
    open_lecture(page, site, 0)
    code = page.locator(".block .raw-code", has_text='text("# Demo lecture")')
    assert not code.is_visible()
    assert page.locator(".block .rendered h1").inner_text() == "Demo lecture"
    page.keyboard.press("R")
    assert code.is_visible()
    assert page.locator("#raw-button").get_attribute("aria-pressed") == "true"
    page.keyboard.press("R")
    assert not code.is_visible()


def test_multiline_text_call_renders_as_one_block(page, site):
    open_lecture(page, site, 0)
    block = page.locator(".block", has=page.locator("h2", has_text="Links and images"))
    assert block.locator(".raw-code .line").count() == 3  # text(""" ... """) spans three lines
    assert not page.get_by_text("## Links and images").is_visible()


def test_reveal_mode_shows_only_lines_run_so_far(page, site):
    open_lecture(page, site, step_at("y = x[0]"))
    later = page.locator(f".line[data-line='{line_of(DEMO_SOURCE, 'numbers =')}']")
    earlier = page.locator(f".line[data-line='{line_of(DEMO_SOURCE, 'x = torch')}']")
    assert later.is_visible()
    page.keyboard.press("A")
    assert earlier.is_visible()
    assert not later.is_visible()
    assert not page.locator(".block", has_text="The end").is_visible()
    page.goto(page.evaluate("location.href").replace(f"at={url_step(page) + 1}", f"at={step_at('numbers =') + 1}"))
    page.wait_for_selector(".unit.current")
    assert "reveal=1" in page.evaluate("location.href")  # the mode is in the URL, so the new page keeps it
    assert page.locator("#reveal-button").get_attribute("aria-pressed") == "true"
    assert later.is_visible()
    page.keyboard.press("h")
    assert not later.is_visible()


def test_deep_link_and_back_button(page, site):
    target = step_at("print(")
    open_lecture(page, site, target, extra="&theme=paper")
    assert current_line(page) == line_of(DEMO_SOURCE, "print(")
    page.keyboard.press("l")
    page.keyboard.press("l")
    assert url_step(page) == target + 2
    page.go_back()
    page.wait_for_function(f"new URLSearchParams(location.search).get('at') === '{target + 2}'")
    assert page.locator(".unit.current").count() == 1
    page.go_back()
    page.wait_for_function(f"new URLSearchParams(location.search).get('at') === '{target + 1}'")
    assert current_line(page) == line_of(DEMO_SOURCE, "print(")
    assert "theme=paper" in page.evaluate("location.href")


def test_env_panel_shows_tensors_as_tables(page, site):
    open_lecture(page, site, step_at("y = x[0]"))
    x = page.locator(".env-row[data-name=x]")
    assert "[2, 3]" in x.locator(".v-tensor-head").inner_text()
    assert "float32" in x.inner_text() and "cpu" in x.inner_text()
    assert x.locator(".v-matrix tr").count() == 2
    assert x.locator(".v-matrix tr").first.locator("td").count() == 3
    assert "shares storage with y" in x.inner_text()
    y = page.locator(".env-row[data-name=y]")
    assert "changed" in y.get_attribute("class")
    assert "changed" not in x.get_attribute("class")


def test_inspected_script_string_is_text(page, site):
    open_lecture(page, site, step_at("note ="))
    value = page.locator(".env-row[data-name=note] .env-value")
    assert value.inner_text().strip() == "'<script>window.__pwned = 1</script>'"
    assert page.locator("#env script").count() == 0
    assert page.evaluate("window.__pwned") is None


def test_env_merges_steps_of_a_call_applies_clears_and_follows_generators(page, site):
    open_lecture(page, site, step_at("numbers ="))
    names = page.locator(".env-row .env-name").all_inner_texts()
    assert names == ["x", "y", "note", "total", "numbers"]
    numbers = page.locator(".env-row[data-name=numbers]")
    assert "list of 50 items" in numbers.inner_text()
    numbers.locator("summary").click()
    assert numbers.locator(".v-items li").count() == 50
    open_lecture(page, site, step_at("for i in", 3))
    assert page.locator(".env-row[data-name=i]").count() == 1
    page.keyboard.press("l")  # del i  # @clear i
    assert page.locator(".env-row[data-name=i]").count() == 0
    assert page.locator(".env-row[data-name=total]").count() == 1
    resumed = step_at('print("resumed")')
    open_lecture(page, site, resumed)
    assert page.locator(".env-row[data-name=n] .env-value").inner_text().strip() == "0"  # from the first activation
    assert page.locator(".step-output .stdout").inner_text() == "resumed\n"


def test_call_stack_breadcrumb_goes_to_the_caller(page, site):
    open_lecture(page, site, step_at("c = a + b"))
    crumbs = page.locator("#crumbs")
    assert re.sub(r"\s+", " ", crumbs.inner_text()).startswith("main › add line")
    crumbs.locator("button", has_text="main").click()
    assert url_step(page) == step_at("total = add(2, 3)")


def test_stdout_shows_under_its_line(page, site):
    open_lecture(page, site, step_at("print("))
    output = page.locator(".unit.current + .step-output .stdout")
    assert output.inner_text() == "hello from stdout\n"
    page.keyboard.press("l")
    assert page.locator(".stdout").count() == 0


def test_error_trace_shows_traceback_at_the_failing_line(page, site):
    open_lecture(page, site, 0, name="broken")
    assert "ZeroDivisionError" in page.locator("#status").inner_text()
    page.click("#status button")
    assert current_line(page) == 3
    error = page.locator(".unit.current + .step-output .error")
    assert "ZeroDivisionError: division by zero" in error.inner_text()
    assert 'line 3, in main' in error.locator(".traceback").inner_text()


def test_renderings_links_images_and_plots(page, site):
    open_lecture(page, site, 0)
    external = page.locator("a.r-external")
    assert external.get_attribute("href") == "https://arxiv.org/abs/1706.03762"
    card = page.locator(".card")
    assert not card.is_visible()
    external.hover()
    assert card.is_visible()
    assert "Ashish Vaswani, Noam Shazeer" in card.inner_text() and "Google" in card.inner_text()
    assert "could not fetch missing.png" in page.locator(".r-missing").inner_text()
    assert page.locator("img.r-plot").get_attribute("src").startswith("data:image/svg+xml")
    page.click("a.r-internal")
    assert page.locator(".code").get_attribute("data-file") == "cs336_lectures/helpers.py"
    expect(page.locator(".target")).to_contain_text("def scale")
    assert "helpers.py" in page.locator("#elsewhere").inner_text()
    page.keyboard.press("Escape")
    assert page.locator(".code").get_attribute("data-file") == "lectures/demo.py"
    assert url_step(page) == 0


def test_table_of_contents_and_progress(page, site):
    open_lecture(page, site, 0)
    toc = page.locator("#toc li")
    assert toc.all_inner_texts() == ["Demo lecture", "Tensors", "Links and images"]
    assert "here" in toc.nth(0).get_attribute("class")
    toc.nth(2).locator("a").click()
    assert url_step(page) == step_at('text("""')
    assert "here" in toc.nth(2).get_attribute("class")
    width = page.evaluate("parseFloat(document.getElementById('bar').style.width)")
    assert 0 < width < 100
    # Counted from 1, as the list of lectures counts ("37 steps"); the URL keeps the step's index.
    assert page.locator("#counter").inner_text() == f"step {url_step(page) + 1} of {len(DEMO['steps'])}"


def test_g_returns_to_the_index(page, site):
    open_lecture(page, site, 0)
    page.keyboard.press("g")
    page.locator(".trace-card").first.wait_for()
    assert "trace=" not in page.evaluate("location.href")


def test_viewer_api_and_loaded_event(page, site):
    page.add_init_script("window.__loaded = []; addEventListener('cs336:trace-loaded', (e) => __loaded.push(e.detail.trace));")
    open_lecture(page, site, step_at("print("))
    assert page.evaluate("window.cs336Viewer.currentTrace()") == "demo"
    assert page.evaluate("window.cs336Viewer.toolbar.id") == "toolbar"
    assert page.evaluate("window.cs336Viewer.codePane.id") == "code"
    page.evaluate("window.cs336Viewer.showMessage('trace is running', 'info')")
    assert page.locator("#message").inner_text() == "trace is running"
    page.evaluate("window.cs336Viewer.showMessage('', 'info')")
    assert not page.locator("#message").is_visible()
    page.evaluate("window.cs336Viewer.showMessage('re-traced', 'info')")
    page.evaluate("window.cs336Viewer.reload()")
    page.wait_for_function("window.__loaded.length === 2")
    assert page.locator("#message").inner_text() == "re-traced"  # a reload leaves live.js's message
    assert url_step(page) == step_at("print(")
    assert current_line(page) == line_of(DEMO_SOURCE, "print(")


def test_keys_typed_into_inputs_are_left_alone(page, site):
    open_lecture(page, site, 0)
    page.evaluate("document.body.append(Object.assign(document.createElement('textarea'), {id: 'editor'}))")
    page.focus("#editor")
    page.keyboard.type("hjkl")
    assert url_step(page) == 0
    assert page.input_value("#editor") == "hjkl"


def test_held_key_makes_one_history_entry(page, site):
    open_lecture(page, site, 0)
    before = page.evaluate("history.length")
    page.keyboard.press("l")
    page.evaluate("""() => { for (let i = 0; i < 5; i++)
        document.dispatchEvent(new KeyboardEvent('keydown', {key: 'l', repeat: true, bubbles: true})); }""")
    page.wait_for_function("new URLSearchParams(location.search).get('at') === '7'")
    assert page.evaluate("history.length") == before + 1
    assert current_line(page) == line_of(DEMO_SOURCE, "c = a + b")


def test_static_hosting_logs_no_errors_and_never_asks_for_the_api(page, site):
    problems, requested = [], []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("request", lambda request: requested.append(urlparse(request.url).path))
    page.goto(site.url + "index.html")
    page.locator(".trace-card").first.wait_for()
    open_lecture(page, site, step_at("print("))
    page.keyboard.press("l")
    page.wait_for_load_state("networkidle")
    assert problems == []
    assert not [path for path in requested if "/api/" in path]
    assert page.locator(".cs336-live-edit").count() == 0


@pytest.mark.parametrize("before, after, line, expected", [
    ("a\nb\nc", "a\nb\nc", 2, 2),                  # unchanged
    ("a\nb\nc", "new\nmore\na\nb\nc", 2, 4),      # lines inserted above move it down
    ("a\nb\nc\nd", "a\nd", 4, 2),                  # lines removed above move it up
    ("a\nb\nc", "a\nb\nc\nd", 3, 3),              # a change below leaves it
    ("a\nb\nc\nd", "a\nx\nc\ny\nd", 3, 3),        # inside the change, still there: its text
    ("a\nb\nc", "a\nx\ny\nc", 2, 2),              # replaced: its replacement
    ("a\nb\nc\nd", "a\nx\ny\nd", 3, 3),        # a block replaced: line by line
    ("a\nb\nc\nd\ne", "a\nx\ne", 4, 2),           # past its replacement: the first line of it
    ("def\na\nb\nc", "def\nz\na\nc", 3, 4),       # removed: the line now in its place
    ("a\nb", "a", 2, 1),                            # removed at the end: the last line
])
def test_follow_line_tracks_a_line_through_an_edit(page, site, before, after, line, expected):
    page.goto(site.url + "index.html")
    got = page.evaluate("""async ([before, after, line]) => {
        const { followLine } = await import('./js/trace.js');
        return followLine(before, after, line);
    }""", [before, after, line])
    assert got == expected


def test_one_line_follower_answers_every_line_as_follow_line_does(page, site):
    # The "what changed" view follows every line of a file through one edit with one follower
    # (the files split and compared once): it must agree with followLine line by line, also
    # after it has built its table for a line inside the change.
    before = "\n".join(["def f():", "    a = 1", "    b = 2", "    c = 3", "", "def g():", "    return 4", "x", "y"])
    after = "\n".join(["# new", "def f():", "    a = 1", "    b = 20", "    bb = 21", "", "def g():", "    return 4", "y"])
    page.goto(site.url + "index.html")
    got = page.evaluate("""async ([before, after]) => {
        const { followLine, lineFollower } = await import('./js/trace.js');
        const follow = lineFollower(before, after);
        const lines = before.split('\\n').map((_, i) => i + 1);
        // Inside the change first, then the rest, so the table is shared across the questions.
        const order = [4, 3, ...lines];
        return order.map((line) => [line, follow(line), followLine(before, after, line)]);
    }""", [before, after])
    assert all(one == alone for _, one, alone in got)
    assert {line: where for line, where, _ in got} == {1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 8, 8: 9, 9: 9}
