"""An empty MLflow store, migrated once per test process, that tests start their projects from.

Why: MLflow builds a new sqlite store by creating its tables and running its schema migrations, 1 to 2.5 s of CPU
each time, and some forty tests start a project of their own (``tests/experiments/test_publish.py`` alone
nineteen): about a minute of the suite.  A copy of a store built once and emptied of its "Default" experiment is
the store MLflow would build: on first open MLflow finds every table at the current schema revision and adds the
"Default" experiment itself, with this process's artifact root (``test_mlflow_store.py`` compares the two).

``tests/conftest.py`` seeds every sqlite store that a test opens in its own process (``seeding_store_class``);
tests whose stages run in other processes seed their project with ``seed_store`` before starting them.
"""

from __future__ import annotations

import functools
import shutil
import sqlite3
import tempfile
from pathlib import Path

from boardrl.tracking.store import DB_NAME, quiet_migrations

SQLITE = "sqlite:///"
_building = False  # while the template itself is built, by MLflow, through the seeding constructor


@functools.cache
def template() -> Path:
    """The migrated, empty store of this process (built on first use, under a temp folder of its own)."""
    global _building
    quiet_migrations()
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    path = Path(tempfile.mkdtemp(prefix="mlflow-template-")) / DB_NAME
    _building = True
    try:
        # the store class itself, not a client: the first store a process opens is often a client's, built under
        # MLflow's store-registry lock, and a client here would wait for that lock for ever
        SqlAlchemyStore(f"{SQLITE}{path}", str(path.parent / "artifacts")).engine.dispose()  # tables, migrations
    finally:
        _building = False
    with sqlite3.connect(path) as con:
        con.execute("DELETE FROM experiments")  # MLflow adds "Default" on first open, as in a store of its own
    con.close()
    return path


def seed_store(project: Path) -> None:
    """Put an empty, migrated ``mlflow.db`` into ``project`` unless it has one."""
    seed_file(Path(project) / DB_NAME)


def seed_file(db: Path) -> None:
    """Copy the template to ``db`` where MLflow would create a store: a missing file in an existing folder.  A
    folder that refuses the copy is left to MLflow, whose own error the test may be about."""
    if _building or db.exists() or not db.parent.is_dir():
        return
    try:
        shutil.copyfile(template(), db)
    except OSError:
        db.unlink(missing_ok=True)


def seeding_init(original):
    """MLflow's ``SqlAlchemyStore.__init__``, seeding a missing sqlite store first (every client in a process,
    the project's and the tests', opens its store through it)."""

    @functools.wraps(original)
    def __init__(self, db_uri, *args, **kwargs):
        if isinstance(db_uri, str) and db_uri.startswith(SQLITE):
            seed_file(Path(db_uri[len(SQLITE):]))
        original(self, db_uri, *args, **kwargs)

    return __init__
