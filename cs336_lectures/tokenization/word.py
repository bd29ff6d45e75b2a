"""Word layer: cutting text into pre-tokens with GPT-2's regular expression.

Over ``byte`` it adds segmentation: before BPE ever runs, GPT-2 splits text into
words, numbers, punctuation runs and whitespace (a word keeps the space before it:
``" world"``), so that merges never cross those boundaries. Special tokens such as
``<|endoftext|>`` are cut out first and kept whole. ``PreTokenizer.split_stream``
does the same over text that arrives in chunks, with exactly the pieces the whole
text would give, in memory bounded by the chunk size.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import regex

# GPT-2's pre-tokenization pattern (tiktoken's ``r50k_pat_str`` says the same thing):
# contractions, letters, digits, other symbols (each optionally after one space),
# then whitespace, keeping one space back for the word that follows it.
GPT2_TOKENIZER_REGEX = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Code points first assigned in Unicode 17.0. Newer releases of ``regex`` class them as
# letters or numbers, but tiktoken's engine (Unicode 16.0 tables) sees unassigned code
# points, which GPT-2's regex groups with symbols. Treating them as symbols keeps our
# pre-tokens equal to tiktoken's whatever tables the installed ``regex`` carries.
_UNICODE_17 = (
    "\u0558\u058B-\u058C\u088F\u0C5C\u0CDC\u208F\u209D-\u209F\uA7CE-\uA7CF\uA7D2"
    "\uA7D4\uA7DD\uA7E2\uA7F1\uAB6C-\uAB6D\U000107BB-\U000107BF\U00010940-\U00010959"
    "\U00010EC5-\U00010EC7\U00010ED9-\U00010EEE\U00011B0A\U00011DB0-\U00011DDB"
    "\U00011DE0-\U00011DE9\U00011DF1\U0001246F\U00012475-\U0001247F"
    "\U00012550-\U00012686\U00016EA0-\U00016EB8\U00016EBB-\U00016ED3"
    "\U00016FF2-\U00016FF6\U000187F8-\U000187FF\U00018CD6-\U00018CDA"
    "\U00018D09-\U00018D20\U00018D80-\U00018DF2\U00018E00-\U00019191"
    "\U000191A0-\U000191D2\U0001B123-\U0001B128\U0001B168\U0001D6A6"
    "\U0001DF1F-\U0001DF24\U0001DF2B-\U0001DF81\U0001DF90-\U0001DF96"
    "\U0001DFCD-\U0001DFFF\U0001E6C0-\U0001E6DE\U0001E6E0-\U0001E6E2"
    "\U0001E6E4-\U0001E6E5\U0001E6E7-\U0001E6ED\U0001E6F0-\U0001E6F4"
    "\U0001E6FE-\U0001E6FF\U0002B73A-\U0002B73F\U0002B81E\U0002CEA2-\U0002CEAD"
    "\U000323B0-\U00033479\U0003D000-\U0003FC3F"
)
_LETTER = rf"[\p{{L}}--[{_UNICODE_17}]]"
_NUMBER = rf"[\p{{N}}--[{_UNICODE_17}]]"
_SYMBOL = rf"[[^\s\p{{L}}\p{{N}}][{_UNICODE_17}]]"
# GPT2_TOKENIZER_REGEX, with its letter, number and symbol classes pinned as above.
_PATTERN = regex.compile(
    rf"'(?:[sdmt]|ll|ve|re)| ?{_LETTER}+| ?{_NUMBER}+| ?{_SYMBOL}+|\s+(?!\S)|\s+", flags=regex.V1
)

# The same pattern spelled for ASCII text, where the standard library's ``re`` is about
# twice as fast; ``\s`` of ``regex`` is exactly these six characters below U+0080.
_ASCII_SPACE = r"\t\n\x0b\x0c\r "
_ASCII_PATTERN = re.compile(
    rf"'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]+| ?[^{_ASCII_SPACE}A-Za-z0-9]+"
    rf"|[{_ASCII_SPACE}]+(?![^{_ASCII_SPACE}])|[{_ASCII_SPACE}]+"
)


def pretokenize(text: str) -> list[str]:
    """GPT-2's pre-tokens: ``pretokenize("I'll go!") == ["I", "'ll", " go", "!"]``."""
    if text.isascii():
        return _ASCII_PATTERN.findall(text)
    return _PATTERN.findall(text)


