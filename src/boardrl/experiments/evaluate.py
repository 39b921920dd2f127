"""Judge every seed's model of one experiment: the evaluate stage's work, callable from a library as well.

Per seed: the ladder (W/D/L per seat and combined, 95% Wilson intervals), the optimal-move rate judged by the
game's referee (for Connect 4 also per phase of the game: opening, middle, end; the verdicts come from the
``referee`` stage, experiments/referee.py), for tic-tac-toe the exact loss probability against ``perfect`` per
seat (the whole tree walked, evaluate/exact_loss.py), and for Connect 4 the UCI start-position protocols and, for
agents with a value, its accuracy on the UCI labels.  Across seeds: the interquartile mean and a bootstrap interval of
each headline number (evaluate/seeds.py).  Evaluation games and position sets come from ``evaluate.seed``, the
same for every seed and experiment, so differences between seeds are the models' own.  results/eval/<id>.json and
results/metrics/<id>.json are published together (experiments/publish.py): never the metrics of one evaluation
beside the results of another.

Imports are at module level except the UCI protocols', which only Connect 4 experiments use: the stage's code
fingerprint (experiments/inputs.py) counts this module's function-level imports only where they are used.
"""

from __future__ import annotations

import json
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from boardrl.agents import make_agent
from boardrl.atomic_io import atomic_write_json
from boardrl.cache import cache_dir
from boardrl.config import EvaluateParams, ExperimentSpec, evaluate_slice, runtime_processes
from boardrl.errors import BoardRLError
from boardrl.evaluate.exact_loss import GAME_ID as EXACT_GAME_ID
from boardrl.evaluate.exact_loss import SEAT_KEYS, ExactLossError, exact_loss
from boardrl.evaluate.match import play_match
from boardrl.evaluate.optimal_rate import optimal_move_rate
from boardrl.evaluate.phases import rates_by_phase
from boardrl.evaluate.schema import check_evaluation
from boardrl.evaluate.seeds import across_seeds
from boardrl.evaluate.stats import SEATS
from boardrl.paths import ExperimentPaths
from boardrl.experiments.publish import Publication, publish_all, recover, remove_stale_beside
from boardrl.experiments.referee import judged_path, optimal_set, phase_position_sets
from boardrl.games import make_game
from boardrl.learn import load_agent, pin_stage_threads
from boardrl.solvers.base import RememberingReferee
from boardrl.solvers.registry import make_referee
from boardrl.tracking.curve import sub_seed
from boardrl.tracking.figures import ladder_figure
from boardrl.tracking.mlflow_runs import log_artifact, log_figure, log_metric, log_metrics, metric_key, stage_run
from boardrl.tracking.provenance import collect, params_hash

UCI_TABLE = Path("data") / "processed" / "uci.parquet"
OUTCOMES = ("win", "draw", "loss")


def ladder(spec: ExperimentSpec, game, agent, processes: int = 1) -> dict[str, Any]:
    """Match results against every opponent of the experiment's ladder, in the listed order."""

    out = {}
    for i, opp in enumerate(spec.ladder):
        games = opp.games or spec.evaluate.games
        result = play_match(game, agent, make_agent(game, opp.agent), games, seats="alternate",
                            seed=sub_seed(spec.evaluate.seed, 2, i), processes=processes)
        d = result.to_dict()
        out[opp.key] = {**{seat: d[seat] for seat in SEATS}, "mean_length": d["mean_length"]}
        c = d["combined"]
        print(f"evaluate: vs {opp.key}: {games} games W {c['win']:.3f} D {c['draw']:.3f} L {c['loss']:.3f}",
              file=sys.stderr, flush=True)
    return out


def optimal_moves(evaluate: EvaluateParams, game, agent, root: Path | None = None) -> dict[str, Any] | None:
    """Optimal-move rate on a seeded set of random-play positions; None without a referee or positions.
    ``root``: the project whose ``referee`` stage output and cache hold the verdicts (None: boardrl.cache's
    default cache only)."""

    positions = optimal_set(evaluate, game.game_id)
    referee = _referee(game.game_id, root) if positions else None
    if referee is None:
        return None  # no positions asked for, or no referee for this game: the rate is null in the results
    rate = optimal_move_rate(agent, referee, positions, np.random.default_rng(sub_seed(evaluate.seed, 4)))
    referee.save()
    print(f"evaluate: optimal-move rate {rate.rate:.4f} on {rate.n} positions", file=sys.stderr, flush=True)
    return rate.to_dict()


