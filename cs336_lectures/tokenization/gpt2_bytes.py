"""GPT-2's file format for a BPE vocabulary and its merges.

Over the tokenizers below it adds persistence. GPT-2 stores tokens, which are byte
strings, as printable Unicode text: ``bytes_to_unicode`` maps each byte to one
visible character (a space becomes ``Ġ``, a newline ``Ċ``). ``encoder.json`` maps
such strings to ids; ``vocab.bpe`` lists one merge per line, two strings separated
by a space, after a ``#version`` line.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from cs336_lectures.atomic import write_bytes_atomically


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table: ``bytes_to_unicode()[32] == "Ġ"``.

    Bytes that already print as themselves keep their character; the other 68
    (controls, space, a few Latin-1 ones) get the characters U+0100 onwards, in byte
    order. The dict's order (printable bytes first) is GPT-2's order of byte ids.
    """
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table = {byte: chr(byte) for byte in printable}
    shifted = 0
    for byte in range(256):
        if byte not in table:
            table[byte] = chr(256 + shifted)
            shifted += 1
    return table


@lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    """The inverse table: ``unicode_to_bytes()["Ġ"] == 32``."""
    return {character: byte for byte, character in bytes_to_unicode().items()}


def token_to_text(token: bytes) -> str:
    """A token in printable form: ``token_to_text(b" the") == "Ġthe"``."""
    table = bytes_to_unicode()
    return "".join(table[byte] for byte in token)


def text_to_token(text: str) -> bytes:
    """The bytes of a printable-form token: ``text_to_token("Ġthe") == b" the"``."""
    table = unicode_to_bytes()
    try:
        return bytes(table[character] for character in text)
    except KeyError as error:
        raise ValueError(f"{text!r} is not in GPT-2's printable byte form ({error} is not)") from None


def load_gpt2_vocab(path: str | os.PathLike) -> dict[int, bytes]:
    """Read an ``encoder.json``-style file into ``{id: token bytes}``."""
    try:
        encoder = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read vocabulary {path}: {error}") from None
    if not isinstance(encoder, dict):
        raise ValueError(f"vocabulary {path} must be a JSON object of token -> id")
    vocab: dict[int, bytes] = {}
    for text, index in encoder.items():
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise ValueError(f"vocabulary {path}: id of {text!r} is not a non-negative integer")
        if index in vocab:
            raise ValueError(f"vocabulary {path}: id {index} is used twice")
        vocab[index] = text_to_token(text)
    return vocab


def load_gpt2_merges(path: str | os.PathLike) -> list[tuple[bytes, bytes]]:
    """Read a ``vocab.bpe``-style file into merges in rank order."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read merges {path}: {error}") from None
    merges: list[tuple[bytes, bytes]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or (number == 1 and line.startswith("#version")):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"merges {path}:{number}: expected two tokens, got {line!r}")
        merges.append((text_to_token(parts[0]), text_to_token(parts[1])))
    return merges


def save_gpt2_vocab(vocab: dict[int, bytes], path: str | os.PathLike) -> None:
    """Write ``{id: token bytes}`` as an ``encoder.json``-style file (atomically)."""
    encoder: dict[str, int] = {}
    for index, token in sorted(vocab.items()):
        text = token_to_text(token)
        if text in encoder:
            raise ValueError(f"token {token!r} appears twice in the vocabulary")
        encoder[text] = index
    write_bytes_atomically(path, (json.dumps(encoder, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))


def save_gpt2_merges(merges: list[tuple[bytes, bytes]], path: str | os.PathLike) -> None:
    """Write merges as a ``vocab.bpe``-style file (atomically)."""
    lines = ["#version: 0.2"]
    lines += [f"{token_to_text(left)} {token_to_text(right)}" for left, right in merges]
    write_bytes_atomically(path, ("\n".join(lines) + "\n").encode("utf-8"))
