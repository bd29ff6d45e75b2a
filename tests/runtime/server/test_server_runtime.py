"""The server as a notebook runtime: edits re-run what they affect in the lecture's warm kernel,
the viewer hears what ran, file events (rename-saves, imported modules) start runs, a newer edit
cancels an older run, and `serve` refuses limits it cannot honour."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cs336_lectures.runtime.processes import kernel_can_fork
from test_server import Events, request, wait_for, wait_idle, watching

needs_kernel = pytest.mark.skipif(not kernel_can_fork(), reason="the kernel needs fork() and /proc (Linux)")

LECTURE = '''import random

from helpers import scale


def main():
    intro()
    body()


def intro():
    a = random.random()  # @inspect a


def body():
    b = scale(3)  # @inspect b
    print("body", b)
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A user's folder: a viewer, traces/, and lectures/lec.py importing lectures/helpers.py."""
    from test_site import fake_viewer

    monkeypatch.chdir(tmp_path)
    fake_viewer(tmp_path / "viewer")
    (tmp_path / "traces").mkdir()
    (tmp_path / "lectures").mkdir()
    (tmp_path / "lectures" / "lec.py").write_text(LECTURE)
    (tmp_path / "lectures" / "helpers.py").write_text("def scale(n):\n    return n * 2\n")
    return tmp_path


@pytest.fixture
def server(project):
    from cs336_lectures.runtime.server.http_server import LectureServer

    started = LectureServer([project / "lectures" / "lec.py"], project / "traces", port=0,
                            viewer_dir=project / "viewer", max_steps=100_000, timeout=60, log=lambda message: None)
    yield started
    started.close()


def first_run(server) -> Events:
    listener = Events(server)
    server.start()
    assert wait_for(listener, "lec")["state"] == "ok"
    watching(server)  # a save before the watch is in place would go unseen
    return listener


def trace_values(project: Path, name: str) -> list:
    trace = json.loads((project / "traces" / "lec.json").read_text())
    return [step[2]["v"][name] for step in trace["steps"] if len(step) > 2 and name in step[2].get("v", {})]


@needs_kernel
def test_a_rename_save_reruns_the_section_and_says_so(server, project):
    listener = first_run(server)
    lecture = project / "lectures" / "lec.py"
    temporary = lecture.with_name(".lec.py.swp")
    temporary.write_text(LECTURE.replace('"body"', '"edited"'))
    os.replace(temporary, lecture)  # how editors save
    event = wait_for(listener, "lec")
    assert event["state"] == "ok" and event["mode"] == "incremental", event
    assert event["message"].startswith("re-ran `body` (") and event["message"].endswith("; 1 section reused")
    assert event["note"]["fields"]["reused"] == {"template": "{count} section", "fields": {"count": 1}}, event
    trace = json.loads((project / "traces" / "lec.json").read_text())
    assert any(step[2].get("o") == "edited 6\n" for step in trace["steps"] if len(step) > 2)


@needs_kernel
def test_an_imported_module_edit_reruns_the_whole_lecture(server, project):
    listener = first_run(server)
    (project / "lectures" / "helpers.py").write_text("def scale(n):\n    return n * 5\n")
    event = wait_for(listener, "lec")
    assert event["state"] == "ok" and event["mode"] == "full", event
    assert event["message"].startswith("re-ran the whole lecture (") and "lectures/helpers.py changed" in event["message"]
    # the same line as a note, for the viewer to say in its language
    assert event["note"]["template"] == "re-ran the whole lecture ({seconds} s): {reason}", event
    assert event["note"]["fields"]["reason"] == {"template": "{module} changed",
                                                 "fields": {"module": os.path.join("lectures", "helpers.py")}}
    assert trace_values(project, "b") == [15]


@needs_kernel
def test_a_failing_section_keeps_the_last_good_trace_and_says_where(server, project):
    listener = first_run(server)
    good = (project / "traces" / "lec.json").read_bytes()
    lecture = project / "lectures" / "lec.py"
    lecture.write_text(LECTURE.replace('    print("body", b)\n', '    print("body", b)\n    b.missing\n'))
    event = wait_for(listener, "lec")
    assert event["state"] == "error" and "AttributeError" in event["message"] and "lectures/lec.py:18)" in event["message"]
    assert (project / "traces" / "lec.json").read_bytes() == good
    lecture.write_text(LECTURE.replace("scale(3)", "scale(4)"))
    event = wait_for(listener, "lec")
    assert event["state"] == "ok" and event["mode"] == "incremental", event
    assert trace_values(project, "b") == [8]


@needs_kernel
def test_a_newer_edit_cancels_the_run_in_progress(server, project):
    listener = first_run(server)
    lecture = project / "lectures" / "lec.py"
    lecture.write_text(LECTURE.replace('    print("body", b)\n', '    print("body", b)\n    import os, time\n'
                                       '    open("slow.pid", "w").write(str(os.getpid()))\n    time.sleep(100)\n'))
    wait_for(listener, "lec", ("running",))
    deadline = time.monotonic() + 60
    while not (project / "slow.pid").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    slow = int((project / "slow.pid").read_text())
    lecture.write_text(LECTURE.replace("scale(3)", "scale(6)"))
    event = wait_for(listener, "lec")
    assert event["state"] == "ok", event  # the slow run published nothing: it was cancelled
    assert trace_values(project, "b") == [12]
    wait_idle(server, "lec")
    assert not Path(f"/proc/{slow}").exists() or "Z" in Path(f"/proc/{slow}/stat").read_text().rsplit(")", 1)[1][:3]


