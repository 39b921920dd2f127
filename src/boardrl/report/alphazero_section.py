"""The report's AlphaZero section: each AlphaZero experiment's search against the ladder, its network alone, and
the targets of issues 10 and 36, each judged from the numbers.

Why a section of its own: an AlphaZero agent is two players, the search (``eval_simulations`` per move) and its
network's greedy policy, and the optimal-move rates of both side by side say how much the search adds.  The
targets are checked seed by seed from the results (with the checks of ``report/targets.py``), never written by
hand, so a rerun that misses one says so; an experiment without results says "not run" instead of failing the
report.

Where the settings come from: the results hold the training budget and time but not the simulations per move or
the plies of the optimal-move positions.  Those are read from the project's params.yaml and stated as the
evaluation's only when that file's evaluate slice still hashes to the params hash the evaluation recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from boardrl.report.document import Block, Bullets, Heading, Inline, Paragraph, Span, Table, text
from boardrl.report.evaluation import CountedRate, NetworkAlone, SeedReading
from boardrl.report.links import Links, pct, rate_with_ci, with_ci
from boardrl.report.reference_systems import BEST, LEARNER_KINDS, REFERENCE_NUMBERS, SYSTEM004_OPPONENTS
from boardrl.report.results import Experiment, SeedResult, finite
from boardrl.report.sections import budget_text
from boardrl.report.targets import (PLAYED_SEATS, Check, combined_wins, majority, no_loss, optimal_share, seat_wins,
                                    trained_within)

if TYPE_CHECKING:
    from boardrl.config import Params

TITLE = "AlphaZero: search and its network"
KIND = "alphazero"
#: Our AlphaZero experiments, listed (as "not run") even before they have results: the reference systems'
#: reproductions, then our best of each game.
EXPECTED: tuple[str, ...] = tuple(dict.fromkeys(
    [r for n in REFERENCE_NUMBERS if n.kind == KIND for r in n.reproduction]
    + [exp_id for (_, kind), exp_id in BEST.items() if kind == KIND]))

# ---------------------------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Target:
    """One target of an issue: what it asks, in words, and the check that gives its verdict."""

    words: str
    check: Check
    profile: str | None = None  # the params profile the target is set for (None: every profile)
    issue: int = 10  # the issue that set it (10: the first AlphaZero targets; 36: Gumbel and a tenth of the compute)


TARGETS: dict[str, tuple[Target, ...]] = {
    "tictactoe": (Target("no loss against perfect in either seat", no_loss("perfect")),
                  Target("optimal-move rate 100%", optimal_share(1.0))),
    "connect4": (Target("wins the majority against tactical in each seat", majority("tactical"), "default"),
                 Target("wins the majority against maxmin and mcts:simulations=1000 in each seat",
                        majority("maxmin", "mcts:simulations=1000"), "full"),
                 Target("optimal-move rate at least 90%", optimal_share(0.9)),
                 Target("wins at least 90% against maxmin and mcts:simulations=1000 in each seat with at most 15 "
                        "minutes of training a seed",
                        trained_within(15 * 60, seat_wins(0.9, "maxmin", "mcts:simulations=1000")), "default",
                        issue=36)),
    "dots_and_boxes_3x3": (Target("wins at least 80% against advanced (both seats together)",
                                  combined_wins("advanced", 0.8)),
                           Target("wins at least 90% against advanced (both seats together)",
                                  combined_wins("advanced", 0.9), "default", issue=36)),
    "conniption": (Target("beats every player of reference system 004 (" + ", ".join(SYSTEM004_OPPONENTS)
                          + ") in each seat (more than half the games won)", majority(*SYSTEM004_OPPONENTS)),),
}


def conniption_context() -> str:
    """What the second seat of Conniption is worth, computed exactly (about a second): the first player's forced
    win from the empty board (solvers/conniption.py)."""
    from boardrl.games import make_game
    from boardrl.solvers.conniption import forced_win_turns

    game = make_game("conniption")
    turns = forced_win_turns(game, game.initial_state(), 0, 5)
    if turns is None:
        return "Context: the first player forces no win within 5 of its turns from the empty board."
    return (f"Context: from the empty board the first player forces a win within {turns} of its turns "
            "(solvers/conniption.py, an exhaustive search), so every second seat is a lost game against perfect "
            "play, and a second player wins only where its opponent steps off that win.")


#: A sentence of context beside a game's targets, computed when the report is built.
CONTEXT: dict[str, Callable[[], str]] = {"conniption": conniption_context}


def target_items(e: Experiment, s: SeedResult) -> list[Inline]:
    """One bullet per target of the experiment's game: the target and its verdict from seed ``s``'s numbers;
    then the game's context, where it has one."""
    items = []
    for t in TARGETS.get(e.game, ()):
        where = ""
        if t.profile is not None:
            where = f" [the {t.profile} profile's target" + (
                "]" if e.profile == t.profile else f"; these numbers come from profile {e.profile or 'unknown'}]")
        items.append(text(f"Target (issue {t.issue}): {t.words}{where}: {t.check(s)}"))
    if e.game in CONTEXT:
        items.append(text(CONTEXT[e.game]()))
    return items


