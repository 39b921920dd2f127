"""Pin the instruction sets that torch's CPU kernels dispatch on, before torch first runs an operation.

Why: torch picks its CPU kernels by the machine it runs on, kernels for different instruction sets add in
different orders, and training turns a last-bit difference into a different model.  A fresh ``make repro`` on
another machine reproduced no torch model (issue 33).  Three libraries inside torch dispatch, each on its own
environment variable, read once when the library is first used (so setting it after ``import torch`` but
before the first operation still works):

- ATen, torch's own kernels (softmax, log-softmax, ...): ``ATEN_CPU_CAPABILITY``.  Its AVX-512 and AVX2
  softmax differ, so AlphaZero's policy loss differs.
- oneDNN, the convolutions: ``ONEDNN_MAX_CPU_ISA``.  Its AVX-512 kernels differ from its AVX2 ones, and their
  weight gradients also change with the thread count; the AVX2 ones do not.
- MKL, the matrix products (and tanh and exp, through its vector math): ``MKL_CBWR``.  MKL also dispatches on
  the CPU's vendor.  It has AVX2 and AVX-512 branches on Intel only: an AMD CPU falls back to MKL's own
  choice.  So ``COMPATIBLE`` (SSE2) is the only branch that gives the same bits on an Intel Xeon and an AMD
  EPYC.  Measured on a Zen 4 EPYC (torch 2.13) and an Emerald Rapids Xeon (torch 2.11), with the same MKL
  (2024.2): matrix products, tanh, exp and log had equal bits under COMPATIBLE, and different bits with no
  pin, with AVX2 and with AUTO.  Its square root still differs between the two, COMPATIBLE or not.  torch's
  unfused Adam takes its square root from MKL, so the learners' Adam must be ``fused=True``: that kernel takes
  the square root from ATen, which is exact.  With the pin and fused Adam, DQN and AlphaZero trained the same
  model bytes on both machines.

AVX2 is the floor that every x86-64 server of the last ten years has (Intel Haswell, AMD Zen).  A CPU without
AVX2 runs torch's best lower level and cannot match bit for bit.  The pin overrides these variables when the
environment already sets them.  ``BOARDRL_CPU_ISA=native`` is the one deliberate way out: it leaves dispatch
to the machine.  The price of the pin, measured on two cores of the Xeon, is mostly MKL's SSE2 branch.  One
training step of the connect4 DQN net took 19 ms instead of 11, the AlphaZero tower 67 ms instead of 51, and
its batch-256 inference 15 ms instead of 10.  Thread counts are the other half of the bits: see
``learn/core/device.py`` ``torch_threads``.
"""

from __future__ import annotations

import os
import sys
from typing import MutableMapping, TextIO

#: Environment variable that chooses the pin: ``avx2`` (the default) or ``native`` (no pin).
ISA_ENV = "BOARDRL_CPU_ISA"
DEFAULT_ISA = "avx2"
#: What each choice sets (before torch runs): ATen's kernels, oneDNN's convolutions, MKL's branch.
PINS: dict[str, dict[str, str]] = {
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"},
    "native": {},
}


def chosen_pins(environ: MutableMapping[str, str], stderr: TextIO) -> dict[str, str]:
    """The variables that ``$BOARDRL_CPU_ISA`` asks for.  An unknown value warns and falls back to the default:
    a typo then costs speed, never reproducibility."""
    choice = environ.get(ISA_ENV, "").strip().lower() or DEFAULT_ISA
    if choice not in PINS:
        print(f"boardrl: ${ISA_ENV}={choice!r} is not one of {', '.join(PINS)}; pinning {DEFAULT_ISA}", file=stderr)
        choice = DEFAULT_ISA
    return PINS[choice]


def torch_ran_unpinned(pins: dict[str, str]) -> bool:
    """Whether torch already chose its kernels without the pin.

    Why ATen's capability tells: it is fixed at the first kernel call.  Querying it after the variables are set
    fixes it to the pinned level when nothing has run yet.  If it still reports another level, torch already
    ran an operation, and MKL and oneDNN may be fixed too.
    """
    torch = sys.modules.get("torch")
    wanted = pins.get("ATEN_CPU_CAPABILITY")
    if torch is None or wanted is None:
        return False
    return torch.backends.cpu.get_cpu_capability().lower() != wanted


def pin_cpu_dispatch(environ: MutableMapping[str, str] = os.environ, stderr: TextIO = sys.stderr) -> dict[str, str]:
    """Set the pins in ``environ`` (child processes inherit them) and return them.  Warn with one line if torch
    already ran unpinned in this process."""
    pins = chosen_pins(environ, stderr)
    environ.update(pins)
    if torch_ran_unpinned(pins):
        shown = ", ".join(f"{k}={v}" for k, v in pins.items())
        print(f"boardrl: torch ran before boardrl could pin its CPU dispatch ({shown}), so its results may differ "
              "on another machine: import boardrl before torch", file=stderr)
    return pins
