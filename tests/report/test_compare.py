"""`boardrl results`: the headline metrics of every experiment, one line each, within the terminal's width."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from boardrl.cli import app
from boardrl.report.compare import load_metrics, render

LADDER = ["random", "semirandom", "tactical", "maxmin", "mcts:simulations=1000", "alphabeta:depth=6"]


def write(root, exp_id, **extra):
    folder = root / "results" / "metrics"
    folder.mkdir(parents=True, exist_ok=True)
    data = {"budget": 300000, "seeds": 3, "optimal_move_rate": 0.8335,
            **{f"vs:{o}": {"win": 0.5 + i / 20, "loss": 0.25} for i, o in enumerate(LADDER)}, **extra}
    (folder / f"{exp_id}.json").write_text(json.dumps(data))


def test_one_line_per_experiment_with_each_opponent_in_percent(tmp_path):
    write(tmp_path, "connect4_dqn")
    write(tmp_path, "tictactoe_tabular_q", optimal_move_rate=None)
    lines = render(load_metrics(tmp_path), width=200).splitlines()
    assert lines[0].split()[:4] == ["experiment", "budget", "seeds", "optimal"]
    assert lines[1].split()[:4] == ["connect4_dqn", "300000", "3", "83.4%"]
    assert "random 50/25, semirandom 55/25, tactical 60/25, maxmin 65/25, mcts:simulations=1000 70/25" in lines[1]
    assert lines[2].split()[:4] == ["tictactoe_tabular_q", "300000", "3", "-"]


def test_the_opponents_wrap_instead_of_widening_the_table(tmp_path):
    for k in range(40):
        write(tmp_path, f"dots_and_boxes_3x3_experiment_{k:02d}")
    for width in (80, 120):
        text = render(load_metrics(tmp_path), width=width)
        assert max(len(line) for line in text.splitlines()) <= width
        assert text.count("alphabeta:depth=6 75/25") == 40  # nothing cut off


def test_the_pattern_picks_experiments_and_no_results_says_what_to_run(tmp_path):
    assert "run `make repro`" in render(load_metrics(tmp_path))
    write(tmp_path, "connect4_dqn")
    write(tmp_path, "tictactoe_dqn")
    assert list(load_metrics(tmp_path, "connect4")) == ["connect4_dqn"]


def test_cli_prints_the_table_and_json(tmp_path):
    write(tmp_path, "connect4_dqn")
    out = CliRunner().invoke(app, ["results", "--root", str(tmp_path)])
    assert out.exit_code == 0 and "connect4_dqn" in out.output and "maxmin 65/25" in out.output
    out = CliRunner().invoke(app, ["results", "--root", str(tmp_path), "--json"])
    assert json.loads(out.output)["connect4_dqn"]["vs:maxmin"] == {"win": 0.65, "loss": 0.25}
