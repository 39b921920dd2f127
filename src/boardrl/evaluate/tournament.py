"""A round-robin tournament with fixed seats: every ordered pair of agents, N games each, from the empty board.

Why: seed 004 validated its Conniption benchmark players this way (SEEDS.md, seed 004, Evaluation protocol and
the benchmark table): for every ordered pair (P1, P2), including an agent against itself, 100 games in which P1
always moves first.  Running the same protocol on our engine and players, and printing it beside the seed's
table, checks both against the seed before any learner is compared with them.

The result is a matrix of ``Pairing`` records, rows = the agent moving first, columns = the agent moving
second, each from P1's side (wins, draws, losses and Wilson intervals from ``evaluate.match``).  Pairing k plays
with seed ``SeedSequence(seed).spawn(...)[k]``'s entropy, so one pairing's games do not depend on the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from tqdm import tqdm

from boardrl.agents import make_agent
from boardrl.errors import BoardRLError
from boardrl.evaluate.match import play_match
from boardrl.games import make_game


@dataclass(frozen=True)
class Pairing:
    """``first`` moved first in every game against ``second``; counts are from ``first``'s side."""

    first: str
    second: str
    games: int
    first_wins: int
    draws: int
    second_wins: int
    mean_length: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def pairing_seeds(seed: int, n: int) -> list[int]:
    """One independent 63-bit seed per pairing, from ``seed``."""
    return [int(s.generate_state(1, np.uint64)[0] >> np.uint64(1)) for s in np.random.SeedSequence(seed).spawn(n)]


def round_robin(game_id: str, agents: Sequence[str], games: int, *, seed: int = 0, processes: int = 1,
                progress: bool = False) -> list[Pairing]:
    """Every ordered pair of ``agents`` (self-pairings included) plays ``games`` games, the row agent first."""
    if len(set(agents)) != len(agents) or not agents:
        raise BoardRLError(f"tournament agents must be distinct and not empty, got {list(agents)}")
    if games < 1:
        raise BoardRLError(f"tournament games must be >= 1, got {games}")
    game = make_game(game_id)
    built = {spec: make_agent(game, spec) for spec in agents}
    pairs = [(a, b) for a in agents for b in agents]
    out = []
    for (a, b), s in tqdm(list(zip(pairs, pairing_seeds(seed, len(pairs)))), desc=f"tournament {game_id}",
                          unit="pairing", disable=not progress):
        other = built[b] if a != b else make_agent(game, b)  # an agent against a fresh copy of itself
        r = play_match(game, built[a], other, games, seats="a_first", seed=s, processes=processes)
        first = r.as_first
        out.append(Pairing(a, b, r.games, first.wins, first.draws, first.losses, r.mean_length))
    return out


def as_matrix(pairings: Sequence[Pairing]) -> dict[str, dict[str, Pairing]]:
    """{first: {second: Pairing}} in the order the agents were given."""
    out: dict[str, dict[str, Pairing]] = {}
    for p in pairings:
        out.setdefault(p.first, {})[p.second] = p
    return out


def seat_totals(pairings: Sequence[Pairing], agent: str, *, seat: str, exclude_self: bool = True) -> tuple[int, int]:
    """(wins, games) of ``agent`` in ``seat`` ("first" or "second") over its pairings."""
    wins = games = 0
    for p in pairings:
        if exclude_self and p.first == p.second:
            continue
        if seat == "first" and p.first == agent:
            wins, games = wins + p.first_wins, games + p.games
        elif seat == "second" and p.second == agent:
            wins, games = wins + p.second_wins, games + p.games
    return wins, games
