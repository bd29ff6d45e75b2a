"""GPT-2's own tokenizer, as OpenAI ships it (tiktoken) and as files for ours.

Over ``tokenizer`` it adds the real thing to compare with: ``get_gpt2_tokenizer``
returns tiktoken's GPT-2 encoding, and ``gpt2_files`` finds GPT-2's ``encoder.json``
and ``vocab.bpe`` so that ``BPETokenizer.from_files`` can load the same vocabulary.

Both look in tiktoken's cache first (``TIKTOKEN_CACHE_DIR``, as tiktoken itself does) and
otherwise use the copy of the two files this package ships (``gpt2_data/``, OpenAI's MIT
licence beside them), so a lecture is traced the same with or without the network.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from cs336_lectures.tokenization.gpt2_bytes import bytes_to_unicode

if TYPE_CHECKING:
    import tiktoken

_GPT2_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"
_FILE_NAMES = ("encoder.json", "vocab.bpe")
BUNDLED = Path(__file__).with_name("gpt2_data")
END_OF_TEXT = "<|endoftext|>"
# tiktoken's split pattern for GPT-2 (r50k), so that the bundled encoding splits as tiktoken's does
_GPT2_SPLIT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""


def get_gpt2_tokenizer() -> tiktoken.Encoding:
    """tiktoken's GPT-2 encoding: ``get_gpt2_tokenizer().encode("Hello, world")``.

    From tiktoken's cache when it holds GPT-2's files, else built from the bundled copy:
    never a download.
    """
    import tiktoken

    if _cached_files() is None and _bundled_files() is not None:
        return _bundled_encoding()
    try:
        return tiktoken.get_encoding("gpt2")
    except OSError as error:  # requests' network errors are OSErrors too
        raise RuntimeError(
            f"cannot load GPT-2's files ({error.__class__.__name__}); offline, set TIKTOKEN_CACHE_DIR "
            "to a folder holding them (see gpt2_files)"
        ) from error


def gpt2_files(cache_dir: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """Paths of GPT-2's ``encoder.json`` and ``vocab.bpe``.

    With ``cache_dir``, in that tiktoken cache (tiktoken stores each download under the
    SHA-1 of its URL). Without, in tiktoken's own cache (``TIKTOKEN_CACHE_DIR``, else
    ``DATA_GYM_CACHE_DIR``, else its folder in the temp directory), else the bundled copy.
    """
    if cache_dir is None:
        found = _cached_files() or _bundled_files()
        if found is not None:
            return found
        cache_dir = _tiktoken_cache_dir()
    paths = _paths_in_cache(Path(cache_dir))
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise FileNotFoundError(
            f"GPT-2's files are not in {cache_dir} (missing {', '.join(missing)}); "
            "run tiktoken.get_encoding('gpt2') once online or set TIKTOKEN_CACHE_DIR"
        )
    return paths


def _tiktoken_cache_dir() -> str:
    return (os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
            or os.path.join(tempfile.gettempdir(), "data-gym-cache"))


def _paths_in_cache(cache_dir: Path) -> tuple[Path, Path]:
    encoder, vocab = (cache_dir / hashlib.sha1((_GPT2_URL + name).encode()).hexdigest() for name in _FILE_NAMES)
    return encoder, vocab


def _cached_files() -> tuple[Path, Path] | None:
    paths = _paths_in_cache(Path(_tiktoken_cache_dir()))
    return paths if all(path.is_file() for path in paths) else None


def _bundled_files() -> tuple[Path, Path] | None:
    encoder, vocab = (BUNDLED / name for name in _FILE_NAMES)
    return (encoder, vocab) if encoder.is_file() and vocab.is_file() else None


def _bundled_encoding() -> tiktoken.Encoding:
    """GPT-2's encoding from the bundled encoder.json: its ids are the merge ranks, its tokens
    GPT-2's printable form of the bytes."""
    import tiktoken

    encoder_path, _ = _bundled_files()
    byte_of = {character: byte for byte, character in bytes_to_unicode().items()}
    encoder = json.loads(encoder_path.read_text(encoding="utf-8"))
    ranks = {bytes(byte_of[character] for character in token): rank
             for token, rank in encoder.items() if token != END_OF_TEXT}
    return tiktoken.Encoding(name="gpt2", pat_str=_GPT2_SPLIT, mergeable_ranks=ranks,
                             special_tokens={END_OF_TEXT: encoder[END_OF_TEXT]}, explicit_n_vocab=len(encoder))
