"""Byte-level BPE: training against the reference, the tokenizer, streaming."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cs336_lectures.tokenization import (
    BPETokenizer,
    PreTokenizer,
    bytes_to_unicode,
    load_gpt2_merges,
    load_gpt2_vocab,
    train_bpe,
)
from cs336_lectures.tokenization import train as train_module

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def corpus_bpe(fixtures_dir):
    return train_bpe(fixtures_dir / "corpus.en", 500, [EOT])


def test_train_bpe_reproduces_the_reference(fixtures_dir, corpus_bpe):
    vocab, merges = corpus_bpe
    assert merges == load_gpt2_merges(fixtures_dir / "train-bpe-reference-merges.txt")
    assert vocab == load_gpt2_vocab(fixtures_dir / "train-bpe-reference-vocab.json")


def test_train_bpe_vocab_layout(corpus_bpe):
    vocab, merges = corpus_bpe
    assert len(vocab) == 500 and len(merges) == 500 - 256 - 1
    assert vocab[0] == EOT.encode()
    assert [vocab[1 + i] for i in range(256)] == [bytes([byte]) for byte in bytes_to_unicode()]
    assert [vocab[257 + i] for i in range(len(merges))] == [left + right for left, right in merges]


def test_train_bpe_ties_go_to_the_greater_pair(tmp_path):
    path = tmp_path / "ties.txt"
    path.write_text("ab cd")  # pre-tokens "ab" and " cd": pairs (a,b), (" ",c), (c,d) once each
    _, merges = train_bpe(path, 256 + 2, [])
    assert merges == [(b"c", b"d"), (b"a", b"b")]


def brute_force_merges(text: str, num_merges: int, special_tokens: list[str]) -> list[tuple[bytes, bytes]]:
    """The definition, recounting every pair at every step."""
    counts = Counter(PreTokenizer(special_tokens).split(text))
    words: dict[tuple[bytes, ...], int] = {}
    for word, count in counts.items():
        if word not in special_tokens:
            key = tuple(bytes([byte]) for byte in word.encode())
            words[key] = words.get(key, 0) + count
    merges = []
    for _ in range(num_merges):
        pairs: Counter = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = max(pairs, key=lambda pair: (pairs[pair], pair))
        merges.append(best)
        merged_words: dict[tuple[bytes, ...], int] = {}
        for word, count in words.items():
            merged, i = [], 0
            while i < len(word):
                if word[i : i + 2] == best:
                    merged.append(best[0] + best[1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            merged_words[tuple(merged)] = merged_words.get(tuple(merged), 0) + count
        words = merged_words
    return merges


def test_train_bpe_matches_the_definition_on_other_texts(tmp_path, fixtures_dir):
    names = ("tinystories_sample.txt", "german.txt", "address.txt")
    text = "".join((fixtures_dir / name).read_text() for name in names)
    path = tmp_path / "mixed.txt"
    path.write_text(text)
    _, merges = train_bpe(path, 256 + 1 + 200, [EOT])
    assert merges == brute_force_merges(text, 200, [EOT])


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="aab b\nйé!1", max_size=300))
def test_train_bpe_matches_the_definition_on_generated_text(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("generated") / "text.txt"
    path.write_text(text, encoding="utf-8")
    _, merges = train_bpe(path, 256 + 40, [])
    assert merges == brute_force_merges(text, 40, [])


def test_special_tokens_split_the_text_and_are_never_merged(tmp_path):
    path = tmp_path / "special.txt"
    path.write_text("ab<|endoftext|>ab<|endoftext|>ab" * 20)
    vocab, merges = train_bpe(path, 300, [EOT])
    assert all(b"<|" not in left + right or left + right == b"<|" for left, right in merges)
    assert not any(b"endoftext|>" in left + right and b"b" in left + right for left, right in merges)
    assert list(vocab.values()).count(EOT.encode()) == 1


def test_parallel_pretokenization_gives_the_same_counts(tmp_path, fixtures_dir, monkeypatch):
    lines = (fixtures_dir / "corpus.en").read_text().splitlines(keepends=True)
    text = "".join(line + (EOT if number % 7 == 0 else "") for number, line in enumerate(lines))
    path = tmp_path / "corpus_with_specials.txt"
    path.write_text(text)
    monkeypatch.setattr(train_module, "_CHUNK_BYTES", 4096)
    boundaries = train_module.find_chunk_boundaries(path, 30, [EOT, EOT + EOT])
    data = path.read_bytes()
    assert len(boundaries) > 10
    assert all(data.startswith(EOT.encode(), cut) for cut in boundaries[1:-1])
    serial = train_module.count_pretokens(path, [EOT], num_processes=1)
    parallel = train_module.count_pretokens(path, [EOT], num_processes=2)
    assert serial == parallel
    assert train_bpe(path, 400, [EOT], num_processes=2) == train_bpe(path, 400, [EOT], num_processes=1)


def test_train_bpe_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        train_bpe(tmp_path / "absent.txt", 300, [])
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text \xff\xfe then garbage")
    with pytest.raises(ValueError, match="not valid UTF-8"):
        train_bpe(bad, 300, [])
    with pytest.raises(ValueError, match="smaller than 256"):
        train_bpe(bad, 256, [EOT])


@pytest.fixture(scope="module")
def small_tokenizer(corpus_bpe):
    vocab, merges = corpus_bpe
    return BPETokenizer(vocab, merges, [EOT])


def test_encode_uses_learned_merges(small_tokenizer):
    ids = small_tokenizer.encode(" the")
    assert len(ids) == 1 and small_tokenizer.vocab[ids[0]] == b" the"
    assert small_tokenizer.encode(EOT) == [0]
    assert small_tokenizer.decode(small_tokenizer.encode("a<|endoftext|> the end")) == "a<|endoftext|> the end"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_round_trip_of_any_unicode(small_tokenizer, string):
    assert small_tokenizer.decode(small_tokenizer.encode(string)) == string


def test_decode_replaces_invalid_utf8_and_rejects_unknown_ids(small_tokenizer):
    emoji = small_tokenizer.encode("👋")
    assert len(emoji) == 4
    assert small_tokenizer.decode(emoji[:2]) == "\ufffd"
    with pytest.raises(ValueError, match="unknown token id"):
        small_tokenizer.decode([10**9])


def test_overlapping_special_tokens_longest_wins(corpus_bpe):
    vocab, merges = corpus_bpe
    double = EOT + EOT
    tokenizer = BPETokenizer(vocab, merges, [EOT, double])
    ids = tokenizer.encode(f"a{double}b{EOT}c{EOT}{EOT}{EOT}")
    double_id = tokenizer.special_ids[double]
    assert double_id == 500  # not in vocab: gets the next free id
    assert ids.count(double_id) == 2 and ids.count(0) == 2
    assert tokenizer.decode(ids) == f"a{double}b{EOT}c{EOT}{EOT}{EOT}"


def test_encode_iterable_equals_encode(fixtures_dir, small_tokenizer):
    text = (fixtures_dir / "tinystories_sample.txt").read_text() * 30  # above the stream buffer
    expected = small_tokenizer.encode(text)
    sample = fixtures_dir / "tinystories_sample.txt"
    with open(sample) as file:
        assert list(small_tokenizer.encode_iterable(file)) == small_tokenizer.encode(sample.read_text())
    assert list(small_tokenizer.encode_iterable(text.splitlines(keepends=True))) == expected
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    assert list(small_tokenizer.encode_iterable(pieces)) == expected


STREAM_ALPHABET = "ab1 '\n\tsl<|endoftext>é👋"


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=STREAM_ALPHABET, max_size=80),
    st.lists(st.integers(min_value=0, max_value=80), max_size=12),
)
def test_split_stream_matches_split_wherever_chunks_are_cut(text, cuts):
    splitter = PreTokenizer([EOT, EOT + EOT, "<|"])
    positions = sorted({0, len(text), *(min(cut, len(text)) for cut in cuts)})
    chunks = [text[start:end] for start, end in zip(positions, positions[1:])]
    streamed = [piece for pieces in splitter.split_stream(chunks, min_buffer=1) for piece in pieces]
    assert streamed == splitter.split(text)


def test_split_stream_rejects_bytes():
    with pytest.raises(TypeError, match="chunks of str"):
        list(PreTokenizer().split_stream([b"abc"], min_buffer=1))


def test_save_and_load_gpt2_format(tmp_path, small_tokenizer):
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    small_tokenizer.save(vocab_path, merges_path)
    assert merges_path.read_text().startswith("#version")
    assert json.loads(vocab_path.read_text())["Ġthe"] == small_tokenizer.encode(" the")[0]
    loaded = BPETokenizer.from_files(vocab_path, merges_path, [EOT])
    assert loaded.vocab == small_tokenizer.vocab and loaded.merges == small_tokenizer.merges
    text = "The end.<|endoftext|> Once upon a time"
    assert loaded.encode(text) == small_tokenizer.encode(text)


def test_bad_files_and_vocab_give_clear_errors(tmp_path, corpus_bpe):
    vocab, merges = corpus_bpe
    broken = tmp_path / "merges.txt"
    broken.write_text("#version: 0.2\nĠ t\nthree tokens here\n")
    with pytest.raises(ValueError, match=r"merges.txt:3: expected two tokens"):
        load_gpt2_merges(broken)
    not_json = tmp_path / "vocab.json"
    not_json.write_text("{")
    with pytest.raises(ValueError, match="cannot read vocabulary"):
        load_gpt2_vocab(not_json)
    with pytest.raises(ValueError, match="lacks 1 single bytes"):
        BPETokenizer({i: t for i, t in vocab.items() if t != b"a"}, [], None)
    with pytest.raises(ValueError, match="not in vocab"):
        BPETokenizer(vocab, merges + [(b"zz", b"q")])


def test_tokenizer_rejects_wrong_types(small_tokenizer, corpus_bpe):
    with pytest.raises(TypeError, match="expects str"):
        small_tokenizer.encode(b"bytes")
    vocab, merges = corpus_bpe
    with pytest.raises(ValueError, match="non-empty bytes"):
        BPETokenizer({**vocab, 600: "text"}, merges)
