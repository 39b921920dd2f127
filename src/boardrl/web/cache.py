"""Solved positions on disk: the referee's move values of a position, kept across server restarts.

Why: a Connect 4 position of 8-12 stones costs the referee seconds (tens under load), and the same positions come
back all the time (the openings people play, a link opened again, every review of a game).  The referee's verdicts
are exact, so a stored answer never goes stale while the code that computed it is unchanged: each entry is keyed
by a fingerprint of that code (``code_fingerprint``: the solvers, the opening book's recorded checksum, the game's
rules and ``web/analysis.py``), the game and the position.  A change to any of them gives new keys; the old
entries are simply never read again (delete the directory to reclaim the space).

One small JSON file per position, under ``<project>/build/referee-cache/<game>/<2 hex>/<key>.json`` (the project's
``build/`` is gitignored), or the directory ``$BOARDRL_REFEREE_CACHE`` names (``off`` turns the cache off).  Files
are written atomically (``atomic_io``), so a killed server leaves whole entries or none.  Each entry records the
sha256 of its own content (the project's integrity rule: a damaged file that still parses must not be believed),
and its code, game and position are compared with the ones asked for: an entry that fails any check is ignored
(and rewritten once the referee has answered again), never used.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from boardrl.atomic_io import atomic_write_bytes
from boardrl.games.base import Game
from boardrl.web.analysis import MoveValues

CACHE_ENV = "BOARDRL_REFEREE_CACHE"
#: Relative to the project root (``agents.models.project_root``: ``$BOARDRL_ROOT`` or the working directory).
DEFAULT_DIR = Path("build") / "referee-cache"
OFF = ("off", "none", "0", "no", "false")
FORMAT = 1
#: An entry is a few hundred bytes (a 3x3 Dots and Boxes position has 24 moves); anything larger is not ours.
MAX_ENTRY_BYTES = 64 * 1024
KINDS = ("result", "score", "margin")

log = logging.getLogger("boardrl.web")


@lru_cache(maxsize=32)
def code_fingerprint(game: Game) -> str:
    """sha256 over the code whose output an entry stores: every solver module, the opening books' recorded
    checksums, the game's rules (its module and ``games/base.py``) and ``web/analysis.py``."""
    import boardrl.games.base as games_base
    import boardrl.solvers as solvers
    import boardrl.web.analysis as analysis

    solver_dir = Path(inspect.getsourcefile(solvers) or "").parent
    files = sorted(solver_dir.glob("*.py")) + sorted((solver_dir / "book").glob("*.json"))
    files += [Path(p) for p in (inspect.getsourcefile(type(game)), inspect.getsourcefile(games_base),
                                inspect.getsourcefile(analysis)) if p]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def default_cache_dir() -> Path | None:
    """``$BOARDRL_REFEREE_CACHE`` (None when it says ``off``), else ``<project>/build/referee-cache``."""
    from boardrl.agents.models import project_root

    value = os.environ.get(CACHE_ENV, "").strip()
    if value.lower() in OFF:
        return None
    return Path(value) if value else project_root() / DEFAULT_DIR


def _canonical(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


class DiskCache:
    """Move values by (code fingerprint, game, position) in ``directory``; ``get`` None when absent or damaged."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        #: Entries found but refused (damaged, or another key's), and writes that failed: for logs and tests.
        self.refused = 0
        self.write_errors = 0

    def _key(self, game: Game, state: Any) -> tuple[str, dict[str, Any]]:
        ident = {"code": code_fingerprint(game), "game": game.game_id, "state": [int(x) for x in state]}
        return hashlib.sha256(_canonical(ident)).hexdigest(), ident

    def path(self, game: Game, state: Any) -> Path:
        key, _ = self._key(game, state)
        return self.directory / game.game_id / key[:2] / f"{key}.json"

    def get(self, game: Game, state: Any) -> MoveValues | None:
        """The stored values of ``state``; None when there are none or the entry fails a check."""
        key, ident = self._key(game, state)
        path = self.directory / game.game_id / key[:2] / f"{key}.json"
        try:
            if path.stat().st_size > MAX_ENTRY_BYTES:
                raise ValueError("too large")
            data = json.loads(path.read_bytes())
            return self._parse(data, ident)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            self.refused += 1
            log.warning("referee cache: ignoring %s (%s)", path, exc)
            return None

    @staticmethod
    def _parse(data: dict[str, Any], ident: dict[str, Any]) -> MoveValues:
        """The entry's values after its checks: format, its own sha256, then the key it claims."""
        recorded = data.pop("sha256")
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}")
        if hashlib.sha256(_canonical(data)).hexdigest() != recorded:
            raise ValueError("its content does not match its recorded sha256 (damaged)")
        if any(data[k] != v for k, v in ident.items()):
            raise ValueError("written for another code version, game or position")
        kind, plies, values = data["kind"], data["plies"], data["values"]
        if kind not in KINDS or type(plies) is not int or not all(
                type(a) is int and type(v) is int for a, v in values):
            raise ValueError("malformed values")
        return MoveValues(kind, {a: v for a, v in values}, plies)

    def put(self, game: Game, state: Any, mv: MoveValues) -> None:
        """Store ``mv`` atomically; a failed write (read-only or full disk) is logged and costs only the cache."""
        key, ident = self._key(game, state)
        data = {"format": FORMAT, **ident, "kind": mv.kind, "plies": int(mv.plies),
                "values": [[int(a), int(v)] for a, v in sorted(mv.values.items())]}
        data["sha256"] = hashlib.sha256(_canonical(data)).hexdigest()
        path = self.directory / game.game_id / key[:2] / f"{key}.json"
        try:
            atomic_write_bytes(path, _canonical(data))
        except OSError as exc:
            self.write_errors += 1
            log.warning("referee cache: cannot write %s (%s)", path, exc.strerror or exc)
