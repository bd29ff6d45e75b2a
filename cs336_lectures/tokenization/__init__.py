"""Tokenization, layer by layer, as lecture 1 builds it.

- ``base``: the ``Tokenizer`` interface and ``get_compression_ratio``;
- ``character``, ``byte``: one token per code point, one per UTF-8 byte;
- ``word``: GPT-2's pre-tokenization regex and special-token splitting;
- ``simple_bpe``: the lecture's teaching BPE on one string;
- ``gpt2_bytes``: GPT-2's printable byte form and its vocab/merges files;
- ``train``: ``train_bpe``, the fast and exact byte-level BPE trainer;
- ``tokenizer``: ``BPETokenizer``, encoding with a vocab and merges;
- ``gpt2``: tiktoken's GPT-2 and the location of its files.
"""

from cs336_lectures.tokenization.base import Tokenizer, get_compression_ratio
from cs336_lectures.tokenization.byte import ByteTokenizer
from cs336_lectures.tokenization.character import CharacterTokenizer
from cs336_lectures.tokenization.gpt2 import get_gpt2_tokenizer, gpt2_files
from cs336_lectures.tokenization.gpt2_bytes import (
    bytes_to_unicode,
    load_gpt2_merges,
    load_gpt2_vocab,
    save_gpt2_merges,
    save_gpt2_vocab,
)
from cs336_lectures.tokenization.simple_bpe import (
    BPETokenizerParams,
    SimpleBPETokenizer,
    merge,
    train_simple_bpe,
)
from cs336_lectures.tokenization.tokenizer import BPETokenizer
from cs336_lectures.tokenization.train import train_bpe
from cs336_lectures.tokenization.word import GPT2_TOKENIZER_REGEX, PreTokenizer, pretokenize

__all__ = [
    "BPETokenizer",
    "BPETokenizerParams",
    "ByteTokenizer",
    "CharacterTokenizer",
    "GPT2_TOKENIZER_REGEX",
    "PreTokenizer",
    "SimpleBPETokenizer",
    "Tokenizer",
    "bytes_to_unicode",
    "get_compression_ratio",
    "get_gpt2_tokenizer",
    "gpt2_files",
    "load_gpt2_merges",
    "load_gpt2_vocab",
    "merge",
    "pretokenize",
    "save_gpt2_merges",
    "save_gpt2_vocab",
    "train_bpe",
    "train_simple_bpe",
]
