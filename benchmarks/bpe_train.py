"""BPE training speed: our train_bpe against Hugging Face tokenizers' BPE trainer.

Both train byte-level BPE with GPT-2 pre-tokenization on the same file and vocabulary
size, in this process, best of several runs. Targets: at most 2x tokenizers on
corpus.en (vocab 500) and at most 3x on about 0.5 MB of English (vocab 5000).

    .venv/bin/python benchmarks/bpe_train.py [--fixtures ../shared/fixtures] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from cs336_lectures.tokenization import train_bpe

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = "<|endoftext|>"


def train_ours(path: Path, vocab_size: int) -> int:
    vocab, _ = train_bpe(path, vocab_size, [SPECIAL])
    return len(vocab)


def train_tokenizers(path: Path, vocab_size: int) -> int:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train([str(path)], trainer)
    return tokenizer.get_vocab_size()


def best_time(function, *args, repeat: int) -> tuple[float, float, object]:
    """Best wall-clock and best CPU seconds (all threads) over ``repeat`` runs."""
    wall, cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        result = function(*args)
        wall = min(wall, time.perf_counter() - wall_start)
        cpu = min(cpu, time.process_time() - cpu_start)
    return wall, cpu, result


def compare(label: str, path: Path, vocab_size: int, target: float, repeat: int) -> None:
    ours, ours_cpu, our_size = best_time(train_ours, path, vocab_size, repeat=repeat)
    peer, peer_cpu, peer_size = best_time(train_tokenizers, path, vocab_size, repeat=repeat)
    ratio = ours / peer
    verdict = "ok" if ratio <= target else "over target"
    print(
        f"{label}: {path.stat().st_size / 1e6:.2f} MB, vocab {vocab_size} | "
        f"train_bpe {ours:.3f} s ({our_size} tokens) | tokenizers {peer:.3f} s ({peer_size} tokens) | "
        f"ratio {ratio:.2f}x (target <= {target:g}x: {verdict}) | "
        f"CPU seconds {ours_cpu:.3f} vs {peer_cpu:.3f}: {ours_cpu / peer_cpu:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=ROOT.parent / "shared" / "fixtures")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    corpus = args.fixtures / "corpus.en"
    if corpus.is_file():
        compare("corpus.en", corpus, 500, 2.0, args.repeat)
    else:
        print(f"corpus.en not found in {args.fixtures}: skipped")

    from pydoc_data.topics import topics

    with tempfile.TemporaryDirectory() as folder:
        english = Path(folder) / "pydoc_topics.txt"
        english.write_text("".join(topics.values()), encoding="utf-8")
        compare("pydoc topics", english, 5000, 3.0, args.repeat)


if __name__ == "__main__":
    main()
