"""Network building blocks: every body with every head on every game's planes, the dueling identity, training."""

from __future__ import annotations

import pytest
import torch

from boardrl.errors import BoardRLError
from boardrl.games import make_game
from boardrl.learn.core.device import DEFAULT_THREADS, pick_device, torch_threads
from boardrl.nn import (
    PRESETS, ConvConfig, MLPConfig, ResidualConfig, build_network, default_network_config, network_preset,
    parse_network_config,
)
from boardrl.nn.blocks import InceptionBlock

GAMES = ["tictactoe", "connect4", "dots_and_boxes_3x3", "conniption"]
BODIES = [
    {"body": "mlp", "hidden": [16, 8]},
    {"body": "mlp", "hidden": [8], "activation": "tanh"},
    {"body": "conv", "channels": [4, 6], "kernel_size": 3},
    {"body": "conv", "channels": [4], "kernel_size": 5},  # larger than a 3x3 board: "same" padding copes
    {"body": "residual", "channels": 4, "blocks": 2},
    {"body": "conv_stack", "layers": [{"channels": 4, "kernel": 3, "padding": 1}], "batch_norm": True, "dense": [6]},
    {"body": "inception", "branches": [3], "dense": [5]},
]
HEADS = [{"head": "q"}, {"head": "q", "value_activation": "tanh", "head_hidden": 5}, {"head": "dueling"},
         {"head": "policy_value", "head_hidden": 3}]


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize("body", BODIES, ids=lambda b: f"{b['body']}{len(b)}")
@pytest.mark.parametrize("head", HEADS, ids=lambda h: "-".join(map(str, h.values())))
def test_every_body_and_head_builds_with_the_right_output_shapes(game_id, body, head):
    game = make_game(game_id)
    net = build_network({**body, **head}, game.encoding_shape, game.num_actions)
    out = net(torch.randn(5, *game.encoding_shape))
    if head["head"] == "policy_value":
        logits, value = out
        assert logits.shape == (5, game.num_actions) and value.shape == (5,)
        assert value.abs().max() <= 1
    else:
        assert out.shape == (5, game.num_actions)
        if head.get("value_activation") == "tanh":
            assert out.abs().max() <= 1


def test_dueling_output_minus_value_has_zero_mean_over_actions():
    torch.manual_seed(0)
    net = build_network(MLPConfig(hidden=[16], head="dueling", head_hidden=8), (2, 3, 3), 9)
    x = torch.randn(7, 2, 3, 3)
    q = net(x)
    v, a = net.head.streams(net.body(x))
    centred = q - v.unsqueeze(-1)
    assert torch.allclose(centred.mean(dim=1), torch.zeros(7), atol=1e-6)
    assert torch.allclose(centred, a - a.mean(dim=1, keepdim=True), atol=1e-6)


@pytest.mark.parametrize("config", [MLPConfig(head="q"), ConvConfig(channels=[4], head="dueling"),
                                    ResidualConfig(channels=4, blocks=1, head="policy_value")],
                         ids=["mlp", "conv", "residual"])
def test_one_optimizer_step_changes_every_parameter(config):
    torch.manual_seed(0)
    net = build_network(config, (2, 6, 7), 7)
    before = [p.detach().clone() for p in net.parameters()]
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    out = net(torch.randn(8, 2, 6, 7))
    loss = out[0].pow(2).mean() + (out[1] - 0.5).pow(2).mean() if isinstance(out, tuple) else out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    changed = [not torch.equal(b, p) for b, p in zip(before, net.parameters())]
    assert all(changed)


@pytest.mark.parametrize("body", [b for b in BODIES if b["body"] != "mlp"], ids=lambda b: f"{b['body']}{len(b)}")
def test_convolution_weights_are_channels_last_and_compute_the_same_function(body):
    torch.manual_seed(0)
    net = build_network({**body, "head": "policy_value"}, (3, 6, 7), 7)
    kernels = [p for p in net.parameters() if p.dim() == 4]
    assert kernels and all(p.is_contiguous(memory_format=torch.channels_last) for p in kernels)
    net.eval()
    plain = build_network({**body, "head": "policy_value"}, (3, 6, 7), 7)
    plain.load_state_dict({k: v.contiguous() for k, v in net.state_dict().items()})
    plain.eval()
    for p in plain.parameters():  # load_state_dict copies values into the channels-last parameters: undo it
        p.data = p.data.contiguous()
    assert not all(p.is_contiguous(memory_format=torch.channels_last) for p in plain.parameters() if p.dim() == 4)
    x = torch.randn(9, 3, 6, 7)
    with torch.no_grad():
        (logits, value), (plain_logits, plain_value) = net(x), plain(x)
    assert torch.allclose(logits, plain_logits, atol=1e-5) and torch.allclose(value, plain_value, atol=1e-5)


def test_a_perceptron_keeps_its_plain_layout():
    net = build_network(MLPConfig(hidden=[8], head="q"), (2, 3, 3), 9)
    assert all(p.is_contiguous() for p in net.parameters())


