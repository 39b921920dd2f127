"""DQN: hand-computed TD targets (masking, sign flips, extra turns, terminals, Double DQN, n-step), masked
acting, bit-identical resume, save/load, one-line errors, and a tiny run that beats random at tic-tac-toe."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn

from boardrl.agents import make_agent
from boardrl.agents.learned import load_agent
from boardrl.errors import BoardRLError
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.learn import LearnError, make_learner
from boardrl.learn.core.base import MANIFEST
from boardrl.learn.dqn import DQNLearner, NStepFolder, seed001_targets, symmetric_images, td_targets

TTT = make_game("tictactoe")
NEG = float("-inf")


class TableNet(nn.Module):
    """A fixed 'network': input row i (its first number) -> the i-th row of a Q table."""

    def __init__(self, table: list[list[float]]) -> None:
        super().__init__()
        self.table = torch.tensor(table)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.table[x[:, 0].long()]


def targets(online_q, target_q, reward, legal, done, same, gamma=0.9, double=True):
    n = len(reward)
    return td_targets(TableNet(online_q), TableNet(target_q), torch.tensor(reward), torch.arange(n)[:, None].float(),
                      torch.tensor(legal), torch.tensor(done), torch.tensor(same), gamma, double).tolist()


# ---------------------------------------------------------------------------------------------- symmetry
@pytest.mark.parametrize("game_id", ["tictactoe", "connect4", "dots_and_boxes_2x2"])
def test_symmetric_images_are_transitions_of_the_game(game_id):
    """g s played with g a gives g s', and the legal moves of g s' are g's image of those of s' (every g drawn)."""
    game, rng = make_game(game_id), np.random.default_rng(3)
    rows, actions, next_rows = [], [], []
    for _ in range(60):
        s = game.initial_state()
        for _ in range(int(rng.integers(0, 5))):
            s = game.play(s, int(rng.choice(np.flatnonzero(game.legal_moves(s)))))
        a = int(rng.choice(np.flatnonzero(game.legal_moves(s))))
        rows.append(s), actions.append(a), next_rows.append(game.play(s, a))
    rows, next_rows = np.asarray(rows, np.int64), np.asarray(next_rows, np.int64)
    legal = game.legal_mask_batch(next_rows)
    img, next_img, img_action, img_legal = symmetric_images(game, rows, next_rows, np.asarray(actions), legal, rng)
    assert len({tuple(r) for r in img} - {tuple(r) for r in rows}) > 0  # not only the identity was drawn
    state = game.state_type._make
    for s, a, s2, lg in zip(img, img_action, next_img, img_legal):
        assert game.play(state(int(v) for v in s), int(a)) == state(int(v) for v in s2)
        np.testing.assert_array_equal(lg, game.legal_moves(state(int(v) for v in s2)))


# ---------------------------------------------------------------------------------------------- TD targets
def test_dqn_target_masks_illegal_actions_and_flips_sign_for_the_opponent():
    # row 0: opponent to move in s'; the illegal action 2 has the largest value and must be ignored
    # row 1: same mover again (extra turn): +gamma * max
    # row 2: terminal: the reward alone, although s' has values and legal bits
    q = [[0.5, -0.2, 9.0], [0.1, 0.3, 9.0], [0.7, 0.7, 0.7]]
    legal = [[True, True, False], [True, True, False], [True, True, True]]
    y = targets(q, q, [0.0, 0.0, 1.0], legal, [False, False, True], [False, True, False], double=False)
    assert y == pytest.approx([-0.9 * 0.5, 0.9 * 0.3, 1.0])


def test_double_dqn_target_evaluates_the_online_choice_with_the_target_net():
    online = [[0.0, 1.0, 5.0], [2.0, 0.0, 0.0]]  # online picks 1 (2 is illegal) in row 0, 0 in row 1
    target = [[0.8, -0.4, 3.0], [-0.6, 0.9, 0.0]]  # the target's own max would be 0.8 and 0.9
    legal = [[True, True, False], [True, True, True]]
    y = targets(online, target, [0.0, 0.5], legal, [False, False], [False, True], gamma=1.0)
    assert y == pytest.approx([0.4, 0.5 - 0.6])
    plain = targets(online, target, [0.0, 0.5], legal, [False, False], [False, True], gamma=1.0, double=False)
    assert plain == pytest.approx([-0.8, 0.5 + 0.9])


def test_no_legal_next_action_means_no_bootstrap():
    y = targets([[1.0, 2.0]], [[1.0, 2.0]], [0.25], [[False, False]], [False], [True])
    assert y == pytest.approx([0.25])


def test_seed001_target_adds_q_itself_and_tanh_of_the_reward():
    """Seed 001's conditional minimax target: Q(s,a) + tanh(r) + gamma * phi * max_legal Q(s'); 0 after the end."""
    q_sa = torch.tensor([0.2, -0.1, 0.4])
    tq = [[0.5, -0.2, 9.0], [0.1, 0.3, 9.0], [0.7, 0.7, 0.7]]  # action 2 illegal in rows 0 and 1
    legal = torch.tensor([[True, True, False], [True, True, False], [True, True, True]])
    y = seed001_targets(q_sa, TableNet(tq), torch.tensor([0.0, 0.0, 1.0]), torch.arange(3)[:, None].float(), legal,
                        torch.tensor([False, False, True]), torch.tensor([False, True, False]), 0.6).tolist()
    assert y == pytest.approx([0.2 - 0.6 * 0.5, -0.1 + 0.6 * 0.3, 0.4 + np.tanh(1.0)])


def test_seed001_target_trains_on_dots_and_boxes(tmp_path):
    g = make_game("dots_and_boxes_2x2")
    agent = make_learner("dqn").train(g, {"steps": 600, "learning_starts": 100, "target": "seed001",
                                          "checkpoint_every": 600}, seed=0, checkpoint_dir=tmp_path, eval_points=[])
    assert np.isfinite(agent.value_batch(np.array([g.initial_state()], dtype=np.int64))).all()


# ---------------------------------------------------------------------------------------------- n-step
def push(folder, row, obs_id, action, reward, same, done, next_id=0):
    out = folder.push(np.array([row]), np.full((1, 1, 1, 1), obs_id, np.float32), np.array([action]),
                      np.array([reward], np.float32), np.array([same]), np.full((1, 1, 1, 1), next_id, np.float32),
                      np.ones((1, 2), bool), np.array([done]))
    return {k: v.tolist() for k, v in out.items()}


def test_n_step_returns_multiply_the_signs_and_flush_at_the_end():
    """Decisions d0..d3 of one game: d0 -> d1 opponent moves (sign -), d1 -> d2 extra turn (+), d2 -> d3 (-);
    d3 ends the game with the mover's result +1.  n = 3, gamma = 0.5."""
    f = NStepFolder(rows=2, n=3, obs_shape=(1, 1, 1), gamma=0.5)
    assert push(f, 0, 10, 0, 0.0, False, False, 11)["action"] == []
    assert push(f, 0, 11, 1, 0.0, True, False, 12)["action"] == []
    first = push(f, 0, 12, 0, 0.0, False, False, 13)  # d0 is complete: bootstrap from d3 with signs - + - = +
    assert first["obs"] == [[[[10.0]]]] and first["done"] == [False] and first["same_mover"] == [True]
    assert first["reward"] == [0.0] and first["next_obs"] == [[[[13.0]]]]
    last = push(f, 0, 13, 1, 1.0, True, True)  # the end: d1, d2, d3 flushed with their exact returns
    assert [o[0][0][0] for o in last["obs"]] == [11.0, 12.0, 13.0]
    # d3 (mover won): +1; d2 -> d3 opponent: -0.5; d1 -> d2 same mover: +0.5 * -0.5
    assert last["reward"] == pytest.approx([-0.25, -0.5, 1.0])
    assert last["done"] == [True, True, True]
    assert f.length.tolist() == [0, 0]
    again = push(f, 0, 20, 0, -1.0, True, True)  # a new game in the same row starts from an empty history
    assert again["reward"] == [-1.0] and again["obs"] == [[[[20.0]]]]


