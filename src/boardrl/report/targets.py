"""The issues' strength targets, each judged from the pipeline's own numbers: met, short (by how much), or not
measured.

Why a module of its own: a target is a claim about the results ("Connect 4: the pipeline's AlphaZero wins at least
90% against maxmin and mcts:simulations=1000 from both seats", issue 39), so the report checks it from the numbers
and never states it by hand; a rerun that misses one says so.  The checks judge one training seed's numbers (one
trained model: ``Check``); the AlphaZero section applies them to each of its seeds, and the report's "Targets"
section (``target_blocks``) asks of each target whether any evaluated model of the game (of the kind it names)
meets it, naming the models that do, or the closest one and its shortfalls.

Each target names the profile it is set for (issue 39's: ``full``, the reference systems' budgets); judged on
another profile's numbers, its line says whose numbers they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from boardrl.experiments.study_table import UCI_CLASSES
from boardrl.report.document import Block, Bullets, Heading, Inline, Paragraph, Span, text
from boardrl.report.headline import KINDS
from boardrl.report.links import pct
from boardrl.report.reference_systems import SYSTEM004_OPPONENTS
from boardrl.report.results import Experiment, SeedResult, finite
from boardrl.report.evaluation import CountedRate, SeatReading
from boardrl.report.sections import SEAT_NAMES

PLAYED_SEATS = ("as_first", "as_second")


@dataclass(frozen=True)
class Verdict:
    """A target's outcome from one seed's numbers: met, short of it (each shortfall in words), or not measured
    (why).  Structured so that a check built on another (``trained_within``) adds to its shortfalls instead of
    parsing its sentence."""

    shortfalls: tuple[str, ...] = ()
    unmeasured: str | None = None

    @property
    def met(self) -> bool:
        return self.unmeasured is None and not self.shortfalls

    def __str__(self) -> str:
        if self.unmeasured is not None:
            return f"not measured ({self.unmeasured})"
        return "met" if not self.shortfalls else f"not met ({'; '.join(self.shortfalls)})"


def not_measured(why: str) -> Verdict:
    return Verdict(unmeasured=why)


Check = Callable[[SeedResult], Verdict]


def seat_count(stats: SeatReading, out: str) -> tuple[int, int]:
    """(count of ``out``, games) of one seat block: the stored count, else the rate times the games."""
    count = stats.count(out)
    if count is None:
        count = round((finite(stats.rate(out)) or 0.0) * stats.games)
    return int(count), stats.games


def near(rate: float | None, bound: float) -> str:
    """``rate`` in percent, with more decimals where one would print it as ``bound`` without it being so
    (1,799 of 2,000 is 89.95%, not "90.0%", beside a 90% target)."""
    if rate is None:
        return pct(None)
    digits = 1
    while digits < 4 and rate != bound and round(100 * rate, digits) == round(100 * bound, digits):
        digits += 1
    return pct(rate, digits)



def no_loss(opponent: str) -> Check:
    """Not one game lost to ``opponent`` in either seat."""
    def check(s: SeedResult) -> Verdict:
        missing = _missing(s, (opponent,))
        if missing:
            return missing
        lost = [(seat, *seat_count(s.opponents[opponent].seats[seat], "loss")) for seat in PLAYED_SEATS]
        return Verdict(tuple(f"{k:,} loss{'es' if k != 1 else ''} in {n:,} games {SEAT_NAMES[seat]}"
                             for seat, k, n in lost if k > 0 or n == 0))
    return check


def majority(*opponents: str) -> Check:
    """More than half the games won against each of ``opponents`` in each seat."""
    return seat_wins(0.5, *opponents, strictly=True)


def seat_wins(least: float, *opponents: str, strictly: bool = False) -> Check:
    """At least ``least`` of the games won (more than, if ``strictly``) against each of ``opponents`` in each
    seat; the seats that fall short, with their rates."""
    def check(s: SeedResult) -> Verdict:
        missing = _missing(s, opponents)
        if missing:
            return missing
        short = []
        for opp in opponents:
            for seat in PLAYED_SEATS:
                wins, n = seat_count(s.opponents[opp].seats[seat], "win")
                ok = n > 0 and (wins > least * n if strictly else wins >= least * n - 1e-9)
                if not ok:
                    who = f"{opp}: " if len(opponents) > 1 else ""
                    short.append(f"{who}{near(wins / n if n else None, least)} {SEAT_NAMES[seat]}")
        return Verdict(tuple(short))
    return check


def trained_within(seconds: float, strength: Check) -> Check:
    """``strength`` met by a seed whose training took at most ``seconds`` (its summary's training time, all its
    processes); every shortfall named, the strength's first."""
    def check(s: SeedResult) -> Verdict:
        judged = strength(s)
        if judged.unmeasured is not None:
            return judged
        took = s.training_seconds
        if took is None or took <= 0:
            return not_measured("no training time in the summary")
        late = (f"trained {int(took // 60)} min {took % 60:.0f} s",) if took > seconds else ()
        return Verdict(judged.shortfalls + late)
    return check


def combined_wins(opponent: str, least: float) -> Check:
    """At least ``least`` of the games won against ``opponent``, both seats together."""
    def check(s: SeedResult) -> Verdict:
        missing = _missing(s, (opponent,))
        if missing:
            return missing
        wins, n = seat_count(s.opponents[opponent].combined, "win")
        ok = n and wins >= least * n - 1e-9
        return Verdict(() if ok else (f"{near(wins / n if n else None, least)} combined",))
    return check


