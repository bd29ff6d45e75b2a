"""Byte layer: one token per UTF-8 byte.

Over ``character`` it fixes the vocabulary at 256 ids (every string is a sequence of
UTF-8 bytes), at the price of long sequences: the compression ratio is exactly 1.
It is also the starting alphabet of BPE, the layer above.
"""

from __future__ import annotations

from collections.abc import Sequence

from cs336_lectures.tokenization.base import Tokenizer


class ByteTokenizer(Tokenizer):
    """UTF-8 bytes as ids: ``ByteTokenizer().encode("é") == [195, 169]``.

    ``decode`` of ids that are not valid UTF-8 (a cut through a character) puts
    U+FFFD in their place rather than raising.
    """

    vocab_size = 256

    def encode(self, string: str) -> list[int]:
        return list(string.encode("utf-8"))

    def decode(self, indices: Sequence[int]) -> str:
        try:
            data = bytes(indices)
        except (ValueError, TypeError) as error:
            raise ValueError(f"byte ids must be integers in 0..255: {error}") from None
        return data.decode("utf-8", errors="replace")
