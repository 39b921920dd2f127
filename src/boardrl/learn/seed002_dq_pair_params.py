"""The params model of reference system 002's "DQ trained against a second DQ" (learn/seed002_dq_pair.py), apart
from the learner so that validating params.yaml, which every pipeline stage does, never imports torch.

Why a subclass of ``DQNParams``: each of the two players *is* our ``dqn`` learner configured as the system's
DQPlayer, so every DQN setting means here what it means there, is checked by the same validators, and an experiment
can take the seed-002 settings of its neighbours (profiles/full.yaml's ``*seed002_dq`` anchor) unchanged.  What
differs: the budget counts games (the system's unit), the defaults are the system's DQPlayer, and the settings that
have no meaning for two players sharing one board one game at a time are refused.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from boardrl.learn.core.base import Exploration
from boardrl.learn.dqn_params import DQNParams


def _seed002_exploration() -> Exploration:
    """The system's epsilon: 0.1 + 0.9 exp(-updates / 20,000) (counted in gradient steps, ``exploration_clock``)."""
    return Exploration(schedule="exponential", start=1.0, end=0.1, decay_games=20_000)


class Seed002DqPairParams(DQNParams):
    """The settings of both players (each gets the same, with its own seed); defaults are seed 002's DQPlayer."""

    games: int = Field(200_000, ge=1, description="training budget: games between the two players (the system: "
                       "200,000)")
    steps: int | None = Field(None, description="not used (the budget is `games`); must stay null, so that a "
                              "`steps` copied from a dqn experiment is not mistaken for a budget")
    network: str | dict[str, Any] = Field("seed002", description="a preset or a network config (the system's TTT "
                                          "net: seed002, its dueling conv net)")
    loss: Literal["huber", "mse"] = Field("mse", description="TD loss (the system: mse)")
    max_grad_norm: float | None = Field(None, gt=0.0, description="clip the gradient norm (the system: null, off)")
    clip_grad_value: float | None = Field(1.0, gt=0.0, description="clamp each gradient to +-value (the system: 1)")
    batch_size: int = Field(32, ge=1, description="minibatch size (the system: 32)")
    target_every: int = Field(5_000, ge=1, description="gradient steps between target-network copies (the system: "
                              "5,000)")
    learning_starts: int = Field(0, ge=0, description="env steps of a player before its first gradient step (the "
                                 "system: 0, from its first game end with a full minibatch)")
    train_every: int = Field(1, ge=1, description="finished games (update_on: game_ends) or env steps per "
                             "`gradient_steps` gradient steps (the system: 1)")
    update_on: Literal["env_steps", "game_ends"] = Field(
        "game_ends", description="what earns a player's gradient steps: its own moves or its game ends (the system: "
        "one step per game end)")
    exploration: Exploration = Field(default_factory=_seed002_exploration,
                                     description="epsilon schedule; its decay_games counts `exploration_clock`")
    exploration_clock: Literal["env_steps", "grad_steps"] = Field(
        "grad_steps", description="what each player's epsilon counts: its env steps or its gradient steps (the "
        "system: 0.1 + 0.9 exp(-updates / 20,000))")
    parallel_envs: int = Field(1, ge=1, description="games side by side: 1, the system's one game at a time (the "
                               "two players share one board)")

    @model_validator(mode="after")
    def _two_players_one_board(self) -> "Seed002DqPairParams":
        """Refuse what a pair of players on one board cannot mean, each with one line."""
        if self.steps is not None:
            raise ValueError("the budget is `games` (the system's unit); set steps: null")
        if self.opponent is not None:
            raise ValueError("the opponent is the second learning DQ; set opponent: null")
        if self.opponents or self.opponent_share > 0:
            raise ValueError("league games (opponents, opponent_share) are not part of this regime")
        if self.parallel_envs != 1:
            raise ValueError("parallel_envs must be 1: the two players play one game at a time on one board")
        if self.starts is not None:
            raise ValueError("starts: the system's games start from the initial position; set starts: null")
        if self.lr_end is not None:
            raise ValueError("lr_end falls over a step budget, and this learner counts games; set lr_end: null")
        return self

    def player_params(self) -> DQNParams:
        """The ``dqn`` params each player trains with: these settings without the pair's own fields (``steps`` is
        the DQN default, read by neither player: it only sets the horizon of ``lr_end``, refused here)."""
        own = {"games", "steps"}
        return DQNParams(**{k: v for k, v in self.model_dump().items() if k not in own})


#: learner name -> (params model, unit of the training budget): read by learn/__init__.py without the learner.
LEARNER_PARAMS = {"seed002_dq_pair": (Seed002DqPairParams, "games")}
