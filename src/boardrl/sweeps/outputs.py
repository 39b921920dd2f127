"""What a sweep leaves behind: the best params in a form the pipeline takes, the trials table, the figures.

``best_params.yaml`` is a params overlay (the format of profiles/): ``experiments.<id>.params`` with the best
trial's values, plus a comment-free ``sweep`` block saying where they came from.  ``apply_command`` turns it into
the ``dvc exp run -S experiments.<id>.params.<key>=<value> ...`` command that trains the experiment with them
(the sweep's reduced budget is not carried over: the experiment keeps its own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from boardrl.atomic_io import atomic_write_text, atomic_writer
from boardrl.sweeps.space import set_dotted

FIGURES = {
    "history.png": "plot_optimization_history",
    "importances.png": "plot_param_importances",
    "parallel_coordinates.png": "plot_parallel_coordinate",
    "intermediate.png": "plot_intermediate_values",
}


def best_overlay(study: Any, experiment: str) -> dict[str, Any]:
    """{"experiments": {id: {"params": best values, nested}}} of the study's best trial."""
    params: dict[str, Any] = {}
    for key, value in sorted(study.best_trial.params.items()):
        params = set_dotted(params, key, value)
    return {"experiments": {experiment: {"params": params}}}


def best_document(study: Any, experiment: str, storage: str) -> dict[str, Any]:
    best = study.best_trial
    return {**best_overlay(study, experiment),
            "sweep": {"study": study.study_name, "storage": storage, "best_trial": best.number,
                      "best_score": float(best.value), "finished_trials": _finished(study)}}


def apply_args(study: Any, experiment: str) -> list[str]:
    """``-S`` arguments for ``dvc exp run`` that set the best trial's values on the experiment.

    ``++`` sets a key whether or not params.yaml already lists it (an experiment lists only what differs from
    the learner's defaults).
    """
    from boardrl.experiments.profiles import hydra_value

    args = []
    for key, value in sorted(study.best_trial.params.items()):
        args += ["-S", f"++experiments.{experiment}.params.{key}={hydra_value(value)}"]
    return args


def apply_command(study: Any, experiment: str) -> list[str]:
    return ["dvc", "exp", "run", *apply_args(study, experiment)]


def write_outputs(study: Any, experiment: str, storage: str, out_dir: Path) -> list[Path]:
    """best_params.yaml, trials.csv and the figures under ``out_dir`` (each written atomically)."""
    out_dir = Path(out_dir)
    written = [atomic_write_text(out_dir / "best_params.yaml",
                                 yaml.safe_dump(best_document(study, experiment, storage), sort_keys=False))]
    frame = study.trials_dataframe(attrs=("number", "value", "state", "params", "duration", "user_attrs"))
    if "duration" in frame:
        frame["duration"] = frame["duration"].dt.total_seconds().round(3)
    written.append(atomic_write_text(out_dir / "trials.csv", frame.to_csv(index=False, lineterminator="\n")))
    written += write_figures(study, out_dir / "figures")
    return written


def write_figures(study: Any, directory: Path) -> list[Path]:
    """Optuna's matplotlib figures; one that cannot be drawn yet (too few trials) is left out."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import optuna.visualization.matplotlib as vis

    written = []
    for name, fn in FIGURES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ax = getattr(vis, fn)(study)
            except (ValueError, RuntimeError, ZeroDivisionError, IndexError):
                continue
        fig = (ax.flat[0] if hasattr(ax, "flat") else ax).figure
        fig.set_size_inches(8, 4.5)
        fig.tight_layout()
        with atomic_writer(directory / name) as fh:
            fig.savefig(fh, format="png", dpi=90, metadata={"Software": None})
        plt.close(fig)
        written.append(directory / name)
    return written


def _finished(study: Any) -> int:
    from boardrl.sweeps.study import counts

    return counts(study)[0]
