"""Seed 001's tabular Dots and Boxes learner: Q(edges, a) in a dense table indexed by the edge set, self-play.

Seed 001 (../shared/SEEDS.md, "Seed 001") describes a Q-table over the walls tensor, i.e. the edge set (2^12
rows for 2x2 boxes, 2^24 for 3x3; "212"/"224" in the seed, see "Where code and document differ"), seeded on 3x3
from the 2x2 table.  This module learns it by self-play Q-learning with both seats sharing one table.

Values and signs.  Q(E, a) is from the view of the player to move in E.  A move's transition is closed at the
next decision state E' of the same game:

    same player moves again in E' (the move completed k >= 1 boxes):   target = k + gamma * max_a' Q(E', a')
    the turn passed (k = 0):                                           target =   - gamma * max_a' Q(E', a')

(seed 001's phi = +1 / -1, "Target"), and ``Q += alpha * (target - Q)``.  The turn-passing move is closed
when the opponent's turn *ends*, bootstrapping from the state at the start of that turn, because that is when
seed 001 records it ("When transitions are recorded"); this matters only at the end of the game:

- ``reward: seed001`` - the seed's text: +1 per box completed by the mover, +5 for a win, -1 for a loss (SEEDS.md
  "Where code and document differ": the text contradicts the repository's +-1).  At the end *both* players'
  open transitions are terminal with their own reward (seed 001: "At game end, both players record a terminal
  transition"): the last mover's move gets k + 5 / k - 1 / k (win / loss / draw) and the other player's last
  turn-passing move gets +5 / -1 / 0.  Defaults are the seed's final hyperparameters: gamma 0.6, epsilon 0.05.
  The win bonus depends on the scores, which the edge set does not hold, so these values are not a function of
  the table's key (the seed's choice, reproduced).
- ``reward: margin`` - +1 per box completed by the mover and nothing at the end; the other player's last move
  keeps its ordinary bootstrap.  With gamma = 1, Q(E, a) is exactly the mover's margin-to-go, the quantity the
  exact referee (solvers/dots_and_boxes.py) computes, so greedy play is margin-optimal at convergence.

Table.  A dense float32 (2^E, E) numpy array in anonymous memory that the OS commits 4 KiB page by page
(``lazy_zeros``), so only the touched part costs memory.  A row is filled with its initial values (0, or a
transfer from a 2x2 table, agents/dots_transfer.py) the first time training touches it; a uint32 per row
records "filled" (bit 31) and which entries were written (bits 0..E-1), so snapshots, checkpoints and models
hold only the written entries (agents/dots_table.py).  ``symmetry: true`` keys rows by the canonical image of E under the board's symmetries.

Games run side by side on the batched engine (``parallel_games`` rows, finished rows restarted); numba kernels
choose the moves and apply the updates row by row in a fixed order, so runs are bit-for-bit reproducible from
the seed and resume exactly (the random generator and the written entries are the whole state between
segments).
"""

from __future__ import annotations

import hashlib
import mmap
from pathlib import Path
from typing import Literal

import numpy as np
from numba import njit
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from boardrl.agents.base import Agent
from boardrl.agents.dots_table import (
    KIND, MAX_TABLE_EDGES, DotsTableAgent, InitialValues, Symmetry, canonical, dots_geometry, pick_greedy,
)
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.dots_and_boxes import DotsAndBoxes
from boardrl.learn.core.base import Exploration, Learner, LearnError, LearnerParams, rng_from_json, rng_state_json
from boardrl.agents.dots_transfer import transfer_row
from boardrl.learn.core.slots import GameSlots, segment_stop, waves

#: seed 001's end-of-game rewards (the seed's text): +5 for a win, -1 for a loss, 0 for a draw.
WIN_BONUS, LOSS_BONUS = 5.0, -1.0
_FILLED = np.uint32(1 << 31)


