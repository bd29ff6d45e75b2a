"""Models for lecture 2: a linear layer with a scale-aware initialization, and a deep stack.

Initialization is the one idea here. A weight drawn from N(0, 1) makes each output a sum of
`input_dim` unit-variance terms, so outputs grow like sqrt(input_dim) and large layers blow
up. Scaling the weights by 1/sqrt(input_dim) keeps outputs of order one whatever the width
(Xavier initialization up to a constant); truncating the normal at 3 standard deviations
also rules out the rare huge weight.
"""

from __future__ import annotations

import math

import torch
from jaxtyping import Float
from torch import nn

TRUNCATE_AT_STDS = 3.0


class Linear(nn.Module):
    """y = x @ weight, weight (input_dim, output_dim) ~ N(0, 1/input_dim), no bias.

    With truncate=True draws outside +-3 standard deviations are redrawn (nn.init.trunc_normal_
    takes its bounds in absolute units, so they are scaled by the std here); cutting the tails
    leaves a standard deviation of about 0.987 / sqrt(input_dim). Linear(16, 4)(x) maps (batch, 16)
    to (batch, 4).
    """

    def __init__(self, input_dim: int, output_dim: int, truncate: bool = False):
        super().__init__()
        if input_dim < 1 or output_dim < 1:
            raise ValueError(f"need input_dim >= 1 and output_dim >= 1, "
                             f"got {input_dim} and {output_dim}")
        std = 1 / math.sqrt(input_dim)
        weight = torch.empty(input_dim, output_dim)
        if truncate:
            bound = TRUNCATE_AT_STDS * std
            nn.init.trunc_normal_(weight, mean=0.0, std=std, a=-bound, b=bound)
        else:
            nn.init.normal_(weight, mean=0.0, std=std)
        self.weight = nn.Parameter(weight)

    def forward(
        self, x: Float[torch.Tensor, "... input_dim"]
    ) -> Float[torch.Tensor, "... output_dim"]:
        return x @ self.weight


class Cruncher(nn.Module):
    """`num_layers` Linear(dim, dim) layers, then a Linear(dim, 1) head; one number per row.

    Parameters: num_layers * dim * dim + dim. Cruncher(dim=4, num_layers=2) has 36.
    """

    def __init__(self, dim: int, num_layers: int, truncate: bool = False):
        super().__init__()
        if dim < 1 or num_layers < 0:
            raise ValueError(f"need dim >= 1 and num_layers >= 0, got {dim} and {num_layers}")
        self.layers = nn.ModuleList(Linear(dim, dim, truncate) for _ in range(num_layers))
        self.final = Linear(dim, 1, truncate)

    def forward(self, x: Float[torch.Tensor, "batch dim"]) -> Float[torch.Tensor, " batch"]:
        for layer in self.layers:
            x = layer(x)
        return self.final(x).squeeze(-1)


def get_num_parameters(model: nn.Module) -> int:
    """Number of values in the model's parameters: get_num_parameters(Cruncher(4, 2)) == 36."""
    return sum(parameter.numel() for parameter in model.parameters())
