"""Tracer controls: directives, errors, limits, sections, determinism, extra traced modules."""

from __future__ import annotations

import json
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from test_tracer import trace_program

from cs336_lectures.runtime.lecture.directives import DirectiveWarning, parse_directives
from cs336_lectures.runtime.tracing.lecture_run import environment, trace_lecture
from cs336_lectures.runtime.tracing.result import LectureError

HELPER = """
def helper(n):
    total = 0
    for i in range(n):
        total += i
    return total
"""


def test_stepover_does_not_trace_calls_made_on_that_line(tmp_path, validate_trace):
    source = HELPER + """
def main():
    a = helper(2)  # @stepover @inspect a
    b = helper(2)  # @inspect b
"""
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert [(step.function, step.line) for step in trace.steps] == [
        ("main", 9),  # no helper steps under the @stepover line
        ("main", 10), ("helper", 3), ("helper", 4), ("helper", 5), ("helper", 4), ("helper", 5),
        ("helper", 4), ("helper", 6)]
    assert trace.values_of("a") == [1] and trace.values_of("b") == [1]


def test_stepover_also_covers_generators_resumed_on_that_line(tmp_path, validate_trace):
    source = """
        def numbers():
            for n in range(3):
                yield n

        def main():
            stream = numbers()
            first = next(stream)  # @inspect first
            rest = list(stream)  # @stepover @inspect rest
            done = True
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.values_of("rest") == [[1, 2]]
    steps_in_numbers = [step for step in trace.steps if step.function == "numbers"]
    assert {len(step.stack) for step in steps_in_numbers} == {2}
    assert all(step.stack[0][2] == 8 for step in steps_in_numbers)  # only the traced next()
    assert trace.steps[-1].line == 10


def test_hidden_lines_are_recorded_and_listed(tmp_path, validate_trace):
    source = """
        def main():
            x = 1
            y = 2  # @hide
            z = (x +  # @hide
                 y)
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert raw["files"][0]["hidden"] == [4, 5, 6]
    assert [step.line for step in trace.steps] == [3, 4, 5, 6, 5]  # steps stay exact; the viewer skips them


def test_clear_stops_showing_a_value(tmp_path, validate_trace):
    source = """
        def main():
            x = 1  # @inspect x
            y = 2  # @clear x
            x = 1  # @inspect x
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.steps[1].cleared == ["x"]
    assert trace.values_of("x") == [1, 1]  # re-inspecting after a clear records it again


def test_unknown_directive_warns_with_file_and_line(tmp_path, validate_trace):
    source = """
        def main():
            x = 1  # @inpsect x
        """
    with pytest.warns(DirectiveWarning, match="unknown directive @inpsect") as caught:
        trace_program(tmp_path, source, validate_trace)
    assert caught[0].filename.endswith("lecture.py") and caught[0].lineno == 3


def test_directive_parsing_ignores_strings_and_prose():
    source = textwrap.dedent('''
        s = "# @inspect s"
        t = 1  # an email like someone @example is prose
        u = 2  # @inspect u, t.real @clear s
        v = f(  # @stepover
            1)
    ''')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        directives = parse_directives(source)
    assert set(directives) == {4, 5, 6}
    assert directives[4].inspect == (("u", ("u",)), ("t.real", ("t", "real")))
    assert directives[4].clear == ("s",)
    assert directives[5].stepover and directives[6].stepover


def test_a_directive_on_a_decorator_covers_the_definition_but_hides_only_its_line(tmp_path, validate_trace):
    source = """
        import functools

        def main():
            @functools.lru_cache  # @inspect cached @hide
            def cached(n):
                return n
            value = cached(2)  # @inspect value
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert raw["files"][0]["hidden"] == [5]
    assert trace.inspected_names() == ["cached", "value"]
    assert trace.values_of("cached")[0].startswith("<functools._lru_cache_wrapper object")


def test_malformed_directive_arguments_warn():
    with pytest.warns(DirectiveWarning, match="expects names"):
        parse_directives("x = 1  # @inspect x[0]\n", "lecture.py")
    with pytest.warns(DirectiveWarning, match="takes no arguments"):
        parse_directives("x = 1  # @hide x\n", "lecture.py")
    with pytest.warns(DirectiveWarning, match="@inspect needs the names of variables"):
        assert parse_directives("x = 1  # @inspect @stepover\n", "lecture.py")[1].stepover
    with pytest.warns(DirectiveWarning, match="@clear needs the names of variables"):
        assert parse_directives("x = 1  # @clear\n", "lecture.py") == {}


