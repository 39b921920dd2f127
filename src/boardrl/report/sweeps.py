"""The report's "Sweeps" section: what each Optuna sweep tuned, how it went, and its best params beside the defaults.

The sweep stage (``pipeline/sweep.py``, writer in ``sweeps/outputs.py``) leaves, per sweep id:

    results/sweeps/<id>/summary.json       {"sweep", "experiment", "profile", "study", "finished_trials",
                                            "best_trial", "best_score", "budget", "seeds",
                                            "mlflow_parent_run_id", "experiment_params", "seconds"}
    results/sweeps/<id>/best_params.yaml   {"experiments": {<experiment>: {"params": nested best values}},
                                            "sweep": {"study", "storage", "best_trial", ...}}
    results/sweeps/<id>/trials.csv         number, value, state, params_<dotted key>..., duration, user_attrs_*
    results/sweeps/<id>/figures/*.png      history, importances, parallel_coordinates, intermediate (when drawn)

Why the best params sit beside the experiment's own values: a sweep is only useful as a comparison with what the
experiment trains with now.  ``experiment_params`` (the experiment's full learner params) is optional, since older
summaries lack it; the "experiment" column then reads ``-``.  As for the other result files, every problem is a
one-line ``ReportError`` naming the file.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from boardrl.report.document import INDEX, Block, Heading, Image, Inline, Paragraph, Ref, Span, Table, slug, text
from boardrl.report.links import Links, seed_list, seed_names
from boardrl.report.results import UNITS, Experiment, ReportError, check_id, finite, read_json

#: Trial states Optuna writes into trials.csv.
STATES = ("COMPLETE", "PRUNED", "FAIL", "RUNNING", "WAITING")
TRIAL_COLUMNS = ("number", "value", "state")
#: The sweep's figures the report shows, in order: (file under figures/, what it shows).
SHOWN_FIGURES = (("history.png", "optimisation history"), ("importances.png", "parameter importances"))
MISSING = "-"


@dataclass(frozen=True)
class Sweep:
    """What the sweep stage produced for one sweep id; ``summary`` is None while the sweep has not finished."""

    id: str
    directory: Path
    summary: dict[str, Any] | None = None
    best_params: dict[str, Any] | None = None  # best_params.yaml's experiments.<experiment>.params (nested)
    searched: tuple[str, ...] = ()  # dotted keys, from trials.csv's params_* columns (else from the best params)
    states: dict[str, int] = field(default_factory=dict)  # trials.csv: number of trials per state
    figures: tuple[Path, ...] = ()  # the shown figures that exist, in SHOWN_FIGURES order

    @property
    def experiment(self) -> str | None:
        return (self.summary or {}).get("experiment")

    @property
    def experiment_params(self) -> dict[str, Any] | None:
        return (self.summary or {}).get("experiment_params")


# ---------------------------------------------------------------------------------------------- reading
def _check_type(data: dict[str, Any], key: str, kinds: tuple[type, ...], what: str, path: Path,
                required: bool = False) -> None:
    if key not in data:
        if required:
            raise ReportError(f"{path}: missing key {key!r}")
        return
    value = data[key]
    ok = (value is None and not required) or (isinstance(value, kinds) and not isinstance(value, bool))
    if not ok:
        raise ReportError(f"{path}: {key} must be {what}, found {value!r}")


def read_sweep_summary(path: Path, sweep_id: str) -> dict[str, Any]:
    """A sweep's ``summary.json``, checked against the directory it sits in."""
    data = read_json(path)
    for key in ("sweep", "experiment", "finished_trials"):
        if key not in data:
            raise ReportError(f"{path}: missing key {key!r}; expected sweep, experiment, finished_trials, best_trial, "
                              "best_score, budget, seeds, mlflow_parent_run_id, experiment_params")
    if data["sweep"] != sweep_id:
        raise ReportError(f"{path}: sweep {data['sweep']!r} disagrees with its directory {sweep_id!r}")
    if not isinstance(data["experiment"], str):
        raise ReportError(f"{path}: experiment must be an experiment id, found {data['experiment']!r}")
    check_id(data["experiment"], path)
    _check_type(data, "finished_trials", (int,), "a non-negative integer", path, required=True)
    _check_type(data, "best_trial", (int,), "an integer or null", path)
    _check_type(data, "best_score", (int, float), "a number or null", path)
    _check_type(data, "budget", (int,), "a positive integer or null", path)
    _check_type(data, "seconds", (int, float), "a number or null", path)
    _check_type(data, "mlflow_parent_run_id", (str,), "a string or null", path)
    _check_type(data, "profile", (str,), "a string or null", path)
    _check_type(data, "study", (str,), "a string or null", path)
    _check_type(data, "experiment_params", (dict,), "an object (the experiment's learner params) or null", path)
    if data["finished_trials"] < 0:
        raise ReportError(f"{path}: finished_trials must be a non-negative integer, found {data['finished_trials']!r}")
    if data.get("budget") is not None and data["budget"] < 1:
        raise ReportError(f"{path}: budget must be a positive integer or null, found {data['budget']!r}")
    seeds = data.get("seeds")
    if seeds is not None and (not isinstance(seeds, list)
                              or not all(isinstance(k, int) and not isinstance(k, bool) for k in seeds)):
        raise ReportError(f"{path}: seeds must be a list of training seeds, found {seeds!r}")
    return data


