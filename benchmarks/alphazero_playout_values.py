"""Play a trained AlphaZero model with playout values mixed into its search (``rollout_weight``), against named
opponents in both seats: the figures of README "AlphaZero" on Conniption's second seat.

The model comes from ``models/<experiment>/seed-<K>/model`` of a finished ``make repro``; every combination of
``--simulations`` and ``--rollout-weight`` plays ``--games`` games (half in each seat) against each ``--opponent``:

    .venv/bin/python benchmarks/alphazero_playout_values.py conniption_alphazero --simulations 100,400,1600 \\
        --rollout-weight 0,1 --rollouts 4 --opponent sols --opponent cells --opponent hybrid --opponent flip

Prints one JSON line per setting and opponent: wins as first and as second (%), and the seconds it took.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from boardrl.agents import make_agent
from boardrl.agents.alphazero import AlphaZeroAgent
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.learn import load_agent

ROOT = Path(__file__).resolve().parents[1]


def numbers(text: str, kind: type) -> list:
    """A comma-separated list of ``kind``."""
    return [kind(x) for x in text.split(",") if x]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiment", help="an AlphaZero experiment id with a trained model under models/")
    ap.add_argument("--seed", type=int, default=0, help="which training seed's model")
    ap.add_argument("--simulations", default="100", help="comma-separated simulations per move")
    ap.add_argument("--rollout-weight", default="0,1", help="comma-separated playout shares of the leaf value")
    ap.add_argument("--rollouts", type=int, default=4, help="random playouts per leaf")
    ap.add_argument("--opponent", action="append", required=True, help="agent spec; repeat for several")
    ap.add_argument("--games", type=int, default=20, help="games per opponent, half in each seat")
    ap.add_argument("--match-seed", type=int, default=7)
    args = ap.parse_args()

    model_dir = ROOT / "models" / args.experiment / f"seed-{args.seed}" / "model"
    info = json.loads((model_dir / "agent.json").read_text())
    game = make_game(info["game"])
    trained = load_agent(game, None, model_dir)
    if not isinstance(trained, AlphaZeroAgent):
        raise SystemExit(f"{args.experiment}: not an AlphaZero model (kind {info.get('kind')!r})")
    for simulations in numbers(args.simulations, int):
        for weight in numbers(args.rollout_weight, float):
            agent = trained.with_search(simulations=simulations, rollout_weight=weight, rollouts=args.rollouts)
            for spec in args.opponent:
                t = time.perf_counter()
                r = play_match(game, agent, make_agent(game, spec), args.games, seed=args.match_seed)
                print(json.dumps({"simulations": simulations, "rollout_weight": weight, "rollouts": args.rollouts,
                                  "opponent": spec, "win_first": round(100 * r.as_first.to_dict()["win"], 1),
                                  "win_second": round(100 * r.as_second.to_dict()["win"], 1),
                                  "seconds": round(time.perf_counter() - t, 1)}), flush=True)


if __name__ == "__main__":
    main()
