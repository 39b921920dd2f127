"""Conniption is a first-player win: how fast, and what that means for beating ``flip`` from the second seat.

1. From the empty board, the fewest of its turns within which the first player forces a win
   (``solvers/conniption.py``: an exhaustive AND-OR search, so the answer is a proof).
2. Which of the first player's opening turns keep that win (within its next ``depth - 1`` turns).
3. ``flip`` as first player: the best chance any second player has against it.  flip's policy is known exactly
   (seed 004's depth-3 minimax with the Flip evaluation; ``none`` before ``flip``, a uniform column among tied
   ones), so an expectimax over its tie-breaks gives the second player's best winning probability.  The second
   player's lines are cut where the first player forces a win within 2 of its turns (flip's search sees those
   and, as the runs show, finds them), and after ``T`` second-player turns, which count as losses: the figure
   is a lower bound that grows with ``T``.  A second player that wins here does so only because flip steps
   off its forced win, and only by knowing where.

    .venv/bin/python benchmarks/conniption_forced_wins.py                  # about 10 s
    .venv/bin/python benchmarks/conniption_forced_wins.py --p2-turns 3 4 5 6 --depth 6
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import numpy as np

from boardrl.agents import make_agent
from boardrl.agents.base import Agent
from boardrl.games import make_game
from boardrl.games.conniption import FLIP, NONE, RUNNING, ConniptionState, apply, legal_bits
from boardrl.solvers.conniption import forced_win_turns, forces_win

GAME = make_game("conniption")
SEED_RULE = GAME.seed_draw_rule


def turn_lines(state: tuple, prefix: str = ""):
    """Every way the mover can play out its turn: (stage-moves as text, state after them)."""
    me = state[6]
    if state[7] != RUNNING:
        yield prefix, state
        return
    bits = legal_bits(*state)
    for a in range(9):
        if (bits >> a) & 1:
            t = apply(*state, a, SEED_RULE)
            if t[7] != RUNNING or t[6] != me:
                yield prefix + GAME.format_move(a), t
            else:
                yield from turn_lines(t, prefix + GAME.format_move(a))


def opening_turns(depth: int) -> tuple[list[str], int]:
    """The first player's opening turns after which it still forces a win within ``depth - 1`` turns."""
    start = tuple(int(x) for x in GAME.initial_state())
    lines = list(turn_lines(start))
    keep = [text for text, t in lines
            if t[7] == 0 or (t[7] == RUNNING and forces_win(*t, 0, depth - 1, SEED_RULE))]
    return keep, len(lines)


