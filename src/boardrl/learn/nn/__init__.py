"""Neural-network building blocks for the learners, chosen by parameters (CleanRL-sized, one concept a module).

``NetworkConfig`` says which body (mlp, conv, residual) and head (q, dueling, policy_value) to use;
``build_network(config, game.encoding_shape, game.num_actions)`` builds it.  config.py holds the data,
blocks.py the bodies, heads.py the heads, build.py the assembly.
"""

from __future__ import annotations

from boardrl.learn.nn.build import BoardNet, build_network
from boardrl.learn.nn.config import (
    ConvConfig,
    HeadKind,
    MLPConfig,
    NetworkConfig,
    ResidualConfig,
    default_network_config,
    parse_network_config,
)

__all__ = [
    "BoardNet", "ConvConfig", "HeadKind", "MLPConfig", "NetworkConfig", "ResidualConfig", "build_network",
    "default_network_config", "parse_network_config",
]
