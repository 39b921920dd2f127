"""The reference systems' published numbers as data: every row points at a real game, opponent and seat of ours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boardrl.agents import agent_names
from boardrl.games import make_game
from boardrl.report import html, markdown
from boardrl.report.document import Bullets, Span, Table, text
from boardrl.report.reference_systems import BEST, DEVIATIONS, REFERENCE_NUMBERS

ROOT = Path(__file__).resolve().parents[2]


def test_every_row_names_a_real_game_opponent_and_seat():
    for n in REFERENCE_NUMBERS:
        game = make_game(n.game)
        assert n.seat in ("as_first", "as_second", "combined"), n
        if n.opponent is not None:
            name = n.opponent.partition(":")[0]
            assert name in agent_names(game), (n.game, n.opponent)
        assert (n.metric == "uci_win") == (n.uci_label is not None), n
        assert n.published and n.source.startswith("SEEDS.md seed " + n.system), n


def test_reproductions_are_experiment_ids_or_tournaments_of_params_yaml():
    import yaml

    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    named = {r for n in REFERENCE_NUMBERS for r in n.reproduction}
    for ref in named:
        if ref.startswith("tournament:"):
            assert ref.removeprefix("tournament:") in params["tournaments"], ref
    assert all(kind in ("tabular", "neural", "alphazero", "baseline") for kind in {n.kind for n in REFERENCE_NUMBERS})
    assert all(n.kind == "baseline" for n in REFERENCE_NUMBERS
               if any(r.startswith("tournament:") for r in n.reproduction))


def test_rows_cover_every_reference_system_and_its_headlines():
    assert {n.system for n in REFERENCE_NUMBERS} == {"000", "001", "002", "003", "004"}
    keys = [(n.system, n.game, n.agent, n.protocol, n.opponent, n.seat, n.metric, n.uci_label)
            for n in REFERENCE_NUMBERS]
    assert len(set(keys)) == len(keys)  # no figure twice
    pub = {(n.system, n.game, n.agent, n.opponent, n.seat, n.metric): n for n in REFERENCE_NUMBERS}
    # reference system 002 prints agent W / opponent W / tie: 93.17 / 0.20 / 6.63 becomes W / D / L 93.17 / 6.63 / 0.20
    qt = pub[("002", "tictactoe", "QT, trained vs a second QT (README headline)", "random", "combined", "wdl")]
    assert qt.published == "93.17 / 6.63 / 0.20" and qt.value == pytest.approx(0.9317) and qt.compared == "win"
    assert qt.budget == "200,000 games" and qt.reproduction == ("tictactoe_seed002_qt_vs_qt",)
    snap = pub[("002", "tictactoe", "QT, self-play snapshots", "maxmin", "combined", "wdl")]
    assert snap.compared == "loss" and snap.value == pytest.approx(0.384)  # vs MaxMin: how often it loses
    mq = pub[("004", "conniption", "MinimaxQ (one table per opponent and seat)", "flip", "as_first", "win")]
    assert mq.published == "100-0 (headline)" and mq.value == 1.0
    assert mq.reproduction == ("conniption_seed004_minimaxq_flip",)
    adv = pub[("001", "dots_and_boxes_3x3", "Q-table (rewards: +1 per box, +5 win, −1 loss), self-play",
               "advanced", "combined", "win_draw")]
    assert adv.published == "W+D >= 25%" and adv.threshold and adv.our_choice
    uci = sorted(n.published for n in REFERENCE_NUMBERS if n.metric == "uci_win")
    assert uci == ["90% (45% before training)", "92% (50% before training)", "94% (56% before training)"]
    assert all(n.kind == "neural" for n in REFERENCE_NUMBERS if n.metric == "uci_win")


def test_system004_benchmark_is_the_published_table():
    from boardrl.report.reference_systems import SYSTEM004_BENCHMARK

    assert len(SYSTEM004_BENCHMARK) == 25
    flip_second = sum(SYSTEM004_BENCHMARK[(a, "flip")][1] for a in ("hybrid", "cells", "sols", "conniption_random"))
    assert flip_second == 391  # SEEDS.md: Flip as P2 won 391 of 400
    assert SYSTEM004_BENCHMARK[("conniption_random", "conniption_random")] == (60, 40)


def test_deviations_point_at_existing_modules_and_cover_every_system():
    for d in DEVIATIONS:  # a module of src/boardrl, or a file of the project (params.yaml: the budgets)
        assert (ROOT / "src" / "boardrl" / d.where).exists() or (ROOT / d.where).is_file(), d.where
    assert {d.system for d in DEVIATIONS} == {"000", "001", "002", "003", "004", "all"}


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


def test_every_row_sets_beside_it_only_experiments_judged_on_its_protocol():
    """The kind check's other half: an experiment beside a reference row (its reproduction, or our best of its kind)
    plays that row's opponent in its ladder, in the default and the full profile; else the row would compare a
    figure with nothing (its cell: "not evaluated on this protocol")."""
    from boardrl.config import parse_params
    from boardrl.experiments.profiles import effective_params

    for profile in ("default", "full"):
        p = parse_params(effective_params(ROOT, profile))
        for n in REFERENCE_NUMBERS:
            if n.kind == "baseline" or n.metric in ("trace", "uci_win") or not n.opponent:
                continue
            beside = [r for r in n.reproduction if r in p.experiments] + [BEST.get((n.game, n.kind))]
            for exp_id in filter(None, beside):
                ladder = {o.agent for o in p.spec(exp_id).ladder}
                assert n.opponent in ladder, (profile, n.system, n.agent, n.opponent, exp_id)
