"""`cs336-lectures new`, `--version` and `python -m cs336_lectures`: a lecturer's first minute."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cs336_lectures.resources import version
from cs336_lectures.runtime.i18n.catalog import load_catalog
from cs336_lectures.runtime.cli.main import main
from cs336_lectures.runtime.publish.site import default_traces_dir
from cs336_lectures.runtime.trace.format import load_trace

ROOT = Path(__file__).resolve().parents[3]
CONSOLE_SCRIPT = Path(sys.executable).parent / "cs336-lectures"


def pyproject_version() -> str:
    return re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE).group(1)


def test_new_writes_a_lecture_that_traces_with_every_part_of_the_shape(tmp_path, capsys, validate_trace):
    lecture = tmp_path / "course" / "softmax_notes.py"
    assert main(["new", str(lecture)]) == 0
    assert f"wrote {lecture}" in capsys.readouterr().out
    source = lecture.read_text()
    assert source.startswith('"""Softmax notes: ')  # the card's title comes from the file name
    assert main(["trace", str(lecture), "-o", str(tmp_path / "out"), "--quiet"]) == 0
    data = validate_trace(tmp_path / "out" / "softmax_notes.json")
    trace = load_trace(tmp_path / "out" / "softmax_notes.json")
    assert trace.header["status"] == "ok" and data["header"]["cs336_lectures"] == version()
    sections = {name for _, name, _ in data["functions"]} & {"softmax_by_hand", "temperature", "exercise_uniform_scores"}
    assert len(sections) == 3  # main() calls two sections and an exercise
    renderings = [rendering for step in trace.steps for rendering in step.renderings]
    kinds = [rendering["type"] for rendering in renderings]
    assert "plot" in kinds and "markdown" in kinds
    assert any("<math" in rendering.get("html", "") for rendering in renderings)  # text() with math
    links = [rendering for rendering in renderings if rendering["type"] == "link"]
    assert any(link.get("url", "").startswith("https://arxiv.org/") for link in links)
    assert any(link.get("title") == "softmax" and "line" in link for link in links)  # a link to a function
    assert trace.values_of("probabilities")[0] == pytest.approx([0.659, 0.242, 0.099], abs=1e-3)
    assert trace.values_of("total") == [pytest.approx(1.0)]
    assert len(trace.solutions) == 1 and trace.solutions[0].values_of("probabilities") == [[0.25] * 4]


def test_new_with_languages_writes_catalog_stubs_for_every_string(tmp_path, capsys):
    lecture = tmp_path / "first.py"
    assert main(["new", str(lecture), "--lang", "ru,zh"]) == 0
    for language in ("ru", "zh"):
        catalog = load_catalog(tmp_path / "locales" / language / "first.yaml")
        english = [entry.en for entry in catalog.entries]
        assert "# Softmax" in english and "Softmax of three scores" in english  # text() and a figure's title
        assert all(entry.translation == "" for entry in catalog.entries)
    assert main(["i18n", "check", str(lecture)]) == 1  # untranslated: what a translator starts from
    assert "missing" in capsys.readouterr().out


@pytest.mark.parametrize("existing", ["first.py", "locales/zh/first.yaml"])
def test_new_refuses_to_overwrite_and_writes_nothing(tmp_path, capsys, existing):
    (tmp_path / existing).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / existing).write_text("mine\n")
    before = sorted(str(path) for path in tmp_path.rglob("*"))
    assert main(["new", str(tmp_path / "first.py"), "--lang", "zh"]) == 2
    error = capsys.readouterr().err.strip()
    assert error == f"cs336-lectures new: error: {tmp_path / existing} already exists; nothing written (choose another name or remove it)"
    assert (tmp_path / existing).read_text() == "mine\n"
    assert sorted(str(path) for path in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("argv, expected", [
    (["new", "2nd-lecture.py"], "a lecture is a Python module"),
    (["new", "notes.txt"], "a lecture is a Python module"),
    (["new", "math.py"], "this name would hide the module 'math'"),
    (["new", "matplotlib.py"], "this name would hide the module 'matplotlib'"),
])
def test_new_refuses_names_python_cannot_import(tmp_path, monkeypatch, capsys, argv, expected):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert expected in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_new_refuses_an_unknown_language(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["new", str(tmp_path / "first.py"), "--lang", "ru,fr"])
    assert exit.value.code == 2 and "languages are ru, zh" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_version_is_the_one_in_pyproject():
    shown = subprocess.run([str(CONSOLE_SCRIPT), "--version"], capture_output=True, text=True, check=True).stdout
    assert shown == f"cs336-lectures {pyproject_version()}\n" and version() == pyproject_version()


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["new", "--help"], ["trace", "absent.py"], ["serve", "--nope"], []])
def test_python_dash_m_is_the_console_script(tmp_path, argv):
    runs = [subprocess.run(command + argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
            for command in ([str(CONSOLE_SCRIPT)], [sys.executable, "-m", "cs336_lectures"])]
    script, module = ((run.returncode, run.stdout, run.stderr) for run in runs)
    assert script == module


def test_a_lecture_outside_the_working_directory_traces_beside_itself(tmp_path, monkeypatch):
    (tmp_path / "course" / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "course")
    assert default_traces_dir(Path("sub/l.py")) == Path("var/traces")  # inside: the working directory's
    assert default_traces_dir(tmp_path / "course" / "l.py") == Path("var/traces")
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert default_traces_dir(Path("../course/sub/l.py")) == (tmp_path / "course" / "sub" / "var" / "traces").resolve()
