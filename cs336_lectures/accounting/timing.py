"""Timing matmuls and comparing them with what the hardware promises (MFU).

FLOPs turn into seconds at the device's speed in FLOP/s. Vendors print a peak for each
precision; model FLOPs utilization is the measured rate over that promise,
mfu = actual FLOP/s / promised FLOP/s, communication and overhead not counted. Around 0.5
is good. Two traps in the vendor sheets are handled here in the open:

- tensor-core figures are quoted "with sparsity" (2:4 structured sparsity doubles them);
  dense matmuls, the ones we run, get half: every quoted sparse figure is divided by
  SPARSITY_FACTOR;
- float32 matmuls use the plain FP32 units unless PyTorch is told to allow TF32
  (torch.set_float32_matmul_precision("high")), in which case the TF32 tensor-core figure
  applies.

A CPU or a GPU missing from the table has no promised figure: the answer carries None and a
reason, never an invented number.
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass

import torch
from jaxtyping import Float

from cs336_lectures.accounting.flops import matmul_flops

TERA = 1e12
SPARSITY_FACTOR = 2  # 2:4 structured sparsity: half the multiplies are skipped, rate doubles


@dataclass(frozen=True)
class Peak:
    """A figure as printed on a vendor's sheet, and whether the sheet assumed sparsity."""

    quoted: float
    with_sparsity: bool = False

    @property
    def dense(self) -> float:
        """The rate a dense matmul can hope for: Peak(1979e12, True).dense == 989.5e12."""
        return self.quoted / SPARSITY_FACTOR if self.with_sparsity else self.quoted


# Promised FLOP/s per device and precision, copied from the vendor sheets. Where a sheet
# prints only the sparse tensor-core figure (marked with an asterisk), it is stored as
# printed with with_sparsity=True and halved on use; where a sheet prints "dense | sparse"
# pairs, the dense one is stored as is.
# - A100: NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/a100/);
#   same figures for the 40GB/80GB, SXM/PCIe boards. Pairs: TF32 156 | 312*, BF16 and
#   FP16 312 | 624*. No FP8 tensor cores.
# - H100 SXM / PCIe / NVL: NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100/).
#   Lecture 2 used 67.5 TFLOP/s for H100 FP32; the sheet prints 67.
# - H200 (SXM) / H200 NVL: NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200/).
# - RTX 4080: NVIDIA Ada Lovelace architecture whitepaper, appendix table for the GeForce
#   RTX 4080, which prints dense/sparse pairs. GeForce cards run FP16/BF16 tensor cores at
#   half rate when accumulating in FP32, which is what PyTorch's matmuls do, so the figure
#   to use is "BF16 with FP32 accumulate": 97.5 dense / 194.9 sparse (194.9 dense is the
#   FP16-accumulate rate, not ours). TF32 48.7/97.5, FP8 with FP32 accumulate 194.9/389.9,
#   plain FP32 48.7.
#   97.5 is the figure that makes the lecture's 125M-params-on-2.5B-tokens exercise come to
#   about 12,000 s on 4 cards at MFU 0.4.
PEAKS: dict[str, dict[str, Peak]] = {
    "A100": {
        "fp32": Peak(19.5 * TERA),
        "tf32": Peak(156 * TERA),
        "bf16": Peak(312 * TERA),
        "fp16": Peak(312 * TERA),
    },
    "H100 SXM": {
        "fp32": Peak(67 * TERA),
        "tf32": Peak(989 * TERA, with_sparsity=True),
        "bf16": Peak(1979 * TERA, with_sparsity=True),
        "fp16": Peak(1979 * TERA, with_sparsity=True),
        "fp8": Peak(3958 * TERA, with_sparsity=True),
    },
    "H100 PCIe": {
        "fp32": Peak(51 * TERA),
        "tf32": Peak(756 * TERA, with_sparsity=True),
        "bf16": Peak(1513 * TERA, with_sparsity=True),
        "fp16": Peak(1513 * TERA, with_sparsity=True),
        "fp8": Peak(3026 * TERA, with_sparsity=True),
    },
    "H100 NVL": {
        "fp32": Peak(60 * TERA),
        "tf32": Peak(835 * TERA, with_sparsity=True),
        "bf16": Peak(1671 * TERA, with_sparsity=True),
        "fp16": Peak(1671 * TERA, with_sparsity=True),
        "fp8": Peak(3341 * TERA, with_sparsity=True),
    },
    "H200": {
        "fp32": Peak(67 * TERA),
        "tf32": Peak(989 * TERA, with_sparsity=True),
        "bf16": Peak(1979 * TERA, with_sparsity=True),
        "fp16": Peak(1979 * TERA, with_sparsity=True),
        "fp8": Peak(3958 * TERA, with_sparsity=True),
    },
    "H200 NVL": {
        "fp32": Peak(60 * TERA),
        "tf32": Peak(835 * TERA, with_sparsity=True),
        "bf16": Peak(1671 * TERA, with_sparsity=True),
        "fp16": Peak(1671 * TERA, with_sparsity=True),
        "fp8": Peak(3341 * TERA, with_sparsity=True),
    },
    "RTX 4080": {
        "fp32": Peak(48.7 * TERA),
        "tf32": Peak(48.7 * TERA),
        "bf16": Peak(97.5 * TERA),
        "fp16": Peak(97.5 * TERA),
        "fp8": Peak(194.9 * TERA),
    },
}

