"""Fault injection against the runtime, as a hostile lecture, a hostile trace or a crash would try it.

Each test reproduces a failure of issue 10 (or an earlier one that must stay fixed). Lectures
that must be stopped from outside run through the real command in a subprocess, whose
`timeout=` only keeps a regression from hanging the suite.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_server import request, serve, wait_idle, workspace  # noqa: F401 (serve and workspace are fixtures)

from cs336_lectures.models import Cruncher
from cs336_lectures.optimizers import Adam
from cs336_lectures.atomic import remove_stale_temporaries, write_atomically, write_bytes_atomically
from cs336_lectures.runtime.trace.format import Trace, TraceFormatError, load_trace
from cs336_lectures.runtime.tracing.lecture_run import trace_lecture
from cs336_lectures.training import load_checkpoint, save_checkpoint

ROOT = Path(__file__).resolve().parents[3]
HANG_GUARD_S = 60  # a run the fix must end in seconds; a regression fails here instead of hanging


def lecture(folder: Path, source: str, name: str = "lecture.py") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source))
    return path


def trace_command(path: Path, *flags: str, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(path), "-o",
                           str(path.parent / "out"), *flags], cwd=ROOT, capture_output=True, text=True,
                          timeout=HANG_GUARD_S, **popen)


def interrupt_once_running(path: Path, *flags: str, spinning: bool = False) -> tuple[int, str]:
    """Trace `path` as a terminal's job would run it, press Ctrl-C once the lecture has created
    the file `running` beside itself (and, with `spinning`, has then used a second of CPU time:
    it is inside the C call that follows), and return the exit status and stderr."""
    process = subprocess.Popen([sys.executable, "-m", "cs336_lectures", "trace", str(path), "-o",
                                str(path.parent / "out"), "--quiet", *flags], cwd=ROOT, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)  # its own process group, as a job has
    try:
        began = time.monotonic()
        while not (path.parent / "running").exists() and time.monotonic() - began < HANG_GUARD_S:
            time.sleep(0.05)
        if spinning:
            while not (path.parent / "running").read_text():  # created, its pid not yet written
                time.sleep(0.05)
            lecture_pid = int((path.parent / "running").read_text())
            cpu_then = _cpu_seconds(lecture_pid)
            while _cpu_seconds(lecture_pid) < cpu_then + 1 and time.monotonic() - began < HANG_GUARD_S:
                time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C does: the whole group gets it
        _, stderr = process.communicate(timeout=HANG_GUARD_S)
    finally:
        process.kill()
    return process.returncode, stderr


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time used so far by the process `pid` (proc(5): stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


# --- limits end the run, whatever the lecture does (items 1 and 2) -------------------------------


def test_timeout_ends_a_lecture_stuck_in_c_code_and_keeps_the_partial_trace(tmp_path, validate_trace):
    mark = f"before-{uuid.uuid4().hex}"  # unique to this run: it finds its own snapshot among others
    # The lecture builds the mark, so that its source (also in the snapshot) does not hold it.
    path = lecture(tmp_path, f"""\
        import glob
        import itertools
        import os
        import tempfile
        import time

        def main():
            before = "-".join({mark.split("-", 1)!r})  # @inspect before
            wait_for_a_snapshot_holding(before)
            total = sum(itertools.count())  # C code that never returns to Python

        def wait_for_a_snapshot_holding(mark):
            # The tracer's snapshot thread writes while Python runs: wait for the event, not a fixed time.
            pattern = os.path.join(tempfile.gettempdir(), "cs336-trace-*", "snapshot.json")
            while True:
                for snapshot in glob.glob(pattern):
                    try:
                        if mark in open(snapshot).read():
                            return
                    except FileNotFoundError:
                        pass
                time.sleep(0.01)
        """)
    done = trace_command(path, "--timeout", "3")
    assert done.returncode == 1
    line = summary_line(done.stderr)
    assert ": timeout, " in line and f"stuck at {path}:10 in main" in line
    trace = validate_trace(tmp_path / "out" / "lecture.json")
    assert trace["header"]["status"] == "timeout" and "--timeout" in trace["header"]["message"]
    steps = load_trace(tmp_path / "out" / "lecture.json").steps
    assert [step.line for step in steps[:2]] == [8, 9] and steps[0].values == {"before": mark}


def test_a_lecture_stuck_in_c_code_before_any_snapshot_still_ends_with_a_trace(tmp_path, validate_trace):
    path = lecture(tmp_path, """\
        import itertools

        def main():
            total = sum(itertools.count())
        """)
    done = trace_command(path, "--timeout", "1", "--quiet")
    assert done.returncode == 1 and f"stuck at {path}:4 in main" in summary_line(done.stderr)
    assert validate_trace(tmp_path / "out" / "lecture.json")["header"]["status"] == "timeout"


CATCH_EVERYTHING = """\
    def main():
        caught = 0
        while True:
            try:
                while True:
                    caught += 0
            except BaseException:
                caught += 1
                print("went on after the stop")
    """


@pytest.mark.parametrize("flags, status", [(("--max-steps", "500"), "max_steps"), (("--timeout", "1", "--max-steps", "1000000000"), "timeout")])
def test_a_limit_ends_a_lecture_that_catches_base_exception(tmp_path, flags, status):
    path = lecture(tmp_path, CATCH_EVERYTHING)
    done = trace_command(path, *flags, "--quiet")
    assert done.returncode == 1, done.stderr
    line = summary_line(done.stderr)
    assert f": {status}, " in line and "caught the stop and went on, so it was ended" in line, done.stderr
    # Not schema-validated here: a second of a tight loop is a million steps (other tests validate).
    trace = json.loads((tmp_path / "out" / "lecture.json").read_text())
    assert trace["header"]["status"] == status
    if status == "max_steps":
        assert trace["header"]["num_steps"] == 500
    # Nothing the lecture did after the stop is in the trace.
    went_on = [(index, step) for index, step in enumerate(trace["steps"]) if len(step) > 2 and "went on" in step[2].get("o", "")]
    assert went_on == [], (went_on[:3], len(trace["steps"]), trace["header"])


def test_a_run_the_step_check_stopped_gets_no_interrupt_from_the_watchdog(tmp_path):
    # The step check stops the traced loop at the limit; the lecture catches the stop and sleeps
    # through the watchdog's time (the limit + 0.5 s). Its enforcer, not an interrupt landing
    # somewhere in what the lecture does next, ends it.
    path = lecture(tmp_path, """\
        import time
        from pathlib import Path

        def main():
            try:
                while True:
                    pass
            except BaseException:
                pass
            try:
                time.sleep(0.8)
            except KeyboardInterrupt:
                Path(__file__).with_name("interrupted").touch()
            while True:
                time.sleep(1)
        """)
    done = trace_command(path, "--timeout", "1", "--quiet")
    assert done.returncode == 1, done.stderr
    assert "caught the stop and went on, so it was ended" in summary_line(done.stderr)
    assert not (tmp_path / "interrupted").exists()


def test_a_lecture_swallowing_the_watchdogs_interrupt_in_untraced_code_is_ended_and_adds_nothing_after(tmp_path, validate_trace):
    # The watchdog, not the step check, stops this lecture (it waits in untraced code): the
    # stop must hold from the interrupt on, for output and for steps alike.
    path = lecture(tmp_path, """\
        import time

        def main():
            while True:
                try:
                    time.sleep(100)
                except BaseException:
                    print("went on after the stop")
                    after = 1
        """)
    done = trace_command(path, "--timeout", "1", "--quiet")
    assert done.returncode == 1 and ": timeout, " in summary_line(done.stderr)
    trace = validate_trace(tmp_path / "out" / "lecture.json")
    assert trace["header"]["status"] == "timeout"
    assert all("went on" not in step[2].get("o", "") for step in trace["steps"] if len(step) > 2)
    assert 9 not in [step[1] for step in trace["steps"]]


# --- the command exits once the trace is written (item 3) ---------------------------------------


def test_the_command_exits_though_the_lecture_left_a_thread_running(tmp_path, validate_trace):
    path = lecture(tmp_path, """\
        import threading
        import time

        def main():
            forever = threading.Thread(target=time.sleep, args=(3600,))
            forever.start()
            started = forever.is_alive()  # @inspect started
        """)
    done = trace_command(path)
    assert done.returncode == 0
    line = summary_line(done.stderr)
    assert ": ok, 3 steps" in line and "the lecture left a thread running, stopped once the trace was written" in line
    assert load_trace(tmp_path / "out" / "lecture.json").values_of("started") == [True]


# --- reading a value never changes the run (item 4) ----------------------------------------------


HOSTILE_VALUES = """\
    class ExitsOnRepr:
        def __repr__(self):
            raise SystemExit(3)

        @property
        def interrupting(self):
            raise KeyboardInterrupt

    def main():
        value = ExitsOnRepr()  # @inspect value value.interrupting
        finished = True  # @inspect finished
    """


def test_a_repr_raising_system_exit_or_a_getter_raising_keyboard_interrupt_is_recorded_not_obeyed(
        tmp_path, validate_trace):
    path = lecture(tmp_path, HOSTILE_VALUES)
    result = trace_lecture(path, output_dir=tmp_path / "out", quiet=True)
    assert result.status == "ok" and not result.interrupted
    raw = validate_trace(result.path)
    first, second = raw["steps"][0][2]["v"], raw["steps"][1][2]["v"]
    assert first == {"value": {"t": "object", "cls": "ExitsOnRepr", "repr": None, "error": "SystemExit: 3"}}
    assert second == {"finished": True}


def test_the_command_line_also_finishes_a_lecture_with_hostile_values(tmp_path):
    path = lecture(tmp_path, HOSTILE_VALUES)
    done = trace_command(path, "--quiet")
    assert done.returncode == 0 and done.stderr == ""
    assert load_trace(tmp_path / "out" / "lecture.json").values_of("finished") == [True]


def test_a_real_ctrl_c_still_stops_a_run_that_reads_values(tmp_path, validate_trace):
    path = lecture(tmp_path, """\
        import pathlib
        import time

        class Slow:
            @property
            def reading(self):
                time.sleep(0.05)  # most of the run is spent reading this value
                return 1

        def main():
            slow = Slow()
            pathlib.Path(__file__).with_name("running").touch()
            while True:
                count = 0  # @inspect slow.reading
        """)
    returncode, stderr = interrupt_once_running(path)
    assert returncode == 130
    assert "KeyboardInterrupt" in summary_line(stderr)
    trace = validate_trace(tmp_path / "out" / "lecture.json")
    assert trace["header"]["status"] == "error" and trace["steps"][-1][2]["x"]["type"] == "KeyboardInterrupt"


def test_ctrl_c_ends_a_lecture_stuck_in_c_code(tmp_path, validate_trace):
    path = lecture(tmp_path, """\
        import itertools
        import os
        import pathlib

        def main():
            pathlib.Path(__file__).with_name("running").write_text(str(os.getpid()))
            total = sum(itertools.count())
        """)
    returncode, stderr = interrupt_once_running(path, "--timeout", "600", spinning=True)
    assert returncode == 130
    assert "did not stop within 3 s of Ctrl-C, so it was killed" in summary_line(stderr)
    assert validate_trace(tmp_path / "out" / "lecture.json")["header"]["status"] == "error"


# --- checkpoints: all or nothing (item 15) -------------------------------------------------------


def _checkpoint_parts():
    torch.manual_seed(0)
    model = Cruncher(dim=2, num_layers=1)
    return model, Adam(model.parameters(), lr=0.1)


def _saved_checkpoint() -> bytes:
    model, optimizer = _checkpoint_parts()
    loss = model(torch.ones(3, 2)).sum()
    loss.backward()
    optimizer.step()  # some optimizer state worth restoring
    buffer = io.BytesIO()
    save_checkpoint(model, optimizer, 7, buffer)
    return buffer.getvalue()


def test_a_checkpoint_cut_short_anywhere_is_a_clear_value_error():
    data = _saved_checkpoint()
    model, optimizer = _checkpoint_parts()
    refused = 0
    for length in range(len(data)):  # every truncation point (a few milliseconds each)
        with pytest.raises(ValueError, match="is not a checkpoint written by save_checkpoint"):
            load_checkpoint(io.BytesIO(data[:length]), model, optimizer)
        refused += 1
    assert refused == len(data) and load_checkpoint(io.BytesIO(data), model, optimizer) == 7


def _break_optimizer(checkpoint: dict) -> None:
    checkpoint["optimizer"]["param_groups"][0]["params"].pop()


def _break_optimizer_state(checkpoint: dict) -> None:
    state = next(iter(checkpoint["optimizer"]["state"].values()))
    state["m"] = state["m"].reshape(-1)[:1]


def _drop_rng(checkpoint: dict) -> None:
    del checkpoint["rng"]["numpy"]


def _break_python_rng(checkpoint: dict) -> None:
    checkpoint["rng"]["python"] = (3, (1, 2), None)


@pytest.mark.parametrize("damage, reason", [
    (_break_optimizer, "parameter groups differ"),
    (_break_optimizer_state, "'m' for parameter 0 has another shape"),
    (_drop_rng, "missing 'numpy'"),
    (_break_python_rng, "state vector"),
])
def test_a_checkpoint_that_does_not_fit_changes_nothing(tmp_path, damage, reason):
    checkpoint = torch.load(io.BytesIO(_saved_checkpoint()), weights_only=True)
    damage(checkpoint)
    torch.save(checkpoint, tmp_path / "damaged.pt")
    model, optimizer = _checkpoint_parts()
    weights = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    generators = (torch.get_rng_state(), np.random.get_state()[1].copy(), random.getstate())
    with pytest.raises(ValueError, match=reason):
        load_checkpoint(tmp_path / "damaged.pt", model, optimizer)
    assert all(torch.equal(weights[name], tensor) for name, tensor in model.state_dict().items())
    assert optimizer.state_dict()["state"] == {}
    assert torch.equal(generators[0], torch.get_rng_state())
    assert (generators[1] == np.random.get_state()[1]).all() and generators[2] == random.getstate()


# --- a writer killed mid-write (item 5) ----------------------------------------------------------


KILLED_WRITER = """\
import sys
import time

