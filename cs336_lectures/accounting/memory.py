"""Memory accounting: how many bytes a tensor takes and whether two tensors share storage.

A tensor's memory is (number of values) x (bytes per value); the dtype table shows what
each floating-point format buys with its bytes: range (largest and smallest normal number)
and resolution (eps, the gap between 1 and the next representable number).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# The formats lecture 2 compares: the full-precision default, the two 16-bit formats and the
# two 8-bit formats proposed in 2022 and standardized by OCP in 2023 (E4M3 for values, E5M2 for
# wider-range gradients).
COMPARED_DTYPES: tuple[torch.dtype, ...] = (
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
)


def get_memory_usage(x: torch.Tensor) -> int:
    """Bytes taken by the values of `x`: get_memory_usage(torch.zeros(4, 8)) == 128."""
    return x.numel() * x.element_size()


def same_storage(x: torch.Tensor, y: torch.Tensor) -> bool:
    """True when `x` and `y` are views of one block of memory: same_storage(x, x[0]) is True.

    Views (slices, view, transpose) keep the storage and change only the stride metadata;
    copies (contiguous on a non-contiguous tensor, clone) get a storage of their own.
    """
    if x.device != y.device:
        return False
    x_storage, y_storage = x.untyped_storage(), y.untyped_storage()
    if x_storage.data_ptr() == 0 or y_storage.data_ptr() == 0:
        # Empty and meta tensors all report address 0, so the address cannot tell them
        # apart; the storage object itself (its C++ handle) can.
        return x_storage._cdata == y_storage._cdata
    return x_storage.data_ptr() == y_storage.data_ptr()


@dataclass(frozen=True)
class DtypeInfo:
    """One row of the dtype comparison, read from torch.finfo."""

    name: str
    bytes: int
    largest: float
    smallest_normal: float
    eps: float


def dtype_info(dtype: torch.dtype) -> DtypeInfo:
    """torch.finfo of a floating-point dtype: dtype_info(torch.float16).largest == 65504."""
    if not dtype.is_floating_point:
        raise ValueError(f"dtype_info needs a floating-point dtype, got {dtype}")
    info = torch.finfo(dtype)
    return DtypeInfo(
        name=str(dtype).removeprefix("torch."),
        bytes=info.bits // 8,
        largest=float(info.max),
        smallest_normal=float(info.smallest_normal),
        eps=float(info.eps),
    )


def dtype_table(dtypes: tuple[torch.dtype, ...] = COMPARED_DTYPES) -> list[DtypeInfo]:
    """One DtypeInfo per dtype, in order: dtype_table()[0].name == "float32"."""
    return [dtype_info(dtype) for dtype in dtypes]
