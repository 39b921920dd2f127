"""benchmarks/tictactoe_exact_losses.py: the exact loss probability against ``perfect`` agrees with played games,
is 0 for a player that keeps the value, and refuses an agent that is not deterministic."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from boardrl.agents import make_agent
from boardrl.agents.base import Agent
from boardrl.evaluate.match import play_match
from boardrl.evaluate.stats import wilson_interval
from boardrl.games import make_game
from boardrl.solvers.tictactoe import TicTacToeReferee

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("tictactoe_exact_losses",
                                              ROOT / "benchmarks" / "tictactoe_exact_losses.py")
exact = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exact)

GAME = make_game("tictactoe")
REFEREE = TicTacToeReferee(GAME)


class LowestCell(Agent):
    """Always the lowest-numbered empty cell: deterministic, and beatable."""

    def act(self, state, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(GAME.legal_moves(state))[0])


class OpeningBlunder(Agent):
    """The lowest empty cell in answer to the opening stone, the referee's first optimal move everywhere else."""

    def act(self, state, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(GAME.legal_moves(state))
        if len(legal) == 8:
            return int(legal[0])
        return int(REFEREE.solve(state).optimal_moves[0])


class FirstOptimal(Agent):
    """The referee's first optimal move: deterministic and never loses value."""

    def act(self, state, rng: np.random.Generator) -> int:
        return int(REFEREE.solve(state).optimal_moves[0])


def test_loss_probability_by_hand_and_in_played_games():
    """Perfect opens uniformly among its 9 optimal (drawing) moves; the agent loses exactly after those openings
    where the lowest empty cell is not an optimal answer, so its loss probability as second is that count / 9
    (as first it never meets a one-stone board).  2,000 played games agree within their 99.9% Wilson interval."""
    agent = OpeningBlunder(GAME)
    start = GAME.initial_state()
    bad = [m for m in range(9)
           if min(set(range(9)) - {m}) not in REFEREE.solve(GAME.play(start, m)).optimal_moves]
    assert 0 < len(bad) < 9
    p, mistakes = exact.exact_losses(GAME, agent, REFEREE, 1)
    assert p == pytest.approx(len(bad) / 9)
    assert len(mistakes) == len(bad)
    assert exact.exact_losses(GAME, agent, REFEREE, 0) == (0.0, [])
    games = 2000
    result = play_match(GAME, agent, make_agent(GAME, "perfect"), games, seats="b_first", seed=11)
    lo, hi = wilson_interval(result.as_second.losses, games, 0.999)
    assert lo <= p <= hi, (p, result.as_second.losses)


def test_value_keeping_player_never_loses():
    agent = FirstOptimal(GAME)
    for seat in (0, 1):
        assert exact.exact_losses(GAME, agent, REFEREE, seat) == (0.0, [])


def test_lowest_cell_as_first_loses_for_sure_at_one_known_move():
    """X 0 (keeps the draw); perfect's only optimal reply is the centre; X 1 (still a draw); O must block at 2 and
    now threatens 2-4-6; X plays 3 instead of blocking at 6: the one value-losing move, and O wins every game."""
    p, mistakes = exact.exact_losses(GAME, LowestCell(GAME), REFEREE, 0)
    assert p == 1.0
    assert mistakes == [f"{GAME.format_moves([0, 4, 1, 2])} -> {GAME.format_move(3)}"]


def test_random_agent_is_refused():
    with pytest.raises(ValueError, match="not deterministic"):
        exact.exact_losses(GAME, make_agent(GAME, "random"), REFEREE, 0)


def test_seed_lists_and_ranges():
    assert exact._seeds("0-4") == [0, 1, 2, 3, 4]
    assert exact._seeds("0-2,7") == [0, 1, 2, 7]
    with pytest.raises(ValueError):
        exact._seeds("x")