def test_one_step_folder_passes_transitions_through():
    f = NStepFolder(rows=1, n=1, obs_shape=(1, 1, 1), gamma=0.9)
    out = push(f, 0, 3, 2, 0.0, False, False, 4)
    assert out["obs"] == [[[[3.0]]]] and out["same_mover"] == [False] and out["reward"] == [0.0]


# ---------------------------------------------------------------------------------------------- the learner
def setup_learner(game_id: str, **params) -> DQNLearner:
    learner = DQNLearner()
    game = make_game(game_id)
    p = learner.check_params(params)
    learner.check_game(game, p)
    opp = learner._make_opponent(game, p.opponent)
    learner.setup(game, p, 0, opp)
    return learner


def test_greedy_action_is_never_illegal_even_when_illegal_values_are_largest():
    learner = setup_learner("connect4", network={"body": "mlp", "hidden": [4]})
    with torch.no_grad():
        learner.online.head.q.bias.copy_(torch.tensor([100.0, 0, 0, 0, 0, 0, 50.0]))
    c4 = learner.game
    states = np.array([c4.replay("111111"), c4.replay("1111117777"), c4.replay("")], dtype=np.int64)
    sums, counts = {"q": torch.zeros((), device=learner.device)}, {"q": 0}  # as the learner's (CUDA when present)
    acts = learner._greedy(c4.encode_batch(states), c4.legal_mask_batch(states), sums, counts)
    assert acts[0] == 6 and acts[1] == 6 and acts[2] == 0


