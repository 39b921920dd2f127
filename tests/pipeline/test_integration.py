"""End to end: the tiny profile as a DVC experiment in a copy of the repository, then everything users look at.

The copy's params.yaml is the shipped one with one experiment per learner kept (``KEEP``: the pipeline's
mechanics, not every experiment, are under test; the tiny profile in the copy loses the others too) plus two
experiments (a second tic-tac-toe tabular Q experiment whose ladder holds the first one's trained model, and a
Connect 4 one for the UCI protocols); the tiny profile is
applied the way `make repro PROFILE=tiny` applies it (profiles.py: `dvc exp run -S ...`), in the workspace so
the outputs can be read.  One copy is built per module (the expensive part, about a minute here); the tests
then read its outputs, ask DVC for metrics/plots/status, read MLflow through its client (the UI server over such a
store: tests/tracking/test_mlflow_ui.py), and finally change params and code to check which stages DVC reruns (the
learning curve's settings: only curve@<id>).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from repo_copy import VENV_BIN, copy_repo, git, run, stage_env

pytestmark = pytest.mark.timeout(900)

PROVENANCE_KEYS = ["experiment", "game", "learner", "seed", "profile", "unit", "budget", "seconds", "mlflow_run_id",
                   "git_commit", "params_hash", "dvc_exp_name"]
#: A train summary also says where a resumed run resumed and the training time of all its processes.
TRAIN_SUMMARY_KEYS = PROVENANCE_KEYS + ["resumed_from", "training_seconds"]
#: The report states each experiment's settings, read from params.yaml (a dependency of its stage): any edit of the
#: file reruns it, like the two fingerprint stages.
PARAMS_FILE_STAGES = {"inputs", "ladder_models", "report"}
SEATS = ("as_first", "as_second", "combined")
EXTRA = {
    "tictactoe_tabular_q_fast": {"game": "tictactoe", "learner": "tabular_q", "seeds": [3],
                                 "params": {"games": 1000, "alpha": 0.3, "parallel_games": 64},
                                 "ladder": ["random", "model:tictactoe_tabular_q"]},
    "connect4_tabular_q": {"game": "connect4", "learner": "tabular_q", "seeds": [1],
                           "params": {"games": 200, "parallel_games": 32}},
}


#: Tiny budgets for the kept experiments that the shipped tiny profile (a first look) leaves out, and two seeds
#: for the first one (the results across seeds are under test).
TINY_EXTRA = {
    "tictactoe_tabular_q": {"seeds": [7, 8], "params": {"games": 2000, "checkpoint_every": 500, "parallel_games": 64}},
    "dots_and_boxes_2x2_tabular_q": {"seeds": [7], "params": {"games": 1500, "parallel_games": 64}},
    "tictactoe_seed000_exp01": {"seeds": [7]},
    "tictactoe_seed002_qt_vs_random": {"seeds": [7], "params": {"games": 2000},
                                       "ladder": ["random", {"agent": "maxmin", "games": 10}]},
    "dots_and_boxes_3x3_transfer": {"seeds": [7], "params": {"games": 2000, "transfer_source": {"params": {"games": 2000}}}},
}

#: The shipped experiments the copy keeps: the two tabular_q ones (the sweep names the first) and one per other
#: learner or feature (a Q-value trace with no curve opponents, QT, seed 004's table, a transfer in the stage).
KEEP = ("tictactoe_tabular_q", "dots_and_boxes_2x2_tabular_q", "tictactoe_seed000_exp01",
        "tictactoe_seed002_qt_vs_random", "conniption_seed004_qlearn_flip", "dots_and_boxes_3x3_transfer")


def add_experiments(data: dict) -> None:
    data["experiments"] = {k: v for k, v in data["experiments"].items() if k in KEEP}
    data["experiments"].update(EXTRA)
    data["train"]["opponents"]["connect4"] = ["random"]


def trim_tiny(root: Path) -> None:
    """The copy's tiny overlay names only the experiments the copy has."""
    path = root / "profiles" / "tiny.yaml"
    tiny = yaml.safe_load(path.read_text())
    tiny.pop("keep", None)  # the copy's params.yaml already holds only the experiments under test
    tiny["experiments"] = {k: v for k, v in {**tiny["experiments"], **TINY_EXTRA}.items() if k in KEEP}
    tiny["drop"] = [k for k in tiny.get("drop", []) if not k.startswith("experiments.")]
    path.write_text(yaml.safe_dump(tiny, sort_keys=False))


