"""Keeping one trainer per experiment: a lock on its model directory, and no trainer outliving its `dvc`.

Why: killing only the ``dvc`` process used to leave the trainer running as an orphan; a second ``dvc repro`` then
trained in the same checkpoint directory at the same time, and the two runs corrupted each other's curve.

- ``TrainerLock``: an exclusive ``flock`` on ``models/<id>/.trainer.lock`` (DVC ignores the file) held for the
  whole train stage; a second trainer gets one line naming the process that holds it.  The kernel drops the lock
  when its holder dies, however it dies, so a stale lock file never blocks anyone.
- ``exit_with_parent``: a daemon thread watches the ``dvc`` process that started the stage (the nearest ancestor
  whose command line names dvc, else the parent) and sends this process SIGTERM when it is gone; stage scripts
  turn SIGTERM into an orderly exit (MLflow run FAILED, checkpoint kept, lock released).
"""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time
from pathlib import Path

from boardrl.errors import BoardRLError

LOCK_NAME = ".trainer.lock"


class TrainerBusy(BoardRLError):
    """Another process is training the same experiment."""


class TrainerLock:
    """``with TrainerLock(models_dir, what):`` holds the experiment's training lock (see the module docstring)."""

    def __init__(self, directory: Path, what: str) -> None:
        self.path = Path(directory) / LOCK_NAME
        self.what = what
        self.fd: int | None = None

    def __enter__(self) -> "TrainerLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise TrainerBusy(f"{self.what} is being trained by another process (pid {holder}, lock {self.path}); "
                              "stop it or wait for it to finish") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            self.path.unlink(missing_ok=True)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def watched_ancestor() -> int | None:
    """The nearest ancestor running dvc, else the parent; None where /proc is not there (not Linux)."""
    parent = os.getppid()
    pid: int | None = parent
    while pid and pid > 1:
        if any(Path(token).name == "dvc" for token in _cmdline(pid).split()):
            return pid
        pid = _ppid(pid)
    return parent if Path(f"/proc/{parent}").exists() else None


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has died; only its exit status remains


def exit_with_parent(poll_s: float = 1.0) -> int | None:
    """Start the watcher; returns the pid watched (None when it cannot watch)."""
    target = watched_ancestor()
    if target is None or target <= 1:
        return None

    def watch() -> None:
        while _alive(target):
            time.sleep(poll_s)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="exit-with-dvc", daemon=True).start()
    return target
