"""The issues' targets judged across models (report/targets.py): which model meets each, the closest one's
shortfalls otherwise, the kind a target is about, and whose profile the numbers come from.

The results are built in the evaluate stage's own shapes (``SeatStats.to_dict`` blocks per seed), with counts
chosen so that each verdict is known."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from boardrl.evaluate.stats import SeatStats
from boardrl.report import load_results, markdown
from boardrl.report.document import Paragraph
from boardrl.report.targets import GAME_TARGETS, judge, target_blocks, target_line

Seat = tuple[int, int, int]  # wins, draws, losses of our agent


def seed_block(ladder: dict[str, tuple[Seat, Seat]], uci: dict[str, Seat] | None, exp_id: str, game: str,
               learner: str, seed: int, profile: str) -> dict[str, Any]:
    opponents = {}
    for opp, (first, second) in ladder.items():
        a, b = SeatStats(*first), SeatStats(*second)
        opponents[opp] = {"as_first": a.to_dict(), "as_second": b.to_dict(), "combined": (a + b).to_dict()}
    return {"opponents": opponents, "optimal_move_rate": None,
            "uci": None if uci is None else {"seed000": {k: SeatStats(*v).to_dict() for k, v in uci.items()}},
            "provenance": {"experiment": exp_id, "game": game, "learner": learner, "seed": seed, "profile": profile}}


def write_eval(results: Path, exp_id: str, game: str, learner: str,
               seeds: dict[int, tuple[dict[str, tuple[Seat, Seat]], dict[str, Seat] | None]],
               profile: str = "full") -> None:
    spread = {"iqm": 0.5, "ci": [0.0, 1.0], "values": [0.5] * len(seeds), "confidence": 0.95, "method": "iqm"}
    opponents = {o for ladder, _ in seeds.values() for o in ladder}
    across = {"seeds": sorted(seeds), "optimal_move_rate": None,
              "opponents": {o: {out: spread for out in ("win", "draw", "loss")} for o in opponents}}
    data = {"experiment": exp_id, "game": game, "learner": learner, "profile": profile, "unit": "games",
            "budget": 1000, "seeds": {str(k): seed_block(ladder, uci, exp_id, game, learner, k, profile)
                                      for k, (ladder, uci) in seeds.items()}, "across_seeds": across}
    path = results / "eval" / f"{exp_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


STRONG = ((95, 0, 5), (91, 0, 9))
WEAK = ((95, 0, 5), (84, 0, 16))


@pytest.fixture
def exps(tmp_path):
    results = tmp_path / "results"
    write_eval(results, "connect4_alphazero", "connect4", "alphazero", {
        0: ({"maxmin": STRONG, "mcts:simulations=1000": WEAK}, {"win": (100, 0, 0), "draw": (99, 0, 1),
                                                                  "loss": (98, 0, 2)}),
        1: ({"maxmin": STRONG, "mcts:simulations=1000": STRONG}, None)})
    write_eval(results, "connect4_dqn", "connect4", "dqn", {0: ({"maxmin": WEAK}, None)})
    write_eval(results, "connect4_seed000_dqn_uci", "connect4", "dqn", {
        0: ({"random": STRONG}, {"win": (99, 0, 1), "draw": (97, 0, 3), "loss": (96, 0, 4)})})
    write_eval(results, "dots_and_boxes_3x3_alphazero", "dots_and_boxes_3x3", "alphazero",
               {0: ({"advanced": ((97, 0, 3), (98, 0, 2))}, None)}, profile="default")
    return load_results(results)


def target(words: str):
    return next(t for t in GAME_TARGETS if words in t.words)


def rendered(inline) -> str:
    return markdown.render([Paragraph(inline)]).strip()


def test_a_target_met_by_one_seed_names_that_seed(exps):
    assert rendered(judge(target("Connect 4: AlphaZero"), exps)) == "met by `connect4_alphazero` seed 1"


def test_a_missed_target_names_the_closest_model_and_each_shortfall(exps):
    assert rendered(judge(target("Connect 4: a DQN"), exps)) == (
        "not met (closest: `connect4_dqn` seed 0: 84.0% as second)")
    # the AlphaZero model's 100 / 99 / 98% does not count for reference system 000's kind; the DQN's 96% is short
    assert rendered(judge(target("UCI protocol"), exps)) == (
        "not met (closest: `connect4_seed000_dqn_uci` seed 0: 96.0% from the loss class)")


def test_no_model_that_met_the_opponent_is_not_measured(exps):
    assert rendered(judge(target("Conniption"), exps)) == "not measured (no evaluated experiment)"


def test_the_line_says_when_the_numbers_are_another_profiles(exps):
    dots = rendered(target_line(target("Dots and Boxes 3x3"), exps))
    assert dots.startswith("Target (issue 39) [the full profile's target; these numbers come from profile default]")
    assert dots.endswith("met by `dots_and_boxes_3x3_alphazero` seed 0")  # 195 of 200 combined: 97.5%
    c4 = rendered(target_line(target("Connect 4: AlphaZero"), exps))
    assert c4.startswith("Target (issue 39) [the full profile's target]: Connect 4: AlphaZero wins at least 90%")


def test_the_section_has_a_line_per_target(exps):
    md = markdown.render(target_blocks(exps))
    assert md.startswith("## Targets") and md.count("- Target (issue 39)") == len(GAME_TARGETS)
