"""A/B: the rollout ``mcts`` agent of today against the one at a reference commit, same positions, same process.

    python benchmarks/mcts_ab.py [--ref 4d2d40b] [--repeats 7]

Why: issue 10 asks that the tree taking any number of actions leaves the rollout agent no slower.  The reference
module (``src/boardrl/agents/mcts.py`` at ``--ref``, read with ``git show``) is loaded under another name beside
today's, so both run on one machine in one process; repeats alternate A and B so a busy neighbour hits both.
Prints the median simulations per second of each and their ratio (today / reference) per game.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import MCTS_GAMES, mcts_positions  # noqa: E402


def reference_module(ref: str):
    """Today's ``boardrl.agents.mcts`` as it was at ``ref``, imported as ``mcts_reference``."""
    source = subprocess.run(["git", "show", f"{ref}:src/boardrl/agents/mcts.py"], cwd=HERE, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="mcts_ref_")) / "mcts_reference.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("mcts_reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["mcts_reference"] = module
    spec.loader.exec_module(module)
    return module


def sims_per_s(agent, positions, seed: int) -> float:
    rng = np.random.default_rng(seed)
    t = time.perf_counter()
    for state in positions:
        agent.act(state, rng)
    return agent.simulations * len(positions) / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="4d2d40b", help="the reference commit (default: the last one before the change)")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    from boardrl.agents.mcts import MCTSAgent
    from boardrl.games import make_game

    old = reference_module(args.ref)
    for game_id in MCTS_GAMES:
        game = make_game(game_id)
        positions = mcts_positions(game_id, 20, seed=0)
        a, b = MCTSAgent(game, simulations=1000), old.MCTSAgent(game, simulations=1000)
        for agent in (a, b):
            agent.act(positions[0], np.random.default_rng(0))  # compile or load from cache
        new_rates, old_rates = [], []
        for r in range(args.repeats):
            new_rates.append(sims_per_s(a, positions, r))
            old_rates.append(sims_per_s(b, positions, r))
        n, o = statistics.median(new_rates), statistics.median(old_rates)
        print(f"{game_id}: today {n:,.0f} sims/s, {args.ref} {o:,.0f} sims/s, ratio {n / o:.3f} "
              f"(medians of {args.repeats})")


if __name__ == "__main__":
    main()
