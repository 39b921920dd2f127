"""Speed benchmarks: game engines, the Connect 4 solver, the Dots-and-Boxes referee build, the match runner, the
browser app's referee latency.

``make bench`` runs everything; ``--only PREFIX`` (repeatable) runs the benchmarks whose keys start with a
prefix, e.g. ``--only connect4.`` or ``--only match``.  Results are merged into ``benchmarks/results.json``
(written atomically: a killed run leaves the previous file) and printed as a table with each target.

Method (a shared, noisy machine): every figure is the median of several repetitions; numba kernels are warmed
up (compiled or loaded from cache) before any timing; the Dots-and-Boxes table is built in a fresh process,
without the disk cache, so its wall time and peak RSS are those of a cold build.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np

from boardrl.atomic_io import atomic_write_json

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"
ENGINE_GAMES = ("tictactoe", "connect4", "dots_and_boxes_3x3", "conniption")
BATCH_N = 4096

#: key -> (comparison, threshold); the issue's targets for this 2-core machine.
TARGETS: dict[str, tuple[str, float]] = {
    "tictactoe.batched_steps_per_s": (">=", 5e6),
    "connect4.batched_steps_per_s": (">=", 5e6),
    "dots_and_boxes_3x3.batched_steps_per_s": (">=", 5e6),
    "conniption.batched_steps_per_s": (">=", 2e6),
    # One-game path (legal_moves + play, what humans, scripted and Python agents use): about a Python loop over a
    # C++ engine.
    "tictactoe.scalar_steps_per_s": (">=", 1e6),
    "connect4.scalar_steps_per_s": (">=", 1e6),
    "dots_and_boxes_3x3.scalar_steps_per_s": (">=", 1e6),
    "connect4_solver.nodes_per_s": (">=", 1e7),
    "connect4_solver.median_ms_20ply": ("<=", 50.0),
    "dots_and_boxes_3x3_referee.seconds": ("<=", 60.0),
    "dots_and_boxes_3x3_referee.peak_mib": ("<=", 1024.0),
    "match.connect4_tactical_vs_random_games_per_s": (">=", 1000.0),  # 10,000 games in <= 10 s
    # Tabular self-play training (issue: 10,000 games of tic-tac-toe in <= 5 s, of 3x3 Dots and Boxes in <= 30 s)
    "tabular.tictactoe_10k_selfplay_s": ("<=", 5.0),
    "tabular.dots_and_boxes_3x3_10k_selfplay_s": ("<=", 30.0),
    "tabular.dots_and_boxes_3x3_10k_margin_transfer_s": ("<=", 30.0),
    # Connect 4 DQN training, learning included (issue: >= 3,000 environment steps per second on this machine)
    "dqn.connect4_env_steps_per_s": (">=", 3000.0),
    # The first look (issue: `make repro PROFILE=tiny` in <= 2 minutes on this machine, idle): a fresh copy of the
    # project with an empty DVC cache and MLflow database, as a new user's clone has.
    "pipeline.tiny_profile_s": ("<=", 120.0),
    # Connect 4 self-play search, PUCT and Gumbel (issue 36: "set the figure you reach as the regression line"),
    # connect4_alphazero's 16 simulations a move.  Three runs of `benchmarks/run.py --only alphazero.connect4_puct
    # --repeats 3` on 2026-11-29 at 22faf02, this machine idle, gave medians (thousands a second, 1 / 2 threads)
    # of PUCT 14.1 / 26.4, 13.1 / 22.2, 12.5 / 24.8 and Gumbel 14.0 / 25.1, 11.8 / 20.2, 14.5 / 25.4.  A run
    # swings by up to a fifth here, so the lines sit under every run (about 75% of the middle run): a fall past
    # them is a regression, not noise.
    "alphazero.connect4_puct_1t_simulations_per_s": (">=", 10_000.0),
    "alphazero.connect4_puct_2t_simulations_per_s": (">=", 18_500.0),
    "alphazero.connect4_gumbel_1t_simulations_per_s": (">=", 10_000.0),
    "alphazero.connect4_gumbel_2t_simulations_per_s": (">=", 18_500.0),
    # A remembered network output must be the new forward pass's bits (agents/output_cache.py).
    "output_cache.selfplay_records_equal": (">=", 1.0),
    "output_cache.maxmin_outcomes_equal": (">=", 1.0),
}
#: AlphaZero search figures: reported without a target (issue 10 asks for them, not for a threshold), as are the
#: rollout agent's ``mcts.<game>_simulations_per_s``.
ALPHAZERO_KEYS = ("alphazero.connect4_network_evals_per_s", "alphazero.connect4_simulations_per_s",
                  "alphazero.connect4_share_tree", "alphazero.connect4_share_network", "alphazero.connect4_share_engine")
#: Batched self-play search, PUCT beside Gumbel (agents/gumbel.py), on 1 and 2 torch threads: against the
#: regression lines in TARGETS.
SEARCH_KEYS = tuple(f"alphazero.connect4_{method}_{threads}t_simulations_per_s" for method in ("puct", "gumbel")
                    for threads in (1, 2))
#: The browser app's referee latency (issue 38 asks to publish the distribution, not a threshold): see
#: ``benchmarks/web_referee.py``.
WEB_REFEREE_KEYS = ("web_referee.connect4_8_12_median_s", "web_referee.connect4_8_12_p95_s",
                    "web_referee.connect4_8_12_max_s", "web_referee.connect4_8_12_positions",
                    "web_referee.connect4_cached_median_ms")


# ---------------------------------------------------------------------------------------------- engines
def _timed_rate(run: Callable[[int], int], seconds: float, repeats: int) -> float:
    """Median of ``repeats`` rates of ``run(k)`` (which returns the work done), k sized to ~``seconds`` each."""
    run(50)  # warm-up: numba compile / cache load, first-touch allocations
    k = 50
    while True:  # calibrate: double until one call takes a tenth of the budget
        t = time.perf_counter()
        run(k)
        dt = time.perf_counter() - t
        if dt >= seconds / 10 or k >= 1 << 24:
            break
        k *= 2
    k = max(1, int(k * seconds / max(dt, 1e-9)))
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        work = run(k)
        rates.append(work / (time.perf_counter() - t))
    return statistics.median(rates)


def bench_batched(game_id: str, repeats: int) -> dict[str, float]:
    """Random play in one BatchedGame of 4,096 rows with auto-reset: actions per second over all rows."""
    from boardrl.games import make_game
    from boardrl.games.base import random_legal_actions

    batch = make_game(game_id).batched(BATCH_N, auto_reset=True)
    rng = np.random.default_rng(0)

    def run(steps: int) -> int:
        for _ in range(steps):
            batch.step(random_legal_actions(batch.legal_mask(), rng))
        return steps * BATCH_N

    return {f"{game_id}.batched_steps_per_s": _timed_rate(run, 1.0, repeats)}


def bench_scalar(game_id: str, repeats: int) -> dict[str, float]:
    """Random play through the scalar API (legal_moves + play), restarting finished games."""
    from boardrl.games import make_game

    game = make_game(game_id)
    rng = np.random.default_rng(0)
    start = game.initial_state()
    legal_moves, play = game.legal_moves, game.play
    state = [start]

    def run(steps: int) -> int:
        u = rng.random(steps)
        s = state[0]
        for i in range(steps):
            legal = legal_moves(s).nonzero()[0]
            if legal.size == 0:  # the mask is all False exactly when the game is over
                s = start
                legal = legal_moves(s).nonzero()[0]
            s = play(s, int(legal[int(u[i] * legal.size)]))
        state[0] = s
        return steps

    return {f"{game_id}.scalar_steps_per_s": _timed_rate(run, 1.0, repeats)}


# ---------------------------------------------------------------------------------------------- solvers
def _connect4_positions(n: int, plies: int, seed: int) -> list:
    """D's benchmark position set (benchmarks/connect4_positions.py is a script file, not a package)."""
    spec = importlib.util.spec_from_file_location("connect4_positions", HERE / "connect4_positions.py")
    if spec is None or spec.loader is None or not (HERE / "connect4_positions.py").exists():
        raise FileNotFoundError("benchmarks/connect4_positions.py is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.random_positions(n, plies, seed))


def _as_state(game, pos):
    """Positions may come as states or as move strings; the referee takes states."""
    return game.replay(pos) if isinstance(pos, str) else pos


def bench_connect4_solver(repeats: int) -> dict[str, float]:
    """Exact score of 200 positions after 20 random plies, each from a cleared transposition table."""
    from boardrl.games import make_game
    from boardrl.solvers.connect4 import Connect4Referee

    game = make_game("connect4")
    positions = [_as_state(game, p) for p in _connect4_positions(200, 20, 0)]
    referee = Connect4Referee(game)
    for pos in positions[:3]:  # warm-up
        referee.solve_score(pos)
    medians, rates = [], []
    for _ in range(max(1, repeats // 2)):  # a pass is 200 solves: fewer passes than the engine repeats
        times = []
        nodes0 = referee.nodes
        for pos in positions:
            referee.clear()
            t = time.perf_counter()
            referee.solve_score(pos)
            times.append(time.perf_counter() - t)
        medians.append(1e3 * statistics.median(times))
        rates.append((referee.nodes - nodes0) / sum(times))
    return {
        "connect4_solver.nodes_per_s": statistics.median(rates),
        "connect4_solver.median_ms_20ply": statistics.median(medians),
    }


_DNB_CHILD = """
import json, resource, time
from boardrl.solvers.dots_and_boxes import build_table
build_table(2, 2)  # warm-up: load or compile the numba kernels; tiny next to the 3x3 table
t = time.perf_counter()
table = build_table(3, 3)
seconds = time.perf_counter() - t
assert table.shape[0] == 1 << 24
# VmHWM: this process's own peak (ru_maxrss survives exec on Linux and would report the parent's size)
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")][0]
print(json.dumps({"seconds": seconds, "peak_mib": int(hwm.split()[1]) / 1024}))
"""


def bench_dnb_referee(repeats: int) -> dict[str, float]:
    """Cold build of the 3x3 retrograde table in a fresh process without disk cache: wall time and peak RSS."""
    secs, peaks = [], []
    for _ in range(max(1, min(repeats, 3))):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, BOARDRL_CACHE=tmp)  # belt and braces: build_table never touches the disk
            out = subprocess.run([sys.executable, "-c", _DNB_CHILD], capture_output=True, text=True, env=env,
                                 timeout=900)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "child failed")
        data = json.loads(out.stdout.strip().splitlines()[-1])
        secs.append(data["seconds"])
        peaks.append(data["peak_mib"])
    return {
        "dots_and_boxes_3x3_referee.seconds": statistics.median(secs),
        "dots_and_boxes_3x3_referee.peak_mib": statistics.median(peaks),
    }


# ---------------------------------------------------------------------------------------------- match runner
def bench_match(repeats: int) -> dict[str, float]:
    """10,000 games of tactical against random at Connect 4 through ``play_match``."""
    from boardrl.agents import make_agent
    from boardrl.evaluate.match import play_match
    from boardrl.games import make_game

    game = make_game("connect4")
    a, b = make_agent(game, "tactical"), make_agent(game, "random")
    processes = 1 if (a.batched and b.batched) else min(2, os.cpu_count() or 1)
    play_match(game, a, b, 200, seed=0, processes=1)  # warm-up
    rates = []
    for r in range(max(1, min(repeats, 3))):
        t = time.perf_counter()
        play_match(game, a, b, 10_000, seed=r, processes=processes)
        rates.append(10_000 / (time.perf_counter() - t))
    return {"match.connect4_tactical_vs_random_games_per_s": statistics.median(rates)}


# ---------------------------------------------------------------------------------------------- tabular learners
#: (learner, game, params) of each tabular self-play benchmark: the pipeline's own settings.
TABULAR = {
    "tabular.tictactoe_10k_selfplay_s": ("tabular_q", "tictactoe", {}),  # seed 000's defaults
    "tabular.dots_and_boxes_3x3_10k_selfplay_s": ("dots_table", "dots_and_boxes_3x3", {}),  # seed 001's defaults
    "tabular.dots_and_boxes_3x3_10k_margin_transfer_s": (
        "dots_table", "dots_and_boxes_3x3",
        {"reward": "margin", "gamma": 1.0, "alpha": 1.0, "symmetry": True, "exploration": {"start": 0.2},
         "transfer_source": {"params": {"games": 100_000, "gamma": 1.0, "alpha": 1.0}}}),
}


def bench_tabular(key: str, repeats: int) -> dict[str, float]:
    """10,000 self-play training games from a fresh learner (first-touch allocations included), median of runs.

    The transfer run's time includes training its 100,000-game 2x2 source table, as the pipeline does.
    """
    from boardrl.games import make_game
    from boardrl.learn import make_learner

    name, game_id, params = TABULAR[key]
    game = make_game(game_id)

    def train(games: int) -> float:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            make_learner(name).train(game, {**params, "games": games, "checkpoint_every": 10**9}, seed=0,
                                     checkpoint_dir=Path(tmp), eval_points=[])
            return time.perf_counter() - t

    train(100)  # warm-up: numba kernels from the cache
    seconds = statistics.median(train(10_000) for _ in range(max(1, min(repeats, 3))))
    return {key: seconds}


# ---------------------------------------------------------------------------------------------- DQN
def bench_dqn(repeats: int) -> dict[str, float]:
    """The connect4_dqn experiment's learner (params.yaml), 20,000 env steps after 2,000 of warm-up (learning
    started): env steps per second including learning, and the shares of acting, learning and the engine."""
    from boardrl.config import load_params
    from boardrl.games import make_game
    from boardrl.learn import make_learner

    p = load_params(HERE.parent / "params.yaml")
    params = p.learner_params("connect4_dqn").model_dump()
    game = make_game("connect4")
    runs = []
    for r in range(max(1, min(repeats, 3))):
        seen: dict[int, dict[str, float]] = {}
        with tempfile.TemporaryDirectory() as tmp:
            make_learner("dqn").train(game, {**params, "steps": 22_000, "checkpoint_every": 2_000}, seed=r,
                                      checkpoint_dir=Path(tmp), eval_points=[],
                                      on_metrics=lambda m, step: seen.setdefault(step, {}).update(m))
        timed = [m for step, m in seen.items() if step > 2_000 and "act_s" in m]  # ten segments of 2,000 steps
        wall = sum(2_000 / m["env_steps_per_s"] for m in timed)
        clock = {k: sum(m[k] for m in timed) for k in ("act_s", "learn_s", "engine_s")}
        runs.append({"rate": 2_000 * len(timed) / wall, **{k: v / wall for k, v in clock.items()}})
    med = statistics.median(x["rate"] for x in runs)
    best = min(runs, key=lambda x: abs(x["rate"] - med))
    return {"dqn.connect4_env_steps_per_s": med, "dqn.connect4_share_act": best["act_s"],
            "dqn.connect4_share_learn": best["learn_s"], "dqn.connect4_share_engine": best["engine_s"]}


# ---------------------------------------------------------------------------------------------- rollout MCTS
MCTS_GAMES = ("connect4", "dots_and_boxes_3x3")


def mcts_positions(game_id: str, n: int, seed: int) -> list:
    """``n`` positions 0-9 plies into random games: where the ``mcts`` agent spends its time in a ladder."""
    from boardrl.games import make_game

    game, rng, out = make_game(game_id), np.random.default_rng(seed), []
    while len(out) < n:
        state = game.initial_state()
        for _ in range(int(rng.integers(0, 10))):
            state = game.play(state, int(rng.choice(game.legal_actions(state))))
        if not game.is_over(state):
            out.append(state)
    return out


def bench_mcts(game_id: str, repeats: int) -> dict[str, float]:
    """Simulations per second of the rollout ``mcts`` agent (1,000 per move, the ladder's setting) on 20 fixed
    positions; issue 10 asks that it be no slower than before the tree took any number of actions
    (``benchmarks/mcts_ab.py`` compares the two versions)."""
    from boardrl.agents import make_agent
    from boardrl.games import make_game

    game = make_game(game_id)
    agent = make_agent(game, "mcts:simulations=1000")
    positions = mcts_positions(game_id, 20, seed=0)
    agent.act(positions[0], np.random.default_rng(0))  # warm-up: numba cache load
    rates = []
    for r in range(max(1, repeats)):
        rng = np.random.default_rng(r)
        t = time.perf_counter()
        for state in positions:
            agent.act(state, rng)
        rates.append(1000 * len(positions) / (time.perf_counter() - t))
    return {f"mcts.{game_id}_simulations_per_s": statistics.median(rates)}


# ---------------------------------------------------------------------------------------------- AlphaZero
def bench_alphazero(repeats: int) -> dict[str, float]:
    """One batched PUCT search per move for 256 Connect 4 games at once (the connect4_alphazero experiment's
    network preset and self-play settings, untrained weights: speed does not depend on them), 16 moves deep from
    the empty board: network evaluations and simulations per second, and the shares of tree kernels, network
    and engine in the search's wall time.  A game that ends within the 16 moves starts again."""
    import torch

    from boardrl.agents.puct import NetworkEvaluator, SearchSettings, sample_moves, search, step_rows, visit_policy
    from boardrl.config import load_params
    from boardrl.games import make_game
    from boardrl.learn.core.device import pick_device, torch_threads
    from boardrl.nn import build_network, network_preset

    p = load_params(HERE.parent / "params.yaml").learner_params("connect4_alphazero")
    game = make_game("connect4")
    torch_threads(p.threads)  # null in params: every core, as the learner
    device = pick_device(p.device)  # as the learner: CUDA when present
    torch.manual_seed(0)
    net = build_network(network_preset(p.network, game.encoding_shape), game.encoding_shape,
                        game.num_actions).to(device)
    settings = SearchSettings(simulations=p.simulations, c_puct=p.c_puct, leaves_per_wave=p.leaves_per_wave)
    runs = []
    for r in range(max(1, min(repeats, 3)) + 1):  # run 0 warms up numba and torch
        rng = np.random.default_rng(r)
        evaluator = NetworkEvaluator(game, net.eval(), device)
        initial = np.asarray(game.initial_state(), dtype=np.int64)
        states = np.repeat(initial[None], p.parallel_games, axis=0)
        clock: dict[str, float] = {}
        t0 = time.perf_counter()
        for _ in range(16 if r else 2):
            trees = search(game, states, evaluator, settings, rng, clock)
            states, finished, _ = step_rows(game, states, sample_moves(visit_policy(trees.root_visits(), 1.0), rng))
            states[finished] = initial  # a finished game starts again: every search keeps 256 live roots
        wall = time.perf_counter() - t0
        if r:
            runs.append({"evals": evaluator.positions / wall, "sims": 16 * p.parallel_games * p.simulations / wall,
                         **{k: v / wall for k, v in clock.items()}})
    med = statistics.median(x["sims"] for x in runs)
    best = min(runs, key=lambda x: abs(x["sims"] - med))
    return {"alphazero.connect4_network_evals_per_s": best["evals"], "alphazero.connect4_simulations_per_s": med,
            "alphazero.connect4_share_tree": best["tree_s"], "alphazero.connect4_share_network": best["evaluator_s"],
            "alphazero.connect4_share_engine": best["engine_s"]}


def bench_search_methods(repeats: int) -> dict[str, float]:
    """bench_alphazero's self-play loop (256 Connect 4 games, 16 moves from the empty board, the
    connect4_alphazero network and budget, untrained weights) with PUCT and with Gumbel (m = 16, Gumbel's own
    move), on 1 and 2 torch threads, CPU: simulations per second, the median of up to 3 runs after a warm-up."""
    import torch

    from boardrl.agents.gumbel import GumbelSettings, gumbel_search
    from boardrl.agents.puct import NetworkEvaluator, SearchSettings, sample_moves, search, step_rows, visit_policy
    from boardrl.config import load_params
    from boardrl.games import make_game
    from boardrl.nn import build_network, network_preset

    p = load_params(HERE.parent / "params.yaml").learner_params("connect4_alphazero")
    game = make_game("connect4")
    torch.manual_seed(0)
    net = build_network(network_preset(p.network, game.encoding_shape), game.encoding_shape, game.num_actions).eval()
    puct = SearchSettings(simulations=p.simulations, c_puct=p.c_puct, leaves_per_wave=p.leaves_per_wave)
    gumbel = GumbelSettings(simulations=p.simulations, leaves_per_wave=p.leaves_per_wave)

    def moves(method: str, states: np.ndarray, evaluator, rng: np.random.Generator) -> np.ndarray:
        if method == "gumbel":
            return gumbel_search(game, states, evaluator, gumbel, rng).actions
        return sample_moves(visit_policy(search(game, states, evaluator, puct, rng).root_visits(), 1.0), rng)

    out = {}
    previous = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for method in ("puct", "gumbel"):
                rates = []
                for r in range(max(1, min(repeats, 3)) + 1):  # run 0 warms up numba and torch
                    rng, evaluator = np.random.default_rng(r), NetworkEvaluator(game, net, "cpu")
                    initial = np.asarray(game.initial_state(), dtype=np.int64)
                    states = np.repeat(initial[None], p.parallel_games, axis=0)
                    t0 = time.perf_counter()
                    for _ in range(16 if r else 2):
                        states, finished, _ = step_rows(game, states, moves(method, states, evaluator, rng))
                        states[finished] = initial
                    if r:
                        rates.append(16 * p.parallel_games * p.simulations / (time.perf_counter() - t0))
                out[f"alphazero.connect4_{method}_{threads}t_simulations_per_s"] = statistics.median(rates)
    finally:
        torch.set_num_threads(previous)
    return out


# ---------------------------------------------------------------------------------------------- output cache
OUTPUT_CACHE_KEYS = ("output_cache.selfplay_speedup", "output_cache.selfplay_hit_rate",
                     "output_cache.selfplay_records_equal", "output_cache.maxmin_speedup", "output_cache.maxmin_hit_rate",
                     "output_cache.maxmin_outcomes_equal", "output_cache.trained_model")


def bench_output_cache(repeats: int) -> dict[str, float]:
    """The network's outputs remembered by position (agents/output_cache.py), with and without, on the
    ``connect4_alphazero`` model ``make repro`` trained (untrained weights when there is none, with
    ``trained_model`` 0: how often positions repeat depends on the policy): one self-play batch of 256 whole games
    with the experiment's params, and 20 games as first player against ``maxmin`` with the model's own search.
    Speed-ups are ratios of medians of up to 3 runs after a warm-up; ``*_equal`` is 1 when the records (or the
    games' results) with the cache are those without it, bit for bit; a hit rate is the share of lookups answered
    from the cache."""
    import boardrl.agents.alphazero as az
    import boardrl.agents.puct as puct
    import boardrl.learn.alphazero_selfplay as selfplay
    from boardrl.agents import make_agent
    from boardrl.config import load_params
    from boardrl.evaluate.match import play_match
    from boardrl.games import make_game
    from boardrl.learn.core.device import torch_threads
    from boardrl.learn.core.league import League

    params = load_params(HERE.parent / "params.yaml").learner_params("connect4_alphazero")
    game = make_game("connect4")
    torch_threads(params.threads)
    agent, trained = _connect4_alphazero(game, params)
    player = selfplay.SelfPlayer(game, params, agent.network, "cpu",
                                 League(game, params.opponents, params.opponent_share, "alphazero"))
    maxmin = make_agent(game, "maxmin")
    made: list = []

    class Counted(puct.NetworkEvaluator):  # every evaluator made, for its cache's counters
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    runs = {"selfplay": lambda: player.play(0, 0, 256),
            "maxmin": lambda: play_match(game, agent.with_search(), maxmin, 20, seats="a_first", seed=5).outcomes}
    out: dict[str, float] = {"output_cache.trained_model": float(trained)}
    entries, classes = selfplay.DEFAULT_ENTRIES, (selfplay.NetworkEvaluator, az.NetworkEvaluator)
    selfplay.NetworkEvaluator = az.NetworkEvaluator = Counted
    try:
        for name, run in runs.items():
            seconds: dict[int, list[float]] = {0: [], entries: []}
            results: dict[int, object] = {}
            for r in range(max(1, min(repeats, 3)) + 1):  # run 0 warms up numba and torch
                for size in (0, entries):
                    selfplay.DEFAULT_ENTRIES = az.DEFAULT_ENTRIES = size
                    made.clear()
                    t = time.perf_counter()
                    results[size] = run()
                    if r:
                        seconds[size].append(time.perf_counter() - t)
            caches = [e.cache for e in made if e.cache is not None]
            out[f"output_cache.{name}_speedup"] = statistics.median(seconds[0]) / statistics.median(seconds[entries])
            out[f"output_cache.{name}_hit_rate"] = sum(c.hits for c in caches) / max(sum(c.lookups for c in caches), 1)
            same = (results[0].same_as(results[entries]) if name == "selfplay"
                    else np.array_equal(results[0], results[entries]))
            out[f"output_cache.{name}_{'records' if name == 'selfplay' else 'outcomes'}_equal"] = float(same)
    finally:
        selfplay.DEFAULT_ENTRIES = az.DEFAULT_ENTRIES = entries
        selfplay.NetworkEvaluator, az.NetworkEvaluator = classes
    return out


def _connect4_alphazero(game, params) -> tuple[object, bool]:
    """The pipeline's trained ``connect4_alphazero`` agent, or one with the same network untrained."""
    from boardrl.agents import make_agent
    from boardrl.agents.models import model_dir

    if (model_dir("model:connect4_alphazero", HERE.parent) / "agent.json").is_file():
        return make_agent(game, "model:connect4_alphazero"), True
    import torch

    from boardrl.agents.alphazero import AlphaZeroAgent
    from boardrl.agents.puct import SearchSettings
    from boardrl.nn import build_network, network_preset

    torch.manual_seed(0)
    config = network_preset(params.network, game.encoding_shape)
    network = build_network(config, game.encoding_shape, game.num_actions)
    return AlphaZeroAgent(game, network, config, SearchSettings(simulations=params.eval_simulations)), False


# ---------------------------------------------------------------------------------------------- self-play on Ray
SELFPLAY_RAY_KEYS = ("selfplay_ray.in_process_games_per_s", "selfplay_ray.actors_1_games_per_s",
                     "selfplay_ray.actors_2_games_per_s", "selfplay_ray.startup_s", "selfplay_ray.actors_2_start_s")


def bench_selfplay_ray(repeats: int, games: int = 32, overrides: dict | None = None) -> dict[str, float]:
    """AlphaZero self-play of ``games`` whole Connect 4 games per batch (the connect4_alphazero network and
    search, untrained weights), in-process and in 1 and 2 Ray actors on a local runtime (the learner's own path,
    docs/ray.md), CPU: games per second, the median of up to 3 batches after a warm-up batch (numba, torch and
    the first weights).  Start-up apart: ``startup_s`` is the local runtime and one actor ready, ``actors_2_start_s``
    two more actors ready on the running runtime.  The actors use the learner's torch threads, so 2 actors of 2
    threads share a 2-core machine's cores with nothing gained there; the figure is the overhead."""
    try:
        import ray
    except ImportError:
        return {}
    from boardrl.config import load_params
    from boardrl.games import make_game
    from boardrl.learn.alphazero import AlphaZeroLearner
    from boardrl.learn.core.selfplay_pool import WORKERS_ENV

    base = load_params(HERE.parent / "params.yaml").learner_params("connect4_alphazero").model_dump()
    game = make_game("connect4")
    saved = {k: os.environ.pop(k, None) for k in (WORKERS_ENV, "RAY_ADDRESS")}
    out: dict[str, float] = {}
    try:
        for workers, name in ((None, "in_process"), (1, "actors_1"), (2, "actors_2")):
            params = {**base, "device": "cpu", "parallel_games": games, "train_every": 10**9, "games": 10**9,
                      "workers": workers, **(overrides or {})}
            learner = AlphaZeroLearner()
            t0 = time.perf_counter()
            learner.setup(game, learner.check_params(params), 0, None)
            if workers:
                learner.pool.sources()  # every actor built (imports, network) and answering
                out["selfplay_ray.startup_s" if workers == 1 else "selfplay_ray.actors_2_start_s"] = (
                    time.perf_counter() - t0)
            try:
                learner._self_play(games)  # warm-up: numba, torch, the weights sent
                rates = []
                for _ in range(max(1, min(repeats, 3))):
                    t = time.perf_counter()
                    learner._self_play(games)
                    rates.append(games / (time.perf_counter() - t))
                out[f"selfplay_ray.{name}_games_per_s"] = statistics.median(rates)
            finally:
                learner.close()
    finally:
        ray.shutdown()
        os.environ.update({k: v for k, v in saved.items() if v is not None})
    return out


# ---------------------------------------------------------------------------------------------- web referee
def bench_web_referee(repeats: int) -> dict[str, float]:
    """Referee latency of ``boardrl serve`` on 40 Connect 4 positions of 8-12 stones (median, 95th percentile,
    maximum) and of a disk-cache answer.  One pass: each position is a measurement, and the distribution is the
    figure (repeats would time the answers the referee process already keeps)."""
    spec = importlib.util.spec_from_file_location("web_referee", HERE / "web_referee.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError("benchmarks/web_referee.py is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure(per_ply=8, seed=0)


# ---------------------------------------------------------------------------------------------- driver
@dataclass(frozen=True)
class Bench:
    keys: tuple[str, ...]
    run: Callable[[int], dict[str, float]]


# ---------------------------------------------------------------------------------------------- the first look
def _project_copy(dst: Path) -> None:
    """What git would ship (tracked and untracked-not-ignored files) with numba's on-disk caches, as one commit:
    a new user's clone after `make install` (which compiles the kernels once)."""
    root = HERE.parent
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            check=True, capture_output=True).stdout.decode().split("\0")
    caches = [str(p.relative_to(root)) for pat in ("*.nbi", "*.nbc") for p in (root / "src").rglob(pat)]
    for rel in filter(None, listed + caches):
        if (root / rel).is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-p", str(root / rel), str(dst / rel)], check=True)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=bench@boardrl", "-c", "user.name=bench", "commit",
                                                 "-qm", "benchmark copy"]):
        subprocess.run(["git", *args], cwd=dst, check=True, capture_output=True)


