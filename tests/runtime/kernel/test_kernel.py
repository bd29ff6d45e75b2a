"""The warm kernel (kernel.py, kernel_client.py): incremental runs equal fresh traces, every unsafe
edit falls back to a whole run and says why, and no process of a run outlives it."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cs336_lectures.runtime.kernel import client as kernel_client
from cs336_lectures.runtime.kernel.client import KernelProcess, KernelUnavailable, OutputTail
from cs336_lectures.runtime.processes import fork_safe_openmp, kernel_can_fork, process_stats
from cs336_lectures.runtime.i18n.run_messages import note
from cs336_lectures.runtime.trace.compare import comparable, first_difference
from kernel_support import LIMITS, fresh_trace

pytestmark = pytest.mark.skipif(not kernel_can_fork(), reason="the kernel needs fork() and /proc (Linux)")



@pytest.fixture
def lecture_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def kernel(lecture_dir):
    """A kernel for lecture_dir/lec.py (write the file before the first run)."""
    process = KernelProcess(Path("lec.py"), ["cs336-lectures", "trace", "lec.py"])
    yield process
    process.close()


def run(kernel: KernelProcess, source: str | None = None, **options) -> dict:
    if source is not None:
        Path("lec.py").write_text(source)
    reply = kernel.run(**LIMITS, **options)
    assert reply is not None
    return reply


def assert_same_as_fresh(kernel: KernelProcess, folder: Path) -> None:
    produced = json.loads((kernel.out / "lec.json").read_text())
    difference = first_difference(comparable(produced), comparable(fresh_trace(folder)))
    assert difference is None, difference


def pid_exists(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# --- lecture-like programs, generated -----------------------------------------------------------

HEADER = '''import random

import numpy

from cs336_lectures import text

SCALE = {scale}
SEEN = []


class Counter:
    def __init__(self):
        self.total = 0

    def add(self, amount):
        self.total += amount * {step}
        return self.total

'''

STATEMENTS = [
    "v{j} = random.random()  # @inspect v{j}",
    "a{j} = int(numpy.random.randint(0, 1000))  # @inspect a{j}",
    "SEEN.append(len(SEEN) + {c})  # @inspect SEEN",
    "w{j} = helper_{h}({c})  # @inspect w{j}",
    "print('section', {c}, len(SEEN))",
    "counter{j} = Counter()\n    t{j} = counter{j}.add({c})  # @inspect t{j}",
    "text('note {c}')",
    "x{j} = SCALE * {c} + len(SEEN)  # @inspect x{j}",
    "if {c} % 7 == 3:\n        raise ValueError('section failed at {c}')",
]


@dataclass(frozen=True)
class Program:
    """A lecture: sections (lists of (template, constant, helper) statements) and two helpers."""

    scale: int
    step: int
    sections: tuple[tuple[tuple[int, int, int], ...], ...]
    helpers: tuple[int, int]
    order: tuple[int, ...] = field(default=())

    def source(self) -> str:
        order = self.order or tuple(range(len(self.sections)))
        parts = [HEADER.format(scale=self.scale, step=self.step), "\ndef main():\n"]
        parts += [f"    section_{index}()\n" for index in order]
        for index, body in enumerate(self.sections):
            parts.append(f"\n\ndef section_{index}():\n")
            for j, (template, constant, helper) in enumerate(body):
                parts.append("    " + STATEMENTS[template].format(j=j, c=constant, h=helper) + "\n")
            parts.append("    return None\n")
        for index, factor in enumerate(self.helpers):
            parts.append(f"\n\ndef helper_{index}(n):\n    return n * {factor} + random.randint(0, 9)\n")
        return "".join(parts)


statement = st.tuples(st.integers(0, len(STATEMENTS) - 1), st.integers(0, 40), st.integers(0, 1))
programs = st.builds(Program, scale=st.integers(1, 5), step=st.integers(1, 3),
                     sections=st.lists(st.lists(statement, min_size=1, max_size=4).map(tuple), min_size=2,
                                       max_size=4).map(tuple),
                     helpers=st.tuples(st.integers(1, 9), st.integers(1, 9)))


@st.composite
def edited(draw, program: Program) -> Program:
    """One edit as a student makes them: mostly inside a section or a helper, sometimes elsewhere."""
    kind = draw(st.sampled_from(["constant", "constant", "insert", "delete", "helper", "module", "class", "order"]))
    sections = [list(body) for body in program.sections]
    target = draw(st.integers(0, len(sections) - 1))
    if kind == "constant":
        position = draw(st.integers(0, len(sections[target]) - 1))
        template, _, helper = sections[target][position]
        sections[target][position] = (template, draw(st.integers(0, 40)), helper)
    elif kind == "insert":
        sections[target].insert(draw(st.integers(0, len(sections[target]))), draw(statement))
    elif kind == "delete" and len(sections[target]) > 1:
        sections[target].pop(draw(st.integers(0, len(sections[target]) - 1)))
    elif kind == "helper":
        return replace(program, helpers=(draw(st.integers(1, 9)), program.helpers[1]))
    elif kind == "module":
        return replace(program, scale=program.scale + 1)
    elif kind == "class":
        return replace(program, step=program.step + 1)
    elif kind == "order":
        return replace(program, order=tuple(reversed(range(len(sections)))))
    return replace(program, sections=tuple(tuple(body) for body in sections))


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_incremental_runs_equal_fresh_traces(data, tmp_path_factory):
    """Generated lectures (random numbers, module state, a class, shared helpers, printing and
    failing sections) and chains of edits: whatever the kernel did, its trace is a fresh one's."""
    folder = tmp_path_factory.mktemp("exactness")
    os.chdir(folder)
    process = KernelProcess(Path("lec.py"), ["cs336-lectures", "trace", "lec.py"])
    try:
        program = data.draw(programs)
        for round in range(3):
            reply = run(process, program.source())
            event(f"{reply['mode']} run, {reply['state']}")  # --hypothesis-show-statistics
            assert_same_as_fresh(process, folder / f"fresh-{round}")
            program = data.draw(edited(program))
    finally:
        process.close()


