"""numba kernels shared by all games (random legal choice, bit counting, bit permutations for symmetries).

Also ``trusted_entry``: the compiled entry point of one kernel signature, for the scalar ``play`` fast paths.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numba import njit, types

#: The numba type of every state field and action: the scalar kernels take and return int64 only.
INT64 = types.int64
BOOLEAN = types.boolean


def tuple_of(item_type: Any, n: int) -> Any:
    """The numba type of an ``n``-tuple of ``item_type``: a whole state as one argument of a trusted entry point.

    A NamedTuple state passes as this plain tuple type to an entry point (which checks only that it is a tuple
    of that length); the dispatcher would type it as a NamedTuple and compile another specialization.
    """
    return types.UniTuple(item_type, n)


def trusted_entry(kernel: Any, *argtypes: Any) -> Callable:
    """The compiled entry point of ``kernel`` for the signature ``argtypes`` (compiled or loaded from cache now).

    Why: calling a numba dispatcher resolves the type of every argument on every call, about 80 ns of the
    ~200 ns a small scalar kernel costs from Python; the entry point of one compiled signature skips that and
    only converts the arguments.  It is the very same machine code, so the rules stay in one place.  The
    conversion is lenient (a float is truncated, ``True`` is 1), so it is only for arguments the caller vouches
    for: the fields of a state the game itself returned from ``play``, and a move already checked to be an int
    in range.  Everything else goes through the dispatcher.  Falls back to the dispatcher itself where numba
    offers no entry point (``NUMBA_DISABLE_JIT=1``: the kernel is then the plain Python function).
    """
    compile_sig = getattr(kernel, "compile", None)
    if compile_sig is None:
        return kernel
    entry = compile_sig(tuple(argtypes))
    return entry if callable(entry) else kernel


def trusted_entry_on_first_call(namespace: dict, name: str, kernel: Any, *argtypes: Any) -> Callable:
    """A stand-in for ``trusted_entry(kernel, *argtypes)`` bound to the global ``name`` of ``namespace``.

    Its first call makes the entry point (compiling the kernel or loading it from numba's cache: the same cost a
    first dispatcher call has), rebinds ``namespace[name]`` to it and forwards the call; later calls look up the
    global and go straight to the entry point.  Importing a game module thus compiles nothing.
    """

    def first_call(*args: Any) -> Any:
        entry = trusted_entry(kernel, *argtypes)
        namespace[name] = entry
        return entry(*args)

    first_call.__name__ = first_call.__qualname__ = name
    return first_call


@njit(cache=True)
def popcount(x: int) -> int:
    """Number of set bits of a non-negative int64."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True)
def pick_random_legal(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row-wise uniform choice among True entries of ``mask`` using one uniform ``u[i]`` per row; -1 if none.

    Branch-free inner loops: this runs on every batched random step, where a data-dependent branch per cell
    costs more than the rules themselves.
    """
    n, a = mask.shape
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = 0
        for j in range(a):
            k += mask[i, j]
        r = min(int(u[i] * k), k - 1)
        pos = -1
        c = 0
        for j in range(a):
            m = mask[i, j]
            pos += (j + 1) * (m & (c == r))
            c += m
        out[i] = pos
    return out


@njit(cache=True)
def set_returns(rets: np.ndarray, i: int, status: int) -> None:
    """Row ``i`` of a batch's (N, 2) returns from a game's status code.

    The status convention of the tic-tac-toe, Connect 4 and Conniption kernels: -1 game on, 0 player 0 won,
    1 player 1 won, 2 draw (Dots and Boxes decides from its scores instead).
    """
    r0 = 1.0 if status == 0 else -1.0 if status == 1 else 0.0
    rets[i, 0] = r0
    rets[i, 1] = -r0


@njit(cache=True)
def permute_bits_batch(bits: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """(S, N) images of an (N,) int64 array of bit sets under S bit permutations (``perms[k][b]`` = image of b).

    Board symmetries of bitmask states are bit permutations; one compiled loop maps a whole batch under all of
    them without the (S, N, bits) temporaries a numpy broadcast would need.  Bits must lie below bit 63.
    """
    s, nb = perms.shape
    out = np.empty((s, bits.shape[0]), dtype=np.int64)
    for k in range(s):
        for i in range(bits.shape[0]):
            b = bits[i]
            r = np.int64(0)
            for j in range(nb):
                r |= ((b >> j) & 1) << perms[k, j]
            out[k, i] = r
    return out