class TransferSource(BaseModel):
    """A smaller board's table trained inside this run, as the transfer source (seeded from the run's seed).

    Why beside ``transfer_from``: a DVC train stage cannot depend on another experiment's model (foreach stages
    have one dependency list), so the pipeline trains the source in the same stage; it costs about a second
    for 100,000 games of 2x2.  ``params`` are dots_table params of the source run (its reward is this run's).
    """

    model_config = ConfigDict(extra="forbid")

    game: str = Field("dots_and_boxes_2x2", description="the smaller board the source table is trained on")
    params: dict = Field(default_factory=dict, description="dots_table params of the source run (no transfer)")


class DotsTableParams(LearnerParams):
    """Defaults are seed 001's: its reward text, gamma 0.6 and a constant epsilon of 0.05 (the final model's
    hyperparameters); alpha, which the seed gives only for its network, is ours."""

    games: int = Field(10_000, ge=1, description="self-play training games")
    alpha: float = Field(0.1, gt=0.0, le=1.0, description="learning rate")
    gamma: float = Field(0.6, ge=0.0, le=1.0, description="discount per decision (seed 001: 0.6)")
    exploration: Exploration = Field(default_factory=lambda: Exploration(schedule="constant", start=0.05),
                                     description="epsilon-greedy schedule (seed 001: constant 0.05)")
    reward: Literal["seed001", "margin"] = Field(
        "seed001", description="seed001: +1 per box, +5 win, -1 loss; margin: +1 per box only (margin-optimal)")
    transfer_from: str | None = Field(
        None, description="initial values from a smaller board's dots_table model: a model directory or "
        "'model:<experiment id>[,seed=K]' (null: all zeros)")
    transfer_source: TransferSource | None = Field(
        None, description="initial values from a smaller board's table trained first in this run (the pipeline's "
        "way: no dependency on another experiment)")
    symmetry: bool = Field(False, description="key rows by the canonical image under the board's symmetries")

    @model_validator(mode="after")
    def _one_source(self) -> "DotsTableParams":
        if self.transfer_from is not None and self.transfer_source is not None:
            raise ValueError("give transfer_from or transfer_source, not both")
        return self
    parallel_games: int = Field(512, ge=1, description="games played side by side on the batched engine")


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _touch(row: int, vals, flags, source, maps, local) -> None:
    """Fill a row with its initial values the first time it is used."""
    if (flags[row] & _FILLED) == 0:
        transfer_row(row, source, maps, local, vals[row])
        flags[row] |= _FILLED


@njit(cache=True)
def _row_max(vals, row: int, free: int) -> float:
    best = -np.inf
    for a in range(vals.shape[1]):
        if (free >> a) & 1 and vals[row, a] > best:
            best = vals[row, a]
    return best if best > -np.inf else 0.0


@njit(cache=True)
def _update(vals, flags, row: int, a: int, target: float, alpha: float) -> None:
    q = vals[row, a]
    vals[row, a] = q + alpha * (target - q)
    flags[row] |= np.uint32(1) << np.uint32(a)


@njit(cache=True)
def _nth_free(free: int, u: float) -> int:
    n = 0
    f = free
    while f:
        f &= f - 1
        n += 1
    r = min(int(u * n), n - 1)
    a = 0
    while True:
        if (free >> a) & 1:
            if r == 0:
                return a
            r -= 1
        a += 1


