"""Peak memory of BPETokenizer.encode_iterable over a 50 MB file: it must stay flat.

Writes a file of English (pydoc topics repeated, with <|endoftext|> between copies)
in a temporary folder, then, each in a fresh process: streams it through
``encode_iterable`` (sampling resident memory as it goes), and, as the peer, reads the
whole file and encodes it at once with tiktoken. Reports MiB above the process's
memory before encoding.

    .venv/bin/python benchmarks/bpe_encode_memory.py [--megabytes 50]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stream_ours(path: str) -> dict:
    from cs336_lectures.tokenization import BPETokenizer, gpt2_files

    tokenizer = BPETokenizer.from_files(*gpt2_files(), [SPECIAL])
    size = os.path.getsize(path)
    baseline = rss_mib()
    samples, count, start = [], 0, time.perf_counter()
    with open(path, encoding="utf-8") as file:
        for count, _ in enumerate(tokenizer.encode_iterable(file), start=1):
            if count % 200_000 == 0:
                samples.append((round(file.buffer.tell() / size, 2), round(rss_mib() - baseline, 1)))
    # Sampled rather than ru_maxrss: loading GPT-2's files, before the baseline, is the
    # process's high-water mark and would hide the streaming itself.
    return {
        "tokens": count,
        "seconds": time.perf_counter() - start,
        "baseline": baseline,
        "peak_above_baseline": max(above for _, above in samples),
        "samples": samples,
    }


def whole_tiktoken(path: str) -> dict:
    from cs336_lectures.tokenization import get_gpt2_tokenizer

    encoding = get_gpt2_tokenizer()
    encoding.encode("warm up")
    baseline = rss_mib()
    start = time.perf_counter()
    text = Path(path).read_text(encoding="utf-8")
    ids = encoding.encode(text, allowed_special={SPECIAL})
    return {
        "tokens": len(ids),
        "seconds": time.perf_counter() - start,
        "baseline": baseline,
        "peak_above_baseline": peak_mib() - baseline,
    }


def run_child(kind: str, path: Path) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(output.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=50)
    parser.add_argument("--fixtures", type=Path, default=ROOT.parent / "shared" / "fixtures")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(args.fixtures / "tiktoken-cache"))
    from cs336_lectures.tokenization import gpt2_files

    try:
        gpt2_files()
    except FileNotFoundError as error:
        print(f"skipped: {error}")
        return
    if args.child:
        kind, path = args.child
        print(json.dumps(stream_ours(path) if kind == "ours" else whole_tiktoken(path)))
        return

    from pydoc_data.topics import topics

    copy = "".join(topics.values()) + SPECIAL
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "english.txt"
        target = int(args.megabytes * 1e6)
        with open(path, "w", encoding="utf-8") as file:
            written = 0
            while written < target:
                written += file.write(copy)
        size = path.stat().st_size / 1e6
        ours = run_child("ours", path)
        peer = run_child("tiktoken", path)

    assert ours["tokens"] == peer["tokens"], "token counts differ"
    print(f"file: {size:.1f} MB, {ours['tokens']:,} tokens (same count from both)")
    print(
        f"encode_iterable (streaming): highest sample {ours['peak_above_baseline']:.1f} MiB above baseline "
        f"({ours['baseline']:.0f} MiB), {size / ours['seconds']:.1f} MB/s"
    )
    samples = ours["samples"][:: max(1, len(ours["samples"]) // 10)]
    print("  MiB above baseline as the file is read: " + ", ".join(f"{done:.0%}: {above}" for done, above in samples))
    print(
        f"tiktoken, whole file at once: peak {peer['peak_above_baseline']:.1f} MiB above baseline "
        f"({peer['baseline']:.0f} MiB), {size / peer['seconds']:.1f} MB/s"
    )
    print(f"ratio of peaks: {ours['peak_above_baseline'] / peer['peak_above_baseline']:.3f}")


if __name__ == "__main__":
    main()
