"""Alpha-beta players: the seeds' exact semantics checked against literal re-implementations, and their strength.

The reference searches here are deliberately naive (plain minimax, no pruning, heuristics recomputed from
board arrays), so they share no code with the kernels they check.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from helpers import reachable_states

from boardrl.agents.alphabeta import NO_MOVE, AlphaBetaAgent, GenericSearch, MaxMinAgent, Seed000AlphaBetaAgent
from boardrl.agents.base import RandomAgent
from boardrl.games import make_game
from boardrl.errors import BoardRLError

TTT = make_game("tictactoe")
C4 = make_game("connect4")


def all_ttt_states():
    return reachable_states(TTT)


TTT_STATES = all_ttt_states()
TTT_LIVE = [s for s in TTT_STATES if not TTT.is_over(s)]


def random_positions(game, n, seed, max_plies, min_plies=0):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = game.initial_state()
        for _ in range(rng.integers(min_plies, max_plies + 1)):
            if game.is_over(s):
                break
            s = game.play(s, int(rng.choice(game.legal_actions(s))))
        if not game.is_over(s):
            out.append(s)
    return out


def play(game, agents, rng, start=None):
    s = game.initial_state() if start is None else start
    while not game.is_over(s):
        s = game.play(s, agents[game.to_move(s)].act(s, rng))
    return game.returns(s)


def results(game, agent, opponent, n, seed):
    """(wins, draws, losses) of ``agent`` over ``n`` games, seats alternating."""
    rng = np.random.default_rng(seed)
    w = d = l = 0
    for i in range(n):
        seat = i % 2
        r = play(game, (agent, opponent) if seat == 0 else (opponent, agent), rng)[seat]
        w, d, l = w + (r > 0), d + (r == 0), l + (r < 0)
    return w, d, l


# ---------------------------------------------------------------------------------------------- seed 000
@functools.lru_cache(maxsize=None)
def ttt_value(state) -> int:
    """Plain minimax value (+1/0/-1) for the player to move."""
    if TTT.is_over(state):
        return int(TTT.returns(state)[TTT.to_move(state)])
    return max(-ttt_value(TTT.play(state, a)) for a in TTT.legal_actions(state))


def test_seed000_plays_the_first_optimal_move_on_every_state():
    agent = Seed000AlphaBetaAgent(TTT)
    rngs = [np.random.default_rng(1), np.random.default_rng(2)]
    for s in TTT_LIVE:
        values = [-ttt_value(TTT.play(s, a)) for a in TTT.legal_actions(s)]
        first_best = TTT.legal_actions(s)[int(np.argmax(values))]
        assert [agent.act(s, r) for r in rngs] == [first_best, first_best], s


def test_seed000_python_path_is_the_same_algorithm():
    agent = Seed000AlphaBetaAgent(TTT)
    rng = np.random.default_rng(0)
    for s in TTT_LIVE[::40]:
        move, value = agent.search(s, 0, -math.inf, math.inf)
        assert move == agent.act(s, rng)
        assert value == ttt_value(s)


def test_seed000_never_loses_to_random_in_either_seat():
    w, d, l = results(TTT, Seed000AlphaBetaAgent(TTT), RandomAgent(TTT), 200, seed=7)
    assert l == 0 and w > 150


# ---------------------------------------------------------------------------------------------- seed 002
def ttt_seed_heuristic(state, player) -> int:
    """Seed 002's tic-tac-toe line heuristic written from its description over a 3x3 array."""
    board = np.zeros(9, dtype=int)
    for c in range(9):
        board[c] = 1 if (state.x >> c) & 1 else (2 if (state.o >> c) & 1 else 0)
    b = board.reshape(3, 3)
    lines = [*b, *b.T, b.diagonal(), np.fliplr(b).diagonal()]
    me, opp = player + 1, 2 - player
    score = 0
    for line in lines:
        n_me, n_opp = int((line == me).sum()), int((line == opp).sum())
        if n_me and not n_opp:
            score += 10 ** (n_me - 1)
        elif n_opp and not n_me:
            score -= 10 ** (n_opp - 1)
    return score


