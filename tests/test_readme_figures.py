"""No result figure is typed by hand in README.md or in the comments of params.yaml and profiles/*.yaml.

Why: a hand-typed win rate goes stale the moment the pipeline reruns, and nothing tells the reader.  Results
belong in generated text: README's blocks between ``<!-- <name>:start -->`` and ``<!-- <name>:end -->`` (the
headline table, tests/report/test_headline.py), the report, and the records under docs/studies/.  Budgets and
settings are fine ("1,000 games", "alpha 0.1"); a percentage is not, nor a tally of games won or lost, nor a
score.  A confidence level ("95% Wilson intervals") is a setting, not a result.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FIGURES = (
    re.compile(r"\d(?:[\d,.]*\d)?\s*%"),  # 93.8%, 100 / 100%
    re.compile(r"\b(?:won|lost|drew|wins|loses|draws|losses)\s+(?:all\s+)?\d[\d,]*\s+(?:of|games|out)\b", re.I),
    re.compile(r"\bscores?\s+(?:of\s+)?[01]?\.\d+", re.I),  # score 0.65
)
#: A confidence level names how an interval is computed: a setting of the method, not a result.
CONFIDENCE = re.compile(r"\b\d{2}(?:\.\d+)?%\s+(?:Wilson|interval|confidence|CI\b|percentile|bootstrap)", re.I)
GENERATED = re.compile(r"<!-- ([\w-]+):start -->.*?<!-- \1:end -->", re.S)


def figures(line: str) -> list[str]:
    """The result figures ``line`` states by hand."""
    line = CONFIDENCE.sub("", line)
    return [m.group(0) for pattern in FIGURES for m in pattern.finditer(line)]


def markdown_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside the generated blocks."""
    blanked = GENERATED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return list(enumerate(blanked.splitlines(), start=1))


def yaml_comments(text: str) -> list[tuple[int, str]]:
    """(line number, comment) of a YAML file: what follows a ``#`` at the start of a line or after a space."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        m = re.search(r"(?:^|\s)#(.*)$", line)
        if m:
            out.append((number, m.group(1)))
    return out


def hand_typed(path: Path) -> list[str]:
    text = path.read_text()
    lines = markdown_lines(text) if path.suffix == ".md" else yaml_comments(text)
    return [f"{path.relative_to(ROOT)}:{n}: {', '.join(found)}: {line.strip()[:120]}"
            for n, line in lines if (found := figures(line))]


@pytest.mark.parametrize("name", ["README.md", "params.yaml", *sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "profiles").glob("*.yaml"))])
def test_no_hand_typed_result_figure(name):
    found = hand_typed(ROOT / name)
    assert not found, ("result figures typed by hand (move them to a generated block, the report or "
                       "docs/studies/):\n" + "\n".join(found))


@pytest.mark.parametrize("line", [
    "wins 95.6% [94.6, 96.4] (96.7% as first)", "maxmin 100 / 100% wins", "the seed's 98.45 / 20.24 / 2.35 %",
    "lost all 6 games as second", "won 12 games of 12", "random vs random (score 0.65 first / 0.35 second)"])
def test_figures_are_found(line):
    assert figures(line)


@pytest.mark.parametrize("line", [
    "per-seat results with 95% Wilson intervals", "a 95% percentile-bootstrap interval", "games: 1000",
    "lr 0.2, eps 0.2, gamma 0.97, tie 0.2 / 0.5", "1,000 games, seats alternating", "seeds 0-4, 10,000 games"])
def test_settings_are_not_figures(line):
    assert not figures(line)


def test_generated_blocks_are_skipped():
    text = "intro 12%\n<!-- headline:start -->\nwins 99%\n<!-- headline:end -->\nafter\n"
    assert [n for n, line in markdown_lines(text) if figures(line)] == [1]