def budget(params: dict, exp_id: str) -> int:
    from boardrl.config import parse_params

    return parse_params(params).budget(exp_id)[1]


def dvc(*args: str):
    return [str(VENV_BIN / "dvc"), *args]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    path = copy_repo(tmp_path_factory.mktemp("pipeline") / "repo", add_experiments, trim_tiny)
    cmd = [str(VENV_BIN / "python"), "-m", "boardrl.experiments.profiles", "run", "tiny", "--workspace",
           "--name", "tiny-test"]
    first = run(cmd, path)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-4000:]
    params = yaml.safe_load((path / "params.yaml").read_text())  # now the tiny profile's values
    return {"path": path, "first": first, "params": params, "ids": list(params["experiments"])}


def _eval_points(params: dict, exp_id: str) -> list[int]:
    from boardrl.config import CurveParams, eval_points

    return eval_points(budget(params, exp_id), CurveParams(**params["train"]["curve"]))


def _measured_points(requested: list[int], steps: list[int]) -> list[int]:
    """Where the requested curve points were measured: each at the first step at or after it (a learner finishes
    the unit of work in flight there, learn/core/base.py), so the steps are exactly those firsts, the end included."""
    firsts = sorted({min((s for s in steps if s >= p), default=-1) for p in requested})
    assert -1 not in firsts, f"curve points {requested} not all measured: {steps}"
    assert steps[-1] == requested[-1], "the last point is the budget, measured exactly"
    return firsts


def _curve_opponents(params: dict, exp_id: str) -> list[str]:
    e = params["experiments"][exp_id]
    opps = e["opponents"] if e.get("opponents") is not None else params["train"]["opponents"][e["game"]]
    return [o if isinstance(o, str) else o["agent"] for o in opps]


def test_tiny_profile_ran_as_a_dvc_experiment(repo):
    assert repo["params"]["profile"] == "tiny"
    assert repo["params"]["experiments"]["tictactoe_tabular_q"]["seeds"] == [7, 8]
    shown = run(dvc("exp", "show", "--json"), repo["path"])
    assert shown.returncode == 0, shown.stderr
    assert "tiny-test" in shown.stdout
    print(f"the tiny profile took {repo['first'].seconds:.0f} s")  # a figure, not a verdict: machine load moves it


def test_data_outputs(repo):
    from boardrl.data import uci_download

    path = repo["path"]
    assert uci_download.sha256((path / "data/raw/connect-4.data").read_bytes()) == uci_download.SHA256["connect-4.data"]
    summary = json.loads((path / "data/processed/summary.json").read_text())
    assert summary["rows"] == 67_557 and summary["classes"] == {"win": 44_473, "loss": 16_635, "draw": 6_449}
    assert summary["regenerated"]["equal_modulo_mirror"] is True and summary["regenerated"]["symmetric"] == 180
    out = repo["first"].stdout + repo["first"].stderr
    assert "using the vendored copy" in out  # the offline fallback said so


def test_train_outputs_per_experiment_and_seed(repo):
    path, params = repo["path"], repo["params"]
    head = git(path, "rev-parse", "HEAD")
    for exp_id in repo["ids"]:
        e = params["experiments"][exp_id]
        for seed in e["seeds"]:
            assert (path / f"models/{exp_id}/seed-{seed}/model/agent.json").is_file()
            assert sorted(p.name for p in (path / f"models/{exp_id}/seed-{seed}").iterdir()) == ["model"]
            lines = (path / f"results/curves/{exp_id}/seed-{seed}.tsv").read_text().splitlines()
            assert lines[0] == "step\topponent\tseat\twin\tdraw\tloss\tgames"
            rows = [ln.split("\t") for ln in lines[1:]]
            opponents = _curve_opponents(params, exp_id)
            steps = sorted({int(r[0]) for r in rows})
            assert steps == (_measured_points(_eval_points(params, exp_id), steps) if opponents else [])
            snapshots = path / f"snapshots/{exp_id}/seed-{seed}"  # what curve@<id> played: one per measured point
            index = json.loads((snapshots / "index.json").read_text())
            assert sorted(p.name for p in snapshots.iterdir()) == sorted(["index.json", *map(str, steps)])
            assert index["snapshots"] == steps and index["curve_points"]  # every point measured, played if any
            assert sorted(set(index["curve_points"].values())) == steps or not opponents
            assert len(rows) == len(steps) * len(opponents) * 3
            for r in rows:
                assert r[1] in opponents and r[2] in SEATS
                assert abs(float(r[3]) + float(r[4]) + float(r[5]) - 1) < 1e-5
            summary = json.loads((path / f"results/train/{exp_id}/seed-{seed}/summary.json").read_text())
            assert list(summary) == TRAIN_SUMMARY_KEYS and summary["resumed_from"] == 0
            assert summary["experiment"] == exp_id and summary["seed"] == seed and summary["profile"] == "tiny"
            assert summary["git_commit"] == head and summary["unit"] == "games"
            assert summary["budget"] == budget(params, exp_id) and summary["dvc_exp_name"] == "tiny-test"
        assert sorted(p.name for p in (path / f"models/{exp_id}").iterdir()) == [f"seed-{s}" for s in sorted(e["seeds"])]


