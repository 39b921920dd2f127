"""AlphaZero's params model, apart from the learner (learn/alphazero.py) so that validating params.yaml, which
every pipeline stage does, never imports torch."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from boardrl.learn.core.base import LearnerParams
from boardrl.learn.core.league import LeagueFields
from boardrl.nn.presets import check_network_spec


class AlphaZeroParams(LearnerParams, LeagueFields):
    """AlphaZero settings (module docstring); defaults are ours for a 2-core CPU."""

    games: int = Field(2_000, ge=1, description="training budget: finished self-play games")
    network: str | dict[str, Any] = Field("alphazero", description="a preset or a policy_value network config")
    simulations: int = Field(50, ge=1, description="search simulations per self-play move")
    eval_simulations: int = Field(100, ge=1, description="simulations per move of the trained agent")
    c_puct: float = Field(1.5, ge=0.0, description="exploration constant of PUCT (seed 003: 4)")
    fpu: float = Field(0.0, ge=-1.0, le=1.0, description="Q of an unvisited edge")
    leaves_per_wave: int = Field(1, ge=1, description="walks per tree per network batch in self-play "
                                 "(1 = no virtual loss; the batch is already parallel_games wide)")
    eval_leaves_per_wave: int = Field(8, ge=1, description="walks per tree per batch for the trained agent")
    eval_rollout_weight: float = Field(0.0, ge=0.0, le=1.0, description="the trained agent's leaf value: this "
                                       "share from random playouts, the rest from the network (agents/puct.py "
                                       "MixedEvaluator); self-play always uses the network alone")
    eval_tactics: bool = Field(False, description="the trained agent's leaf values are exact where the game's "
                               "short-tactics check settles them (Game.decided_values_batch)")
    tactics: bool = Field(False, description="the same check at the leaves of the self-play search")
    eval_rollouts: int = Field(1, ge=1, description="random playouts per leaf when eval_rollout_weight > 0")
    dirichlet_alpha: float = Field(0.3, gt=0.0, description="root noise concentration (seed 003: 1)")
    noise: float = Field(0.25, ge=0.0, le=1.0, description="weight of the root noise in self-play")
    temperature_plies: int = Field(8, ge=0, description="plies played at temperature 1, then the most visited")
    parallel_games: int = Field(256, ge=1, description="self-play games side by side (one search batch)")
    window: int = Field(100_000, ge=1, description="replay window in positions")
    batch_size: int = Field(256, ge=1)
    train_every: int = Field(256, ge=1, description="finished games between learning phases")
    updates: int = Field(100, ge=1, description="minibatches per learning phase")
    lr: float = Field(1e-3, gt=0.0, description="Adam learning rate")
    weight_decay: float = Field(1e-4, ge=0.0)
    policy_loss: Literal["cross_entropy", "mse"] = Field("cross_entropy", description="seed 003: mse")
    value_target_q: float = Field(0.0, ge=0.0, le=1.0, description="value target = (1 - w) * game result + w * "
                                  "the root's search value for the mover (0: the result alone, AlphaZero's)")
    symmetry: bool = Field(True, description="train on a random symmetry image of every sampled position")
    gating_games: int = Field(0, ge=0, description="arena games per learning phase (0: no gating)")
    gating_threshold: float = Field(0.55, ge=0.0, le=1.0)
    device: Literal["auto", "cpu", "cuda"] = Field("auto")
    threads: int | None = Field(None, ge=1, description="torch CPU threads; null: 2 (learn/core/device.py "
                                "resolved_threads)")
    checkpoint_every: int = Field(1_000, ge=1, exclude=True, description="games between checkpoints")
    workers: int | None = Field(None, ge=1, exclude=True, description="self-play in this many Ray actors (null: "
                                "$BOARDRL_SELFPLAY_WORKERS, else in-process); not part of the model: the records "
                                "are the same for any count (learn/alphazero_selfplay.py, docs/ray.md)")
    # Gumbel search and playout cap randomization (learn/alphazero.py "Gumbel" and "Playout caps")
    search: Literal["puct", "gumbel"] = Field("puct", description="self-play search: PUCT with root noise and "
                                              "temperature, or Gumbel AlphaZero (Danihelka et al. 2022: "
                                              "sequential halving at the root, completed-Q policy targets; "
                                              "noise, dirichlet_alpha, temperature_plies, c_puct and fpu unused)")
    eval_search: Literal["puct", "gumbel"] = Field("puct", description="the trained agent's search (gumbel: "
                                                   "no Gumbel noise, the best action after sequential halving)")
    considered_actions: int = Field(16, ge=1, description="gumbel: root actions sampled by Gumbel-top-m (m)")
    c_visit: float = Field(50.0, ge=0.0, description="gumbel: sigma(q) = (c_visit + max N) * c_scale * q "
                           "(the paper's 50)")
    c_scale: float = Field(1.0, gt=0.0, description="gumbel: see c_visit (the paper's 1.0; mctx's default 0.1)")
    full_search_share: float = Field(1.0, gt=0.0, le=1.0, description="playout cap randomization (KataGo): the "
                                     "share of moves searched with simulations and stored as policy targets; the "
                                     "others search fast_simulations and are not stored (1: every move full)")
    fast_simulations: int | None = Field(None, ge=1, description="simulations of a move outside the full share; "
                                         "null: max(1, simulations // 4)")

    @model_validator(mode="after")
    def _fast_within_full(self) -> "AlphaZeroParams":
        if self.fast_simulations is not None and self.fast_simulations > self.simulations:
            raise ValueError(f"fast_simulations ({self.fast_simulations}) must not exceed simulations "
                             f"({self.simulations})")
        return self

    @property
    def fast_budget(self) -> int:
        """Simulations of a fast (unrecorded) move."""
        return self.fast_simulations if self.fast_simulations is not None else max(1, self.simulations // 4)

    @field_validator("network")
    @classmethod
    def _known_network(cls, value: str | dict) -> str | dict:
        return check_network_spec(value)


#: learner name -> (params model, unit of the training budget): read by learn/__init__.py without the learner.
LEARNER_PARAMS = {"alphazero": (AlphaZeroParams, "games")}
