"""The real `cs336-lectures serve` for the live-mode tests: a subprocess over a folder holding one
lecture, live_lecture.py, on a free port. The tests get it through the `serve_live` and
`serve_module_live` fixtures (conftest.py), which stop it afterwards."""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

# What a live server serves unless a test gives its own source.
LECTURE = '''from cs336_lectures import text


def main():
    text("# A live lecture")
    greeting = "hello"  # @inspect greeting
    text("First version of the lecture")
    total = len(greeting) + 1  # @inspect total
    text("The end")


if __name__ == "__main__":
    main()
'''
TOTAL_LINE = 8  # the line `total = ...`, where the reader stands while editing
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)")


class LiveServer:
    """`cs336-lectures serve` over a temporary copy of a lecture, on a free port."""

    def __init__(self, folder: Path, source: str = LECTURE, fails: bool = False):
        self.folder = folder
        self.lecture = folder / "live_lecture.py"
        self.trace = folder / "traces" / "live_lecture.json"
        self.lecture.write_text(source)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cs336_lectures", "serve", "live_lecture.py", "--traces", "traces",
             "--port", "0", "--no-browser", "--timeout", "120"],
            cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        match = self._wait_for_line(URL)
        self.url, self.port, self.token = match.group(0), int(match.group(1)), match.group(2)
        if not fails:
            self._wait(self.trace.exists, "the first trace")
        else:  # a lecture that cannot be traced: its first run fails
            self._wait_for_line(re.compile(r"live_lecture: failed"), limit=180)

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)

    def _wait_for_line(self, pattern: re.Pattern, limit: float = 60) -> re.Match:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                assert self.process.poll() is None, "the server exited:\n" + "".join(self.output)
                continue
            self.output.append(line)
            if match := pattern.search(line):
                return match
        raise AssertionError("the server printed no URL:\n" + "".join(self.output))

    def _wait(self, condition, what: str, limit: float = 180) -> None:
        deadline = time.monotonic() + limit
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            assert self.process.poll() is None, "the server exited"
            time.sleep(0.1)

    def close(self) -> None:
        self.process.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