def test_seeds_differ_and_the_spread_is_reported(repo):
    path = repo["path"]
    ev = json.loads((path / "results/eval/tictactoe_tabular_q.json").read_text())
    assert list(ev["seeds"]) == ["7", "8"] and ev["across_seeds"]["seeds"] == [7, 8]
    curves = [(path / f"results/curves/tictactoe_tabular_q/seed-{s}.tsv").read_text() for s in (7, 8)]
    assert curves[0] != curves[1]  # two training seeds, two runs
    win = ev["across_seeds"]["opponents"]["random"]["win"]
    values = [ev["seeds"][s]["opponents"]["random"]["combined"]["win"] for s in ("7", "8")]
    assert win["values"] == values and win["ci"][0] <= win["iqm"] <= win["ci"][1]


def test_evaluate_outputs(repo):
    path, params = repo["path"], repo["params"]
    for exp_id in repo["ids"]:
        e = params["experiments"][exp_id]
        res = json.loads((path / f"results/eval/{exp_id}.json").read_text())
        ladder = e.get("ladder") or params["evaluate"]["per_game"][e["game"]]["opponents"]
        for seed_res in res["seeds"].values():
            assert list(seed_res["opponents"]) == [o if isinstance(o, str) else o["agent"] for o in ladder]
            for block in seed_res["opponents"].values():
                for seat in SEATS:
                    s = block[seat]
                    assert s["win_ci"][0] <= s["win"] <= s["win_ci"][1]
                assert block["combined"]["games"] == block["as_first"]["games"] + block["as_second"]["games"]
            if e["game"] != "conniption":  # no referee for Conniption
                assert 0.0 <= seed_res["optimal_move_rate"] <= 1.0
            assert list(seed_res["provenance"]) == PROVENANCE_KEYS
            if e["game"] == "connect4":
                uci = seed_res["uci"]
                assert list(uci["seed000"]) == ["win", "loss", "draw"]
                for block in uci["full"].values():
                    assert block["as_first"]["games"] == block["as_second"]["games"] == 6
            else:
                assert seed_res["uci"] is None


def test_a_trained_model_is_a_ladder_opponent(repo):
    """The fast experiment's ladder names model:tictactoe_tabular_q; DVC ordered training before it."""
    path = repo["path"]
    res = json.loads((path / "results/eval/tictactoe_tabular_q_fast.json").read_text())
    block = res["seeds"]["3"]["opponents"]["model:tictactoe_tabular_q"]
    assert block["combined"]["games"] == repo["params"]["evaluate"]["games"]
    models = json.loads((path / "build/models/tictactoe_tabular_q_fast.json").read_text())
    assert set(models["model:tictactoe_tabular_q"]) == {"agent.json", "q_table.npz", "sha256.json"}