@pytest.mark.parametrize("game_id,opponent,expect_same", [
    ("tictactoe", None, {False}), ("tictactoe", "random", {True}), ("dots_and_boxes_2x2", None, {False, True}),
])
def test_stored_signs_follow_who_moves_next(game_id, opponent, expect_same):
    """Self-play tic-tac-toe always hands the move over; a fixed opponent is folded in (always the same
    mover); Dots and Boxes self-play has both (extra turns)."""
    learner = setup_learner(game_id, opponent=opponent, steps=400, learning_starts=10_000, parallel_envs=8)
    learner.train_segment(0, 400)
    buf = learner.buffer
    live = ~buf.arrays["done"][: len(buf)]
    assert set(buf.arrays["same_mover"][: len(buf)][live].tolist()) == expect_same
    assert learner.counters["env_steps"] == 400
    rewards = buf.arrays["reward"][: len(buf)]
    assert set(np.unique(rewards[live]).tolist()) == {0.0} and (~live).any()


def test_league_rows_fold_their_opponent_in_and_self_play_rows_hand_over():
    """Share 0.5: games 1, 3, 5, ... are league games (the learner first, second, ...), the even ones self-play.
    Live transitions of tic-tac-toe self-play always hand the move over, those of league games never do, so both
    signs are stored; the rows of the first eight games take the seats the schedule gives.  ``learn/core/league.py``'s
tests check the schedule itself."""
    learner = setup_learner("tictactoe", opponents=["random"], opponent_share=0.5, steps=400,
                            learning_starts=10_000, parallel_envs=8)
    assert learner.learner_player.tolist() == [-1, 0, -1, 1, -1, 0, -1, 1]
    learner.train_segment(0, 400)
    buf = learner.buffer
    live = ~buf.arrays["done"][: len(buf)]
    assert set(buf.arrays["same_mover"][: len(buf)][live].tolist()) == {False, True}


def test_boxes_reward_pays_each_box_at_once_and_adds_up_to_the_boxes_played():
    """Dots and Boxes self-play with ``reward: boxes``: a move earns an extra turn exactly when it completes 1 or
    2 boxes, so a live transition pays 1-2 with the same mover and 0 when the move passes; the last move always
    completes a box.  Summed, the stored rewards are the boxes of the finished games (4 each on 2x2) plus the
    boxes of the games in flight, less those taken by the moves still pending."""
    learner = setup_learner("dots_and_boxes_2x2", reward="boxes", gamma=1.0, steps=500, learning_starts=10_000,
                            parallel_envs=8)
    learner.train_segment(0, 500)
    a, n = learner.buffer.arrays, len(learner.buffer)
    reward, same, done = a["reward"][:n], a["same_mover"][:n], a["done"][:n]
    assert set(reward[~done & same].tolist()) <= {1.0, 2.0} and (~done & same).any()
    assert set(reward[~done & ~same].tolist()) == {0.0}
    assert set(reward[done].tolist()) <= {1.0, 2.0} and done.any()
    states = learner.env.states
    in_flight = float((states[:, 2] + states[:, 3]).sum())
    pending = learner._margin(states, learner.pend_mover) - learner.pend_margin
    expected = 4.0 * learner.counters["games_done"] + in_flight - float(pending[learner.pend_valid].sum())
    assert float(reward.sum()) == expected


