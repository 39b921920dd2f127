"""Where and how torch runs: a preference ("auto", "cpu", "cuda") turned into a device, and the thread count.

Why one place: learners and agents must run unchanged on a laptop and on a GPU machine.  "auto" takes CUDA
when present; asking for CUDA explicitly on a machine without it is an error rather than a silent (and slow) CPU
run.  On the CPU a trained model must also be the same on every machine: the instruction sets are pinned
when boardrl is imported (``boardrl/cpu_pins.py``), and the thread count and deterministic kernels are set here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

import torch

from boardrl.errors import BoardRLError

DevicePreference = Literal["auto", "cpu", "cuda"]
DEVICE_CHOICES: tuple[str, ...] = ("auto", "cpu", "cuda")
#: Environment variable that sets torch's CPU threads where a learner's params leave them open.
THREADS_ENV = "BOARDRL_TORCH_THREADS"
#: torch's CPU threads where neither params, the environment nor the learner say: a constant, not the machine's
#: cores.  Why 2: AlphaZero's batched self-play and play scale to both cores of the project's 2-core machine
#: (a ladder took 69 s on 2 threads, 116 s on 1).  Learners whose work is small batches set their own
#: ``Learner.default_threads`` (DQN and seed 003's learners: 1), since a core per stage does more work side by side.
DEFAULT_THREADS = 2


def pick_device(preference: str = "auto") -> torch.device:
    """The torch device for ``preference``; ``BoardRLError`` for an unknown choice or missing CUDA.

    Learners call this once in setup, so it also switches torch's deterministic algorithms on for the CPU
    (``deterministic_algorithms``).
    """
    if preference not in DEVICE_CHOICES:
        raise BoardRLError(f"unknown device {preference!r}; choose one of: {', '.join(DEVICE_CHOICES)}")
    has_cuda = torch.cuda.is_available()
    if preference == "cuda" and not has_cuda:
        raise BoardRLError("device 'cuda' was asked for, but torch finds no CUDA GPU here (use 'auto' or 'cpu')")
    device = torch.device("cpu" if preference == "cpu" or not has_cuda else "cuda")
    deterministic_algorithms(device)
    return device


def deterministic_algorithms(device: torch.device) -> None:
    """Deterministic kernels on the CPU: an operation without a deterministic implementation then raises.

    Why CPU only: the CPU models must be the same everywhere, and every operation of our networks has a
    deterministic CPU kernel.  On CUDA the same switch would make cuBLAS raise unless
    ``CUBLAS_WORKSPACE_CONFIG`` was set before CUDA started, and GPU models are not claimed to be
    bit-reproducible.  Why not fill new tensors with NaN (torch's default in this mode): our code never reads
    memory it did not write, and the filling costs time on every new tensor.
    """
    torch.use_deterministic_algorithms(device.type == "cpu")
    torch.utils.deterministic.fill_uninitialized_memory = False


def resolved_threads(requested: int | None = None, default: int = DEFAULT_THREADS,
                     environ: Mapping[str, str] = os.environ) -> int:
    """torch's CPU threads for a learner: ``requested`` (its ``threads`` param), else ``$BOARDRL_TORCH_THREADS``,
    else the learner's ``default``; ``BoardRLError`` for a count below 1 or a malformed variable.

    Why never the machine's cores: the count changes the model bits.  ATen splits its parallel reductions (loss
    means) by thread, and MKL's reproducible branch splits matrix products by thread, so a machine with more
    cores would train (and play) differently.  The thread count is part of the params.  The environment
    variable is a deliberate override with the same effect on the bits: the test suite sets 1, because its two
    xdist workers would oversubscribe the cores.  Pure, so the stage scheduler (experiments/parallel_repro.py)
    counts the cores a stage will keep busy with the same rule the stage applies.
    """
    env = environ.get(THREADS_ENV)
    if requested is not None:
        n = int(requested)
    elif env:
        try:
            n = int(env)
        except ValueError:
            raise BoardRLError(f"${THREADS_ENV} must be a positive integer, got {env!r}") from None
    else:
        n = int(default)
    if n < 1:
        raise BoardRLError(f"torch threads must be >= 1, got {n}")
    return n


def torch_threads(requested: int | None = None, default: int = DEFAULT_THREADS) -> int:
    """Set torch's CPU threads by ``resolved_threads`` (a learner's setup, and every stage that plays its
    model, call this once) and return the count."""
    n = resolved_threads(requested, default)
    torch.set_num_threads(n)
    return n


def adam(params, **kwargs) -> torch.optim.Adam:
    """torch's Adam in its fused form: the same update, computed in one kernel per step.

    Why fused: the default (for-each) Adam takes its square root from MKL's vector math, which is inexact
    (about one value in five off by a last bit) and differs between an Intel and an AMD CPU whatever the
    dispatch pins say (``boardrl/cpu_pins.py``); the fused kernel computes it in torch itself, so DQN and
    AlphaZero models came out byte-identical on both vendors (measured on an AMD EPYC and an Intel Xeon).
    """
    return torch.optim.Adam(params, fused=True, **kwargs)
