"""A small synthetic results/ tree in the layout the train and evaluate stages write (experiment id, seeds).

Experiments (sorted as the report sorts them: game, learner, id):

- ``connect4_tabular_q``: evaluated only (one seed), with UCI results.
- ``dots_and_boxes_2x2_tabular_q``: trained only (one seed), not evaluated.
- ``tictactoe_tabular_q``: three seeds, trained and evaluated, with the across-seeds IQM and interval.
- ``tictactoe_tabular_q_slow``: the same game and learner as the one above, one seed.

Optionally (``make_results(..., sweep=True)``) the Optuna sweep ``SWEEP`` over ``tictactoe_tabular_q``: three
trials (one pruned), best trial 2, figures history and importances (and parallel coordinates, which the report
does not show).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SEATS = ("as_first", "as_second", "combined")
OUTCOMES = ("win", "draw", "loss")
METHOD = "interquartile mean, percentile bootstrap over seeds"
TTT = "tictactoe_tabular_q"
SLOW = "tictactoe_tabular_q_slow"
DAB = "dots_and_boxes_2x2_tabular_q"
C4 = "connect4_tabular_q"
TTT_WINS = {0: 0.9876, 1: 0.97, 2: 0.99}  # win rate vs random of each seed of TTT
SWEEP = "ttt_sweep"
BASELINE = "tictactoe_random_baseline"
#: The experiment's full learner params (what the sweep stage writes as ``experiment_params``).
SWEEP_EXPERIMENT_PARAMS = {"alpha": 0.1, "gamma": 1.0, "games": 200000,
                           "exploration": {"schedule": "linear", "start": 1.0, "end": 0.05}}
#: The best trial's values (nested, as best_params.yaml holds them).
SWEEP_BEST = {"alpha": 0.4213, "exploration": {"end": 0.1, "schedule": "exponential"}}
SWEEP_FIGURES = ("history.png", "importances.png", "parallel_coordinates.png")


def run_id(stage: str, exp_id: str, seed: int) -> str:
    """A distinct 32-hex-digit MLflow run id per (stage, experiment, seed)."""
    return hashlib.md5(f"{stage}/{exp_id}/{seed}".encode()).hexdigest()


def provenance(stage: str, exp_id: str, game: str, seed: int, *, budget: int = 200000,
               profile: str = "default") -> dict[str, Any]:
    return {"experiment": exp_id, "game": game, "learner": "tabular_q", "seed": seed, "profile": profile,
            "unit": "games", "budget": budget, "seconds": 12.5, "mlflow_run_id": run_id(stage, exp_id, seed),
            "git_commit": COMMIT, "params_hash": "feedbeef" * 8, "dvc_exp_name": "exp-x"}


def seat(win: float, draw: float, loss: float, games: int) -> dict[str, Any]:
    return {"win": win, "draw": draw, "loss": loss, "games": games, "win_ci": [win - 0.01, min(1.0, win + 0.01)],
            "draw_ci": [max(0.0, draw - 0.01), draw + 0.01], "loss_ci": [max(0.0, loss - 0.01), loss + 0.01]}


def spread(values: list[float], iqm: float | None = None, ci: list[float] | None = None) -> dict[str, Any]:
    """An across-seeds statistic; with one value the IQM is the value and the interval collapses onto it."""
    iqm = values[0] if iqm is None else iqm
    return {"iqm": iqm, "ci": ci or [min(values), max(values)], "values": values, "confidence": 0.95,
            "method": METHOD}


def curve_rows(opponents: list[str], shift: float = 0.0) -> str:
    rows = ["step\topponent\tseat\twin\tdraw\tloss\tgames"]
    for step, w in ((0, 0.3), (100, 0.5), (1000, 0.8), (10000, 0.95), (200000, 0.9876)):
        for opp in opponents:
            for s in SEATS:
                win = round(max(0.0, w - shift), 6)
                rows.append(f"{step}\t{opp}\t{s}\t{win}\t{round(1 - win, 6)}\t0.0\t1000")
    return "\n".join(rows) + "\n"


def write_train(r: Path, exp_id: str, game: str, seed: int, opponents: list[str], **kw: Any) -> Path:
    d = r / "train" / exp_id / f"seed-{seed}"
    d.mkdir(parents=True)
    curves = r / "curves" / exp_id
    curves.mkdir(parents=True, exist_ok=True)
    (curves / f"seed-{seed}.tsv").write_text(curve_rows(opponents, shift=0.04 * seed))
    (d / "summary.json").write_text(json.dumps(provenance("train", exp_id, game, seed, **kw)))
    return d


def ttt_seed(exp_id: str, seed: int, win: float, **kw: Any) -> dict[str, Any]:
    rate = round(1.0 - 0.01 * seed, 6)
    return {
        "opponents": {"random": {**{s: seat(win, round(1 - win, 6), 0.0, 10000) for s in SEATS}, "mean_length": 6.1},
                      "perfect": {s: seat(0.0, 1.0, 0.0, 1000) for s in SEATS}},
        "optimal_move_rate": rate,
        "optimal_move": {"rate": rate, "n": 2000, "optimal": 2000 - 20 * seed,
                         "ci": [round(rate - 0.002, 6), min(1.0, round(rate + 0.002, 6))]},
        "uci": None, "provenance": provenance("eval", exp_id, "tictactoe", seed, **kw),
    }


def ttt_eval(exp_id: str, seeds: dict[int, float], **kw: Any) -> dict[str, Any]:
    """The eval file of a tic-tac-toe experiment whose seed k wins ``seeds[k]`` against random."""
    blocks = {k: ttt_seed(exp_id, k, w, **kw) for k, w in seeds.items()}
    wins = list(seeds.values())
    many = len(wins) > 1
    opt = [b["optimal_move_rate"] for b in blocks.values()]
    across = {
        "seeds": list(seeds),
        "opponents": {
            "random": {"win": spread(wins, 0.9859 if many else None, [0.97, 0.99] if many else None),
                       "draw": spread([round(1 - w, 6) for w in wins]), "loss": spread([0.0] * len(wins))},
            "perfect": {"win": spread([0.0] * len(wins)), "draw": spread([1.0] * len(wins)),
                        "loss": spread([0.0] * len(wins))},
        },
        "optimal_move_rate": spread(opt, 0.99 if many else None, [0.98, 1.0] if many else None),
    }
    return {"experiment": exp_id, "game": "tictactoe", "learner": "tabular_q", "profile": kw.get("profile", "default"),
            "unit": "games", "budget": kw.get("budget", 200000), "seeds": {str(k): b for k, b in blocks.items()},
            "across_seeds": across}


def c4_eval() -> dict[str, Any]:
    labels = ("win", "draw", "loss")
    block = {
        "opponents": {"random": {s: seat(0.75, 0.05, 0.2, 1000) for s in SEATS}},
        "optimal_move_rate": None, "optimal_move": None,
        "uci": {"seed000": {lab: seat(w, 0.05, 0.95 - w, 1000) for lab, w in zip(labels, (0.612, 0.4, 0.2))},
                "full": {lab: {**{s: seat(0.5, 0.1, 0.4, 300) for s in SEATS}, "positions": 300} for lab in labels}},
        "provenance": provenance("eval", C4, "connect4", 0),
    }
    across = {"seeds": [0], "opponents": {"random": {o: spread([v]) for o, v in zip(OUTCOMES, (0.75, 0.05, 0.2))}},
              "optimal_move_rate": None}
    return {"experiment": C4, "game": "connect4", "learner": "tabular_q", "profile": "default", "unit": "games",
            "budget": 200000, "seeds": {"0": block}, "across_seeds": across}


def dab_eval(exp_id: str, win: float) -> dict[str, Any]:
    """The eval file of a 2x2 Dots and Boxes table (one seed) that wins ``win`` of its games against each of seed
    001's players, losing the rest."""
    opponents = ("random", "moderate", "advanced")
    block = {"opponents": {o: {s: seat(win, 0.0, round(1 - win, 6), 1000) for s in SEATS} for o in opponents},
             "optimal_move_rate": None, "optimal_move": None, "uci": None,
             "provenance": provenance("eval", exp_id, "dots_and_boxes_2x2", 0, budget=100)}
    across = {"seeds": [0], "opponents": {o: {k: spread([v]) for k, v in zip(OUTCOMES, (win, 0.0, round(1 - win, 6)))}
                                          for o in opponents}, "optimal_move_rate": None}
    return {"experiment": exp_id, "game": "dots_and_boxes_2x2", "learner": "tabular_q", "profile": "default",
            "unit": "games", "budget": 100, "seeds": {"0": block}, "across_seeds": across}


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def tiny_png(path: Path, level: float = 0.5) -> None:
    """A small PNG figure (a line on white), standing in for the figures Optuna draws."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1.5), dpi=50)
    fig.subplots().plot([0, 1, 2], [0, level, 1])
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})


def sweep_summary(sweep_id: str = SWEEP, experiment: str = TTT, *, with_params: bool = True) -> dict[str, Any]:
    data = {"sweep": sweep_id, "experiment": experiment, "profile": "default", "study": f"{sweep_id}-abcdef012345",
            "finished_trials": 3, "best_trial": 2, "best_score": 0.93125, "budget": 20000, "seeds": [0, 1],
            "mlflow_parent_run_id": run_id("sweep", experiment, 0), "seconds": 42.0}
    if with_params:
        data["experiment_params"] = SWEEP_EXPERIMENT_PARAMS
    return data


TRIALS_CSV = """number,value,state,params_alpha,params_exploration.end,params_exploration.schedule,duration
0,0.8,COMPLETE,0.05,0.2,linear,3.5
1,0.6,PRUNED,0.01,0.3,linear,1.25
2,0.93125,COMPLETE,0.4213,0.1,exponential,3.75
"""


def write_sweep(r: Path, sweep_id: str = SWEEP, experiment: str = TTT, *, with_params: bool = True,
                figures: tuple[str, ...] = SWEEP_FIGURES) -> Path:
    """``results/sweeps/<sweep_id>/`` as the sweep stage writes it (``with_params``: summary.json states the
    experiment's learner params)."""
    import yaml

    d = r / "sweeps" / sweep_id
    write_json(d / "summary.json", sweep_summary(sweep_id, experiment, with_params=with_params))
    best = {"experiments": {experiment: {"params": SWEEP_BEST}},
            "sweep": {"study": f"{sweep_id}-abcdef012345", "storage": f"journal:{d / 'study.journal'}",
                      "best_trial": 2, "best_score": 0.93125, "finished_trials": 3}}
    (d / "best_params.yaml").write_text(yaml.safe_dump(best, sort_keys=False))
    (d / "trials.csv").write_text(TRIALS_CSV)
    for i, name in enumerate(figures):
        tiny_png(d / "figures" / name, level=0.2 + 0.3 * i)
    return d


def make_results(tmp_path: Path, *, sweep: bool = False) -> Path:
    """The four experiments above under ``tmp_path/results`` (and the sweep ``SWEEP`` when ``sweep``)."""
    r = tmp_path / "results"
    if sweep:
        write_sweep(r)
    for k in TTT_WINS:
        write_train(r, TTT, "tictactoe", k, ["random", "perfect"])
    write_json(r / "eval" / f"{TTT}.json", ttt_eval(TTT, TTT_WINS))
    write_train(r, SLOW, "tictactoe", 0, ["random", "perfect"], budget=20000)
    write_json(r / "eval" / f"{SLOW}.json", ttt_eval(SLOW, {0: 0.9}, budget=20000))
    write_train(r, DAB, "dots_and_boxes_2x2", 0, ["random"], budget=50000)
    write_json(r / "eval" / f"{C4}.json", c4_eval())
    write_json(r / "tournaments" / f"{BASELINE}.json", baseline_tournament())
    return r


def baseline_tournament() -> dict[str, Any]:
    """Random against random at tic-tac-toe, 10,000 games with random first (stage tournament@<id>)."""
    pairing = {"first": "random", "second": "random", "games": 10000, "first_wins": 5914, "draws": 1208,
               "second_wins": 2878, "mean_length": 7.6}
    return {"tournament": BASELINE, "game": "tictactoe", "agents": ["random"], "games": 10000, "seed": 0,
            "pairings": [pairing],
            "totals": {"random": {"first": {"wins": 0, "games": 0}, "second": {"wins": 0, "games": 0}}},
            "provenance": {"profile": "default", "seconds": 1.0, "git_commit": COMMIT,
                           "mlflow_run_id": run_id("tournament", BASELINE, 0)}}
