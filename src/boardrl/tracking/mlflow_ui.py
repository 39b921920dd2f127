"""The MLflow UI as this project's users expect it (``make ui``): experiments open in their runs table with the
headline metrics as columns, the Assistant stays closed, and the server starts in seconds.

What MLflow 3.17 does, and why this module exists (issue 38):

- The UI has two "workflows", GenAI and Model training.  Which one a page shows is decided in the browser only: the
  ``workflowType`` URL parameter, else the ``mlflow.workflowType_v1`` entry of the page's ``localStorage``, else
  GenAI.  The experiment tag ``mlflow.experimentKind`` is not read for it (workflow-based navigation is always on
  in this version's bundle; upstream's fix that would reconcile the two, mlflow/mlflow#24493, was closed
  unmerged).  So a fresh browser opens an experiment on its GenAI Traces page, and the URL parameter is lost as
  soon as one clicks an experiment in the list.  No server flag or environment variable changes it.
- The Assistant's panel opens by itself on the first page load from ``localhost``/``127.0.0.1``, then remembers
  (``mlflow.assistant.fab.autoOpenedOnFirstLoad_v1``, ``mlflow.assistant.panelOpen_v1``); no setting turns it off.
- The runs table shows three attribute columns until the user picks others; its state (columns, their widths)
  lives in ``localStorage`` per experiment (``MLflowLocalStorage-1.1-ExperimentPage-["<id>"]-ReactComponentState``,
  merged over MLflow's defaults; widths apply only to the columns ``columnOrder`` names).  A saved view (an
  experiment tag) only applies when opened by its link.
- ``mlflow server`` starts a Huey job runner (``MLFLOW_SERVER_ENABLE_JOB_EXECUTION``, on by default: GenAI
  judges, trace rollups) and 4 uvicorn workers; on 2 busy cores that took about 60 s.  Neither is used here.

So the server runs MLflow's own app behind ``DefaultViews``, which adds one small script to the UI's page: it
writes those ``localStorage`` entries where the browser has none yet (the Model training workflow, the Assistant
counted as already shown, each experiment's runs table with its headline metrics), so a user's own later choices
(the sidebar switch, the Columns menu) win.  Everything else is MLflow's, unchanged.  The server is MLflow's CLI
(``mlflow server``, every check and default of it) with the job runner off and one worker; the only thing
replaced is the ASGI app uvicorn loads (``mlflow.server._build_uvicorn_command`` is wrapped: MLflow's supported way,
an ``mlflow.app`` entry point, would need the package reinstalled).  Keys and names are this MLflow version's; on
another one a check says what no longer matches (``check_mlflow``) and the UI still starts.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Mapping

_logger = logging.getLogger(__name__)

#: ``localStorage`` entries of MLflow 3.17's UI (``mlflow/server/js/build``).
WORKFLOW_KEY = "mlflow.workflowType_v1"
MODEL_TRAINING = "machine_learning"
ASSISTANT_SHOWN_KEY = "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1"
RUNS_TABLE_KEY = 'MLflowLocalStorage-1.1-ExperimentPage-["{id}"]-ReactComponentState'
#: Attribute columns kept beside the metrics: of MLflow's defaults (Source, Models, Dataset) the one that says
#: something here (train runs log models; the project logs no datasets, and Source is the stage's script).
ATTRIBUTE_COLUMNS = ("attributes.`Models`",)
#: Pixels of a headline column: wide enough for ``iqm/<opponent>/combined/loss`` (MLflow's 100 cuts it to "iqm/ra…").
COLUMN_WIDTH = 190

#: The metrics a reader compares runs by: those of ``dvc metrics show`` (``experiments/evaluate.py`` headline),
#: as the evaluate stage's parent run logs them (the IQM over seeds; seeds are the nested runs under it).
HEADLINE = (re.compile(r"iqm/optimal_move_rate"), re.compile(r"iqm/uci/value_accuracy"),
            re.compile(r"iqm/[^/]+/combined/(win|loss)"))
#: How many of an experiment's latest evaluate runs are read for their metric names.
RUNS_READ = 50

MLFLOW_APP = "mlflow.server.fastapi_app:app"
THIS_APP = "boardrl.tracking.mlflow_ui:app"  # not __name__: it is "__main__" under python -m


def headline_columns(metric_keys: Iterable[str]) -> list[str]:
    """The runs-table columns of the headline metrics among ``metric_keys``, in ``HEADLINE`` order."""
    keys = sorted(set(metric_keys))
    ordered = [k for pattern in HEADLINE for k in keys if pattern.fullmatch(k)]
    return [f"metrics.`{k}`" for k in ordered]


def experiment_columns(tracking_uri: str) -> dict[str, list[str]]:
    """Experiment id -> its headline columns (experiments without evaluate runs are left out)."""
    from mlflow import MlflowClient
    from mlflow.entities import ViewType

    client = MlflowClient(tracking_uri=tracking_uri)
    out = {}
    for exp in client.search_experiments(view_type=ViewType.ACTIVE_ONLY):
        runs = client.search_runs([exp.experiment_id], "tags.stage = 'evaluate'", max_results=RUNS_READ,
                                  order_by=["attributes.start_time DESC"])
        columns = headline_columns(k for r in runs for k in r.data.metrics)
        if columns:
            out[exp.experiment_id] = columns
    return out


def browser_defaults(columns: Mapping[str, list[str]]) -> dict[str, str]:
    """The ``localStorage`` entries (values as the UI stores them: JSON text) the page starts from."""
    out = {WORKFLOW_KEY: json.dumps(MODEL_TRAINING), ASSISTANT_SHOWN_KEY: "true"}
    for exp_id, cols in columns.items():
        # columnOrder lists the metrics only: MLflow keeps its run name and date first and the rest after them
        out[RUNS_TABLE_KEY.format(id=exp_id)] = json.dumps({"selectedColumns": [*cols, *ATTRIBUTE_COLUMNS],
                                                            "columnOrder": cols,
                                                            "columnWidths": {c: COLUMN_WIDTH for c in cols}})
    return out


def boot_script(defaults: Mapping[str, str]) -> str:
    """A ``<script>`` that sets each entry the browser does not have yet (a user's own choice is kept)."""
    data = json.dumps(dict(defaults)).replace("</", "<\\/")
    return ("<script>(function(){var d=" + data + ";try{var s=window.localStorage;for(var k in d)"
            "{if(s.getItem(k)===null){s.setItem(k,d[k]);}}}catch(e){}})();</script>")


def inject(page: bytes, script: str) -> bytes:
    """``page`` with ``script`` first in its ``<head>`` (before MLflow's bundle runs); unchanged without one."""
    match = re.search(rb"<head[^>]*>", page, flags=re.IGNORECASE)
    if match is None:
        _logger.warning("the MLflow UI page has no <head>: its default views are not set")
        return page
    return page[: match.end()] + script.encode() + page[match.end():]


Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

#: Request headers that would let MLflow answer 304 with the browser's cached page (whose defaults may be old).
_CONDITIONAL = {b"if-none-match", b"if-modified-since"}
#: Response headers that describe MLflow's file, not the page sent.
_FILE_HEADERS = {b"content-length", b"etag", b"last-modified", b"cache-control"}


class DefaultViews:
    """ASGI middleware: MLflow's app, with ``boot_script`` added to the UI's page (``GET <prefix>/``)."""

    def __init__(self, app: Callable[..., Awaitable[None]], prefix: str,
                 columns: Callable[[], Mapping[str, list[str]]]) -> None:
        self.app, self.page_path, self.columns = app, prefix.rstrip("/") + "/", columns

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != self.page_path:
            await self.app(scope, receive, send)
            return
        scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() not in _CONDITIONAL]}
        start: dict[str, Any] = {}
        body: list[bytes] = []

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                body.append(message.get("body", b""))
                if not message.get("more_body"):
                    await self._send_page(send, start, b"".join(body))
            else:
                await send(message)

        await self.app(scope, receive, capture)

    async def _send_page(self, send: Send, start: dict[str, Any], page: bytes) -> None:
        headers = {k.lower(): v for k, v in start.get("headers", [])}
        if start.get("status") == 200 and headers.get(b"content-type", b"").startswith(b"text/html") \
                and b"content-encoding" not in headers:
            import anyio

            page = inject(page, boot_script(browser_defaults(await anyio.to_thread.run_sync(self._columns))))
            kept = [(k, v) for k, v in start["headers"] if k.lower() not in _FILE_HEADERS]
            start = {**start, "headers": [*kept, (b"content-length", str(len(page)).encode()),
                                          (b"cache-control", b"no-store")]}
        await send(start)
        await send({"type": "http.response.body", "body": page})

    def _columns(self) -> Mapping[str, list[str]]:
        """Headline columns now (experiments appear while the UI runs); none when the store cannot be read."""
        try:
            return self.columns()
        except Exception as exc:  # noqa: BLE001 - the page must load; only its column defaults are lost
            _logger.warning("headline columns not set: %s", (str(exc).splitlines() or [type(exc).__name__])[0])
            return {}


