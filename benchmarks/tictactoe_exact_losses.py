"""Exact loss probability of trained tic-tac-toe agents against ``perfect``, per seat, over training seeds.

The evaluate stage samples 1,000 games a seat against ``perfect`` (which picks uniformly among the optimal
moves); a greedy agent that errs in one rarely reached line shows there as a few losses or none.  Here the
whole tree is walked instead: the agent's one move where it is to play, every optimal reply of ``perfect``
weighted by its probability, so the loss probability is exact and a seed is either flawless or not.

    .venv/bin/python benchmarks/tictactoe_exact_losses.py tictactoe_td_lambda --seeds 0,1,2,3,4
    .venv/bin/python benchmarks/tictactoe_exact_losses.py tictactoe_td_lambda --set '{"lr": 0.0005}' --seeds 0-4

Each seed trains (benchmarks/train_and_play.py's ``trained_agent``, torch on one thread) in its own process,
``--processes`` at a time; one JSON line per seed: loss probability as first and as second, the positions where
the agent's move lost value, and its score against random (win 1, draw 0.5; ``--random-games`` a seat).
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _agent_move(agent, state, rng_seeds=(0, 1)) -> int:
    """The agent's move; a ``ValueError`` when two random streams give two moves (the walk needs one)."""
    moves = {int(agent.act(state, np.random.default_rng(s))) for s in rng_seeds}
    if len(moves) != 1:
        raise ValueError(f"{agent}: not deterministic at {state} (moves {sorted(moves)}): the exact walk "
                         "needs a greedy agent")
    return moves.pop()


def exact_losses(game, agent, referee, seat: int) -> tuple[float, list[str]]:
    """(probability that ``agent`` in ``seat`` loses to a uniformly-optimal perfect player, value-losing moves).

    A value-losing move is one of the agent's moves outside the referee's optimal set, at a position reached
    with positive probability; listed as the move sequence that led there and the move played.
    """
    mistakes: list[str] = []
    memo: dict[Any, float] = {}

    def walk(state, moves: tuple[int, ...]) -> float:
        if game.is_over(state):
            winner = game.winner(state)
            return 1.0 if winner is not None and winner != seat else 0.0
        key = game.state_key(state)
        if key in memo:
            return memo[key]
        verdict = referee.solve(state)
        if game.to_move(state) == seat:
            move = _agent_move(agent, state)
            if move not in verdict.optimal_moves:
                mistakes.append(f"{game.format_moves(moves) or '(start)'} -> {game.format_move(move)}")
            p = walk(game.play(state, move), moves + (move,))
        else:
            replies = verdict.optimal_moves
            p = sum(walk(game.play(state, m), moves + (m,)) for m in replies) / len(replies)
        memo[key] = p
        return p

    return walk(game.initial_state(), ()), mistakes


def _one_seed(exp_id: str, overrides: dict, profile: str, seed: int, random_games: int) -> dict:
    import torch

    torch.set_num_threads(1)
    from boardrl.agents import make_agent
    from boardrl.evaluate.match import play_match
    from boardrl.solvers.tictactoe import TicTacToeReferee
    from train_and_play import trained_agent

    game, agent, seconds = trained_agent(exp_id, overrides, profile, seed, None)
    referee = TicTacToeReferee(game)
    out: dict[str, Any] = {"experiment": exp_id, "set": overrides, "profile": profile, "seed": seed,
                           "train_s": round(seconds, 1)}
    for seat, name in ((0, "first"), (1, "second")):
        p, mistakes = exact_losses(game, agent, referee, seat)
        out[f"loss_p_{name}"] = round(p, 5)
        out[f"mistakes_{name}"] = mistakes
    if random_games:
        r = play_match(game, agent, make_agent(game, "random"), 2 * random_games, seed=7)
        rates = [getattr(r, s).to_dict() for s in ("as_first", "as_second")]
        out["score_vs_random"] = [round(d["win"] + 0.5 * d["draw"], 4) for d in rates]
    return out


def _seeds(text: str) -> list[int]:
    """``0,1,2``, ``0-4`` or a mix (``0-2,7``); argparse reports anything else as a bad --seeds value."""
    seeds: list[int] = []
    for item in text.split(","):
        lo, _, hi = item.partition("-")
        seeds += range(int(lo), int(hi or lo) + 1)
    return seeds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiment", help="a tic-tac-toe experiment id (params.yaml)")
    ap.add_argument("--set", default="{}", help="JSON object of learner params to override")
    ap.add_argument("--profile", default="default", help="params overlay: default, tiny, full")
    ap.add_argument("--seeds", type=_seeds, default=[0], help="training seeds: 0,1,2 or 0-4 or 0-2,7")
    ap.add_argument("--processes", type=int, default=2, help="seeds trained at once")
    ap.add_argument("--random-games", type=int, default=1000, help="games a seat against random (0: none)")
    args = ap.parse_args()
    overrides = json.loads(args.set)
    with ProcessPoolExecutor(args.processes) as pool:
        jobs = [pool.submit(_one_seed, args.experiment, overrides, args.profile, s, args.random_games)
                for s in args.seeds]
        for job in jobs:
            print(json.dumps(job.result()), flush=True)


if __name__ == "__main__":
    main()