def test_segments_play_whole_vector_steps_and_only_the_budget_cuts_one():
    learner = setup_learner("tictactoe", steps=23, parallel_envs=7, learning_starts=10_000)
    reached = learner.train_segment(0, 10)  # 7 rows move at the first vector step: 10 falls inside the second
    assert reached == learner.counters["env_steps"] == 14
    assert learner.train_segment(reached, 23) == learner.counters["env_steps"] == 23  # the budget: exact


@pytest.mark.parametrize("opponent, seats", [("semirandom", 1), (None, 2)], ids=["fixed_opponent", "self_play"])
def test_game_end_updates_count_learning_seats_and_epsilon_counts_updates(opponent, seats):
    """Seed 002's DQPlayer: one gradient step per game end and learning seat (a self-play game gives two), and
    epsilon = 0.1 + 0.9 exp(-updates / 20,000).  With a minibatch of one, every game end is one step per seat."""
    exploration = {"schedule": "exponential", "start": 1.0, "end": 0.1, "decay_games": 20}
    learner = setup_learner("tictactoe", steps=300, parallel_envs=1, learning_starts=0, batch_size=1,
                            update_on="game_ends", train_every=1, exploration=exploration,
                            exploration_clock="grad_steps", opponent=opponent,
                            network={"body": "mlp", "hidden": [8], "head": "dueling"})
    learner.train_segment(0, 300)
    c = learner.counters
    assert c["games_done"] > 30 and c["grad_steps"] == seats * c["games_done"]
    assert learner.epsilon() == pytest.approx(0.1 + 0.9 * np.exp(-c["grad_steps"] / 20))


class Kill(Exception):
    pass


PARAMS = {"steps": 600, "checkpoint_every": 150, "parallel_envs": 8, "learning_starts": 50, "batch_size": 16,
          "target_every": 20, "n_step": 2, "network": {"body": "mlp", "hidden": [16], "head": "dueling"},
          "exploration": {"schedule": "linear", "start": 1.0, "end": 0.1, "decay_games": 300}}


def run(ckpt, kill_at=None, params=PARAMS, points=(0, 200, 400, 600)):
    def on_eval(step, agent):
        if kill_at is not None and step >= kill_at:  # measured at the end of the vector step that passes it
            raise Kill
        return {"step": step, "move": int(agent.act(TTT.initial_state(), np.random.default_rng(0)))}

    learner = DQNLearner()
    agent = learner.train(TTT, params, seed=3, checkpoint_dir=ckpt, eval_points=list(points),
                          on_eval=on_eval)
    return learner, agent


CONV_NET = {"body": "conv", "channels": [4], "head": "dueling"}  # channels-last weights, Adam state alike


@pytest.mark.parametrize("extra", [{}, {"symmetry": True}, {"network": CONV_NET}, {"lr_end": 1e-5},
                                   {"opponents": ["random", "tactical"], "opponent_share": 0.4},
                                   {"update_on": "game_ends", "train_every": 1, "exploration_clock": "grad_steps"}],
                         ids=["plain", "symmetry", "conv", "lr_schedule", "league", "game_ends"])
def test_killed_run_resumes_bit_identical(tmp_path, extra):
    params = {**PARAMS, **extra}
    ref, _ = run(tmp_path / "ref", params=params)
    ck = tmp_path / "ck"
    with pytest.raises(Kill):
        run(ck, kill_at=400, params=params)  # dies at the eval at 400: the last checkpoint is just past 300
    assert 300 <= json.loads((ck / MANIFEST).read_text())["done"] < 400
    resumed, _ = run(ck, params=params)
    for name in ("online", "target"):
        for key, value in getattr(ref, name).state_dict().items():
            assert torch.equal(value, getattr(resumed, name).state_dict()[key]), (name, key)
    assert ref.counters == resumed.counters and ref.counters["grad_steps"] > 100
    for key, arr in ref.buffer.arrays.items():
        assert np.array_equal(arr, resumed.buffer.arrays[key]), key
    assert resumed.evaluations == ref.evaluations
    assert not ck.exists()


