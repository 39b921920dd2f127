"""boardrl: games, exact referees, agents and a reproducible pipeline to train and evaluate them."""

from boardrl.cpu_pins import pin_cpu_dispatch

# First, before any boardrl module can import torch: torch's CPU kernels must not depend on the machine.
pin_cpu_dispatch()

__version__ = "0.1.0"
