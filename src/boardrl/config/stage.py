"""What every stage script shares: its arguments, loading params for one experiment, exits and signals."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, TypeVar

from boardrl.config.errors import EXIT_BAD_PARAMS, ConfigError, fail
from boardrl.config.loading import load_params_or_exit
from boardrl.config.schema import ExperimentSpec
from boardrl.errors import BoardRLError

PROCESSES_ENV = "BOARDRL_PROCESSES"


def runtime_processes() -> int:
    """Worker processes for matches of scalar agents: ``$BOARDRL_PROCESSES`` (default 1).

    Not a param: match results do not depend on it (each game's seed is fixed in advance), so changing it must
    not rerun anything.
    """
    raw = os.environ.get(PROCESSES_ENV, "1")
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= 64:
        raise ConfigError("", f"${PROCESSES_ENV} must be a whole number from 1 to 64, got {raw!r}", file="environment")
    return n




T = TypeVar("T")


def run_experiment_stage(params_path: str | Path, exp_id: str, run: Callable[[ExperimentSpec], T]) -> T:
    """Entry of a per-experiment stage (train, curve, evaluate): validate, resolve the experiment once, then run
    it; every failure one ``error:`` line.

    Params and the experiment id are checked before any work (exit 2).  SIGTERM (``dvc`` or a user stopping
    the stage) becomes SystemExit, so context managers unwind: the MLflow run is closed as FAILED instead of
    being left RUNNING, and atomic writes leave the previous outputs.
    """
    params = load_params_or_exit(params_path, only_experiment=exp_id)
    try:
        spec = params.spec(exp_id)
        runtime_processes()
    except ConfigError as exc:
        fail(str(exc), EXIT_BAD_PARAMS)
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    try:
        return run(spec)
    except BoardRLError as exc:
        fail(str(exc))
    except OSError as exc:  # permissions, a full disk: one line naming the path (atomic writes kept the old outputs)
        fail(os_error_text(exc))


def stage_entry(main: Callable[[], Any]) -> NoReturn:
    """Run a stage script's ``main``: a ``BoardRLError`` or a file-system error anywhere is one ``error:`` line.

    A stage that finished leaves through ``exit_now``: the pipeline starts over a hundred stage processes, and
    the interpreter's teardown of torch, numba and MLflow modules costs each about a second (measured).
    """
    try:
        main()
    except BoardRLError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(os_error_text(exc))
    exit_now(0)


def exit_now(status: int) -> NoReturn:
    """Exit at once after the ``atexit`` handlers (MLflow's among them) and a flush of stdout and stderr.

    Everything a stage writes is complete by then (atomic renames, committed MLflow rows); only the freeing of
    module objects is skipped.
    """
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def os_error_text(exc: OSError) -> str:
    """``<path>: <reason>`` of a file-system error, for one ``error:`` line."""
    where = exc.filename if exc.filename is not None else ""
    reason = exc.strerror or str(exc)
    return f"{where}: {reason}; previous outputs are kept" if where else f"{reason}; previous outputs are kept"


def exit_on_sigterm(signum: int, frame: Any) -> NoReturn:
    fail("stopped by SIGTERM; previous outputs are kept", 128 + signum)


def experiment_stage_args(argv: list[str] | None, description: str, params_default: Path) -> argparse.Namespace:
    """Command line of a per-experiment stage: ``--experiment ID`` names an entry of params `experiments`."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--experiment", required=True, help="id of an entry of params `experiments`")
    ap.add_argument("--params", default=str(params_default), help=argparse.SUPPRESS)
    return ap.parse_args(argv)
