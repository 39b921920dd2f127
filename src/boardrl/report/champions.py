"""The agents ``boardrl register`` puts in MLflow's model registry: each game's headline agents and its champion.

Each game is one registered model (``connect4``); each kind of learner's headline agent (``report/headline.py``:
the best of that kind against the strongest opponent it met) is a version of it under the kind's alias
(``tabular``, ``dqn``, ``value``, ``alphazero``), and the best of them is ``champion``.  A profile other than
the default prefixes its aliases (``full-champion``), so registering the full profile's agents does not move the
default's.

Why the champion is judged against the strongest opponent that *every* headline agent of the game met, not the
headline's own opponent: the headline judges each kind against the strongest opponent that kind met, and those
differ (Connect 4's DQN meets ``mcts:simulations=200`` in its ladder, its AlphaZero ``maxmin`` and
``mcts:simulations=1000``), so their scores are not on one scale.  The version is the lowest evaluated seed's
model, the one ``model:<experiment id>`` plays.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from boardrl.report.headline import best_agent, headline, pooled, strength_order
from boardrl.report.results import Experiment, ReportError

CHAMPION = "champion"


@dataclass(frozen=True)
class Pick:
    """One agent to register: the game (the registered model's name), its aliases, the experiment and seed, and
    the opponent the champion was chosen against."""

    game: str
    aliases: tuple[str, ...]
    experiment: Experiment
    seed: int
    judged_against: str

    @property
    def run_id(self) -> str:
        summary = self.experiment.seeds[self.seed].summary or {}
        run_id = summary.get("mlflow_run_id")
        if not isinstance(run_id, str) or not run_id:
            raise ReportError(f"{self.experiment.id} seed {self.seed}: its train summary names no MLflow run")
        return run_id


def champion(candidates: list[Experiment], order: list[str]) -> tuple[Experiment, str] | None:
    """The best of ``candidates`` against the strongest opponent of ``order`` that all of them met (else, the
    strongest any of them met), and that opponent."""
    common = [o for o in order if all(pooled(e, o, "combined") is not None for e in candidates)]
    return best_agent(candidates, common or order)


def alias(name: str, profile: str | None) -> str:
    return name if profile in (None, "default") else f"{profile}-{name}"


def picks(exps: list[Experiment]) -> list[Pick]:
    """The headline agents of every game with their aliases; the champion's version carries ``champion`` too."""
    by_id = {e.id: e for e in exps}
    out = []
    for row in headline(exps).games:
        agents = {kind: by_id[a.experiment] for kind, a in row.agents.items() if a is not None}
        if not agents:
            continue
        order = strength_order([e for e in exps if e.game == row.game and e.evaluated])
        best = champion(list(agents.values()), order)
        for kind, e in agents.items():
            names = [kind] + ([CHAMPION] if best is not None and best[0] is e else [])
            out.append(Pick(row.game, tuple(alias(n, e.profile) for n in names), e, min(e.evaluated),
                            best[1] if best is not None else ""))
    return out


def register_headline(root: Path) -> list[tuple[Pick, object]]:
    """Register every pick of the results under ``root`` (``tracking/registry.py``); [(pick, Registered)]."""
    from boardrl.paths import ExperimentPaths
    from boardrl.report.results import load_results
    from boardrl.tracking.registry import register

    exps = load_results(Path(root) / "results")
    done = []
    for p in picks(exps):
        e = p.experiment
        tags = {"experiment": e.id, "seed": str(p.seed), "learner": e.learner, "profile": e.profile or "unknown",
                "budget": str(e.budget), "champion_judged_against": p.judged_against,
                "git_commit": str((e.seeds[p.seed].summary or {}).get("git_commit"))}
        done.append((p, register(Path(root), p.game, ExperimentPaths(Path(root), e.id).model(p.seed), p.run_id,
                                 list(p.aliases), tags)))
    return done
