"""The headline table: one line per game, our best agent of each kind beside the reference systems' figures.

README shows this table between the markers ``<!-- headline:start -->`` and ``<!-- headline:end -->``.  The report
stage builds it from ``results/`` and writes its data to ``docs/headline.json``, which is committed; README's
block is rendered from committed files alone (that one, the published full profile's and the studies' tables), so
a test checks the block without any results (CI has none), and no result figure in README is typed by hand.

    results/ --headline()--> Headline (docs/headline.json) --render()--> Markdown --with_block()--> README.md
                                       studies/*/results.json --^  (other training seeds of one-seed experiments)

How the choices are made, from the results and the same way on every run:

* **Kinds** (``KINDS``): our learners grouped by how they learn: tabular (``tabular_q``, ``qt``, ``dots_table``,
  ``seed004_q``), DQN (``dqn``: replay and a target network; ``seed001_dqn_cmm``: replay and a
  frozen opponent; ``seed002_dq_pair``: two ``dqn`` players learning against each other), value learners (reference system 003's
  afterstate and lambda-return learners ``td0``, ``td_lambda``, ``qnet``, ``dqn_lambda``, which share
  ``learn/value_selfplay.py``) and AlphaZero.
* **Strongest opponent** of a game: of every opponent in the evaluation ladders of that game's experiments, the
  one our agents score least against: the mean over experiments of each one's score (win 1, draw 1/2, pooled
  over its evaluated seeds and both seats).  It is measured rather than declared because the ladders differ
  between experiments and profiles; where the referee's ``perfect`` player is in the ladder it comes out on top.
* **Best agent** of a kind: among that kind's experiments on the game that met the strongest opponent, the one
  with the highest score against it; ties go to the higher optimal-move rate, then the fewer losses, then the
  more games, then the id.  A kind whose experiments never met that opponent is judged against the next
  strongest one they met, which its cell names.  The pick looks at the same games it reports, so the best of
  several close agents reads slightly high; the report (``reports/report.md``) shows every experiment.
* **Reference systems**: for each kind of reference system (``report/reference_systems.py``), its published figures
  against the strongest of the opponents it was measured against (by the order above), for the system that did
  best there.

Every figure is pooled over the evaluated training seeds: wins and losses per seat with 95% Wilson intervals
(``evaluate/stats.py``), and the optimal-move rate judged by the game's exact referee.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Callable

import pandas as pd
from pydantic import BaseModel, ValidationError

import boardrl.report.markdown as markdown
from boardrl.evaluate.stats import SeatStats, combine, wilson_interval
from boardrl.report.document import Block, Inline, Paragraph, Span, Table, text
from boardrl.report.evaluation import CountedRate, EvalProvenance, SeatReading
from boardrl.report.links import with_ci
from boardrl.report.reference_systems import REFERENCE_NUMBERS, ReferenceNumber
from boardrl.report.results import OUTCOMES, Experiment, ReportError, finite
from boardrl.report.studies import StudyResults, load_studies

START = "<!-- headline:start -->"
END = "<!-- headline:end -->"
#: Where the report stage writes the table's data (a DVC output with ``cache: false``, committed to git).
JSON_PATH = Path("docs") / "headline.json"
#: The games of the table, in its order; a game found in the results but not listed here follows them.
GAMES = ("tictactoe", "connect4", "dots_and_boxes_2x2", "dots_and_boxes_3x3", "conniption")
SEAT_WORDS = {"as_first": "first", "as_second": "second", "combined": "combined"}


@dataclass(frozen=True)
class Kind:
    """A column of the table: a group of our learners."""

    key: str
    label: str
    learners: frozenset[str]


KINDS: tuple[Kind, ...] = (
    Kind("tabular", "Tabular", frozenset({"tabular_q", "qt", "dots_table", "seed004_q"})),
    Kind("dqn", "DQN", frozenset({"dqn", "seed001_dqn_cmm", "seed002_dq_pair"})),
    Kind("value", "Value learners", frozenset({"td0", "td_lambda", "qnet", "dqn_lambda", "seed000_afterstate"})),
    Kind("alphazero", "AlphaZero", frozenset({"alphazero"})),
)
#: The reference systems' kinds (``reference_systems.Kind``) shown in the reference column, in its order.
REFERENCE_KINDS = {"tabular": "tabular", "neural": "neural", "alphazero": "AlphaZero"}


# ---------------------------------------------------------------------------------------------- the data
class SeatResult(BaseModel):
    """W/D/L of our agent in one seat, pooled over seeds, with 95% Wilson intervals of the win and loss rates."""

    games: int
    wins: int
    draws: int
    losses: int
    win_ci: tuple[float, float]
    loss_ci: tuple[float, float]

    @classmethod
    def of(cls, s: SeatStats) -> SeatResult:
        return cls(games=s.games, wins=s.wins, draws=s.draws, losses=s.losses, win_ci=_round(s.win_ci),
                   loss_ci=_round(s.loss_ci))


class OptimalRate(BaseModel):
    """Moves that keep the exact game value, out of the referee-judged positions, pooled over seeds."""

    positions: int
    optimal: int
    ci: tuple[float, float]


class Provenance(BaseModel):
    seed: int
    git_commit: str | None = None
    mlflow_run_id: str | None = None


class AgentResult(BaseModel):
    """The best experiment of a kind on a game, and how it did against the opponent it was judged by."""

    experiment: str
    learner: str
    profile: str | None
    budget: int | None
    unit: str | None
    seeds: list[int]
    opponent: str
    as_first: SeatResult
    as_second: SeatResult
    optimal_moves: OptimalRate | None
    provenance: list[Provenance]


class ReferenceFigure(BaseModel):
    """One published figure of a reference system (``report/reference_systems.py``), as a fraction of the compared
    measure."""

    seed: str  # the reference system, 000 to 004 (the key docs/headline.json has always had)
    system: str
    kind: str
    opponent: str
    seat: str
    measure: str  # win | win_draw | loss | score
    value: float
    published: str
    uci_label: str | None = None


class GameRow(BaseModel):
    game: str
    opponent: str | None  # the strongest opponent; None when nothing of the game was evaluated
    agents: dict[str, AgentResult | None]  # by ``Kind.key``
    references: list[ReferenceFigure]


class Headline(BaseModel):
    profiles: list[str]
    games: list[GameRow]


# ---------------------------------------------------------------------------------------------- pooling
def _round(ci: tuple[float, float]) -> tuple[float, float]:
    return round(ci[0], 6), round(ci[1], 6)


def _counts(block: SeatReading) -> tuple[int, int, int]:
    """W, D, L of a seat block: its counts, or its rates times its games (files written before counts)."""
    counts = [block.count(out) for out in OUTCOMES]
    if all(c is not None for c in counts):
        return tuple(int(c) for c in counts)  # type: ignore[return-value]
    return tuple(int(round((finite(block.rate(out)) or 0.0) * block.games)) for out in OUTCOMES)  # type: ignore


def pooled(e: Experiment, opponent: str, seat: str) -> SeatStats | None:
    """``e``'s games against ``opponent`` in ``seat``, summed over its evaluated seeds; None when it never met it."""
    blocks = [s.opponents[opponent].seats[seat] for s in e.evaluated.values() if opponent in s.opponents]
    total = combine(SeatStats(*_counts(b)) for b in blocks)
    return total if total.games else None