def bench_tiny_profile(repeats: int) -> dict[str, float]:
    """Wall time of ``make repro PROFILE=tiny`` (the profile runner it calls) in a fresh copy of the project."""
    runs = []
    for _ in range(max(1, min(repeats, 2))):  # two minutes a run
        with tempfile.TemporaryDirectory() as tmp:
            _project_copy(Path(tmp))
            env = {k: v for k, v in os.environ.items() if not k.startswith(("DVC_", "MLFLOW_", "BOARDRL_"))}
            env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "boardrl.experiments.profiles", "run", "tiny"], cwd=tmp,
                                 env=env, capture_output=True, text=True, timeout=1800)
            runs.append(time.perf_counter() - t)
        if out.returncode != 0:
            raise RuntimeError((out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1])
    return {"pipeline.tiny_profile_s": statistics.median(runs)}


REPORT_KEYS = ("report.figures_drawn_s", "report.figures_copied_s")
#: One report build in a fresh process, as the report stage makes it (argv: results dir, output dir).
REPORT_BUILD = ("import sys; from pathlib import Path; from boardrl.report.build import build_report; "
                "build_report(Path(sys.argv[1]), Path(sys.argv[2]))")


def bench_report(repeats: int) -> dict[str, float | None]:
    """The report stage's build over the workspace's results (after `make repro`): with an empty figure cache
    (every figure drawn), then again with the cache that build filled (every figure copied), as after a change
    that left the experiments' results as they were; each in a fresh process, as the stage runs.  None without
    results."""
    results = HERE.parent / "results"
    if not (results / "metrics").is_dir():
        return dict.fromkeys(REPORT_KEYS)
    drawn, copied = [], []
    for _ in range(max(1, min(repeats, 3))):  # about half a minute a round
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "BOARDRL_FIGURE_CACHE": str(Path(tmp) / "figures")}
            for runs in (drawn, copied):
                t = time.perf_counter()
                subprocess.run([sys.executable, "-c", REPORT_BUILD, str(results), str(Path(tmp) / "reports")],
                               env=env, check=True, capture_output=True, timeout=600)
                runs.append(time.perf_counter() - t)
    return {"report.figures_drawn_s": statistics.median(drawn), "report.figures_copied_s": statistics.median(copied)}


