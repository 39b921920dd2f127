"""A match's chunks as Ray tasks: the evaluate stage's long ladders on a local Ray runtime or a cluster.

Why: a ladder against search-based opponents (MCTS with 1,000 simulations, alpha-beta, an AlphaZero agent with
hundreds of simulations a move) is minutes of independent games.  ``evaluate/match.py`` cuts them into chunks
that carry their own seeds, so a chunk played in a Ray task anywhere gives the games it gives in this process.
With ``$BOARDRL_MATCH_BACKEND=ray`` the chunks that would go to a process pool go to Ray instead, on
``$BOARDRL_PROCESSES`` CPUs of a local runtime, or on the cluster at ``$RAY_ADDRESS`` (Ray's own convention),
or on the runtime this process started already (self-play's): ``boardrl/ray_runtime.py``.  Ray is imported only
then.
"""

from __future__ import annotations

import importlib
import io
import os
import pickle
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from boardrl.errors import BoardRLError
from boardrl.ray_runtime import ray_runtime

#: Environment variable choosing where a match's pooled chunks run: worker processes here, or Ray tasks.
BACKEND_ENV = "BOARDRL_MATCH_BACKEND"
BACKENDS = ("processes", "ray")


def match_backend(environ: Mapping[str, str] = os.environ) -> str:
    """``$BOARDRL_MATCH_BACKEND`` (default ``processes``); a one-line error for anything else."""
    raw = environ.get(BACKEND_ENV) or BACKENDS[0]
    if raw not in BACKENDS:
        raise BoardRLError(f"${BACKEND_ENV} must be one of {', '.join(BACKENDS)}, got {raw!r}")
    return raw


class _KernelsByName(pickle.Pickler):
    """A pickler that writes a numba kernel as the module attribute it is, not as its Python source.

    Why: numba pickles a dispatcher by value (its function's code and globals); the copy a worker rebuilds is a
    new dispatcher outside the kernel cache, so every Ray worker compiled the game's and the agents' kernels
    again: 10 to 40 s a worker, longer than most chunks.  By name, the worker imports the module and finds the
    dispatcher that module defines, with its cached machine code.  A dispatcher that is not its module's
    attribute (a kernel made at run time) still goes by value."""

    def reducer_override(self, obj: Any) -> Any:
        py_func = getattr(obj, "py_func", None)
        if py_func is None or not hasattr(obj, "overloads"):  # not a numba dispatcher
            return NotImplemented
        module, name = py_func.__module__, py_func.__qualname__
        if "." in name or getattr(sys.modules.get(module), name, None) is not obj:
            return NotImplemented
        return _module_attribute, (module, name)


def _module_attribute(module: str, name: str) -> Any:
    """``module.name``, importing the module: the other half of ``_KernelsByName``."""
    return getattr(importlib.import_module(module), name)


def dumps_kernels_by_reference(obj: Any) -> bytes:
    """``pickle.dumps(obj)``, with every numba kernel that is a module attribute written by its name."""
    buffer = io.BytesIO()
    _KernelsByName(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


def _play_chunk(shared: bytes, chunk: Any) -> Any:
    """In a Ray worker: the parent's torch threads (a network's outputs depend on them), then the chunk.

    ``shared`` is pickled by hand: arrays that Ray's object store hands out zero-copy are read-only, and the
    game kernels (numba) are compiled for writable ones."""
    game, agents, start_rows, threads, run_chunk = pickle.loads(shared)
    if threads is not None and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    return run_chunk(game, agents, chunk, start_rows)


def ray_chunks(game: Any, agents: tuple[Any, Any], chunks: list[Any], start_rows: Any, cpus: int,
               threads: int | None, run_chunk: Callable[..., Any]) -> Iterator[Any]:
    """Each chunk's ``run_chunk(game, agents, chunk, start_rows)`` (first game, outcomes, lengths), in the order
    they finish, from one Ray task per chunk."""
    ray = ray_runtime(cpus, f"${BACKEND_ENV}=ray", grow=False)
    shared = ray.put(dumps_kernels_by_reference((game, agents, start_rows, threads, run_chunk)))
    play = ray.remote(num_cpus=1)(_play_chunk)
    pending = [play.remote(shared, chunk) for chunk in chunks]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])
