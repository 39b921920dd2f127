"""DQN(lambda): Q-network trained on lambda-returns over episodes, seed 003's DQN(lambda) (SEEDS.md "Seed 003").

G_t = r + gamma * (+/-) [lambda G_{t+1} + (1 - lambda) max_a Q(s_{t+1}, a)] with each sample's **own**
successor (the seed took the first sample's), recomputed for the whole memory every epoch from the single
(online) network (learn/lambda_returns.py).  Seed values: lr 0.01, gamma 0.9, lambda 0.6, 1 update (batch 32)
per game, epsilon 0.1, 2,000 epochs x 100 games, network 18 -> 54 -> 54 -> 27 -> 9 tanh.
"""

from __future__ import annotations

from pydantic import Field

from boardrl.learn.nn import MLPConfig
from boardrl.learn.value_selfplay import LambdaParams, SelfPlayValueLearner


class DQNLambdaParams(LambdaParams):
    """Seed 003's DQN(lambda)."""

    games: int = Field(200_000, ge=1, description="training games (self-play)")
    lr: float = Field(0.01, gt=0.0, description="learning rate")
    gamma: float = Field(0.9, ge=0.0, le=1.0, description="discount per move")
    updates_per_epoch: int = Field(100, ge=0, description="SGD updates after each epoch of games")
    store_exploratory: bool = Field(True, description="keep samples whose move was exploratory")
    network: MLPConfig = Field(default_factory=lambda: MLPConfig(hidden=[54, 54, 27], value_activation="tanh"),
                               description="Q network: MLP body, tanh q head")


class DQNLambdaLearner(SelfPlayValueLearner):
    name = "dqn_lambda"
    params_model = DQNLambdaParams
    values = "q"
    lambda_returns = True


LEARNER = DQNLambdaLearner
