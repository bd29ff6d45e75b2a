"""Training byte-level BPE the way GPT-2 does, fast and exactly.

Over ``simple_bpe`` it adds what a real trainer needs: GPT-2 pre-tokenization (merges
never cross a pre-token), special tokens that split the text and are never merged,
a deterministic tie rule, and speed. Pre-tokens are counted once (in parallel over
chunks of a large file, streaming, so memory grows with the number of distinct
pre-tokens, not with the file); each distinct pre-token is a "word" with a count.
A merge then only revisits the words that contain the merged pair, and a heap with
lazy invalidation hands out the next best pair.

Vocabulary ids follow the layout of the reference files (and of GPT-2's
``encoder.json`` for the bytes): special tokens first, in the order given, then the
256 single bytes in GPT-2's byte order (``bytes_to_unicode``: printable bytes
first), then one id per merge, in the order the merges were made.
"""

from __future__ import annotations

import codecs
import heapq
import multiprocessing
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from operator import add
from pathlib import Path

from cs336_lectures.tokenization.gpt2_bytes import bytes_to_unicode
from cs336_lectures.tokenization.word import PreTokenizer

# Below this size one process pre-tokenizes faster than starting a pool.
PARALLEL_MIN_BYTES = 4 << 20
# Each worker job covers about this much of the file (cut at a special token).
_CHUNK_BYTES = 16 << 20
_READ_BYTES = 1 << 20


