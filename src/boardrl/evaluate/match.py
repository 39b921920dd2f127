"""The match runner: N games between two agents, reported per seat with Wilson intervals.

Why it looks like this:

* Every number in the project comes from here, so results must be reproducible from one integer seed and
  must not depend on how the work was scheduled.  The games are cut into fixed chunks (their size depends
  only on the path and ``batch_size``, never on ``processes``); chunk k draws its randomness from child k of
  ``numpy.random.SeedSequence(seed)``, and each agent gets its own stream inside a chunk.  Running on 1 or 8
  processes therefore gives the very same games.
* Both agents vectorised (``agent.batched``): the games of a chunk are rows of one ``BatchedGame`` without
  auto-reset; each step the rows where A is to move go to ``A.act_batch`` and the rest to ``B.act_batch``.
  The same lock-step path serves a pairing where one agent ``wants_batches`` (an AlphaZero search: one call on
  128 rows costs about what a call on one row does) and neither keeps state between games (no ``reset``): the
  other agent's ``act_batch`` then loops over its rows, and chunks of ``LOCKSTEP_CHUNK`` games spread over the
  processes.  Otherwise the games are played one by one with the scalar API (``agent.reset()`` before each
  game), spread over worker processes (spawn context, so it is safe with torch and numba threads).
* A worker pool costs seconds to start (each spawned worker imports numba and often torch, and rebuilds its
  referee's tables), more than many matches take: 1,000 tic-tac-toe games against ``perfect`` take 1.2 s in
  this process and 4.3 s on two workers.  So, except in lock-step (a search: every chunk is worth a worker),
  the first chunk is played here, and the pool starts only when the remaining chunks, timed by that one, would
  take longer than ``POOL_WORTH_S``.  Chunks carry their own seeds, so where a chunk runs never changes a game:
  with ``$BOARDRL_MATCH_BACKEND=ray`` the pooled chunks run as Ray tasks instead, locally or on a cluster
  (``evaluate/match_ray.py``).
* Seats: with ``"alternate"`` game 2k has agent A as player 0 and game 2k+1 as player 1, both from the same
  start position, so a start list is played from both sides.  "As first" always means A controls player 0,
  even when a start position has player 1 to move.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from tqdm import tqdm

from boardrl.agents.base import Agent
from boardrl.evaluate.match_payload import dumps_match_payload, load_match_payload
from boardrl.evaluate.match_ray import match_backend, ray_chunks
from boardrl.evaluate.stats import SeatStats
from boardrl.errors import BoardRLError
from boardrl.games.base import Game, IllegalMoveError

SEAT_ORDERS = ("alternate", "a_first", "b_first")
START_ORDERS = ("cycle", "random")
#: Games per task on the scalar path: small enough to balance over processes, large enough to amortise IPC.
SCALAR_CHUNK = 64
#: Seconds of remaining chunk work (estimated from the first chunk) above which a worker pool pays for itself.
POOL_WORTH_S = 6.0
#: Games per task when only one agent is vectorised: the batch its searches see, two tasks for 200 games.
LOCKSTEP_CHUNK = 128


@dataclass(frozen=True, eq=False)
class MatchResult:
    """Outcome of a match from agent A's side, with the per-game record kept for later analysis."""

    agent_a: str
    agent_b: str
    seed: int
    seats: str
    a_player: np.ndarray = field(repr=False)  # (games,) int8: the player (0 = first) agent A controlled
    outcomes: np.ndarray = field(repr=False)  # (games,) int8: +1 / 0 / -1 for agent A
    lengths: np.ndarray = field(repr=False)  # (games,) int32: actions played in the game
    start_index: np.ndarray = field(repr=False)  # (games,) int64: index into ``starts``, -1 = initial state

    @property
    def games(self) -> int:
        return int(self.outcomes.shape[0])

    @property
    def as_first(self) -> SeatStats:
        return SeatStats.from_outcomes(self.outcomes[self.a_player == 0])

    @property
    def as_second(self) -> SeatStats:
        return SeatStats.from_outcomes(self.outcomes[self.a_player == 1])

    @property
    def combined(self) -> SeatStats:
        return SeatStats.from_outcomes(self.outcomes)

    @property
    def mean_length(self) -> float:
        return float(self.lengths.mean()) if self.games else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "as_first": self.as_first.to_dict(),
            "as_second": self.as_second.to_dict(),
            "combined": self.combined.to_dict(),
            "mean_length": self.mean_length,
            "games": self.games,
            "agent_a": self.agent_a,
            "agent_b": self.agent_b,
            "seed": self.seed,
            "seats": self.seats,
        }

    def __str__(self) -> str:
        return (
            f"{self.agent_a} vs {self.agent_b}: {self.games} games, mean length {self.mean_length:.1f}\n"
            f"  as first : {self.as_first}\n  as second: {self.as_second}\n  combined : {self.combined}"
        )


