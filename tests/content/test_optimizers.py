"""The optimizers' updates: against torch.optim where they share its arithmetic, else by hand."""

import inspect
import io

import pytest
import torch

from cs336_lectures.models import Cruncher, get_num_parameters
from cs336_lectures.optimizers import (
    SGD,
    AdaGrad,
    Adam,
    AdamW,
    Momentum,
    RMSProp,
    get_num_state_values,
)

NUM_STEPS = 100


def trajectory(optimizer_class, **settings) -> list[torch.Tensor]:
    """Parameters after NUM_STEPS full-batch steps on a fixed regression problem."""
    torch.manual_seed(0)
    model = Cruncher(dim=8, num_layers=2)
    x, y = torch.randn(32, 8), torch.randn(32)
    optimizer = optimizer_class(model.parameters(), **settings)
    for _ in range(NUM_STEPS):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return [p.detach().clone() for p in model.parameters()]


def assert_same_trajectory(ours, reference):
    start = trajectory(SGD, lr=0.0)
    for mine, theirs, initial in zip(ours, reference, start):
        assert not torch.equal(theirs, initial)  # the run really moved
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ours, theirs, settings", [
    (SGD, torch.optim.SGD, dict(lr=0.05)),
    (SGD, torch.optim.SGD, dict(lr=0.05, weight_decay=0.1)),
    (RMSProp, torch.optim.RMSprop, dict()),
    (RMSProp, torch.optim.RMSprop, dict(lr=3e-3, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    (Adam, torch.optim.Adam, dict(lr=1e-2)),
    (Adam, torch.optim.Adam, dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    (AdamW, torch.optim.AdamW, dict(lr=1e-2)),
    (AdamW, torch.optim.AdamW, dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.5)),
])
def test_trajectories_match_torch_optim(ours, theirs, settings):
    assert_same_trajectory(trajectory(ours, **settings), trajectory(theirs, **settings))


@pytest.mark.parametrize("ours, theirs", [
    (SGD, torch.optim.SGD), (RMSProp, torch.optim.RMSprop),
    (Adam, torch.optim.Adam), (AdamW, torch.optim.AdamW),
])
def test_argument_names_and_defaults_follow_torch_optim(ours, theirs):
    mine = inspect.signature(ours).parameters
    reference = inspect.signature(theirs).parameters
    for name in mine:
        if name != "params":
            assert mine[name].default == reference[name].default, name


def test_sgd_refuses_torch_style_positional_momentum():
    parameter = torch.nn.Parameter(torch.ones(2))
    with pytest.raises(TypeError):
        SGD([parameter], 0.1, 0.9)  # torch.optim.SGD would read 0.9 as momentum


def test_default_adam_and_adamw_match_torch_optim():
    assert_same_trajectory(trajectory(Adam), trajectory(torch.optim.Adam))
    assert_same_trajectory(trajectory(AdamW), trajectory(torch.optim.AdamW))


def test_momentum_is_an_average_equal_to_torch_momentum_with_scaled_lr():
    ours = trajectory(Momentum, lr=0.1, beta=0.9)
    reference = trajectory(torch.optim.SGD, lr=0.1 * (1 - 0.9), momentum=0.9)
    assert_same_trajectory(ours, reference)


def test_adagrad_follows_the_worked_example():
    w = torch.nn.Parameter(torch.tensor([2.0]))
    optimizer = AdaGrad([w], lr=0.1)
    for grad, expected_g2, expected_w in ((3.0, 9.0, 1.9), (4.0, 25.0, 1.82)):
        w.grad = torch.tensor([grad])
        optimizer.step()
        assert optimizer.state[w]["g2"].item() == expected_g2
        assert w.item() == pytest.approx(expected_w, abs=1e-5)


def test_adagrad_keeps_eps_inside_the_square_root():
    w = torch.nn.Parameter(torch.tensor([0.0]))
    optimizer = AdaGrad([w], lr=1.0, eps=1.0)
    w.grad = torch.tensor([1.0])
    optimizer.step()
    assert w.item() == pytest.approx(-1 / 2**0.5)  # sqrt(1 + 1), not sqrt(1) + 1


def test_adagrad_first_step_moves_every_weight_by_about_lr():
    torch.manual_seed(0)
    model = Cruncher(dim=4, num_layers=2)
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = AdaGrad(model.parameters(), lr=0.01)
    torch.nn.functional.mse_loss(model(torch.randn(2, 4)), torch.tensor([4.0, 5.0])).backward()
    optimizer.step()
    for p, old in zip(model.parameters(), before):
        moved = (p.detach() - old).abs()
        torch.testing.assert_close(moved, torch.full_like(moved, 0.01), rtol=0.05, atol=0)


@pytest.mark.parametrize("optimizer_class, values_per_parameter", [
    (SGD, 0), (Momentum, 1), (AdaGrad, 1), (RMSProp, 1), (Adam, 2), (AdamW, 2),
])
def test_state_size_per_parameter(optimizer_class, values_per_parameter):
    assert optimizer_class.state_values_per_parameter == values_per_parameter
    model = Cruncher(dim=4, num_layers=2)
    optimizer = optimizer_class(model.parameters(), lr=0.01)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    assert get_num_state_values(optimizer) == values_per_parameter * get_num_parameters(model)


