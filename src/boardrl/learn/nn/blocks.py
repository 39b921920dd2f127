"""Network bodies: planes (N, C, H, W) in, a flat feature vector (N, F) out.

Why flat features: every head then works with every body, and the feature count is known from the config
alone (no dummy forward pass, which would also disturb batch-norm statistics).
"""

from __future__ import annotations

import math

from torch import Tensor, nn

from boardrl.learn.nn.config import ConvConfig, MLPConfig, ResidualConfig

_ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh}


def mlp_body(config: MLPConfig, encoding_shape: tuple[int, int, int]) -> tuple[nn.Module, int]:
    """Flatten, then Linear + activation per hidden size; returns (module, feature count)."""
    layers: list[nn.Module] = [nn.Flatten()]
    width = math.prod(encoding_shape)
    for size in config.hidden:
        layers += [nn.Linear(width, size), _ACTIVATIONS[config.activation]()]
        width = size
    return nn.Sequential(*layers), width


def conv_body(config: ConvConfig, encoding_shape: tuple[int, int, int]) -> tuple[nn.Module, int]:
    """Conv + ReLU per channel count, "same" padding so the board keeps its size, then flatten."""
    planes, height, width = encoding_shape
    layers: list[nn.Module] = []
    for channels in config.channels:
        layers += [nn.Conv2d(planes, channels, config.kernel_size, padding="same"), nn.ReLU()]
        planes = channels
    layers.append(nn.Flatten())
    return nn.Sequential(*layers), planes * height * width


def conv_bn(in_channels: int, out_channels: int) -> nn.Sequential:
    """3x3 conv (no bias: batch norm adds its own) followed by batch norm."""
    return nn.Sequential(nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False), nn.BatchNorm2d(out_channels))


class ResidualBlock(nn.Module):
    """relu(x + bn(conv(relu(bn(conv(x)))))): the skip lets deep towers train."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.first = conv_bn(channels, channels)
        self.second = conv_bn(channels, channels)

    def forward(self, x: Tensor) -> Tensor:
        return (x + self.second(self.first(x).relu())).relu()


def residual_body(config: ResidualConfig, encoding_shape: tuple[int, int, int]) -> tuple[nn.Module, int]:
    """Stem conv-BN-ReLU to ``channels``, ``blocks`` residual blocks, then flatten."""
    planes, height, width = encoding_shape
    layers: list[nn.Module] = [conv_bn(planes, config.channels), nn.ReLU()]
    layers += [ResidualBlock(config.channels) for _ in range(config.blocks)]
    layers.append(nn.Flatten())
    return nn.Sequential(*layers), config.channels * height * width


def make_body(
    config: MLPConfig | ConvConfig | ResidualConfig, encoding_shape: tuple[int, int, int]
) -> tuple[nn.Module, int]:
    """The body the config names and its output feature count."""
    builders = {"mlp": mlp_body, "conv": conv_body, "residual": residual_body}
    return builders[config.body](config, encoding_shape)
