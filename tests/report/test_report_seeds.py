"""The seeds' published numbers as data: every row points at a real game, opponent and seat of ours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boardrl.agents import agent_names
from boardrl.games import make_game
from boardrl.learn import learner_names
from boardrl.report import html, markdown
from boardrl.report.document import Bullets, Span, Table, text
from boardrl.report.seeds import DEVIATIONS, SEED_NUMBERS

ROOT = Path(__file__).resolve().parents[2]


def test_every_row_names_a_real_game_opponent_and_seat():
    for n in SEED_NUMBERS:
        game = make_game(n.game)
        assert n.seat in ("as_first", "as_second", "combined"), n
        if n.opponent is not None:
            name = n.opponent.partition(":")[0]
            assert name in agent_names(game), (n.game, n.opponent)
        assert (n.metric == "uci_win") == (n.uci_label is not None), n
        assert n.published and n.source.startswith("SEEDS.md seed " + n.seed), n


def test_rows_that_name_a_learner_name_one_of_ours():
    names = learner_names()
    named = [n for n in SEED_NUMBERS if n.learner is not None]
    assert named and all(n.learner in names for n in named)


def test_rows_cover_every_seed_and_its_headlines():
    assert {n.seed for n in SEED_NUMBERS} == {"000", "001", "002", "003", "004"}
    keys = [(n.seed, n.game, n.agent, n.protocol, n.opponent, n.seat, n.metric, n.uci_label) for n in SEED_NUMBERS]
    assert len(set(keys)) == len(keys)  # no figure twice
    pub = {(n.seed, n.game, n.agent, n.opponent, n.seat, n.metric): n.published for n in SEED_NUMBERS}
    # seed 002 prints agent W / opponent W / tie: 93.17 / 0.20 / 6.63 becomes W / D / L 93.17 / 6.63 / 0.20
    assert pub[("002", "tictactoe", "QT, trained vs a second QT 200k (README headline)", "random", "combined",
                "wdl")] == "93.17 / 6.63 / 0.20"
    assert pub[("004", "conniption", "MinimaxQ (1,382 games)", "flip", "as_first", "win")] == "100-0 (headline)"
    assert pub[("001", "dots_and_boxes_2x2", "Q-table / DQN homework", "advanced", "combined", "win")] == "78.54%"
    assert pub[("001", "dots_and_boxes_3x3", "Q-table / DQN homework", "advanced", "combined", "win_draw")] == \
        "W+D >= 25%"
    uci = sorted(n.published for n in SEED_NUMBERS if n.metric == "uci_win")
    assert uci == ["90% (45% before training)", "92% (50% before training)", "94% (56% before training)"]


def test_reproduction_notes_name_tests_that_exist():
    for n in SEED_NUMBERS:
        if n.ours_note:
            path, _, name = n.ours_note.removeprefix("reproduced: ").partition("::")
            source = (ROOT / path).read_text()
            assert re.search(rf"^def {name}\(", source, re.M), n.ours_note


def test_deviations_point_at_existing_modules():
    for d in DEVIATIONS:
        assert (ROOT / "src" / "boardrl" / d.where).exists(), d.where


@pytest.mark.parametrize("render", [markdown.render, lambda b: html.render(b, "t")])
def test_renderers_escape_table_and_markup_characters(render):
    link = Span("link", href="http://h/?a=1&b=2", title='say "hi"')
    blocks = [Table(["a|b"], [[text("x|y <b>")]]), Bullets([[link]])]
    out = render(blocks)
    if render is markdown.render:
        assert "x\\|y \\<b>" in out and "| a\\|b |" in out
        assert '[link][r1]' in out and "[r1]: <http://h/?a=1&b=2> \"say 'hi'\"" in out
    else:
        assert "x|y &lt;b&gt;" in out and 'href="http://h/?a=1&amp;b=2"' in out and 'title="say &quot;hi&quot;"' in out