def test_without_fork_the_server_traces_in_a_new_process(server, project):
    server.retracer.use_kernels = False
    listener = first_run(server)
    (project / "lectures" / "lec.py").write_text(LECTURE.replace("scale(3)", "scale(7)"))
    event = wait_for(listener, "lec")
    assert event["state"] == "ok" and event["message"].startswith("traced "), event
    assert event["note"]["fields"]["steps"]["template"] == "{count} steps", event
    assert trace_values(project, "b") == [14]


def test_explicit_retrace_runs_the_whole_lecture(server, project):
    listener = first_run(server)
    assert request(server, "POST", "/api/retrace?trace=lec", token=server.token)[0] == 202
    event = wait_for(listener, "lec")
    assert event["state"] == "ok", event
    if kernel_can_fork():
        assert "a re-trace was asked for" in event["message"]


def test_serve_refuses_a_timeout_it_cannot_honour(project):
    result = subprocess.run([sys.executable, "-m", "cs336_lectures", "serve", "lectures/lec.py", "--no-browser",
                             "--port", "0", "--timeout", "3000000"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "cs336-lectures: error: --timeout must be at most 1,000,000 seconds, not 3e+06"]


@needs_kernel
def test_stopping_the_server_leaves_no_process_nor_folder(server, project):
    first_run(server)
    kernel = server.retracer._kernels["lec"]
    session, folder = kernel.process.pid, kernel.folder
    assert folder.is_dir()
    server.close()
    assert not folder.exists()
    assert not [entry for entry in os.listdir("/proc") if entry.isdigit() and in_session(entry, session)]


def in_session(pid: str, session: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return int(fields[3]) == session and fields[0] != "Z"


@needs_kernel
def test_a_fresh_trace_is_kept_but_the_kernel_warms_up(server, project):
    """No run is published at start for a fresh trace, yet the first edit already resumes."""
    from test_server import put_trace

    put_trace(project, "lec")
    before = (project / "traces" / "lec.json").read_bytes()
    listener = Events(server)
    server.start()
    wait_idle(server, "lec")
    assert server.lectures["lec"].generation == 0
    assert (project / "traces" / "lec.json").read_bytes() == before
    watching(server)  # a save before the watch is in place would go unseen
    (project / "lectures" / "lec.py").write_text(LECTURE.replace("scale(3)", "scale(5)"))
    event = wait_for(listener, "lec")
    assert event["state"] == "ok" and event["mode"] == "incremental", event
    assert trace_values(project, "b") == [10]


@needs_kernel
def test_saving_a_catalog_reruns_the_whole_lecture_in_the_new_language(project):
    """A catalog feeds every text() of a run, the first section's too: no checkpoint can show it."""
    from cs336_lectures import load_trace
    from cs336_lectures.runtime.i18n.catalog import Catalog, Entry, catalog_path, save_catalog
    from cs336_lectures.runtime.server.http_server import LectureServer

    lecture = project / "lectures" / "lec.py"
    lecture.write_text(LECTURE.replace("def intro():\n", "def intro():\n    text(\"# Hello\")\n")
                       .replace("import random\n", "import random\n\nfrom cs336_lectures import text\n"))
    started = LectureServer([lecture], project / "traces", port=0, viewer_dir=project / "viewer",
                            max_steps=100_000, timeout=60, log=lambda message: None)
    try:
        listener = first_run(started)
        save_catalog(Catalog("ru", lecture.name, [Entry("# Hello", "# Привет", where="intro")]), catalog_path(lecture, "ru"))
        event = wait_for(listener, "lec")
        assert event["state"] == "ok" and event["mode"] == "full", event
        assert event["note"]["fields"]["reason"] == {"template": "the {language} translation changed",
                                                     "fields": {"language": "ru"}}, event
        [rendering] = [r for step in load_trace(project / "traces" / "lec.json").steps for r in step.renderings]
        assert rendering["translations"]["ru"]["headings"] == [[1, "Привет", "hello"]]
    finally:
        started.close()


@needs_kernel
def test_a_run_that_kills_its_own_session_ends_in_one_error_and_the_next_save_works(server, project):
    """The lecture kills its kernel (its session leader), then the tracer process that replaces it:
    one error, no endless restarts; once the line is gone, saves run as before."""
    listener = first_run(server)
    lecture = project / "lectures" / "lec.py"
    lecture.write_text(LECTURE.replace('    print("body", b)\n', '    print("body", b)\n    import os, signal\n'
                                       '    os.kill(os.getsid(0), signal.SIGKILL)\n'))
    events = [wait_for(listener, "lec", ("running", "early", "ok", "error"))]
    while events[-1]["state"] not in ("ok", "error") and len(events) < 4:  # restarting for ever sends only "running"
        events.append(wait_for(listener, "lec", ("running", "early", "ok", "error")))
    assert [event["state"] for event in events] == ["running", "error"], events
    assert "killed by SIGKILL" in events[-1]["message"], events[-1]
    wait_idle(server, "lec")
    assert listener.live.empty(), listener.live.get()
    lecture.write_text(LECTURE.replace("scale(3)", "scale(8)"))
    event = wait_for(listener, "lec")
    assert event["state"] == "ok", event
    assert trace_values(project, "b") == [16]
