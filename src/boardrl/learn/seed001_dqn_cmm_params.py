"""The params model of reference system 001's DQN_CMM learner (learn/seed001_dqn_cmm.py), apart from the learner so
that validating params.yaml, which every pipeline stage does, never imports torch."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from boardrl.learn.core.base import LearnerParams
from boardrl.nn.presets import PRESETS, check_network_spec


class Seed001DqnCmmParams(LearnerParams):
    """Defaults reproduce reference system 001's code (mattdeak/dots-boxes-RL at HEAD; SEEDS.md seed 001)."""

    games: int = Field(1_000_000, ge=1, description="training games against the frozen copy (the system: 1,000,000 "
                       "on 4x4 boxes)")
    network: str | dict[str, Any] = Field(
        "seed001", description=f"a preset ({', '.join(PRESETS)}) or a network config with a q head (one output "
        "per edge); seed001 is the system's DQN_CMM (inception 16+16, 32+32, FC 256 ELU x 2, tanh outputs)")
    lr: float = Field(1e-6, gt=0.0, description="RMSProp learning rate (the system's final model: 1e-6; "
                      "anything above 1e-5 diverged)")
    rms_decay: float = Field(0.9, ge=0.0, lt=1.0, description="RMSProp decay of the mean square (TF1's default)")
    rms_epsilon: float = Field(1e-10, ge=0.0, description="RMSProp epsilon, inside the square root (TF1's default)")
    clip_grad_value: float = Field(1.0, gt=0.0, description="each gradient clamped to +-value (the system: 1)")
    gamma: float = Field(0.6, ge=0.0, le=1.0, description="discount of the conditional-minimax target (the "
                         "system: 0.6)")
    epsilon: float = Field(0.05, ge=0.0, le=1.0, description="exploration of the learning agent, constant (the "
                           "system: 0.05); the frozen copy never explores")
    buffer_size: int = Field(20_000, ge=1, description="replay table in transitions (the system: 20,000)")
    learning_starts: int = Field(10_000, ge=1, description="recorded transitions before the first minibatch (the "
                                 "system: half the table, 10,000)")
    batch_size: int = Field(100, ge=1, description="transitions per minibatch, drawn uniformly with replacement; one "
                            "minibatch per recorded transition (the system: 100)")
    next_max: Literal["all", "legal"] = Field(
        "all", description="max over a' of Q(s', a') in the target: over all outputs (the system's "
        "q_next.max(axis=1), drawn edges included) or over the undrawn edges of s' only")
    update_step: int = Field(25_000, ge=1, description="games between copies of the learner's weights into the "
                             "frozen opponent (the system's HEAD: 25,000; its paper: 1,000, later 5,000-10,000)")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="torch device (auto: CUDA when present)")
    threads: int | None = Field(None, ge=1, description="torch CPU threads; null: 1 (learn/core/device.py "
                                "resolved_threads)")

    @field_validator("network")
    @classmethod
    def _known_network(cls, value: str | dict) -> str | dict:
        return check_network_spec(value)


#: learner name -> (params model, unit of the training budget): read by learn/__init__.py without the learner.
LEARNER_PARAMS = {"seed001_dqn_cmm": (Seed001DqnCmmParams, "games")}