def test_uncaught_exception_ends_with_an_error_step(tmp_path, validate_trace):
    source = """
        import json

        def parse(text):
            return json.loads(text)

        def main():
            ok = parse("[1]")  # @inspect ok
            parse("{oops")
            never = 1
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert result.status == "error" and raw["header"]["status"] == "error"
    assert raw["header"]["message"].startswith("JSONDecodeError: ")
    last = trace.steps[-1]
    assert (last.function, last.line) == ("parse", 5)
    assert [line for _, _, line in last.stack] == [9, 5]
    assert last.error["type"] == "JSONDecodeError"
    assert 'line 9, in main' in last.error["traceback"] and "tracer.py" not in last.error["traceback"]
    assert sum(step.error is not None for step in trace.steps) == 1
    assert trace.values_of("ok") == [[1]]


def test_unusual_exceptions_still_end_in_an_error_step(tmp_path, validate_trace):
    source = """
        class Unprintable(Exception):
            def __str__(self):
                raise RuntimeError("no words")

        class Halt(BaseException):
            pass

        def main():
            try:
                raise Unprintable()
            except Unprintable:
                pass
            raise Halt("own base exception")
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert result.status == "error" and raw["header"]["message"].startswith("Halt: own base exception")
    assert trace.steps[-1].error["type"] == "Halt" and trace.steps[-1].line == 14
    unprintable = source.replace('raise Halt("own base exception")', "raise Unprintable()")
    result, raw, trace = trace_program(tmp_path, unprintable, validate_trace)
    assert raw["header"]["message"].startswith("Unprintable: <exception str() failed>")
    assert trace.steps[-1].error["message"] == "<exception str() failed>"


def test_error_after_cleanup_code_gets_its_own_final_step(tmp_path, validate_trace):
    source = """
        def main():
            try:
                raise KeyError("missing")
            finally:
                done = True
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert result.status == "error"
    assert [step.line for step in trace.steps] == [3, 4, 6, 4]
    assert trace.steps[-1].error["message"] == "'missing'"


def test_max_steps_writes_a_partial_trace(tmp_path, validate_trace):
    source = """
        def main():
            n = 0
            while True:
                n += 1
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace, max_steps=50)
    assert result.status == "max_steps" and len(trace.steps) == 50
    assert "50 steps" in raw["header"]["message"]


def test_timeout_stops_a_traced_loop(tmp_path, validate_trace):
    source = """
        import time

        def main():
            n = 0
            while True:
                time.sleep(0.0001)
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace, timeout=0.3)
    assert result.status == "timeout" and "--timeout" in raw["header"]["message"]
    assert len(trace.steps) > 10 and trace.steps[-1].line in (6, 7)


def test_timeout_stops_untraced_code_too(tmp_path, validate_trace):
    source = """
        import time

        def wait():
            time.sleep(60)

        def main():
            started = True
            wait()  # @stepover
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace, timeout=0.2)
    assert result.status == "timeout"
    assert [step.line for step in trace.steps] == [8, 9]


@pytest.mark.parametrize("code, status", [(0, "ok"), (None, "ok"), (3, "error"), ("bye", "error")])
def test_sys_exit_in_a_lecture(tmp_path, validate_trace, code, status):
    source = f"""
        import sys

        def main():
            x = 1
            sys.exit({code!r})
            never = 2
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert result.status == status
    assert [step.line for step in trace.steps] == [5, 6]
    assert (trace.steps[-1].error is not None) == (status == "error")


def test_lecture_catching_everything_still_stops(tmp_path, validate_trace):
    source = """
        def main():
            try:
                while True:
                    pass
            except Exception:
                print("caught")
        """
    result, _, trace = trace_program(tmp_path, source, validate_trace, max_steps=20)
    assert result.status == "max_steps"
    assert all(step.stdout == "" for step in trace.steps)


def test_section_traces_one_function(tmp_path, validate_trace):
    source = """
        def part_one():
            a = 1  # @inspect a

        def part_two():
            b = 2  # @inspect b

        def main():
            part_one()
            part_two()
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace, section="part_two")
    assert result.path.name == "lecture.part_two.json"
    assert raw["header"]["title"] == "lecture.part_two" and raw["header"]["entry"] == "part_two"
    assert trace.inspected_names() == ["b"]


def test_unknown_section_is_a_lecture_error(tmp_path):
    (tmp_path / "lecture.py").write_text("def main():\n    pass\n")
    with pytest.raises(LectureError, match="no top-level function 'nope'"):
        trace_lecture(tmp_path / "lecture.py", output_dir=tmp_path, section="nope", quiet=True)


