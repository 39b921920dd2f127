"""AlphaZero learner: symmetry augmentation moves policies with the board (one hand case per game), the replay
ring, self-play records (pi, z for the mover, extra turns), the losses, gating, bit-identical resume after a
kill, one-line errors, and a tiny tic-tac-toe run that stops losing to random."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from boardrl.agents import make_agent
from boardrl.agents.alphazero import AlphaZeroAgent
from boardrl.agents.puct import step_rows
from boardrl.errors import BoardRLError
from boardrl.evaluate.match import play_match
from boardrl.evaluate.stats import wilson_interval
from boardrl.games import make_game
from boardrl.learn import LearnError, make_learner
import boardrl.learn.alphazero_selfplay as az_learn  # the self-play searches are looked up here
from boardrl.learn.alphazero import AlphaZeroLearner, Window, augment
from boardrl.learn.core.base import MANIFEST, rng_from_json, rng_state_json

TTT = make_game("tictactoe")
TINY_NET = {"body": "mlp", "hidden": [16], "head": "policy_value"}


def setup_learner(game_id: str, seed: int = 0, **params) -> AlphaZeroLearner:
    learner = AlphaZeroLearner()
    game = make_game(game_id)
    p = learner.check_params(params)
    learner.check_game(game, p)
    learner.setup(game, p, seed, None)
    return learner


# ---------------------------------------------------------------------------------------------- augmentation
# (game, position, action pi is put on, the position's mirror image by hand, the action's image there)
HAND_CASES = [
    # X on cell 1, O on 2, pi on cell 7 -> left-right mirror: X on 3, O on 2, pi on cell 9
    ("tictactoe", "12", 6, "32", 8),
    # X in column 1, O in column 2, pi on column 7 -> mirror: X in 7, O in 6, pi on column 1
    ("connect4", "12", 6, "76", 0),
    # P0 closes the top-left box with edge 7 and moves again (edge 4 makes the position asymmetric); pi on
    # edge 11 (lower right wall).  Mirror: the top-right box closed by the same edge 7, pi on edge 9
    ("dots_and_boxes_2x2", "0 6 2 4 7", 11, "1 8 3 5 7", 9),
    # O to place (stage 1) after X placed in column 1; pi on column 1 -> mirror: X in 7, pi on column 7
    ("conniption", "n1n n", 0, "n7n n", 6),
]


@pytest.mark.parametrize("game_id,moves,action,mirror_moves,mirror_action", HAND_CASES)
def test_augmentation_moves_a_one_hot_policy_to_the_image_action(game_id, moves, action, mirror_moves,
                                                                  mirror_action):
    game = make_game(game_id)
    state, mirror = game.replay(moves), game.replay(mirror_moves)
    assert game.legal_moves(state)[action]
    n = 64
    rows = np.repeat(np.asarray(state, dtype=np.int64)[None], n, axis=0)
    pi = np.zeros((n, game.num_actions), np.float32)
    pi[:, action] = 1.0
    out_rows, out_pi = augment(game, rows, pi, np.random.default_rng(0))
    symmetries = game.symmetries(state)
    successor_images = game.symmetries(game.play(state, action))
    seen = set()
    for row, p in zip(out_rows, out_pi):
        image = game.state_type(*(int(v) for v in row))
        (k,) = [k for k, (s, _) in enumerate(symmetries) if s == image]  # the position has no symmetry itself
        seen.add(k)
        target = int(symmetries[k][1][action])
        assert p.tolist() == np.eye(game.num_actions)[target].tolist()
        assert game.legal_moves(image)[target]
        assert game.play(image, target) == successor_images[k][0]
        if image == mirror:
            assert target == mirror_action
    assert seen == set(range(len(symmetries)))  # every symmetry was drawn, the hand-made mirror among them
    assert any(s == mirror for s, _ in symmetries)


def test_augmentation_permutes_a_spread_policy_row_by_row():
    game = make_game("dots_and_boxes_3x3")
    rng = np.random.default_rng(1)
    env = game.batched(32)
    for _ in range(5):
        env.step(np.array([np.flatnonzero(m)[0] for m in env.legal_mask()]))
    rows = env.states.copy()
    legal = game.legal_mask_batch(rows)
    pi = np.where(legal, rng.random(legal.shape), 0.0).astype(np.float32)
    pi /= pi.sum(axis=1, keepdims=True)
    out_rows, out_pi = augment(game, rows, pi, np.random.default_rng(2))
    images, maps = game.symmetries_batch(rows)
    k = np.random.default_rng(2).integers(0, len(maps), size=len(rows))  # the draw augment makes
    assert np.array_equal(out_rows, images[k, np.arange(len(rows))])
    for i in range(len(rows)):
        assert np.array_equal(out_pi[i, maps[k[i]]], pi[i])
    assert np.array_equal(out_pi > 0, game.legal_mask_batch(out_rows) & (out_pi > 0))
    assert out_pi.sum(axis=1) == pytest.approx(np.ones(len(rows)))


# ---------------------------------------------------------------------------------------------- replay window
def test_window_is_a_ring_of_the_last_positions_and_round_trips():
    w = Window(5, 2, 3)
    ids = np.arange(7)
    w.add(np.stack([ids[:3], ids[:3]], axis=1), np.eye(3, dtype=np.float32)[ids[:3] % 3], ids[:3] / 10)
    assert len(w) == 3 and w.state_dict()["rows"][:, 0].tolist() == [0, 1, 2]
    w.add(np.stack([ids[3:], ids[3:]], axis=1), np.eye(3, dtype=np.float32)[ids[3:] % 3], ids[3:] / 10)
    assert len(w) == 5 and w.count == 7
    assert w.rows[:, 0].tolist() == [5, 6, 2, 3, 4]  # 5 and 6 overwrote the oldest two
    assert w.z.tolist() == pytest.approx([0.5, 0.6, 0.2, 0.3, 0.4])
    assert np.argmax(w.pi, axis=1).tolist() == [2, 0, 2, 0, 1]
    copy = Window(5, 2, 3)
    copy.load_state_dict(w.state_dict())
    assert np.array_equal(copy.rows, w.rows) and np.array_equal(copy.pi, w.pi) and np.array_equal(copy.z, w.z)
    assert copy.count == 7
    rows, pi, z = w.sample(200, np.random.default_rng(0))
    assert set(rows[:, 0].tolist()) == {2, 3, 4, 5, 6} and np.array_equal(z, (rows[:, 0] / 10).astype(np.float32))


# ---------------------------------------------------------------------------------------------- self-play
def split_games(game, rows: np.ndarray) -> list[slice]:
    """One game per call of ``_self_play(1)``: each starts on the initial position."""
    start = np.flatnonzero((rows == np.asarray(game.initial_state())).all(axis=1)).tolist() + [len(rows)]
    return [slice(a, b) for a, b in zip(start[:-1], start[1:])]


def test_self_play_records_pi_and_the_result_for_each_mover_through_extra_turns():
    """Dots and Boxes 2x2, one game at a time: consecutive records are one legal move apart, the move was one
    the search visited (the most visited after ``temperature_plies``), pi is a distribution over legal moves,
    and z is the final result for each record's mover, whoever moved twice in a row."""
    learner = setup_learner("dots_and_boxes_2x2", network=TINY_NET, simulations=8, temperature_plies=3)
    game = learner.game
    for _ in range(4):
        learner._self_play(1)
    w = learner.window
    rows, pi, z = w.rows[: len(w)], w.pi[: len(w)], w.z[: len(w)]
    games = split_games(game, rows)
    assert len(games) == 4 and learner.counters["games"] == 4 and learner.counters["positions"] == len(w) == 48
    legal = game.legal_mask_batch(rows)
    assert pi.sum(axis=1) == pytest.approx(np.ones(len(rows))) and (pi[~legal] == 0).all()
    extra_turns = 0
    for g in games:
        r, p, zz = rows[g], pi[g], z[g]
        moves = []
        for i in range(len(r) - 1):
            options = np.flatnonzero(legal[g][i])
            nxt, _, _ = step_rows(game, np.repeat(r[i][None], len(options), axis=0), options)
            (a,) = options[(nxt == r[i + 1]).all(axis=1)]
            assert p[i, a] > 0 and (i < 3 or p[i, a] == p[i].max())
            moves.append(a)
        (last,) = np.flatnonzero(game.legal_mask_batch(r[-1:])[0])  # 12 edges: the 12th record has one move
        _, finished, rets = step_rows(game, r[-1:], np.array([last]))
        assert finished[0] and len(r) == 12
        mover = game.to_move_batch(r).astype(np.int64)
        assert zz.tolist() == rets[0, mover].tolist()
        extra_turns += int((mover[1:] == mover[:-1]).sum())
    assert extra_turns > 0


