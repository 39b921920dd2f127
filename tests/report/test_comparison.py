"""The reference systems' tables' verdicts: where a published figure sits against our pooled 95% interval."""

from __future__ import annotations

import dataclasses

import pytest

from boardrl.evaluate.stats import wilson_interval as wilson
from boardrl.report.comparison import Notes, Pooled, judged, verdict
from boardrl.report.links import Links
from boardrl.report.reference_systems import REFERENCE_NUMBERS


def _row(**changes):
    base = next(n for n in REFERENCE_NUMBERS if n.system == "004" and n.opponent == "flip" and n.seat == "as_first")
    return dataclasses.replace(base, **changes)


def test_the_table_uses_the_known_wilson_interval():
    lo, hi = wilson(0, 100)
    assert lo == 0.0 and hi == pytest.approx(0.0370, abs=1e-4)  # 0 of 100: [0, 3.7%]
    lo, hi = wilson(50, 100)
    assert (lo, hi) == (pytest.approx(0.4038, abs=1e-4), pytest.approx(0.5962, abs=1e-4))


@pytest.mark.parametrize("wins, published, expected", [
    (0, 0.0, "reproduced"),  # 0 of 100 against a published 0-100: on the interval's end
    (100, 1.0, "reproduced"),
    (60, 0.17, "beaten"),
    (5, 0.43, "not reached"),
])
def test_verdict_by_where_the_published_figure_sits(wins, published, expected):
    p = Pooled(wins, 0, 100 - wins, 1, {})
    value, lo, hi = p.measure("win")
    text = verdict(_row(value=published, reason=None), lo, hi, value)
    assert text == expected


def test_a_reason_is_a_note_after_a_difference_but_not_after_a_reproduction():
    p = Pooled(5, 0, 95, 1, {})
    notes = Notes()
    differs = judged(_row(value=0.43, reason="why"), p, Links(), notes, best=False)
    same = judged(_row(value=0.05, reason="why"), p, Links(), notes, best=False)
    assert [s.text for s in differs[1:]] == [" → not reached", " ¹"]
    assert [s.text for s in same[1:]] == [" → reproduced"]
    assert notes.texts == ["Why ours differs: why."]


def test_a_note_said_twice_keeps_its_first_number():
    notes = Notes()
    marks = [notes.mark(t).text for t in ("a", "b", "a", "c", "b")] + [notes.mark(f"n{k}").text for k in range(8)]
    assert marks[:5] == [" ¹", " ²", " ¹", " ³", " ²"] and marks[-1] == " ¹¹"
    assert notes.texts[:3] == ["a", "b", "c"]
    listed = notes.since(3)[0]
    assert listed.start == 3 and [item[0].text for item in listed.items][:2] == ["c", "n0"]
    assert notes.since(len(notes.texts) + 1) == []


def test_loss_is_lower_is_better_and_marks_are_pass_or_fail():
    p = Pooled(0, 90, 10, 1, {})
    value, lo, hi = p.measure("loss")
    assert verdict(_row(measure="loss", value=0.4, reason=None), lo, hi, value) == "beaten"
    assert verdict(_row(measure="win_draw", value=0.5, threshold=True), *p.measure("win_draw")[1:],
                   p.measure("win_draw")[0]) == "passes the system's mark"


def test_score_interval_is_a_normal_interval_of_the_per_game_score():
    p = Pooled(60, 20, 20, 1, {})
    mean, lo, hi = p.measure("score")
    assert mean == pytest.approx(0.7) and lo < mean < hi and hi - lo == pytest.approx(2 * 1.96 * (0.16 / 100) ** 0.5,
                                                                                       rel=1e-3)
