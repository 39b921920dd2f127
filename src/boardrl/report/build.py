"""Build the report: read results/, draw the figures, compose the pages, write reports/ atomically.

The report is an index and one page per game (issue 38: one 150,000 px page had no way in).  The index
(``report.md`` / ``index.html``) opens with the profile, the git commit (said once: a provenance cell names a
commit only where it differs), how to read the numbers, a table of contents, the headline table
(``report/headline.py``, the one README shows) and every experiment id linked to its section; then the sections
that span games: the reference systems' published numbers beside ours, deviations, AlphaZero, sweeps, studies
(``report/studies.py``), round robins, reproducibility and the data checks.  A game's page (``<game>.md`` / ``<game>.html``) holds its
experiments' sections, its optimal-move rates and its provenance rows.  Markdown and HTML are rendered from the
same blocks, and links inside the report resolve to each format's files (``report/document.py``).

Every per-seed number links to the MLflow run that produced it and carries the git commit in the link's title
(``report/links.py``); across-seeds IQMs combine several runs and sit beside the per-seed values they summarise.
The whole report directory is built in a temporary sibling and swapped in at the end, so a failed or killed
build leaves the previous report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boardrl.report.headline as headline
import boardrl.report.html as html
import boardrl.report.markdown as markdown
from boardrl.report.alphazero_section import alphazero_section
from boardrl.report.comparison import reference_blocks
from boardrl.report.document import (INDEX, Block, Bullets, Heading, Inline, Page, Paragraph, Ref, Span, Table,
                                     anchors, page_file, text)
from boardrl.report.links import DEFAULT_UI, Links, commit_count
from boardrl.report.reference_systems import DEVIATIONS
from boardrl.report.reproducibility import reproducibility_blocks
from boardrl.report.results import Experiment, ReportError, load_results, load_tournaments
from boardrl.report.sections import (experiment_blocks, experiments_table, optimal_blocks, profile_blocks,
                                     provenance_table)
from boardrl.report.studies import StudyResults, load_studies, study_blocks
from boardrl.report.sweeps import Sweep, load_sweeps, sweep_blocks
from boardrl.report.targets import target_blocks
from boardrl.report.tournaments import tournament_blocks
from boardrl.report.traces_section import trace_cells

TITLE = "boardrl: results"
REFERENCE_TITLE = "Reference systems: their published numbers beside ours"


def shown_path(path: Path, project: Path) -> str:
    """``path`` as the report shows it: relative to ``project`` (the results directory's parent, the project's
    root in the pipeline: ``data/processed/summary.json``), else its file name; never this machine's absolute
    path, which means nothing to a reader elsewhere and would make the report differ between checkouts."""
    try:
        return Path(path).resolve().relative_to(Path(project).resolve()).as_posix()
    except ValueError:
        return Path(path).name


def data_blocks(summary_path: Path | None, project: Path | None = None) -> list[Block]:
    """The prepare stage's checks of the UCI data, when its summary exists (``project``: where its path is
    shown relative to)."""
    if summary_path is None or not Path(summary_path).is_file():
        return []
    try:
        data = json.loads(Path(summary_path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{summary_path}: not readable JSON ({exc})") from None
    rows = [[text(k), [Span(v, code=True)]] for k, v in _flatten(data)]
    return [Heading(2, "Data: UCI Connect-4"),
            Paragraph(text("Checks of the prepare stage (",
                           Span(shown_path(summary_path, project or Path.cwd()), code=True), ").")),
            Table(["Fact", "Value"], rows)]


def _flatten(obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(obj, dict):
        return [kv for k, v in obj.items() for kv in _flatten(v, f"{prefix}{k}.")]
    return [(prefix.rstrip("."), json.dumps(obj) if not isinstance(obj, str) else obj)]


def games(exps: list[Experiment]) -> list[str]:
    """The games of ``exps`` in the report's order (the experiments'): one page each."""
    return list(dict.fromkeys(e.game for e in exps))


def make_links(ui: str, exps: list[Experiment], tournaments: dict[str, dict[str, Any]]) -> Links:
    """Links that know each experiment's page and the report's commit (the one most runs were made at)."""
    commit, _, _ = commit_count(provenances(exps, tournaments))
    return Links(ui, commit=commit, pages={e.id: e.game for e in exps})


def provenances(exps: list[Experiment], tournaments: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The provenance of every run behind ``exps`` (train and evaluate, per seed) and the tournaments; empty
    where a stage has not run."""
    runs = [p for e in exps for s in e.seeds.values() for p in (s.train_provenance, s.eval_provenance)]
    return runs + [t.get("provenance") or {} for t in (tournaments or {}).values()]


