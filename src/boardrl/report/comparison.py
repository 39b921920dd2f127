"""The seed table: each published figure beside the experiment that reproduces that system, and our best of its kind.

Why this shape (issue: an honest seed table): a seed's figure may stand only beside the same kind of system on
the same protocol.  So each row (a ``SeedNumber``) shows

* **reproduction**: the experiment(s) ``SeedNumber.reproduction`` names, which reproduce that very system on the
  seed's protocol and budget, or "not run yet";
* **best**: our best experiment of the same kind on the same game (``seeds.BEST``), on the same protocol;
* both training budgets (the seed's and ours), and a **verdict** per comparison: "reproduced" when the
  published figure lies inside our 95% interval, "beaten" when our whole interval is better, "not reached" when
  it is worse (a seed's pass mark: "passes" / "fails"), with the reason where a protocol difference or a fixed
  seed bug explains it.

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
from boardrl.report.document import Inline, Span, Table, text
from boardrl.report.links import Links
from boardrl.report.results import Experiment, finite
from boardrl.report.sections import SEAT_NAMES, budget_text
from boardrl.report.seeds import BEST, LEARNER_KINDS, SEED_NUMBERS, SeedNumber

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


def _counts(stats: dict[str, Any]) -> tuple[int, int, int]:
    games = int(stats.get("games") or 0)
    return tuple(int(round((finite(stats.get(k)) or 0.0) * games)) for k in ("win", "draw", "loss"))  # type: ignore


def pooled_experiment(n: SeedNumber, e: Experiment) -> Pooled | None:
    """Our counts on row ``n``'s protocol, pooled over the evaluated seeds of ``e``; None when none has them."""
    blocks = []
    for s in e.evaluated.values():
        if n.metric == "uci_win":
            block = (s.uci.get("seed000") or {}).get(n.uci_label or "")
        else:
            block = (s.opponents.get(n.opponent or "") or {}).get(n.seat)
        if block and block.get("games"):
            blocks.append((block, s.eval_provenance))
    if not blocks:
        return None
    w, d, l = (sum(c) for c in zip(*(_counts(b) for b, _ in blocks)))
    return Pooled(w, d, l, len(blocks), blocks[0][1])


def pooled_tournament(n: SeedNumber, t: dict[str, Any]) -> Pooled | None:
    """The seed agent's side of a baseline round robin: the pairing of its first agent against the opponent."""
    me = t["agents"][0]
    first, second = (me, n.opponent) if n.seat == "as_first" else (n.opponent, me)
    for p in t["pairings"]:
        if (p["first"], p["second"]) == (first, second):
            mine, theirs = ((p["first_wins"], p["second_wins"]) if n.seat == "as_first"
                            else (p["second_wins"], p["first_wins"]))
            return Pooled(mine, p["draws"], theirs, 1, t.get("provenance") or {})
    return None


def verdict(n: SeedNumber, lo: float, hi: float, value: float, *, best: bool = False) -> str:
    """Where the published figure sits against our interval (see the module docstring)."""
    if n.value is None:
        return "no number published to compare"
    lower_better = n.compared == "loss"
    if n.threshold:
        ok = value <= n.value + EDGE if lower_better else value >= n.value - EDGE
        return "passes the seed's mark" if ok else "fails the seed's mark"
    if lo - EDGE <= n.value <= hi + EDGE:
        out = "level with the seed (within the interval)" if best else "reproduced (within the interval)"
        return out
    better = n.value > hi if lower_better else n.value < lo
    out = "beaten" if better else "not reached"
    return f"{out}: {n.reason}" if n.reason else out


def figure_text(n: SeedNumber, p: Pooled) -> str:
    """Our pooled figure printed as the seed printed its own, with the compared measure's interval."""
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


def check_kind(n: SeedNumber, e: Experiment) -> None:
    """Refuse to set an experiment beside a seed row of another kind or game (a bug in seeds.py)."""
    kind = LEARNER_KINDS.get(e.learner)
    if kind != n.kind or e.game != n.game:
        raise BoardRLError(f"seed table: experiment {e.id!r} ({e.game}, {kind or 'unknown kind'}) cannot stand "
                           f"beside seed {n.seed}'s {n.agent!r} ({n.game}, {n.kind})")


