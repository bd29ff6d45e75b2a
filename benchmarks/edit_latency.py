"""Edit -> updated view: how long a student waits after saving a change inside one section.

Serves a copy of each shipped lecture (`cs336-lectures serve`, in this process), opens the viewer
in headless Chromium at a step of the section, then saves edits of a text() line of that section
the way editors do (write a temporary file, rename it over the lecture) and times each from just
before the save to the page showing the new text. Three ways, measured in the same run:

- incremental: the warm kernel resumes from the checkpoint before the section; the page shows the
  edit as soon as the section has run again (the server's early view), and the whole trace once
  the sections after it have run too (both are printed);
- kernel, whole lecture: the same edit plus a module-level change, so the kernel re-runs it all
  (its fallback, in a process forked from the warm kernel);
- new process: the server as it was before the kernel, `cs336-lectures trace` in a subprocess
  (the peer: Python's start-up, imports, every section).

Verification is on, as `serve` runs by default: after each incremental run the benchmark waits
for the whole run that checks it (and fails if it corrected the resumed run), so every measured
edit is also an exactness check.

Target: incremental median <= 0.5 s on a 2-core machine (stretch 0.3 s).

    python benchmarks/edit_latency.py [--edits 5] [--lecture lecture_01:tokenization_summary ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
DEFAULT_LECTURES = ["lecture_01:tokenization_examples", "lecture_01:bpe_encoding", "lecture_01:tokenization_summary",
                    "lecture_02:tensor_storage", "lecture_02:optimizer_state_table",
                    "lecture_02:exercise_napkin_math_rtx4080"]
TARGET_S = 0.5
WAIT_MS = 300_000


def save(path: Path, text: str) -> None:
    """Write and rename over, as editors save."""
    temporary = path.with_name(f".{path.name}.saving")
    temporary.write_text(text)
    os.replace(temporary, path)


def edited_source(source: str, section: str, marker: str, whole: bool) -> str:
    """The lecture with the first text("...") of `section` starting with `marker`; `whole` adds a
    module-level change too, which no checkpoint can absorb."""
    start = source.index(f"\ndef {section}(")
    at = source.index('text("', start) + len('text("')
    changed = source[:at] + marker + " " + source[at:]
    return changed + f"\n_EDIT_FOR_THE_BENCHMARK = {marker!r}\n" if whole else changed


class Finished:
    """The next finished run (ok or error) of a trace, from the server's events."""

    def __init__(self, server):
        self.events, _ = server.hub.subscribe()

    def wait(self, trace: str, states: tuple[str, ...] = ("ok", "error")) -> dict:
        while True:
            event = self.events.get(timeout=WAIT_MS / 1000)
            if event and event["trace"] == trace and event["state"] in states:
                return event

    def verdict(self, trace: str, run: dict) -> None:
        """Wait for the whole run that checks a resumed `run`; a correction is a bug in the resume rule."""
        if run.get("verification") != "pending":
            return
        checked = self.wait(trace, ("ok", "error", "verified"))
        if checked.get("verification") != "verified":
            raise RuntimeError(f"the resumed run was not verified: {checked.get('message')}")


def step_in(trace: dict, section: str) -> int:
    for index, step in enumerate(trace["steps"]):
        if trace["functions"][trace["calls"][step[0]][0]][1] == section:
            return index
    raise ValueError(f"no step of {section}")


def measure(page, server, lecture: Path, section: str, edits: int, mode: str) -> tuple[list[float], list[float]]:
    """Seconds from each save to the page showing it, and to the whole trace being installed."""
    server.retracer.use_kernels = mode != "new process"
    original = lecture.read_text()
    times, wholes = [], []
    for number in range(edits):
        marker = f"EDIT-{mode.split()[0].upper()}-{number}-{time.monotonic_ns()}"
        listener = Finished(server)
        started = time.perf_counter()
        save(lecture, edited_source(original, section, marker, whole=mode == "kernel, whole lecture"))
        page.wait_for_function("(marker) => document.body.textContent.includes(marker)", arg=marker,
                               timeout=WAIT_MS, polling="raf")
        times.append(time.perf_counter() - started)
        event = listener.wait(lecture.stem)
        wholes.append(time.perf_counter() - started)
        expected = {"incremental": "incremental", "kernel, whole lecture": "full", "new process": None}[mode]
        if event.get("mode") != expected:
            raise RuntimeError(f"{mode}, edit {number + 1}: the server ran {event.get('mode')}: {event.get('message')}")
        # With verification on (as `serve` runs), a whole run checks each resumed one. The next save
        # waits for its verdict: a save during the check cancels it, and the check's whole run of a
        # newer file would leave checkpoints that make that save's run no longer the one measured.
        listener.verdict(lecture.stem, event)
    listener = Finished(server)
    save(lecture, original)
    listener.verdict(lecture.stem, listener.wait(lecture.stem))
    return times, wholes