def test_config_round_trips_and_refuses_bad_input():
    configs = (MLPConfig(), ConvConfig(head="dueling"), ResidualConfig(head="policy_value"), default_network_config())
    for config in configs:
        assert parse_network_config(config.model_dump()) == config
    with pytest.raises(BoardRLError, match="body"):
        parse_network_config({"body": "transformer"})
    with pytest.raises(BoardRLError, match="hiden"):
        parse_network_config({"body": "mlp", "hiden": [4]})
    with pytest.raises(BoardRLError, match="odd"):
        parse_network_config({"body": "conv", "kernel_size": 4})
    with pytest.raises(BoardRLError, match="always tanh"):
        parse_network_config({"body": "mlp", "head": "policy_value", "value_activation": "tanh"})
    with pytest.raises(BoardRLError, match="encoding_shape"):
        build_network(MLPConfig(), (3, 3), 9)
    net = build_network(MLPConfig(), (2, 3, 3), 9)
    with pytest.raises(BoardRLError, match="input has shape"):
        net(torch.zeros(1, 2, 6, 7))


def test_pick_device():
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(BoardRLError, match="unknown device"):
        pick_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(BoardRLError, match="no CUDA"):
            pick_device("cuda")


def test_torch_threads_asked_for_then_environment_then_a_constant(monkeypatch):
    before = torch.get_num_threads()
    try:
        monkeypatch.delenv("BOARDRL_TORCH_THREADS", raising=False)
        assert torch_threads() == torch.get_num_threads() == DEFAULT_THREADS  # never the machine's cores
        monkeypatch.setenv("BOARDRL_TORCH_THREADS", "1")
        assert torch_threads() == torch.get_num_threads() == 1
        assert torch_threads(2) == torch.get_num_threads() == 2
        monkeypatch.setenv("BOARDRL_TORCH_THREADS", "two")
        with pytest.raises(BoardRLError, match="BOARDRL_TORCH_THREADS must be a positive integer, got 'two'"):
            torch_threads()
    finally:
        torch.set_num_threads(before)


# ---------------------------------------------------------------------------------------------- the seeds' nets
@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_builds_its_network_on_every_game(game_id, preset):
    """Q presets give one (N, A) output; policy/value presets (AlphaZero) give logits (N, A) and values (N,)."""
    game = make_game(game_id)
    config = network_preset(preset, game.encoding_shape)
    assert parse_network_config(config.model_dump()) == config
    net = build_network(config, game.encoding_shape, game.num_actions).eval()
    out = net(torch.zeros(2, *game.encoding_shape))
    if config.head == "policy_value":
        logits, value = out
        assert logits.shape == (2, game.num_actions) and value.shape == (2,)
        assert bool(((value >= -1) & (value <= 1)).all())
    else:
        assert out.shape == (2, game.num_actions)


def test_seed_architectures_have_the_seeds_layer_shapes():
    c4, ttt = make_game("connect4"), make_game("tictactoe")
    s0 = build_network(network_preset("seed000", c4.encoding_shape), c4.encoding_shape, 7)
    convs = [m for m in s0.body if isinstance(m, torch.nn.Conv2d)]
    expected = [(64, (3, 3), (0, 0))] + [(64, (3, 3), (1, 1))] * 3
    assert [(c.out_channels, c.kernel_size, c.padding) for c in convs] == expected
    dense = [m for m in s0.body if isinstance(m, torch.nn.Linear)]
    assert [(d.in_features, d.out_features) for d in dense] == [(64 * 4 * 5, 256)]  # 6x7 'valid' 3x3 -> 4x5
    assert not any(isinstance(m, (torch.nn.ReLU, torch.nn.ELU)) for m in list(s0.body)[-1:])  # Dense 256: linear
    assert s0(torch.randn(4, 2, 6, 7) * 50).abs().max() <= 1  # tanh outputs
    t2 = build_network(network_preset("seed002", ttt.encoding_shape), ttt.encoding_shape, 9)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in t2.modules())  # 1x1 outputs: no BN
    assert t2.config.head == "dueling"
    c2 = build_network(network_preset("seed002", c4.encoding_shape), c4.encoding_shape, 7)
    assert sum(isinstance(m, torch.nn.BatchNorm2d) for m in c2.modules()) == 3
    assert c2.head.value.in_features == 16 * 2 * 3
    torch.manual_seed(0)
    s1 = build_network(network_preset("seed001", (5, 7, 7)), (5, 7, 7), 24)
    weights = [m.weight for m in s1.body.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    assert all(w.abs().max() <= 0.2 for w in weights)  # truncated normal, sd 0.1, cut at 2 sd
    assert [m.one.out_channels for m in s1.body if isinstance(m, InceptionBlock)] == [16, 32]


def test_conv_stack_refuses_a_kernel_larger_than_the_board_and_unknown_presets():
    with pytest.raises(BoardRLError, match="leaves no cells"):
        build_network({"body": "conv_stack", "layers": [{"channels": 4, "kernel": 5}]}, (2, 3, 3), 9)
    with pytest.raises(BoardRLError, match="unknown network preset"):
        network_preset("seed9", (2, 3, 3))