def _verdict_dir(root: Path | None) -> Path:
    """``<cache>/referee``: the verdicts a referee found itself (rebuildable, git-ignored)."""
    return (cache_dir(root) / "referee").resolve()


@cache
def _referee(game_id: str, root: Path | None) -> RememberingReferee | None:
    """The game's referee, one per process: it knows the ``referee`` stage's verdicts
    (``build/referee/<game>.json``) and remembers the ones it finds itself in ``<cache>/referee/<game>.json``
    (every seed, the network alone and every experiment of the game are judged on the same positions); None
    where the game has none."""
    known = judged_path(root, game_id) if root is not None else None
    try:
        return RememberingReferee(make_referee(make_game(game_id)), _verdict_dir(root) / f"{game_id}.json", known)
    except BoardRLError:
        return None


def optimal_by_phase(evaluate: EvaluateParams, game, agent, root: Path | None = None) -> dict[str, Any] | None:
    """Optimal-move rate per phase of the game (Connect 4: opening, middle, end); None where not defined."""
    sets = phase_position_sets(evaluate, game.game_id)
    if not sets:
        return None
    referee = _referee(game.game_id, root)
    out = rates_by_phase(agent, referee, sets, sub_seed(evaluate.seed, 6))
    referee.save()
    print("evaluate: optimal-move rate by phase " + ", ".join(
        f"{k} {v['rate']:.4f}" if v["rate"] is not None else f"{k} not judged" for k, v in out.items()),
          file=sys.stderr, flush=True)
    return out


def exact_vs_perfect(game, agent) -> dict[str, Any] | None:
    """Exact loss probability against ``perfect`` per seat and the value-losing moves (tic-tac-toe; None for other
    games).  An agent the walk cannot follow (its move depends on its random stream) gets nulls and the reason."""
    if game.game_id != EXACT_GAME_ID:
        return None
    t0 = time.perf_counter()
    try:
        out = exact_loss(agent).to_dict()
    except ExactLossError as exc:
        print(f"evaluate: exact loss vs perfect not measured: {exc}", file=sys.stderr, flush=True)
        return {"opponent": "perfect", **{seat: None for seat in SEAT_KEYS}, "value_losing_moves": None,
                "flawless": None, "not_measured": str(exc)}
    out["seconds"] = round(time.perf_counter() - t0, 3)
    print(f"evaluate: exact loss vs perfect {out['as_first']['loss']:.5f} as first, {out['as_second']['loss']:.5f} "
          f"as second; {out['value_losing_moves']} value-losing move(s) ({out['seconds']:.2f} s)",
          file=sys.stderr, flush=True)
    return out


def uci(spec: ExperimentSpec, root: Path, game, agent, processes: int = 1) -> dict[str, Any] | None:
    """The UCI protocols where the experiment's settings ask for them (Connect 4 only)."""
    cfg = spec.uci
    if cfg is None:
        return None
    from boardrl.data import uci_table
    from boardrl.evaluate import uci_protocols

    positions = uci_table.positions_by_label(uci_table.read_parquet(Path(root) / UCI_TABLE))
    random = make_agent(game, "random")
    seed = spec.evaluate.seed
    out: dict[str, Any] = {"seed000": uci_protocols.seed000_protocol(
        agent, random, positions, cfg.seed000_games, sub_seed(seed, 5), processes)}
    out["full"] = (uci_protocols.full_protocol(agent, random, positions, sub_seed(seed, 6), cfg.full_positions,
                                               processes) if cfg.full else None)
    return out


