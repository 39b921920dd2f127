"""Train one experiment's learner outside the pipeline, with overrides, and play the result: the figures that
README quotes as "outside the pipeline" (budgets too long for the default run, settings tried before choosing).

The experiment's params come from params.yaml (optionally under a profile's overlay), then ``--set`` overrides
them; the learner trains from scratch in a temporary folder (no MLflow, no DVC outputs) and the agent plays
every ``--opponent`` in both seats, or seed 000's UCI protocol with ``--uci`` (agent first against random from
uniformly drawn positions of each label class).  Checkpoint segments (``checkpoint_every``) end vector steps
early, so the same budget in one segment (``--set '{"checkpoint_every": 10000000}'``) is another trajectory.

    .venv/bin/python benchmarks/train_and_play.py dots_and_boxes_3x3_dqn --set '{"train_every": 4}' \\
        --threads 1 --seed 2 --opponent random --opponent moderate --opponent advanced --games 1000
    .venv/bin/python benchmarks/train_and_play.py connect4_seed000_dqn_uci --set '{"steps": 3000000}' --uci 1000
    .venv/bin/python benchmarks/train_and_play.py connect4 --ceiling mcts:simulations=1000 --uci 300

``--ceiling SPEC`` skips training: the built-in agent SPEC plays the protocol instead (what a strong player
reaches against random; the first argument is then a game id).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from boardrl.agents import make_agent
from boardrl.config import parse_params
from boardrl.evaluate.match import play_match
from boardrl.experiments.evaluate import UCI_TABLE
from boardrl.experiments.profiles import effective_params
from boardrl.games import make_game
from boardrl.learn import make_learner

ROOT = Path(__file__).resolve().parents[1]


def trained_agent(exp_id: str, overrides: dict, profile: str, seed: int, threads: int | None):
    """The experiment's learner trained with ``overrides`` on top of its (profile's) params; (game, agent, s)."""
    params = parse_params(effective_params(ROOT, profile), exp_id)
    exp = params.experiment(exp_id)
    exp.params.update(overrides)
    if threads is not None:
        exp.params["threads"] = threads
    if exp.params.get("starts") == "uci":
        exp.params.setdefault("uci_path", str(ROOT / UCI_TABLE))
    game = make_game(exp.game)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        agent = make_learner(exp.learner).train(game, params.learner_params(exp_id), seed=seed,
                                                checkpoint_dir=Path(tmp), eval_points=[], on_eval=None,
                                                progress=True)
    return game, agent, time.perf_counter() - start


def seed000_protocol(game, agent, games: int, seed: int) -> dict:
    from boardrl.data import uci_table
    from boardrl.evaluate import uci_protocols

    positions = uci_table.positions_by_label(uci_table.read_parquet(ROOT / UCI_TABLE))
    out = uci_protocols.seed000_protocol(agent, make_agent(game, "random"), positions, games, seed)
    return {label: {k: round(v[k] * 100, 1) for k in ("win", "draw", "loss")} for label, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiment", help="experiment id (params.yaml), or a game id with --ceiling")
    ap.add_argument("--set", default="{}", help="JSON object of learner params to override")
    ap.add_argument("--profile", default="default", help="params overlay: default, tiny, full")
    ap.add_argument("--seed", type=int, default=0, help="training seed")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: the experiment's)")
    ap.add_argument("--opponent", action="append", default=[], help="agent spec; repeat for several")
    ap.add_argument("--games", type=int, default=1000, help="games per opponent, half in each seat")
    ap.add_argument("--uci", type=int, default=0, help="seed 000's protocol with this many games per label")
    ap.add_argument("--ceiling", default=None, help="play this built-in agent instead of training")
    ap.add_argument("--match-seed", type=int, default=7, help="seed of the matches against --opponent")
    ap.add_argument("--uci-seed", type=int, default=5, help="seed of the UCI protocol's positions and games")
    ap.add_argument("--save", type=Path, default=None, help="save the trained agent in this folder (for "
                    "model:<folder>)")
    args = ap.parse_args()

    if args.ceiling:
        game, seconds = make_game(args.experiment), 0.0
        agent = make_agent(game, args.ceiling)
    else:
        game, agent, seconds = trained_agent(args.experiment, json.loads(args.set), args.profile, args.seed,
                                             args.threads)
        if args.save is not None:
            agent.save(args.save)
    report: dict = {"experiment": args.experiment, "set": json.loads(args.set), "profile": args.profile,
                    "seed": args.seed, "ceiling": args.ceiling, "train_s": round(seconds, 1)}
    if args.uci:
        report["seed000"] = seed000_protocol(game, agent, args.uci, args.uci_seed)
    for spec in args.opponent:
        r = play_match(game, agent, make_agent(game, spec), args.games, seed=args.match_seed)
        report[spec] = {seat: {k: round(getattr(r, seat).to_dict()[k] * 100, 1) for k in ("win", "draw", "loss")}
                        for seat in ("as_first", "as_second", "combined")}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
