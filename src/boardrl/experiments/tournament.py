"""The work of DVC stage ``tournament@<id>``: play params ``tournaments.<id>`` and file it with its provenance.

Writes ``results/tournaments/<id>.json``: the params, every ordered pairing (``evaluate.tournament``), seat
totals per agent, and provenance (profile, seconds, git commit, MLflow run).  The MLflow run (experiment = the
game, stage tag ``tournament``) logs the params, one metric per pairing (P1 win rate) and the JSON file.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from boardrl.atomic_io import atomic_write_json
from boardrl.config import ConfigError, Params, runtime_processes, tournament_slice
from boardrl.evaluate.tournament import round_robin, seat_totals
from boardrl.tracking.provenance import git_commit, params_hash


def tournament_path(root: Path, tid: str) -> Path:
    return Path(root) / "results" / "tournaments" / f"{tid}.json"


def run_tournament(params: Params, tid: str, root: Path, *, progress: bool = True) -> dict[str, Any]:
    """Play tournament ``tid``, write its JSON file and return what was written."""
    from boardrl.tracking.mlflow_runs import log_artifact, log_metrics, stage_run

    if tid not in params.tournaments:
        raise ConfigError("tournaments", f"no tournament {tid!r}; configured: {', '.join(params.tournaments)}")
    t = params.tournaments[tid]
    sl = tournament_slice(params, tid)
    t0 = time.perf_counter()
    with stage_run(root, stage="tournament", mlflow_experiment=t.game, run_name=f"{tid} (tournament)",
                   params=sl, params_hash=params_hash(sl), tournament=tid, game=t.game,
                   profile=params.profile) as run:
        pairings = round_robin(t.game, t.agents, t.games, seed=t.seed, processes=runtime_processes(),
                               progress=progress)
        totals = {a: {seat: dict(zip(("wins", "games"), seat_totals(pairings, a, seat=seat)))
                      for seat in ("first", "second")} for a in t.agents}
        out = {"tournament": tid, "game": t.game, "agents": list(t.agents), "games": t.games, "seed": t.seed,
               "pairings": [p.to_dict() for p in pairings], "totals": totals,
               "provenance": {"profile": params.profile, "seconds": time.perf_counter() - t0,
                              "git_commit": git_commit(root), "mlflow_run_id": run.info.run_id}}
        path = tournament_path(root, tid)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, out)
        log_metrics({f"p1_win.{p.first}.{p.second}": p.first_wins / p.games for p in pairings})
        log_artifact(path)
    return out
