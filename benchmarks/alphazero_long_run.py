"""A long AlphaZero run outside the pipeline, resumable across sessions, with its snapshots judged as it goes.

The README figures of the Connect 4 full-profile run came from this code before it was a script (the same calls,
judged every 8,192 games with 10 games a seat).

``train``: the experiment's learner with a profile's params (``full`` for the hours-long budgets), checkpointing
into ``--work`` so a killed run resumes where it stopped; every ``--every`` units a snapshot is saved under
``<work>/agents/<units>`` and plays ``--opponent`` (10 games a seat by default), one JSON line per point in
``<work>/curve.jsonl``; a finished run clears its checkpoint, so calling it again starts afresh.  ``judge``: a
saved snapshot on the pipeline's own optimal-move positions (verdicts from a project that ran the ``referee``
stage, ``--project``) and in matches, the figures README quotes.

    .venv/bin/python benchmarks/alphazero_long_run.py train connect4_alphazero --profile full --work cache/c4run
    .venv/bin/python benchmarks/alphazero_long_run.py judge cache/c4run/agents/57344 --games 100 --project .
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from boardrl.agents import make_agent
from boardrl.config import parse_params
from boardrl.evaluate.match import play_match
from boardrl.experiments.evaluate import optimal_by_phase, optimal_moves
from boardrl.experiments.profiles import effective_params
from boardrl.games import make_game
from boardrl.learn import make_learner

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OPPONENTS = ["maxmin", "mcts:simulations=1000", "tactical"]


def seats(result) -> dict:
    """Win / draw / loss percentages of each seat."""
    return {s: [round(getattr(result, s).to_dict()[k] * 100, 1) for k in ("win", "draw", "loss")]
            for s in ("as_first", "as_second")}


def train(args: argparse.Namespace) -> None:
    params = parse_params(effective_params(ROOT, args.profile), args.experiment)
    exp = params.experiment(args.experiment)
    exp.params["threads"] = args.threads
    game = make_game(exp.game)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    learner = make_learner(exp.learner)
    total = learner.budget(learner.check_params(params.learner_params(args.experiment)))
    points = list(range(args.every, total + 1, args.every))

    def on_eval(done: int, agent) -> dict:
        t = time.perf_counter()
        agent.save(work / "agents" / str(done))
        out = {"units": done, **{spec: seats(play_match(game, agent, make_agent(game, spec), args.games, seed=7))
                                 for spec in args.opponent}}
        out["judge_s"] = round(time.perf_counter() - t, 1)
        with open(work / "curve.jsonl", "a") as fh:
            fh.write(json.dumps(out) + "\n")
        return out

    agent = learner.train(game, params.learner_params(args.experiment), seed=args.seed,
                          checkpoint_dir=work / "checkpoint", eval_points=points, on_eval=on_eval, progress=True)
    agent.save(work / "agents" / "final")
    print(json.dumps({"finished": True, "seconds": agent.stats.get("seconds")}))


def judge(args: argparse.Namespace) -> None:
    game = make_game(json.loads((Path(args.model) / "agent.json").read_text())["game"])
    agent = make_agent(game, f"model:{args.model}")
    project = Path(args.project).resolve()
    params = parse_params(effective_params(project, "default"))
    out: dict = {"model": args.model}
    for label, who in (("search", agent), ("network_alone", getattr(agent, "network_agent", lambda: None)())):
        if who is None:
            continue
        rate = optimal_moves(params, game, who, root=project)
        phases = optimal_by_phase(params, game, who, root=project) or {}
        out[label] = {"optimal_move": rate, "by_phase": {k: v["rate"] for k, v in phases.items()}}
    for spec in args.opponent:
        out[spec] = seats(play_match(game, agent, make_agent(game, spec), args.games, seed=7))
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("experiment")
    t.add_argument("--profile", default="full")
    t.add_argument("--work", required=True, help="folder for the checkpoint, snapshots and curve (resumes there)")
    t.add_argument("--every", type=int, default=8192, help="units between judged snapshots")
    t.add_argument("--games", type=int, default=20, help="games per opponent at each point, half a seat")
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--opponent", action="append", default=None)
    j = sub.add_parser("judge")
    j.add_argument("model", help="a saved snapshot folder (holding agent.json)")
    j.add_argument("--games", type=int, default=100)
    j.add_argument("--project", default=str(ROOT), help="a checkout that ran the referee stage (its verdicts)")
    j.add_argument("--opponent", action="append", default=None)
    args = ap.parse_args()
    args.opponent = args.opponent or DEFAULT_OPPONENTS
    train(args) if args.command == "train" else judge(args)


if __name__ == "__main__":
    main()
