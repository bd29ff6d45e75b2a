"""The bottom layer: what every tokenizer is, and how to measure one.

A tokenizer turns a string into a list of integer ids (``encode``) and back
(``decode``). Every layer above (characters, bytes, BPE) implements this interface;
``get_compression_ratio`` is the yardstick the lecture uses to compare them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence


class Tokenizer(ABC):
    """Strings to ids and back: ``tokenizer.decode(tokenizer.encode(s)) == s``."""

    @abstractmethod
    def encode(self, string: str) -> list[int]:
        """The ids of ``string``."""

    @abstractmethod
    def decode(self, indices: Sequence[int]) -> str:
        """The string the ids stand for."""


def get_compression_ratio(string: str, indices: Sequence[object]) -> float:
    """UTF-8 bytes per token: ``get_compression_ratio("Hello", [1, 2]) == 2.5``.

    ``indices`` may be any sequence of tokens (ids, or string segments): only its
    length counts.
    """
    if len(indices) == 0:
        raise ValueError("cannot compute a compression ratio over zero tokens")
    return len(string.encode("utf-8")) / len(indices)
