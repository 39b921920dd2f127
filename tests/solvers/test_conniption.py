"""Conniption forced wins within k turns (solvers/conniption.py): one turn agrees with the rules kernel's own
one-turn question, two turns with a plain AND-OR search written over ``Game.play``, and from the empty board
the first player forces a win within 5 of its turns and not within 4."""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.errors import BoardRLError
from boardrl.games import make_game
from boardrl.games.base import random_legal_actions
from boardrl.games.conniption import ConniptionState, turn_reaches
from boardrl.solvers.conniption import forced_win_turns, forced_win_within, forcing_moves

GAME = make_game("conniption")


def positions(n: int, seed: int, min_steps: int) -> list[ConniptionState]:
    """``n`` unfinished states of random play, every stage, from the ``min_steps``-th stage-move of the batch on."""
    rng = np.random.default_rng(seed)
    env = GAME.batched(32)
    out: list[ConniptionState] = []
    steps = 0
    while len(out) < n:
        env.step(random_legal_actions(env.legal_mask(), rng))
        steps += 1
        if steps >= min_steps:
            out += [ConniptionState(*(int(x) for x in row)) for row in env.states if row[7] == -1]
    return out[:n]


def plain_forces(state, me: int, turns: int) -> bool:
    """The same question by a direct reading of the rules through ``Game.play`` (slow, obviously right)."""
    if GAME.is_over(state):
        return GAME.winner(state) == me
    children = [GAME.play(state, a) for a in GAME.legal_actions(state)]
    if state.player != me:
        return all(plain_forces(c, me, turns) for c in children)
    return any(plain_forces(c, me, turns if (c.player == me or GAME.is_over(c)) else turns - 1)
               for c in children if c.player == me or GAME.is_over(c) or turns > 1)


def test_one_turn_is_the_rules_kernels_win_question():
    rows = positions(400, seed=1, min_steps=20)
    answers = []
    for s in rows:
        for me in (0, 1):
            ours = forced_win_within(GAME, s, me, 1)
            if s.player == me:
                assert ours == turn_reaches(*s, me, GAME.seed_draw_rule, np.bool_(False))
            answers.append(ours)
    assert 0 < sum(answers) < len(answers)  # both answers occur


def test_two_and_three_turns_agree_with_a_plain_search_over_play():
    rows = positions(80, seed=2, min_steps=20)
    answers = [forced_win_within(GAME, s, me, 2) for s in rows for me in (0, 1)]
    assert answers == [plain_forces(s, me, 2) for s in rows for me in (0, 1)]
    assert 0 < sum(answers) < len(answers)
    # three whole turns of the mover from the start of its turn, 4 stones in: the searches that take longest
    openings = [s for s in positions(400, seed=4, min_steps=12) if s.stage == 0][:16]
    answers = [forced_win_within(GAME, s, s.player, 3) for s in openings]
    assert answers == [plain_forces(s, s.player, 3) for s in openings]
    assert 0 < sum(answers) < len(answers)


def test_more_turns_never_lose_a_forced_win():
    for s in positions(60, seed=3, min_steps=30):
        within = [forced_win_within(GAME, s, s.player, k) for k in (1, 2, 3)]
        assert within == sorted(within)  # False ... False True ... True


def test_the_first_player_forces_a_win_within_five_turns_from_the_empty_board():
    start = GAME.initial_state()
    assert forced_win_turns(GAME, start, 0, 5) == 5
    # after a flip of the empty board (a flip spent) only the five inner columns keep the win
    assert forcing_moves(GAME, GAME.replay("f"), 5) == [1, 2, 3, 4, 5]
    assert forcing_moves(GAME, GAME.replay("n"), 5) == list(range(7))


def test_a_finished_game_answers_whether_the_player_won():
    won = GAME.replay("n1n n2n n1n n2n n1n n2n n1")  # X's fourth stone in column 1
    assert GAME.winner(won) == 0
    assert forced_win_within(GAME, won, 0, 1) and not forced_win_within(GAME, won, 1, 3)
    assert forcing_moves(GAME, won, 2) == []


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(BoardRLError, match="Conniption only"):
        forced_win_within(make_game("connect4"), make_game("connect4").initial_state(), 0, 1)
    with pytest.raises(BoardRLError, match="turns must be an integer >= 1"):
        forced_win_within(GAME, GAME.initial_state(), 0, 0)
    with pytest.raises(BoardRLError, match="player must be 0 or 1"):
        forced_win_within(GAME, GAME.initial_state(), 2, 1)