def value_accuracy(spec: ExperimentSpec, root: Path, game, agent) -> dict[str, Any] | None:
    """The agent's value read as win/draw/loss on every UCI label (issue 9); None where not measured: the game
    has no UCI settings, they turn it off, or the agent offers no value (``value_batch``)."""
    cfg = spec.uci
    if cfg is None or not cfg.value_accuracy:
        return None
    from boardrl.evaluate import value_accuracy as va

    if not va.has_value(agent):
        return None
    from boardrl.data import uci_table

    result = va.value_accuracy(agent, uci_table.read_parquet(Path(root) / UCI_TABLE)).to_dict()
    acc = result["accuracy"]
    print(f"evaluate: value accuracy {acc['rate']:.4f} on {acc['n']:,} UCI labels "
          f"({result['seconds']:.1f} s)", file=sys.stderr, flush=True)
    return result


def evaluate_agent(spec: ExperimentSpec, root: Path, game, agent, processes: int = 1) -> dict[str, Any]:
    """Everything measured about one trained agent (one seed); ``value_accuracy`` only where it was measured."""
    results: dict[str, Any] = {"opponents": ladder(spec, game, agent, processes)}
    detail = optimal_moves(spec.evaluate, game, agent, root)
    results["optimal_move_rate"] = None if detail is None else detail["rate"]
    results["optimal_move"] = detail
    by_phase = optimal_by_phase(spec.evaluate, game, agent, root)
    if by_phase is not None:
        results["optimal_move_by_phase"] = by_phase
    exact = exact_vs_perfect(game, agent)
    if exact is not None:
        results["exact_vs_perfect"] = exact
    results["uci"] = uci(spec, root, game, agent, processes)
    values = value_accuracy(spec, root, game, agent)
    if values is not None:
        results["value_accuracy"] = values
    if hasattr(agent, "network_agent"):  # a searching agent (AlphaZero): its network alone, without search
        alone = optimal_moves(spec.evaluate, game, agent.network_agent(), root)
        results["network_alone"] = {"optimal_move_rate": None if alone is None else alone["rate"],
                                    "optimal_move": alone}
        if exact is not None:
            results["network_alone"]["exact_vs_perfect"] = exact_vs_perfect(game, agent.network_agent())
        if by_phase is not None:
            results["network_alone"]["optimal_move_by_phase"] = optimal_by_phase(spec.evaluate, game,
                                                                                 agent.network_agent(), root)
    return results


def seed_metrics(results: dict[str, Any]) -> dict[str, float | None]:
    """Flat MLflow metrics of one seed's evaluation."""
    m: dict[str, float | None] = {}
    for opp, block in results["opponents"].items():
        for seat in SEATS:
            for out in OUTCOMES:
                m[metric_key("eval", opp, seat, out)] = block[seat][out]
    m["optimal_move_rate"] = results["optimal_move_rate"]
    if results.get("network_alone"):
        m[metric_key("network_alone", "optimal_move_rate")] = results["network_alone"]["optimal_move_rate"]
    for who, block in (("phase", results), ("network_alone_phase", results.get("network_alone") or {})):
        for phase, rate in (block.get("optimal_move_by_phase") or {}).items():
            m[metric_key(who, phase, "optimal_move_rate")] = rate["rate"]
    alone = results.get("network_alone") or {}
    for who, block in (("exact_vs_perfect", results.get("exact_vs_perfect")),
                       ("network_alone/exact_vs_perfect", alone.get("exact_vs_perfect"))):
        if block and block.get("flawless") is not None:
            for seat in SEAT_KEYS:
                m[metric_key(*who.split("/"), seat, "loss")] = block[seat]["loss"]
            m[metric_key(*who.split("/"), "value_losing_moves")] = block["value_losing_moves"]
    for label, s in ((results["uci"] or {}).get("seed000") or {}).items():
        m[metric_key("uci", "seed000", label, "win")] = s["win"]
    for label, block in ((results["uci"] or {}).get("full") or {}).items():
        for seat in SEATS:
            m[metric_key("uci", "full", label, seat, "win")] = block[seat]["win"]
    values = results.get("value_accuracy")
    if values is not None:
        m[metric_key("uci", "value_accuracy")] = values["accuracy"]["rate"]
        m[metric_key("uci", "value_accuracy", "balanced")] = values["balanced_accuracy"]
        for label, block in values["per_label"].items():
            m[metric_key("uci", "value_accuracy", label)] = block["rate"]
    return m


