"""Seed 004's Q-learning agent: greedy play from frozen seed-004 tables (``learn/seed004_q.py`` trains them).

Test play is the seed's in-simulator test (learning on, epsilon = alpha = 0): the table is frozen and a state
never seen has all values 0, so the tie rule decides there.  Player 0 takes the largest Q, player 1 the smallest;
ties uniform among the tied legal moves or, with ``tie_break: priority``, the benchmark players'
``priority_tie_break``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from boardrl.agents.base import Agent
from boardrl.agents.conniption import priority_tie_break
from boardrl.agents.learned import TABLE_FILE, ModelError, QTable, model_info, read_arrays, write_agent_info
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.conniption import ConniptionState

SECOND_TABLE_FILE = "q_table.second.npz"  # the seat-1 table of a two-table agent (the seat-0 table is TABLE_FILE)
AGENT_KIND = "seed004_q"


def greedy_action(values: np.ndarray, legal: list[int], mover: int, tie_break: str, rng: np.random.Generator) -> int:
    """Player 0 takes the largest value among ``legal``, player 1 the smallest; ties by ``tie_break``."""
    vals = [float(values[a]) for a in legal]
    best = max(vals) if mover == 0 else min(vals)
    tied = [a for a, v in zip(legal, vals) if v == best]
    if len(tied) == 1:
        return tied[0]
    if tie_break == "priority":
        return priority_tie_break(tied, rng)
    return int(tied[rng.integers(len(tied))])


# ---------------------------------------------------------------------------------------------- the agent
class Seed004QAgent(Agent):
    """Greedy play from frozen seed-004 tables (the seed's test: epsilon = alpha = 0); unseen states are all 0.

    ``tables`` holds one table, played from either seat, or two: the table trained as first player and the one
    trained as second, each played from its own seat.
    """

    kind = AGENT_KIND

    def __init__(self, game: Game, tables: tuple[QTable, ...], tie_break: str = "uniform", name: str = "seed004_q",
                 meta: dict | None = None) -> None:
        super().__init__(game, name)
        if len(tables) not in (1, 2):
            raise ModelError(f"seed004_q holds one table or one per seat, got {len(tables)}")
        for table in tables:
            if table.width != len(game.state_type._fields) or table.num_actions != game.num_actions:
                raise ModelError(f"seed004_q table of shape ({table.width}, {table.num_actions}) does not fit "
                                 f"{game.game_id}")
        if tie_break not in ("uniform", "priority"):
            raise ModelError(f"seed004_q tie_break must be uniform or priority, got {tie_break!r}")
        self.tables, self.tie_break = tuple(tables), tie_break
        self.meta = dict(meta or {})
        self.stats: dict = {}

    def table_for(self, player: int) -> QTable:
        """The table that plays ``player``'s moves."""
        return self.tables[player if len(self.tables) == 2 else 0]

    def q_values(self, state: ConniptionState) -> np.ndarray:
        """Player 0's-view values of all actions in ``state`` (0 where never updated)."""
        self.game.check_state(state)
        return self.table_for(state.player).q_values(np.asarray(state, dtype=np.int64))[0]

    def act(self, state: ConniptionState, rng: np.random.Generator) -> int:
        legal = self.game.legal_actions(state)
        if not legal:
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        if len(legal) == 1:
            return legal[0]
        return greedy_action(self.q_values(state), legal, state.player, self.tie_break, rng)

    def save(self, model_dir: Path) -> None:
        """``q_table.npz`` (and ``q_table.second.npz``) then ``agent.json``: a complete json means a complete model."""
        model_dir = Path(model_dir)
        model_dir.mkdir(parents=True, exist_ok=True)
        for table, file in zip(self.tables, (TABLE_FILE, SECOND_TABLE_FILE)):
            table.save_npz(model_dir / file)
        write_agent_info(model_dir, model_info(self, states=sum(len(t) for t in self.tables),
                                                             tables=len(self.tables), tie_break=self.tie_break))

    @classmethod
    def load(cls, game: Game, info: dict, model_dir: Path) -> "Seed004QAgent":
        files = (TABLE_FILE, SECOND_TABLE_FILE)[:int(info.get("tables", 1))]
        tables = []
        for file in files:
            arrays = read_arrays(Path(model_dir) / file, ("keys", "values"), "seed004_q table")
            tables.append(QTable.from_arrays(arrays["keys"], arrays["values"], 0, 0.0))
        return cls(game, tuple(tables), info.get("tie_break", "uniform"), info["agent"], info.get("meta"))
