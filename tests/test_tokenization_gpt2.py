"""Our BPETokenizer with GPT-2's files gives exactly tiktoken's GPT-2 ids."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cs336_lectures.tokenization import BPETokenizer, get_compression_ratio, get_gpt2_tokenizer, gpt2_files

EOT = "<|endoftext|>"
FIXTURE_TEXTS = ["corpus.en", "tinystories_sample.txt", "address.txt", "german.txt"]


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


def test_missing_gpt2_files_are_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="TIKTOKEN_CACHE_DIR"):
        gpt2_files(tmp_path)


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