# ---------------------------------------------------------------------------------------------- scheduling
def _schedule(
    games: int, seats: str, n_starts: int, start_order: str, seq: np.random.SeedSequence
) -> tuple[np.ndarray, np.ndarray]:
    """Per game: the player agent A controls and the start index (-1 = initial state)."""
    idx = np.arange(games)
    if seats == "alternate":
        a_player, slot = (idx % 2).astype(np.int8), idx // 2  # both seats of a pair share one start
    else:
        a_player, slot = np.full(games, 0 if seats == "a_first" else 1, dtype=np.int8), idx
    if n_starts == 0:
        return a_player, np.full(games, -1, dtype=np.int64)
    if start_order == "cycle":
        return a_player, (slot % n_starts).astype(np.int64)
    draws = np.random.default_rng(seq).integers(n_starts, size=int(slot[-1]) + 1)
    return a_player, draws[slot].astype(np.int64)


def _validate(game: Game, agent_a: Agent, agent_b: Agent, games: int, seats: str, start_order: str,
              processes: int, batch_size: int) -> None:
    if not isinstance(games, (int, np.integer)) or isinstance(games, bool) or games < 1:
        raise BoardRLError(f"games must be a positive integer, got {games!r}")
    if seats not in SEAT_ORDERS:
        raise BoardRLError(f"unknown seats {seats!r}; choose one of {', '.join(SEAT_ORDERS)}")
    if start_order not in START_ORDERS:
        raise BoardRLError(f"unknown start_order {start_order!r}; choose one of {', '.join(START_ORDERS)}")
    if processes < 1:
        raise BoardRLError(f"processes must be >= 1, got {processes}")
    if batch_size < 1:
        raise BoardRLError(f"batch_size must be >= 1, got {batch_size}")
    for label, agent in (("agent_a", agent_a), ("agent_b", agent_b)):
        if agent.game.game_id != game.game_id:
            raise BoardRLError(f"{label} {agent.name!r} plays {agent.game.game_id}, but the match is {game.game_id}")


def _start_rows(game: Game, starts: Sequence[Any] | None) -> np.ndarray:
    """Start states as an (S, width) int64 array, after checking each is a live state of this game."""
    width = len(game.state_type._fields)
    if starts is None:
        return np.empty((0, width), dtype=np.int64)
    if len(starts) == 0:
        raise BoardRLError("starts is empty; pass None to start every game from the initial state")
    for i, s in enumerate(starts):
        game.check_state(s)
        if game.is_over(s):
            raise BoardRLError(f"start position {i} is already over; starts must be unfinished positions")
    return np.array([tuple(s) for s in starts], dtype=np.int64).reshape(len(starts), width)


# ---------------------------------------------------------------------------------------------- playing
@dataclass(frozen=True)
class _Chunk:
    """One unit of work: games ``lo..hi`` of the match, with their own seed sequence."""

    lo: int
    hi: int
    a_player: np.ndarray
    start_index: np.ndarray
    seq: np.random.SeedSequence
    batched: bool


