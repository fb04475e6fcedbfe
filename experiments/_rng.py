"""Random draws of the experiments: every one from the cell's seed through a local generator
(never torch's or numpy's global state, so a cell's result does not depend on what ran before)."""

from __future__ import annotations

import math


def init_linear_(model, seed: int):
    """Draw every ``nn.Linear`` of ``model`` as PyTorch's default initialisation does, in module
    order, from a generator seeded with ``seed``; returns the generator for further draws.

    Bit for bit the weights ``torch.manual_seed(seed)`` followed by building the model gives
    (for models whose only random parameters are ``nn.Linear``), without touching global state."""
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Linear):  # drawn in the default dtype, then cast
                w = torch.empty(m.weight.shape)
                torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5), generator=g)
                m.weight.copy_(w)
                if m.bias is not None:
                    fan_in = m.weight.shape[1]
                    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
                    b = torch.empty(m.bias.shape)
                    torch.nn.init.uniform_(b, -bound, bound, generator=g)
                    m.bias.copy_(b)
    return g
