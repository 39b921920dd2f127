"""TD(0) afterstate value learning with a target network: seed 003's TD(0) (SEEDS.md "Seed 003", Algorithms).

V(afterstate) from the side to move (learn/afterstate.py), target r + gamma * notterm * (+/-) V_target(s'),
10k memory of non-exploratory samples, 900 SGD updates (batch 32, lr 0.005) after each epoch of 100 games,
target synced each epoch, gamma 0.99, epsilon 0.1; seed network 18 -> 54 -> 27 -> 9 -> 1 tanh (its side flag
is redundant with side-relative planes).  The seed's TD(0) crashed at its first evaluation; this one plays.
"""

from __future__ import annotations

from pydantic import Field

from boardrl.learn.nn import MLPConfig
from boardrl.learn.value_selfplay import SelfPlayValueLearner, SelfPlayValueParams


class TD0Params(SelfPlayValueParams):
    """Seed 003's TD(0): 1,000 epochs x 100 games."""

    games: int = Field(100_000, ge=1, description="training games (self-play)")
    lr: float = Field(0.005, gt=0.0, description="learning rate")
    gamma: float = Field(0.99, ge=0.0, le=1.0, description="discount per move")
    updates_per_epoch: int = Field(900, ge=0, description="SGD updates after each epoch of games")
    store_exploratory: bool = Field(False, description="keep samples whose move was exploratory")
    network: MLPConfig = Field(default_factory=lambda: MLPConfig(hidden=[54, 27, 9], value_activation="tanh"),
                               description="V network: MLP body, one tanh output")


class TD0Learner(SelfPlayValueLearner):
    name = "td0"
    params_model = TD0Params
    values = "afterstate"
    lambda_returns = False


LEARNER = TD0Learner