def test_league_games_store_only_the_learners_decisions_and_its_result():
    """Every game against ``perfect`` (share 1): the window holds only the learner's positions, its seat
    alternating game by game, each one move of the learner's and one of perfect's after the last, and z is the
    learner's result, which an untrained learner never wins against perfect play."""
    learner = setup_learner("tictactoe", network=TINY_NET, simulations=4, opponents=["perfect"],
                            opponent_share=1.0)
    seats = []
    for _ in range(6):
        before = len(learner.window)
        learner._self_play(1)
        rows = learner.window.rows[before: len(learner.window)]
        movers = TTT.to_move_batch(rows)
        assert len(set(movers.tolist())) == 1
        seats.append(int(movers[0]))
        stones = np.array([bin(int(a)).count("1") + bin(int(b)).count("1") for a, b in rows[:, :2]])
        assert (np.diff(stones) == 2).all() and stones[0] == seats[-1]
    z = learner.window.z[: len(learner.window)]
    assert seats == [0, 1, 0, 1, 0, 1] and learner.counters["games"] == 6
    assert set(z.tolist()) <= {0.0, -1.0}


def test_losses_are_the_masked_cross_entropy_or_squared_error_and_the_value_mse():
    learner = setup_learner("tictactoe", network=TINY_NET, simulations=4, batch_size=32)
    learner._self_play(16)
    for policy_loss in ("cross_entropy", "mse"):
        learner.p = learner.p.model_copy(update={"policy_loss": policy_loss})
        rng = rng_from_json(rng_state_json(learner.rng))
        rows, pi, z = learner.window.sample(32, rng)
        rows, pi = augment(TTT, rows, pi, rng)
        with torch.no_grad():
            logits, value = learner.net(torch.from_numpy(TTT.encode_batch(rows)).to(learner.device))
        logits, value = logits.double().cpu().numpy(), value.double().cpu().numpy()
        legal = TTT.legal_mask_batch(rows)
        shifted = np.where(legal, logits - logits.max(axis=1, keepdims=True), 0.0)
        e = np.where(legal, np.exp(shifted), 0.0)
        probs = e / e.sum(axis=1, keepdims=True)  # softmax over the legal actions only
        if policy_loss == "cross_entropy":
            expected = -np.where(legal, pi * np.log(np.where(legal, probs, 1.0)), 0.0).sum(axis=1).mean()
        else:
            expected = ((probs - pi) ** 2).sum(axis=1).mean()
        got = learner._update()
        assert got == pytest.approx((expected, ((value - z) ** 2).mean()), rel=1e-5, abs=1e-6)
    assert learner.counters["updates"] == 2