def test_dvc_metrics_and_plots(repo):
    path = repo["path"]
    shown = run(dvc("metrics", "show", "--json"), path)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)[""]["data"]
    assert set(data) == {f"results/metrics/{i}.json" for i in repo["ids"]}  # the data set's facts are no metric
    for exp_id in repo["ids"]:
        metrics = data[f"results/metrics/{exp_id}.json"]["data"]
        full = json.loads((path / f"results/eval/{exp_id}.json").read_text())
        assert metrics["vs:random"]["win"] == round(full["across_seeds"]["opponents"]["random"]["win"]["iqm"], 4)
        assert len(json.dumps(metrics)) < 400  # a few headline numbers, not sixty columns
    plots = run(dvc("plots", "show", "--json"), path)
    assert plots.returncode == 0, plots.stderr
    pdata = json.loads(plots.stdout)["data"]
    spec = pdata["results/curves/tictactoe_tabular_q/seed-7.tsv"][0]["content"]
    assert spec["encoding"]["color"]["field"] == "opponent"  # our template, not DVC's default
    assert "tictactoe_tabular_q/seed-7.tsv" in json.dumps(spec["title"])  # each plot names its experiment and seed
    assert spec["encoding"]["y"]["title"] == "share of games won, both seats together"
    assert all(" " not in key for m in data.values() for key in m["data"])  # metric keys without spaces


def test_mlflow_runs_and_tags(repo):
    from mlflow import MlflowClient

    path = repo["path"]
    head = git(path, "rev-parse", "HEAD")
    client = MlflowClient(tracking_uri=f"sqlite:///{path}/mlflow.db")
    assert not (path / "mlruns").exists()
    assert client.get_experiment("0").lifecycle_stage == "deleted"  # no empty "Default" in the UI's list
    for exp_id in repo["ids"]:
        game = repo["params"]["experiments"][exp_id]["game"]
        exp = client.get_experiment_by_name(game)
        assert exp.artifact_location == (path / "mlartifacts" / game).as_uri()
        assert exp.tags["mlflow.experimentKind"] == "custom_model_development"  # runs first, not the GenAI view
        runs = client.search_runs([exp.experiment_id], filter_string=f"tags.experiment = '{exp_id}'")
        for seed in repo["params"]["experiments"][exp_id]["seeds"]:
            summary = json.loads((path / f"results/train/{exp_id}/seed-{seed}/summary.json").read_text())
            train = next(r for r in runs if r.info.run_id == summary["mlflow_run_id"])
            assert train.info.status == "FINISHED" and train.data.tags["stage"] == "train"
            assert train.data.tags["mlflow.parentRunId"]  # nested under the stage's run
            assert {k: train.data.tags[k] for k in ("seed", "learner", "git_commit", "profile", "dvc_exp_name")} == {
                "seed": str(seed), "learner": repo["params"]["experiments"][exp_id]["learner"],
                "git_commit": head, "profile": "tiny", "dvc_exp_name": "tiny-test"}
            curve = client.get_run(train.data.tags["curve_run_id"])  # curve@<id>'s run of this seed
            assert curve.info.status == "FINISHED" and curve.data.tags["stage"] == "curve"
            assert curve.data.tags["train_run_id"] == train.info.run_id and curve.data.tags["seed"] == str(seed)
            curve_opps = _curve_opponents(repo["params"], exp_id)
            if curve_opps:
                hist = client.get_metric_history(curve.info.run_id, f"curve/{curve_opps[0]}/combined/win")
                lines = (path / f"results/curves/{exp_id}/seed-{seed}.tsv").read_text().splitlines()[1:]
                steps = sorted({int(line.split("\t")[0]) for line in lines})  # the counts the curve was measured at
                assert sorted(m.step for m in hist) == _measured_points(_eval_points(repo["params"], exp_id), steps)
            assert client.get_metric_history(train.info.run_id, "games_per_s")  # the learner base's throughput
            assert "summary.json" in {a.path for a in client.list_artifacts(train.info.run_id)}
            assert {"curve.png", "seed-%d.tsv" % seed} <= {a.path for a in client.list_artifacts(curve.info.run_id)}
            models = client.search_logged_models(experiment_ids=[exp.experiment_id],
                                                 filter_string=f"source_run_id = '{train.info.run_id}'")
            assert [m.name for m in models] == ["model"]  # a logged model, not loose artifacts
        ev = json.loads((path / f"results/eval/{exp_id}.json").read_text())
        for seed, block in ev["seeds"].items():
            run_ = client.get_run(block["provenance"]["mlflow_run_id"])
            if block["optimal_move_rate"] is not None:
                assert run_.data.metrics["optimal_move_rate"] == block["optimal_move_rate"]


def test_report_stage_outputs(repo):
    path = repo["path"]
    assert (path / "reports" / "report.md").is_file() and (path / "reports" / "index.html").is_file()
    assert list((path / "reports" / "figures").glob("*.png"))
    assert "tiny" in (path / "reports" / "report.md").read_text()