# ---------------------------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class Settings:
    """What the results do not hold: simulations per move in evaluation and the plies of the position set."""

    simulations: int | None = None
    plies: tuple[int, ...] | None = None
    caveat: str = ""  # why the values may not be the evaluation's ("" when the params hash matches)
    tactics: bool = False  # leaf values exact where the game's short-tactics check settles them (eval_tactics)
    rollout_weight: float = 0.0  # the share of a leaf's value from random playouts (eval_rollout_weight)
    rollouts: int = 1  # random playouts per leaf when rollout_weight > 0 (eval_rollouts)


def settings(e: Experiment, params: Params | None) -> Settings:
    """The experiment's evaluation settings from ``params`` (a validated ``config.Params``), checked against the
    params hash its evaluation recorded."""
    if params is None:
        return Settings(caveat="params.yaml not found beside results/")
    if e.id not in params.experiments:
        return Settings(caveat=f"{e.id} is not in params.yaml")
    from boardrl.config import evaluate_slice
    from boardrl.tracking.provenance import params_hash

    spec = params.spec(e.id)
    learner = spec.learner_params
    sims = getattr(learner, "eval_simulations", None)
    tactics = bool(getattr(learner, "eval_tactics", False))
    rollout_weight = float(getattr(learner, "eval_rollout_weight", 0.0))
    rollouts = int(getattr(learner, "eval_rollouts", 1))
    per_game = params.evaluate.per_game.get(e.game)
    plies = tuple(per_game.optimal_plies) if per_game is not None and per_game.optimal_plies else None
    recorded = {s.eval_run.params_hash if s.eval_run is not None else None for s in e.evaluated.values()}
    if not recorded:
        caveat = "as params.yaml says now; not evaluated yet"
    elif recorded == {params_hash(evaluate_slice(spec))}:
        caveat = ""
    else:
        caveat = "as params.yaml says now; the evaluation recorded another params hash, so it may have used another"
    return Settings(sims, plies, caveat, tactics, rollout_weight, rollouts)


def project_params(project: Path | None) -> Params | None:
    """``project``/params.yaml validated (``config.load_params``), or None where there is none."""
    path = None if project is None else Path(project) / "params.yaml"
    if path is None or not path.is_file():
        return None
    from boardrl.config import load_params

    return load_params(path)


# ---------------------------------------------------------------------------------------------- one experiment
def ladder_table(s: SeedResult, links: Links) -> Table:
    """Rows: the ladder's opponents; columns: W/D/L as first and as second with their Wilson intervals."""
    rows = []
    for opp, block in s.opponents.items():
        cells = [[links.number(rate_with_ci(block.seats[seat], out), s.eval_provenance)]
                 for seat in PLAYED_SEATS for out in ("win", "draw", "loss")]
        games = " + ".join(f"{block.seats[seat].games:,}" for seat in PLAYED_SEATS)
        rows.append([[Span(opp, code=True)], *cells, text(games)])
    header = ["Opponent", "As first: win", "As first: draw", "As first: loss", "As second: win", "As second: draw",
              "As second: loss", "Games (first + second)"]
    return Table(header, rows, numeric=frozenset(range(1, 8)))


def _plies_text(plies: Any) -> str:
    if not plies:
        return ""
    lo, hi = (plies, plies) if isinstance(plies, int) else tuple(plies)
    return f" (plies {lo}-{hi} of random play)" if lo != hi else f" (ply {lo} of random play)"


def _rate_spans(player: SeedReading | NetworkAlone | None, prov: dict[str, Any], links: Links, plies: Any) -> Inline:
    """``player``'s optimal-move rate with its interval, positions and plies (the block's own, else ``plies``)."""
    rate = player.optimal_move_rate if player is not None else None
    if player is None or finite(rate) is None:
        return text("not measured")
    detail = player.optimal_move or CountedRate()
    own = detail.plies if "plies" in detail.model_fields_set else plies
    where = (f" on {detail.n:,} positions" if detail.n else "") + _plies_text(own)
    return [links.number(with_ci(rate, detail.ci), prov), Span(where)]


def optimal_item(s: SeedResult, links: Links, st: Settings) -> Inline:
    """Optimal-move rate with search beside the network alone, each with its interval and positions."""
    ev, prov = s.evaluation, s.eval_provenance
    alone = ev.network_alone if ev is not None else None
    return [Span("Optimal-move rate with search: "), *_rate_spans(ev, prov, links, st.plies),
            Span("; network alone (greedy, no search): "), *_rate_spans(alone, prov, links, st.plies)]


