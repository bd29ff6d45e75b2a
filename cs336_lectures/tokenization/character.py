"""Character layer: one token per Unicode code point.

Over ``base`` it adds the simplest real tokenizer: a character's id is its code point
(``ord``). It round-trips any string, but its vocabulary is huge (about 150,000
assigned characters, ids up to 0x10FFFF) and mostly spent on rare characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from cs336_lectures.tokenization.base import Tokenizer


class CharacterTokenizer(Tokenizer):
    """Code points as ids: ``CharacterTokenizer().encode("hi") == [104, 105]``."""

    def encode(self, string: str) -> list[int]:
        return [ord(character) for character in string]

    def decode(self, indices: Sequence[int]) -> str:
        try:
            return "".join(chr(index) for index in indices)
        except (ValueError, TypeError, OverflowError) as error:
            raise ValueError(f"not a sequence of Unicode code points: {error}") from None
