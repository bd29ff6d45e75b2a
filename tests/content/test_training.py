"""The training loop honours its arguments; checkpoints resume exactly; mixed precision."""

import io
import os
import random

import numpy as np
import pytest
import torch

from cs336_lectures import training
from cs336_lectures.data import get_batch
from cs336_lectures.models import Cruncher
from cs336_lectures.optimizers import SGD, AdaGrad, Adam, AdamW, Momentum, RMSProp
from cs336_lectures.training import (
    load_checkpoint,
    regression_task,
    save_checkpoint,
    set_seed,
    train,
    train_steps,
)

SETTINGS = dict(dim=16, num_layers=0, batch_size=4, num_train_steps=10, lr=0.01, device="cpu")


def test_same_arguments_same_losses():
    get_batch = regression_task(16)
    assert train(get_batch, **SETTINGS) == train(get_batch, **SETTINGS)
    assert train(get_batch, **SETTINGS) != train(get_batch, **{**SETTINGS, "num_train_steps": 9})


def test_every_argument_reaches_the_model_and_optimizer():
    seen = {}

    class RecordingSGD(SGD):
        def __init__(self, params, lr):
            params = list(params)
            seen["lr"] = lr
            seen["num_parameters"] = sum(p.numel() for p in params)
            super().__init__(params, lr=lr)

    losses = train(regression_task(16), dim=16, num_layers=2, batch_size=4,
                   num_train_steps=7, lr=0.1, optimizer_class=RecordingSGD, device="cpu")
    assert seen == {"lr": 0.1, "num_parameters": 2 * 16 * 16 + 16}
    assert len(losses) == 7
    slow = train(regression_task(16), **SETTINGS)
    fast = train(regression_task(16), **{**SETTINGS, "lr": 0.1})
    assert slow[0] == fast[0] and slow[1:] != fast[1:]  # same start, different steps
    assert train(regression_task(16), **{**SETTINGS, "seed": 1}) != slow


def test_linear_regression_is_learned():
    losses = train(regression_task(16), **{**SETTINGS, "num_train_steps": 300})
    assert np.mean(losses[-20:]) < np.mean(losses[:20]) / 100


def test_set_seed_covers_torch_numpy_and_python():
    set_seed(3)
    first = (torch.rand(1).item(), np.random.rand(), random.random())
    set_seed(3)
    assert (torch.rand(1).item(), np.random.rand(), random.random()) == first


def run(optimizer_class, steps, checkpoint_after=None, target=None):
    """Train `steps` steps; with checkpoint_after, stop there, save, rebuild from scratch, load."""
    set_seed(0)
    get_batch = regression_task(8)
    model = Cruncher(dim=8, num_layers=2)
    optimizer = optimizer_class(model.parameters(), lr=1e-2)
    if checkpoint_after is None:
        return train_steps(model, optimizer, get_batch, 4, steps), model, optimizer
    losses = train_steps(model, optimizer, get_batch, 4, checkpoint_after)
    save_checkpoint(model, optimizer, checkpoint_after, target)
    if isinstance(target, io.BytesIO):
        target.seek(0)
    set_seed(12345)  # scramble everything a resumed process would start without
    model = Cruncher(dim=8, num_layers=2)
    optimizer = optimizer_class(model.parameters(), lr=1e-2)
    assert load_checkpoint(target, model, optimizer) == checkpoint_after
    losses += train_steps(model, optimizer, get_batch, 4, steps - checkpoint_after)
    return losses, model, optimizer


@pytest.mark.parametrize("optimizer_class", [AdaGrad, Adam])
@pytest.mark.parametrize("to_file_object", [False, True])
def test_resuming_from_a_checkpoint_is_bitwise_identical(tmp_path, optimizer_class, to_file_object):
    target = io.BytesIO() if to_file_object else tmp_path / "checkpoint.pt"
    straight_losses, straight_model, straight_optimizer = run(optimizer_class, 20)
    resumed_losses, resumed_model, resumed_optimizer = run(optimizer_class, 20, 10, target)
    assert resumed_losses == straight_losses
    for a, b in zip(straight_model.parameters(), resumed_model.parameters()):
        assert torch.equal(a, b)
    for a, b in zip(straight_optimizer.state.values(), resumed_optimizer.state.values()):
        assert a.keys() == b.keys()
        assert all(torch.equal(a[k], b[k]) if torch.is_tensor(a[k]) else a[k] == b[k] for k in a)


def test_checkpoint_restores_every_random_generator(tmp_path):
    model = Cruncher(dim=4, num_layers=1)
    optimizer = SGD(model.parameters())
    set_seed(5)
    save_checkpoint(model, optimizer, 3, tmp_path / "c.pt")
    expected = (torch.rand(1).item(), np.random.rand(), random.random())
    set_seed(6)
    load_checkpoint(tmp_path / "c.pt", model, optimizer)
    assert (torch.rand(1).item(), np.random.rand(), random.random()) == expected


