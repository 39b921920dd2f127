"""Seed 001's Dots and Boxes benchmark players: Moderate and Advanced (naive_players.SimplePlayer level 1, 2).

* Moderate: if some undrawn edge gives an adjacent box its 4th wall (a scoring edge), pick among those;
  otherwise uniform over all undrawn edges.
* Advanced: scoring edges first, as Moderate; otherwise uniform among "safe" edges, which give no adjacent box
  its 3rd wall; if there is none, uniform over all undrawn edges.

One detail follows the seed's code rather than its prose ("uniformly"): the seed collects scoring edges in a
list once per box they complete, so an edge that completes two boxes at once is twice as likely to be picked.
``double_weight=True`` (the default) reproduces that; ``False`` gives the plain uniform choice.

Both players share one numba kernel over rows of the batched state array; ``act`` runs it on a single row,
so the scalar and batched players are the same code.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from boardrl.agents.base import Agent
from boardrl.games._kernels import popcount
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.dots_and_boxes import DotsAndBoxes, DotsAndBoxesState


@njit(cache=True)
def choose_simple(
    states: np.ndarray,
    u: np.ndarray,
    level: int,
    double_weight: bool,
    num_edges: int,
    edge_boxes: np.ndarray,
    box_masks: np.ndarray,
    out: np.ndarray,
) -> None:
    """Seed 001's SimplePlayer choice for each row (``level`` 1 = Moderate, 2 = Advanced); -1 when over.

    ``u[i]`` is one uniform number in [0, 1) per row; the pick is the candidate at position floor(u * weight).
    """
    num_boxes = box_masks.shape[0]
    walls = np.empty(num_boxes, dtype=np.int64)
    score_w = np.empty(num_edges, dtype=np.int64)  # per edge: number of boxes it completes
    safe = np.empty(num_edges, dtype=np.int64)
    free = np.empty(num_edges, dtype=np.int64)
    for i in range(states.shape[0]):
        edges = states[i, 0]
        for b in range(num_boxes):
            walls[b] = popcount(edges & box_masks[b])
        n_score = 0  # total scoring weight
        n_safe = 0
        n_free = 0
        for e in range(num_edges):
            score_w[e] = 0
            safe[e] = 0
            free[e] = 0
            if (edges >> e) & 1:
                continue
            free[e] = 1
            n_free += 1
            is_safe = 1
            for j in range(2):
                b = edge_boxes[e, j]
                if b >= 0:
                    if walls[b] == 3:
                        score_w[e] += 1
                    elif walls[b] == 2:
                        is_safe = 0
            if score_w[e] > 0:
                if not double_weight:
                    score_w[e] = 1
                n_score += score_w[e]
            safe[e] = is_safe
            n_safe += is_safe
        if n_free == 0:
            out[i] = -1
            continue
        if n_score > 0:
            weights, total = score_w, n_score
        elif level >= 2 and n_safe > 0:
            weights, total = safe, n_safe
        else:
            weights, total = free, n_free
        r = np.int64(u[i] * total)
        if r >= total:
            r = total - 1
        for e in range(num_edges):
            r -= weights[e]
            if r < 0:
                out[i] = e
                break


class _SimplePlayer(Agent):
    """Shared body of Moderate and Advanced; subclasses set ``level`` and the default name."""

    batched = True
    level: int = 1
    default_name: str = ""

    def __init__(self, game: Game, name: str | None = None, double_weight: bool = True) -> None:
        if not isinstance(game, DotsAndBoxes):
            raise BoardRLError(
                f"agent {self.default_name!r} plays dots_and_boxes only, not {game.game_id}; "
                "for other games use random, tactical, alphabeta, mcts or perfect"
            )
        super().__init__(game, name or self.default_name)
        self.double_weight = bool(double_weight)

    def act(self, state: DotsAndBoxesState, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        if self.game.is_over(state):
            raise BoardRLError(f"{self.name}: the game is over; there is no move to make")
        return int(self.act_batch(np.asarray([state], dtype=np.int64), rng)[0])

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        g: DotsAndBoxes = self.game  # type: ignore[assignment]
        out = np.empty(states.shape[0], dtype=np.int64)
        choose_simple(
            np.ascontiguousarray(states, dtype=np.int64), rng.random(states.shape[0]), self.level,
            self.double_weight, g.num_edges, g.geo.edge_boxes, g.geo.box_masks, out,
        )
        return out


class ModerateAgent(_SimplePlayer):
    """Seed 001 Moderate: take a box when one can be taken, else play at random."""

    level = 1
    default_name = "moderate"


class AdvancedAgent(_SimplePlayer):
    """Seed 001 Advanced: take a box when possible, else avoid giving a box its 3rd wall, else random."""

    level = 2
    default_name = "advanced"