def _illegal(agent: Agent, exc: IllegalMoveError) -> IllegalMoveError:
    return IllegalMoveError(f"agent {agent.name!r} played an illegal move: {exc}")


def _play_scalar(game: Game, agents: tuple[Agent, Agent], chunk: _Chunk, start_rows: np.ndarray):
    """Games one by one; returns (outcomes, lengths) for the chunk."""
    rng_a, rng_b = (np.random.default_rng(s) for s in chunk.seq.spawn(2))
    n = chunk.hi - chunk.lo
    outcomes = np.zeros(n, dtype=np.int8)
    lengths = np.zeros(n, dtype=np.int32)
    initial = game.initial_state()
    for g in range(n):
        a_pl = int(chunk.a_player[g])
        si = int(chunk.start_index[g])
        state = initial if si < 0 else game.state_type(*(int(v) for v in start_rows[si]))
        for agent in agents:
            agent.reset()
        steps = 0
        while not game.is_over(state):
            a_turn = game.to_move(state) == a_pl
            agent, rng = (agents[0], rng_a) if a_turn else (agents[1], rng_b)
            move = agent.act(state, rng)
            try:
                state = game.play(state, move)
            except IllegalMoveError as exc:
                raise _illegal(agent, exc) from None
            steps += 1
        r = game.returns(state)[a_pl]
        outcomes[g] = (r > 0) - (r < 0)
        lengths[g] = steps
    return outcomes, lengths


def _play_batched(game: Game, agents: tuple[Agent, Agent], chunk: _Chunk, start_rows: np.ndarray):
    """All games of the chunk as rows of one BatchedGame; returns (outcomes, lengths)."""
    rng_a, rng_b = (np.random.default_rng(s) for s in chunk.seq.spawn(2))
    n = chunk.hi - chunk.lo
    batch = game.batched(n, auto_reset=False)
    from_start = chunk.start_index >= 0
    if from_start.any():
        batch.states[from_start] = start_rows[chunk.start_index[from_start]]
    for agent in agents:
        agent.reset()
    a_player = chunk.a_player.astype(np.int8)
    outcomes = np.zeros(n, dtype=np.int8)
    lengths = np.zeros(n, dtype=np.int32)
    live = np.ones(n, dtype=bool)  # starts were checked to be unfinished
    while live.any():
        a_turn = game.to_move_batch(batch.states) == a_player
        actions = np.full(n, -1, dtype=np.int64)
        for agent, rows, rng in ((agents[0], live & a_turn, rng_a), (agents[1], live & ~a_turn, rng_b)):
            if rows.any():
                actions[rows] = agent.act_batch(batch.states[rows], rng)
        try:
            finished, rets = batch.step(actions)
        except IllegalMoveError as exc:
            raise IllegalMoveError(f"an agent ({agents[0].name!r} or {agents[1].name!r}) played an illegal move: "
                                   f"{exc}") from None
        lengths[live] += 1
        r = rets[finished, a_player[finished]]
        outcomes[finished] = (r > 0).astype(np.int8) - (r < 0).astype(np.int8)
        live &= ~finished
    return outcomes, lengths


def _run_chunk(game: Game, agents: tuple[Agent, Agent], chunk: _Chunk, start_rows: np.ndarray):
    play = _play_batched if chunk.batched else _play_scalar
    outcomes, lengths = play(game, agents, chunk, start_rows)
    return chunk.lo, outcomes, lengths


# Worker-process globals, set once per worker by the pool initializer (agents are loaded once, not per task).
_WORKER: dict[str, Any] = {}


def _init_worker(payload: bytes) -> None:
    """Load the match's payload (``evaluate/match_payload.py``: kernels by name, the parent's torch threads)."""
    _WORKER["game"], _WORKER["agents"], _WORKER["start_rows"] = load_match_payload(payload)


def _worker_chunk(chunk: _Chunk):
    return _run_chunk(_WORKER["game"], _WORKER["agents"], chunk, _WORKER["start_rows"])