def all_benches() -> list[Bench]:
    benches = []
    for g in ENGINE_GAMES:
        benches.append(Bench((f"{g}.batched_steps_per_s",), lambda r, g=g: bench_batched(g, r)))
        benches.append(Bench((f"{g}.scalar_steps_per_s",), lambda r, g=g: bench_scalar(g, r)))
    benches.append(Bench(("connect4_solver.nodes_per_s", "connect4_solver.median_ms_20ply"), bench_connect4_solver))
    benches.append(Bench(("dots_and_boxes_3x3_referee.seconds", "dots_and_boxes_3x3_referee.peak_mib"),
                         bench_dnb_referee))
    benches.append(Bench(("match.connect4_tactical_vs_random_games_per_s",), bench_match))
    for key in TABULAR:
        benches.append(Bench((key,), lambda r, key=key: bench_tabular(key, r)))
    benches.append(Bench(("dqn.connect4_env_steps_per_s", "dqn.connect4_share_act", "dqn.connect4_share_learn",
                          "dqn.connect4_share_engine"), bench_dqn))
    for g in MCTS_GAMES:
        benches.append(Bench((f"mcts.{g}_simulations_per_s",), lambda r, g=g: bench_mcts(g, r)))
    benches.append(Bench(ALPHAZERO_KEYS, bench_alphazero))
    benches.append(Bench(SEARCH_KEYS, bench_search_methods))
    benches.append(Bench(OUTPUT_CACHE_KEYS, bench_output_cache))
    benches.append(Bench(SELFPLAY_RAY_KEYS, bench_selfplay_ray))
    benches.append(Bench(WEB_REFEREE_KEYS, bench_web_referee))
    benches.append(Bench(("pipeline.tiny_profile_s",), bench_tiny_profile))
    benches.append(Bench(REPORT_KEYS, bench_report))
    return benches


