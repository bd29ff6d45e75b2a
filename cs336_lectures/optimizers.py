"""Optimizers from SGD to AdamW, each a torch.optim.Optimizer keeping its memory in `state`.

The lineage, one idea added per step (g is the gradient, lr the learning rate):

    SGD       p -= lr * g                                          no state
    Momentum  SGD on a running average of g                        1 value per parameter
    AdaGrad   SGD with g divided by the root of the summed g^2     1 value per parameter
    RMSProp   AdaGrad with a decaying average of g^2, not a sum    1 value per parameter
    Adam      RMSProp + Momentum, both averages bias-corrected     2 values per parameter
    AdamW     Adam with weight decay applied to p, not added to g  2 values per parameter

That state is what makes Adam cost 16 bytes per float32 parameter in training: the value, its
gradient and two averages. SGD, RMSProp, Adam and AdamW take torch.optim's argument names and
defaults and follow the same arithmetic, so they trace the same trajectories as
torch.optim.SGD, RMSprop, Adam and AdamW. The step counter Adam needs for bias correction is
one integer per parameter tensor, not per value, and is not counted as state.

All six share one `step` (ParameterOptimizer): it visits every parameter that has a gradient
and hands it to the optimizer's `update`, which is the update rule and nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch
from jaxtyping import Float

Weights = Float[torch.Tensor, "..."]  # a parameter, its gradient or its state: one shape


class ParameterOptimizer(torch.optim.Optimizer):
    """torch.optim.Optimizer whose step applies `update` to each parameter with a gradient.

    Parameters without a gradient (unused this step) are skipped: not moved, no state made.
    """

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        loss = None
        if closure is not None:
            # torch.optim's protocol: step(closure) re-evaluates the loss with gradients on.
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self.update(p, p.grad, group)
        return loss

    def update(self, p: Weights, grad: Weights, group: dict) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define its update rule")


class SGD(ParameterOptimizer):
    """p -= lr * (g + weight_decay * p). State: none (0 values per parameter).

    Same names and defaults as torch.optim.SGD without momentum: SGD(model.parameters(), lr=0.1).
    weight_decay is keyword-only: torch.optim.SGD's third positional argument is momentum,
    which SGD(params, 0.1, 0.9) must not silently turn into weight decay.
    """

    state_values_per_parameter = 0

    def __init__(self, params: Iterable, lr: float = 1e-3, *, weight_decay: float = 0.0):
        if lr < 0 or weight_decay < 0:
            raise ValueError(f"lr and weight_decay must be >= 0, got {lr} and {weight_decay}")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay))

    def update(self, p: Weights, grad: Weights, group: dict) -> None:
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        p.add_(grad, alpha=-group["lr"])


class Momentum(ParameterOptimizer):
    """v = beta * v + (1 - beta) * g;  p -= lr * v. State: v (1 value per parameter).

    v is the exponential moving average of the gradient, starting at 0. torch.optim.SGD's
    momentum keeps the undamped sum b = beta * b + g instead; since v = (1 - beta) * b at every
    step, Momentum(lr, beta) moves exactly like torch.optim.SGD(lr=lr * (1 - beta), momentum=beta).
    """

    state_values_per_parameter = 1

    def __init__(self, params: Iterable, lr: float = 0.01, beta: float = 0.9):
        if lr < 0 or not 0 <= beta < 1:
            raise ValueError(f"need lr >= 0 and 0 <= beta < 1, got {lr} and {beta}")
        super().__init__(params, dict(lr=lr, beta=beta))

    def update(self, p: Weights, grad: Weights, group: dict) -> None:
        state = self.state[p]
        if "velocity" not in state:
            state["velocity"] = torch.zeros_like(p)
        velocity = state["velocity"]
        velocity.mul_(group["beta"]).add_(grad, alpha=1 - group["beta"])
        p.add_(velocity, alpha=-group["lr"])


class AdaGrad(ParameterOptimizer):
    """g2 += g^2;  p -= lr * g / sqrt(g2 + eps). State: g2 (1 value per parameter).

    As in the lecture, eps sits inside the square root (default 1e-5). torch.optim.Adagrad puts
    it outside, sqrt(g2) + eps with eps 1e-10, so the two differ slightly. On the first step
    g2 = g^2 and every weight moves by about +-lr whatever the size of its gradient.
    """

    state_values_per_parameter = 1

    def __init__(self, params: Iterable, lr: float = 0.01, eps: float = 1e-5):
        if lr < 0 or eps <= 0:
            raise ValueError(f"need lr >= 0 and eps > 0, got {lr} and {eps}")
        super().__init__(params, dict(lr=lr, eps=eps))

    def update(self, p: Weights, grad: Weights, group: dict) -> None:
        state = self.state[p]
        if "g2" not in state:
            state["g2"] = torch.zeros_like(p)
        g2 = state["g2"]
        g2.addcmul_(grad, grad)
        p.addcdiv_(grad, (g2 + group["eps"]).sqrt(), value=-group["lr"])


class RMSProp(ParameterOptimizer):
    """v = alpha * v + (1 - alpha) * g^2;  p -= lr * g / (sqrt(v) + eps). State: v (1 value).

    g includes the L2 term weight_decay * p. Names, defaults and arithmetic of
    torch.optim.RMSprop (without its momentum/centered variants): lr=1e-2, alpha=0.99, eps=1e-8.
    """

    state_values_per_parameter = 1

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0):
        if lr < 0 or not 0 <= alpha < 1 or eps <= 0 or weight_decay < 0:
            raise ValueError(f"bad RMSProp settings: lr={lr}, alpha={alpha}, eps={eps}, "
                             f"weight_decay={weight_decay}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay))

    def update(self, p: Weights, grad: Weights, group: dict) -> None:
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        state = self.state[p]
        if "square_avg" not in state:
            state["square_avg"] = torch.zeros_like(p)
        square_avg = state["square_avg"]
        square_avg.mul_(group["alpha"]).addcmul_(grad, grad, value=1 - group["alpha"])
        p.addcdiv_(grad, square_avg.sqrt().add_(group["eps"]), value=-group["lr"])


class Adam(ParameterOptimizer):
    """Momentum and RMSProp together, with bias correction. State: m, v (2 values per parameter).

        m = beta1 * m + (1 - beta1) * g          v = beta2 * v + (1 - beta2) * g^2
        p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    Both averages start at 0, so early on they are too small; dividing by 1 - beta^t undoes
    that. Here weight_decay adds weight_decay * p to g (L2), as torch.optim.Adam does.
    Defaults of torch.optim.Adam: lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.
    """

    state_values_per_parameter = 2
    decoupled_weight_decay = False

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        if (lr < 0 or eps <= 0 or weight_decay < 0 or len(betas) != 2
                or not all(0 <= b < 1 for b in betas)):
            raise ValueError(f"bad {type(self).__name__} settings: lr={lr}, betas={betas}, "
                             f"eps={eps}, weight_decay={weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def update(self, p: Weights, grad: Weights, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay = group["weight_decay"]
        if weight_decay != 0:
            if self.decoupled_weight_decay:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(p, alpha=weight_decay)
        state = self.state[p]
        if "m" not in state:
            state["step"] = 0
            state["m"] = torch.zeros_like(p)
            state["v"] = torch.zeros_like(p)
        state["step"] += 1
        m, v, t = state["m"], state["v"], state["step"]
        m.lerp_(grad, 1 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denominator = (v.sqrt() / math.sqrt(1 - beta2**t)).add_(eps)
        p.addcdiv_(m, denominator, value=-lr / (1 - beta1**t))


class AdamW(Adam):
    """Adam whose weight decay shrinks the weights directly: p *= 1 - lr * weight_decay.

    Decoupling keeps the decay out of the adaptive averages, so it is not rescaled by
    1/sqrt(v). Defaults of torch.optim.AdamW: as Adam but weight_decay=1e-2. State: m, v.
    """

    decoupled_weight_decay = True

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


def get_num_state_values(optimizer: torch.optim.Optimizer) -> int:
    """Values held in the optimizer's state tensors: 2 x parameters for Adam after one step."""
    return sum(value.numel() for state in optimizer.state.values()
               for value in state.values() if isinstance(value, torch.Tensor))
