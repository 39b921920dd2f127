"""Self-play in ``N`` Ray actors: the runtime (a local one, or the cluster at ``$RAY_ADDRESS``), the actors, and
the split of a batch of games into contiguous chunks.

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
import socket
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from boardrl.learn.core.base import LearnError

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


#: CPUs of the local runtime this process started (None: none, or a runtime started elsewhere or a cluster), and
#: the pools open on it.
_local: dict[str, int | None] = {"cpus": None, "pools": 0}


def ray_runtime(cpus: int) -> Any:
    """Ray, initialised: joined to ``$RAY_ADDRESS`` when set, else a local runtime of ``cpus`` CPUs started here
    (no dashboard).  A local runtime's workers import boardrl from the driver's source (PYTHONPATH); on a cluster
    every node must have the same boardrl installed (docs/ray.md).

    A local runtime started here with fewer CPUs than ``cpus`` starts again with ``cpus``: Ray would keep an actor
    it cannot place pending for ever (``benchmarks/run.py``'s 2 actors of 2 threads after 1 actor hung 15
    minutes).  While a pool is open on it that would kill its actors, so that is a one-line error instead."""
    try:
        import ray
    except ImportError:
        raise LearnError("self-play workers need Ray: pip install 'boardrl[ray]'") from None
    if ray.is_initialized():
        started = _local["cpus"]
        if started is None or cpus <= started:
            return ray
        if _local["pools"]:
            raise LearnError(f"the local Ray runtime has {started} CPUs, held by {_local['pools']} open self-play "
                             f"pool(s); {cpus} are needed: close them first")
        ray.shutdown()
    _local["cpus"] = None
    from boardrl.cpu_pins import ISA_ENV

    # the actors pin the CPU kernels as the learner does (boardrl/cpu_pins.py), wherever they run
    isa = {ISA_ENV: os.environ[ISA_ENV]} if os.environ.get(ISA_ENV) else {}
    address = os.environ.get("RAY_ADDRESS")
    if address:
        check_reachable(address)
        try:
            ray.init(address=address, log_to_driver=False, runtime_env={"env_vars": isa} if isa else None)
        except Exception as exc:  # ConnectionError, TimeoutError, ...: one line naming the address
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise LearnError(f"cannot join the Ray cluster at RAY_ADDRESS={address}: {first}") from None
        return ray
    src = str(Path(__file__).resolve().parents[3])  # the directory holding the boardrl package
    path = os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path, **isa}})
    _local["cpus"] = cpus
    return ray


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A one-line ``LearnError`` naming ``address`` when nothing listens there: Ray itself retries for minutes.
    Addresses other than [ray://]host:port (``auto``, ``local``) are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise LearnError(f"cannot join the Ray cluster at RAY_ADDRESS={address}: {exc.strerror or exc}") from None


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
        self.ray = ray_runtime(max(os.cpu_count() or 1, workers * cpus_per_actor))
        actor = self.ray.remote(num_cpus=cpus_per_actor)(_Actor)
        self.actors = [actor.remote(build) for _ in range(workers)]
        _local["pools"] = (_local["pools"] or 0) + 1

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
            _local["pools"] = max(0, (_local["pools"] or 0) - 1)
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
