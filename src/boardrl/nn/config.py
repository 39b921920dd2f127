"""Which network to build, as plain data: a pydantic model per body, told apart by the ``body`` field.

Why data and not code: the network is part of an experiment's configuration (YAML in the pipeline, agent.json
in a saved model), so it has to round-trip through ``model_dump`` / ``parse_network_config`` exactly and refuse
typos (``extra="forbid"``).  Every body shares the head fields, so ``{"body": "conv", "head": "dueling"}`` is a
complete config and any body goes with any head.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from boardrl.errors import BoardRLError

HeadKind = Literal["q", "dueling", "policy_value"]
PositiveInt = Annotated[int, Field(ge=1)]


class _NetworkBase(BaseModel):
    """Head fields shared by every body.

    ``head``: "q" (one value per action), "dueling" (V + A - mean A), "policy_value" (logits and a tanh value).
    ``head_hidden``: width of one hidden layer in each head stream; 0 means the stream is a single linear layer.
    ``value_activation``: squashing of q/dueling outputs ("tanh" fits game results in [-1, 1]); the
    policy_value head's value is always tanh, so it must stay "none" there.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    head: HeadKind = "q"
    head_hidden: int = Field(0, ge=0)
    value_activation: Literal["none", "tanh"] = "none"

    @model_validator(mode="after")
    def _value_activation_fits_head(self) -> "_NetworkBase":
        if self.head == "policy_value" and self.value_activation != "none":
            raise ValueError("value_activation applies to q and dueling heads; the policy_value value is always tanh")
        return self


class MLPConfig(_NetworkBase):
    """Fully connected layers on the flattened planes: fast, fine for tiny boards (tic-tac-toe)."""

    body: Literal["mlp"] = "mlp"
    hidden: list[PositiveInt] = Field(default_factory=lambda: [128, 128])
    activation: Literal["relu", "tanh"] = "relu"


class ConvConfig(_NetworkBase):
    """Plain convolutions with "same" padding (board size kept), ReLU after each, then flattened."""

    body: Literal["conv"] = "conv"
    channels: Annotated[list[PositiveInt], Field(min_length=1)] = Field(default_factory=lambda: [64, 64])
    kernel_size: int = Field(3, ge=1, le=9, description="odd, so 'same' padding is symmetric")

    @field_validator("kernel_size")
    @classmethod
    def _odd(cls, k: int) -> int:
        if k % 2 == 0:
            raise ValueError(f"kernel_size must be odd (symmetric 'same' padding), got {k}")
        return k


class ResidualConfig(_NetworkBase):
    """AlphaZero-style tower: a 3x3 conv stem, then ``blocks`` residual blocks (conv-BN-ReLU-conv-BN + skip)."""

    body: Literal["residual"] = "residual"
    channels: int = Field(64, ge=1)
    blocks: int = Field(4, ge=0)


class ConvLayer(BaseModel):
    """One convolution of a ``conv_stack``: ``channels`` filters of ``kernel`` x ``kernel``, zero ``padding``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    channels: int = Field(ge=1)
    kernel: int = Field(3, ge=1, le=9)
    padding: int = Field(0, ge=0, le=4)


class ConvStackConfig(_NetworkBase):
    """Convolutions with explicit kernel and padding (the seeds' nets: "valid" layers shrink the board), each
    followed by ReLU and, with ``batch_norm``, BatchNorm where the layer's output is larger than 1x1 (seed 002's
    Conv -> ReLU -> BN order); then flatten and dense layers (``dense_activation`` after each; seed 000's
    Dense 256 has none)."""

    body: Literal["conv_stack"] = "conv_stack"
    layers: Annotated[list[ConvLayer], Field(min_length=1)]
    batch_norm: bool = False
    dense: list[PositiveInt] = Field(default_factory=list)
    dense_activation: Literal["relu", "elu", "none"] = "relu"


class InceptionConfig(_NetworkBase):
    """Seed 001's DQN_CMM body: per block a 1x1 and a 3x3 "same" conv (ELU each) side by side, concatenated,
    ELU again; ``branches[k]`` channels in each branch of block k (seed: 16, 32); then dense layers with ELU.
    ``init: truncated_normal`` draws weights from N(0, 0.1) cut at 2 sd, biases 0 (the seed's initialiser)."""

    body: Literal["inception"] = "inception"
    branches: Annotated[list[PositiveInt], Field(min_length=1)] = Field(default_factory=lambda: [16, 32])
    dense: list[PositiveInt] = Field(default_factory=lambda: [256, 256])
    init: Literal["default", "truncated_normal"] = "truncated_normal"


AnyNetwork = Union[MLPConfig, ConvConfig, ResidualConfig, ConvStackConfig, InceptionConfig]
_CONFIG_TYPES = (MLPConfig, ConvConfig, ResidualConfig, ConvStackConfig, InceptionConfig)
#: Any network config; pydantic picks the model from the ``body`` field.
NetworkConfig = Annotated[AnyNetwork, Field(discriminator="body")]
_ADAPTER: TypeAdapter = TypeAdapter(NetworkConfig)


def default_network_config() -> ConvConfig:
    """A small conv net with a Q head: a reasonable start on every board, not tuned per game."""
    return ConvConfig()


def parse_network_config(data: Any) -> AnyNetwork:
    """A config from a dict (e.g. agent.json's ``network``) or a config; one-line ``BoardRLError`` otherwise."""
    if isinstance(data, _CONFIG_TYPES):
        return data
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "config"
        raise BoardRLError(f"network config: {where}: {err['msg']}") from None
