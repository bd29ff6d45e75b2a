"""Tracer semantics on small programs: the right steps, lines, stacks and values, in order.

Each program is traced into tmp_path and also run under a naive reference tracer that
rebuilds the stack from frame.f_back on every line; the two must agree step for step.
"""

from __future__ import annotations

import contextlib
import io
import runpy
import sys
import textwrap
from pathlib import Path

import pytest

from cs336_lectures.runtime.trace.format import load_trace
from cs336_lectures.runtime.tracing.lecture_run import trace_lecture


def trace_program(tmp_path: Path, source: str, validate_trace, name: str = "lecture", **options):
    """Write `source` to tmp_path/<name>.py, trace it; return (result, raw trace dict, Trace)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    options.setdefault("quiet", True)
    result = trace_lecture(path, output_dir=tmp_path / "traces", **options)
    raw = validate_trace(result.path)
    return result, raw, load_trace(result.path)


def reference_steps(path: Path, entry: str = "main") -> list[list[tuple[str, int]]]:
    """Each line event in `path` as its stack [(function, line), ...], outermost first."""
    filename = str(path.resolve())
    namespace = runpy.run_path(filename, run_name="reference")
    stacks = []

    def local(frame, event, arg):
        if event == "line":
            stack = []
            while frame is not None:
                if frame.f_code.co_filename == filename:
                    stack.append((frame.f_code.co_qualname, frame.f_lineno))
                frame = frame.f_back
            stacks.append(stack[::-1])
        return local

    def on_call(frame, event, arg):
        return local if frame.f_code.co_filename == filename else None

    with contextlib.redirect_stdout(io.StringIO()):
        sys.settrace(on_call)
        try:
            namespace[entry]()
        except Exception:
            pass
        finally:
            sys.settrace(None)
    return stacks


def stacks_of(trace) -> list[list[tuple[str, int]]]:
    return [[(function, line) for _, function, line in step.stack] for step in trace.steps]


PROGRAMS = {
    "loops": """
        def main():
            total = 0
            for i in range(3):
                total += i
            while total > 0:
                total -= 2
            print(total)
        """,
    "recursion": """
        def fact(n):
            if n <= 1:
                return 1
            return n * fact(n - 1)

        def main():
            print(fact(4))
        """,
    "exceptions_caught": """
        def risky(x):
            if x > 1:
                raise ValueError(x)
            return x

        def main():
            results = []
            for x in range(3):
                try:
                    results.append(risky(x))
                except ValueError as error:
                    results.append(-1)
                finally:
                    results.append(0)
            print(results)
        """,
    "generators": """
        def countdown(n):
            while n > 0:
                yield n
                n -= 1

        def main():
            seen = []
            for value in countdown(3):
                seen.append(value)
            print(seen, sum(x * x for x in range(3)))
        """,
    "comprehensions_and_lambdas": """
        def main():
            square = lambda v: v * v
            squares = [square(v) for v in range(3)]
            table = {k: v for k, v in zip("ab", squares)}
            print(squares, table, sorted([3, 1, 2], key=lambda v: -v))
        """,
    "methods_and_nested": """
        class Counter:
            def __init__(self):
                self.count = 0

            def bump(self, by=1):
                self.count += by
                return self

        def main():
            def helper(counter):
                def twice():
                    counter.bump().bump(2)
                twice()
                return counter.count
            print(helper(Counter()))
        """,
    "with_and_decorators": """
        import functools
        from contextlib import contextmanager

        @contextmanager
        def tagged(log):
            log.append("enter")
            yield len(log)
            log.append("exit")

        def logged(function):
            @functools.wraps(function)
            def wrapper(*args):
                result = function(*args)
                return result + 1
            return wrapper

        @logged
        def add(a, b):
            return a + b

        def main():
            log = []
            with tagged(log) as depth:
                log.append(add(depth, 2))
            print(log)
        """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_steps_and_stacks_match_a_reference_tracer(tmp_path, validate_trace, name):
    result, raw, trace = trace_program(tmp_path, PROGRAMS[name], validate_trace)
    assert result.status == "ok"
    assert stacks_of(trace) == reference_steps(tmp_path / "lecture.py")
    assert raw["header"]["num_steps"] == len(raw["steps"]) == len(trace.steps)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_output_is_unchanged_by_tracing(tmp_path, validate_trace, name, capsys):
    _, _, trace = trace_program(tmp_path, PROGRAMS[name], validate_trace)
    assert capsys.readouterr().out == ""  # the traced run's output went into the trace only
    namespace = runpy.run_path(str(tmp_path / "lecture.py"), run_name="untraced")
    namespace["main"]()
    assert "".join(step.stdout for step in trace.steps) == capsys.readouterr().out


def test_loop_steps_in_execution_order(tmp_path, validate_trace):
    _, _, trace = trace_program(tmp_path, PROGRAMS["loops"], validate_trace)
    lines = [step.line for step in trace.steps]
    assert lines == [3, 4, 5, 4, 5, 4, 5, 4, 6, 7, 6, 7, 6, 8]
    assert trace.steps[-1].stdout == "-1\n"


def test_recursion_stack_and_calls(tmp_path, validate_trace):
    _, raw, trace = trace_program(tmp_path, PROGRAMS["recursion"], validate_trace)
    deepest = max(trace.steps, key=lambda step: len(step.stack))
    assert [(function, line) for _, function, line in deepest.stack] == [
        ("main", 8), ("fact", 5), ("fact", 5), ("fact", 5), ("fact", 3)]
    # One call record per activation: main plus fact(4), fact(3), fact(2), fact(1).
    assert [raw["functions"][function][1] for function, *_ in raw["calls"]] == ["main"] + ["fact"] * 4
    # Each call's parent step is the caller's line that made it.
    for function, parent_step, *_ in raw["calls"][1:]:
        assert raw["steps"][parent_step][1] in (5, 8)


def test_resumed_generator_continues_its_previous_activation(tmp_path, validate_trace):
    source = """
        def numbers():
            total = 0  # @inspect total
            for n in (1, 2):
                total += n  # @inspect total
                yield n

        def main():
            values = list(numbers())  # @inspect values
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    generator = [index for index, (function, *_) in enumerate(raw["calls"]) if raw["functions"][function][1] == "numbers"]
    assert len(generator) == 3  # first run, resumed after each of the two yields
    assert len(raw["calls"][generator[0]]) == 2
    assert raw["calls"][generator[1]][2] == generator[0]
    assert raw["calls"][generator[2]][2] == generator[1]
    assert trace.values_of("total") == [0, 1, 3]
    assert trace.values_of("values") == [[1, 2]]


