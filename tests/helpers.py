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
