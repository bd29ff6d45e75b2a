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


def throughput(function, text: str, repeat: int) -> tuple[float, list[int]]:
    best, ids = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        ids = function(text)
        best = min(best, time.perf_counter() - start)
    return len(text.encode("utf-8")) / best / 1e6, ids


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
    peer, expected = throughput(lambda t: tiktoken_gpt2.encode(t, allowed_special={SPECIAL}), text, args.repeat)

    cold_runs = []
    for _ in range(args.repeat):
        fresh = BPETokenizer.from_files(vocab_path, merges_path, [SPECIAL])
        cold_runs.append(throughput(fresh.encode, text, 1))
    cold, cold_ids = max(cold_runs, key=lambda run: run[0])
    warm, warm_ids = throughput(fresh.encode, text, args.repeat)
    assert cold_ids == expected and warm_ids == expected, "ids differ from tiktoken's"

    print(f"text: {size:.2f} MB of English (pydoc topics + corpus.en), ids equal to tiktoken's")
    print(f"tiktoken          {peer:6.2f} MB/s")
    print(f"BPETokenizer cold {cold:6.2f} MB/s  ({cold / peer:.2f}x tiktoken)")
    verdict = "ok" if warm / peer >= 0.5 else "under target"
    print(f"BPETokenizer warm {warm:6.2f} MB/s  ({warm / peer:.2f}x tiktoken; target >= 0.5x: {verdict})")


if __name__ == "__main__":
    main()
