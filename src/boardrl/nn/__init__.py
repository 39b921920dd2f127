"""Neural-network building blocks for the learners, chosen by parameters (CleanRL-sized, one concept a module).

``NetworkConfig`` says which body (mlp, conv, residual, conv_stack, inception) and head (q, dueling,
policy_value) to use; ``build_network(config, game.encoding_shape, game.num_actions)`` builds it.  config.py
holds the data, presets.py the named nets (the seeds' and our default per game), blocks.py the bodies, heads.py
the heads, build.py the assembly.
"""

from __future__ import annotations

from typing import Any

from boardrl.nn.config import (
    AnyNetwork,
    ConvConfig,
    ConvLayer,
    ConvStackConfig,
    HeadKind,
    InceptionConfig,
    MLPConfig,
    NetworkConfig,
    ResidualConfig,
    default_network_config,
    parse_network_config,
)
from boardrl.nn.presets import PRESETS, network_preset

_TORCH_NAMES = ("BoardNet", "build_network")


def __getattr__(name: str) -> Any:
    """``BoardNet`` and ``build_network`` import torch on first use: validating params (every pipeline stage)
    reads the configs and presets only, and importing torch costs each stage about 1.4 s (measured)."""
    if name in _TORCH_NAMES:
        from boardrl.nn import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "AnyNetwork", "BoardNet", "ConvConfig", "ConvLayer", "ConvStackConfig", "HeadKind", "InceptionConfig",
    "MLPConfig", "NetworkConfig", "PRESETS", "ResidualConfig", "build_network", "default_network_config",
    "network_preset", "parse_network_config",
]
