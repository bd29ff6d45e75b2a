"""Linear's initialization, Cruncher's structure, parameter counting."""

import math

import pytest
import torch

from cs336_lectures.models import Cruncher, Linear, get_num_parameters


def test_linear_scales_weights_by_one_over_sqrt_fan_in():
    torch.manual_seed(0)
    layer = Linear(4096, 256)
    assert layer.weight.shape == (4096, 256)
    assert layer.weight.std().item() == pytest.approx(1 / math.sqrt(4096), rel=0.02)
    # Outputs stay of order one however wide the input.
    output = layer(torch.randn(64, 4096))
    assert output.shape == (64, 256)
    assert output.std().item() == pytest.approx(1.0, rel=0.1)


def test_unscaled_weights_would_grow_with_sqrt_fan_in():
    torch.manual_seed(0)
    x = torch.randn(16384)
    unscaled = x @ torch.randn(16384, 32)
    scaled = Linear(16384, 32)(x)
    assert unscaled.std().item() > 50
    assert scaled.std().item() < 3


def test_truncation_keeps_weights_within_three_standard_deviations():
    torch.manual_seed(0)
    std = 1 / math.sqrt(256)
    truncated = Linear(256, 4096, truncate=True).weight
    assert truncated.abs().max().item() <= 3 * std
    untruncated = Linear(256, 4096).weight  # a million normal draws: some exceed 3 std
    assert untruncated.abs().max().item() > 3 * std


def test_cruncher_structure_matches_the_lecture():
    dim = 64
    model = Cruncher(dim=dim, num_layers=2)
    sizes = [(name, p.numel()) for name, p in model.state_dict().items()]
    assert sizes == [("layers.0.weight", dim * dim), ("layers.1.weight", dim * dim),
                     ("final.weight", dim)]
    assert get_num_parameters(model) == 2 * dim * dim + dim
    assert model(torch.randn(8, dim)).shape == (8,)


def test_cruncher_without_hidden_layers_is_a_linear_regression():
    model = Cruncher(dim=16, num_layers=0)
    assert get_num_parameters(model) == 16
    x = torch.randn(3, 16)
    assert torch.allclose(model(x), x @ model.final.weight.squeeze(-1))
    with pytest.raises(ValueError):
        Cruncher(dim=0, num_layers=1)
