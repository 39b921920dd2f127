"""The tracking service: one process per MLflow store that makes the writes of every stage process.

Why: a stage that logs through MLflow itself spends about 2.5 s importing ``mlflow`` and opening its SQL store
before it has logged anything.  A ``dvc repro`` runs some 150 stage processes, each paying it again: 6 minutes
of a 45-minute budget.  Here the first stage that logs starts this service (``python -m
boardrl.tracking.service``); it imports MLflow once and every later stage sends its writes over a Unix socket
(``multiprocessing.connection``), each a call of ``tracking/ops.py`` answered before the stage goes on.  So a
write that fails still fails the stage with the same one ``TrackingError`` line, and nothing is queued where a
crash could lose it.

- One service per store and code version: the socket's name hashes the tracking URI, the interpreter and the
  source of the tracking modules, so an edited checkout never talks to a service running older code.
- The service exits after ``IDLE_S`` seconds without a connection.  A stage keeps its connection open while it
  runs, so a long training run keeps it alive.
- It serves one call at a time (SQLite serializes writes anyway) and answers each with ``("ok", value)`` or
  ``("error", message)``.
- If the database file is replaced or deleted while the service runs (a user moved a damaged ``mlflow.db``
  away), the service notices before the next call and opens the new file, instead of writing into the old one.
- ``BOARDRL_TRACKING_SERVICE=off`` makes every call in the calling process (debugging, or a system without
  Unix sockets).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import Any

from boardrl.tracking.store import TrackingError

SERVICE_ENV = "BOARDRL_TRACKING_SERVICE"
IDLE_S = 60.0
IDLE_ENV = "BOARDRL_TRACKING_IDLE_S"  # seconds a service without connections waits before it exits
START_TIMEOUT_S = 180.0
_CODE = ("ops.py", "service.py", "store.py", "pyfunc.py", "owner.py")


def service_dir() -> Path:
    """``<tmp>/boardrl-tracking-<uid>``, private to this user (sockets, locks and logs of the services)."""
    d = Path(tempfile.gettempdir()) / f"boardrl-tracking-{os.getuid()}"
    d.mkdir(mode=0o700, exist_ok=True)
    return d


def socket_path(uri: str) -> Path:
    """The socket of the service for store ``uri`` under this interpreter and this version of the code."""
    h = hashlib.sha256(f"{uri}\0{sys.executable}".encode())
    here = Path(__file__).parent
    for name in _CODE:
        h.update((here / name).read_bytes())
    return service_dir() / f"{h.hexdigest()[:20]}.sock"


# --------------------------------------------------------------------------------------------------- the client

_connections: dict[str, Connection] = {}
_client_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get(SERVICE_ENV, "on").lower() not in ("off", "0", "false", "no")


def call(uri: str, op: str, **kwargs: Any) -> Any:
    """Run ``tracking/ops.py``'s ``op(uri, **kwargs)`` in the store's service (started when none runs)."""
    if not enabled():
        from boardrl.tracking.ops import OPERATIONS

        return OPERATIONS[op](uri, **kwargs)
    with _client_lock:
        conn = _connection(uri)
        try:
            conn.send((op, kwargs))
            reply = conn.recv()
        except (EOFError, OSError) as exc:
            _connections.pop(uri, None)
            raise TrackingError(f"the MLflow tracking service stopped during {op} ({type(exc).__name__}); its log: "
                                f"{socket_path(uri).with_suffix('.log')}") from None
    if reply[0] == "ok":
        return reply[1]
    raise TrackingError(reply[1])


def _connection(uri: str) -> Connection:
    conn = _connections.get(uri)
    if conn is None:
        conn = _connections[uri] = _connect_or_start(uri)
    return conn


def _connect_or_start(uri: str) -> Connection:
    """A connection to the store's service that has answered a ping; the service is started when none answers."""
    path = socket_path(uri)
    conn = _handshake(path)
    if conn is not None:
        return conn
    log = path.with_suffix(".log")
    proc = _spawn(uri, path)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        conn = _handshake(path)
        if conn is not None:
            return conn
        code = proc.poll()
        if code not in (None, 0):  # 0: another service won the lock and will answer
            raise TrackingError(f"the MLflow tracking service did not start (exit {code}): {_tail(log)}")
        time.sleep(0.05)
    raise TrackingError(f"the MLflow tracking service did not answer within {START_TIMEOUT_S:.0f} s; its log: {log}")


def _spawn(uri: str, path: Path) -> subprocess.Popen:
    """Start a service for ``uri`` on socket ``path``, in its own session (a kill of the caller's process group
    leaves it serving the rerun), its output appended to ``<socket>.log``.

    It works in the socket's directory, not the caller's: the service outlives the stage that starts it, and
    that stage may run in a copy of the project that goes away (DVC's queue deletes each experiment's temporary
    copy), after which MLflow's Model.log failed with FileNotFoundError for every later stage.  Its boardrl is
    the caller's, whatever the directory: ``socket_path`` names the service by that code."""
    src = str(Path(__file__).resolve().parents[2])  # the directory holding the boardrl package
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])}
    with open(path.with_suffix(".log"), "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "boardrl.tracking.service", uri, str(path)],
                                cwd=path.parent, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True, close_fds=True)


