"""The reference systems' tables: each published figure beside the experiment that reproduces that system, and our
best of its kind.

Why this shape (issue "an honest seed table"): a reference system's figure may stand only beside the same kind
of system on the same protocol.  So each row (a ``ReferenceNumber``) shows

* **reproduction**: the experiment(s) ``ReferenceNumber.reproduction`` names, which reproduce that very system on
  the system's protocol and budget, or "none yet";
* **best**: our best experiment of the same kind on the same game (``reference_systems.BEST``), on the same protocol;
* both training budgets (the system's and ours), and a **verdict** per comparison: "reproduced" (for our best:
  "level") when the published figure lies inside our 95% interval, "beaten" when our whole interval is better, "not reached" when
  it is worse (a system's pass mark: "passes" / "fails"), with the reason where a protocol difference or a fixed
  bug of the system explains it.

Why compact (issue 38): one table per reference system, introduced once (``reference_systems.SYSTEMS``); a row per
published figure, its game and system printed only where they change; protocols and reasons in numbered notes,
each text said once and its number reused (``Notes``), instead of a paragraph repeated in every row.

Our figure pools the games of every evaluated training seed (so the interval covers all of them): a Wilson
interval for rates, a normal interval for the score (win 1, draw 1/2).  An experiment whose learner is of
another kind than the row is never shown (``check_kind``), and a baseline row is compared only with our
baseline (a ``tournament:<id>`` round robin of fixed players), never with a learner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from boardrl.errors import BoardRLError
from boardrl.evaluate.stats import wilson_interval, z_for
from boardrl.report.document import Block, Bullets, Heading, Inline, Paragraph, Span, Table, text
from boardrl.report.evaluation import SeatReading
from boardrl.report.links import Links
from boardrl.report.reference_systems import (BEST, FULL_PROFILE_ONLY, LEARNER_KINDS, REFERENCE_NUMBERS, SYSTEMS,
                                              ReferenceNumber)
from boardrl.report.results import OUTCOMES, Experiment, SeedResult, finite
from boardrl.report.sections import SEAT_NAMES, budget_text

Z95 = z_for(0.95)
TOURNAMENT = "tournament:"
#: Rounding slack when a published figure sits on an interval's end (0 of 100 games: [0, 3.7%], lower end 0).
EDGE = 1e-9


@dataclass(frozen=True)
class Pooled:
    """W/D/L counts of our side over every evaluated seed (or a tournament's games)."""

    wins: int
    draws: int
    losses: int
    seeds: int
    prov: dict[str, Any]

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def measure(self, what: str) -> tuple[float, float, float]:
        """(value, lo, hi) of ``what`` (win, win_draw, loss: Wilson; score: normal) with 95% confidence."""
        n = self.games
        if what == "score":
            mean = (self.wins + 0.5 * self.draws) / n
            second = (self.wins + 0.25 * self.draws) / n
            half = Z95 * math.sqrt(max(second - mean * mean, 0.0) / n)
            return mean, max(0.0, mean - half), min(1.0, mean + half)
        k = {"win": self.wins, "win_draw": self.wins + self.draws, "loss": self.losses}[what]
        return (k / n, *wilson_interval(k, n))

    def wdl_text(self) -> str:
        n = self.games
        return " / ".join(f"{100 * c / n:.2f}" for c in (self.wins, self.draws, self.losses))


def _counts(stats: SeatReading) -> tuple[int, int, int]:
    return tuple(int(round((finite(stats.rate(out)) or 0.0) * stats.games)) for out in OUTCOMES)  # type: ignore


def _seat(n: ReferenceNumber, s: SeedResult) -> SeatReading | None:
    """Seed ``s``'s seat block on row ``n``'s protocol: a UCI label of reference system 000's, or a seat against
    its opponent."""
    if n.metric == "uci_win":
        return ((s.uci.seed000 if s.uci is not None else None) or {}).get(n.uci_label or "")
    match = s.opponents.get(n.opponent or "")
    return match.seats.get(n.seat) if match is not None else None


def pooled_experiment(n: ReferenceNumber, e: Experiment) -> Pooled | None:
    """Our counts on row ``n``'s protocol, pooled over the evaluated seeds of ``e``; None when none has them."""
    blocks = []
    for s in e.evaluated.values():
        block = _seat(n, s)
        if block is not None and block.games:
            blocks.append((block, s.eval_provenance))
    if not blocks:
        return None
    w, d, l = (sum(c) for c in zip(*(_counts(b) for b, _ in blocks)))
    return Pooled(w, d, l, len(blocks), blocks[0][1])


def pooled_tournament(n: ReferenceNumber, t: dict[str, Any]) -> Pooled | None:
    """The reference agent's side of a baseline round robin: the pairing of its first agent against the opponent."""
    me = t["agents"][0]
    first, second = (me, n.opponent) if n.seat == "as_first" else (n.opponent, me)
    for p in t["pairings"]:
        if (p["first"], p["second"]) == (first, second):
            mine, theirs = ((p["first_wins"], p["second_wins"]) if n.seat == "as_first"
                            else (p["second_wins"], p["first_wins"]))
            return Pooled(mine, p["draws"], theirs, 1, t.get("provenance") or {})
    return None


DIFFERENT = ("beaten", "not reached")


def verdict(n: ReferenceNumber, lo: float, hi: float, value: float, *, best: bool = False) -> str:
    """Where the published figure sits against our interval (see the module docstring); the reason, where one
    explains a difference, is a note of its own (``Notes``)."""
    if n.value is None:
        return "no number published to compare"
    lower_better = n.compared == "loss"
    if n.threshold:
        ok = value <= n.value + EDGE if lower_better else value >= n.value - EDGE
        return "passes the system's mark" if ok else "fails the system's mark"
    if lo - EDGE <= n.value <= hi + EDGE:
        return "level" if best else "reproduced"
    better = n.value > hi if lower_better else n.value < lo
    return "beaten" if better else "not reached"


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


class Notes:
    """The reference systems' tables' numbered notes: each text gets one number, reused by every row it applies to."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, note: str) -> Span:
        """The superscript number of ``note`` (numbered on first use)."""
        if note not in self.texts:
            self.texts.append(note)
        return Span(" " + str(self.texts.index(note) + 1).translate(_SUPERSCRIPT))

    def since(self, start: int) -> list[Block]:
        """The notes numbered from ``start`` on (those a table added), as a numbered list."""
        new = self.texts[start - 1:]
        return [Bullets([text(t) for t in new], start=start)] if new else []


def protocol_note(n: ReferenceNumber) -> str:
    return f"Protocol: {n.protocol}" + ("; our choice, the system does not state it" if n.our_choice else "") + "."


def reason_note(n: ReferenceNumber) -> str:
    return f"Why ours differs: {n.reason}."


def figure_text(n: ReferenceNumber, p: Pooled) -> str:
    """Our pooled figure printed as the system printed its own, with the compared measure's interval."""
    what = n.compared or "win"
    value, lo, hi = p.measure(what)
    label = {"win": "win", "win_draw": "W+D", "loss": "loss", "score": "score"}[what]
    shown = (f"{value:.3f} [{lo:.3f}, {hi:.3f}]" if what == "score"
             else f"{label} {100 * value:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]")
    if n.metric == "wdl":
        shown = f"{p.wdl_text()}; {shown}"
    per = f"{p.games // p.seeds:,}" if p.games % p.seeds == 0 else f"{p.games:,} in all"
    games = f"{p.seeds} seeds x {per} games" if p.seeds > 1 else f"{p.games:,} games"
    return f"{shown} ({games})"


def check_kind(n: ReferenceNumber, e: Experiment) -> None:
    """Refuse to set an experiment beside a reference row of another kind or game (a bug in reference_systems.py)."""
    kind = LEARNER_KINDS.get(e.learner)
    if kind != n.kind or e.game != n.game:
        raise BoardRLError(f"reference systems' table: experiment {e.id!r} ({e.game}, {kind or 'unknown kind'}) "
                           f"cannot stand beside reference system {n.system}'s {n.agent!r} ({n.game}, {n.kind})")


Trace = Callable[[ReferenceNumber, Experiment], tuple[str, str] | None]


def judged(n: ReferenceNumber, p: Pooled, links: Links, notes: Notes, best: bool) -> Inline:
    """Our pooled figure, linked to its run, and the verdict, with the note of its reason where it has one."""
    value, lo, hi = p.measure(n.compared or "win")
    said = verdict(n, lo, hi, value, best=best)
    why = [notes.mark(reason_note(n))] if n.reason and said in DIFFERENT else []
    return [links.number(figure_text(n, p), p.prov), Span(f" → {said}"), *why]


def _ours(n: ReferenceNumber, e: Experiment | None, exp_id: str, links: Links, notes: Notes, *, best: bool,
          trace: Trace) -> Inline:
    """One experiment of ours on row ``n``: its id (linked to its section), budget, figure and verdict."""
    if e is None and exp_id in FULL_PROFILE_ONLY:
        return [Span(exp_id, code=True), Span(": in the full profile only (make repro PROFILE=full)")]
    if e is None:
        return [links.experiment(exp_id), Span(": not run yet")]
    check_kind(n, e)
    who: Inline = [links.experiment(e.id), Span(f" ({budget_text(e)}): ")]  # its seeds: in the figure
    if n.metric == "trace":
        found = trace(n, e)
        return [*who, Span(f"{found[0]} → {found[1]}" if found else "not run yet")]
    p = pooled_experiment(n, e)
    return [*who, *(judged(n, p, links, notes, best) if p else text("not evaluated on this protocol"))]


def _tournament(n: ReferenceNumber, ref: str, tournaments: dict[str, dict[str, Any]], links: Links,
                notes: Notes) -> Inline:
    tid = ref.removeprefix(TOURNAMENT)
    t = tournaments.get(tid)
    p = pooled_tournament(n, t) if t is not None else None
    who: Inline = [Span(f"tournament@{tid}", code=True), Span(" (no training): ")]
    return [*who, *(judged(n, p, links, notes, False) if p else text("not run yet"))]


def _no_trace(n: ReferenceNumber, e: Experiment) -> None:
    return None


def _joined(parts: list[Inline]) -> Inline:
    out: Inline = []
    for i, part in enumerate(parts):
        out += ([Span("; ")] if i else []) + part
    return out


def reproduction_cell(n: ReferenceNumber, exps: dict[str, Experiment], tournaments: dict[str, dict[str, Any]],
                      links: Links, notes: Notes, trace: Trace = _no_trace) -> Inline:
    """Every reproduction of ``n`` (several when the system reported one figure for several budgets)."""
    if not n.reproduction:
        return text(f"none yet (no {n.kind} reproduction)")
    return _joined([_tournament(n, ref, tournaments, links, notes) if ref.startswith(TOURNAMENT)
                    else _ours(n, exps.get(ref), ref, links, notes, best=False, trace=trace)
                    for ref in n.reproduction])


def best_cell(n: ReferenceNumber, exps: dict[str, Experiment], links: Links, notes: Notes,
              trace: Trace = _no_trace) -> Inline:
    """Our best of ``n``'s kind on its game; "-" for a baseline or a Q-value trace (a property of the system's
    run from its position s0, not of an agent)."""
    best_id = BEST.get((n.game, n.kind)) if n.kind != "baseline" and n.metric != "trace" else None
    if best_id is None:
        return text("-")
    return _ours(n, exps.get(best_id), best_id, links, notes, best=True, trace=trace)


REFERENCE_TABLE_HEADER = ["Game", "System (its budget)", "Opponent, seat", "Published",
                          "Our reproduction: ours → verdict", "Our best of its kind: ours → verdict"]


def reference_row(n: ReferenceNumber, before: ReferenceNumber | None, exps: dict[str, Experiment],
                  tournaments: dict[str, dict[str, Any]], links: Links, notes: Notes, trace: Trace = _no_trace
                  ) -> list[Inline]:
    """One published figure; its game and system are left blank where the row above ``before`` has them."""
    same_game = before is not None and before.game == n.game
    same_system = same_game and (before.agent, before.budget) == (n.agent, n.budget)
    system = n.agent + ("" if n.budget == "none" else f" ({n.budget})")
    against = f"{n.opponent}, {SEAT_NAMES[n.seat]}" if n.opponent else SEAT_NAMES[n.seat]
    against += f", from UCI {n.uci_label} positions" if n.uci_label else ""
    return [text("" if same_game else n.game), text("" if same_system else system), text(against),
            [Span(n.published, title=n.source), notes.mark(protocol_note(n))],
            reproduction_cell(n, exps, tournaments, links, notes, trace), best_cell(n, exps, links, notes, trace)]


def reference_table(system: str, exps: dict[str, Experiment], tournaments: dict[str, dict[str, Any]],
                    links: Links, notes: Notes, trace: Trace = _no_trace) -> Table:
    """Every published figure of reference system ``system``, in SEEDS.md's order."""
    rows, before = [], None
    for n in (n for n in REFERENCE_NUMBERS if n.system == system):
        rows.append(reference_row(n, before, exps, tournaments, links, notes, trace))
        before = n
    return Table(REFERENCE_TABLE_HEADER, rows)


def reference_blocks(exps: list[Experiment], tournaments: dict[str, dict[str, Any]], links: Links,
                     trace: Trace = _no_trace) -> list[Block]:
    """A subsection per reference system: what it was, its figures beside ours, and the notes it added."""
    by_id = {e.id: e for e in exps}
    notes = Notes()
    out: list[Block] = []
    for key in dict.fromkeys(n.system for n in REFERENCE_NUMBERS):
        system = SYSTEMS[key]
        start = len(notes.texts) + 1
        table = reference_table(key, by_id, tournaments, links, notes, trace)
        out += [Heading(3, f"Reference system {key}: {system.title}"), Paragraph(text(system.what)), table,
                *notes.since(start)]
    return out
