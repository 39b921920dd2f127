"""Reference system 000's Connect 4 agent: greedy play from its afterstate network (``learn/seed000_afterstate.py``
trains it; the module docstring there lists every choice).

Q(s, a) = V(s o a), one value network of the afterstate.  Its input is the seed's ``normalize_board``: one 6x7
plane with X = +1, O = -1, empty 0, top row first (``seed000_planes``), so V is X's value whoever is to move.
``Seed000Agent`` (saved as kind ``seed000_afterstate``): as X it plays the seed's greedy policy, the first legal
move (columns left to right) of largest V(s o a); as O it plays the afterstate of least value for X.
``agents.learned.LOADERS`` names this module for the kind, so any process loads the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardrl.agents.afterstate import afterstates
from boardrl.agents.base import Agent
from boardrl.agents.learned import AGENT_FILE, ModelError, model_info, write_agent_info
from boardrl.agents.network import WEIGHTS_FILE, build_checked, greedy_actions, load_weights
from boardrl.atomic_io import atomic_torch_save
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.nn import AnyNetwork, parse_network_config

KIND = "seed000_afterstate"
#: The seed's network input: one plane of 6 rows x 7 columns.
SHAPE = (1, 6, 7)
X = 0  # the agent's player (X moves first, and is to move in every UCI position)


# ---------------------------------------------------------------------------------------------- input
def seed000_planes(game: Game, rows: np.ndarray) -> np.ndarray:
    """float32 (N, 1, 6, 7): X +1, O -1, empty 0, top row first (the seed's ``normalize_board``)."""
    planes = game.encode_batch(np.ascontiguousarray(rows, dtype=np.int64))  # plane 0: the player to move
    sign = np.where(rows[:, 2] % 2 == 0, 1.0, -1.0).astype(np.float32)  # X to move when the ply count is even
    board = (planes[:, 0] - planes[:, 1]) * sign[:, None, None]
    return np.ascontiguousarray(board[:, None, ::-1, :])


def network_values(net: torch.nn.Module, game: Game, rows: np.ndarray, device: torch.device) -> torch.Tensor:
    """V (X's view) of state rows as a float32 (N,) tensor, without gradients."""
    with torch.no_grad():
        return net(torch.from_numpy(seed000_planes(game, rows)).to(device)).reshape(-1)


# ---------------------------------------------------------------------------------------------- the agent
class Seed000Agent(Agent):
    """Greedy play from the seed's afterstate network: X takes the largest V(s o a), O the smallest, ties to the
    first legal move; every afterstate of every row in one forward pass."""

    kind = KIND
    batched = True
    wants_batches = True  # one forward pass on many rows costs about what one on a few does (see NetworkAgent)

    def __init__(self, game: Game, network: torch.nn.Module, config: AnyNetwork | dict, name: str = KIND,
                 meta: dict | None = None, device: torch.device | str = "cpu") -> None:
        super().__init__(game, name)
        if game.game_id != "connect4":
            raise BoardRLError(f"{name}: the seed's afterstate network plays connect4, not {game.game_id}")
        self.config = parse_network_config(config)
        self.device = torch.device(device)
        self.network = network.to(self.device).eval()
        self.meta = dict(meta or {})
        self.stats: dict = {}

    def _rows(self, states: np.ndarray) -> np.ndarray:
        rows = np.ascontiguousarray(states, dtype=np.int64)
        if rows.ndim != 2 or rows.shape[1] != len(self.game.state_type._fields):
            raise BoardRLError(f"{self.name}: expected an (N, 3) state array, got shape {rows.shape}")
        return rows

    def values(self, states: np.ndarray) -> np.ndarray:
        """V (X's view) of each row, float64."""
        rows = self._rows(states)
        if rows.shape[0] == 0:
            return np.zeros(0)
        return network_values(self.network, self.game, rows, self.device).double().cpu().numpy()

    def action_scores_batch(self, states: np.ndarray) -> np.ndarray:
        """(N, 7) value of each legal move's afterstate for the player to move (X: V, O: -V); -inf if illegal."""
        rows = self._rows(states)
        scores = np.full((rows.shape[0], self.game.num_actions), -np.inf)
        pair, actions, children, _ = afterstates(self.game, rows, self.game.legal_mask_batch(rows))
        if pair.size:
            v = self.values(children)
            mover = self.game.to_move_batch(rows).astype(np.int64)[pair]
            scores[pair, actions] = np.where(mover == X, v, -v)
        return scores

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows = self._rows(states)
        legal = self.game.legal_mask_batch(rows)
        if not legal.any(axis=1).all():
            raise BoardRLError(f"{self.name}: no legal move in state row {int(np.argmin(legal.any(axis=1)))}: "
                               "the game is over")
        return greedy_actions(self.action_scores_batch(rows), legal)

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        return int(self.act_batch(np.asarray(state, dtype=np.int64)[None, :], rng)[0])

    def value_batch(self, states: np.ndarray) -> np.ndarray:
        """(N,) value of each position for the player to move: its best afterstate's, clipped to [-1, 1]."""
        rows = self._rows(states)
        legal = self.game.legal_mask_batch(rows)
        if not legal.any(axis=1).all():
            raise BoardRLError(f"{self.name}: no legal move in state row {int(np.argmin(legal.any(axis=1)))}: "
                               "the game is over, it has no value")
        return np.clip(self.action_scores_batch(rows).max(axis=1), -1.0, 1.0)

    def save(self, model_dir: Path) -> None:
        """``network.pt`` then ``agent.json`` (last, so a complete json means a complete model)."""
        model_dir = Path(model_dir)
        model_dir.mkdir(parents=True, exist_ok=True)
        weights = {k: v.detach().cpu() for k, v in self.network.state_dict().items()}
        atomic_torch_save(model_dir / WEIGHTS_FILE, weights)
        write_agent_info(model_dir, model_info(self, encoding_shape=list(SHAPE), network=self.config.model_dump()))

    @classmethod
    def load(cls, game: Game, info: dict, model_dir: Path) -> Seed000Agent:
        """Rebuild the network agent.json describes and load its weights (on the CPU)."""
        model_dir = Path(model_dir)
        if info.get("encoding_shape") != list(SHAPE) or info.get("num_actions") != game.num_actions:
            raise ModelError(f"{model_dir} was saved for input {info.get('encoding_shape')}, not the seed's "
                             f"{list(SHAPE)}")
        try:
            config = parse_network_config(info.get("network"))
        except BoardRLError as exc:
            raise ModelError(f"{model_dir / AGENT_FILE}: {exc}") from None
        network = build_checked(config, SHAPE, 1, model_dir / WEIGHTS_FILE)
        load_weights(network, model_dir / WEIGHTS_FILE)
        return cls(game, network, config, name=info["agent"], meta=info.get("meta"))
