"""Training against a fixed opponent: the two params and the learner's seat per game, written once.

Why a module: tabular Q and DQN both train either by self-play or against one fixed agent, in a seat that
alternates with the game number or stays fixed (seed 000's experiment 04 plays first only).  The fields, their
check and the seat rule were declared in each learner; here they are one mixin (as ``league.LeagueFields`` is
for league games) and one function.  Reference system 002's QT keeps its own ``opponent`` field: there it is one
of three regimes (against an agent, a second QT, snapshots), with a default of ``random`` and no seat choice.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

#: The fixed seats, as players (0 moves first).
SEATS = {"first": 0, "second": 1}
Seat = Literal["alternate", "first", "second"]


class OpponentFields(BaseModel):
    """A fixed opponent (``make_agent`` spec) or self-play, and which player the learner is against it."""

    opponent: str | None = Field(None, description="make_agent spec of a fixed opponent; null = self-play")
    learner_seat: Seat = Field(
        "alternate", description="with an opponent: which player the learner is (alternate = by game number)")

    @model_validator(mode="after")
    def _seat_needs_opponent(self) -> "OpponentFields":
        if self.opponent is None and self.learner_seat != "alternate":
            raise ValueError("learner_seat applies only with an opponent (self-play plays both seats)")
        return self


def learner_players(seat: Seat, game_numbers: np.ndarray) -> np.ndarray:
    """The player the learner is in each game against the fixed opponent: game number mod 2, or a fixed seat."""
    if seat == "alternate":
        return (np.asarray(game_numbers) % 2).astype(np.int64)
    return np.full(np.shape(game_numbers), SEATS[seat], dtype=np.int64)
