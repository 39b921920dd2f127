"""A finished profile run, published into the repository: ``boardrl publish full`` -> ``published/full/``.

Why: the full profile takes hours of a 2-core machine, and a reader who cannot spend them should still open its
report, its metrics and its headline agents, and trust they are the run's own.  ``published/<profile>/`` is a
project-shaped folder, so the tools that read a project's results read it (the report loader, ``boardrl
results``), and a published model plays by its directory
(``boardrl match connect4 model:published/full/models/connect4_alphazero/seed-0/model maxmin``):

    published/<profile>/
      PUBLISHED.json         profile, DVC experiment, git commit, dates, wall time per experiment and stage,
                             every file's sha256, each model's content hash
      index.md               the same for people, with the report's headline
      reports/               the run's report (index.html, report.md, a page per game, figures/)
      results/               metrics/, eval/, train/ (summaries and traces), curves/, tournaments/, sweeps/
      docs/headline.json     the headline table's data (README shows it beside the default profile's)
      stage-seconds.json     each stage's wall time in the run (its last run: a killed stage's rerun)
      models/<id>/seed-<k>/model/   the headline agents' models (``champions.picks``), each up to MODEL_LIMIT

``--recheck <experiment>`` then reruns that experiment's train, curve and evaluate stages in the run's folder from
nothing (``dvc repro --force``) and records in ``PUBLISHED.json`` whether its metrics file and every seed's model
came out byte for byte as before: a trained model is a function of (game, params, seed), and the publication shows
it for one experiment rather than asserting it.  The run's folder is then put back as the run left it (its
``dvc.lock`` and, from DVC's cache, those stages' outputs), so the recheck leaves no trace but its MLflow runs.

It belongs to the report layer: which models are published is the headline's choice (``report/champions.py``).

Why not ``reports/full/``: ``reports/`` is the report stage's DVC output, which DVC removes before every run of
that stage, so nothing else may live inside it.

The source is the profile's lasting run folder (``profiles.run_dir``) once its run has finished: a run whose
state file says it is unfinished, a folder whose params name another profile, a model whose files do not match
its hashes, each stops the publication with one line, and the previous publication stays whole (the new one is
staged beside it and switched in at the end: ``publish.publish_all``).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from boardrl.atomic_io import atomic_write_text
from boardrl.errors import BoardRLError
from boardrl.integrity import sha256_file

PUBLISHED_DIR = Path("published")
MANIFEST = "PUBLISHED.json"
INDEX = "index.md"
#: What is copied from the run folder (directories whole, files as they are).
COPIED = ("reports", "results", "docs/headline.json", "params.yaml")
#: The run's stage wall times (``parallel_repro.SECONDS_FILE``), published as ``stage-seconds.json``.
SECONDS = (".dvc", "tmp", "stage-seconds.json")
#: The largest model published (bytes of its directory): a model is published for others to play, not archived.
MODEL_LIMIT = 8 << 20
FORMAT = 1


class PublishedError(BoardRLError):
    """A profile run that cannot be published, in one line."""


def published_dir(root: Path, profile: str) -> Path:
    return Path(root) / PUBLISHED_DIR / profile


def check_source(source: Path, profile: str) -> None:
    """Refuse a folder that is not a finished run of ``profile`` (one line naming what is wrong)."""
    from boardrl.experiments.profiles import RUN_STATE

    if not source.is_dir():
        raise PublishedError(f"{source}: no run folder of profile {profile!r}; run `make repro PROFILE={profile}`")
    state = source.joinpath(*RUN_STATE)
    if state.exists():
        raise PublishedError(f"{source}: the run of profile {profile!r} has not finished ({state.name} is there); "
                             f"rerun `make repro PROFILE={profile}` to finish it")
    params = yaml.safe_load((source / "params.yaml").read_text()) if (source / "params.yaml").is_file() else None
    ran = (params or {}).get("profile")
    if ran != profile:
        raise PublishedError(f"{source}: its params.yaml is profile {ran!r}, not {profile!r}")
    for rel in ("reports/report.md", "docs/headline.json", "results/metrics"):
        if not (source / rel).exists():
            raise PublishedError(f"{source}: {rel} is missing; the run's report stage has not run")


def _git_head(source: Path) -> str | None:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def _utc(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def wall_times(stage_seconds: dict[str, float], results: Path) -> dict[str, dict[str, float]]:
    """Seconds per experiment: each stage kind's from the run's stage wall times (``train@connect4_dqn`` ->
    ``{"connect4_dqn": {"train": ...}}``; stages of no experiment under ``(pipeline)``), their ``total``, and
    ``training``: the training time of all seeds from their summaries, every process of a resumed run included
    (a stage's wall time is its last run's only)."""
    out: dict[str, dict[str, float]] = {}
    for stage, secs in stage_seconds.items():
        kind, _, exp = stage.partition("@")
        row = out.setdefault(exp or "(pipeline)", {})
        row[kind if exp else stage] = round(float(secs), 1)
    for row in out.values():
        row["total"] = round(sum(row.values()), 1)
    for summary in sorted(Path(results).glob("train/*/seed-*/summary.json")):
        data = json.loads(summary.read_text())
        row = out.setdefault(summary.parent.parent.name, {})
        row["training"] = round(row.get("training", 0.0) + float(data.get("training_seconds") or data["seconds"]), 1)
    return dict(sorted(out.items()))


def headline_models(source: Path) -> list[tuple[str, int, Path]]:
    """(experiment, seed, model directory) of every headline agent of the run (each game's best of each kind)."""
    from boardrl.paths import ExperimentPaths
    from boardrl.report.champions import picks
    from boardrl.report.results import load_results

    chosen = {(p.experiment.id, p.seed) for p in picks(load_results(source / "results"))}
    return [(e, s, ExperimentPaths(source, e).model(s)) for e, s in sorted(chosen)]


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def _copy(source: Path, staged: Path) -> None:
    if source.joinpath(*SECONDS).is_file():
        shutil.copy2(source.joinpath(*SECONDS), staged / "stage-seconds.json")
    for rel in COPIED:
        src = source / rel
        if src.is_dir():
            shutil.copytree(src, staged / rel, ignore=shutil.ignore_patterns(".*"))
        elif src.is_file():
            (staged / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, staged / rel)


def _models(source: Path, staged: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Copy the headline models that fit MODEL_LIMIT after checking their hashes; (published, left out)."""
    from boardrl.integrity import verify_directory
    from boardrl.tracking.registry import manifest_sha256

    published: dict[str, Any] = {}
    left: dict[str, str] = {}
    for exp, seed, model in headline_models(source):
        key = model.relative_to(source).as_posix()
        if not model.is_dir():
            left[key] = "no saved model"
            continue
        verify_directory(model)  # a damaged model is never published
        size = _size(model)
        if size > MODEL_LIMIT:
            left[key] = f"{size:,} bytes, over the {MODEL_LIMIT:,}-byte limit"
            continue
        shutil.copytree(model, staged / key)
        published[key] = {"experiment": exp, "seed": seed, "bytes": size, "content_sha256": manifest_sha256(model)}
    return published, left


def manifest(source: Path, staged: Path, profile: str, models: dict[str, Any], left: dict[str, str]) -> dict:
    """What ``PUBLISHED.json`` records: where the run came from, when, its wall times, and every file's hash."""
    seconds_file = source.joinpath(*SECONDS)
    stage_seconds = json.loads(seconds_file.read_text()) if seconds_file.is_file() else {}
    finished = max(p.stat().st_mtime for p in (source / "results").rglob("*") if p.is_file())
    files = {p.relative_to(staged).as_posix(): sha256_file(p) for p in sorted(staged.rglob("*")) if p.is_file()}
    return {
        "format": FORMAT,
        "profile": profile,
        "dvc_experiment": _exp_name(source),
        "git_commit": _git_head(source),
        "finished": _utc(finished),
        "published": _utc(dt.datetime.now(dt.timezone.utc).timestamp()),
        "wall_seconds": wall_times(stage_seconds, source / "results"),
        "models": models,
        "models_left_out": left,
        "files": files,
    }


def _exp_name(source: Path) -> str | None:
    """The DVC experiment the run was saved as (stages record it in their train summaries)."""
    for summary in sorted((source / "results" / "train").glob("*/seed-*/summary.json")):
        name = json.loads(summary.read_text()).get("dvc_exp_name")
        if name:
            return name
    return None


def index_text(record: dict[str, Any]) -> str:
    """``index.md``: what the folder holds, the run's provenance, wall time per experiment, the models."""
    p = record["profile"]
    lines = [f"# Profile `{p}`, published", "",
             f"Run by `make repro PROFILE={p}` at git commit `{record['git_commit']}` (DVC experiment "
             f"`{record['dvc_experiment']}`), finished {record['finished']}, published {record['published']} by "
             f"`boardrl publish {p}`. Every file's sha256 is in `{MANIFEST}`.", "",
             "- the report: [reports/report.md](reports/report.md) (or `reports/index.html`);",
             "- metrics and evaluations: `results/metrics/`, `results/eval/`; training summaries: `results/train/`;",
             f"- models: `boardrl match <game> model:published/{p}/models/<id>/seed-<k>/model <opponent>`.", "",
             "## Wall time per experiment (seconds, all seeds)", "",
             "Stages: each one's last run (`stage-seconds.json`). Training: every seed's training time from its "
             "summary, all processes of a killed and resumed run together. Both are wall-clock seconds: they "
             "include any time the machine was shared with other work or the run was paused, so they bound the "
             "cost from above.", "",
             "| experiment | train stage | curve stage | evaluate stage | stages | training |",
             "|---|---:|---:|---:|---:|---:|"]
    for exp, row in record["wall_seconds"].items():
        cells = [f"{row[k]:,.0f}" if k in row else "" for k in ("train", "curve", "evaluate", "total", "training")]
        lines.append(f"| `{exp}` | " + " | ".join(cells) + " |")
    total = sum(r.get("total", 0.0) for r in record["wall_seconds"].values())
    lines += [f"| all | | | | {total:,.0f} ({total / 3600:.1f} h) | |", "", "## Models", "",
              "| model | bytes | content sha256 (of its `sha256.json`) |", "|---|---:|---|"]
    lines += [f"| `{k}` | {m['bytes']:,} | `{m['content_sha256']}` |" for k, m in record["models"].items()]
    lines += [f"| `{k}` | left out: {why} | |" for k, why in record["models_left_out"].items()]
    if record.get("rechecks"):
        lines += ["", "## Rechecks", "", f"`boardrl publish {p} --recheck <experiment>` reran these experiments' "
                  "stages from nothing in the run's folder:", "",
                  "| experiment | when | seconds | metrics file byte-equal | models byte-equal |",
                  "|---|---|---:|---|---|"]
        for r in record["rechecks"]:
            models = ", ".join(f"`{k}` {'yes' if ok else 'NO'}" for k, ok in r["models_equal"].items())
            lines.append(f"| `{r['experiment']}` | {r['when']} | {r['seconds']:,.0f} | "
                         f"{'yes' if r['metrics_equal'] else 'NO'} | {models} |")
    return "\n".join(lines) + "\n"


def publish_profile(root: Path, profile: str, source: Path | None = None) -> Path:
    """Publish the finished run of ``profile`` (from ``source``, by default its lasting run folder) into
    ``published/<profile>/``, all or nothing; returns the folder."""
    from boardrl.experiments.profiles import run_dir
    from boardrl.experiments.publish import publish_all

    from boardrl.experiments.profiles import DEFAULT

    if profile == DEFAULT:
        raise PublishedError("the default profile's results are the workspace's own (reports/, results/); publish "
                             "another profile's run, e.g. `make publish PROFILE=full`")
    root = Path(root)
    source = Path(source) if source is not None else run_dir(root, profile)
    check_source(source, profile)
    target = published_dir(root, profile)
    target.parent.mkdir(parents=True, exist_ok=True)

    def build(pub: Any) -> dict[str, Any]:
        staged = pub.stage_directory(target)
        _copy(source, staged)
        models, left = _models(source, staged)
        record = manifest(source, staged, profile, models, left)
        atomic_write_text(staged / MANIFEST, json.dumps(record, indent=2) + "\n")
        atomic_write_text(staged / INDEX, index_text(record))
        return record

    publish_all(target.parent / f".{profile}.publish-journal.json", build, f"publish {profile}")
    return target


RECHECKED_STAGES = ("train", "curve", "evaluate")


def recheck(root: Path, profile: str, experiment: str, source: Path | None = None) -> dict[str, Any]:
    """Rerun ``experiment``'s stages in the run folder from nothing and compare its metrics file and every seed's
    model with what the run had made; the comparison is added to ``PUBLISHED.json`` (and ``index.md``) and
    returned, and the folder is put back as it was."""
    import time

    from boardrl.experiments.parallel_repro import load_graph
    from boardrl.experiments.profiles import ProfileRun, run_dir, stage_env
    from boardrl.tracking.registry import manifest_sha256

    source = Path(source) if source is not None else run_dir(Path(root), profile)
    target = published_dir(root, profile)
    record = load_manifest(root, profile)
    if record is None:
        raise PublishedError(f"{target}: nothing published for profile {profile!r}; publish it before a recheck")
    known = set(load_graph(source).order)
    stages = [f"{kind}@{experiment}" for kind in RECHECKED_STAGES if f"{kind}@{experiment}" in known]
    if not stages:
        raise PublishedError(f"{experiment!r} is not an experiment of the run in {source}")
    env = stage_env(ProfileRun(profile, source, record.get("dvc_experiment") or "", True))
    metrics = source / "results" / "metrics" / f"{experiment}.json"
    models = sorted(p.relative_to(source).as_posix() for p in (source / "models" / experiment).glob("seed-*/model"))
    before = {"metrics": metrics.read_bytes(), "models": {m: manifest_sha256(source / m) for m in models},
              "lock": (source / "dvc.lock").read_bytes()}
    started = time.perf_counter()
    try:
        for stage in stages:
            _rerun(source, stage, env, experiment)
        seconds = round(time.perf_counter() - started, 1)
        found = {
            "experiment": experiment,
            "stages": stages,
            "seconds": seconds,
            "metrics_equal": metrics.read_bytes() == before["metrics"],
            "models_equal": {m: manifest_sha256(source / m) == h for m, h in before["models"].items()},
            "when": _utc(time.time()),
        }
    finally:
        (source / "dvc.lock").write_bytes(before["lock"])
        subprocess.run(["dvc", "checkout", "--force", *stages], cwd=source, env=env, capture_output=True)
    record.setdefault("rechecks", []).append(found)
    atomic_write_text(target / MANIFEST, json.dumps(record, indent=2) + "\n")
    atomic_write_text(target / INDEX, index_text(record))
    return found


def _rerun(source: Path, stage: str, env: dict[str, str], experiment: str) -> None:
    """``dvc repro --force`` of one stage in ``source``, its output in the stage's log; one line if it fails."""
    from boardrl.experiments.parallel_repro import log_path

    log = log_path(source, stage)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        done = subprocess.run(["dvc", "--wait-for-lock", "repro", "--force", "--single-item", stage], cwd=source,
                              env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise PublishedError(f"recheck of {experiment}: stage {stage} failed (exit {done.returncode}); its log: {log}")


def load_manifest(root: Path, profile: str) -> dict[str, Any] | None:
    """The published record of ``profile``, or None when it was never published."""
    path = published_dir(root, profile) / MANIFEST
    return json.loads(path.read_text()) if path.is_file() else None