def start_soon(uri: str) -> None:
    """Start the store's service without waiting for it, unless one answers or the service is off.

    Why: a new service spends 2-4 s importing MLflow (and creating a new store's tables); started by the profile
    runner, that happens while DVC starts up instead of inside the first stage, which would wait for it.  Two
    services racing for one store are settled by the service's own lock (the loser exits 0)."""
    if not enabled():
        return
    path = socket_path(uri)
    conn = _handshake(path)
    if conn is not None:
        conn.close()
        return
    _spawn(uri, path)


def _handshake(path: Path) -> Connection | None:
    """A connection whose ping was answered (so the service counts it and will not exit under it), or None."""
    conn = _try_connect(path)
    if conn is None:
        return None
    try:
        conn.send(("ping", {}))
        if conn.recv()[0] == "ok":
            return conn
    except (EOFError, OSError):
        pass
    conn.close()
    return None


def _try_connect(path: Path) -> Connection | None:
    try:
        return Client(str(path), family="AF_UNIX")
    except (FileNotFoundError, ConnectionRefusedError):
        return None


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return f"see {log}"
    return lines[-1] if lines else f"see {log}"


def _forget_connections_in_child() -> None:
    _connections.clear()  # a forked worker must not talk over its parent's socket


os.register_at_fork(after_in_child=_forget_connections_in_child)


# --------------------------------------------------------------------------------------------------- the service

class Service:
    """Accepts connections on ``path`` and runs their calls one at a time against store ``uri``."""

    def __init__(self, uri: str, path: Path) -> None:
        from boardrl.tracking import ops

        self.ops = ops
        self.uri = uri
        self.path = path
        self.db = ops.database_file(uri)
        self.db_identity: tuple[int, int] | None = None
        self.lock = threading.Lock()
        self.open_connections = 0
        self.last_activity = time.monotonic()
        self.listener: Listener | None = None
        self.idle_s = float(os.environ.get(IDLE_ENV, IDLE_S))

    def serve(self) -> None:
        self.path.unlink(missing_ok=True)  # a socket file left by a service that died (the lock says none runs)
        self.listener = Listener(str(self.path), family="AF_UNIX")
        threading.Thread(target=self._exit_when_idle, daemon=True).start()
        while True:
            conn = self.listener.accept()
            with self.lock:
                self.open_connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: Connection) -> None:
        try:
            while True:
                try:
                    op, kwargs = conn.recv()
                except (EOFError, OSError):
                    return
                conn.send(self._run(op, kwargs))
        finally:
            conn.close()
            with self.lock:
                self.open_connections -= 1
                self.last_activity = time.monotonic()

    def _run(self, op: str, kwargs: dict[str, Any]) -> tuple[str, Any]:
        fn = self.ops.OPERATIONS.get(op)
        if fn is None:
            return ("error", f"the tracking service has no operation {op!r}")
        with self.lock:
            self.last_activity = time.monotonic()
            try:
                self._follow_database_file()
                return ("ok", fn(self.uri, **kwargs))
            except TrackingError as exc:
                return ("error", str(exc))
            except Exception as exc:  # noqa: BLE001 - the stage gets one line; the traceback goes to the log
                import traceback

                traceback.print_exc()
                sys.stderr.flush()
                first = (str(exc).strip().splitlines() or [""])[0]
                return ("error", f"MLflow {op}: {type(exc).__name__}: {first}")

    def _follow_database_file(self) -> None:
        """Reopen the store when its file is not the one opened before (replaced, or deleted and made anew)."""
        if self.db is None:
            return
        try:
            st = self.db.stat()
            now: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except FileNotFoundError:
            now = None
        if self.db_identity is not None and now != self.db_identity:
            self.ops.forget_clients()
        self.db_identity = now

    def _exit_when_idle(self) -> None:
        """Exit once no client is connected for ``idle_s``: every call was answered, so nothing is left to write.

        ``os._exit`` under the lock, because a blocked ``accept`` ignores a socket closed from another thread.  A
        client that connected in the last instant sees its handshake fail and starts a new service.
        """
        while True:
            time.sleep(min(1.0, self.idle_s / 4))
            with self.lock:
                if self.open_connections == 0 and time.monotonic() - self.last_activity > self.idle_s:
                    self.path.unlink(missing_ok=True)
                    sys.stderr.flush()
                    os._exit(0)


def main(argv: list[str]) -> int:
    """``python -m boardrl.tracking.service <uri> <socket path>``: serve until idle; 0 if another already serves."""
    import fcntl

    uri, path = argv[0], Path(argv[1])
    lock = open(path.with_suffix(".lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))  # not the CPU pin of the stage that started it
    except (AttributeError, OSError):
        pass
    service = Service(uri, path)
    # everything it will need, before the first client connects (the store opens on the first call)
    service.ops.preload(code_dir=path.with_suffix(".code"))
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} tracking service {os.getpid()} serves {uri} on {path}",
          file=sys.stderr, flush=True)
    service.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
