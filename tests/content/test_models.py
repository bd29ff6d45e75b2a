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


@pytest.mark.parametrize("fan_in", [1000, 8192])
def test_initialization_statistics_over_large_fan_in(fan_in):
    torch.manual_seed(fan_in)
    std = 1 / math.sqrt(fan_in)
    plain = Linear(fan_in, 512).weight.detach()
    assert plain.mean().item() == pytest.approx(0, abs=0.01 * std)
    assert plain.std().item() == pytest.approx(std, rel=0.01)
    assert (plain.abs() > 3 * std).float().mean().item() == pytest.approx(0.0027, rel=0.15)
    truncated = Linear(fan_in, 512, truncate=True).weight.detach()
    assert truncated.abs().max().item() <= 3 * std
    assert truncated.abs().max().item() > 2.99 * std  # cut at 3 std, not narrower
    assert truncated.std().item() == pytest.approx(0.9866 * std, rel=0.01)


@pytest.mark.parametrize("dim, num_layers", [(1, 0), (3, 5), (10, 1), (128, 4)])
def test_cruncher_shapes_and_parameter_counts(dim, num_layers):
    model = Cruncher(dim=dim, num_layers=num_layers)
    shapes = [tuple(p.shape) for p in model.parameters()]
    assert shapes == [(dim, dim)] * num_layers + [(dim, 1)]
    assert get_num_parameters(model) == num_layers * dim * dim + dim
    assert model(torch.randn(5, dim)).shape == (5,)


def test_bad_layer_sizes_are_refused():
    for input_dim, output_dim in ((0, 3), (3, 0), (-1, 2)):
        with pytest.raises(ValueError, match="input_dim"):
            Linear(input_dim, output_dim)
    with pytest.raises(ValueError, match="num_layers"):
        Cruncher(dim=4, num_layers=-1)
