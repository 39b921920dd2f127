"""``Game.decided_values_batch``: the exact short-tactics values search leaves use (agents/puct.py,
``TacticalEvaluator``).  Connect 4's are checked against the exact solver on random positions; Conniption's
against the ``tactical`` agent's classes (the same questions asked action by action) and hand positions."""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.agents.conniption import tactical_classes
from boardrl.games import make_game
from boardrl.games.base import random_legal_actions
from boardrl.solvers.connect4 import Connect4Solver

C4 = make_game("connect4")
CONNIPTION = make_game("conniption")


def unfinished_rows(game, n: int, seed: int, min_plies: int = 0) -> np.ndarray:
    """``n`` unfinished rows of 64 randomly played games (a finished game restarts at once), collected from the
    ``min_plies``-th step on, so most rows are mid-game and some are openings of restarted games."""
    rng = np.random.default_rng(seed)
    env = game.batched(64)
    out, plies = [], 0
    while sum(len(r) for r in out) < n:
        env.step(random_legal_actions(env.legal_mask(), rng))
        plies += 1
        if plies >= min_plies:
            out.append(env.states.copy())
    return np.concatenate(out)[:n]


@pytest.mark.parametrize("moves,value", [
    ("", 0), ("44", 0), ("445566", 1),  # X completes 4-5-6-7 or 3-4-5-6 now
    ("44553", -1),                        # O faces X's open three on the bottom row: two threats
    ("1212123", 1),                       # O has three in column 2 and plays the fourth
])
def test_connect4_hand_positions(moves, value):
    assert C4.decided_values_batch(np.asarray([C4.replay(moves)]))[0] == value


def test_connect4_decided_values_agree_with_the_solver():
    """Every +1 is a win and every -1 a loss for the mover by exact search; both kinds occur in the sample."""
    rows = unfinished_rows(C4, 400, seed=3, min_plies=14)
    decided = C4.decided_values_batch(rows)
    assert {-1.0, 0.0, 1.0} <= set(decided.tolist())
    solver = Connect4Solver(book=False)
    for row, d in zip(rows, decided):
        if d != 0:
            assert np.sign(solver.score(*row)) == d, C4.render(C4.state_type(*row))


def test_conniption_decided_values_match_the_tactical_classes():
    """+1 exactly when some action starts a winning line; -1 exactly when no action is winning or safe."""
    rows = unfinished_rows(CONNIPTION, 600, seed=5, min_plies=24)
    decided = CONNIPTION.decided_values_batch(rows)
    assert {-1.0, 0.0, 1.0} <= set(decided.tolist())
    for row, d in zip(rows, decided):
        wins, safe, _ = tactical_classes(*row, CONNIPTION.seed_draw_rule)
        assert d == (1.0 if wins else -1.0 if not safe else 0.0)


def test_conniption_a_flip_then_place_threat_is_a_loss_for_the_side_that_cannot_stop_it():
    """X has turned column 4 into X X X O (bottom up): next turn X flips (O O.. on the bottom, three X on top
    with the cell above free) and places the fourth; nothing O does this turn stops both halves."""
    before = CONNIPTION.replay("n4n n4n n3n f3n n4n n5n")
    after = CONNIPTION.replay("n4f", start=before)
    assert CONNIPTION.decided_values_batch(np.asarray([before, after])).tolist() == [0.0, -1.0]


def test_games_without_a_check_say_none():
    for game_id in ("tictactoe", "dots_and_boxes_2x2"):
        game = make_game(game_id)
        assert game.decided_values_batch(np.asarray([game.initial_state()])) is None
