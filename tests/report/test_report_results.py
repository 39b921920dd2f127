"""Reading results/ by experiment id: what the loader returns, and one-line errors naming the broken file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from boardrl.evaluate.schema import EvaluationFile
from boardrl.report import ReportError, load_experiment, load_results, read_curve
from boardrl.report.results import read_evaluation
from report.results_tree import (C4, DAB, METHOD, SLOW, TTT, TTT_WINS, curve_rows, make_results, run_id, ttt_eval,
                                 write_json)


@pytest.fixture
def results(tmp_path) -> Path:
    return make_results(tmp_path)


def test_experiments_are_keyed_by_id_with_their_seeds(results):
    exps = load_results(results)
    assert [e.id for e in exps] == [C4, DAB, TTT, SLOW]  # by game, learner, then id
    ttt = next(e for e in exps if e.id == TTT)
    assert (ttt.game, ttt.learner, ttt.profile, ttt.unit, ttt.budget) == ("tictactoe", "tabular_q", "default",
                                                                          "games", 200000)
    assert list(ttt.seeds) == [0, 1, 2] and list(ttt.evaluated) == [0, 1, 2]
    s1 = ttt.seeds[1]
    assert s1.curve is not None and set(s1.curve["seat"]) == {"as_first", "as_second", "combined"}
    assert s1.summary["seed"] == 1 and s1.eval_run.seed == 1 and s1.eval_provenance["seed"] == 1
    assert s1.opponents["random"].combined.win == TTT_WINS[1]
    assert ttt.across_seeds.seeds == [0, 1, 2] and ttt.opponents == ["random", "perfect"]
    dab = next(e for e in exps if e.id == DAB)
    assert dab.evaluated == {} and dab.across_seeds is None and dab.budget == 50000
    c4 = next(e for e in exps if e.id == C4)
    assert c4.seeds[0].curve is None and c4.seeds[0].summary is None and c4.seeds[0].uci.seed000["win"].win == 0.612


def test_read_evaluation_returns_the_typed_model(results):
    """The evaluate stage's model (``EvaluationFile``), seeds keyed by int in seed order, with the blocks the report
    reads typed: no caller indexes the file's dicts."""
    path = results / "eval" / f"{TTT}.json"
    _edit_json(path, lambda d: d.update(seeds=dict(reversed(d["seeds"].items()))))  # "2", "1", "0" in the file
    ev = read_evaluation(path)
    assert isinstance(ev, EvaluationFile) and list(ev.seeds) == [0, 1, 2]
    seed = ev.seeds[1]
    first = seed.opponents["random"].as_first
    assert (first.win, first.games, first.win_ci) == (TTT_WINS[1], 10000, (TTT_WINS[1] - 0.01, TTT_WINS[1] + 0.01))
    assert seed.opponents["random"].seats["combined"] is seed.opponents["random"].combined
    assert (seed.optimal_move.n, seed.optimal_move.optimal) == (2000, 1980) and seed.provenance.seed == 1
    assert seed.provenance.mlflow_run_id == run_id("eval", TTT, 1)
    win = ev.across_seeds.opponents["random"].win
    assert (win.iqm, win.ci, win.method) == (0.9859, (0.97, 0.99), METHOD)
    assert seed.model_extra == {} and seed.opponents["random"].model_extra == {"mean_length": 6.1}


def test_two_experiments_of_one_game_and_learner_stay_apart(results):
    ttt, slow = load_experiment(results, TTT), load_experiment(results, SLOW)
    assert (ttt.game, ttt.learner) == (slow.game, slow.learner)
    assert (ttt.budget, slow.budget) == (200000, 20000) and list(slow.seeds) == [0]
    assert load_experiment(results, "not_run_yet") is None


def test_read_curve_types_the_columns(results):
    frame = read_curve(results / "curves" / TTT / "seed-0.tsv")
    assert list(frame.columns) == ["step", "opponent", "seat", "win", "draw", "loss", "games"]
    assert frame["step"].dtype.kind == "i" and frame["win"].dtype.kind == "f" and len(frame) == 5 * 2 * 3


def test_reading_results_does_not_load_matplotlib():
    code = "import sys, boardrl.report.results; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_no_results_is_named(tmp_path):
    (tmp_path / "empty" / "train").mkdir(parents=True)
    with pytest.raises(ReportError, match="no results under .*train/<id>/seed-<k>/summary.json"):
        load_results(tmp_path / "empty")


