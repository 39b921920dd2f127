"""boardrl: games, exact referees, agents and a reproducible pipeline to train and evaluate them."""

from boardrl.cpu_pins import pin_cpu_dispatch
from boardrl.kernel_cache import use_closure_cache

# First, before any boardrl module can import torch: torch's CPU kernels must not depend on the machine.
pin_cpu_dispatch()
# And before any can compile a numba kernel: one cache for every copy of the project, keyed by source content.
use_closure_cache()

__version__ = "0.1.0"