# What torch.cuda.get_device_properties(i).name reports, matched to a PEAKS key. Order
# matters (variants before the plain name); word boundaries keep "GH200" from passing as
# an H200, and the lookahead keeps the faster RTX 4080 SUPER and the laptop RTX 4080 (a
# smaller chip under the same name) from passing as the desktop card.
_NAME_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("H100 PCIe", re.compile(r"\bH100\b.*\bPCIE\b")),
    ("H100 NVL", re.compile(r"\bH100\b.*\bNVL\b")),
    ("H100 SXM", re.compile(r"\bH100\b")),  # e.g. "NVIDIA H100 80GB HBM3"
    ("H200 NVL", re.compile(r"\bH200\b.*\bNVL\b")),
    ("H200", re.compile(r"\bH200\b")),  # e.g. "NVIDIA H200"
    ("A100", re.compile(r"\bA100\b")),  # e.g. "NVIDIA A100-SXM4-80GB"
    ("RTX 4080", re.compile(r"\bRTX 4080\b(?!\s*(SUPER|TI|LAPTOP|MOBILE)\b)")),
]

_PRECISIONS = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float8_e4m3fn: "fp8",
               torch.float8_e5m2: "fp8"}


def get_device(index: int = 0) -> torch.device:
    """The GPU `index` when CUDA is available, else the CPU."""
    return torch.device(f"cuda:{index}") if torch.cuda.is_available() else torch.device("cpu")


def match_device(name: str) -> str | None:
    """The PEAKS key for a GPU name: match_device("NVIDIA H100 80GB HBM3") == "H100 SXM"."""
    normalized = " ".join(name.upper().split())
    for key, pattern in _NAME_PATTERNS:
        if pattern.search(normalized):
            return key
    return None


def precision_of(dtype: torch.dtype) -> str | None:
    """Which peak a matmul in `dtype` runs at: "fp32", "tf32", "bf16", "fp16", "fp8" or None."""
    if dtype == torch.float32:
        return "fp32" if torch.get_float32_matmul_precision() == "highest" else "tf32"
    return _PRECISIONS.get(dtype)


@dataclass(frozen=True)
class PromisedFlops:
    """The promised dense FLOP/s of a device for a dtype, or None with the reason."""

    device_name: str
    dtype: torch.dtype
    flop_per_sec: float | None
    note: str