def test_gating_with_threshold_zero_promotes_every_candidate(tmp_path):
    """Two learning phases, each followed by a 4-game arena; any score passes a threshold of 0."""
    metrics: list[dict] = []
    learner = AlphaZeroLearner()
    params = {"games": 32, "network": TINY_NET, "simulations": 3, "eval_simulations": 2, "parallel_games": 16,
              "train_every": 16, "updates": 2, "batch_size": 16, "gating_games": 4, "gating_threshold": 0.0,
              "checkpoint_every": 32, "device": "cpu"}
    learner.train(TTT, params, seed=0, checkpoint_dir=tmp_path / "ck", eval_points=[],
                  on_metrics=lambda m, s: metrics.append(m))
    assert learner.counters["promotions"] == 2
    scores = [m["gating_score"] for m in metrics if "gating_score" in m]
    assert len(scores) == 2 and all(0 <= x <= 1 and (4 * x) % 0.5 == 0 for x in scores)
    for key, value in learner.net.state_dict().items():
        assert torch.equal(value, learner.player.state_dict()[key])


# ---------------------------------------------------------------------------------------------- resume
class Kill(Exception):
    pass


PARAMS = {"games": 48, "checkpoint_every": 16, "network": TINY_NET, "simulations": 4, "eval_simulations": 3,
          "parallel_games": 8, "train_every": 16, "updates": 3, "batch_size": 16, "window": 200,
          "temperature_plies": 2, "gating_games": 2, "gating_threshold": 0.5, "device": "cpu"}
