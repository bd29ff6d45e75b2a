"""Compute accounting: counting floating-point operations (FLOPs, not FLOP/s).

A matrix multiply (m x n) @ (n x k) does one multiply and one add for every (i, j, l)
triple: 2mnk FLOPs. Nothing else in a network costs as much once the matrices are large, so
counting matmuls counts the model. For a linear layer (and, to first order, a Transformer)
the forward pass costs 2 FLOPs per (data point, parameter) pair; the backward pass costs
twice that, 4, because every weight matrix needs two matmuls of the same size: one for the
gradient of the weights and one for the gradient of the layer's input. Training is 6.
"""

from __future__ import annotations


def matmul_flops(m: int, n: int, k: int) -> int:
    """FLOPs of an (m x n) @ (n x k) matrix multiply: matmul_flops(2, 3, 4) == 48."""
    return 2 * m * n * k


def forward_flops(num_points: int, num_parameters: int) -> int:
    """FLOPs of a forward pass through a linear model: 2 x points x parameters."""
    return 2 * num_points * num_parameters


def backward_flops(num_points: int, num_parameters: int) -> int:
    """FLOPs of the backward pass: 4 x points x parameters (weight and input gradients)."""
    return 4 * num_points * num_parameters


def forward_backward_flops(num_points: int, num_parameters: int) -> int:
    """FLOPs of one training step, forward plus backward: 6 x points x parameters.

    forward_backward_flops(2, 36) == 432, the lecture's 2-layer D=4 model on a batch of 2.
    """
    return forward_flops(num_points, num_parameters) + backward_flops(num_points, num_parameters)


def training_flops(num_tokens: float, num_parameters: float) -> float:
    """FLOPs to train on `num_tokens` tokens: 6 x tokens x parameters (70B on 15T: 6.3e24)."""
    return 6 * num_tokens * num_parameters
