"""Language-model data: token ids on disk and random training batches from them.

A tokenized corpus is one long array of integer ids. It is stored as raw binary (no header,
like numpy's tofile) and read back with np.memmap, which maps the file instead of loading
it: a batch touches only the pages it indexes, so a corpus far larger than memory works.
A batch is `batch_size` windows of `context_length` + 1 consecutive tokens at uniformly
random starts; the inputs are the first `context_length` tokens of each window and the
targets the same window shifted one token to the left (each position predicts the next).
Files are written atomically (cs336_lectures.atomic, which checkpoints use too).
"""

from __future__ import annotations

import os

import numpy as np
import torch
from jaxtyping import Int

from cs336_lectures.atomic import write_atomically

TokenBatch = Int[torch.Tensor, "batch_size context_length"]


def save_tokens(tokens, path: str | os.PathLike, dtype: np.dtype | type = np.int32) -> None:
    """Write token ids to `path` as raw `dtype` values (atomically: a crash leaves no half file).

    save_tokens([1, 2, 3], "data.bin") writes 12 bytes; load_tokens("data.bin") reads them back.
    """
    array = np.asarray(tokens)
    dtype = np.dtype(dtype)
    if array.ndim != 1:
        raise ValueError(f"tokens must be a 1-D sequence of ids, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"token ids must be integers, got {array.dtype}")
    if not np.issubdtype(dtype, np.integer):
        raise ValueError(f"token files hold integers, got dtype {dtype}")
    if array.size and (array.min() < np.iinfo(dtype).min or array.max() > np.iinfo(dtype).max):
        raise ValueError(f"token ids span [{array.min()}, {array.max()}], "
                         f"outside what {dtype} can hold")
    write_atomically(path, array.astype(dtype).tofile)


def load_tokens(path: str | os.PathLike, dtype: np.dtype | type = np.int32) -> np.memmap:
    """Map a file written by save_tokens, read-only, without reading it into memory."""
    dtype = np.dtype(dtype)
    size = os.path.getsize(path)
    if size == 0:
        raise ValueError(f"{path} is empty: there are no tokens to map")
    if size % dtype.itemsize:
        raise ValueError(f"{path} has {size} bytes, not a whole number of {dtype} "
                         f"({dtype.itemsize}-byte) tokens; wrong dtype?")
    return np.memmap(path, dtype=dtype, mode="r")


def get_batch(
    data: np.ndarray | torch.Tensor,
    batch_size: int,
    context_length: int,
    device: torch.device | str,
    generator: torch.Generator | None = None,
) -> tuple[TokenBatch, TokenBatch]:
    """Sample (inputs, targets), both int64 (batch_size, context_length) tensors on `device`.

    targets[b, i] == inputs[b, i + 1] within the window; starts are uniform over the
    len(data) - context_length positions that leave room for the last target. `generator`
    (a CPU torch.Generator) makes the draw reproducible without touching the global RNG.
    """
    if batch_size < 1 or context_length < 1:
        raise ValueError(f"batch_size and context_length must be positive, "
                         f"got {batch_size} and {context_length}")
    if not isinstance(data, (np.ndarray, torch.Tensor)):
        data = np.asarray(data)
    if data.ndim != 1:
        raise ValueError(f"data must be a 1-D array of token ids, got shape {tuple(data.shape)}")
    if not _holds_integers(data):
        raise ValueError(f"data must hold integer token ids, got {data.dtype}")
    num_starts = len(data) - context_length
    if num_starts < 1:
        raise ValueError(f"data has {len(data)} tokens; a window of context_length="
                         f"{context_length} needs at least {context_length + 1} (inputs plus "
                         f"one target)")
    starts = torch.randint(0, num_starts, (batch_size,), generator=generator)
    index = starts[:, None] + torch.arange(context_length + 1)
    if isinstance(data, torch.Tensor):
        windows = data[index.to(data.device)].to(torch.int64)
    else:
        # Fancy indexing a memmap reads only these positions from the file.
        windows = torch.from_numpy(np.asarray(data[index.numpy()]).astype(np.int64))
    inputs, targets = windows[:, :-1].contiguous(), windows[:, 1:].contiguous()
    device = torch.device(device)
    if device.type == "cuda" and not windows.is_cuda:
        # Page-locked memory lets the copy run asynchronously while the GPU keeps working.
        return (inputs.pin_memory().to(device, non_blocking=True),
                targets.pin_memory().to(device, non_blocking=True))
    return inputs.to(device), targets.to(device)


def _holds_integers(data: np.ndarray | torch.Tensor) -> bool:
    if isinstance(data, torch.Tensor):
        return not (data.dtype.is_floating_point or data.dtype.is_complex
                    or data.dtype == torch.bool)
    return np.issubdtype(data.dtype, np.integer)