# --- incremental runs and their fallbacks ---------------------------------------------------------

SIMPLE = '''import random

from cs336_lectures import text

BASE = 5


def main():
    intro()
    middle()
    last()


def intro():
    a = random.random()  # @inspect a


def middle():
    b = helper(BASE)  # @inspect b
    print("middle", b)


def last():
    c = random.random() + BASE  # @inspect c


def helper(n):
    return n * 10
'''


def test_an_edit_in_a_section_reruns_from_that_section(kernel, lecture_dir):
    first = run(kernel, SIMPLE)
    assert first["state"] == "ok" and first["mode"] == "full" and first["sections"] == 3
    created = json.loads((kernel.out / "lec.json").read_text())["header"]["created"]
    time.sleep(1.1)  # `created` counts whole seconds
    edited = run(kernel, SIMPLE.replace('"middle"', '"MIDDLE"'))
    assert edited["mode"] == "incremental" and edited["section"] == "middle" and edited["reused"] == 1, edited
    assert_same_as_fresh(kernel, lecture_dir / "fresh")
    assert json.loads((kernel.out / "lec.json").read_text())["header"]["created"] > created  # the resumed run's own time


def test_an_edit_in_a_helper_reruns_from_the_first_section_that_called_it(kernel, lecture_dir):
    run(kernel, SIMPLE)
    edited = run(kernel, SIMPLE.replace("n * 10", "n * 11"))
    assert edited["mode"] == "incremental" and edited["section"] == "middle", edited
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


def test_a_resumed_run_shows_the_trace_so_far_before_the_sections_after_the_edit(kernel, lecture_dir):
    """The early view: once the edited section has run, the trace up to the next section's line of
    main(), which is the start of the whole trace that follows."""
    run(kernel, SIMPLE)
    Path("lec.py").write_text(SIMPLE.replace('"middle"', '"MIDDLE"'))
    early = []
    reply = kernel.run(**LIMITS, on_early=lambda message: early.append(
        (message, json.loads((kernel.out / "lec.early.json").read_text()))))
    assert reply["mode"] == "incremental" and reply["section"] == "middle"
    (message, partial), = early
    whole = json.loads((kernel.out / "lec.json").read_text())
    assert message["state"] == "early" and message["section"] == "middle" and message["steps"] == len(partial["steps"])
    assert partial["steps"] == whole["steps"][:len(partial["steps"])]
    last_line = SIMPLE.splitlines().index("    last()") + 1
    assert partial["steps"][-1][1] == last_line  # main() about to call the section after the edit
    assert "MIDDLE" in json.dumps(partial["steps"]) and len(whole["steps"]) > len(partial["steps"])
    assert 0 < message["until"] <= len(whole["steps"])  # where, in the old trace, the sections still running began
    Path("lec.py").write_text(SIMPLE.replace('"middle"', '"MIDDLE"').replace("+ BASE", "+ BASE + 1"))
    edited_last = kernel.run(**LIMITS, on_early=early.append)
    assert edited_last["mode"] == "incremental" and edited_last["section"] == "last"
    assert len(early) == 1  # the last section has nothing after it to wait for
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