def _optimal_counts(p: CountedRate) -> int:
    """Moves judged optimal: the stored count, else the rate times the positions (files written before counts)."""
    return p.optimal if p.optimal is not None else round(float(p.rate or 0.0) * (p.n or 0))


def optimal_rate(e: Experiment) -> OptimalRate | None:
    """The optimal-move counts of every evaluated seed, pooled; None when no seed was judged by a referee."""
    parts = [s.evaluation.optimal_move for s in e.evaluated.values() if s.evaluation is not None]
    judged = [p for p in parts if p is not None and p.n]
    if not judged:
        return None
    n = sum(p.n or 0 for p in judged)
    k = sum(_optimal_counts(p) for p in judged)
    return OptimalRate(positions=n, optimal=k, ci=_round(wilson_interval(k, n)))


# ---------------------------------------------------------------------------------------------- choices
def strength_order(exps: list[Experiment]) -> list[str]:
    """The opponents met by ``exps``, strongest first: lowest mean score of the experiments that met it, then
    met by more experiments, then by name."""
    rows = [(opp, e.id, s.score) for e in exps for opp in e.opponents
            if (s := pooled(e, opp, "combined")) is not None]
    if not rows:
        return []
    frame = pd.DataFrame(rows, columns=["opponent", "experiment", "score"])
    table = frame.groupby("opponent").agg(score=("score", "mean"), met=("experiment", "nunique")).reset_index()
    table = table.sort_values(["score", "met", "opponent"], ascending=[True, False, True])
    return table["opponent"].tolist()