POINTS = [0, 32, 48]


def run(ckpt, kill_at=None, extra=None):
    def on_eval(step, agent):
        if step == kill_at:
            raise Kill
        assert isinstance(agent, AlphaZeroAgent) and agent.simulations == 3
        return {"step": step, "move": int(agent.act(TTT.initial_state(), np.random.default_rng(0)))}

    learner = AlphaZeroLearner()
    agent = learner.train(TTT, {**PARAMS, **(extra or {})}, seed=3, checkpoint_dir=ckpt, eval_points=POINTS,
                          on_eval=on_eval)
    return learner, agent


@pytest.mark.parametrize("extra", [None, {"opponents": ["random", "tactical"], "opponent_share": 0.4},
                                   {"search": "gumbel", "full_search_share": 0.5, "fast_simulations": 2,
                                    "considered_actions": 4, "eval_search": "gumbel", "window": 100}],
                         ids=["self-play", "league", "gumbel-playout-cap"])
def test_killed_run_resumes_bit_identical(tmp_path, extra):
    ref, ref_agent = run(tmp_path / "ref", extra=extra)
    ck = tmp_path / "ck"
    with pytest.raises(Kill):
        run(ck, kill_at=32, extra=extra)  # dies at the eval at 32: the last checkpoint is at 16
    assert json.loads((ck / MANIFEST).read_text())["done"] == 16
    resumed, agent = run(ck, extra=extra)
    for name in ("net", "player"):
        for key, value in getattr(ref, name).state_dict().items():
            assert torch.equal(value, getattr(resumed, name).state_dict()[key]), (name, key)
    ref_moments = ref.opt.state_dict()["state"]
    for k, v in resumed.opt.state_dict()["state"].items():
        assert torch.equal(v["exp_avg_sq"], ref_moments[k]["exp_avg_sq"])
    assert ref.window.count > len(ref.window.z)  # the ring wrapped
    for name in ("rows", "pi", "z"):
        assert np.array_equal(getattr(ref.window, name), getattr(resumed.window, name)), name
    assert ref.counters == resumed.counters and ref.counters["games"] == 48 and ref.counters["updates"] == 9
    assert rng_state_json(ref.rng) == rng_state_json(resumed.rng)
    assert resumed.evaluations == ref.evaluations and sorted(ref.evaluations) == POINTS
    rows = np.array([TTT.initial_state(), TTT.replay("5"), TTT.replay("519")], dtype=np.int64)
    assert agent.act_batch(rows, np.random.default_rng(0)).tolist() == \
        ref_agent.act_batch(rows, np.random.default_rng(0)).tolist()
    assert agent.meta == ref_agent.meta and agent.meta["games"] == 48
    assert not ck.exists()