def test_failed_save_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    model = Cruncher(dim=4, num_layers=1)
    optimizer = SGD(model.parameters())
    path = tmp_path / "c.pt"
    save_checkpoint(model, optimizer, 1, path)
    before = path.read_bytes()

    def broken_save(obj, file):
        file.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(training.torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(model, optimizer, 2, path)
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


def test_bad_checkpoints_and_iterations_are_refused(tmp_path):
    model = Cruncher(dim=4, num_layers=1)
    optimizer = SGD(model.parameters())
    torch.save({"weights": torch.zeros(1)}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a checkpoint"):
        load_checkpoint(tmp_path / "other.pt", model, optimizer)
    with pytest.raises(ValueError, match="iteration"):
        save_checkpoint(model, optimizer, -1, tmp_path / "c.pt")


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")  # torch warns about the garbage before refusing it
@pytest.mark.parametrize("content", [b"", b"plain text", b"\x80\x04garbage"])
def test_files_that_are_not_checkpoints_get_a_clear_error(tmp_path, content):
    model = Cruncher(dim=4, num_layers=1)
    optimizer = SGD(model.parameters())
    (tmp_path / "c.pt").write_bytes(content)
    with pytest.raises(ValueError, match="not a checkpoint"):
        load_checkpoint(tmp_path / "c.pt", model, optimizer)
    with pytest.raises(ValueError, match="not a checkpoint"):
        load_checkpoint(io.BytesIO(content), model, optimizer)
    buffer = io.BytesIO()
    save_checkpoint(model, optimizer, 3, buffer)
    truncated = io.BytesIO(buffer.getvalue()[: len(buffer.getvalue()) // 2])
    with pytest.raises(ValueError, match="not a checkpoint"):
        load_checkpoint(truncated, model, optimizer)


def test_mixed_precision_runs_matmuls_in_bfloat16_and_keeps_state_in_float32():
    set_seed(0)
    model = Cruncher(dim=8, num_layers=2)
    optimizer = Adam(model.parameters(), lr=1e-2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert model(torch.randn(2, 8)).dtype == torch.bfloat16
    losses = train_steps(model, optimizer, regression_task(8), 4, 5, mixed_precision=True)
    assert all(np.isfinite(losses))
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert all(v.dtype == torch.float32 for state in optimizer.state.values()
               for v in state.values() if torch.is_tensor(v))
    full = train(regression_task(8), dim=8, num_layers=2, batch_size=4, num_train_steps=5,
                 lr=1e-2, optimizer_class=Adam, device="cpu")
    mixed = train(regression_task(8), dim=8, num_layers=2, batch_size=4, num_train_steps=5,
                  lr=1e-2, optimizer_class=Adam, device="cpu", mixed_precision=True)
    assert mixed != full  # bfloat16 rounding shows in the losses...
    assert mixed == pytest.approx(full, rel=0.05)  # ...but only slightly


def test_changing_any_one_argument_changes_the_loss_history():
    base = dict(dim=8, num_layers=1, batch_size=4, num_train_steps=6, lr=0.02,
                optimizer_class=SGD, seed=0, device="cpu")
    get_batch = regression_task(8)
    reference = train(get_batch, **base)
    assert train(get_batch, **base) == reference
    for name, value in (("num_layers", 2), ("lr", 0.03), ("batch_size", 5), ("seed", 1),
                        ("num_train_steps", 7), ("optimizer_class", Adam),
                        ("optimizer_class", RMSProp), ("optimizer_class", Momentum)):
        changed = train(get_batch, **{**base, name: value})
        assert changed != reference, name
    assert len(train(get_batch, **{**base, "num_train_steps": 7})) == 7


def token_batches(batch_size):
    """Next-token regression on a token file: windows drawn by data.get_batch (global RNG)."""
    inputs, targets = get_batch(np.arange(1000) % 8, batch_size, 8, "cpu")
    return inputs.float(), targets[:, -1].float()


@pytest.mark.parametrize("optimizer_class", [SGD, Momentum, RMSProp, AdamW])
def test_resuming_with_random_token_batches_is_bitwise_identical(tmp_path, optimizer_class):
    def fresh(seed):
        set_seed(seed)
        model = Cruncher(dim=8, num_layers=2)
        return model, optimizer_class(model.parameters(), lr=1e-3)

    model, optimizer = fresh(0)
    straight = train_steps(model, optimizer, token_batches, 4, 15)

    model, optimizer = fresh(0)
    resumed = train_steps(model, optimizer, token_batches, 4, 6)
    with open(tmp_path / "checkpoint.pt", "wb") as file:  # a binary file object
        save_checkpoint(model, optimizer, 6, file)
    model, optimizer = fresh(99)
    with open(tmp_path / "checkpoint.pt", "rb") as file:
        assert load_checkpoint(file, model, optimizer) == 6
    resumed += train_steps(model, optimizer, token_batches, 4, 9)
    assert resumed == straight


def test_checkpoint_files_get_ordinary_permissions(tmp_path):
    model = Cruncher(dim=4, num_layers=1)
    umask = os.umask(0o022)
    try:
        save_checkpoint(model, SGD(model.parameters()), 0, str(tmp_path / "c.pt"))
    finally:
        os.umask(umask)
    assert (tmp_path / "c.pt").stat().st_mode & 0o777 == 0o644


def test_mixed_precision_intermediates_are_bfloat16_and_gradients_float32():
    set_seed(0)
    model = Cruncher(dim=8, num_layers=2)
    optimizer = AdamW(model.parameters(), lr=1e-2)
    output_dtypes, gradient_dtypes = [], []
    for layer in (*model.layers, model.final):
        layer.register_forward_hook(lambda module, args, output: output_dtypes.append(output.dtype))
        layer.weight.register_hook(lambda grad: gradient_dtypes.append(grad.dtype))
    train_steps(model, optimizer, regression_task(8), 4, 2, mixed_precision=True)
    assert output_dtypes == [torch.bfloat16] * 6  # 3 layers x 2 steps
    assert gradient_dtypes == [torch.float32] * 6
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert {v.dtype for state in optimizer.state.values() for v in state.values()
            if torch.is_tensor(v)} == {torch.float32}
