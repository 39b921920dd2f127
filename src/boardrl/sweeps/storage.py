"""Where a study lives: a journal file on one machine, a database (PostgreSQL first) for many.

- Default: an Optuna journal file (``JournalFileBackend``): append-only, safe for several processes on one
  machine, and the same command continues a study after Ctrl-C or a crash.
- ``--storage URL`` with a SQLAlchemy URL (``postgresql+psycopg://user@host:port/db``, ``mysql+...``,
  ``sqlite:///file``) for workers on many machines.
- Both get Optuna's heartbeat protocol, so a trial whose worker was killed is marked FAILED by the next worker
  that asks for a trial (Optuna calls ``fail_stale_trials`` itself), instead of staying RUNNING and counting
  toward ``--trials`` for ever.  Database storages have it built in.  Optuna's ``JournalStorage`` does not (up
  to Optuna 5.0), so ``journal.HeartbeatJournalStorage`` adds it: each beat records the worker's identity (host, pid,
  process start time) in the trial's system attributes; a worker on the same host is stale as soon as its
  process is gone, one on another host when its beats stop for ``GRACE_S``.
- ``on_stale`` is called with each trial failed that way (the sweep closes the trial's MLflow run).
- Never MLflow's own SQLite file (two programs migrating one schema file): refused with one line.

Every failure (unreachable server, malformed URL, corrupted journal, no permission) is one ``SweepError`` line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from boardrl.errors import BoardRLError

HEARTBEAT_S = 10
GRACE_S = 40
JOURNAL_PREFIX = "journal:"
StaleCallback = Callable[[Any, Any], None]


class SweepError(BoardRLError):
    """A sweep that cannot run: bad storage, study or settings."""


def is_journal(url: str) -> bool:
    return url.startswith(JOURNAL_PREFIX) or url.endswith((".journal", ".log")) or "://" not in url


def journal_path(url: str) -> Path:
    return Path(url[len(JOURNAL_PREFIX):] if url.startswith(JOURNAL_PREFIX) else url)


def describe(url: str) -> str:
    """The storage as shown in tags and messages, without a password."""
    if is_journal(url):
        return f"journal:{journal_path(url)}"
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - only for display
        return url.split("@")[-1]


def make_storage(url: str, mlflow_db: Path | None = None, on_stale: StaleCallback | None = None) -> Any:
    """The Optuna storage for ``url``; ``SweepError`` (one line) when it cannot be opened."""
    import optuna

    if is_journal(url):
        return _journal_storage(journal_path(url), on_stale)
    _refuse_mlflow_db(url, mlflow_db)
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)  # heartbeat: stable in practice
            return optuna.storages.RDBStorage(url, engine_kwargs={"pool_pre_ping": True},
                                              heartbeat_interval=HEARTBEAT_S, grace_period=GRACE_S,
                                              heartbeat_stale_trial_callback=on_stale)
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy and drivers raise many kinds
        raise SweepError(f"cannot open the study storage {describe(url)}: {_first_line(exc)}") from None


#: Seconds after which a journal lock is taken as left by a killed worker and broken.  Optuna's default, 30 s, held
#: every other worker of the sweep for that long; a live writer holds the lock for milliseconds (one append).
LOCK_GRACE_S = 10


def _journal_storage(path: Path, on_stale: StaleCallback | None) -> Any:
    from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock

    from boardrl.sweeps.journal import HeartbeatJournalStorage

    try:
        check_journal(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Absolute: Optuna's lock is a symlink to this path, read relative to the lock's folder; a relative
        # target dangles, and a lock left by a killed worker is then never broken (Optuna spins on it for ever).
        target = str(path.absolute())
        backend = JournalFileBackend(target, lock_obj=JournalFileSymlinkLock(target, grace_period=LOCK_GRACE_S))
        return HeartbeatJournalStorage(backend, HEARTBEAT_S, GRACE_S, on_stale)
    except OSError as exc:
        raise SweepError(journal_os_error(path, exc)) from None
    except SweepError:
        raise
    except Exception as exc:  # noqa: BLE001 - a corrupted journal raises assorted errors while replaying
        raise SweepError(f"cannot read the study journal {path}: {_first_line(exc)}; "
                         "it is not an Optuna journal (or was damaged): move it away or pass --storage") from None


def journal_os_error(path: Path, exc: OSError) -> str:
    """One line for a file-system error on the journal: a permission problem is named as such, not as damage."""
    import errno

    where = exc.filename or path
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (f"cannot use the study journal {path}: permission denied on {where} ({exc.strerror or exc}); "
                f"check the permissions of {path.parent} and the files in it")
    return f"cannot use the study journal {path}: {where}: {exc.strerror or exc}"


def fail_stale_trials(study: Any) -> None:
    """Optuna's ``fail_stale_trials`` (the stale trials FAILED, ``on_stale`` called), without its warning."""
    import warnings

    import optuna

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)


def check_journal(path: Path) -> None:
    """Refuse a file that is not an Optuna journal *before* Optuna appends to it (the study stays untouched)."""
    import json

    if not path.is_file():
        return
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, 1):
            try:
                op = json.loads(line)
            except ValueError:
                op = None
            if not isinstance(op, dict) or "op_code" not in op:
                raise SweepError(f"cannot read the study journal {path}: line {number} is not an Optuna journal "
                                 "entry (the file is damaged or something else): move it away or pass --storage")


def _refuse_mlflow_db(url: str, mlflow_db: Path | None) -> None:
    if mlflow_db is None or not url.startswith("sqlite:"):
        return
    path = url.split(":///", 1)[-1]
    if Path(path).resolve() == Path(mlflow_db).resolve():
        raise SweepError(f"--storage {url}: that is MLflow's own database; give the study its own file "
                         "(the default journal) or database")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    if line.startswith("(") and ") " in line:  # SQLAlchemy's "(driver.ErrorClass) message"
        line = line.split(") ", 1)[1]
    return line[:300]
