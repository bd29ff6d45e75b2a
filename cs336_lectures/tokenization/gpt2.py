"""GPT-2's own tokenizer, as OpenAI ships it (tiktoken) and as files for ours.

Over ``tokenizer`` it adds the real thing to compare with: ``get_gpt2_tokenizer``
returns tiktoken's GPT-2 encoding, and ``gpt2_files`` finds GPT-2's ``encoder.json``
and ``vocab.bpe`` in tiktoken's cache so that ``BPETokenizer.from_files`` can load
the same vocabulary. Offline, set ``TIKTOKEN_CACHE_DIR`` to a folder holding them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

_GPT2_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"


def get_gpt2_tokenizer() -> tiktoken.Encoding:
    """tiktoken's GPT-2 encoding: ``get_gpt2_tokenizer().encode("Hello, world")``."""
    import tiktoken

    try:
        return tiktoken.get_encoding("gpt2")
    except OSError as error:  # requests' network errors are OSErrors too
        raise RuntimeError(
            f"cannot load GPT-2's files ({error.__class__.__name__}); offline, set TIKTOKEN_CACHE_DIR "
            "to a folder holding them (see gpt2_files)"
        ) from error


def gpt2_files(cache_dir: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """Paths of GPT-2's ``encoder.json`` and ``vocab.bpe`` in tiktoken's cache.

    tiktoken stores each download under the SHA-1 of its URL, in ``cache_dir``
    (default: ``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``, else tiktoken's
    folder in the temp directory).
    """
    if cache_dir is None:
        cache_dir = (
            os.environ.get("TIKTOKEN_CACHE_DIR")
            or os.environ.get("DATA_GYM_CACHE_DIR")
            or os.path.join(tempfile.gettempdir(), "data-gym-cache")
        )
    paths = tuple(
        Path(cache_dir) / hashlib.sha1((_GPT2_URL + name).encode()).hexdigest()
        for name in ("encoder.json", "vocab.bpe")
    )
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise FileNotFoundError(
            f"GPT-2's files are not in {cache_dir} (missing {', '.join(missing)}); "
            "run tiktoken.get_encoding('gpt2') once online or set TIKTOKEN_CACHE_DIR"
        )
    return paths[0], paths[1]
