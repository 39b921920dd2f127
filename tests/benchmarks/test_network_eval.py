"""benchmarks/network_eval.py: its inputs are real positions, its exactness check tells equal from unequal bits,
and a measurement names the network it priced (the eager runtime only: compiling takes tens of seconds)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from boardrl.games import make_game

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("network_eval", ROOT / "benchmarks" / "network_eval.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_inputs_are_encodings_of_positions_from_random_play():
    game = make_game("connect4")
    x = bench.positions(game, 100)
    assert x.shape == (100, *game.encoding_shape) and x.dtype == np.float32
    assert set(np.unique(x)) <= {0.0, 1.0}
    stones = x[:, :2].sum(axis=(1, 2, 3))
    assert stones.max() >= 10 and len(np.unique(stones)) > 5  # positions of many depths, not only openings


def test_exactness_tells_equal_bits_from_a_last_bit_apart():
    a = (np.array([[0.5, -1.25]], np.float32), np.array([0.1], np.float32))
    nudged = (np.nextafter(a[0], np.float32(2)), a[1].copy())
    assert bench.compare(a, (a[0].copy(), a[1].copy())) == {"max_abs_diff": 0.0, "bitwise_equal": True}
    got = bench.compare(a, nudged)
    assert not got["bitwise_equal"] and 0 < got["max_abs_diff"] < 1e-6


def test_a_measurement_prices_the_network_asked_for():
    small = '{"body": "residual", "channels": 8, "blocks": 1, "head": "policy_value", "head_hidden": 16}'
    out = bench.measure(1, repeats=1, batches=(8,), network=small, runtimes=("eager",))
    assert out["network"]["channels"] == 8 and out["network"]["blocks"] == 1 and out["parameters"] > 0
    row = out["runtimes"]["eager"]["8"]
    assert row["bitwise_equal"] and row["max_abs_diff"] == 0.0 and row["evals_per_s"] > 0
    assert set(out["runtimes"]) == {"eager"}