@njit(cache=True)
def _decide(states, active, forced, vals, flags, source, maps, local, lut, perm, inv, full, pend, alpha, gamma,
            eps, u_explore, u_pick, actions) -> None:
    """Close each active row's open transitions into its decision state, then choose its move.

    ``pend[i]`` = (own row, own action, own mover, boxes before own move, passing row, passing action,
    passing bootstrap row); -1 rows mean "none".  Actions are stored in the canonical frame.
    """
    for i in range(states.shape[0]):
        if not active[i]:
            continue
        edges, mover, boxes = states[i, 0], states[i, 1], states[i, 2] + states[i, 3]
        c, s = canonical(edges, lut)
        _touch(c, vals, flags, source, maps, local)
        free = full & ~c
        p = pend[i]
        if p[0] >= 0:
            if p[2] == mover:  # extra turn: the move completed boxes, the same player moves again
                target = (boxes - p[3]) + gamma * _row_max(vals, c, free)
                _update(vals, flags, p[0], p[1], target, alpha)
            else:  # the turn passed: the previous passing move (this mover's) is closed, this one waits
                if p[4] >= 0:
                    target = -gamma * _row_max(vals, p[6], full & ~p[6])
                    _update(vals, flags, p[4], p[5], target, alpha)
                p[4], p[5], p[6] = p[0], p[1], c
        if forced[i] >= 0:
            ac = perm[s, forced[i]]
        elif u_explore[i] < eps:
            ac = _nth_free(free, u_pick[i])
        else:
            ac = pick_greedy(vals[c], free, u_pick[i])
        p[0], p[1], p[2], p[3] = c, ac, mover, boxes
        actions[i] = inv[s, ac]


@njit(cache=True)
def _finish(states, finished, vals, flags, full, pend, alpha, gamma, seed001) -> None:
    """Terminal updates of the games that just ended (see the module docstring), then clear their rows."""
    for i in range(states.shape[0]):
        if not finished[i]:
            continue
        p = pend[i]
        last = p[2]
        margin = (states[i, 2] - states[i, 3]) * (1 if last == 0 else -1)  # the last mover's view
        k = states[i, 2] + states[i, 3] - p[3]
        if seed001:
            bonus_last = WIN_BONUS if margin > 0 else (LOSS_BONUS if margin < 0 else 0.0)
            bonus_other = WIN_BONUS if margin < 0 else (LOSS_BONUS if margin > 0 else 0.0)
            _update(vals, flags, p[0], p[1], k + bonus_last, alpha)
            if p[4] >= 0:
                _update(vals, flags, p[4], p[5], bonus_other, alpha)
        else:
            _update(vals, flags, p[0], p[1], float(k), alpha)
            if p[4] >= 0:
                _update(vals, flags, p[4], p[5], -gamma * _row_max(vals, p[6], full & ~p[6]), alpha)
        p[:] = -1


@njit(cache=True)
def _count_written(flags, width: int) -> int:
    n = 0
    for row in range(flags.shape[0]):
        f = flags[row] & np.uint32((1 << width) - 1)
        while f:
            f &= f - np.uint32(1)
            n += 1
    return n


@njit(cache=True)
def _gather(vals, flags, keys, out) -> None:
    width = vals.shape[1]
    j = 0
    for row in range(flags.shape[0]):
        f = flags[row]
        if (f & np.uint32((1 << width) - 1)) == 0:
            continue
        for a in range(width):
            if (f >> np.uint32(a)) & np.uint32(1):
                keys[j] = row * width + a
                out[j] = vals[row, a]
                j += 1


@njit(cache=True)
def _scatter(keys, entries, vals, flags, source, maps, local) -> None:
    width = vals.shape[1]
    for j in range(keys.shape[0]):
        row, a = keys[j] // width, keys[j] % width
        _touch(row, vals, flags, source, maps, local)
        vals[row, a] = entries[j]
        flags[row] |= np.uint32(1) << np.uint32(a)


