"""PerfectAgent: a uniform choice among the referee's optimal moves, checked with a stand-in referee and with
the real referees of tic-tac-toe, Dots and Boxes 2x2 and Connect 4."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from boardrl.agents.base import RandomAgent
from boardrl.agents.perfect import PerfectAgent
from boardrl.games import make_game
from boardrl.errors import BoardRLError
from boardrl.solvers.base import Referee, Verdict

TTT = make_game("tictactoe")


@lru_cache(maxsize=None)
def ttt_value(s) -> int:
    if TTT.is_over(s):
        return int(TTT.returns(s)[TTT.to_move(s)])
    return max(-ttt_value(TTT.play(s, a)) for a in TTT.legal_actions(s))


class MinimaxReferee(Referee):
    """A stand-in referee from plain minimax, so the agent's logic is tested without any solver module."""

    def solve(self, state):
        moves = self.game.legal_actions(state)
        v = ttt_value(state)
        return Verdict(value=v, optimal_moves=tuple(a for a in moves if -ttt_value(self.game.play(state, a)) == v))


def play(game, agents, rng, start=None):
    s = game.initial_state() if start is None else start
    while not game.is_over(s):
        s = game.play(s, agents[game.to_move(s)].act(s, rng))
    return s


def test_draws_uniformly_among_all_optimal_moves():
    agent = PerfectAgent(TTT, referee=MinimaxReferee(TTT))
    s = TTT.replay("1")  # O to move: only the centre draws
    assert {agent.act(s, np.random.default_rng(i)) for i in range(30)} == {4}
    start = TTT.initial_state()  # every first move draws
    counts = np.bincount([agent.act(start, np.random.default_rng(i)) for i in range(900)], minlength=9)
    assert counts.min() >= 70  # 100 expected per cell; 70 is more than 3 standard deviations below


def test_errors():
    agent = PerfectAgent(TTT, referee=MinimaxReferee(TTT))
    with pytest.raises(BoardRLError, match="the game is over"):
        agent.act(TTT.replay("14253"), np.random.default_rng(0))
    with pytest.raises(BoardRLError, match="expected a TicTacToeState"):
        agent.act(make_game("connect4").initial_state(), np.random.default_rng(0))
    with pytest.raises(BoardRLError, match="no referee for conniption"):
        PerfectAgent(make_game("conniption")).act(make_game("conniption").initial_state(), np.random.default_rng(0))


def test_tictactoe_never_loses_to_random_and_draws_itself():
    """200 games vs random (100 per seat): 0 losses; 20 self-play games: all draws."""
    perfect, rand = PerfectAgent(TTT), RandomAgent(TTT)
    rng = np.random.default_rng(8)
    for i in range(200):
        seat = i % 2
        end = play(TTT, (perfect, rand) if seat == 0 else (rand, perfect), rng)
        assert TTT.returns(end)[seat] >= 0
    for _ in range(20):
        assert TTT.returns(play(TTT, (perfect, perfect), rng)) == (0.0, 0.0)


def test_dots_and_boxes_2x2_first_player_wins_by_two():
    game = make_game("dots_and_boxes_2x2")
    perfect, rand = PerfectAgent(game), RandomAgent(game)
    rng = np.random.default_rng(1)
    for _ in range(10):
        assert game.score_margin(play(game, (perfect, perfect), rng)) == 2
    for _ in range(20):
        assert game.returns(play(game, (perfect, rand), rng))[0] == 1.0


def test_connect4_converts_a_won_position_against_random():
    game = make_game("connect4")
    perfect, rand = PerfectAgent(game), RandomAgent(game)
    start = game.replay("6542311126574576")  # 16 plies, X to move; the referee says X wins, only by column 3
    verdict = perfect.referee.solve(start)
    assert verdict.value == 1 and verdict.optimal_moves == (2,)
    rng = np.random.default_rng(2)
    for _ in range(4):
        assert game.returns(play(game, (perfect, rand), rng, start=start))[0] == 1.0