# ---------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("params,match", [
    ({"network": {"body": "mlp", "hidden": [8], "head": "q"}}, "alphazero needs a policy_value head, not q"),
    ({"network": "seed999"}, "unknown network preset"),
    ({"simulations": 0}, "simulations"),
    ({"policy_loss": "kl"}, "policy_loss"),
    ({"opponent_share": 0.5}, "opponent_share > 0 needs opponents"),
    ({"opponents": ["nobody"], "opponent_share": 0.5}, "alphazero opponents: .*nobody"),
    ({"opponents": ["pool:members=random+tactical"], "opponent_share": 0.5}, "is a pool; list its members"),
    ({"simulations": 4, "fast_simulations": 5}, r"fast_simulations \(5\) must not exceed simulations \(4\)"),
    ({"considered_actions": 0}, "considered_actions: Input should be greater than or equal to 1"),
    ({"full_search_share": 0.0}, "full_search_share: Input should be greater than 0"),
    ({"search": "uct"}, "search: Input should be 'puct' or 'gumbel'"),
    ({"c_scale": 0.0}, "c_scale: Input should be greater than 0"),
])
def test_bad_params_fail_with_one_line(params, match):
    with pytest.raises(BoardRLError, match=match) as err:
        setup_learner("tictactoe", **params)
    assert "\n" not in str(err.value) and isinstance(err.value, LearnError)


# ---------------------------------------------------------------------------------------------- a tiny run
def test_tiny_tictactoe_run_stops_losing_to_random(tmp_path):
    """2,048 self-play games (25 simulations, 8 learning phases of 50 updates; about 2 s here).

    The same search with the untrained network still loses about 12% of its games to random (49 of 400 with
    this seed).  The trained agent must lose so few of 400 games (seats alternating) that the upper 99.9%
    Wilson bound of its loss rate is below 4%, a third of that: at most 3 losses.  The untrained searcher's
    lower bound must lie above 4%, so the two rates are told apart with 99.9% confidence each."""
    params = {"games": 2048, "simulations": 25, "updates": 50, "parallel_games": 256, "train_every": 256,
              "eval_simulations": 25, "checkpoint_every": 2048, "device": "cpu"}
    untrained = []  # the snapshot at 0 games: the same search with the initial network
    agent = make_learner("alphazero").train(TTT, params, seed=0, checkpoint_dir=tmp_path / "ck", eval_points=[0],
                                            on_eval=lambda step, a: untrained.append(a))
    random = make_agent(TTT, "random")
    before = play_match(TTT, untrained[0], random, 400, seed=7).combined
    after = play_match(TTT, agent, random, 400, seed=7).combined
    assert wilson_interval(before.losses, 400, 0.999)[0] > 0.04  # the search alone does not get there
    assert wilson_interval(after.losses, 400, 0.999)[1] < 0.04, (after.wins, after.draws, after.losses)


def test_the_trained_agent_takes_the_eval_search_and_value_settings():
    """``eval_*`` params reach the snapshot (the saved model): simulations, and the playout share of its value."""
    learner = setup_learner("tictactoe", network=TINY_NET, eval_simulations=7, eval_rollout_weight=0.5,
                            eval_rollouts=3)
    agent = learner.snapshot()
    assert (agent.simulations, agent.rollout_weight, agent.rollouts) == (7, 0.5, 3)
    assert setup_learner("tictactoe", network=TINY_NET).snapshot().rollout_weight == 0.0  # the network alone
    with pytest.raises(LearnError, match="eval_rollout_weight"):
        setup_learner("tictactoe", network=TINY_NET, eval_rollout_weight=1.5)


def test_value_target_mixes_the_result_with_the_root_search_value_linearly():
    """The same self-play (one seed, no learning in between) stored with value_target_q 0, 1 and 0.5: w = 0 stores
    the game results (-1, 0, 1), w = 1 the roots' search values, and w = 0.5 exactly their mean."""
    stored = {}
    for w in (0.0, 1.0, 0.5):
        learner = setup_learner("tictactoe", network=TINY_NET, simulations=8, value_target_q=w)
        learner._self_play(8)
        n = len(learner.window)
        stored[w] = (learner.window.rows[:n].copy(), learner.window.z[:n].copy())
    assert all(np.array_equal(stored[0.0][0], stored[w][0]) for w in (1.0, 0.5))  # the same games
    results, searched = stored[0.0][1], stored[1.0][1]
    assert set(np.unique(results)) <= {-1.0, 0.0, 1.0} and not np.array_equal(results, searched)
    assert (np.abs(searched) <= 1).all()
    np.testing.assert_allclose(stored[0.5][1], 0.5 * results + 0.5 * searched, atol=1e-6)


