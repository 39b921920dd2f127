"""Shared test helpers, independent of the library's own enumeration code (they use only play/legal_actions)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The vendored copy of the published UCI file (same sha256; data/vendor/README.md): tests need nothing outside
#: the clone.
UCI_Z = REPO_ROOT / "data" / "vendor" / "connect-4.data.Z"


def reachable_states(game) -> list:
    """Every state reachable from the start, finished ones included, sorted (depth-first, deduplicated)."""
    seen, todo = {game.initial_state()}, [game.initial_state()]
    while todo:
        s = todo.pop()
        for a in game.legal_actions(s):
            t = game.play(s, a)
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return sorted(seen)


#: The suite-wide settings of tests/conftest.py, which a test that clears the environment keeps.
SUITE_SETTINGS = ("BOARDRL_TORCH_THREADS", "BOARDRL_TRACKING_SERVICE")


def clear_tracking_env(monkeypatch) -> None:
    """Drop every ``MLFLOW_*`` and ``BOARDRL_*`` setting but the suite's own (``SUITE_SETTINGS``), so a test's
    stages find their project from its root alone and still write MLflow in the test process, not through a
    tracking service of their own (a process importing MLflow for each test)."""
    import os

    for k in [k for k in os.environ if k.startswith(("MLFLOW_", "BOARDRL_")) and k not in SUITE_SETTINGS]:
        monkeypatch.delenv(k)
