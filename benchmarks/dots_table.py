"""Speed of the ``dots_table`` learner (seed 001's edge-set Q-table): self-play games of 3x3 Dots and Boxes.

Target (the issue): 10,000 self-play games of 3x3 in <= 30 s on this machine, median of 3 runs.  Each run
trains a fresh learner (a fresh, untouched table, so first-touch page faults are included) after a warm-up
that loads the numba kernels from the cache.  Printed as JSON: seconds per run, the median, games/s, the
resident memory of the process with the trained table alive, and the entries written.

    .venv/bin/python benchmarks/dots_table.py [--games 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from boardrl.games import make_game
from boardrl.learn import make_learner

TARGET_S = 30.0
CONFIGS = {
    "seed001": {},  # the learner's defaults: seed 001's reward, gamma 0.6, epsilon 0.05
    "margin_symmetry_transfer": {"reward": "margin", "gamma": 1.0, "alpha": 1.0, "symmetry": True,
                                 "exploration": {"schedule": "constant", "start": 0.2}},
}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def train(game, params: dict, ckpt: Path):
    learner = make_learner("dots_table")
    t = time.perf_counter()
    agent = learner.train(game, {**params, "checkpoint_every": 10**9}, seed=0, checkpoint_dir=ckpt,
                          eval_points=[])
    seconds = time.perf_counter() - t
    return seconds, rss_mb(), agent.entries, learner


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    g2, g3 = make_game("dots_and_boxes_2x2"), make_game("dots_and_boxes_3x3")
    out: dict = {"python": sys.version.split()[0], "machine": platform.machine(), "games": args.games,
                 "target_s": TARGET_S, "configs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        # the transfer source: a margin 2x2 table (100,000 games, about a second)
        agent2 = make_learner("dots_table").train(g2, {**CONFIGS["margin_symmetry_transfer"], "games": 100_000,
                                                       "symmetry": False}, seed=0,
                                                  checkpoint_dir=tmp_path / "c2", eval_points=[])
        agent2.save(tmp_path / "src")
        CONFIGS["margin_symmetry_transfer"]["transfer_from"] = str(tmp_path / "src")
        for name, params in CONFIGS.items():
            train(g3, {**params, "games": 100}, tmp_path / "warm")  # numba cache, transfer load
            runs = []
            for _ in range(args.runs):
                base = rss_mb()
                seconds, rss, entries, learner = train(g3, {**params, "games": args.games}, tmp_path / "ck")
                runs.append({"seconds": round(seconds, 3), "rss_mb": round(rss, 1),
                             "rss_table_mb": round(rss - base, 1), "entries": entries})
                del learner
            median = statistics.median(r["seconds"] for r in runs)
            out["configs"][name] = {"runs": runs, "median_s": round(median, 3),
                                    "games_per_s": round(args.games / median), "meets_target": median <= TARGET_S}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
