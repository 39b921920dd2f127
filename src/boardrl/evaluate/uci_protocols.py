"""Evaluating a Connect 4 agent from the UCI start positions, split by their label (win / draw / loss for x).

Two protocols (issue 3):
- ``seed000``: seed 000's experiment 04.  The agent plays x (the side to move in every UCI position) against
  ``random``; each game starts from a fresh uniformly drawn position of the label; ``games`` games per label.
- ``full``: every position of the label (or a seeded sample of ``max_positions``), once with the agent as x
  and once as o, so a label's positions are judged from both sides.  Combined is the sum of the two seats.

Labels are the game-theoretic values for x, so "win" positions are won for the agent only when it is x.
Results are ``SeatStats.to_dict()`` blocks (rates, counts, 95% Wilson intervals).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from boardrl.agents.base import Agent
from boardrl.data.uci_positions import LABELS
from boardrl.evaluate.match import play_match
from boardrl.errors import BoardRLError


def _states(game, rows: np.ndarray) -> list[Any]:
    st = game.state_type
    return [st(*r) for r in rows.tolist()]


def _check(agent: Agent, positions: dict[str, np.ndarray]) -> None:
    if agent.game.game_id != "connect4":
        raise BoardRLError(f"the UCI protocols are for connect4 agents, not {agent.game.game_id}")
    missing = [lab for lab in LABELS if lab not in positions or len(positions[lab]) == 0]
    if missing:
        raise BoardRLError(f"no UCI positions for label(s) {', '.join(missing)}")


def seed000_protocol(agent: Agent, opponent: Agent, positions: dict[str, np.ndarray], games: int, seed: int,
                     processes: int = 1) -> dict[str, dict[str, Any]]:
    """{label: seat stats of the agent as x} over ``games`` games from random positions of each label."""
    _check(agent, positions)
    out = {}
    for i, label in enumerate(LABELS):
        result = play_match(agent.game, agent, opponent, games, seats="a_first",
                            starts=_states(agent.game, positions[label]), start_order="random",
                            seed=int(np.random.SeedSequence([seed, 0, i]).generate_state(1)[0]),
                            processes=processes)
        out[label] = result.as_first.to_dict()
    return out


def sample_positions(rows: np.ndarray, max_positions: int | None, seed: int) -> np.ndarray:
    """All rows, or a seeded sample of ``max_positions`` of them kept in file order."""
    if max_positions is None or max_positions >= len(rows):
        return rows
    pick = np.sort(np.random.default_rng(seed).choice(len(rows), size=max_positions, replace=False))
    return rows[pick]


def full_protocol(agent: Agent, opponent: Agent, positions: dict[str, np.ndarray], seed: int,
                  max_positions: int | None = None, processes: int = 1) -> dict[str, dict[str, Any]]:
    """{label: {as_first, as_second, combined}}: every (sampled) position played once from each seat."""
    _check(agent, positions)
    out = {}
    for i, label in enumerate(LABELS):
        rows = sample_positions(positions[label], max_positions, seed + i)
        starts = _states(agent.game, rows)
        seats = {}
        for j, mode in enumerate(("a_first", "b_first")):
            seats[mode] = play_match(agent.game, agent, opponent, len(starts), seats=mode, starts=starts,
                                     start_order="cycle",
                                     seed=int(np.random.SeedSequence([seed, 1, i, j]).generate_state(1)[0]),
                                     processes=processes)
        first, second = seats["a_first"].as_first, seats["b_first"].as_second
        out[label] = {"as_first": first.to_dict(), "as_second": second.to_dict(),
                      "combined": (first + second).to_dict(), "positions": int(len(rows))}
    return out
