"""The work of DVC stage ``referee``: the exact verdict on every position the evaluate stages judge, found once.

Every evaluate stage of a game judges the same seeded position sets (the optimal-move set and, for Connect 4,
one set per phase of the game; see ``evaluate.optimal_rate`` and ``evaluate.phases``).  Before this stage the
first Connect 4 evaluate stage to run searched all of them (about 30 s on this machine) and every later one read
them back from the referee cache, so a stage's time depended on the order DVC chose, and the neural experiments'
time included judging the positions the AlphaZero agent is judged on too.  Here the verdicts are found on every
core, before any evaluate stage, and kept in ``build/referee/<game>.json`` (the ``RememberingReferee`` file
format, tied to the referee's code), which each ``evaluate@<id>`` depends on and reads.

Verdicts are exact, so the stage changes no result: an evaluate stage run without the file (a library call, a
benchmark) searches the positions it needs, as before.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any, Sequence

from tqdm import tqdm

from boardrl.config import EvaluateParams, Params
from boardrl.errors import BoardRLError
from boardrl.evaluate.optimal_rate import position_set
from boardrl.evaluate.phases import PHASE_SHARE, PHASES, phase_positions
from boardrl.games import make_game
from boardrl.solvers.base import Referee, RememberingReferee, Verdict, write_verdicts
from boardrl.solvers.registry import make_referee
from boardrl.tracking.curve import sub_seed

#: Positions judged per task; a pool is started only when the first chunk shows the rest would take longer
#: than ``POOL_AFTER_S`` on one core (a table referee answers thousands a second; starting workers costs seconds).
CHUNK = 64
POOL_AFTER_S = 10.0


def judged_dir(root: Path) -> Path:
    """``<root>/build/referee``: the stage's output folder."""
    return Path(root) / "build" / "referee"


def judged_path(root: Path, game_id: str) -> Path:
    """``<root>/build/referee/<game>.json``: the stage's verdicts for one game."""
    return judged_dir(root) / f"{game_id}.json"


@cache
def optimal_positions(game_id: str, n: int, seed: int, plies: tuple[int, int] | None) -> list:
    """The optimal-move rate's position set (``evaluate.optimal_positions`` of them), once per process."""
    return position_set(make_game(game_id), n, seed=seed, plies=plies)


@cache
def phase_sets(game_id: str, total: int, seed: int) -> dict[str, list]:
    """The position set of each phase of the game, once per process (empty where the game has no phases)."""
    return phase_positions(make_game(game_id), total, seed)


def optimal_set(evaluate: EvaluateParams, game_id: str) -> list:
    """The positions of the optimal-move rate of ``game_id`` (none when ``evaluate.optimal_positions`` is 0)."""
    n = evaluate.optimal_positions
    plies = evaluate.per_game[game_id].optimal_plies
    return optimal_positions(game_id, n, sub_seed(evaluate.seed, 3), plies) if n else []


def phase_position_sets(evaluate: EvaluateParams, game_id: str) -> dict[str, list]:
    """The position set of each phase of ``game_id`` (empty for a game without phases or too few positions)."""
    n = evaluate.optimal_positions
    if game_id not in PHASES or n < PHASE_SHARE:
        return {}
    return phase_sets(game_id, n, sub_seed(evaluate.seed, 5))


def evaluation_positions(evaluate: EvaluateParams, game_id: str) -> dict[str, list]:
    """Every position set the evaluate stages of ``game_id`` judge, by name ("optimal" and each phase)."""
    optimal = optimal_set(evaluate, game_id)
    return {"optimal": optimal, **phase_position_sets(evaluate, game_id)} if optimal else {}


@cache
def _worker_referee(game_id: str) -> Referee:
    """The referee of a pool worker, made once per process (a Connect 4 referee keeps its transposition table)."""
    return make_referee(make_game(game_id))


def _judge_chunk(task: tuple[str, list[Any]]) -> list[Verdict]:
    """Pool task: the verdicts of one chunk of positions."""
    game_id, states = task
    referee = _worker_referee(game_id)
    return [referee.solve(state) for state in states]


def judge(referee: RememberingReferee, positions: Sequence[Any], processes: int = 1,
          progress: bool = True) -> None:
    """Add the verdict of every position to ``referee``: one core at first, then ``processes`` workers when the
    first chunk says the rest needs more than ``POOL_AFTER_S`` on one core."""
    states = {tuple(p): p for p in positions if tuple(p) not in referee.verdicts}  # distinct, in order
    todo = list(states.values())
    with tqdm(total=len(todo), desc=f"referee {referee.game.game_id}", unit="pos", disable=not progress) as bar:
        t0 = time.perf_counter()
        _judge_here(referee, todo[:CHUNK], bar)
        rest = todo[CHUNK:]
        per = (time.perf_counter() - t0) / max(1, min(CHUNK, len(todo)))
        if processes > 1 and per * len(rest) > POOL_AFTER_S:
            _judge_in_pool(referee, rest, processes, bar)
        else:
            _judge_here(referee, rest, bar)


def _judge_here(referee: RememberingReferee, states: list[Any], bar: tqdm) -> None:
    for state in states:
        referee.solve(state)
        bar.update()


def _judge_in_pool(referee: RememberingReferee, states: list[Any], processes: int, bar: tqdm) -> None:
    """Judge on ``processes`` spawned workers, chunk by chunk in order; the verdicts count as found here."""
    chunks = [states[i:i + CHUNK] for i in range(0, len(states), CHUNK)]
    with mp.get_context("spawn").Pool(processes) as pool:
        tasks = [(referee.game.game_id, chunk) for chunk in chunks]
        for chunk, verdicts in zip(chunks, pool.imap(_judge_chunk, tasks)):
            referee.add(chunk, verdicts)
            bar.update(len(chunk))


def stage_games(params: Params) -> list[str]:
    """The games some experiment plays, sorted: each gets a file (an empty one where no referee exists)."""
    return sorted({e.game for e in params.experiments.values()})


def run_referee(params: Params, root: Path, processes: int = 1, progress: bool = True) -> dict[str, Any]:
    """Judge every evaluation position of every game played by an experiment; write ``build/referee/*.json``
    (stale files of games no longer played go).  Returns {game: {"positions", "seconds"}}."""
    summary: dict[str, Any] = {}
    written = set()
    for game_id in stage_games(params):
        t0 = time.perf_counter()
        path = judged_path(root, game_id)
        written.add(path)
        try:
            referee = RememberingReferee(make_referee(make_game(game_id)))
        except BoardRLError:
            referee = None  # no referee for this game (Conniption)
        positions = [p for s in evaluation_positions(params.evaluate, game_id).values() for p in s] if referee else []
        if not positions:
            write_verdicts(path, game_id, None, {})  # read back as no verdicts
            summary[game_id] = {"positions": 0, "seconds": 0.0}
            continue
        judge(referee, positions, processes, progress)
        referee.write(path)
        summary[game_id] = {"positions": len(referee.verdicts), "seconds": time.perf_counter() - t0}
        print(f"referee: {game_id}: {len(referee.verdicts):,} positions in {summary[game_id]['seconds']:.1f} s",
              file=sys.stderr, flush=True)
    for stale in set(judged_dir(root).glob("*.json")) - written:
        stale.unlink()
    return summary
