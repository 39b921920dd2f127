"""The referee's values and marks shown by the web app equal the solvers' own answers.

Connect 4 positions here have at least 10 stones: earlier ones can take the solver minutes (unless an opening
book answers them), and the web app only passes the referee's answers through.
"""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.solvers.registry import make_referee
from boardrl.web.analysis import (MoveValues, judge, move_values, outcome_classes, review, summary_text, value_text,
                                  values_json)
from boardrl.web.positions import game_for, replay
from helpers import reachable_states

CONNECT4_MIDGAME = ("4444435233", "444443523316", "4453322126", "4453322126537")


@pytest.fixture(scope="module")
def connect4():
    game = game_for("connect4")
    return game, make_referee(game)


def test_tictactoe_every_position_matches_the_referee():
    game = game_for("tictactoe")
    referee = make_referee(game)
    for state in reachable_states(game):
        mv = move_values(referee, game, state)
        if game.is_over(state):
            assert mv.values == {}
            continue
        verdict = referee.solve(state)
        assert set(mv.values) == set(game.legal_actions(state))
        assert mv.best == verdict.value
        assert mv.optimal_moves() == sorted(verdict.optimal_moves)
        for a, v in mv.values.items():  # each move's value is minus the opponent's value after it
            assert v == -referee.solve(game.play(state, a)).value


def test_dots_2x2_values_are_the_referees_margins():
    game = game_for("dots_and_boxes_2x2")
    referee = make_referee(game)
    rng = np.random.default_rng(3)
    for _ in range(30):
        state = game.initial_state()
        while not game.is_over(state):
            mv = move_values(referee, game, state)
            verdict = referee.solve(state)
            assert mv.kind == "margin" and mv.values == referee.move_margins(state)
            assert mv.best == verdict.margin
            assert mv.optimal_moves() == sorted(verdict.optimal_moves)
            state = game.play(state, int(rng.choice(game.legal_actions(state))))


@pytest.mark.parametrize("moves", CONNECT4_MIDGAME)
def test_connect4_values_are_the_exact_scores(connect4, moves):
    game, referee = connect4
    state = game.replay(moves)
    mv = move_values(referee, game, state)
    scores = referee.move_scores(state)
    assert mv.kind == "score"
    assert mv.values == {c: s for c, s in enumerate(scores) if s is not None}
    verdict = referee.solve(state)
    assert mv.best == verdict.score
    assert mv.optimal_moves() == sorted(verdict.optimal_moves)


def test_connect4_value_words_count_moves_to_the_end():
    # 6 stones, the mover (first player, 3 stones) wins now with its 4th stone: score (43 - 6) // 2 = 18.
    mv = MoveValues("score", {0: 18, 1: -17, 2: 0}, plies=6)
    assert value_text(mv, 18) == "+18: win in 1 move"
    assert value_text(mv, -17) == "-17: loss, the opponent wins in 2 moves"  # its 5th stone; it has 3
    assert value_text(mv, 0) == "0: draw"


def test_marks_best_optimal_and_mistake():
    game = game_for("connect4")
    mv = MoveValues("score", {0: 3, 1: 1, 2: 0, 3: -2}, plies=12)
    assert [judge(game, mv, a)["mark"] for a in range(4)] == ["best", "optimal", "mistake", "mistake"]
    assert judge(game, mv, 1)["lost"] == 2
    assert judge(game, mv, 3)["short"] == "win → loss, -5"
    dots = MoveValues("margin", {0: 2, 1: 1, 2: -4}, plies=0)
    assert [judge(game, dots, a)["mark"] for a in range(3)] == ["best", "mistake", "mistake"]
    assert judge(game, dots, 1)["short"] == "-1 box"
    assert "win → loss" in judge(game, dots, 2)["text"]
    ttt = MoveValues("result", {0: 0, 1: -1}, plies=0)
    assert judge(game, ttt, 1)["text"] == "mistake: draw → loss"
    js = values_json(game, mv)
    assert js["value"] == 3 and js["optimal_moves"] == ["1", "2"]
    assert [m["mark"] for m in js["values"]] == ["best", "optimal", "mistake", "mistake"]


