"""Start-up of `cs336-lectures serve`: the URL comes first, stale lectures are traced after, and
the list of lectures says which are being traced meanwhile (the API and the page)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from cs336_lectures.runtime.server.http_server import LectureServer
from test_server import Events, request
from test_site import sample_trace
from static_site import VIEWER

# Held until the test creates `release` beside it: the test sees the run in progress. The wait is
# in a module beside the lecture, which is not traced (a traced loop would record a step a turn).
HELD_LECTURE = """from hold import until_released

def main():
    until_released(__file__)
    done = True  # @inspect done
"""
HOLD_MODULE = """import time
from pathlib import Path

def until_released(lecture):
    while not (Path(lecture).parent / "release").exists():
        time.sleep(0.01)
"""


@pytest.fixture
def held(tmp_path):
    """A lecture folder with `stale.py` (its trace older than the file) and `new.py` (no trace),
    both held in their run, and a server over them; the server is closed after the test."""
    lectures, traces = tmp_path / "lectures", tmp_path / "traces"
    lectures.mkdir()
    traces.mkdir()
    (lectures / "hold.py").write_text(HOLD_MODULE)
    for name in ("stale", "new"):
        (lectures / f"{name}.py").write_text(HELD_LECTURE)
    (traces / "stale.json").write_text(json.dumps(sample_trace("stale")))
    os.utime(traces / "stale.json", (1, 1))  # older than its lecture: stale
    server = LectureServer([lectures / "stale.py", lectures / "new.py"], traces, port=0, viewer_dir=VIEWER,
                           log=lambda message: None)
    events = Events(server)
    yield server.start(), events, lectures / "release"
    (lectures / "release").touch()
    server.close()


def wait_for_both(events: Events, states: tuple[str, ...], limit: float = 180) -> dict[str, str]:
    """The first event in `states` of each of the two lectures, whichever comes first."""
    seen: dict[str, str] = {}
    deadline = time.monotonic() + limit
    while len(seen) < 2:
        event = events.get(timeout=max(0.1, deadline - time.monotonic()))
        if event["trace"] in ("stale", "new") and event["state"] in states:
            seen.setdefault(event["trace"], event["state"])
    return seen


def index(server: LectureServer) -> dict[str, dict]:
    status, body, _ = request(server, "GET", "/traces/index.json")
    assert status == 200
    return {entry["name"]: entry for entry in json.loads(body)["traces"]}


def test_the_index_marks_lectures_being_traced_until_their_trace_is_written(held):
    server, events, release = held
    wait_for_both(events, ("running",))
    listed = index(server)
    assert listed["stale"]["running"] is True and listed["stale"]["status"] == "ok"  # the old trace stays readable
    assert listed["stale"]["num_steps"] == 3
    assert listed["new"] == {"name": "new", "file": "new.json", "title": "new", "num_steps": 0, "created": None,
                             "status": "running", "running": True}
    release.touch()
    assert wait_for_both(events, ("ok", "error")) == {"stale": "ok", "new": "ok"}
    listed = index(server)
    assert not any("running" in entry for entry in listed.values())
    assert listed["new"]["status"] == "ok" and listed["new"]["num_steps"] > 0
    assert listed["stale"]["num_steps"] != 3  # the new trace, not the old one


def test_the_page_shows_lectures_being_traced_and_redraws_when_they_are_done(held, page):
    server, events, release = held
    wait_for_both(events, ("running",))
    page.goto(server.url)
    page.wait_for_selector(".trace-card.running >> nth=1")
    cards = page.locator(".trace-card")
    assert cards.count() == 2
    for card in (cards.nth(0), cards.nth(1)):
        assert card.locator(".badge-running").inner_text() == "tracing now…"
    # A stale lecture keeps its last trace to open meanwhile; one without a trace offers no link.
    assert page.locator("a[data-trace='stale']").count() == 1
    assert page.locator("a[data-trace='new']").count() == 0
    release.touch()
    # live.js reloads the list when a trace is written (once per lecture): wait for the list after both.
    page.wait_for_function("document.querySelectorAll('a.trace-link .badge-ok').length === 2")
    assert page.locator(".trace-card.running").count() == 0 and page.locator("a[data-trace='new']").count() == 1
