"""UCT / MCTS-solver: strength, tactics, proofs, determinism, and kernel = generic Python path on every game."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from boardrl.agents.base import RandomAgent
from boardrl.agents.mcts import MCTSAgent
from boardrl.games import GAME_IDS, make_game
from boardrl.errors import BoardRLError

TTT = make_game("tictactoe")
C4 = make_game("connect4")


def play(game, agents, rng, start=None):
    s = game.initial_state() if start is None else start
    while not game.is_over(s):
        s = game.play(s, agents[game.to_move(s)].act(s, rng))
    return game.returns(s)


def test_mcts_1000_never_loses_to_random_at_tictactoe():
    """100 games, seats alternating: 0 losses (a loss rate of 3% or more would show one with probability 95%)."""
    agent, rand = MCTSAgent(TTT, simulations=1000), RandomAgent(TTT)
    rng = np.random.default_rng(17)
    losses = wins = 0
    for i in range(100):
        seat = i % 2
        r = play(TTT, (agent, rand) if seat == 0 else (rand, agent), rng)[seat]
        losses += r < 0
        wins += r > 0
    assert losses == 0 and wins >= 80


@pytest.mark.parametrize("solver", [False, True])
def test_finds_connect4_mate_in_one(solver):
    s = C4.replay("1212127")  # O to move: column 2 wins (X threatens column 1, which would only block)
    for seed in range(5):
        agent = MCTSAgent(C4, simulations=1000, solver=solver)
        assert agent.act(s, np.random.default_rng(seed)) == 1
    if solver:
        assert agent.root_proven() == 1


def test_solver_proves_a_connect4_double_threat_win_and_loss():
    win = C4.replay("4455")  # X to move: columns 3 or 6 make an open three on the bottom row
    agent = MCTSAgent(C4, simulations=5000, solver=True)
    move = agent.act(win, np.random.default_rng(0))
    assert agent.root_proven() == 1 and move in (2, 5)
    lost = C4.play(win, 2)  # O to move against X's open three: every move loses
    agent.act(lost, np.random.default_rng(0))
    assert agent.root_proven() == -1
    plain = MCTSAgent(C4, simulations=5000, solver=False)
    plain.act(win, np.random.default_rng(0))
    assert plain.root_proven() is None  # without the solver only terminal nodes are proven


@functools.lru_cache(maxsize=None)
def ttt_value(s) -> int:
    """Plain minimax value for the player to move."""
    if TTT.is_over(s):
        return int(TTT.returns(s)[TTT.to_move(s)])
    return max(-ttt_value(TTT.play(s, a)) for a in TTT.legal_actions(s))


@pytest.mark.parametrize("moves", ["1", "15", "51", "12", "19", "159", "1529", "5137", "123"])
def test_solver_proves_tictactoe_wins_and_draws(moves):
    s = TTT.replay(moves)
    agent = MCTSAgent(TTT, simulations=20000, solver=True)
    move = agent.act(s, np.random.default_rng(1))
    assert agent.root_proven() == ttt_value(s)
    assert -ttt_value(TTT.play(s, move)) == ttt_value(s)  # a proven root plays a value-keeping move


def test_solver_proofs_agree_with_the_connect4_referee():
    """Late random positions: every root the solver proves has the referee's value, and the move keeps it."""
    from boardrl.solvers.base import make_referee

    referee = make_referee(C4)
    agent = MCTSAgent(C4, simulations=3000, solver=True)
    rng = np.random.default_rng(0)
    tried = proved = 0
    while tried < 30:
        s = C4.initial_state()
        for _ in range(int(rng.integers(24, 34))):
            s = C4.play(s, int(rng.choice(C4.legal_actions(s))))
            if C4.is_over(s):
                break
        if C4.is_over(s):
            continue
        tried += 1
        move = agent.act(s, np.random.default_rng(tried))
        if agent.root_proven() is not None:
            verdict = referee.solve(s)
            assert agent.root_proven() == verdict.value
            assert move in verdict.optimal_moves
            proved += 1
    assert proved >= 20  # measured: 27 of 30


def test_visits_add_up_and_search_is_deterministic():
    s = C4.replay("4433")
    a, b = MCTSAgent(C4, simulations=777), MCTSAgent(C4, simulations=777)
    m1, m2 = a.act(s, np.random.default_rng(5)), b.act(s, np.random.default_rng(5))
    assert m1 == m2 and np.array_equal(a.root_visits(), b.root_visits())
    assert a.root_visits().sum() == 777
    assert int(np.argmax(a.root_visits())) == m1
    b.act(s, np.random.default_rng(6))
    assert not np.array_equal(a.root_visits(), b.root_visits())


@pytest.mark.parametrize("game_id", GAME_IDS)
@pytest.mark.parametrize("solver", [False, True])
def test_kernel_and_generic_python_search_build_the_same_tree(game_id, solver):
    game = make_game(game_id)
    rng = np.random.default_rng(3)
    s = game.initial_state()
    for _ in range(4):
        s = game.play(s, int(rng.choice(game.legal_actions(s))))
    fast = MCTSAgent(game, simulations=150, solver=solver)
    slow = MCTSAgent(game, simulations=150, solver=solver, kernel=False)
    assert fast._kernel is not None and slow._kernel is None
    assert fast.act(s, np.random.default_rng(9)) == slow.act(s, np.random.default_rng(9))
    for x, y in zip(fast.last_tree, slow.last_tree):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("game_id", ["dots_and_boxes_2x2", "conniption"])
def test_mcts_beats_random_at_other_games(game_id):
    game = make_game(game_id)
    agent, rand = MCTSAgent(game, simulations=300), RandomAgent(game)
    rng = np.random.default_rng(0)
    wins = sum(play(game, (agent, rand) if i % 2 == 0 else (rand, agent), rng)[i % 2] > 0 for i in range(20))
    assert wins >= 16


def test_tactical_rollouts_play_legal_games():
    agent = MCTSAgent(C4, simulations=200, rollout="tactical")
    rng = np.random.default_rng(1)
    r = [play(C4, (agent, RandomAgent(C4)), rng)[0] for _ in range(4)]
    assert all(v == 1.0 for v in r)


def test_errors():
    with pytest.raises(BoardRLError, match="simulations must be an integer >= 1"):
        MCTSAgent(TTT, simulations=0)
    with pytest.raises(BoardRLError, match="c must be a number >= 0"):
        MCTSAgent(TTT, c=-1.0)
    with pytest.raises(BoardRLError, match="solver must be true or false"):
        MCTSAgent(TTT, solver="yes")
    with pytest.raises(BoardRLError, match="unknown rollout 'greedy' for tictactoe; choices: random, tactical"):
        MCTSAgent(TTT, rollout="greedy")
    with pytest.raises(BoardRLError, match="unknown rollout 'tactical' for conniption; choices: random"):
        MCTSAgent(make_game("conniption"), rollout="tactical")
    with pytest.raises(BoardRLError, match="the game is over"):
        MCTSAgent(TTT).act(TTT.replay("14253"), np.random.default_rng(0))
    with pytest.raises(BoardRLError, match="no search yet"):
        MCTSAgent(TTT).root_visits()
