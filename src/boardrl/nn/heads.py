"""Network heads: flat features (N, F) in, action values or (policy logits, value) out.

Q and dueling heads return (N, A): the value of each action for the player to move.  The policy/value head
returns a tuple (logits (N, A), value (N,)), AlphaZero's two outputs.  Illegal actions are *not* masked here:
the head knows nothing of the game; agents and learners mask with the game's legal mask.
"""

from __future__ import annotations

from torch import Tensor, nn


def stream(in_features: int, hidden: int, out_features: int) -> nn.Module:
    """A linear layer, or Linear-ReLU-Linear when ``hidden`` > 0."""
    if hidden <= 0:
        return nn.Linear(in_features, out_features)
    return nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out_features))


def _squash(x: Tensor, activation: str) -> Tensor:
    return x.tanh() if activation == "tanh" else x


class QHead(nn.Module):
    """One output per action."""

    def __init__(self, features: int, num_actions: int, hidden: int, value_activation: str) -> None:
        super().__init__()
        self.q = stream(features, hidden, num_actions)
        self.value_activation = value_activation

    def forward(self, features: Tensor) -> Tensor:
        return _squash(self.q(features), self.value_activation)


class DuelingHead(nn.Module):
    """Q = V + A - mean(A): the state value is learned once, shared by all actions (Wang et al. 2016).

    The mean runs over *all* actions, legal or not, so the combination does not depend on the position's
    legal set (the standard form; illegal actions are masked later anyway).
    """

    def __init__(self, features: int, num_actions: int, hidden: int, value_activation: str) -> None:
        super().__init__()
        self.value = stream(features, hidden, 1)
        self.advantage = stream(features, hidden, num_actions)
        self.value_activation = value_activation

    def streams(self, features: Tensor) -> tuple[Tensor, Tensor]:
        """(V (N,), A (N, A)) before they are combined (for inspection and tests)."""
        return self.value(features).squeeze(-1), self.advantage(features)

    def forward(self, features: Tensor) -> Tensor:
        v, a = self.streams(features)
        return _squash(v.unsqueeze(-1) + a - a.mean(dim=-1, keepdim=True), self.value_activation)


class PolicyValueHead(nn.Module):
    """Policy logits per action and a tanh value in [-1, 1] (the mover's expected result)."""

    def __init__(self, features: int, num_actions: int, hidden: int) -> None:
        super().__init__()
        self.policy = stream(features, hidden, num_actions)
        self.value = stream(features, hidden, 1)

    def forward(self, features: Tensor) -> tuple[Tensor, Tensor]:
        return self.policy(features), self.value(features).squeeze(-1).tanh()


def make_head(kind: str, features: int, num_actions: int, hidden: int, value_activation: str) -> nn.Module:
    """The head called ``kind`` ("q", "dueling" or "policy_value")."""
    if kind == "q":
        return QHead(features, num_actions, hidden, value_activation)
    if kind == "dueling":
        return DuelingHead(features, num_actions, hidden, value_activation)
    return PolicyValueHead(features, num_actions, hidden)