def peak_flop_per_sec(device_name: str, dtype: torch.dtype) -> PromisedFlops:
    """Look a reported device name up in PEAKS.

    peak_flop_per_sec("NVIDIA H100 80GB HBM3", torch.bfloat16).flop_per_sec == 989.5e12
    """
    key = match_device(device_name)
    if key is None:
        return PromisedFlops(device_name, dtype, None,
                             f"{device_name!r} is not in the table of vendor peaks; no MFU")
    precision = precision_of(dtype)
    if precision is None:
        return PromisedFlops(device_name, dtype, None, f"no peak is tabulated for {dtype}; no MFU")
    peak = PEAKS[key].get(precision)
    if peak is None:
        return PromisedFlops(device_name, dtype, None,
                             f"{key} has no {precision} figure on its sheet; no MFU")
    how = (f"{peak.quoted / TERA:g} TFLOP/s quoted with sparsity, / {SPARSITY_FACTOR} for dense"
           if peak.with_sparsity else "dense figure as quoted")
    return PromisedFlops(device_name, dtype, peak.dense, f"{key} {precision}: {how}")


def promised_flop_per_sec(device: torch.device | str, dtype: torch.dtype) -> PromisedFlops:
    """The promised FLOP/s of `device` ("cpu", "cuda:0", ...) for matmuls in `dtype`."""
    device = torch.device(device)
    if device.type != "cuda":
        return PromisedFlops(device.type, dtype, None,
                             f"{device.type}: no vendor peak to compare with; no MFU")
    name = torch.cuda.get_device_properties(device).name
    return peak_flop_per_sec(name, dtype)


def mfu(actual: float, promised: float | PromisedFlops | None) -> float | None:
    """Model FLOPs utilization, actual / promised FLOP/s: mfu(494.75e12, 989.5e12) == 0.5.

    `promised` is a figure in FLOP/s or what promised_flop_per_sec returns. Without a
    figure (a CPU or an unknown device, whose PromisedFlops.note says why) the answer is
    None rather than a guess.
    """
    if isinstance(promised, PromisedFlops):
        promised = promised.flop_per_sec
    if promised is None:
        return None
    if promised <= 0:
        raise ValueError(f"promised FLOP/s must be positive, got {promised}")
    return actual / promised


def _synchronize(device: torch.device) -> None:
    # CUDA kernels are queued and return at once; a timer must wait for them to finish.
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_matmul(a: torch.Tensor, b: torch.Tensor, num_warmup: int = 2,
                num_trials: int = 5) -> float:
    """Median seconds of `a @ b` over `num_trials` runs, after `num_warmup` untimed runs.

    Warm-up pays one-off costs (kernel selection, allocator growth) outside the timing; the
    median shrugs off a trial disturbed by other work on the machine.
    """
    if a.device != b.device:
        raise ValueError(f"a is on {a.device} but b is on {b.device}")
    if a.dim() == 0 or b.dim() == 0 or a.shape[-1] != b.shape[-2 if b.dim() > 1 else 0]:
        raise ValueError(f"cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
    if num_trials < 1:
        raise ValueError(f"num_trials must be at least 1, got {num_trials}")
    for _ in range(num_warmup):
        a @ b
    _synchronize(a.device)
    times = []
    for _ in range(num_trials):
        start = time.perf_counter()
        a @ b
        _synchronize(a.device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@dataclass(frozen=True)
class MatmulMeasurement:
    """What one timed matmul tells: its FLOPs, seconds, rate and utilization."""

    flops: int
    seconds: float
    flop_per_sec: float
    promised: PromisedFlops
    mfu: float | None


def measure_matmul(a: Float[torch.Tensor, "m n"], b: Float[torch.Tensor, "n k"],
                   num_warmup: int = 2, num_trials: int = 5) -> MatmulMeasurement:
    """Time a 2-D `a @ b` and set its rate against the device's promised FLOP/s."""
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"measure_matmul takes matrices, got {a.dim()}-D and {b.dim()}-D")
    seconds = time_matmul(a, b, num_warmup, num_trials)
    flops = matmul_flops(a.shape[0], a.shape[1], b.shape[1])
    promised = promised_flop_per_sec(a.device, a.dtype)
    actual = flops / seconds
    return MatmulMeasurement(flops, seconds, actual, promised, mfu(actual, promised))