class FlipExpectimax:
    """The second player's best probability of beating ``flip`` (first player) within ``p2_turns`` turns."""

    def __init__(self, p2_turns: int, cut_turns: int = 2) -> None:
        self.flip = make_agent(GAME, "flip")
        self.rng = np.random.default_rng(0)  # flip's evaluation draws nothing; its search API takes a generator
        self.p2_turns, self.cut_turns = p2_turns, cut_turns
        self.value = functools.lru_cache(maxsize=None)(self._value)

    def flip_policy(self, t: tuple) -> list[tuple[int, float]]:
        """flip's action distribution: ``ConniptionAI.act`` with its tie-breaks spelled out."""
        state = ConniptionState(*t)
        legal = GAME.legal_actions(state)
        if len(legal) == 1:
            return [(legal[0], 1.0)]
        values = self.flip.action_values(state, self.rng)
        best = (max if t[6] == 0 else min)(values.values())
        tied = [a for a, v in values.items() if v == best]
        if NONE in tied:
            return [(NONE, 1.0)]
        places = [a for a in tied if a < FLIP]
        return [(a, 1.0 / len(places)) for a in places] if places else [(FLIP, 1.0)]

    def _value(self, t: tuple, turns: int) -> float:
        if t[7] != RUNNING:
            return 1.0 if t[7] == 1 else 0.0
        if t[6] == 0:
            return sum(p * self.value(apply(*t, a, SEED_RULE), turns) for a, p in self.flip_policy(t))
        if t[2] == 0 and turns >= self.p2_turns:
            return 0.0
        best = 0.0
        for _, u, after, cut in self.second_player_moves(t, turns):
            if not cut:
                best = max(best, self.value(u, after))
                if best >= 1.0:
                    break
        return best

    def second_player_moves(self, t: tuple, turns: int):
        """(action, successor, second-player turns played after it, cut?) for each legal stage-move in ``t``; a
        move is cut when it ends the turn where the first player forces a win within ``cut_turns`` (flip sees it)."""
        bits = legal_bits(*t)
        for a in range(9):
            if (bits >> a) & 1:
                u = apply(*t, a, SEED_RULE)
                ends_turn = u[7] == RUNNING and u[6] == 0
                yield a, u, turns + ends_turn, ends_turn and forces_win(*u, 0, self.cut_turns, SEED_RULE)

    def best_action(self, t: tuple, turns: int) -> int:
        """The second player's best stage-move in ``t`` (lowest action among equals; cut lines last)."""
        return max((-1.0 if cut else self.value(u, after), -a, a)
                   for a, u, after, cut in self.second_player_moves(t, turns))[2]

    def best_line(self) -> str:
        """One game along the second player's best replies (flip's first tied choice where it has several)."""
        t, turns, moves = tuple(int(x) for x in GAME.initial_state()), 0, []
        while t[7] == RUNNING:
            a = self.flip_policy(t)[0][0] if t[6] == 0 else self.best_action(t, turns)
            u = apply(*t, a, SEED_RULE)
            turns += int(t[6] == 1 and u[6] == 0 and u[7] == RUNNING)
            moves.append(GAME.format_move(a))
            t = u
        text = "".join(moves)
        return " ".join(text[i:i + 3] for i in range(0, len(text), 3)) + f"  (winner: player {t[7]})"


class FlipExploiter(Agent):
    """The second player that plays ``FlipExpectimax``'s best replies: it knows flip's policy, which is the only
    reason it wins.  For checking the expectimax against played games."""

    def __init__(self, game, p2_turns: int = 5) -> None:
        super().__init__(game, f"flip_exploiter_{p2_turns}")
        self.search = FlipExpectimax(p2_turns)

    def act(self, state, rng: np.random.Generator) -> int:
        t = tuple(int(x) for x in state)
        if t[6] != 1:
            raise ValueError("FlipExploiter plays the second seat only")
        turns = (bin(t[1]).count("1") - 1) // 2  # its turns already played: the first player has placed one more
        return self.search.best_action(t, turns)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=5, help="most first-player turns to search from the empty board")
    ap.add_argument("--p2-turns", type=int, nargs="+", default=[3, 4, 5, 6])
    args = ap.parse_args()
    out: dict = {}
    t0 = time.perf_counter()
    depth = forced_win_turns(GAME, GAME.initial_state(), 0, args.depth)
    out["first_player_forces_within_turns"] = depth
    out["depth_seconds"] = round(time.perf_counter() - t0, 2)
    print(f"from the empty board the first player forces a win within {depth} of its turns "
          f"(searched up to {args.depth}; {out['depth_seconds']} s)", flush=True)
    if depth is not None:
        keep, total = opening_turns(depth)
        out["opening_turns_keeping_the_win"] = keep
        print(f"{len(keep)} of its {total} opening turns keep a win within {depth - 1} more turns: {' '.join(keep)}")
    out["flip_as_first"] = {}
    for p2_turns in args.p2_turns:
        t0 = time.perf_counter()
        ex = FlipExpectimax(p2_turns)
        p = ex.value(tuple(int(x) for x in GAME.initial_state()), 0)
        row = {"best_second_player_win_probability": p, "seconds": round(time.perf_counter() - t0, 1)}
        if p > 0:
            row["line"] = ex.best_line()
        out["flip_as_first"][p2_turns] = row
        print(f"against flip as first player, within {p2_turns} second-player turns: best win probability "
              f"{p:.3f} ({row['seconds']} s){'; e.g. ' + row['line'] if p > 0 else ''}", flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
