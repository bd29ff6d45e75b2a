"""The training loop, its reproducibility and its checkpoints, with optional mixed precision.

One step: forward pass (loss), backward pass (gradients), optimizer step, gradients cleared.
Around it, three habits of a careful run:
- seed every source of randomness (torch, numpy, Python) so a run can be repeated exactly;
- save checkpoints holding everything the next step depends on: weights, optimizer state,
  the iteration and the random generators' states, so a resumed run continues exactly as if
  it had never stopped (bit for bit on a CPU);
- mixed precision: matmuls in bfloat16 under torch.autocast, while parameters, gradients and
  optimizer state stay float32, where small updates accumulate without being rounded away.
"""

from __future__ import annotations

import os
import pickle
import random
from collections.abc import Callable
from typing import BinaryIO

import numpy as np
import torch
import torch.nn.functional as F
from jaxtyping import Float
from torch import nn

from cs336_lectures.accounting import get_device
from cs336_lectures.atomic import write_atomically
from cs336_lectures.models import Cruncher
from cs336_lectures.optimizers import SGD

CHECKPOINT_FORMAT = "cs336-lectures-checkpoint"

Batch = tuple[Float[torch.Tensor, "batch dim"], Float[torch.Tensor, " batch"]]


def set_seed(seed: int) -> None:
    """Seed torch (CPU and every GPU), numpy's global generator and Python's `random`."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def regression_task(dim: int, device: torch.device | str = "cpu") -> Callable[[int], Batch]:
    """A get_batch(batch_size) -> (x, y): x ~ N(0, 1) (batch_size, dim), y = x @ (0, ..., dim-1).

    Draws from torch's global generator, so set_seed (and a checkpoint) governs the data too.
    """
    true_weights = torch.arange(dim, dtype=torch.float32)

    def get_batch(batch_size: int) -> Batch:
        x = torch.randn(batch_size, dim)
        return x.to(device), (x @ true_weights).to(device)

    return get_batch


def train_steps(model: nn.Module, optimizer: torch.optim.Optimizer,
                get_batch: Callable[[int], Batch], batch_size: int, num_steps: int,
                mixed_precision: bool = False) -> list[float]:
    """Run `num_steps` steps of mean-squared-error regression; return the loss of each step.

    With mixed_precision the forward pass runs under torch.autocast in bfloat16 (on the
    model's device, CPU or CUDA); the backward pass and the update stay in float32.
    """
    device = next(model.parameters()).device
    losses = []
    for _ in range(num_steps):
        x, y = get_batch(batch_size)
        x, y = x.to(device), y.to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=mixed_precision):
            predictions = model(x)
        # The loss is a reduction, computed in float32 whatever precision the matmuls used.
        loss = F.mse_loss(predictions.float(), y.float())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return losses


def train(get_batch: Callable[[int], Batch], dim: int, num_layers: int, batch_size: int,
          num_train_steps: int, lr: float,
          optimizer_class: type[torch.optim.Optimizer] = SGD, seed: int = 0,
          device: torch.device | str | None = None, mixed_precision: bool = False) -> list[float]:
    """Train a fresh Cruncher(dim, num_layers) with optimizer_class(lr=lr); return the losses.

    train(regression_task(16), dim=16, num_layers=0, batch_size=4, num_train_steps=10, lr=0.01)
    Every argument is used; the same arguments give the same losses.
    """
    set_seed(seed)
    device = get_device() if device is None else torch.device(device)
    model = Cruncher(dim=dim, num_layers=num_layers).to(device)
    optimizer = optimizer_class(model.parameters(), lr=lr)
    return train_steps(model, optimizer, get_batch, batch_size, num_train_steps, mixed_precision)


def _rng_states() -> dict:
    # Stored as tensors and plain Python values so torch.load(weights_only=True) accepts them.
    _, keys, position, has_gauss, cached_gaussian = np.random.get_state()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": {"keys": torch.from_numpy(keys.astype(np.int64)), "position": int(position),
                  "has_gauss": int(has_gauss), "cached_gaussian": float(cached_gaussian)},
        "python": random.getstate(),
    }


def _restore_rng_states(states: dict) -> None:
    """Apply RNG states that _checked_checkpoint accepted."""
    torch.set_rng_state(states["torch"])
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
    np.random.set_state(_numpy_state(states["numpy"]))
    random.setstate(_python_state(states["python"]))


def _numpy_state(saved: dict) -> tuple:
    return ("MT19937", saved["keys"].numpy().astype(np.uint32), saved["position"], saved["has_gauss"],
            saved["cached_gaussian"])


def _python_state(saved: tuple | list) -> tuple:
    version, internal_state, gauss_next = saved
    return version, tuple(internal_state), gauss_next


def save_checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer, iteration: int,
                    out: str | os.PathLike | BinaryIO) -> None:
    """Save model, optimizer, iteration and RNG states to a path (atomically) or a binary file."""
    if isinstance(iteration, bool) or not isinstance(iteration, int) or iteration < 0:
        raise ValueError(f"iteration must be a non-negative int, got {iteration!r}")
    checkpoint = {
        "format": CHECKPOINT_FORMAT,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "iteration": iteration,
        "rng": _rng_states(),
    }
    if isinstance(out, (str, os.PathLike)):
        write_atomically(out, lambda file: torch.save(checkpoint, file))
    else:
        torch.save(checkpoint, out)


def load_checkpoint(src: str | os.PathLike | BinaryIO, model: nn.Module,
                    optimizer: torch.optim.Optimizer) -> int:
    """Restore what save_checkpoint stored into `model` and `optimizer`; return the iteration.

    The random generators are restored too, so the next batch is the one an uninterrupted
    run would have drawn. Everything is checked before anything is changed: a checkpoint that
    does not fit raises ValueError and leaves the model, optimizer and generators as they were.
    """
    try:
        checkpoint = torch.load(src, map_location="cpu", weights_only=True)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except (pickle.UnpicklingError, EOFError, KeyError, RuntimeError, ValueError, OSError) as error:
        # What torch.load raises for text, empty, truncated or non-tensor pickle files (a file cut
        # inside its zip directory is an OSError: invalid argument).
        raise ValueError(f"{src!r} is not a checkpoint written by save_checkpoint "
                         f"({type(error).__name__} while reading it)") from error
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{src!r} is not a checkpoint written by save_checkpoint")
    try:
        rng = _checked_checkpoint(checkpoint, model, optimizer)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        detail = f"missing {error}" if isinstance(error, KeyError) else str(error)
        raise ValueError(f"{src!r} does not fit this model and optimizer: {detail}") from None
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    _restore_rng_states(rng)
    return checkpoint["iteration"]


def _checked_checkpoint(checkpoint: dict, model: nn.Module, optimizer: torch.optim.Optimizer) -> dict:
    """Raise (KeyError, TypeError, ValueError) unless every part of the checkpoint can be applied;
    return its RNG states, checked."""
    iteration = checkpoint["iteration"]
    if isinstance(iteration, bool) or not isinstance(iteration, int) or iteration < 0:
        raise ValueError(f"iteration {iteration!r} is not a non-negative int")
    weights, expected = checkpoint["model"], model.state_dict()
    if not isinstance(weights, dict) or weights.keys() != expected.keys():
        raise ValueError("the model's parameter names differ")
    for name, tensor in expected.items():
        if not torch.is_tensor(weights[name]) or weights[name].shape != tensor.shape:
            raise ValueError(f"the model's {name} has another shape")
    saved = checkpoint["optimizer"]
    groups, state = saved["param_groups"], saved["state"]
    if len(groups) != len(optimizer.param_groups) or any(
            len(group["params"]) != len(ours["params"]) for group, ours in zip(groups, optimizer.param_groups)):
        raise ValueError("the optimizer's parameter groups differ")
    parameters = {index: parameter for group, ours in zip(groups, optimizer.param_groups)
                  for index, parameter in zip(group["params"], ours["params"])}
    for index, values in state.items():
        for key, value in values.items():
            if torch.is_tensor(value) and value.dim() > 0 and value.shape != parameters[index].shape:
                raise ValueError(f"the optimizer's {key!r} for parameter {index} has another shape")
    rng = checkpoint["rng"]
    if not torch.is_tensor(rng["torch"]) or rng["torch"].shape != torch.get_rng_state().shape:
        raise ValueError("the torch RNG state is malformed")
    if rng["cuda"] and torch.cuda.is_available() and len(rng["cuda"]) != torch.cuda.device_count():
        raise ValueError(f"it holds RNG states for {len(rng['cuda'])} GPUs, "
                         f"this machine has {torch.cuda.device_count()}")
    np.random.RandomState().set_state(_numpy_state(rng["numpy"]))  # a throwaway generator checks it
    random.Random().setstate(_python_state(rng["python"]))
    return rng
