"""Tabular Q-learning reproduces seed 000 and reaches perfect tic-tac-toe; extra turns get the right sign."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardrl.agents import make_agent
from boardrl.agents.base import RandomAgent
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.learn import learner_params_model, make_learner
from boardrl.learn.tabular_q import TabularQParams

TTT = make_game("tictactoe")
S0_MOVES = "3758"  # seed 000 experiments 01/02: X on cells 3 and 5, O on 7 and 8, X to move
S0_ACTIONS = [0, 1, 3, 5, 8]  # cells 1, 2, 4, 6, 9
S0_TARGET = np.array([-1.0, -1.0, -1.0, -1.0, 1.0])  # only cell 9 (block + fork) wins; the rest lose


def train(game, params, tmp_path: Path, seed: int = 23, eval_points=(), on_eval=None, **kw):
    return make_learner("tabular_q").train(
        game, params, seed=seed, checkpoint_dir=tmp_path / "ckpt", eval_points=list(eval_points),
        on_eval=on_eval or (lambda n, a: None), **kw,
    )


@pytest.fixture(scope="module")
def ttt_agent(tmp_path_factory):
    """Seed 000's algorithm (self-play, random behaviour, alpha 0.1) with 200,000 games (about a second)."""
    return train(TTT, {"games": 200_000}, tmp_path_factory.mktemp("ttt"))


def test_defaults_are_seed_000():
    p = learner_params_model("tabular_q")()
    assert (p.alpha, p.gamma, p.init_std, p.games, p.opponent, p.reward) == (0.1, 1.0, 0.3, 70_000, None, "result")
    assert p.exploration.schedule == "constant" and p.exploration.epsilon(0) == p.exploration.epsilon(10**6) == 1.0


def test_s0_is_the_seed_position():
    s0 = TTT.replay(S0_MOVES)
    assert TTT.render(s0) == "1 2 X\n4 X 6\nO O 9" and TTT.to_move(s0) == 0
    assert TTT.legal_actions(s0) == S0_ACTIONS


@pytest.mark.parametrize("seed", [23, 0, 1])
def test_seed000_exp01_against_full_depth_alphabeta(tmp_path, seed):
    """Seed 000 exp 01: 800 episodes vs its AlphaBeta drive Q(s0,9) -> +1 and Q(s0,{1,2,4,6}) -> -1.

    Measured over 30 seeds the largest |Q - target| after 800 episodes is 0.007..0.086; 0.1 is the bound.
    """
    params = {"games": 800, "start": S0_MOVES, "opponent": "seed000_alphabeta", "learner_seat": "first"}
    agent = train(TTT, params, tmp_path, seed=seed)
    q = agent.q_values(TTT.replay(S0_MOVES))[S0_ACTIONS]
    assert np.abs(q - S0_TARGET).max() < 0.1, q
    assert agent.act(TTT.replay(S0_MOVES), np.random.default_rng(0)) == 8


@pytest.mark.parametrize("seed", [23, 0, 1])
def test_seed000_exp02_self_play_from_s0(tmp_path, seed):
    """Seed 000 exp 02: self-play converges to the same values after about 3,500 episodes (30 seeds: <= 0.035)."""
    agent = train(TTT, {"games": 3_500, "start": S0_MOVES}, tmp_path, seed=seed)
    q = agent.q_values(TTT.replay(S0_MOVES))[S0_ACTIONS]
    assert np.abs(q - S0_TARGET).max() < 0.05, q


def test_self_play_reaches_optimal_play_on_every_reachable_state(ttt_agent, exact):
    ex = exact(TTT)
    states = ex.reachable()
    assert len(states) == 4520  # 5,478 reachable states of which 958 are finished
    rows = np.array(states, dtype=np.int64)
    moves = ttt_agent.act_batch(rows, np.random.default_rng(0))
    wrong = [TTT.render(s) for s, m in zip(states, moves) if not ex.optimal(s, int(m))]
    assert wrong == []  # optimal-move rate exactly 1.0
    assert ttt_agent.stats["states"] == 4520


def test_never_loses_to_random_in_10000_games_per_seat(ttt_agent):
    """Issue target.  0 losses in 10,000 games per seat bounds the loss rate below 0.03% (95%, rule of three)."""
    res = play_match(TTT, ttt_agent, RandomAgent(TTT), 20_000, seats="alternate", seed=5)
    assert res.as_first.games == res.as_second.games == 10_000
    assert res.as_first.losses == 0 and res.as_second.losses == 0
    assert res.as_first.win_rate > 0.95  # perfect play as X beats random almost always


def test_only_draws_against_perfect_players(ttt_agent):
    ab = make_agent(TTT, "seed000_alphabeta")  # deterministic: one game per seat says everything
    res = play_match(TTT, ttt_agent, ab, 2, seats="alternate", seed=0)
    assert res.combined.draws == 2
    perfect = make_agent(TTT, "perfect")  # random among optimal moves
    res = play_match(TTT, ttt_agent, perfect, 400, seats="alternate", seed=0)
    assert res.combined.losses == 0 and res.combined.draws == 400


