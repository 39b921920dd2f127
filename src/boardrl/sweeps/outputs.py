"""What a sweep leaves behind: the best params in a form the pipeline takes, the trials table, the figures.

``best_params.yaml`` is a params overlay (the format of profiles/): ``experiments.<id>.params`` with the best
trial's values, plus a comment-free ``sweep`` block saying where they came from.  ``apply_command`` turns it into
the ``dvc exp run -S experiments.<id>.params.<key>=<value> ...`` command that trains the experiment with them
(the sweep's reduced budget is not carried over: the experiment keeps its own).

Values are the learner values a trial trained with (``learn.core.space.trial_values``), not its Optuna params: a
dimension searched as a fraction (``exploration.end/exploration.start``) is written as the param it sets.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from boardrl.atomic_io import atomic_write_text, atomic_writer
from boardrl.learn.core.space import VALUES_ATTR, set_dotted, trial_values

FIGURES = {
    "history.png": "plot_optimization_history",
    "importances.png": "plot_param_importances",
    "parallel_coordinates.png": "plot_parallel_coordinate",
    "intermediate.png": "plot_intermediate_values",
}


def best_overlay(study: Any, experiment: str) -> dict[str, Any]:
    """{"experiments": {id: {"params": best values, nested}}} of the study's best trial."""
    params: dict[str, Any] = {}
    for key, value in sorted(trial_values(study.best_trial).items()):
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
    args = []
    for key, value in sorted(trial_values(study.best_trial).items()):
        args += ["-S", f"++experiments.{experiment}.params.{key}={override_value(value)}"]
    return args


#: A string Hydra's override grammar reads as that same string without quotes (its keywords excepted).
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_HYDRA_WORDS = {"true", "false", "null", "nan", "inf"}


def override_value(value: Any) -> str:
    """``value`` in the grammar ``dvc exp run -S`` reads (Hydra's), in the form that needs the least shell quoting.

    A word such as ``linear`` goes bare, so the printed command has no quotes at all; any other string is
    double-quoted for Hydra, which the shell then wraps once in single quotes (``'...="a b"'``): never the
    ``'"'"'`` a single-quoted Hydra string turns into.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        if _BARE.fullmatch(value) and value.lower() not in _HYDRA_WORDS:
            return value
        # Hydra's escapes: a quote, and backslashes before a quote or the end of the string
        return '"' + re.sub(r'(\\+)(?="|$)', r"\1\1", value).replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ",".join(override_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{override_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot pass a {type(value).__name__} to dvc exp run -S")


def apply_command(study: Any, experiment: str) -> list[str]:
    return ["dvc", "exp", "run", *apply_args(study, experiment)]


def apply_line(study: Any, experiment: str) -> str:
    """The command a person can paste: each argument quoted once for a POSIX shell (``shlex.join``)."""
    return shlex.join(apply_command(study, experiment))


def write_outputs(study: Any, experiment: str, storage: str, out_dir: Path) -> list[Path]:
    """best_params.yaml, trials.csv and the figures under ``out_dir`` (each written atomically)."""
    out_dir = Path(out_dir)
    written = [atomic_write_text(out_dir / "best_params.yaml",
                                 yaml.safe_dump(best_document(study, experiment, storage), sort_keys=False))]
    written.append(atomic_write_text(out_dir / "trials.csv", trials_table(study).to_csv(index=False,
                                                                                      lineterminator="\n")))
    written += write_figures(study, out_dir / "figures")
    return written


def trials_table(study: Any) -> Any:
    """Optuna's trials frame with a ``value`` column (a named objective makes it ``value_<name>``) and
    ``params_<key>`` columns of the learner values (not the fractions Optuna drew): what the report reads."""
    import pandas as pd

    frame = study.trials_dataframe(attrs=("number", "value", "state", "duration", "user_attrs"))
    frame = frame.rename(columns={c: "value" for c in frame.columns if c.startswith("value_")})
    frame = frame.drop(columns=[f"user_attrs_{VALUES_ATTR}"], errors="ignore")
    if "duration" in frame:
        frame["duration"] = frame["duration"].dt.total_seconds().round(3)
    values = pd.DataFrame([trial_values(t) for t in study.trials], index=frame.index)
    values = values.reindex(sorted(values.columns), axis=1).add_prefix("params_")
    where = list(frame.columns).index("state") + 1
    return pd.concat([frame.iloc[:, :where], values, frame.iloc[:, where:]], axis=1)


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
