"""Which process owns an MLflow run or an Optuna trial, and whether that process still lives.

Why: a stage or sweep worker killed with ``kill -9`` cannot end its run or trial, so both stay RUNNING.  The next
process may close them only if it *knows* their owner is dead: the host name and pid alone are not enough
(pids are reused), so the identity also holds the process's start time.  A run owned by another host cannot be
checked here and is never called dead by this module (the callers decide by age or heartbeat instead).
``psutil`` reads the process table portably (Linux, macOS, Windows) instead of parsing ``/proc`` by hand.
"""

from __future__ import annotations

import os
import socket
from typing import Mapping

#: Keys of the identity (MLflow tags prefix them with ``owner_``; Optuna keeps the dict as one system attr).
HOST, PID, STARTED = "host", "pid", "started"
#: Two start times further apart than this belong to two processes (psutil rounds to clock ticks).
SAME_START_S = 1.0


def this_host() -> str:
    return socket.gethostname()


def identity() -> dict[str, str]:
    """This process: host name, pid and start time (seconds since the epoch, as text)."""
    import psutil

    return {HOST: this_host(), PID: str(os.getpid()), STARTED: f"{psutil.Process().create_time():.2f}"}


def tags() -> dict[str, str]:
    """``identity()`` as MLflow tags: ``owner_host``, ``owner_pid``, ``owner_started``."""
    return {f"owner_{k}": v for k, v in identity().items()}


def from_tags(run_tags: Mapping[str, str]) -> dict[str, str] | None:
    """The owner recorded in a run's tags, or None when a tag is missing (a run from before owners were kept)."""
    found = {k: run_tags.get(f"owner_{k}") for k in (HOST, PID, STARTED)}
    return None if any(v is None for v in found.values()) else found  # type: ignore[return-value]


def alive(owner: Mapping[str, str]) -> bool | None:
    """True while the owning process runs; False when it is gone (or its pid now belongs to another process);
    None when this host cannot tell (another host, or an unreadable identity)."""
    import psutil

    if owner.get(HOST) != this_host():
        return None
    try:
        pid, started = int(owner[PID]), float(owner[STARTED])
    except (KeyError, TypeError, ValueError):
        return None
    try:
        proc = psutil.Process(pid)
        if abs(proc.create_time() - started) > SAME_START_S:
            return False  # the pid was reused by a later process
        return proc.status() != psutil.STATUS_ZOMBIE  # killed, not yet reaped by its parent
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # it exists; someone else's process is not ours to call dead


def describe(owner: Mapping[str, str]) -> str:
    return f"pid {owner.get(PID)} on {owner.get(HOST)}"
