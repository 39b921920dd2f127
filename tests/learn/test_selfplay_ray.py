"""Self-play as a function of (weights, params, seed, game indices), in-process and in Ray actors.

Without Ray: chunks of a batch, played apart and merged, are the batch's records bit for bit (the real network:
padded batches make its outputs independent of the batch, learn/alphazero_selfplay.py); one-line errors; a run
that asks for no workers never imports Ray.  With Ray (skipped only where it is not installed; ``make test``
installs it): N = 1 and N = 2 actors on a local runtime this module starts once give the in-process records and
the same model after a short training, the actors import the clone's boardrl, and a cluster started apart
(``ray start --head`` and a second node) joined through an explicit ``RAY_ADDRESS`` gives the same records.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from boardrl.errors import BoardRLError
from boardrl.games import make_game
from boardrl.learn import LearnError
from boardrl.learn.alphazero import AlphaZeroLearner
from boardrl.learn.alphazero_selfplay import Records, game_rng
from boardrl.learn.core.selfplay_pool import WORKERS_ENV, chunks, resolved_workers

SRC = Path(__file__).resolve().parents[2] / "src"
TINY_NET = {"body": "mlp", "hidden": [16], "head": "policy_value"}
#: Every random draw self-play makes: playout caps, root noise, league members and their moves, q targets.
RUN = {"games": 48, "network": TINY_NET, "simulations": 6, "parallel_games": 12, "train_every": 24, "updates": 3,
       "batch_size": 16, "window": 400, "temperature_plies": 2, "device": "cpu", "full_search_share": 0.7,
       "opponents": ["random"], "opponent_share": 0.25, "value_target_q": 0.5, "threads": 1}


def setup_learner(game_id: str = "tictactoe", seed: int = 5, **params) -> AlphaZeroLearner:
    learner = AlphaZeroLearner()
    game = make_game(game_id)
    p = learner.check_params({**RUN, **params})
    learner.check_game(game, p)
    learner.setup(game, p, seed, None)
    return learner


def trained(**params) -> tuple[dict, np.ndarray, np.ndarray, set[str]]:
    """A short training's model weights, window (rows, z), and where its actors imported boardrl from."""
    learner = setup_learner(**params)
    try:
        while learner.counters["games"] < learner.p.games:
            learner.train_segment(learner.counters["games"], learner.p.games)
        sources = set(learner.pool.sources()) if learner.pool is not None else set()
    finally:
        learner.close()
    n = len(learner.window)
    return learner.net.state_dict(), learner.window.rows[:n].copy(), learner.window.z[:n].copy(), sources


