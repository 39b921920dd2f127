"""The seeds' published numbers beside ours: each ``SeedNumber`` matched to our experiments by game and learner.

Why by (game, learner): several experiments may share a game and a learner (different params, budgets); each
gets its own row, labelled with its experiment id, so none hides another.  A seed row without a learner of ours
(``SeedNumber.learner is None``) is compared with every experiment on its game.  Our figure is each evaluated
seed's, from the same seat against the same opponent, linked to that seed's evaluate run.
"""

from __future__ import annotations

from typing import Any

from boardrl.report.document import Inline, Span, Table, text
from boardrl.report.links import Links, pct, rate_with_ci
from boardrl.report.results import Experiment, SeedResult, finite
from boardrl.report.seeds import SEED_NUMBERS, SeedNumber
from boardrl.report.sections import SEAT_NAMES


def _games(stats: dict[str, Any]) -> Span:
    return Span(f" ({int(stats['games']):,} games)")


def ours_of_seed(n: SeedNumber, s: SeedResult, links: Links) -> Inline | None:
    """One seed's figure of the same kind on the same protocol, or None when it has none."""
    prov = s.eval_provenance
    if n.metric == "uci_win":
        stats = (s.uci.get("seed000") or {}).get(n.uci_label)
        return None if stats is None else [links.number(rate_with_ci(stats, "win"), prov), _games(stats)]
    block = s.opponents.get(n.opponent or "")
    if block is None:
        return None
    stats = block[n.seat]
    shown = figure_text(n.metric, stats)
    return None if shown is None else [links.number(shown, prov), _games(stats)]


def figure_text(metric: str, stats: dict[str, Any]) -> str | None:
    """Our seat block printed as the seed printed its figure (W/D/L in percent, W+D, or score)."""
    w, d, l = (finite(stats.get(k)) or 0.0 for k in ("win", "draw", "loss"))
    if metric == "win":
        return rate_with_ci(stats, "win")
    if metric == "wdl":
        return f"{100 * w:.2f} / {100 * d:.2f} / {100 * l:.2f}"
    if metric == "win_draw":
        return f"W+D {pct(w + d)}"
    if metric == "score":
        return f"{w + 0.5 * d:.3f}"
    return None


def ours(n: SeedNumber, e: Experiment, links: Links) -> Inline | None:
    """Each evaluated seed's figure (``seed k: ...`` when there are several), or None when no seed has one."""
    found = [(k, f) for k, s in e.evaluated.items() if (f := ours_of_seed(n, s, links)) is not None]
    if len(found) <= 1:
        return found[0][1] if found else None
    out: Inline = []
    for i, (k, f) in enumerate(found):
        out += [Span("; ")] if i else []
        out += [Span(f"seed {k}: "), *f]
    return out


def matches(n: SeedNumber, e: Experiment) -> bool:
    """Whether experiment ``e`` is a counterpart of seed row ``n``: same game, and same learner if it names one."""
    return e.game == n.game and (n.learner is None or n.learner == e.learner)


def seeds_table(exps: list[Experiment], links: Links) -> Table:
    """Every published figure, one row per matching experiment of ours (or ``not run yet``)."""
    rows = []
    for n in SEED_NUMBERS:
        base = [text(n.seed), text(n.game), text(n.agent), text(n.protocol), text(n.opponent or "-"),
                text(SEAT_NAMES[n.seat]), text(n.published)]
        if n.metric == "text":
            note = [Span(n.ours_note, code=True)] if n.ours_note else text("not run yet")
            rows.append([*base, text("-"), note, text(n.source)])
            continue
        found = [(e, f) for e in exps if matches(n, e) and (f := ours(n, e, links)) is not None]
        if not found:
            rows.append([*base, text("-"), text("not run yet"), text(n.source)])
        rows += [[*base, [Span(e.id, code=True)], f, text(n.source)] for e, f in found]
    header = ["Seed", "Game", "Seed's agent", "Seed's protocol", "Opponent", "Seat", "Published", "Our experiment",
              "Ours", "Source"]
    return Table(header, rows)