def test_a_resumed_run_reports_the_project_modules_it_imported_itself(kernel, lecture_dir):
    """The server watches the modules a run imported; a resumed run names those it imported (the
    run it resumed named the others), so an edit that imports a new module gets it watched."""
    (lecture_dir / "early.py").write_text("VALUE = 1\n")
    (lecture_dir / "late.py").write_text("VALUE = 2\n")
    source = "import early\n" + SIMPLE
    first = run(kernel, source)
    assert first["modules"] == [str(lecture_dir / "early.py")]
    plain = run(kernel, source.replace('"middle"', '"MIDDLE"'))
    assert plain["mode"] == "incremental" and plain["modules"] == []
    importing = run(kernel, source.replace('    print("middle", b)', '    import late\n    print("middle", b + late.VALUE)'))
    assert importing["mode"] == "incremental" and str(lecture_dir / "late.py") in importing["modules"], importing
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


def test_edits_in_a_row_in_one_section_each_resume_from_it(kernel, lecture_dir):
    """The checkpoint a run resumed from stays for the next edit (a resumed run does not fork it again)."""
    run(kernel, SIMPLE)
    for word in ("MIDDLE", "Middle", "middle!"):
        edited = run(kernel, SIMPLE.replace('"middle"', f'"{word}"'))
        assert edited["mode"] == "incremental" and edited["section"] == "middle" and edited["reused"] == 1, edited
    assert_same_as_fresh(kernel, lecture_dir / "fresh")
    later = run(kernel, SIMPLE.replace('"middle"', '"middle!"').replace("+ BASE", "+ BASE + 1"))
    assert later["mode"] == "incremental" and later["section"] == "last" and later["reused"] == 2, later
    earlier = run(kernel, SIMPLE.replace('"middle"', '"middle!"').replace("+ BASE", "+ BASE + 1")
                  .replace("a = random.random()", "a = random.random() * 2"))
    assert earlier["mode"] == "incremental" and earlier["section"] == "intro" and earlier["reused"] == 0, earlier
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


def test_a_new_helper_and_a_directive_change_apply_in_place(kernel, lecture_dir):
    run(kernel, SIMPLE)
    source = SIMPLE.replace("    c = random.random() + BASE  # @inspect c\n",
                            "    c = random.random() + BASE  # @inspect c\n    d = extra(2)  # @inspect d @stepover\n")
    edited = run(kernel, source + "\n\ndef extra(n: int = 3) -> int:\n    \"\"\"New.\"\"\"\n    return n + 1\n")
    # The added line moved helper(), which middle() calls: the run resumes before middle().
    assert edited["mode"] == "incremental" and edited["section"] == "middle", edited
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


@pytest.mark.parametrize("old, new, reason", [
    ("import random\n", "import random\nimport math\n", "the imports changed"),
    ("BASE = 5", "BASE = 6", "module-level code changed"),
    ("    last()\n", "    last()\n    intro()\n", "main() changed"),
    ("    return n * 10\n", "    return n * 10\n\n\nTABLE = [1, 2]\n", "module-level code changed (line 31)"),
])
def test_unsafe_edits_run_the_whole_lecture_and_say_why(kernel, lecture_dir, old, new, reason):
    run(kernel, SIMPLE)
    edited = run(kernel, SIMPLE.replace(old, new))
    assert edited["state"] == "ok" and edited["mode"] == "full" and reason in edited["reason"], edited
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


def test_code_that_ran_at_import_forces_a_whole_run(kernel, lecture_dir):
    source = SIMPLE + "\n\nTABLE = helper(1)\n"
    run(kernel, source)
    edited = run(kernel, source.replace("n * 10", "n * 12"))
    assert edited["mode"] == "full" and "before the first section" in edited["reason"], edited
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


def test_a_failed_first_run_means_a_whole_run_next(kernel, lecture_dir):
    failing = SIMPLE.replace('print("middle", b)', 'raise RuntimeError("middle broke")')
    first = run(kernel, failing)
    assert first["state"] == "error" and "middle broke" in first["message"]
    fixed = run(kernel, SIMPLE)
    assert fixed["mode"] == "full" and fixed["reason"] == "the previous run failed", fixed


