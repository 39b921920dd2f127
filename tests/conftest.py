"""Suite-wide settings.  pytest runs two xdist workers on the two cores, so each worker's torch keeps to one
thread where a learner's params leave the count open (learn/device.py ``torch_threads``): two threads per
worker would oversubscribe the machine and slow small nets many times over."""

import os

os.environ.setdefault("BOARDRL_TORCH_THREADS", "1")
