"""The network's outputs remembered by position (agents/output_cache.py): searches, matches and self-play records
bit for bit those without the cache, at any cache size; a changed network empties it; a position twice in a batch
is evaluated once; one-line errors for a cache the padding cannot make exact."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
import torch

from boardrl.agents.gumbel import GumbelSettings, gumbel_search
from boardrl.agents.output_cache import DEFAULT_ENTRIES, OutputCache, parameter_versions
from boardrl.agents.puct import NetworkEvaluator, SearchSettings, search
from boardrl.games import make_game
from boardrl.games.base import random_legal_actions
from boardrl.learn.alphazero_selfplay import SelfPlayer
from boardrl.learn.core.league import League
from boardrl.nn import build_network
from boardrl.nn.presets import network_preset

C4 = make_game("connect4")
TOWER = network_preset("alphazero", C4.encoding_shape)  # the connect4 residual tower the pipeline trains
SETTINGS = SearchSettings(simulations=48, c_puct=1.5, leaves_per_wave=4)


def tower(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return build_network(TOWER, C4.encoding_shape, C4.num_actions).eval()


def positions(n: int, seed: int = 0) -> np.ndarray:
    """``n`` distinct unfinished Connect 4 rows from random play (auto-reset keeps every row unfinished)."""
    rng = np.random.default_rng(seed)
    env = C4.batched(4)
    out = {env.states[0].tobytes(): env.states[0].copy()}
    while len(out) < n:
        env.step(random_legal_actions(env.legal_mask(), rng))
        out.update((row.tobytes(), row.copy()) for row in env.states)
    return np.stack(list(out.values())[:n])


def searched_twice(evaluator: NetworkEvaluator, roots: np.ndarray) -> list[np.ndarray]:
    """Every tree array of a PUCT search of the roots, then of the same roots again (which meets the first
    search's positions) and of a Gumbel search over them: what a match's next moves do to a cache."""
    out = []
    for _ in range(2):
        trees = search(C4, roots, evaluator, SETTINGS, np.random.default_rng(3))
        out += [getattr(trees, f.name) for f in fields(trees)]
    gumbel = gumbel_search(C4, roots, evaluator, GumbelSettings(simulations=16, considered_actions=4),
                           np.random.default_rng(4), noise=True)
    return out + [gumbel.policy, gumbel.actions, gumbel.trees.visits]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("game_id", ["connect4", "dots_and_boxes_3x3"])
def test_a_positions_outputs_do_not_depend_on_the_batch_it_came_in(game_id, threads):
    """What makes the cache exact: 30 random subsets of 1,536 positions, each evaluated as one batch, give the bits
    the whole batch gave.  Padding a batch to a multiple of 8 rows without the 32-row floor did not: on two threads
    the 3x3 Dots and Boxes tower gave other bits for 2 of these 30 subsets."""
    game = make_game(game_id)
    torch.manual_seed(0)
    net = build_network(network_preset("alphazero", game.encoding_shape), game.encoding_shape, game.num_actions)
    rng = np.random.default_rng(0)
    env = game.batched(16)
    rows = [env.states.copy()]
    while sum(len(r) for r in rows) < 1536:
        env.step(random_legal_actions(env.legal_mask(), rng))
        rows.append(env.states.copy())
    states = np.concatenate(rows)[:1536]
    legal = game.legal_mask_batch(states)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        evaluator = NetworkEvaluator(game, net.eval())
        priors, values = evaluator.evaluate(states, legal, None)
        for _ in range(30):
            idx = rng.choice(len(states), size=rng.integers(1, 300), replace=False)
            p, v = evaluator.evaluate(states[idx], legal[idx], None)
            assert np.array_equal(p, priors[idx]) and np.array_equal(v, values[idx])
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("entries", [DEFAULT_ENTRIES, 40])
def test_searches_with_the_cache_are_bit_for_bit_those_without_it(entries):
    """The real tower, 10 roots: equal trees, policies and moves, whether the cache holds everything or starts over
    every few batches (40 entries); and the cache did save forward passes."""
    net, roots = tower(), positions(10)
    plain, cached = NetworkEvaluator(C4, net), NetworkEvaluator(C4, net, cache_entries=entries)
    expected, got = searched_twice(plain, roots), searched_twice(cached, roots)
    assert all(np.array_equal(a, b) for a, b in zip(expected, got, strict=True))
    assert cached.cache.hits > 0 and cached.positions + cached.cache.hits <= cached.cache.lookups == plain.positions
    assert cached.positions < plain.positions


@pytest.mark.parametrize("game_id", ["connect4", "dots_and_boxes_3x3"])
def test_self_play_records_are_the_same_with_and_without_the_cache(monkeypatch, game_id):
    """16 games of 4-simulation Gumbel self-play with playout caps on two threads, the learner's own player."""
    from boardrl.learn import alphazero_selfplay
    from boardrl.learn.alphazero import AlphaZeroLearner

    game = make_game(game_id)
    learner = AlphaZeroLearner()
    p = learner.check_params({"games": 16, "network": "alphazero", "simulations": 4, "search": "gumbel",
                              "considered_actions": 4, "full_search_share": 0.5, "device": "cpu", "threads": 2})
    torch.manual_seed(1)
    net = build_network(network_preset("alphazero", game.encoding_shape), game.encoding_shape, game.num_actions)
    player = SelfPlayer(game, p, net, "cpu", League(game, p.opponents, p.opponent_share, "alphazero"))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        cached = player.play(5, 0, 16)
        monkeypatch.setattr(alphazero_selfplay, "DEFAULT_ENTRIES", 0)
        plain = player.play(5, 0, 16)
    finally:
        torch.set_num_threads(before)
    assert cached.same_as(plain)


def test_a_changed_network_empties_the_cache():
    """An optimizer step and a load_state_dict each change what the next lookup returns: the new network's
    outputs, never the remembered ones."""
    net, rows = tower(), positions(24)
    legal = C4.legal_mask_batch(rows)
    cached = NetworkEvaluator(C4, net, cache_entries=DEFAULT_ENTRIES)
    before = cached.evaluate(rows, legal, None)
    stamp = parameter_versions(net)
    net.train()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    logits, value = net(torch.from_numpy(C4.encode_batch(rows)))  # batch norm's running statistics move too
    (logits.sum() + value.sum()).backward()
    optimizer.step()
    assert parameter_versions(net) != stamp
    stepped = cached.evaluate(rows, legal, None)
    expected = NetworkEvaluator(C4, net).evaluate(rows, legal, None)
    assert all(np.array_equal(a, b) for a, b in zip(stepped, expected))
    assert not np.array_equal(stepped[1], before[1])
    net.load_state_dict(tower(7).state_dict())
    reloaded = cached.evaluate(rows, legal, None)
    assert all(np.array_equal(a, b) for a, b in zip(reloaded, NetworkEvaluator(C4, tower(7)).evaluate(rows, legal, None)))


def test_a_position_twice_in_one_batch_is_evaluated_once():
    net, rows = tower(), positions(6)
    batch = rows[[0, 1, 0, 2, 1, 0]]
    cached = NetworkEvaluator(C4, net, cache_entries=DEFAULT_ENTRIES)
    priors, values = cached.evaluate(batch, C4.legal_mask_batch(batch), None)
    assert cached.positions == 3 and cached.cache.hits == 0
    assert np.array_equal(priors[0], priors[2]) and np.array_equal(values[1], values[4])
    expected = NetworkEvaluator(C4, net).evaluate(batch, C4.legal_mask_batch(batch), None)
    assert np.array_equal(priors, expected[0]) and np.array_equal(values, expected[1])
    cached.evaluate(batch[:2], C4.legal_mask_batch(batch[:2]), None)
    assert cached.positions == 3 and cached.cache.hits == 2


def test_a_cache_needs_an_entry():
    with pytest.raises(ValueError, match="at least one entry, got 0"):
        OutputCache(C4.num_actions, 0)