def _merit(e: Experiment, opponent: str) -> tuple[float, float, float, int]:
    s = pooled(e, opponent, "combined")
    assert s is not None
    opt = optimal_rate(e)
    return s.score, (opt.optimal / opt.positions if opt else -1.0), -s.loss_rate, s.games


def best_agent(candidates: list[Experiment], order: list[str]) -> tuple[Experiment, str] | None:
    """The best of ``candidates`` against the strongest opponent of ``order`` any of them met (see the module
    docstring), and that opponent; None when none was evaluated."""
    for opp in order:
        met = sorted((e for e in candidates if pooled(e, opp, "combined") is not None), key=lambda e: e.id)
        if met:
            return max(met, key=lambda e: _merit(e, opp)), opp
    return None


def _provenance(seed: int, run: EvalProvenance | None) -> Provenance:
    """Which evaluate run of seed ``seed`` the figures come from (unknown before it ran)."""
    return Provenance(seed=seed, git_commit=run.git_commit if run is not None else None,
                      mlflow_run_id=run.mlflow_run_id if run is not None else None)


def agent_result(e: Experiment, opponent: str) -> AgentResult:
    first, second = (pooled(e, opponent, seat) or SeatStats() for seat in ("as_first", "as_second"))
    prov = [_provenance(k, s.eval_run) for k, s in e.evaluated.items()]
    return AgentResult(experiment=e.id, learner=e.learner, profile=e.profile, budget=e.budget, unit=e.unit,
                       seeds=list(e.evaluated), opponent=opponent, as_first=SeatResult.of(first),
                       as_second=SeatResult.of(second), optimal_moves=optimal_rate(e), provenance=prov)


def _goodness(n: ReferenceNumber) -> float:
    assert n.value is not None
    return 1.0 - n.value if n.compared == "loss" else n.value


def _figure(n: ReferenceNumber) -> ReferenceFigure:
    assert n.value is not None and n.opponent is not None
    return ReferenceFigure(seed=n.system, system=n.agent, kind=n.kind, opponent=n.opponent, seat=n.seat,
                           measure=n.compared or "win", value=n.value, published=n.published, uci_label=n.uci_label)


def reference_figures(game: str, order: list[str]) -> list[ReferenceFigure]:
    """Per kind of reference system: its figures against its strongest opponent (by ``order``; opponents we never
    met rank last), for the system that did best there."""
    rank = {opp: i for i, opp in enumerate(order)}
    rows = [n for n in REFERENCE_NUMBERS if n.game == game and n.kind in REFERENCE_KINDS and not n.threshold
            and n.value is not None and n.opponent is not None and n.metric != "trace"]
    out: list[ReferenceFigure] = []
    for kind in REFERENCE_KINDS:
        mine = [n for n in rows if n.kind == kind]
        if not mine:
            continue
        opp = min((n.opponent for n in mine), key=lambda o: rank.get(o or "", len(rank)))
        against = [n for n in mine if n.opponent == opp]
        systems = list(dict.fromkeys((n.system, n.agent) for n in against))
        best = max(systems, key=lambda sys: mean(_goodness(n) for n in against if (n.system, n.agent) == sys))
        out += [_figure(n) for n in against if (n.system, n.agent) == best]
    return out


def game_row(game: str, exps: list[Experiment]) -> GameRow:
    """The table's line of ``game`` from the experiments of that game."""
    order = strength_order(exps)
    agents: dict[str, AgentResult | None] = {}
    for kind in KINDS:
        found = best_agent([e for e in exps if e.learner in kind.learners], order)
        agents[kind.key] = agent_result(*found) if found else None
    return GameRow(game=game, opponent=order[0] if order else None, agents=agents,
                   references=reference_figures(game, order))


def check_learners(exps: list[Experiment]) -> None:
    """Every experiment's learner belongs to a column: a new learner must be placed in ``KINDS``."""
    known = set().union(*(k.learners for k in KINDS))
    for e in exps:
        if e.learner not in known:
            raise ReportError(f"headline: learner {e.learner!r} of experiment {e.id!r} is in no column; add it to "
                              "KINDS in src/boardrl/report/headline.py")


