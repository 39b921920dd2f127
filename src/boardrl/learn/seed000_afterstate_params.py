"""The params model of reference system 000's Connect 4 afterstate learner (learn/seed000_afterstate.py), apart from
the learner so that validating params.yaml, which every pipeline stage does, never imports torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from boardrl.learn.core.base import Exploration, LearnerParams
from boardrl.nn.presets import PRESETS, check_network_spec

UCI_TABLE = Path("data") / "processed" / "uci.parquet"


class Seed000AfterstateParams(LearnerParams):
    """Defaults reproduce seed 000's experiment 04 (04_c4_ql_uci.py) with its two bugs fixed (module docstring)."""

    games: int = Field(15_000, ge=1, description="training episodes (seed 000: 15,000)")
    network: str | dict[str, Any] = Field(
        "seed000", description=f"a preset ({', '.join(PRESETS)}) or a network config with one q output; "
        "its input is the seed's one 6x7 plane (X +1, O -1, top row first)")
    init: Literal["keras", "torch"] = Field(
        "keras", description="initial weights: keras (the seed's Keras defaults: Glorot-uniform kernels, zero "
        "biases) or torch's defaults")
    gamma: float = Field(0.99, ge=0.0, le=1.0, description="discount of the bootstrapped target (seed 000: 0.99)")
    lr: float = Field(0.001, gt=0.0, description="plain SGD learning rate (seed 000: 0.001)")
    buffer_size: int = Field(20_000, ge=1, description="replay memory in transitions (seed 000's experiment: 20,000)")
    batch_size: int = Field(32, ge=1, description="minibatch: min(replay size, batch_size) distinct transitions, "
                            "one SGD step per environment step from the first transition on")
    exploration: Exploration = Field(
        default_factory=lambda: Exploration(schedule="linear", start=1.0, end=0.1, decay_games=5_000),
        description="epsilon per episode (seed 000: linear 1.0 -> 0.1 over 5,000 episodes, then 0.1)")
    opponent: str = Field("random", description="make_agent spec of the fixed opponent whose reply is folded into "
                          "each transition (seed 000: random)")
    starts: Literal["uci", "initial"] = Field(
        "uci", description="uci: each episode from a uniformly drawn UCI 8-ply position (seed 000); initial: the "
        "empty board")
    uci_path: str = Field(str(UCI_TABLE), description="the UCI table (prepare stage) for starts: uci")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="torch device (auto: CUDA when present)")
    threads: int | None = Field(None, ge=1, description="torch CPU threads; null: 1 (learn/core/device.py "
                                "resolved_threads)")

    @field_validator("network")
    @classmethod
    def _known_network(cls, value: str | dict) -> str | dict:
        return check_network_spec(value)


#: learner name -> (params model, unit of the training budget): read by learn/__init__.py without the learner.
LEARNER_PARAMS = {"seed000_afterstate": (Seed000AfterstateParams, "games")}