def value_item(s: SeedResult, links: Links) -> list[Inline]:
    """Value accuracy on the UCI labels where it was measured (Connect 4)."""
    va = s.evaluation.value_accuracy if s.evaluation is not None else None
    if va is None:
        return []
    acc = va.accuracy or CountedRate()
    n = va.positions or acc.n
    where = f" on {int(n):,} positions" if n else ""
    balanced = finite(va.balanced_accuracy)
    return [[Span("Value accuracy on the UCI labels: "),
             links.number(with_ci(acc.rate, acc.ci), s.eval_provenance),
             Span(where + (f" (balanced {pct(balanced)})" if balanced is not None else ""))]]


def _seconds_text(s: SeedResult) -> str:
    secs = s.training_seconds
    return "training time not recorded" if secs is None else f"trained in {secs:,.1f} s"


def seed_blocks(e: Experiment, k: int, s: SeedResult, links: Links, st: Settings) -> list[Block]:
    """One evaluated seed: the ladder table, the two optimal-move rates, value accuracy and the targets."""
    return [Paragraph(text(f"Seed {k}, {_seconds_text(s)}: W/D/L per seat against the ladder with 95% Wilson "
                           "intervals (percent).")),
            ladder_table(s, links),
            Bullets([optimal_item(s, links, st), *value_item(s, links), *target_items(e, s)])]


def _search_text(st: Settings) -> str:
    if st.simulations is None:
        return f"simulations per move unknown ({st.caveat})"
    tactics = ", with exact values at the leaves that one turn of tactics settles (eval_tactics)" if st.tactics else ""
    playouts = (f", each leaf valued {st.rollout_weight:g} by the mean of {st.rollouts:,} random playout"
                f"{'s' if st.rollouts != 1 else ''} and {1 - st.rollout_weight:g} by the network (eval_rollout_weight, "
                "eval_rollouts)") if st.rollout_weight > 0 else ""
    return (f"{st.simulations:,} simulations per move (eval_simulations" + (f"; {st.caveat})" if st.caveat else ")")
            + playouts + tactics)


def experiment_section(exp_id: str, e: Experiment | None, links: Links, params: Params | None) -> list[Block]:
    """One AlphaZero experiment, or "not run" where it has no results or no evaluation."""
    head = Heading(3, exp_id)
    if e is None:
        return [head, Paragraph(text(links.experiment(exp_id), ": not run (no results under ",
                                     Span("results/", code=True), ")."))]
    st = settings(e, params)
    line = Paragraph(text(links.experiment(e.id), f": {e.game}, {budget_text(e)} of self-play per seed, evaluated "
                          f"with {_search_text(st)}, profile ", Span(e.profile or "unknown", code=True), "."))
    if not e.evaluated:
        trained = ", ".join(f"seed {k} {_seconds_text(s)}" for k, s in e.seeds.items())
        return [head, line, Paragraph(text(f"Evaluation not run ({trained}); targets of issues 10 and 36: not run."))]
    return [head, line, *(b for k, s in e.evaluated.items() for b in seed_blocks(e, k, s, links, st))]


# ---------------------------------------------------------------------------------------------- the section
def alphazero_blocks(exps: list[Experiment], links: Links, params: Params | None = None) -> list[Block]:
    """The section, when any AlphaZero experiment has results (else nothing): every expected AlphaZero
    experiment ("not run" where missing) and any other found."""
    found = {e.id: e for e in exps if LEARNER_KINDS.get(e.learner) == KIND}
    if not found:
        return []
    ids = list(dict.fromkeys([*EXPECTED, *found]))
    intro = Paragraph(text(
        "Each AlphaZero agent searches every move; below, per seed, its W/D/L against the ladder in each seat, its "
        "optimal-move rate with search beside its network's greedy policy alone (both judged by the referee on "
        "the same positions), and the targets of issue 10, each judged from these numbers: tic-tac-toe no loss "
        "against perfect and 100% optimal moves; Connect 4 the majority against tactical in each seat (default "
        "profile), against maxmin and mcts:simulations=1000 (full profile) and at least 90% optimal moves; Dots "
        "and Boxes 3x3 at least 80% wins against advanced; Conniption more than half the games against each "
        "player of reference system 004 in each seat.  Issue 36 raised them for the default profile: Connect 4 "
        "at least 90% against maxmin and mcts:simulations=1000 in each seat with at most 15 minutes of training "
        "a seed, Dots and Boxes 3x3 at least 90% against advanced."))
    return [Heading(2, TITLE), intro, *(b for i in ids for b in experiment_section(i, found.get(i), links, params))]


def alphazero_section(exps: list[Experiment], links: Links, project: Path | None) -> list[Block]:
    """``alphazero_blocks`` with the settings of ``project``/params.yaml (read only when there is a section)."""
    if not any(LEARNER_KINDS.get(e.learner) == KIND for e in exps):
        return []
    return alphazero_blocks(exps, links, project_params(project))
