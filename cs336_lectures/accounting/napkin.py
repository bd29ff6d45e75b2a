"""Napkin math: the back-of-the-envelope estimates that decide what a training run costs.

Three questions, each a line of arithmetic on the rules of the other modules:
how long training takes (6 x tokens x parameters FLOPs at a fraction `mfu` of the peak),
the largest model whose training state fits in memory, and what one training step keeps
in memory. These are rough on purpose: activations, communication and fragmentation are
left to the caller.
"""

from __future__ import annotations

from cs336_lectures.accounting.flops import training_flops

SECONDS_PER_DAY = 60 * 60 * 24


def seconds_to_train(num_parameters: float, num_tokens: float, num_devices: int,
                     flop_per_sec_per_device: float, mfu: float) -> float:
    """Wall-clock seconds for 6 x tokens x params FLOPs on `num_devices` devices at `mfu`.

    seconds_to_train(125e6, 2.5e9, 4, 97.5e12, 0.4) is about 12,000 (4 RTX 4080s, bf16).
    """
    if num_devices < 1:
        raise ValueError(f"num_devices must be at least 1, got {num_devices}")
    if flop_per_sec_per_device <= 0:
        raise ValueError(f"flop_per_sec_per_device must be positive, got {flop_per_sec_per_device}")
    if not 0 < mfu <= 1:
        raise ValueError(f"mfu is a fraction of the peak in (0, 1], got {mfu}")
    useful_flop_per_sec = num_devices * flop_per_sec_per_device * mfu
    return training_flops(num_tokens, num_parameters) / useful_flop_per_sec


def days_to_train(num_parameters: float, num_tokens: float, num_devices: int,
                  flop_per_sec_per_device: float, mfu: float) -> float:
    """seconds_to_train in days: 70B params, 15T tokens, 1024 H100s (989.5e12), MFU 0.5: ~144."""
    return seconds_to_train(num_parameters, num_tokens, num_devices,
                            flop_per_sec_per_device, mfu) / SECONDS_PER_DAY


def bytes_per_parameter(optimizer_states_per_parameter: int, bytes_per_value: int = 4) -> int:
    """Bytes of training state per parameter: the value, its gradient and the optimizer state.

    bytes_per_parameter(2) == 16: AdamW in float32 (4 + 4 + 4 + 4). Activations not counted.
    """
    return bytes_per_value * (1 + 1 + optimizer_states_per_parameter)


def largest_model(memory_bytes: float, bytes_per_parameter: float) -> float:
    """Parameters that fit in `memory_bytes`: largest_model(8 * 80e9, 16) == 4e10 (40B)."""
    if bytes_per_parameter <= 0:
        raise ValueError(f"bytes_per_parameter must be positive, got {bytes_per_parameter}")
    return memory_bytes / bytes_per_parameter


def training_step_memory(num_parameters: int, num_activations: int, num_gradients: int,
                         num_optimizer_states: int, bytes_per_value: int = 4) -> int:
    """Bytes one training step holds: parameters, activations, gradients, optimizer state.

    The lecture's 2-layer D=4 model on B=2 with AdaGrad, all float32:
    training_step_memory(36, 16, 36, 36) == 496.
    """
    counts = (num_parameters, num_activations, num_gradients, num_optimizer_states)
    if min(counts) < 0:
        raise ValueError(f"counts cannot be negative, got {counts}")
    return bytes_per_value * sum(counts)
