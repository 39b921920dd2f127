"""SemiRandom and Tactical: the kernels against definitions written independently over the Game interface.

Every kernel picks the floor(u*k)-th of its k candidate moves, so feeding u = (i + 0.5) / 9 for i = 0..8 makes it
return every candidate at least once (k <= 9): the set of moves it can play is then compared exactly with the set
the definition allows.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import reachable_states

from boardrl.agents.base import RandomAgent
from boardrl.agents.simple import (
    SemiRandomAgent,
    TacticalAgent,
    c4_semirandom,
    c4_tactical,
    nth_set_bit,
    ttt_semirandom,
    ttt_tactical,
)
from boardrl.games import make_game
from boardrl.errors import BoardRLError

US = [(i + 0.5) / 9 for i in range(9)]
KERNELS = {"tictactoe": (ttt_semirandom, ttt_tactical), "connect4": (c4_semirandom, c4_tactical)}


def all_ttt_states():
    game = make_game("tictactoe")
    return game, reachable_states(game)


def random_c4_states(n: int, seed: int):
    game = make_game("connect4")
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = game.initial_state()
        for _ in range(rng.integers(0, 40)):
            if game.is_over(s):
                break
            s = game.play(s, int(rng.choice(game.legal_actions(s))))
        if not game.is_over(s):
            out.append(s)
    return game, out


def c4_wins_for(game, state, player):
    """Columns where ``player`` would complete a four now, found by playing them through the Game interface.

    For the opponent of the side to move we hand the turn over (same stones, one more ply: the Tromp state's
    parity decides who moves), which is legal input for ``play`` as long as the game is not over.
    """
    if game.to_move(state) != player:
        state = type(state)(state.current ^ state.mask, state.mask, state.plies + 1)
    return [a for a in game.legal_actions(state) if game.returns(game.play(state, a))[player] > 0]


def ttt_threats(state, player):
    """Empty cells that complete a line for ``player``."""
    from boardrl.games.tictactoe import LINES

    own = state.x if player == 0 else state.o
    empty = [c for c in range(9) if not ((state.x | state.o) >> c) & 1]
    return [c for c in empty if any((own | (1 << c)) & int(L) == int(L) for L in LINES)]


def expected_sets(game, state):
    """(SemiRandom's possible moves, Tactical's possible moves) by their definitions."""
    me = game.to_move(state)
    legal = game.legal_actions(state)
    if game.game_id == "tictactoe":
        wins = [a for a in legal if game.returns(game.play(state, a))[me] > 0]
        blocks = ttt_threats(state, 1 - me)
    else:
        wins = c4_wins_for(game, state, me)
        blocks = c4_wins_for(game, state, 1 - me)
    semi = {wins[0]} if wins else set(legal)
    tact = set(wins) if wins else set(blocks) if blocks else set(legal)
    return semi, tact


def test_nth_set_bit_picks_each_set_bit_in_order():
    bits = 0b1010010
    assert [nth_set_bit(bits, u) for u in (0.0, 0.34, 0.67, 0.999)] == [1, 4, 6, 6]
    assert nth_set_bit(0, 0.5) == -1


def test_ttt_kernels_match_definitions_on_all_5478_states():
    game, states = all_ttt_states()
    assert len(states) == 5478
    for s in states:
        if game.is_over(s):
            assert ttt_semirandom(*s, 0.5) == -1 and ttt_tactical(*s, 0.5) == -1
            continue
        semi, tact = expected_sets(game, s)
        assert {ttt_semirandom(*s, u) for u in US} == semi, s
        assert {ttt_tactical(*s, u) for u in US} == tact, s


def test_c4_kernels_match_definitions_on_random_positions():
    game, states = random_c4_states(1200, seed=5)
    n_win = n_block = 0
    for s in states:
        semi, tact = expected_sets(game, s)
        assert {c4_semirandom(*s, u) for u in US} == semi, s
        assert {c4_tactical(*s, u) for u in US} == tact, s
        n_win += len(semi) == 1 and len(game.legal_actions(s)) > 1
        n_block += tact != semi
    assert n_win > 40 and n_block > 40  # the sample really exercises both rules


@pytest.mark.parametrize("game_id", ["tictactoe", "connect4"])
@pytest.mark.parametrize("cls", [SemiRandomAgent, TacticalAgent])
def test_act_batch_equals_act_row_by_row(game_id, cls):
    game = make_game(game_id)
    agent = cls(game)
    assert agent.batched
    rng = np.random.default_rng(3)
    batch = game.batched(500, auto_reset=False)
    for _ in range(6):
        batch.step(RandomAgent(game).act_batch(batch.states, rng))
    live = batch.legal_mask().any(axis=1)
    u_rng, act_rng = np.random.default_rng(11), np.random.default_rng(11)
    moves = agent.act_batch(batch.states, act_rng)
    u = u_rng.random(batch.n)
    one = KERNELS[game_id][0 if cls is SemiRandomAgent else 1]
    assert np.array_equal(moves, [one(*row, u[i]) for i, row in enumerate(batch.states)])
    assert np.all(moves[~live] == -1)
    mask = batch.legal_mask()
    assert all(mask[i, moves[i]] for i in np.flatnonzero(live))


def test_tactical_connect4_wins_blocks_and_randomises():
    game = make_game("connect4")
    agent = TacticalAgent(game)
    rng = np.random.default_rng(0)
    both = game.replay("1212127")  # O to move; O completes column 2, X threatens column 1: winning comes first
    assert game.to_move(both) == 1
    assert {agent.act(both, rng) for _ in range(50)} == {1}
    quiet = game.replay("2233")  # nothing to win or block: uniform over the 7 columns
    assert len({agent.act(quiet, rng) for _ in range(200)}) == 7
    fork = game.replay("44553")  # X has 3-4-5 on the bottom row, open at columns 2 and 6: O blocks either
    assert sorted({agent.act(fork, rng) for _ in range(100)}) == [1, 5]
    semi = SemiRandomAgent(game)
    assert {semi.act(fork, rng) for _ in range(200)} == set(range(7))  # SemiRandom never blocks


def test_semirandom_generic_path_on_dots_and_boxes():
    game = make_game("dots_and_boxes_1x1")
    agent = SemiRandomAgent(game)
    assert not agent.batched
    rng = np.random.default_rng(0)
    s = game.replay("0 1 2")  # three walls: the fourth wins the only box
    assert {agent.act(s, rng) for _ in range(20)} == {3}
    assert {agent.act(game.initial_state(), rng) for _ in range(200)} == {0, 1, 2, 3}


def test_tactical_beats_random_at_connect4_in_batch():
    """2,000 games, seats alternating: >= 95% wins (measured 96.05% +- 0.27% over 20,000 games)."""
    game = make_game("connect4")
    tactical, rand = TacticalAgent(game), RandomAgent(game)
    n = 2000
    rng = np.random.default_rng(2024)
    batch = game.batched(n, auto_reset=False)
    seat = np.arange(n) % 2
    result = np.zeros(n)
    while batch.legal_mask().any():
        mine, theirs = tactical.act_batch(batch.states, rng), rand.act_batch(batch.states, rng)
        acts = np.where(batch.to_move() == seat, mine, theirs)
        finished, rets = batch.step(acts)
        idx = np.flatnonzero(finished)
        result[idx] = rets[idx, seat[idx]]
    assert (result > 0).mean() >= 0.95
    for s in (0, 1):
        assert (result[seat == s] > 0).mean() >= 0.93


def test_errors():
    ttt = make_game("tictactoe")
    with pytest.raises(BoardRLError, match="not defined here for dots_and_boxes_2x2; games: tictactoe, connect4"):
        TacticalAgent(make_game("dots_and_boxes_2x2"))
    over = ttt.replay("14253")
    with pytest.raises(BoardRLError, match="game is over"):
        TacticalAgent(ttt).act(over, np.random.default_rng(0))
    with pytest.raises(BoardRLError, match="game is over"):
        SemiRandomAgent(ttt).act(over, np.random.default_rng(0))
    with pytest.raises(BoardRLError, match="expected a TicTacToeState"):
        SemiRandomAgent(ttt).act((0, 0, 0), np.random.default_rng(0))