def headline(exps: list[Experiment]) -> Headline:
    """The table's data from every experiment the report read (``results.load_results``)."""
    check_learners(exps)
    evaluated = [e for e in exps if e.evaluated]
    games = list(GAMES) + sorted({e.game for e in evaluated} - set(GAMES))
    rows = [game_row(g, [e for e in evaluated if e.game == g]) for g in games]
    return Headline(profiles=sorted({e.profile or "unknown" for e in evaluated}), games=rows)


# ---------------------------------------------------------------------------------------------- the file
def dump(h: Headline) -> str:
    """``docs/headline.json``'s text."""
    return json.dumps(h.model_dump(mode="json"), indent=1) + "\n"


def load(path: Path) -> Headline | None:
    """The committed table data; None when no pipeline run has written it yet."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return Headline.model_validate_json(path.read_text())
    except ValidationError as exc:
        raise ReportError(f"{path}: not a headline table ({exc.error_count()} problem(s), first: "
                          f"{exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})") from None


# ---------------------------------------------------------------------------------------------- Markdown
def _seat_text(s: SeatResult) -> str:
    if not s.games:
        return "no games"
    return f"W {with_ci(s.wins / s.games, s.win_ci)} L {with_ci(s.losses / s.games, s.loss_ci)}"


#: How an experiment id is shown: in code (README), or linked to its section (the report: ``Links.experiment``).
Name = Callable[[str], Span]


def code(exp_id: str) -> Span:
    return Span(exp_id, code=True)


def _percent(rate: float) -> str:
    return f"{100 * rate:.1f}%"


def other_seeds(a: AgentResult, studies: tuple[StudyResults, ...]) -> Inline:
    """The wins per seat of the same experiment's other training seeds, against the same opponent, that studies
    trained with its profile's settings unchanged: ``; seeds 1, 2 in study `neural_seeds`: first W 39.2%, 32.6%;
    second W 16.2%, 10.8%``.  Why in the cell: a one-seed experiment's interval is over games, not training runs,
    and the spread over training runs (conniption_dqn's second seat: 47%, 0%, 26%) is what another machine's
    rerun is judged by.  Studies that report the same wins for the same seeds (each trained the profile's own
    settings: the same models) are named together, so the figures appear once."""
    found: dict[tuple, list[str]] = {}  # (seed, (first, second)) pairs -> the studies that report them
    for study in studies:
        if study.profile != a.profile:
            continue
        wins = {k: w for k, w in study.seed_wins(a.experiment, a.opponent).items() if k not in a.seeds}
        if wins:
            found.setdefault(tuple(wins.items()), []).append(study.name)
    spans: Inline = []
    for pairs, names in found.items():
        wins = dict(pairs)
        seeds = f"seed{'s' if len(wins) != 1 else ''} {', '.join(map(str, wins))}"
        spans.append(Span(f"; {seeds} in {'studies' if len(names) > 1 else 'study'} "))
        for i, name in enumerate(names):
            spans += [Span(", ")] if i else []
            spans.append(Span(name, code=True))
        spans.append(Span(f": first W {', '.join(_percent(f) for f, _ in wins.values())}; "
                          f"second W {', '.join(_percent(s) for _, s in wins.values())}"))
    return spans


def agent_cell(a: AgentResult | None, row_opponent: str | None, name: Name = code,
               studies: tuple[StudyResults, ...] = ()) -> Inline:
    """One kind's cell: the experiment, its seeds, W and L per seat, optimal-move rate, and the wins of its other
    training seeds in ``studies`` (``other_seeds``)."""
    if a is None:
        return text("none evaluated")
    seeds = f"{len(a.seeds)} seed{'s' if len(a.seeds) != 1 else ''}"
    cell: Inline = [name(a.experiment), Span(f" ({seeds})")]
    if a.opponent != row_opponent:
        cell += [Span(" vs "), Span(a.opponent, code=True)]
    cell.append(Span(f": first {_seat_text(a.as_first)}; second {_seat_text(a.as_second)}"))
    if a.optimal_moves is not None:
        o = a.optimal_moves
        cell.append(Span(f"; optimal moves {with_ci(o.optimal / o.positions, o.ci)}"))
    return cell + other_seeds(a, studies)


def _measure_text(f: ReferenceFigure) -> str:
    """The published figure as its measure: ``score 0.50``, ``L 0%``, ``W 98.45%`` (the reference systems
    print at most two decimals of a percentage, so that is all a figure gets)."""
    if f.measure == "score":
        return f"score {f.value:.2f}"
    word = {"win": "W", "loss": "L", "win_draw": "W+D"}[f.measure]
    return f"{word} {f'{100 * f.value:.2f}'.rstrip('0').rstrip('.')}%"


def reference_cell(figures: list[ReferenceFigure]) -> Inline:
    """The reference systems' figures, one group per kind: ``tabular: reference system 002 QT, ..., against maxmin:
    combined L 0%``."""
    parts = []
    for kind, label in REFERENCE_KINDS.items():
        mine = [f for f in figures if f.kind == kind]
        if not mine:
            continue
        first = mine[0]
        figs = ", ".join(f"{SEAT_WORDS[f.seat]}{f' from UCI {f.uci_label} starts' if f.uci_label else ''} "
                         f"{_measure_text(f)}" for f in mine)
        parts.append(f"{label}: reference system {first.seed} {first.system}, against {first.opponent}: {figs}")
    return text("; ".join(parts) if parts else "none published")


def table(h: Headline, name: Name = code, studies: tuple[StudyResults, ...] = ()) -> Table:
    header = ["Game", "Strongest opponent", *(k.label for k in KINDS), "Reference systems (published)"]
    rows = [[text(r.game), [Span(r.opponent, code=True)] if r.opponent else text("none evaluated"),
             *(agent_cell(r.agents.get(k.key), r.opponent, name, studies) for k in KINDS),
             reference_cell(r.references)]
            for r in h.games]
    return Table(header, rows)


def _commits(h: Headline) -> list[str]:
    found = {p.git_commit[:10] for r in h.games for a in r.agents.values() if a for p in a.provenance
             if p.git_commit}
    return sorted(found)


def intro() -> Paragraph:
    """How to read the table (README and the report say it alike)."""
    return Paragraph(text(
        "Our best agent of each kind on each game, against the game's strongest opponent (the one our agents "
        "score least against): wins (W) and losses (L) as first and as second, pooled over the evaluated "
        "training seeds, with 95% Wilson intervals, and the share of optimal moves judged by the exact "
        "referee. Best: the highest score against that opponent, then the optimal-move rate. Reference "
        "systems: the published figures of the reference systems of each kind against their strongest opponent "
        "(every figure, with its protocol, is in the reference systems' tables of the report). How the choices are "
        "made: ",
        Span("src/boardrl/report/headline.py", code=True), ". Where a study trained other seeds of a one-seed "
        "experiment with the same settings, its cell adds their wins per seat against the same opponent: the "
        "spread over training runs, which the intervals over games do not show."))


def blocks(h: Headline, full: Headline | None = None, studies: tuple[StudyResults, ...] = ()) -> list[Block]:
    """README's block: the table with what a reader needs to read it: the rules, the profile, the commits.  With
    the published full profile (``full``), the default and full profiles side by side (``side_by_side``)."""
    if full is not None:
        return [intro(), side_by_side(h, full, studies), _provenance_line(h, "reports/report.md"),
                _provenance_line(full, FULL_REPORT)]
    return [
        intro(),
        table(h, studies=studies),
        _provenance_line(h, "reports/report.md"),
        Paragraph(text("The full profile (the reference systems' budgets, hours) is not published yet: ",
                       Span("make repro PROFILE=full", code=True), ", then ", Span("boardrl publish full", code=True),
                       ".")),
    ]


def _provenance_line(h: Headline, report: str) -> Paragraph:
    commits = ", ".join(_commits(h)) or "unknown"
    return Paragraph(text("Params profile ", *_code_list(h.profiles), f": evaluations at git commit(s) {commits}. "
                          "Every number, with its MLflow run, is in ", Span(report, code=True), "."))


#: The published full profile's report and headline data (``report/published.py``).
FULL_REPORT = "published/full/reports/report.md"
FULL_JSON_PATH = Path("published") / "full" / "docs" / "headline.json"
#: Which reference systems' figures stand beside each of our kinds (the same kind of system).
REFERENCE_OF_KIND = {"tabular": "tabular", "dqn": "neural", "value": "neural", "alphazero": "alphazero"}


def side_by_side(default: Headline, full: Headline, studies: tuple[StudyResults, ...] = ()) -> Table:
    """One line per game and kind of learner that either profile evaluated: the default profile's best agent, the
    full profile's, and the reference systems of the same kind; each agent names the opponent it was judged by
    (the strongest one of its game in its profile's runs)."""
    rows_full = {r.game: r for r in full.games}
    games = [r.game for r in default.games] + [g for g in rows_full if g not in {r.game for r in default.games}]
    rows_default = {r.game: r for r in default.games}
    header = ["Game", "Kind", "Default profile ([report](reports/report.md))",
              f"Full profile ([report]({FULL_REPORT}))", "Reference systems (published)"]
    rows = []
    for game in games:
        d, f = rows_default.get(game), rows_full.get(game)
        refs = (d or f).references if (d or f) else []
        for kind in KINDS:
            ours = [r.agents.get(kind.key) if r else None for r in (d, f)]
            if not any(ours):
                continue
            same_kind = [x for x in refs if x.kind == REFERENCE_OF_KIND[kind.key]]
            rows.append([text(game), text(kind.label), *(agent_cell(a, None, code, studies) for a in ours),
                         reference_cell(same_kind)])
    return Table(header, rows)


def report_blocks(h: Headline, name: Name, studies: tuple[StudyResults, ...] = ()) -> list[Block]:
    """The report's headline section: the same table, each experiment named by ``name`` (linked to its section);
    profile and commit are in the report's header, so they are not repeated."""
    return [intro(), table(h, name, studies)]


def _code_list(items: list[str]) -> Inline:
    out: Inline = []
    for i, item in enumerate(items or ["unknown"]):
        out += ([Span(", ")] if i else []) + [Span(item, code=True)]
    return out


NO_RUN = ("No run yet: no pipeline run has written `docs/headline.json`. `make repro` writes it, and this table "
          "with it.\n")


def render(h: Headline | None, full: Headline | None = None, studies: tuple[StudyResults, ...] = ()) -> str:
    """The Markdown between README's markers: the table, or the line saying no run has produced it yet."""
    return NO_RUN if h is None else markdown.render(blocks(h, full, studies))


def block(h: Headline | None, full: Headline | None = None, studies: tuple[StudyResults, ...] = ()) -> str:
    """README's whole generated block, markers included."""
    sources = JSON_PATH.as_posix() + (f" and {FULL_JSON_PATH.as_posix()}" if full is not None else "")
    sources += " and studies/*/results.json" if any(s.table is not None for s in studies) else ""
    note = f"<!-- generated by pipeline/report.py from {sources}: do not edit by hand -->"
    return f"{START}\n{note}\n\n{render(h, full, studies)}{END}"


# ---------------------------------------------------------------------------------------------- README
def _span(readme: str) -> tuple[int, int]:
    starts, ends = readme.count(START), readme.count(END)
    if starts != 1 or ends != 1 or readme.index(START) > readme.index(END):
        raise ReportError(f"README.md must hold the markers {START} and {END} once each, in that order "
                          f"(found {starts} and {ends})")
    return readme.index(START), readme.index(END) + len(END)


def current_block(readme: str) -> str:
    """README's generated block as it stands, markers included."""
    lo, hi = _span(readme)
    return readme[lo:hi]


def published_full(root: Path | None = None) -> Headline | None:
    """The published full profile's headline data (``boardrl publish full``) under ``root`` (default: the working
    directory, the project root where DVC runs the report stage), or None when it was never published.

    Why read here and not passed in by the stage: the stage script's bytes are part of every study's fingerprint
    (``experiments/study_reuse.py``), so README's rendering lives in this module."""
    return load((Path.cwd() if root is None else Path(root)) / FULL_JSON_PATH)


def studies_here(root: Path | None = None) -> tuple[StudyResults, ...]:
    """The studies under ``root`` (default: the working directory, as for ``published_full``) with what they last
    wrote: where the cells find other training seeds of one-seed experiments."""
    return tuple(load_studies(Path.cwd() if root is None else Path(root)))


def with_block(readme: str, h: Headline | None, full: Headline | None = None,
               studies: tuple[StudyResults, ...] | None = None) -> str:
    """``readme`` with its generated block replaced by the one rendered from ``h`` and, beside it, ``full`` (by
    default the published full profile's, ``published_full``), with the other seeds of ``studies`` (by default
    ``studies_here``)."""
    lo, hi = _span(readme)
    rendered = block(h, published_full() if full is None else full, studies_here() if studies is None else studies)
    return readme[:lo] + rendered + readme[hi:]