def c4_seed_heuristic(state, player) -> int:
    """Seed 002's Connect 4 window heuristic written from its description over a 6x7 array."""
    p0 = state.current if state.plies % 2 == 0 else state.current ^ state.mask
    p1 = state.mask ^ p0
    b = np.zeros((6, 7), dtype=int)
    for c in range(7):
        for r in range(6):
            bit = 1 << (7 * c + r)
            b[r, c] = 1 if p0 & bit else (2 if p1 & bit else 0)
    me, opp = player + 1, 2 - player
    score = 0
    for r in range(6):
        for c in range(7):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (-1, 1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if not all(0 <= y < 6 and 0 <= x < 7 for y, x in cells):
                    continue
                vals = [b[y, x] for y, x in cells]
                n_me, n_opp = vals.count(me), vals.count(opp)
                if n_me and not n_opp:
                    score += 10**n_me
                elif n_opp and not n_me:
                    score -= 10**n_opp
    return score


def seed_maxmin_scores(game, state, max_depth, heuristic):
    """Seed 002's MaxMin as described: each root action by a minimiser-first search, root-player heuristic."""
    root = game.to_move(state)

    def maxmin(s, is_max, depth):
        if game.is_over(s) or depth >= max_depth:
            return heuristic(s, root)
        vals = [maxmin(game.play(s, a), not is_max, depth + 1) for a in game.legal_actions(s)]
        return max(vals) if is_max else min(vals)

    return {a: maxmin(game.play(state, a), False, 0) for a in game.legal_actions(state)}


def kernel_dict(scores):
    return {int(a): int(scores[a]) for a in np.flatnonzero(scores != NO_MOVE)}


def test_maxmin_ttt_scores_equal_the_seed_search():
    agent = MaxMinAgent(TTT)
    assert agent.max_depth == 4
    for s in TTT_LIVE[::113]:
        assert kernel_dict(agent.root_scores(s)) == seed_maxmin_scores(TTT, s, 4, ttt_seed_heuristic), s


@pytest.mark.parametrize("max_depth", [0, 1, 2])
def test_maxmin_c4_scores_equal_the_seed_search(max_depth):
    agent = MaxMinAgent(C4, max_depth=max_depth)
    for s in random_positions(C4, 12, seed=max_depth, max_plies=30):
        assert kernel_dict(agent.root_scores(s)) == seed_maxmin_scores(C4, s, max_depth, c4_seed_heuristic), s


def test_maxmin_cheap_root_window_finds_exactly_the_tied_best_moves():
    for game, states in ((TTT, TTT_LIVE), (C4, random_positions(C4, 150, seed=9, max_plies=30))):
        agent = MaxMinAgent(game)
        for s in states:
            exact, cheap = agent.root_scores(s, exact=True), agent.root_scores(s, exact=False)
            best = exact.max()
            assert np.array_equal(exact == best, cheap == best), s
            assert np.all(cheap[exact < best] < best)


def test_maxmin_breaks_root_ties_at_random():
    s = TTT.replay("456")  # O to move: all six moves score 100 for O
    scores = MaxMinAgent(TTT).root_scores(s)
    legal = TTT.legal_actions(s)
    assert len(legal) == 6 and all(scores[a] == 100 for a in legal)
    agent = MaxMinAgent(TTT)
    picks = [agent.act(s, np.random.default_rng(seed)) for seed in range(60)]
    assert set(picks) == set(legal)  # each of 6 has chance (5/6)^60 < 2e-5 of never being drawn
    assert agent.act(s, np.random.default_rng(1)) != agent.act(s, np.random.default_rng(2))


def test_maxmin_ttt_never_loses_to_random():
    """600 games, 0 losses: a loss rate of 0.5% or more would show a loss with probability > 95%."""
    w, d, l = results(TTT, MaxMinAgent(TTT), RandomAgent(TTT), 600, seed=3)
    assert l == 0 and w > 450


def test_maxmin_c4_beats_random():
    """>= 95 wins in 100 games (measured: 200 of 200)."""
    agent = MaxMinAgent(C4)
    assert agent.max_depth == 5
    w, d, l = results(C4, agent, RandomAgent(C4), 100, seed=4)
    assert w >= 95


# ---------------------------------------------------------------------------------------------- generic
@pytest.mark.parametrize("evaluation", ["line", "utility"])
def test_kernels_equal_the_python_search(evaluation):
    for game, depth in ((TTT, 9), (C4, 4)):
        agent = AlphaBetaAgent(game, depth=depth, evaluation=evaluation)
        generic = AlphaBetaAgent(game, depth=depth, evaluation=lambda g, s, p: agent.evaluate(g, s, p))
        assert agent._kernel == game.game_id and generic._kernel is None
        for s in random_positions(game, 15, seed=1, max_plies=25):
            k, p = kernel_dict(agent.root_scores(s)), generic.root_scores(s)
            assert k == {a: int(v) for a, v in p.items()}, s


def test_alphabeta_takes_the_fastest_win():
    s = C4.replay("1212127")  # O to move wins at once in column 2
    agent = AlphaBetaAgent(C4, depth=5, evaluation="utility")
    scores = agent.root_scores(s)
    assert int(np.argmax(scores)) == 1
    assert agent.act(s, np.random.default_rng(0)) == 1


@functools.lru_cache(maxsize=None)
def dots_value(state) -> float:
    """Exact minimax value for the player to move at Dots and Boxes 2x2, extra turns included."""
    g = DOTS
    if g.is_over(state):
        return g.returns(state)[g.to_move(state)]
    p = g.to_move(state)
    vals = []
    for a in g.legal_actions(state):
        t = g.play(state, a)
        vals.append(dots_value(t) if g.to_move(t) == p else -dots_value(t))
    return max(vals)


DOTS = make_game("dots_and_boxes_2x2")


def test_python_search_handles_extra_turns():
    search = AlphaBetaAgent(DOTS, depth=12, evaluation="utility")
    for s in random_positions(DOTS, 25, seed=2, max_plies=8, min_plies=5):
        scores = search.root_scores(s)
        p = DOTS.to_move(s)
        for a, v in scores.items():
            t = DOTS.play(s, a)
            exact = dots_value(t) if DOTS.to_move(t) == p else -dots_value(t)
            assert np.sign(v) == exact, (s, a)


def test_generic_search_root_window_is_exact_for_the_best():
    search = GenericSearch(C4, lambda s, d: float(C4.is_over(s)) * -1.0)
    for s in random_positions(C4, 10, seed=3, max_plies=30):
        exact, cheap = search.root_scores(s, 3, exact=True), search.root_scores(s, 3, exact=False)
        best = max(exact.values())
        assert {a for a, v in exact.items() if v == best} == {a for a, v in cheap.items() if v == best}


def test_errors():
    with pytest.raises(BoardRLError, match="depth must be an integer >= 1"):
        AlphaBetaAgent(TTT, depth=0)
    with pytest.raises(BoardRLError, match="tiebreak must be 'random' or 'first'"):
        AlphaBetaAgent(TTT, tiebreak="last")
    with pytest.raises(BoardRLError, match="unknown evaluation 'sols' for tictactoe; choices: utility, line"):
        AlphaBetaAgent(TTT, evaluation="sols")
    with pytest.raises(BoardRLError, match="MaxMin exists for tictactoe and connect4, not conniption"):
        MaxMinAgent(make_game("conniption"))
    with pytest.raises(BoardRLError, match="max_depth must be an integer >= 0"):
        MaxMinAgent(TTT, max_depth=-1)
    with pytest.raises(BoardRLError, match="the game is over"):
        MaxMinAgent(TTT).act(TTT.replay("14253"), np.random.default_rng(0))
