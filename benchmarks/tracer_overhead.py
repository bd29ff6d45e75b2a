"""Tracer overhead on a lecture-shaped program: traced vs untraced.

Writes a lecture (about 30k executed lines of pure-Python loops in the lecture file, some
tensor work, a few inspected tensors and text() calls) to a temporary folder, then times
`python lecture.py` against `python -m cs336_lectures trace lecture.py --quiet`, alternating,
and reports medians of wall and CPU time (CPU time is steadier on a busy machine). Both
processes import torch, as a real lecture does. A second measurement runs both in this
process, without interpreter start-up, to isolate the cost per step.

    $ .venv/bin/python benchmarks/tracer_overhead.py --repeat 5
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import resource
import runpy
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TARGET_RATIO = 1.25
TARGET_US_PER_STEP = 5.0
TARGET_BYTES_PER_STEP = 40.0

LECTURE = '''
import torch
from cs336_lectures import text


def pair_counts(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, new_id):
    merged = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def train_merges(ids, num_merges):
    merges = {}
    for new_id in range(256, 256 + num_merges):
        counts = pair_counts(ids)
        pair = max(counts, key=counts.get)  # @inspect pair
        ids = merge(ids, pair, new_id)
        merges[pair] = new_id  # @inspect new_id
    return ids, merges


def tensor_work():
    x = torch.randn(32, 64)  # @inspect x
    w = torch.randn(64, 64) / 8  # @inspect w
    for _ in range(20):
        x = torch.tanh(x @ w)
    y = x.softmax(dim=-1)  # @inspect y
    flops = 2 * 32 * 64 * 64 * 20  # @inspect flops
    return y


def main():
    text("# A lecture-shaped benchmark")
    ids = list("the quick brown fox jumps over the lazy dog ".encode() * __REPEAT__)  # @inspect ids
    ids, merges = train_merges(ids, 6)
    text(f"Compressed to {len(ids)} tokens with {len(merges)} merges.")
    y = tensor_work()
    total = y.sum().item()  # @inspect total
    print(total)


if __name__ == "__main__":
    main()
'''


def time_process(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `command`."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu() - cpu_before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_in_process(lecture: Path, output_dir: Path, repeat: int) -> tuple[float, float]:
    """Best-of-`repeat` seconds of main() untraced and of trace_lecture() (run + write), in this
    process: no interpreter start-up or imports in either, so the difference is the tracer alone
    (the minimum, as timeit reports, since other load only ever adds time)."""
    from cs336_lectures.runtime.tracing.lecture_run import trace_lecture

    main_function = runpy.run_path(str(lecture), run_name="untraced")["main"]
    plain, traced = [], []
    for _ in range(repeat + 1):  # the first round warms caches and lazy imports
        with contextlib.redirect_stdout(io.StringIO()):
            started = time.perf_counter()
            main_function()
            plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        trace_lecture(lecture, output_dir=output_dir, quiet=True)
        traced.append(time.perf_counter() - started)
    return min(plain[1:]), min(traced[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each kind (default: 5)")
    parser.add_argument("--size", type=int, default=24, help="text repetitions, which scale the step count")
    args = parser.parse_args()

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        lecture = folder / "bench_lecture.py"
        lecture.write_text(textwrap.dedent(LECTURE).replace("__REPEAT__", str(args.size)))
        untraced = [sys.executable, str(lecture)]
        traced = [sys.executable, "-m", "cs336_lectures", "trace", str(lecture), "-o", str(folder / "out"), "--quiet"]
        time_process(untraced, root)  # warm the file cache for both
        time_process(traced, root)
        plain_runs, traced_runs = [], []
        for _ in range(args.repeat):
            plain_runs.append(time_process(untraced, root))
            traced_runs.append(time_process(traced, root))
        trace_path = folder / "out" / "bench_lecture.json"
        steps = json.loads(trace_path.read_text())["header"]["num_steps"]
        trace_bytes = trace_path.stat().st_size
        in_plain, in_traced = time_in_process(lecture, folder / "in-process", args.repeat)

    print(f"lecture-shaped program: {steps} steps; medians of {args.repeat} runs of each kind")
    print(f"  trace size           {trace_bytes / steps:6.1f} bytes/step (target <= {TARGET_BYTES_PER_STEP:g}; "
          f"file {trace_bytes} bytes)")
    for label, index in (("wall", 0), ("cpu", 1)):
        plain = statistics.median(run[index] for run in plain_runs)
        traced_time = statistics.median(run[index] for run in traced_runs)
        print(f"  whole process, {label:4}  untraced {plain:6.3f} s, traced {traced_time:6.3f} s: "
              f"ratio {traced_time / plain:4.2f} x (target <= {TARGET_RATIO}), "
              f"{(traced_time - plain) / steps * 1e6:5.2f} us/step (target <= {TARGET_US_PER_STEP:g})")
    print(f"  in process, best     main() {in_plain:6.3f} s, trace_lecture() {in_traced:6.3f} s: "
          f"{(in_traced - in_plain) / steps * 1e6:5.2f} us/step, writing included (target <= {TARGET_US_PER_STEP:g})")


if __name__ == "__main__":
    main()
