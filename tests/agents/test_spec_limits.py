"""Search sizes in agent specs have ceilings: a slip of a few zeros is one error line, not a machine out of memory."""

from __future__ import annotations

import subprocess
import sys

import pytest

from boardrl.agents import BATCH_SEARCH_LIMITS, SEARCH_LIMITS, AgentSpecError, check_search_limits, make_agent


@pytest.mark.parametrize("game_id, spec, key", [
    ("connect4", "mcts:simulations=100000000", "simulations"),
    ("connect4", "mcts:simulations=2000000000", "simulations"),
    ("tictactoe", "puct:simulations=50000", "simulations"),
    ("tictactoe", "puct:simulations=1e9", "simulations"),  # a float: the agent would round it
    ("tictactoe", "puct:leaves_per_wave=1000", "leaves_per_wave"),
    ("tictactoe", "puct:rollouts=100000", "rollouts"),
    ("connect4", "alphabeta:depth=1000", "depth"),
    ("connect4", "maxmin:max_depth=1000", "max_depth"),
    ("conniption", "flip:max_depth=1000", "max_depth"),
    ("tictactoe", "model:tictactoe_alphazero,simulations=2000000000", "simulations"),
    ("tictactoe", "model:tictactoe_alphazero,rollouts=100000", "rollouts"),
])
def test_oversized_searches_are_one_error_line(game_id, spec, key):
    with pytest.raises(AgentSpecError) as info:
        make_agent(game_id, spec)
    text = str(info.value)
    assert "\n" not in text and f"{key} is at most" in text and spec in text


def test_limits_are_where_the_docs_say():
    assert SEARCH_LIMITS["simulations"][0] == 100_000 and BATCH_SEARCH_LIMITS["simulations"][0] == 10_000
    make_agent("connect4", f"mcts:simulations={SEARCH_LIMITS['simulations'][0]}")  # the ceiling itself is allowed
    make_agent("tictactoe", f"puct:simulations={BATCH_SEARCH_LIMITS['simulations'][0]}")
    make_agent("connect4", "alphabeta:depth=64")
    with pytest.raises(AgentSpecError):
        check_search_limits(f"mcts:simulations={SEARCH_LIMITS['simulations'][0] + 1}")


def test_configured_searches_stay_allowed():
    for spec in ("mcts:simulations=1000", "alphabeta:depth=6", "puct:simulations=800,leaves_per_wave=8"):
        check_search_limits(spec)
    check_search_limits("model:connect4_alphazero,simulations=400,rollouts=4")


def test_cli_match_refuses_a_huge_search_with_one_line():
    """The process that would have grown to gigabytes stops at once with one ``error:`` line."""
    res = subprocess.run([sys.executable, "-m", "boardrl.cli", "match", "connect4", "mcts:simulations=100000000",
                          "random", "--games", "2"], capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert res.stderr.startswith("error: ") and "simulations is at most 100,000" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