def test_tactics_reach_self_play_and_the_trained_agent_and_need_a_game_with_a_check(monkeypatch):
    """``eval_tactics`` goes to the snapshot; ``tactics`` wraps the self-play evaluator (seen through the
    evaluator ``search`` receives); both are refused for a game without a check."""
    assert setup_learner("connect4", network=TINY_NET, eval_tactics=True).snapshot().tactics is True
    assert setup_learner("connect4", network=TINY_NET).snapshot().tactics is False
    seen = []
    real_search = az_learn.search

    def spy(game, roots, evaluator, settings, rng, clock=None, **kwargs):
        seen.append(type(evaluator).__name__)
        return real_search(game, roots, evaluator, settings, rng, clock, **kwargs)

    monkeypatch.setattr(az_learn, "search", spy)
    for tactics in (False, True):
        setup_learner("connect4", network=TINY_NET, simulations=2, tactics=tactics)._self_play(2)
    assert seen[0] == "NetworkEvaluator" and seen[-1] == "TacticalEvaluator"
    for name in ("tactics", "eval_tactics"):
        with pytest.raises(LearnError, match=f"alphazero {name}: tictactoe has no exact short-tactics check"):
            setup_learner("tictactoe", network=TINY_NET, **{name: True})


# ---------------------------------------------------------------------------------------------- Gumbel, playout caps
def test_fast_budget_defaults_to_a_quarter_of_the_full_search():
    from boardrl.learn.alphazero_params import AlphaZeroParams

    assert AlphaZeroParams(simulations=10).fast_budget == 2 and AlphaZeroParams(simulations=3).fast_budget == 1
    assert AlphaZeroParams(simulations=10, fast_simulations=5).fast_budget == 5


def calls_of_search(monkeypatch) -> list[tuple[str, int, int]]:
    """(which search, simulations, roots) of every search the learner calls."""
    seen: list[tuple[str, int, int]] = []
    real_puct, real_gumbel = az_learn.search, az_learn.gumbel_search

    def puct(game, roots, evaluator, settings, rng, clock=None, **kwargs):
        seen.append(("puct", settings.simulations, len(roots), settings.noise))
        return real_puct(game, roots, evaluator, settings, rng, clock, **kwargs)

    def gumbel(game, roots, evaluator, settings, rng, noise=True, clock=None, **kwargs):
        seen.append(("gumbel", settings.simulations, len(roots), noise))
        return real_gumbel(game, roots, evaluator, settings, rng, noise=noise, clock=clock, **kwargs)

    monkeypatch.setattr(az_learn, "search", puct)
    monkeypatch.setattr(az_learn, "gumbel_search", gumbel)
    return seen


@pytest.mark.parametrize("method", ["puct", "gumbel"])
def test_playout_caps_search_full_and_fast_rows_in_one_call_each_and_store_only_the_full(monkeypatch, method):
    """16 games, share 0.5: per ply at most two searches (the full rows together with 8 simulations, the fast
    ones with 2; a fast PUCT search without root noise); the stored positions are exactly the full searches'
    roots; every game still ends and gives z to its stored positions."""
    seen = calls_of_search(monkeypatch)
    learner = setup_learner("tictactoe", network=TINY_NET, simulations=8, fast_simulations=2, search=method,
                            full_search_share=0.5)
    learner._self_play(16)
    full = [c for c in seen if c[1] == 8]
    fast = [c for c in seen if c[1] == 2]
    assert {c[0] for c in seen} == {method} and full and fast and len(seen) <= 2 * 9  # tic-tac-toe: <= 9 plies
    assert sum(c[2] for c in full) == len(learner.window) == learner.counters["positions"]
    assert 0.3 < len(learner.window) / sum(c[2] for c in seen) < 0.7
    if method == "puct":
        assert all(c[3] > 0 for c in full) and all(c[3] == 0 for c in fast)
    else:
        assert all(c[3] is True for c in seen)  # Gumbel noise in self-play, whatever the size
    assert learner.counters["games"] == 16 and set(np.unique(learner.window.z[: len(learner.window)])) <= {-1, 0, 1}


