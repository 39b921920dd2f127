"""The sweep objective: train an experiment's learner with a trial's params, score it against its opponents.

It runs the same code as the pipeline's train stage (``experiments.train.train_seed``: the learner base, the
curve evaluator) at the sweep's training budget.  At every evaluation point the learner's score against the
experiment's benchmark opponents (mean over opponents of win + draw/2, both seats) is reported to Optuna, so a
``MedianPruner`` can stop a bad trial early.  With several training seeds a trial trains one after another and
reports the running mean (step = seed index * (budget + 1) + progress, the same steps in every trial, so the
pruner compares like with like); the trial's value is the mean of the seeds' final scores, which is far less
noisy than one seed.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from boardrl.config import Params
from boardrl.experiments.curve import score
from boardrl.learn.core.space import Space, learner_base, set_dotted, suggest_values

#: ``on_report(trial, step, value)``: where intermediate values also go (the MLflow trial run).
ReportHook = Callable[[Any, int, float], None]

TRIAL_PREFIX = "boardrl-trial-{pid}-"  # a trial's checkpoint folder names its trainer's process
TRIAL_FOLDER = re.compile(r"^boardrl-trial-(\d+)-")


def remove_orphaned_trial_folders(parent: str | Path | None = None) -> list[Path]:
    """Remove the checkpoint folders of trials whose trainer is gone; returns them.

    Why: a trial's folder is a ``TemporaryDirectory``, which a killed trainer (a sweep worker stopped with
    SIGKILL, a machine's out-of-memory killer) cannot remove, and a trial's checkpoints are the learner's whole
    state (replay buffers: megabytes each).  The folder names its trainer's pid, so the next trial removes those
    of processes that no longer exist and never one of a trial still running elsewhere."""
    import psutil

    removed = []
    base = Path(parent if parent is not None else tempfile.gettempdir())
    for folder in base.glob("boardrl-trial-*"):
        found = TRIAL_FOLDER.match(folder.name)
        if found and folder.is_dir() and not psutil.pid_exists(int(found.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@dataclass
class SweepSettings:
    """What one study searches: an experiment of params.yaml, the space, the budget per seed, the seeds."""

    experiment: str
    space: Space
    budget: int | None = None
    seeds: list[int] = field(default_factory=lambda: [0])

    def to_attrs(self) -> dict[str, Any]:
        """JSON-able form kept in the study's user attributes (a study remembers what it searches)."""
        return {"experiment": self.experiment, "budget": self.budget, "seeds": list(self.seeds),
                "space": {k: d.model_dump(exclude_none=True) for k, d in sorted(self.space.items())}}


def trial_learner_params(params: Params, settings: SweepSettings, values: dict[str, Any]) -> dict[str, Any]:
    """The experiment's learner params with the trial's values (dotted keys) and the sweep's budget applied."""
    out = dict(params.experiment(settings.experiment).params)
    for key, value in values.items():
        out = set_dotted(out, key, value)
    if settings.budget is not None:
        out[params.budget(settings.experiment)[0]] = settings.budget
    return out


def with_learner_params(params: Params, exp_id: str, learner_params: dict[str, Any]) -> Params:
    """A copy of ``params`` whose experiment ``exp_id`` trains with ``learner_params``."""
    e = params.experiment(exp_id)
    experiments = {**params.experiments, exp_id: e.model_copy(update={"params": learner_params})}
    return params.model_copy(update={"experiments": experiments})


class Objective:
    """``objective(trial) -> score``; Optuna calls it, and so can a test with ``optuna.trial.FixedTrial``."""

    def __init__(self, params: Params, settings: SweepSettings, processes: int = 1,
                 on_report: ReportHook | None = None) -> None:
        self.params, self.settings, self.processes, self.on_report = params, settings, processes, on_report

    def suggest(self, trial: Any) -> dict[str, Any]:
        """The learner values (dotted keys) of this trial: fractions multiplied out by the experiment's params
        and the sweep's budget, conditional dimensions only where they apply (``learn.core.space``)."""
        from boardrl.learn import learner_class

        cls = learner_class(self.params.experiment(self.settings.experiment).learner)
        base, budget = learner_base(cls.params_model, cls.unit, trial_learner_params(self.params, self.settings, {}))
        return suggest_values(self.settings.space, trial, base, budget)

    def __call__(self, trial: Any) -> float:
        import optuna

        from boardrl.experiments.train import train_seed

        s = self.settings
        lp = trial_learner_params(self.params, s, self.suggest(trial))
        spec = with_learner_params(self.params, s.experiment, lp).spec(s.experiment)
        total = spec.budget
        finals: list[float] = []
        remove_orphaned_trial_folders()
        for i, seed in enumerate(s.seeds):
            def report(step: int, record: dict[str, Any], i: int = i) -> None:
                value = (sum(finals) + score(record)) / (len(finals) + 1)
                global_step = i * (total + 1) + step
                trial.report(value, global_step)
                if self.on_report is not None:
                    self.on_report(trial, global_step, value)
                if trial.should_prune():
                    raise optuna.TrialPruned(f"pruned at {step} of seed {seed}: running score {value:.4f}")

            with tempfile.TemporaryDirectory(prefix=TRIAL_PREFIX.format(pid=os.getpid())) as ckpt:
                _, learner = train_seed(spec, seed, ckpt, processes=self.processes,
                                        on_eval_extra=report, verbose=False)
            finals.append(score(learner.evaluations[total]))
        return sum(finals) / len(finals)