def main() -> int:
    parser = argparse.ArgumentParser(description="Edit-to-view latency of the local server.")
    parser.add_argument("--edits", type=int, default=5, help="edits per lecture and way (default 5)")
    parser.add_argument("--verbose", action="store_true", help="print the server's log lines as they come")
    parser.add_argument("--lecture", action="append", metavar="NAME:SECTION",
                        help=f"lecture and section to edit (default: {' '.join(DEFAULT_LECTURES)})")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from cs336_lectures.runtime.server.http_server import LectureServer
    from cs336_lectures.runtime.tracing import DEFAULT_MAX_STEPS

    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "fixtures" / "tiktoken-cache"))
    results: dict[str, dict[str, list[float]]] = {}
    whole_traces: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        folder = Path(tmp)
        os.chdir(folder)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        sections: dict[str, list[str]] = {}  # lecture -> its sections to edit, one server per lecture
        for spec in args.lecture or DEFAULT_LECTURES:
            name, section = spec.split(":")
            sections.setdefault(name, []).append(section)
        for name, edited in sections.items():
            lecture = folder / "lectures" / f"{name}.py"
            lecture.parent.mkdir(exist_ok=True)
            shutil.copy(ROOT / "lectures" / f"{name}.py", lecture)
            server = LectureServer([lecture], folder / "traces", port=0, viewer_dir=ROOT / "viewer",
                                   max_steps=DEFAULT_MAX_STEPS, timeout=300,
                                   log=(lambda message: print(f"  [server] {message}", flush=True)) if args.verbose
                                   else (lambda message: None))
            try:
                listener = Finished(server)
                server.start()
                first = listener.wait(name)
                if first["state"] != "ok":
                    raise RuntimeError(f"{name}: the first trace failed: {first['message']}")
                server.watcher.files.ready.wait(10)
                for section in edited:
                    spec = f"{name}:{section}"
                    trace = json.loads((folder / "traces" / f"{name}.json").read_text())
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    page.goto(f"http://127.0.0.1:{server.port}/?token={server.token}&trace={name}"
                              f"&step={step_in(trace, section)}")
                    page.wait_for_selector(".line.current", state="attached", timeout=WAIT_MS)
                    results[spec] = {}
                    for mode in ("incremental", "kernel, whole lecture", "new process"):
                        results[spec][mode], wholes = measure(page, server, lecture, section, args.edits, mode)
                        if mode == "incremental":
                            whole_traces[spec] = wholes
                    page.close()
            finally:
                server.close()
        browser.close()

    print(f"edit latency: save inside a section -> the open viewer shows it (headless Chromium), "
          f"median of {args.edits} edits, {os.cpu_count()} CPUs")
    met = True
    for spec, by_mode in results.items():
        medians = {mode: statistics.median(times) for mode, times in by_mode.items()}
        print(f"  {spec}")
        for mode, times in by_mode.items():
            print(f"    {mode:<22} median {medians[mode]:.3f} s   (min {min(times):.3f}, max {max(times):.3f})")
            if mode == "incremental":
                print(f"    {'  whole trace':<22} median {statistics.median(whole_traces[spec]):.3f} s   "
                      f"(the sections after the edited one re-run too)")
        ratio = medians["new process"] / medians["incremental"]
        print(f"    incremental is {ratio:.1f}x faster than a new process; the kernel's whole-lecture fallback "
              f"{medians['new process'] / medians['kernel, whole lecture']:.1f}x")
        met = met and medians["incremental"] <= TARGET_S
    print(f"  target: incremental median <= {TARGET_S} s: {'met' if met else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