def read_best_params(path: Path, experiment: str) -> dict[str, Any]:
    """The nested best values of ``best_params.yaml`` for ``experiment``."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ReportError(f"{path}: not readable YAML ({first})") from None
    if not isinstance(data, dict) or not isinstance(data.get("experiments"), dict):
        raise ReportError(f"{path}: expected a mapping with 'experiments': {{{experiment}: {{params: ...}}}}")
    block = data["experiments"].get(experiment)
    if not isinstance(block, dict) or not isinstance(block.get("params"), dict):
        listed = ", ".join(map(str, data["experiments"])) or "none"
        raise ReportError(f"{path}: no experiments.{experiment}.params mapping (the sweep tunes {experiment!r}; "
                          f"found {listed})")
    return block["params"]


def read_trials(path: Path) -> tuple[tuple[str, ...], dict[str, int]]:
    """The searched (dotted) keys and the number of trials per state of ``trials.csv``."""
    try:
        with path.open(newline="") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ReportError(f"{path}: not a readable CSV ({exc})") from None
    if not rows:
        raise ReportError(f"{path}: empty; expected a header with {', '.join(TRIAL_COLUMNS)} and params_<key> columns")
    header, body = rows[0], rows[1:]
    missing = [c for c in TRIAL_COLUMNS if c not in header]
    if missing:
        raise ReportError(f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(TRIAL_COLUMNS)} and "
                          "params_<key> columns")
    state_at = header.index("state")
    states: dict[str, int] = {}
    for line, row in enumerate(body, start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise ReportError(f"{path}: line {line} has {len(row)} fields, the header {len(header)}")
        state = row[state_at]
        if state not in STATES:
            raise ReportError(f"{path}: line {line}: unknown state {state!r}; states are {', '.join(STATES)}")
        states[state] = states.get(state, 0) + 1
    searched = tuple(c.removeprefix("params_") for c in header if c.startswith("params_"))
    return searched, states


def dotted_keys(params: dict[str, Any], prefix: str = "") -> list[str]:
    """The dotted keys of the leaves of nested ``params`` (``exploration.end``)."""
    out = []
    for k, v in params.items():
        if isinstance(v, dict) and v:
            out += dotted_keys(v, f"{prefix}{k}.")
        else:
            out.append(f"{prefix}{k}")
    return out


_ABSENT = object()


def get_dotted(params: dict[str, Any] | None, key: str) -> Any:
    """The value at dotted ``key`` of nested ``params`` (the reverse of ``learn.core.space.set_dotted``), or absent."""
    node: Any = params
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def load_sweep(directory: Path) -> Sweep:
    """Everything under ``results/sweeps/<id>/``."""
    sweep_id = check_id(directory.name, directory)
    summary_path = directory / "summary.json"
    if not summary_path.is_file():
        return Sweep(sweep_id, directory)
    summary = read_sweep_summary(summary_path, sweep_id)
    best_path, trials_path = directory / "best_params.yaml", directory / "trials.csv"
    best = read_best_params(best_path, summary["experiment"]) if best_path.is_file() else None
    searched, states = read_trials(trials_path) if trials_path.is_file() else ((), {})
    if not searched and best is not None:
        searched = tuple(dotted_keys(best))
    figures = tuple(directory / "figures" / name for name, _ in SHOWN_FIGURES
                    if (directory / "figures" / name).is_file())
    return Sweep(sweep_id, directory, summary, best, searched, states, figures)


def load_sweeps(results_dir: Path) -> list[Sweep]:
    """Every sweep under ``results_dir/sweeps``, sorted by id; none when the directory is absent."""
    sweeps_dir = Path(results_dir) / "sweeps"
    if not sweeps_dir.is_dir():
        return []
    dirs = sorted(p for p in sweeps_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    return [load_sweep(d) for d in dirs]


# ---------------------------------------------------------------------------------------------- rendering
def value_text(v: Any) -> str:
    """A param value as the params files would write it; floats with 4 significant digits."""
    if v is _ABSENT:
        return MISSING
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True)


def _own_budget(s: Sweep, exps: dict[str, Experiment]) -> tuple[int | None, str | None]:
    """The experiment's own training budget per seed and its unit: from its results, else from its params (the
    learner's budget param is named after the unit, ``games: 1000000``)."""
    e = exps.get(s.experiment or "")
    if e is not None and e.unit is not None:
        return e.budget, e.unit
    params = s.experiment_params or {}
    found = [u for u in UNITS if isinstance(params.get(u), int) and not isinstance(params.get(u), bool)]
    if len(found) == 1:
        return params[found[0]], found[0]
    return None, None


