"""UCT / MCTS-solver: strength, tactics, proofs, determinism, kernel = generic Python path on every game, kernels
found by game class, and a game of more than 63 actions (several untried-action words a node)."""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import pytest

from boardrl.agents import mcts
from boardrl.agents.base import RandomAgent
from boardrl.agents.mcts import MCTSAgent, next_uniform
from boardrl.games import GAME_IDS, make_game
from boardrl.games.base import Game
from boardrl.games.tictactoe import TicTacToe
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
    from boardrl.solvers.registry import make_referee

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


# ---------------------------------------------------------------------------------------------- kernels by class
class PlainTicTacToe(TicTacToe):
    """A subclass registers nothing of its own: it inherits tic-tac-toe's kernels."""


def test_a_subclass_inherits_its_base_kernels_and_builds_the_same_tree():
    s = TTT.replay("15")
    sub = MCTSAgent(PlainTicTacToe(), simulations=300, rollout="tactical")
    ref = MCTSAgent(TTT, simulations=300, rollout="tactical")
    assert sub._kernel is not None
    assert sub.act(s, np.random.default_rng(2)) == ref.act(s, np.random.default_rng(2))
    for x, y in zip(sub.last_tree, ref.last_tree):
        assert np.array_equal(x, y)


def test_the_nearest_registered_class_wins(monkeypatch):
    monkeypatch.setattr(mcts, "_PLUGINS", dict(mcts._PLUGINS))
    mcts.register_kernels(PlainTicTacToe, mcts._PLUGINS[TicTacToe].build, tactical=False)
    assert MCTSAgent(PlainTicTacToe())._kernel is not None
    with pytest.raises(BoardRLError, match="unknown rollout 'tactical' for tictactoe; choices: random"):
        MCTSAgent(PlainTicTacToe(), rollout="tactical")
    MCTSAgent(TTT, rollout="tactical")  # the base class keeps its own entry


# ---------------------------------------------------------------------------------------------- > 63 actions
class CellsState(NamedTuple):
    taken: int  # bit a: cell a claimed (a Python int: 100 bits)
    plies: int
    winner: int  # -1 none yet


class ManyCells(Game):
    """Toy game of 100 actions: players alternately claim a free cell; whoever claims cell 90 wins at once,
    otherwise the game is drawn after ``plies`` plies.  No kernels: MCTS runs it on the Python path."""

    game_id = "many_cells"
    num_actions = 100
    state_type = CellsState
    encoding_shape = (1, 1, 100)
    WIN = 90

    def __init__(self, plies: int) -> None:
        self.plies = plies

    def initial_state(self) -> CellsState:
        return CellsState(0, 0, -1)

    def legal_moves(self, state: CellsState) -> np.ndarray:
        if self.is_over(state):
            return np.zeros(self.num_actions, dtype=bool)
        return np.array([not (state.taken >> a) & 1 for a in range(self.num_actions)])

    def _apply(self, state: CellsState, move: int) -> CellsState:
        winner = state.plies % 2 if move == self.WIN else -1
        return CellsState(state.taken | (1 << move), state.plies + 1, winner)

    def to_move(self, state: CellsState) -> int:
        return state.plies % 2

    def is_over(self, state: CellsState) -> bool:
        return state.winner >= 0 or state.plies >= self.plies

    def returns(self, state: CellsState) -> tuple[float, float]:
        if state.winner < 0:
            return (0.0, 0.0)
        return (1.0, -1.0) if state.winner == 0 else (-1.0, 1.0)

    def render(self, state: CellsState) -> str:
        return f"{state.taken:0100b}"

    def format_move(self, move: int) -> str:
        return str(move)

    def parse_move(self, text: str) -> int:
        return int(text)

    def batched(self, n, auto_reset=True):
        raise NotImplementedError

    def legal_mask_batch(self, states):
        raise NotImplementedError

    def to_move_batch(self, states):
        raise NotImplementedError

    def encode_batch(self, states):
        raise NotImplementedError


def test_more_than_63_actions_expand_in_the_stream_order_across_words():
    """One-ply game, 94 legal cells on both sides of bit 63: 94 simulations expand each exactly once, child i
    (node i + 1) being the floor(u*k)-th lowest untried cell for the i-th draw u of the search's stream."""
    game = ManyCells(plies=1)
    taken = [0, 5, 62, 63, 64, 99]
    start = CellsState(sum(1 << a for a in taken), 0, -1)
    legal = [a for a in range(100) if a not in taken]
    agent = MCTSAgent(game, simulations=len(legal))
    assert agent._kernel is None
    move = agent.act(start, np.random.default_rng(4))
    rs = np.array([np.random.default_rng(4).integers(0, 2**63)], dtype=np.uint64)
    untried, expected = list(legal), []
    for _ in legal:  # every child is terminal, so no rollout draws from the stream
        k = len(untried)
        expected.append(untried.pop(min(int(next_uniform(rs) * k), k - 1)))
    children = agent.last_tree[2]
    assert np.array_equal(children[0, expected], np.arange(1, len(legal) + 1))
    assert (children[0, taken] == -1).all()
    assert np.array_equal(agent.root_visits(), np.isin(np.arange(100), legal).astype(np.int64))
    assert move == ManyCells.WIN  # all visited once; the win has the higher mean


@pytest.mark.parametrize("kernel", [True, False])
def test_several_word_kernels_build_the_one_word_tree(kernel):
    """Nodes of tic-tac-toe forced to 3 untried words (the code path of games over 63 actions, compiled or not)
    build exactly the one-word tree: word 0 is the one-word bitmask, UNTRIED its count, the other words empty."""
    s = TTT.replay("1")
    one = MCTSAgent(TTT, simulations=500, solver=True, kernel=kernel)
    wide = MCTSAgent(TTT, simulations=500, solver=True, kernel=kernel)
    wide._words = 3
    assert one.act(s, np.random.default_rng(7)) == wide.act(s, np.random.default_rng(7))
    (i1, w1, c1), (i3, w3, c3) = one.last_tree, wide.last_tree
    assert np.array_equal(w1, w3) and np.array_equal(c1, c3)
    assert i1.shape[1] == mcts.MORE and i3.shape[1] == mcts.MORE + 3
    others = [j for j in range(mcts.MORE) if j != mcts.UNTRIED]
    assert np.array_equal(i1[:, others], i3[:, others])
    assert np.array_equal(i1[:, mcts.UNTRIED], i3[:, mcts.MORE]) and not i3[:, mcts.MORE + 1 :].any()
    assert i3[:, mcts.UNTRIED].tolist() == [bin(int(b)).count("1") for b in i1[:, mcts.UNTRIED]]


def test_solver_proves_the_win_at_cell_90_of_100():
    game = ManyCells(plies=3)
    agent = MCTSAgent(game, simulations=300, solver=True)
    assert agent.act(game.initial_state(), np.random.default_rng(0)) == ManyCells.WIN
    assert agent.root_proven() == 1
    assert agent.root_visits().sum() <= 100  # the root is proven once the winning cell is expanded
    with pytest.raises(BoardRLError, match="unknown rollout 'tactical' for many_cells; choices: random"):
        MCTSAgent(game, rollout="tactical")
