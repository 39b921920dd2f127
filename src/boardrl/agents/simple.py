"""One-ply benchmark opponents: seed 002's SemiRandom and the "tactical" player.

* ``SemiRandomAgent`` (seed 002): tries the legal actions in order and plays the first one that wins at once for
  the player to move; otherwise a uniformly random legal action.  It never blocks.  Generic over the Game
  interface, with numba kernels for tic-tac-toe and Connect 4.
* ``TacticalAgent``: wins at once if it can (a random one of the winning moves), else blocks an immediate win of
  the opponent (a random one of the threatened cells if there are several), else plays at random.  Tic-tac-toe
  and Connect 4 only (Conniption has its own tactical player in ``agents/conniption.py``).

Why numba kernels per game: the match runner plays tens of thousands of games in batch, so ``act_batch`` must be
one compiled loop over the state array.  Every kernel takes one uniform number per row (drawn from the caller's
Generator) and chooses the ``floor(u*k)``-th candidate, so the scalar ``act`` and ``act_batch`` run the same
code and the same ``u`` gives the same move.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from boardrl.agents.base import Agent
from boardrl.agents.heuristics import TTT_LINES
from boardrl.games._kernels import popcount
from boardrl.games.base import BoardRLError, Game
from boardrl.games.connect4 import legal_columns, winning_columns
from boardrl.games.tictactoe import legal_bits as ttt_legal_bits

TACTICAL_GAMES = ("tictactoe", "connect4")


# ---------------------------------------------------------------------------------------------- bit choice
@njit(cache=True)
def nth_set_bit(bits: int, u: float) -> int:
    """Index of the ``floor(u*k)``-th lowest set bit of ``bits`` (k = number of set bits); -1 if none."""
    k = popcount(bits)
    if k == 0:
        return -1
    r = int(u * k)
    if r >= k:
        r = k - 1
    i = 0
    while bits:
        if bits & 1:
            if r == 0:
                return i
            r -= 1
        bits >>= 1
        i += 1
    return -1


@njit(cache=True)
def lowest_set_bit(bits: int) -> int:
    """Index of the lowest set bit; -1 if none (seed 002's "first action in order")."""
    if bits == 0:
        return -1
    i = 0
    while not (bits >> i) & 1:
        i += 1
    return i


# ---------------------------------------------------------------------------------------------- tic-tac-toe
@njit(cache=True)
def _ttt_sides(x: int, o: int) -> tuple[int, int]:
    """(stones of the player to move, stones of the opponent)."""
    if popcount(x) == popcount(o):
        return x, o
    return o, x


@njit(cache=True)
def ttt_winning_cells(own: int, opp: int) -> int:
    """9-bit set of empty cells that complete a line of ``own``."""
    empty = 0b111111111 & ~(own | opp)
    out = 0
    for line in TTT_LINES:
        rest = line & ~own
        if popcount(rest) == 1 and rest & empty:
            out |= rest
    return out


@njit(cache=True)
def ttt_semirandom(x: int, o: int, u: float) -> int:
    legal = ttt_legal_bits(x, o)
    own, opp = _ttt_sides(x, o)
    wins = ttt_winning_cells(own, opp) & legal
    if wins:
        return lowest_set_bit(wins)
    return nth_set_bit(legal, u)


@njit(cache=True)
def ttt_tactical(x: int, o: int, u: float) -> int:
    legal = ttt_legal_bits(x, o)
    if legal == 0:
        return -1
    own, opp = _ttt_sides(x, o)
    wins = ttt_winning_cells(own, opp) & legal
    if wins:
        return nth_set_bit(wins, u)
    blocks = ttt_winning_cells(opp, own) & legal
    if blocks:
        return nth_set_bit(blocks, u)
    return nth_set_bit(legal, u)


@njit(cache=True)
def ttt_semirandom_batch(states: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        out[i] = ttt_semirandom(states[i, 0], states[i, 1], u[i])
    return out


@njit(cache=True)
def ttt_tactical_batch(states: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        out[i] = ttt_tactical(states[i, 0], states[i, 1], u[i])
    return out


# ---------------------------------------------------------------------------------------------- Connect 4
@njit(cache=True)
def c4_semirandom(current: int, mask: int, plies: int, u: float) -> int:
    legal = legal_columns(current, mask, plies)
    if legal == 0:
        return -1
    wins = winning_columns(current, mask)
    if wins:
        return lowest_set_bit(wins)
    return nth_set_bit(legal, u)


@njit(cache=True)
def c4_tactical(current: int, mask: int, plies: int, u: float) -> int:
    legal = legal_columns(current, mask, plies)
    if legal == 0:
        return -1
    wins = winning_columns(current, mask)
    if wins:
        return nth_set_bit(wins, u)
    blocks = winning_columns(current ^ mask, mask)
    if blocks:
        return nth_set_bit(blocks, u)
    return nth_set_bit(legal, u)


@njit(cache=True)
def c4_semirandom_batch(states: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        out[i] = c4_semirandom(states[i, 0], states[i, 1], states[i, 2], u[i])
    return out


@njit(cache=True)
def c4_tactical_batch(states: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        out[i] = c4_tactical(states[i, 0], states[i, 1], states[i, 2], u[i])
    return out


#: game id -> (scalar kernel, batch kernel)
_SEMIRANDOM_KERNELS = {
    "tictactoe": (ttt_semirandom, ttt_semirandom_batch),
    "connect4": (c4_semirandom, c4_semirandom_batch),
}
_TACTICAL_KERNELS = {"tictactoe": (ttt_tactical, ttt_tactical_batch), "connect4": (c4_tactical, c4_tactical_batch)}


# ---------------------------------------------------------------------------------------------- agents
def wins_at_once(game: Game, state: Any, move: int) -> bool:
    """True when ``move`` ends the game with a win for the player who makes it."""
    player = game.to_move(state)
    nxt = game.play(state, move)
    return game.is_over(nxt) and game.returns(nxt)[player] > 0


class SemiRandomAgent(Agent):
    """Seed 002's SemiRandom: the first legal action (in action order) that wins at once, else uniform random.

    Any game works through ``game.play``; tic-tac-toe and Connect 4 use numba kernels and play in batch.
    """

    def __init__(self, game: Game, name: str = "semirandom") -> None:
        super().__init__(game, name)
        self._kernels = _SEMIRANDOM_KERNELS.get(game.game_id)
        self.batched = self._kernels is not None

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        u = rng.random()  # one uniform per decision on both paths, so they agree for the same rng
        if self._kernels is not None:
            return _checked(self.name, self._kernels[0](*state, u))
        legal = self.game.legal_actions(state)
        if not legal:
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        for a in legal:
            if wins_at_once(self.game, state, a):
                return a
        return legal[min(int(u * len(legal)), len(legal) - 1)]

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One action per row (-1 for rows whose game is over)."""
        if self._kernels is None:
            return super().act_batch(states, rng)
        states = np.ascontiguousarray(states, dtype=np.int64)
        return self._kernels[1](states, rng.random(states.shape[0]))


class TacticalAgent(Agent):
    """Win at once if possible, else block the opponent's immediate win, else random (tic-tac-toe, Connect 4).

    Among several winning moves, or several cells to block, it picks one uniformly at random.
    """

    batched = True

    def __init__(self, game: Game, name: str = "tactical") -> None:
        if game.game_id not in _TACTICAL_KERNELS:
            raise BoardRLError(
                f"tactical: not defined here for {game.game_id}; games: {', '.join(TACTICAL_GAMES)}"
                " (Conniption's tactical player is in boardrl.agents.conniption)"
            )
        super().__init__(game, name)
        self._one, self._batch = _TACTICAL_KERNELS[game.game_id]

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        return _checked(self.name, self._one(*state, rng.random()))

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One action per row (-1 for rows whose game is over)."""
        states = np.ascontiguousarray(states, dtype=np.int64)
        return self._batch(states, rng.random(states.shape[0]))


def _checked(name: str, move: int) -> int:
    if move < 0:
        raise BoardRLError(f"{name}: no legal move, the game is over")
    return int(move)
