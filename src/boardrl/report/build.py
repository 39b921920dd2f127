"""Build the report: read results/, draw the figures, compose the document, write reports/ atomically.

Every number we print links to the MLflow run that produced it (``<ui>/#/runs/<run id>``, a route the MLflow
UI resolves to the run's experiment) and carries the git commit in the link's title and the row's provenance.
The whole report directory is built in a temporary sibling and swapped in at the end, so a failed or killed
build leaves the previous report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardrl.report import figures, html, markdown
from boardrl.report.document import Block, Bullets, Heading, Image, Inline, Paragraph, Span, Table, text
from boardrl.report.results import SEATS, Experiment, ReportError, finite, load_results
from boardrl.report.seeds import DEVIATIONS, SEED_NUMBERS, SeedNumber

DEFAULT_UI = "http://127.0.0.1:5000"
TITLE = "boardrl: results"
OUTCOMES = ("win", "draw", "loss")
SEAT_NAMES = {"as_first": "as first", "as_second": "as second", "combined": "combined"}


@dataclass(frozen=True)
class Links:
    """How numbers link to their provenance."""

    ui: str = DEFAULT_UI

    def run_url(self, run_id: str | None) -> str | None:
        return f"{self.ui.rstrip('/')}/#/runs/{run_id}" if run_id else None

    def number(self, value: str, prov: dict[str, Any]) -> Span:
        """``value`` linked to the MLflow run of ``prov``; the tooltip names run and commit."""
        run, commit = prov.get("mlflow_run_id"), prov.get("git_commit")
        if not run and not commit:
            return Span(value)
        title = f"MLflow run {run or 'unknown'}, git commit {commit or 'unknown'}"
        return Span(value, href=self.run_url(run), title=title)

    def provenance(self, prov: dict[str, Any]) -> Inline:
        run, commit = prov.get("mlflow_run_id"), prov.get("git_commit")
        spans: list[Span] = []
        spans.append(Span(f"run {run[:8]}", href=self.run_url(run), title=f"MLflow run {run}") if run
                     else Span("no MLflow run"))
        spans.append(Span(" · commit "))
        spans.append(Span((commit or "unknown")[:10], code=True))
        return spans


# ---------------------------------------------------------------------------------------------- formatting
def pct(x: Any) -> str:
    v = finite(x)
    return "n/a" if v is None else f"{100 * v:.1f}%"


def ci_text(ci: Any) -> str:
    if not ci or len(ci) != 2 or finite(ci[0]) is None or finite(ci[1]) is None:
        return ""
    return f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def rate_with_ci(stats: dict[str, Any], out: str) -> str:
    return pct(stats.get(out)) + ci_text(stats.get(f"{out}_ci"))


# ---------------------------------------------------------------------------------------------- sections
def experiments_table(exps: list[Experiment], links: Links) -> Table:
    rows = []
    for e in exps:
        tp, ep = e.train_provenance, e.eval_provenance
        secs = finite(tp.get("seconds"))
        rows.append([
            text(e.game), text(e.agent),
            [links.number(f"{tp['games_trained']:,}", tp)] if tp.get("games_trained") is not None else text("n/a"),
            text("n/a" if secs is None else f"{secs:,.1f} s"),
            text(str(tp.get("seed", ep.get("seed", "n/a")))),
            links.provenance(tp) if tp else text("not run yet"),
            links.provenance(ep) if ep else text("not run yet"),
            [Span(str(tp.get("params_hash") or ep.get("params_hash") or "n/a")[:12], code=True)],
            text(str(tp.get("dvc_exp_name") or ep.get("dvc_exp_name") or "-")),
        ])
    header = ["Game", "Agent", "Training games", "Training time", "Seed", "Train stage", "Evaluate stage",
              "Params hash", "DVC experiment"]
    return Table(header, rows, numeric=frozenset({2, 3}))


def evaluation_table(e: Experiment, links: Links) -> Table:
    rows = []
    prov = e.eval_provenance
    for opp, block in e.opponents.items():
        for seat in SEATS:
            s = block[seat]
            rows.append([text(opp), text(SEAT_NAMES[seat]),
                         *([links.number(rate_with_ci(s, out), prov)] for out in OUTCOMES),
                         text(f"{int(s['games']):,}")])
    return Table(["Opponent", "Seat", "Win", "Draw", "Loss", "Games"], rows, numeric=frozenset({2, 3, 4, 5}))


def optimal_rate(e: Experiment) -> tuple[float, list[float] | None, int | None] | None:
    ev = e.evaluation or {}
    rate = finite(ev.get("optimal_move_rate"))
    if rate is None:
        return None
    detail = ev.get("optimal_move") or {}
    ci = ev.get("optimal_move_rate_ci") or detail.get("ci")
    return rate, ci, detail.get("n")


def uci_blocks(e: Experiment, links: Links, fig_path: str) -> list[Block]:
    uci = (e.evaluation or {}).get("uci")
    if not uci:
        return []
    prov = e.eval_provenance
    out: list[Block] = [Heading(3, "UCI start positions")]
    if uci.get("seed000"):
        rows = [[text(f"{label} positions"), *([links.number(rate_with_ci(s, o), prov)] for o in OUTCOMES),
                 text(f"{int(s['games']):,}")] for label, s in uci["seed000"].items()]
        out += [Paragraph(text("Seed 000's protocol: our agent moves first (X to move) from a fresh random UCI "
                               "position of each label, against random.")),
                Table(["Label", "Win", "Draw", "Loss", "Games"], rows, numeric=frozenset({1, 2, 3, 4}))]
    if uci.get("full"):
        rows = []
        for label, block in uci["full"].items():
            for seat in SEATS:
                s = block[seat]
                rows.append([text(f"{label} positions"), text(SEAT_NAMES[seat]),
                             *([links.number(rate_with_ci(s, o), prov)] for o in OUTCOMES),
                             text(f"{int(s['games']):,}")])
        out += [Paragraph(text("Full protocol: every position of each label, our agent in each seat, against "
                               "random.")),
                Table(["Label", "Seat", "Win", "Draw", "Loss", "Games"], rows, numeric=frozenset({2, 3, 4, 5}))]
    out.append(Image(fig_path, f"UCI results of {e.agent} on {e.game}"))
    return out


def _ours(n: SeedNumber, e: Experiment, links: Links) -> Inline | None:
    """Our figure of the same kind on the same protocol, or None when this experiment has none."""
    prov = e.eval_provenance
    if n.metric == "uci_win":
        s = (((e.evaluation or {}).get("uci") or {}).get("seed000") or {}).get(n.uci_label)
        if s is None:
            return None
        return [links.number(rate_with_ci(s, "win"), prov), Span(f" ({int(s['games']):,} games)")]
    block = e.opponents.get(n.opponent or "")
    if block is None:
        return None
    s = block[n.seat]
    games = Span(f" ({int(s['games']):,} games)")
    w, d, l = (finite(s.get(k)) for k in ("win", "draw", "loss"))
    if n.metric == "win":
        return [links.number(rate_with_ci(s, "win"), prov), games]
    if n.metric == "wdl":
        return [links.number(" / ".join(f"{100 * (v or 0):.2f}" for v in (w, d, l)), prov), games]
    if n.metric == "win_draw":
        return [links.number(f"W+D {pct((w or 0) + (d or 0))}", prov), games]
    if n.metric == "score":
        return [links.number(f"{(w or 0) + 0.5 * (d or 0):.3f}", prov), games]
    return None


def seeds_table(exps: list[Experiment], links: Links) -> Table:
    rows = []
    for n in SEED_NUMBERS:
        base = [text(n.seed), text(n.game), text(n.agent), text(n.protocol), text(n.opponent or "-"),
                text(SEAT_NAMES[n.seat]), text(n.published)]
        if n.metric == "text":
            note = [Span(n.ours_note, code=True)] if n.ours_note else text("not run yet")
            rows.append([*base, text("-"), note, text(n.source)])
            continue
        matches = [(e, _ours(n, e, links)) for e in exps if e.game == n.game]
        matches = [(e, ours) for e, ours in matches if ours is not None]
        if not matches:
            rows.append([*base, text("-"), text("not run yet"), text(n.source)])
        for e, ours in matches:
            rows.append([*base, text(e.agent), ours, text(n.source)])
    header = ["Seed", "Game", "Seed's agent", "Seed's protocol", "Opponent", "Seat", "Published", "Our agent",
              "Ours", "Source"]
    return Table(header, rows)


def data_blocks(summary_path: Path | None) -> list[Block]:
    if summary_path is None or not Path(summary_path).is_file():
        return []
    try:
        data = json.loads(Path(summary_path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{summary_path}: not readable JSON ({exc})") from None
    rows = [[text(k), [Span(v, code=True)]] for k, v in _flatten(data)]
    return [Heading(2, "Data: UCI Connect-4"),
            Paragraph(text("Checks of the prepare stage (", Span(str(summary_path), code=True), ").")),
            Table(["Fact", "Value"], rows)]


def _flatten(obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(obj, dict):
        return [kv for k, v in obj.items() for kv in _flatten(v, f"{prefix}{k}.")]
    return [(prefix.rstrip("."), json.dumps(obj) if not isinstance(obj, str) else obj)]


# ---------------------------------------------------------------------------------------------- assembly
def compose(exps: list[Experiment], links: Links, fig_dir: Path, data_summary: Path | None) -> list[Block]:
    """The report's blocks; figures are written into ``fig_dir`` as a side effect."""
    blocks: list[Block] = [
        Heading(1, TITLE),
        Paragraph(text("Generated by ", Span("pipeline/report.py", code=True), " from ", Span("results/", code=True),
                       ". W/D/L are from our agent's side, per seat (as first = our agent moves first) and "
                       "combined, with 95% Wilson intervals in brackets (percent). Every number links to the MLflow "
                       "run that produced it (start the UI with ", Span("make ui", code=True),
                       "); the link's tooltip and each row name the git commit.")),
        Heading(2, "Experiments"),
        experiments_table(exps, links),
    ]
    rates = []
    for e in exps:
        blocks.append(Heading(2, f"{e.game} / {e.agent}", anchor=e.key))
        if e.curve is not None and len(e.curve):
            name = f"curve_{e.key}.png"
            figures.save(figures.learning_curve(e), fig_dir / name)
            blocks += [Heading(3, "Learning curve"),
                       Paragraph(text("W/D/L against each benchmark opponent during training (log scale of "
                                      "training games; solid combined, dashed as first, dotted as second).")),
                       Image(f"figures/{name}", f"learning curves of {e.agent} on {e.game}")]
        else:
            blocks.append(Paragraph(text("No learning curve yet (", Span(f"results/train/{e.key}/curve.tsv", code=True),
                                         " is missing).")))
        if e.opponents:
            name = f"wdl_{e.key}.png"
            figures.save(figures.wdl_bars(e), fig_dir / name)
            blocks += [Heading(3, "Final evaluation"), evaluation_table(e, links),
                       Image(f"figures/{name}", f"final W/D/L of {e.agent} on {e.game}")]
        else:
            blocks.append(Paragraph(text("Not evaluated yet (", Span(f"results/eval/{e.key}.json", code=True),
                                         " is missing).")))
        opt = optimal_rate(e)
        if opt is not None:
            rate, ci, n = opt
            rates.append((e, rate, ci, n))
            shown = links.number(pct(rate) + ci_text(ci), e.eval_provenance)
            where = f" on {n:,} positions judged by the referee." if n else "."
            blocks.append(Paragraph([Span("Optimal-move rate: "), shown, Span(where)]))
        if (e.evaluation or {}).get("uci"):
            name = f"uci_{e.key}.png"
            figures.save(figures.uci_results(e), fig_dir / name)
            blocks += uci_blocks(e, links, f"figures/{name}")
    if rates:
        figures.save(figures.optimal_rates([(f"{e.game} / {e.agent}", r, ci) for e, r, ci, _ in rates]),
                     fig_dir / "optimal_move_rates.png")
        blocks += [Heading(2, "Optimal-move rates"),
                   Paragraph(text("Share of the agent's moves that keep the exact game value, on a fixed set of "
                                  "positions, judged by the game's referee.")),
                   Table(["Game", "Agent", "Rate", "Positions"],
                         [[text(e.game), text(e.agent), [links.number(pct(r) + ci_text(ci), e.eval_provenance)],
                           text(f"{n:,}" if n else "n/a")] for e, r, ci, n in rates], numeric=frozenset({2, 3})),
                   Image("figures/optimal_move_rates.png", "optimal-move rates")]
    blocks += [
        Heading(2, "The seeds' published numbers beside ours"),
        Paragraph(text("Each figure a seed published (../shared/SEEDS.md), beside ours against the same opponent from "
                       "the same seat, from our evaluate stage (number of games in brackets). \"not run yet\": no "
                       "experiment of ours covers that game and opponent yet.")),
        seeds_table(exps, links),
        Heading(2, "Where we deliberately differ from the seeds"),
        Bullets([[Span(f"Seed {d.seed}, "), Span(d.where, code=True), Span(": " + d.what)] for d in DEVIATIONS]),
    ]
    blocks += data_blocks(data_summary)
    return blocks


def build_report(results_dir: Path, out_dir: Path, *, ui: str = DEFAULT_UI,
                 data_summary: Path | None = None) -> list[Path]:
    """Write ``report.md``, ``index.html`` and ``figures/*.png`` into ``out_dir``; returns the files written."""
    from boardrl.atomic_io import atomic_directory

    exps = load_results(Path(results_dir))
    links = Links(ui)
    out_dir = Path(out_dir)
    with atomic_directory(out_dir) as tmp:
        fig_dir = tmp / "figures"
        fig_dir.mkdir()
        blocks = compose(exps, links, fig_dir, data_summary)
        (tmp / "report.md").write_text(markdown.render(blocks))
        (tmp / "index.html").write_text(html.render(blocks, TITLE))
    return sorted(p for p in out_dir.rglob("*") if p.is_file())