def _budget(s: Sweep, exps: dict[str, Experiment]) -> str:
    budget = (s.summary or {}).get("budget")
    if budget is None:
        return "the experiment's budget"
    return f"{budget:,} {_own_budget(s, exps)[1] or 'units'}"


def _parent_title(run: str) -> str:
    return f"MLflow parent run {run} (one nested run per trial)"


def _parent_run(s: Sweep, links: Links) -> Inline:
    run = (s.summary or {}).get("mlflow_parent_run_id")
    if not run:
        return text("no MLflow run")
    return [Span(f"run {run[:8]}", href=links.run_url(run), title=_parent_title(run))]


def _score(s: Sweep, links: Links) -> Inline:
    summary = s.summary or {}
    score = finite(summary.get("best_score"))
    if score is None:
        return text("n/a")
    shown = f"{score:.3f}" + (f" (trial {summary['best_trial']})" if summary.get("best_trial") is not None else "")
    run = summary.get("mlflow_parent_run_id")
    if not run:
        return text(shown)
    return [Span(shown, href=links.run_url(run), title=_parent_title(run))]


def _pruned(s: Sweep) -> str:
    return str(s.states.get("PRUNED", 0)) if s.states else "n/a"


def _title(s: Sweep) -> str:
    """The heading of a sweep's subsection (on the report's index), which its id in the table links to."""
    return f"Sweep {s.id}"


def sweeps_table(sweeps: list[Sweep], exps: dict[str, Experiment], links: Links) -> Table:
    """One row per finished sweep: what it tuned, how many trials, at which budget, its best score and run."""
    rows = []
    for s in sweeps:
        if s.summary is None:
            continue
        summ = s.summary
        rows.append([[Span(s.id, code=True, ref=Ref(INDEX, slug(_title(s))))], [links.experiment(s.experiment or "")],
                     text(f"{summ['finished_trials']:,}"), text(_pruned(s)), text(_budget(s, exps)),
                     text(seed_names(list(summ.get("seeds") or []))), _score(s, links),
                     [Span(summ.get("profile") or "unknown", code=True)], _parent_run(s, links)])
    header = ["Sweep", "Experiment", "Finished trials", "Pruned", "Budget per trial", "Training seeds of each trial",
              "Best score (trial)", "Profile", "MLflow parent run"]
    return Table(header, rows, numeric=frozenset({2, 3, 4, 6}))


def params_table(s: Sweep) -> Table:
    """Each searched key: the best trial's value beside the value the experiment trains with."""
    best_trial = (s.summary or {}).get("best_trial")
    rows = [[[Span(key, code=True)], [Span(value_text(get_dotted(s.best_params, key)), code=True)],
             [Span(value_text(get_dotted(s.experiment_params, key)), code=True)]] for key in s.searched]
    best = "Best" + (f" (trial {best_trial})" if best_trial is not None else "")
    return Table(["Param", best, "Experiment's value"], rows)


