"""Encoding throughput with GPT-2's vocabulary: our BPETokenizer against tiktoken.

Same text, same ids (checked), in this process. "cold" is a fresh tokenizer's first
pass (every pre-token merged from bytes); "warm" is a second pass over the same text
(pre-tokens come from the cache). Target: warm at least 0.5x tiktoken.

    .venv/bin/python benchmarks/bpe_encode.py [--fixtures ../shared/fixtures] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"


def timed(function, text: str) -> tuple[float, float, list[int]]:
    """Wall-clock and CPU seconds of one call (both encoders run on one thread)."""
    wall, cpu = time.perf_counter(), time.process_time()
    ids = function(text)
    return time.perf_counter() - wall, time.process_time() - cpu, ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=ROOT.parent / "shared" / "fixtures")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(args.fixtures / "tiktoken-cache"))
    from pydoc_data.topics import topics

    from cs336_lectures.tokenization import BPETokenizer, get_gpt2_tokenizer, gpt2_files

    try:
        vocab_path, merges_path = gpt2_files()
    except FileNotFoundError as error:
        print(f"skipped: {error}")
        return

    text = "".join(topics.values())
    corpus = args.fixtures / "corpus.en"
    if corpus.is_file():
        text += SPECIAL + corpus.read_text(encoding="utf-8")
    size = len(text.encode("utf-8")) / 1e6

    tiktoken_gpt2 = get_gpt2_tokenizer()
    expected = tiktoken_gpt2.encode(text, allowed_special={SPECIAL})
    cold = [float("inf")] * 2
    for _ in range(args.repeat):
        ours = BPETokenizer.from_files(vocab_path, merges_path, [SPECIAL])
        *seconds, ids = timed(ours.encode, text)
        assert ids == expected, "ids differ from tiktoken's"
        cold = [min(old, new) for old, new in zip(cold, seconds)]
    # Alternate the two so that load from other processes hits both alike.
    warm, peer = [float("inf")] * 2, [float("inf")] * 2
    for _ in range(args.repeat):
        *seconds, ids = timed(ours.encode, text)
        assert ids == expected, "ids differ from tiktoken's"
        warm = [min(old, new) for old, new in zip(warm, seconds)]
        *seconds, _ = timed(lambda t: tiktoken_gpt2.encode(t, allowed_special={SPECIAL}), text)
        peer = [min(old, new) for old, new in zip(peer, seconds)]

    def rates(seconds: list[float]) -> str:
        return f"{size / seconds[0]:6.2f} MB/s wall, {size / seconds[1]:6.2f} MB/s CPU"

    def ratios(seconds: list[float]) -> str:
        return f"{peer[0] / seconds[0]:.2f}x tiktoken wall, {peer[1] / seconds[1]:.2f}x CPU"

    print(f"text: {size:.2f} MB of English (pydoc topics + corpus.en), ids equal to tiktoken's")
    print(f"tiktoken          {rates(peer)}")
    print(f"BPETokenizer cold {rates(cold)}  ({ratios(cold)})")
    verdict = "ok" if peer[0] / warm[0] >= 0.5 else "under target"
    print(f"BPETokenizer warm {rates(warm)}  ({ratios(warm)}; target >= 0.5x wall: {verdict})")

if __name__ == "__main__":
    main()