def commit_line(provs: list[dict[str, Any]], commit: str | None) -> Paragraph:
    """The report's git commit, said once; how many of the runs ``provs`` were made at it when not all were."""
    runs = [p for p in provs if p]
    if commit is None or not runs:
        return Paragraph(text("Git commit: unknown (no run recorded one)."))
    n = sum(p.get("git_commit") == commit for p in runs)
    shown = Span(commit[:10], code=True, title=commit)
    if n == len(runs):
        return Paragraph(text("Every run at git commit ", shown, "."))
    return Paragraph(text("Git commit ", shown, f" for {n:,} of {len(runs):,} runs; a provenance row names its "
                          "commit where it differs."))


def reading_blocks() -> list[Block]:
    """How to read the numbers, said once for every page."""
    return [Paragraph(text(
        "Generated by ", Span("pipeline/report.py", code=True), " from ", Span("results/", code=True), ": this "
        "index and one page per game. W/D/L are from our agent's side, per seat (as first = our agent moves first) "
        "and combined, in percent. A seed's numbers carry 95% Wilson intervals over its games in brackets and link "
        "to the MLflow run that produced them (start the UI with ", Span("make ui", code=True), "). Across seeds: "
        "interquartile mean (IQM) with a 95% percentile-bootstrap interval over seeds, each seed's value beside "
        "it. Experiment ids link to their sections."))]


def with_contents(blocks: list[Block], page: str, at: int, extra: dict[str, Inline] | None = None) -> list[Block]:
    """``blocks`` with a "Contents" section inserted at ``at``: a link to each level-2 heading after it, followed
    by ``extra`` (by heading text) where given."""
    out = [*blocks[:at], Heading(2, "Contents"), *blocks[at:]]
    ids = anchors(out)
    items = [[Span(b.text, ref=Ref(page, ids[i])), *(extra or {}).get(b.text, [])]
             for i, b in enumerate(out) if i > at and isinstance(b, Heading) and b.level == 2]
    return [*out[:at + 1], Bullets(items), *out[at + 1:]]


def _game_links(exps: list[Experiment]) -> Inline:
    """``: one page per game: tictactoe (16), connect4 (4)``, each game linked to its page."""
    spans: Inline = [Span(": one page per game: ")]
    for i, game in enumerate(games(exps)):
        n = sum(e.game == game for e in exps)
        spans += ([Span(", ")] if i else []) + [Span(game, ref=Ref(game)), Span(f" ({n})")]
    return spans


def reference_intro() -> Paragraph:
    return Paragraph(text(
        "The reference systems are the five earlier systems this project reproduces and must beat (called seeds "
        "in experiment ids, in params.yaml and in ../shared/SEEDS.md). Beside each figure one of them published (hover "
        "it for its source) stand two of ours on its protocol: the reproduction (the same kind of learner with "
        "the system's rules, rewards and budget) and our best agent of that kind on that game, each with its "
        "training budget. Ours pools the games of every evaluated training seed, with a 95% interval (Wilson for "
        "rates, normal for a score); the verdict says whether the published figure lies inside it (reproduced; "
        "for our best: level), below it (beaten) or above it (not reached), or whether ours passes the system's own "
        "pass mark. A "
        "baseline (random against random) is compared with our baseline round robin, never with a learner. "
        "Numbered notes give each protocol and each reason once; a blank game or system repeats the row above."))


def deviation_of(system: str) -> str:
    """A deviation's lead: ``Reference system 000, `` or, for ``all``, ``All reference systems, ``."""
    return "All reference systems, " if system == "all" else f"Reference system {system}, "


