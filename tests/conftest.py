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


#: The files that take longest (``make test``'s ``--durations``), longest first.  Why: ``--dist loadfile`` hands
#: files to the two workers in collection order, so a long file collected late (``tests/pipeline`` sits in the
#: middle of the alphabet) ran on while the other worker sat idle; started first, the short files fill in beside
#: them.  A file not listed keeps its place after these.
LONGEST_FIRST = (
    "tests/pipeline/test_integration.py",
    "tests/pipeline/test_fault_injection.py",
    "tests/experiments/test_study.py",
    "tests/sweeps/test_many_machines.py",
    "tests/sweeps/test_killed_workers.py",
    "tests/sweeps/test_sweeps.py",
    "tests/pipeline/test_resume.py",
    "tests/learn/test_cpu_determinism.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest keep order
