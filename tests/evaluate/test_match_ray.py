"""A match's chunks as Ray tasks (``$BOARDRL_MATCH_BACKEND=ray``): the very games of the in-process match, on a
real local Ray runtime (skipped only where Ray is not installed; ``make test`` installs it); a bad backend is one
line before any game; a match without the setting never imports Ray."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from boardrl.agents import make_agent
from boardrl.errors import BoardRLError
from boardrl.evaluate import match
from boardrl.evaluate.match import play_match
from boardrl.evaluate.match_ray import BACKEND_ENV, match_backend
from boardrl.games import make_game

TTT = make_game("tictactoe")


def test_ray_tasks_play_the_games_of_the_in_process_match(monkeypatch):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'boardrl[ray]'; make test does)")
    monkeypatch.setattr(match, "POOL_WORTH_S", 0.0)  # the pool however cheap the match

    def played(processes: int):
        # scalar MCTS (seeded per chunk) against random: 7 chunks of 64 games, spread over the workers
        return play_match(TTT, make_agent(TTT, "mcts:simulations=20"), make_agent(TTT, "random"), 400, seed=11,
                          processes=processes)

    here = played(1)
    monkeypatch.setenv(BACKEND_ENV, "ray")
    monkeypatch.setattr(match.mp, "get_context", lambda *a: pytest.fail("a process pool instead of Ray"))
    try:
        on_ray = played(2)
        assert ray.is_initialized()
        # the workers run at the driver's priority (Ray's default nice 15 starves them beside other work), and
        # the setting that made them so is not left in this process's environment
        worker_nice = ray.get(ray.remote(num_cpus=1)(lambda: os.nice(0)).remote())
        assert worker_nice == os.nice(0) and "RAY_worker_niceness" not in os.environ
    finally:
        ray.shutdown()
    assert np.array_equal(here.outcomes, on_ray.outcomes) and np.array_equal(here.lengths, on_ray.lengths)
    assert here.to_dict() == on_ray.to_dict()


def test_an_unknown_backend_is_one_line_before_any_game(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "threads")
    with pytest.raises(BoardRLError, match=r"^\$BOARDRL_MATCH_BACKEND must be one of processes, ray, got 'threads'$"):
        play_match(TTT, make_agent(TTT, "random"), make_agent(TTT, "random"), 10)
    assert match_backend({}) == "processes" and match_backend({BACKEND_ENV: "ray"}) == "ray"


def test_a_match_without_the_setting_never_imports_ray():
    code = ("import sys; from boardrl.agents import make_agent; from boardrl.evaluate.match import play_match; "
            "from boardrl.games import make_game; g = make_game('tictactoe'); "
            "play_match(g, make_agent(g, 'maxmin'), make_agent(g, 'random'), 200, processes=2); "
            "print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"