def test_parameters_without_gradients_are_left_alone():
    used, unused = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
    for optimizer_class in (SGD, Momentum, AdaGrad, RMSProp, Adam, AdamW):
        optimizer = optimizer_class([used, unused], lr=0.1)
        used.grad = torch.ones(2)
        optimizer.step()
        assert torch.equal(unused.detach(), torch.ones(2))
        assert unused not in optimizer.state


def test_closure_loss_is_returned_and_bad_settings_are_refused():
    w = torch.nn.Parameter(torch.tensor([1.0]))
    optimizer = Adam([w])

    def closure():
        optimizer.zero_grad()
        loss = (w * 3).sum()
        loss.backward()
        return loss

    assert optimizer.step(closure).item() == 3.0
    with pytest.raises(ValueError):
        Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError):
        AdamW([w], betas=(0.9,))
    with pytest.raises(ValueError):
        RMSProp([w], lr=-1)


def grouped_trajectory(optimizer_class, settings, middle_group_settings, num_steps=300):
    """Three parameter groups, the middle one with its own settings; a fresh batch each step,
    and every third step one weight has no gradient (it must be skipped, state and all)."""
    torch.manual_seed(3)
    model = Cruncher(dim=6, num_layers=3)
    parameters = list(model.parameters())
    groups = [dict(params=parameters[:2]), dict(params=parameters[2:3], **middle_group_settings),
              dict(params=parameters[3:])]
    optimizer = optimizer_class(groups, **settings)
    generator = torch.Generator().manual_seed(1)
    for step in range(num_steps):
        x, y = torch.randn(16, 6, generator=generator), torch.randn(16, generator=generator)
        torch.nn.functional.mse_loss(model(x), y).backward()
        if step % 3 == 0:
            model.layers[1].weight.grad = None
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("ours, theirs, settings, middle_group_settings", [
    (SGD, torch.optim.SGD, dict(lr=0.03, weight_decay=0.05), dict(lr=0.1)),
    (RMSProp, torch.optim.RMSprop, dict(lr=2e-3, alpha=0.95, eps=1e-4, weight_decay=0.02),
     dict(alpha=0.8, lr=1e-3)),
    (Adam, torch.optim.Adam, dict(lr=3e-3, betas=(0.7, 0.95), eps=1e-5, weight_decay=0.03),
     dict(betas=(0.5, 0.9), weight_decay=0.0)),
    (AdamW, torch.optim.AdamW, dict(lr=3e-3, betas=(0.85, 0.98), eps=1e-7, weight_decay=0.2),
     dict(lr=1e-2, weight_decay=0.0)),
])
def test_parameter_groups_and_missing_gradients_match_torch_optim(ours, theirs, settings,
                                                                  middle_group_settings):
    mine = grouped_trajectory(ours, settings, middle_group_settings)
    reference = grouped_trajectory(theirs, settings, middle_group_settings)
    for a, b in zip(mine, reference):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_momentum_with_parameter_groups_matches_scaled_torch_momentum():
    mine = grouped_trajectory(Momentum, dict(lr=0.2, beta=0.8), dict(lr=0.1, beta=0.5))
    reference = grouped_trajectory(torch.optim.SGD, dict(lr=0.2 * (1 - 0.8), momentum=0.8),
                                   dict(lr=0.1 * (1 - 0.5), momentum=0.5))
    for a, b in zip(mine, reference):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("optimizer_class, state_keys", [
    (SGD, set()), (Momentum, {"velocity"}), (AdaGrad, {"g2"}), (RMSProp, {"square_avg"}),
    (Adam, {"step", "m", "v"}), (AdamW, {"step", "m", "v"}),
])
def test_state_dict_round_trip_continues_identically(optimizer_class, state_keys):
    def fresh():
        torch.manual_seed(0)
        model = Cruncher(dim=5, num_layers=2)
        return model, optimizer_class(model.parameters(), lr=0.01)

    def steps(model, optimizer, seed, count):
        generator = torch.Generator().manual_seed(seed)
        for _ in range(count):
            x, y = torch.randn(4, 5, generator=generator), torch.randn(4, generator=generator)
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    model, optimizer = fresh()
    steps(model, optimizer, seed=1, count=7)
    assert all(state.keys() == state_keys for state in optimizer.state.values())
    saved = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, saved)
    saved.seek(0)
    checkpoint = torch.load(saved, weights_only=True)
    restored_model, restored_optimizer = fresh()
    restored_model.load_state_dict(checkpoint["model"])
    restored_optimizer.load_state_dict(checkpoint["optimizer"])
    steps(model, optimizer, seed=2, count=5)
    steps(restored_model, restored_optimizer, seed=2, count=5)
    for a, b in zip(model.parameters(), restored_model.parameters()):
        assert torch.equal(a, b)
