"""An agent that plays from a neural network: masked greedy, softmax or epsilon-greedy over legal actions.

Why one class for every head: a Q or dueling head scores actions by value, a policy/value head by its policy
logits; either way the agent masks illegal actions and picks from the (N, num_actions) scores, in one batched
forward pass for all rows a match or a self-play loop hands it.  Randomness (softmax sampling, epsilon moves)
comes from the numpy ``rng`` the caller passes, so matches stay reproducible from one seed; the network itself
runs in eval mode without gradients.

Saved as ``network.pt`` (the state dict, loaded back with ``weights_only=True`` so a model file cannot run
code) plus ``agent.json`` written last, which holds everything needed to rebuild the network, and the content
hashes (``write_agent_info``).  ``build_checked`` sizes the network agent.json describes on torch's "meta" device
(shapes only, no memory) before building it: a network larger than ``MAX_PARAMETERS`` or than ``network.pt``
can hold is refused instead of allocating gigabytes for weights that are not there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from boardrl.agents.base import Agent
from boardrl.agents.learned import AGENT_FILE, MODEL_FORMAT, ModelError, greedy_rows, write_agent_info
from boardrl.atomic_io import atomic_torch_save
from boardrl.errors import BoardRLError
from boardrl.games.base import Game, random_legal_actions
from boardrl.nn import AnyNetwork, build_network, parse_network_config

WEIGHTS_FILE = "network.pt"
#: The largest network a model may describe: 50 million parameters (200 MB of float32); the project's networks
#: have at most a few hundred thousand.
MAX_PARAMETERS = 50_000_000
AnyNetworkConfig = AnyNetwork


class PolicySettings(BaseModel):
    """How scores become moves: "greedy" (ties to the first legal action), "softmax" at ``temperature`` over
    legal actions, or "epsilon" (a uniform legal move with probability ``epsilon``, else greedy)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: Literal["greedy", "softmax", "epsilon"] = "greedy"
    temperature: float = Field(1.0, gt=0.0)
    epsilon: float = Field(0.0, ge=0.0, le=1.0)


