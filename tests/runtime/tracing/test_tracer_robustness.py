"""Lectures that misbehave: deep recursion, input(), odd output, swallowed stops, unresumed generators."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from test_tracer import trace_program

from cs336_lectures import load_trace
from cs336_lectures.runtime.tracing.lecture_run import trace_lecture

ROOT = Path(__file__).resolve().parents[3]


def test_runaway_recursion_ends_in_an_error_step_without_the_tracers_frames(tmp_path, validate_trace):
    source = """
        def down(n):
            return down(n + 1)

        def main():
            down(0)
        """
    result, _, trace = trace_program(tmp_path, source, validate_trace)
    assert result.status == "error" and result.message.startswith("RecursionError")
    error = trace.steps[-1].error
    assert error["type"] == "RecursionError" and "tracer.py" not in error["traceback"]
    assert "return down(n + 1)" in error["traceback"]


def test_a_caught_recursion_error_is_reported_not_hidden(tmp_path, validate_trace):
    # CPython switches tracing off for good when the call into the trace function overflows:
    # the rest of the run cannot be traced, so the trace must say it is incomplete.
    source = """
        def down(n):
            return down(n + 1)

        def main():
            try:
                down(0)
            except RecursionError:
                pass
            after = 1  # @inspect after
        """
    result, raw, _ = trace_program(tmp_path, source, validate_trace)
    assert result.status == "error" and "recursion limit" in result.message
    assert raw["header"]["message"] == result.message


def test_input_gets_end_of_file_at_once(tmp_path, validate_trace):
    source = """
        def main():
            try:
                name = input("name? ")
            except EOFError:
                name = "nobody"  # @inspect name
        """
    result, _, trace = trace_program(tmp_path, source, validate_trace)
    assert result.status == "ok" and trace.values_of("name") == ["nobody"]
    assert trace.steps[1].stdout == "name? "


def test_input_never_waits_on_an_open_stdin(tmp_path, validate_trace):
    lecture = tmp_path / "asks.py"
    lecture.write_text("def main():\n    answer = input()\n")
    command = [sys.executable, "-m", "cs336_lectures", "trace", str(lecture), "-o", str(tmp_path), "--quiet"]
    with subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            assert process.wait(timeout=120) == 1  # the pipe stays open: only the tracer ends the wait
        finally:
            process.kill()
    trace = validate_trace(tmp_path / "asks.json")
    assert trace["steps"][-1][2]["x"]["type"] == "EOFError"


def test_output_that_is_not_valid_unicode_is_kept(tmp_path, validate_trace):
    source = """
        import sys

        def main():
            print("half a pair: \\ud800")
            sys.stdout.buffer.write("bytes: é\\n".encode())
            sys.stdout.buffer.write(b"\\xff\\n")
        """
    result, _, trace = trace_program(tmp_path, source, validate_trace)
    assert result.status == "ok"
    assert [step.stdout for step in trace.steps] == ["half a pair: \ud800\n", "bytes: é\n", "\ufffd\n"]


def test_values_on_a_yield_line_are_recorded_even_when_never_resumed(tmp_path, validate_trace):
    source = """
        def numbers():
            for i in range(5):
                received = yield i  # @inspect i received

        def main():
            stream = numbers()
            first = next(stream)
            second = stream.send("hello")
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.values_of("i") == [0, 1]  # the second yield is never resumed
    assert trace.values_of("received") == ["hello"]  # recorded once its line finished