def _experiment_cells(n: SeedNumber, e: Experiment | None, exp_id: str, links: Links, *, best: bool,
                      trace: Callable[[SeedNumber, Experiment], tuple[str, str] | None]) -> list[Inline]:
    """[who (our budget), ours -> verdict] for one experiment of ours."""
    if e is None:
        return [[Span(exp_id, code=True)], text("not run yet")]
    check_kind(n, e)
    who: Inline = [Span(e.id, code=True), Span(f" ({budget_text(e)} x {len(e.seeds)} seed"
                                              f"{'s' if len(e.seeds) != 1 else ''})")]
    if n.metric == "trace":
        found = trace(n, e)
        return [who, text(f"{found[0]} → {found[1]}")] if found else [who, text("not run yet")]
    p = pooled_experiment(n, e)
    if p is None:
        return [who, text("not evaluated on this protocol")]
    value, lo, hi = p.measure(n.compared or "win")
    return [who, [links.number(figure_text(n, p), p.prov), Span(f" → {verdict(n, lo, hi, value, best=best)}")]]


def _tournament_cells(n: SeedNumber, ref: str, tournaments: dict[str, dict[str, Any]],
                      links: Links) -> list[Inline]:
    tid = ref.removeprefix(TOURNAMENT)
    t = tournaments.get(tid)
    p = pooled_tournament(n, t) if t is not None else None
    who: Inline = [Span(f"tournament@{tid}", code=True), Span(" (no training)")]
    if p is None:
        return [who, text("not run yet")]
    value, lo, hi = p.measure(n.compared or "win")
    return [who, [links.number(figure_text(n, p), p.prov), Span(f" → {verdict(n, lo, hi, value)}")]]


def _no_trace(n: SeedNumber, e: Experiment) -> None:
    return None


def seed_rows(n: SeedNumber, exps: dict[str, Experiment], tournaments: dict[str, dict[str, Any]], links: Links,
              trace: Callable[[SeedNumber, Experiment], tuple[str, str] | None] = _no_trace) -> list[list[Inline]]:
    """One table row per reproduction of ``n`` (one row saying "not run yet" when it has none)."""
    budget = "" if n.budget == "none" else f" ({n.budget})"
    protocol = n.protocol + (" [our choice: the seed does not state it]" if n.our_choice else "")
    against = f"{n.opponent}, {SEAT_NAMES[n.seat]}" if n.opponent else SEAT_NAMES[n.seat]
    base = [text(n.seed), text(n.game), text(n.agent + budget), text(protocol), text(against),
            [Span(n.published, title=n.source)]]
    # a baseline has no "best"; a Q-value trace is a property of the seed's run from s0, not of an agent
    best_id = BEST.get((n.game, n.kind)) if n.kind != "baseline" and n.metric != "trace" else None
    best = (_experiment_cells(n, exps.get(best_id), best_id, links, best=True, trace=trace) if best_id
            else [text("-"), text("-")])
    rows = []
    for ref in n.reproduction or (None,):
        if ref is None:
            repro = [text(f"no {n.kind} reproduction"), text("not run yet")]
        elif ref.startswith(TOURNAMENT):
            repro = _tournament_cells(n, ref, tournaments, links)
        else:
            repro = _experiment_cells(n, exps.get(ref), ref, links, best=False, trace=trace)
        rows.append([*base, *repro, *best])
    return rows


SEED_TABLE_HEADER = ["Seed", "Game", "Seed's system (its budget)", "Seed's protocol", "Opponent, seat",
                     "Published", "Reproduction (our budget)", "Ours → verdict", "Our best of its kind (budget)",
                     "Ours → verdict"]


def seeds_table(exps: list[Experiment], tournaments: dict[str, dict[str, Any]], links: Links,
                trace: Callable[[SeedNumber, Experiment], tuple[str, str] | None] = _no_trace) -> Table:
    """Every published figure with its reproduction and our best of its kind (see the module docstring)."""
    by_id = {e.id: e for e in exps}
    rows = [row for n in SEED_NUMBERS for row in seed_rows(n, by_id, tournaments, links, trace)]
    return Table(SEED_TABLE_HEADER, rows)
