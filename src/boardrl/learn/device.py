"""Where torch runs: one place that turns a preference ("auto", "cpu", "cuda") into a device.

Why: learners and agents must run unchanged on a laptop and on a GPU machine.  "auto" takes CUDA when present;
asking for CUDA explicitly on a machine without it is an error rather than a silent (and slow) CPU run.
"""

from __future__ import annotations

import os
from typing import Literal

import torch

from boardrl.cores import available_cores
from boardrl.errors import BoardRLError

DevicePreference = Literal["auto", "cpu", "cuda"]
DEVICE_CHOICES: tuple[str, ...] = ("auto", "cpu", "cuda")
#: Environment variable that sets torch's CPU threads where a learner's params leave them open.
THREADS_ENV = "BOARDRL_TORCH_THREADS"


def pick_device(preference: str = "auto") -> torch.device:
    """The torch device for ``preference``; ``BoardRLError`` for an unknown choice or missing CUDA."""
    if preference not in DEVICE_CHOICES:
        raise BoardRLError(f"unknown device {preference!r}; choose one of: {', '.join(DEVICE_CHOICES)}")
    has_cuda = torch.cuda.is_available()
    if preference == "cuda" and not has_cuda:
        raise BoardRLError("device 'cuda' was asked for, but torch finds no CUDA GPU here (use 'auto' or 'cpu')")
    if preference == "cpu" or not has_cuda:
        return torch.device("cpu")
    return torch.device("cuda")


def torch_threads(requested: int | None = None) -> int:
    """Set torch's CPU threads (learners call this once) and return the count.

    ``requested`` wins; otherwise ``$BOARDRL_TORCH_THREADS`` (the test suite sets 1: its two xdist workers
    would oversubscribe the cores), otherwise every core this process may use (torch's default may be lower,
    e.g. inside containers).  Why not always 1: the convolutional nets of DQN and AlphaZero train 1.4-1.6x
    faster on both cores of an idle 2-core machine (README, "torch threads").
    """
    env = os.environ.get(THREADS_ENV)
    if requested is not None:
        n = int(requested)
    elif env:
        try:
            n = int(env)
        except ValueError:
            raise BoardRLError(f"${THREADS_ENV} must be a positive integer, got {env!r}") from None
    else:
        n = available_cores()
    if n < 1:
        raise BoardRLError(f"torch threads must be >= 1, got {n}")
    torch.set_num_threads(n)
    return n
