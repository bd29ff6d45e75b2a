"""The BPE tokenizer: GPT-2-compatible encoding with learned (or GPT-2's) merges.

Over ``train`` (which produces a vocabulary and merges) it adds their use: text is
cut into pre-tokens around special tokens, and each pre-token's bytes are merged by
rank, always taking the best-ranked pair present, so only merges that apply are
tried. Results per pre-token are cached, which makes common words a dictionary
lookup. ``encode_iterable`` streams ids for text of any size; ``from_files`` and
``save`` use GPT-2's ``encoder.json`` / ``vocab.bpe`` format. With GPT-2's files the
ids are exactly tiktoken's GPT-2 ids.
"""

from __future__ import annotations

import heapq
import operator
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, repeat

from cs336_lectures.tokenization.base import Tokenizer
from cs336_lectures.tokenization.gpt2_bytes import (
    load_gpt2_merges,
    load_gpt2_vocab,
    save_gpt2_merges,
    save_gpt2_vocab,
)
from cs336_lectures.tokenization.word import PreTokenizer

# Distinct pre-tokens remembered before the cache starts over: it bounds memory on
# endless streams while keeping every common word of a language cached.
CACHE_SIZE = 100_000
# Pre-tokens longer than this (in bytes) are merged with a heap: the simple loop, fastest
# for words, rescans the whole pre-token per merge, which is quadratic on a long one.
LONG_PIECE = 128
# Ids become characters while a pre-token is merged (see _encode_piece), so they stop
# where Unicode does.
_ID_LIMIT = sys.maxunicode + 1