import torch

from cs336_lectures.models import Cruncher
from cs336_lectures.optimizers import Adam
from cs336_lectures.atomic import write_atomically
from cs336_lectures.training import save_checkpoint


def write_slowly(file):
    file.write(b"half of the new content")
    file.flush()
    print("writing", flush=True)
    time.sleep(HANG_GUARD_S)


kind, target = sys.argv[1], sys.argv[2]
if kind == "checkpoint":
    torch.save = lambda checkpoint, file: write_slowly(file)
    model = Cruncher(dim=2, num_layers=1)
    save_checkpoint(model, Adam(model.parameters()), 1, target)
else:
    write_atomically(target, write_slowly)
"""


def _kill_while_writing(target: Path, kind: str) -> None:
    script = KILLED_WRITER.replace("HANG_GUARD_S", str(HANG_GUARD_S))
    writer = subprocess.Popen([sys.executable, "-c", script, kind, str(target)], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert writer.stdout.readline() == "writing\n"
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=HANG_GUARD_S)
    finally:
        writer.kill()


def _temporaries(target: Path) -> list[Path]:
    return sorted(target.parent.glob(f".{target.name}.*.tmp"))


def test_sigkill_while_writing_keeps_the_previous_trace_and_the_next_write_removes_the_leftover(tmp_path):
    target = tmp_path / "lecture.json"
    target.write_bytes(b"the previous trace")
    _kill_while_writing(target, "file")
    assert target.read_bytes() == b"the previous trace"
    [leftover] = _temporaries(target)
    assert leftover.read_bytes() == b"half of the new content"
    write_bytes_atomically(target, b"the next trace")
    assert target.read_bytes() == b"the next trace" and _temporaries(target) == []


def test_sigkill_while_saving_a_checkpoint_keeps_the_previous_one_and_the_next_save_cleans_up(tmp_path):
    target = tmp_path / "run.pt"
    model, optimizer = _checkpoint_parts()
    save_checkpoint(model, optimizer, 4, target)
    _kill_while_writing(target, "checkpoint")
    assert len(_temporaries(target)) == 1
    assert load_checkpoint(target, model, optimizer) == 4
    save_checkpoint(model, optimizer, 5, target)
    assert _temporaries(target) == [] and load_checkpoint(target, model, optimizer) == 5


def test_a_temporary_file_of_a_writer_still_at_work_is_left_alone(tmp_path):
    target = tmp_path / "lecture.json"
    started, release = threading.Event(), threading.Event()

    def write_slowly(file):
        file.write(b"slow")
        started.set()
        release.wait(HANG_GUARD_S)

    slow = threading.Thread(target=write_atomically, args=(target, write_slowly))
    slow.start()
    try:
        assert started.wait(HANG_GUARD_S)
        [working] = _temporaries(target)
        assert remove_stale_temporaries(target) == []
        write_bytes_atomically(target, b"fast")  # another writer of the same target meanwhile
        assert _temporaries(target) == [working] and target.read_bytes() == b"fast"
    finally:
        release.set()
        slow.join(HANG_GUARD_S)
    assert target.read_bytes() == b"slow" and _temporaries(target) == []


# --- generators resumed under @stepover keep their state (item 16) -------------------------------


def test_a_generator_resumed_traced_then_stepped_over_then_traced_records_each_value(tmp_path, validate_trace):
    path = lecture(tmp_path, """\
        def count():
            n = 0
            while True:
                yield n  # @inspect n
                n += 1

        def main():
            s = count()
            first = next(s)  # @inspect first
            next(s)  # @stepover
            third = next(s)  # @inspect third
            next(s)  # @stepover
            next(s)  # @stepover
            sixth = next(s)  # @inspect sixth
        """)
    result = trace_lecture(path, output_dir=tmp_path / "out", quiet=True)
    validate_trace(result.path)
    steps = [(step.function, step.line, step.values) for step in load_trace(result.path).steps]
    assert steps == [
        ("main", 8, {}),
        ("main", 9, {"first": 0}),
        ("count", 2, {}), ("count", 3, {}), ("count", 4, {"n": 0}),  # the first next(), traced
        ("main", 10, {}),  # the second, stepped over: no steps in count
        ("main", 11, {"third": 2}),
        ("count", 5, {}), ("count", 3, {}), ("count", 4, {"n": 2}),  # resumed where the untraced run left it
        ("main", 12, {}), ("main", 13, {}),
        ("main", 14, {"sixth": 5}),
        ("count", 5, {}), ("count", 3, {}), ("count", 4, {"n": 5}),
    ]


# --- malformed traces: TraceFormatError, quickly (item 8) ----------------------------------------


def _valid_trace(tmp_path: Path) -> dict:
    path = lecture(tmp_path, """\
        def helper(n):
            return [n, n * 0.5, {"k": (n, b"b")}]  # @inspect n

        def main():
            print("out")
            values = [helper(n) for n in range(2)]  # @inspect values
            text = {"a", "b"}  # @inspect text
            raise ValueError("at the end")
        """, name="valid.py")
    return json.loads(trace_lecture(path, output_dir=tmp_path / "valid", quiet=True).path.read_text())


def _load(tmp_path: Path, trace: Any) -> Trace:
    path = tmp_path / "mutated.json"
    path.write_text(json.dumps(trace) if not isinstance(trace, str) else trace)
    return load_trace(path)


def test_calls_that_form_a_cycle_are_refused_at_once(tmp_path):
    trace = _valid_trace(tmp_path)
    trace["calls"] = [[0, 1], [0, 0]]
    trace["steps"] = [[1, 5], [0, 6]]  # step 0's call starts at step 0; step 1's at step 1
    with pytest.raises(TraceFormatError, match=r"steps\[0\] belongs to call 1, whose parent step 0 does not come before it"):
        _load(tmp_path, trace)


@pytest.mark.parametrize("damage, expected", [
    (lambda trace: trace.update(header=[]), "the header is not an object"),
    (lambda trace: trace.update(functions={}), "functions is not a list"),
    (lambda trace: trace["files"][0].pop("path"), r"files\[0\] has no path"),
    (lambda trace: trace["functions"][0].__setitem__(0, 99), r"functions\[0\] is not \[file, name, line\]"),
    (lambda trace: trace["calls"][0].__setitem__(1, 10**9), r"calls\[0\] is not"),
    (lambda trace: trace["steps"][0].__setitem__(0, True), r"steps\[0\] is not"),
    (lambda trace: trace["steps"][0].append({"v": []}), r"steps\[0\]\.v is not a dict"),
    (lambda trace: trace["steps"][0].append({"v": {"x": {"t": "bytes", "v": "(" * 200}}}), "cannot be decoded"),
    (lambda trace: trace["steps"][0].append({"v": {"x": {"t": "list"}}}), "cannot be decoded"),
    (lambda trace: trace["steps"][0].append({"v": {"x": {"t": "int", "v": "9" * 5000}}}), "cannot be decoded"),
])
def test_malformed_traces_say_what_is_wrong(tmp_path, damage, expected):
    trace = _valid_trace(tmp_path)
    trace["steps"][0] = trace["steps"][0][:2]
    damage(trace)
    with pytest.raises(TraceFormatError, match=expected):
        _load(tmp_path, trace)


def test_json_nested_too_deeply_is_a_trace_format_error(tmp_path):
    with pytest.raises(TraceFormatError, match="nested too deeply"):
        _load(tmp_path, "[" * 100_000 + "]" * 100_000)


JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=False),
                        st.text(max_size=5))
JSON_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["t", "v", "items", "x", "path"]), inner, max_size=3)),
    max_leaves=8)


def _containers(node: Any, path: tuple = ()) -> list[tuple]:
    """The paths of every list and dict in a JSON document, the root included."""
    found = [path] if isinstance(node, (list, dict)) else []
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        found += _containers(child, (*path, key))
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_traces_load_or_raise_trace_format_error(tmp_path, data):
    trace = copy.deepcopy(_FUZZ_BASE.setdefault("trace", _valid_trace(tmp_path)))
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(_containers(trace)))
        node = trace
        for key in where:
            node = node[key]
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            continue
        key = data.draw(st.sampled_from(keys))
        action = data.draw(st.sampled_from(["replace", "delete", "small int"]))
        if action == "delete":
            del node[key]
        elif action == "small int":  # indices that point elsewhere, or nowhere
            node[key] = data.draw(st.integers(-2, 12))
        else:
            node[key] = data.draw(JSON_VALUES)
    try:
        loaded = _load(tmp_path, trace)
    except TraceFormatError as error:  # anything else (KeyError, RecursionError, a hang) fails the test
        assert str(error).startswith(str(tmp_path / "mutated.json"))
        return
    assert len(loaded.steps) == len(trace["steps"])
    assert all(step.stack[-1] == (step.file, step.function, step.line) for step in loaded.steps)


_FUZZ_BASE: dict[str, dict] = {}  # one traced lecture for every example


# --- a lecture saved from the browser keeps its mode (item 18) -----------------------------------


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755])
def test_a_lecture_saved_from_the_browser_keeps_its_mode(serve, workspace, mode):
    lecture = workspace / "lectures" / "lecture_t.py"
    lecture.chmod(mode)
    server = serve("lectures/lecture_t.py")
    edited = lecture.read_text() + "more = 1\n"
    status, _, _ = request(server, "POST", "/api/source?trace=lecture_t", {"source": edited}, token=server.token)
    assert status == 202 and lecture.read_text() == edited
    assert stat.S_IMODE(lecture.stat().st_mode) == mode
    wait_idle(server, "lecture_t")


# --- hostile values that already were harmless, kept so ------------------------------------------


def test_hostile_values_are_recorded_and_the_lecture_runs_on(tmp_path, validate_trace):
    path = lecture(tmp_path, """\
        import itertools

        class Endless(list):
            def __iter__(self):
                return itertools.count()

        class Bottomless:
            def __getattr__(self, name):
                return self

        class BrokenItems(dict):
            def items(self):
                raise RuntimeError("no items")

        class LyingLength(list):
            def __len__(self):
                return -1

        def main():
            endless = Endless([1])  # @inspect endless
            deep = Bottomless()  # @inspect deep.a.b.c
            broken = BrokenItems(a=1)  # @inspect broken
            lying = LyingLength([1, 2])  # @inspect lying
            huge = 10 ** 100_000  # @inspect huge
            loop = [1]
            loop.append(loop)  # @inspect loop
            finished = True  # @inspect finished
        """)
    result = trace_lecture(path, output_dir=tmp_path / "out", quiet=True)
    assert result.status == "ok"
    raw = validate_trace(result.path)
    values = {name: value for step in raw["steps"] if len(step) > 2 for name, value in step[2].get("v", {}).items()}
    assert values["endless"]["t"] == "list" and values["endless"]["items"] == list(range(100))
    assert values["deep.a.b.c"]["cls"] == "Bottomless"
    assert values["broken"]["error"] == "RuntimeError: no items"
    assert values["lying"]["error"].startswith("ValueError")
    assert values["huge"]["repr"] == "<int of 332193 bits, about 100001 decimal digits>"
    assert values["loop"]["items"][1]["t"] == "truncated"
    assert values["finished"] is True
