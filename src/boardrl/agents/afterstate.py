"""Afterstates: the positions each legal move leads to, valued by a state-value network (seed 003's V-nets).

Convention (fixed, used by the td0 / td_lambda learners and the agent): V(s) is the expected result for the
player **to move in s** (negamax), read from the game's side-to-move encoding.  The value of an afterstate for
the player who just moved is therefore +V when the same player moves again (an extra turn) and -V when the
opponent moves next; a terminal afterstate is worth its exact result (no network call).  Seed 003 instead
valued every state from white's side with a side-to-move input flag, white taking the max and black the min;
with side-relative planes the flag carries no information, so this is the same function written once.

Greedy play (SEEDS.md, "Greedy play for V-nets") is the argmax of those afterstate values, all legal
afterstates of all rows in one batched forward pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import torch

from boardrl.agents.learned import AGENT_FILE, ModelError
from boardrl.agents.network import NetworkAgent, build_checked, encode_states, load_weights
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.nn import parse_network_config

ValueFn = Callable[[np.ndarray], np.ndarray]


def afterstates(
    game: Game, states: np.ndarray, legal: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every legal (row, action) pair's successor: (pair rows, pair actions, child states, child results).

    ``child results`` is (P, 2) float: the exact per-player result where the child is terminal, NaN elsewhere.
    Uses the batched engine, so it works for every game.
    """
    rows, actions = np.nonzero(legal)
    if rows.size == 0:
        return rows, actions, np.empty((0, states.shape[1]), np.int64), np.empty((0, 2))
    scratch = game.batched(rows.size, auto_reset=False)
    scratch.states[:] = states[rows]
    finished, rets = scratch.step(actions)
    results = np.where(finished[:, None], rets.astype(np.float64), np.nan)
    return rows, actions, scratch.states.copy(), results


def afterstate_scores(game: Game, states: np.ndarray, legal: np.ndarray, value: ValueFn) -> np.ndarray:
    """(N, A) value of each legal action's afterstate for the player to move in ``states``; -inf if illegal."""
    n = states.shape[0]
    scores = np.full((n, game.num_actions), -np.inf)
    rows, actions, children, results = afterstates(game, states, legal)
    if rows.size == 0:
        return scores
    mover = game.to_move_batch(states).astype(np.int64)[rows]
    terminal = ~np.isnan(results[:, 0])
    util = results[np.arange(rows.size), mover]
    live = np.flatnonzero(~terminal)
    if live.size:
        v = np.asarray(value(children[live]), dtype=np.float64).reshape(-1)
        same = game.to_move_batch(children[live]).astype(np.int64) == mover[live]
        util[live] = np.where(same, v, -v)
    scores[rows, actions] = util
    return scores


class AfterstateAgent(NetworkAgent):
    """Plays the afterstate that is best for the mover under a V network (greedy, softmax or epsilon).

    A ``NetworkAgent`` whose per-action scores are afterstate values; the network has one output (V) and is
    saved like any network agent, as kind ``afterstate_network``.
    """

    kind = "afterstate_network"

    def _values(self, rows: np.ndarray) -> np.ndarray:
        out = self._forward(np.ascontiguousarray(rows, dtype=np.int64))
        return out.float().cpu().numpy().reshape(-1)

    def action_scores_batch(self, states: np.ndarray) -> np.ndarray:
        rows = self._rows(states)
        return afterstate_scores(self.game, rows, self.game.legal_mask_batch(rows), self._values)

    def state_values(self, states: np.ndarray) -> np.ndarray:
        """V of each row for its player to move (what the network learned)."""
        return self._values(self._rows(states))

    def with_policy(self, policy: str, temperature: float = 1.0, epsilon: float = 0.0,
                    name: str | None = None) -> "AfterstateAgent":
        return AfterstateAgent(self.game, self.network, self.config, policy, temperature, epsilon,
                               name or self.name, self.meta, self.device)

    @classmethod
    def load(cls, game: Game, info: dict, model_dir: Path,
             device: torch.device | str | None = None) -> "AfterstateAgent":
        """Rebuild the one-output network from agent.json and load its weights (CPU by default)."""
        model_dir = Path(model_dir)
        if info.get("encoding_shape") != list(game.encoding_shape):
            raise ModelError(f"{model_dir} was saved for encoding {info.get('encoding_shape')}, "
                             f"but {game.game_id} has {list(game.encoding_shape)}")
        try:
            config = parse_network_config(info.get("network"))
            policy = dict(info.get("policy") or {})
        except BoardRLError as exc:
            raise ModelError(f"{model_dir / AGENT_FILE}: {exc}") from None
        network = build_checked(config, game.encoding_shape, 1, model_dir / "network.pt")
        load_weights(network, model_dir / "network.pt")
        return cls(game, network, config, policy.get("policy", "greedy"), policy.get("temperature", 1.0),
                   policy.get("epsilon", 0.0), name=info["agent"], meta=info.get("meta"),
                   device=device if device is not None else "cpu")


def value_network_fn(net: torch.nn.Module, game: Game, device: torch.device) -> ValueFn:
    """V of state rows under ``net`` (no gradients), as float64 numpy: the learner's ``ValueFn``."""
    def value(rows: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            x = torch.from_numpy(encode_states(game, rows)).to(device)
            return net(x).reshape(-1).double().cpu().numpy()
    return value