class BPETokenizer(Tokenizer):
    """Byte-level BPE: ``BPETokenizer(vocab, merges, ["<|endoftext|>"]).encode("hi<|endoftext|>")``.

    ``vocab`` maps ids to bytes and must hold all 256 single bytes; ``merges`` are
    ``(left, right)`` byte pairs in rank order, each spelling a token of ``vocab``.
    Special tokens are kept whole (the longest wins when they overlap); one missing
    from ``vocab`` gets the next free id.
    """

    def __init__(
        self,
        vocab: dict[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Iterable[str] | None = None,
    ):
        self.vocab: dict[int, bytes] = {}
        for index, token in vocab.items():
            valid_id = isinstance(index, int) and 0 <= index < _ID_LIMIT
            if not valid_id or not isinstance(token, bytes) or not token:
                raise ValueError(
                    f"vocab must map ids in 0..{_ID_LIMIT - 1} to non-empty bytes, got {index!r}: {token!r}"
                )
            self.vocab[index] = token
        self.merges: list[tuple[bytes, bytes]] = list(merges)
        self._pretokenizer = PreTokenizer(special_tokens or ())  # checks and deduplicates them
        self.special_tokens: list[str] = list(self._pretokenizer.special_tokens)

        # The lowest id of each token's bytes. A special token that the vocab also holds
        # as an ordinary token (a word of GPT-2's vocab) shares that id: text is cut at
        # special tokens first, so merges never make those bytes on their own.
        self._ids: dict[bytes, int] = {}
        for index in sorted(self.vocab):
            self._ids.setdefault(self.vocab[index], index)
        next_id = max(self.vocab, default=-1) + 1
        self.special_ids: dict[str, int] = {}
        for special in self.special_tokens:
            encoded = special.encode("utf-8")
            if encoded not in self._ids:
                if next_id >= _ID_LIMIT:
                    raise ValueError(f"no id left below {_ID_LIMIT} for special token {special!r}")
                self._ids[encoded] = next_id
                self.vocab[next_id] = encoded
                next_id += 1
            self.special_ids[special] = self._ids[encoded]

        missing = [byte for byte in range(256) if bytes([byte]) not in self._ids]
        if missing:
            raise ValueError(f"vocab lacks {len(missing)} single bytes, e.g. {bytes([missing[0]])!r}")
        # While a pre-token is merged it is held as a str with one character per token
        # (chr of its id): a pair is then a 2-character string, and str.replace merges
        # all its occurrences left to right, in C. The table turns byte b into its token.
        self._byte_table = {byte: chr(self._ids[bytes([byte])]) for byte in range(256)}
        # pair -> rank; the first listing of a pair counts. _merged[rank] is its result.
        self._ranks: dict[str, int] = {}
        self._pairs: list[str] = []
        self._merged: list[str] = []
        for rank, (left, right) in enumerate(self.merges):
            try:
                pair = chr(self._ids[left]) + chr(self._ids[right])
                merged = chr(self._ids[left + right])
            except (KeyError, TypeError):
                raise ValueError(
                    f"merge {rank} ({left!r}, {right!r}) uses or makes a token that is not in vocab"
                ) from None
            self._ranks.setdefault(pair, len(self._pairs))
            self._pairs.append(pair)
            self._merged.append(merged)

        fixed = {special: (index,) for special, index in self.special_ids.items()}
        self._cache = _PieceCache(self._encode_piece, fixed)

    @classmethod
    def from_files(
        cls,
        vocab_path: str | os.PathLike,
        merges_path: str | os.PathLike,
        special_tokens: Iterable[str] | None = None,
    ) -> BPETokenizer:
        """Load GPT-2-format files: ``BPETokenizer.from_files("encoder.json", "vocab.bpe", ["<|endoftext|>"])``."""
        return cls(load_gpt2_vocab(vocab_path), load_gpt2_merges(merges_path), special_tokens)

    def save(self, vocab_path: str | os.PathLike, merges_path: str | os.PathLike) -> None:
        """Write the vocab and merges in GPT-2's format (each file atomically)."""
        save_gpt2_vocab(self.vocab, vocab_path)
        save_gpt2_merges(self.merges, merges_path)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def encode(self, string: str) -> list[int]:
        """The ids of ``string``; lone surrogates are encoded as U+FFFD, as tiktoken does."""
        if not isinstance(string, str):
            raise TypeError(f"encode expects str, got {type(string).__name__}")
        try:
            return list(chain.from_iterable(map(self._cache.__getitem__, self._pretokenizer.split(string))))
        except UnicodeEncodeError:  # only surrogates make a str that UTF-8 cannot encode
            return self.encode(_replace_surrogates(string))

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """Ids of ``"".join(iterable)``, lazily: ``encode_iterable(open(path))`` streams a file.

        Holds back the text near each chunk's end until the pre-token or special
        token there is complete, so the ids equal ``encode`` of the whole text. Memory
        stays bounded by the chunk size (or the longest pre-token, if larger).
        """
        for pieces in self._pretokenizer.split_stream(_stream_without_surrogates(iterable)):
            yield from chain.from_iterable(map(self._cache.__getitem__, pieces))

    def decode(self, indices: Iterable[int]) -> str:
        """The text of ``indices``; bytes that are not valid UTF-8 become U+FFFD."""
        try:
            # operator.index accepts NumPy and PyTorch integers, which do not hash like int.
            data = b"".join(map(self.vocab.__getitem__, map(operator.index, indices)))
        except KeyError as error:
            raise ValueError(f"unknown token id {error.args[0]!r}") from None
        except TypeError as error:
            raise ValueError(f"token ids must be integers: {error}") from None
        return data.decode("utf-8", errors="replace")

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        """Merge one pre-token's bytes, always at the best-ranked pair present."""
        word = piece.encode("utf-8").decode("latin-1").translate(self._byte_table)
        if len(word) > LONG_PIECE:
            return tuple(map(ord, self._merge_long(word)))
        ranks = self._ranks
        while len(word) > 1:
            best = min(map(ranks.get, map(operator.add, word, word[1:]), repeat(_NOT_A_MERGE)))
            if best == _NOT_A_MERGE:
                break
            word = word.replace(self._pairs[best], self._merged[best])
        return tuple(map(ord, word))

    def _merge_long(self, word: str) -> str:
        """The same merges for a long pre-token, in O(n log n) instead of O(n^2).

        Tokens form a linked list; a heap holds (rank, position) of candidate pairs, so
        the best-ranked pair, leftmost among equals, comes first. An entry whose pair has
        changed since it was pushed is skipped when popped.
        """
        ranks = self._ranks
        tokens: list[str | None] = list(word)
        end = len(tokens)
        following = list(range(1, end + 1))
        preceding = list(range(-1, end - 1))
        heap = [(rank, i) for i, rank in enumerate(map(ranks.get, map(operator.add, word, word[1:])))
                if rank is not None]
        heapq.heapify(heap)
        while heap:
            rank, i = heapq.heappop(heap)
            j = following[i]
            if tokens[i] is None or j == end or ranks.get(tokens[i] + tokens[j]) != rank:
                continue
            tokens[i], tokens[j] = self._merged[rank], None
            following[i] = following[j]
            if following[i] != end:
                preceding[following[i]] = i
            for left in (preceding[i], i):  # the two pairs the merged token now belongs to
                if left >= 0 and following[left] != end:
                    new_rank = ranks.get(tokens[left] + tokens[following[left]])
                    if new_rank is not None:
                        heapq.heappush(heap, (new_rank, left))
        return "".join(token for token in tokens if token is not None)


_NOT_A_MERGE = sys.maxsize
_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_surrogates(text: str) -> str:
    """Pair up surrogates and replace lone ones: ``_replace_surrogates("a\\ud800") == "a\\ufffd"``."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _stream_without_surrogates(chunks: Iterable[str]) -> Iterator[str]:
    """The chunks with surrogates replaced as in the whole text (a pair may span two chunks)."""
    held = ""
    for chunk in chunks:
        if held or (isinstance(chunk, str) and _SURROGATE.search(chunk)):
            chunk = held + chunk
            held = chunk[-1:] if "\ud800" <= chunk[-1:] <= "\udbff" else ""
            chunk = _replace_surrogates(chunk[: len(chunk) - len(held)])
        yield chunk
    if held:
        yield _replace_surrogates(held)


class _PieceCache(dict):
    """Pre-token -> ids, filled on first lookup; starts over past ``CACHE_SIZE`` entries."""

    def __init__(self, encode_piece, fixed: dict[str, tuple[int, ...]]):
        super().__init__(fixed)
        self._encode_piece = encode_piece
        self._fixed = fixed

    def __missing__(self, piece: str) -> tuple[int, ...]:
        ids = self._encode_piece(piece)
        if len(self) >= CACHE_SIZE:
            self.clear()
            self.update(self._fixed)
        self[piece] = ids
        return ids
