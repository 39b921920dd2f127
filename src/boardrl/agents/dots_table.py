"""The greedy agent over a Dots and Boxes Q-table indexed by the edge set (learner ``dots_table``), saved compactly.

Why indexed by the edge set: seed 001 (../shared/SEEDS.md, "Seed 001") keys its values by the walls tensor,
which is the edge set; nothing else (scores, who drew what) enters.  A table has one row per edge set
(2^12 for 2x2 boxes, 2^24 for 3x3) and one column per edge; values are from the view of the player to move.

What is stored.  Every entry has an *initial value*: 0, or (transfer) a pure function of the edge set computed
from a smaller board's table (agents/dots_transfer.py).  Training writes only some entries, so a model is

- the **written entries** as sorted keys ``row * E + action`` (uint32 for E <= 24) with float32 values, and
- what defines the initial values: nothing, or the small board's full float32 table (2x2: 4096 x 12).

A row's values are its initial values with the written entries laid over them; the agent looks rows up by
binary search in the keys, so neither the agent nor its file holds the 2^24-row dense table.

Symmetry: with ``symmetry`` on, rows exist only for canonical edge sets (the smallest image under the board's
8 symmetries, or 4 on rectangles) and action ``a`` of edge set E is column ``perm[s, a]`` of the canonical
row, s being the symmetry that canonicalises E (ties: the first such s).  So Q(sigma E, sigma a) = Q(E, a)
for every position no symmetry but the identity fixes; in a position that some symmetry fixes (the empty
board, early positions), equivalent actions keep separate entries, which converge to the same value.

Play: argmax over the legal edges, ties broken uniformly at random with the match's rng (seed 001: "greedy
over valid actions with random tie-breaking").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from boardrl.agents.base import Agent
from boardrl.agents.learned import ModelError, model_info, read_arrays, write_agent_info
from boardrl.atomic_io import atomic_writer
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.dots_and_boxes import DotsAndBoxes, Geometry
from boardrl.agents.dots_transfer import Transfer, transfer_row

KIND = "dots_table"
TABLE_FILE = "dots_table.npz"
#: 2^24 rows x 24 float32 columns = 1.6 GB of address space (lazily committed); larger boards do not fit.
MAX_TABLE_EDGES = 24
_CHUNK = 8  # symmetry images are looked up a byte of edges at a time


# ---------------------------------------------------------------------------------------------- symmetry
class Symmetry:
    """Edge permutations of the board (identity only when off) and byte lookup tables to apply them fast."""

    def __init__(self, geo: Geometry, on: bool) -> None:
        perms = geo.symmetry_maps() if on else np.arange(geo.num_edges, dtype=np.int64)[None]
        self.perm = np.ascontiguousarray(perms, dtype=np.int64)
        self.inv = np.empty_like(self.perm)
        for s in range(self.perm.shape[0]):
            self.inv[s, self.perm[s]] = np.arange(geo.num_edges)
        chunks = -(-geo.num_edges // _CHUNK)
        self.lut = np.zeros((self.perm.shape[0], chunks, 1 << _CHUNK), dtype=np.int64)
        for s in range(self.perm.shape[0]):
            for c in range(chunks):
                for byte in range(1 << _CHUNK):
                    img = 0
                    for bit in range(_CHUNK):
                        e = c * _CHUNK + bit
                        if byte >> bit & 1 and e < geo.num_edges:
                            img |= 1 << int(self.perm[s, e])
                    self.lut[s, c, byte] = img


@njit(cache=True)
def canonical(edges: int, lut: np.ndarray) -> tuple[int, int]:
    """(smallest image of ``edges`` under the symmetries in ``lut``, index of the first symmetry giving it)."""
    if lut.shape[0] == 1:
        return edges, 0
    best, best_s = -1, 0
    for s in range(lut.shape[0]):
        img = 0
        for c in range(lut.shape[1]):
            img |= lut[s, c, (edges >> (c * 8)) & 255]
        if best < 0 or img < best:
            best, best_s = img, s
    return best, best_s


@njit(cache=True)
def pick_greedy(values: np.ndarray, free: int, u: float) -> int:
    """A uniformly random one (by ``u`` in [0, 1)) of the legal actions (bits of ``free``) of largest value."""
    best = -np.inf
    n = 0
    for a in range(values.shape[0]):
        if (free >> a) & 1:
            v = values[a]
            if v > best:
                best, n = v, 1
            elif v == best:
                n += 1
    if n == 0:
        return -1
    r = min(int(u * n), n - 1)
    for a in range(values.shape[0]):
        if (free >> a) & 1 and values[a] == best:
            if r == 0:
                return a
            r -= 1
    return -1


@njit(cache=True)
def sparse_row(row: int, keys: np.ndarray, vals: np.ndarray, source, maps, local, out) -> None:
    """Values of canonical row ``row``: initial values, then the written entries (sorted keys row * E + a)."""
    transfer_row(row, source, maps, local, out)
    width = out.shape[0]
    i = np.searchsorted(keys, row * width)
    while i < keys.shape[0] and keys[i] < (row + 1) * width:
        out[keys[i] - row * width] = vals[i]
        i += 1


@njit(cache=True)
def _act_rows(edges, full, u, keys, vals, source, maps, local, lut, perm, inv, out) -> None:
    width = perm.shape[1]
    canon_vals = np.empty(width, dtype=np.float32)
    for i in range(edges.shape[0]):
        c, s = canonical(edges[i], lut)
        sparse_row(c, keys, vals, source, maps, local, canon_vals)
        a = pick_greedy(canon_vals, full & ~c, u[i])
        out[i] = inv[s, a] if a >= 0 else -1


@njit(cache=True)
def _q_rows(edges, keys, vals, source, maps, local, lut, perm, out) -> None:
    width = perm.shape[1]
    canon_vals = np.empty(width, dtype=np.float32)
    for i in range(edges.shape[0]):
        c, s = canonical(edges[i], lut)
        sparse_row(c, keys, vals, source, maps, local, canon_vals)
        for a in range(width):
            out[i, a] = canon_vals[perm[s, a]]


# ---------------------------------------------------------------------------------------------- initial values
class InitialValues:
    """What unwritten entries hold: 0, or a transfer from a smaller board (arrays the kernels take as they are)."""

    def __init__(self, geo: Geometry, source: np.ndarray | None = None, source_game: str | None = None) -> None:
        self.source_game = source_game
        if source is None:
            self.source = np.zeros((0, 0), dtype=np.float32)
            self.maps = np.zeros((0, 0), dtype=np.int64)
            self.local = np.zeros((geo.num_edges, 0), dtype=np.int64)
            return
        small = dots_geometry(source_game)
        t = Transfer(geo, small, source)
        self.source, self.maps, self.local = t.source, t.maps, t.local

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.source, self.maps, self.local

    @property
    def is_transfer(self) -> bool:
        return self.source_game is not None


def dots_geometry(game_id: str | None) -> Geometry:
    """Geometry of a ``dots_and_boxes_RxC`` game id (one-line error otherwise)."""
    prefix = "dots_and_boxes_"
    try:
        rows, cols = (int(v) for v in str(game_id)[len(prefix):].split("x"))
        if not str(game_id).startswith(prefix):
            raise ValueError
    except ValueError:
        raise BoardRLError(f"{game_id!r} is not a dots_and_boxes_<rows>x<cols> game") from None
    return Geometry(rows, cols)


# ---------------------------------------------------------------------------------------------- the agent
class DotsTableAgent(Agent):
    """argmax of Q(edges, a) over the undrawn edges, random tie-break; the table is the sparse form above."""

    batched = True
    kind = KIND

    def __init__(self, game: Game, keys: np.ndarray, vals: np.ndarray, init: InitialValues, symmetry: bool,
                 name: str = "dots_table", meta: dict | None = None) -> None:
        super().__init__(game, name)
        if not isinstance(game, DotsAndBoxes):
            raise ModelError(f"a dots_table agent plays Dots and Boxes, not {game.game_id}")
        self.keys = np.ascontiguousarray(keys, dtype=np.int64)
        self.vals = np.ascontiguousarray(vals, dtype=np.float32)
        if self.keys.shape != self.vals.shape or self.keys.ndim != 1:
            raise ModelError(f"dots_table entries of shapes {self.keys.shape} and {self.vals.shape} do not match")
        if self.keys.size and (np.any(np.diff(self.keys) <= 0) or self.keys[0] < 0
                               or self.keys[-1] >= game.num_edges << game.num_edges):
            raise ModelError("dots_table entry keys must be strictly increasing and within the table")
        self.init = init
        self.symmetry = bool(symmetry)
        self.sym = Symmetry(game.geo, self.symmetry)
        self.meta = dict(meta or {})
        self.stats: dict[str, Any] = {}

    @property
    def entries(self) -> int:
        return int(self.keys.size)

    def _edges(self, states: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(states, dtype=np.int64).reshape(-1, 4)[:, 0])

    def q_values_batch(self, states: np.ndarray) -> np.ndarray:
        """(N, E) float32 values of every action of each state row (drawn edges included, meaningless)."""
        edges = self._edges(states)
        out = np.empty((edges.size, self.game.num_edges), dtype=np.float32)
        _q_rows(edges, self.keys, self.vals, *self.init.arrays, self.sym.lut, self.sym.perm, out)
        return out

    def q_values(self, state: Any) -> np.ndarray:
        self.game.check_state(state)
        return self.q_values_batch(np.asarray([tuple(state)], dtype=np.int64))[0]

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        edges = self._edges(states)
        out = np.empty(edges.size, dtype=np.int64)
        _act_rows(edges, self.game.full, rng.random(edges.size), self.keys, self.vals, *self.init.arrays,
                  self.sym.lut, self.sym.perm, self.sym.inv, out)
        return out

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        if self.game.is_over(state):
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        return int(self.act_batch(np.asarray([tuple(state)], dtype=np.int64), rng)[0])

    # ------------------------------------------------------------------ save / load
    def save(self, model_dir: Path) -> None:
        """``dots_table.npz`` (entries, and the transfer source if any), then ``agent.json`` (last)."""
        model_dir = Path(model_dir)
        model_dir.mkdir(parents=True, exist_ok=True)
        arrays = {"keys": self.keys.astype(np.uint32), "values": self.vals}
        if self.init.is_transfer:
            arrays["source"] = self.init.source
        with atomic_writer(model_dir / TABLE_FILE) as fh:
            np.savez_compressed(fh, **arrays)
        write_agent_info(model_dir, model_info(
            self, entries=self.entries, symmetry=self.symmetry, transfer_source_game=self.init.source_game))

    @classmethod
    def load(cls, game: Game, info: dict, model_dir: Path) -> "DotsTableAgent":
        path = Path(model_dir) / TABLE_FILE
        arrays = read_arrays(path, ("keys", "values"), "dots_table", optional=("source",))
        keys, vals, source = arrays["keys"].astype(np.int64), arrays["values"], arrays.get("source")
        source_game = info.get("transfer_source_game")
        if (source is None) != (source_game is None):
            raise ModelError(f"{path}: transfer source and agent.json transfer_source_game disagree")
        init = InitialValues(game.geo, source, source_game)
        return cls(game, keys, vals, init, bool(info.get("symmetry", False)), name=info["agent"],
                   meta=info.get("meta"))

    def full_table(self) -> np.ndarray:
        """(2^E, E) float32 values of every edge set in the board's own frame (small boards: transfer sources)."""
        if self.game.num_edges > 16:
            raise BoardRLError(f"full_table of {self.game.game_id} would have 2^{self.game.num_edges} rows")
        edges = np.arange(1 << self.game.num_edges, dtype=np.int64)
        states = np.zeros((edges.size, 4), dtype=np.int64)
        states[:, 0] = edges
        return self.q_values_batch(states)