def test_a_chained_exception_keeps_its_cause_in_the_traceback(tmp_path, validate_trace):
    source = """
        def main():
            try:
                {}["key"]
            except KeyError as error:
                raise ValueError("no key") from error
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    traceback = trace.steps[-1].error["traceback"]
    assert "KeyError: 'key'" in traceback and "direct cause" in traceback and "ValueError: no key" in traceback
    assert "tracer.py" not in traceback


def test_a_bare_except_swallowing_the_stop_still_reports_it(tmp_path, validate_trace):
    source = """
        def main():
            count = 0
            try:
                while count < 1000:
                    count += 1
            except:
                pass
            done = True
        """
    result, raw, _ = trace_program(tmp_path, source, validate_trace, max_steps=50)
    assert result.status == "max_steps" and raw["header"]["status"] == "max_steps"
    assert len(raw["steps"]) == 50


def test_unicode_file_names_and_output(tmp_path, validate_trace):
    source = """
        from cs336_lectures import text

        def main():
            greeting = "héllo 世界 🎉"  # @inspect greeting
            print(greeting)
            text("**世界** $\\\\alpha$")
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace, name="лекция_ü")
    assert result.path.name == "лекция_ü.json" and raw["header"]["title"] == "лекция_ü"
    assert trace.values_of("greeting") == ["héllo 世界 🎉"] and trace.steps[1].stdout == "héllo 世界 🎉\n"
    assert "<strong>世界</strong>" in trace.steps[2].renderings[0]["html"]
    assert load_trace(result.path).files[0]["path"].endswith("лекция_ü.py")


def test_the_lecture_sees_its_own_argv_not_the_tracers(tmp_path, validate_trace):
    source = """
        import sys

        def main():
            arguments = list(sys.argv)  # @inspect arguments
        """
    argv = list(sys.argv)
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.values_of("arguments") == [[str(tmp_path / "lecture.py")]]
    assert sys.argv == argv


def test_output_of_a_line_that_prints_many_times_is_kept_whole(tmp_path, validate_trace):
    source = """
        def noisy():
            for i in range(20000):
                print(i)

        def main():
            noisy()  # @stepover
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.steps[0].stdout == "".join(f"{i}\n" for i in range(20000))


def test_output_beyond_the_limit_is_cut_with_a_note(tmp_path, validate_trace, monkeypatch):
    from cs336_lectures.runtime.tracing import engine as tracer
    monkeypatch.setattr(tracer, "MAX_OUTPUT", 100)
    source = """
        import sys

        def main():
            print("a" * 60)
            print("b" * 60, file=sys.stderr)
            print("never recorded")
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.steps[0].stdout == "a" * 60 + "\n"
    assert trace.steps[1].stderr == "b" * 39 + tracer.OUTPUT_CUT
    assert trace.steps[2].stdout == ""


def test_a_lecture_that_changes_directory_still_writes_where_asked(tmp_path, validate_trace, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    source = f"""
        import os
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from cs336_lectures import plot

        def main():
            os.chdir({str(tmp_path / "elsewhere")!r})
            figure, axes = plt.subplots()
            axes.plot(range(1000), [i * i for i in range(1000)])
            plot(figure)
        """
    (tmp_path / "work" / "moving.py").write_text(textwrap.dedent(source))
    result = trace_lecture(Path("moving.py"), output_dir=Path("traces"), quiet=True)
    assert result.status == "ok" and Path.cwd() == tmp_path / "work"
    trace = validate_trace(tmp_path / "work" / "traces" / "moving.json")
    src = trace["steps"][-1][2]["r"][0]["src"]
    assert src.startswith("assets/") and (tmp_path / "work" / "traces" / src).is_file()
    assert not (tmp_path / "elsewhere" / "traces").exists()


def test_sources_are_read_as_python_reads_them(tmp_path, validate_trace):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfdef main():\r\n    x = 1  # @inspect x\r\n")
    (tmp_path / "latin.py").write_bytes(b'# -*- coding: latin-1 -*-\ndef main():\n    s = "caf\xe9"  # @inspect s\n')
    for name, variable, expected in (("bom", "x", 1), ("latin", "s", "café")):
        result = trace_lecture(tmp_path / f"{name}.py", output_dir=tmp_path / "traces", quiet=True)
        trace = validate_trace(result.path)
        assert result.status == "ok" and load_trace(result.path).values_of(variable) == [expected]
        assert not trace["files"][0]["source"].startswith("\ufeff")
