"""params.yaml: the schema of every pipeline knob, its validation, and the slice each stage depends on.

One module per job: ``schema`` (the pydantic models, and ``ExperimentSpec``: one experiment resolved),
``limits`` (ceilings of every count), ``checks`` (what spans sections: games, learners, agents and models named
exist), ``errors`` (a problem as one line), ``loading`` (reading and validating the file), ``slices`` (what each
stage's numbers depend on) and ``stage`` (what every stage script shares).  Import the names from ``boardrl.config``.

Why validate up front: a typo (``eval_gmes``), an unknown game, learner or opponent, a string where a number
belongs or a negative budget would otherwise surface minutes into a run, as a traceback, after some outputs
were rewritten.  ``make repro`` checks the file before DVC reads it, and every stage script checks it again
before doing anything: a bad file gives one line, ``error: params.yaml: <key path>: <problem>``, exit status 2.

Layout (see params.yaml for the documented defaults):

    profile                                 default | tiny | full: which overlay of profiles/ produced the numbers
    study.{name, variation}                 only in a study's DVC experiments (studies/<name>.yaml): MLflow tags
    data.{source, url, timeout_s}           download stage
    prepare.{check_regenerated}             prepare stage
    train.{eval_games, curve, opponents.<game>}
    evaluate.{seed, games, optimal_positions, per_game.<game>.{opponents, optimal_plies, uci}}
    experiments.<id>.{game, learner, seeds, params, opponents, ladder}
    sweeps.<id>.{experiment, trials, budget, seeds, sampler_seed, space}   Optuna sweeps (stage sweep@<id>)

An experiment is keyed by a stable id: its stages are ``train@<id>`` and ``evaluate@<id>`` and its outputs live
under ``models/<id>/``, ``results/train/<id>/``, ``results/eval/<id>.json``.  ``params`` holds only what differs
from the learner's own defaults (``learn/<learner>.py``).  Settings that cannot change a result (worker
processes, progress bars) are not params: see ``runtime_processes``.  ``train_slice``/``evaluate_slice``
return exactly what a stage's numbers depend on; its params hash is computed from that slice.
``curve_slice`` is stage curve@<id>'s (the learning curve played against the train stage's snapshots).
A stage resolves its experiment once, as an ``ExperimentSpec`` (``Params.spec``), and hands that down.
"""

from boardrl.config.errors import (  # noqa: F401
    EXIT_BAD_PARAMS, PARAMS_FILE, ConfigError, fail,
)
from boardrl.config.limits import (  # noqa: F401
    LEARNER_LIMITS, MAX_CHECKPOINTS, MAX_GAMES, MAX_LAYERS, MAX_PLIES, MAX_POSITIONS, MAX_SEARCH_NODES, MAX_SEEDS,
    MAX_TOURNAMENT_AGENTS, MAX_TRIALS, MAX_UNITS, UCI_POSITIONS, Flag, Number, PlyCount, Whole,
)
from boardrl.config.schema import (  # noqa: F401
    EXPERIMENT_ID, CurveParams, DataParams, EvaluateParams, Experiment, ExperimentSpec, GameEvaluation, Opponent,
    Params,
    PrepareParams, StudyLabel, SweepParams, TournamentParams, TrainParams, UciParams,
)
from boardrl.config.checks import (  # noqa: F401
    agent_spec_problem, model_target,
)
from boardrl.config.loading import (  # noqa: F401
    load_params, load_params_or_exit, parse_params, read_yaml,
)
from boardrl.config.slices import (  # noqa: F401
    curve_slice, download_slice, eval_points, evaluate_slice, prepare_slice, tournament_slice, train_slice,
)
from boardrl.config.stage import (  # noqa: F401
    PROCESSES_ENV, exit_now, exit_on_sigterm, experiment_stage_args, os_error_text, run_experiment_stage,
    runtime_processes, stage_entry,
)