def test_inspected_values_are_taken_after_the_line_ran(tmp_path, validate_trace):
    source = """
        from dataclasses import dataclass

        @dataclass
        class Point:
            x: int
            y: float

        def main():
            x = 1  # @inspect x
            x = x + 1  # @inspect x
            x = 2  # @inspect x
            p = Point(3, 0.5)  # @inspect p p.x
            p.x = 4  # @inspect p.x
            name = "a" * 3  # @inspect name missing_name
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    by_line = {step.line: step.values for step in trace.steps}
    assert by_line[10] == {"x": 1}
    assert by_line[11] == {"x": 2}
    assert by_line[12] == {}  # unchanged: not written again
    assert by_line[13]["p.x"] == 3
    assert by_line[14] == {"p.x": 4}
    assert by_line[15] == {"name": "aaa"}  # names that do not exist are skipped
    assert trace.inspected_names() == ["x", "p", "p.x", "name"]
    assert trace.values_of("x") == [1, 2]


def test_values_are_tracked_per_call(tmp_path, validate_trace):
    source = """
        def square(v):
            result = v * v  # @inspect result
            return result

        def main():
            square(2)
            square(2)
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.values_of("result") == [4, 4]  # a new call starts with no recorded values


def test_tensor_values(tmp_path, validate_trace):
    source = """
        import torch

        def main():
            x = torch.arange(6.0).reshape(2, 3)  # @inspect x
            y = x.t()  # @inspect y
            x.mul_(2)  # @inspect x
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    encoded = [step[2]["v"] for step in raw["steps"] if len(step) > 2 and "v" in step[2]]
    x, y, doubled = encoded[0]["x"], encoded[1]["y"], encoded[2]["x"]
    assert x["shape"] == [2, 3] and y["shape"] == [3, 2] and y["stride"] == [1, 3]
    assert x["storage"] == y["storage"]
    assert doubled["data"] == [[0, 2, 4], [6, 8, 10]]


def test_renderings_and_output_go_to_the_current_line(tmp_path, validate_trace):
    source = """
        import sys
        from cs336_lectures import text

        def explain():
            text("inside")

        def main():
            text("# Title")
            explain()
            print("out")
            print("err", file=sys.stderr)
        """
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    by_line = {step.line: step for step in trace.steps}
    assert by_line[9].renderings[0]["headings"] == [[1, "Title", "title"]]
    assert "inside" in by_line[6].renderings[0]["html"]
    assert by_line[10].renderings == []
    assert by_line[11].stdout == "out\n"
    assert by_line[12].stderr == "err\n"


def test_untraced_callbacks_into_the_lecture_are_traced_with_the_right_parent(tmp_path, validate_trace):
    source = """
        def key(v):
            return -v

        def main():
            ordered = sorted([1, 3, 2], key=key)  # @inspect ordered
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    inner = [step for step in trace.steps if step.function == "key"]
    assert len(inner) == 3
    assert all([(f, line) for _, f, line in step.stack] == [("main", 6), ("key", 3)] for step in inner)
    assert trace.values_of("ordered") == [[3, 2, 1]]


