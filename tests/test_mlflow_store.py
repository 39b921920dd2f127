"""The suite's seeded MLflow stores (tests/mlflow_store.py) are the stores MLflow builds itself."""

import sqlite3
from pathlib import Path

from mlflow import MlflowClient

from mlflow_store import seed_store, template


def schema_and_rows(db: Path) -> dict[str, object]:
    """Every table with its columns, every index, the schema revision and the experiments (without times)."""
    with sqlite3.connect(db) as con:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        columns = {t: [r[1:] for r in con.execute(f'PRAGMA table_info("{t}")')] for t in tables}
        indexes = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'"))
        revision = con.execute("SELECT version_num FROM alembic_version").fetchall()
        experiments = con.execute("SELECT experiment_id, name, artifact_location, lifecycle_stage, workspace "
                                  "FROM experiments").fetchall()
    con.close()
    return {"columns": columns, "indexes": indexes, "revision": revision, "experiments": experiments}


def test_a_seeded_store_once_opened_equals_one_mlflow_built(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MLflow's default artifact root, which its "Default" experiment names, is here
    built, seeded = tmp_path / "built" / "mlflow.db", tmp_path / "seeded" / "mlflow.db"
    built.parent.mkdir()
    seeded.parent.mkdir()
    seed_store(seeded.parent)
    assert seeded.read_bytes() == template().read_bytes()
    with sqlite3.connect(seeded) as con:
        assert con.execute("SELECT COUNT(*) FROM experiments").fetchone() == (0,)  # "Default" comes on opening
    con.close()
    # this suite seeds every store opened in its processes (tests/conftest.py), so `built` is built by MLflow's
    # own migrations only with the seeding switched off here
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    monkeypatch.setattr(SqlAlchemyStore, "__init__", SqlAlchemyStore.__init__.__wrapped__)
    for db in (built, seeded):
        MlflowClient(tracking_uri=f"sqlite:///{db}").search_experiments()
    assert schema_and_rows(seeded) == schema_and_rows(built)
    assert schema_and_rows(built)["experiments"][0][1] == "Default"


def test_seeding_leaves_an_existing_store_and_a_missing_folder_alone(tmp_path):
    (tmp_path / "mlflow.db").write_bytes(b"not a database")
    seed_store(tmp_path)
    assert (tmp_path / "mlflow.db").read_bytes() == b"not a database"  # a damaged store stays for its error
    seed_store(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()
