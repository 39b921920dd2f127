"""Optimal-move rate and reproducible position sets, on tic-tac-toe."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from helpers import reachable_states

from boardrl.agents.base import Agent, RandomAgent
from boardrl.evaluate.optimal_rate import optimal_move_rate, position_set
from boardrl.games import make_game
from boardrl.errors import BoardRLError
from boardrl.solvers.base import Referee, Verdict

TTT = make_game("tictactoe")
Z999 = 3.2905267314919255


@lru_cache(maxsize=None)
def _negamax(state) -> int:
    if TTT.is_over(state):
        r = TTT.returns(state)[TTT.to_move(state)]
        return int(r)
    return max(-_negamax(TTT.play(state, m)) for m in TTT.legal_actions(state))


class MinimaxReferee(Referee):
    """A plain, independent minimax referee, so these tests stand on their own."""

    def solve(self, state) -> Verdict:
        if TTT.is_over(state):
            return Verdict(_negamax(state), ())
        value = _negamax(state)
        return Verdict(value, tuple(m for m in TTT.legal_actions(state) if -_negamax(TTT.play(state, m)) == value))


REF = MinimaxReferee(TTT)


class Oracle(Agent):
    """Plays a random optimal move (what the `perfect` agent does)."""

    def act(self, state, rng):
        opt = REF.solve(state).optimal_moves
        return int(opt[rng.integers(len(opt))])


class ScalarRandom(RandomAgent):
    batched = False


def _all_live_states() -> list:
    return [s for s in reachable_states(TTT) if not TTT.is_over(s)]


def test_local_referee_knows_tictactoe():
    assert REF.solve(TTT.initial_state()).value == 0
    assert set(REF.solve(TTT.initial_state()).optimal_moves) == set(range(9))  # every opening keeps the draw
    assert REF.solve(TTT.replay("1425")).optimal_moves == (2,)  # X must complete 1-2-3 (cell 3)


def test_oracle_scores_one():
    positions = position_set(TTT, 300, seed=1)
    res = optimal_move_rate(Oracle(TTT), REF, positions, np.random.default_rng(0))
    assert (res.rate, res.n, res.optimal) == (1.0, 300, 300)
    assert res.ci[1] == 1.0 and res.ci[0] == pytest.approx(300 / (300 + 1.959963984540054**2))


def test_library_perfect_agent_scores_one_with_the_library_referee():
    from boardrl.agents import make_agent
    from boardrl.solvers.registry import make_referee

    positions = position_set(TTT, 500, seed=2)
    referee = make_referee(TTT)
    res = optimal_move_rate(make_agent(TTT, "perfect"), referee, positions, np.random.default_rng(1))
    assert (res.rate, res.n) == (1.0, 500)
    # and the library referee agrees with the independent minimax one on every position of the set
    assert all(set(referee.solve(p).optimal_moves) == set(REF.solve(p).optimal_moves) for p in positions)


@pytest.mark.parametrize("agent_cls", [RandomAgent, ScalarRandom])
def test_random_scores_the_exact_expected_share(agent_cls):
    positions = sorted(_all_live_states())  # all 4,520 unfinished reachable positions
    assert len(positions) == 4520
    shares = np.array([len(REF.solve(p).optimal_moves) / TTT.legal_moves(p).sum() for p in positions])
    expected = shares.mean()
    sd = math.sqrt((shares * (1 - shares)).sum()) / len(positions)  # sum of independent Bernoullis
    res = optimal_move_rate(agent_cls(TTT), REF, positions, np.random.default_rng(4))
    assert res.n == 4520
    assert abs(res.rate - expected) <= Z999 * sd
    assert res.ci[0] < res.rate < res.ci[1]


def test_position_set_is_reproducible_distinct_and_live():
    a = position_set(TTT, 200, seed=7)
    assert a == position_set(TTT, 200, seed=7)
    assert a != position_set(TTT, 200, seed=8)
    assert len(set(a)) == 200 and not any(TTT.is_over(p) for p in a)


def test_position_set_plies_and_filter():
    exact = position_set(TTT, 50, seed=0, plies=4)
    assert all(bin(p.x).count("1") + bin(p.o).count("1") == 4 for p in exact)
    ranged = position_set(TTT, 100, seed=0, plies=(2, 3))
    assert {bin(p.x | p.o).count("1") for p in ranged} == {2, 3}
    x_centre = position_set(TTT, 20, seed=0, plies=3, where=lambda p: p.x >> 4 & 1)
    assert all(p.x >> 4 & 1 for p in x_centre)


def test_position_set_too_few_distinct_positions_is_an_error():
    assert len(position_set(TTT, 9, seed=0, plies=1)) == 9  # exactly nine one-ply positions
    with pytest.raises(BoardRLError, match="found only 9 distinct positions"):
        position_set(TTT, 10, seed=0, plies=1)
    with pytest.raises(BoardRLError, match="plies must be"):
        position_set(TTT, 5, seed=0, plies=(3, 2))


def test_bad_positions_are_refused():
    with pytest.raises(BoardRLError, match="at least one position"):
        optimal_move_rate(RandomAgent(TTT), REF, [], np.random.default_rng(0))
    with pytest.raises(BoardRLError, match="position 0 is already over"):
        optimal_move_rate(RandomAgent(TTT), REF, [TTT.replay("14253")], np.random.default_rng(0))
