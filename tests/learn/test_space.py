"""Search spaces that exclude nonsense (issue 38): an exploration schedule never starts below its end nor decays
longer than the trial trains; a constant schedule draws neither; the best values and `--apply` speak in learner
params, and the printed command pastes into a shell as it is."""

from __future__ import annotations

import shlex

import optuna
import pytest
import yaml
from hydra.core.override_parser.overrides_parser import OverridesParser

from boardrl.config import parse_params
from boardrl.sweeps.objective import Objective
from boardrl.sweeps.outputs import apply_args, apply_line, best_overlay, override_value, trials_table
from boardrl.sweeps.run import resolve_settings
from boardrl.learn.core.space import VALUES_ATTR, SpaceError, experiment_space, optuna_name, trial_values
from boardrl.sweeps.storage import SweepError
from boardrl.sweeps.study import OBJECTIVE_NAME, SweepJob, name_objective, sampler
from sweeps.test_sweeps import EXP, small_params

DECAYING = ("linear", "exponential")


def draw(budget: int, space: dict | None, n: int, make_sampler) -> list[dict]:
    """The learner values of ``n`` trials the sampler draws (nothing trained: every trial is told 0)."""
    params = parse_params(small_params())
    settings = resolve_settings(params, EXP, space, budget=budget, seeds=[0])
    objective = Objective(params, settings)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(direction="maximize", sampler=make_sampler(settings, params))
    out = []
    for i in range(n):
        trial = study.ask()
        out.append(objective.suggest(trial))
        study.tell(trial, float(i % 7) / 7)  # some signal, so TPE leaves its startup phase with a model
    return out


def random_sampler(settings, params):
    return optuna.samplers.RandomSampler(seed=3)


def sweep_sampler(settings, params):
    """The sampler a sweep uses (multivariate, grouped TPE)."""
    job = SweepJob(params=params, settings=settings, study_name="s", storage_url="journal:x", n_trials=30)
    return sampler(job, 0)


@pytest.mark.parametrize("make_sampler, n", [(random_sampler, 400), (sweep_sampler, 30)])
@pytest.mark.parametrize("budget", [300, 20_000])
def test_exploration_never_starts_below_its_end_nor_outlasts_the_budget(budget, make_sampler, n):
    drawn = draw(budget, None, n, make_sampler)
    decaying = [v for v in drawn if v["exploration.schedule"] in DECAYING]
    constant = [v for v in drawn if v["exploration.schedule"] == "constant"]
    assert decaying and (constant or make_sampler is sweep_sampler)
    for v in decaying:
        assert 0.0 <= v["exploration.end"] <= v["exploration.start"], v
        assert isinstance(v["exploration.decay_games"], int) and 1 <= v["exploration.decay_games"] <= budget, v
    for v in constant:  # nothing drawn that a constant schedule ignores
        assert "exploration.end" not in v and "exploration.decay_games" not in v
    if make_sampler is random_sampler:  # the whole range is used: decays from ~1% to ~100% of the budget
        decays = [v["exploration.decay_games"] for v in decaying]
        assert min(decays) < budget * 0.02 and max(decays) > budget * 0.9


def test_the_budget_bound_follows_the_experiment_when_the_sweep_sets_none():
    params = parse_params(small_params())
    own = params.budget(EXP)[1]
    settings = resolve_settings(params, EXP, None, budget=None, seeds=[0])
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    decays = []
    for _ in range(200):
        trial = study.ask()
        v = Objective(params, settings).suggest(trial)
        study.tell(trial, 0.0)
        decays += [v["exploration.decay_games"]] if "exploration.decay_games" in v else []
    assert decays and max(decays) <= own and max(decays) > own * 0.5


def test_a_fixed_schedule_of_the_experiment_decides_what_is_drawn():
    """Schedule dropped from the space: the experiment's own (constant) schedule rules, so no end or decay."""
    params = parse_params(small_params())
    assert params.learner_params(EXP).exploration.schedule == "constant"
    assert all("exploration.end" not in v for v in draw(500, {"exploration.schedule": None}, 30, random_sampler))
    only_linear = draw(500, {"exploration.schedule": {"choices": ["linear"]}}, 30, random_sampler)
    assert all(v["exploration.end"] <= v["exploration.start"] for v in only_linear)


def test_optuna_sees_fractions_and_the_trial_keeps_the_learner_values():
    drawn = draw(1000, {"exploration.schedule": {"choices": ["linear"]}}, 1, random_sampler)[0]
    space = experiment_space("tabular_q", {}, None, 1000)
    assert optuna_name("exploration.end", space["exploration.end"]) == "exploration.end/exploration.start"
    assert optuna_name("exploration.decay_games", space["exploration.decay_games"]) == "exploration.decay_games/budget"
    assert optuna_name("alpha", space["alpha"]) == "alpha"
    assert drawn["exploration.end"] <= drawn["exploration.start"]


