"""Referees and agents off the server's process: child processes ("lanes"), newest request first.

Why processes, not threads: the solvers and many agents run numba kernels that hold the GIL for as long as one
call lasts, from microseconds (tic-tac-toe) to minutes (an early Connect 4 position, unless an opening book
answers it).  In a thread of the server such a call would freeze every request, even the page's own files.
So the work runs in child processes, each a ``Lane``: one for the referee's values of the positions on the
boards, one for reviewing the moves already played (so that a slow early position of the review never delays
the position on the board), and one for the opponents' moves.  A request hands its positions to the
``RefereeService``, waits a moment (on the event loop, holding no thread; at most ``MAX_WAITERS`` at once, more
are answered 503), and answers either the values or "computing"; the page asks again.

The service keeps every answer (positions of one game share most of their work, and a review asks for every
earlier position again: those the board's lane already answered cost nothing) and takes the most recent
request first.  A position nobody has asked about for a few seconds is abandoned (dropped from its queue, or its
lane restarted), so a player who moves on is not kept waiting and no core burns for a page that is closed.  Each lane builds its referees and agents once and
keeps them (a referee's tables, a trained model).  A game without a referee is recorded with the referee's own
reason (``unavailable``) instead of being computed.  Lanes are daemon processes started with ``spawn``
(safe beside the server's threads); they end with the server, and one that dies is started again on the next
request.

Start-up and restarts: ``start()`` (called when the server starts) starts the referee lanes and warms the referee
of the games in ``WARM`` (its tables, numba's compiled kernels), so the first request does not pay seconds of
process start and imports.  Answers are also kept on disk (``cache.DiskCache``, when one is given): a position
solved before a restart is read back, not computed again.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import threading
import time
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any, Callable, Iterable

from boardrl.errors import BoardRLError
from boardrl.web.analysis import MoveValues
from boardrl.web.cache import DiskCache

#: Answers kept (a few hundred bytes each).
KEEP = 100_000
#: A position nobody has asked about for this long is dropped from the queue, or its work stopped (the lane is
#: restarted): the page asks about what it shows about once a second.
ABANDON_S = 5.0
#: Seconds a lane's new process may take to start (import its modules) before it is given up.
START_S = 120.0
#: Requests that may wait for the referee at once (each waits without a thread, see ``RefereeService.wait``);
#: one more is answered 503 at once.  A page asks about one position at a time, so this is many tabs' worth.
MAX_WAITERS = 100
log = logging.getLogger("boardrl.web")
#: Games whose referee a lane builds and runs once when the server starts (Connect 4 is the page's default game),
#: each with a position that the search answers in milliseconds but that loads every kernel a request needs.
WARM = {"connect4": "53211232236375177626565537"}


def one_line(exc: BaseException | str) -> str:
    text = " ".join(str(exc).split())
    return text or (type(exc).__name__ if isinstance(exc, BaseException) else "error")


class NoReferee(BoardRLError):
    """The game has no referee (Conniption, Dots and Boxes larger than 3x3): the referee's own reason."""


class LaneError(RuntimeError):
    """The work failed in the child for a reason that is not bad input (a bug, or the process died)."""


class Busy(Exception):
    """The server will not take this request now (too many waiting, or the work ran past its time): a 503 with
    ``Retry-After``, answered at once instead of holding a connection and a thread."""


# ---------------------------------------------------------------------------------------------- in the child
_REFEREES: dict[str, Any] = {}
_AGENTS: OrderedDict[tuple[str, str], Any] = OrderedDict()
KEEP_AGENTS = 16


def _move_values(game_id: str, state: Any) -> MoveValues:
    from boardrl.solvers.registry import make_referee
    from boardrl.web.analysis import move_values
    from boardrl.web.positions import game_for

    game = game_for(game_id)
    if game_id not in _REFEREES:
        try:
            _REFEREES[game_id] = make_referee(game)
        except BoardRLError as exc:
            _REFEREES[game_id] = NoReferee(one_line(exc))
    referee = _REFEREES[game_id]
    if isinstance(referee, NoReferee):
        raise referee
    return move_values(referee, game, state)


def _agent_move(game_id: str, spec: str, state: Any, seed: int, ply: int) -> int:
    """The move of agent ``spec``: reset, then a generator seeded with ``(seed, ply)`` (see ``players.py``)."""
    import numpy as np

    from boardrl.tracking.registry import make_named_agent
    from boardrl.web.positions import game_for

    game = game_for(game_id)
    key = (game_id, spec)
    if key not in _AGENTS:
        try:
            _AGENTS[key] = make_named_agent(game, spec)
        except BoardRLError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken model file etc.: still a bad opponent, in one line
            raise BoardRLError(f"agent spec {spec!r}: {type(exc).__name__}: {exc}") from None
        while len(_AGENTS) > KEEP_AGENTS:
            _AGENTS.popitem(last=False)
    _AGENTS.move_to_end(key)
    agent = _AGENTS[key]
    agent.reset()
    move = agent.act(state, np.random.default_rng([int(seed), int(ply)]))
    if not (isinstance(move, (int, np.integer)) and 0 <= move < game.num_actions and game.legal_moves(state)[move]):
        raise LaneError(f"agent {spec!r} answered {move!r}, not a legal move")
    return int(move)


