"""numba kernels shared by all games (random legal choice, bit counting)."""

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
    """Row-wise uniform choice among True entries of ``mask`` using one uniform ``u[i]`` per row; -1 if none."""
    n, a = mask.shape
    out = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        k = 0
        for j in range(a):
            if mask[i, j]:
                k += 1
        if k == 0:
            continue
        r = int(u[i] * k)
        if r >= k:
            r = k - 1
        for j in range(a):
            if mask[i, j]:
                if r == 0:
                    out[i] = j
                    break
                r -= 1
    return out
