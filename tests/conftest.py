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

import atexit
import os
import shutil
import sys
import tempfile

import pytest

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

os.environ.setdefault("BOARDRL_TORCH_THREADS", "1")
os.environ.setdefault("BOARDRL_TRACKING_SERVICE", "off")

# The report's figure cache (report/figure_cache.py): one empty cache per run, not the user's ~/.cache, so a
# run's time does not depend on what earlier runs drew.  Made by the first process that loads this file (xdist's
# controller), whose workers inherit it; the pipeline tests' stages get it too (repo_copy.stage_env).  Removed
# when that process exits.
if "BOARDRL_FIGURE_CACHE" not in os.environ:
    os.environ["BOARDRL_FIGURE_CACHE"] = tempfile.mkdtemp(prefix="boardrl-figures-")
    atexit.register(shutil.rmtree, os.environ["BOARDRL_FIGURE_CACHE"], True)



# The modules that take longest (seconds of one worker while the other is busy, `pytest --durations=0` summed by
# module; docs/studies/pipeline-timing.md), longest first: they start first.  Why: xdist hands whole modules
# (`--dist loadfile`) to whichever worker runs short, by default those with the most tests first; the longest
# modules hold one or two tests each (a pipeline killed and resumed, a study, two sweep workers), so they came
# last and one worker ran alone for a minute at the end.  Longest first (`--no-loadscope-reorder`, pyproject.toml)
# leaves the short modules to even out the end.  A module missing here only starts later; the order stays right.
LONGEST_FIRST = (
    "tests/pipeline/test_integration.py",
    "tests/pipeline/test_fault_injection.py",
    "tests/sweeps/test_sweeps.py",
    "tests/experiments/test_study.py",
    "tests/sweeps/test_many_machines.py",
    "tests/experiments/test_publish.py",
    "tests/sweeps/test_killed_workers.py",
    "tests/learn/test_selfplay_ray.py",
    "tests/pipeline/test_resume.py",
    "tests/experiments/test_parallel_repro.py",
    "tests/learn/test_cpu_determinism.py",
    "tests/web/test_limits.py",
    "tests/solvers/test_connect4_book.py",
    "tests/pipeline/test_stage_errors.py",
    "tests/tracking/test_service.py",
    "tests/report/test_report_build.py",
    "tests/agents/test_network_agent.py",
)


def pytest_collection_modifyitems(session, config, items) -> None:
    """The modules of ``LONGEST_FIRST`` first, in its order; the others after them, in collection order."""
    rank = {module: i for i, module in enumerate(LONGEST_FIRST)}
    root = config.rootpath

    def module_rank(item) -> int:
        return rank.get(item.path.relative_to(root).as_posix(), len(rank))

    items.sort(key=module_rank)  # stable: the tests of a module keep their order


@pytest.fixture(autouse=True, scope="session")
def _mlflow_stores_start_migrated():
    """Every sqlite MLflow store a test opens in this process starts as a copy of one migrated once
    (tests/mlflow_store.py: a minute of schema migrations less in the suite)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    from mlflow_store import seeding_init

    original = SqlAlchemyStore.__init__
    SqlAlchemyStore.__init__ = seeding_init(original)
    yield
    SqlAlchemyStore.__init__ = original
