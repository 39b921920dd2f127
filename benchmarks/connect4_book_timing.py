"""How long the Connect 4 referee takes to answer a position, per number of stones, with the opening book.

For each ply 0..12: the empty board (ply 0) or random positions after that many random moves with the game on
and no immediate win (``connect4_positions.random_positions``, the same positions on every machine).  Two
questions per position, each from an empty transposition table: ``solve`` (value, optimal moves, score) and
``move_scores`` (the exact score of every move).

* warm process: one process that has loaded the kernels and the book; the table is cleared before each call;
* cold process (``--cold N``): N fresh processes per ply, each timing its first ``solve`` (loading the book
  and the compiled kernels from numba's cache included; the imports themselves are reported apart).

    .venv/bin/python benchmarks/connect4_book_timing.py               # 20 positions per ply, 3 cold processes
    .venv/bin/python benchmarks/connect4_book_timing.py --no-book     # the same without the book
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from connect4_positions import random_positions

_COLD_CHILD = """
import json, time
t0 = time.perf_counter()
from boardrl.games import make_game
from boardrl.games.connect4 import Connect4State
from boardrl.solvers.connect4 import Connect4Referee
ref = Connect4Referee(make_game("connect4"), book={book})
state = Connect4State({cur}, {mask}, {plies})
t1 = time.perf_counter()
ref.solve(state)
t2 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "first_solve_s": t2 - t1}}))
"""


def positions(plies: int, n: int, seed: int) -> list:
    from boardrl.games.connect4 import Connect4State

    return [Connect4State(0, 0, 0)] if plies == 0 else random_positions(n, plies, seed)


def warm(plies_range: range, n: int, seed: int, book: bool) -> list[dict]:
    from boardrl.games import make_game
    from boardrl.solvers.connect4 import Connect4Referee

    game = make_game("connect4")
    ref = Connect4Referee(game, book=book)
    ref.solve(game.replay("44"))  # load the kernels (and the book) before timing
    rows = []
    for plies in plies_range:
        solve_t, scores_t = [], []
        for state in positions(plies, n, seed):
            ref.clear()
            t = time.perf_counter()
            ref.solve(state)
            solve_t.append(time.perf_counter() - t)
            ref.clear()
            t = time.perf_counter()
            ref.move_scores(state)
            scores_t.append(time.perf_counter() - t)
        rows.append({"plies": plies, "n": len(solve_t), "solve_median_s": statistics.median(solve_t),
                     "solve_max_s": max(solve_t), "move_scores_median_s": statistics.median(scores_t),
                     "move_scores_max_s": max(scores_t)})
        r = rows[-1]
        print(f"{plies:4d} {r['n']:4d}   solve median {r['solve_median_s']:7.3f} s  max {r['solve_max_s']:7.3f} s"
              f"   move_scores median {r['move_scores_median_s']:7.3f} s  max {r['move_scores_max_s']:7.3f} s",
              flush=True)
    return rows


def cold(plies_range: range, n: int, seed: int, book: bool) -> list[dict]:
    rows = []
    for plies in plies_range:
        firsts, imports = [], []
        for state in positions(plies, n, seed):
            code = _COLD_CHILD.format(book=book, cur=int(state.current), mask=int(state.mask),
                                      plies=int(state.plies))
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            data = json.loads(out.stdout.strip().splitlines()[-1])
            firsts.append(data["first_solve_s"])
            imports.append(data["import_s"])
        rows.append({"plies": plies, "n": len(firsts), "first_solve_median_s": statistics.median(firsts),
                     "first_solve_max_s": max(firsts), "import_median_s": statistics.median(imports)})
        r = rows[-1]
        print(f"{plies:4d} {r['n']:4d}   first solve median {r['first_solve_median_s']:7.3f} s  max "
              f"{r['first_solve_max_s']:7.3f} s   (imports {r['import_median_s']:.2f} s)", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-ply", type=int, default=20, help="random positions per ply (warm process)")
    ap.add_argument("--max-ply", type=int, default=12)
    ap.add_argument("--min-ply", type=int, default=0)
    ap.add_argument("--cold", type=int, default=3, help="fresh processes per ply (0: skip)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-book", action="store_true", help="search every position (the referee before the book)")
    ap.add_argument("--json", type=Path, help="also write the rows to this file")
    args = ap.parse_args()
    book = not args.no_book
    if book:
        from boardrl.solvers.connect4_book import default_book

        b = default_book()
        print(f"book: {'none' if b is None else f'{b.path.name}, {len(b):,} entries, D = {b.plies}'}")
    plies_range = range(args.min_ply, args.max_ply + 1)
    print("warm process (cleared table per call): ply, positions, seconds")
    rows = {"warm": warm(plies_range, args.per_ply, args.seed, book)}
    if args.cold:
        print("cold process (first solve in a fresh process): ply, positions, seconds")
        rows["cold"] = cold(plies_range, args.cold, args.seed, book)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