def test_a_call_is_traced_by_the_module_whose_globals_it_runs_with(tmp_path, validate_trace):
    # The tracer answers library calls from their frame's globals (reading their code would wake
    # the warm kernel's audit hook): once json's own code ran, lecture code re-made with json's
    # globals runs untraced; with globals of no module (a fresh dict) it is still traced.
    source = """
        import json
        import types

        def double(x):
            return x * 2

        def main():
            text = json.dumps([1])
            copy = types.FunctionType(double.__code__, json.__dict__)
            made = copy(3)  # @inspect made
            fresh = types.FunctionType(double.__code__, {"__builtins__": __builtins__})
            again = fresh(4)  # @inspect again
            mine = double(5)  # @inspect mine
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert [(step.function, step.line) for step in trace.steps] == [
        ("main", 9), ("main", 10), ("main", 11), ("main", 12), ("main", 13), ("double", 6), ("main", 14), ("double", 6)]
    assert (trace.values_of("made"), trace.values_of("again"), trace.values_of("mine")) == ([6], [8], [10])


def test_a_lecture_that_rebinds_its_own_file_name_is_still_traced(tmp_path, validate_trace):
    # Its globals' __file__ now names a library module: its frames are traced all the same.
    source = """
        import json

        __file__ = json.__file__

        def double(x):
            return x * 2

        def main():
            mine = double(5)  # @inspect mine
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert [(step.function, step.line) for step in trace.steps] == [("main", 10), ("double", 7)]
    assert trace.values_of("mine") == [10]


def test_top_level_is_traced_when_there_is_no_main(tmp_path, validate_trace):
    source = """
        x = 2  # @inspect x
        y = x * 21  # @inspect y
        print(y)
        """
    result, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert raw["header"]["entry"] == "<module>"
    assert [step.line for step in trace.steps] == [2, 3, 4]
    assert trace.values_of("y") == [42]
    assert trace.steps[-1].stdout == "42\n"


def test_a_lecture_without_main_runs_as_python_would_run_it(tmp_path, validate_trace):
    source = """
        import sys
        from dataclasses import dataclass

        @dataclass
        class Point:
            x: int

        def intro():
            p = Point(1)  # @inspect p
            print(__name__, sys.modules[__name__].__file__ == __file__)

        if __name__ == "__main__":
            intro()
        """
    main_module = sys.modules["__main__"]
    _, _, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.values_of("p") == [{"x": 1}]
    assert trace.steps[-1].stdout == "__main__ True\n"
    assert sys.modules["__main__"] is main_module


def test_main_runs_after_an_untraced_top_level(tmp_path, validate_trace):
    source = """
        import math
        CONSTANT = math.sqrt(16)
        print("import time")

        def main():
            value = CONSTANT  # @inspect value
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert raw["header"]["entry"] == "main"
    assert [step.line for step in trace.steps] == [7]
    assert trace.values_of("value") == [4.0]


def test_lecture_helpers_beside_the_lecture_can_be_imported(tmp_path, validate_trace):
    (tmp_path / "helpers_for_lecture.py").write_text("def double(x):\n    return 2 * x\n")
    source = """
        from helpers_for_lecture import double

        def main():
            y = double(4)  # @inspect y
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.values_of("y") == [8]
    assert len(raw["files"]) == 1  # the helper module is not traced unless asked for
    assert str(tmp_path) not in sys.path


def test_async_main_is_run(tmp_path, validate_trace):
    source = """
        import asyncio

        async def one():
            await asyncio.sleep(0)
            return 1

        async def main():
            x = await one()  # @inspect x
        """
    _, raw, trace = trace_program(tmp_path, source, validate_trace)
    assert trace.values_of("x") == [1]
    resumed = [call for call in raw["calls"] if len(call) == 3]
    assert resumed  # the coroutines were suspended and resumed
