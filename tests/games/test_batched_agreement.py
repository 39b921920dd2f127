"""Scalar and batched rules must agree move by move on 10,000 random games per game (DESIGN: one kernel)."""

import numpy as np
import pytest

from boardrl.games import GAME_IDS, make_game
from boardrl.games.base import random_legal_actions

N_GAMES = 10_000


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_scalar_and_batched_agree_on_random_games(game_id):
    game = make_game(game_id)
    rng = np.random.default_rng(7)
    batch = game.batched(N_GAMES, auto_reset=False)
    scalar = [game.initial_state()] * N_GAMES
    for _ in range(200):  # longer than any game here (conniption: 3 stage-moves x 42 placements at most)
        mask = batch.legal_mask()
        live = mask.any(axis=1)
        assert np.array_equal(live, np.array([not game.is_over(s) for s in scalar]))
        if not live.any():
            break
        for i in np.flatnonzero(live)[:50]:  # spot-check masks and players; full check of states below
            assert np.array_equal(mask[i], game.legal_moves(scalar[i]))
        assert np.array_equal(batch.to_move()[live], [game.to_move(scalar[i]) for i in np.flatnonzero(live)])
        actions = random_legal_actions(mask, rng)
        finished, rets = batch.step(actions)
        for i in np.flatnonzero(live):
            scalar[i] = game.play(scalar[i], int(actions[i]))
            if finished[i]:
                assert game.is_over(scalar[i])
                assert tuple(rets[i]) == game.returns(scalar[i])
        assert all(batch.state(i) == scalar[i] for i in range(N_GAMES))
    assert not batch.legal_mask().any()


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_auto_reset_restarts_finished_games(game_id):
    game = make_game(game_id)
    rng = np.random.default_rng(1)
    batch = game.batched(64, auto_reset=True)
    ended = 0
    for _ in range(400):
        finished, rets = batch.step(random_legal_actions(batch.legal_mask(), rng))
        for i in np.flatnonzero(finished):
            final = batch.final_states[i]
            assert game.is_over(game.state_type(*map(int, final)))
            assert batch.state(i) == game.initial_state()
        ended += int(finished.sum())
        assert batch.legal_mask().any(axis=1).all()
    assert ended > 64


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_batched_illegal_action_is_refused_and_nothing_applied(game_id):
    from boardrl.games import IllegalMoveError

    game = make_game(game_id)
    batch = game.batched(4, auto_reset=False)
    before = batch.states.copy()
    acts = random_legal_actions(batch.legal_mask(), np.random.default_rng(0))
    acts[2] = game.num_actions  # out of range
    with pytest.raises(IllegalMoveError, match="row 2"):
        batch.step(acts)
    assert np.array_equal(batch.states, before)
