"""Lambda-returns and afterstates of seed 003's value learners, against hand computations.

The toy episodes are small enough to write every number down; the tic-tac-toe episode checks that each memory
row bootstraps from its *own* successor (seed 003's bug was to use the first sample's for all).
"""

from __future__ import annotations

import numpy as np
import pytest

from boardrl.agents.afterstate import AfterstateAgent, afterstate_scores
from boardrl.games import make_game
from boardrl.learn import learner_class
from boardrl.learn.lambda_returns import EpisodeBuffer, lambda_returns
from boardrl.learn.value_selfplay import symmetric_episodes

TTT = make_game("tictactoe")


def chain(lam: float, gamma: float = 0.9) -> np.ndarray:
    """Three rows of one episode: row 2 ends the game (reward 1), signs -1 (players alternate)."""
    return lambda_returns(
        reward=np.array([0.0, 0.0, 1.0]), done=np.array([False, False, True]), sign=np.array([-1.0, -1.0, -1.0]),
        next_value=np.array([0.5, -0.2, 123.0]), next_index=np.array([1, 2, -1]), depth=np.array([2, 1, 0]),
        gamma=gamma, lam=lam,
    )


def test_lambda_returns_by_hand():
    # G2 = 1; G1 = 0.9 * -1 * (0.6 * 1 + 0.4 * -0.2) = -0.468; G0 = 0.9 * -1 * (0.6 * -0.468 + 0.4 * 0.5) = 0.07272
    assert chain(0.6) == pytest.approx([0.07272, -0.468, 1.0])


def test_lambda_zero_is_one_step_and_lambda_one_is_the_discounted_result():
    assert chain(0.0) == pytest.approx([-0.45, 0.18, 1.0])  # -gamma * v'
    assert chain(1.0) == pytest.approx([0.81, -0.9, 1.0])  # (-gamma)^k * result


def test_row_without_stored_successor_bootstraps_from_its_next_value():
    g = lambda_returns(np.array([0.0]), np.array([False]), np.array([1.0]), np.array([0.4]), np.array([-1]),
                       np.array([0]), gamma=0.5, lam=0.7)
    assert g == pytest.approx([0.2])  # same mover moves again: +gamma * v'


def test_buffer_overwrite_cuts_links_into_overwritten_rows():
    buf = EpisodeBuffer(4, (1,), 1)

    def rows(n: int, first: float) -> dict:
        return {"obs": np.full((n, 1), first, np.float32) + np.arange(n, dtype=np.float32)[:, None],
                "next_index": np.append(np.arange(1, n), -1), "depth": np.arange(n)[::-1].copy()}

    buf.add(rows(3, 0.0))  # slots 0, 1, 2 linked 0 -> 1 -> 2
    buf.add(rows(2, 10.0))  # slots 3, 0: overwrites slot 0 (the head of the first episode)
    a = buf.arrays
    assert a["obs"][:, 0].tolist() == [11.0, 1.0, 2.0, 10.0]
    assert a["next_index"].tolist() == [-1, 2, -1, 0]  # new episode 3 -> 0 linked across the wrap
    buf.add(rows(1, 20.0))  # overwrites slot 1: nothing pointed there any more except the old 0 -> 1 link, gone
    assert a["next_index"].tolist() == [-1, -1, -1, 0] and len(buf) == 4


# ---------------------------------------------------------------------------------------------- episodes
def play(moves: str) -> tuple:
    """A finished tic-tac-toe game as the learner's per-step records (one game, no exploration)."""
    batch = TTT.batched(1, auto_reset=False)
    states, actions = [batch.states.copy()], []
    result = None
    for ch in moves:
        a = np.array([int(ch) - 1])
        finished, rets = batch.step(a)
        states.append(batch.states.copy())
        actions.append(a)
        if finished[0]:
            result = rets[:1].astype(float)
    return np.stack(states), np.stack(actions), np.zeros((len(actions), 1), bool), np.array([len(actions)]), result


def learner(name: str):
    L = learner_class(name)()
    L.setup(TTT, L.check_params({"device": "cpu"}), 0, None)
    return L


def test_afterstate_rows_of_a_won_game():
    """X 1, O 4, X 2, O 5, X 3 wins the top row.  Afterstates after moves 1..4 are rows; the last leads to the win."""
    L = learner("td_lambda")
    rows = L._rows(*play("14253"))
    assert rows["obs"].shape[0] == 4  # afterstates after moves 1, 2, 3, 4 (move 0's afterstate: t = 1)
    assert rows["done"].tolist() == [False, False, False, True]
    assert rows["reward"].tolist() == [0, 0, 0, 1]  # X is to move in the last afterstate, and X wins
    assert rows["sign"].tolist() == [-1, -1, -1, -1]
    assert rows["next_index"].tolist() == [1, 2, 3, -1] and rows["depth"].tolist() == [3, 2, 1, 0]
    # row t's successor is the position after move t+1: each row its own
    assert np.array_equal(rows["next_obs"][:-1], rows["obs"][1:])
    # With V = 0 everywhere, G = (-0.9 * 0.6)^k of the last reward, from each row's player to move.
    g = lambda_returns(rows["reward"], rows["done"], rows["sign"].astype(float), np.zeros(4), rows["next_index"],
                       rows["depth"], gamma=0.9, lam=0.6)
    assert g == pytest.approx([-0.54 ** 3, 0.54 ** 2, -0.54, 1.0])


