"""numba kernels shared by all games (random legal choice, bit counting, bit permutations for symmetries)."""

from __future__ import annotations

import numpy as np
from numba import njit


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
