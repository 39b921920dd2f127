"""DVC stage `evaluate@<i>` (matrix over params `experiments`): judge one trained agent.

    python pipeline/evaluate.py --game tictactoe --agent tabular_q

Plays the agent saved in models/<game>/<agent>/model against the ladder of params `evaluate.opponents.<game>`
(seats alternate; W/D/L per seat and combined with 95% Wilson intervals), measures its optimal-move rate with
the game's referee where one exists, and for Connect 4 agents runs the UCI start-position protocols.
Writes results/metrics/<game>-<agent>.json (the headline numbers, for `dvc metrics show`) and
results/eval/<game>-<agent>.json:

    {"opponents": {"<opp>": {"as_first": {...}, "as_second": {...}, "combined": {...}, "mean_length": x}},
     "optimal_move_rate": r | null, "optimal_move": {"rate", "n", "optimal", "ci"} | null,
     "uci": {"seed000": {...}, "full": {...}} | null, "provenance": {...}}
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from boardrl.config import Params, evaluate_slice, experiment_stage_args, run_experiment_stage  # noqa: E402
from boardrl.errors import BoardRLError  # noqa: E402
from boardrl.tracking.curve import sub_seed  # noqa: E402
from boardrl.atomic_io import atomic_write_json  # noqa: E402
from boardrl.tracking.provenance import collect, params_hash  # noqa: E402
from boardrl.evaluate.stats import SEATS

UCI_TABLE = ROOT / "data" / "processed" / "uci.parquet"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return experiment_stage_args(argv, __doc__.splitlines()[0], ROOT / "params.yaml")


def ladder(params: Params, game, agent) -> dict[str, Any]:
    """Match results against every opponent of ``evaluate.opponents.<game>``, in the listed order."""
    from boardrl.agents import make_agent
    from boardrl.evaluate.match import play_match

    out = {}
    for i, opp in enumerate(params.evaluate.opponents[game.game_id]):
        games = opp.games or params.evaluate.games
        result = play_match(game, agent, make_agent(game, opp.agent), games, seats="alternate",
                            seed=sub_seed(params.seed, 2, i), processes=params.evaluate.processes)
        d = result.to_dict()
        out[opp.key] = {**{seat: d[seat] for seat in SEATS}, "mean_length": d["mean_length"]}
        c = d["combined"]
        print(f"evaluate: vs {opp.key}: {games} games W {c['win']:.3f} D {c['draw']:.3f} L {c['loss']:.3f}",
              file=sys.stderr, flush=True)
    return out


def optimal_moves(params: Params, game, agent) -> dict[str, Any] | None:
    """Optimal-move rate on a seeded set of random-play positions; None without a referee or positions."""
    from boardrl.evaluate.optimal_rate import optimal_move_rate, position_set
    from boardrl.solvers.base import make_referee

    n = params.evaluate.optimal_positions
    if n == 0:
        return None
    try:
        referee = make_referee(game)
    except BoardRLError:
        return None  # no referee for this game: the rate is null in the results
    plies = params.evaluate.optimal_plies.get(game.game_id)
    positions = position_set(game, n, seed=sub_seed(params.seed, 3), plies=plies)
    rate = optimal_move_rate(agent, referee, positions, np.random.default_rng(sub_seed(params.seed, 4)))
    print(f"evaluate: optimal-move rate {rate.rate:.4f} on {rate.n} positions", file=sys.stderr, flush=True)
    return rate.to_dict()


def uci(params: Params, game, agent) -> dict[str, Any] | None:
    """The UCI protocols for Connect 4 agents (None for other games)."""
    if game.game_id != "connect4":
        return None
    from boardrl.agents import make_agent
    from boardrl.data import uci_table
    from boardrl.evaluate import uci_protocols

    positions = uci_table.positions_by_label(uci_table.read_parquet(UCI_TABLE))
    cfg = params.evaluate.uci
    random = make_agent(game, "random")
    out: dict[str, Any] = {"seed000": uci_protocols.seed000_protocol(
        agent, random, positions, cfg.seed000_games, sub_seed(params.seed, 5), params.evaluate.processes)}
    out["full"] = (uci_protocols.full_protocol(agent, random, positions, sub_seed(params.seed, 6),
                                               cfg.full_positions, params.evaluate.processes)
                   if cfg.full else None)
    return out


def metrics_of(results: dict[str, Any]) -> dict[str, float | None]:
    """Flat MLflow metrics of an evaluation result."""
    from boardrl.tracking.mlflow_runs import metric_key

    m: dict[str, float | None] = {}
    for opp, block in results["opponents"].items():
        for seat in SEATS:
            for out in ("win", "draw", "loss"):
                m[metric_key("eval", opp, seat, out)] = block[seat][out]
    m["optimal_move_rate"] = results["optimal_move_rate"]
    for label, s in ((results["uci"] or {}).get("seed000") or {}).items():
        m[metric_key("uci", "seed000", label, "win")] = s["win"]
    for label, block in ((results["uci"] or {}).get("full") or {}).items():
        for seat in SEATS:
            m[metric_key("uci", "full", label, seat, "win")] = block[seat]["win"]
    return m


def headline(results: dict[str, Any], games_trained: int) -> dict[str, Any]:
    """The compact metrics file for `dvc metrics show` / `dvc exp show`: the numbers people compare."""
    out: dict[str, Any] = {"games_trained": games_trained, "optimal_move_rate": results["optimal_move_rate"]}
    for opp, block in results["opponents"].items():
        c = block["combined"]
        out[opp] = {"win": c["win"], "draw": c["draw"], "loss": c["loss"],
                    "loss_as_first": block["as_first"]["loss"], "loss_as_second": block["as_second"]["loss"]}
    if results["uci"] is not None:
        out["uci_seed000_win"] = {label: s["win"] for label, s in results["uci"]["seed000"].items()}
    return out


def run(params: Params, game_id: str, agent_name: str) -> dict[str, Any]:
    import mlflow

    from boardrl.games import make_game
    from boardrl.learn import load_agent
    from boardrl.tracking.mlflow_runs import log_metrics, stage_run

    t0 = time.perf_counter()
    game = make_game(game_id)
    agent = load_agent(game, agent_name, ROOT / "models" / game_id / agent_name / "model")
    trained = params.learner_params(game_id, agent_name).games
    sl = evaluate_slice(params, game_id, agent_name)
    phash = params_hash(sl)
    out_path = ROOT / "results" / "eval" / f"{game_id}-{agent_name}.json"
    with stage_run(ROOT, stage="evaluate", experiment=game_id, game=game_id, agent=agent_name,
                   params=sl, params_hash=phash, seed=params.seed) as active:
        results: dict[str, Any] = {"opponents": ladder(params, game, agent)}
        detail = optimal_moves(params, game, agent)
        results["optimal_move_rate"] = None if detail is None else detail["rate"]
        results["optimal_move"] = detail
        results["uci"] = uci(params, game, agent)
        log_metrics(metrics_of(results), step=trained)
        from boardrl.tracking.figures import ladder_figure

        mlflow.log_figure(ladder_figure(results["opponents"], f"{agent_name} on {game_id}: W/D/L per seat"),
                          "ladder.png")
        prov = collect(ROOT, game=game_id, agent=agent_name, seed=params.seed, params_slice=sl,
                       seconds=time.perf_counter() - t0, mlflow_run_id=active.info.run_id, games_trained=trained)
        results["provenance"] = prov.to_dict()
        atomic_write_json(out_path, results)
        atomic_write_json(ROOT / "results" / "metrics" / f"{game_id}-{agent_name}.json", headline(results, trained))
        mlflow.log_artifact(str(out_path))
    return results


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    results = run_experiment_stage(args.params, args.game, args.agent, run)
    prov = results["provenance"]
    print(f"evaluate: {args.game}/{args.agent} in {prov['seconds']:.1f} s, mlflow run {prov['mlflow_run_id']}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
