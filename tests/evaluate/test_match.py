"""The match runner: exact random-play statistics, determinism, seats, start positions, both paths."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from boardrl.agents.base import Agent, RandomAgent
from boardrl.evaluate import match
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.errors import BoardRLError
from boardrl.games.base import IllegalMoveError

TTT = make_game("tictactoe")
Z999 = 3.2905267314919255  # two-sided 99.9% normal quantile: each bound below fails by chance 1 time in 1000


class ScalarRandom(RandomAgent):
    """Random play forced onto the scalar path (same distribution as RandomAgent)."""

    batched = False


class FirstLegal(Agent):
    """Deterministic: the lowest legal action.  Makes seat bookkeeping checkable by hand."""

    def act(self, state, rng):
        return int(np.flatnonzero(self.game.legal_moves(state))[0])


class LastLegal(Agent):
    """Deterministic: the highest legal action; vectorised so the batched path can be checked too."""

    batched = True

    def act(self, state, rng):
        return int(np.flatnonzero(self.game.legal_moves(state))[-1])

    def act_batch(self, states, rng):
        mask = self.game.legal_mask_batch(states)
        return (mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)).astype(np.int64)


class BatchedFirstLegal(FirstLegal):
    batched = True

    def act_batch(self, states, rng):
        return np.argmax(self.game.legal_mask_batch(states), axis=1).astype(np.int64)


class Cheater(Agent):
    def act(self, state, rng):
        return int(np.flatnonzero(~self.game.legal_moves(state))[0]) if (state.x | state.o) else 9


@lru_cache(maxsize=None)
def _random_play(state) -> tuple[float, float, float, float, float]:
    """Exact (P(X wins), P(draw), P(O wins), E[length], E[length^2]) of uniform random play from ``state``."""
    if TTT.is_over(state):
        w = TTT.winner(state)
        return (float(w == 0), float(w is None), float(w == 1), 0.0, 0.0)
    moves = TTT.legal_actions(state)
    acc = np.zeros(5)
    for m in moves:
        px, pd, po, e1, e2 = _random_play(TTT.play(state, m))
        acc += (px, pd, po, e1 + 1, e2 + 2 * e1 + 1)  # length from here = 1 + length from the child
    return tuple(acc / len(moves))


EXACT = _random_play(TTT.initial_state())


def _within(observed: float, p: float, n: int) -> bool:
    return abs(observed - p) <= Z999 * math.sqrt(p * (1 - p) / n)


def test_exact_random_play_values():
    px, pd, po, _, _ = EXACT
    # 255,168 games; by probability: X wins 0.5849, draws 0.1270, O wins 0.2881 (well-known figures).
    assert (round(px, 4), round(pd, 4), round(po, 4)) == (0.5849, 0.127, 0.2881)
    assert px + pd + po == pytest.approx(1.0)


@pytest.mark.parametrize("agent_cls,games", [(RandomAgent, 20_000), (ScalarRandom, 4_000)])
def test_random_vs_random_matches_exact_first_player_advantage(agent_cls, games):
    px, pd, po, e1, e2 = EXACT
    res = play_match(TTT, agent_cls(TTT, "a"), agent_cls(TTT, "b"), games, seed=3)
    half = games // 2
    assert res.as_first.games == res.as_second.games == half
    assert _within(res.as_first.win_rate, px, half) and _within(res.as_first.loss_rate, po, half)
    assert _within(res.as_second.win_rate, po, half) and _within(res.as_second.loss_rate, px, half)
    assert _within(res.combined.draw_rate, pd, games)
    sd = math.sqrt(e2 - e1 * e1)
    assert abs(res.mean_length - e1) <= Z999 * sd / math.sqrt(games)
    d = res.to_dict()
    assert set(d) >= {"as_first", "as_second", "combined", "mean_length", "games", "agent_a", "agent_b", "seed"}
    assert (d["games"], d["agent_a"], d["agent_b"], d["seed"]) == (games, "a", "b", 3)


def test_batched_and_scalar_paths_are_statistically_consistent():
    n1, n2 = 20_000, 4_000
    b = play_match(TTT, RandomAgent(TTT), RandomAgent(TTT), n1, seed=11).as_first
    s = play_match(TTT, ScalarRandom(TTT), ScalarRandom(TTT), n2, seed=12).as_first
    for kb, ks in ((b.wins, s.wins), (b.draws, s.draws)):
        p = (kb + ks) / (b.games + s.games)  # two-proportion z-test, 99.9%
        se = math.sqrt(p * (1 - p) * (1 / b.games + 1 / s.games))
        assert abs(kb / b.games - ks / s.games) <= Z999 * se


@pytest.mark.parametrize("agent_cls", [RandomAgent, ScalarRandom])
def test_same_seed_same_result_other_seed_differs(agent_cls):
    run = lambda seed: play_match(TTT, agent_cls(TTT), agent_cls(TTT), 300, seed=seed, batch_size=128)
    r1, r2, r3 = run(5), run(5), run(6)
    assert np.array_equal(r1.outcomes, r2.outcomes) and np.array_equal(r1.lengths, r2.lengths)
    assert r1.to_dict() == r2.to_dict()
    assert not np.array_equal(r1.outcomes, r3.outcomes)


def test_processes_do_not_change_the_result(monkeypatch):
    monkeypatch.setattr(match, "POOL_WORTH_S", 0.0)  # a pool however cheap the match
    one = play_match(TTT, ScalarRandom(TTT), ScalarRandom(TTT), 400, seed=9, processes=1)
    two = play_match(TTT, ScalarRandom(TTT), ScalarRandom(TTT), 400, seed=9, processes=2)
    assert np.array_equal(one.outcomes, two.outcomes) and np.array_equal(one.lengths, two.lengths)


def test_a_cheap_match_starts_no_worker_pool(monkeypatch):
    """400 scalar random games take milliseconds: a pool (seconds to spawn) would only slow them down."""
    def no_pool(*args, **kwargs):
        raise AssertionError("a worker pool was started for a cheap match")

    monkeypatch.setattr(match.mp, "get_context", no_pool)
    res = play_match(TTT, ScalarRandom(TTT), ScalarRandom(TTT), 400, seed=9, processes=2)
    assert res.games == 400


@pytest.mark.parametrize("a_cls", [FirstLegal, BatchedFirstLegal])
def test_seats_by_hand(a_cls):
    a, b = a_cls(TTT, "first"), LastLegal(TTT, "last")
    # A as X: X1 O9 X2 O8 X3 -> X wins in 5.  A as O: X9 O1 X8 O2 X7 -> X (B) wins in 5.
    r = play_match(TTT, a, b, 7, seats="alternate")
    assert r.a_player.tolist() == [0, 1, 0, 1, 0, 1, 0]
    assert r.outcomes.tolist() == [1, -1, 1, -1, 1, -1, 1]
    assert r.lengths.tolist() == [5] * 7
    assert (r.as_first.wins, r.as_first.games, r.as_second.losses, r.as_second.games) == (4, 4, 3, 3)
    f = play_match(TTT, a, b, 3, seats="a_first")
    assert f.a_player.tolist() == [0, 0, 0] and f.as_second.games == 0 and f.combined.wins == 3
    s = play_match(TTT, a, b, 3, seats="b_first")
    assert s.a_player.tolist() == [1, 1, 1] and s.as_first.games == 0 and s.combined.losses == 3
    assert s.to_dict()["as_first"]["win"] is None


@pytest.mark.parametrize("a_cls", [FirstLegal, BatchedFirstLegal])
def test_starts_are_used_and_as_first_means_player_zero(a_cls):
    a, b = a_cls(TTT, "first"), LastLegal(TTT, "last")
    after1 = TTT.replay("1")  # O to move
    after59 = TTT.replay("59")  # X to move
    r = play_match(TTT, a, b, 8, starts=[after1, after59], seats="alternate")
    assert r.start_index.tolist() == [0, 0, 1, 1, 0, 0, 1, 1]
    # start "1", A = X: O9 X2 O8 X3 -> A wins, 4 moves.  A = O: O2 X9 O3 X8 O4 X7 -> X (B) wins, 6 moves.
    # start "59", A = X: X1 O8 X2 O7 -> O (B) completes 7-8-9, 4 moves.  A = O: X8 O1 X7 O2 X6 O3 -> O (A)
    # completes 1-2-3, 6 moves.
    assert r.outcomes.tolist() == [1, -1, -1, 1] * 2
    assert r.lengths.tolist() == [4, 6, 4, 6] * 2


def test_random_start_order_is_seeded_and_pairs_seats():
    starts = [TTT.replay(m) for m in ("1", "5", "9", "13", "57")]
    run = lambda seed: play_match(TTT, RandomAgent(TTT), RandomAgent(TTT), 200, starts=starts,
                                  start_order="random", seed=seed).start_index
    idx = run(1)
    assert np.array_equal(idx, run(1)) and not np.array_equal(idx, run(2))
    assert np.array_equal(idx[0::2], idx[1::2])  # both seats of a pair share the start
    assert set(idx.tolist()) == set(range(5))


def test_bad_input_is_a_one_line_error():
    a, b = RandomAgent(TTT), RandomAgent(TTT)
    for games in (0, -5):
        with pytest.raises(BoardRLError, match="games must be a positive integer"):
            play_match(TTT, a, b, games)
    with pytest.raises(BoardRLError, match="alternate, a_first, b_first"):
        play_match(TTT, a, b, 2, seats="middle")
    with pytest.raises(BoardRLError, match="cycle, random"):
        play_match(TTT, a, b, 2, starts=[TTT.initial_state()], start_order="shuffle")
    with pytest.raises(BoardRLError, match="start position 0 is already over"):
        play_match(TTT, a, b, 2, starts=[TTT.replay("14253")])
    with pytest.raises(BoardRLError, match="expected a TicTacToeState"):
        play_match(TTT, a, b, 2, starts=[(0, 0)])
    with pytest.raises(IllegalMoveError, match="agent 'cheater' played an illegal move"):
        play_match(TTT, Cheater(TTT, "cheater"), ScalarRandom(TTT), 2)


def test_agent_of_another_game_is_refused():
    c4 = make_game("connect4")
    with pytest.raises(BoardRLError, match="plays connect4, but the match is tictactoe"):
        play_match(TTT, RandomAgent(TTT), RandomAgent(c4, "c4random"), 2)


def test_progress_bar_goes_to_stderr(capsys):
    play_match(TTT, RandomAgent(TTT, "ra"), RandomAgent(TTT, "rb"), 50, progress=True)
    err = capsys.readouterr().err
    assert "ra vs rb" in err and "50/50" in err


@pytest.mark.parametrize("agent_cls", [RandomAgent, ScalarRandom])
def test_extra_turns_dots_and_boxes_every_game_draws_all_twelve_edges(agent_cls):
    # Completing a box gives the same player another move, so turns do not alternate; both paths must follow
    # to_move, and every 2x2 game ends after exactly its 12 edges.
    dnb = make_game("dots_and_boxes_2x2")
    r = play_match(dnb, agent_cls(dnb), agent_cls(dnb), 500, seed=2)
    assert r.lengths.tolist() == [12] * 500
    assert r.combined.games == 500 and 0 < r.combined.wins < 500 and 0 < r.combined.losses < 500


class SearchLike(BatchedFirstLegal):
    """Vectorised and asking for batches (as an AlphaZero search does); records the rows of each call."""

    wants_batches = True

    def __init__(self, game, name=None):
        super().__init__(game, name)
        self.calls: list[int] = []

    def act_batch(self, states, rng):
        self.calls.append(len(states))
        return super().act_batch(states, rng)


def test_an_agent_that_wants_batches_plays_a_scalar_agent_in_lock_step(monkeypatch):
    """Against a scalar opponent the searching agent still sees many rows per call, and the games are the ones
    the scalar path plays for deterministic agents (first legal vs last legal: one game per seat)."""
    searcher, scalar = SearchLike(TTT, "search"), LastLegal(TTT)
    scalar.batched = False
    res = play_match(TTT, searcher, scalar, 200, seed=3)
    assert max(searcher.calls) == 64  # LOCKSTEP_CHUNK 128 games, half with the searcher to move
    reference = play_match(TTT, FirstLegal(TTT), scalar, 200, seed=3)
    assert np.array_equal(res.outcomes, reference.outcomes)
    assert np.array_equal(res.lengths, reference.lengths)
    monkeypatch.setattr(match, "POOL_WORTH_S", 0.0)
    assert res.outcomes.tolist() == play_match(TTT, SearchLike(TTT), scalar, 200, seed=3, processes=2).outcomes.tolist()
