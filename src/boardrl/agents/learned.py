"""Agents that play greedily from something a learner produced, and how they are saved and loaded.

``QTable`` is the action-value table of the tabular learners: a numpy open-addressing hash table keyed by the
*whole* int64 state row (the NamedTuple of ints every game uses, see games/base.py).  Keying by the row instead
of a hashed ``state_key`` keeps the table exact (no collisions to reason about) and lets numba kernels look up
every row of a batched game without a Python call per state.

Entries never written by the learner are not "missing": their value is the initial N(0, init_std) draw, made a
pure function of (init_seed, state, action) by a counter-based hash.  So the table means the same thing
whatever order states were first visited in, a greedy agent can evaluate positions training never reached,
and a resumed training run fills new entries with exactly the values an uninterrupted run would have.

``GreedyQAgent`` plays argmax over the legal actions' values, ties to the first (seed 000's GreedyQ).
``load_agent`` restores any saved learned agent from its model directory (``agent.json`` names its kind).

Integrity: every agent's ``save`` ends with ``write_agent_info``, which writes ``agent.json`` and then seals the
directory (``boardrl.integrity``: ``sha256.json`` records the size and sha256 of every file).  ``load_agent`` --
the only way a model is read: the ``model:`` specs, the evaluate stage, the web app and MLflow's pyfunc all go
through it -- checks those records before it parses a byte, then checks ``agent.json`` is an object.  A model
saved before hashes existed, or damaged since, is refused with one line naming the file; the kinds' own ``load``
methods (``LOADERS``) assume a verified directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import numpy as np
from numba import njit

from boardrl.agents.base import Agent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.atomic_io import atomic_save_npz, atomic_write_json
from boardrl.integrity import IntegrityError, seal_directory, verify_directory

MODEL_FORMAT = 1
AGENT_FILE = "agent.json"
TABLE_FILE = "q_table.npz"
#: agent.json holds settings and a little metadata (a few kB); a larger one is not parsed.
MAX_AGENT_FILE_BYTES = 1 << 20
RETRAIN = "rerun training (`make repro` for the pipeline's models)"

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SLOT_SALT = np.uint64(0x243F6A8885A308D3)  # different salts: slot position and init noise are independent
_INIT_SALT = np.uint64(0x13198A2E03707344)
_TWO_PI = 2.0 * np.pi


class ModelError(BoardRLError):
    """A model directory that is missing, of another game or agent, or not readable."""


def model_info(agent: Agent, **fields: Any) -> dict[str, Any]:
    """The ``agent.json`` of a saved learned agent: what ``load_agent`` checks, the agent's own fields, its meta."""
    return {"format": MODEL_FORMAT, "kind": agent.kind, "agent": agent.name, "game": agent.game.game_id,
            "state_fields": list(agent.game.state_type._fields), "num_actions": agent.game.num_actions,
            **fields, "meta": getattr(agent, "meta", {})}


def write_agent_info(model_dir: Path, info: dict[str, Any]) -> None:
    """Write ``agent.json``, then seal the directory with content hashes: the last step of every agent's save.

    agent.json comes after the data files (a complete json means a complete model) and the hash manifest after
    everything (a model without one is never loaded).
    """
    atomic_write_json(Path(model_dir) / AGENT_FILE, info)
    seal_directory(Path(model_dir))


