"""AlphaZero's self-play as a function: (network weights, params, seed, game indices) -> game records.

Why a function of the game indices: self-play may run in-process or split over Ray actors
(``learn/core/selfplay_pool.py``), and the project's rule is that worker counts and machines do not change a
trained model.  So every random draw of game g comes from game g's own generator, ``game_rng(seed, g)``: its
playout-cap draws, its Dirichlet root noise (PUCT) or Gumbel g (Gumbel), its move samples, its league member
and that member's moves.  Which other games share a search batch then changes no draw.

Why ``SeedSequence(seed, spawn_key=(SELFPLAY_KEY, g))``: it is what spawning children of the run's seed sequence
gives, but addressed by index, so an actor playing games 40..79 makes their generators without the 40 before;
the key keeps these streams apart from every other stream made from the seed (``default_rng(seed)`` is the
learner's own; ``default_rng([seed, g])`` would not do: SeedSequence pads short entropy with zeros, so
``[seed, 0]`` is ``seed``).

**The network's last bits, and why batches are padded.**  The game records are a function of the network's outputs
on each position.  The search evaluates all leaves of a ply's games in one batch, and a chunk of the games makes
other batches.  A row of a network's output need not come out in the same bits at another batch size: measured
here (torch CPU, MKL pinned to COMPATIBLE, 1 and 2 threads), a position evaluated alone differed from the same
position in a batch of 300 by up to 6e-8 (the tic-tac-toe MLP and the connect4 ``alphazero`` tower), and in
halves by up to 3e-8; self-play of 16 connect4 games in 2 or 3 chunks gave the same moves but root values
differing in 61 of 221 records by 1.5e-8.  A flipped last bit can flip a close visit count, and from there a game.
Padding every batch to a multiple of 8 rows (copies of the first row) made the rows of batches of 16 rows and
more bit-equal, but not those of the smallest: on two threads the 3x3 Dots and Boxes tower's policy logits
differed for batches of 2 to 13 positions padded to 8 or 16 rows (6 of 60 random subsets, 2026-12-01).  Padded to
a multiple of 8 and to at least 32 rows (``agents/puct.py`` ``PAD_ROWS``, ``MIN_ROWS``), 150 of 150 random subsets
of 1 to 200 of 1,536 positions were bit-equal to the whole batch for the tic-tac-toe MLP and the connect4 and
3x3 Dots and Boxes towers, on 1 and 2 threads.  Passes of one fixed size (64 rows) were too, but a 256-game
Connect 4 self-play batch with the cache took 4.99 s instead of 3.67: half of its batches are under 73 rows.  tests/agents/test_output_cache.py and
tests/learn/test_selfplay_ray.py check it with the real networks; a connect4 ``alphazero`` tower trained for 8
games (two learning phases, playout caps) came out with bit-identical weights in-process and in 1 and 2 actors.
The same invariance is what lets a self-play batch remember the network's outputs by position
(``agents/output_cache.py``): a remembered output is the one a new pass would give, so the records do not change,
and half of a Connect 4 batch's positions are not evaluated again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from boardrl.agents.gumbel import GumbelSettings, gumbel_search
from boardrl.agents.output_cache import DEFAULT_ENTRIES
from boardrl.agents.puct import (NetworkEvaluator, SearchSettings, moves_from_uniforms, search, step_rows, visit_policy,
                                 with_tactics)
from boardrl.games.base import Game
from boardrl.learn.alphazero_params import AlphaZeroParams
from boardrl.learn.core.league import League

#: The per-decision fields of ``Records``, in its order.
RECORD_FIELDS = ("rows", "pi", "game", "mover", "q", "ply")
#: First spawn-key word of the self-play streams (any constant no other stream of a run uses).
SELFPLAY_KEY = 0x5E1F


def game_rng(seed: int, game_index: int) -> np.random.Generator:
    """Game ``game_index``'s own generator in the run with ``seed`` (module docstring: why this derivation)."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(SELFPLAY_KEY, int(game_index))))


def league_moves(league: League, states: np.ndarray, which: np.ndarray,
                 rngs: list[np.random.Generator]) -> np.ndarray:
    """The league members' moves, row i played by member ``which[i]`` with its own game's generator ``rngs[i]``
    (one call per row: the move then depends on that game alone, whichever games share the batch)."""
    return np.array([int(league.members[int(m)].act_batch(states[i: i + 1], rngs[i])[0])
                     for i, m in enumerate(which)], dtype=np.int64)