def spread(per_seed: dict[int, dict[str, Any]], seed: int) -> dict[str, Any]:
    """IQM and bootstrap interval across seeds of the combined W/D/L per opponent and the optimal-move rate."""
    seeds = sorted(per_seed)
    first = per_seed[seeds[0]]
    opponents = {
        opp: {out: across_seeds([per_seed[s]["opponents"][opp]["combined"][out] for s in seeds], seed)
              for out in OUTCOMES}
        for opp in first["opponents"]
    }
    rate = across_seeds([per_seed[s]["optimal_move_rate"] for s in seeds], seed)
    out = {"seeds": seeds, "opponents": opponents, "optimal_move_rate": rate}
    if any("value_accuracy" in per_seed[s] for s in seeds):  # None unless every seed has one
        out["value_accuracy"] = across_seeds(
            [(per_seed[s].get("value_accuracy") or {}).get("accuracy", {}).get("rate") for s in seeds], seed)
    exact = exact_spread([per_seed[s].get("exact_vs_perfect") for s in seeds], seed)
    if exact is not None:
        out["exact_vs_perfect"] = exact
    return out


def exact_spread(blocks: list[dict[str, Any] | None], seed: int) -> dict[str, Any] | None:
    """Across seeds of the exact loss against ``perfect``: how many seeds are flawless (loss probability 0 in both
    seats) of how many measured, and the IQM per seat (None unless every seed was measured); None if no seed was."""
    if all(b is None for b in blocks):
        return None
    measured = [b for b in blocks if b is not None and b.get("flawless") is not None]
    return {"flawless_seeds": sum(bool(b["flawless"]) for b in measured), "measured_seeds": len(measured),
            **{seat: across_seeds([((b or {}).get(seat) or {}).get("loss") for b in blocks], seed)
               for seat in SEAT_KEYS}}


def headline(exp_id: str, results: dict[str, Any]) -> dict[str, Any]:
    """The few numbers `dvc metrics show` lists, named for people: IQM over seeds of combined win/loss rates.

    Keys have no spaces (``vs:<opponent>``): DVC's tables and filters take them as they are."""
    agg = results["across_seeds"]
    out: dict[str, Any] = {"budget": results["budget"], "seeds": len(agg["seeds"])}
    if agg["optimal_move_rate"] is not None:
        out["optimal_move_rate"] = round(agg["optimal_move_rate"]["iqm"], 4)
    if agg.get("value_accuracy") is not None:
        out["value_accuracy"] = round(agg["value_accuracy"]["iqm"], 4)
    exact = agg.get("exact_vs_perfect")
    if exact is not None:
        out["exact_vs_perfect"] = {"flawless_seeds": exact["flawless_seeds"]}
        if exact["measured_seeds"] != len(agg["seeds"]):
            out["exact_vs_perfect"]["measured_seeds"] = exact["measured_seeds"]
        for seat in SEAT_KEYS:
            if exact[seat] is not None:
                out["exact_vs_perfect"][f"loss_{seat}"] = round(exact[seat]["iqm"], 5)
    for opp, block in agg["opponents"].items():
        if block["win"] is not None and block["loss"] is not None:
            out[f"vs:{opp}"] = {"win": round(block["win"]["iqm"], 4), "loss": round(block["loss"]["iqm"], 4)}
    return out


def _recover(paths: ExperimentPaths, exp_id: str) -> None:
    """Before anything else: finish an output switch a killed run left halfway, then clear its temporaries."""
    if recover(paths.stage_journal("evaluate")):
        print(f"evaluate: {exp_id}: completed the publication of its outputs that an interrupted run left halfway",
              file=sys.stderr, flush=True)
    for target in (paths.evaluation, paths.metrics, paths.stage_journal("evaluate")):
        remove_stale_beside(target)


