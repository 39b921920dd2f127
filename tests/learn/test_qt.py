"""Seed 002's QTPlayer: the backward update by hand, both engines against a transcription of the seed's code,
every regime, resume == uninterrupted, one-line errors, and learning to beat Random."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from boardrl.agents.base import RandomAgent
from boardrl.agents.qt import QTAgent, greedy_random_ties
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.learn import LearnError, learner_params_model, make_learner
from boardrl.learn import qt
from boardrl.learn.core.base import MANIFEST

TTT = make_game("tictactoe")
NAN = np.nan


def train(params, tmp_path: Path, seed: int = 5, eval_points=(), on_eval=None, **kw):
    return make_learner("qt").train(TTT, params, seed=seed, checkpoint_dir=tmp_path / "ckpt",
                                    eval_points=list(eval_points), on_eval=on_eval or (lambda n, a: None), **kw)


def table_dict(table) -> dict:
    """{state: {action: value}} of the entries that exist (NaN = absent), as the seed's Qtable dict holds them."""
    keys, vals = table.compact()
    return {tuple(int(v) for v in k): {a: float(v[a]) for a in range(9) if not np.isnan(v[a])}
            for k, v in zip(keys, vals)}


# ---------------------------------------------------------------------------------------------- the update
def test_defaults_are_seed_002():
    p = learner_params_model("qt")()
    assert (p.lr, p.epsilon, p.gamma, p.games, p.regime, p.opponent, p.snapshot_every, p.parallel_games) == (
        0.2, 0.2, 0.97, 100_000, "opponent", "random", 20_000, 1)
    assert p.rewards.model_dump() == {"win": 1.0, "loss": -1.0, "tie_first": 0.2, "tie_second": 0.5}


def test_final_rewards_by_seat():
    args = (1.0, -1.0, 0.2, 0.5)
    assert [qt.final_reward(r, p, *args) for r, p in [(1, 0), (1, 1), (-1, 0), (-1, 1), (0, 0), (0, 1)]] == [
        1.0, 1.0, -1.0, -1.0, 0.2, 0.5]


def test_backward_update_on_a_hand_built_loss():
    """Three own moves, newest last, ending in a loss (-1).  lr 0.2, gamma 0.97.

    s2 (newest) has no entries: Q(s2,5) = 0 + 0.2(-1 - 0) = -0.2; its only entry is the max -> target -0.194
    (had absent actions counted as 0 the target would be 0).  s1 has entries a2 = -0.5, a4 = -0.3:
    Q(s1,2) = -0.5 + 0.2(-0.194 + 0.5) = -0.4388; max(-0.4388, -0.3) -> target -0.291.  s0 has none:
    Q(s0,0) = 0.2 * -0.291 = -0.0582.  No other entry is created or changed.
    """
    vals = np.full((3, 9), NAN)
    vals[1, 2], vals[1, 4] = -0.5, -0.3
    qt.backward_update(vals, np.array([0, 1, 2]), np.array([0, 2, 5]), 3, -1.0, 0.2, 0.97)
    expected = np.full((3, 9), NAN)
    expected[0, 0], expected[1, 2], expected[1, 4], expected[2, 5] = -0.0582, -0.4388, -0.3, -0.2
    np.testing.assert_allclose(vals, expected, rtol=0, atol=1e-12)


def test_backward_update_on_a_hand_built_tie_as_second_player():
    """P2's tie reward is 0.5.  s1 (newest) has no entries: Q(s1,3) = 0.2 * 0.5 = 0.1 -> target 0.097.
    s0 has entries a1 = 0.4 and a6 = 0.05: Q(s0,6) = 0.05 + 0.2(0.097 - 0.05) = 0.0594; a1 is untouched.
    """
    vals = np.full((2, 9), NAN)
    vals[0, 1], vals[0, 6] = 0.4, 0.05
    reward = qt.final_reward(0.0, 1, 1.0, -1.0, 0.2, 0.5)
    qt.backward_update(vals, np.array([0, 1]), np.array([6, 3]), 2, reward, 0.2, 0.97)
    assert vals[1, 3] == pytest.approx(0.1, abs=1e-15)
    assert vals[0, 6] == pytest.approx(0.05 + 0.2 * (0.097 - 0.05), abs=1e-15)  # = 0.0594
    assert vals[0, 1] == 0.4 and np.isnan(vals[1]).sum() == 8 and np.isnan(vals[0]).sum() == 7