def test_gumbel_self_play_stores_the_completed_q_policy_and_plays_gumbels_move(monkeypatch):
    """Every stored pi is the search's improved policy (a distribution over the legal moves, not visit counts),
    and every move played is the search's chosen action."""
    results = []
    real = az_learn.gumbel_search

    def spy(*args, **kwargs):
        results.append(real(*args, **kwargs))
        return results[-1]

    monkeypatch.setattr(az_learn, "gumbel_search", spy)
    learner = setup_learner("tictactoe", network=TINY_NET, simulations=6, search="gumbel", considered_actions=3)
    learner._self_play(4)
    pi = np.concatenate([r.policy for r in results]).astype(np.float32)
    n = len(learner.window)
    assert np.array_equal(learner.window.pi[:n], pi)
    legal = TTT.legal_mask_batch(learner.window.rows[:n])
    assert (pi[~legal] == 0).all() and pi.sum(axis=1) == pytest.approx(np.ones(n), abs=1e-5)
    rows = learner.window.rows[:n]
    chosen = np.concatenate([r.actions for r in results])
    nxt, _, _ = step_rows(TTT, rows, chosen)
    following = {tuple(r) for r in rows}
    assert sum(tuple(r) in following for r in nxt) == n - 4  # each move leads to the next stored position


def test_eval_search_gumbel_reaches_the_snapshot_and_survives_saving(tmp_path):
    learner = setup_learner("tictactoe", network=TINY_NET, eval_search="gumbel", considered_actions=5, c_scale=0.5)
    agent = learner.snapshot()
    assert agent.method == "gumbel" and agent.gumbel == {"considered_actions": 5, "c_visit": 50.0, "c_scale": 0.5}
    agent.save(tmp_path / "m")
    info = json.loads((tmp_path / "m" / "agent.json").read_text())
    assert info["method"] == "gumbel" and info["gumbel"]["considered_actions"] == 5
    assert info["meta"]["params"]["eval_search"] == "gumbel"
    loaded = make_agent(TTT, f"model:{tmp_path / 'm'}")
    rows = np.array([TTT.initial_state(), TTT.replay("15")], dtype=np.int64)
    assert loaded.method == "gumbel" and loaded.act_batch(rows, np.random.default_rng(0)).tolist() == \
        agent.act_batch(rows, np.random.default_rng(1)).tolist()  # no noise at evaluation: any generator
    assert make_agent(TTT, f"model:{tmp_path / 'm'},search=puct").method == "puct"
    puct = setup_learner("tictactoe", network=TINY_NET).snapshot()
    puct.save(tmp_path / "p")
    assert "method" not in json.loads((tmp_path / "p" / "agent.json").read_text())
    assert make_agent(TTT, f"model:{tmp_path / 'p'},search=gumbel").method == "gumbel"


def test_gumbel_playout_cap_run_does_not_depend_on_curve_points_checkpoints_or_kills(tmp_path, monkeypatch):
    """test_training_invariance.py's four trainings (sparse and dense curves, checkpoint_every, a kill and a
    resume) on the registry's small run switched to Gumbel with playout caps: the saved model is byte-equal."""
    import importlib.util
    from pathlib import Path

    where = Path(__file__).with_name("test_training_invariance.py")
    spec = importlib.util.spec_from_file_location("_invariance_for_gumbel", where)
    invariance = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(invariance)
    game_id, params = AlphaZeroLearner.small_run
    monkeypatch.setattr(AlphaZeroLearner, "small_run", (game_id, {
        **params, "search": "gumbel", "full_search_share": 0.5, "fast_simulations": 2, "considered_actions": 4,
        "eval_search": "gumbel"}))
    invariance.test_model_does_not_depend_on_curve_points_checkpoints_or_kills("alphazero", tmp_path)
