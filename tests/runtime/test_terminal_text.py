"""What the commands print is shown, never obeyed: control characters from lectures, traces and
file names come out as the literals that write them (cs336_lectures/runtime/terminal_text.py)."""

from __future__ import annotations

import io
import warnings

import pytest

from cs336_lectures.runtime.terminal_text import print_visible, show_warnings_visibly, visible


@pytest.mark.parametrize("raw, shown", [
    ("clip \x1b]52;c;aGVsbG8=\x07 end", "clip \\x1b]52;c;aGVsbG8=\\x07 end"),  # OSC 52: a clipboard write
    ("\x1b]0;title\x1b\\", "\\x1b]0;title\\x1b\\"),  # OSC 0 ended by ST: the window's title
    ("wipe \x1b[2J\r", "wipe \\x1b[2J\\r"),
    ("\x9b31m C1 \x85 \x7f \x00", "\\x9b31m C1 \\x85 \\x7f \\x00"),  # the 8-bit CSI, NEL, DEL, NUL
    ("tab\tand\nnewline · ünïcode", "tab\tand\nnewline · ünïcode"),
])
def test_control_characters_become_their_literals_and_the_rest_stays(raw, shown):
    assert visible(raw) == shown


def test_print_visible_writes_one_visible_line_to_stderr_unless_told(capsys):
    print_visible("error: \x1b]0;x\x07")
    stream = io.StringIO()
    print_visible("file \x1b[31m.py", stream)
    assert capsys.readouterr().err == "error: \\x1b]0;x\\x07\n"
    assert stream.getvalue() == "file \\x1b[31m.py\n"


def test_warning_lines_quoting_a_source_line_show_its_escapes(monkeypatch):
    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after the test
    show_warnings_visibly()
    wrapped = warnings.formatwarning
    show_warnings_visibly()  # every main() calls it: one wrapper, not one more per call
    assert warnings.formatwarning is wrapped
    line = warnings.formatwarning("ignoring '\x1b]0;T\x07'", UserWarning, "lecture.py", 4, "x = 1  # \x1b]0;T\x07")
    assert "\x1b" not in line and "\x07" not in line
    assert line == "lecture.py:4: UserWarning: ignoring '\\x1b]0;T\\x07'\n  x = 1  # \\x1b]0;T\\x07\n"