def _make_chunks(games: int, size: int, a_player: np.ndarray, start_index: np.ndarray,
                 root: np.random.SeedSequence, batched: bool) -> list[_Chunk]:
    bounds = list(range(0, games, size))
    seqs = root.spawn(len(bounds))
    return [
        _Chunk(lo, min(lo + size, games), a_player[lo:lo + size], start_index[lo:lo + size], seq, batched)
        for lo, seq in zip(bounds, seqs)
    ]


def play_match(
    game: Game,
    agent_a: Agent,
    agent_b: Agent,
    games: int,
    *,
    seats: str = "alternate",
    starts: Sequence[Any] | None = None,
    start_order: str = "cycle",
    seed: int = 0,
    processes: int = 1,
    batch_size: int = 4096,
    progress: bool = False,
) -> MatchResult:
    """Play ``games`` games of ``agent_a`` against ``agent_b`` and report W/D/L from A's side.

    ``seats``: "alternate" (A first in even games), "a_first" or "b_first".  ``starts``: unfinished states to
    start from, taken in turn ("cycle") or drawn at random ("random"); with alternating seats each start is
    played once from each side.  Same arguments and seed give the same result whatever ``processes`` is.
    """
    _validate(game, agent_a, agent_b, games, seats, start_order, processes, batch_size)
    backend = match_backend()
    start_rows = _start_rows(game, starts)
    schedule_seq, play_seq = np.random.SeedSequence(seed).spawn(2)
    a_player, start_index = _schedule(int(games), seats, start_rows.shape[0], start_order, schedule_seq)
    both = bool(agent_a.batched and agent_b.batched)
    lockstep = not both and _lockstep(agent_a, agent_b)
    size = batch_size if both else min(LOCKSTEP_CHUNK if lockstep else SCALAR_CHUNK, batch_size)
    chunks = _make_chunks(int(games), size, a_player, start_index, play_seq, both or lockstep)
    outcomes = np.zeros(games, dtype=np.int8)
    lengths = np.zeros(games, dtype=np.int32)
    agents = (agent_a, agent_b)
    with tqdm(total=int(games), desc=f"{agent_a.name} vs {agent_b.name}", unit="game", disable=not progress) as bar:
        rest = chunks
        if not (lockstep and processes > 1):  # a search's every chunk is worth a worker; others are timed first
            started = time.perf_counter()
            _collect([_run_chunk(game, agents, chunks[0], start_rows)], outcomes, lengths, bar)
            rest = chunks[1:]
            if (time.perf_counter() - started) * len(rest) < POOL_WORTH_S:
                processes = 1
        workers = min(processes, len(rest))
        if workers <= 1:
            _collect((_run_chunk(game, agents, c, start_rows) for c in rest), outcomes, lengths, bar)
        else:
            threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else None
            if backend == "ray":
                _collect(ray_chunks(game, agents, rest, start_rows, workers, threads, _run_chunk), outcomes, lengths,
                         bar)
            else:
                with mp.get_context("spawn").Pool(workers, initializer=_init_worker,
                                                  initargs=(dumps_match_payload(game, agents, start_rows, threads),)) as pool:
                    _collect(pool.imap_unordered(_worker_chunk, rest), outcomes, lengths, bar)
    return MatchResult(agent_a.name, agent_b.name, int(seed), seats, a_player, outcomes, lengths, start_index)


def _lockstep(agent_a: Agent, agent_b: Agent) -> bool:
    """Play a scalar agent in lock-step beside one that wants batches, when neither remembers a game."""
    stateless = all(type(agent).reset is Agent.reset for agent in (agent_a, agent_b))
    return stateless and any(agent.batched and agent.wants_batches for agent in (agent_a, agent_b))


def _collect(results, outcomes: np.ndarray, lengths: np.ndarray, bar: tqdm) -> None:
    """Place each chunk's results at its own offset (arrival order does not matter)."""
    for lo, out, ln in results:
        outcomes[lo:lo + out.shape[0]] = out
        lengths[lo:lo + ln.shape[0]] = ln
        bar.update(out.shape[0])