def test_learning_rate_falls_linearly_to_lr_end_over_the_budget():
    constant = setup_learner("tictactoe", steps=1000, lr=1e-3)
    assert [constant.learning_rate(n) for n in (0, 500, 5000)] == [1e-3, 1e-3, 1e-3]
    falling = setup_learner("tictactoe", steps=1000, lr=1e-3, lr_end=1e-4, learning_starts=0, batch_size=4)
    assert falling.learning_rate(0) == pytest.approx(1e-3)
    assert falling.learning_rate(500) == pytest.approx(5.5e-4)
    assert falling.learning_rate(1000) == falling.learning_rate(2000) == pytest.approx(1e-4)
    falling.train_segment(0, 250)  # the optimizer runs at the rate of the step count it has reached
    assert falling.opt.param_groups[0]["lr"] == pytest.approx(falling.learning_rate(falling.counters["env_steps"]),
                                                              rel=0.01)


def test_final_agent_saves_and_loads_with_the_same_values(tmp_path):
    _, agent = run(tmp_path / "ck", params={**PARAMS, "steps": 100, "learning_starts": 20}, points=[])
    agent.save(tmp_path / "model")
    loaded = load_agent(TTT, "dqn", tmp_path / "model")
    states = np.array([TTT.initial_state(), TTT.replay("5"), TTT.replay("519")], dtype=np.int64)
    assert np.array_equal(loaded.q_values_batch(states), agent.q_values_batch(states))
    assert loaded.kind == "network" and loaded.meta["steps"] == 100


@pytest.mark.parametrize("game_id,params,match", [
    ("tictactoe", {"network": "seed999"}, "unknown network preset"),
    ("tictactoe", {"network": {"body": "mlp", "hiden": [3]}}, "hiden"),
    ("tictactoe", {"learner_seat": "first"}, "only with an opponent"),
    ("tictactoe", {"starts": "uci"}, "needs connect4"),
    ("tictactoe", {"reward": "margin"}, "keeps no score"),
    ("connect4", {"reward": "boxes"}, "keeps no score"),
    ("tictactoe", {"network": {"body": "mlp", "head": "policy_value"}}, "q or dueling"),
    ("connect4", {"starts": "uci", "uci_path": "/nonexistent/uci.parquet"}, "UCI table not found"),
    ("tictactoe", {"gamma": 2}, "gamma"),
    ("tictactoe", {"opponent_share": 0.5}, "opponent_share > 0 needs opponents"),
    ("tictactoe", {"opponent": "random", "opponents": ["random"], "opponent_share": 0.5}, "choose one"),
    ("tictactoe", {"opponents": ["nobody"], "opponent_share": 0.5}, "dqn opponents: .*nobody"),
])
def test_bad_params_fail_with_one_line(game_id, params, match):
    with pytest.raises(BoardRLError, match=match) as err:
        setup_learner(game_id, **params)
    assert "\n" not in str(err.value) and isinstance(err.value, LearnError)


def test_tiny_self_play_run_beats_random_as_first_player(tmp_path):
    """Random as X vs random: 71.2% non-losses (exact).  >= 80% over 400 games is > 3.1 standard errors above
    that (one-sided p < 0.001), so passing means the agent really is better than random."""
    params = {"steps": 3000, "learning_starts": 200, "target_every": 100,
              "exploration": {"schedule": "linear", "start": 1.0, "end": 0.1, "decay_games": 2000}}
    agent = make_learner("dqn").train(TTT, params, seed=0, checkpoint_dir=tmp_path / "ck", eval_points=[])
    result = play_match(TTT, agent, make_agent(TTT, "random"), 400, seats="a_first", seed=7)
    assert result.as_first.losses <= 80
