"""What the server says of a run from its trace and the tracer's exit (server/traces_folder.py)."""

from __future__ import annotations

import signal

from cs336_lectures.runtime.server.traces_folder import failure_message, read_trace


def _trace(status: str, message: str | None = None) -> dict:
    header = {"status": status, **({"message": message} if message else {})}
    return {"header": header, "steps": [[0, 1]]}


def test_a_tracer_killed_after_writing_a_good_trace_is_named_killed_not_ok():
    """A lecture that signals its own session can end the tracer once its trace is written."""
    message = failure_message(_trace("ok"), "", -signal.SIGKILL)
    assert message.startswith("the run was killed by SIGKILL") and "status ok" not in message


def test_a_failed_lecture_says_its_own_message_and_the_tracers_stderr_only_when_it_crashed():
    assert failure_message(_trace("error", "ValueError: x (lec.py:3)"), "noise", 1) == "ValueError: x (lec.py:3)"
    assert failure_message(_trace("timeout"), "Traceback ...\nBoom", 2).splitlines() == [
        "the lecture stopped with status timeout", "Traceback ...", "Boom"]


def test_a_trace_file_json_cannot_read_is_no_trace(tmp_path):
    for name, text in (("deep", "[" * 20_000 + "]" * 20_000), ("digits", '{"header": {}, "n": ' + "9" * 5_000 + "}"),
                       ("cut", '{"header": {')):
        (tmp_path / f"{name}.json").write_text(text)
        assert read_trace(tmp_path / f"{name}.json") is None, name
    (tmp_path / "good.json").write_text('{"header": {"status": "ok"}}')
    assert read_trace(tmp_path / "good.json") == {"header": {"status": "ok"}}
