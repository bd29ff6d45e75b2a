"""Teaching BPE: byte pair encoding as the lecture first writes it.

Over ``byte`` it adds learned merges: start from the UTF-8 bytes of one string and
repeatedly replace the most frequent adjacent pair of ids with a new id. Kept simple
on purpose (no pre-tokenization, no special tokens, every merge re-counts all pairs
and ``encode`` tries every merge); ``train`` and ``tokenizer`` are the fast, exact
versions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from cs336_lectures.tokenization.base import Tokenizer


@dataclass(frozen=True)
class BPETokenizerParams:
    """Everything a BPE tokenizer needs: what each id spells, and the merges in order."""

    vocab: dict[int, bytes]  # id -> the bytes it stands for
    merges: dict[tuple[int, int], int]  # (left id, right id) -> merged id, in creation order


def merge(indices: Sequence[int], pair: tuple[int, int], new_index: int) -> list[int]:
    """Replace each occurrence of ``pair``, left to right: ``merge([1, 2, 1, 2], (1, 2), 9) == [9, 9]``."""
    merged: list[int] = []
    i = 0
    while i < len(indices):
        if i + 1 < len(indices) and indices[i] == pair[0] and indices[i + 1] == pair[1]:
            merged.append(new_index)
            i += 2
        else:
            merged.append(indices[i])
            i += 1
    return merged


def train_simple_bpe(string: str, num_merges: int) -> BPETokenizerParams:
    """Learn ``num_merges`` merges on one string: ``train_simple_bpe("the cat in the hat", 3)``.

    Merge ``k`` (counting from 1) creates id ``255 + k``. Among equally frequent pairs
    the one that occurs first in the current sequence wins (``max`` keeps the first
    maximum, and the counts dict is in order of first occurrence). Stops early when
    fewer than two ids are left.
    """
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    indices = list(string.encode("utf-8"))
    vocab: dict[int, bytes] = {byte: bytes([byte]) for byte in range(256)}
    merges: dict[tuple[int, int], int] = {}
    for step in range(num_merges):
        counts: dict[tuple[int, int], int] = defaultdict(int)
        for pair in zip(indices, indices[1:]):
            counts[pair] += 1
        if not counts:
            break
        pair = max(counts, key=counts.__getitem__)
        new_index = 256 + step
        merges[pair] = new_index
        vocab[new_index] = vocab[pair[0]] + vocab[pair[1]]
        indices = merge(indices, pair, new_index)
    return BPETokenizerParams(vocab=vocab, merges=merges)


class SimpleBPETokenizer(Tokenizer):
    """Encode by applying every merge in creation order to the whole string's bytes.

    ``SimpleBPETokenizer(train_simple_bpe("the cat in the hat", 3)).encode("the fox")[0] == 258``.
    Slow on purpose: each merge scans the whole sequence.
    """

    def __init__(self, params: BPETokenizerParams):
        self.params = params

    def encode(self, string: str) -> list[int]:
        indices = list(string.encode("utf-8"))
        for pair, new_index in self.params.merges.items():
            indices = merge(indices, pair, new_index)
        return indices

    def decode(self, indices: Sequence[int]) -> str:
        # Join all bytes before decoding: a token may hold half of a character.
        try:
            data = b"".join(self.params.vocab[index] for index in indices)
        except KeyError as error:
            raise ValueError(f"unknown token id {error.args[0]}") from None
        return data.decode("utf-8", errors="replace")
