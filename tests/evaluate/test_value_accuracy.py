"""Value accuracy on the UCI labels: exact numbers for hand-made value agents, the confusion matrix, the
fitted thresholds, agents without a value skipped, and the evaluate stage's wiring (issue 9)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardrl.agents import make_agent
from boardrl.agents.base import Agent
from boardrl.config import load_params, parse_params, read_yaml
from boardrl.data import uci_download, uci_table
from boardrl.errors import BoardRLError
from boardrl.evaluate import value_accuracy as va
from boardrl.experiments import evaluate as stage
from boardrl.games import make_game

ROOT = Path(__file__).resolve().parents[2]
C4 = make_game("connect4")
COUNTS = {"win": 44_473, "loss": 16_635, "draw": 6_449}
N = 67_557
SIGN = {"win": 1.0, "draw": 0.0, "loss": -1.0}


@pytest.fixture(scope="module")
def table():
    text = uci_download.obtain("vendored", vendor_dir=ROOT / "data" / "vendor").files[uci_download.DATA].decode()
    return uci_table.uci_frame(text)


class LookupValue(Agent):
    """Plays randomly; its value of a UCI position is ``value_of[label]`` of that position (an oracle when the
    map is the label's sign).  Counts its calls to check the batching."""

    def __init__(self, table, value_of: dict[str, float]) -> None:
        super().__init__(C4, "lookup")
        states = uci_table.frame_states(table)
        labels = table["label"].astype(str).to_numpy()
        self.values = {(int(c), int(m)): value_of[lab] for (c, m, _), lab in zip(states.tolist(), labels)}
        self.calls: list[int] = []

    def act(self, state, rng):
        return make_agent(C4, "random").act(state, rng)

    def value_batch(self, states: np.ndarray) -> np.ndarray:
        self.calls.append(len(states))
        return np.array([self.values[(int(r[0]), int(r[1]))] for r in states])


class ConstantValue(Agent):
    def __init__(self, value: float) -> None:
        super().__init__(C4, "constant")
        self.value = value

    def act(self, state, rng):
        return 0

    def value_batch(self, states: np.ndarray) -> np.ndarray:
        return np.full(len(states), self.value)


def test_an_oracle_value_is_right_on_every_label(table):
    agent = LookupValue(table, SIGN)
    d = va.value_accuracy(agent, table).to_dict()
    assert d["positions"] == N and d["accuracy"]["correct"] == N and d["accuracy"]["rate"] == 1.0
    for lab, n in COUNTS.items():
        block = d["per_label"][lab]
        assert (block["rate"], block["correct"], block["n"], block["ci"][1]) == (1.0, n, n, 1.0)
        z2 = 1.959963984540054 ** 2  # Wilson at 100%: 1 - lo = z^2 / (n + z^2) exactly
        assert 1 - block["ci"][0] == pytest.approx(z2 / (n + z2), rel=1e-9)
    assert d["confusion"] == {t: {p: (COUNTS[t] if p == t else 0) for p in ("win", "loss", "draw")} for t in COUNTS}
    assert d["balanced_accuracy"] == 1.0 and d["fitted"]["accuracy"] == 1.0
    assert d["mean_value"] == {"win": 1.0, "loss": -1.0, "draw": 0.0}
    assert d["majority_baseline"] == pytest.approx(COUNTS["win"] / N)
    assert agent.calls == [va.CHUNK] * (N // va.CHUNK) + [N % va.CHUNK]  # the whole table, in chunks


def test_a_constant_zero_value_is_right_on_the_draws_only(table):
    d = va.value_accuracy(ConstantValue(0.0), table).to_dict()
    assert d["accuracy"]["correct"] == 6_449 and d["accuracy"]["rate"] == pytest.approx(6_449 / 67_557)
    lo, hi = d["accuracy"]["ci"]
    assert lo < 6_449 / N < hi and hi - lo < 0.005  # Wilson half-width ~ 1.96 * sqrt(p(1-p)/n) = 0.0022
    assert {lab: b["rate"] for lab, b in d["per_label"].items()} == {"win": 0.0, "loss": 0.0, "draw": 1.0}
    assert d["balanced_accuracy"] == pytest.approx(1 / 3)
    assert {t: row["draw"] for t, row in d["confusion"].items()} == COUNTS
    # Fitted on the labels, the best cut calls every position a win: the majority share, not more.
    assert d["fitted"]["accuracy"] == pytest.approx(COUNTS["win"] / N) and "fitted" in d["fitted"]["note"]


def test_confusion_rows_sum_to_the_label_counts_and_thresholds_decide(table):
    # win -> 0.5 (win), draw -> 1/3 exactly (draw: the cut is inclusive), loss -> -0.2 (draw under +-1/3).
    agent = LookupValue(table, {"win": 0.5, "draw": 1 / 3, "loss": -0.2})
    d = va.value_accuracy(agent, table).to_dict()
    assert {t: sum(row.values()) for t, row in d["confusion"].items()} == COUNTS
    assert sum(sum(row.values()) for row in d["confusion"].values()) == N
    assert d["confusion"]["loss"] == {"win": 0, "loss": 0, "draw": COUNTS["loss"]}
    assert d["accuracy"]["correct"] == COUNTS["win"] + COUNTS["draw"]
    # Other thresholds: -0.1 < -0.2 is a loss now, and 1/3 > 0.25 a win.
    e = va.value_accuracy(agent, table, thresholds=(-0.1, 0.25), fit=False).to_dict()
    assert e["confusion"]["loss"]["loss"] == COUNTS["loss"] and e["confusion"]["draw"]["win"] == COUNTS["draw"]
    assert e["fitted"] is None
    # The fitted grid finds a cut that separates all three values: accuracy 1.
    assert d["fitted"]["accuracy"] == 1.0
    lo, hi = d["fitted"]["thresholds"]
    assert -0.2 < lo <= 1 / 3 <= hi < 0.5


def test_classify_and_bad_input():
    v = np.array([-1.0, -0.34, -1 / 3, 0.0, 1 / 3, 0.34, 1.0])
    assert va.classify(v).tolist() == [-1, -1, 0, 0, 0, 1, 1]
    with pytest.raises(BoardRLError, match="lo <= hi"):
        va.classify(v, (0.5, -0.5))
    with pytest.raises(BoardRLError, match="unknown UCI label"):
        va.confusion_matrix(np.zeros(2), np.array(["win", "maybe"]))


def test_agents_without_a_value_are_skipped_not_refused(table, tmp_path):
    random = make_agent(C4, "random")
    assert not va.has_value(random) and va.has_value(ConstantValue(0.0))
    with pytest.raises(BoardRLError, match="no value_batch"):
        va.value_accuracy(random, table)
    with pytest.raises(BoardRLError, match="connect4"):
        va.value_accuracy(make_agent(make_game("tictactoe"), "random"), table)
    params = load_params(ROOT / "params.yaml")
    # No table under tmp_path: a skipped agent never reads it.
    assert stage.value_accuracy(params.spec("connect4_dqn"), tmp_path, C4, random) is None
    ttt = make_game("tictactoe")
    assert stage.value_accuracy(params.spec("tictactoe_dqn"), tmp_path, ttt, ConstantValue(0.0)) is None


def test_the_evaluate_stage_adds_a_block_and_metrics(table, tmp_path):
    params = load_params(ROOT / "params.yaml")
    assert params.evaluate.per_game["connect4"].uci.value_accuracy
    uci_table.write_parquet(table, tmp_path / stage.UCI_TABLE)
    block = stage.value_accuracy(params.spec("connect4_dqn"), tmp_path, C4, ConstantValue(0.0))
    assert block["accuracy"]["correct"] == 6_449 and block["positions"] == N
    results = {"opponents": {}, "optimal_move_rate": None, "uci": None, "value_accuracy": block}
    m = stage.seed_metrics(results)
    assert m["uci/value_accuracy"] == pytest.approx(6_449 / N) and m["uci/value_accuracy/draw"] == 1.0
    spread = stage.spread({1: results, 2: results}, seed=0)
    assert spread["value_accuracy"]["values"] == [6_449 / N] * 2



def test_the_uci_setting_is_backward_compatible_and_turns_it_off(tmp_path):
    data = read_yaml(ROOT / "params.yaml")
    uci = data["evaluate"]["per_game"]["connect4"]["uci"]
    del uci["value_accuracy"]  # a params file from before the setting existed
    assert parse_params(data).evaluate.per_game["connect4"].uci.value_accuracy is True
    uci["value_accuracy"] = False
    no_table_read = stage.value_accuracy(parse_params(data).spec("connect4_dqn"), tmp_path, C4, ConstantValue(0.0))
    assert no_table_read is None


def test_the_report_shows_each_seed_with_a_value(table):
    from boardrl.report.document import Table
    from boardrl.report.links import Links
    from boardrl.report.evaluation import SeedReading
    from boardrl.report.results import Experiment, SeedResult
    from boardrl.report.sections import value_accuracy_blocks

    block = va.value_accuracy(ConstantValue(0.0), table, fit=False).to_dict()
    seeds = {1: SeedResult(evaluation=SeedReading.model_validate({"opponents": {}, "value_accuracy": block})),
             2: SeedResult(evaluation=SeedReading.model_validate({"opponents": {}})),  # without a value: no row
             3: SeedResult()}  # not evaluated
    e = Experiment("c4_dqn", "connect4", "dqn", "default", "games", 10, seeds)
    (table_block,) = [b for b in value_accuracy_blocks(e, Links()) if isinstance(b, Table)]
    cells = ["".join(span.text for span in cell) for cell in table_block.rows[0]]
    assert len(table_block.rows) == 1
    # Columns: seed, overall, win / draw / loss labels, balanced, majority, fitted (not computed here), positions.
    assert cells == ["1", "9.5% [9.3, 9.8]", "0.0000% [0.0000, 0.0086]", "100.0% [99.9, 100.0]",
                     "0.000% [0.000, 0.023]", "33.3%", "65.8%", "-", "67,557"]
    assert value_accuracy_blocks(Experiment("x", "connect4", "dqn", "default", "games", 10, {2: seeds[2]}),
                                 Links()) == []
