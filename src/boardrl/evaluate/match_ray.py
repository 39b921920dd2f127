"""A match's chunks as Ray tasks: the evaluate stage's long ladders on a local Ray runtime or a cluster.

Why: a ladder against search-based opponents (MCTS with 1,000 simulations, alpha-beta, an AlphaZero agent with
hundreds of simulations a move) is minutes of independent games.  ``evaluate/match.py`` cuts them into chunks
that carry their own seeds, so a chunk played in a Ray task anywhere gives the games it gives in this process.
With ``$BOARDRL_MATCH_BACKEND=ray`` the chunks that would go to a process pool go to Ray instead, on
``$BOARDRL_PROCESSES`` CPUs of a local runtime, or on the cluster at ``$RAY_ADDRESS`` (Ray's own convention;
or one this process started already, self-play's).  Ray is imported only then.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from boardrl.errors import BoardRLError

#: Environment variable choosing where a match's pooled chunks run: worker processes here, or Ray tasks.
BACKEND_ENV = "BOARDRL_MATCH_BACKEND"
BACKENDS = ("processes", "ray")


def match_backend(environ: Mapping[str, str] = os.environ) -> str:
    """``$BOARDRL_MATCH_BACKEND`` (default ``processes``); a one-line error for anything else."""
    raw = environ.get(BACKEND_ENV) or BACKENDS[0]
    if raw not in BACKENDS:
        raise BoardRLError(f"${BACKEND_ENV} must be one of {', '.join(BACKENDS)}, got {raw!r}")
    return raw


def _play_chunk(shared: bytes, chunk: Any) -> Any:
    """In a Ray worker: the parent's torch threads (a network's outputs depend on them), then the chunk.

    ``shared`` is pickled by hand: arrays that Ray's object store hands out zero-copy are read-only, and the
    game kernels (numba) are compiled for writable ones."""
    game, agents, start_rows, threads, run_chunk = pickle.loads(shared)
    if threads is not None and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    return run_chunk(game, agents, chunk, start_rows)


def _runtime(cpus: int) -> Any:
    """Ray, initialised: a runtime already started in this process (self-play's, say) as it is; else the cluster
    at ``$RAY_ADDRESS``; else a local runtime of ``cpus`` CPUs whose workers import boardrl from this source.
    Either way the workers pin torch's CPU kernels as this process does (``boardrl/cpu_pins.py``).

    Why not self-play's ``learn/core/selfplay_pool.ray_runtime``: the evaluate layer sits below learn
    (tests/test_layers.py).  Moving that function down to the foundation is the better home for both; it edits
    the AlphaZero learner's code closure, which retrains its experiments, so it was left for a run with time."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise BoardRLError(f"${BACKEND_ENV}=ray needs Ray: pip install 'boardrl[ray]'")
    import ray

    from boardrl.cpu_pins import ISA_ENV

    if ray.is_initialized():
        return ray
    env = {ISA_ENV: os.environ[ISA_ENV]} if os.environ.get(ISA_ENV) else {}
    address = os.environ.get("RAY_ADDRESS")
    if not address:
        src = str(Path(__file__).resolve().parents[2])  # the directory holding the boardrl package
        env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])
    try:
        ray.init(address=address or None, num_cpus=None if address else cpus, include_dashboard=False,
                 log_to_driver=False, runtime_env={"env_vars": env} if env else None)
    except Exception as exc:  # ConnectionError, TimeoutError, ...: one line naming the address
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BoardRLError(f"cannot start or join Ray (RAY_ADDRESS={address or 'unset'}): {first}") from None
    return ray


def ray_chunks(game: Any, agents: tuple[Any, Any], chunks: list[Any], start_rows: Any, cpus: int,
               threads: int | None, run_chunk: Callable[..., Any]) -> Iterator[Any]:
    """Each chunk's ``run_chunk(game, agents, chunk, start_rows)`` (first game, outcomes, lengths), in the order
    they finish, from one Ray task per chunk."""
    ray = _runtime(cpus)
    shared = ray.put(pickle.dumps((game, agents, start_rows, threads, run_chunk)))
    play = ray.remote(num_cpus=1)(_play_chunk)
    pending = [play.remote(shared, chunk) for chunk in chunks]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])
