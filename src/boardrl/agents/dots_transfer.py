"""Transfer of a small Dots and Boxes Q-table (2x2 boxes) to a larger board (3x3): the sub-board mapping.

Why: seed 001 (../shared/SEEDS.md, "Seed 001", and the homework's "Q-table seeding" that the repository does
not contain) trains 2x2 first and then 3x3.  A 3x3 table has 2^24 rows, far more than a few minutes of
self-play visits, so the values of unvisited rows decide much of the play.  A 2x2 table knows the local
tactics of Dots and Boxes (take a box when you can, do not draw a box's third wall, give away as little as
possible) and every 2x2 patch of a larger board is a 2x2 board.

The mapping.  A board of R x C boxes holds ``(R - r + 1) * (C - c + 1)`` sub-boards of r x c boxes (four 2x2
sub-boards of a 3x3 board, at box offsets (0,0), (0,1), (1,0), (1,1)).  Local box (i, j) of sub-board k at
offset (r0, c0) is box (r0 + i, c0 + j) of the big board, and each of its walls N, S, E, W is the same wall
of that big box; so ``maps[k, e]`` is the big-board edge of local edge ``e`` in the small board's own numbering
(seed 001 numbering on both, games/dots_and_boxes.py).  ``local[a, k]`` is the inverse: the local number of big
edge ``a`` in sub-board k, or -1 when the sub-board does not contain ``a``.

The initial value of a big-board state-action is the **mean** over the sub-boards k that contain edge ``a`` of

    Q_small(E restricted to k, local[a, k])

where "E restricted to k" is the small board's edge set made of the big edges ``maps[k, :]`` drawn in E.  Why
the mean: each term is an estimate, from the small board's point of view, of what drawing ``a`` is worth to the
mover *inside that patch* (boxes taken or handed over there); the mean keeps the scale of one patch (a sum
would count the centre box of a 3x3 board four times) and lets a danger seen by several patches (a third wall
on a box shared by them) weigh accordingly.  Drawn edges get the same formula; they are never chosen.
The player to move and extra turns mean the same thing on both boards, so the sign convention (values from the
mover's view) carries over unchanged.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardrl.errors import BoardRLError
from boardrl.games.dots_and_boxes import Geometry


def sub_board_maps(big: Geometry, small: Geometry) -> np.ndarray:
    """(K, small edges) int64: ``maps[k, e]`` = big-board edge of local edge ``e`` in sub-board ``k``.

    Sub-boards are ordered by offset, row-major: (0,0), (0,1), ..., (R-r, C-c).
    """
    if small.rows > big.rows or small.cols > big.cols:
        raise BoardRLError(f"a {small.rows}x{small.cols} board does not fit in a {big.rows}x{big.cols} board")
    maps = []
    for r0 in range(big.rows - small.rows + 1):
        for c0 in range(big.cols - small.cols + 1):
            m = np.full(small.num_edges, -1, dtype=np.int64)
            for i in range(small.rows):
                for j in range(small.cols):
                    walls = small.box_edges[i * small.cols + j]
                    big_walls = big.box_edges[(r0 + i) * big.cols + (c0 + j)]
                    m[walls] = big_walls
            maps.append(m)
    return np.array(maps, dtype=np.int64)


def local_edges(maps: np.ndarray, big_edges: int) -> np.ndarray:
    """(big edges, K) int64: local number of each big edge in each sub-board, -1 where it is not there."""
    local = np.full((big_edges, maps.shape[0]), -1, dtype=np.int64)
    for k in range(maps.shape[0]):
        local[maps[k], k] = np.arange(maps.shape[1])
    return local


@njit(cache=True)
def restrict(edges: int, map_k: np.ndarray) -> int:
    """The small board's edge set seen through one sub-board: bit e set when big edge ``map_k[e]`` is drawn."""
    out = 0
    for e in range(map_k.shape[0]):
        out |= ((edges >> map_k[e]) & 1) << e
    return out


@njit(cache=True)
def transfer_row(edges: int, source: np.ndarray, maps: np.ndarray, local: np.ndarray, out: np.ndarray) -> None:
    """``out[a]`` = mean over sub-boards k holding edge a of ``source[edges restricted to k, local[a, k]]``.

    ``source`` is the small board's full (2^small edges, small edges) value table.
    """
    k_count = maps.shape[0]
    sub = np.empty(k_count, dtype=np.int64)
    for k in range(k_count):
        sub[k] = restrict(edges, maps[k])
    for a in range(out.shape[0]):
        total = 0.0
        n = 0
        for k in range(k_count):
            e = local[a, k]
            if e >= 0:
                total += source[sub[k], e]
                n += 1
        out[a] = total / n if n > 0 else 0.0


class Transfer:
    """The initial values of a big board taken from a small board's full value table (module docstring)."""

    def __init__(self, big: Geometry, small: Geometry, source: np.ndarray) -> None:
        source = np.ascontiguousarray(source, dtype=np.float32)
        if source.shape != (1 << small.num_edges, small.num_edges):
            raise BoardRLError(f"transfer source of shape {source.shape} is not a full {small.rows}x{small.cols} "
                               f"table ({1 << small.num_edges}, {small.num_edges})")
        self.small = small
        self.source = source
        self.maps = sub_board_maps(big, small)
        self.local = local_edges(self.maps, big.num_edges)

    def row(self, edges: int) -> np.ndarray:
        """Initial values of all actions in the big-board edge set ``edges`` (float32)."""
        out = np.empty(self.local.shape[0], dtype=np.float32)
        transfer_row(int(edges), self.source, self.maps, self.local, out)
        return out