def test_a_failing_edit_keeps_the_last_good_checkpoints(kernel, lecture_dir):
    run(kernel, SIMPLE)
    broken = run(kernel, SIMPLE.replace('print("middle", b)', 'raise RuntimeError("middle broke")'))
    assert broken["state"] == "error" and broken["mode"] == "incremental"
    error_step = json.loads((kernel.out / "lec.json").read_text())["steps"][-1]
    assert error_step[2]["x"]["type"] == "RuntimeError"  # the error is where it happened
    fixed = run(kernel, SIMPLE.replace('"middle"', '"fixed"'))
    assert fixed["state"] == "ok" and fixed["mode"] == "incremental", fixed
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


@pytest.mark.parametrize("statement, reason", [
    ("import threading; threading.Thread(target=time.sleep, args=(3,)).start()", "started a thread"),
    ("import subprocess; subprocess.Popen(['sleep', '3'])", "left a child process running"),
    ("import torch; torch.cuda.is_initialized = lambda: True", "CUDA was initialised"),
])
def test_state_a_fork_cannot_copy_stops_the_checkpoints(kernel, lecture_dir, statement, reason):
    """At import, it leaves no checkpoint at all: every edit runs the whole lecture."""
    source = SIMPLE.replace("BASE = 5\n", f"BASE = 5\n{statement}\n").replace("import random\n",
                                                                           "import random\nimport time\n")
    first = run(kernel, source)
    assert reason in first["unsafe"] and "before `intro`" in first["unsafe"], first
    edited = run(kernel, source.replace("random.random() + BASE", "random.random() + 2 * BASE"))
    assert edited["mode"] == "full" and reason in edited["reason"], edited


def test_checkpoints_before_the_unsafe_point_stay_usable(kernel, lecture_dir):
    source = SIMPLE.replace('    print("middle", b)\n', '    print("middle", b)\n'
                            '    import torch; torch.cuda.is_initialized = lambda: True\n')
    first = run(kernel, source)
    assert "CUDA was initialised" in first["unsafe"] and "before `last`" in first["unsafe"], first
    edited = run(kernel, source.replace("random.random() + BASE", "random.random() + 2 * BASE"))
    assert edited["mode"] == "incremental" and edited["section"] == "middle", edited
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


def test_a_lecture_without_main_always_runs_whole(kernel, lecture_dir):
    run(kernel, "x = 1\ny = x + 1\n")
    again = run(kernel, "x = 1\ny = x + 2\n")
    assert again["mode"] == "full" and "no main()" in again["reason"], again


def test_a_forced_whole_run(kernel, lecture_dir):
    run(kernel, SIMPLE)
    reply = run(kernel, full=note("{module} changed", module="helpers.py"))
    assert reply["reason"] == "helpers.py changed"
    assert reply["reason_note"] == {"template": "{module} changed", "fields": {"module": "helpers.py"}}


# --- process hygiene -----------------------------------------------------------------------------


