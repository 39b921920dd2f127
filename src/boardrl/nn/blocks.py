"""Network bodies: planes (N, C, H, W) in, a flat feature vector (N, F) out.

Why flat features: every head then works with every body, and the feature count is known from the config
alone (no dummy forward pass, which would also disturb batch-norm statistics).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from boardrl.errors import BoardRLError

from boardrl.nn.config import (
    AnyNetwork, ConvConfig, ConvStackConfig, InceptionConfig, MLPConfig, ResidualConfig,
)

_ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU, "none": nn.Identity}


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


def dense_layers(width: int, sizes: list[int], activation: str) -> tuple[list[nn.Module], int]:
    """Linear + activation per size (``"none"``: a purely linear layer); returns (layers, output width)."""
    layers: list[nn.Module] = []
    for size in sizes:
        layers += [nn.Linear(width, size), _ACTIVATIONS[activation]()]
        width = size
    return layers, width


def conv_stack_body(config: ConvStackConfig, encoding_shape: tuple[int, int, int]) -> tuple[nn.Module, int]:
    """Conv (explicit kernel/padding) + ReLU [+ BN where the output is not 1x1] per layer, flatten, dense."""
    planes, height, width = encoding_shape
    layers: list[nn.Module] = []
    for layer in config.layers:
        height = height + 2 * layer.padding - layer.kernel + 1
        width = width + 2 * layer.padding - layer.kernel + 1
        if height < 1 or width < 1:
            raise BoardRLError(f"conv_stack layer {layer.model_dump()} leaves no cells of the {encoding_shape} "
                               "input (reduce the kernel or add padding)")
        layers += [nn.Conv2d(planes, layer.channels, layer.kernel, padding=layer.padding), nn.ReLU()]
        if config.batch_norm and height * width > 1:
            layers.append(nn.BatchNorm2d(layer.channels))
        planes = layer.channels
    layers.append(nn.Flatten())
    dense, features = dense_layers(planes * height * width, config.dense, config.dense_activation)
    return nn.Sequential(*layers, *dense), features


class InceptionBlock(nn.Module):
    """elu(concat(elu(conv1x1(x)), elu(conv3x3(x)))): seed 001's block (the outer ELU is the seed's too)."""

    def __init__(self, in_channels: int, branch_channels: int) -> None:
        super().__init__()
        self.one = nn.Conv2d(in_channels, branch_channels, 1)
        self.three = nn.Conv2d(in_channels, branch_channels, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        return nn.functional.elu(torch.cat([nn.functional.elu(self.one(x)), nn.functional.elu(self.three(x))], 1))


def _truncated_normal_(module: nn.Module) -> None:
    """Seed 001's initialiser: weights N(0, 0.1) truncated at 2 sd (TensorFlow's), biases 0."""
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.trunc_normal_(m.weight, std=0.1, a=-0.2, b=0.2)
            nn.init.zeros_(m.bias)


def inception_body(config: InceptionConfig, encoding_shape: tuple[int, int, int]) -> tuple[nn.Module, int]:
    """Inception blocks on the planes (board size kept), flatten, dense layers with ELU."""
    planes, height, width = encoding_shape
    layers: list[nn.Module] = []
    for branch in config.branches:
        layers.append(InceptionBlock(planes, branch))
        planes = 2 * branch
    layers.append(nn.Flatten())
    dense, features = dense_layers(planes * height * width, config.dense, "elu")
    body = nn.Sequential(*layers, *dense)
    if config.init == "truncated_normal":
        _truncated_normal_(body)
    return body, features


def make_body(config: AnyNetwork, encoding_shape: tuple[int, int, int]) -> tuple[nn.Module, int]:
    """The body the config names and its output feature count."""
    builders = {"mlp": mlp_body, "conv": conv_body, "residual": residual_body, "conv_stack": conv_stack_body,
                "inception": inception_body}
    return builders[config.body](config, encoding_shape)