class PreTokenizer:
    """GPT-2 pre-tokenization around special tokens that are kept whole.

    ``PreTokenizer(["<|endoftext|>"]).split("a<|endoftext|> b") == ["a", "<|endoftext|>", " b"]``.
    When special tokens overlap (``<|endoftext|>`` and ``<|endoftext|><|endoftext|>``)
    the longest one wins. A pre-token never equals a special token: every occurrence
    of a special token's text is cut out before the regex runs.
    """

    def __init__(self, special_tokens: Iterable[str] = ()):
        special_tokens = list(dict.fromkeys(special_tokens))
        for token in special_tokens:
            if not isinstance(token, str) or not token:
                raise ValueError(f"special tokens must be non-empty strings, got {token!r}")
        self.special_tokens: tuple[str, ...] = tuple(special_tokens)
        self._longest_special = max(map(len, special_tokens), default=0)
        # Alternatives are tried in order, so listing longer tokens first makes the
        # longest of overlapping special tokens win.
        by_length = sorted(special_tokens, key=len, reverse=True)
        self._special_pattern = (
            regex.compile("|".join(map(regex.escape, by_length))) if by_length else None
        )

    def split(self, text: str) -> list[str]:
        """Pre-tokens of ``text``, special tokens as single pieces."""
        if self._special_pattern is None:
            return pretokenize(text)
        pieces: list[str] = []
        start = 0
        for match in self._special_pattern.finditer(text):
            pieces += pretokenize(text[start : match.start()])
            pieces.append(match.group())
            start = match.end()
        pieces += pretokenize(text[start:])
        return pieces

    def split_stream(self, chunks: Iterable[str], min_buffer: int = 1 << 16) -> Iterator[list[str]]:
        """Pre-tokens of ``"".join(chunks)``, yielded in lists as the text arrives.

        Chunks are gathered until ``min_buffer`` characters wait; then everything up to
        the last boundary that no later text can move is split and yielded, and the
        rest waits for more. The concatenation of the yielded lists equals
        ``split("".join(chunks))`` however the text is cut into chunks.
        """
        waiting: list[str] = []
        waiting_length = 0
        threshold = min_buffer
        for chunk in chunks:
            if not isinstance(chunk, str):
                raise TypeError(f"expected chunks of str, got {type(chunk).__name__}")
            waiting.append(chunk)
            waiting_length += len(chunk)
            if waiting_length < threshold:
                continue
            buffer = "".join(waiting)
            pieces, cut = self._split_settled(buffer)
            if pieces:
                yield pieces
            rest = buffer[cut:]
            waiting, waiting_length = [rest], len(rest)
            # A long unsettled tail (one huge pre-token) doubles the threshold, so
            # re-scanning it stays linear in the text length overall.
            threshold = max(min_buffer, 2 * len(rest))
        pieces = self.split("".join(waiting))
        if pieces:
            yield pieces

    def _split_settled(self, buffer: str) -> tuple[list[str], int]:
        """The pieces of ``buffer`` that no continuation can change, and where they end.

        A special token that starts more than (longest special - 1) characters before
        the end cannot grow into a longer one. Among the regex pre-tokens only the
        last two can change: the last may extend, and a lone apostrophe before it
        may become a contraction (``"'"`` + ``"l"`` -> ``"'ll"``).
        """
        pieces: list[str] = []
        start = 0
        end = len(buffer)
        if self._special_pattern is not None:
            settled_before = len(buffer) - (self._longest_special - 1)
            for match in self._special_pattern.finditer(buffer):
                if match.start() >= settled_before:
                    break
                pieces += pretokenize(buffer[start : match.start()])
                pieces.append(match.group())
                start = match.end()
            end = max(start, settled_before)
        words = pretokenize(buffer[start:end])
        if len(words) <= 2:
            return pieces, start
        pieces += words[:-2]
        return pieces, end - len(words[-1]) - len(words[-2])
