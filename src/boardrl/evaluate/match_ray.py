"""A match's chunks as Ray tasks: the evaluate stage's long ladders on a local Ray runtime or a cluster.

Why: a ladder against search-based opponents (MCTS with 1,000 simulations, alpha-beta, an AlphaZero agent with
hundreds of simulations a move) is minutes of independent games.  ``evaluate/match.py`` cuts them into chunks
that carry their own seeds, so a chunk played in a Ray task anywhere gives the games it gives in this process.
With ``$BOARDRL_MATCH_BACKEND=ray`` the chunks that would go to a process pool go to Ray instead, on
``$BOARDRL_PROCESSES`` CPUs of a local runtime, or on the cluster at ``$RAY_ADDRESS`` (Ray's own convention),
or on the runtime this process started already (self-play's): ``boardrl/ray_runtime.py``.  Ray is imported only
then.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from boardrl.errors import BoardRLError
from boardrl.evaluate.match_payload import dumps_match_payload, load_match_payload
from boardrl.ray_runtime import ray_runtime

#: Environment variable choosing where a match's pooled chunks run: worker processes here, or Ray tasks.
BACKEND_ENV = "BOARDRL_MATCH_BACKEND"
BACKENDS = ("processes", "ray")


def match_backend(environ: Mapping[str, str] = os.environ) -> str:
    """``$BOARDRL_MATCH_BACKEND`` (default ``processes``); a one-line error for anything else."""
    raw = environ.get(BACKEND_ENV) or BACKENDS[0]
    if raw not in BACKENDS:
        raise BoardRLError(f"${BACKEND_ENV} must be one of {', '.join(BACKENDS)}, got {raw!r}")
    return raw


def _play_chunk(payload: bytes, run_chunk: Callable[..., Any], chunk: Any) -> Any:
    """In a Ray worker: the match's payload (``evaluate/match_payload.py``), then the chunk."""
    game, agents, start_rows = load_match_payload(payload)
    return run_chunk(game, agents, chunk, start_rows)


def ray_chunks(game: Any, agents: tuple[Any, Any], chunks: list[Any], start_rows: Any, cpus: int,
               threads: int | None, run_chunk: Callable[..., Any]) -> Iterator[Any]:
    """Each chunk's ``run_chunk(game, agents, chunk, start_rows)`` (first game, outcomes, lengths), in the order
    they finish, from one Ray task per chunk."""
    ray = ray_runtime(cpus, f"${BACKEND_ENV}=ray", grow=False)
    shared = ray.put(dumps_match_payload(game, agents, start_rows, threads))
    play = ray.remote(num_cpus=1)(_play_chunk)
    pending = [play.remote(shared, run_chunk, chunk) for chunk in chunks]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])