def test_fixed_opponent_learns_to_beat_random(tmp_path):
    """Seed 000's FixedGameMDP mode: 100,000 games against random, seats alternating, epsilon 1 -> 0.05.

    Measured (seed 23, 10,000 games per seat): as first W 99.3% L 0%, as second W 91.0% L 0.3%.  Random play
    itself wins about 58% as first and 29% as second, so the bounds below separate learning from luck.
    """
    params = {"games": 100_000, "opponent": "random",
              "exploration": {"schedule": "linear", "start": 1.0, "end": 0.05, "decay_games": 66_000}}
    agent = train(TTT, params, tmp_path)
    res = play_match(TTT, agent, RandomAgent(TTT), 20_000, seed=3)
    assert res.as_first.win_rate > 0.97 and res.as_first.losses == 0, str(res)
    assert res.as_second.win_rate > 0.85 and res.as_second.loss_rate < 0.02, str(res)


def test_extra_turns_keep_the_sign_dots_and_boxes(tmp_path, exact):
    """On 1x2 Dots and Boxes (7 edges, boxes give extra turns) every learned Q(s, a) matches Q*(s, a).

    A learner that always negated the bootstrap (plain alternating negamax) would get every state after a
    scoring move wrong by up to 2.
    """
    game = make_game("dots_and_boxes_1x2")
    agent = train(game, {"games": 20_000}, tmp_path, seed=4)
    ex = exact(game)
    states = ex.reachable()
    extra_turn_pairs = 0
    worst = 0.0
    for s in states:
        q = agent.q_values(s)
        for a in game.legal_actions(s):
            child = game.play(s, a)
            extra_turn_pairs += (not game.is_over(child)) and game.to_move(child) == game.to_move(s)
            worst = max(worst, abs(q[a] - ex.q(s, a)))
    assert extra_turn_pairs > 20
    assert worst < 0.02


def test_margin_reward_learns_exact_margins_dots_and_boxes_1x2(tmp_path, exact):
    """reward=margin: Q(s, a) converges to the final score margin under perfect play, from the mover's view."""
    game = make_game("dots_and_boxes_1x2")
    agent = train(game, {"games": 20_000, "reward": "margin"}, tmp_path, seed=4)
    ex = exact(game)

    def margin_q(s, a):  # exact: final margin (mover's view) after a, both sides then maximising their margin
        mover, child = game.to_move(s), game.play(s, a)
        if game.is_over(child):
            m = game.score_margin(child)
            return m if mover == 0 else -m
        best = max(margin_q(child, b) for b in game.legal_actions(child))
        return best if game.to_move(child) == mover else -best

    worst = max(abs(agent.q_values(s)[a] - margin_q(s, a)) for s in ex.reachable() for a in game.legal_actions(s))
    assert worst < 0.02


def test_margin_reward_plays_2x2_dots_and_boxes_margin_optimally(tmp_path, exact):
    """1,000,000 self-play games (about 5 s): every move on all 5,341 reachable unfinished 2x2 states keeps the
    best final margin, as the retrograde referee judges it.  With reward=result 734 states are margin-suboptimal
    (the result is kept, boxes are given away), which is why the referee-judged rate needs reward=margin."""
    from boardrl.solvers.registry import make_referee

    game = make_game("dots_and_boxes_2x2")
    agent = train(game, {"games": 1_000_000, "reward": "margin", "checkpoint_every": 1_000_000}, tmp_path, seed=0)
    states = exact(game).reachable()
    assert len(states) == 5341
    referee = make_referee(game)
    moves = agent.act_batch(np.array(states, dtype=np.int64), np.random.default_rng(0))
    assert sum(int(m) not in referee.solve(s).optimal_moves for s, m in zip(states, moves)) == 0


def test_margin_reward_needs_a_game_with_a_score(tmp_path):
    from boardrl.learn import LearnError

    with pytest.raises(LearnError, match="tictactoe keeps no score; use reward 'result'"):
        train(TTT, {"games": 10, "reward": "margin"}, tmp_path)


def test_same_seed_same_table_other_seed_other_table(tmp_path):
    a = train(TTT, {"games": 3_000}, tmp_path / "a", seed=7)
    b = train(TTT, {"games": 3_000}, tmp_path / "b", seed=7)
    c = train(TTT, {"games": 3_000}, tmp_path / "c", seed=8)
    ka, va = a.table.compact()
    kb, vb = b.table.compact()
    kc, vc = c.table.compact()
    assert np.array_equal(ka, kb) and np.array_equal(va, vb)
    order = np.lexsort(kc.T[::-1])
    assert not np.array_equal(va[np.lexsort(ka.T[::-1])], vc[order])


def test_parallel_games_one_is_plain_sequential_q_learning(tmp_path):
    """One game at a time (seed 000's loop) also converges: exp 02 with parallel_games=1."""
    agent = train(TTT, {"games": 3_500, "start": S0_MOVES, "parallel_games": 1}, tmp_path)
    q = agent.q_values(TTT.replay(S0_MOVES))[S0_ACTIONS]
    assert np.abs(q - S0_TARGET).max() < 0.05


def test_params_model_rejects_bad_values():
    with pytest.raises(ValueError, match="learner_seat"):
        TabularQParams(learner_seat="first")
    with pytest.raises(ValueError, match="alpha"):
        TabularQParams(alpha=0)
    with pytest.raises(ValueError, match="extra"):
        TabularQParams(episodes=10)
