"""`make ui` (boardrl.tracking.mlflow_ui): MLflow's UI opening an experiment in its runs table, not on the GenAI
Traces page, with the headline metrics as columns and the Assistant closed; and without MLflow's job runner.

The browser test runs headless Chromium (skipped, saying why, where none is found: ``apt-get install chromium``
or ``BOARDRL_CHROMIUM``) against the real server over a small ``mlflow.db`` logged through ``stage_run``.
Plain ``mlflow ui`` fails it: a fresh browser lands on ``#/experiments/<id>/overview`` (GenAI) with the Assistant
open.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from boardrl.tools.browser import find_chromium
from boardrl.tracking import mlflow_runs as mr
from boardrl.tracking import mlflow_ui as ui
from repo_copy import free_port, stop_group, wait_for_answer

#: An evaluate stage's parent run: the IQM over seeds (headline) beside other numbers.
HEADLINE_KEYS = {"iqm/optimal_move_rate": 0.875, "iqm/random/combined/win": 0.75, "iqm/random/combined/loss": 0.125}
OTHER_KEYS = {"iqm/random/combined/draw": 0.125, "exact_vs_perfect/flawless_seeds": 1.0, "seconds": 12.0}


# ---------------------------------------------------------------------------------------------- no browser
def test_headline_columns_keep_the_comparable_numbers_in_order():
    keys = ["seconds", "iqm/random/combined/draw", "iqm/random/combined/win", "iqm/perfect/combined/loss",
            "iqm/perfect/combined/win", "iqm/uci/value_accuracy", "iqm/optimal_move_rate", "optimal_move_rate",
            "eval/random/combined/win", "iqm/uci/value_accuracy/win", "iqm/exact_vs_perfect/as_first/loss",
            "curve/random/combined/win"]
    assert ui.headline_columns(keys) == [
        "metrics.`iqm/optimal_move_rate`", "metrics.`iqm/uci/value_accuracy`", "metrics.`iqm/perfect/combined/loss`",
        "metrics.`iqm/perfect/combined/win`", "metrics.`iqm/random/combined/win`"]


def test_the_boot_script_only_fills_what_the_browser_lacks():
    defaults = ui.browser_defaults({"3": ["metrics.`iqm/optimal_move_rate`"]})
    assert json.loads(defaults[ui.WORKFLOW_KEY]) == "machine_learning"
    table = json.loads(defaults[ui.RUNS_TABLE_KEY.format(id="3")])
    assert table == {"selectedColumns": ["metrics.`iqm/optimal_move_rate`", "attributes.`Models`"],
                     "columnOrder": ["metrics.`iqm/optimal_move_rate`"],
                     "columnWidths": {"metrics.`iqm/optimal_move_rate`": ui.COLUMN_WIDTH}}
    script = ui.boot_script({**defaults, "x": "</script><b>"})
    assert script.count("</script>") == 1 and "s.getItem(k)===null" in script
    page = b"<!doctype html><html><head><meta charset=utf-8><script src=main.js></script></head></html>"
    out = ui.inject(page, script)
    assert out.index(b"localStorage") < out.index(b"main.js")  # before MLflow's bundle reads the entries
    assert ui.inject(b"<html>no head</html>", script) == b"<html>no head</html>"


def _fake_mlflow(status: int = 200, content_type: bytes = b"text/html; charset=utf-8"):
    seen = {}

    async def app(scope, receive, send):
        seen["headers"] = dict(scope["headers"])
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", content_type), (b"content-length", b"27"), (b"etag", b'"f"'),
                                (b"cache-control", b"no-cache"), (b"x-frame-options", b"SAMEORIGIN")]})
        await send({"type": "http.response.body", "body": b"<html><head></head>", "more_body": True})
        await send({"type": "http.response.body", "body": b"</html>"})

    return app, seen


def _get(app, path: str, headers: list[tuple[bytes, bytes]] | None = None) -> tuple[dict, bytes]:
    import anyio

    sent = []

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "headers": headers or []}
    anyio.run(app, scope, receive, send)
    return sent[0], b"".join(m.get("body", b"") for m in sent[1:])


def test_the_middleware_changes_the_ui_page_only():
    mlflow_app, seen = _fake_mlflow()
    app = ui.DefaultViews(mlflow_app, "", lambda: {"1": ["metrics.`iqm/optimal_move_rate`"]})
    start, body = _get(app, "/", [(b"if-none-match", b'"f"'), (b"host", b"localhost")])
    headers = dict(start["headers"])
    assert b"mlflow.workflowType_v1" in body and b"optimal_move_rate" in body
    assert int(headers[b"content-length"]) == len(body) and headers[b"cache-control"] == b"no-store"
    assert b"etag" not in headers and headers[b"x-frame-options"] == b"SAMEORIGIN"  # MLflow's own headers kept
    assert b"if-none-match" not in seen["headers"] and seen["headers"][b"host"] == b"localhost"
    _, other = _get(app, "/ajax-api/2.0/mlflow/experiments/search")
    assert other == b"<html><head></head></html>"
    _, json_page = _get(ui.DefaultViews(_fake_mlflow(content_type=b"application/json")[0], "", dict), "/")
    assert json_page == b"<html><head></head></html>"


def test_a_store_that_cannot_be_read_costs_only_the_columns():
    def broken():
        raise RuntimeError("database is locked")

    _, body = _get(ui.DefaultViews(_fake_mlflow()[0], "/mlflow", broken), "/mlflow/")
    assert b"mlflow.workflowType_v1" in body and b"ReactComponentState" not in body


def test_this_mlflow_still_has_what_the_defaults_rely_on():
    """A new MLflow that renames its browser keys or its uvicorn command builder shows up here first."""
    assert ui.check_mlflow() == []


def test_mlflow_server_is_told_to_load_this_app(monkeypatch):
    import mlflow.server

    monkeypatch.setattr(mlflow.server, "_build_uvicorn_command", lambda *a, **k: ["uvicorn", ui.MLFLOW_APP])
    assert ui._use_this_app()
    assert mlflow.server._build_uvicorn_command() == ["uvicorn", "boardrl.tracking.mlflow_ui:app"]


# ---------------------------------------------------------------------------------------------- the browser
@pytest.fixture(scope="module")
def tracking(tmp_path_factory) -> Path:
    """A project folder whose mlflow.db holds one experiment (tictactoe) with one evaluate run."""
    root = tmp_path_factory.mktemp("ui")
    saved = os.environ.get("MLFLOW_TRACKING_URI")
    try:
        with mr.stage_run(root, stage="evaluate", mlflow_experiment="tictactoe", run_name="evaluate ttt seed 0",
                          params={"evaluate": {"games": 10}}, params_hash="abc123", experiment="ttt",
                          game="tictactoe", learner="tabular_q", seed=0):
            mr.log_metrics({**HEADLINE_KEYS, **OTHER_KEYS}, step=1000)
    finally:
        import mlflow

        mlflow.set_tracking_uri(None)
        if saved is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = saved
    return root


@pytest.fixture(scope="module")
def server(tracking):
    """``python -m boardrl.tracking.mlflow_ui`` (what ``make ui`` runs) on a free port; yields (URL, process)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    proc = subprocess.Popen([sys.executable, "-m", "boardrl.tracking.mlflow_ui", "--port", str(port)], cwd=tracking,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_answer(proc, lambda: urllib.request.urlopen(f"{url}/health", timeout=5).close(), "the MLflow UI",
                        timeout_s=60)
        yield url, proc
    finally:
        stop_group(proc)


@pytest.mark.timeout(60)  # the server starts in ~10 s on an idle machine (MLflow's default: ~60 s on a busy one)
def test_the_server_runs_without_mlflows_job_runner(server):
    import psutil

    _, proc = server
    commands = [" ".join(p.cmdline()) for p in psutil.Process(proc.pid).children(recursive=True)]
    assert any("boardrl.tracking.mlflow_ui:app" in c for c in commands), commands  # uvicorn serves this app
    assert not any("huey" in c or "job" in c for c in commands), commands


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium binary on PATH (apt-get install chromium, or set "
                                                    "BOARDRL_CHROMIUM)")
@pytest.mark.timeout(90)  # fails clearly rather than hanging: server start ~10-30 s, two page loads ~10 s each
def test_an_experiment_opens_in_its_runs_table_with_the_headline_metrics(server, tmp_path):
    from web.chromium import chromium_page

    url, _ = server
    with chromium_page() as page:  # a fresh profile: empty localStorage, as a first visit
        page.goto(url + "/")
        link = page.wait_for("""(() => { const a = [...document.querySelectorAll('a')]
            .find(a => a.textContent.trim() === 'tictactoe'); return a && a.getAttribute('href'); })()""",
                             "the experiment in the home page's list", timeout=45)
        assert page.eval("document.body.innerText").count("Ask questions about your experiments") == 0  # closed
        page.click(f'a[href="{link}"]')
        where = page.wait_for("/\\/experiments\\/\\d+\\/(runs|traces|overview)/.test(location.hash) && location.hash",
                              "an experiment page", timeout=30)
        assert "/runs" in where and "workflowType=machine_learning" in where, where
        header = page.wait_for("""(() => { const t = [...document.querySelectorAll('[role=columnheader]')]
            .map(e => e.textContent.trim()).filter(Boolean); return t.includes('iqm/optimal_move_rate') && t; })()""",
                               "the runs table with its headline columns", timeout=30)
        text = page.eval("document.body.innerText")
        page.screenshot(tmp_path / "runs.png")
        assert "evaluate ttt seed 0" in text and "Detect Issues" not in text
        assert set(HEADLINE_KEYS) <= set(header) and not set(OTHER_KEYS) & set(header)
        assert "0.875" in text and "0.125" in text
        cells = page.eval("""[...document.querySelectorAll('.ag-header-row-column [col-id]')]
            .map(e => [e.getAttribute('col-id'), e.getBoundingClientRect().width])""")
        ids = [c for c, _ in cells]
        assert [c for c in ids if c.startswith("metrics.")] == ui.headline_columns(HEADLINE_KEYS)  # in that order
        assert ids.index("attributes.`Run Name`") < ids.index("metrics.`iqm/optimal_move_rate`")  # run names first
        assert {c: w for c, w in cells if c.startswith("metrics.")} == {
            f"metrics.`{k}`": ui.COLUMN_WIDTH for k in HEADLINE_KEYS}  # whole names, not MLflow's "iqm/ra…"
        assert "Ask questions about your experiments" not in text  # the Assistant stayed closed
        # A person's own choice wins over the defaults: switched to GenAI, the page stays GenAI after a reload.
        page.eval("localStorage.setItem('mlflow.workflowType_v1', JSON.stringify('genai'))")
        page.goto(url + "/")
        assert json.loads(page.eval("localStorage.getItem('mlflow.workflowType_v1')")) == "genai"