def test_greedy_choice_creates_entries_of_every_legal_action_exploring_does_not():
    """The seed's getQ: a greedy choice reads (creates, at 0) all legal actions' entries; exploring creates none."""
    row = np.array(TTT.replay("5"), dtype=np.int64)
    legal = TTT.legal_moves(TTT.replay("5"))
    for u_explore, entries in [(0.5, 8), (0.1, 0)]:  # epsilon 0.2: 0.5 exploits, 0.1 explores
        t = qt.new_table(TTT)
        t.reserve(1)
        a, slot, inserted = qt.qt_move(t.keys, t.used, t.vals, True, row, legal, 0.2, u_explore, 0.3, 0.9)
        assert inserted and legal[a] and (~np.isnan(t.vals[slot])).sum() == entries


def test_greedy_ties_are_uniform_among_the_maxima():
    values = np.array([0.3, NAN, 0.3, -1.0, 0.3, 0.0, 0.0, 0.0, 0.0])
    legal = np.array([True, True, True, True, False, True, True, True, True])
    picks = {greedy_random_ties(values, legal, u) for u in np.linspace(0, 0.999, 50)}
    assert picks == {0, 2}  # cell 4 holds 0.3 too but is illegal; NaN reads as 0
    values[:] = NAN
    assert {greedy_random_ties(values, legal, u) for u in np.linspace(0, 0.999, 80)} == set(np.flatnonzero(legal))


# ---------------------------------------------------------------------------------------------- the seed's code
class SeedQT:
    """A line-by-line transcription of the seed's QTPlayer (Players/QTPlayer.py) with uniforms given from outside."""

    def __init__(self, eps: float, learning: bool, table: dict | None = None) -> None:
        self.eps, self.learning, self.Q, self.history = eps, learning, table if table is not None else {}, []

    def get_q(self, s, a) -> float:
        return self.Q.setdefault(s, {}).setdefault(a, 0.0)

    def act(self, s, legal: list[int], u) -> int:
        if u[0] < self.eps:
            a = legal[min(int(u[1] * len(legal)), len(legal) - 1)]
        else:
            qs = [self.get_q(s, a) for a in legal]
            ties = [a for a, q in zip(legal, qs) if q == max(qs)]
            a = ties[min(int(u[2] * len(ties)), len(ties) - 1)]
        if self.learning:
            self.history.append((s, a))
        return a

    def learn(self, reward: float, lr: float = 0.2, gamma: float = 0.97) -> None:
        if self.learning:
            next_q = reward
            for s, a in reversed(self.history):
                q = self.get_q(s, a)
                self.Q[s][a] = q + lr * (next_q - q)
                next_q = gamma * max(self.Q[s].values())
        self.history = []


def seed_train(regime: str, games: int, uniforms, every: int = 20_000) -> SeedQT:
    """``Auxiliary.train``: seats alternate (even games: the other player first), rewards per seat, snapshots."""
    learner = SeedQT(0.2, True)
    other = {"second_qt": SeedQT(0.2, True), "snapshots": SeedQT(0.0, False)}.get(regime)
    for g in range(games):
        lp, state, ply = 1 - g % 2, TTT.initial_state(), 0
        while not TTT.is_over(state):
            legal = TTT.legal_actions(state)
            mover = TTT.to_move(state)
            if mover == lp:
                a = learner.act(state, legal, uniforms(g, ply, "learner"))
            elif other is None:
                u = uniforms(g, ply, "random")
                a = legal[min(int(u * len(legal)), len(legal) - 1)]
            else:
                a = other.act(state, legal, uniforms(g, ply, "other"))
            state, ply = TTT.play(state, a), ply + 1
        rets = TTT.returns(state)
        for player, p in [(learner, lp), (other, 1 - lp)]:
            if player is not None:
                player.learn(qt.final_reward(rets[p], p, 1.0, -1.0, 0.2, 0.5))
        if regime == "snapshots" and (g + 1) % every == 0:
            other = SeedQT(0.0, False, copy.deepcopy(learner.Q))  # deepcopy + stop_learning()
    return learner


