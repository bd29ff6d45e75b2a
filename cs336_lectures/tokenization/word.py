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

_PATTERN = regex.compile(GPT2_TOKENIZER_REGEX)

# Code points first assigned in Unicode 17.0. Recent releases of ``regex`` class them as
# letters or numbers, but tiktoken's engine (Unicode 16.0 tables) sees unassigned code
# points, which GPT-2's regex groups with symbols. Text holding any of them goes
# through a pattern that treats them as symbols, so that our pre-tokens equal
# tiktoken's whatever tables the installed ``regex`` carries.
_UNICODE_17_RANGES = [
    (0x0558, 0x0558), (0x058B, 0x058C), (0x088F, 0x088F), (0x0C5C, 0x0C5C),
    (0x0CDC, 0x0CDC), (0x208F, 0x208F), (0x209D, 0x209F), (0xA7CE, 0xA7CF),
    (0xA7D2, 0xA7D2), (0xA7D4, 0xA7D4), (0xA7DD, 0xA7DD), (0xA7E2, 0xA7E2),
    (0xA7F1, 0xA7F1), (0xAB6C, 0xAB6D), (0x107BB, 0x107BF), (0x10940, 0x10959),
    (0x10EC5, 0x10EC7), (0x10ED9, 0x10EEE), (0x11B0A, 0x11B0A), (0x11DB0, 0x11DDB),
    (0x11DE0, 0x11DE9), (0x11DF1, 0x11DF1), (0x1246F, 0x1246F), (0x12475, 0x1247F),
    (0x12550, 0x12686), (0x16EA0, 0x16EB8), (0x16EBB, 0x16ED3), (0x16FF2, 0x16FF6),
    (0x187F8, 0x187FF), (0x18CD6, 0x18CDA), (0x18D09, 0x18D20), (0x18D80, 0x18DF2),
    (0x18E00, 0x19191), (0x191A0, 0x191D2), (0x1B123, 0x1B128), (0x1B168, 0x1B168),
    (0x1D6A6, 0x1D6A6), (0x1DF1F, 0x1DF24), (0x1DF2B, 0x1DF81), (0x1DF90, 0x1DF96),
    (0x1DFCD, 0x1DFFF), (0x1E6C0, 0x1E6DE), (0x1E6E0, 0x1E6E2), (0x1E6E4, 0x1E6E5),
    (0x1E6E7, 0x1E6ED), (0x1E6F0, 0x1E6F4), (0x1E6FE, 0x1E6FF), (0x2B73A, 0x2B73F),
    (0x2B81E, 0x2B81E), (0x2CEA2, 0x2CEAD), (0x323B0, 0x33479), (0x3D000, 0x3FC3F),
]
_UNICODE_17_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in _UNICODE_17_RANGES)
_UNICODE_17_SEARCH = re.compile(f"[{_UNICODE_17_CLASS}]")
_PINNED_PATTERN = regex.compile(
    rf"'(?:[sdmt]|ll|ve|re)| ?[\p{{L}}--[{_UNICODE_17_CLASS}]]+| ?[\p{{N}}--[{_UNICODE_17_CLASS}]]+"
    rf"| ?[[^\s\p{{L}}\p{{N}}][{_UNICODE_17_CLASS}]]+|\s+(?!\S)|\s+",
    flags=regex.V1,
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
    # Mostly-ASCII text (English with a few curly quotes) would lose the fast path over
    # a handful of characters: only stretches around non-ASCII characters go to
    # ``regex``, each widened to points where a pre-token always ends (see _cut_at).
    pieces: list[str] = []
    ascii_start = span_start = span_end = 0
    for run in _NON_ASCII_RUN.finditer(text):
        if run.end() <= span_end:
            continue
        if span_end and run.start() < span_end + _MIN_ASCII_STRETCH:
            span_end = _cut_after(text, run.end())
            continue
        if span_end:
            pieces += _split_non_ascii(text, span_start, span_end)
            ascii_start = span_end
        span_start = _cut_before(text, run.start(), ascii_start)
        pieces += _ASCII_PATTERN.findall(text, ascii_start, span_start)
        span_end = _cut_after(text, run.end())
    pieces += _split_non_ascii(text, span_start, span_end)
    pieces += _ASCII_PATTERN.findall(text, span_end)
    return pieces


def _split_non_ascii(text: str, start: int, end: int) -> list[str]:
    if _UNICODE_17_SEARCH.search(text, start, end) is None:
        return _PATTERN.findall(text, start, end)
    return _PINNED_PATTERN.findall(text, start, end)


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# ASCII stretches shorter than this stay inside the ``regex`` span around them.
_MIN_ASCII_STRETCH = 256


def _cut_at(text: str, position: int) -> bool:
    """Whether a pre-token always starts at ``position`` and the text can be cut there.

    True for a space between two non-space characters: the pre-token before ends at
    a non-space character whatever follows it, and the space starts the next one
    (`` word``, `` 42``, `` !``). The pattern has no lookbehind, so each side then
    splits exactly as inside the whole text.
    """
    return (
        0 < position < len(text) - 1
        and text[position] == " "
        and not text[position - 1].isspace()
        and not text[position + 1].isspace()
    )


def _cut_before(text: str, position: int, lowest: int) -> int:
    """The last cut point in ``[lowest, position]``, or ``lowest`` (already a cut)."""
    space = text.rfind(" ", lowest, position + 1)
    while space > lowest and not _cut_at(text, space):
        space = text.rfind(" ", lowest, space)
    return max(space, lowest)


def _cut_after(text: str, position: int) -> int:
    """The first cut point at or after ``position``, or the end of the text."""
    space = text.find(" ", position)
    while space != -1 and not _cut_at(text, space):
        space = text.find(" ", space + 1)
    return len(text) if space == -1 else space


class PreTokenizer:
    """GPT-2 pre-tokenization around special tokens that are kept whole.

    ``PreTokenizer(["<|endoftext|>"]).split("a<|endoftext|> b") == ["a", "<|endoftext|>", " b"]``.
    When special tokens overlap (``<|endoftext|>`` and ``<|endoftext|><|endoftext|>``)
    the longest one wins. A pre-token never equals a special token: every occurrence
    of a special token's text is cut out before the regex runs.
    """

    def __init__(self, special_tokens: Iterable[str] = ()):
        if isinstance(special_tokens, str):
            # A bare string would be read as one special token per character.
            raise TypeError(f"special_tokens must be a list of strings, got the string {special_tokens!r}")
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
