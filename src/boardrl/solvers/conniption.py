"""Conniption forced wins within a number of turns: an exact answer to a bounded question.

Conniption has no full referee here (flips rearrange the stones and the flip counters are part of the state, so
there are far more positions than in Connect 4), but "can this player force a win within k of its own turns?"
has an exact answer from an AND-OR search over stage-moves: at the player's stage-moves one that works is
enough, at the opponent's every legal one must; a turn of the player that ends with the game still on uses up
one of the k. Fours that appear during the opponent's turn count as they do in the rules (a flip that completes
both players' fours is won by the flipper). The search is exhaustive within its bound, so a True is a proof of a
forced win and a False proves that none exists within k turns (a longer one may).

What it shows: from the empty board the first player forces a win within 5 of its turns, and not within 4
(``benchmarks/conniption_forced_wins.py``: about a second on this machine).  Conniption is a first-player
win, and quickly: 17 of the first player's 28 opening turns keep a win within its next 4 turns.  Seed 004's
table, where the first player wins every game between its non-random heuristics, follows from that.

Cost: the tree grows about 28x per turn (2 x 7 x 2 stage-moves), cut by every early answer; 5 turns from the
empty board take about 0.4 s, 7 turns about two minutes.
"""

from __future__ import annotations

from numba import njit

from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.games.conniption import NUM_ACTIONS, RUNNING, apply, legal_bits


@njit(cache=True)
def forces_win(p0, mask, stage, f0, f1, lf, player, status, me, turns, seed_rule) -> bool:
    """Whether ``me`` can force a win within ``turns`` of its own turns; when ``me`` is to move, the turn in
    progress counts as the first.  A finished game answers whether ``me`` won."""
    if status != RUNNING:
        return status == me
    bits = legal_bits(p0, mask, stage, f0, f1, lf, player, status)
    if player == me:
        for a in range(NUM_ACTIONS):
            if (bits >> a) & 1:
                t = apply(p0, mask, stage, f0, f1, lf, player, status, a, seed_rule)
                if t[7] != RUNNING:
                    if t[7] == me:
                        return True
                    continue
                left = turns if t[6] == me else turns - 1  # the stage-move that ends the turn uses one up
                if left > 0 and forces_win(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], me, left, seed_rule):
                    return True
        return False
    for a in range(NUM_ACTIONS):
        if (bits >> a) & 1:
            t = apply(p0, mask, stage, f0, f1, lf, player, status, a, seed_rule)
            if not forces_win(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], me, turns, seed_rule):
                return False
    return True


def _check(game: Game, turns: int) -> None:
    if game.game_id != "conniption":
        raise BoardRLError(f"forced wins are searched for Conniption only, not {game.game_id}")
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
        raise BoardRLError(f"turns must be an integer >= 1, got {turns!r}")


def forced_win_within(game: Game, state, player: int, turns: int) -> bool:
    """True when ``player`` (0 or 1) can force a win within ``turns`` of its own turns from ``state``."""
    _check(game, turns)
    game.check_state(state)
    if player not in (0, 1):
        raise BoardRLError(f"player must be 0 or 1, got {player!r}")
    return bool(forces_win(*(int(x) for x in state), int(player), int(turns), game.seed_draw_rule))


def forced_win_turns(game: Game, state, player: int, max_turns: int) -> int | None:
    """The fewest of its own turns within which ``player`` forces a win (None: not within ``max_turns``)."""
    _check(game, max_turns)
    for k in range(1, max_turns + 1):
        if forced_win_within(game, state, player, k):
            return k
    return None


def forcing_moves(game: Game, state, turns: int) -> list[int]:
    """The mover's legal stage-moves after which it still forces a win within ``turns`` of its turns (the one
    in progress counted); empty when it has no such win."""
    _check(game, turns)
    game.check_state(state)
    me = int(state[6])
    out = []
    for a in game.legal_actions(state):
        t = game.play(state, a)
        left = turns if (int(t[6]) == me or int(t[7]) != RUNNING) else turns - 1
        if left > 0 and forces_win(*(int(x) for x in t), me, left, game.seed_draw_rule):
            out.append(a)
    return out
