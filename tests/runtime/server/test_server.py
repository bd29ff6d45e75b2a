"""The local server: its security rules, its API, and watching / re-tracing lectures."""

from __future__ import annotations

import argparse
import http.client
import json
import re
import time
from pathlib import Path

import pytest

from cs336_lectures.runtime.cli.serve import add_arguments
from cs336_lectures.runtime.server.http_server import LectureServer
from test_site import fake_viewer, sample_trace

GOOD_LECTURE = 'greeting = "hello"\nlength = len(greeting)\n'


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A folder with a viewer, a traces folder and one lecture; the current directory, as for a user."""
    monkeypatch.chdir(tmp_path)
    fake_viewer(tmp_path / "viewer")
    (tmp_path / "traces").mkdir()
    (tmp_path / "lectures").mkdir()
    (tmp_path / "lectures" / "lecture_t.py").write_text(GOOD_LECTURE)
    (tmp_path / "secret.txt").write_text("outside the served folders")
    return tmp_path


@pytest.fixture
def serve(workspace):
    """serve(lectures...) starts a LectureServer on a free port; all are closed after the test."""
    servers = []

    def start(*lectures: str, **options) -> LectureServer:
        server = LectureServer([workspace / lecture for lecture in lectures], workspace / "traces", port=0,
                               viewer_dir=workspace / "viewer",
                               log=lambda message: None, **options)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.close()


def request(server: LectureServer, method: str, path: str, body: object = None, token: str | None = None,
            host: str | None = None, headers: dict | None = None) -> tuple[int, bytes, http.client.HTTPResponse]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    all_headers = {"Host": host if host is not None else f"127.0.0.1:{server.port}", **(headers or {})}
    if token is not None:
        all_headers["X-CS336-Token"] = token
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    if data is not None:
        all_headers.setdefault("Content-Type", "application/json")
    connection.request(method, path, body=data, headers=all_headers)
    response = connection.getresponse()
    content = response.read()
    connection.close()
    return response.status, content, response


class Events:
    """The server's events from now on, after the latest one of each trace (what a new viewer gets)."""

    def __init__(self, server: LectureServer):
        self.live, self.replayed = server.hub.subscribe()

    def get(self, timeout: float) -> dict:
        return self.replayed.pop(0) if self.replayed else self.live.get(timeout=timeout)