def select(benches: list[Bench], prefixes: list[str] | None) -> list[Bench]:
    if not prefixes:
        return benches
    chosen = [b for b in benches if any(k.startswith(p) for k in b.keys for p in prefixes)]
    if not chosen:
        known = ", ".join(k for b in benches for k in b.keys)
        raise SystemExit(f"error: no benchmark key starts with {' or '.join(prefixes)}; keys: {known}")
    return chosen


def verdict(key: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if key not in TARGETS:
        return ""
    op, limit = TARGETS[key]
    ok = value >= limit if op == ">=" else value <= limit
    return f"{'pass' if ok else 'FAIL'} ({op} {limit:g})"


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.2f}"


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except OSError:
        return None


def _torch_device() -> str:
    """Where the torch figures ran ("cpu" or the GPU's name): the learners' "auto" device."""
    import torch

    return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"


def _write_atomic(path: Path, data: dict) -> None:
    """results.json with sorted keys (stable diffs between runs), written atomically."""
    atomic_write_json(path, {k: dict(sorted(v.items())) if isinstance(v, dict) else v for k, v in sorted(data.items())})


def _measured(results: dict, ran: list[str], repeats: int) -> dict[str, dict]:
    """When and at which commit each figure was measured: a ``--only`` run re-dates only the figures it ran.

    A file written before figures were dated carries one date and commit for the whole run in ``_meta``; its
    figures keep those.
    """
    old_meta = results.get("_meta", {})
    measured = dict(results.get("_measured", {}))
    for key in results:
        if not key.startswith("_") and key not in measured and "date" in old_meta:
            measured[key] = {k: old_meta[k] for k in ("date", "commit", "repeats") if k in old_meta}
    now = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": _git_commit(),
           "repeats": repeats}
    for key in ran:
        if key in results:
            measured[key] = now
        else:
            measured.pop(key, None)
    return measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="KEYPREFIX", help="run benchmarks whose key starts so")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions per figure (median reported)")
    parser.add_argument("--output", type=Path, default=RESULTS, help="results file (merged, written atomically)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")

    results: dict = json.loads(args.output.read_text()) if args.output.exists() else {}
    errors: dict = results.get("_errors", {})
    ran: list[str] = []
    for bench in select(all_benches(), args.only):
        ran += bench.keys
        t = time.perf_counter()
        try:
            values = bench.run(args.repeats)
            for k in bench.keys:
                errors.pop(k, None)
        except Exception as exc:  # one missing component must not hide the other figures
            values = {}
            for k in bench.keys:
                errors[k] = f"{type(exc).__name__}: {exc}"
                results.pop(k, None)
        results.update(values)
        for k in bench.keys:
            note = errors.get(k, f"{time.perf_counter() - t:.1f} s")
            print(f"{k:48s} {_fmt(results.get(k)):>16s}  {verdict(k, results.get(k)):22s} {note}", flush=True)
    results["_errors"] = errors
    results["_measured"] = _measured(results, ran, args.repeats)
    results["_meta"] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "batch_n": BATCH_N,
        "torch_device": _torch_device(),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(args.output, results)
    print(f"\nwrote {args.output}")
    failed = [k for k in ran if verdict(k, results.get(k)).startswith("FAIL") or k in errors]
    if failed:  # loudly: a figure past its target (or one that could not be measured) fails `make bench`
        print(f"error: {len(failed)} benchmark figure(s) missed their target or failed: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
