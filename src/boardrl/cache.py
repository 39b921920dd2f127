"""Where boardrl keeps what it can rebuild: the Dots and Boxes tables, the opening book's unfinished chunks and
the referees' remembered verdicts.

One place decides it so that one setting moves all of it: ``$BOARDRL_CACHE`` when set (a shared disk, a
scratch volume, a test's temporary folder), else the project's ``cache/`` folder (git-ignored).  Everything in it
can be deleted at the cost of recomputing it.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "BOARDRL_CACHE"
_CHECKOUT = Path(__file__).resolve().parents[2]  # <repo>/src/boardrl/cache.py -> <repo>


def cache_dir(project: str | Path | None = None) -> Path:
    """``$BOARDRL_CACHE``; else ``<project>/cache``; with no project, the source checkout's ``cache/`` (for an
    installed package, ``./cache``)."""

    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    if project is not None:
        return Path(project) / "cache"
    if (_CHECKOUT / "pyproject.toml").is_file():
        return _CHECKOUT / "cache"
    return Path.cwd() / "cache"