def _policy_settings(policy: str, temperature: float, epsilon: float) -> PolicySettings:
    try:
        return PolicySettings(policy=policy, temperature=temperature, epsilon=epsilon)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise BoardRLError(f"network agent: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def encode_states(game: Game, states: np.ndarray) -> np.ndarray:
    """float32 (N, *encoding_shape) planes; games without ``encode_batch`` fall back to ``encode`` per row."""
    if hasattr(game, "encode_batch"):
        return game.encode_batch(states)
    st = game.state_type
    return np.stack([game.encode(st(*(int(v) for v in row))) for row in states]).astype(np.float32, copy=False)


def greedy_actions(scores: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """argmax over legal actions per row, ties to the first; a legal action even if scores hold -inf or NaN."""
    out = np.empty(scores.shape[0], dtype=np.int64)
    greedy_rows(np.ascontiguousarray(scores, dtype=np.float64), np.ascontiguousarray(legal), out)
    return out


def softmax_actions(
    scores: np.ndarray, legal: np.ndarray, temperature: float, rng: np.random.Generator
) -> np.ndarray:
    """One draw per row from softmax(scores / temperature) restricted to legal actions (one ``rng.random``)."""
    z = np.where(legal, scores.astype(np.float64) / temperature, -np.inf)
    p = np.exp(z - z.max(axis=1, keepdims=True))  # illegal -> exp(-inf) = 0
    cum = np.cumsum(p, axis=1)
    x = rng.random(len(p)) * cum[:, -1]
    hit = cum > x[:, None]  # first True is an action with p > 0
    last_legal = legal.shape[1] - 1 - np.argmax(legal[:, ::-1], axis=1)
    return np.where(hit.any(axis=1), np.argmax(hit, axis=1), last_legal).astype(np.int64)  # guard: rounding


def epsilon_actions(
    scores: np.ndarray, legal: np.ndarray, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """Greedy, except a uniform legal action where ``rng.random() < epsilon`` (always 2N draws)."""
    explore = rng.random(len(scores)) < epsilon
    return np.where(explore, random_legal_actions(legal, rng), greedy_actions(scores, legal)).astype(np.int64)


class NetworkAgent(Agent):
    """Plays from a network built by ``boardrl.nn.build_network`` (see the module docstring)."""

    batched = True
    #: A forward pass on 64 rows costs about what one on a single row does, so a match against a scalar opponent
    #: (perfect, maxmin, the seed-004 players) runs in lock-step (``Agent.wants_batches``, as for an AlphaZero
    #: search): 2x2 seed001_dqn trains in 51 s instead of 67.
    wants_batches = True
    kind = "network"

    def __init__(
        self,
        game: Game,
        network: torch.nn.Module,
        config: AnyNetworkConfig | dict,
        policy: Literal["greedy", "softmax", "epsilon"] = "greedy",
        temperature: float = 1.0,
        epsilon: float = 0.0,
        name: str = "network",
        meta: dict | None = None,
        device: torch.device | str | None = None,
    ) -> None:
        super().__init__(game, name)
        if not isinstance(network, torch.nn.Module):
            raise BoardRLError(f"network agent needs a torch.nn.Module, got {type(network).__name__}")
        self.config = parse_network_config(config)
        self.settings = _policy_settings(policy, temperature, epsilon)
        self.device = torch.device(device) if device is not None else _module_device(network)
        self.network = network.to(self.device)
        self.meta = dict(meta or {})  # saved with the model: how it was trained (deterministic content only)
        self.width = len(game.state_type._fields)

    @property
    def policy(self) -> str:
        return self.settings.policy

    def with_policy(
        self, policy: str, temperature: float = 1.0, epsilon: float = 0.0, name: str | None = None
    ) -> "NetworkAgent":
        """The same network (shared, not copied) played with another policy, e.g. greedy for evaluation."""
        return NetworkAgent(self.game, self.network, self.config, policy, temperature, epsilon,
                            name or self.name, self.meta, self.device)

    # ------------------------------------------------------------------ inference
    def _rows(self, states: np.ndarray) -> np.ndarray:
        rows = np.ascontiguousarray(states, dtype=np.int64)
        if rows.ndim != 2 or rows.shape[1] != self.width:
            raise BoardRLError(f"{self.name}: expected an (N, {self.width}) state array, got shape {rows.shape}")
        return rows

    def _forward(self, rows: np.ndarray) -> Any:
        """Network outputs for the rows, in eval mode without gradients (training mode restored after)."""
        x = torch.from_numpy(encode_states(self.game, rows)).to(self.device)
        was_training = self.network.training
        self.network.eval()
        try:
            with torch.no_grad():
                return self.network(x)
        finally:
            self.network.train(was_training)

    def evaluate_batch(self, states: np.ndarray) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Raw outputs as numpy on the CPU: (N, A) values, or (logits (N, A), value (N,)) for policy_value."""
        out = self._forward(self._rows(states))
        if isinstance(out, tuple):
            return tuple(t.float().cpu().numpy() for t in out)  # type: ignore[return-value]
        return out.float().cpu().numpy()

    def action_scores_batch(self, states: np.ndarray) -> np.ndarray:
        """(N, num_actions) scores the policy picks from: q values, or policy logits for a policy_value head."""
        out = self.evaluate_batch(states)
        scores = out[0] if isinstance(out, tuple) else out
        n = np.shape(states)[0]
        if scores.shape != (n, self.game.num_actions):
            raise BoardRLError(f"{self.name}: network gave scores of shape {scores.shape}, "
                               f"expected {(n, self.game.num_actions)}")
        return scores

    def q_values_batch(self, states: np.ndarray) -> np.ndarray:
        """(N, num_actions) action values of a q or dueling head (illegal actions included, meaningless)."""
        if self.config.head == "policy_value":
            raise BoardRLError(f"{self.name}: a policy_value network has no q values (use action_scores_batch)")
        return self.action_scores_batch(states)

    def value_batch(self, states: np.ndarray) -> np.ndarray:
        """(N,) float64 value of each position for the player to move, clipped to [-1, 1].

        The optional value capability the evaluate stage reads (``evaluate/value_accuracy.py``): for a q or
        dueling head the greedy value max over legal actions of Q (V(s) = max_a Q(s, a) under negamax targets),
        for a policy_value head its tanh value output.  Clipped because a q head without an output activation
        can overshoot the +-1 returns slightly.
        """
        rows = self._rows(states)
        legal = self.game.legal_mask_batch(rows)
        if not legal.any(axis=1).all():
            row = int(np.argmin(legal.any(axis=1)))
            raise BoardRLError(f"{self.name}: no legal move in state row {row}: the game is over, it has no value")
        out = self.evaluate_batch(rows)
        if isinstance(out, tuple):
            values = np.asarray(out[1], dtype=np.float64).reshape(len(rows))
        else:
            values = np.where(legal, np.asarray(out, dtype=np.float64), -np.inf).max(axis=1)
        return np.clip(values, -1.0, 1.0)

    # ------------------------------------------------------------------ acting
    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows = self._rows(states)
        legal = self.game.legal_mask_batch(rows)
        if not legal.any(axis=1).all():
            row = int(np.argmin(legal.any(axis=1)))
            raise BoardRLError(f"{self.name}: no legal move in state row {row}: the game is over")
        scores = self.action_scores_batch(rows)
        s = self.settings
        if s.policy == "softmax":
            return softmax_actions(scores, legal, s.temperature, rng)
        if s.policy == "epsilon":
            return epsilon_actions(scores, legal, s.epsilon, rng)
        return greedy_actions(scores, legal)

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        return int(self.act_batch(np.asarray(state, dtype=np.int64)[None, :], rng)[0])

    # ------------------------------------------------------------------ saving
    def save(self, model_dir: Path) -> None:
        """Write ``network.pt`` and ``agent.json`` (last, so a complete json means a complete model)."""
        model_dir = Path(model_dir)
        model_dir.mkdir(parents=True, exist_ok=True)
        weights = {k: v.detach().cpu() for k, v in self.network.state_dict().items()}
        atomic_torch_save(model_dir / WEIGHTS_FILE, weights)
        g = self.game
        write_agent_info(model_dir, {
            "format": MODEL_FORMAT,
            "kind": self.kind,
            "agent": self.name,
            "game": g.game_id,
            "state_fields": list(g.state_type._fields),
            "num_actions": g.num_actions,
            "encoding_shape": list(g.encoding_shape),
            "network": self.config.model_dump(),
            "policy": self.settings.model_dump(),
            "meta": self.meta,
            **self.extra_info(),
        })

    def extra_info(self) -> dict[str, Any]:
        """More agent.json fields a subclass saves (AlphaZeroAgent: its search settings); none here."""
        return {}

    @classmethod
    def load(
        cls, game: Game, info: dict, model_dir: Path, device: torch.device | str | None = None
    ) -> "NetworkAgent":
        """Rebuild the network from ``info`` (agent.json) and load ``network.pt`` into it (on the CPU by default:
        a match then gives the same moves on every machine)."""
        model_dir = Path(model_dir)
        _check_info(game, info, model_dir)
        try:
            config = parse_network_config(info.get("network"))
            settings = PolicySettings(**(info.get("policy") or {}))
        except (BoardRLError, ValidationError, TypeError) as exc:
            raise ModelError(f"{model_dir / AGENT_FILE}: {str(exc).splitlines()[0]}") from None
        network = build_checked(config, game.encoding_shape, game.num_actions, model_dir / WEIGHTS_FILE)
        load_weights(network, model_dir / WEIGHTS_FILE)
        return cls(game, network, config, settings.policy, settings.temperature, settings.epsilon,
                   name=info["agent"], meta=info.get("meta"), device=device if device is not None else "cpu")


def _module_device(module: torch.nn.Module) -> torch.device:
    """The device of the module's first parameter (CPU for a module without parameters)."""
    for p in module.parameters():
        return p.device
    return torch.device("cpu")


def _check_info(game: Game, info: dict, model_dir: Path) -> None:
    """agent.json must describe this game's action count and encoding (e.g. a changed encoder is refused)."""
    saved = (info.get("num_actions"), info.get("encoding_shape"))
    now = (game.num_actions, list(game.encoding_shape))
    if saved != now:
        raise ModelError(f"{model_dir} was saved for (num_actions, encoding_shape) {saved}, "
                         f"but {game.game_id} has {now}")


def build_checked(config: Any, encoding_shape: tuple[int, int, int], num_actions: int,
                  weights: Path) -> torch.nn.Module:
    """``build_network`` for a saved model, after sizing it on the meta device (see the module docstring)."""
    info = weights.parent / AGENT_FILE
    try:
        with torch.device("meta"):
            shape = build_network(config, encoding_shape, num_actions)
        tensors = [*shape.parameters(), *shape.buffers()]
        count = sum(t.numel() for t in tensors)
        nbytes = sum(t.numel() * t.element_size() for t in tensors)
    except (RuntimeError, ValueError, OverflowError, MemoryError) as exc:
        raise ModelError(f"{info}: its network cannot be built: {str(exc).strip().splitlines()[0]}") from None
    if count > MAX_PARAMETERS:
        raise ModelError(f"{info}: its network has {count:,} parameters; a model may have at most "
                         f"{MAX_PARAMETERS:,}")
    try:
        size = weights.stat().st_size
    except OSError as exc:
        raise ModelError(f"cannot read network weights {weights}: {exc.strerror or exc}") from None
    if nbytes > size:
        raise ModelError(f"{info}: its network needs {nbytes:,} bytes of weights but {weights.name} holds only "
                         f"{size:,} bytes")
    return build_network(config, encoding_shape, num_actions)


def load_weights(network: torch.nn.Module, path: Path) -> None:
    """Load a saved state dict into ``network``; one-line ``ModelError`` for a missing, corrupt or unfitting file."""
    try:
        weights = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for damaged files (RuntimeError, UnpicklingError, EOFError)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ModelError(f"cannot read network weights {path}: {first}") from None
    expected = network.state_dict()
    if not isinstance(weights, dict) or not all(isinstance(v, torch.Tensor) for v in weights.values()):
        raise ModelError(f"{path} does not hold a state dict of tensors")
    if set(weights) != set(expected):
        diff = sorted(set(weights) ^ set(expected))
        shown = ", ".join(diff[:4]) + (", ..." if len(diff) > 4 else "")
        raise ModelError(f"{path} does not fit the network config: parameter names differ ({shown})")
    for key, tensor in expected.items():
        if weights[key].shape != tensor.shape:
            raise ModelError(f"{path} does not fit the network config: {key} has shape {tuple(weights[key].shape)}, "
                             f"expected {tuple(tensor.shape)}")
    network.load_state_dict(weights)
