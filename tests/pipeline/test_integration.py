"""End to end: `dvc repro` of the tiny profile in a copy of the repository, then everything users look at.

One copy is built per module (the expensive part, ~1-2 minutes here); the tests then read its outputs, ask
DVC for metrics/plots/status, read MLflow through its client and through the UI server's REST API, and
finally rerun stages to check that a second `dvc repro` does nothing and that reruns give identical numbers.
Until pipeline/report.py exists the pipeline is run up to `evaluate` (the stages this suite owns).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from repo_copy import VENV_BIN, copy_repo, free_port, git, run, stage_env

pytestmark = pytest.mark.timeout(900)

SUMMARY_KEYS = ["game", "agent", "games_trained", "seconds", "seed", "mlflow_run_id", "git_commit", "params_hash",
                "dvc_exp_name"]
SEATS = ("as_first", "as_second", "combined")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    path = copy_repo(tmp_path_factory.mktemp("pipeline") / "repo")
    first = run([str(VENV_BIN / "dvc"), "repro"], path, timeout=600)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-4000:]
    params = yaml.safe_load((path / "params.yaml").read_text())
    return {"path": path, "first": first, "params": params,
            "experiments": [(e["game"], e["agent"]) for e in params["experiments"]]}


def _eval_points(params: dict, game: str, agent: str) -> list[int]:
    from boardrl.config import CurveParams, eval_points

    games = params["train"]["learners"][game][agent]["games"]
    return eval_points(games, CurveParams(**params["train"]["curve"]))


def test_data_outputs(repo):
    from boardrl.data import uci_download

    path = repo["path"]
    assert uci_download.sha256((path / "data/raw/connect-4.data").read_bytes()) == uci_download.SHA256["connect-4.data"]
    summary = json.loads((path / "data/processed/summary.json").read_text())
    assert summary["rows"] == 67_557 and summary["classes"] == {"win": 44_473, "loss": 16_635, "draw": 6_449}
    assert summary["regenerated"]["equal_modulo_mirror"] is True and summary["regenerated"]["symmetric"] == 180
    assert (path / "data/processed/uci.parquet").stat().st_size > 100_000
    out = repo["first"].stdout + repo["first"].stderr
    assert "using the vendored copy" in out  # the offline fallback said so


def test_train_outputs(repo):
    path, params = repo["path"], repo["params"]
    head = git(path, "rev-parse", "HEAD")
    for game, agent in repo["experiments"]:
        model = path / "models" / game / agent
        assert (model / "model" / "agent.json").is_file()
        assert not (model / "checkpoint").exists()  # finished runs leave no checkpoint behind
        lines = (path / f"results/train/{game}-{agent}/curve.tsv").read_text().splitlines()
        assert lines[0] == "step\topponent\tseat\twin\tdraw\tloss\tgames"
        rows = [ln.split("\t") for ln in lines[1:]]
        opponents = [o if isinstance(o, str) else o["agent"] for o in params["train"]["opponents"][game]]
        assert sorted({int(r[0]) for r in rows}) == _eval_points(params, game, agent)
        assert len(rows) == len(_eval_points(params, game, agent)) * len(opponents) * 3
        for r in rows:
            assert r[1] in opponents and r[2] in SEATS
            assert abs(float(r[3]) + float(r[4]) + float(r[5]) - 1) < 1e-5
            assert int(r[6]) == (params["train"]["eval_games"] // (1 if r[2] == "combined" else 2))
        summary = json.loads((path / f"results/train/{game}-{agent}/summary.json").read_text())
        assert list(summary) == SUMMARY_KEYS
        assert summary["git_commit"] == head and summary["seed"] == params["seed"]
        assert summary["games_trained"] == params["train"]["learners"][game][agent]["games"]
        assert summary["dvc_exp_name"] is None and len(summary["params_hash"]) == 16


def test_evaluate_outputs(repo):
    path, params = repo["path"], repo["params"]
    for game, agent in repo["experiments"]:
        res = json.loads((path / f"results/eval/{game}-{agent}.json").read_text())
        opps = [o if isinstance(o, str) else o["agent"] for o in params["evaluate"]["opponents"][game]]
        assert list(res["opponents"]) == opps
        for block in res["opponents"].values():
            for seat in SEATS:
                s = block[seat]
                assert {"win", "draw", "loss", "games", "win_ci"} <= set(s)
                assert s["win_ci"][0] <= s["win"] <= s["win_ci"][1]
            assert block["combined"]["games"] == block["as_first"]["games"] + block["as_second"]["games"]
        assert 0.0 <= res["optimal_move_rate"] <= 1.0  # every tiny-profile game has a referee
        assert res["optimal_move"]["n"] == params["evaluate"]["optimal_positions"]
        assert list(res["provenance"]) == SUMMARY_KEYS
        if game == "connect4":
            uci = res["uci"]
            assert list(uci["seed000"]) == ["win", "loss", "draw"]
            assert all(s["games"] == params["evaluate"]["uci"]["seed000_games"] for s in uci["seed000"].values())
            n = params["evaluate"]["uci"]["full_positions"]
            for block in uci["full"].values():
                assert block["as_first"]["games"] == block["as_second"]["games"] == n == block["positions"]
        else:
            assert res["uci"] is None


def test_dvc_metrics_and_plots(repo):
    path = repo["path"]
    shown = run([str(VENV_BIN / "dvc"), "metrics", "show", "--json"], path)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)[""]["data"]
    for game, agent in repo["experiments"]:
        metrics = data[f"results/metrics/{game}-{agent}.json"]["data"]
        full = json.loads((path / f"results/eval/{game}-{agent}.json").read_text())
        assert metrics["random"]["win"] == full["opponents"]["random"]["combined"]["win"]
        assert metrics["optimal_move_rate"] == full["optimal_move_rate"]
    assert data["data/processed/summary.json"]["data"]["rows"] == 67_557
    plots = run([str(VENV_BIN / "dvc"), "plots", "show", "--json"], path)
    assert plots.returncode == 0, plots.stderr
    pdata = json.loads(plots.stdout)["data"]
    for game, agent in repo["experiments"]:
        spec = pdata[f"results/train/{game}-{agent}/curve.tsv"][0]["content"]
        assert spec["encoding"]["color"]["field"] == "opponent"  # our template, not DVC's default
        assert {row["step"] for row in spec["data"]["values"]} == {str(s) for s in _eval_points(repo["params"], game,
                                                                                                 agent)}


def test_mlflow_runs_and_tags(repo):
    from mlflow import MlflowClient

    path = repo["path"]
    head = git(path, "rev-parse", "HEAD")
    client = MlflowClient(tracking_uri=f"sqlite:///{path}/mlflow.db")
    assert not (path / "mlruns").exists()
    for game, agent in repo["experiments"]:
        exp = client.get_experiment_by_name(game)
        assert exp.artifact_location == (path / "mlartifacts" / game).as_uri()
        runs = {r.data.tags["stage"]: r for r in client.search_runs([exp.experiment_id])
                if r.data.tags.get("agent") == agent}
        assert {"train", "evaluate"} <= set(runs)
        summary = json.loads((path / f"results/train/{game}-{agent}/summary.json").read_text())
        train = runs["train"]
        assert train.info.run_id == summary["mlflow_run_id"] and train.info.status == "FINISHED"
        assert {k: train.data.tags[k] for k in ("game", "agent", "git_commit", "params_hash", "dvc_exp_name")} == {
            "game": game, "agent": agent, "git_commit": head, "params_hash": summary["params_hash"],
            "dvc_exp_name": ""}
        hist = client.get_metric_history(train.info.run_id, "curve/random/combined/win")
        assert [m.step for m in hist] == _eval_points(repo["params"], game, agent)
        arts = {a.path for a in client.list_artifacts(train.info.run_id)}
        assert {"curve.png", "model", "curve.tsv", "summary.json"} <= arts
        assert "agent.json" in {Path(a.path).name for a in client.list_artifacts(train.info.run_id, "model")}
        ev = json.loads((path / f"results/eval/{game}-{agent}.json").read_text())
        assert runs["evaluate"].info.run_id == ev["provenance"]["mlflow_run_id"]
        assert runs["evaluate"].data.metrics["optimal_move_rate"] == ev["optimal_move_rate"]
        assert "ladder.png" in {a.path for a in client.list_artifacts(runs["evaluate"].info.run_id)}
    data_runs = client.search_runs([client.get_experiment_by_name("connect4").experiment_id],
                                   filter_string="tags.stage = 'download'")
    assert len(data_runs) == 1 and data_runs[0].data.tags["data_source"] == "vendored"


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def test_mlflow_ui_serves_the_runs(repo):
    """`make ui`'s command on a free port: its REST API lists the same runs, side by side per experiment.

    One worker instead of the default four: the same server, started in a third of the time on two cores.
    """
    path = repo["path"]
    port = free_port()
    cmd = [str(VENV_BIN / "mlflow"), "ui", "--backend-store-uri", f"sqlite:///{path}/mlflow.db",
           "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    proc = subprocess.Popen(cmd, cwd=path, env=stage_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}/api/2.0/mlflow"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                exps = _post(f"{base}/experiments/search", {"max_results": 100})
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                assert time.monotonic() < deadline, "mlflow ui did not answer within 120 s"
                time.sleep(1)
        by_name = {e["name"]: e["experiment_id"] for e in exps["experiments"]}
        games = {g for g, _ in repo["experiments"]}
        assert games <= set(by_name)
        found = _post(f"{base}/runs/search", {"experiment_ids": [by_name[g] for g in games], "max_results": 1000})
        stages = {(t["value"]) for r in found["runs"] for t in r["data"]["tags"] if t["key"] == "stage"}
        assert {"train", "evaluate"} <= stages
        summary_ids = {json.loads((path / f"results/train/{g}-{a}/summary.json").read_text())["mlflow_run_id"]
                       for g, a in repo["experiments"]}
        assert summary_ids <= {r["info"]["run_id"] for r in found["runs"]}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_second_repro_reruns_nothing(repo):
    again = run([str(VENV_BIN / "dvc"), "repro"], repo["path"])
    assert again.returncode == 0, again.stderr
    assert "Running stage" not in again.stdout, again.stdout
    assert again.seconds < 10, f"second dvc repro took {again.seconds:.1f} s"


def test_changing_one_game_reruns_only_its_stages(repo):
    path = repo["path"]
    params_path = path / "params.yaml"
    original = params_path.read_text()
    try:
        changed = yaml.safe_load(original)
        changed["train"]["learners"]["dots_and_boxes_2x2"]["tabular_q"]["alpha"] = 0.25
        params_path.write_text(yaml.safe_dump(changed, sort_keys=False))
        status = run([str(VENV_BIN / "dvc"), "status", "--json"], path)
        assert status.returncode == 0, status.stderr
        stale = set(json.loads(status.stdout))
        idx = repo["experiments"].index(("dots_and_boxes_2x2", "tabular_q"))
        expected = {f"train@experiment{idx}", f"evaluate@experiment{idx}"}
        assert expected <= stale and stale <= expected | {"report"}, stale
    finally:
        params_path.write_text(original)


def test_same_params_and_seed_give_identical_metrics(repo):
    """Rerun train and evaluate of one experiment: curve.tsv and the eval json (minus provenance) match bytes."""
    path = repo["path"]
    game, agent = repo["experiments"][0]
    curve = path / f"results/train/{game}-{agent}/curve.tsv"
    ev = path / f"results/eval/{game}-{agent}.json"
    metrics = path / f"results/metrics/{game}-{agent}.json"
    before = (curve.read_bytes(), json.loads(ev.read_text()), metrics.read_bytes())
    for stage in ("train", "evaluate"):
        res = run([str(VENV_BIN / "python"), f"pipeline/{stage}.py", "--game", game, "--agent", agent], path)
        assert res.returncode == 0, res.stderr[-3000:]
    after_ev = json.loads(ev.read_text())
    assert curve.read_bytes() == before[0]
    assert metrics.read_bytes() == before[2]
    assert after_ev["provenance"]["mlflow_run_id"] != before[1]["provenance"]["mlflow_run_id"]
    before[1].pop("provenance"), after_ev.pop("provenance")
    assert after_ev == before[1]


def test_report_stage_outputs(repo):
    path = repo["path"]
    assert (path / "reports" / "report.md").is_file() and (path / "reports" / "index.html").is_file()
    assert list((path / "reports" / "figures").glob("*.png"))