def test_headline_agents_register_as_mlflow_models_and_play_by_alias(repo, monkeypatch):
    """`boardrl register` files each game's headline agent as a version of the game's registered model with its kind
    and `champion` as aliases (another profile than the default prefixes them: `tiny-champion`); registering again
    adds no version; `model:<game>@<alias>` plays the version's
    checked copy, which is the pipeline's own model file; a bad alias or a swapped stored file is one line."""
    import mlflow

    from boardrl.tracking.registry import RegistryError, resolve_spec

    # resolve_spec points this process's MLflow at the copy's store: put it back afterwards
    monkeypatch.setenv("MLFLOW_TRACKING_URI", os.environ.get("MLFLOW_TRACKING_URI", ""))
    monkeypatch.setattr(mlflow.tracking._tracking_service.utils, "_tracking_uri", None)
    path = repo["path"]
    boardrl = str(VENV_BIN / "boardrl")
    first = run([boardrl, "register"], path)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "tictactoe new version 1: " in first.stdout and "(aliases: tiny-tabular, tiny-champion)" in first.stdout
    again = run([boardrl, "register"], path)
    assert again.returncode == 0 and "new version" not in again.stdout and "tictactoe version 1: " in again.stdout

    client = mlflow.MlflowClient(f"sqlite:///{path / 'mlflow.db'}")
    version = client.get_model_version_by_alias("tictactoe", "tiny-champion")
    exp_id, seed = version.tags["experiment"], version.tags["seed"]
    assert set(client.get_registered_model("tictactoe").aliases) == {"tiny-tabular", "tiny-champion"}
    with pytest.raises(RegistryError, match="seed= names a seed of an experiment"):
        resolve_spec("model:tictactoe@tiny-champion,seed=0", path)
    played = run([boardrl, "match", "tictactoe", "model:tictactoe@tiny-champion", "random", "--games", "4", "--json"],
                 path)
    assert played.returncode == 0, played.stderr[-3000:]
    assert json.loads(played.stdout)["agent_a"] == "model:tictactoe@tiny-champion"
    copy = path / "cache" / "registry" / "tictactoe" / "v1" / "artifacts" / "model"
    ours = path / "models" / exp_id / f"seed-{seed}" / "model"
    assert {f.name: f.read_bytes() for f in copy.iterdir()} == {f.name: f.read_bytes() for f in ours.iterdir()}

    with pytest.raises(RegistryError) as wrong:  # the CLI prints such an error as its one line (test_cli.py)
        resolve_spec("model:tictactoe@best", path)
    assert str(wrong.value).endswith(
        "registered model 'tictactoe' has no alias 'best' (aliases: tiny-champion, tiny-tabular)")
    # the store's copy swapped for another experiment's model: refused, not played
    logged = client.get_logged_model(version.source.removeprefix("models:/"))
    stored = Path(logged.artifact_location.removeprefix("file://")) / "artifacts" / "model"
    other = next(p for p in (path / "models").glob("*/seed-*/model") if p.parent.parent.name != exp_id)
    (stored / "sha256.json").write_bytes((other / "sha256.json").read_bytes())
    shutil.rmtree(path / "cache" / "registry")
    with pytest.raises(RegistryError, match="does not match the content hash recorded when it was registered"):
        resolve_spec("model:tictactoe@tiny-champion", path)