def train_bpe(
    input_path: str | os.PathLike,
    vocab_size: int,
    special_tokens: Iterable[str],
    *,
    num_processes: int | None = None,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train a byte-level BPE: ``vocab, merges = train_bpe("corpus.en", 500, ["<|endoftext|>"])``.

    Returns ``vocab`` (id -> bytes; ``vocab_size`` entries unless the text runs out of
    pairs first) and ``merges`` in creation order. Each step merges the most frequent
    adjacent pair, counted within pre-tokens; among equally frequent pairs the
    lexicographically greater one, comparing ``(left bytes, right bytes)``, wins.
    ``num_processes`` defaults to all CPUs for files of at least
    ``PARALLEL_MIN_BYTES`` and to 1 below that; chunks are cut at special tokens, so
    a file without any is read by one process (still streaming).
    """
    special_tokens = list(PreTokenizer(special_tokens).special_tokens)  # checked, deduplicated
    if not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    num_merges = vocab_size - 256 - len(special_tokens)
    if num_merges < 0:
        raise ValueError(
            f"vocab_size {vocab_size} is smaller than 256 bytes + {len(special_tokens)} special tokens"
        )
    word_counts = count_pretokens(input_path, special_tokens, num_processes=num_processes)
    merges = learn_merges(word_counts, num_merges)
    vocab: dict[int, bytes] = {}
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    for byte in bytes_to_unicode():
        vocab[len(vocab)] = bytes([byte])
    for left, right in merges:
        vocab[len(vocab)] = left + right
    return vocab, merges


def count_pretokens(
    input_path: str | os.PathLike,
    special_tokens: Iterable[str] = (),
    *,
    num_processes: int | None = None,
) -> Counter[str]:
    """How often each pre-token occurs in the file (special tokens left out).

    ``count_pretokens("corpus.en", ["<|endoftext|>"])[" the"]`` is how often `` the`` occurs.
    """
    path = Path(input_path)
    special_tokens = list(special_tokens)
    if not path.is_file():
        raise ValueError(f"cannot read training text {path}: not an existing file")
    size = path.stat().st_size
    if num_processes is None:
        num_processes = (os.cpu_count() or 1) if size >= PARALLEL_MIN_BYTES else 1
    if num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    ranges = [(0, size)]
    if num_processes > 1 and special_tokens:
        num_chunks = max(num_processes, -(-size // _CHUNK_BYTES))
        boundaries = find_chunk_boundaries(path, num_chunks, special_tokens)
        ranges = list(zip(boundaries, boundaries[1:]))
    jobs = [(str(path), start, end, special_tokens) for start, end in ranges]
    total: Counter[str] = Counter()
    if len(jobs) == 1:
        total.update(_count_range(*jobs[0]))
        return total
    with multiprocessing.Pool(min(num_processes, len(jobs))) as pool:
        for counts in pool.imap_unordered(_count_range_job, jobs):
            total.update(counts)
    return total


def find_chunk_boundaries(path: str | os.PathLike, num_chunks: int, special_tokens: list[str]) -> list[int]:
    """Byte offsets ``[0, ..., size]`` that cut the file only where a special token starts.

    A cut is made at a special token that no other special token occurrence overlaps,
    so each chunk pre-tokenizes exactly as it would inside the whole file. Chunks
    can be fewer than asked when special tokens are rare.
    """
    size = os.path.getsize(path)
    specials = sorted({token.encode("utf-8") for token in special_tokens}, key=len, reverse=True)
    pattern = re.compile(b"|".join(map(re.escape, specials)))
    longest = len(specials[0])
    boundaries = [0]
    with open(path, "rb") as file:
        for chunk in range(1, num_chunks):
            cut = _next_clean_cut(file, max(chunk * size // num_chunks, boundaries[-1] + 1), pattern, specials, longest)
            if cut is None:
                break
            if cut > boundaries[-1]:
                boundaries.append(cut)
    if boundaries[-1] != size:
        boundaries.append(size)
    return boundaries


def _next_clean_cut(file, position: int, pattern: re.Pattern, specials: list[bytes], longest: int) -> int | None:
    """The first start of a special token at or after ``position`` that nothing straddles."""
    overlap = longest - 1
    while True:
        file.seek(position)
        block = file.read(1 << 16)
        if not block:
            return None
        for match in pattern.finditer(block):
            cut = position + match.start()
            if not _straddled(file, cut, specials, longest):
                return cut
        if len(block) <= overlap:
            return None
        position += len(block) - overlap


def _straddled(file, cut: int, specials: list[bytes], longest: int) -> bool:
    """Whether some special token occurrence starts before ``cut`` and ends after it."""
    start = max(0, cut - longest + 1)
    file.seek(start)
    window = file.read(cut - start + longest)
    offset = cut - start
    for token in specials:
        found = window.find(token)
        while 0 <= found < offset:
            if found + len(token) > offset:
                return True
            found = window.find(token, found + 1)
    return False


def _count_range_job(job: tuple[str, int, int, list[str]]) -> Counter[str]:
    return _count_range(*job)


def _count_range(path: str, start: int, end: int, special_tokens: list[str]) -> Counter[str]:
    """Count the pre-tokens of bytes ``start:end`` of the file, reading it in blocks."""
    splitter = PreTokenizer(special_tokens)
    counts: Counter[str] = Counter()
    for pieces in splitter.split_stream(_read_text(path, start, end)):
        counts.update(pieces)
    for token in special_tokens:
        counts.pop(token, None)
    return counts


def _read_text(path: str, start: int, end: int) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as file:
        file.seek(start)
        position = start
        while position < end:
            block = file.read(min(_READ_BYTES, end - position))
            if not block:
                break
            try:
                yield decoder.decode(block, final=position + len(block) >= end)
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{path} is not valid UTF-8 near byte {position + error.start}: {error.reason}"
                ) from None
            position += len(block)


def learn_merges(word_counts: dict[str, int], num_merges: int) -> list[tuple[bytes, bytes]]:
    """The first ``num_merges`` BPE merges over words with counts (fewer if pairs run out).

    ``learn_merges({"hug": 2, "pug": 1}, 2) == [(b"u", b"g"), (b"h", b"ug")]``.
    """
    tokens = [bytes([byte]) for byte in range(256)]  # internal id -> bytes
    ids_of = {token: index for index, token in enumerate(tokens)}
    keys = [_descending(token) for token in tokens]
    # A word is held as a str with one character per token (chr of its internal id), so
    # a pair is a 2-character string and merging it is str.replace, which works left to
    # right without overlaps exactly as a BPE merge does, at the speed of C.
    words: list[str] = []
    counts: list[int] = []
    for word, count in word_counts.items():
        encoded = word.encode("utf-8")
        if len(encoded) > 1 and count > 0:
            words.append(encoded.decode("latin-1"))  # byte b -> chr(b)
            counts.append(count)

    pair_counts: dict[str, int] = defaultdict(int)
    pair_words: dict[str, list[int]] = defaultdict(list)
    for index, word in enumerate(words):
        count = counts[index]
        for pair in map(add, word, word[1:]):
            pair_counts[pair] += count
            pair_words[pair].append(index)
    # Heap entries (-count, left key, right key, pair): the smallest entry is the most
    # frequent pair, ties going to the greater bytes. Entries whose count is no longer
    # current are skipped when popped.
    heap = [(-count, keys[ord(pair[0])], keys[ord(pair[1])], pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)

    merges: list[tuple[bytes, bytes]] = []
    while len(merges) < num_merges and heap:
        negative_count, _, _, pair = heapq.heappop(heap)
        if pair_counts.get(pair) != -negative_count:
            continue
        left, right = tokens[ord(pair[0])], tokens[ord(pair[1])]
        merges.append((left, right))
        # Two different merges can spell the same bytes; they are one token for counting.
        new = ids_of.get(left + right)
        if new is None:
            new = ids_of[left + right] = len(tokens)
            tokens.append(left + right)
            keys.append(_descending(left + right))
        new_token = chr(new)

        delta: dict[str, int] = defaultdict(int)
        # pair_words may list a word twice, or a word that lost the pair since (lists are
        # never pruned, which is cheaper than sets); such words no longer hold the pair
        # when reached, so they are skipped.
        for index in pair_words.pop(pair):
            word = words[index]
            first = word.find(pair)
            if first < 0:
                continue
            merged = word.replace(pair, new_token)
            words[index] = merged
            # Only pairs within one token of a merged occurrence change: diff that span.
            start = max(first - 1, 0)
            end = word.rfind(pair) + 3
            unchanged_tail = max(len(word) - end, 0)
            old_span = word[start:end]
            new_span = merged[start : len(merged) - unchanged_tail]
            count = counts[index]
            for old in map(add, old_span, old_span[1:]):
                delta[old] -= count
            for fresh in map(add, new_span, new_span[1:]):
                delta[fresh] += count
                if new_token in fresh:
                    pair_words[fresh].append(index)
        del pair_counts[pair]
        delta.pop(pair, None)
        for changed, change in delta.items():
            if not change:
                continue
            count = pair_counts[changed] + change
            if count > 0:
                pair_counts[changed] = count
                heapq.heappush(heap, (-count, keys[ord(changed[0])], keys[ord(changed[1])], changed))
            else:
                del pair_counts[changed]
    return merges


def _descending(token: bytes) -> tuple[int, ...]:
    """A key that sorts byte strings in reverse: greater bytes get smaller keys.

    Each byte is flipped, and a terminator above any flipped byte makes a prefix sort
    after its extensions (``b"ab" < b"abc"``, so its key must be greater).
    """
    return (*(255 - byte for byte in token), 256)
