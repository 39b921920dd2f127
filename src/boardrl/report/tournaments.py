"""Round robins of fixed players (stage tournament@<id>) in the report, beside the reference system's table where
one exists.

Why: reference system 004 validated its Conniption benchmark players with a fixed-seat round robin before
comparing any learner with them.  Showing our round robin cell by cell beside the system's
(``reference_systems.SYSTEM004_BENCHMARK``), and each player's totals per seat (the system's claims: P1 wins
between non-random heuristics, Flip as P2 won 391 of 400, Flip as P1 undefeated, Random's totals), checks our
engine and players against the system's before the learners' numbers mean anything.
"""

from __future__ import annotations

from typing import Any

from boardrl.report.document import Block, Heading, Inline, Paragraph, Span, Table, text
from boardrl.report.links import Links
from boardrl.report.reference_systems import SYSTEM004_BENCHMARK

#: The published round robin each tournament is compared with: (game, agents) -> {(P1, P2): (P1 wins, P2 wins)}.
PUBLISHED: dict[str, tuple[str, dict[tuple[str, str], tuple[int, int]]]] = {
    "conniption": ("reference system 004 (SEEDS.md, Benchmarks, log/results_16_5evals.csv)", SYSTEM004_BENCHMARK),
}


def _cell(p: dict[str, Any], published: tuple[int, int] | None) -> Inline:
    ours = f"{p['first_wins']}-{p['second_wins']}" + (f" ({p['draws']} draws)" if p["draws"] else "")
    return text(ours if published is None else f"{ours} (published {published[0]}-{published[1]})")


def matrix_table(t: dict[str, Any], published: dict[tuple[str, str], tuple[int, int]] | None) -> Table:
    """Rows move first, columns second; each cell P1 wins - P2 wins, the published count beside ours."""
    cells = {(p["first"], p["second"]): p for p in t["pairings"]}
    rows = []
    for a in t["agents"]:
        row: list[Inline] = [[Span(a, code=True)]]
        for b in t["agents"]:
            p = cells.get((a, b))
            row.append(_cell(p, (published or {}).get((a, b))) if p else text("-"))
        rows.append(row)
    return Table(["P1 \\ P2", *t["agents"]], rows)


def _seat_total(pairs: dict[tuple[str, str], tuple[int, int]], agent: str, seat: str) -> tuple[int, int]:
    """(wins, games) of ``agent`` in ``seat`` over the reference system's pairings with other agents (its table
    has no draws, so a pairing's games are its two win counts; our totals come with the stage's file)."""
    wins = games = 0
    for (a, b), (wa, wb) in pairs.items():
        if a == b:
            continue
        if seat == "first" and a == agent:
            wins, games = wins + wa, games + wa + wb
        elif seat == "second" and b == agent:
            wins, games = wins + wb, games + wa + wb
    return wins, games


def totals_table(t: dict[str, Any], published: dict[tuple[str, str], tuple[int, int]] | None) -> Table:
    """Each agent's wins per seat against the others (self-pairings left out), ours and the reference system's."""
    draws = sum(p["draws"] for p in t["pairings"])
    rows = []
    for a in t["agents"]:
        row: list[Inline] = [[Span(a, code=True)]]
        for seat in ("first", "second"):
            ours = t["totals"][a][seat]  # the stage's seat totals (evaluate.tournament.seat_totals)
            row.append(text(f"{ours['wins']} of {ours['games']}"))
            if published is not None:
                sw, sg = _seat_total(published, a, seat)
                row.append(text(f"{sw} of {sg}"))
        rows.append(row)
    header = (["Agent", "Ours: wins as P1", "Reference system: wins as P1", "Ours: wins as P2",
               "Reference system: wins as P2"]
              if published is not None else ["Agent", "Wins as P1", "Wins as P2"])
    table = Table(header, rows, numeric=frozenset(range(1, len(header))))
    return table if not draws else Table(header + ["(draws in all)"], [r + [text(str(draws))] for r in rows])


def tournament_blocks(tournaments: dict[str, dict[str, Any]], links: Links) -> list[Block]:
    """A section per tournament: how it was played, the matrix, the totals per seat."""
    if not tournaments:
        return []
    out: list[Block] = [Heading(2, "Round robins of fixed players")]
    for tid, t in tournaments.items():
        source, published = PUBLISHED.get(t["game"], (None, None))
        if published is not None and not all((a, b) in published for a in t["agents"] for b in t["agents"]):
            source, published = None, None  # the reference system played other agents: nothing to set beside
        prov = t.get("provenance") or {}
        out += [
            Heading(3, f"{tid} ({t['game']})"),
            Paragraph([Span(f"{t['games']:,} games per ordered pairing from the initial position, the row agent "
                            "always moving first (fixed seats); counts are P1 wins - P2 wins. "),
                       *([Span(f"The published figures of {source} stand in brackets; some of its pairings had "
                               "109-132 games. ")] if published else []),
                       Span("Stage "), Span(f"tournament@{tid}", code=True), Span(": "),
                       *links.provenance(prov)]),
            matrix_table(t, published),
            totals_table(t, published),
        ]
    return out
