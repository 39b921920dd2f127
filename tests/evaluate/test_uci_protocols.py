"""UCI start-position protocols: the agent really plays x (seed 000) and both seats (full), per label."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardrl.agents import make_agent
from boardrl.data import uci_download, uci_table
from boardrl.evaluate import uci_protocols
from boardrl.games import make_game
from boardrl.errors import BoardRLError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def positions() -> dict[str, np.ndarray]:
    text = uci_download.obtain("vendored", vendor_dir=ROOT / "data" / "vendor").files[uci_download.DATA].decode()
    by_label = uci_table.positions_by_label(uci_table.uci_frame(text))
    return {label: rows[:400] for label, rows in by_label.items()}


@pytest.fixture(scope="module")
def c4():
    return make_game("connect4")


def test_seed000_protocol_plays_x_from_each_label(c4, positions):
    tactical, random = make_agent(c4, "tactical"), make_agent(c4, "random")
    out = uci_protocols.seed000_protocol(tactical, random, positions, games=120, seed=3)
    assert list(out) == ["win", "loss", "draw"]
    for label, stats in out.items():
        assert stats["games"] == 120
        # tactical beats random in >= 95% of Connect 4 games; below 85% in 120 games has probability < 1e-4
        # unless the stats were taken from the wrong side or the agent did not move first.
        assert stats["win"] >= 0.85, (label, stats)
        assert stats["win_ci"][0] <= stats["win"] <= stats["win_ci"][1]
    again = uci_protocols.seed000_protocol(tactical, random, positions, games=120, seed=3)
    assert again == out


def test_full_protocol_covers_every_position_from_both_seats(c4, positions):
    tactical, random = make_agent(c4, "tactical"), make_agent(c4, "random")
    out = uci_protocols.full_protocol(tactical, random, positions, seed=1, max_positions=50)
    for label, block in out.items():
        assert block["positions"] == 50
        assert block["as_first"]["games"] == block["as_second"]["games"] == 50
        assert block["combined"]["games"] == 100
        assert block["combined"]["wins"] == block["as_first"]["wins"] + block["as_second"]["wins"]
        assert block["as_first"]["win"] >= 0.8 and block["as_second"]["win"] >= 0.8, (label, block)


def test_sampling_keeps_file_order_and_is_seeded():
    rows = np.arange(30).reshape(10, 3)
    assert uci_protocols.sample_positions(rows, None, 0) is rows
    a = uci_protocols.sample_positions(rows, 4, 7)
    assert a.shape == (4, 3) and np.all(np.diff(a[:, 0]) > 0)
    assert np.array_equal(a, uci_protocols.sample_positions(rows, 4, 7))


def test_only_connect4_agents(positions):
    ttt = make_game("tictactoe")
    with pytest.raises(BoardRLError, match="for connect4 agents, not tictactoe"):
        uci_protocols.seed000_protocol(make_agent(ttt, "random"), make_agent(ttt, "random"), positions, 10, 0)