def test_a_finished_profile_run_is_published_whole_with_its_hashes_and_plays(repo):
    """`boardrl publish tiny` copies the run's report, results and stage times, and the headline agents' models
    with their content hashes, into published/tiny/; every file matches PUBLISHED.json; a published model plays by
    its directory; a damaged model stops a new publication with one line and the previous one stays whole.
    `--recheck <id>` reruns that experiment's stages from nothing, records that its metrics file and models came
    out byte-equal, and puts the run back as it was (the later tests' `dvc repro` finds nothing to rerun)."""
    from boardrl.agents.models import load_model_agent
    from boardrl.errors import BoardRLError
    from boardrl.evaluate.match import play_match
    from boardrl.report.published import MANIFEST, headline_models, publish_profile
    from boardrl.games import make_game
    from boardrl.integrity import sha256_file, verify_directory
    from boardrl.tracking.registry import manifest_sha256

    path = repo["path"]
    rechecked = "tictactoe_seed000_exp01"
    lock = (path / "dvc.lock").read_bytes()
    # from a shell without the venv on PATH, as `.venv/bin/boardrl publish` is often run: the rerun still finds dvc
    env = stage_env(path)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if Path(p) != VENV_BIN)
    done = subprocess.run([str(VENV_BIN / "boardrl"), "publish", "tiny", "--source", str(path), "--recheck",
                           rechecked], cwd=path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert f"recheck {rechecked}: byte-equal metrics file and models" in done.stdout
    assert (path / "dvc.lock").read_bytes() == lock
    out = path / "published" / "tiny"
    record = json.loads((out / MANIFEST).read_text())
    [found] = record["rechecks"]
    assert found["stages"] == [f"{k}@{rechecked}" for k in ("train", "curve", "evaluate")]
    assert found["metrics_equal"] and found["models_equal"] and all(found["models_equal"].values())
    assert "## Rechecks" in (out / "index.md").read_text()
    assert record["profile"] == "tiny" and record["dvc_experiment"] == "tiny-test"
    assert record["git_commit"] == git(path, "rev-parse", "HEAD").strip()
    assert (out / "reports" / "report.md").read_bytes() == (path / "reports" / "report.md").read_bytes()
    assert {p.relative_to(out).as_posix(): sha256_file(p) for p in out.rglob("*") if p.is_file()
            and p.name not in (MANIFEST, "index.md")} == record["files"]
    picked = headline_models(path)
    assert picked and {f"models/{e}/seed-{s}/model" for e, s, _ in picked} == set(record["models"])
    for _, _, model in picked:
        copy = out / model.relative_to(path)
        verify_directory(copy)
        assert record["models"][model.relative_to(path).as_posix()]["content_sha256"] == manifest_sha256(model)
    trains = [e for e in repo["ids"] if (path / "results" / "train" / e).is_dir()]
    assert set(trains) <= set(record["wall_seconds"]) and all("training" in record["wall_seconds"][e] for e in trains)
    exp, seed, model = next(m for m in picked if m[0] == "tictactoe_tabular_q")
    game = make_game("tictactoe")
    def seats(a_dir: Path):  # four games of the model in a_dir against the pipeline's own copy, per seat
        res = play_match(game, load_model_agent(game, f"model:{a_dir}"), load_model_agent(game, f"model:{model}"), 4,
                         seed=1)
        return res.as_first, res.as_second

    assert seats(out / model.relative_to(path)) == seats(model)

    weights = next(p for p in model.iterdir() if p.name != "sha256.json")
    before, manifest_before = weights.read_bytes(), (out / MANIFEST).read_bytes()
    weights.write_bytes(before[:-1] + bytes([before[-1] ^ 1]))
    try:
        with pytest.raises(BoardRLError) as damaged:
            publish_profile(path, "tiny", path)
    finally:
        weights.write_bytes(before)
    assert weights.name in str(damaged.value) and "\n" not in str(damaged.value)
    assert (out / MANIFEST).read_bytes() == manifest_before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]


def test_tournaments_and_learner_records(repo):
    """tournament@<id> files (every ordered pairing, the tiny profile's games each) and seed 000's Q-value trace
    (a learner record beside summary.json), both shown in the report."""
    path, params = repo["path"], repo["params"]
    for tid, t in params["tournaments"].items():
        data = json.loads((path / f"results/tournaments/{tid}.json").read_text())
        assert len(data["pairings"]) == len(t["agents"]) ** 2
        assert all(p["games"] == t["games"] for p in data["pairings"])
    trace = (path / "results/train/tictactoe_seed000_exp01/seed-7/trace.tsv").read_text().splitlines()
    assert trace[0] == "game\taction\tq" and len(trace) == 1 + 800 * 5  # 5 legal moves at s0 after each game
    report = (path / "reports" / "report.md").read_text()
    assert "## Round robins of fixed players" in report
    assert "### Q-value trace" in (path / "reports" / "tictactoe.md").read_text()  # on the game's own page


# ---------------------------------------------------------------------------------------------- what reruns
def _stale(path: Path) -> set[str]:
    status = run(dvc("status", "--json"), path)
    assert status.returncode == 0, status.stderr
    return set(json.loads(status.stdout))


def _ran(done) -> set[str]:
    """The stages a `dvc repro` ran, from its output."""
    return {line.split("'")[1] for line in done.stdout.splitlines() if line.startswith("Running stage")}


