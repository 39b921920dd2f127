"""Referee latency of the browser app: how long a Connect 4 position of 8-12 stones waits for its values.

What a player waits for after a move with "show the referee" on: the server's ``RefereeService`` hands the
position to its referee process, which computes the exact score of every move (``analysis.move_values``), and the
answer comes back.  That path is timed here as the server runs it (a child process that keeps its referee and
transposition table between positions), from submitting a position to its answer.  Positions are 8-12 stones
(``connect4_positions.random_positions``: random games, the game still on, no immediate win): the first ones
past the opening book, where the search does the work.  The service starts and warms up first (as ``boardrl
serve`` does), so process start-up is not counted; the disk cache is off for the timed pass.  A second service
then reads every answer back from a disk cache written by the first: the latency of a position solved before a
restart.

``make bench`` runs it (``benchmarks/run.py``, keys ``web_referee.*``); alone:

    .venv/bin/python benchmarks/web_referee.py [--per-ply 8]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
PLIES = range(8, 13)


def positions(per_ply: int, seed: int = 0) -> list[Any]:
    """``per_ply`` positions for each stone count 8..12 (benchmarks/connect4_positions.py's generator)."""
    spec = importlib.util.spec_from_file_location("connect4_positions", HERE / "connect4_positions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [p for plies in PLIES for p in module.random_positions(per_ply, plies, seed + plies)]


def _time_each(service: Any, states: list[Any], timeout: float) -> list[float]:
    """Seconds from submitting each state (one at a time, as a player asks) to its answer."""

    async def one(state: Any) -> float:
        start = time.perf_counter()
        service.submit("connect4", [state])
        if not await service.wait("connect4", [state], timeout):
            raise TimeoutError(f"no answer within {timeout:g} s for a {state.plies}-stone position")
        service.result("connect4", state)  # raises the referee's error, if any
        return time.perf_counter() - start

    async def run() -> list[float]:
        return [await one(s) for s in states]

    return asyncio.run(run())


def _started(service: Any, timeout: float = 300.0) -> None:
    """Start and warm the service's processes (``boardrl serve`` does this at start-up) and wait until done: a
    position asked for now waits behind the warm-up in the referee process."""
    from boardrl.games import make_game
    from boardrl.web.jobs import WARM

    service.start()
    _time_each(service, [make_game("connect4").replay(WARM["connect4"])], timeout)


def measure(per_ply: int = 8, seed: int = 0, timeout: float = 600.0) -> dict[str, float]:
    """Median, 95th percentile and maximum seconds over 8-12-stone positions; median ms of a disk-cache answer."""
    from boardrl.games import make_game
    from boardrl.web.cache import DiskCache
    from boardrl.web.jobs import RefereeService

    states = positions(per_ply, seed)
    with tempfile.TemporaryDirectory() as tmp:
        cold = RefereeService()
        try:
            _started(cold)
            seconds = _time_each(cold, states, timeout)
            disk, game = DiskCache(tmp), make_game("connect4")
            for s in states:
                disk.put(game, s, cold.result("connect4", s))
        finally:
            cold.close()
        warm = RefereeService(cache=DiskCache(tmp))
        try:
            cached = _time_each(warm, states, timeout)
        finally:
            warm.close()
    return {
        "web_referee.connect4_8_12_median_s": statistics.median(seconds),
        "web_referee.connect4_8_12_p95_s": float(np.percentile(seconds, 95)),
        "web_referee.connect4_8_12_max_s": max(seconds),
        "web_referee.connect4_8_12_positions": float(len(seconds)),
        "web_referee.connect4_cached_median_ms": 1e3 * statistics.median(cached),
    }


KEYS = ("web_referee.connect4_8_12_median_s", "web_referee.connect4_8_12_p95_s", "web_referee.connect4_8_12_max_s",
        "web_referee.connect4_8_12_positions", "web_referee.connect4_cached_median_ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-ply", type=int, default=8, help="positions per stone count (8..12)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for key, value in measure(args.per_ply, args.seed).items():
        print(f"{key:44s} {value:10.3f}")


if __name__ == "__main__":
    main()
