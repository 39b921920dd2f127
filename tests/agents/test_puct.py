"""Batched PUCT search: selection and backup on hand-built trees (virtual loss, extra turns, terminal hits),
root-only Dirichlet noise, the evaluator interface (uniform, custom, rollouts), forced wins, determinism and
the tree invariants every search must keep (one expansion per node, visits and values adding up)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boardrl.agents.puct import (
    FREE, PENDING, RolloutEvaluator, SearchSettings, TacticalEvaluator, Trees, UniformEvaluator, _pick_edge,
    backup_wave, normalised_priors, root_priors, sample_moves, search, select_wave, step_rows, visit_policy,
)
from boardrl.errors import BoardRLError
from boardrl.games import make_game
from boardrl.games.base import random_legal_actions

TTT = make_game("tictactoe")
C4 = make_game("connect4")


# ---------------------------------------------------------------------------------------------- helpers
def hand_tree(num_actions: int, nodes: list[dict]) -> Trees:
    """One tree (b = 0) from per-node dicts: prior, visits, value, child, mover, terminal, tvalue."""
    t = Trees.allocate(1, len(nodes) + 4, num_actions, 1)
    for n, spec in enumerate(nodes):
        t.prior[0, n] = spec["prior"]
        t.visits[0, n] = spec.get("visits", [0] * num_actions)
        t.value[0, n] = spec.get("value", [0.0] * num_actions)
        t.child[0, n] = spec.get("child", [FREE] * num_actions)
        t.mover[0, n] = spec.get("mover", 0)
        t.terminal[0, n] = spec.get("terminal", False)
        t.tvalue[0, n] = spec.get("tvalue", 0.0)
        t.states[0, n, 0] = n
    t.size[0] = len(nodes)
    return t


def wave(t: Trees, walks: int, c_puct: float, fpu: float = 0.0, depth: int = 8):
    """One selection wave of ``walks`` walks on tree 0: (path_node, path_action, path_len, leaf_kind)."""
    path_node = np.zeros((1, walks, depth), np.int64)
    path_action = np.zeros_like(path_node)
    path_len = np.zeros((1, walks), np.int64)
    leaf_kind = np.zeros((1, walks), np.int64)
    select_wave(t.prior, t.visits, t.value, t.child, t.terminal, np.array([True]), np.array([walks], np.int64),
                c_puct, fpu, path_node, path_action, path_len, leaf_kind)
    return path_node, path_action, path_len, leaf_kind


def backup(t: Trees, paths, leaves: list[tuple[int, int, float]], done: np.ndarray) -> None:
    """Back up a wave; ``leaves`` are (walk k, new node's mover, its value for player 0), non-terminal."""
    path_node, path_action, path_len, leaf_kind = paths
    a = t.prior.shape[2]
    n = len(leaves)
    backup_wave(t.states, t.mover, t.terminal, t.tvalue, t.prior, t.visits, t.value, t.child, t.size, path_node,
                path_action, path_len, leaf_kind, np.zeros(n, np.int64), np.array([k for k, _, _ in leaves], np.int64),
                np.full((n, 1), 99, np.int64), np.array([m for _, m, _ in leaves], np.int64), np.zeros(n, np.bool_),
                np.array([v for _, _, v in leaves], np.float64), np.full((n, a), 1.0 / a), done)


def walk(paths, k: int) -> list[tuple[int, int]]:
    path_node, path_action, path_len, _ = paths
    return [(int(path_node[0, k, d]), int(path_action[0, k, d])) for d in range(path_len[0, k])]


def rows(game, *move_strings: str) -> np.ndarray:
    return np.array([game.replay(m) for m in move_strings], dtype=np.int64)


def check_tree(game, t: Trees, b: int) -> None:
    """The invariants of a finished search of tree b.

    Every node but the root is the child of exactly one edge (never expanded twice), holds the game's
    successor of its parent's state, and its mover, terminal flag and result are the engine's.  Visits add up:
    an edge into a non-terminal node carries that node's expansion plus all visits below it; an edge into a
    terminal node counts each time the result was backed up.  Values add up with the sign of each node's mover
    (W(s, a) for the mover of s): so an extra turn (parent and child with the same mover) keeps the sign.
    """
    size = int(t.size[b])
    child, visits, value = t.child[b, :size], t.visits[b, :size], t.value[b, :size]
    assert not (t.child[b] == PENDING).any()
    assert sorted(child[child >= 0].tolist()) == list(range(1, size))
    sign = np.where(t.mover[b, :size] == 0, 1.0, -1.0)
    parent, action = np.nonzero(child >= 0)
    nxt, finished, rets = step_rows(game, t.states[b, parent], action)
    kids = child[parent, action]
    assert np.array_equal(t.states[b, kids], nxt)
    assert np.array_equal(t.terminal[b, kids], finished)
    assert np.array_equal(t.mover[b, kids], game.to_move_batch(nxt).astype(np.int64))
    assert np.array_equal(t.tvalue[b, kids][finished], rets[finished, 0].astype(np.float64))
    for n, a, c in zip(parent, action, kids):
        if t.terminal[b, c]:
            assert visits[c].sum() == 0 and (t.prior[b, c] == -1).all()
            ending = visits[n, a]
        else:
            assert visits[n, a] == 1 + visits[c].sum()
            ending = 1
        below = t.tvalue[b, c] * ending + (value[c] * sign[c]).sum()
        assert value[n, a] * sign[n] == pytest.approx(below, abs=1e-9)
    legal = game.legal_mask_batch(t.states[b, :size])
    live = ~t.terminal[b, :size]
    assert np.array_equal(t.prior[b, :size][live] >= 0, legal[live])
    unexpanded = child < 0
    assert (visits[unexpanded] == 0).all() and (value[unexpanded] == 0).all()


# ---------------------------------------------------------------------------------------------- selection
def test_pick_edge_is_the_puct_argmax_computed_by_hand():
    """Node with N = 3: edge 0 (P .5, n 2, W 1), edge 1 (P .3, n 1, W .8), edge 2 (P .2, unvisited), edge 3
    illegal (prior -1) with a huge W that must never be picked."""
    t = hand_tree(4, [{"prior": [0.5, 0.3, 0.2, -1.0], "visits": [2, 1, 0, 0], "value": [1.0, 0.8, 0.0, 50.0]}])
    r = math.sqrt(3 + 1e-8)

    def scores(c, fpu):
        return [0.5 + c * 0.5 * r / 3, 0.8 + c * 0.3 * r / 2, fpu + c * 0.2 * r / 1]

    # c = 1.5, fpu 0: 0.9330, 1.1897, 0.5196 -> edge 1
    assert scores(1.5, 0.0) == pytest.approx([0.9330127, 1.1897114, 0.5196152])
    assert _pick_edge(t.prior, t.visits, t.value, t.child, 0, 0, 1.5, 0.0) == 1
    # fpu 0.7 lifts the unvisited edge to 1.2196 > 1.1897
    assert scores(1.5, 0.7)[2] == pytest.approx(1.2196152)
    assert _pick_edge(t.prior, t.visits, t.value, t.child, 0, 0, 1.5, 0.7) == 2
    # c = 0: pure Q (0.5, 0.8, fpu -0.5) -> edge 1; c = 10: the exploration term rules: 2.89+.5, 2.60+.8, 3.46
    assert _pick_edge(t.prior, t.visits, t.value, t.child, 0, 0, 0.0, -0.5) == 1
    assert int(np.argmax(scores(10.0, 0.0))) == 2
    assert _pick_edge(t.prior, t.visits, t.value, t.child, 0, 0, 10.0, 0.0) == 2
    # W negative for the mover: edge 1 at Q = -0.8 scores 1.5*.3*r/2 - .8 = -0.41 < edge 0's 0.93
    t.value[0, 0, 1] = -0.8
    assert _pick_edge(t.prior, t.visits, t.value, t.child, 0, 0, 1.5, 0.0) == 0


def test_pick_edge_ties_go_to_the_lowest_action_and_a_dead_node_has_none():
    t = hand_tree(3, [{"prior": [-1.0, 0.5, 0.5]}, {"prior": [-1.0, -1.0, -1.0]}])
    assert _pick_edge(t.prior, t.visits, t.value, t.child, 0, 0, 1.5, 0.0) == 1
    assert _pick_edge(t.prior, t.visits, t.value, t.child, 0, 1, 1.5, 0.0) == -1


def test_virtual_loss_spreads_walks_of_one_wave_and_marks_the_new_edges_pending():
    """Root (N = 2: both children visited once, W 0), children 1 and 2 unexpanded below, all priors 1/2, c = 1.

    Walk 1: root tie -> edge 0, node 1 tie -> edge 0 (FREE: expand).  Its virtual loss makes root edge 0
    score -1/2 + .5 sqrt(3)/3 = -0.21 < edge 1's .5 sqrt(3)/2 = 0.43: walk 2 goes to node 2, edge 0.  Walk 3:
    both root edges at -1/2 + .5 * 2/3 (an exact tie) -> edge 0; in node 1, edge 0 has Q -1 (-1 + .25) and
    edge 1 is unvisited (.5): edge 1."""
    half = [0.5, 0.5]
    t = hand_tree(2, [{"prior": half, "visits": [1, 1], "child": [1, 2]},
                      {"prior": half, "mover": 1}, {"prior": half, "mover": 1}])
    paths = wave(t, 3, c_puct=1.0)
    assert [walk(paths, k) for k in range(3)] == [[(0, 0), (1, 0)], [(0, 1), (2, 0)], [(0, 0), (1, 1)]]
    assert paths[3].tolist() == [[1, 1, 1]]
    assert t.visits[0, :3].tolist() == [[3, 2], [1, 1], [1, 0]]
    assert t.value[0, :3].tolist() == [[-2.0, -1.0], [-1.0, -1.0], [-1.0, 0.0]]
    assert t.child[0, :3].tolist() == [[1, 2], [PENDING, PENDING], [PENDING, FREE]]
    # backing the three leaves up replaces each virtual -1 by the value: leaf values for player 0 .5, -.2, 1
    done = np.zeros(1, np.int64)
    backup(t, paths, [(0, 0, 0.5), (1, 1, -0.2), (2, 0, 1.0)], done)
    assert done.tolist() == [3] and t.size.tolist() == [6]
    assert t.child[0, :3].tolist() == [[1, 2], [3, 5], [4, FREE]]
    assert t.visits[0, :3].tolist() == [[3, 2], [1, 1], [1, 0]]  # the virtual visits became real ones
    # root (mover 0): W0 = .5 + 1, W1 = -.2; nodes 1, 2 (mover 1) see the negated leaf values
    assert t.value[0, :3] == pytest.approx(np.array([[1.5, -0.2], [-0.5, -1.0], [0.2, 0.0]]))
    assert t.mover[0, 3:6].tolist() == [0, 1, 0] and t.tvalue[0, 3:6].tolist() == [0.5, -0.2, 1.0]
    assert (t.states[0, 3:6, 0] == 99).all() and (t.prior[0, 3:6] == 0.5).all()


def test_a_walk_that_meets_a_pending_edge_is_dropped_and_its_virtual_losses_undone():
    """One legal action per node: walk 2 follows walk 1 into node 1 and finds its edge pending."""
    t = hand_tree(2, [{"prior": [1.0, -1.0], "visits": [1, 0], "value": [0.2, 0.0], "child": [1, FREE]},
                      {"prior": [1.0, -1.0], "mover": 1}])
    paths = wave(t, 2, c_puct=1.5)
    assert walk(paths, 0) == [(0, 0), (1, 0)] and walk(paths, 1) == []
    assert paths[3].tolist() == [[1, 0]]
    assert t.visits[0, :2, 0].tolist() == [2, 1] and t.value[0, :2, 0].tolist() == pytest.approx([-0.8, -1.0])
    done = np.zeros(1, np.int64)
    backup(t, paths, [(0, 0, 0.4)], done)
    assert done.tolist() == [1]  # the dropped walk is not a simulation
    assert t.visits[0, :2, 0].tolist() == [2, 1] and t.value[0, :2, 0].tolist() == pytest.approx([0.6, -0.4])
    assert t.child[0, 1, 0] == 2 and t.size[0] == 3


def test_backup_signs_follow_each_nodes_mover_through_an_extra_turn_and_terminal_hits():
    """Root (player 0) -> node 1 (player 0 again: an extra turn) -> node 2 (player 1).  Node 2's edge 0 leads to
    terminal node 3 that player 1 won (tvalue -1), already visited once (W +1 for player 1).  c = 3.

    Wave 1 in node 2: edge 0 scores 1 + 3 * .5 * 1/2 = 1.75, edge 1 3 * .5 = 1.5: the walk ends on the terminal
    node, whose -1 goes to player 0's two edges as -1 and to player 1's as +1.  Wave 2: edge 0 scores
    1 + 1.5 sqrt(2)/3 = 1.71 < edge 1's 1.5 sqrt(2) = 2.12: a new leaf, valued +.25 for player 0."""
    t = hand_tree(2, [
        {"prior": [1.0, -1.0], "visits": [1, 0], "child": [1, FREE]},
        {"prior": [-1.0, 1.0], "visits": [0, 1], "child": [FREE, 2]},
        {"prior": [0.5, 0.5], "visits": [1, 0], "value": [1.0, 0.0], "child": [3, FREE], "mover": 1},
        {"prior": [-1.0, -1.0], "terminal": True, "tvalue": -1.0},
    ])
    done = np.zeros(1, np.int64)
    paths = wave(t, 1, c_puct=3.0)
    assert walk(paths, 0) == [(0, 0), (1, 1), (2, 0)] and paths[3].tolist() == [[2]]
    backup(t, paths, [], done)
    assert t.visits[0, :3].tolist() == [[2, 0], [0, 2], [2, 0]]
    assert t.value[0, :3] == pytest.approx(np.array([[-1.0, 0.0], [0.0, -1.0], [2.0, 0.0]]))
    assert t.size[0] == 4 and done.tolist() == [1]
    paths = wave(t, 1, c_puct=3.0)
    assert walk(paths, 0) == [(0, 0), (1, 1), (2, 1)] and paths[3].tolist() == [[1]]
    backup(t, paths, [(0, 0, 0.25)], done)
    assert t.visits[0, :3].tolist() == [[3, 0], [0, 3], [2, 1]]
    assert t.value[0, :3] == pytest.approx(np.array([[-0.75, 0.0], [0.0, -0.75], [2.0, -0.25]]))
    assert t.child[0, 2].tolist() == [3, 4] and done.tolist() == [2]


@pytest.mark.parametrize("game_id,moves", [
    ("dots_and_boxes_2x2", "0 2 6 9 4"), ("conniption", "n4n n4n"), ("connect4", "4453"), ("tictactoe", "15"),
])
def test_real_searches_keep_every_tree_invariant(game_id, moves):
    """Extra turns (Dots and Boxes box completions, Conniption's three stages) appear inside the trees and the
    values still add up with the right signs."""
    game = make_game(game_id)
    start = game.replay(moves)
    roots = np.array([start, game.initial_state()], dtype=np.int64)
    s = SearchSettings(simulations=300, leaves_per_wave=4, noise=0.25)
    t = search(game, roots, RolloutEvaluator(game), s, np.random.default_rng(1))
    for b in range(2):
        check_tree(game, t, b)
        assert t.visits[b, 0].sum() == 300
    if game_id in ("dots_and_boxes_2x2", "conniption"):
        size = t.size[0]
        parent, action = np.nonzero(t.child[0, :size] >= 0)
        kids = t.child[0, parent, action]
        extra = (t.mover[0, parent] == t.mover[0, kids]) & ~t.terminal[0, kids]
        assert extra.sum() > 10


# ---------------------------------------------------------------------------------------------- priors
class FixedEvaluator:
    """A custom evaluator (no base class): priors and value are a fixed function of the state row."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    @staticmethod
    def raw(states: np.ndarray, num_actions: int) -> np.ndarray:
        return (np.arange(num_actions)[None] + 1.0 + states.sum(axis=1)[:, None] % 5) ** 2

    def evaluate(self, states, legal, rng):
        self.batches.append(len(states))
        values = (states.sum(axis=1) % 7 - 3) / 2.0  # some beyond [-1, 1]: the search clips them
        return self.raw(states, legal.shape[1]), values


def test_normalised_priors_by_hand():
    raw = np.array([[0.2, 0.6, 5.0, 0.2], [0.0, 0.0, 1.0, 0.0], [-3.0, 2.0, 2.0, 0.0]])
    legal = np.array([[True, True, False, True], [True, True, False, False], [True, True, True, False]])
    out = normalised_priors(raw, legal)
    assert out == pytest.approx(np.array([[0.2, 0.6, -1.0, 0.2], [0.5, 0.5, -1.0, -1.0], [0.0, 0.5, 0.5, -1.0]]))


def test_dirichlet_noise_touches_the_root_priors_only():
    game = C4
    roots = rows(game, "4453", "111111", "")  # column 1 is full in the second root
    ev = FixedEvaluator()
    s = SearchSettings(simulations=120, leaves_per_wave=4, noise=0.25, dirichlet_alpha=0.3)
    t = search(game, roots, ev, s, np.random.default_rng(9))
    legal = game.legal_mask_batch(roots)
    clean = normalised_priors(ev.raw(roots, 7), legal)
    root = t.prior[:, 0]
    assert np.abs(root - clean).max() > 0.01
    assert np.where(legal, root, 0).sum(axis=1) == pytest.approx([1.0, 1.0, 1.0])
    assert ((root >= 0) == legal).all() and root[1, 0] == -1.0
    # the evaluator draws nothing, so the noise is the search generator's first draws: one Dirichlet per root
    # over its legal moves, mixed in with weight 1/4
    gen = np.random.default_rng(9)
    for b in range(3):
        idx = np.flatnonzero(legal[b])
        noise = gen.dirichlet(np.full(idx.size, 0.3))
        assert root[b, idx] == pytest.approx(0.75 * clean[b, idx] + 0.25 * noise, abs=1e-12)
    assert np.array_equal(root, root_priors(clean, legal, s, np.random.default_rng(9)))
    for b in range(3):
        size = t.size[b]
        live = np.flatnonzero(~t.terminal[b, 1:size]) + 1
        states = t.states[b, live]
        expected = normalised_priors(ev.raw(states, 7), game.legal_mask_batch(states))
        assert np.array_equal(t.prior[b, live], expected)  # exactly the evaluator's, no noise


def test_a_custom_evaluator_plugs_in_with_batches_of_all_trees_and_clipped_values():
    game = C4
    roots = rows(game, "4453", "1", "", "77")
    ev = FixedEvaluator()
    t = search(game, roots, ev, SearchSettings(simulations=40, leaves_per_wave=3), np.random.default_rng(0))
    assert ev.batches[0] == 4 and max(ev.batches[1:]) <= 4 * 3 and max(ev.batches[1:]) > 4
    for b in range(4):
        check_tree(game, t, b)
        live = np.flatnonzero(~t.terminal[b, 1:t.size[b]]) + 1
        v = np.clip((t.states[b, live].sum(axis=1) % 7 - 3) / 2.0, -1, 1)
        assert np.array_equal(t.tvalue[b, live], np.where(t.mover[b, live] == 0, v, -v))
        assert t.visits[b, 0].sum() == 40


# ---------------------------------------------------------------------------------------------- uniform
@pytest.mark.parametrize("k", [1, 4, 10])
def test_uniform_evaluator_visits_tictactoe_roots_round_robin(k):
    """Uniform priors and value 0: every Q is 0 until a terminal is reached, so PUCT picks the least visited
    edge, ties to the lowest action.  9k simulations give each of the 9 root moves k visits (the root's own
    evaluation is not a simulation); a child with k visits spends 1 on its expansion and k - 1 on its 8 edges
    the same way (k = 10: 2 on its lowest legal edge, 1 on the others).  No game ends within 4 plies, so
    all values stay 0.  One more simulation goes to action 0."""
    root = rows(TTT, "")
    t = search(TTT, root, UniformEvaluator(), SearchSettings(simulations=9 * k, leaves_per_wave=1),
               np.random.default_rng(0))
    assert t.root_visits().tolist() == [[k] * 9]
    assert t.size.tolist() == [1 + 9 * k] and not t.terminal.any()
    assert (t.value == 0).all() and (t.tvalue == 0).all() and t.root_values().tolist() == [0.0]
    if k == 10:
        for a in range(9):
            below = t.visits[0, t.child[0, 0, a]]
            expected = np.ones(9, np.int64)
            expected[a] = 0
            expected[1 if a == 0 else 0] = 2
            assert below.tolist() == expected.tolist()
    t = search(TTT, root, UniformEvaluator(), SearchSettings(simulations=9 * k + 1, leaves_per_wave=1),
               np.random.default_rng(0))
    assert t.root_visits().tolist() == [[k + 1] + [k] * 8]


def test_uniform_evaluator_values_come_from_terminal_results_only():
    """From "12587" (O to move, X threatens three wins) every value in the tree is a game result backed up."""
    root = rows(TTT, "12587")
    t = search(TTT, root, UniformEvaluator(), SearchSettings(simulations=200, leaves_per_wave=2),
               np.random.default_rng(0))
    check_tree(TTT, t, 0)
    size = t.size[0]
    assert (t.tvalue[0, :size][~t.terminal[0, :size]] == 0).all()
    assert t.terminal[0, :size].sum() > 3
    # O loses whatever it plays: each root edge's mean is -1 or close to it once every reply was tried
    assert t.root_values()[0] < -0.9


# ---------------------------------------------------------------------------------------------- rollouts
@pytest.mark.parametrize("moves,value", [
    ("12345687", 1.0),   # X to move, one cell left, X completes 1-5-9
    ("12354687", 0.0),   # X to move, one cell left, a draw
    ("123456", 1.0),     # X to move, three cells left: 7 and 9 win at once, 8 wins a move later
    ("123789", 0.0),     # every continuation is a draw
    ("12587", -1.0),     # O to move and X has three threats: O loses whatever it plays
])
def test_rollout_value_is_exact_where_every_playout_ends_the_same(moves, value):
    state = rows(TTT, moves)
    for n in (1, 5):
        priors, values = RolloutEvaluator(TTT, n).evaluate(state, TTT.legal_mask_batch(state),
                                                           np.random.default_rng(3))
        assert values.tolist() == [value] and np.array_equal(priors, TTT.legal_mask_batch(state).astype(np.float32))


def test_rollout_values_are_means_of_random_playouts():
    """From the empty board random play wins 58.5% / loses 28.8% for X: 2,000 rollouts land within 0.08 of the
    exact mean .585 - .288 = .297 (one result's standard deviation is .886: 0.08 is 4 standard errors)."""
    _, v = RolloutEvaluator(TTT, 2000).evaluate(rows(TTT, ""), np.ones((1, 9), bool), np.random.default_rng(0))
    assert abs(float(v[0]) - 0.297) < 0.08
    with pytest.raises(BoardRLError, match="rollouts must be >= 1"):
        RolloutEvaluator(TTT, 0)


# ---------------------------------------------------------------------------------------------- forced wins
def test_search_takes_the_immediate_tictactoe_win():
    """X (1, 2) to move against O (4, 5): 3 wins at once, and O would win at 6 otherwise."""
    root = rows(TTT, "1425")
    for ev in (UniformEvaluator(), RolloutEvaluator(TTT)):
        t = search(TTT, root, ev, SearchSettings(simulations=200, leaves_per_wave=4), np.random.default_rng(0))
        assert int(np.argmax(t.root_visits()[0])) == 2 and t.root_visits()[0, 2] > 100


@pytest.mark.parametrize("moves,best", [
    ("112233", 3),  # X wins at column 4
    ("11223", 3),   # O must block column 4
    ("172737", 3),  # X wins at 4 rather than block O's column 7
])
@pytest.mark.parametrize("lpw", [1, 8])
def test_search_finds_connect4_wins_and_blocks(moves, best, lpw):
    for seed in range(3):
        t = search(C4, rows(C4, moves), RolloutEvaluator(C4), SearchSettings(simulations=300, leaves_per_wave=lpw),
                   np.random.default_rng(seed))
        visits = t.root_visits()[0]
        assert int(np.argmax(visits)) == best and visits[best] > 150, (seed, visits.tolist())


# ---------------------------------------------------------------------------------------------- determinism, budgets
def test_same_generator_same_trees_and_noise_changes_with_the_seed():
    roots = rows(C4, "4453", "", "1234567")
    s = SearchSettings(simulations=64, leaves_per_wave=8, noise=0.25)
    a = search(C4, roots, RolloutEvaluator(C4), s, np.random.default_rng(5))
    b = search(C4, roots, RolloutEvaluator(C4), s, np.random.default_rng(5))
    for name in ("states", "mover", "terminal", "tvalue", "prior", "visits", "value", "child", "size"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    c = search(C4, roots, RolloutEvaluator(C4), s, np.random.default_rng(6))
    assert not np.array_equal(a.prior[:, 0], c.prior[:, 0])


@pytest.mark.parametrize("lpw", [2, 8, 64])
def test_many_leaves_per_wave_never_expand_a_node_twice(lpw):
    rng = np.random.default_rng(0)
    env = C4.batched(6)
    for _ in range(10):
        env.step(random_legal_actions(env.legal_mask(), rng))
    roots = env.states.copy()
    t = search(C4, roots, RolloutEvaluator(C4), SearchSettings(simulations=100, leaves_per_wave=lpw), rng)
    for b in range(len(roots)):
        check_tree(C4, t, b)
        expansions = int((t.child[b] >= 0).sum())
        assert t.size[b] == 1 + expansions and t.size[b] <= 101
        assert t.visits[b, 0].sum() == 100


def test_a_root_with_one_move_into_the_end_counts_every_terminal_hit():
    """The only move ends the game: wave 1 expands it (7 more walks collide and are dropped), then whole waves
    of 8 walks hit the terminal node; 20 simulations in all, the tree never grows past 2 nodes."""
    t = search(TTT, rows(TTT, "12345687"), UniformEvaluator(), SearchSettings(simulations=20, leaves_per_wave=8),
               np.random.default_rng(0))
    assert t.root_visits()[0].tolist() == [0] * 8 + [20] and t.size.tolist() == [2]
    assert t.value[0, 0, 8] == 20.0 and t.root_values().tolist() == [1.0] and t.terminal[0, 1]


def test_bad_settings_and_finished_roots_are_refused_in_one_line():
    for kwargs in ({"simulations": 0}, {"leaves_per_wave": 0}, {"noise": 1.5}, {"c_puct": -1.0},
                   {"dirichlet_alpha": 0.0}):
        with pytest.raises(BoardRLError) as err:
            SearchSettings(**kwargs)
        assert "\n" not in str(err.value)
    with pytest.raises(BoardRLError, match="search: root row 1 is a finished game"):
        search(TTT, rows(TTT, "15", "14253"), UniformEvaluator(), SearchSettings(simulations=4),
               np.random.default_rng(0))


# ---------------------------------------------------------------------------------------------- move choice
def test_visit_policy_by_hand():
    visits = np.array([[1, 3, 0, 4], [2, 2, 0, 1]])
    assert visit_policy(visits, 1.0) == pytest.approx(np.array([[1 / 8, 3 / 8, 0, 4 / 8], [.4, .4, 0, .2]]))
    squared = np.array([[1 / 26, 9 / 26, 0, 16 / 26], [4 / 9, 4 / 9, 0, 1 / 9]])  # T = 1/2: N^2 normalised
    assert visit_policy(visits, 0.5) == pytest.approx(squared)
    assert visit_policy(visits, 0.0).tolist() == [[0, 0, 0, 1], [0.5, 0.5, 0, 0]]


def test_sample_moves_follows_the_policy_and_never_draws_a_zero():
    policy = np.tile([[0.0, 0.25, 0.0, 0.75, 0.0]], (40_000, 1))
    moves = sample_moves(policy, np.random.default_rng(0))
    counts = np.bincount(moves, minlength=5)
    assert counts[[0, 2, 4]].tolist() == [0, 0, 0]
    assert abs(counts[1] / 40_000 - 0.25) < 0.01  # 4.6 standard errors
    one_hot = np.eye(5)[[4, 0, 2]]
    assert sample_moves(one_hot, np.random.default_rng(1)).tolist() == [4, 0, 2]


def test_tactical_evaluator_puts_exact_values_where_the_game_settles_the_leaf():
    """Connect 4 rows: a win now (+1), two threats against the mover (-1), and an open position (the inner
    evaluator's value, here UniformEvaluator's 0.5 stand-in); priors are the inner evaluator's."""
    class Half(UniformEvaluator):
        def evaluate(self, states, legal, rng):
            priors, values = super().evaluate(states, legal, rng)
            return priors, np.full(len(states), 0.5, np.float32)

    rows = np.asarray([C4.replay("445566"), C4.replay("44553"), C4.replay("44")])
    legal = C4.legal_mask_batch(rows)
    priors, values = TacticalEvaluator(C4, Half()).evaluate(rows, legal, np.random.default_rng(0))
    assert values.tolist() == [1.0, -1.0, 0.5] and values.dtype == np.float32
    assert np.array_equal(priors, legal.astype(np.float32))
    with pytest.raises(BoardRLError, match="tictactoe has no exact short-tactics check"):
        TacticalEvaluator(TTT, UniformEvaluator())


def test_tactics_let_a_tiny_search_see_a_loss_one_move_past_its_leaves():
    """O to move faces X's open three on the bottom row: after any O move X wins at once.  With one simulation
    per move each child is a leaf, and only the tactical search knows those leaves are lost: it values the root
    at exactly -1, the plain one (value 0 at leaves) does not."""
    root = np.asarray([C4.replay("44553")])
    settings = SearchSettings(simulations=7, c_puct=1.5, fpu=0.0, leaves_per_wave=1, dirichlet_alpha=0.3, noise=0.0)
    plain = search(C4, root, UniformEvaluator(), settings, np.random.default_rng(0))
    tactical = search(C4, root, TacticalEvaluator(C4, UniformEvaluator()), settings, np.random.default_rng(0))
    assert plain.root_values()[0] > -0.5 and tactical.root_values()[0] == -1.0
