"""Stage `referee`: exact verdicts on every evaluation position, found once; evaluate reads them, searching nothing."""

from __future__ import annotations

import json

import pytest
import yaml

from boardrl.agents import make_agent
from boardrl.config import parse_params
from boardrl.experiments import evaluate as evaluate_mod
from boardrl.experiments import referee as referee_mod
from boardrl.games import make_game
from boardrl.solvers.base import RememberingReferee
from boardrl.solvers.registry import make_referee
from helpers import REPO_ROOT

TTT = make_game("tictactoe")


@pytest.fixture
def params():
    """The shipped params with two experiments: tic-tac-toe (a referee) and Conniption (none); 120 positions."""
    data = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    data["experiments"] = {k: v for k, v in data["experiments"].items()
                           if k in ("tictactoe_tabular_q", "conniption_seed004_qlearn_flip")}
    data["evaluate"]["optimal_positions"] = 120
    data["sweeps"], data["tournaments"] = {}, {}
    return parse_params(data)


def test_the_stage_writes_exact_verdicts_per_game_and_drops_stale_files(params, tmp_path):
    stale = referee_mod.judged_path(tmp_path, "connect4")
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    summary = referee_mod.run_referee(params, tmp_path, progress=False)
    assert sorted(summary) == ["conniption", "tictactoe"] and not stale.exists()
    positions = referee_mod.evaluation_positions(params.evaluate, "tictactoe")["optimal"]
    assert len(positions) == 120 == summary["tictactoe"]["positions"]
    fresh = make_referee(TTT)
    judged = RememberingReferee(fresh, known=referee_mod.judged_path(tmp_path, "tictactoe")).verdicts
    assert judged == {tuple(p): fresh.solve(p) for p in positions}  # every position, each verdict exact
    empty = json.loads(referee_mod.judged_path(tmp_path, "conniption").read_text())
    assert empty == {"game": "conniption", "code": None, "verdicts": []}


def test_workers_give_the_verdicts_one_core_gives(monkeypatch):
    positions = referee_mod.optimal_positions("tictactoe", 300, 7, None)
    alone = RememberingReferee(make_referee(TTT))
    referee_mod.judge(alone, positions, processes=1, progress=False)
    monkeypatch.setattr(referee_mod, "POOL_AFTER_S", 0.0)  # force the pool after the first chunk
    pooled = RememberingReferee(make_referee(TTT))
    referee_mod.judge(pooled, positions, processes=2, progress=False)
    assert pooled.verdicts == alone.verdicts and len(alone.verdicts) == 300
    assert pooled.added == 300  # counted, so that save() writes them


def test_evaluate_reads_the_stage_file_and_searches_nothing(params, tmp_path, monkeypatch):
    referee_mod.run_referee(params, tmp_path, progress=False)
    monkeypatch.setenv("BOARDRL_CACHE", str(tmp_path / "cache"))
    evaluate_mod._referee.cache_clear()
    try:
        referee = evaluate_mod._referee("tictactoe", tmp_path)

        def no_search(state):
            raise AssertionError("the referee searched a position the stage had judged")

        monkeypatch.setattr(referee.referee, "solve", no_search)
        rate = evaluate_mod.optimal_moves(params.evaluate, TTT, make_agent(TTT, "perfect"), tmp_path)
        assert rate["n"] == 120 and rate["rate"] == 1.0
        assert not (tmp_path / "cache" / "referee" / "tictactoe.json").exists()  # nothing new to remember
    finally:
        evaluate_mod._referee.cache_clear()


def test_a_file_from_other_referee_code_is_ignored(params, tmp_path):
    referee_mod.run_referee(params, tmp_path, progress=False)
    path = referee_mod.judged_path(tmp_path, "tictactoe")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "code": "another version"}))
    assert RememberingReferee(make_referee(TTT), known=path).verdicts == {}
    assert RememberingReferee(make_referee(TTT), known=tmp_path / "missing.json").verdicts == {}