# Each breaks one file of the tree; the error must be one line that starts with that file's path.
def _edit_json(path: Path, edit: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _curve_missing_columns(r: Path) -> tuple[Path, str]:
    p = r / "curves" / TTT / "seed-1.tsv"
    p.write_text("step\topponent\twin\n0\trandom\t0.5\n")
    return p, r"missing column\(s\) seat, draw, loss, games"


def _curve_unknown_seat(r: Path) -> tuple[Path, str]:
    p = r / "curves" / TTT / "seed-2.tsv"
    p.write_text(curve_rows(["random"]).replace("as_first", "first"))
    return p, "unknown seat"


def _eval_not_json(r: Path) -> tuple[Path, str]:
    p = r / "eval" / f"{TTT}.json"
    p.write_text("{not json")
    return p, "not readable JSON"


def _eval_missing_seat(r: Path) -> tuple[Path, str]:
    p = r / "eval" / f"{TTT}.json"
    _edit_json(p, lambda d: d["seeds"]["1"]["opponents"]["random"].pop("as_second"))
    return p, "seeds.1.opponents.random.as_second: Field required"


def _eval_rate_out_of_range(r: Path) -> tuple[Path, str]:
    p = r / "eval" / f"{TTT}.json"
    _edit_json(p, lambda d: d["seeds"]["2"]["opponents"]["perfect"]["as_first"].update(draw=1.5))
    return p, r"seeds\.2\.opponents\.perfect\.as_first\.draw: must be a number in \[0, 1\] or null, found 1\.5"


def _eval_detail_of_wrong_shape(r: Path) -> tuple[Path, str]:
    p = r / "eval" / f"{TTT}.json"
    _edit_json(p, lambda d: d["seeds"]["0"]["optimal_move"].update(n="many"))
    return p, "seeds.0.optimal_move.n: Input should be a valid integer"


def _eval_old_layout(r: Path) -> tuple[Path, str]:
    p = r / "eval" / f"{TTT}.json"
    write_json(p, {"opponents": {}, "optimal_move_rate": None, "uci": None, "provenance": {}})
    return p, "missing key"


def _across_values_short(r: Path) -> tuple[Path, str]:
    p = r / "eval" / f"{TTT}.json"
    _edit_json(p, lambda d: d["across_seeds"]["opponents"]["random"]["win"]["values"].pop())
    return p, r"across_seeds: opponents.random.win.values must hold one value per seed \(3\)"


def _summary_other_game(r: Path) -> tuple[Path, str]:
    p = r / "train" / TTT / "seed-2" / "summary.json"
    _edit_json(p, lambda d: d.update(game="connect4"))
    return p, "game 'connect4' disagrees with"


def _summary_wrong_seed(r: Path) -> tuple[Path, str]:
    p = r / "train" / TTT / "seed-2" / "summary.json"
    _edit_json(p, lambda d: d.update(seed=7))
    return p, "seed is 7, expected 2"


def _eval_names_other_id(r: Path) -> tuple[Path, str]:
    p = r / "eval" / f"{SLOW}.json"
    write_json(p, ttt_eval(TTT, {0: 0.9}))
    return p, f"experiment '{TTT}' disagrees with the id '{SLOW}'"


def _bad_id(r: Path) -> tuple[Path, str]:
    p = r / "train" / "TicTacToe"
    p.mkdir()
    return p, "is not an experiment id"


def _not_a_seed_dir(r: Path) -> tuple[Path, str]:
    p = r / "train" / TTT / "checkpoint"
    p.mkdir()
    return p, "not a seed directory"


def _old_train_layout(r: Path) -> tuple[Path, str]:
    p = r / "train" / "tictactoe-tabular_q" / "curve.tsv"
    p.parent.mkdir()
    p.write_text(curve_rows(["random"]))
    return p, "old layout"


@pytest.mark.parametrize("breakage", [
    _curve_missing_columns, _curve_unknown_seat, _eval_not_json, _eval_missing_seat, _eval_rate_out_of_range,
    _eval_detail_of_wrong_shape, _eval_old_layout,
    _across_values_short, _summary_other_game, _summary_wrong_seed, _eval_names_other_id, _bad_id,
    _not_a_seed_dir, _old_train_layout,
], ids=lambda f: f.__name__.strip("_"))
def test_a_malformed_file_is_one_line_naming_it(results, breakage):
    path, what = breakage(results)
    with pytest.raises(ReportError, match=what) as info:
        load_results(results)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
