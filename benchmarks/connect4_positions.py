"""The Connect 4 solver's benchmark positions, and the one-off slow checks of the solver.

``random_positions(n, plies, seed)`` plays uniformly random legal moves from the empty board and keeps a
position when the game is still on after ``plies`` moves and the side to move has no immediate win (such
positions are settled without search, so they would flatter the timings).  The same ``(n, plies, seed)``
gives the same positions on every machine: the only randomness is one ``numpy`` Generator.

Run as a script for the figures quoted in the README (one process, one core):

    .venv/bin/python benchmarks/connect4_positions.py            # nodes/s, median ms at 20 plies
    .venv/bin/python benchmarks/connect4_positions.py --opening  # + empty board, first moves (~20 min here)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from boardrl.games.connect4 import Connect4State
from boardrl.solvers.connect4 import Connect4Solver, can_win_now, has_four, move_bit, position_from_columns


def random_positions(n: int, plies: int, seed: int) -> list[Connect4State]:
    """``n`` positions after ``plies`` random moves with the game on and no immediate win for the mover."""
    if n < 0 or not 0 <= plies <= 41:
        raise ValueError(f"random_positions: need n >= 0 and 0 <= plies <= 41, got n={n}, plies={plies}")
    rng = np.random.default_rng(seed)
    out: list[Connect4State] = []
    while len(out) < n:
        cur = mask = 0
        alive = True
        for _ in range(plies):
            cols = [c for c in range(7) if move_bit(mask, c)]
            mv = int(move_bit(mask, cols[int(rng.integers(len(cols)))]))
            if has_four(cur | mv):  # the game ended before reaching `plies`
                alive = False
                break
            cur, mask = cur ^ mask, mask | mv
        if alive and not can_win_now(cur, mask):
            out.append(Connect4State(cur, mask, plies))
    return out


def measure(n: int = 200, plies: int = 20, seed: int = 0, tt_log2: int = 23) -> dict[str, float]:
    """Median and mean milliseconds and nodes/s of exact scores, each from a cleared transposition table."""
    solver = Connect4Solver(tt_log2=tt_log2, book=False)
    positions = random_positions(n, plies, seed)
    solver.score(*positions[0])  # warm-up: numba cache load
    times, nodes = [], 0
    for p in positions:
        solver.clear()
        solver.reset_nodes()
        t = time.perf_counter()
        solver.score(*p)
        times.append(time.perf_counter() - t)
        nodes += solver.nodes
    return {
        "positions": n,
        "plies": plies,
        "median_ms": 1e3 * statistics.median(times),
        "mean_ms": 1e3 * statistics.fmean(times),
        "max_ms": 1e3 * max(times),
        "nodes_per_s": nodes / sum(times),
        "mean_nodes": nodes / n,
    }


def opening(tt_log2: int = 24) -> None:
    """Exact score of the empty board, then the value of each first move (known: only the centre wins).

    The search alone (``book=False``): with the opening book these would be lookups."""
    solver = Connect4Solver(tt_log2=tt_log2, book=False)
    t = time.perf_counter()
    print(f"empty board: score {solver.score(0, 0, 0)}  nodes {solver.nodes:,}  {time.perf_counter() - t:.0f} s")
    for col in range(4):  # columns 5-7 mirror 3-1
        solver.reset_nodes()
        t = time.perf_counter()
        v = -solver.value(*position_from_columns([col]))
        print(f"first move {col + 1}: value {v:+d} for the first player  nodes {solver.nodes:,}  "
              f"{time.perf_counter() - t:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="Connect 4 solver timings")
    parser.add_argument("--opening", action="store_true", help="also solve the empty board (slow)")
    args = parser.parse_args()
    for plies in (20, 12):
        r = measure(200 if plies == 20 else 30, plies)
        print(f"{r['positions']} positions at {plies} plies: median {r['median_ms']:.2f} ms, mean "
              f"{r['mean_ms']:.2f} ms, max {r['max_ms']:.1f} ms, {r['nodes_per_s'] / 1e6:.1f} M nodes/s, "
              f"{r['mean_nodes']:,.0f} nodes per position")
    if args.opening:
        opening()


if __name__ == "__main__":
    main()
