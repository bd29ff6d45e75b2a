"""The command line: exit codes, one-line errors, output names, help for every command."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cs336_lectures.runtime.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
GOOD = "def main():\n    x = 1  # @inspect x\n    print('hello')\n"


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(source)
    return path


def one_line_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_trace_writes_one_trace_per_lecture(tmp_path, capsys, validate_trace):
    first, second = write(tmp_path, "first.py", GOOD), write(tmp_path, "second.py", "y = 2  # @inspect y\n")
    out = tmp_path / "out"
    assert main(["trace", str(first), str(second), "-o", str(out), "--quiet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["first.json", "second.json"]
    header = validate_trace(out / "first.json")["header"]
    assert header["command"] == ["cs336-lectures", "trace", str(first), str(second), "-o", str(out), "--quiet"]
    assert header["source"] == str(first) and header["seed"] == 0 and header["status"] == "ok"
    assert validate_trace(out / "second.json")["header"]["entry"] == "<module>"
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""  # --quiet, and the lecture's print went to the trace


def test_one_summary_line_per_lecture_without_quiet(tmp_path, capsys, validate_trace):
    good = write(tmp_path, "lecture.py", GOOD)
    bad = write(tmp_path, "bad.py", "def main():\n    raise ValueError('broken')\n")
    assert main(["trace", str(good), str(bad), "-o", str(tmp_path / "out")]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'out' / 'lecture.json'}: ok, 2 steps in ")
    assert lines[1].startswith(f"{tmp_path / 'out' / 'bad.json'}: error, 1 step in ")
    assert lines[1].endswith(f"ValueError: broken ({bad}:2)") and len(lines) == 2
    validate_trace(tmp_path / "out" / "lecture.json")


@pytest.mark.parametrize("source, expected", [
    (None, "absent.py: no such file"),
    ("def main(:\n    pass\n", "absent.py:1: syntax error"),
    ("import not_a_module_anywhere\n\ndef main():\n    pass\n",
     "absent.py:1: import failed: ModuleNotFoundError: No module named 'not_a_module_anywhere'"),
    ("def main():\n    pass\n\nraise RuntimeError('at import')\n", "absent.py:4: import failed: RuntimeError: at import"),
    ("x = 1\0\n", "absent.py: syntax error: source code string cannot contain null bytes"),
    ("def main():\n    total = " + " + ".join(["1"] * 5000) + "\n", "absent.py: cannot compile: maximum recursion depth"),
    ("def main(size):\n    pass\n", "absent.py: cannot trace main(): it needs arguments (size)"),
    ("def main():\n    pass\n\nmain = 3\n", "absent.py: main is not a function once the top level has run"),
    ("class Halt(BaseException):\n    pass\n\nraise Halt('early')\n\ndef main():\n    pass\n",
     "absent.py:4: import failed: Halt: early"),
])
def test_lectures_that_cannot_start_give_one_line_and_exit_2(tmp_path, capsys, source, expected):
    if source is not None:
        write(tmp_path, "absent.py", source)
    assert main(["trace", str(tmp_path / "absent.py"), "-o", str(tmp_path / "out")]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith("cs336-lectures: error: ") and expected in line
    assert not (tmp_path / "out").exists()


def test_an_import_error_at_the_top_of_a_lecture_without_main_is_a_usage_error(tmp_path, capsys):
    lecture = write(tmp_path, "flat.py", "x = 1\nimport not_a_module_anywhere\n")
    assert main(["trace", str(lecture), "-o", str(tmp_path / "out")]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "flat.py:2: import failed: ModuleNotFoundError" in line and not (tmp_path / "out" / "flat.json").exists()


def test_an_output_folder_that_cannot_be_made_is_one_line_before_any_run(tmp_path, capsys):
    lecture = write(tmp_path, "lecture.py", "def main():\n    print('ran')\n")
    blocker = write(tmp_path, "blocker", "a file where the folder should be")
    assert main(["trace", str(lecture), "-o", str(blocker / "traces")]) == 2
    captured = capsys.readouterr()
    line = one_line_error(captured.err)
    assert line.startswith(f"cs336-lectures: error: {blocker / 'traces'}: cannot create the output folder")
    assert "ran" not in captured.out


def test_keyboard_interrupt_keeps_the_partial_trace_and_stops(tmp_path, capsys, validate_trace):
    first = write(tmp_path, "first.py", "def main():\n    x = 1\n    raise KeyboardInterrupt\n")
    second = write(tmp_path, "second.py", GOOD)
    assert main(["trace", str(first), str(second), "-o", str(tmp_path / "out"), "--quiet"]) == 130
    assert one_line_error(capsys.readouterr().err).endswith(f"KeyboardInterrupt ({first}:3)")
    trace = validate_trace(tmp_path / "out" / "first.json")
    assert trace["header"]["status"] == "error" and trace["steps"][-1][2]["x"]["type"] == "KeyboardInterrupt"
    assert not (tmp_path / "out" / "second.json").exists()


def test_a_failing_lecture_exits_1_with_its_trace_written(tmp_path, capsys, validate_trace):
    bad = write(tmp_path, "bad.py", "def main():\n    x = 1\n    raise ValueError('broken on purpose')\n")
    good = write(tmp_path, "good.py", GOOD)
    assert main(["trace", str(bad), str(good), "-o", str(tmp_path / "out"), "--quiet"]) == 1
    line = one_line_error(capsys.readouterr().err)
    assert "bad.py" in line and "ValueError: broken on purpose" in line
    trace = validate_trace(tmp_path / "out" / "bad.json")
    assert trace["header"]["status"] == "error"
    assert trace["steps"][-1][2]["x"]["message"] == "broken on purpose"
    assert validate_trace(tmp_path / "out" / "good.json")["header"]["status"] == "ok"


def test_limits_and_section_flags(tmp_path, capsys, validate_trace):
    lecture = write(tmp_path, "loop.py", "def spin():\n    while True:\n        pass\n\ndef main():\n    spin()\n")
    out = tmp_path / "out"
    assert main(["trace", str(lecture), "-o", str(out), "--section", "spin", "--max-steps", "10", "--quiet"]) == 1
    assert "max_steps" in one_line_error(capsys.readouterr().err)
    trace = validate_trace(out / "loop.spin.json")
    assert trace["header"]["status"] == "max_steps" and trace["header"]["num_steps"] == 10


def test_unknown_trace_module_is_a_usage_error(tmp_path, capsys):
    lecture = write(tmp_path, "lecture.py", GOOD)
    assert main(["trace", str(lecture), "--trace-module", "no_such_module_xyz", "-o", str(tmp_path / "out")]) == 2
    assert "--trace-module no_such_module_xyz" in one_line_error(capsys.readouterr().err)
    package = tmp_path / "broken_package_xyz"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('package broke')\n")
    (package / "part.py").write_text("")  # beside the lecture: found as the lecture's imports are
    assert main(["trace", str(lecture), "--trace-module", "broken_package_xyz.part", "-o", str(tmp_path / "out")]) == 2
    assert one_line_error(capsys.readouterr().err).endswith(
        "--trace-module broken_package_xyz.part: RuntimeError: package broke")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_display_on_a_terminal_only(tmp_path, monkeypatch, capsys, validate_trace):
    lecture = write(tmp_path, "lecture.py", "def main():\n    for i in range(5000):\n        pass\n    print('done')\n")
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["trace", str(lecture), "-o", str(tmp_path)]) == 0
    shown = terminal.getvalue()
    assert "tracing lecture" in shown and "lecture.json: ok, 10002 steps" in shown
    assert "done" not in shown and capsys.readouterr().out == ""
    validate_trace(tmp_path / "lecture.json")


def test_the_command_line_starts_without_heavy_imports():
    probe = "import sys, cs336_lectures.runtime.cli.main; print(sorted({'torch', 'rich', 'numpy'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr


@pytest.mark.parametrize("flags", [["--max-steps", "0"], ["--timeout", "-1"], ["--seed", "x"], ["--seed", "-1"],
                                   ["--bogus"]])
def test_bad_flags_are_usage_errors(tmp_path, capsys, flags):
    with pytest.raises(SystemExit) as exit:
        main(["trace", str(tmp_path / "x.py"), *flags])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "usage: cs336-lectures" in err and "error:" in err


def test_help_documents_every_command(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    for usage in ("cs336-lectures trace [-h] [-o DIR] [--section NAME]", "--trace-module MODULE", "--inspect-all",
                  "cs336-lectures serve [-h] [--traces DIR]", "cs336-lectures build [-h] [--out DIR]"):
        assert usage in text  # every command with its options, right in the top-level help
    with pytest.raises(SystemExit):
        main(["trace", "--help"])
    text = capsys.readouterr().out
    for flag in ("--output", "--section", "--trace-module", "--inspect-all", "--max-steps", "--timeout",
                 "--seed", "--quiet"):
        assert flag in text
    for command in ("serve", "build"):
        with pytest.raises(SystemExit) as exit:
            main([command, "--help"])
        assert exit.value.code == 0
        assert f"usage: cs336-lectures {command}" in capsys.readouterr().out


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: cs336-lectures" in capsys.readouterr().err


def test_module_entry_point_runs_the_tracer_deterministically(tmp_path, validate_trace):
    lecture = write(tmp_path, "lecture.py", "def main():\n    words = {'apple', 'pear', 'fig', 'kiwi', 'lime'}\n"
                                            "    print(list(words))\n")
    missing = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(tmp_path / "none.py")],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "no such file" in one_line_error(missing.stderr)
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONHASHSEED"}
    printed = []
    for run in ("one", "two"):
        done = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(lecture), "-o",
                               str(tmp_path / run), "--quiet"], cwd=ROOT, env=environment,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        trace = validate_trace(tmp_path / run / "lecture.json")
        printed.append(trace["steps"][-1][2]["o"])
    assert printed[0] == printed[1]  # set order depends on the hash seed, which the command fixes


def test_two_lectures_that_would_write_the_same_trace_are_refused(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = write(tmp_path / "a", "lecture.py", GOOD), write(tmp_path / "b", "lecture.py", GOOD)
    assert main(["trace", str(first), str(second), "-o", str(tmp_path / "out")]) == 2
    assert "would both write" in one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


HOSTILE = ("def main():\n    print('wipe \\x1b[2J')\n"
           "    raise ValueError('bad \\x1b]52;c;Zm9v\\x07 \\x1b]0;title\\x07 end')\n")


def test_summaries_and_errors_show_the_escapes_of_file_names_and_exceptions(tmp_path, capsys, validate_trace):
    lecture = write(tmp_path, "esc\x1b[31mname.py", HOSTILE)
    assert main(["trace", str(lecture), "-o", str(tmp_path / "out")]) == 1
    line = capsys.readouterr().err.strip()
    assert not set(line) & {"\x1b", "\x07"}
    assert line.startswith(f"{tmp_path}/out/esc\\x1b[31mname.json: error, ")
    assert line.endswith("ValueError: bad \\x1b]52;c;Zm9v\\x07 \\x1b]0;title\\x07 end ("
                         f"{tmp_path}/esc\\x1b[31mname.py:3)")
    validate_trace(tmp_path / "out" / "esc\x1b[31mname.json")  # the trace itself keeps the text as it was
    unstartable = write(tmp_path, "start.py", "def main():\n    pass\n\nraise RuntimeError('no \\x1b]52;c;eA==\\x07')\n")
    assert main(["trace", str(unstartable), "-o", str(tmp_path / "out")]) == 2
    assert one_line_error(capsys.readouterr().err).endswith("RuntimeError: no \\x1b]52;c;eA==\\x07")


def test_a_directive_warning_quoting_the_lecture_line_shows_its_escapes(tmp_path):
    lecture = write(tmp_path, "lecture.py", "def main():\n    x = 1  # @inspect \x1b]0;T\x07\n")
    done = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(lecture), "-o", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "DirectiveWarning" in done.stderr and "# @inspect \\x1b]0;T\\x07" in done.stderr
    assert not set(done.stderr) & {"\x1b", "\x07"}


def test_the_servers_log_lines_show_escapes(capsys):
    from cs336_lectures.runtime.cli.serve import _say  # the server's `log`: re-trace errors quote the lecture

    _say("lecture: error: ValueError: \x1b]0;title\x07 (lecture.py:3)")
    assert capsys.readouterr().out == "lecture: error: ValueError: \\x1b]0;title\\x07 (lecture.py:3)\n"


@pytest.mark.parametrize("hostile, problem", [
    (lambda text: text[:-1] + ',"extra":' + "[" * 20_000 + "]" * 20_000 + "}", "JSON nested too deeply for a trace"),
    (lambda text: text.replace('"seed":0', '"seed":' + "9" * 5_000, 1), "a number in the JSON is too long to read"),
])
@pytest.mark.parametrize("command", [["show"], ["export", "-o", "{out}/notebook.ipynb"], ["build", "--out", "{out}/site"]])
def test_a_trace_nested_too_deep_or_holding_a_huge_integer_is_one_line_in_every_reader(tmp_path, capsys, hostile,
                                                                                       problem, command):
    lecture = write(tmp_path, "lecture.py", GOOD)
    assert main(["trace", str(lecture), "-o", str(tmp_path), "--quiet"]) == 0
    trace = tmp_path / "lecture.json"
    trace.write_text(hostile(trace.read_text()))
    arguments = [part.format(out=tmp_path) for part in command]
    assert main([arguments[0], str(trace), *arguments[1:]]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith("cs336-lectures") and ": error: " in line
    assert f"{trace}: {problem}" in line


@pytest.mark.parametrize("argv", [["show", "a.json", "--\x1b]0;T\x07"], ["trace", "--sec\x1b]52;c;eA==\x07", "a.py"],
                                  ["\x1b[2J"]])
def test_usage_errors_quoting_an_argument_show_its_escapes(capsys, argv):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    error = capsys.readouterr().err
    assert stopped.value.code == 2 and "error: " in error
    assert not set(error) & {"\x1b", "\x07"} and "\\x1b" in error
