"""The lecture's tokenizers: interface, characters, bytes, words, teaching BPE."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cs336_lectures.tokenization import (
    GPT2_TOKENIZER_REGEX,
    BPETokenizerParams,
    ByteTokenizer,
    CharacterTokenizer,
    SimpleBPETokenizer,
    Tokenizer,
    get_compression_ratio,
    merge,
    pretokenize,
    train_simple_bpe,
)

HELLO = "Hello, 🌍! Привет!"


def test_tokenizer_is_an_interface():
    with pytest.raises(TypeError):
        Tokenizer()


def test_character_tokenizer_matches_the_lecture():
    tokenizer = CharacterTokenizer()
    indices = tokenizer.encode(HELLO)
    assert indices == [72, 101, 108, 108, 111, 44, 32, 127757, 33, 32, 1055, 1088, 1080, 1074, 1077, 1090, 33]
    assert tokenizer.decode(indices) == HELLO
    assert get_compression_ratio(HELLO, indices) == 26 / 17


def test_byte_tokenizer_matches_the_lecture():
    tokenizer = ByteTokenizer()
    indices = tokenizer.encode(HELLO)
    assert indices[:12] == [72, 101, 108, 108, 111, 44, 32, 240, 159, 140, 141, 33]
    assert len(indices) == 26
    assert tokenizer.decode(indices) == HELLO
    assert get_compression_ratio(HELLO, indices) == 1.0


def test_byte_tokenizer_replaces_invalid_utf8():
    assert ByteTokenizer().decode([0xF0, 0x9F, 104, 105]) == "\ufffdhi"
    with pytest.raises(ValueError, match="0..255"):
        ByteTokenizer().decode([256])


def test_compression_ratio_needs_tokens():
    assert get_compression_ratio("Hello", ["He", "llo"]) == 2.5
    with pytest.raises(ValueError, match="zero tokens"):
        get_compression_ratio("Hello", [])


@given(st.text())
def test_character_and_byte_tokenizers_round_trip(string):
    for tokenizer in (CharacterTokenizer(), ByteTokenizer()):
        assert tokenizer.decode(tokenizer.encode(string)) == string


def test_gpt2_regex_segments_words():
    string = "I'll say supercalifragilisticexpialidocious!"
    segments = pretokenize(string)
    assert segments == ["I", "'ll", " say", " supercalifragilisticexpialidocious", "!"]
    assert get_compression_ratio(string, segments) == 44 / 5
    assert "".join(pretokenize("  x \n\n y  ")) == "  x \n\n y  "


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from("aZ9 \t\n\x0b\x0c\r\x1c'sltv.!_é²𝟘\u00a0\u2028👋")))
def test_ascii_fast_path_agrees_with_the_regex(string):
    import regex

    expected = regex.findall(GPT2_TOKENIZER_REGEX, string)
    assert pretokenize(string) == expected
    ascii_only = string.encode("ascii", "ignore").decode()
    assert pretokenize(ascii_only) == regex.findall(GPT2_TOKENIZER_REGEX, ascii_only)


def test_merge_replaces_left_to_right():
    assert merge([1, 2, 1, 2], (1, 2), 9) == [9, 9]
    assert merge([1, 1, 1], (1, 1), 9) == [9, 1]
    assert merge([], (1, 1), 9) == []


def test_teaching_bpe_on_the_cat_in_the_hat():
    params = train_simple_bpe("the cat in the hat", num_merges=3)
    assert isinstance(params, BPETokenizerParams)
    # (116, 104) "th" and (97, 116) "at" both occur twice; "th" is seen first.
    assert params.merges == {(116, 104): 256, (256, 101): 257, (257, 32): 258}
    assert params.vocab[258] == b"the "
    tokenizer = SimpleBPETokenizer(params)
    indices = tokenizer.encode("the quick brown fox")
    assert indices == [258, 113, 117, 105, 99, 107, 32, 98, 114, 111, 119, 110, 32, 102, 111, 120]
    assert tokenizer.decode(indices) == "the quick brown fox"


def test_teaching_bpe_ties_go_to_the_pair_seen_first():
    # Every pair occurs once; the real trainer would take the greatest, (z, z).
    assert train_simple_bpe("abzz", 1).merges == {(97, 98): 256}
    assert train_simple_bpe("ab zz ab zz", 1).merges == {(97, 98): 256}


def test_teaching_bpe_on_russian_and_emoji():
    string = "мама мыла раму, 👋👋"
    params = train_simple_bpe(string, num_merges=8)
    # Merge k (counting from 1) creates id 255 + k.
    made_at = {token: index - 255 for index, token in params.vocab.items() if index >= 256}
    assert made_at["👋".encode()] == 7
    assert made_at["мама".encode()] == 8
    assert made_at[b"\xd0\xbc\xd1"] == 4  # "м" plus the first byte of "ы"
    assert made_at[b"\xf0\x9f"] == 5  # half of "👋"
    tokenizer = SimpleBPETokenizer(params)
    indices = tokenizer.encode(string)
    assert tokenizer.decode(indices) == string
    assert tokenizer.decode([made_at[b"\xf0\x9f"] + 255]) == "\ufffd"


def test_teaching_bpe_stops_when_pairs_run_out():
    assert len(train_simple_bpe("ab", 5).merges) == 1
    with pytest.raises(ValueError, match="num_merges"):
        train_simple_bpe("ab", -1)