@pytest.mark.parametrize("regime", ["opponent", "second_qt", "snapshots"])
def test_whole_game_kernel_is_the_seeds_code(tmp_path, regime):
    """parallel_games 1 on tic-tac-toe: the kernel's table equals the transcription's Qtable dict, entry for entry.

    The kernel draws (chunk, 9 plies, 3) uniforms per block of games; the transcription reads the same ones.
    """
    games, every = 600, 200
    params = {"games": games, "regime": regime, "checkpoint_every": 250}
    if regime == "snapshots":
        params["snapshot_every"] = every
    learner = make_learner("qt")
    learner.train(TTT, params, seed=9, checkpoint_dir=tmp_path / "c", eval_points=[])
    rng = np.random.default_rng(9)
    ends = sorted({250, 500, games} | ({200, 400} if regime == "snapshots" else set()))
    u = np.concatenate([rng.random((hi - lo, 9, 3)) for lo, hi in zip([0] + ends[:-1], ends)])
    ref = seed_train(regime, games, lambda g, ply, role: u[g, ply] if role != "random" else u[g, ply, 1], every)
    assert table_dict(learner.trainer.table) == ref.Q
    assert len(ref.Q) > 300  # a real amount of play, not a trivially empty table


@pytest.mark.parametrize("regime", ["opponent", "second_qt", "snapshots"])
def test_batched_engine_one_game_at_a_time_is_the_seeds_code(tmp_path, monkeypatch, regime):
    """The batched engine (other games, other opponents) with parallel_games 1 is also exactly the seed's order."""
    original = qt._Trainer.__init__

    def batched_init(self, *args):
        original(self, *args)
        self.whole_games = False

    monkeypatch.setattr(qt._Trainer, "__init__", batched_init)
    games, every = 300, 100
    params = {"games": games, "regime": regime, **({"snapshot_every": every} if regime == "snapshots" else {})}
    learner = make_learner("qt")
    learner.train(TTT, params, seed=4, checkpoint_dir=tmp_path / "c", eval_points=[])
    rng = np.random.default_rng(4)
    drawn: dict = {}

    def uniforms(g, ply, role):  # per ply the engine draws (2, 3, 1); a random opponent then draws one more
        if (g, ply) not in drawn:
            drawn[(g, ply)] = rng.random((2, 3, 1))
        if role == "random":
            return rng.random(1)[0]
        return drawn[(g, ply)][0 if role == "learner" else 1, :, 0]

    ref = seed_train(regime, games, uniforms, every)
    assert table_dict(learner.trainer.table) == ref.Q


# ---------------------------------------------------------------------------------------------- regimes and runs
@pytest.mark.parametrize("regime", ["opponent", "second_qt", "snapshots"])
def test_games_side_by_side_run_every_regime(tmp_path, regime):
    params = {"games": 3_000, "regime": regime, "parallel_games": 64,
              **({"snapshot_every": 1_000} if regime == "snapshots" else {})}
    agent = train(params, tmp_path)
    assert 500 < agent.stats["states"] <= qt.TTT_UNFINISHED
    assert not np.isnan(agent.table.vals).any()  # the agent reads absent entries as 0
    assert agent.meta["params"]["regime"] == regime


def test_other_opponents_use_the_batched_engine(tmp_path):
    agent = train({"games": 2_000, "opponent": "semirandom"}, tmp_path)
    assert agent.stats["states"] > 300


POINTS = [0, 500, 2_000, 3_000]


def _run(ckpt: Path, params: dict, kill_at: int | None = None, seen: list | None = None):
    class Kill(Exception):
        pass

    def on_eval(n, agent):
        if kill_at is not None and n >= kill_at:  # measured at the end of the wave that passes it
            raise Kill
        if seen is not None:
            seen.append((n, table_dict(agent.table)))

    try:
        return make_learner("qt").train(TTT, params, seed=3, checkpoint_dir=ckpt, eval_points=POINTS,
                                        on_eval=on_eval)
    except Kill:
        return None


@pytest.mark.parametrize("extra", [{"regime": "snapshots", "snapshot_every": 700},
                                   {"regime": "second_qt", "parallel_games": 32},
                                   {"regime": "snapshots", "snapshot_every": 700, "parallel_games": 32}])
def test_resume_after_kills_equals_uninterrupted_run(tmp_path, extra):
    params = {"games": 3_000, "checkpoint_every": 1_000, **extra}
    ref_seen: list = []
    ref = _run(tmp_path / "ref", params, seen=ref_seen)
    ck, seen = tmp_path / "ck", []
    assert _run(ck, params, kill_at=2_000, seen=seen) is None
    assert 1_000 <= json.loads((ck / MANIFEST).read_text())["done"] < 2_000
    final = _run(ck, params, seen=seen)
    assert all(p <= n < p + 32 for (n, _), p in zip(seen, POINTS)) and len(seen) == len(POINTS)
    assert seen == ref_seen
    assert table_dict(final.table) == table_dict(ref.table) and final.meta == ref.meta


