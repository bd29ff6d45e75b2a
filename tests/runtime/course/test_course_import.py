"""`cs336-lectures import`: the course's published traces converted into ours, checked step by
step against the course's own stacks, values and renderings; bad input gets one line and
loses nothing; the viewer shows the result."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from cs336_lectures import load_trace
from cs336_lectures.runtime.cli.main import main
from cs336_lectures.runtime.course.importer import course_trace_at, default_root
from cs336_lectures.runtime.publish.site import build_index

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "course"


@pytest.fixture
def repo(tmp_path) -> Path:
    shutil.copytree(FIXTURES / "repo", tmp_path / "repo")
    return tmp_path / "repo"


@pytest.fixture
def course_trace(repo) -> Path:
    return repo / "var" / "traces" / "lecture_demo.json"


@pytest.fixture
def imported(repo, course_trace, tmp_path, capsys):
    """The fixture trace imported into tmp_path/out with the repository as --root."""
    out = tmp_path / "out"
    assert main(["import", str(course_trace), "-o", str(out), "--root", str(repo)]) == 0
    capsys.readouterr()
    return out / "lecture_demo.json"


def course_steps(course_trace: Path) -> list[dict]:
    return json.loads(course_trace.read_text())["steps"]


def test_the_result_follows_our_schema_and_says_where_it_came_from(imported, course_trace, validate_trace):
    trace = validate_trace(imported)
    header = trace["header"]
    assert header["imported"] == {"format": "stanford-cs336 execute.py", "path": str(course_trace),
                                  "bytes": course_trace.stat().st_size}
    assert header["status"] == "ok" and header["title"] == "Course runtime demo" and header["device"] == "unknown"
    assert [file["path"] for file in trace["files"]][0] == "lecture_demo.py"


def test_every_course_step_keeps_its_stack(imported, course_trace):
    """Each course step is one of ours with the same stack (plus steps we add for a caller's
    line the course skipped), in the same order."""
    ours = load_trace(imported).steps
    position = 0
    for step in course_steps(course_trace):
        expected = [(frame["path"], frame["function_name"], frame["line_number"]) for frame in step["stack"]]
        while ours[position].stack != expected:
            position += 1  # a step we added; it must come before the course's next one
        position += 1
    assert position == len(ours)


def test_calls_are_shared_by_consecutive_steps_and_new_for_each_call(imported):
    trace = json.loads(imported.read_text())
    functions = [name for _, name, _ in trace["functions"]]
    calls = [(functions[function], parent) for function, parent, *_ in trace["calls"]]
    # main once; add_one(1) and add_one(2) from the same line (so the same parent step) are two
    # calls; add_one(10) goes through a library frame the trace has no file for.
    assert [name for name, _ in calls] == ["main", "add_one", "add_one", "apply", "add_one"]
    assert calls[1][1] == calls[2][1] and trace["steps"][calls[1][1]][0] == 0
    steps_by_call = {}
    for step in trace["steps"]:
        steps_by_call.setdefault(step[0], []).append(step[1])
    assert steps_by_call[1] == steps_by_call[2] == [42, 43, 44]  # the def line: the course records the call
    assert len(steps_by_call) == 5 and steps_by_call[0][:2] == [12, 13]  # main: one call for all its lines
    apply_file = trace["files"][trace["functions"][trace["calls"][3][0]][0]]
    # Not in the trace nor in the repository: pieced together from the line the stacks quote.
    assert apply_file["path"] == "library/apply.py" and apply_file["source"] == "\n\nreturn fn(value)\n"


def test_values_are_encoded_ours_and_written_when_they_change(imported):
    trace = load_trace(imported)
    assert trace.values_of("n") == [1, 2, 10] and trace.values_of("result") == [2, 3, 11]
    assert trace.values_of("z") == [5] and trace.values_of("num_parameters") == [5e9]
    last = trace.steps[-1].values
    assert last["matrix"] == [[1.0, 2.0], [3.0, 4.0]]
    assert last["config"] == {"d_model": 512, "tied": True, "name": None}
    assert last["big"] == 12345678901234567890 and math.isnan(last["ratio"])
    raw = json.loads(imported.read_text())["steps"][-1][2]["v"]
    assert raw["long"] == {"t": "str", "v": "z" * 1000, "len": 1500}  # bounded like any value of ours
    assert raw["big"] == {"t": "int", "v": "12345678901234567890"}


def test_markdown_is_rendered_at_import_and_verbatim_lines_are_joined(imported):
    by_line = {step.line: step.renderings for step in load_trace(imported).steps if step.renderings}
    [heading] = by_line[13]
    assert heading["html"].startswith("<h1") and heading["headings"] == [[1, "Course runtime demo", "course-runtime-demo"]]
    [energy] = by_line[14]
    assert "<math" in energy["html"] and energy["style"] == {"color": "gray"}
    [verbatim] = by_line[15]  # two course renderings, one per line, back into one block
    assert verbatim["verbatim"] and "first line\n    indented second" in verbatim["html"]
    assert "style" not in verbatim  # what the course's verbatim added is ours by default
    [styled] = by_line[16]
    assert styled["style"] == {"font-family": "monospace", "font-size": "12px"}
    old_text, unknown = by_line[39]
    assert old_text["verbatim"] and "plain old text" in old_text["html"]
    assert "video" in unknown["html"] and "talk.mp4" in unknown["html"]
    assert load_trace(imported).steps[-1].stdout == "done lecture_demo.py\n"
    assert load_trace(imported).steps[-1].stderr == "a warning\n"


def test_images_are_copied_from_the_repository_or_shown_as_placeholders(imported, repo):
    by_line = {step.line: step.renderings for step in load_trace(imported).steps if step.renderings}
    [grid] = by_line[22]
    assert grid["src"].startswith("data:image/png") and grid["width"] == 300 and grid["alt"] == "grid.png"
    cached, missing = by_line[23]
    assert cached["src"].startswith("data:image/png") and cached["width"] == "50%"
    assert cached["alt"] == "https_example_org_figures_loss_png"
    assert missing["src"] is None and missing["error"] == f"images/missing.png: not found in the course repository {repo}"


def test_a_large_image_becomes_an_asset_file(repo, course_trace, tmp_path, capsys):
    big = (repo / "images" / "grid.png").read_bytes() + b"\0" * 20_000  # PNG readers stop at IEND
    (repo / "images" / "grid.png").write_bytes(big)
    assert main(["import", str(course_trace), "-o", str(tmp_path / "out"), "--root", str(repo)]) == 0
    [grid] = [r for step in load_trace(tmp_path / "out" / "lecture_demo.json").steps for r in step.renderings
              if r.get("alt") == "grid.png"]
    assert grid["src"].startswith("assets/") and (tmp_path / "out" / grid["src"]).read_bytes() == big
    assert main(["build", str(tmp_path / "out" / "lecture_demo.json"), "--out", str(tmp_path / "site")]) == 0
    assert (tmp_path / "site" / "traces" / grid["src"]).read_bytes() == big
    # An output folder that cannot be made: one line, nothing half-written.
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    capsys.readouterr()
    assert main(["import", str(course_trace), "-o", str(blocked), "--root", str(repo)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"cs336-lectures: error: {blocked / 'lecture_demo.json'}: cannot write the trace: ")


def test_links_external_internal_and_without_a_url(imported):
    trace = load_trace(imported)
    by_line = {step.line: step.renderings for step in trace.steps if step.renderings}
    [scaling] = by_line[25]
    assert scaling == {"type": "link", "title": "Scaling laws", "url": "https://example.org/scaling",
                       "authors": ["A. Author"], "date": "2020", "organization": "Example Lab",
                       "notes": "compute, data and parameters"}
    to_lecture, to_helper = by_line[29]
    assert (to_lecture["title"], trace.files[to_lecture["file"]]["path"], to_lecture["line"]) == ("add_one", "lecture_demo.py", 42)
    helper = trace.files[to_helper["file"]]
    # A file the trace does not hold, read from the course repository.
    assert helper["path"] == "lecture_util.py" and "def article_link" in helper["source"].splitlines()[3]
    [paper] = by_line[30]
    assert paper["description"].startswith("Subword units") and len(paper["authors"]) == 3
    [plain] = by_line[31]
    assert plain["title"] == plain["url"] == "https://example.org/plain"
    [no_url] = by_line[32]  # the course's link("[tensor docs]") made a reference whose url is its text
    assert no_url["type"] == "markdown" and "[tensor docs]" in no_url["html"]


def test_default_root_is_the_repository_holding_var_traces(repo, course_trace, tmp_path, monkeypatch):
    assert default_root(course_trace) == repo
    monkeypatch.chdir(tmp_path)
    assert default_root(tmp_path / "elsewhere.json") == tmp_path


def test_imported_traces_are_served_and_built(imported, tmp_path, capsys):
    entry = build_index(imported.parent)["traces"][0]
    assert entry["name"] == "lecture_demo" and entry["status"] == "ok" and entry["num_steps"] == 32
    assert main(["build", str(imported), "--out", str(tmp_path / "site")]) == 0
    assert (tmp_path / "site" / "traces" / "lecture_demo.json").is_file()


def test_a_course_trace_in_a_traces_folder_is_listed_with_what_to_do(course_trace):
    [entry] = build_index(course_trace.parent)["traces"]
    assert entry["status"] == "invalid"
    assert "the Stanford course's format; convert it with `cs336-lectures import" in entry["message"]
    assert course_trace_at(course_trace)


@pytest.mark.parametrize("content, expected", [
    (None, "no such file"),
    ('{"files": {}, "steps": [', "not valid JSON"),
    ('[1, 2]', 'not a course trace (expected an object with "files" and "steps")'),
    ('{"files": {}, "steps": [{"stack": []}]}', 'step 0: "stack" must be a non-empty list of frames'),
    ('{"files": {}, "steps": [{"stack": [{"path": "a.py", "function_name": "main"}]}]}',
     "step 0: a stack frame needs a path, a function_name and a line_number >= 1"),
    ('{"files": {"a.py": 3}, "steps": []}', '"files" must map each path to its source text'),
    ('{"files": {}, "steps": [{"stack": [{"path": "a.py", "function_name": "f", "line_number": 1}], "env": []}]}',
     'step 0: "env" must be an object'),
    ('{"files": {}, "steps": ' + "[" * 20_000 + "]" * 20_000 + "}", "JSON nested too deeply to read"),
    ('{"files": {}, "steps": [' + "7" * 5_000 + "]}",
     "cannot read a number: Exceeds the limit (4300 digits) for integer string conversion"),
])
def test_bad_input_gets_one_line_and_writes_nothing(tmp_path, capsys, content, expected):
    given = tmp_path / "bad.json"
    if content is not None:
        given.write_text(content)
    out = tmp_path / "out"
    assert main(["import", str(given), "-o", str(out)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"cs336-lectures: error: {given}") and expected in line
    assert not (out / "bad.json").exists()


def test_one_bad_file_does_not_stop_the_others(course_trace, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    out = tmp_path / "out"
    assert main(["import", str(bad), str(course_trace), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith(f"cs336-lectures: error: {bad}")
    assert err[1].startswith(f"{out / 'lecture_demo.json'}: imported 32 steps from {course_trace} (")
    assert (out / "lecture_demo.json").is_file()


def test_import_replaces_only_an_earlier_import(repo, course_trace, imported, tmp_path, capsys):
    before = course_trace.read_bytes()
    # Into the course's own var/traces: the output would be the input.
    assert main(["import", str(course_trace), "-o", str(course_trace.parent)]) == 2
    assert "would replace its input" in capsys.readouterr().err
    assert course_trace.read_bytes() == before
    # Over an earlier import: fine.
    assert main(["import", str(course_trace), "-o", str(imported.parent)]) == 0
    # Over a trace of one of our lectures: refused, the trace kept.
    ours = tmp_path / "ours"
    ours.mkdir()
    (tmp_path / "lecture_demo.py").write_text("x = 1  # @inspect x\n")
    assert main(["trace", str(tmp_path / "lecture_demo.py"), "-o", str(ours), "--quiet"]) == 0
    kept = (ours / "lecture_demo.json").read_bytes()
    capsys.readouterr()
    assert main(["import", str(course_trace), "-o", str(ours)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == f"cs336-lectures: error: {ours / 'lecture_demo.json'}: exists and is not an earlier import, " \
                   f"so it is kept; import into another folder with -o"
    assert (ours / "lecture_demo.json").read_bytes() == kept


@pytest.mark.browser
def test_the_viewer_shows_an_imported_trace(imported, page, tmp_path):
    from static_site import StaticSite, write_site

    trace = json.loads(imported.read_text())
    root = write_site(tmp_path / "site", {"lecture_demo": trace}, assets=imported.parent / "assets")
    link_step = next(index for index, step in enumerate(trace["steps"]) if step[1] == 25)
    with StaticSite(root) as site:
        page.goto(f"{site.url}index.html?trace=lecture_demo&step={link_step}")
        page.wait_for_selector(".unit.current")
        # textContent: a rendering off screen is not laid out (content-visibility), its innerText reads empty
        assert page.locator(".r-markdown h1").first.text_content() == "Course runtime demo"
        assert page.locator(".r-markdown math").count() >= 1
        assert page.locator("img.r-img").count() == 2
        assert "images/missing.png: not found" in page.locator(".r-missing").text_content()
        scaling = page.locator("a.r-external", has_text="Scaling laws")
        scaling.hover()
        card = page.locator(".r-hover", has=scaling).locator(".card")
        assert card.is_visible() and card.locator(".card-notes").inner_text() == "compute, data and parameters"
        shannon = page.locator(".r-hover", has=page.locator("a.r-external", has_text="Printed English"))
        shannon.locator("a").hover()
        assert shannon.locator(".card-notes").inner_text() == "Estimated the entropy of English\nUsed human guessers"
        page.screenshot(path=str(tmp_path / "imported.png"), full_page=False)
        page.keyboard.press("R")  # raw mode: the course's source under the renderings
        assert page.locator(".line", has_text="def add_one(n: int) -> int:").count() == 1


def test_paths_outside_the_repository_are_never_read(repo, tmp_path, capsys, validate_trace):
    secret = tmp_path / "secret.txt"
    secret.write_text("not for publishing")
    (tmp_path / "secret.png").write_bytes((repo / "images" / "grid.png").read_bytes())
    frame = {"path": "lecture.py", "line_number": 1, "function_name": "main", "code": "main()"}
    course = {"files": {"lecture.py": "main()\n"}, "steps": [{"stack": [frame], "env": {}, "renderings": [
        {"type": "link", "data": "secret", "internal_link": {"path": str(secret), "line_number": 1}},
        {"type": "link", "data": "up", "internal_link": {"path": "../secret.txt", "line_number": 1}},
        {"type": "image", "data": "../secret.png", "style": {}}]}]}
    given = tmp_path / "lecture.json"
    given.write_text(json.dumps(course))
    assert main(["import", str(given), "-o", str(tmp_path / "out"), "--root", str(repo)]) == 0
    trace = validate_trace(tmp_path / "out" / "lecture.json")
    assert "not for publishing" not in (tmp_path / "out" / "lecture.json").read_text()
    assert [file["source"] for file in trace["files"][1:]] == ["", ""]
    assert trace["steps"][0][2]["r"][2]["src"] is None


def test_an_imported_lecture_has_a_title_a_summary_and_dates_as_years(imported, tmp_path):
    trace = load_trace(imported)
    assert trace.header["title"] == "Course runtime demo"  # the lecture's first heading, not its file name
    card = trace.header["docstring"].splitlines()[0]
    assert card == "Course runtime demo: A small lecture written against the course's runtime, exercising each way it is used."
    entry = build_index(imported.parent)["traces"][0]
    assert entry["title"] == "Course runtime demo" and entry["summary"] == card
    dates = [r["date"] for step in trace.steps for r in step.renderings if r["type"] == "link" and "date" in r]
    assert dates and all(len(date) == 4 and date.isdigit() for date in dates)  # arXiv's "2015-08-31T16:37:31Z" too
    assert "2015" in dates


def test_a_function_called_again_from_the_next_line_is_a_new_call(tmp_path, capsys):
    """The course records no step at a call's `def` line when the callee's first line is stepped
    over; the caller having moved on is then what tells the second call from the first."""
    source = "def main():\n    a = twice(1)\n    b = twice(2)\n\n\ndef twice(n):\n    return n * 2\n"

    def step(*frames: tuple[str, int]) -> dict:
        return {"stack": [{"path": "lec.py", "function_name": name, "line_number": line, "code": ""}
                          for name, line in frames], "env": {}, "renderings": [], "stdout": "", "stderr": ""}

    course = {"files": {"lec.py": source},
              "steps": [step(("main", 1)), step(("main", 2), ("twice", 7)), step(("main", 3), ("twice", 7)),
                        step(("main", 3))]}
    (tmp_path / "lec.json").write_text(json.dumps(course))
    assert main(["import", str(tmp_path / "lec.json"), "-o", str(tmp_path / "out"), "--root", str(tmp_path)]) == 0
    capsys.readouterr()
    trace = json.loads((tmp_path / "out" / "lec.json").read_text())
    names = [trace["functions"][function][1] for function, *_ in trace["calls"]]
    assert names == ["main", "twice", "twice"]
    steps = [(names[call], line) for call, line, *_ in trace["steps"]]
    assert [step for step in steps if step[0] == "twice"] == [("twice", 7), ("twice", 7)]
    twice_calls = [call for call, _, *_ in trace["steps"] if names[call] == "twice"]
    assert twice_calls == [1, 2]
    parents = [trace["steps"][parent][1] for _, parent, *_ in trace["calls"][1:]]
    assert parents == [2, 3]  # each call hangs off the line of main() that made it
