"""A real ``boardrl serve`` for the web tests: its own process, on a free 127.0.0.1 port, with default options
(``server``) or others (``running_server``).

Started as the user starts it (the CLI, no ``--host``), so the tests also see what it binds by default.  Each
server keeps its solved positions in a fresh directory (``$BOARDRL_REFEREE_CACHE``), or in ``cache_dir`` when a
test restarts a server over the same cache: tests never read or fill the project's ``build/referee-cache``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import sys
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from helpers import REPO_ROOT
from repo_copy import free_port, stop_group, wait_for_answer


@dataclass
class Server:
    base: str
    port: int
    proc: subprocess.Popen

    def get(self, path: str, **params: Any) -> tuple[int, Any, str]:
        """(status, parsed JSON, raw body) of a GET with query ``params``."""
        return self.get_with_headers(path, **params)[:3]

    def get_with_headers(self, path: str, **params: Any) -> tuple[int, Any, str, Any]:
        """(status, parsed JSON, raw body, headers: ``get(name)`` ignores case) of a GET with query ``params``."""
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                raw = r.read().decode()
                return r.status, json.loads(raw), raw, r.headers
        except urllib.error.HTTPError as exc:
            raw = exc.read().decode()
            return exc.code, json.loads(raw), raw, exc.headers


@contextmanager
def running_server(*options: str, cache_dir: Path | None = None) -> Iterator[Server]:
    """``boardrl serve --port <free> OPTIONS`` in the repository, until the block ends; its referee cache in
    ``cache_dir`` (default: a fresh temporary directory)."""
    with tempfile.TemporaryDirectory(prefix="referee-cache-") as tmp:
        env = dict(os.environ, BOARDRL_REFEREE_CACHE=str(cache_dir or tmp))
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "boardrl.cli", "serve", "--port", str(port), *options],
                                cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True, env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for_answer(proc, lambda: urllib.request.urlopen(base + "/api/games", timeout=30).read(),
                            "boardrl serve", timeout_s=60)
            yield Server(base, port, proc)
        finally:
            stop_group(proc)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """One server per test module: it ends with the module, so no referee work outlives the tests that asked."""
    with running_server() as srv:
        yield srv


@pytest.fixture(scope="session")
def start_server():
    """``running_server``: for tests that need a server started with options of their own."""
    return running_server
