"""Named networks: the seeds' architectures and our default per game, as ``NetworkConfig`` data.

Why names: an experiment says ``network: seed002`` instead of spelling out a layer list, and the name resolves
to a full config that is saved with the model (agent.json), so a model never depends on what a name means later.

- ``seed000``: seed 000's Connect 4 CNN (SEEDS.md, seed 000 "Network"): conv 64@3x3 valid, 3 x conv 64@3x3 same,
  Dense 256 without activation, then tanh outputs.  The seed's net is an *afterstate value* V(s o a) with one
  output; for DQN the same body ends in a Q head (one tanh output per action) -- documented difference.
- ``seed001``: seed 001's DQN_CMM (inception blocks 16+16 and 32+32, FC 256 ELU x 2, tanh per action),
  truncated-normal init.  The seed's input is s x s x 4 box walls; ours is the game's (5, 2s+1, 2s+1) planes.
- ``seed002``: seed 002's dueling conv nets with BN where the output is not 1x1.  Boards of height 3
  (tic-tac-toe): conv 64@3x3 p0 -> conv 32@1x1; larger boards (Connect 4): conv 32@5x5 p0, 32@3x3 p1,
  16@3x3 p1.  The seed's Connect 4 input is transposed (2, 7, 6); ours (2, 6, 7) gives 2x3x16 instead of
  3x2x16 features, the same count.
- ``seed003``: seed 003's Q-network MLP 54-54-27 (ReLU) with tanh outputs; the seed has 18 outputs (white and
  black actions), negamax needs only the mover's 9.
- ``alphazero``: our policy/value nets for AlphaZero.  Tiny boards: seed 003's MLP 256-128-64 with a policy
  and a tanh value head; larger boards: a residual tower of 3 blocks x 32 channels with 64-unit head layers
  (about 11 ms per 256 positions on one core of this machine: search speed bounds the whole learner).
- ``default``: ours.  Tiny boards (at most 3 cells high: tic-tac-toe): MLP 128-128; larger boards: a small
  conv net (32-32 channels, 3x3 same) with a 128-unit head layer -- chosen for CPU throughput (see dqn.py).
"""

from __future__ import annotations

from typing import Callable

from boardrl.errors import BoardRLError
from boardrl.nn.config import (
    AnyNetwork, ConvConfig, ConvLayer, ConvStackConfig, InceptionConfig, MLPConfig, ResidualConfig,
    parse_network_config,
)


def seed000(encoding_shape: tuple[int, int, int]) -> AnyNetwork:
    layers = [ConvLayer(channels=64, kernel=3, padding=0)] + [ConvLayer(channels=64, kernel=3, padding=1)] * 3
    return ConvStackConfig(layers=layers, dense=[256], dense_activation="none", head="q", value_activation="tanh")


def seed001(encoding_shape: tuple[int, int, int]) -> AnyNetwork:
    return InceptionConfig(head="q", value_activation="tanh")


def seed002(encoding_shape: tuple[int, int, int]) -> AnyNetwork:
    if encoding_shape[1] <= 3:
        layers = [ConvLayer(channels=64, kernel=3, padding=0), ConvLayer(channels=32, kernel=1, padding=0)]
    else:
        layers = [ConvLayer(channels=32, kernel=5, padding=0), ConvLayer(channels=32, kernel=3, padding=1),
                  ConvLayer(channels=16, kernel=3, padding=1)]
    return ConvStackConfig(layers=layers, batch_norm=True, head="dueling")


def seed003(encoding_shape: tuple[int, int, int]) -> AnyNetwork:
    return MLPConfig(hidden=[54, 54, 27], activation="relu", head="q", value_activation="tanh")


def default(encoding_shape: tuple[int, int, int]) -> AnyNetwork:
    if encoding_shape[1] <= 3:
        return MLPConfig(hidden=[128, 128], head="q")
    return ConvConfig(channels=[32, 32], kernel_size=3, head="q", head_hidden=128)


def alphazero(encoding_shape: tuple[int, int, int]) -> AnyNetwork:
    if encoding_shape[1] <= 3:
        return MLPConfig(hidden=[256, 128, 64], head="policy_value")
    return ResidualConfig(channels=32, blocks=3, head="policy_value", head_hidden=64)


PRESETS: dict[str, Callable[[tuple[int, int, int]], AnyNetwork]] = {
    "default": default, "seed000": seed000, "seed001": seed001, "seed002": seed002, "seed003": seed003,
    "alphazero": alphazero,
}


def network_preset(name: str, encoding_shape: tuple[int, int, int]) -> AnyNetwork:
    """The config a preset name stands for on a board of ``encoding_shape``; one-line error for unknown names."""
    if name not in PRESETS:
        raise BoardRLError(f"unknown network preset {name!r}; choose one of: {', '.join(PRESETS)}")
    return PRESETS[name](tuple(encoding_shape))


def check_network_spec(value: str | dict) -> str | dict:
    """A learner's ``network`` param as given, or ValueError (pydantic's) naming the unknown preset or the fault.

    One check for every learner with a ``network`` param, so they accept and refuse the same specs.
    """
    if isinstance(value, str):
        if value not in PRESETS:
            raise ValueError(f"unknown network preset {value!r}; choose one of: {', '.join(PRESETS)}")
    else:
        try:
            parse_network_config(value)
        except BoardRLError as exc:
            raise ValueError(str(exc)) from None
    return value
