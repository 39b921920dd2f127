"""Seed 001's edge-set Q-table: exact updates on a hand-built episode, referee values with the margin reward,
resume == uninterrupted, save/load, symmetry, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boardrl.agents.learned import load_agent
from boardrl.evaluate.optimal_rate import optimal_move_rate, position_set
from boardrl.games import make_game
from boardrl.learn import LearnError, learner_params_model, make_learner
from boardrl.learn.core.base import MANIFEST
from boardrl.solvers.dots_and_boxes import DotsAndBoxesReferee

G12 = make_game("dots_and_boxes_1x2")
G2 = make_game("dots_and_boxes_2x2")
G3 = make_game("dots_and_boxes_3x3")
MARGIN = {"reward": "margin", "gamma": 1.0, "alpha": 1.0, "exploration": {"schedule": "constant", "start": 0.3}}


class Kill(Exception):
    """Stands for the process dying inside a callback."""


def train(game, params, tmp_path: Path, seed: int = 0, points=(), on_eval=None, ckpt: str = "ckpt"):
    return make_learner("dots_table").train(game, params, seed=seed, checkpoint_dir=tmp_path / ckpt,
                                            eval_points=list(points), on_eval=on_eval)


def state_of(game, edges: int):
    """A legal state with these edges (values depend on the edges only; scores just have to add up)."""
    done = sum(int(edges & m == m) for m in game.geo.box_masks)
    return game.state_type(edges, 0, done, 0)


@pytest.fixture(scope="module")
def margin_2x2(tmp_path_factory):
    """Margin reward, alpha 1, 100,000 self-play games (about a second)."""
    return train(G2, {"games": 100_000, **MARGIN}, tmp_path_factory.mktemp("m2"))


def test_defaults_are_seed_001():
    p = learner_params_model("dots_table")()
    assert (p.reward, p.gamma, p.transfer_from, p.symmetry) == ("seed001", 0.6, None, False)
    assert p.exploration.schedule == "constant" and p.exploration.epsilon(10**6) == 0.05


def test_seed001_reward_with_extra_turns_on_a_hand_built_episode():
    """1x2 boxes (edges: top 0 1, bottom 2 3, verticals 4 5 6).  P0 0, P1 2, P0 4, P1 5 (takes the left box,
    moves again), P1 1, P0 3, P1 6 (takes the right box; P1 wins 2-0).  alpha 0.5, gamma 0.6, zeros.

    First game: the extra-turn move (E3, 5) gets 1 + 0.6 * 0 -> 0.5; P0's passing move (E2, 4) is closed when
    P1's turn ends: -0.6 * max Q(E3) = -0.3 -> -0.15; the last move gets 1 + 5 (win) -> 3; the loser's last
    passing move (E5, 3) gets its own terminal -1 -> -0.5.  Second game, same moves: 0.75, -0.3, 4.5, -0.75.
    """
    learner = make_learner("dots_table")
    params = learner.check_params({"alpha": 0.5, "gamma": 0.6})
    learner.check_game(G12, params)
    learner.setup(G12, params, seed=0, opponent=None)
    moves = [0, 2, 4, 5, 1, 3, 6]
    e = np.cumsum([0] + [1 << m for m in moves])  # E0 .. E7: the edge set before each move
    f32 = np.float32
    expected = [
        {(0, 0): 0.0, (1, 2): 0.0, (2, 4): f32(-0.15), (3, 5): 0.5, (4, 1): 0.0, (5, 3): -0.5, (6, 6): 3.0},
        {(0, 0): 0.0, (1, 2): 0.0, (2, 4): f32(-0.3), (3, 5): 0.75, (4, 1): 0.0, (5, 3): -0.75, (6, 6): 4.5},
    ]
    for want in expected:
        learner.trainer.play_moves(moves)
        agent = learner.snapshot()
        got = {(i, a): agent.q_values(state_of(G12, int(e[i])))[a] for i, a in want}
        assert got == {k: f32(v) for k, v in want.items()}
        assert agent.entries == 7  # the one move played in each of the 7 decision states
        others = [agent.q_values(state_of(G12, int(e[i])))[b] for i in range(7) for b in range(7) if b != moves[i]]
        assert not any(others)


def test_margin_reward_learns_the_referee_values_on_every_1x2_position(tmp_path):
    """Q(E, a) = the mover's margin-to-go after a, exactly as the retrograde referee computes it."""
    agent = train(G12, {"games": 5_000, **MARGIN, "exploration": {"start": 1.0}}, tmp_path)  # every edge set
    ref = DotsAndBoxesReferee(G12)
    worst = 0.0
    for edges in range((1 << 7) - 1):
        s = state_of(G12, edges)
        q = agent.q_values(s)
        for a, m in ref.move_margins(s).items():
            worst = max(worst, abs(q[a] - (m - s.score0)))  # move_margins include the score so far
    assert worst == 0.0