def read_model_info(model_dir: Path) -> dict[str, Any]:
    """``agent.json`` of a model directory whose every file matches its recorded hash; ``ModelError`` otherwise.

    The hashes are checked before anything is parsed, so a damaged file is named as damaged rather than
    failing (or worse, succeeding) somewhere in a loader.
    """
    model_dir = Path(model_dir)
    info_path = model_dir / AGENT_FILE
    if not info_path.is_file():
        raise ModelError(f"no saved agent in {model_dir}: {AGENT_FILE} is missing (train it first)")
    try:
        verify_directory(model_dir)
    except IntegrityError as exc:
        raise ModelError(f"{exc}; refusing to load the model: {RETRAIN}") from None
    if info_path.stat().st_size > MAX_AGENT_FILE_BYTES:  # verified above, so readable
        raise ModelError(f"{info_path}: larger than {MAX_AGENT_FILE_BYTES} bytes, not a saved agent's settings")
    try:
        info = json.loads(info_path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        raise ModelError(f"cannot read {info_path}: {exc}") from None
    if not isinstance(info, dict):
        raise ModelError(f"{info_path}: holds a JSON {type(info).__name__}, not an object of agent settings")
    return info


def read_arrays(path: Path, names: tuple[str, ...], what: str, optional: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Arrays ``names`` (and ``optional`` ones when present) of an ``.npz`` model file; one-line ``ModelError``."""
    try:
        with np.load(path, allow_pickle=False) as data:
            out = {name: data[name] for name in names}
            out.update({name: data[name] for name in optional if name in data})
    except Exception as exc:  # a damaged zip raises many types: BadZipFile, EOFError, zlib.error, KeyError, ...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ModelError(f"cannot read {what} {path}: {first}") from None
    return out


# ---------------------------------------------------------------------------------------------- numba kernels
@njit(cache=True)
def _mix(z: np.uint64) -> np.uint64:
    """splitmix64 finaliser: a bijective scramble so nearby states land far apart."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def row_hash(row: np.ndarray, salt: np.uint64) -> np.uint64:
    h = salt
    for v in row:
        h = _mix(h ^ (np.uint64(v) + _GOLDEN))
    return h


@njit(cache=True)
def init_value(state_hash: np.uint64, action: int, init_seed: np.uint64, init_std: float) -> float:
    """N(0, init_std) draw determined by (init_seed, state, action): Box-Muller on two hashed uniforms."""
    if init_std == 0.0:
        return 0.0
    u = _mix(state_hash ^ _mix(init_seed + np.uint64(action + 1) * _GOLDEN))
    v = _mix(u ^ _GOLDEN)
    u1 = (np.float64(u >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)
    u2 = np.float64(v >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    return init_std * np.sqrt(-2.0 * np.log(u1)) * np.cos(_TWO_PI * u2)


@njit(cache=True)
def _same(keys: np.ndarray, slot: int, row: np.ndarray) -> bool:
    for j in range(row.shape[0]):
        if keys[slot, j] != row[j]:
            return False
    return True


@njit(cache=True)
def table_find(keys: np.ndarray, used: np.ndarray, row: np.ndarray) -> int:
    """Slot holding ``row``, or -1 (linear probing; the table is never full)."""
    mask = keys.shape[0] - 1
    slot = np.int64(row_hash(row, _SLOT_SALT) & np.uint64(mask))
    while used[slot]:
        if _same(keys, slot, row):
            return slot
        slot = (slot + 1) & mask
    return -1


@njit(cache=True)
def table_find_or_insert(keys, used, vals, row, init_seed, init_std) -> tuple[int, bool]:
    """Slot of ``row``, inserting it with its initial values when absent; returns (slot, inserted)."""
    mask = keys.shape[0] - 1
    slot = np.int64(row_hash(row, _SLOT_SALT) & np.uint64(mask))
    while used[slot]:
        if _same(keys, slot, row):
            return slot, False
        slot = (slot + 1) & mask
    used[slot] = True
    keys[slot, :] = row
    h = row_hash(row, _INIT_SALT)
    for a in range(vals.shape[1]):
        vals[slot, a] = init_value(h, a, init_seed, init_std)
    return slot, True


@njit(cache=True)
def _rehash(keys, used, vals, new_keys, new_used, new_vals, new_pos) -> None:
    """Move every entry into the larger arrays; ``new_pos[old_slot]`` records where it went."""
    mask = new_keys.shape[0] - 1
    for s in range(keys.shape[0]):
        if not used[s]:
            continue
        slot = np.int64(row_hash(keys[s], _SLOT_SALT) & np.uint64(mask))
        while new_used[slot]:
            slot = (slot + 1) & mask
        new_used[slot] = True
        new_keys[slot, :] = keys[s]
        new_vals[slot, :] = vals[s]
        new_pos[s] = slot


@njit(cache=True)
def q_values_rows(keys, used, vals, rows, init_seed, init_std, out) -> None:
    """Action values of each row (table entry, or the initial draw for a state never stored)."""
    for i in range(rows.shape[0]):
        slot = table_find(keys, used, rows[i])
        if slot >= 0:
            out[i, :] = vals[slot]
        else:
            h = row_hash(rows[i], _INIT_SALT)
            for a in range(out.shape[1]):
                out[i, a] = init_value(h, a, init_seed, init_std)


@njit(cache=True)
def greedy_first(values: np.ndarray, legal: np.ndarray) -> int:
    """Index of the largest value among legal entries, ties to the first; -1 when nothing is legal."""
    best = -1
    best_v = 0.0
    for a in range(values.shape[0]):
        if legal[a] and (best < 0 or values[a] > best_v):
            best = a
            best_v = values[a]
    return best


@njit(cache=True)
def greedy_rows(values: np.ndarray, legal: np.ndarray, out: np.ndarray) -> None:
    for i in range(values.shape[0]):
        out[i] = greedy_first(values[i], legal[i])


# ---------------------------------------------------------------------------------------------- the table
class QTable:
    """Action values Q(s, a) for every state row of one game, stored in numpy arrays numba can update."""

    def __init__(self, width: int, num_actions: int, init_seed: int, init_std: float, capacity: int = 1024) -> None:
        cap = 1 << max(4, int(capacity - 1).bit_length())
        self.width = width
        self.num_actions = num_actions
        self.init_seed = np.uint64(init_seed)
        self.init_std = float(init_std)
        self.keys = np.zeros((cap, width), dtype=np.int64)
        self.used = np.zeros(cap, dtype=np.bool_)
        self.vals = np.zeros((cap, num_actions), dtype=np.float64)
        self.count = 0

    @property
    def capacity(self) -> int:
        return self.keys.shape[0]

    def reserve(self, extra: int) -> np.ndarray | None:
        """Grow so ``extra`` more inserts keep the load <= 1/2; returns old->new slot map when it moved entries.

        Callers that hold slot numbers across the growth (pending transitions) remap them with the result.
        """
        need = 2 * (self.count + extra)
        if need <= self.capacity:
            return None
        cap = self.capacity
        while cap < need:
            cap *= 2
        keys = np.zeros((cap, self.width), dtype=np.int64)
        used = np.zeros(cap, dtype=np.bool_)
        vals = np.zeros((cap, self.num_actions), dtype=np.float64)
        new_pos = np.full(self.capacity, -1, dtype=np.int64)
        _rehash(self.keys, self.used, self.vals, keys, used, vals, new_pos)
        self.keys, self.used, self.vals = keys, used, vals
        return new_pos

    def q_values(self, rows: np.ndarray) -> np.ndarray:
        """(N, num_actions) values for an (N, width) int64 array of state rows."""
        rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1, self.width)
        out = np.empty((rows.shape[0], self.num_actions), dtype=np.float64)
        q_values_rows(self.keys, self.used, self.vals, rows, self.init_seed, self.init_std, out)
        return out

    def set_row(self, row: Any, values: np.ndarray) -> None:
        """Write all action values of one state (for tests and hand-built tables)."""
        self.reserve(1)
        r = np.asarray(row, dtype=np.int64)
        slot, inserted = table_find_or_insert(self.keys, self.used, self.vals, r, self.init_seed, self.init_std)
        self.count += int(inserted)
        self.vals[slot] = np.asarray(values, dtype=np.float64)

    def compact(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, values) of the stored states, in slot order."""
        idx = np.flatnonzero(self.used)
        return self.keys[idx].copy(), self.vals[idx].copy()

    def copy(self) -> "QTable":
        t = QTable.__new__(QTable)
        t.__dict__.update(self.__dict__)
        t.keys, t.used, t.vals = self.keys.copy(), self.used.copy(), self.vals.copy()
        return t

    @classmethod
    def from_arrays(cls, keys: np.ndarray, vals: np.ndarray, init_seed: int, init_std: float) -> "QTable":
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        vals = np.ascontiguousarray(vals, dtype=np.float64)
        if keys.ndim != 2 or vals.ndim != 2 or keys.shape[0] != vals.shape[0]:
            raise ModelError(f"Q table arrays have inconsistent shapes {keys.shape} and {vals.shape}")
        t = cls(keys.shape[1], vals.shape[1], init_seed, init_std, capacity=2 * keys.shape[0] + 2)
        for i in range(keys.shape[0]):
            slot, inserted = table_find_or_insert(t.keys, t.used, t.vals, keys[i], t.init_seed, t.init_std)
            if not inserted:
                raise ModelError(f"Q table holds state {keys[i].tolist()} twice")
            t.vals[slot] = vals[i]
        t.count = keys.shape[0]
        return t

    def save_npz(self, path: Path) -> None:
        keys, vals = self.compact()
        atomic_save_npz(path, keys=keys, values=vals)

    def __len__(self) -> int:
        return self.count


# ---------------------------------------------------------------------------------------------- the agent
class GreedyQAgent(Agent):
    """argmax over legal actions of Q(s, a) from a ``QTable``, ties to the first action (seed 000's GreedyQ).

    The table stores values from the view of the player to move (negamax convention), so the same greedy rule
    serves both seats.
    """

    batched = True
    kind = "q_table"

    def __init__(self, game: Game, table: QTable, name: str = "tabular_q", meta: dict | None = None) -> None:
        super().__init__(game, name)
        if table.num_actions != game.num_actions or table.width != len(game.state_type._fields):
            raise ModelError(
                f"Q table of shape (width {table.width}, actions {table.num_actions}) does not fit {game.game_id}"
            )
        self.table = table
        self.meta = dict(meta or {})  # saved with the model: how it was trained (deterministic content only)
        self.stats: dict[str, Any] = {}  # not saved: facts of this process's training run, e.g. seconds

    def q_values(self, state: Any) -> np.ndarray:
        """Values of all actions in ``state`` (illegal ones included, meaningless)."""
        self.game.check_state(state)
        return self.table.q_values(np.asarray(state, dtype=np.int64))[0]

    def act(self, state: Any, rng: np.random.Generator) -> int:
        a = greedy_first(self.q_values(state), self.game.legal_moves(state))
        if a < 0:
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        return int(a)

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        states = np.ascontiguousarray(states, dtype=np.int64)
        out = np.empty(states.shape[0], dtype=np.int64)
        greedy_rows(self.table.q_values(states), self.game.legal_mask_batch(states), out)
        return out

    def save(self, model_dir: Path) -> None:
        """Write ``q_table.npz`` and ``agent.json`` (last, so a complete json means a complete model)."""
        model_dir = Path(model_dir)
        model_dir.mkdir(parents=True, exist_ok=True)
        self.table.save_npz(model_dir / TABLE_FILE)
        write_agent_info(model_dir, model_info(
            self, states=len(self.table), init_seed=int(self.table.init_seed), init_std=self.table.init_std))

    @classmethod
    def load(cls, game: Game, info: dict, model_dir: Path) -> "GreedyQAgent":
        arrays = read_arrays(Path(model_dir) / TABLE_FILE, ("keys", "values"), "Q table")
        table = QTable.from_arrays(arrays["keys"], arrays["values"], int(info["init_seed"]), float(info["init_std"]))
        return cls(game, table, name=info["agent"], meta=info.get("meta"))


def _lazy(module: str, cls: str) -> Callable[[Game, dict, Path], Agent]:
    """``module.cls.load``, imported on first use (torch and each agent module load only when a model needs them)."""
    def load(game: Game, info: dict, model_dir: Path) -> Agent:
        import importlib

        return getattr(importlib.import_module(module), cls).load(game, info, model_dir)
    return load


#: How each saved ``kind`` is loaded; a learner with an agent of its own registers it here (modules of agents/ only:
#: agents never import learn, tests/test_layers.py counts these strings as imports).
LOADERS: dict[str, Callable[[Game, dict, Path], Agent]] = {
    "q_table": GreedyQAgent.load,
    "network": _lazy("boardrl.agents.network", "NetworkAgent"),
    "qt_table": _lazy("boardrl.agents.qt", "QTAgent"),
    "seed004_q": _lazy("boardrl.agents.seed004_q", "Seed004QAgent"),
    "dots_table": _lazy("boardrl.agents.dots_table", "DotsTableAgent"),
    "afterstate_network": _lazy("boardrl.agents.afterstate", "AfterstateAgent"),
    "seed000_afterstate": _lazy("boardrl.agents.seed000_afterstate", "Seed000Agent"),
    "alphazero": _lazy("boardrl.agents.alphazero", "AlphaZeroAgent"),
}


def load_agent(game: Game, agent_name: str | None, model_dir: Path) -> Agent:
    """The learned agent saved in ``model_dir`` by ``agent.save``; ``ModelError`` naming what does not match.

    ``agent_name`` (the learner that saved it) is checked when given; ``None`` accepts any learner's model.
    """
    model_dir = Path(model_dir)
    info_path = model_dir / AGENT_FILE
    info = read_model_info(model_dir)
    if info.get("game") != game.game_id:
        raise ModelError(f"{model_dir} holds an agent for {info.get('game')!r}, not for {game.game_id!r}")
    if agent_name is not None and info.get("agent") != agent_name:
        raise ModelError(f"{model_dir} holds agent {info.get('agent')!r}, not {agent_name!r}")
    if info.get("state_fields") != list(game.state_type._fields):
        raise ModelError(f"{model_dir} was saved for state fields {info.get('state_fields')}, "
                         f"but {game.game_id} states are {list(game.state_type._fields)}")
    kind = info.get("kind")
    loader = LOADERS.get(kind) if isinstance(kind, str) else None
    if loader is None:
        raise ModelError(f"{info_path}: unknown agent kind {kind!r}; known kinds: {', '.join(LOADERS)}")
    try:
        return loader(game, info, model_dir)
    except BoardRLError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:  # a field missing or mistyped
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ModelError(f"{info_path}: bad settings for a {kind} agent: {type(exc).__name__} {first}") from None