def test_a_section_that_needs_arguments_is_a_lecture_error(tmp_path):
    (tmp_path / "lecture.py").write_text("def part(n, *rest, scale=2):\n    return n\n\ndef main():\n    part(1)\n")
    with pytest.raises(LectureError, match=r"cannot trace part\(\): it needs arguments \(n\)"):
        trace_lecture(tmp_path / "lecture.py", output_dir=tmp_path, section="part", quiet=True)
    assert not (tmp_path / "lecture.part.json").exists()


def test_tracing_twice_gives_the_same_trace(tmp_path, validate_trace):
    source = """
        import random
        import numpy as np
        import torch
        from cs336_lectures import text

        class Box:
            pass

        def main():
            text("Some *math*: $x^2$")
            box = Box()  # @inspect box
            r = random.random()  # @inspect r
            a = np.random.rand(3)  # @inspect a
            t = torch.randn(2, 2)  # @inspect t
            view = t[0]  # @inspect view
            print(r)
        """
    first, _, _ = trace_program(tmp_path, source, validate_trace)
    one = json.loads(first.path.read_text())
    second, _, _ = trace_program(tmp_path, source, validate_trace)
    two = json.loads(second.path.read_text())
    for trace in (one, two):
        del trace["header"]["created"], trace["header"]["elapsed_s"]
    assert one == two
    third, _, _ = trace_program(tmp_path, source, validate_trace, seed=1)
    assert json.loads(third.path.read_text())["steps"] != two["steps"]


def test_the_header_names_the_cuda_device_when_there_is_one(monkeypatch):
    import torch

    assert environment()["device"] == ("cpu" if not torch.cuda.is_available() else torch.cuda.get_device_name(0))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: "NVIDIA H200")
    assert environment()["device"] == "NVIDIA H200"


def test_inspect_all_records_changed_locals(tmp_path, validate_trace):
    source = """
        import math

        def main():
            x = 1
            y = x + 1
            x = 1
            f = lambda: 0
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace, inspect_all=True)
    assert [step.values for step in trace.steps] == [{"x": 1}, {"y": 2}, {}, {}]


def test_inspect_all_skips_a_comprehensions_hidden_iterator(tmp_path, validate_trace):
    source = """
        def main():
            squares = [i * i for i in range(2)]
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace, inspect_all=True)
    assert trace.inspected_names() == ["squares", "i"]


def test_non_ascii_names_can_be_inspected(tmp_path, validate_trace):
    source = """
        def main():
            δ = 0.5  # @inspect δ
            名前 = "値"  # @inspect 名前
            ﬁle = 3  # @inspect ﬁle
        """
    with warnings.catch_warnings():
        warnings.simplefilter("error", DirectiveWarning)
        _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert [trace.values_of(name) for name in ("δ", "名前", "ﬁle")] == [[0.5], ["値"], [3]]


def test_trace_module_adds_its_files(tmp_path, validate_trace, monkeypatch):
    package = tmp_path / "extra_pkg_for_tracing"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "maths.py").write_text("def triple(x):\n    y = 3 * x  # @inspect y\n    return y\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    source = """
        from extra_pkg_for_tracing.maths import triple

        def main():
            z = triple(2)  # @inspect z
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace, trace_modules=("extra_pkg_for_tracing",))
    assert [file["path"].endswith(name) for file, name in zip(raw["files"], ("lecture.py", "maths.py"))] == [True, True]
    assert [(step.function, step.line) for step in trace.steps] == [("main", 5), ("triple", 2), ("triple", 3)]
    assert trace.values_of("y") == [6]


def test_trace_module_beside_the_lecture_is_found_from_any_directory(tmp_path, validate_trace, monkeypatch):
    (tmp_path / "helper_beside_lecture.py").write_text("def triple(x):\n    y = 3 * x  # @inspect y\n    return y\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    source = """
        from helper_beside_lecture import triple

        def main():
            z = triple(2)  # @inspect z
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace, trace_modules=("helper_beside_lecture",))
    assert [Path(file["path"]).name for file in raw["files"]] == ["lecture.py", "helper_beside_lecture.py"]
    assert trace.values_of("y") == [6] and str(tmp_path) not in sys.path