def wait_for(listener: Events, trace: str, states=("ok", "error"), limit: float = 120) -> dict:
    """The next event of `trace` in one of `states`."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        event = listener.get(timeout=max(0.1, deadline - time.monotonic()))
        if event and event["trace"] == trace and event["state"] in states:
            return event
    raise AssertionError(f"no {states} event for {trace}")


def wait_idle(server: LectureServer, name: str, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while server.lectures[name].running:
        assert time.monotonic() < deadline, f"{name} is still being traced"
        time.sleep(0.05)


def traced_source(workspace: Path, name: str = "lecture_t") -> str:
    return json.loads((workspace / "traces" / f"{name}.json").read_text())["files"][0]["source"]


def traced_status(workspace: Path, name: str = "lecture_t") -> str:
    return json.loads((workspace / "traces" / f"{name}.json").read_text())["header"]["status"]


def put_trace(workspace: Path, name: str = "lecture_t") -> None:
    """A trace newer than its lecture, so the server does not trace at start."""
    (workspace / "traces" / f"{name}.json").write_text(json.dumps(sample_trace(name)))


# --- security -------------------------------------------------------------------------------


def test_foreign_or_missing_host_is_refused(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", f"[::1]:{server.port}"):
        assert request(server, "GET", "/api/info", host=host)[0] == 200
    for host in (f"evil.example:{server.port}", "127.0.0.1", f"127.0.0.1:{server.port + 1}", ""):
        for path in ("/", "/api/info", "/api/source?trace=lecture_t", "/traces/index.json"):
            status, body, _ = request(server, "GET", path, host=host)
            assert status == 403, (host, path)
            assert b"is not this server" in body
    assert request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token, host="evil.example")[0] == 403


def test_an_address_of_this_machine_is_its_own_host(serve, workspace):
    """With --host 0.0.0.0 other machines ask for the server by address; a rebinding attack
    needs a host name, so addresses with our port are served (writes still need the token)."""
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    for host in (f"192.0.2.7:{server.port}", f"[fd00::2]:{server.port}"):
        assert request(server, "GET", "/traces/index.json", host=host)[0] == 200, host
        page = {"Origin": f"http://{host}"}
        assert request(server, "POST", "/api/retrace?trace=lecture_t", host=host, headers=page)[0] == 403
        assert request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token, host=host, headers=page)[0] == 202
    for host in ("192.0.2.7", f"192.0.2.7:{server.port + 1}", f"192.0.2.7.nip.io:{server.port}"):
        assert request(server, "GET", "/traces/index.json", host=host)[0] == 403, host
    foreign_page = {"Origin": f"http://192.0.2.8:{server.port}"}
    assert request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token, host=f"192.0.2.7:{server.port}",
                   headers=foreign_page)[0] == 403


def test_posts_need_the_token(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    source = workspace / "lectures" / "lecture_t.py"
    for token in (None, "", "wrong", server.token[:-1]):
        assert request(server, "POST", "/api/source?trace=lecture_t", {"source": "boom = 1\n"}, token=token)[0] == 403
        assert request(server, "POST", "/api/retrace?trace=lecture_t", token=token)[0] == 403
    assert source.read_text() == GOOD_LECTURE
    assert not source.with_name("lecture_t.py.bak").exists()
    assert request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token)[0] == 202


def test_a_foreign_origin_is_refused(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    for origin in ("http://evil.example", "null", f"http://evil.example:{server.port}", f"https://127.0.0.1:{server.port}"):
        status, _, _ = request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token,
                               headers={"Origin": origin})
        assert status == 403, origin
        for path in ("/api/source?trace=lecture_t", "/api/info", "/traces/lecture_t.json", "/index.html"):
            assert request(server, "GET", path, headers={"Origin": origin})[0] == 403, (origin, path)
    own = {"Origin": f"http://localhost:{server.port}"}
    assert request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token, headers=own)[0] == 202
    assert request(server, "GET", "/api/source?trace=lecture_t", headers=own)[0] == 200


def test_no_path_leaves_the_served_folders(serve, workspace):
    put_trace(workspace)
    outside = workspace / "secret.txt"
    (workspace / "traces" / "escape.json").symlink_to(outside)
    (workspace / "viewer" / "js" / "up").symlink_to(workspace)
    (workspace / "traces" / ".hidden.json").write_text("{}")
    server = serve("lectures/lecture_t.py")
    for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/traces/../secret.txt", "/traces/%2E%2E/secret.txt",
                 "/traces/assets/..%2f..%2fsecret.txt", "/js/..%5c..%5csecret.txt", "/traces/escape.json",
                 "/js/up/secret.txt", "/traces//etc/passwd", "/traces/.hidden.json", "/nothing.html",
                 "/traces/%00.json"):
        status, body, _ = request(server, "GET", path)
        assert status in (403, 404), path
        assert b"outside the served folders" not in body
    assert request(server, "GET", "/js/main.js")[0] == 200


def test_only_registered_lectures_can_be_read_edited_or_retraced(serve, workspace):
    put_trace(workspace)
    (workspace / "lectures" / "other.py").write_text("x = 1\n")
    server = serve("lectures/lecture_t.py")
    for name in ("other", "nope", "../secret", ""):
        assert request(server, "GET", f"/api/source?trace={name}")[0] == 404
        assert request(server, "POST", f"/api/source?trace={name}", {"source": "x = 2\n"}, token=server.token)[0] == 404
        assert request(server, "POST", f"/api/retrace?trace={name}", token=server.token)[0] == 404
    assert (workspace / "lectures" / "other.py").read_text() == "x = 1\n"


def test_bad_edit_bodies_are_refused(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    for body in (b"not json", json.dumps({"text": "x"}).encode(), json.dumps({"source": 3}).encode()):
        assert request(server, "POST", "/api/source?trace=lecture_t", body, token=server.token)[0] == 400
    too_long = {"Content-Length": str(6 * 1024 * 1024)}  # refused before the body is read
    assert request(server, "POST", "/api/source?trace=lecture_t", b"{}", token=server.token, headers=too_long)[0] == 413
    assert (workspace / "lectures" / "lecture_t.py").read_text() == GOOD_LECTURE


# --- API ------------------------------------------------------------------------------------


def test_serves_viewer_traces_and_api(serve, workspace):
    put_trace(workspace)
    (workspace / "traces" / "assets").mkdir()
    (workspace / "traces" / "assets" / "abc.svg").write_text("<svg/>")
    server = serve("lectures/lecture_t.py")
    status, body, response = request(server, "GET", "/")
    assert status == 200 and b'<script type="module"' in body
    assert response.getheader("Content-Type").startswith("text/html")
    status, body, response = request(server, "GET", "/js/main.js?v=2")
    assert status == 200 and response.getheader("Content-Type").startswith("text/javascript")
    assert response.getheader("X-CS336-Server") == "1"  # how live.js tells this server from a static host
    assert request(server, "GET", "/traces/assets/abc.svg")[2].getheader("Content-Type") == "image/svg+xml"
    assert json.loads(request(server, "GET", "/traces/index.json")[1])["traces"][0]["name"] == "lecture_t"
    assert json.loads(request(server, "GET", "/traces/lecture_t.json")[1])["header"]["title"] == "lecture_t"
    assert json.loads(request(server, "GET", "/api/info")[1]) == {
        "server": True, "lectures": {"lecture_t": "lectures/lecture_t.py"}}
    assert json.loads(request(server, "GET", "/api/source?trace=lecture_t")[1]) == {
        "path": "lectures/lecture_t.py", "source": GOOD_LECTURE}
    assert request(server, "GET", "/api/nothing")[0] == 404
    assert request(server, "HEAD", "/index.html")[0] == 200


def test_event_stream_replays_the_latest_state_then_streams(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    server.hub.publish({"trace": "lecture_t", "state": "error", "generation": 4, "message": "boom"})
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("GET", "/api/events", headers={"Host": f"localhost:{server.port}"})
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Content-Type").startswith("text/event-stream")

    def next_event() -> dict:
        while True:
            line = response.fp.readline().decode()
            if line.startswith("data: "):
                return json.loads(line[len("data: "):])

    assert next_event() == {"trace": "lecture_t", "state": "error", "generation": 4, "message": "boom", "replay": True}
    server.hub.publish({"trace": "lecture_t", "state": "running", "generation": 5})
    assert next_event() == {"trace": "lecture_t", "state": "running", "generation": 5}
    connection.close()


# --- tracing, watching, editing ---------------------------------------------------------------


def test_traces_a_missing_lecture_at_start_and_not_a_fresh_one(serve, workspace):
    (workspace / "lectures" / "fresh.py").write_text("y = 2\n")
    put_trace(workspace, "fresh")
    server = serve("lectures/lecture_t.py", "lectures/fresh.py")
    assert wait_for(Events(server), "lecture_t")["state"] == "ok"
    assert traced_status(workspace) == "ok" and traced_source(workspace) == GOOD_LECTURE
    assert server.lectures["fresh"].generation == 0
    assert [entry["name"] for entry in json.loads(request(server, "GET", "/traces/index.json")[1])["traces"]] == [
        "fresh", "lecture_t"]


def test_edit_keeps_a_backup_and_retraces(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    listener = Events(server)
    edited = GOOD_LECTURE + "shout = greeting.upper()\n"
    status, body, _ = request(server, "POST", "/api/source?trace=lecture_t", {"source": edited}, token=server.token)
    assert status == 202 and json.loads(body)["queued"] is True
    lecture = workspace / "lectures" / "lecture_t.py"
    assert lecture.read_text() == edited
    assert lecture.with_name("lecture_t.py.bak").read_text() == GOOD_LECTURE
    running = wait_for(listener, "lecture_t", ("running",))
    done = wait_for(listener, "lecture_t")
    assert done["state"] == "ok" and done["generation"] == running["generation"] == 1, done
    assert traced_source(workspace) == edited
    wait_idle(server, "lecture_t")
    assert server.lectures["lecture_t"].generation == 1  # the watcher does not trace the saved file again


def test_saving_the_file_retraces_and_publishes(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    listener = Events(server)
    changed = GOOD_LECTURE + "doubled = length * 2\n"
    (workspace / "lectures" / "lecture_t.py").write_text(changed)
    assert wait_for(listener, "lecture_t")["state"] == "ok"
    assert traced_source(workspace) == changed


def test_failed_retrace_keeps_the_last_good_trace_and_reports_why(serve, workspace):
    server = serve("lectures/lecture_t.py")
    listener = Events(server)
    assert wait_for(listener, "lecture_t")["state"] == "ok"
    good = (workspace / "traces" / "lecture_t.json").read_bytes()
    lecture = workspace / "lectures" / "lecture_t.py"

    lecture.write_text(GOOD_LECTURE + "def broken(:\n")
    event = wait_for(listener, "lecture_t")
    assert event["state"] == "error" and re.search(r"lecture_t\.py:3: syntax error", event["message"]), event
    assert (workspace / "traces" / "lecture_t.json").read_bytes() == good

    lecture.write_text(GOOD_LECTURE + "raise ValueError('lecture bug 42')\n")
    event = wait_for(listener, "lecture_t")
    assert event["state"] == "error" and "lecture bug 42" in event["message"], event
    assert "installed" not in event
    assert (workspace / "traces" / "lecture_t.json").read_bytes() == good
    assert not [path for path in (workspace / "traces").iterdir() if path.name.startswith(".")]  # no leftovers


def test_a_failing_lecture_without_a_good_trace_still_gets_one(serve, workspace):
    (workspace / "lectures" / "lecture_t.py").write_text("value = 1\nraise RuntimeError('first run fails')\n")
    server = serve("lectures/lecture_t.py")
    listener = Events(server)
    event = wait_for(listener, "lecture_t")
    assert event["state"] == "error" and event["installed"] is True
    assert "first run fails" in event["message"] and "Traceback" in event["message"]
    assert traced_status(workspace) == "error"  # better than no trace: the viewer shows where it failed


def test_requests_while_tracing_coalesce_into_one_more_run(serve, workspace):
    gate = workspace / "gate"
    slow = f"import os, time\nwhile not os.path.exists({str(gate)!r}):\n    time.sleep(0.05)\nfinished = True\n"
    (workspace / "lectures" / "lecture_t.py").write_text(slow)
    server = serve("lectures/lecture_t.py")
    listener = Events(server)
    first = wait_for(listener, "lecture_t", ("running",))
    assert first["state"] == "running" and first["generation"] == 1
    for _ in range(3):
        assert request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token)[0] == 202
    gate.write_text("open")
    done = wait_for(listener, "lecture_t")
    assert done["state"] == "ok" and done["generation"] == 1, done
    wait_idle(server, "lecture_t")
    assert server.lectures["lecture_t"].generation == 2
    assert server.hub.latest["lecture_t"]["state"] == "ok"
    assert server.hub.latest["lecture_t"]["generation"] == 2


def test_the_tracer_limits_apply_to_every_retrace(serve, workspace):
    (workspace / "lectures" / "lecture_t.py").write_text("total = 0\nfor i in range(1000):\n    total += i\n")
    server = serve("lectures/lecture_t.py", max_steps=20)
    event = wait_for(Events(server), "lecture_t")
    assert event["state"] == "error" and event["installed"] is True, event
    assert traced_status(workspace) == "max_steps"


def test_serve_bounds_every_retrace_by_default(workspace):
    """An edit that loops forever must end as a failed re-trace, so `serve` passes limits unasked."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["lectures/lecture_t.py"])
    server = LectureServer([Path(args.lectures[0])], workspace / "traces", port=0, viewer_dir=workspace / "viewer",
                           max_steps=args.max_steps, timeout=args.timeout, log=lambda message: None)
    try:
        command = server.retracer.processes.command(server.lectures["lecture_t"], workspace / "out")
    finally:
        server.server_close()
    assert int(command[command.index("--max-steps") + 1]) > 0
    assert float(command[command.index("--timeout") + 1]) > 0
