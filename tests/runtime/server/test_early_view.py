"""The early view of a resumed run (the trace up to the section after the edit, shown while the
sections after it still run): its seconds are the resumed run's own, its figures are served
when it is announced, and it is never something the whole trace then changes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cs336_lectures.runtime.kernel.client import KernelProcess
from cs336_lectures.runtime.processes import kernel_can_fork
from test_server import Events, request, wait_for, watching
from test_viewer_live import GATE  # the last section waits at it: the test decides when it ends

pytestmark = pytest.mark.skipif(not kernel_can_fork(), reason="the kernel needs fork() and /proc (Linux)")

LIMITS = {"max_steps": 200_000, "timeout": 120.0}

SLOW_START = '''import time


def main():
    intro()
    middle()
    last()


def intro():
    time.sleep(2.5)


def middle():
    label = "middle"  # @inspect label


def last():
    done = True  # @inspect done
'''

# The edited section leaves a generator suspended on an inspected line; the section after it
# resumes the generator, which then records the line's new values into that old step.
SUSPENDED = '''def main():
    intro()
    make()
    use()


def intro():
    x = 1  # @inspect x


def make():
    global STREAM
    STREAM = counter(2)
    first = next(STREAM)  # @inspect first


def counter(start):
    total = start
    while True:
        total = total + (yield total)  # @inspect total


def use():
    second = STREAM.send(5)  # @inspect second
'''


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    process = KernelProcess(Path("lec.py"), ["cs336-lectures", "trace", "lec.py"])
    yield process
    process.close()


def run_edit(kernel: KernelProcess, before: str, after: str) -> tuple[dict, list[tuple[dict, dict]]]:
    """Run `before`, then `after`: the second run's reply and its early views (message, trace)."""
    Path("lec.py").write_text(before)
    assert kernel.run(**LIMITS)["state"] == "ok"
    Path("lec.py").write_text(after)
    early: list[tuple[dict, dict]] = []
    reply = kernel.run(**LIMITS, on_early=lambda message: early.append(
        (message, json.loads((kernel.out / "lec.early.json").read_text()))))
    return reply, early


def test_the_early_view_counts_the_resumed_runs_own_seconds(kernel):
    reply, early = run_edit(kernel, SLOW_START, SLOW_START.replace('"middle"', '"MIDDLE"'))
    assert reply["mode"] == "incremental" and reply["section"] == "middle", reply
    (message, partial), = early
    # The trace's header counts the run it resumed (intro slept 2.5 s there); the run line must not.
    assert partial["header"]["elapsed_s"] >= 2.5
    assert message["elapsed_s"] < 2.5, message


def test_no_early_view_while_a_suspended_generator_can_still_change_a_recorded_step(kernel):
    reply, early = run_edit(kernel, SUSPENDED, SUSPENDED.replace("counter(2)", "counter(3)"))
    assert reply["state"] == "ok" and reply["mode"] == "incremental" and reply["section"] == "make", reply
    assert early == []
    whole = json.loads((kernel.out / "lec.json").read_text())
    totals = [step[2]["v"]["total"] for step in whole["steps"] if len(step) > 2 and "total" in step[2].get("v", {})]
    assert totals == [8]  # the yield line's step showed 3 when make() ended; use() resumed it and made it 8


def test_an_early_view_is_the_start_of_the_whole_trace(kernel):
    """Without a suspended generator the same edit gets its early view, a prefix of the whole trace."""
    plain = SUSPENDED.replace("    first = next(STREAM)  # @inspect first\n", "    first = 1  # @inspect first\n") \
        .replace("STREAM.send(5)", "next(STREAM)")
    reply, early = run_edit(kernel, plain, plain.replace("counter(2)", "counter(3)"))
    assert reply["mode"] == "incremental" and reply["section"] == "make", reply
    (message, partial), = early
    whole = json.loads((kernel.out / "lec.json").read_text())
    assert partial["steps"] == whole["steps"][:len(partial["steps"])]


FIGURE = '''import gate
from matplotlib.figure import Figure

from cs336_lectures import plot


def main():
    drawn()
    slow()


def drawn():
    figure = Figure(figsize=(4, 3))
    axes = figure.subplots()
    axes.plot(range(300), [(i * 7) % 31 for i in range(300)])
    plot(figure)


def slow():
    gate.wait_until_open()
'''


def test_the_early_views_figures_are_served_when_it_is_announced(tmp_path, monkeypatch):
    from cs336_lectures.runtime.server.http_server import LectureServer
    from test_site import fake_viewer

    monkeypatch.chdir(tmp_path)
    fake_viewer(tmp_path / "viewer")
    (tmp_path / "gate.py").write_text(GATE)
    gate = tmp_path / "gate.txt"
    gate.write_text("open")
    lecture = tmp_path / "lec.py"
    lecture.write_text(FIGURE)
    server = LectureServer([lecture], tmp_path / "traces", port=0, viewer_dir=tmp_path / "viewer",
                           max_steps=100_000, timeout=120, log=lambda message: None)
    try:
        listener = Events(server)
        server.start()
        assert wait_for(listener, "lec")["state"] == "ok"
        watching(server)  # a save before the watch is in place would go unseen
        gate.write_text("closed")
        lecture.write_text(FIGURE.replace("% 31", "% 29"))
        early = wait_for(listener, "lec", ("early", "ok", "error"))
        assert early["state"] == "early", early
        assert re.fullmatch(r"re-ran `drawn` \(\d+\.\d\d s\); running the 1 section after it…", early["message"])
        status, body, _ = request(server, "GET", f"/traces/{early['file']}")
        assert status == 200
        sources = [rendering["src"] for step in json.loads(body)["steps"] if len(step) > 2
                   for rendering in step[2].get("r", []) if "src" in rendering]
        assert sources and all(source.startswith("assets/") for source in sources), sources
        for source in sources:  # as the viewer asks for it: relative to the early view's own address
            status, figure, _ = request(server, "GET", f"/traces/early/{source}")
            assert status == 200 and figure == (tmp_path / "traces" / source).read_bytes()
        gate.write_text("open")
        assert wait_for(listener, "lec")["state"] == "ok"
    finally:
        gate.write_text("open")
        server.close()
