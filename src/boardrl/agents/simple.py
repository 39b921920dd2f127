"""One-ply benchmark opponents: seed 002's SemiRandom and the "tactical" player.

* ``SemiRandomAgent`` (seed 002): tries the legal actions in order and plays the first one that wins at once for
  the player to move; otherwise a uniformly random legal action.  It never blocks.  Generic over the Game
  interface, with numba kernels for tic-tac-toe and Connect 4.
* ``TacticalAgent``: wins at once if it can (a random one of the winning moves), else blocks an immediate win of
  the opponent (a random one of the threatened cells if there are several), else plays at random.  Tic-tac-toe
  and Connect 4 only (Conniption has its own tactical player in ``agents/conniption.py``).

Why numba kernels: the match runner plays tens of thousands of games in batch, so ``act_batch`` must be one
compiled loop over the state array.  One rule kernel (``choose``) serves both players and both games; it takes
one uniform number per row (drawn from the caller's Generator) and chooses the ``floor(u*k)``-th candidate, so
the scalar ``act`` and ``act_batch`` run the same code and the same ``u`` gives the same move.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from boardrl.agents.base import Agent
from boardrl.agents.heuristics import TTT_LINES, ttt_sides
from boardrl.games._kernels import popcount
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.connect4 import legal_columns, winning_columns
from boardrl.games.tictactoe import legal_bits as ttt_legal_bits


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
def ttt_winning_cells(own: int, opp: int) -> int:
    """9-bit set of empty cells that complete a line of ``own``."""
    empty = 0b111111111 & ~(own | opp)
    out = 0
    for line in TTT_LINES:
        rest = line & ~own
        if popcount(rest) == 1 and rest & empty:
            out |= rest
    return out


# ---------------------------------------------------------------------------------------------- the choice rules
# One rule kernel serves both games: a position is three ints, (x, o, 0) or (current, mask, plies), and the game
# code ``g`` picks the rules (the alpha-beta kernels use the same codes).  Every action set below is a bit set over
# the game's actions (cells or columns).
TTT, C4 = 0, 1
KERNEL_GAMES = {"tictactoe": TTT, "connect4": C4}
TACTICAL_GAMES = tuple(KERNEL_GAMES)


def kernel_position(state: Any) -> tuple[int, int, int]:
    """The three ints of a tic-tac-toe (x, o) or Connect 4 (current, mask, plies) state, for the kernels."""
    return (state[0], state[1], state[2] if len(state) > 2 else 0)



@njit(cache=True)
def legal_action_bits(g: int, a: int, b: int, c: int) -> int:
    """Bit set of the legal actions (tic-tac-toe cells, Connect 4 columns); 0 once the game is over."""
    return ttt_legal_bits(a, b) if g == TTT else legal_columns(a, b, c)


@njit(cache=True)
def _winning_actions(g: int, a: int, b: int, c: int, opponent: bool) -> int:
    """Actions that complete a line at once for the player to move, or (``opponent``) for the other player."""
    if g == TTT:
        own, opp = ttt_sides(a, b)
        if opponent:
            own, opp = opp, own
        return ttt_winning_cells(own, opp) & ttt_legal_bits(a, b)
    return winning_columns(a ^ b if opponent else a, b)


@njit(cache=True)
def choose(g: int, a: int, b: int, c: int, tactical: bool, u: float) -> int:
    """SemiRandom's move (the lowest winning action, else random) or, when ``tactical``, the tactical player's
    (a random winning action, else a random block, else random); -1 once the game is over."""
    legal = legal_action_bits(g, a, b, c)
    if legal == 0:
        return -1
    wins = _winning_actions(g, a, b, c, False)
    if wins:
        return nth_set_bit(wins, u) if tactical else lowest_set_bit(wins)
    if tactical:
        blocks = _winning_actions(g, a, b, c, True)
        if blocks:
            return nth_set_bit(blocks, u)
    return nth_set_bit(legal, u)


@njit(cache=True)
def choose_batch(g: int, tactical: bool, states: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``choose`` for every row of ``states`` (tic-tac-toe rows (x, o), Connect 4 rows (current, mask, plies))."""
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        c = states[i, 2] if g == C4 else 0
        out[i] = choose(g, states[i, 0], states[i, 1], c, tactical, u[i])
    return out


@njit(cache=True)
def ttt_semirandom(x: int, o: int, u: float) -> int:
    return choose(TTT, x, o, 0, False, u)


@njit(cache=True)
def ttt_tactical(x: int, o: int, u: float) -> int:
    return choose(TTT, x, o, 0, True, u)


@njit(cache=True)
def c4_semirandom(current: int, mask: int, plies: int, u: float) -> int:
    return choose(C4, current, mask, plies, False, u)


@njit(cache=True)
def c4_tactical(current: int, mask: int, plies: int, u: float) -> int:
    return choose(C4, current, mask, plies, True, u)


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
        self._g = KERNEL_GAMES.get(game.game_id)
        self.batched = self._g is not None

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        u = rng.random()  # one uniform per decision on both paths, so they agree for the same rng
        if self._g is not None:
            return _checked(self.name, choose(self._g, *kernel_position(state), False, u))
        legal = self.game.legal_actions(state)
        if not legal:
            raise BoardRLError(f"{self.name}: no legal move, the game is over")
        for a in legal:
            if wins_at_once(self.game, state, a):
                return a
        return legal[min(int(u * len(legal)), len(legal) - 1)]

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One action per row (-1 for rows whose game is over)."""
        if self._g is None:
            return super().act_batch(states, rng)
        states = np.ascontiguousarray(states, dtype=np.int64)
        return choose_batch(self._g, False, states, rng.random(states.shape[0]))


class TacticalAgent(Agent):
    """Win at once if possible, else block the opponent's immediate win, else random (tic-tac-toe, Connect 4).

    Among several winning moves, or several cells to block, it picks one uniformly at random.
    """

    batched = True

    def __init__(self, game: Game, name: str = "tactical") -> None:
        if game.game_id not in KERNEL_GAMES:
            raise BoardRLError(
                f"tactical: not defined here for {game.game_id}; games: {', '.join(TACTICAL_GAMES)}"
                " (Conniption's tactical player is in boardrl.agents.conniption)"
            )
        super().__init__(game, name)
        self._g = KERNEL_GAMES[game.game_id]

    def act(self, state: Any, rng: np.random.Generator) -> int:
        self.game.check_state(state)
        return _checked(self.name, choose(self._g, *kernel_position(state), True, rng.random()))

    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One action per row (-1 for rows whose game is over)."""
        states = np.ascontiguousarray(states, dtype=np.int64)
        return choose_batch(self._g, True, states, rng.random(states.shape[0]))


def _checked(name: str, move: int) -> int:
    if move < 0:
        raise BoardRLError(f"{name}: no legal move, the game is over")
    return int(move)
