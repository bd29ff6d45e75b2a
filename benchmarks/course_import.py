"""Importing a Stanford course trace: time and size, against reading and writing the same JSON.

Generates a trace in the shape the course's execute.py writes (indented JSON, the whole stack
repeated in every step, inspected values as plain lists, markdown source in the renderings) of
about 1.5 MB, then times `cs336-lectures import` on it in this process (median of several
runs) against its peer, the least any converter has to do: `json.loads` the file and
`json.dumps` a result. Reports the sizes before and after.

    .venv/bin/python benchmarks/course_import.py [--megabytes 1.5] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from cs336_lectures.runtime.course.importer import import_course_trace

SECTIONS = 40
BODY_LINES = 20
TARGET_SECONDS = 2.0  # for about 1.5 MB on the development machine
# What a line of a section does, with the mix of the course's published lecture 2 (about
# 1.5 MB): mostly text(), then inspected tensors (4x8, printed with float64 digits) and numbers.
TEXTS = ("attention costs $O(n^2)$ in the sequence length.", "tensors are pointers into memory with strides.",
         "**views** share storage with the tensor they come from.", "- bfloat16 keeps the range of float32",
         "## Compute accounting", "a matrix product of (B x D) and (D x K) costs 2BDK FLOPs.")
KINDS = ("text", "text", "text", "text", "tensor", "number", "number", "plain", "plain", "plain")


def course_source(rng: random.Random) -> tuple[str, list[list[str]]]:
    """main() calling SECTIONS sections of BODY_LINES lines; returns (source, kinds of each section's lines)."""
    lines = ["from execute_util import text", "import torch", "", "", "def main():"]
    lines += [f"    section_{number}()" for number in range(SECTIONS)]
    kinds = []
    for number in range(SECTIONS):
        lines += ["", "", f"def section_{number}():"]
        section = [rng.choice(KINDS) for _ in range(BODY_LINES)]
        for body, kind in enumerate(section):
            lines.append({
                "text": f'    text("Point {body} of section {number}: {rng.choice(TEXTS)}")',
                "tensor": f"    x = torch.randn(4, 8)  # a 4x8 matrix @inspect x",
                "number": f"    flops = 6 * {body + 1}e9 * {number + 1}e12  # @inspect flops",
                "plain": f"    assert {body} + {number} >= 0",
            }[kind])
        kinds.append(section)
    return "\n".join(lines) + "\n", kinds


def course_trace(target_bytes: int, seed: int = 0) -> dict:
    """The course's execute.py trace of that lecture, its sections run in turn until the JSON
    reaches target_bytes (the lecture is run again from the top if needed)."""
    rng = random.Random(seed)
    source, kinds = course_source(rng)
    code = source.splitlines()
    path = "lecture_synthetic.py"
    main_line = code.index("def main():") + 1

    def frame(name: str, line: int) -> dict:
        return {"path": path, "line_number": line, "function_name": name, "code": code[line - 1].strip()}

    def step(stack: list[dict], env: dict | None = None, renderings: list | None = None) -> dict:
        return {"stack": stack, "env": env or {}, "renderings": renderings or [], "stdout": "", "stderr": ""}

    steps: list[dict] = []
    while True:
        steps.append(step([frame("main", main_line)]))
        for number, section in enumerate(kinds):
            if len(json.dumps({"files": {path: source}, "steps": steps}, indent=2)) >= target_bytes:
                return {"files": {path: source}, "steps": steps}
            caller = frame("main", main_line + 1 + number)
            steps.append(step([caller]))
            first = code.index(f"def section_{number}():") + 1
            steps.append(step([caller, frame(f"section_{number}", first)]))
            for body, kind in enumerate(section):
                here = [caller, frame(f"section_{number}", first + 1 + body)]
                if kind == "text":
                    message = code[first + body].split('text("', 1)[1].rsplit('")', 1)[0]
                    steps.append(step(here, renderings=[{"type": "markdown", "data": message, "style": {},
                                                         "external_link": None, "internal_link": None}]))
                elif kind == "tensor":
                    steps.append(step(here, env={"x": [[rng.gauss(0, 1) for _ in range(8)] for _ in range(4)]}))
                elif kind == "number":
                    steps.append(step(here, env={"flops": 6 * (body + 1) * 1e9 * (number + 1) * 1e12}))
                else:
                    steps.append(step(here))
            steps.append(step([caller]))


def median_seconds(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=1.5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        course = Path(folder) / "var" / "traces" / "lecture_synthetic.json"
        course.parent.mkdir(parents=True)
        course.write_text(json.dumps(course_trace(int(args.megabytes * 1e6)), indent=2))
        out = Path(folder) / "out"

        def ours() -> None:
            import_course_trace(course, out, Path(folder))

        def peer() -> None:
            json.dumps(json.loads(course.read_bytes()), separators=(",", ":"))

        ours_s = median_seconds(ours, args.repeat)
        peer_s = median_seconds(peer, args.repeat)
        before, after = course.stat().st_size, (out / course.name).stat().st_size
        steps = len(json.loads(course.read_bytes())["steps"])
    verdict = "ok" if ours_s <= TARGET_SECONDS else "over target"
    print(f"course_import: {before / 1e6:.2f} MB course trace, {steps} steps: import {ours_s:.3f} s "
          f"({steps / ours_s:,.0f} steps/s), peer json load+dump {peer_s:.3f} s: {ours_s / peer_s:.1f}x "
          f"[target <= {TARGET_SECONDS:g} s: {verdict}]")
    print(f"course_import: size {before:,} bytes -> {after:,} bytes ({after / before:.1%} of the course's, "
          f"{before / after:.1f}x smaller)")


if __name__ == "__main__":
    main()