@pytest.mark.parametrize("override, message", [
    ({"exploration.end": {"high": 2.0}}, "space.exploration.end = 2.0 is not a valid learner param"),
    ({"exploration.end": {"of": "exploration.decay_games"}}, "is itself a fraction"),
    ({"exploration.end": {"type": "int", "low": 0, "high": 1}}, "its type is float, not int"),
])
def test_a_bad_fraction_is_one_line(override, message):
    params = parse_params(small_params())
    with pytest.raises(SweepError, match=message):
        resolve_settings(params, EXP, override, budget=100, seeds=[0])


def test_a_narrowed_fraction_stays_a_fraction():
    """`exploration.end: {high: 0.2}` narrows the fraction of start: end is at most a fifth of start."""
    drawn = draw(800, {"exploration.schedule": {"choices": ["exponential"]}, "exploration.end": {"high": 0.2}},
                 100, random_sampler)
    assert all(v["exploration.end"] <= 0.2 * v["exploration.start"] + 1e-12 for v in drawn)


def _study_with_best(values: dict, optuna_params: dict, dists: dict) -> optuna.Study:
    study = optuna.create_study(direction="maximize")
    study.add_trial(optuna.trial.create_trial(params=optuna_params, distributions=dists, value=0.75,
                                              user_attrs={VALUES_ATTR: values}))
    return study


BEST = {"alpha": 0.25, "exploration.schedule": "linear", "exploration.start": 0.8, "exploration.end": 0.2,
        "exploration.decay_games": 5000}
DRAWN = {"alpha": 0.25, "exploration.schedule": "linear", "exploration.start": 0.8,
         "exploration.end/exploration.start": 0.25, "exploration.decay_games/budget": 0.25}
DISTS = {"alpha": optuna.distributions.FloatDistribution(0.01, 1.0, log=True),
         "exploration.schedule": optuna.distributions.CategoricalDistribution(["constant", "linear", "exponential"]),
         "exploration.start": optuna.distributions.FloatDistribution(0.05, 1.0),
         "exploration.end/exploration.start": optuna.distributions.FloatDistribution(0.0, 0.5),
         "exploration.decay_games/budget": optuna.distributions.FloatDistribution(0.01, 1.0, log=True)}


def test_best_params_and_the_trials_table_are_learner_values():
    study = _study_with_best(BEST, DRAWN, DISTS)
    assert trial_values(study.best_trial) == BEST
    assert best_overlay(study, EXP)["experiments"][EXP]["params"]["exploration"] == {
        "schedule": "linear", "start": 0.8, "end": 0.2, "decay_games": 5000}
    name_objective(study)
    table = trials_table(study)
    assert list(table.columns[:3]) == ["number", "value", "state"] and table["value"].tolist() == [0.75]
    assert [c for c in table.columns if c.startswith("params_")] == [f"params_{k}" for k in sorted(BEST)]
    assert table["params_exploration.decay_games"].tolist() == [5000]
    assert not any(VALUES_ATTR in c for c in table.columns)


def test_a_study_without_learner_values_falls_back_to_its_params():
    """Studies made before the values were kept: their Optuna params are the learner values."""
    study = optuna.create_study(direction="maximize")
    study.add_trial(optuna.trial.create_trial(params={"alpha": 0.5}, distributions={"alpha": DISTS["alpha"]},
                                              value=0.5))
    assert trial_values(study.best_trial) == {"alpha": 0.5}


def test_the_objective_is_named():
    study = optuna.create_study(direction="maximize")
    name_objective(study)
    assert study.metric_names == [OBJECTIVE_NAME] != ["Objective 0"]


def test_the_apply_line_pastes_into_a_shell_and_dvc_reads_back_the_values():
    study = _study_with_best(BEST, DRAWN, DISTS)
    line = apply_line(study, EXP)
    assert "'\"'\"'" not in line and "exploration.schedule=linear" in line
    args = shlex.split(line)
    assert args[:3] == ["dvc", "exp", "run"] and args[3:] == apply_args(study, EXP)
    parser = OverridesParser.create()
    read = {o.key_or_group.removeprefix(f"experiments.{EXP}.params."): o.value()
            for o in parser.parse_overrides(args[4::2])}
    assert read == BEST


@pytest.mark.parametrize("value", ["linear", "a-b_c", "true", "NULL", "nan", "inf", "1.5", "", "a b", "it's",
                                   'say "hi"', "back\\", "a,b=c", "é", 0.25, 3, 1e-7, True, None, ["x", 1]])
def test_override_values_round_trip_through_hydra_and_the_shell(value):
    arg = f"++k={override_value(value)}"
    assert shlex.split(shlex.join([arg])) == [arg]
    assert OverridesParser.create().parse_override(arg).value() == value
    if "'" not in str(value):
        assert shlex.join([arg]).count("'") <= 2  # quoted once at most, never '"'"'


def test_best_params_yaml_round_trips(tmp_path):
    study = _study_with_best(BEST, DRAWN, DISTS)
    from boardrl.sweeps.outputs import best_document

    doc = yaml.safe_load(yaml.safe_dump(best_document(study, EXP, "journal:x")))
    assert doc["experiments"][EXP]["params"]["exploration"]["end"] == 0.2