def test_review_judges_each_played_move_with_the_values_before_it():
    game = game_for("tictactoe")
    referee = make_referee(game)
    pos = replay(game, "5263")  # X centre (best), O edge 2 (a mistake: loses), X 6, O 3
    rows = review(game, pos.actions, pos.states, lambda s: move_values(referee, game, s))
    assert [r["mark"] for r in rows][:2] == ["best", "mistake"]
    assert rows[1]["short"] == "draw → loss" and rows[1]["player"] == 1
    for row, state, action in zip(rows, pos.states, pos.actions):
        assert (row["mark"] != "mistake") == (action in referee.solve(state).optimal_moves)
    pending = review(game, pos.actions, pos.states, lambda s: None)
    assert all(r["mark"] is None for r in pending)


# ---------------------------------------------------------------------------------------------- outcome classes
LOST = "44444352335"  # 11 stones, lost for the mover: scores -3 -2 -2 -14 -14 -2 -4 (issue 38: -2 against -4)
MIXED = "4444435233"  # 10 stones: one winning move, three drawing, three losing ones (-2, -4, -4)


def exact_classes(scores: list[int | None]) -> dict[int, tuple[str, bool]]:
    """The expected classes from the solver's own scores, written out independently of ``outcome_classes``."""
    legal = {c: s for c, s in enumerate(scores) if s is not None}
    out = {}
    for c, s in legal.items():
        outcome = "win" if s > 0 else "draw" if s == 0 else "loss"
        same = [t for t in legal.values() if (t > 0) == (s > 0) and (t < 0) == (s < 0)]
        out[c] = (outcome, s == max(same) and min(same) != max(same))
    return out


@pytest.mark.parametrize("moves", [LOST, MIXED])
def test_connect4_moves_are_classed_by_outcome_with_the_best_score_of_each_class(connect4, moves):
    game, referee = connect4
    state = game.replay(moves)
    scores = referee.move_scores(state)
    mv = move_values(referee, game, state)
    assert outcome_classes(mv) == exact_classes(scores)
    js = values_json(game, mv)
    assert {game.parse_move(m["move"]): (m["outcome"], m["best_in_class"]) for m in js["values"]} == \
        exact_classes(scores)
    top = max(s for s in scores if s is not None)
    assert js["best_moves"] == [str(c + 1) for c, s in enumerate(scores) if s == top]
    assert "value-keeping" in js["optimal_meaning"] and "best score" in js["optimal_meaning"]


def test_a_lost_connect4_position_says_every_move_loses_and_stars_the_slowest_loss(connect4):
    game, referee = connect4
    js = values_json(game, move_values(referee, game, game.replay(LOST)))
    assert [m["outcome"] for m in js["values"]] == ["loss"] * 7
    assert [m["move"] for m in js["values"] if m["best_in_class"]] == ["2", "3", "6"]  # -2; not -3, -4 or -14
    assert js["summary"].startswith("Lost for the side to move (-2: loss")
    assert "Every move loses; ★ slowest loss (-2): 2, 3, 6." in js["summary"]
    assert js["summary"].endswith("Value-keeping (“optimal”) moves: all 7.")


def test_mixed_connect4_position_summary(connect4):
    game, referee = connect4
    js = values_json(game, move_values(referee, game, game.replay(MIXED)))
    assert js["summary"] == ("Won for the side to move (+2: win in 15 moves). Moves that win: 5. Moves that draw: "
                             "3, 6, 7. Moves that lose: 1, 2, 4; ★ slowest loss (-2): 2. "
                             "Value-keeping (“optimal”) moves: 5.")


def test_tictactoe_classes_have_no_star_and_dots_stars_the_best_margin():
    game = game_for("tictactoe")
    referee = make_referee(game)
    state = game.replay("52")  # X centre, O edge: X wins with 1, 3, 4, 6, 7, 9; draws with 8
    mv = move_values(referee, game, state)
    expected = {a: ("win" if -referee.solve(game.play(state, a)).value > 0 else "draw", False)
                for a in game.legal_actions(state)}
    assert outcome_classes(mv) == expected and {k for k, _ in expected.values()} == {"win", "draw"}
    dots = MoveValues("margin", {0: 2, 1: 2, 2: 1, 3: 0, 4: -1, 5: -3}, plies=4)
    assert outcome_classes(dots) == {0: ("win", True), 1: ("win", True), 2: ("win", False), 3: ("draw", False),
                                     4: ("loss", True), 5: ("loss", False)}
    assert "Best-margin (“optimal”) moves: 0, 1." in summary_text(game_for("dots_and_boxes_2x2"), dots)


def test_one_point_is_singular():
    game = game_for("connect4")
    mv = MoveValues("score", {0: 1, 1: 0, 2: -1}, plies=12)
    assert "1 point lost" in judge(game, mv, 1)["text"] and "2 points lost" in judge(game, mv, 2)["text"]