@pytest.mark.parametrize("new_session", [False, True], ids=["in the run's group", "in a session of its own"])
def test_processes_a_run_started_die_when_it_ends(kernel, lecture_dir, new_session):
    """A child in the run's process group dies with the group; one that left it (setsid) comes back
    to the kernel, their subreaper, when its parent ends, and dies there."""
    spawn = (f"    child = subprocess.Popen(['sleep', '100'], start_new_session={new_session})\n"
             "    open('child.pid', 'w').write(str(child.pid))\n")
    run(kernel, SIMPLE)
    # Resumed (the clean run's checkpoint before `last`), then whole: a run that started a program
    # and wrote a file is never resumed from (kernel/effects.py).
    for edit, section, mode in [(SIMPLE, "last", "incremental"), (SIMPLE.replace('"middle"', '"MIDDLE"'), "middle", "full")]:
        source = edit.replace(f"def {section}():\n", f"def {section}():\n    import subprocess\n" + spawn)
        reply = run(kernel, source)
        assert reply["state"] == "ok" and reply["mode"] == mode, reply
        pid = int(Path("child.pid").read_text())
        deadline = time.monotonic() + 10
        while pid_exists(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pid_exists(pid)


def test_a_kernel_that_stops_answering_is_closed_not_waited_for(kernel, lecture_dir, monkeypatch):
    """Whatever stalls a kernel, the server's retrace must not wait for it forever: it falls back."""
    run(kernel, SIMPLE)
    monkeypatch.setattr(kernel_client, "ANSWER_GRACE_SECONDS", 1.0)
    os.kill(kernel.process.pid, signal.SIGSTOP)
    with pytest.raises(KernelUnavailable, match=r"the kernel did not answer within 1\.5 s of the run's start"):
        kernel.run(max_steps=1000, timeout=0.5)
    assert kernel.closed and kernel.process.poll() is not None


def test_a_kernel_shows_where_it_is_when_asked(kernel, lecture_dir):
    """What a kernel that stopped answering was doing goes into the error (a live one shows its loop)."""
    run(kernel, SIMPLE)
    stacks = kernel._stacks()
    assert "in serve" in stacks and "kernel/process.py" in stacks, stacks
    assert run(kernel)["state"] == "ok"  # and it goes on serving


def test_closing_the_kernel_ends_its_whole_session(kernel, lecture_dir):
    run(kernel, SIMPLE)
    session = kernel.process.pid
    assert len(session_members(session)) > 3  # the kernel and its checkpoints
    kernel.close()
    assert session_members(session) == []
    assert not kernel.folder.exists()  # its traces folder and socket


def session_members(session: int) -> list[int]:
    return [pid for pid, fields in process_stats() if int(fields[3]) == session and fields[0] != "Z"]


def test_a_newer_run_cancels_the_one_in_progress(kernel, lecture_dir):
    slow = SIMPLE.replace("def last():\n", "def last():\n    import os, time\n"
                          "    open('slow.pid', 'w').write(str(os.getpid()))\n    time.sleep(100)\n")
    run(kernel, SIMPLE)
    Path("lec.py").write_text(slow)
    results = []
    worker = threading.Thread(target=lambda: results.append(kernel.run(**LIMITS)))
    worker.start()
    while not Path("slow.pid").exists():
        time.sleep(0.05)
    pid = int(Path("slow.pid").read_text())
    kernel.cancel()
    worker.join(timeout=30)
    assert results == [None]
    final = run(kernel, SIMPLE.replace('"middle"', '"after"'))
    assert final["state"] == "ok"
    assert not pid_exists(pid)
    assert_same_as_fresh(kernel, lecture_dir / "fresh")


def test_raw_output_is_read_with_a_bound(kernel, lecture_dir):
    noisy = SIMPLE.replace("def last():\n", "def last():\n    import os\n"
                           "    for _ in range(40):\n        os.write(1, b'x' * 1_000_000)\n")
    assert run(kernel, noisy)["state"] == "ok"
    deadline = time.monotonic() + 10
    while kernel.stdout.total < 40_000_000 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kernel.stdout.total >= 40_000_000
    assert len(kernel.stdout.data) <= kernel.stdout.limit


def test_output_tail_keeps_the_last_bytes():
    reader, writer = os.pipe()
    tail = OutputTail(os.fdopen(reader, "rb"), limit=10)
    os.write(writer, b"0123456789abcdef")
    os.close(writer)
    tail.thread.join(timeout=5)
    assert tail.text() == "6789abcdef" and tail.total == 16


# --- the shipped lectures ------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
@pytest.mark.parametrize("name, section, old, new", [
    ("lecture_01", "tokenization_summary", 'text("', 'text("Edited: '),
    ("lecture_02", "exercise_napkin_math_rtx4080", 'text("', 'text("Edited: '),
])
def test_a_real_edit_in_a_shipped_lecture_reruns_one_section_exactly(lecture_dir, gpt2_cache, name, section, old, new):
    if name == "lecture_02" and fork_safe_openmp() is None:
        pytest.skip("lecture 2 computes with torch in parallel: checkpoints need LLVM's OpenMP (apt-get install libomp5)")
    source = (ROOT / "lectures" / f"{name}.py").read_text()
    Path("lec.py").write_text(source)
    process = KernelProcess(Path("lec.py"), ["cs336-lectures", "trace", "lec.py"])
    try:
        first = run(process)
        assert first["state"] == "ok" and first["unsafe"] is None, first  # a checkpoint before every section
        start = source.index(f"\ndef {section}():")
        at = source.index(old, start)
        edited = run(process, source[:at] + new + source[at + len(old):])
        assert edited["state"] == "ok" and edited["mode"] == "incremental" and edited["section"] == section, edited
        assert_same_as_fresh(process, lecture_dir / "fresh")
    finally:
        process.close()