def make_app() -> DefaultViews:
    """MLflow's ASGI app (as ``mlflow server`` configured it through the environment) behind ``DefaultViews``."""
    from mlflow.server import BACKEND_STORE_URI_ENV_VAR
    from mlflow.server.fastapi_app import app as mlflow_app
    from mlflow.server.handlers import STATIC_PREFIX_ENV_VAR

    uri = os.environ[BACKEND_STORE_URI_ENV_VAR]
    return DefaultViews(mlflow_app, os.environ.get(STATIC_PREFIX_ENV_VAR, ""), lambda: experiment_columns(uri))


def __getattr__(name: str) -> Any:
    """``app``, built when uvicorn asks for it: importing the helpers above must not start MLflow's server app."""
    if name == "app":
        globals()["app"] = make_app()
        return globals()["app"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_mlflow() -> list[str]:
    """What of the above no longer matches the installed MLflow (empty when all does)."""
    import mlflow.server

    problems = []
    if not callable(getattr(mlflow.server, "_build_uvicorn_command", None)):
        problems.append("mlflow.server._build_uvicorn_command is gone: the UI runs without its default views")
    bundle = Path(mlflow.server.__file__).parent / "js" / "build" / "static" / "js"
    text = "".join(p.read_text(errors="ignore") for p in bundle.glob("main.*.js"))
    for key in ("mlflow.workflowType", "mlflow.assistant.fab.autoOpenedOnFirstLoad", "ReactComponentState"):
        if key not in text:
            problems.append(f"MLflow's UI no longer stores {key!r}: the UI may open in another view")
    return problems


def _use_this_app() -> bool:
    """Make ``mlflow server`` start uvicorn on ``THIS_APP`` instead of MLflow's app; False where it cannot."""
    import mlflow.server

    build = getattr(mlflow.server, "_build_uvicorn_command", None)
    if build is None:
        return False

    def build_command(*args: Any, **kwargs: Any) -> list[str]:
        cmd = build(*args, **kwargs)
        return [THIS_APP if part == MLFLOW_APP else part for part in cmd]

    mlflow.server._build_uvicorn_command = build_command
    return True


def server_args(backend_store_uri: str, host: str, port: int, workers: int) -> list[str]:
    return ["server", "--backend-store-uri", backend_store_uri, "--host", host, "--port", str(port),
            "--workers", str(workers)]


def serve(backend_store_uri: str, host: str = "127.0.0.1", port: int = 5000, workers: int = 1) -> None:
    """Run the UI until interrupted: ``mlflow server`` without its job runner, on ``THIS_APP``."""
    os.environ.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")  # GenAI jobs: ~30 s of start, unused
    for problem in check_mlflow():
        print(f"boardrl ui: warning: {problem}", file=sys.stderr, flush=True)
    _use_this_app()
    print(f"MLflow UI: http://{host}:{port} (experiments open in their runs table; Ctrl-C stops it)", flush=True)
    from mlflow.cli import cli

    cli.main(server_args(backend_store_uri, host, port, workers), prog_name="mlflow")


def main(argv: list[str] | None = None) -> None:
    """``python -m boardrl.tracking.mlflow_ui``: the project's MLflow UI (``make ui``)."""
    from boardrl.tracking.mlflow_runs import tracking_uri

    parser = argparse.ArgumentParser(prog="python -m boardrl.tracking.mlflow_ui", description=main.__doc__)
    parser.add_argument("--backend-store-uri", default=None, help="default: the project's mlflow.db (this folder)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers (one serves a person)")
    args = parser.parse_args(argv)
    serve(args.backend_store_uri or tracking_uri(Path.cwd()), args.host, args.port, args.workers)


if __name__ == "__main__":
    main()
