"""One seed for every generator a lecture may use, so that it traces the same way every time
(exported notebooks call it in their first cell too)."""

from __future__ import annotations

import random


def seed_everything(seed: int) -> None:
    """Seed random, numpy and torch so that a lecture traces the same way every time."""
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        pass
    else:
        numpy.random.seed(seed)
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)
