"""DQN's params model, apart from the learner (learn/dqn.py) so that validating params.yaml, which every
pipeline stage does, never imports torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from boardrl.learn.core.base import Exploration, LearnerParams
from boardrl.learn.core.league import LeagueFields
from boardrl.learn.core.opponent import OpponentFields
from boardrl.nn.presets import PRESETS, check_network_spec

UCI_TABLE = Path("data") / "processed" / "uci.parquet"


class DQNParams(LearnerParams, OpponentFields, LeagueFields):
    """DQN settings; defaults as in the module docstring (seed 002's values where it has one)."""

    steps: int = Field(100_000, ge=1, description="training budget: the learner's environment steps (decisions)")
    network: str | dict[str, Any] = Field(
        "default", description=f"a preset ({', '.join(PRESETS)}; see nn/presets.py) or a network config")
    gamma: float = Field(0.99, ge=0.0, le=1.0, description="discount per decision (seed 002: 0.99)")
    lr: float = Field(1e-3, gt=0.0, description="Adam learning rate (seed 002: 1e-3)")
    lr_end: float | None = Field(None, gt=0.0, description="null: lr throughout; else the rate falls linearly "
                                 "from lr to lr_end over `steps` env steps (a late policy settles instead of drifting)")
    batch_size: int = Field(128, ge=1, description="minibatch size")
    buffer_size: int = Field(100_000, ge=1, description="replay capacity in transitions (seed 002: 100,000)")
    learning_starts: int = Field(1_000, ge=0, description="env steps before the first gradient step")
    train_every: int = Field(4, ge=1, description="env steps (or, with update_on: game_ends, the learner's "
                             "finished games) per `gradient_steps` gradient steps")
    update_on: Literal["env_steps", "game_ends"] = Field(
        "env_steps", description="what earns gradient steps: the learner's env steps, or its finished games "
        "counted per learning seat (seed 002: one gradient step per game end; a self-play game gives two)")
    gradient_steps: int = Field(1, ge=1, description="gradient steps per `train_every` env steps")
    target_every: int = Field(500, ge=1, description="gradient steps between target-network updates")
    tau: float = Field(1.0, gt=0.0, le=1.0, description="1: hard copy; < 1: Polyak step target += tau (online - "
                       "target) every target_every gradient steps")
    double: bool = Field(True, description="Double DQN: online argmax over legal next actions, target evaluates")
    target: Literal["standard", "seed001"] = Field(
        "standard", description="standard TD target, or seed 001's 'conditional minimax' target "
        "Q(s,a) + tanh(r) + gamma * phi * max_a' Q(s',a') (phi = +1 same mover, -1 opponent; its own step shape)")
    n_step: int = Field(1, ge=1, le=64, description="decisions folded into one return (signs handled)")
    loss: Literal["huber", "mse"] = Field("huber", description="TD loss (seed 002: mse)")
    max_grad_norm: float | None = Field(10.0, gt=0.0, description="clip the gradient norm (null: off)")
    clip_grad_value: float | None = Field(None, gt=0.0, description="clamp each gradient to +-value "
                                          "(seed 001/002: 1; null: off)")
    exploration: Exploration = Field(
        default_factory=lambda: Exploration(schedule="linear", start=1.0, end=0.05, decay_games=20_000),
        description="epsilon schedule; its decay_games counts `exploration_clock`")
    exploration_clock: Literal["env_steps", "grad_steps"] = Field(
        "env_steps", description="what the epsilon schedule counts: the learner's env steps, or gradient steps "
        "(seed 002: 0.1 + 0.9 exp(-updates / 20,000))")
    starts: Literal["uci"] | None = Field(None, description="null: the initial position; uci: a uniformly "
                                          "drawn UCI 8-ply Connect 4 position per game (seed 000 exp 04)")
    uci_path: str = Field(str(UCI_TABLE), description="the UCI table (prepare stage) for starts: uci")
    reward: Literal["result", "margin", "boxes"] = Field(
        "result", description="the mover's result (+1/0/-1) or final score margin at the end; boxes: each "
        "transition pays the change of the mover's score margin (Q = margin to go, the tables' margin reward)")
    symmetry: bool = Field(False, description="train on a uniformly drawn symmetry image of every sampled "
                           "transition (game.symmetries_batch: s, a and s' mapped alike); seeds: no")
    parallel_envs: int = Field(64, ge=1, description="games played side by side on the batched engine")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="torch device (auto: CUDA when present)")
    threads: int | None = Field(None, ge=1, description="torch CPU threads; null: 1 (learn/core/device.py "
                                "resolved_threads; Connect 4's conv net trained 1.3x faster on 2 threads, so two "
                                "stages side by side on a thread each do more)")

    @field_validator("network")
    @classmethod
    def _known_network(cls, value: str | dict) -> str | dict:
        return check_network_spec(value)

    @model_validator(mode="after")
    def _one_kind_of_opponent(self) -> "DQNParams":
        if self.opponent is not None and self.opponent_share > 0:
            raise ValueError("opponent plays every game; opponents with opponent_share play a share of them: "
                             "choose one")
        return self


#: learner name -> (params model, unit of the training budget): read by learn/__init__.py without the learner.
LEARNER_PARAMS = {"dqn": (DQNParams, "steps")}