def run_evaluate(spec: ExperimentSpec, root: Path) -> dict[str, Any]:
    """The evaluate stage of an experiment under project ``root``: every seed's model, outputs, MLflow runs."""
    exp_id, unit, budget = spec.id, spec.unit, spec.budget
    root = Path(root)
    paths = ExperimentPaths(root, exp_id)
    _recover(paths, exp_id)
    game = make_game(spec.game)
    sl = evaluate_slice(spec)
    phash = params_hash(sl)
    processes = runtime_processes()
    pin_stage_threads(spec.learner, spec.learner_params)
    results: dict[str, Any] = {"experiment": exp_id, "game": spec.game, "learner": spec.learner,
                               "profile": spec.profile, "unit": unit, "budget": budget, "seeds": {}}
    per_seed: dict[int, dict[str, Any]] = {}
    labels = spec.labels()
    with stage_run(root, stage="evaluate", mlflow_experiment=spec.game, run_name=f"{exp_id} (evaluate)", params=sl,
                   params_hash=phash, seeds=",".join(map(str, spec.seeds)), **labels):
        for seed in spec.seeds:
            t0 = time.perf_counter()
            with stage_run(root, stage="evaluate", mlflow_experiment=spec.game,
                           run_name=f"{exp_id} seed {seed} (evaluate)", params=sl, params_hash=phash, nested=True,
                           seed=seed, **labels) as active:
                agent = load_agent(game, spec.learner, paths.model(seed))
                res = evaluate_agent(spec, root, game, agent, processes)
                log_metrics(seed_metrics(res), step=budget)
                _log_ladder_figure(res, f"{exp_id} seed {seed}: W/D/L per seat")
                res["provenance"] = collect(root, **labels, seed=seed, unit=unit, budget=budget, params_slice=sl,
                                            seconds=time.perf_counter() - t0,
                                            mlflow_run_id=active.info.run_id).to_dict()
            per_seed[seed] = res
            results["seeds"][str(seed)] = res
        results["across_seeds"] = spread(per_seed, spec.evaluate.seed)
        for key, value in _flat_spread(results["across_seeds"]).items():
            log_metric(metric_key(*key.split("/")), value, step=budget)
        _check_results(paths, results)
        publish_all(paths.stage_journal("evaluate"), lambda pub: _stage_results(pub, paths, exp_id, results),
                    f"evaluate: {exp_id}")
        log_artifact(paths.evaluation)
    return results


def _check_results(paths: ExperimentPaths, results: dict[str, Any]) -> None:
    """Refuse to publish results the report could not read (``evaluate/schema.py``, the file's model)."""
    try:
        check_evaluation(json.loads(json.dumps(results)))  # as the file will read back: seed keys as text
    except ValueError as exc:
        raise BoardRLError(f"evaluate: {paths.evaluation}: the results do not fit their model: {exc}") from None


def _stage_results(pub: Publication, paths: ExperimentPaths, exp_id: str, results: dict[str, Any]) -> None:
    """Both outputs beside their targets: the full results and the headline metrics drawn from them (published
    together, so `dvc metrics show` never lists numbers of another evaluation than results/eval holds)."""
    atomic_write_json(pub.stage_file(paths.evaluation), results)
    atomic_write_json(pub.stage_file(paths.metrics), headline(exp_id, results))


def _flat_spread(agg: dict[str, Any]) -> dict[str, float]:
    out = {}
    for opp, block in agg["opponents"].items():
        for outcome, s in block.items():
            if s is not None:
                out[f"iqm/{opp}/combined/{outcome}"] = s["iqm"]
    if agg["optimal_move_rate"] is not None:
        out["iqm/optimal_move_rate"] = agg["optimal_move_rate"]["iqm"]
    if agg.get("value_accuracy") is not None:
        out["iqm/uci/value_accuracy"] = agg["value_accuracy"]["iqm"]
    exact = agg.get("exact_vs_perfect")
    if exact is not None:
        out["exact_vs_perfect/flawless_seeds"] = exact["flawless_seeds"]
        for seat in SEAT_KEYS:
            if exact[seat] is not None:
                out[f"iqm/exact_vs_perfect/{seat}/loss"] = exact[seat]["iqm"]
    return out


def _log_ladder_figure(results: dict[str, Any], title: str) -> None:
    log_figure(ladder_figure(results["opponents"], title), "ladder.png")
