"""Suite-wide settings.  pytest runs two xdist workers on the two cores, so each worker's torch keeps to one
thread where a learner's params leave the count open (learn/core/device.py ``torch_threads``): two threads per
worker would oversubscribe the machine and slow small nets many times over.

MLflow writes run in the test process itself (``BOARDRL_TRACKING_SERVICE=off``): nearly every test has a store of
its own, and a tracking service per store would start a process and import MLflow each time (about 2 s of CPU
for each of some hundred stores), where the worker imports MLflow once.  Pipeline tests run their stages with
``repo_copy.stage_env``, which drops ``BOARDRL_*`` settings, so the stages there use the service as under
``make repro``; ``tests/tracking/test_service.py`` switches it on for its own processes.

Bytecode is cached even where ``PYTHONDONTWRITEBYTECODE`` is set (this machine sets it): without the cache each
worker rewrites the asserts of every test module again (collection 12.6 s instead of 6.5 s a worker), and every
stage and CLI process the tests start compiles the project's modules again (about 0.15 s each, some hundreds of
them).  ``__pycache__`` is git-ignored."""

import os
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

os.environ.setdefault("BOARDRL_TORCH_THREADS", "1")
os.environ.setdefault("BOARDRL_TRACKING_SERVICE", "off")

