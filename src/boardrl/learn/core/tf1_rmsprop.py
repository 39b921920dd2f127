"""TensorFlow 1's ``tf.train.RMSPropOptimizer`` in torch: the optimiser reference system 001 trained with.

Why not ``torch.optim.RMSprop``: its update differs from TF1's in three places, and at the system's learning rate
of 1e-6 the first one decides the size of every early step.

=================  ==========================================  ===========================================
                   TF1 ``RMSPropOptimizer`` (defaults)         ``torch.optim.RMSprop`` (defaults)
=================  ==========================================  ===========================================
mean square init   **ones**                                    zeros
decay (rho/alpha)  0.9                                         0.99
epsilon            1e-10, **inside** the square root           1e-8, outside the square root
momentum           0                                           0
=================  ==========================================  ===========================================

TF1's dense update (``training_ops.ApplyRMSProp``), per variable, non-centered::

    ms  <- ms + (1 - decay) * (g^2 - ms)
    mom <- momentum * mom + lr * g / sqrt(ms + epsilon)
    var <- var - mom

Started from ms = 1, the first steps are about lr * g (not lr * sign(g), as a zero start gives), and ms forgets
the ones by 0.9 a step.  The state (ms, mom) is kept per parameter in ``optimizer.state`` as torch optimisers do,
so it goes into a checkpoint with ``state_dict`` and a resumed run continues bit for bit.
"""

from __future__ import annotations

from typing import Iterable

import torch

__all__ = ["TF1RMSProp"]


class TF1RMSProp(torch.optim.Optimizer):
    """RMSProp with TF1's defaults and arithmetic (module docstring); ``centered`` is not offered (the system's
    optimiser is not centered)."""

    def __init__(self, params: Iterable[torch.Tensor], lr: float, decay: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-10) -> None:
        if not lr > 0.0:
            raise ValueError(f"TF1RMSProp: lr must be > 0, got {lr}")
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"TF1RMSProp: decay must lie in [0, 1), got {decay}")
        if not momentum >= 0.0:
            raise ValueError(f"TF1RMSProp: momentum must be >= 0, got {momentum}")
        if not epsilon >= 0.0:
            raise ValueError(f"TF1RMSProp: epsilon must be >= 0, got {epsilon}")
        super().__init__(params, {"lr": lr, "decay": decay, "momentum": momentum, "epsilon": epsilon})

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        """One update of every parameter that has a gradient (TF1's dense ``ApplyRMSProp``)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, decay, momentum, eps = group["lr"], group["decay"], group["momentum"], group["epsilon"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                state = self.state[p]
                if not state:
                    state["ms"] = torch.ones_like(p, memory_format=torch.preserve_format)
                    state["mom"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                ms, mom = state["ms"], state["mom"]
                ms.add_(torch.addcmul(ms, g, g, value=-1.0).neg_(), alpha=1.0 - decay)  # ms += (1-d)(g^2 - ms)
                denom = ms.add(eps).sqrt_()
                mom.mul_(momentum).addcdiv_(g, denom, value=lr)  # mom = momentum mom + lr g / sqrt(ms + eps)
                p.sub_(mom)
        return loss
