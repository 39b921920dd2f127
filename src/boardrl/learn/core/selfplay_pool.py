"""Self-play in ``N`` Ray actors on the process's Ray runtime (``boardrl/ray_runtime.py``: a local one, or the
cluster at ``$RAY_ADDRESS``): the actors, and the split of a batch of games into contiguous chunks.

Why Ray: it runs the same code in actors on one machine or across many, and joins a cluster by Ray's own
convention (``RAY_ADDRESS``); the learner stays one process that owns the network, the optimizer and the window.
Why it cannot change a model: the player an actor holds is a pure function of (weights, params, seed, game
indices) -> records (``learn/alphazero_selfplay.py``), so the chunks' records, merged in game order, are the
records of one in-process batch.  Ray is an optional extra: this module imports it only when a pool is made,
and a run that never asks for workers never imports this module.

The count comes from the learner's ``workers`` param, else ``$BOARDRL_SELFPLAY_WORKERS``; neither set: no Ray.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from boardrl.learn.core.base import LearnError
from boardrl.ray_runtime import hold, ray_runtime, release

#: Environment variable with the self-play actor count where the learner's ``workers`` param is null.
WORKERS_ENV = "BOARDRL_SELFPLAY_WORKERS"


def resolved_workers(requested: int | None, environ: Mapping[str, str] = os.environ) -> int | None:
    """Actors for self-play: ``requested``, else ``$BOARDRL_SELFPLAY_WORKERS``, else None (in-process)."""
    raw = requested if requested is not None else environ.get(WORKERS_ENV) or None
    if raw is None:
        return None
    try:
        n = int(raw)
    except ValueError:
        raise LearnError(f"${WORKERS_ENV} must be a positive integer, got {raw!r}") from None
    if n < 1:
        raise LearnError(f"self-play workers must be >= 1, got {n}")
    return n


def chunks(first_game: int, n: int, workers: int) -> list[tuple[int, int]]:
    """(first game, games) of up to ``workers`` contiguous non-empty chunks of games first_game .. + n - 1."""
    sizes = [len(c) for c in np.array_split(np.arange(n), min(workers, n))]
    starts = first_game + np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return [(int(s), int(k)) for s, k in zip(starts, sizes)]


#: What a pool counts as on the shared Ray runtime (``boardrl/ray_runtime.py`` ``hold``).
POOL = "self-play pool"


class _Actor:
    """One actor: holds the player ``build()`` makes, takes weights, plays chunks."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self.player = build()

    def set_weights(self, weights: Any) -> None:
        self.player.set_weights(weights)

    def play(self, *args: Any) -> Any:
        return self.player.play(*args)

    def source(self) -> str:
        """Where this actor imported boardrl from (the tests check it is the driver's)."""
        import boardrl

        return str(Path(boardrl.__file__).resolve().parent)


class SelfPlayPool:
    """``workers`` Ray actors, each holding the player that ``build`` (picklable, called in the actor) makes.

    ``cpus_per_actor`` is what Ray reserves per actor (the player's torch threads)."""

    def __init__(self, workers: int, build: Callable[[], Any], cpus_per_actor: int = 1) -> None:
        self.ray = ray_runtime(max(os.cpu_count() or 1, workers * cpus_per_actor), "self-play workers")
        actor = self.ray.remote(num_cpus=cpus_per_actor)(_Actor)
        self.actors = [actor.remote(build) for _ in range(workers)]
        hold(POOL)

    def set_weights(self, weights: Any) -> None:
        """Send one generation's weights (put in the object store once, read by every actor)."""
        ref = self.ray.put(weights)
        self.ray.get([a.set_weights.remote(ref) for a in self.actors])

    def play(self, seed: int, first_game: int, n: int) -> list[Any]:
        """The actors' results for contiguous chunks of games first_game .. + n - 1, in game order."""
        parts = chunks(first_game, n, len(self.actors))
        return self.ray.get([a.play.remote(seed, s, k) for a, (s, k) in zip(self.actors, parts)])

    def sources(self) -> list[str]:
        return self.ray.get([a.source.remote() for a in self.actors])

    def close(self) -> None:
        if self.actors:
            release(POOL)
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
