"""DVC stage `train@<i>` (matrix over params `experiments`): train one learner on one game.

    python pipeline/train.py --game tictactoe --agent tabular_q

Writes models/<game>/<agent>/model/ (the saved agent), results/train/<game>-<agent>/curve.tsv (W/D/L per seat
against params `train.opponents.<game>` at log-spaced training-game counts) and summary.json (provenance).
Checkpoints go to models/<game>/<agent>/checkpoint/ (a persistent DVC output), so a killed run resumes there.
One MLflow run per execution: params, curve metrics with step = games played, the curve figure, the model.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from boardrl.config import Params, eval_points, experiment_stage_args, run_experiment_stage, train_slice  # noqa: E402
from boardrl.errors import BoardRLError  # noqa: E402
from boardrl.tracking import curve as curves  # noqa: E402
from boardrl.atomic_io import atomic_directory, atomic_write_json, remove_stale_temporaries  # noqa: E402
from boardrl.tracking.provenance import collect, params_hash  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return experiment_stage_args(argv, __doc__.splitlines()[0], ROOT / "params.yaml")


def paths(game: str, agent: str) -> dict[str, Path]:
    model_root = ROOT / "models" / game / agent
    results = ROOT / "results" / "train" / f"{game}-{agent}"
    return {"model_root": model_root, "model": model_root / "model", "checkpoint": model_root / "checkpoint",
            "results": results, "curve": results / "curve.tsv", "summary": results / "summary.json"}


class CurveEvaluator:
    """The learner's ``on_eval``: plays the frozen agent against each benchmark opponent and records rows."""

    def __init__(self, game, opponents: list[tuple[str, Any, int]], seed: int, processes: int,
                 progress: curves.CurveProgress) -> None:
        self.game, self.opponents, self.seed, self.processes = game, opponents, seed, processes
        self.progress = progress

    def __call__(self, step: int, agent) -> None:
        from boardrl.evaluate.match import play_match
        from boardrl.tracking.mlflow_runs import log_metrics, metric_key

        rows: list[list[Any]] = []
        metrics: dict[str, float | None] = {}
        for i, (key, opponent, games) in enumerate(self.opponents):
            result = play_match(self.game, agent, opponent, games, seats="alternate",
                                seed=curves.sub_seed(self.seed, 1, step, i), processes=self.processes)
            d = result.to_dict()
            rows += curves.seat_rows(step, key, d)
            for seat in curves.SEATS:
                for out in ("win", "draw", "loss"):
                    metrics[metric_key("curve", key, seat, out)] = d[seat][out]
        self.progress.record(step, rows)
        log_metrics(metrics, step=step)
        combined = " ".join(f"{r[1]} W{r[3]:.3f}/D{r[4]:.3f}/L{r[5]:.3f}" for r in rows if r[2] == "combined")
        print(f"train: {step} games: {combined}", file=sys.stderr, flush=True)


def run(params: Params, game_id: str, agent_name: str) -> dict[str, Any]:
    """Train, evaluate along the way, write the outputs; returns the summary."""
    import mlflow

    from boardrl.agents import make_agent
    from boardrl.games import make_game
    from boardrl.learn import make_learner
    from boardrl.tracking.mlflow_runs import stage_run

    t0 = time.perf_counter()
    p = paths(game_id, agent_name)
    game = make_game(game_id)
    learner_params = params.learner_params(game_id, agent_name)
    points = eval_points(learner_params.games, params.train.curve)
    opponents = [(o.key, make_agent(game, o.agent), o.games or params.train.eval_games)
                 for o in params.train.opponents[game_id]]
    sl = train_slice(params, game_id, agent_name)
    phash = params_hash(sl)
    progress = curves.CurveProgress(p["checkpoint"], phash)
    if not progress.load() and p["checkpoint"].exists():
        shutil.rmtree(p["checkpoint"])  # another run's checkpoint: its curve rows are gone, so train afresh
    for d in (p["model_root"], p["results"]):
        remove_stale_temporaries(d)
    with stage_run(ROOT, stage="train", experiment=game_id, game=game_id, agent=agent_name,
                   params=sl, params_hash=phash, seed=params.seed) as active:
        mlflow.set_tag("resumed", str(progress.resumed).lower())
        evaluator = CurveEvaluator(game, opponents, params.seed, params.train.processes, progress)
        agent = make_learner(agent_name).train(game, learner_params, seed=params.seed,
                                               checkpoint_dir=p["checkpoint"], eval_points=points,
                                               on_eval=evaluator)
        with atomic_directory(p["model"]) as tmp:
            agent.save(tmp)
        rows = progress.rows()
        missing = sorted(set(points) - set(progress.steps()))
        if missing:
            raise BoardRLError(f"learning curve incomplete: no evaluation at {missing} training games")
        curves.write_tsv(p["curve"], rows)
        from boardrl.tracking.figures import curve_figure

        mlflow.log_figure(curve_figure(rows, f"{agent_name} on {game_id}: learning curve"), "curve.png")
        mlflow.log_artifacts(str(p["model"]), artifact_path="model")
        mlflow.log_artifact(str(p["curve"]))
        prov = collect(ROOT, game=game_id, agent=agent_name, seed=params.seed, params_slice=sl,
                       seconds=time.perf_counter() - t0, mlflow_run_id=active.info.run_id,
                       games_trained=learner_params.games)
        summary = prov.to_dict()
        atomic_write_json(p["summary"], summary)
        mlflow.log_artifact(str(p["summary"]))
        mlflow.log_metric("seconds", summary["seconds"])
    return summary


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    summary = run_experiment_stage(args.params, args.game, args.agent, run)
    print(f"train: {args.game}/{args.agent}: {summary['games_trained']} games in {summary['seconds']:.1f} s, "
          f"mlflow run {summary['mlflow_run_id']}", file=sys.stderr)


if __name__ == "__main__":
    main()
