"""The params models of seed 003's self-play value learners (td0, td_lambda, qnet, dqn_lambda), apart from the learners
(learn/value_selfplay.py and beside it) so that validating params.yaml, which every pipeline stage does, never
imports torch."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from boardrl.learn.core.base import Exploration, LearnerParams
from boardrl.nn.config import MLPConfig


class SelfPlayValueParams(LearnerParams):
    """Fields shared by seed 003's four learners; each learner's model sets the seed's defaults."""

    games: int = Field(100_000, ge=1, description="training games (self-play)")
    lr: float = Field(0.01, gt=0.0, description="learning rate")
    lr_end: float | None = Field(None, gt=0.0, description="null: lr throughout; else the rate falls linearly from "
                                 "lr to lr_end over `games` (a function of the game count: resume-safe)")
    optimizer: Literal["sgd", "adam"] = Field("sgd", description="seed 003: plain SGD")
    gamma: float = Field(0.9, ge=0.0, le=1.0, description="discount per move")
    exploration: Exploration = Field(default_factory=lambda: Exploration(schedule="constant", start=0.1),
                                     description="epsilon-greedy behaviour (seed 003: constant 0.1)")
    buffer: int = Field(10_000, ge=1, description="replay memory size in samples")
    batch: int = Field(32, ge=1, description="samples per SGD update")
    games_per_epoch: int = Field(100, ge=1, description="games played side by side between update phases")
    updates_per_epoch: int = Field(900, ge=0, description="SGD updates after each epoch of games")
    store_exploratory: bool = Field(False, description="keep samples whose move was exploratory")
    cut_at_exploration: bool = Field(False, description="a lambda-return stops before an exploratory move and "
                                     "bootstraps there (Watkins); seed 003: no")
    symmetry: bool = Field(False, description="store every game's symmetric images too (game.symmetries_batch; "
                                              "seed 003: no)")
    network: MLPConfig = Field(default_factory=MLPConfig, description="MLP body and head (nn)")
    init_std: float = Field(0.2, ge=0.0, description="Linear weights ~ N(0, init_std) (seed 003); 0 = torch default")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="torch device (learn/core/device.py)")
    threads: int | None = Field(None, ge=1, description="torch CPU threads; null: 1 (learn/core/device.py "
                                "resolved_threads)")

    @field_validator("network")
    @classmethod
    def _value_head(cls, config: MLPConfig) -> MLPConfig:
        if config.head == "policy_value":
            raise ValueError("seed 003's learners need a q or dueling head, not policy_value")
        return config


class LambdaParams(SelfPlayValueParams):
    """Adds lambda (seed 003: 0.6) for the lambda-return learners."""

    lam: float = Field(0.6, ge=0.0, le=1.0, description="lambda of the lambda-return")


class TDLambdaParams(LambdaParams):
    """Seed 003's TD(lambda)."""

    games: int = Field(200_000, ge=1, description="training games (self-play)")
    lr: float = Field(0.01, gt=0.0, description="learning rate")
    gamma: float = Field(0.9, ge=0.0, le=1.0, description="discount per move")
    updates_per_epoch: int = Field(100, ge=0, description="SGD updates after each epoch of games")
    store_exploratory: bool = Field(True, description="keep samples whose move was exploratory")
    network: MLPConfig = Field(default_factory=lambda: MLPConfig(hidden=[54, 27, 9], value_activation="tanh"),
                               description="V network: MLP body, one tanh output")


class QNetParams(SelfPlayValueParams):
    """Seed 003's Q-learning."""

    games: int = Field(40_000, ge=1, description="training games (self-play)")
    lr: float = Field(0.01, gt=0.0, description="learning rate")
    gamma: float = Field(0.9, ge=0.0, le=1.0, description="discount per move")
    updates_per_epoch: int = Field(900, ge=0, description="SGD updates after each epoch of games")
    store_exploratory: bool = Field(False, description="keep samples whose move was exploratory")
    network: MLPConfig = Field(default_factory=lambda: MLPConfig(hidden=[54, 54, 27], value_activation="tanh"),
                               description="Q network: MLP body, tanh q head")


class DQNLambdaParams(LambdaParams):
    """Seed 003's DQN(lambda)."""

    games: int = Field(200_000, ge=1, description="training games (self-play)")
    lr: float = Field(0.01, gt=0.0, description="learning rate")
    gamma: float = Field(0.9, ge=0.0, le=1.0, description="discount per move")
    updates_per_epoch: int = Field(100, ge=0, description="SGD updates after each epoch of games")
    store_exploratory: bool = Field(True, description="keep samples whose move was exploratory")
    network: MLPConfig = Field(default_factory=lambda: MLPConfig(hidden=[54, 54, 27], value_activation="tanh"),
                               description="Q network: MLP body, tanh q head")


class TD0Params(SelfPlayValueParams):
    """Seed 003's TD(0): 1,000 epochs x 100 games."""

    games: int = Field(100_000, ge=1, description="training games (self-play)")
    lr: float = Field(0.005, gt=0.0, description="learning rate")
    gamma: float = Field(0.99, ge=0.0, le=1.0, description="discount per move")
    updates_per_epoch: int = Field(900, ge=0, description="SGD updates after each epoch of games")
    store_exploratory: bool = Field(False, description="keep samples whose move was exploratory")
    network: MLPConfig = Field(default_factory=lambda: MLPConfig(hidden=[54, 27, 9], value_activation="tanh"),
                               description="V network: MLP body, one tanh output")


#: learner name -> (params model, unit of the training budget): read by learn/__init__.py without the learner.
LEARNER_PARAMS = {"td0": (TD0Params, "games"), "td_lambda": (TDLambdaParams, "games"), "qnet": (QNetParams, "games"),
                  "dqn_lambda": (DQNLambdaParams, "games")}
