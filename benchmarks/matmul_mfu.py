"""Time one large matmul in float32 and bfloat16 and report FLOP/s and MFU.

On a CUDA device the sizes are lecture 2's (B=16384 points, D=32768 dims, K=8192 outputs:
8.8e12 FLOPs per matmul); without one, the lecture's CPU sizes (1024, 256, 64), where no
promised figure exists and MFU is reported as absent. The peer measured in the same run is
float32: the last line is bfloat16's speed relative to it.

Usage: python benchmarks/matmul_mfu.py [--trials N] [--warmup N]
"""

from __future__ import annotations

import argparse

import torch

from cs336_lectures.accounting import get_device, measure_matmul

GPU_SIZES = (16384, 32768, 8192)
CPU_SIZES = (1024, 256, 64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()

    device = get_device()
    batch, dim, outputs = GPU_SIZES if device.type == "cuda" else CPU_SIZES
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"device: {name} ({device}), torch {torch.__version__}, "
          f"{torch.get_num_threads()} CPU threads, "
          f"float32 matmul precision: {torch.get_float32_matmul_precision()}")
    print(f"matmul ({batch} x {dim}) @ ({dim} x {outputs}), median of {args.trials} trials "
          f"after {args.warmup} warm-up runs")

    torch.manual_seed(0)
    x = torch.ones(batch, dim, device=device)
    w = torch.randn(dim, outputs, device=device)
    seconds = {}
    for dtype in (torch.float32, torch.bfloat16):
        result = measure_matmul(x.to(dtype), w.to(dtype), args.warmup, args.trials)
        seconds[dtype] = result.seconds
        promised = result.promised.flop_per_sec
        promised_text = "absent" if promised is None else f"{promised:.3e} FLOP/s"
        mfu_text = "absent" if result.mfu is None else f"{result.mfu:.3f}"
        # FLOP/s in scientific notation: a CPU's 1e10 and an H200's 7e14 both stay readable.
        print(f"{str(dtype).removeprefix('torch.'):>9}: {result.seconds * 1e3:10.3f} ms  "
              f"{result.flops:.3e} FLOPs  {result.flop_per_sec:.3e} FLOP/s  "
              f"promised {promised_text}  MFU {mfu_text}  ({result.promised.note})")
    speedup = seconds[torch.float32] / seconds[torch.bfloat16]
    print(f"bfloat16 speed / float32 speed: {speedup:.2f}x")


if __name__ == "__main__":
    main()
