"""Helpers for the pipeline tests: a throw-away copy of the repository that DVC can run in.

Imported by the test modules beside it (pytest puts this directory on sys.path: tests/ has no packages).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from mlflow_store import seed_store

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", "-c", "user.email=test@boardrl", "-c", "user.name=boardrl tests", *args], cwd=cwd,
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def copy_repo(dst: Path, edit_params: Callable[[dict[str, Any]], None] | None = None,
              edit_tree: Callable[[Path], None] | None = None, mlflow_store: bool = True) -> Path:
    """Copy what git would ship (tracked + untracked-not-ignored files) to ``dst``, commit it, return ``dst``.

    Python's bytecode (git-ignored) comes along with its timestamps so the copy does not compile every module
    again; numba's kernels need no copy, their cache is shared by content (boardrl/kernel_cache.py).  The copy
    starts without ``dvc.lock``, and with an empty MLflow store unless ``mlflow_store`` is False (then its first
    stage creates one, as in a fresh clone).  ``edit_params`` may change the copy's params.yaml (a dict), and ``edit_tree``
    any other file of the copy, before the commit, so the tree is clean.
    Stages run in the copy import the copy's ``src/`` (see ``stage_env``), so code edits there take effect.
    """
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    caches = [p.relative_to(ROOT) for p in (ROOT / "src").rglob("*.pyc")]
    for rel in [f for f in files if f] + [str(c) for c in caches]:
        src = ROOT / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    # None of the outputs the shipped lock records is in the copy (no DVC cache there), so every stage runs either
    # way; without it DVC does not rewrite the shipped lock's 146 KB after every stage (0.85 s each).
    (dst / "dvc.lock").unlink(missing_ok=True)
    if edit_params is not None:
        data = yaml.safe_load((dst / "params.yaml").read_text())
        edit_params(data)
        (dst / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    if edit_tree is not None:
        edit_tree(dst)
    if mlflow_store:
        seed_store(dst)  # git-ignored, like the store a first stage would make (tests/mlflow_store.py: why)
    git(dst, "init", "-q")
    git(dst, "add", "-A")
    git(dst, "commit", "-qm", "test copy")
    return dst


def stage_env(project: Path | None = None) -> dict[str, str]:
    """The environment `make repro` gives DVC: the venv first on PATH, no tracking settings inherited, one stage
    at a time.

    With ``project``, its ``src/`` comes first on PYTHONPATH: the copy's code runs, not the installed tree's.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "DVC_", "BOARDRL_"))}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    env["BOARDRL_PROGRESS"] = "0"
    # One stage at a time: pytest's two workers already fill the two cores, and side-by-side stages beside the
    # other worker's tests only oversubscribe them (tests/experiments/test_parallel_repro.py covers the
    # side-by-side runs).
    env["BOARDRL_REPRO_JOBS"] = "1"
    if os.environ.get("BOARDRL_FIGURE_CACHE"):  # the suite's own (tests/conftest.py), not the user's
        env["BOARDRL_FIGURE_CACHE"] = os.environ["BOARDRL_FIGURE_CACHE"]
    if project is not None and (Path(project) / "src").is_dir():
        env["PYTHONPATH"] = str(Path(project) / "src")
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_answer(proc: subprocess.Popen, probe: Callable[[], Any], what: str, timeout_s: float = 120) -> Any:
    """``probe()``'s first answer, retried while it raises OSError (not listening yet) and ``proc`` runs."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return probe()
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited: {proc.stderr.read().decode()[-2000:]}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not answer within {timeout_s:.0f} s") from None
            time.sleep(0.5)


def stop_group(proc: subprocess.Popen, grace_s: float = 20) -> None:
    """Stop a server started with ``start_new_session=True``: SIGTERM to its group, SIGKILL after ``grace_s``."""
    import signal

    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run(cmd: list[str], cwd: Path, timeout: float | None = None) -> Run:
    """``cmd`` in ``cwd`` with the pipeline's environment.  No time limit of its own by default: the test's
    pytest-timeout (pyproject's ``timeout``, or the module's ``pytest.mark.timeout``) stops a run that hangs and
    names the test, instead of a fixed limit here that machine load alone could reach."""
    import time

    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, env=stage_env(cwd), capture_output=True, text=True, timeout=timeout)
    return Run(res.returncode, res.stdout, res.stderr, time.perf_counter() - t0)