# ---------------------------------------------------------------------------------------------- the table
def lazy_zeros(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """Zeros in anonymous memory the OS commits one 4 KiB page at a time.

    Why not ``np.zeros``: numpy asks for transparent huge pages on large arrays, so one touched row commits
    2 MiB, and 10,000 games of 3x3 (180,000 rows) already commit the whole 1.6 GB table.
    """
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = mmap.mmap(-1, max(nbytes, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        buf.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(buf, dtype=dtype, count=int(np.prod(shape))).reshape(shape)


class DenseTable:
    """(2^E, E) float32 values plus per-row flags, lazily filled with the initial values (module docstring)."""

    def __init__(self, num_edges: int, init: InitialValues) -> None:
        self.init = init
        self.vals = lazy_zeros((1 << num_edges, num_edges), np.float32)
        self.flags = lazy_zeros((1 << num_edges,), np.uint32)

    def entries(self) -> tuple[np.ndarray, np.ndarray]:
        """(sorted keys row * E + a, float32 values) of every written entry."""
        n = _count_written(self.flags, self.vals.shape[1])
        keys, out = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.float32)
        _gather(self.vals, self.flags, keys, out)
        return keys, out

    def load_entries(self, keys: np.ndarray, values: np.ndarray) -> None:
        _scatter(np.asarray(keys, dtype=np.int64), np.asarray(values, dtype=np.float32), self.vals, self.flags,
                 *self.init.arrays)


# ---------------------------------------------------------------------------------------------- the loop
class _SelfPlay:
    """Plays self-play games in parallel rows of a batched game and updates the table."""

    def __init__(self, game: DotsAndBoxes, p: DotsTableParams, table: DenseTable, sym: Symmetry,
                 rng: np.random.Generator) -> None:
        self.game, self.p, self.table, self.sym, self.rng = game, p, table, sym, rng
        self.decisions = 0
        self.games_done = 0

    def _kernel_args(self) -> tuple:
        t, s = self.table, self.sym
        return (t.vals, t.flags, *t.init.arrays, s.lut, s.perm, s.inv, self.game.full)

    def _finish(self, states: np.ndarray, finished: np.ndarray, pend: np.ndarray) -> None:
        _finish(states, finished, self.table.vals, self.table.flags, self.game.full, pend, self.p.alpha,
                self.p.gamma, self.p.reward == "seed001")

    def play(self, first_game: int, end_game: int) -> None:
        """Play games number first_game .. end_game-1 to completion, wave by wave (learn/core/slots.py)."""
        for lo, hi in waves(first_game, end_game, self.p.parallel_games):
            self._play_wave(lo, hi)
        self.games_done = end_game

    def _play_wave(self, first_game: int, end_game: int) -> None:
        """Games first_game .. end_game-1 side by side to completion (nothing left in flight)."""
        slots = GameSlots(self.game, first_game, end_game, self.p.parallel_games,
                          np.asarray(self.game.initial_state()))
        batch, active, b = slots.batch, slots.active, slots.rows
        forced = np.full(b, -1, dtype=np.int64)
        pend = np.full((b, 7), -1, dtype=np.int64)
        actions = np.zeros(b, dtype=np.int64)
        args = self._kernel_args()
        while slots.running:
            u = self.rng.random((2, b))
            eps = self.p.exploration.epsilon(first_game + slots.done)
            _decide(batch.states, active, forced, *args, pend, self.p.alpha, self.p.gamma, eps, u[0], u[1],
                    actions)
            self.decisions += int(active.sum())
            finished, _ = batch.step(actions)
            if not finished.any():
                continue
            self._finish(batch.states, finished, pend)
            slots.recycle(finished)

    def play_moves(self, moves: list[int]) -> None:
        """One game with the given moves (it must end), updating the table exactly as training does."""
        batch = self.game.batched(1, auto_reset=False)
        active = np.ones(1, dtype=np.bool_)
        pend = np.full((1, 7), -1, dtype=np.int64)
        actions = np.zeros(1, dtype=np.int64)
        zeros = np.zeros(1)
        finished = np.zeros(1, dtype=np.bool_)
        for move in moves:
            _decide(batch.states, active, np.array([move], dtype=np.int64), *self._kernel_args(), pend,
                    self.p.alpha, self.p.gamma, 0.0, zeros, zeros, actions)
            finished, _ = batch.step(actions)
        if not finished[0]:
            raise BoardRLError(f"play_moves: the moves {moves} do not finish the game")
        self._finish(batch.states, finished, pend)


# ---------------------------------------------------------------------------------------------- transfer source
def resolve_model_dir(spec: str) -> Path:
    """The model directory of a ``transfer_from`` value: ``model:<experiment id>[,seed=K]`` or a path."""
    from boardrl.agents.models import is_model_spec, model_dir

    if is_model_spec(spec):
        return model_dir(spec)
    path = Path(spec)
    if not (path / "agent.json").is_file():
        raise BoardRLError(f"no saved agent in {path} (agent.json is missing)")
    return path


def load_transfer_source(spec: str, game: DotsAndBoxes, reward: str) -> InitialValues:
    """Initial values from a smaller board's dots_table model; one-line ``LearnError`` naming what is wrong."""
    from boardrl.agents.learned import load_agent, read_model_info
    from boardrl.games import make_game

    where = f"dots_table transfer_from {spec!r}"
    try:
        path = resolve_model_dir(spec)
        info = read_model_info(path)  # the content hashes checked before agent.json is parsed
        if info.get("kind") != KIND:
            raise BoardRLError(f"{path} holds a {info.get('kind')!r} model, not a dots_table model")
        small = dots_geometry(info.get("game"))
        if (small.rows, small.cols) == (game.rows, game.cols) or small.rows > game.rows or small.cols > game.cols:
            raise BoardRLError(f"{path} holds a model of {info.get('game')}; transfer needs a smaller board "
                               f"than {game.game_id}")
        trained_with = (info.get("meta") or {}).get("params", {}).get("reward")
        if trained_with != reward:
            raise BoardRLError(f"{path} was trained with reward {trained_with!r}, this run uses {reward!r}")
        agent = load_agent(make_game(info["game"]), None, path)
    except (BoardRLError, OSError, ValueError) as exc:
        raise LearnError(f"{where}: {exc}") from None
    return InitialValues(game.geo, agent.full_table(), info["game"])


def _digest(init: InitialValues) -> str:
    return hashlib.sha256(init.source.tobytes() + str(init.source_game).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------- the learner
class DotsTableLearner(Learner):
    """Seed 001's edge-set Q-table, self-play (module docstring); loop, checkpoints and eval points: the base's."""

    name = "dots_table"
    params_model = DotsTableParams
    unit = "games"
    small_run = ("dots_and_boxes_2x2", {"games": 600, "parallel_games": 64, "symmetry": True})

    def check_game(self, game: Game, params: DotsTableParams) -> None:
        if not isinstance(game, DotsAndBoxes):
            raise LearnError(f"dots_table plays Dots and Boxes (dots_and_boxes_RxC), not {game.game_id}")
        if game.num_edges > MAX_TABLE_EDGES:
            raise LearnError(f"dots_table: {game.game_id} has {game.num_edges} edges; the table holds boards of "
                             f"at most {MAX_TABLE_EDGES} edges (up to 3x3 boxes)")
        self._init_cache = None  # reload: the source model may have been retrained since the last run
        if params.transfer_source is not None:
            self._source_params(game, params)
        else:
            self._initial_values(game, params)

    @staticmethod
    def _source_params(game: DotsAndBoxes, params: DotsTableParams) -> tuple[DotsAndBoxes, "DotsTableParams"]:
        """The source board and its validated params (one-line ``LearnError`` otherwise)."""
        from boardrl.games import make_game

        src = params.transfer_source
        where = "dots_table transfer_source"
        try:
            small = make_game(src.game)
        except BoardRLError as exc:
            raise LearnError(f"{where}: {exc}") from None
        if not isinstance(small, DotsAndBoxes) or small.rows > game.rows or small.cols > game.cols or \
                (small.rows, small.cols) == (game.rows, game.cols):
            raise LearnError(f"{where}: {src.game} is not a smaller Dots and Boxes board than {game.game_id}")
        if "transfer_from" in src.params or "transfer_source" in src.params:
            raise LearnError(f"{where}: the source run takes no transfer of its own")
        try:
            p = DotsTableParams(**{**src.params, "reward": params.reward})
        except ValidationError as exc:
            err = exc.errors()[0]
            raise LearnError(f"{where}.params.{'.'.join(map(str, err['loc']))}: {err['msg']}") from None
        return small, p

    def _train_source(self, game: DotsAndBoxes, params: DotsTableParams, seed: int) -> InitialValues:
        """Train the ``transfer_source`` table (seed: child 2 of the run's seed) and take its values."""
        small, p = self._source_params(game, params)
        source_seed = int(np.random.SeedSequence(seed, spawn_key=(2,)).generate_state(1, np.uint64)[0] >> 1)
        learner = DotsTableLearner()
        learner.setup(small, p, source_seed, None)
        learner.train_segment(0, p.games)
        return InitialValues(game.geo, learner.snapshot().full_table(), small.game_id)

    def _initial_values(self, game: DotsAndBoxes, params: DotsTableParams) -> InitialValues:
        """Zeros, or the transfer source (loaded once per spec: check_game and setup both need it)."""
        if params.transfer_from is None:
            return InitialValues(game.geo)
        key = (params.transfer_from, game.game_id, params.reward)
        cached = getattr(self, "_init_cache", None)
        if cached is None or cached[0] != key:
            self._init_cache = (key, load_transfer_source(params.transfer_from, game, params.reward))
        return self._init_cache[1]

    def setup(self, game: Game, params: DotsTableParams, seed: int, opponent: Agent | None) -> None:
        if opponent is not None:
            raise LearnError("dots_table learns by self-play only; it takes no opponent")
        init = (self._train_source(game, params, seed) if params.transfer_source is not None
                else self._initial_values(game, params))
        self.game, self.params, self.seed = game, params, int(seed)
        self.sym = Symmetry(game.geo, params.symmetry)
        self.trainer = _SelfPlay(game, params, DenseTable(game.num_edges, init), self.sym,
                                 np.random.default_rng(seed))

    def train_segment(self, start: int, end: int) -> int:
        stop = segment_stop(end, self.params.games, self.params.parallel_games)
        self.trainer.play(start, stop)
        self.log_metrics({"epsilon": self.params.exploration.epsilon(stop)}, stop)
        return stop

    def state_dict(self) -> dict:
        keys, values = self.trainer.table.entries()
        return {"keys": keys, "values": values, "rng": rng_state_json(self.trainer.rng),
                "decisions": self.trainer.decisions, "games_done": self.trainer.games_done,
                "init_digest": _digest(self.trainer.table.init)}

    def load_state_dict(self, state: dict) -> None:
        t = self.trainer
        if state["init_digest"] != _digest(t.table.init):
            raise LearnError("dots_table checkpoint: the transfer source changed since it was written; "
                             "remove the checkpoint to start over")
        t.table = DenseTable(self.game.num_edges, t.table.init)
        t.table.load_entries(state["keys"], state["values"])
        t.rng = rng_from_json(state["rng"])
        t.decisions = int(state["decisions"])
        t.games_done = int(state["games_done"])

    def _meta(self, games: int) -> dict:
        return {"learner": self.name, "seed": self.seed, "params": self.params.model_dump(mode="json"),
                "games": games}

    def snapshot(self) -> DotsTableAgent:
        keys, values = self.trainer.table.entries()
        return DotsTableAgent(self.game, keys, values, self.trainer.table.init, self.params.symmetry, self.name,
                              self._meta(self.trainer.games_done))

    def final_agent(self) -> DotsTableAgent:
        agent = self.snapshot()
        agent.meta = {**self._meta(self.params.games), "entries": agent.entries,
                      "decisions": self.trainer.decisions}
        agent.stats = dict(agent.meta)
        return agent


LEARNER = DotsTableLearner