def _warm(positions: dict[str, str]) -> None:
    """Build each game's referee and answer one position with it (tables, compiled kernels, the opening book)."""
    from boardrl.web.positions import game_for

    for game_id, moves in positions.items():
        try:
            _move_values(game_id, game_for(game_id).replay(moves))
        except NoReferee:
            pass


TASKS = {"move_values": _move_values, "agent_move": _agent_move, "warm": _warm}


def _child_main(conn: Connection) -> None:
    """A lane's loop: ``("ready", None)`` once, then ``(task, args)`` in; ``("ok", value)``, ``("bad" | "none" |
    "error", message)`` out."""
    try:
        conn.send(("ready", None))
        while True:
            try:
                task, args = conn.recv()
            except EOFError:
                return
            try:
                reply: tuple[str, Any] = ("ok", TASKS[task](*args))
            except NoReferee as exc:
                reply = ("none", one_line(exc))
            except BoardRLError as exc:
                reply = ("bad", one_line(exc))
            except Exception as exc:  # noqa: BLE001 - reported to the request, the lane goes on
                reply = ("error", f"{type(exc).__name__}: {one_line(exc)}")
            conn.send(reply)
    except (KeyboardInterrupt, OSError):  # Ctrl-C reaches the whole process group; or the server has gone
        return


