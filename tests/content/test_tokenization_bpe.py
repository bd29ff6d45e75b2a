"""Byte-level BPE: training against the reference, the tokenizer, streaming."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import regex
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
    reference = fixtures_dir / "train-bpe-reference-merges.txt"
    if not reference.exists():  # a clone without ../shared: the definition below is the reference
        assert merges == brute_force_merges((fixtures_dir / "corpus.en").read_text(), len(merges), [EOT])
        return
    assert merges == load_gpt2_merges(reference)
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


# The definition, written independently of the library: GPT-2's pattern, special tokens
# cut out first (longest first), every pair recounted at every step.
GPT2_PATTERN = regex.compile(r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def reference_pretokens(text: str, special_tokens: list[str]) -> list[str]:
    if not special_tokens:
        return GPT2_PATTERN.findall(text)
    longest_first = sorted(special_tokens, key=len, reverse=True)
    parts = regex.split("|".join(map(regex.escape, longest_first)), text)
    return [word for part in parts for word in GPT2_PATTERN.findall(part)]


def brute_force_merges(text: str, num_merges: int, special_tokens: list[str]) -> list[tuple[bytes, bytes]]:
    words: Counter[tuple[bytes, ...]] = Counter()
    for word in reference_pretokens(text, special_tokens):
        words[tuple(bytes([byte]) for byte in word.encode())] += 1
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
        merged_words: Counter[tuple[bytes, ...]] = Counter()
        for word, count in words.items():
            merged, i = [], 0
            while i < len(word):
                if word[i : i + 2] == best:
                    merged.append(best[0] + best[1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            merged_words[tuple(merged)] += count
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


SPECIALS = ["<|a.b|>", "<|a.b|><|a.b|>", "b|", "ab", EOT]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", " ", "\r\n", "|", "<|", "é", "1", "'s", *SPECIALS]), max_size=60).map("".join),
    st.lists(st.sampled_from(SPECIALS), unique=True),
)
def test_train_bpe_matches_the_definition_with_special_tokens(tmp_path_factory, text, special_tokens):
    path = tmp_path_factory.mktemp("generated") / "text.txt"
    path.write_bytes(text.encode("utf-8"))
    vocab, merges = train_bpe(path, 256 + len(special_tokens) + 30, special_tokens)
    assert merges == brute_force_merges(text, 30, special_tokens)
    assert [vocab[i] for i in range(len(special_tokens))] == [token.encode() for token in special_tokens]


@pytest.mark.parametrize(
    ("text", "expected_merges"),
    [
        ("", 0),
        (EOT, 0),
        (EOT + EOT + EOT, 0),
        (EOT + "hi hi" + EOT, None),
        ("hi" + EOT + EOT + "hi", 1),
        ("abab ab", None),  # fewer pairs than the vocab asks for
    ],
)
def test_train_bpe_on_small_and_degenerate_files(tmp_path, text, expected_merges):
    path = tmp_path / "text.txt"
    path.write_text(text)
    vocab, merges = train_bpe(path, 1000, [EOT])
    assert merges == brute_force_merges(text, 1000, [EOT])
    assert expected_merges is None or len(merges) == expected_merges
    assert len(vocab) == 256 + 1 + len(merges)


def test_train_bpe_rejects_misused_arguments(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("some text")
    with pytest.raises(TypeError, match="list of strings"):
        train_bpe(path, 300, EOT)
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        train_bpe(path, "300", [EOT])
    with pytest.raises(ValueError, match="non-empty"):
        train_bpe(path, 300, [""])


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
    for special_tokens in ([EOT], [EOT, EOT + EOT, "ext|><|end"]):
        serial = train_module.count_pretokens(path, special_tokens, num_processes=1)
        assert train_module.count_pretokens(path, special_tokens, num_processes=2) == serial
    assert train_bpe(path, 400, [EOT], num_processes=2) == train_bpe(path, 400, [EOT], num_processes=1)


def test_train_bpe_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        train_bpe(tmp_path / "absent.txt", 300, [])
    with pytest.raises(ValueError, match="not an existing file"):
        train_bpe(tmp_path, 300, [])
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


def test_special_tokens_that_are_also_ordinary_tokens(corpus_bpe):
    vocab, merges = corpus_bpe
    # The longest lowercase word piece the merges made: as a special token it keeps its one id.
    the = max((index for index, token in vocab.items() if token.isalpha() and token.islower()),
              key=lambda index: (len(vocab[index]), -index))
    word = vocab[the].decode()
    assert len(word) >= 3
    tokenizer = BPETokenizer(vocab, merges, [word])
    assert tokenizer.special_ids == {word: the}
    assert tokenizer.encode(word) == [the]
    assert tokenizer.encode(f" {word}me") == [tokenizer.encode(" ")[0], the, *tokenizer.encode("me")]
    assert tokenizer.decode(tokenizer.encode(f"o{word} {word}me")) == f"o{word} {word}me"


def test_special_tokens_must_be_a_list(corpus_bpe):
    with pytest.raises(TypeError, match="list of strings"):
        BPETokenizer(*corpus_bpe, EOT)


def test_decode_accepts_numpy_and_torch_integers(small_tokenizer):
    import numpy as np
    import torch

    ids = small_tokenizer.encode("the cat")
    assert small_tokenizer.decode(np.array(ids)) == "the cat"
    assert small_tokenizer.decode(torch.tensor(ids)) == "the cat"
    with pytest.raises(ValueError, match="must be integers"):
        small_tokenizer.decode([1.0])


def test_encode_iterable_equals_encode(fixtures_dir, small_tokenizer):
    text = (fixtures_dir / "tinystories_sample.txt").read_text() * 30  # above the stream buffer
    expected = small_tokenizer.encode(text)
    sample = fixtures_dir / "tinystories_sample.txt"
    with open(sample) as file:
        assert list(small_tokenizer.encode_iterable(file)) == small_tokenizer.encode(sample.read_text())
    assert list(small_tokenizer.encode_iterable(text.splitlines(keepends=True))) == expected
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    assert list(small_tokenizer.encode_iterable(pieces)) == expected


def test_encode_iterable_over_a_file_whose_lines_cut_special_tokens(tmp_path, corpus_bpe):
    tokenizer = BPETokenizer(*corpus_bpe, [EOT, "<|a\nb|>"])
    text = "Once upon<|a\nb|>\n a time\r\n<|a\nb|><|a\nb|>\n\n" * 5000 + "the end" + EOT
    path = tmp_path / "text.txt"
    path.write_text(text, encoding="utf-8", newline="")
    with open(path, encoding="utf-8", newline="") as file:
        assert list(tokenizer.encode_iterable(file)) == tokenizer.encode(text)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.sampled_from(["the", " cat", "\n", "  ", "'s", "é", "👋", EOT, "<|endoftext", "|>"]), max_size=30),
    st.lists(st.integers(min_value=0), max_size=40),
)
def test_encode_iterable_equals_encode_wherever_chunks_are_cut(small_tokenizer, pieces, cuts):
    text = "".join(pieces) * 3000  # long enough for encode_iterable to flush mid-stream
    positions = sorted({0, len(text), *(cut % (len(text) + 1) for cut in cuts)})
    chunks = [text[start:end] for start, end in zip(positions, positions[1:])]
    assert list(small_tokenizer.encode_iterable(chunks)) == small_tokenizer.encode(text)


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
