"""The process's one Ray runtime (``boardrl/ray_runtime.py``): its one-line errors and the record of who holds it.

Starting a real runtime, joining a cluster and growing a runtime under open pools are covered where they are used:
``tests/learn/test_selfplay_ray.py`` and ``tests/evaluate/test_match_ray.py``.
"""

from __future__ import annotations

import sys

import pytest

from boardrl import ray_runtime as runtime
from boardrl.errors import BoardRLError
from repo_copy import free_port


def test_an_unreachable_ray_address_is_one_line_naming_it_before_ray_retries(monkeypatch):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'boardrl[ray]'; make test does)")
    address = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("RAY_ADDRESS", address)
    with pytest.raises(BoardRLError, match=rf"^cannot join the Ray cluster at RAY_ADDRESS={address}: [^\n]+$"):
        runtime.ray_runtime(1, "self-play workers")
    with pytest.raises(BoardRLError, match=rf"^cannot join the Ray cluster at RAY_ADDRESS=ray://{address}: "):
        runtime.check_reachable(f"ray://{address}")


def test_addresses_that_are_not_host_and_port_are_left_to_ray():
    for address in ("auto", "local", "ray://head"):
        runtime.check_reachable(address)  # no error: Ray resolves these itself


def test_without_ray_installed_the_error_names_who_asked(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(BoardRLError, match=r"^\$BOARDRL_MATCH_BACKEND=ray: Ray is not installed "
                                           r"\(pip install 'boardrl\[ray\]'\)$"):
        runtime.ray_runtime(2, "$BOARDRL_MATCH_BACKEND=ray")


def test_holders_are_counted_by_kind_and_released(monkeypatch):
    monkeypatch.setattr(runtime, "_STARTED", runtime._Started())
    runtime.hold("self-play pool")
    runtime.hold("self-play pool")
    runtime.hold("match")
    assert runtime._STARTED.holders == {"self-play pool": 2, "match": 1}
    runtime.release("self-play pool")
    runtime.release("match")
    assert runtime._STARTED.holders == {"self-play pool": 1}
    runtime.release("self-play pool")
    assert not runtime._STARTED.holders
