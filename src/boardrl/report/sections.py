"""The report's sections about our experiments: overview, provenance, one section per experiment id, rates.

Why per seed and across seeds: one training seed can be lucky.  Each seed's numbers are shown as measured
(95% Wilson intervals over its games, linked to its MLflow run), and the evaluate stage's across-seeds summary
(interquartile mean with a percentile-bootstrap interval over seeds) is shown beside the per-seed values, so
the spread between seeds is visible next to the headline.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import boardrl.report.figure_cache as figure_cache
import boardrl.report.figures as figures
from boardrl.report.document import Block, Bullets, Heading, Image, Inline, Paragraph, Ref, Span, Table, text
from boardrl.report.evaluation import AcrossReading, CountedRate, Interval, SpreadReading, UCIReading, ValueAccuracy
from boardrl.report.links import Links, interval, pct, rate_with_ci, seed_list, seed_names, spread_text, with_ci
from boardrl.report.results import OUTCOMES, SEATS, Experiment, SeedResult, finite
from boardrl.report.traces_section import trace_blocks

SEAT_NAMES = {"as_first": "as first", "as_second": "as second", "combined": "combined"}


# ---------------------------------------------------------------------------------------------- overview
def budget_text(e: Experiment) -> str:
    """``1,000,000 games`` (the training budget per seed in the experiment's unit)."""
    if e.budget is None:
        return "n/a"
    return f"{e.budget:,} {e.unit or 'units'}"


def profile_blocks(exps: list[Experiment], links: Links | None = None) -> list[Block]:
    """Which params profile produced the numbers: one line, or each profile with its experiments."""
    links = links or Links()
    by_profile: dict[str, list[str]] = {}
    for e in exps:
        by_profile.setdefault(e.profile or "unknown", []).append(e.id)
    if len(by_profile) == 1:
        (profile,) = by_profile
        return [Paragraph(text("Params profile: ", Span(profile, code=True), " (every experiment)."))]
    items = [[Span(p, code=True), Span(": "), *_ids(ids, links)] for p, ids in sorted(by_profile.items())]
    return [Paragraph(text("Params profiles differ between experiments:")), Bullets(items)]


def _ids(ids: list[str], links: Links) -> Inline:
    spans: list[Span] = []
    for i, exp_id in enumerate(ids):
        spans += [Span(", ")] if i else []
        spans.append(links.experiment(exp_id))
    return spans


def _evaluated_text(e: Experiment) -> str:
    """Which seeds were evaluated: ``all`` when every trained seed was (the usual case, said in one word)."""
    if e.evaluated and list(e.evaluated) == list(e.seeds):
        return "all"
    return seed_names(list(e.evaluated))


def experiments_table(exps: list[Experiment], links: Links | None = None) -> Table:
    """One row per experiment id, linked to its section: what was trained, how long, with which seeds (and under
    which profile, where the profiles differ)."""
    links = links or Links()
    profiles = len({e.profile for e in exps}) > 1
    rows = []
    for e in exps:
        game = Span(e.game, ref=Ref(links.pages[e.id])) if e.id in links.pages else Span(e.game)
        row = [[links.experiment(e.id)], [game], text(e.learner), text(budget_text(e)),
               text(seed_names(list(e.seeds))), text(_evaluated_text(e))]
        rows.append(row + ([[Span(e.profile or "unknown", code=True)]] if profiles else []))
    header = ["Experiment", "Game", "Learner", "Training budget per seed", "Training seeds", "Evaluated"]
    return Table(header + (["Profile"] if profiles else []), rows, numeric=frozenset({3}))


def _training_cell(e: Experiment, tp: dict[str, Any], links: Links) -> Inline:
    budget = tp.get("budget")
    if budget is None:
        return text("n/a")
    return [links.number(f"{budget:,} {tp.get('unit') or e.unit or 'units'}", tp)]


def provenance_table(exps: list[Experiment], links: Links) -> Table:
    """One row per (experiment, seed): the train and evaluate runs, params hash and DVC experiment; the commit
    only where it is not the report's (stated once in its header)."""
    rows = []
    for e in exps:
        for k, s in e.seeds.items():
            tp, run = s.train_provenance, s.eval_run
            secs = s.training_seconds
            rows.append([
                [links.experiment(e.id)], text(str(k)), _training_cell(e, tp, links),
                text("n/a" if secs is None else f"{secs:,.1f} s"),
                links.provenance(tp) if tp else text("not run yet"),
                links.provenance(s.eval_provenance) if run else text("not run yet"),
                [Span(str(tp.get("params_hash") or (run and run.params_hash) or "n/a")[:12], code=True)],
                text(str(tp.get("dvc_exp_name") or (run and run.dvc_exp_name) or "-")),
            ])
    header = ["Experiment", "Seed", "Training", "Training time", "Train stage", "Evaluate stage", "Params hash",
              "DVC experiment"]
    return Table(header, rows, numeric=frozenset({2, 3}))


# ---------------------------------------------------------------------------------------------- one experiment
def title_line(e: Experiment) -> Paragraph:
    """The experiment's identity in one line: id, game, learner, budget, seeds, profile."""
    return Paragraph(text(Span(e.id, code=True), f": {e.learner} on {e.game}, {budget_text(e)} of training per "
                          f"seed, {seed_names(list(e.seeds))}, profile ", Span(e.profile or "unknown", code=True),
                          "."))


#: Where `make play` serves the browser app (boardrl.web.app.DEFAULT_PORT; not imported: the report needs no web code).
PLAY_URL = "http://127.0.0.1:8000/"


def play_line(e: Experiment) -> Paragraph:
    """A link that opens the trained agent as the opponent in the browser app (it works while `make play` runs)."""
    url = f"{PLAY_URL}?{urlencode({'game': e.game, 'opponent': f'model:{e.id}', 'referee': 1})}"
    return Paragraph(text("Play against it: ", Span(url, href=url, title="start `make play` first"),
                          " (start ", Span("make play", code=True), " first; the referee shows every move's value)."))


def curve_blocks(e: Experiment, fig_dir: Path) -> list[Block]:
    """The learning-curve figure of all seeds, and which seeds have no curve yet."""
    curves = figures.curves_of(e)
    missing = [k for k in e.seeds if k not in curves]
    where = Span(f"results/curves/{e.id}/seed-<k>.tsv", code=True)
    if all(s.curve is not None and not len(s.curve) for s in e.seeds.values()):
        return [Paragraph(text("No learning curve: this experiment has no curve opponents (", where, " holds "
                               "only its header)."))]
    if not curves:
        return [Paragraph(text("No learning curve yet (", where, " is missing)."))]
    name = f"curve_{e.key}.png"
    figure_cache.draw(fig_dir / name, figures.learning_curve, e.id, e.learner, e.game, e.unit or "games", curves)
    out: list[Block] = [
        Heading(3, "Learning curve"),
        Paragraph(text(f"Combined W/D/L against each benchmark opponent during training (log scale of training "
                       f"{e.unit or 'progress'}): one line per seed in shades of the outcome's colour, and the mean "
                       "of the seeds in bold when there are several.")),
        Image(f"figures/{name}", f"learning curves of {e.id}"),
    ]
    if missing:
        out.append(Paragraph(text(f"No learning curve yet for seed(s) {seed_list(missing)} (", where, " is missing).")))
    return out


def _method(across: AcrossReading) -> str:
    """The across-seeds method in words, as the evaluate stage stated it."""
    for block in across.opponents.values():
        s = block.win
        if s is not None and s.method:
            conf = finite(s.confidence)
            return f"{s.method}" + (f", {100 * conf:.0f}% interval" if conf is not None else "")
    return "interquartile mean, percentile bootstrap over seeds"


def _spread_row(label: list[str], s: SpreadReading | None, seeds: list[int], e: Experiment,
                links: Links) -> list[Inline]:
    values = dict(zip(seeds, s.values if s is not None else []))
    per_seed = [[links.number(pct(values[k]), e.seeds[k].eval_provenance)] if k in values else text("n/a")
                for k in seeds]
    return [*(text(x) for x in label), text(spread_text(s)), *per_seed]


def across_table(e: Experiment, across: AcrossReading, links: Links) -> Table:
    """IQM and bootstrap interval per opponent and outcome (and the optimal-move rate), each seed beside it."""
    seeds = across.seeds
    rows = [_spread_row([opp, out], block.spread(out), seeds, e, links)
            for opp, block in across.opponents.items() for out in OUTCOMES]
    if across.optimal_move_rate is not None:
        rows.append(_spread_row(["-", "optimal-move rate"], across.optimal_move_rate, seeds, e, links))
    header = ["Opponent", "Measure", "IQM [95% interval]", *(f"Seed {k}" for k in seeds)]
    return Table(header, rows, numeric=frozenset(range(2, 3 + len(seeds))))


def across_blocks(e: Experiment, links: Links) -> list[Block]:
    """The evaluate stage's across-seeds summary; nothing before the experiment is evaluated, nor for one
    evaluated seed, whose "summary" would only repeat its own numbers (shown in the table below)."""
    across = e.across_seeds
    if across is None or len(across.seeds) < 2:
        return []
    over = f"Over {len(across.seeds)} seeds: {_method(across)} (percent)"
    return [Heading(3, "Across seeds"),
            Paragraph(text(over + "; each seed's value beside it, linked to that seed's evaluate run.")),
            across_table(e, across, links)]


def evaluation_table(e: Experiment, links: Links) -> Table:
    """W/D/L per seat against the ladder, for each evaluated seed."""
    rows = []
    for k, s in e.evaluated.items():
        for opp, block in s.opponents.items():
            for seat in SEATS:
                st = block.seats[seat]
                rows.append([text(str(k)), text(opp), text(SEAT_NAMES[seat]),
                             *([links.number(rate_with_ci(st, out), s.eval_provenance)] for out in OUTCOMES),
                             text(f"{st.games:,}")])
    return Table(["Seed", "Opponent", "Seat", "Win", "Draw", "Loss", "Games"], rows,
                 numeric=frozenset({3, 4, 5, 6}))


def evaluation_blocks(e: Experiment, links: Links, fig_dir: Path) -> list[Block]:
    """The per-seed ladder table and the figure of the first evaluated seed, or why there is none."""
    if not e.evaluated:
        return [Paragraph(text("Not evaluated yet (", Span(f"results/eval/{e.id}.json", code=True), " is missing)."))]
    first = next(iter(e.evaluated))
    name = f"wdl_{e.key}.png"
    figure_cache.draw(fig_dir / name, figures.wdl_bars, e.id, first, e.seeds[first].opponents)
    out: list[Block] = [
        Heading(3, "Final evaluation by seed"),
        Paragraph(text("W/D/L per seat against the ladder for each seed, with 95% Wilson intervals over its games "
                       f"(percent); the figure shows seed {first}.")),
        evaluation_table(e, links),
        Image(f"figures/{name}", f"final W/D/L of {e.id}, seed {first}"),
    ]
    pending = [k for k in e.seeds if k not in e.evaluated]
    if pending:
        out.append(Paragraph(text(f"Seed(s) {seed_list(pending)} not evaluated yet.")))
    return out


def seed_optimal(s: SeedResult) -> tuple[float, Interval | None, int | None] | None:
    """One seed's optimal-move rate, its Wilson interval and the number of positions judged."""
    ev = s.evaluation
    rate = finite(ev.optimal_move_rate) if ev is not None else None
    if ev is None or rate is None:
        return None
    detail = ev.optimal_move or CountedRate()
    return rate, ev.optimal_move_rate_ci or detail.ci, detail.n


def optimal_seed_blocks(e: Experiment, links: Links) -> list[Block]:
    items = []
    for k, s in e.evaluated.items():
        opt = seed_optimal(s)
        if opt is not None:
            rate, ci, n = opt
            where = f" on {n:,} positions judged by the referee" if n else ""
            items.append([Span(f"seed {k}: "), links.number(with_ci(rate, ci), s.eval_provenance), Span(where)])
    return [Paragraph(text("Optimal-move rate by seed (95% Wilson intervals):")), Bullets(items)] if items else []


def _exact_item(k: int, s: SeedResult, links: Links) -> Inline | None:
    """One seed's exact loss against perfect per seat, or why it was not measured; None where not computed."""
    ex = s.evaluation.exact_vs_perfect if s.evaluation is not None else None
    if ex is None:
        return None
    if ex.flawless is None:
        return [Span(f"seed {k}: not measured ({ex.not_measured or 'no reason given'})")]
    n = ex.value_losing_moves or 0
    first, second = (seat.loss if seat is not None else None for seat in (ex.as_first, ex.as_second))
    return [Span(f"seed {k}: "), links.number(pct(first), s.eval_provenance),
            Span(" as first, "), links.number(pct(second), s.eval_provenance),
            Span(f" as second; {n} value-losing move{'s' if n != 1 else ''} at reachable positions")]


def exact_loss_blocks(e: Experiment, links: Links) -> list[Block]:
    """Tic-tac-toe: each seed's exact probability of losing to ``perfect`` (the whole tree walked), and how many
    seeds are flawless."""
    items = [item for k, s in e.evaluated.items() if (item := _exact_item(k, s, links)) is not None]
    if not items:
        return []
    agg = e.across_seeds.exact_vs_perfect if e.across_seeds is not None else None
    count = (f"; {agg.flawless_seeds} of {agg.measured_seeds} measured seed(s) never lose in either seat"
             if agg is not None and agg.flawless_seeds is not None and agg.measured_seeds is not None else "")
    return [Paragraph(text("Exact probability of losing to perfect (which draws uniformly among its optimal moves) "
                           "per seat, from the whole game tree walked rather than from sampled games" + count + ":")),
            Bullets(items)]


def _phase_row(label: str, by_phase: dict[str, CountedRate], names: list[str], s: SeedResult,
               links: Links) -> list[Inline]:
    cells: list[Inline] = [text(label)]
    for name in names:
        r = by_phase.get(name) or CountedRate()
        rate = finite(r.rate)
        cells.append(text("not judged: no opening book" if r.unjudged else "n/a") if rate is None else
                     [links.number(with_ci(rate, r.ci), s.eval_provenance), Span(f" ({r.n or 0:,})")])
    return cells


def _phases(s: SeedResult) -> list[tuple[str, dict[str, CountedRate] | None]]:
    """A seed's optimal-move rates by phase, and its network's alone where it searches."""
    ev = s.evaluation
    if ev is None:
        return []
    return [("", ev.optimal_move_by_phase),
            (", network alone", ev.network_alone.optimal_move_by_phase if ev.network_alone is not None else None)]


def phase_blocks(e: Experiment, links: Links) -> list[Block]:
    """Optimal-move rate per phase of the game (Connect 4: opening / middle / end), per seed; the network alone
    beside a searching agent."""
    rows, names, plies = [], [], {}
    for k, s in e.evaluated.items():
        for who, by_phase in _phases(s):
            if not by_phase:
                continue
            for name, r in by_phase.items():
                if name not in names:
                    names.append(name)
                    plies[name] = r.plies
            rows.append(_phase_row(f"seed {k}{who}", by_phase, names, s, links))
    if not rows:
        return []
    header = ["Agent"] + [f"{n} (plies {plies[n][0]}-{plies[n][1]})" if plies.get(n) else n for n in names]
    return [Paragraph(text("Optimal-move rate by phase of the game (random-play positions of each phase judged by "
                           "the referee, with its opening book; 95% Wilson intervals, positions in brackets):")),
            Table(header, rows, numeric=frozenset(range(1, len(header))))]


def _uci_system000_rows(k: int, s: SeedResult, uci: UCIReading, links: Links) -> list[list[Inline]]:
    return [[text(str(k)), text(f"{label} positions"),
             *([links.number(rate_with_ci(st, o), s.eval_provenance)] for o in OUTCOMES),
             text(f"{st.games:,}")] for label, st in (uci.seed000 or {}).items()]


def _uci_full_rows(k: int, s: SeedResult, uci: UCIReading, links: Links) -> list[list[Inline]]:
    return [[text(str(k)), text(f"{label} positions"), text(SEAT_NAMES[seat]),
             *([links.number(rate_with_ci(block.seats[seat], o), s.eval_provenance)] for o in OUTCOMES),
             text(f"{block.seats[seat].games:,}")]
            for label, block in (uci.full or {}).items() for seat in SEATS]


def uci_blocks(e: Experiment, links: Links, fig_dir: Path) -> list[Block]:
    """Connect 4 from the UCI start positions: reference system 000's protocol and the full protocol, per seed."""
    seeds = {k: (s, s.uci) for k, s in e.evaluated.items() if s.uci is not None and (s.uci.seed000 or s.uci.full)}
    if not seeds:
        return []
    out: list[Block] = [Heading(3, "UCI start positions")]
    rows = [r for k, (s, uci) in seeds.items() if uci.seed000 for r in _uci_system000_rows(k, s, uci, links)]
    if rows:
        out += [Paragraph(text("Reference system 000's protocol: our agent moves first (X to move) from a fresh random "
                               "UCI position of each label, against random.")),
                Table(["Seed", "Label", "Win", "Draw", "Loss", "Games"], rows, numeric=frozenset({2, 3, 4, 5}))]
    rows = [r for k, (s, uci) in seeds.items() if uci.full for r in _uci_full_rows(k, s, uci, links)]
    if rows:
        out += [Paragraph(text("Full protocol: every position of each label, our agent in each seat, against "
                               "random.")),
                Table(["Seed", "Label", "Seat", "Win", "Draw", "Loss", "Games"], rows,
                      numeric=frozenset({3, 4, 5, 6}))]
    first = next(iter(seeds))
    name = f"uci_{e.key}.png"
    figure_cache.draw(fig_dir / name, figures.uci_results, e.id, first, seeds[first][1])
    out.append(Image(f"figures/{name}", f"UCI results of {e.id}, seed {first}"))
    return out


VALUE_LABELS = ("win", "draw", "loss")


def _value_accuracy_row(k: int, va: ValueAccuracy, links: Links, prov: dict[str, Any]) -> list[Inline]:
    def cell(block: CountedRate | None) -> Inline:
        block = block or CountedRate()
        return [links.number(with_ci(block.rate, block.ci), prov)]

    return [text(str(k)), cell(va.accuracy), *(cell(va.per_label.get(lab)) for lab in VALUE_LABELS),
            text(pct(va.balanced_accuracy)), text(pct(va.majority_baseline)),
            text(pct(va.fitted.accuracy) if va.fitted is not None else "-"), text(f"{va.positions or 0:,}")]


def value_accuracy_blocks(e: Experiment, links: Links) -> list[Block]:
    """Connect 4 agents with a value: win/draw/loss read from it on every UCI label, per seed (issue 9)."""
    seeds = {k: s.evaluation.value_accuracy for k, s in e.evaluated.items() if s.evaluation is not None}
    seeds = {k: va for k, va in seeds.items() if va is not None}
    if not seeds:
        return []
    cuts = next(iter(seeds.values())).thresholds
    cut = f"win above {cuts[1]:.3g}, loss below {cuts[0]:.3g}, draw between" if len(cuts) == 2 else "thresholds"
    rows = [_value_accuracy_row(k, va, links, e.seeds[k].eval_provenance) for k, va in seeds.items()]
    return [Heading(3, "Value accuracy on the UCI labels"),
            Paragraph(text(f"The agent's value of each of the UCI positions (X to move) read as its label ({cut}); "
                           "overall and per label (the share of that label's positions called right), 95% Wilson "
                           "intervals. Balanced: the mean of the three. Majority: always saying \"win\". "
                           "Fitted: the best thresholds chosen on these same labels, an optimistic bound.")),
            Table(["Seed", "Overall", "Win labels", "Draw labels", "Loss labels", "Balanced", "Majority", "Fitted",
                   "Positions"], rows, numeric=frozenset(range(1, 9)))]


def experiment_blocks(e: Experiment, links: Links, fig_dir: Path) -> list[Block]:
    """Everything about one experiment id; its figures are written into ``fig_dir``."""
    return [Heading(2, e.id), title_line(e), play_line(e), *curve_blocks(e, fig_dir), *trace_blocks(e, fig_dir),
            *across_blocks(e, links),
            *evaluation_blocks(e, links, fig_dir), *optimal_seed_blocks(e, links),
            *exact_loss_blocks(e, links), *phase_blocks(e, links),
            *uci_blocks(e, links, fig_dir),
            *value_accuracy_blocks(e, links)]


# ---------------------------------------------------------------------------------------------- all experiments
@dataclass(frozen=True)
class OptimalRate:
    """An experiment's headline optimal-move rate: IQM over seeds, or the single evaluated seed's rate."""

    rate: float
    ci: Interval | None
    basis: str
    shown: Inline


def optimal_rate(e: Experiment, links: Links) -> OptimalRate | None:
    across = e.across_seeds.optimal_move_rate if e.across_seeds is not None else None
    if across is not None and len(across.values) > 1 and finite(across.iqm) is not None:
        basis = f"IQM of {len(across.values)} seeds, bootstrap interval"
        return OptimalRate(float(across.iqm), across.ci, basis, text(spread_text(across)))
    for k, s in e.evaluated.items():
        opt = seed_optimal(s)
        if opt is not None:
            rate, ci, n = opt
            basis = f"seed {k}" + (f", {n:,} positions" if n else "") + ", Wilson interval"
            return OptimalRate(rate, ci, basis, [links.number(with_ci(rate, ci), s.eval_provenance)])
    return None


def optimal_points(e: Experiment) -> list[figures.RatePoint]:
    """Experiment ``e`` in the rates figure: each evaluated seed's rate with its Wilson interval and, with
    several seeds, the IQM over seeds with its bootstrap interval."""
    points = []
    for k, s in e.evaluated.items():
        opt = seed_optimal(s)
        if opt is not None:
            rate, ci, n = opt
            points.append(figures.RatePoint(f"seed {k}" + (f" ({n:,} positions)" if n else ""), rate, interval(ci)))
    across = e.across_seeds.optimal_move_rate if e.across_seeds is not None else None
    n_seeds = len(across.values) if across is not None else 0
    if across is not None and len(points) > 1 and n_seeds > 1 and finite(across.iqm) is not None:
        points.append(figures.RatePoint(f"IQM of {n_seeds} seeds", float(across.iqm), interval(across.ci),
                                        headline=True))
    return points


def equal_rates_note(groups: list[tuple[str, list[figures.RatePoint]]]) -> Paragraph | None:
    """When every seed of every experiment has the same rate (all 100%, typically), say so in words, with how far
    below it the Wilson intervals reach: the values alone cannot tell the experiments apart, and a bootstrap over
    seeds that agree collapses onto their value."""
    seeds = [(exp_id, p) for exp_id, points in groups for p in points if not p.headline]
    if len(seeds) < 2 or len({p.rate for _, p in seeds}) > 1:
        return None
    rate = seeds[0][1].rate
    what = "every judged move kept the exact game value" if rate == 1.0 else "their values cannot tell them apart"
    said = f"All {len(seeds)} evaluated seeds" + (f" of the {len(groups)} experiments" if len(groups) > 1 else "")
    said += f" score {pct(rate)}: {what}."
    with_ci_seeds = [(exp_id, p) for exp_id, p in seeds if p.ci is not None]
    if with_ci_seeds:
        exp_id, widest = min(with_ci_seeds, key=lambda item: item[1].ci[0])
        said += (f" Their 95% Wilson intervals still allow a true rate as low as {pct(widest.ci[0])} ({exp_id}, "
                 f"{widest.label}: {with_ci(rate, widest.ci)}); an IQM's bootstrap interval over seeds that agree "
                 "collapses onto their value and says nothing about this. The figure shows each seed's interval "
                 "on an axis zoomed in on them.")
    return Paragraph(text(said))


def optimal_blocks(exps: list[Experiment], links: Links, fig_dir: Path,
                   name: str = "optimal_move_rates.png") -> list[Block]:
    """The optimal-move rate of each of ``exps`` (a game's experiments) in one table, and each seed's in one
    figure ``name`` (with words when they are all equal)."""
    rates = [(e, r) for e in exps if (r := optimal_rate(e, links)) is not None]
    if not rates:
        return []
    rows = [[[links.experiment(e.id)], text(e.game), text(e.learner), r.shown, text(r.basis)] for e, r in rates]
    out: list[Block] = [
        Heading(2, "Optimal-move rates"),
        Paragraph(text("Share of the agent's moves that keep the exact game value, on a fixed set of positions, "
                       "judged by the game's referee.")),
        Table(["Experiment", "Game", "Learner", "Rate [95% interval]", "Basis"], rows, numeric=frozenset({3})),
    ]
    groups = [(e.id, pts) for e, _ in rates if (pts := optimal_points(e))]
    if not groups:
        return out
    note = equal_rates_note(groups)
    figure_cache.draw(fig_dir / name, figures.optimal_rates, groups)
    return [*out, *([note] if note else []),
            Paragraph(text("The figure: each seed's rate with its 95% Wilson interval over its positions and, with "
                           "several seeds, their IQM (diamond) with its bootstrap interval; the axis is zoomed in "
                           "on the intervals when they span less than half the scale.")),
            Image(f"figures/{name}", "optimal-move rates of each seed, with intervals")]
