"""The UCI table: published facts, equality with the rules modulo mirror, a faithful parquet round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardrl.data import uci_download, uci_table
from boardrl.data.uci_positions import parse_uci_text

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def text() -> str:
    return uci_download.obtain("vendored", vendor_dir=ROOT / "data" / "vendor").files[uci_download.DATA].decode()


@pytest.fixture(scope="module")
def frame(text):
    return uci_table.uci_frame(text)


def test_facts_hold(frame):
    facts = uci_table.check_facts(frame)
    assert facts == {"rows": 67_557, "classes": {"win": 44_473, "loss": 16_635, "draw": 6_449},
                     "stones_per_player": 4}
    assert list(frame.columns[:42]) == list(uci_table.CELL_COLUMNS)
    assert (frame["plies"] == 8).all()


def test_first_row_is_the_file_first_line(frame, text):
    first = text.splitlines()[0].split(",")
    assert [str(frame.iloc[0][c]) for c in uci_table.CELL_COLUMNS] == first[:42]
    assert str(frame.iloc[0]["label"]) == first[42]
    states, _ = parse_uci_text(text.splitlines()[0])
    assert tuple(uci_table.frame_states(frame)[0]) == tuple(states[0])


def test_violated_facts_are_named(frame):
    with pytest.raises(uci_table.UciCheckError, match="expected 67557 rows, found 67556"):
        uci_table.check_facts(frame.iloc[1:])
    flipped = frame.copy()
    flipped.loc[0, "label"] = "draw" if flipped.loc[0, "label"] != "draw" else "win"
    with pytest.raises(uci_table.UciCheckError, match="expected class counts"):
        uci_table.check_facts(flipped)
    moved = frame.copy()
    moved.loc[5, "a1"] = "b" if moved.loc[5, "a1"] != "b" else "x"
    with pytest.raises(uci_table.UciCheckError, match="row 6 has"):
        uci_table.check_facts(moved)


def test_equal_to_the_rules_modulo_mirror(frame):
    facts = uci_table.compare_with_rules(frame)
    assert facts == {"candidates": 134_934, "symmetric": 180, "classes": 67_557, "missing_from_data": 0,
                     "extra_in_data": 0, "mirror_duplicates_in_data": 0, "equal_modulo_mirror": True}
    assert frame["mirror_key"].nunique() == 67_557


def test_a_missing_position_is_detected(frame):
    with pytest.raises(uci_table.UciCheckError, match="missing_from_data=1"):
        uci_table.compare_with_rules(frame.iloc[:-1])


def test_parquet_round_trip_is_exact_and_deterministic(frame, tmp_path):
    a = uci_table.write_parquet(frame, tmp_path / "a.parquet")
    b = uci_table.write_parquet(frame, tmp_path / "b.parquet")
    assert a.read_bytes() == b.read_bytes()
    back = uci_table.read_parquet(a)
    assert back.equals(frame)
    by_label = uci_table.positions_by_label(back)
    assert {k: v.shape for k, v in by_label.items()} == {"win": (44_473, 3), "loss": (16_635, 3), "draw": (6_449, 3)}
    assert by_label["win"].dtype == np.int64
    with pytest.raises(Exception, match="run the prepare stage"):
        uci_table.read_parquet(tmp_path / "none.parquet")