def optimal_share(least: float) -> Check:
    """An optimal-move rate (with search) of at least ``least``; counts where the results hold them."""
    def check(s: SeedResult) -> Verdict:
        ev = s.evaluation
        rate = finite(ev.optimal_move_rate) if ev is not None else None
        if ev is None or rate is None:
            return not_measured("no optimal-move rate")
        detail = ev.optimal_move or CountedRate()
        good, n = detail.optimal, detail.n
        ok = good >= least * n - 1e-9 if good is not None and n else rate >= least - 1e-9
        if ok:
            return Verdict()
        misses = f": {n - good:,} of {n:,} moves not optimal" if good is not None and n else ""
        return Verdict((f"{near(rate, least)}{misses}",))
    return check


def _missing(s: SeedResult, opponents: tuple[str, ...]) -> Verdict | None:
    absent = [o for o in opponents if o not in s.opponents]
    return not_measured(f"no {', '.join(absent)} in the ladder") if absent else None


def uci_classes(least: float) -> Check:
    """Reference system 000's UCI protocol: at least ``least`` of the games won from the positions of every label
    class (the agent moves first from each position)."""
    def check(s: SeedResult) -> Verdict:
        uci = s.uci.seed000 if s.uci is not None else None
        if not uci:
            return not_measured("no UCI protocol of reference system 000")
        short = []
        for label in UCI_CLASSES:
            if label not in uci:
                return not_measured(f"no {label} class in the UCI protocol")
            wins, n = seat_count(uci[label], "win")
            if not (n and wins >= least * n - 1e-9):
                short.append(f"{near(wins / n if n else None, least)} from the {label} class")
        return Verdict(tuple(short))
    return check


# ---------------------------------------------------------------------------------------------- across models
@dataclass(frozen=True)
class GameTarget:
    """A target any evaluated model of ``game`` may meet (of the learners ``learners``, when given)."""

    issue: int
    profile: str
    words: str
    game: str
    check: Check
    learners: frozenset[str] | None = None


#: Issue 39's targets of the published full profile.  Learners by the headline's columns: a target about one kind of
#: system is judged on that kind only (reference system 000 was a neural network without search: DQN or value).
DQN_LEARNERS = next(k.learners for k in KINDS if k.key == "dqn")
NEURAL_LEARNERS = DQN_LEARNERS | next(k.learners for k in KINDS if k.key == "value")
GAME_TARGETS: tuple[GameTarget, ...] = (
    GameTarget(39, "full", "Connect 4: AlphaZero wins at least 90% against maxmin and mcts:simulations=1000 from both "
               "seats", "connect4", seat_wins(0.9, "maxmin", "mcts:simulations=1000"), frozenset({"alphazero"})),
    GameTarget(39, "full", "Connect 4: a DQN wins at least 90% against maxmin from both seats", "connect4",
               seat_wins(0.9, "maxmin"), DQN_LEARNERS),
    GameTarget(39, "full", "Conniption: an agent beats all five players of reference system 004 from both seats "
               "(more than half the games won)", "conniption", majority(*SYSTEM004_OPPONENTS)),
    GameTarget(39, "full", "Dots and Boxes 3x3: an agent wins at least 97% against advanced (both seats together)",
               "dots_and_boxes_3x3", combined_wins("advanced", 0.97)),
    GameTarget(39, "full", "Reference system 000's UCI protocol: a DQN or value learner (its kind) wins at least 97% "
               "from every label class", "connect4", uci_classes(0.97), NEURAL_LEARNERS),
)


def _fewest_shortfalls(judged: list[tuple[Experiment, int, Verdict]]) -> tuple[Experiment, int, Verdict]:
    return min(judged, key=lambda j: (len(j[2].shortfalls), j[0].id, j[1]))


def judge(t: GameTarget, exps: list[Experiment]) -> Inline:
    """The verdict of ``t`` over every evaluated seed of the game's experiments (of its learners)."""
    judged = [(e, k, t.check(s)) for e in exps if e.game == t.game and (t.learners is None or e.learner in t.learners)
              for k, s in sorted(e.evaluated.items())]
    met = [(e, k) for e, k, v in judged if v.met]
    if met:
        out: Inline = [Span("met by ")]
        for i, (e, k) in enumerate(met[:4]):
            out += [Span(", " if i else ""), Span(e.id, code=True), Span(f" seed {k}")]
        return out + ([Span(f" and {len(met) - 4} more")] if len(met) > 4 else [])
    measured = [j for j in judged if j[2].unmeasured is None]
    if not measured:
        why = "; ".join(sorted({str(v.unmeasured) for _, _, v in judged})) or "no evaluated experiment"
        return [Span(f"not measured ({why})")]
    e, k, v = _fewest_shortfalls(measured)
    return [Span("not met (closest: "), Span(e.id, code=True), Span(f" seed {k}: {'; '.join(v.shortfalls)})")]


def target_line(t: GameTarget, exps: list[Experiment]) -> Inline:
    profiles = sorted({e.profile or "unknown" for e in exps if e.game == t.game})
    whose = "" if profiles == [t.profile] else f"; these numbers come from profile {', '.join(profiles) or 'none'}"
    return [Span(f"Target (issue {t.issue}) [the {t.profile} profile's target{whose}]: {t.words}: "),
            *judge(t, exps)]


def target_blocks(exps: list[Experiment]) -> list[Block]:
    """The report's "Targets" section: each ``GAME_TARGETS`` line with its verdict (the AlphaZero section judges
    the AlphaZero targets seed by seed)."""
    return [Heading(2, "Targets"),
            Paragraph(text("Each target of the issues that is met by any trained model: met by which experiments and "
                           "seeds, or the closest one and what it lacks. Judged per training seed, from the "
                           "evaluate stage's numbers (", Span("src/boardrl/report/targets.py", code=True), ").")),
            Bullets([target_line(t, exps) for t in GAME_TARGETS])]
