"""Seed 000 exp 01/02 Q-value traces: tabular_q's ``trace`` option, its resume, and the pipeline's record files."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import yaml

from boardrl.errors import BoardRLError
from boardrl.games import make_game
from boardrl.learn import LearnError, make_learner
from boardrl.learn.core.base import Learner
from helpers import clear_tracking_env

TTT = make_game("tictactoe")
S0_MOVES = "3758"  # seed 000 exp 01/02: X on cells 3 and 5, O on 7 and 8, X to move
S0_NAMES = ["1", "2", "4", "6", "9"]
S0_TARGET = {"1": -1.0, "2": -1.0, "4": -1.0, "6": -1.0, "9": 1.0}
EXP01 = {"games": 800, "start": S0_MOVES, "opponent": "seed000_alphabeta", "learner_seat": "first",
         "trace": True, "parallel_games": 1}
EXP02 = {"games": 4_000, "start": S0_MOVES, "trace": True, "parallel_games": 1}


class Kill(Exception):
    """Stands for the process dying inside a callback."""


def train(params, ckpt: Path, seed: int = 23, eval_points=(), on_eval=None):
    learner = make_learner("tabular_q")
    agent = learner.train(TTT, params, seed=seed, checkpoint_dir=ckpt, eval_points=list(eval_points),
                          on_eval=on_eval or (lambda n, a: None))
    return agent, learner


def by_game(rows) -> dict[int, dict[str, float]]:
    out: dict[int, dict[str, float]] = {}
    for r in rows:
        out.setdefault(r["game"], {})[r["action"]] = r["q"]
    return out


def test_trace_has_every_legal_action_after_every_game_and_ends_at_the_table(tmp_path):
    agent, learner = train(EXP01, tmp_path / "ck")
    rows = learner.records()["trace"]
    assert list(rows[0]) == ["game", "action", "q"]
    games = by_game(rows)
    assert sorted(games) == list(range(1, 801)) and all(list(g) == S0_NAMES for g in games.values())
    final = agent.q_values(TTT.replay(S0_MOVES))[[0, 1, 3, 5, 8]]
    assert [games[800][a] for a in S0_NAMES] == final.tolist()  # the last row is the trained table, exactly
    assert all(abs(games[800][a] - S0_TARGET[a]) < 0.1 for a in S0_NAMES)  # seed 000 exp 01 (as test_tabular_q)


def test_each_game_changes_only_the_action_played_there(tmp_path):
    """Against a fixed opponent, game k updates Q(s0, a) for the one action the learner took at s0 (its
    transition ends when the game does or at the learner's next move, both within game k)."""
    _, learner = train({**EXP01, "games": 200}, tmp_path / "ck")
    games = by_game(learner.records()["trace"])
    for k in range(2, 201):
        changed = [a for a in S0_NAMES if games[k][a] != games[k - 1][a]]
        assert len(changed) <= 1, (k, changed)
    # after 1, 4 or 6 seed 000's AlphaBeta completes 7-8-9 at once: a one-step terminal target,
    # q_k = q_{k-1} + 0.1 (-1 - q_{k-1}).  (After 2 it blocks 1-2-3 first: all wins score alike, and it keeps
    # the first best move in legal order, so Q(s0, 2) bootstraps and converges later.)
    updates = 0
    for k in range(2, 201):
        for a in ("1", "4", "6"):
            before, after = games[k - 1][a], games[k][a]
            if after != before:
                updates += 1
                assert after == pytest.approx(before + 0.1 * (-1.0 - before), abs=1e-12)
    assert updates > 60  # uniform behaviour plays each of the 5 moves in about 40 of 199 games


def test_trace_is_off_by_default_and_needs_sequential_games(tmp_path):
    _, learner = train({"games": 50}, tmp_path / "a")
    assert learner.records() == {}
    with pytest.raises(LearnError, match="trace needs parallel_games 1") as err:
        train({"games": 50, "trace": True}, tmp_path / "b")
    assert "\n" not in str(err.value)


def test_resumed_trace_equals_uninterrupted(tmp_path):
    params = {**EXP02, "games": 1_500, "checkpoint_every": 500}
    _, ref = train(params, tmp_path / "ref", eval_points=[0, 1_000, 1_500])
    ck = tmp_path / "ck"

    def die_at_1000(n, agent):
        if n == 1_000:
            raise Kill

    with pytest.raises(Kill):  # dies at the eval at 1,000: the checkpoint at 500 survives
        train(params, ck, eval_points=[0, 1_000, 1_500], on_eval=die_at_1000)
    _, resumed = train(params, ck, eval_points=[0, 1_000, 1_500])
    assert resumed.resumed_from == 500
    assert resumed.records() == ref.records()  # every row, bit for bit, including the 500 before the kill
    assert len(ref.records()["trace"]) == 1_500 * 5


def test_exp02_self_play_trace_converges(tmp_path):
    _, learner = train(EXP02, tmp_path / "ck")
    last = by_game(learner.records()["trace"])[4_000]
    assert all(abs(last[a] - S0_TARGET[a]) < 0.05 for a in S0_NAMES), last


# ---------------------------------------------------------------------------------------------- record files
def test_write_records_writes_each_table_and_drops_stale_ones(tmp_path):
    from boardrl.experiments.train import write_records

    d = tmp_path / "seed-0"
    d.mkdir()
    (d / "old.tsv").write_text("x\n1\n")
    (d / "summary.json").write_text("{}")
    rows = [{"game": 1, "action": "9", "q": 0.1}, {"game": 1, "action": "1", "q": -1 / 3}]
    paths = write_records(d, {"trace": rows, "empty": []})
    assert paths == [d / "trace.tsv"]
    assert (d / "trace.tsv").read_text() == f"game\taction\tq\n1\t9\t0.1\n1\t1\t{-1 / 3!r}\n"
    assert not (d / "old.tsv").exists() and (d / "summary.json").exists()
    with pytest.raises(BoardRLError, match="row 1 has columns"):
        write_records(d, {"trace": [{"a": 1}, {"b": 2}]})
    with pytest.raises(BoardRLError, match="record name"):
        write_records(d, {"../x": [{"a": 1}]})


def test_base_learner_has_no_records():
    assert Learner.records(make_learner("tabular_q")) == {}


def test_train_stage_writes_the_trace_beside_the_summary(tmp_path, monkeypatch):
    """run_train (the train stage's work) on a tiny exp 01 in a throw-away project: trace.tsv lands in
    results/train/<id>/seed-<k>/ and equals the learner's records."""
    from boardrl.config import parse_params
    from boardrl.paths import ExperimentPaths
    from boardrl.experiments.train import run_train

    root = Path(__file__).resolve().parents[2]
    data = yaml.safe_load((root / "params.yaml").read_text())
    data["experiments"] = {"t01": {"game": "tictactoe", "learner": "tabular_q", "seeds": [3],
                                   "params": {**EXP01, "games": 60}, "opponents": ["random"]}}
    data["train"]["eval_games"] = 2
    data["sweeps"] = {}
    monkeypatch.chdir(tmp_path)  # a stray ./mlruns would appear here
    clear_tracking_env(monkeypatch)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "unset")  # configure() points it at tmp_path; restored afterwards
    try:
        trained = run_train(parse_params(data).spec("t01"), tmp_path, progress=False)
    finally:
        import mlflow

        mlflow.set_tracking_uri(None)  # back to MLflow's default for later tests in this process
    path = ExperimentPaths(tmp_path, "t01").summary(3).parent / "trace.tsv"
    with path.open() as fh:
        table = list(csv.DictReader(fh, delimiter="\t"))
    _, learner = train({**EXP01, "games": 60}, tmp_path / "ck", seed=3)
    expected = learner.records()["trace"]
    assert len(table) == len(expected) == 60 * 5
    assert [(int(r["game"]), r["action"], float(r["q"])) for r in table] == \
        [(r["game"], r["action"], r["q"]) for r in expected]
    assert trained[0].summary["seed"] == 3
    logged = list((tmp_path / "mlartifacts").rglob("trace.tsv"))  # the seed's MLflow run carries it too
    assert len(logged) == 1 and logged[0].read_bytes() == path.read_bytes()
    assert np.isfinite([float(r["q"]) for r in table]).all()