@dataclass
class Records:
    """The learner's searched decisions of some games, in the order they are added to the window (ply, then
    game index): state rows, policy targets pi, game index, mover, root value; and each game's result."""

    rows: np.ndarray
    pi: np.ndarray
    game: np.ndarray
    mover: np.ndarray
    q: np.ndarray
    ply: np.ndarray
    first_game: int
    results: np.ndarray  # (games, 2): the result per player of games first_game, first_game + 1, ...

    @staticmethod
    def merge(parts: list["Records"]) -> "Records":
        """Records of contiguous chunks of games (in game order) as if they had been played in one batch:
        ordered by (ply, game index), the in-process order."""
        cat = {f: np.concatenate([getattr(r, f) for r in parts]) for f in RECORD_FIELDS}
        order = np.lexsort((cat["game"], cat["ply"]))
        return Records(**{f: v[order] for f, v in cat.items()}, first_game=parts[0].first_game,
                       results=np.concatenate([r.results for r in parts]))

    def same_as(self, other: "Records") -> bool:
        """Bit for bit the same games: every record field, the results and the first game's index."""
        return self.first_game == other.first_game and all(
            np.array_equal(getattr(self, f), getattr(other, f)) for f in (*RECORD_FIELDS, "results"))

    def value_targets(self, value_target_q: float) -> np.ndarray:
        """z per record: the game's result for its mover, mixed with the root value by ``value_target_q``."""
        z = self.results[self.game - self.first_game, self.mover]
        if value_target_q > 0:  # the search's root value is less noisy than one game's result
            z = (1 - value_target_q) * z + value_target_q * self.q
        return z.astype(np.float32)


