"""Where torch runs: one place that turns a preference ("auto", "cpu", "cuda") into a device.

Why: learners and agents must run unchanged on a laptop and on a GPU machine.  "auto" takes CUDA when present;
asking for CUDA explicitly on a machine without it is an error rather than a silent (and slow) CPU run.
"""

from __future__ import annotations

import os
from typing import Literal

import torch

from boardrl.errors import BoardRLError

DevicePreference = Literal["auto", "cpu", "cuda"]
DEVICE_CHOICES: tuple[str, ...] = ("auto", "cpu", "cuda")


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


def available_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one, else ``os.cpu_count``)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def torch_threads() -> int:
    """Let torch's CPU kernels use every available core (learners call this once); returns the thread count.

    torch's default may be lower than the cores a training job owns, e.g. inside containers.
    """
    n = available_cores()
    torch.set_num_threads(n)
    return n
