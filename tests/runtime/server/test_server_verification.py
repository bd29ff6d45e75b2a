"""Verification of resumed runs: after a run resumed from a checkpoint is published, the server
runs the whole lecture in the background; the same trace marks it verified, a different one
replaces it, says where the two parted and is logged; a newer save cancels the check, and
`serve --no-verify` turns it off."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cs336_lectures.runtime.cli.main import build_parser
from cs336_lectures.runtime.processes import kernel_can_fork
from cs336_lectures.runtime.trace.compare import comparable, first_difference
from test_server import Events, request, wait_for, wait_idle, watching

pytestmark = pytest.mark.skipif(not kernel_can_fork(), reason="resumed runs need the kernel: fork() and /proc")

# intro() reads a file no edit of the lecture touches: when it changes between two runs, a run that
# reuses intro's checkpoint shows the old contents, a whole run the new (a divergence no rule sees).
LECTURE = '''from pathlib import Path

import gate


def main():
    intro()
    body()


def intro():
    gate.wait_until_open()
    setting = Path("setting.txt").read_text()  # @inspect setting


def body():
    value = 2 * 3  # @inspect value
'''
GATE = '''import time
from pathlib import Path


def wait_until_open(name: str = "gate.txt", waiting: str = "waiting.txt", limit: float = 120.0) -> None:
    gate = Path(name)
    if gate.read_text() == "open":
        return
    Path(waiting).write_text("yes")
    deadline = time.monotonic() + limit
    while gate.read_text() != "open" and time.monotonic() < deadline:
        time.sleep(0.02)
'''
ANY = ("running", "early", "ok", "error", "verified")


@pytest.fixture
def project(tmp_path, monkeypatch):
    from test_site import fake_viewer

    monkeypatch.chdir(tmp_path)
    fake_viewer(tmp_path / "viewer")
    (tmp_path / "gate.py").write_text(GATE)
    (tmp_path / "gate.txt").write_text("open")
    (tmp_path / "setting.txt").write_text("one")
    (tmp_path / "lec.py").write_text(LECTURE)
    return tmp_path


def start(project: Path, verify: bool = True, log=lambda message: None):
    from cs336_lectures.runtime.server.http_server import LectureServer

    server = LectureServer([project / "lec.py"], project / "traces", port=0, viewer_dir=project / "viewer",
                           max_steps=100_000, timeout=120, log=log, verify=verify)
    listener = Events(server)
    server.start()
    event = wait_for(listener, "lec")
    assert event["state"] == "ok" and "verification" not in event, event  # a whole run needs no check
    watching(server)  # a save before the watch is in place would go unseen
    return server, listener


def values(project: Path, name: str) -> list:
    trace = json.loads((project / "traces" / "lec.json").read_text())
    return [step[2]["v"][name] for step in trace["steps"] if len(step) > 2 and name in step[2].get("v", {})]


def index_entry(server) -> dict:
    status, body, _ = request(server, "GET", "/traces/index.json")
    assert status == 200
    return next(entry for entry in json.loads(body)["traces"] if entry["name"] == "lec")


def log_lines(project: Path) -> list[dict]:
    log = project / "verification" / "log.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_a_resumed_run_that_a_whole_run_agrees_with_is_marked_verified(project):
    server, listener = start(project)
    try:
        (project / "lec.py").write_text(LECTURE.replace("2 * 3", "2 * 4"))
        event = wait_for(listener, "lec")
        assert event["state"] == "ok" and event["mode"] == "incremental", event
        assert event["verification"] == "pending"
        checked = wait_for(listener, "lec", ("ok", "error", "verified"))
        assert checked["state"] == "verified" and checked["verification"] == "verified", checked
        assert checked["generation"] == event["generation"] and checked["message"] == event["message"]
        assert index_entry(server)["verification"] == "verified"
        assert values(project, "value") == [8] and log_lines(project) == []
    finally:
        server.close()


def test_a_failed_resumed_run_that_a_whole_run_agrees_with_still_shows_as_failing(project):
    server, listener = start(project)
    try:
        (project / "lec.py").write_text(LECTURE.replace("2 * 3", "2 * None"))
        event = wait_for(listener, "lec")
        assert event["state"] == "error" and "TypeError" in event["message"] and event["verification"] == "pending"
        assert wait_for(listener, "lec", ("ok", "error", "verified"))["state"] == "verified"
        entry = index_entry(server)
        assert entry["verification"] == "verified" and "TypeError" in entry["failing"], entry
        (replayed,) = Events(server).replayed  # what a viewer arriving now hears
        assert replayed["state"] == "error" and replayed["verification"] == "verified", replayed
    finally:
        server.close()


def test_a_resumed_run_that_differs_from_a_whole_run_is_replaced_said_and_logged(project):
    server, listener = start(project)
    try:
        (project / "setting.txt").write_text("two")
        (project / "lec.py").write_text(LECTURE.replace("2 * 3", "2 * 4"))
        event = wait_for(listener, "lec")
        assert event["state"] == "ok" and event["mode"] == "incremental" and event["verification"] == "pending"
        corrected = wait_for(listener, "lec", ("ok", "error", "verified"))
        assert corrected["state"] == "ok" and corrected["verification"] == "corrected", corrected
        trace = json.loads((project / "traces" / "lec.json").read_text())
        setting_step = next(index for index, step in enumerate(trace["steps"])
                            if len(step) > 2 and "setting" in step[2].get("v", {}))
        assert corrected["step"] == setting_step
        assert corrected["message"] == f"corrected: the resumed run differed at step {setting_step + 1}"
        assert corrected["note"] == {"template": "corrected: the resumed run differed at step {step}",
                                     "fields": {"step": setting_step + 1}}
        assert corrected["generation"] == event["generation"] + 1  # a new trace for viewers to load
        assert values(project, "setting") == ["two"] and values(project, "value") == [8]
        assert index_entry(server)["verification"] == "corrected"
        (case,) = log_lines(project)
        assert case["trace"] == "lec" and case["lecture"] == str(project / "lec.py")
        assert case["first_differing_step"] == setting_step and "'one'" in case["difference"]
        assert "-    value = 2 * 3  # @inspect value" in case["edit"] and "+    value = 2 * 4" in case["edit"]
        assert case["resumed_run"] == event["message"] and case["time"]
        # The next edit resumes from the whole run's checkpoints, which read "two": it agrees.
        (project / "lec.py").write_text(LECTURE.replace("2 * 3", "2 * 5"))
        assert wait_for(listener, "lec")["mode"] == "incremental"
        assert wait_for(listener, "lec", ("ok", "error", "verified"))["state"] == "verified"
        assert len(log_lines(project)) == 1
    finally:
        server.close()


def test_a_newer_save_cancels_the_check_of_the_run_before_it(project):
    server, listener = start(project)
    try:
        (project / "gate.txt").write_text("closed")  # the whole run waits in intro; the resumed one reuses it
        (project / "lec.py").write_text(LECTURE.replace("2 * 3", "2 * 4"))
        first = wait_for(listener, "lec")
        assert first["verification"] == "pending", first
        wait_for_file(project / "waiting.txt")
        (project / "lec.py").write_text(LECTURE.replace("2 * 3", "2 * 5"))
        events = [wait_for(listener, "lec", ANY)]
        while events[-1].get("verification") != "pending" and len(events) < 5:
            events.append(wait_for(listener, "lec", ANY))
        assert [event["state"] for event in events] == ["running", "ok"], events  # no verdict on the older run
        (project / "gate.txt").write_text("open")
        checked = wait_for(listener, "lec", ("ok", "error", "verified"))
        assert checked["state"] == "verified" and checked["generation"] == events[-1]["generation"], checked
        assert values(project, "value") == [10]
    finally:
        (project / "gate.txt").write_text("open")
        server.close()


def test_a_check_that_read_a_newer_save_before_the_watcher_told_of_it_is_dropped(project):
    # The whole run of a check reads the file when it starts. A save the watcher reports only
    # after that is no reason to "correct" the resumed run: that save's own run follows.
    gated = LECTURE.replace("    value = 2 * 3", '    gate.wait_until_open("body-gate.txt", "body-waiting.txt")\n    value = 2 * 3')
    (project / "lec.py").write_text(gated)
    (project / "body-gate.txt").write_text("open")
    dropped = threading.Event()
    server, listener = start(project, log=lambda message: dropped.set() if "the check is dropped" in message else None)
    files = server.watcher.files
    tell_the_server, held = files.on_change, []
    try:
        (project / "body-gate.txt").write_text("closed")
        (project / "lec.py").write_text(gated.replace("2 * 3", "2 * 4"))
        wait_for_file(project / "body-waiting.txt")  # the resumed run has read its file and waits in body
        files.on_change = held.append
        (project / "lec.py").write_text(gated.replace("2 * 3", "2 * 5"))
        deadline = time.monotonic() + 60
        while not held:
            assert time.monotonic() < deadline, "the watcher never saw the second save"
            time.sleep(0.02)
        (project / "body-gate.txt").write_text("open")
        resumed = wait_for(listener, "lec")
        assert resumed["mode"] == "incremental" and resumed["verification"] == "pending", resumed
        assert dropped.wait(120), "the check compared the resumed run with a run of the newer save"
        assert values(project, "value") == [8] and log_lines(project) == []
        files.on_change = tell_the_server
        tell_the_server(set().union(*held))
        newer = wait_for(listener, "lec")
        assert newer["mode"] == "incremental" and newer["generation"] > resumed["generation"], newer
        checked = wait_for(listener, "lec", ("ok", "error", "verified"))
        assert checked["state"] == "verified", checked
        assert values(project, "value") == [10] and log_lines(project) == []
    finally:
        files.on_change = tell_the_server
        (project / "body-gate.txt").write_text("open")
        server.close()


def wait_for_file(path: Path, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_no_verify_publishes_the_resumed_run_alone(project):
    server, listener = start(project, verify=False)
    try:
        (project / "setting.txt").write_text("two")
        (project / "lec.py").write_text(LECTURE.replace("2 * 3", "2 * 4"))
        event = wait_for(listener, "lec")
        assert event["state"] == "ok" and event["mode"] == "incremental" and "verification" not in event, event
        wait_idle(server, "lec")
        assert listener.live.empty()
        assert values(project, "setting") == ["one"]  # unchecked: what the resumed run showed stays
        assert "verification" not in index_entry(server) and log_lines(project) == []
    finally:
        server.close()


def test_serve_takes_no_verify():
    assert build_parser(["serve"]).parse_args(["serve", "lec.py", "--no-verify"]).verify is False
    assert build_parser(["serve"]).parse_args(["serve", "lec.py"]).verify is True


# link(helper) records helper's line; a line added above helper moves it, while intro, which
# holds the link, never calls helper: a rule that watches only what ran resumes after intro.
LINKED = '''from cs336_lectures import link


def main():
    intro()
    body()


def intro():
    link(helper)


def body():
    value = helper(2)  # @inspect value


def helper(n):
    return n + 1
'''


def test_once_checked_the_served_trace_is_a_fresh_runs_even_where_resuming_erred(project):
    (project / "lec.py").write_text(LINKED)
    server, listener = start(project)
    try:
        (project / "lec.py").write_text(LINKED.replace("def helper(n):", "# Adds one.\ndef helper(n):"))
        event = wait_for(listener, "lec")
        assert event["state"] == "ok", event
        if event.get("verification") == "pending":
            checked = wait_for(listener, "lec", ("ok", "error", "verified"))
            assert len(log_lines(project)) == (checked.get("verification") == "corrected")
        wait_idle(server, "lec")
    finally:
        server.close()
    subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(project / "lec.py"), "-o", "fresh", "--quiet"],
                   cwd=project, check=True, capture_output=True, timeout=300)
    served = json.loads((project / "traces" / "lec.json").read_text())
    fresh = json.loads((project / "fresh" / "lec.json").read_text())
    assert first_difference(comparable(served), comparable(fresh)) is None


def test_an_early_view_that_was_not_the_start_of_its_runs_trace_is_logged(tmp_path):
    """The kernel writes no early view where it sees that a recorded step may still change; one it
    wrote anyway and that differed from the whole trace goes to the log."""
    import copy

    from cs336_lectures.runtime.i18n.run_messages import note
    from cs336_lectures.runtime.server.events import EventHub
    from cs336_lectures.runtime.server.retracing import Retracer
    from cs336_lectures.runtime.server.served_lecture import Lecture
    from cs336_lectures.runtime.server.verification import ResumedRun
    from trace_builders import demo_trace

    log = tmp_path / "verification" / "log.jsonl"
    retracer = Retracer(tmp_path, EventHub(), [], None, None, log=lambda message: None, verification_log=log)
    lecture = Lecture(tmp_path / "demo.py")
    whole = demo_trace()
    resumed = ResumedRun(whole, note("re-ran `{section}`", section="body"), "ok", None, tmp_path / "shown.json")

    def check(early_steps: list) -> list[dict]:
        resumed.early.write_text(json.dumps({**whole, "steps": early_steps}))
        retracer.verifier.check_early_view(lecture, resumed)
        assert not resumed.early.exists()
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    assert check(whole["steps"][:8]) == []  # the start of the whole trace: nothing to say
    changed = copy.deepcopy(whole["steps"][:8])
    changed[5][2]["v"]["total"] = 6  # a value the run changed afterwards, as a resumed generator would
    (case,) = check(changed)
    assert case["case"] == "early view" and case["first_differing_step"] == 5 and "'total': 6" in case["difference"]