def test_internal_link_adds_the_target_file(tmp_path, validate_trace):
    source = """
        import json
        from cs336_lectures import link

        def main():
            link(json.dumps)
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    rendering = trace.steps[0].renderings[0]
    assert raw["files"][rendering["file"]]["path"].endswith("json/__init__.py")
    assert rendering["line"] > 1
    assert len(raw["files"][rendering["file"]]["html"]) == len(raw["files"][rendering["file"]]["source"].splitlines())


def test_missing_and_broken_lectures_are_lecture_errors(tmp_path):
    with pytest.raises(LectureError, match="no such file"):
        trace_lecture(tmp_path / "absent.py", output_dir=tmp_path, quiet=True)
    (tmp_path / "broken.py").write_text("def main(:\n    pass\n")
    with pytest.raises(LectureError, match=r"broken.py:1: syntax error"):
        trace_lecture(tmp_path / "broken.py", output_dir=tmp_path, quiet=True)
    (tmp_path / "imports.py").write_text("import no_such_module_here\n\ndef main():\n    pass\n")
    with pytest.raises(LectureError, match=r"imports.py:1: import failed: ModuleNotFoundError"):
        trace_lecture(tmp_path / "imports.py", output_dir=tmp_path, quiet=True)
    assert not list(tmp_path.glob("*.json"))


def test_the_runtime_is_never_traced(tmp_path, validate_trace):
    source = """
        from cs336_lectures import text

        def main():
            text("hello")
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace, trace_modules=("cs336_lectures",))
    assert [(step.function, step.line) for step in trace.steps] == [("main", 5)]
    assert "hello" in trace.steps[0].renderings[0]["html"]
    assert len(raw["files"]) == 1


@pytest.mark.parametrize("body, max_steps", [("pass", None), ("raise ValueError('x')", None),
                                              ("while True:\n        pass", 5)])
def test_the_process_state_is_restored_after_a_trace(tmp_path, validate_trace, body, max_steps):
    from cs336_lectures.runtime.lecture import primitives

    stdin, stdout, stderr, trace_function = sys.stdin, sys.stdout, sys.stderr, sys.gettrace()
    trace_program(tmp_path, f"def main():\n    {body}\n", validate_trace, max_steps=max_steps)
    assert (sys.stdin, sys.stdout, sys.stderr, sys.gettrace(), primitives._recorder) == (stdin, stdout, stderr,
                                                                                      trace_function, None)
    assert "lecture" not in sys.modules


def test_values_on_return_lines_and_deep_recursion(tmp_path, validate_trace):
    source = """
        def depth(n):
            if n == 0:
                return 0
            result = 1 + depth(n - 1)
            return result  # @inspect result

        def main():
            d = depth(300)  # @inspect d
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.values_of("result") == list(range(1, 301))
    assert trace.values_of("d") == [300]
    assert max(len(step.stack) for step in trace.steps) == 302


def test_exception_inside_a_generator_is_reported_at_its_line(tmp_path, validate_trace):
    source = """
        def items():
            yield 1
            raise RuntimeError("generator broke")

        def main():
            for item in items():
                total = item
        """
    result, _, trace = trace_program(tmp_path, source, validate_trace)
    assert result.status == "error"
    last = trace.steps[-1]
    assert (last.function, last.line, last.error["message"]) == ("items", 4, "generator broke")
    assert [line for _, _, line in last.stack] == [7, 4]


def test_a_lecture_named_like_a_loaded_module_is_refused(tmp_path):
    (tmp_path / "json.py").write_text("def main():\n    pass\n")
    with pytest.raises(LectureError, match="module name 'json' is already in use"):
        trace_lecture(tmp_path / "json.py", output_dir=tmp_path, quiet=True)
    assert sys.modules["json"].__name__ == "json" and hasattr(sys.modules["json"], "dumps")


def test_trace_settings_travel_as_a_dict_and_give_trace_lectures_arguments():
    import inspect

    from cs336_lectures.runtime.tracing.lecture_run import TraceSettings, trace_lecture

    settings = TraceSettings(section="intro", trace_modules=("helpers",), inspect_all=True, max_steps=10, timeout=2.5,
                             seed=3, command=("cs336-lectures", "trace", "lec.py"))
    assert TraceSettings.from_dict(settings.to_dict()) == settings
    assert settings.to_dict()["command"] == ["cs336-lectures", "trace", "lec.py"]  # JSON-ready
    arguments = settings.arguments()
    assert arguments["trace_modules"] == ("helpers",) and arguments["command"] == ("cs336-lectures", "trace", "lec.py")
    assert set(arguments) <= set(inspect.signature(trace_lecture).parameters)