def test_q_rows_of_a_drawn_game_and_exploratory_moves_dropped():
    L = learner("qnet")  # stores no exploratory samples (seed 003)
    states, actions, explored, length, result = play("513746928")  # a draw
    assert result.tolist() == [[0.0, 0.0]]
    explored[4, 0] = True  # move 4 was exploratory: its row is dropped, the chain is cut before it
    rows = L._rows(states, actions, explored, length, result)
    assert rows["action"].tolist() == [4, 0, 2, 6, 5, 8, 1, 7]  # moves 5 1 3 7 (4 dropped) 6 9 2 8, cells - 1
    assert rows["next_index"].tolist() == [1, 2, 3, -1, 5, 6, 7, -1]
    assert rows["depth"].tolist() == [3, 2, 1, 0, 3, 2, 1, 0]
    assert rows["done"].tolist() == [False] * 7 + [True] and rows["reward"].tolist() == [0.0] * 8


def test_watkins_cut_keeps_the_exploratory_row_and_ends_the_return_before_it():
    """Q learners in our configuration: the exploratory move's own sample is a valid Q-learning target, but the
    return of the move before it must not follow the exploratory continuation (it bootstraps at max Q)."""
    L = learner("dqn_lambda")
    L.p = L.p.model_copy(update={"store_exploratory": True, "cut_at_exploration": True})
    states, actions, explored, length, result = play("513746928")
    explored[4, 0] = True
    rows = L._rows(states, actions, explored, length, result)
    assert rows["action"].tolist() == [4, 0, 2, 6, 3, 5, 8, 1, 7]  # every move stored, 4 (cell 4) included
    assert rows["next_index"].tolist() == [1, 2, 3, -1, 5, 6, 7, 8, -1]
    assert rows["depth"].tolist() == [3, 2, 1, 0, 4, 3, 2, 1, 0]


def test_symmetric_episodes_are_the_eight_images_of_the_game():
    """X 1, O 4, X 2, O 5, X 3 (top row): image k is the game replayed with every move mapped by symmetry k."""
    states, actions, explored, length, result = play("14253")
    explored[2, 0] = True
    s_states, s_actions, s_explored, s_length, s_result = symmetric_episodes(
        TTT, states, actions, explored, length, result)
    _, maps = TTT.symmetries_batch(states[0])
    assert s_states.shape == (6, 8, 2) and s_actions.shape == (5, 8) and len(maps) == 8
    assert np.array_equal(s_states[:, 0], states[:, 0]) and np.array_equal(s_actions[:, 0], actions[:, 0])
    lines = set()
    for k, cell_map in enumerate(maps):
        moves = [int(cell_map[a]) for a in actions[:, 0]]
        assert s_actions[:, k].tolist() == moves
        assert np.array_equal(s_states[:, k], [TTT.replay(moves[:t]) for t in range(6)])
        assert TTT.winner(TTT.replay(moves)) == 0  # X still wins, on the image of the top row
        lines.add(frozenset(moves[0::2]))
    assert lines == {frozenset(c) for c in ([0, 1, 2], [2, 5, 8], [6, 7, 8], [0, 3, 6])}  # 4 sides, each twice
    assert s_explored[2].all() and not s_explored[[0, 1, 3, 4]].any()
    assert s_length.tolist() == [5] * 8 and np.array_equal(s_result, np.repeat(result, 8, axis=0))


def test_symmetry_stores_eight_linked_episodes_per_game():
    L = learner("td_lambda")
    plain = L._rows(*play("14253"))
    rows = L._rows(*symmetric_episodes(TTT, *play("14253")))
    assert rows["obs"].shape[0] == 8 * 4
    for key in ("reward", "done", "sign", "depth"):
        assert np.array_equal(rows[key], np.tile(plain[key], 8)), key
    assert rows["next_index"].tolist() == [i + 1 if i % 4 != 3 else -1 for i in range(32)]
    assert np.array_equal(rows["obs"][:4], plain["obs"])


# ---------------------------------------------------------------------------------------------- afterstates
def test_afterstate_scores_take_exact_results_and_flip_the_opponents_values():
    s = np.array([TTT.replay("1425")], dtype=np.int64)  # X to move, 3 wins the top row
    legal = TTT.legal_mask_batch(s)
    scores = afterstate_scores(TTT, s, legal, lambda rows: np.full(len(rows), 0.25))
    assert scores[0, 2] == 1.0  # terminal: X's exact result
    live = [a for a in range(9) if legal[0, a] and a != 2]
    assert scores[0, live] == pytest.approx([-0.25] * len(live))  # O to move next: V(child) is O's value
    assert np.isneginf(scores[0, [0, 1, 3, 4]]).all()


def test_afterstate_agent_save_load_round_trip(tmp_path):
    L = learner("td0")
    agent = L.snapshot()
    assert isinstance(agent, AfterstateAgent)
    agent.save(tmp_path / "m")
    back = AfterstateAgent.load(TTT, __import__("json").loads((tmp_path / "m" / "agent.json").read_text()),
                                tmp_path / "m")
    states = np.array([TTT.replay(m) for m in ("", "5", "51", "519", "5193")], dtype=np.int64)
    rng = np.random.default_rng(0)
    assert np.array_equal(agent.act_batch(states, rng), back.act_batch(states, rng))
    assert agent.state_values(states) == pytest.approx(back.state_values(states))
