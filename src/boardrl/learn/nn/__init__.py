"""Neural-network building blocks for the learners, chosen by parameters (CleanRL-sized, one concept a module).

``NetworkConfig`` says which body (mlp, conv, residual, conv_stack, inception) and head (q, dueling,
policy_value) to use; ``build_network(config, game.encoding_shape, game.num_actions)`` builds it.  config.py
holds the data, presets.py the named nets (the seeds' and our default per game), blocks.py the bodies, heads.py
the heads, build.py the assembly.
"""

from __future__ import annotations

from boardrl.learn.nn.build import BoardNet, build_network
from boardrl.learn.nn.config import (
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
from boardrl.learn.nn.presets import PRESETS, network_preset

__all__ = [
    "AnyNetwork", "BoardNet", "ConvConfig", "ConvLayer", "ConvStackConfig", "HeadKind", "InceptionConfig",
    "MLPConfig", "NetworkConfig", "PRESETS", "ResidualConfig", "build_network", "default_network_config",
    "network_preset", "parse_network_config",
]
