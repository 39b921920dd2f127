"""The one Ray runtime of a boardrl process: a local runtime started here, or the cluster at ``$RAY_ADDRESS``.

Why one module: self-play's actors (``learn/core/selfplay_pool.py``) and a match's chunks
(``evaluate/match_ray.py``) need the same start-up, and two copies of it drifted apart.  Whoever asks first
starts the runtime; the other finds it running.  The start-up:

- joins ``$RAY_ADDRESS`` (Ray's own convention) when it is set, after checking that something listens there,
  because Ray itself retries for minutes before it gives up;
- else starts a local runtime whose workers import boardrl from this source (``PYTHONPATH``); on a cluster every
  node must have the same boardrl installed (``docs/ray.md``);
- passes the CPU pin (``boardrl/cpu_pins.py``) to every worker, so a network's outputs there equal the driver's;
- starts a local runtime's workers at this process's priority: Ray's default (``RAY_worker_niceness``, 15)
  starves them as soon as anything else runs here (a second stage, a test worker): ``import torch`` took 45 s in
  a worker beside two pipeline stages and 2 s in the driver;
- says what went wrong in one line naming the address.

Why the foundation: the evaluate layer sits below learn (``tests/test_layers.py``), so the runtime cannot live in
either.  Ray is imported only when a runtime is asked for; a run that never asks never imports it.
"""

from __future__ import annotations

import os
import socket
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boardrl.errors import BoardRLError


@dataclass
class _Started:
    """The local runtime this process started, if any.

    ``cpus`` is None when none was started here (no runtime yet, or one on a cluster or started by other code);
    ``holders`` counts the users that keep work on it now, by kind ("self-play pool"), because starting it again
    wider would kill their actors."""

    cpus: int | None = None
    holders: Counter[str] = field(default_factory=Counter)


_STARTED = _Started()


def ray_runtime(cpus: int, user: str, grow: bool = True) -> Any:
    """The ``ray`` module, initialised; ``user`` names who asks, for the one-line errors.

    A runtime already running is used as it is, except a local one started here with fewer than ``cpus`` CPUs
    when ``grow``: Ray keeps an actor it cannot place pending for ever (``benchmarks/run.py``'s 2 actors of 2
    threads after 1 actor hung 15 minutes), so that runtime starts again with ``cpus``, or, while users hold it,
    that is a one-line error.  Tasks of one CPU (a match's chunks) run on any runtime: ``grow=False``."""
    try:
        import ray
    except ImportError:
        raise BoardRLError(f"{user}: Ray is not installed (pip install 'boardrl[ray]')") from None
    if ray.is_initialized():
        started = _STARTED.cpus
        if not grow or started is None or cpus <= started:
            return ray
        if _STARTED.holders:
            held = ", ".join(f"{n} open {kind}(s)" for kind, n in sorted(_STARTED.holders.items()))
            raise BoardRLError(f"the local Ray runtime has {started} CPUs, held by {held}; {cpus} are needed: "
                               "close them first")
        ray.shutdown()
    _STARTED.cpus = None
    address = os.environ.get("RAY_ADDRESS")
    if address:
        check_reachable(address)
    try:
        if address:
            ray.init(address=address, log_to_driver=False, runtime_env=_runtime_env(local=False))
        else:
            with _worker_niceness(WORKER_NICENESS):  # "local": a new runtime even where a cluster runs on this
                # machine (``ray start --head``), which ray.init would join otherwise and refuse ``num_cpus`` for
                ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                         runtime_env=_runtime_env(local=True))
    except Exception as exc:  # ConnectionError, TimeoutError, RuntimeError, ...: one line naming the address
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        where = f"join the Ray cluster at RAY_ADDRESS={address}" if address else "start a local Ray runtime"
        raise BoardRLError(f"cannot {where}: {first}") from None
    if not address:
        _STARTED.cpus = cpus
    return ray


#: Ray's setting for its workers' nice value (read by the processes ``ray.init`` starts) and ours for a local
#: runtime: the driver's priority.  A user's own value is kept.
NICENESS_ENV = "RAY_worker_niceness"
WORKER_NICENESS = "0"


@contextmanager
def _worker_niceness(value: str) -> Iterator[None]:
    """``$RAY_worker_niceness`` set to ``value`` while a local runtime starts, unless the user set it."""
    if NICENESS_ENV in os.environ:
        yield
        return
    os.environ[NICENESS_ENV] = value
    try:
        yield
    finally:
        os.environ.pop(NICENESS_ENV, None)


def _runtime_env(local: bool) -> dict[str, Any] | None:
    """The workers' environment: the CPU pin wherever they run; on a local runtime, this source first on
    ``PYTHONPATH`` (a cluster's nodes use their own installation)."""
    from boardrl.cpu_pins import ISA_ENV

    env = {ISA_ENV: os.environ[ISA_ENV]} if os.environ.get(ISA_ENV) else {}
    if local:
        src = str(Path(__file__).resolve().parents[1])  # the directory holding the boardrl package
        env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])
    return {"env_vars": env} if env else None


def hold(kind: str) -> None:
    """Record that a user of ``kind`` keeps actors on the runtime (a wider start would kill them)."""
    _STARTED.holders[kind] += 1


def release(kind: str) -> None:
    """Undo one ``hold(kind)``."""
    _STARTED.holders[kind] -= 1
    if _STARTED.holders[kind] <= 0:
        del _STARTED.holders[kind]


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A one-line error naming ``address`` when nothing listens there.  Addresses other than [ray://]host:port
    (``auto``, ``local``) are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise BoardRLError(f"cannot join the Ray cluster at RAY_ADDRESS={address}: {exc.strerror or exc}") from None
