"""Real servers for tests, on 127.0.0.1 only: PostgreSQL 15 and an MLflow tracking server.

PostgreSQL refuses to run as root, so the cluster belongs to the unprivileged ``postgres`` system user
(``runuser``), with its data directory and socket in a temporary directory made for it.  Its programs are where
``pg_config --bindir`` says (Debian's postgresql-15).  ``postgres_missing()`` says why a test must skip.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from mlflow_store import seed_file
from repo_copy import free_port, stop_group, wait_for_answer

PG_USER = "postgres"


def pg_bindir() -> Path | None:
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(out)
    return path if (path / "initdb").is_file() and (path / "pg_ctl").is_file() else None


def postgres_missing() -> str | None:
    """Why a PostgreSQL test cannot run here, or None."""
    if pg_bindir() is None:
        return "PostgreSQL server binaries not found (pg_config --bindir has no initdb/pg_ctl)"
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        return f"no '{PG_USER}' system user to run PostgreSQL as"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser"
    return None


def _as_pg(args: list[str], **kw) -> subprocess.CompletedProcess:
    cmd = ["runuser", "-u", PG_USER, "--", *args] if os.geteuid() == 0 else args
    return subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120, **kw)


@contextmanager
def postgres_server(database: str = "optuna") -> Iterator[str]:
    """A throw-away PostgreSQL cluster on 127.0.0.1:<free port>; yields a SQLAlchemy URL (psycopg 3)."""
    bindir = pg_bindir()
    base = Path(tempfile.mkdtemp(prefix="boardrl-pg-"))
    os.chmod(base, 0o755)
    if os.geteuid() == 0:
        user = pwd.getpwnam(PG_USER)
        os.chown(base, user.pw_uid, user.pw_gid)
    data, port = base / "data", free_port()
    try:
        _as_pg([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", PG_USER, "--no-sync"])
        _as_pg([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "-t", "60", "-o",
                f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off", "start"])
        _as_pg([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", PG_USER, database])
        yield f"postgresql+psycopg://{PG_USER}@127.0.0.1:{port}/{database}"
    finally:
        try:
            _as_pg([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"])
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def mlflow_server(directory: Path) -> Iterator[str]:
    """``mlflow server`` on 127.0.0.1:<free port> over a SQLite store in ``directory``; yields its URI.

    The store starts as the suite's migrated template (``mlflow_store``), so the server and its worker do not
    build MLflow's tables and run its migrations again."""
    store = Path(directory) / "server.db"
    seed_file(store)
    port = free_port()
    cmd = [str(Path(sys.executable).parent / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port),
           "--backend-store-uri", f"sqlite:///{store}", "--default-artifact-root",
           str(directory / "artifacts"), "--workers", "1"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    # as docs/sweeps-many-machines.md runs it: without MLflow's GenAI job runner, which no sweep uses and which
    # starts eight processes that each import MLflow (about 25 s of CPU here)
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
    proc = subprocess.Popen(cmd, cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        wait_for_answer(proc, lambda: urllib.request.urlopen(f"{uri}/health", timeout=5).close(), "mlflow server")
        yield uri
    finally:
        stop_group(proc, grace_s=3)  # its store is thrown away: no need to wait for idle keep-alive clients
