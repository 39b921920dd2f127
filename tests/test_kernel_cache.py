"""The kernel cache: one per machine, shared by copies of the project with the same source, and never serving a
kernel compiled against other code, including code it inlined from another module."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import boardrl
from boardrl.kernel_cache import LOCATORS_ENV, cache_root, closure_key, import_closure, use_closure_cache

PACKAGE_DIR = Path(boardrl.__file__).resolve().parent


def copy_package(dst: Path) -> Path:
    """``dst/boardrl``: this checkout's package without its caches; returns ``dst``."""
    shutil.copytree(PACKAGE_DIR, dst / "boardrl", ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_a_kernel_modules_closure_holds_what_it_imports_and_nothing_above_it():
    closure = import_closure("boardrl.agents.puct", PACKAGE_DIR)
    assert {"boardrl.agents.puct", "boardrl.games.base", "boardrl.errors"} <= closure
    assert not any(name.startswith(("boardrl.experiments", "boardrl.report", "boardrl.cli")) for name in closure)


def test_the_key_follows_the_source_below_a_module_and_nothing_else(tmp_path):
    same, below, elsewhere = (copy_package(tmp_path / name) / "boardrl" for name in ("same", "below", "elsewhere"))
    (below / "games" / "_kernels.py").write_text((below / "games" / "_kernels.py").read_text() + "# edited\n")
    (elsewhere / "report" / "__init__.py").write_text((elsewhere / "report" / "__init__.py").read_text() + "# x\n")
    key = closure_key("boardrl.games.tictactoe", PACKAGE_DIR)
    assert closure_key("boardrl.games.tictactoe", same) == key
    assert closure_key("boardrl.games.tictactoe", elsewhere) == key
    assert closure_key("boardrl.games.tictactoe", below) != key


KERNEL_RUN = """
import json
from boardrl.games import tictactoe
assert tictactoe.apply(0, 0, 4) == (16, 0)
stats = tictactoe.apply.stats
print(json.dumps([sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]))
"""


def hits_and_misses(copy: Path, cache: Path) -> list[int]:
    """Run a kernel (``apply``, which inlines ``_kernels.popcount``) in a fresh process of ``copy``."""
    env = {**os.environ, "PYTHONPATH": str(copy), "NUMBA_CACHE_DIR": str(cache)}
    env.pop(LOCATORS_ENV, None)
    out = subprocess.run([sys.executable, "-c", KERNEL_RUN], cwd=copy, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_copies_share_kernels_and_an_edit_below_a_kernel_compiles_it_again(tmp_path):
    cache = tmp_path / "kernels"
    first, second, edited = (copy_package(tmp_path / name) for name in ("first", "second", "edited"))
    kernels = edited / "boardrl" / "games" / "_kernels.py"
    kernels.write_text(kernels.read_text() + "# an edit to the module apply inlines popcount from\n")
    assert hits_and_misses(first, cache) == [0, 1]
    assert hits_and_misses(second, cache) == [1, 0]      # another copy, the same source: no compile
    assert hits_and_misses(edited, cache) == [0, 1]      # numba alone would have served the stale kernel
    assert hits_and_misses(first, cache) == [1, 0]       # both versions stay
    assert any(cache.rglob("tictactoe.apply-*.nbi"))


def test_a_users_own_locators_are_left_alone():
    environ = {LOCATORS_ENV: "InTreeCacheLocator"}
    use_closure_cache(environ)
    assert environ == {LOCATORS_ENV: "InTreeCacheLocator"}
    environ = {}
    use_closure_cache(environ)
    assert environ[LOCATORS_ENV].split(",")[0] == "boardrl.kernel_cache.ClosureLocator"


@pytest.mark.parametrize("environ, expected", [
    ({"NUMBA_CACHE_DIR": "/scratch/k", "XDG_CACHE_HOME": "/x"}, "/scratch/k"),
    ({"XDG_CACHE_HOME": "/x"}, "/x/boardrl/numba"),
])
def test_the_cache_is_numbas_own_setting_or_the_users_cache_folder(environ, expected):
    assert cache_root(environ) == Path(expected)
