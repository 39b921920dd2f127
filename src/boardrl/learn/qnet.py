"""Q-network learning with a target network: seed 003's Q-learning (SEEDS.md "Seed 003", Algorithms).

Q(s, a) for the player to move (negamax, side-relative planes: 9 outputs instead of the seed's 18 white/black
outputs), target r + gamma * notterm * (+/-) max over the successor's legal actions of Q_target, **each sample
from its own successor** (the seed used the first sample's successor for the whole batch).  Seed values:
lr 0.01, gamma 0.9, exploratory moves not stored, 900 updates (batch 32) per epoch of 100 games, target synced
each epoch, epsilon 0.1, 400 epochs, network 18 -> 54 -> 54 -> 27 -> 9 tanh.
"""

from __future__ import annotations

from pydantic import Field

from boardrl.learn.nn import MLPConfig
from boardrl.learn.value_selfplay import SelfPlayValueLearner, SelfPlayValueParams


class QNetParams(SelfPlayValueParams):
    """Seed 003's Q-learning."""

    games: int = Field(40_000, ge=1, description="training games (self-play)")
    lr: float = Field(0.01, gt=0.0, description="learning rate")
    gamma: float = Field(0.9, ge=0.0, le=1.0, description="discount per move")
    updates_per_epoch: int = Field(900, ge=0, description="SGD updates after each epoch of games")
    store_exploratory: bool = Field(False, description="keep samples whose move was exploratory")
    network: MLPConfig = Field(default_factory=lambda: MLPConfig(hidden=[54, 54, 27], value_activation="tanh"),
                               description="Q network: MLP body, tanh q head")


class QNetLearner(SelfPlayValueLearner):
    name = "qnet"
    params_model = QNetParams
    values = "q"
    lambda_returns = False


LEARNER = QNetLearner