def test_margin_reward_plays_2x2_optimally(margin_2x2):
    """Issue target: optimal-move rate >= 99% on the pipeline's kind of position set (2,000 random-play
    positions); measured 1.0 (seeds 0, 1, 2)."""
    rate = optimal_move_rate(margin_2x2, DotsAndBoxesReferee(G2), position_set(G2, 2000, seed=3),
                             np.random.default_rng(4))
    assert rate.rate >= 0.99, rate


def test_resume_after_a_kill_equals_the_uninterrupted_run(tmp_path):
    params = {"games": 3_000, "checkpoint_every": 1_000, "parallel_games": 64, "symmetry": True,
              "exploration": {"schedule": "exponential", "start": 1.0, "end": 0.1, "decay_games": 800}}
    points = [0, 500, 2_500, 3_000]
    ref_seen, seen = [], []
    ref = train(G2, params, tmp_path, points=points, ckpt="ref",
                on_eval=lambda n, a: ref_seen.append((n, a.keys, a.vals)))

    def die_at_2500(n, agent):
        if n >= 2_500:  # measured at 2,560, the end of the wave of 64 games in flight at 2,500
            raise Kill
        seen.append((n, agent.keys, agent.vals))

    with pytest.raises(Kill):
        train(G2, params, tmp_path, points=points, on_eval=die_at_2500)
    assert json.loads((tmp_path / "ckpt" / MANIFEST).read_text())["done"] == 2_048
    final = train(G2, params, tmp_path, points=points, on_eval=lambda n, a: seen.append((n, a.keys, a.vals)))
    assert [n for n, *_ in seen] == [0, 512, 2_560, 3_000]
    for (n1, k1, v1), (n2, k2, v2) in zip(ref_seen, seen):
        assert n1 == n2 and np.array_equal(k1, k2) and np.array_equal(v1, v2)
    assert np.array_equal(final.keys, ref.keys) and np.array_equal(final.vals, ref.vals)  # bit for bit
    assert final.meta == ref.meta


def test_save_load_round_trip_with_transfer_and_symmetry(margin_2x2, tmp_path):
    margin_2x2.save(tmp_path / "src")
    params = {"games": 2_000, **MARGIN, "symmetry": True, "transfer_from": str(tmp_path / "src")}
    agent = train(G3, params, tmp_path)
    agent.save(tmp_path / "model")
    back = load_agent(G3, "dots_table", tmp_path / "model")
    assert back.symmetry and back.init.source_game == "dots_and_boxes_2x2" and back.meta == agent.meta
    rows = np.array([tuple(s) for s in position_set(G3, 300, seed=1)], dtype=np.int64)
    assert np.array_equal(agent.q_values_batch(rows), back.q_values_batch(rows))
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    assert np.array_equal(agent.act_batch(rows, rng_a), back.act_batch(rows, rng_b))
    info = json.loads((tmp_path / "model" / "agent.json").read_text())
    assert info["kind"] == "dots_table" and info["entries"] == agent.entries


def test_symmetric_table_gives_equal_values_to_symmetric_positions(tmp_path):
    """Q(sigma E, sigma a) = Q(E, a) for every symmetry sigma, on positions no symmetry but the identity fixes.

    (In a position that some symmetry fixes, equivalent actions keep separate entries that converge to the
    same value; agents/dots_table.py.)
    """
    agent = train(G2, {"games": 3_000, **MARGIN, "symmetry": True}, tmp_path)
    rows = np.array([tuple(s) for s in position_set(G2, 300, seed=2)], dtype=np.int64)
    images, maps = G2.symmetries_batch(rows)
    asymmetric = (images[1:, :, 0] != rows[None, :, 0]).all(axis=0)
    assert asymmetric.sum() > 200
    rows, images = rows[asymmetric], images[:, asymmetric]
    q = agent.q_values_batch(rows)
    assert np.abs(q).sum() > 0
    for img, perm in zip(images, maps):
        assert np.array_equal(agent.q_values_batch(img)[:, perm], q)


def test_bad_params_are_one_line_errors(margin_2x2, tmp_path):
    margin_2x2.save(tmp_path / "m2")
    train(G3, {"games": 10, **MARGIN}, tmp_path, ckpt="c3").save(tmp_path / "m3")
    cases = [
        (make_game("tictactoe"), {}, "plays Dots and Boxes (dots_and_boxes_RxC), not tictactoe"),
        (G3, {**MARGIN, "transfer_from": str(tmp_path / "m3")}, "model of dots_and_boxes_3x3; transfer needs a "
                                                                 "smaller board than dots_and_boxes_3x3"),
        (G3, {"transfer_from": str(tmp_path / "m2")}, "trained with reward 'margin', this run uses 'seed001'"),
        (G3, {"transfer_from": str(tmp_path / "nowhere")}, "agent.json is missing"),
        (G3, {"transfer_from": "model:no_such_experiment"}, "no saved model"),
        (G2, {"reward": "score"}, "dots_table params: reward"),
    ]
    for game, params, message in cases:
        with pytest.raises(LearnError) as info:
            train(game, {"games": 10, **params}, tmp_path)
        assert message in str(info.value) and "\n" not in str(info.value), str(info.value)