def test_same_seed_same_table_other_seed_other_table(tmp_path):
    a = train({"games": 2_000, "regime": "second_qt"}, tmp_path / "a", seed=1)
    b = train({"games": 2_000, "regime": "second_qt"}, tmp_path / "b", seed=1)
    c = train({"games": 2_000, "regime": "second_qt"}, tmp_path / "c", seed=2)
    assert table_dict(a.table) == table_dict(b.table) != table_dict(c.table)


@pytest.mark.parametrize("params, message", [
    ({"regime": "second_qt", "opponent": "random"}, "opponent applies only to regime 'opponent'"),
    ({"snapshot_every": 10}, "snapshot_every applies only to regime 'snapshots'"),
    ({"regime": "self"}, "regime"),
    ({"lr": 0}, "lr"),
    ({"epsilon": 1.5}, "epsilon"),
    ({"rewards": {"draw": 0.3}}, "rewards.draw"),
    ({"episodes": 10}, "episodes"),
    ({"games": 0}, "games"),
])
def test_bad_params_are_one_line_errors(tmp_path, params, message):
    with pytest.raises(LearnError, match=message) as err:
        train(params, tmp_path)
    assert "\n" not in str(err.value) and str(err.value).startswith("qt params: ")


def test_bad_opponent_is_one_line(tmp_path):
    with pytest.raises(Exception, match="nosuchagent") as err:
        train({"games": 10, "opponent": "nosuchagent"}, tmp_path)
    assert "\n" not in str(err.value)


def test_a_qt_regime_refuses_an_opponent_agent(tmp_path):
    with pytest.raises(LearnError, match="trains against QT players"):
        train({"games": 10, "regime": "snapshots"}, tmp_path, opponent=RandomAgent(TTT))


# ---------------------------------------------------------------------------------------------- it learns
def test_short_training_against_random_rarely_loses(tmp_path):
    """20,000 games against Random (about 0.1 s), then 4,000 games against Random, seats alternating.

    Measured over training seeds 0-11: combined loss rate 1.7-3.3%, win rate 80-89%; Random against itself
    loses 42%.  The assertion is on the 95% Wilson interval: with 95% confidence the loss rate is below 6%.
    """
    agent = train({"games": 20_000}, tmp_path, seed=0)
    res = play_match(TTT, agent, RandomAgent(TTT), 4_000, seed=1)
    assert res.combined.loss_ci[1] < 0.06 and res.combined.win_rate > 0.75, str(res)
    assert res.as_first.loss_rate < 0.02  # moving first it almost never loses


def test_the_trained_agent_saves_and_loads(tmp_path):
    from boardrl.learn import load_agent

    agent = train({"games": 1_000, "regime": "snapshots", "snapshot_every": 300}, tmp_path)
    agent.save(tmp_path / "model")
    loaded = load_agent(TTT, "qt", tmp_path / "model")
    assert table_dict(loaded.table) == table_dict(agent.table) and loaded.meta["params"]["regime"] == "snapshots"
    rows = np.array([TTT.initial_state(), TTT.replay("5"), TTT.replay("51")], dtype=np.int64)
    # the loaded model keeps the seed's random tie-break: the same generator gives the same moves
    assert isinstance(loaded, QTAgent) and loaded.kind == "qt_table"
    assert np.array_equal(loaded.act_batch(rows, np.random.default_rng(0)),
                          agent.act_batch(rows, np.random.default_rng(0)))


def test_seed_tie_rule_agent_plays_a_best_legal_move(tmp_path):
    agent = train({"games": 2_000}, tmp_path)
    seeded = QTAgent(TTT, agent.table, "qt")
    states = [TTT.replay(m) for m in ["", "5", "51", "519", "5193"]]
    rng = np.random.default_rng(0)
    for s in states:
        q, legal = agent.q_values(s), TTT.legal_moves(s)
        best = q[legal].max()
        picks = {seeded.act(s, rng) for _ in range(30)}
        assert all(legal[a] and q[a] == best for a in picks)


def test_one_game_at_a_time_does_not_depend_on_segments(tmp_path):
    """At parallel_games 1 the uniforms are one stream drawn in order, so checkpoints and eval points (which cut
    segments) leave the trained table unchanged."""
    params = {"games": 3_000, "regime": "snapshots", "snapshot_every": 1_000}
    a = train({**params, "checkpoint_every": 3_000}, tmp_path / "a")
    b = train({**params, "checkpoint_every": 700}, tmp_path / "b", eval_points=[1, 10, 100, 2_500])
    assert table_dict(a.table) == table_dict(b.table)