def _stale_after_inputs(path: Path) -> set[str]:
    """The stages a params edit reaches: the experiment stages depend on their params slice through
    build/inputs/<id>.<stage>.json, so DVC sees what changed once the cheap `inputs` stage has rewritten those."""
    done = run(dvc("repro", "inputs"), path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return _stale(path)


def _restore(path: Path, original: str) -> None:
    """The copy's params.yaml and fingerprints as they were (the later tests read the copy)."""
    (path / "params.yaml").write_text(original)
    done = run(dvc("repro", "inputs"), path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _with_params(path: Path, edit) -> str:
    original = (path / "params.yaml").read_text()
    data = yaml.safe_load(original)
    edit(data)
    (path / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return original


def test_second_repro_reruns_nothing(repo):
    again = run(dvc("repro"), repo["path"])
    assert again.returncode == 0, again.stderr
    assert "Running stage" not in again.stdout, again.stdout


def test_stage_names_are_the_experiment_ids(repo):
    listed = run(dvc("stage", "list", "--name-only"), repo["path"])
    names = set(listed.stdout.split())
    assert {f"{s}@{i}" for s in ("train", "curve", "evaluate") for i in repo["ids"]} <= names


def test_changing_one_experiment_reruns_only_its_stages(repo):
    path = repo["path"]
    original = _with_params(path, lambda d: d["experiments"]["dots_and_boxes_2x2_tabular_q"]["params"].update(alpha=0.25))
    try:
        assert _stale(path) <= PARAMS_FILE_STAGES  # what an edit reaches shows once `inputs` ran
        stale = _stale_after_inputs(path)
        expected = {f"{s}@dots_and_boxes_2x2_tabular_q" for s in ("train", "curve", "evaluate")}
        assert expected <= stale and stale <= expected | PARAMS_FILE_STAGES, stale
    finally:
        _restore(path, original)


def test_reordering_experiments_reruns_nothing_but_the_fingerprint_stages(repo):
    """Real reruns: `inputs` and `ladder_models` depend on params.yaml as a file (not on its `experiments`
    section, which would be copied into dvc.lock twice), so they run again and write the same fingerprints, and
    no experiment stage after them reruns (the report does: it reads the file)."""
    path = repo["path"]
    original = _with_params(path, lambda d: d.update(experiments=dict(reversed(list(d["experiments"].items())))))
    try:
        assert _stale(path) <= PARAMS_FILE_STAGES
        done = run(dvc("repro", "ladder_models"), path)  # and `inputs`, upstream of it
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert _ran(done) == {"inputs", "ladder_models"}, _ran(done)
        assert _stale(path) == {"report"}  # the fingerprints came out the same: no experiment stage is reached
    finally:
        (path / "params.yaml").write_text(original)


def test_removing_an_experiment_reruns_no_other(repo):
    path = repo["path"]
    original = _with_params(path, lambda d: d["experiments"].pop("connect4_tabular_q"))
    try:
        stale = _stale(path)
        assert not {s for s in stale if s.startswith(("train@", "curve@", "evaluate@"))}, stale
    finally:
        (path / "params.yaml").write_text(original)


def test_adding_an_experiment_and_a_learner_module_retrains_nothing_that_existed(repo):
    """Real reruns, not only `dvc status`: a new experiment and a new learner module in learn/ run only the new
    experiment's stages (plus the cheap fingerprint stages and the report)."""
    path = repo["path"]
    new = {"game": "tictactoe", "learner": "tabular_q", "seeds": [5], "params": {"games": 300, "parallel_games": 32}}
    original = _with_params(path, lambda d: d["experiments"].update(tictactoe_tabular_q_new=new))
    module = path / "src/boardrl/learn/zz_new_learner.py"
    module.write_text('"""A learner module added later."""\n\nLEARNER = None\n')
    try:
        stale = _stale(path)
        assert {"train@tictactoe_tabular_q_new", "evaluate@tictactoe_tabular_q_new"} <= stale
        done = run(dvc("repro", "evaluate@tictactoe_tabular_q_new"), path)  # with every stage upstream of it
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert _ran(done) == {"inputs", "ladder_models", "train@tictactoe_tabular_q_new",
                              "evaluate@tictactoe_tabular_q_new"}, _ran(done)
        # the new model's fingerprint reached no other experiment: only the new curve and the report are left
        assert _stale(path) == {"curve@tictactoe_tabular_q_new", "report"}
    finally:
        module.unlink()
        (path / "params.yaml").write_text(original)


def test_the_curve_stage_equals_the_curve_measured_in_training(repo, tmp_path):
    """curve@<id> plays the snapshots with the seeds training used to play them with: the same bytes as the curve
    measured in training (``train_seed``'s default, what a sweep does), here for tictactoe_tabular_q seed 7."""
    from boardrl.config import parse_params
    from boardrl.experiments.curve import curve_rows
    from boardrl.experiments.train import train_seed
    from boardrl.tracking import curve as curves

    spec = parse_params(repo["params"]).spec("tictactoe_tabular_q")
    _, learner = train_seed(spec, 7, tmp_path / "ck", verbose=False)
    expected = curves.write_tsv(tmp_path / "curve.tsv", curve_rows(learner.evaluations)).read_bytes()
    assert (repo["path"] / "results/curves/tictactoe_tabular_q/seed-7.tsv").read_bytes() == expected


def test_curve_settings_rerun_only_the_curve_stages(repo):
    """Games per curve point and the curve's opponents cannot change a model: they rerun curve@<id>, never
    train@<id> (nor evaluate@<id>; a sweep measures its curves in training, so it does rerun).  `dvc status`
    after a change of train.eval_games; a real `dvc repro` after a change of one experiment's own curve
    opponents, whose curve then holds the new opponent only."""
    path, exp_id = repo["path"], "tictactoe_tabular_q_fast"
    sweeps = {f"sweep@{s}" for s in repo["params"]["sweeps"]}
    original = _with_params(path, lambda d: d["train"].update(eval_games=d["train"]["eval_games"] + 2))
    try:
        stale = _stale_after_inputs(path)
        assert f"curve@{exp_id}" in stale, stale
        assert stale <= {f"curve@{i}" for i in repo["ids"]} | sweeps | PARAMS_FILE_STAGES, stale
    finally:
        _restore(path, original)
    lock, shipped = (path / "dvc.lock").read_text(), (path / f"results/curves/{exp_id}/seed-3.tsv").read_bytes()
    _with_params(path, lambda d: d["experiments"][exp_id].update(opponents=[{"agent": "random", "games": 12}]))
    try:
        done = run(dvc("repro", f"curve@{exp_id}"), path)  # with every stage upstream of it: train@ is not rerun
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert _ran(done) == {"inputs", f"curve@{exp_id}"}, _ran(done)
        assert _stale(path) <= PARAMS_FILE_STAGES - {"inputs"}, _stale(path)  # no train@ or evaluate@ either
        rows = [r.split("\t") for r in (path / f"results/curves/{exp_id}/seed-3.tsv").read_text().splitlines()[1:]]
        assert {(r[1], r[6]) for r in rows if r[2] == "combined"} == {("random", "12")}
    finally:
        # the shipped curve back, for whoever reads the copy next: the old lock and its outputs from DVC's cache
        (path / "params.yaml").write_text(original)
        (path / "dvc.lock").write_text(lock)
        back = run(dvc("checkout", "--force"), path)
        assert back.returncode == 0, back.stdout[-3000:] + back.stderr[-3000:]
    assert (path / f"results/curves/{exp_id}/seed-3.tsv").read_bytes() == shipped
    assert not {s for s in _stale(path) if s.startswith(("train@", "curve@", "evaluate@"))}


def test_sweep_stage_outputs(repo):
    """sweep@<id> of the tiny profile: its finished trials, best params the train stage takes, figures."""
    path = repo["path"]
    out = path / "results/sweeps/tictactoe_tabular_q"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["finished_trials"] == repo["params"]["sweeps"]["tictactoe_tabular_q"]["trials"] and summary["profile"] == "tiny" and summary["seeds"] == [7]
    best = yaml.safe_load((out / "best_params.yaml").read_text())
    assert best["sweep"]["best_score"] == summary["best_score"]
    from boardrl.config import parse_params
    from boardrl.experiments.profiles import merge

    merged = parse_params(merge(repo["params"], {"experiments": best["experiments"]}))
    assert merged.learner_params("tictactoe_tabular_q").alpha == best["experiments"]["tictactoe_tabular_q"]["params"]["alpha"]
    assert (out / "figures" / "history.png").is_file() and (out / "trials.csv").is_file()