def index_page(exps: list[Experiment], links: Links, fig_dir: Path, data_summary: Path | None,
               sweeps: list[Sweep], project: Path | None, tournaments: dict[str, dict[str, Any]],
               studies: list[StudyResults] | None = None) -> Page:
    """The report's first page: header, contents, headline, every experiment, and the sections across games."""
    head: list[Block] = [Heading(1, TITLE), *profile_blocks(exps, links),
                         commit_line(provenances(exps, tournaments), links.commit), *reading_blocks()]
    body: list[Block] = [
        Heading(2, "Headline"), *headline.report_blocks(headline.headline(exps), links.experiment, tuple(studies or ())),
        *target_blocks(exps),
        Heading(2, "Experiments"), experiments_table(exps, links),
        Heading(2, REFERENCE_TITLE), reference_intro(), *reference_blocks(exps, tournaments, links, trace_cells),
        Heading(2, "Where we deliberately differ from the reference systems"),
        Bullets([[Span(deviation_of(d.system)), Span(d.where, code=True), Span(": " + d.what)] for d in DEVIATIONS]),
        *alphazero_section(exps, links, project),
        *sweep_blocks(sweeps, exps, links, fig_dir),
        *study_blocks(studies or [], fig_dir),
        *tournament_blocks(tournaments, links),
        *reproducibility_blocks(exps, links, studies or []),
        *data_blocks(data_summary, project),
    ]
    blocks = with_contents(head + body, INDEX, len(head), {"Experiments": _game_links(exps)})
    return Page(INDEX, TITLE, blocks)


def game_page(game: str, exps: list[Experiment], links: Links, fig_dir: Path) -> Page:
    """One game's page: its experiments' sections, optimal-move rates and provenance rows."""
    title = f"boardrl results: {game}"
    head: list[Block] = [
        Heading(1, title),
        Paragraph(text("Part of the report: the ", Span("index", ref=Ref(INDEX)), " has the headline, every "
                       "experiment and the reference systems' numbers beside ours; it says how to read the numbers.")),
        commit_line(provenances(exps), links.commit),
    ]
    body: list[Block] = [b for e in exps for b in experiment_blocks(e, links, fig_dir)]
    body += optimal_blocks(exps, links, fig_dir, f"optimal_move_rates_{game}.png")
    body += [Heading(2, "Provenance"), provenance_table(exps, links)]
    return Page(game, title, with_contents(head + body, game, len(head)))


def compose(exps: list[Experiment], links: Links, fig_dir: Path, data_summary: Path | None,
            sweeps: list[Sweep] | None = None, project: Path | None = None,
            tournaments: dict[str, dict[str, Any]] | None = None,
            studies: list[StudyResults] | None = None) -> list[Page]:
    """The report's pages, the index first; figures are written (or copied, for sweeps and studies) into
    ``fig_dir`` as a side effect.  ``project``: the directory file paths are shown relative to."""
    tournaments = tournaments or {}
    pages = [game_page(g, [e for e in exps if e.game == g], links, fig_dir) for g in games(exps)]
    return [index_page(exps, links, fig_dir, data_summary, sweeps or [], project, tournaments, studies), *pages]


def build_report(results_dir: Path, out_dir: Path, *, ui: str = DEFAULT_UI,
                 data_summary: Path | None = None) -> list[Path]:
    """Write ``report.md`` and ``index.html``, ``<game>.md`` and ``<game>.html`` per game, and ``figures/*.png``
    into ``out_dir``; returns the files written.  The studies are those of the results directory's project
    (``studies/``)."""
    from boardrl.atomic_io import atomic_directory

    exps = load_results(Path(results_dir))
    sweeps = load_sweeps(Path(results_dir))
    tournaments = load_tournaments(Path(results_dir))
    project = Path(results_dir).resolve().parent
    studies = load_studies(project)
    links = make_links(ui, exps, tournaments)
    out_dir = Path(out_dir)
    with atomic_directory(out_dir) as tmp:
        fig_dir = tmp / "figures"
        fig_dir.mkdir()
        pages = compose(exps, links, fig_dir, data_summary, sweeps, project=project, tournaments=tournaments,
                        studies=studies)
        for page in pages:
            (tmp / page_file(page.key, "md")).write_text(markdown.render(page.blocks, page.key))
            (tmp / page_file(page.key, "html")).write_text(html.render(page.blocks, page.title, page.key))
    return sorted(p for p in out_dir.rglob("*") if p.is_file())