# ---------------------------------------------------------------------------------------------- in the server
class Lane:
    """One child process doing one task at a time; ``call`` blocks (without the GIL) until it answers."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._proc: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        if self._proc is None or not self._proc.is_alive():
            if self._conn is not None:  # the end of a process that was stopped
                self._conn.close()
            ctx = multiprocessing.get_context("spawn")
            parent, child = ctx.Pipe()
            self._proc = ctx.Process(target=_child_main, args=(child,), name=f"boardrl-{self.name}", daemon=True)
            self._proc.start()
            child.close()
            self._conn = parent
            self._ready(parent)
        assert self._conn is not None
        return self._conn

    def _ready(self, conn: Connection) -> None:
        """Wait for a new process's first message, so that starting it (seconds of imports on a busy machine)
        never counts against a call's ``timeout``."""
        try:
            if conn.poll(START_S) and conn.recv() == ("ready", None):
                return
        except (EOFError, OSError):
            pass
        self.close()
        raise LaneError(f"the {self.name} process did not start within {START_S:g} s; ask again")

    def call(self, task: str, *args: Any, timeout: float | None = None) -> Any:
        """The task's value; ``BoardRLError`` (bad input), ``NoReferee``, or ``LaneError``.

        ``timeout``: seconds for the whole call, waiting for the lane included; past it the work is stopped (the
        process ends and starts afresh on the next call) and ``Busy`` is raised."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
            raise Busy(f"the {self.name} process is busy with other requests for over {timeout:g} s; ask again")
        try:
            conn = self._start()
            try:
                conn.send((task, args))
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not conn.poll(left):
                    self.close()
                    raise Busy(f"no answer from the {self.name} process within {timeout:g} s: the work was "
                               "stopped; ask for less (a smaller search) or ask again")
                kind, value = conn.recv()
            except (EOFError, OSError) as exc:
                self.close()
                raise LaneError(f"the {self.name} process stopped ({type(exc).__name__}); ask again") from None
        finally:
            self._lock.release()
        if kind == "ok":
            return value
        raise {"none": NoReferee, "bad": BoardRLError}.get(kind, LaneError)(value)

    def kill(self) -> None:
        """Stop the work in progress (from another thread): the waiting ``call`` raises ``LaneError``."""
        proc = self._proc
        if proc is not None and proc.is_alive():
            proc.terminate()

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
        self._proc = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class RefereeService:
    """Move values of positions (keyed by game id and state), computed by two lanes, newest request first.

    ``submit(..., review=False)`` is for the position on a board (the "referee" lane, and a state queued for
    review moves over); ``review=True`` for earlier positions (the "review" lane).
    """

    def __init__(self, max_waiters: int = MAX_WAITERS, cache: DiskCache | None = None) -> None:
        self.max_waiters = max_waiters
        self.cache = cache
        self._closed = False
        self._waiters = 0
        self._wakers: set[Callable[[], None]] = set()  # wake the event loops of waiting requests
        self._cond = threading.Condition()
        self._done: OrderedDict[tuple[str, Any], MoveValues | BaseException] = OrderedDict()
        self._queues: dict[str, dict[tuple[str, Any], None]] = {"referee": {}, "review": {}}  # ordered sets
        self._running: dict[str, tuple[tuple[str, Any], float] | None] = {"referee": None, "review": None}
        self._lanes = {name: Lane(name) for name in self._queues}
        self._threads: dict[str, threading.Thread] = {}
        self._asked: dict[tuple[str, Any], float] = {}  # when each position was last asked about
        self._waiting: dict[tuple[str, Any], int] = {}  # positions a request is waiting for now (asked all along)
        self._abandoned: dict[str, tuple[str, Any]] = {}  # lane -> the position whose work was stopped
        #: game id -> why it has no referee.
        self.unavailable: dict[str, str] = {}

    def start(self, warm: dict[str, str] | None = None) -> None:
        """Start the referee lanes now, in the background, each building and running the referees of ``warm``
        (default ``WARM``), so that the first request finds them ready; then warm the server's own share here,
        before it returns.

        Why not that share in the background too: on a cold machine it takes seconds (numba compiling the
        game's kernels, importing the solvers for the cache key), and the first requests then waited for it on
        the event loop, where even a quick 503 took 2.5 s (tests/web/test_limits.py, a clean clone in CI).  The
        server accepts connections only after this returns."""
        positions = WARM if warm is None else warm

        def run(lane: Lane) -> None:
            try:
                lane.call("warm", positions)
            except Exception as exc:  # noqa: BLE001 - a request starts the lane again and reports the error
                if not self._closed:
                    log.warning("the %s process did not warm up: %s", lane.name, one_line(exc))

        for lane in self._lanes.values():
            threading.Thread(target=run, args=(lane,), name=f"boardrl-start-{lane.name}", daemon=True).start()
        self._warm_here(positions)

    def _warm_here(self, positions: dict[str, str]) -> None:
        """The server's own share of a request: replaying moves (the game's kernels) and the disk cache's key."""
        from boardrl.web.cache import code_fingerprint
        from boardrl.web.positions import game_for

        for game_id, moves in positions.items():
            try:
                game = game_for(game_id)
                game.replay(moves)
                code_fingerprint(game)
            except Exception as exc:  # noqa: BLE001 - only a warm-up: the first request meets the same error
                log.warning("warming %s up failed: %s", game_id, one_line(exc))

    def _from_disk(self, key: tuple[str, Any]) -> bool:
        """Whether the disk cache held ``key``'s values (now kept in memory too); call with the lock held."""
        if self.cache is None:
            return False
        from boardrl.web.positions import game_for

        game_id, state = key
        mv = self.cache.get(game_for(game_id), state)
        if mv is None:
            return False
        self._done[key] = mv
        return True

    def _to_disk(self, key: tuple[str, Any], answer: MoveValues | BaseException) -> None:
        if self.cache is not None and isinstance(answer, MoveValues):
            from boardrl.web.positions import game_for

            self.cache.put(game_for(key[0]), key[1], answer)

    def _known(self, key: tuple[str, Any]) -> bool:
        """Answered (an error is asked again: the lane may have died) or being computed."""
        done = key in self._done and not isinstance(self._done[key], BaseException)
        return done or any(r is not None and r[0] == key for r in self._running.values())

    def submit(self, game_id: str, states: Iterable[Any], review: bool = False) -> None:
        """Queue the states not yet answered; the last one given is taken first."""
        lane = "review" if review else "referee"
        now = time.monotonic()
        with self._cond:
            for s in states:
                key = (game_id, s)
                self._asked[key] = now
                if self._known(key) or self._from_disk(key):
                    continue
                for q in self._queues.values():
                    q.pop(key, None)
                self._queues[lane][key] = None
            if lane not in self._threads:
                self._threads[lane] = threading.Thread(target=self._run, args=(lane,), name=f"boardrl-{lane}",
                                                       daemon=True)
                self._threads[lane].start()
            if "watchdog" not in self._threads:
                self._threads["watchdog"] = threading.Thread(target=self._watch, name="boardrl-watchdog",
                                                             daemon=True)
                self._threads["watchdog"].start()
            self._notify()

    def _notify(self) -> None:
        """Wake every waiter: the service's threads and the requests on the event loop (call with the lock held)."""
        self._cond.notify_all()
        for wake in list(self._wakers):
            wake()

    def _ready(self, game_id: str, keys: list[tuple[str, Any]]) -> bool:
        return game_id in self.unavailable or all(k in self._done for k in keys)

    def _hold(self, keys: list[tuple[str, Any]], delta: int) -> None:
        """Count ``keys`` as waited for (+1) or no longer (-1); a position last asked about now."""
        now = time.monotonic()
        for k in keys:
            self._asked[k] = now
            self._waiting[k] = self._waiting.get(k, 0) + delta
            if not self._waiting[k]:
                del self._waiting[k]

    async def wait(self, game_id: str, states: list[Any], timeout: float) -> bool:
        """Whether every state is answered (or the game has no referee) within ``timeout`` seconds.

        Awaited on the event loop: a waiting request holds no thread.  Why: the server's thread pool is small
        (40), and 60 requests waiting 30 s each in threads once held a cheap request up for 9 s.  ``Busy`` when
        ``max_waiters`` requests wait already, so that the number of waiters is bounded too."""
        keys = [(game_id, s) for s in states]
        loop = asyncio.get_running_loop()
        event = asyncio.Event()

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop has closed: nobody waits any more
                pass

        with self._cond:
            ready = self._ready(game_id, keys)
            if ready or timeout <= 0:
                return ready
            if self._waiters >= self.max_waiters:
                raise Busy(f"{self._waiters} requests wait for the referee already; ask again shortly")
            self._waiters += 1
            self._wakers.add(wake)
            self._hold(keys, +1)
        try:
            return await self._until_ready(game_id, keys, event, loop.time() + timeout)
        finally:
            with self._cond:
                self._waiters -= 1
                self._wakers.discard(wake)
                self._hold(keys, -1)

    async def _until_ready(self, game_id: str, keys: list[tuple[str, Any]], event: asyncio.Event,
                           deadline: float) -> bool:
        loop = asyncio.get_running_loop()
        while True:
            with self._cond:  # checked and re-armed under the lock: a change after this sets the event
                if self._ready(game_id, keys):
                    return True
                event.clear()
            left = deadline - loop.time()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(event.wait(), left)
            except asyncio.TimeoutError:
                pass

    def _wanted(self, key: tuple[str, Any], now: float) -> bool:
        """Whether someone asked about ``key`` lately or is waiting for it."""
        return key in self._waiting or now - self._asked.get(key, 0.0) <= ABANDON_S

    def result(self, game_id: str, state: Any) -> MoveValues | None:
        """The values of a state, None while not computed; re-raises the error the referee raised on it."""
        with self._cond:
            got = self._done.get((game_id, state))
        if isinstance(got, BaseException):
            raise got
        return got

    def busy_seconds(self) -> float:
        """How long the referee has been on the position it works on now (0 when idle)."""
        with self._cond:
            r = self._running["referee"]
            return time.monotonic() - r[1] if r is not None else 0.0

    def _run(self, lane: str) -> None:
        queue = self._queues[lane]
        while True:
            with self._cond:
                while True:
                    self._cond.wait_for(lambda: bool(queue))
                    key, _ = queue.popitem()
                    if self._wanted(key, time.monotonic()):
                        break  # the others: nobody shows them any more
                self._running[lane] = (key, time.monotonic())
            game_id, state = key
            try:
                answer: MoveValues | BaseException = self._lanes[lane].call("move_values", game_id, state)
            except Exception as exc:  # noqa: BLE001 - NoReferee, or kept and re-raised to the requests that ask
                answer = exc
            with self._cond:
                self._running[lane] = None
                abandoned = self._abandoned.get(lane) == key
                if abandoned:
                    del self._abandoned[lane]
                if abandoned and isinstance(answer, BaseException):  # stopped by the watchdog: asked again later
                    self._notify()
                    continue
                if isinstance(answer, NoReferee):
                    self.unavailable[game_id] = str(answer)
                    for q in self._queues.values():
                        for k in [k for k in q if k[0] == game_id]:
                            del q[k]
                else:
                    self._done[key] = answer
                    while len(self._done) > KEEP:
                        self._done.popitem(last=False)
                self._notify()
            self._to_disk(key, answer)  # after the waiters are woken: a slow disk delays no answer

    def _watch(self) -> None:
        """Stop a lane's work on a position nobody asks about any more.

        Why: one referee call cannot be interrupted and may take minutes (an early Connect 4 position); a player
        who has moved on wants the values of the new position, not of one they left, and a closed page wants
        nothing.  The page asks about what it shows about once a second, so a position unasked for
        ``ABANDON_S`` is one nobody shows.
        """
        while True:
            time.sleep(0.5)
            with self._cond:  # under the lock: the running position cannot change before its lane is stopped
                now = time.monotonic()
                for lane, running in self._running.items():
                    if running is not None and lane not in self._abandoned and not self._wanted(running[0], now):
                        self._abandoned[lane] = running[0]
                        self._lanes[lane].kill()
                if len(self._asked) > KEEP:
                    for key in [k for k, t in self._asked.items() if now - t > ABANDON_S and k in self._done]:
                        del self._asked[key]

    def close(self) -> None:
        self._closed = True
        for lane in self._lanes.values():
            lane.close()
