"""`cs336-lectures show`: one step printed at fixed widths (snapshots in tests/snapshots/), the
interactive keys driven through a pseudo-terminal, and no waiting when there is no terminal.

Set UPDATE_SNAPSHOTS=1 to rewrite the snapshots after a deliberate change (then read them)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from cs336_lectures.runtime.readers.navigation import TraceModel, read_trace
from cs336_lectures.runtime.readers.terminal import StepView, search

ROOT = Path(__file__).resolve().parents[3]
SNAPSHOTS = Path(__file__).resolve().parents[2] / "snapshots"
LECTURE = '''import torch

from cs336_lectures import link, text


def main():
    text("# Terminal demo")
    text("Each token costs $6 \\\\times N$ FLOPs; the mean loss is $\\\\frac{1}{n} \\\\sum_i \\\\ell_i$.")
    x = torch.arange(6.0).reshape(2, 3)  # @inspect x
    counts = {"a": 1, "b": 2}  # @inspect counts
    print("hello from the lecture")
    link(title="Attention Is All You Need", url="https://arxiv.org/abs/1706.03762")
    total = add(2, 3)  # @inspect total
    text("## The end")
    text("- a list item with `code`")


def add(a, b):
    c = a + b  # @inspect c
    return c
'''
FRAME_STEP = re.compile(r"step (\d+) of \d+ \(")  # counted from 1, as in the web viewer
ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLOR = re.compile(r"\x1b\[[0-9;]*(3[0-9]|9[0-7])(;[0-9]+)*m")
CLEAR_SCREEN = "\x1b[H\x1b[2J"


def cli(*args: str, cwd: Path, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "cs336_lectures", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300, **kwargs)


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("terminal")
    (folder / "terminal_demo.py").write_text(LECTURE)
    result = cli("trace", "terminal_demo.py", "-o", "out", "--quiet", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder / "out" / "terminal_demo.json"


def step_at(model: TraceModel, needle: str) -> int:
    return next(s for s in model.stops if needle in model.lines[model.step_file[s]][model.line_of(s) - 1])


@pytest.mark.parametrize("width", [80, 50])
@pytest.mark.parametrize("where", ["print(", "c = a + b", "text(\"## The end"])
def test_one_step_matches_its_snapshot(traced, where, width):
    model = TraceModel(read_trace(traced))
    result = cli("show", str(traced.name), "--step", str(step_at(model, where) + 1), "--width", str(width),
                 cwd=traced.parent, env={"NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    assert all(len(line) <= width for line in result.stdout.splitlines())
    name = re.sub(r"\W+", "_", where).strip("_")
    snapshot = SNAPSHOTS / f"show_{name}_{width}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(result.stdout)
    assert result.stdout == snapshot.read_text()


def test_a_step_shows_math_as_text_values_and_output(traced):
    model = TraceModel(read_trace(traced))
    result = cli("show", str(traced), "--step", str(step_at(model, "print(") + 1), "--width", "100",
                 cwd=traced.parent, env={"NO_COLOR": "1"})
    out = result.stdout
    assert "6 × N FLOPs" in out and "(1)/(n) Σ_i ℓ_i" in out and "$" not in out
    assert "▶" in out and "hello from the lecture" in out
    assert "x = tensor float32 [2, 3]:" in out and "counts = {'a': 1, 'b': 2}" in out


def test_section_and_errors(traced):
    result = cli("show", str(traced), "--section", "add", cwd=traced.parent, env={"NO_COLOR": "1"})
    assert result.returncode == 0 and "main › add" in result.stdout
    result = cli("show", str(traced), "--section", "nowhere", cwd=traced.parent)
    assert result.returncode == 2
    assert result.stderr.strip() == ("cs336-lectures show: error: no function or heading 'nowhere' in the trace "
                                     "(functions: add, main)")
    result = cli("show", str(traced), "--width", "5", cwd=traced.parent)
    assert result.returncode == 2 and "argument --width: must be a number of columns, at least 30, not '5'" in result.stderr
    result = cli("show", "missing.json", cwd=traced.parent)
    assert result.returncode == 2 and result.stderr.strip() == "cs336-lectures show: error: missing.json: no such trace file"


def test_a_lecture_or_a_course_trace_in_place_of_a_trace_says_what_to_do(traced):
    folder = traced.parent.parent
    (folder / "course.json").write_text('{"files": {"lecture_01.py": ""}, "steps": []}')
    for given, message in [
        ("terminal_demo.py", "terminal_demo.py: a lecture, not a trace: trace it first "
                             "(cs336-lectures trace terminal_demo.py)"),
        ("course.json", "course.json: a trace in the Stanford course's format: convert it first "
                        "(cs336-lectures import course.json -o DIR)"),
    ]:
        result = cli("show", given, cwd=folder)
        assert (result.returncode, result.stderr.strip()) == (2, f"cs336-lectures show: error: {message}")


def test_without_a_terminal_it_prints_the_first_step_and_exits(traced):
    result = cli("show", str(traced), cwd=traced.parent, stdin=subprocess.DEVNULL)
    model = TraceModel(read_trace(traced))
    assert result.returncode == 0
    assert f"step {model.stops[0] + 1} of {len(model.steps)} (1 of {len(model.stops)} stops)" in result.stdout


class Terminal:
    """The viewer running in a pseudo-terminal of 80 x 24; frames are read back as text."""

    def __init__(self, trace: Path, env: dict):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        environment = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "NO_COLOR")}
        environment.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", **env)
        self.process = subprocess.Popen([sys.executable, "-m", "cs336_lectures", "show", str(trace)],
                                        stdin=slave, stdout=slave, stderr=slave, env=environment,
                                        start_new_session=True)
        os.close(slave)
        self.master = master
        self.screen = ""

    def wait_for(self, pattern: re.Pattern | str, deadline_s: float = 60) -> str:
        """Read output until the last frame matches `pattern`; that frame (fails after the deadline)."""
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            frame = self.screen.rsplit("\x1b[2J", 1)[-1]
            if re.search(pattern, frame, re.DOTALL):
                return frame
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    self.screen += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # the viewer exited
                    break
        pytest.fail(f"no frame matching {pattern!r}; last output: {self.screen[-800:]!r}")

    def press(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> int:
        try:
            return self.process.wait(timeout=60)
        finally:
            os.close(self.master)


def current_step(frame: str) -> int:
    return int(FRAME_STEP.search(frame).group(1)) - 1


def test_keys_move_as_in_the_web_viewer(traced):
    model = TraceModel(read_trace(traced))
    terminal = Terminal(traced, env={})
    try:
        frame = terminal.wait_for(r"step \d+ of \d+ \(.*q quit")
        s = current_step(frame)
        assert s == model.stops[0] and COLOR.search(frame)
        for key, move in [("l", model.next), ("l", model.next), ("j", lambda t: model.step_over(t, 1)),
                          ("j", lambda t: model.step_over(t, 1)), ("h", model.previous)]:
            expected = move(s)
            terminal.press(key)
            s = current_step(terminal.wait_for(rf"step {expected + 1} of "))
        into_add = model.next(step_at(model, "total = add"))
        terminal.press(f"g{into_add + 1}\r")  # as the page and its URL number it
        s = current_step(terminal.wait_for(rf"step {into_add + 1} of .*main › add"))
        terminal.press("u")
        s = current_step(terminal.wait_for(rf"step {model.step_out(s) + 1} of "))
        terminal.press("k")
        s = current_step(terminal.wait_for(rf"step {model.step_over(s, -1) + 1} of "))
        terminal.press("u")
        terminal.wait_for("Already in the outermost call.")
        terminal.press("/the end\r")
        terminal.wait_for(rf"step {step_at(model, 'The end') + 1} of ")
        terminal.press("/no such text\r")
        terminal.wait_for("not found: no such text")
        terminal.press("\x1b[D")  # the left arrow steps back, as in the web viewer
        terminal.wait_for(rf"step {model.previous(step_at(model, 'The end')) + 1} of ")
        terminal.press("q")
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()


def test_searching_again_moves_on_from_a_step_whose_own_line_matches(traced):
    """`n` from a match goes to the next one (wrapping around), never stays where it is."""
    model = TraceModel(read_trace(traced))
    view = StepView(model, traced.parent, traced.name)
    matches = [s for s in model.stops if "text(" in model.lines[model.step_file[s]][model.line_of(s) - 1]]
    assert len(matches) == 4
    s = matches[0]
    for expected in matches[1:] + matches[:1]:
        s = search(model, view, s, "TEXT(")
        assert s == expected
    rendered = step_at(model, "link(title=")
    assert search(model, view, model.stops[0], "attention is all") == rendered  # what a step shows counts too
    assert search(model, view, rendered, "attention is all") == rendered  # the only match: found again by wrapping
    assert search(model, view, s, "no such text") == -1


def test_no_color_in_the_interactive_viewer(traced):
    terminal = Terminal(traced, env={"NO_COLOR": "1"})
    try:
        frame = terminal.wait_for(r"q quit")
        assert not COLOR.search(frame) and "▶" in frame
        terminal.press("q")
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()


def test_a_version_1_trace_shows_its_html_as_text(tmp_path):
    import json

    from trace_builders import demo_trace

    (tmp_path / "demo.json").write_text(json.dumps(demo_trace()))
    result = cli("show", "demo.json", "--section", "links and", "--width", "80", cwd=tmp_path, env={"NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    assert "Links and images · main" in result.stdout and "<h2" not in result.stdout
    assert "[plot: a rising line — inline in the trace]" in result.stdout
    assert "[image: missing.png — unavailable: could not fetch missing.png" in result.stdout
    assert "secret = 42" not in result.stdout  # a @hide line


def test_the_frame_follows_the_terminal_size(traced):
    import signal

    terminal = Terminal(traced, env={"NO_COLOR": "1"})
    try:
        frame = ESCAPE.sub("", terminal.wait_for(r"q quit")).replace("\r", "")
        assert max(len(line) for line in frame.split("\n")) == 80
        fcntl.ioctl(terminal.master, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 60, 0, 0))
        terminal.process.send_signal(signal.SIGWINCH)  # the viewer has no controlling terminal to get it from
        # a frame can arrive in more than one read: wait for its last line (the keys, cut to 60
        # columns with an ellipsis), not only its 60-wide top
        frame = ESCAPE.sub("", terminal.wait_for(r"^─{5,}.{0,54}─\r?\n.*l/h step[^\n]*…")).replace("\r", "")
        assert max(len(line) for line in frame.split("\n")) == 60 and frame.count("\n") == 19
        terminal.process.send_signal(signal.SIGINT)  # Ctrl-C (the pty is not its controlling terminal)
        assert terminal.close() == 130
        assert "Traceback" not in terminal.screen
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()


HOSTILE = '''from cs336_lectures import link, text


def main():
    text("Copy this: \\x1b]52;c;ZWNobyBvd25lZA==\\x07 done")  # OSC 52 writes the clipboard
    title = "\\x1b]0;retitled\\x07"  # @inspect title
    print("about to \\x1b[2J clear the screen")
    link(title="Paper \\x1b]0;link\\x07", url="https://example.com/\\x1b[2J")
    raise ValueError("bad \\x1b]0;error\\x07 thing")  # a raw one in the code: \x1b]0;code\x07
'''
# What a terminal would obey: OSC (window title, clipboard), BEL, clearing the screen.
OBEYED = re.compile(r"\x1b\]|\x07|\x1b\[2J|\x9d")


def hostile_trace(folder: Path) -> Path:
    """A trace whose every kind of text holds escape sequences, the file name and title included."""
    import json

    (folder / "hostile.py").write_text(HOSTILE, encoding="utf-8")
    result = cli("trace", "hostile.py", "-o", "out", "--quiet", cwd=folder)
    assert result.returncode == 1, result.stderr
    path = folder / "out" / "hostile.json"
    raw = json.loads(path.read_text())
    raw["header"]["title"] = "Hostile \x1b]0;title\x07"
    raw["files"][0]["path"] = "hostile\x1b]0;path\x07.py"
    path.write_text(json.dumps(raw))
    return path


def test_text_from_a_trace_is_shown_not_obeyed_when_printed(tmp_path):
    trace = hostile_trace(tmp_path)
    model = TraceModel(read_trace(trace))
    shown = ""
    for s in model.stops:
        result = cli("show", str(trace), "--step", str(s + 1), "--width", "200", cwd=tmp_path)  # counted from 1
        assert result.returncode == 0, result.stderr
        shown += result.stdout
    assert not OBEYED.search(shown)
    for seen in (r"Copy this: \x1b]52;c;ZWNobyBvd25lZA==\x07 done", r"'\x1b]0;retitled\x07'",
                 r"about to \x1b[2J clear the screen", r"Paper \x1b]0;link\x07", r"https://example.com/\x1b[2J",
                 r"ValueError: bad \x1b]0;error\x07 thing", r"a raw one in the code: \x1b]0;code\x07",
                 r"Hostile \x1b]0;title\x07", r"hostile\x1b]0;path\x07.py"):
        assert seen in shown, seen
    piped = cli("show", str(trace), cwd=tmp_path, stdin=subprocess.DEVNULL)  # no terminal: the first step
    assert piped.returncode == 0 and r"Hostile \x1b]0;title\x07" in piped.stdout and not OBEYED.search(piped.stdout)


def test_file_names_and_errors_are_shown_not_obeyed(tmp_path):
    trace = hostile_trace(tmp_path)
    named = tmp_path / "named\x1b]0;file\x07.json"
    named.write_text("{not json")
    for args in ([str(named)], [str(trace), "--section", "no\x1b]0;such\x07section"]):
        result = cli("show", *args, cwd=tmp_path)
        assert result.returncode == 2 and result.stderr.startswith("cs336-lectures show: error: ")
        assert not OBEYED.search(result.stderr) and r"\x1b]0;" in result.stderr


def test_text_from_a_trace_is_shown_not_obeyed_interactively(tmp_path):
    trace = hostile_trace(tmp_path)
    model = TraceModel(read_trace(trace))
    terminal = Terminal(trace, env={})
    try:
        terminal.wait_for(r"q quit")
        for s in model.stops[1:]:
            terminal.press("l")
            terminal.wait_for(rf"step {s + 1} of .*q quit")
        terminal.press("q")
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    screen = terminal.screen.replace(CLEAR_SCREEN, "")  # the viewer's own clearing, once a frame
    assert not OBEYED.search(screen)
    assert r"Copy this: \x1b]52;c;ZWNobyBvd25lZA==\x07 done" in screen and r"Hostile \x1b]0;title\x07" in screen
