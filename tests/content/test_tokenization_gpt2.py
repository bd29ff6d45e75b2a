"""Our BPETokenizer with GPT-2's files gives exactly tiktoken's GPT-2 ids."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cs336_lectures.tokenization import BPETokenizer, get_compression_ratio, get_gpt2_tokenizer, gpt2_files
from cs336_lectures.tokenization.tokenizer import LONG_PIECE

EOT = "<|endoftext|>"
FIXTURE_TEXTS = ["corpus.en", "tinystories_sample.txt", "address.txt", "german.txt"]
BUNDLED_TEXT = Path(__file__).resolve().parents[1] / "fixtures" / "texts" / "mixed.txt"  # numbers, code, scripts, emoji, spaces


@pytest.fixture(scope="module")
def tiktoken_gpt2(gpt2_cache):
    return get_gpt2_tokenizer()


@pytest.fixture(scope="module")
def ours(gpt2_cache):
    return BPETokenizer.from_files(*gpt2_files(gpt2_cache), [EOT])


@pytest.fixture(scope="module")
def ours_without_specials(gpt2_cache):
    return BPETokenizer.from_files(*gpt2_files(gpt2_cache))


def test_gpt2_on_the_lecture_string(tiktoken_gpt2, ours):
    string = "Hello, 🌍! Привет!"
    indices = tiktoken_gpt2.encode(string)
    assert indices == [15496, 11, 12520, 234, 235, 0, 12466, 253, 21169, 18849, 38857, 16843, 20375, 0]
    assert tiktoken_gpt2.decode(indices) == string
    assert get_compression_ratio(string, indices) == 26 / 14
    assert ours.encode(string) == indices


@pytest.mark.parametrize("name", FIXTURE_TEXTS)
def test_fixture_texts_match_tiktoken(fixtures_dir, tiktoken_gpt2, ours, ours_without_specials, name):
    text = (fixtures_dir / name).read_text()
    for sample in (text, text + EOT + text[:200] + EOT):
        expected = tiktoken_gpt2.encode(sample, allowed_special={EOT})
        assert ours.encode(sample) == expected
        assert list(ours.encode_iterable(sample.splitlines(keepends=True))) == expected
        assert ours_without_specials.encode(sample) == tiktoken_gpt2.encode_ordinary(sample)
        assert ours.decode(expected) == sample


@pytest.mark.parametrize("text", ["\U000323b0's", " \u0558\u0558's 1\U0001246f", "ok \U0003d000\U0003d000 done"])
def test_characters_newer_than_tiktokens_unicode_tables(tiktoken_gpt2, ours, text):
    # Unicode 17.0 letters: tiktoken (Unicode 16.0 tables) groups them with symbols.
    assert ours.encode(text) == tiktoken_gpt2.encode(text)


@pytest.mark.parametrize(
    "text",
    [
        "a  b   c\t\t d \n\n\n e \r\n\r\n  ",  # whitespace runs
        "   leading and trailing   ",
        "1 12 123 1234 12345 3.14159 1,000,000 ²³ ٣٤٥",  # numbers
        "I'm you're he's we'll they've I'd don't DON'T o'clock ''s",  # contractions
        "👋 👍🏽 👨‍👩‍👧‍👦 🇯🇵 ❤️",  # emoji, modifiers, joiners, flags
        "日本語の文章です。中文文本，한국어 텍스트",  # CJK
        "<|endoftext|>x<|endoftext|><|endoftext|> <|endoftext|>\n<|endoftext",  # special tokens
    ],
)
def test_hand_picked_text_matches_tiktoken(tiktoken_gpt2, ours, ours_without_specials, text):
    assert ours.encode(text) == tiktoken_gpt2.encode(text, allowed_special="all")
    # Not declared special, <|endoftext|> is plain text, as tiktoken with no check.
    assert ours_without_specials.encode(text) == tiktoken_gpt2.encode(text, disallowed_special=())


@pytest.mark.parametrize("text", [
    "".join("acgt"[(i * i + 3 * i) % 4] for i in range(3000)),  # a genome, one pre-token
    "a" * 1000, "ab" * 700, " " + "9" * 2000, "!" * 999, "\u0301" * 400, "👋" * 300,
    "é" * (LONG_PIECE // 2) + "e" * 3,  # just over the threshold, counted in bytes
])
def test_long_pre_tokens_match_tiktoken(tiktoken_gpt2, ours, text):
    # Pieces over LONG_PIECE bytes take the heap path of the tokenizer.
    assert len(text.encode()) > LONG_PIECE
    assert ours.encode(text) == tiktoken_gpt2.encode(text)
    assert ours.encode(" x" + text + "x") == tiktoken_gpt2.encode(" x" + text + "x")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.sampled_from("abcdefghéü日"), min_size=LONG_PIECE // 2, max_size=4 * LONG_PIECE))
def test_generated_long_words_match_tiktoken(tiktoken_gpt2, ours, word):
    assert ours.encode(word) == tiktoken_gpt2.encode(word)
    assert ours.encode(" " + word) == tiktoken_gpt2.encode(" " + word)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pieces=st.lists(st.sampled_from(["\ud835", "\udc00", "\ud83d", "\udc4b", "ab", " ", "'s", EOT]), max_size=20),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=5),
)
def test_surrogates_are_encoded_as_tiktoken_does(tiktoken_gpt2, ours, pieces, cuts):
    # Python strings may hold surrogates: tiktoken pairs them up and replaces lone ones.
    text = "".join(pieces)
    positions = sorted({0, len(text), *(min(cut, len(text)) for cut in cuts)})
    chunks = [text[start:end] for start, end in zip(positions, positions[1:])]
    expected = tiktoken_gpt2.encode(text, allowed_special="all")
    assert ours.encode(text) == expected
    assert list(ours.encode_iterable(chunks)) == expected


def test_a_word_of_the_vocab_as_special_token(gpt2_cache, tiktoken_gpt2):
    tokenizer = BPETokenizer.from_files(*gpt2_files(gpt2_cache), ["hello"])
    [hello] = tiktoken_gpt2.encode("hello")
    assert tokenizer.special_ids == {"hello": hello}
    # The text is cut at the special token first, so " hello" loses its space.
    pieces = [tiktoken_gpt2.encode(piece) for piece in ("say ", ", ", "s")]
    assert tokenizer.encode("say hello, hellos") == [*pieces[0], hello, *pieces[1], hello, *pieces[2]]
    assert tokenizer.encode(" shell") == tiktoken_gpt2.encode(" shell")


def test_saved_gpt2_files_load_back_identically(gpt2_cache, tmp_path, ours, fixtures_dir):
    vocab_path, merges_path = tmp_path / "encoder.json", tmp_path / "vocab.bpe"
    ours.save(vocab_path, merges_path)
    assert merges_path.read_bytes() == gpt2_files(gpt2_cache)[1].read_bytes()
    loaded = BPETokenizer.from_files(vocab_path, merges_path, [EOT])
    text = (fixtures_dir / "german.txt").read_text() + EOT + "日本語 👋 don't"
    assert loaded.encode(text) == ours.encode(text)
    assert loaded.vocab == ours.vocab


def test_missing_gpt2_files_are_reported(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="TIKTOKEN_CACHE_DIR"):
        gpt2_files(tmp_path)
    import tiktoken

    def no_network(name):
        raise ConnectionError("no network")

    monkeypatch.setattr(tiktoken, "get_encoding", no_network)
    with pytest.raises(RuntimeError, match="set TIKTOKEN_CACHE_DIR"):
        get_gpt2_tokenizer()


def test_special_token_id_is_gpt2s(ours, ours_without_specials):
    assert ours.encode(EOT) == [50256]
    assert ours_without_specials.encode(EOT) == [27, 91, 437, 1659, 5239, 91, 29]


# Arbitrary characters mixed with the pieces where pre-tokenization has its edge cases.
GENERATED = st.lists(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["<|endoftext|>", " ", "  ", "\n", "'s", "'ll", "'", "1", "2023", "\u00a0", "👋"]),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=GENERATED)
def test_generated_text_matches_tiktoken(tiktoken_gpt2, ours, ours_without_specials, text):
    assert ours.encode(text) == tiktoken_gpt2.encode(text, allowed_special={EOT})
    assert ours_without_specials.encode(text) == tiktoken_gpt2.encode_ordinary(text)
    assert ours.decode(ours.encode(text)) == text


def test_the_bundled_gpt2_files_are_the_published_ones(gpt2_cache):
    vocab_path, merges_path = gpt2_files(gpt2_cache)
    assert hashlib.sha1(vocab_path.read_bytes()).hexdigest() == "f0223209235343bc067d7da838328bced8085ae1"
    assert hashlib.sha1(merges_path.read_bytes()).hexdigest() == "396d4d8ec90cb02f4d56e049e0e4add868bcd943"


def test_a_text_of_every_kind_matches_tiktoken(tiktoken_gpt2, ours):
    text = BUNDLED_TEXT.read_text(encoding="utf-8")
    assert ours.encode(text) == tiktoken_gpt2.encode(text) and len(text) > 400