class SelfPlayer:
    """Plays games with one fixed network: the part of the learner that actors hold."""

    #: The generator handed to the evaluators: self-play's (network, tactics) draw nothing from it.
    _UNUSED_RNG = np.random.default_rng(0)

    def __init__(self, game: Game, params: AlphaZeroParams, network: Any, device: Any, league: League) -> None:
        self.game, self.p, self.network, self.device, self.league = game, params, network, device, league

    def play(self, seed: int, first_game: int, n: int, clock: dict[str, float] | None = None) -> Records:
        """Play games first_game .. first_game + n - 1 side by side to the end; their records."""
        game, p = self.game, self.p
        network = NetworkEvaluator(game, self.network, self.device, cache_entries=DEFAULT_ENTRIES)  # padded
        evaluator = with_tactics(game, network, p.tactics)
        rngs = [game_rng(seed, first_game + i) for i in range(n)]
        states = np.repeat(np.asarray(game.initial_state(), dtype=np.int64)[None], n, axis=0)
        opponent_seat, _ = self.league.seats(first_game, n, np.random.default_rng(0))  # members: drawn below
        which = np.array([rngs[i].integers(len(self.league.members)) if opponent_seat[i] >= 0 else 0
                          for i in range(n)], dtype=np.int64)
        live = np.ones(n, dtype=bool)
        plies = 0
        out: dict[str, list] = {f: [] for f in RECORD_FIELDS}
        results = np.zeros((n, 2), np.float32)
        while live.any():
            live_rows = np.flatnonzero(live)
            movers = game.to_move_batch(states[live_rows]).astype(np.int64)
            theirs = movers == opponent_seat[live_rows]
            moves = np.zeros(len(live_rows), dtype=np.int64)
            rows = live_rows[~theirs]
            if len(rows):
                moves[~theirs], full, pi, q = self._searched_moves(states[rows], [rngs[r] for r in rows], plies,
                                                                   evaluator, clock)
                for f, v in (("rows", states[rows[full]].copy()), ("pi", pi[full]), ("game", first_game + rows[full]),
                             ("mover", movers[~theirs][full]), ("q", q[full]),
                             ("ply", np.full(int(full.sum()), plies, np.int64))):
                    out[f].append(v)
            if theirs.any():
                league_rows = live_rows[theirs]
                moves[theirs] = league_moves(self.league, states[league_rows], which[league_rows],
                                             [rngs[r] for r in league_rows])
            nxt, finished, rets = step_rows(game, states[live_rows], moves)
            states[live_rows] = nxt
            results[live_rows[finished]] = rets[finished]
            live[live_rows[finished]] = False
            plies += 1
        return Records(**{f: np.concatenate(v) for f, v in out.items()}, first_game=first_game, results=results)

    def _searched_moves(self, roots: np.ndarray, rngs: list[np.random.Generator], plies: int, evaluator: Any,
                        clock: dict[str, float] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(moves, full, pi, q) for the learner's rows: which rows got the full search (playout cap
        randomization, drawn from each row's game generator only when ``full_search_share`` < 1), and for every
        row its policy target and root value (only the full rows' are stored).  One search call per size.

        Each game draws, in this order: its cap draw, its root noise (full PUCT rows) or Gumbel g, its move's
        uniform (PUCT)."""
        p, game = self.p, self.game
        n, a = len(roots), game.num_actions
        full = (np.array([r.random() < p.full_search_share for r in rngs], dtype=bool) if p.full_search_share < 1
                else np.ones(n, dtype=bool))
        legal = game.legal_mask_batch(roots)
        noise = self._root_noise(legal, full, rngs)
        moves, q = np.zeros(n, np.int64), np.zeros(n, np.float32)
        pi, visits = np.zeros((n, a), np.float32), np.zeros((n, a), np.int64)
        for rows, sims, is_full in ((full, p.simulations, True), (~full, p.fast_budget, False)):
            if not rows.any():
                continue
            if p.search == "gumbel":
                result = gumbel_search(game, roots[rows], evaluator, self.gumbel_settings(sims), self._UNUSED_RNG,
                                       noise=True, clock=clock, gumbel=noise[rows])
                moves[rows], pi[rows], trees = result.actions, result.policy, result.trees
            else:  # a fast PUCT search has no root noise (KataGo's playout cap randomization)
                settings = replace(self.search_settings(noise=is_full), simulations=sims)
                trees = search(game, roots[rows], evaluator, settings, self._UNUSED_RNG, clock,
                               root_noise=noise[rows])
                visits[rows] = trees.root_visits()
                pi[rows] = visit_policy(visits[rows], 1.0)
            q[rows] = trees.root_values()
        if p.search == "puct":
            u = np.array([r.random() for r in rngs])
            moves = moves_from_uniforms(visit_policy(visits, 1.0 if plies < p.temperature_plies else 0.0), u)
        return moves, full, pi, q

    def _root_noise(self, legal: np.ndarray, full: np.ndarray, rngs: list[np.random.Generator]) -> np.ndarray:
        """(B, A) per-root noise from each root's game generator: Gumbel g (every Gumbel search), or Dirichlet
        draws over the legal actions (full PUCT searches with ``noise`` > 0; zeros elsewhere)."""
        p = self.p
        out = np.zeros(legal.shape)
        for i, rng in enumerate(rngs):
            if p.search == "gumbel":
                out[i] = rng.gumbel(size=legal.shape[1])
            elif full[i] and p.noise > 0:
                idx = np.flatnonzero(legal[i])
                out[i, idx] = rng.dirichlet(np.full(idx.size, p.dirichlet_alpha))
        return out

    def search_settings(self, noise: bool) -> SearchSettings:
        p = self.p
        return SearchSettings(simulations=p.simulations, c_puct=p.c_puct, fpu=p.fpu,
                              leaves_per_wave=p.leaves_per_wave, dirichlet_alpha=p.dirichlet_alpha,
                              noise=p.noise if noise else 0.0)

    def gumbel_settings(self, simulations: int) -> GumbelSettings:
        p = self.p
        return GumbelSettings(simulations=simulations, leaves_per_wave=p.leaves_per_wave,
                              considered_actions=p.considered_actions, c_visit=p.c_visit, c_scale=p.c_scale)


@dataclass(frozen=True)
class ActorSpec:
    """What an actor needs to build its ``SelfPlayer`` (pickled to it once): the game, the params, the network
    config and the torch thread count the learner resolved (the same count in-process and in every actor)."""

    game_id: str
    params: dict[str, Any]
    config: Any
    threads: int

    def __call__(self) -> "ActorPlayer":
        return ActorPlayer(self)


class ActorPlayer:
    """A ``SelfPlayer`` in an actor: its own network, loaded with each generation's weights."""

    def __init__(self, spec: ActorSpec) -> None:
        import torch

        from boardrl.games import make_game
        from boardrl.learn.core.device import pick_device
        from boardrl.nn import build_network

        torch.set_num_threads(spec.threads)
        game = make_game(spec.game_id)
        p = AlphaZeroParams.model_validate(spec.params)
        device = pick_device(p.device)
        net = build_network(spec.config, game.encoding_shape, game.num_actions).to(device).eval()
        self.player = SelfPlayer(game, p, net, device, League(game, p.opponents, p.opponent_share, "alphazero"))

    def set_weights(self, weights: dict[str, Any]) -> None:
        self.player.network.load_state_dict(weights)

    def play(self, seed: int, first_game: int, n: int) -> tuple[Records, dict[str, float]]:
        clock: dict[str, float] = {}
        return self.player.play(seed, first_game, n, clock), clock