def _facts(s: Sweep, exps: dict[str, Experiment], links: Links) -> Paragraph:
    summ = s.summary or {}
    e = exps.get(s.experiment or "")
    n = summ["finished_trials"]
    trials = f"{n:,} finished trial{'s' if n != 1 else ''}"
    if s.states:
        trials += f" ({s.states.get('PRUNED', 0)} pruned"
        trials += f"; {s.states['FAIL']} more failed)" if s.states.get("FAIL") else ")"
    seeds = list(summ.get("seeds") or [])
    own_budget, unit = _own_budget(s, exps)
    own = f" (the experiment itself trains {own_budget:,} {unit} per seed)" if own_budget is not None else ""
    secs = finite(summ.get("seconds"))
    took = f" in {secs:,.1f} s" if secs is not None else ""
    return Paragraph(text(
        "Tunes ", links.experiment(s.experiment or ""), f" ({e.learner} on {e.game})" if e is not None else "",
        f": {trials}{took}, each trained {_budget(s, exps)} per seed{own} with seed{'s' if len(seeds) != 1 else ''} "
        f"{seed_list(seeds)}, profile ", Span(summ.get("profile") or "unknown", code=True), ", study ",
        Span(summ.get("study") or "unknown", code=True), "."))


def _copy_figures(s: Sweep, fig_dir: Path) -> list[Block]:
    out: list[Block] = []
    shown = dict(SHOWN_FIGURES)
    for src in s.figures:
        name = f"sweep_{s.id}_{src.name}"
        shutil.copyfile(src, fig_dir / name)
        out.append(Image(f"figures/{name}", f"{shown[src.name]} of sweep {s.id}"))
    return out


def sweep_blocks_one(s: Sweep, exps: dict[str, Experiment], fig_dir: Path, links: Links | None = None) -> list[Block]:
    """One sweep's subsection; its shown figures are copied into ``fig_dir``."""
    where = Span(f"results/sweeps/{s.id}/", code=True)
    head: list[Block] = [Heading(3, _title(s))]
    if s.summary is None:
        return [*head, Paragraph(text("Not finished yet (", Span(f"results/sweeps/{s.id}/summary.json", code=True),
                                      " is missing)."))]
    out: list[Block] = [*head, _facts(s, exps, links or Links())]
    if s.best_params is None:
        out.append(Paragraph(text("No best params yet (", Span(f"results/sweeps/{s.id}/best_params.yaml", code=True),
                                  " is missing).")))
    elif s.searched:
        note = ("" if s.experiment_params is not None else
                " The sweep's summary.json does not state the experiment's params, so that column reads \"-\" "
                "(rerun the sweep stage).")
        out += [Paragraph(text("The best trial's value of each searched param beside the value the experiment "
                               "trains with (from ", where, ")." + note)),
                params_table(s)]
    figures = _copy_figures(s, fig_dir)
    if figures:
        shown = dict(SHOWN_FIGURES)
        what = " and ".join(shown[p.name] for p in s.figures)
        out.append(Paragraph(text(what[0].upper() + what[1:] + " of the sweep, as Optuna drew them.")))
        out += figures
    else:
        out.append(Paragraph(text("No optimisation-history figure (too few finished trials to draw one).")))
    return out


def sweep_blocks(sweeps: list[Sweep], exps: list[Experiment], links: Links, fig_dir: Path) -> list[Block]:
    """The "Sweeps" section, or nothing when no sweep has been run."""
    if not sweeps:
        return []
    by_id = {e.id: e for e in exps}
    out: list[Block] = [
        Heading(2, "Sweeps"),
        Paragraph(text("Optuna searches over an experiment's learner params (", Span("pipeline/sweep.py", code=True),
                       "). A trial's score is the mean over the experiment's curve opponents of win + draw/2, both "
                       "seats, at the end of the trial's training budget, averaged over its seeds. Each sweep's best "
                       "params are in ", Span("results/sweeps/<id>/best_params.yaml", code=True),
                       "; its trials are nested MLflow runs under the parent run linked here.")),
    ]
    if any(s.summary is not None for s in sweeps):
        out.append(sweeps_table(sweeps, by_id, links))
    for s in sweeps:
        out += sweep_blocks_one(s, by_id, fig_dir, links)
    return out