def same_model(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# ---------------------------------------------------------------------------------------------- without Ray
@pytest.mark.parametrize("game_id, network, extra", [
    ("tictactoe", TINY_NET, {}),
    ("tictactoe", TINY_NET, {"search": "gumbel", "considered_actions": 4}),
    ("connect4", "alphazero", {"opponents": [], "opponent_share": 0.0, "simulations": 4}),
])
def test_chunks_played_apart_and_merged_are_the_batchs_records_bit_for_bit(game_id, network, extra):
    """2 and 3 chunks of 16 games against one batch: the same rows, pi, root values and results (real networks,
    the connect4 one a convolutional tower)."""
    learner = setup_learner(game_id, network=network, **extra)
    player = learner.self_player
    whole = player.play(5, 30, 16)
    assert whole.game.min() == 30 and len(whole.results) == 16
    for workers in (2, 3):
        merged = Records.merge([player.play(5, s, k) for s, k in chunks(30, 16, workers)])
        assert whole.same_as(merged), workers


def test_game_streams_depend_on_seed_and_index_only_and_not_the_learners_stream():
    a, b = game_rng(7, 3).random(4), game_rng(7, 3).random(4)
    assert np.array_equal(a, b) and not np.array_equal(a, game_rng(7, 4).random(4))
    assert not np.array_equal(a, game_rng(8, 3).random(4))
    assert not np.array_equal(game_rng(7, 0).random(4), np.random.default_rng(7).random(4))


def test_chunks_are_contiguous_and_cover_the_games():
    assert chunks(10, 7, 2) == [(10, 4), (14, 3)] and chunks(0, 2, 4) == [(0, 1), (1, 1)]


def test_worker_counts_fail_with_one_line():
    assert resolved_workers(None, {}) is None and resolved_workers(None, {WORKERS_ENV: "3"}) == 3
    assert resolved_workers(2, {WORKERS_ENV: "3"}) == 2
    with pytest.raises(LearnError, match=r"^\$BOARDRL_SELFPLAY_WORKERS must be a positive integer, got 'x'$"):
        resolved_workers(None, {WORKERS_ENV: "x"})
    with pytest.raises(LearnError, match=r"^self-play workers must be >= 1, got 0$"):
        resolved_workers(None, {WORKERS_ENV: "0"})
    with pytest.raises(LearnError, match="workers"):
        AlphaZeroLearner().check_params({"workers": 0})


def test_a_run_without_workers_never_imports_ray():
    code = ("import sys; from boardrl.games import make_game; from boardrl.learn.alphazero import AlphaZeroLearner;"
            "l = AlphaZeroLearner(); g = make_game('tictactoe');"
            "p = l.check_params({'network': {'body': 'mlp', 'hidden': [4], 'head': 'policy_value'},"
            " 'simulations': 2, 'device': 'cpu'}); l.setup(g, p, 0, None); l._self_play(2);"
            "assert 'ray' not in sys.modules, 'ray imported'")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop(WORKERS_ENV, None)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


# ---------------------------------------------------------------------------------------------- with Ray
@pytest.fixture(scope="module")
def ray_local():
    """One local Ray runtime for the module, started the way a learner starts it ($RAY_ADDRESS unset)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'boardrl[ray]'; make test does)")
    from boardrl.ray_runtime import ray_runtime

    saved = os.environ.pop("RAY_ADDRESS", None)
    try:
        ray_runtime(2, "self-play workers")
        yield ray
    finally:
        ray.shutdown()
        if saved is not None:
            os.environ["RAY_ADDRESS"] = saved


def test_one_and_two_actors_give_the_in_process_records_and_model(ray_local):
    """A short training (two learning phases, league games, playout caps, q targets) with no workers, 1 and 2
    actors: the same window and bit-identical weights; the actors import the driver's boardrl."""
    ref_net, ref_rows, ref_z, _ = trained()
    for workers in (1, 2):
        net, rows, z, sources = trained(workers=workers)
        assert np.array_equal(rows, ref_rows) and np.array_equal(z, ref_z), workers
        assert same_model(net, ref_net), workers
        assert sources == {str(SRC / "boardrl")}


def test_a_pool_wider_than_the_local_runtime_starts_it_again_instead_of_hanging(ray_local):
    """Ray keeps an actor it cannot place pending for ever: 2 actors of all the machine's CPUs on a runtime of
    that many start it again with twice as many; while a pool is open on it, that is a one-line error."""
    from boardrl.learn.core.selfplay_pool import SelfPlayPool

    n = os.cpu_count() or 1
    small = SelfPlayPool(1, dict, cpus_per_actor=n)
    try:
        assert len(ray_local.get([a.source.remote() for a in small.actors], timeout=120)) == 1
        with pytest.raises(BoardRLError, match=rf"^the local Ray runtime has {n} CPUs, held by 1 open self-play "
                                             rf"pool\(s\); {2 * n} are needed: close them first$"):
            SelfPlayPool(2, dict, cpus_per_actor=n)
    finally:
        small.close()
    wide = SelfPlayPool(2, dict, cpus_per_actor=n)
    try:
        assert len(ray_local.get([a.source.remote() for a in wide.actors], timeout=120)) == 2
        assert ray_local.cluster_resources()["CPU"] == 2 * n
    finally:
        wide.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_explicit_ray_address_joins_a_cluster_of_a_head_and_a_worker_node(ray_local, monkeypatch):
    """``ray start --head`` and a second node (``ray start --address``) in subprocesses, RAY_ADDRESS set
    explicitly: 2 actors give the in-process records of one batch."""
    ray_local.shutdown()  # the module's runtime gives way to the cluster
    ray_cli = str(Path(sys.executable).parent / "ray")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(SRC), "RAY_worker_niceness": "0"}  # as docs/ray.md says for nodes
    env.pop("RAY_ADDRESS", None)
    temp_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's sockets live below it
    try:
        subprocess.run([ray_cli, "start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
                        "--disable-usage-stats", f"--temp-dir={temp_dir}"], check=True, env=env, timeout=120,
                       capture_output=True)
        # the second node starts while the learner joins the head: its second actor waits for the node's CPU
        node = subprocess.Popen([ray_cli, "start", f"--address={address}", "--num-cpus=1", "--disable-usage-stats",
                                 f"--temp-dir={temp_dir}"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        monkeypatch.setenv("RAY_ADDRESS", address)
        learner = setup_learner(workers=2)
        assert node.wait(timeout=120) == 0
        try:
            records = learner._pool_play(0, 12, None)
            assert records.same_as(learner.self_player.play(learner.seed, 0, 12))
            assert len(ray_local.nodes()) == 2
        finally:
            learner.close()
            ray_local.shutdown()
    finally:
        _stop_cluster(temp_dir)


def _stop_cluster(temp_dir: str) -> None:
    """Kill this test's cluster alone: the processes whose command line names its temp dir.  ``ray stop`` would
    also kill the local runtime that another module's tests run beside this one (pytest-xdist)."""
    import psutil

    procs = [p for p in psutil.process_iter(["cmdline"]) if temp_dir in " ".join(p.info["cmdline"] or ())]
    for proc in procs:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=30)
    shutil.rmtree(temp_dir, ignore_errors=True)
