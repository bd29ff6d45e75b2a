"""Tracing the Stanford course's lectures as they are: our `execute_util` in place of theirs,
the course's directive style, and each way its lectures call text, image, link and system_text.

The fixture folder tests/fixtures/course/repo is laid out like the course repository (lecture
beside execute_util.py, reference.py, lecture_util.py, references.py, arxiv_util.py,
file_util.py, facts.py, images/, var/files/); its execute_util.py refuses to be imported, so a
trace that works proves ours replaced it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from cs336_lectures import load_trace
from cs336_lectures.runtime.course import compat as course_compat
from cs336_lectures.runtime.cli.main import main
from cs336_lectures.runtime.lecture.directives import DirectiveWarning, parse_directives

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "course"
COURSE_HELPERS = ("execute_util", "reference", "references", "lecture_util", "arxiv_util", "file_util", "facts")


@pytest.fixture
def course_repo(tmp_path, monkeypatch):
    """A copy of the fixture course folders; the current directory is the course repository, as for
    a student who cloned it. Its helper modules are forgotten after the test (they are cached
    by name in sys.modules, like any import)."""
    shutil.copytree(FIXTURES, tmp_path / "course")
    repo = tmp_path / "course" / "repo"
    monkeypatch.chdir(repo)
    yield repo
    for name in COURSE_HELPERS:
        sys.modules.pop(name, None)


def trace_demo(out: Path, lecture: str = "lecture_demo.py") -> tuple[int, object]:
    status = main(["trace", lecture, "-o", str(out), "--quiet"])
    return status, load_trace(out / f"{Path(lecture).stem}.json")


def renderings_on(trace, snippet: str) -> list[dict]:
    """The renderings of the steps on the lecture line holding `snippet`."""
    source = trace.files[0]["source"].splitlines()
    line = next(number for number, text in enumerate(source, 1) if snippet in text)
    return [rendering for step in trace.steps if step.line == line and step.file == trace.files[0]["path"]
            for rendering in step.renderings]


def test_a_course_lecture_traces_unchanged_with_our_runtime(course_repo, validate_trace):
    before = {path: path.read_bytes() for path in course_repo.rglob("*") if path.is_file()}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DirectiveWarning)  # the course's comments raise no warning
        status, trace = trace_demo(course_repo / "ours")
    assert status == 0 and trace.header["status"] == "ok"
    validate_trace(course_repo / "ours" / "lecture_demo.json")
    after = {path: path.read_bytes() for path in before}
    assert after == before  # not one of the course's files was touched
    assert "execute_util" not in sys.modules  # our module was lent for the run only
    assert trace.steps[-1].stdout == "done lecture_demo.py\n"


def test_text_markdown_math_verbatim_and_camel_case_style(course_repo):
    _, trace = trace_demo(course_repo / "ours")
    [heading] = renderings_on(trace, 'text("# Course runtime demo")')
    assert heading["headings"] == [[1, "Course runtime demo", "course-runtime-demo"]]
    [energy] = renderings_on(trace, "Energy")
    assert "<math" in energy["html"] and energy["style"] == {"color": "gray"}
    [verbatim] = renderings_on(trace, "verbatim=True")
    assert verbatim["verbatim"] and "first line\n    indented second" in verbatim["html"]
    [styled] = renderings_on(trace, "monospace note")
    assert styled["style"] == {"font-family": "monospace", "font-size": "12px"}


def test_images_from_the_repository_and_from_the_courses_download_cache(course_repo):
    _, trace = trace_demo(course_repo / "ours")
    [local] = renderings_on(trace, 'image("images/grid.png"')
    assert local["src"].startswith("data:image/png") and local["width"] == 300 and local["alt"] == "grid.png"
    [cached] = renderings_on(trace, 'image("https://example.org/figures/loss.png"')
    # Read from var/files/image-<md5>-<url>: no network needed, named after the URL.
    assert cached["src"].startswith("data:image/png") and cached["width"] == "50%" and cached["alt"] == "loss.png"
    assert "error" not in cached


def test_links_in_every_form_the_course_uses(course_repo):
    _, trace = trace_demo(course_repo / "ours")
    [keywords] = renderings_on(trace, 'link(title="Scaling laws"')
    assert keywords == {"type": "link", "title": "Scaling laws", "url": "https://example.org/scaling",
                        "authors": ["A. Author"], "date": "2020", "organization": "Example Lab",
                        "notes": "compute, data and parameters"}
    [reference] = renderings_on(trace, "link(shannon1950)")
    assert reference["title"] == "Prediction and Entropy of Printed English"
    assert reference["notes"] == "Estimated the entropy of English\nUsed human guessers"
    [untitled] = renderings_on(trace, "link(untitled)")
    assert untitled["title"] == untitled["url"] == "https://example.org/untitled"
    [code] = renderings_on(trace, "link(add_one)")
    source = trace.files[code["file"]]["source"].splitlines()
    assert code["title"] == "add_one" and source[code["line"] - 1].startswith("def add_one(")
    [paper] = renderings_on(trace, 'link("https://arxiv.org')
    # The course's own arxiv_util is importable here, so it made the reference (from its cache).
    assert paper["title"] == "[from arxiv_util] Neural Machine Translation of Rare Words with Subword Units"
    assert paper["authors"] == ["Rico Sennrich", "Barry Haddow", "Alexandra Birch"]
    [plain] = renderings_on(trace, 'link("https://example.org/plain")')
    assert plain == {"type": "link", "title": "https://example.org/plain", "url": "https://example.org/plain"}
    [titled] = renderings_on(trace, 'link("[tensor docs]"')
    assert titled == {"type": "link", "title": "[tensor docs]", "url": "https://example.org/tensors"}
    [article] = renderings_on(trace, "article_link(")  # lecture_util's helper calls our link()
    assert article == {"type": "link", "title": " [article]", "url": "https://example.org/article"}


def test_system_text_shows_the_commands_output_without_colour_codes(course_repo):
    _, trace = trace_demo(course_repo / "ours")
    [output] = renderings_on(trace, "system_text(")
    assert output["verbatim"] and "green output" in output["html"] and "\x1b" not in output["html"]


def test_the_courses_directive_style(course_repo):
    _, trace = trace_demo(course_repo / "ours")
    assert trace.values_of("bytes_per_parameter") == [16]  # @inspect after prose in the comment
    assert trace.values_of("x") == ["a"] and trace.values_of("y") == ["b"]  # "@inspect x, @inspect y"
    assert trace.values_of("z") == [5] and trace.values_of("w") == [11]
    # "@stepover" in the middle of a comment: add_one(10) is not traced, add_one(1) and (2) are.
    assert trace.values_of("result") == [2, 3]
    # "def add_one(n: int) -> int:  # @inspect n": the argument on entry, on the call's first step.
    assert trace.values_of("n") == [1, 2]
    first_steps = [step for step in trace.steps if step.function == "add_one" and "n" in step.values]
    assert [step.line for step in first_steps] == [43, 43]


def test_a_def_line_inspects_the_arguments_on_entry(tmp_path):
    lecture = tmp_path / "arguments.py"
    lecture.write_text(
        "def main():\n"
        "    scale([1, 2], factor=3)\n"
        "    squares = [y * y for y in range(3)]  # @inspect squares\n"
        "\n"
        "\n"
        "@staticmethod\n"
        "def unused():\n"
        "    pass\n"
        "\n"
        "\n"
        "def scale(xs, *, factor=2, **options):  # @inspect xs factor options total\n"
        "    total = sum(xs) * factor  # @inspect total\n"
        "    factor = 0  # @inspect factor\n"
        "    return total\n"
    )
    assert main(["trace", str(lecture), "-o", str(tmp_path / "out"), "--quiet"]) == 0
    trace = load_trace(tmp_path / "out" / "arguments.json")
    first = next(step for step in trace.steps if step.function == "scale")
    assert first.line == 12 and first.values == {"xs": [1, 2], "factor": 3, "options": {}, "total": 9}
    assert trace.values_of("factor") == [3, 0] and trace.values_of("squares") == [[0, 1, 4]]


def test_lenient_directives_only_for_files_that_import_the_course_runtime():
    course_line = "x = f()  # 4x8 zeros @inspect x, @inspect y; see a @ b  @stepover\n"
    directive = parse_directives(course_line, "lecture.py", lenient=True)[1]
    assert [name for name, _ in directive.inspect] == ["x", "y"] and directive.stepover
    with pytest.warns(DirectiveWarning):
        assert parse_directives("x = f()  # @inspekt x\n", "ours.py") == {}
    assert parse_directives("x = f()  # 4x8 zeros @inspect x\n", "ours.py") == {}  # ours: comment starts with @
    assert course_compat.uses_course_runtime("from execute_util import text\n")
    assert course_compat.uses_course_runtime("import os\nimport execute_util\n")
    assert not course_compat.uses_course_runtime("# execute_util is mentioned, not imported\n")


def test_arxiv_links_read_the_course_cache_when_arxiv_util_is_absent(course_repo, monkeypatch):
    bare = course_repo.parent / "bare"
    monkeypatch.chdir(bare)
    monkeypatch.delenv("CS336_FIXTURE_API_KEY", raising=False)
    status, trace = trace_demo(bare / "ours", "lecture_bare.py")
    [cached] = renderings_on(trace, 'link("https://arxiv.org/pdf/1508.07909.pdf")')
    assert cached["title"] == "Neural Machine Translation of Rare Words with Subword Units"
    assert cached["date"] == "2015-08-31T16:37:31Z" and cached["authors"][0] == "Rico Sennrich"
    assert cached["url"] == "https://arxiv.org/pdf/1508.07909.pdf"
    [uncached] = renderings_on(trace, 'link("https://arxiv.org/abs/2001.08361")')
    assert uncached == {"type": "link", "title": "https://arxiv.org/abs/2001.08361",
                        "url": "https://arxiv.org/abs/2001.08361"}
    # A run that needs an API key fails as any lecture does: partial trace, error step, one line.
    assert status == 1 and trace.header["status"] == "error"
    assert trace.header["message"].startswith("KeyError: 'CS336_FIXTURE_API_KEY'")
    assert trace.steps[-1].error["type"] == "KeyError"


def test_tracing_in_a_clone_never_replaces_the_courses_published_trace(course_repo, capsys):
    published = course_repo / "var" / "traces" / "lecture_demo.json"
    before = published.read_bytes()
    assert main(["trace", "lecture_demo.py", "--quiet"]) == 2
    [error] = capsys.readouterr().err.strip().splitlines()
    assert error.startswith("cs336-lectures: error: var/traces/lecture_demo.json is a trace published by the "
                            "Stanford course") and "-o DIR" in error
    assert published.read_bytes() == before
    assert main(["serve", "lecture_demo.py", "--no-browser", "--port", "0"]) == 2
    assert "(--traces DIR)" in capsys.readouterr().err
    assert published.read_bytes() == before


def test_the_command_line_in_a_clone_as_a_student_runs_it(course_repo, validate_trace):
    """A separate process, as `serve` runs the tracer: python -m cs336_lectures trace, in the clone."""
    result = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", "lecture_demo.py", "-o", "var/ours"],
                            cwd=course_repo, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("var/ours/lecture_demo.json: ok, ")
    trace = validate_trace(course_repo / "var" / "ours" / "lecture_demo.json")
    assert trace["header"]["status"] == "ok"


def test_css_style_and_the_courses_cache_names():
    assert course_compat.css_style({"fontFamily": "monospace", "width": 400, "opacity": 0.5, "color": None}) == {
        "font-family": "monospace", "width": "400px", "opacity": "0.5"}
    path = course_compat.course_cache_path("https://example.org/figures/loss.png", "image")
    assert path == Path("var/files/image-777706680074ae5a1ef97108194794b2-https_example_org_figures_loss_png")
    assert (FIXTURES / "repo" / path).is_file()


def test_serve_traces_a_course_lecture_in_the_clone(course_repo, validate_trace):
    """`serve lecture_demo.py --traces var/ours` in the clone: traced at start, listed, served."""
    from test_server import Events, request, wait_for

    from cs336_lectures.runtime.server.http_server import LectureServer

    server = LectureServer([Path("lecture_demo.py")], course_repo / "var" / "ours", port=0,
                           log=lambda message: None).start()
    try:
        assert wait_for(Events(server), "lecture_demo")["state"] == "ok"
        status, body, _ = request(server, "GET", "/traces/index.json")
        assert status == 200 and [entry["name"] for entry in json.loads(body)["traces"]] == ["lecture_demo"]
        status, body, _ = request(server, "GET", "/traces/lecture_demo.json")
        trace = validate_trace(json.loads(body))
        assert trace["header"]["status"] == "ok" and trace["files"][0]["path"] == "lecture_demo.py"
    finally:
        server.close()
