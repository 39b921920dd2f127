"""Suite-wide settings.  pytest runs two xdist workers on the two cores, so each worker's torch keeps to one
thread where a learner's params leave the count open (learn/core/device.py ``torch_threads``): two threads per
worker would oversubscribe the machine and slow small nets many times over.

MLflow writes run in the test process itself (``BOARDRL_TRACKING_SERVICE=off``): nearly every test has a store of
its own, and a tracking service per store would start a process and import MLflow each time (about 2 s of CPU
for each of some hundred stores), where the worker imports MLflow once.  Pipeline tests run their stages with
``repo_copy.stage_env``, which drops ``BOARDRL_*`` settings, so the stages there use the service as under
``make repro``; ``tests/tracking/test_service.py`` switches it on for its own processes."""

import os

os.environ.setdefault("BOARDRL_TORCH_THREADS", "1")
os.environ.setdefault("BOARDRL_TRACKING_SERVICE", "off")

