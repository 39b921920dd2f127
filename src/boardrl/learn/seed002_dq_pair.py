"""Reference system 002's DQ trained against a second, independently learning DQ (SEEDS.md "Seed 002").

The system's ``Auxiliary.train`` takes two player objects; in this regime both are DQPlayers, each with its own
network, replay, optimiser, target network and update counter (its epsilon decays in its own updates).  Seats
alternate every game and in even games the opponent (the second player) moves first.  Each player records its own
transitions (its board, its action, its board at its next turn after the other replied, reward 0; at the end its
final reward) and takes **one gradient step at each game end** for its seat.  The first player is the one the
system judges, so it is the model saved here.

**What is reused, not rewritten.**  Each player is a whole ``dqn`` learner (learn/dqn.py ``DQNLearner``) configured
as the system's DQPlayer (one game at a time, ``update_on: game_ends``, ``exploration_clock: grad_steps``; the
params are ``Seed002DqPairParams``, a ``DQNParams``).  This module owns only what the pair adds: the shared board,
whose turn it is, the seats, and the game end each player learns from.  It drives each player through the DQN
learner's own steps, exactly as ``DQNLearner.train_segment`` does for its one learner:

* ``_learner_moves``: complete the player's pending transition into the state it now faces, then choose
  epsilon-greedily from its online network and its own generator;
* ``_finish_games``: store the terminal transition with the player's result, count its game (one learning seat);
* ``_learn_due``: the gradient steps that game end (or, with ``update_on: env_steps``, that move) earns.

Why a driver instead of one learner playing the other as its ``opponent``: a DQN's opponent is an ``Agent`` that
only moves, so the second player's game ends and updates would never happen; and changing learn/dqn.py would
change the code fingerprint of every DQN experiment and make DVC retrain them all.  Relying on the three methods
above couples this module to dqn.py's internals; the tests (tests/learn/test_seed002_dq_pair.py) pin the behaviour
that coupling depends on (one update per game end and seat, each player's own counters and replay).

**Independence.**  Player one sets up from the run's seed (its initial net and generator are those of a ``dqn`` run
with that seed), player two from ``second_seed(seed)``, a stream numpy's ``SeedSequence`` keeps apart.  The players
share nothing but the board, so the order in which they learn at a game end does not matter.

**Determinism.**  The unit of work is one game, played start to end inside a segment; both players' state trees
(networks, optimisers, replays, generators, counters) are the checkpoint, so curve points, checkpoint periods and a
kill and resume leave the model's bytes unchanged.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch

from boardrl.agents.base import Agent
from boardrl.agents.network import NetworkAgent
from boardrl.games.base import Game
from boardrl.learn.core.base import Learner, LearnError
from boardrl.learn.dqn import DQNLearner
from boardrl.learn.seed002_dq_pair_params import Seed002DqPairParams

#: Names of the two players in metrics and state: player one is the model saved, player two its opponent.
PLAYER_NAMES = ("one", "two")


def player_seats(game_index: int) -> tuple[int, int]:
    """(player one's seat, player two's) in 0-based game ``game_index`` (0 moves first): in even games the opponent,
    player two, moves first, as the system's ``Auxiliary.train`` plays them."""
    one = 1 - int(game_index) % 2
    return one, 1 - one


def second_seed(seed: int) -> int:
    """Player two's seed (initial weights, exploration, minibatches): a 32-bit draw of ``SeedSequence([seed, 2])``,
    independent of player one's ``seed`` stream and still a pure function of the run's seed."""
    return int(np.random.SeedSequence([int(seed), 2]).generate_state(1)[0])


class Seed002DqPairLearner(Learner):
    """Two ``dqn`` learners as the system's DQPlayers, trained against each other (module docstring)."""

    name = "seed002_dq_pair"
    params_model = Seed002DqPairParams
    unit = "games"
    arithmetic = "torch"
    #: One thread, as ``dqn``: one position per forward pass and minibatches of 32 keep a second thread idle.
    default_threads = 1
    small_run = ("tictactoe", {"games": 60, "batch_size": 8, "buffer_size": 400, "target_every": 7, "device": "cpu",
                               "network": {"body": "mlp", "hidden": [16], "head": "dueling"},
                               "exploration": {"schedule": "exponential", "start": 1.0, "end": 0.1,
                                               "decay_games": 40}})

    def check_game(self, game: Game, params: Seed002DqPairParams) -> None:
        try:
            DQNLearner().check_game(game, params.player_params())
        except LearnError as exc:
            raise LearnError(f"{self.name}: {exc}") from None

    # ------------------------------------------------------------------ setup and state
    def setup(self, game: Game, params: Seed002DqPairParams, seed: int, opponent: Agent | None) -> None:
        if opponent is not None:
            raise LearnError(f"{self.name} plays its second learning DQ; it takes no opponent")
        self.p, self.game, self.seed = params, game, int(seed)
        inner = params.player_params()
        self.players = (DQNLearner(), DQNLearner())
        for player, player_seed in zip(self.players, (self.seed, second_seed(self.seed))):
            player.setup(game, inner, player_seed, None)
        self.board = game.batched(1, auto_reset=False)  # the one board both play on; fresh at every game start

    def state_dict(self) -> dict[str, Any]:
        return {name: player.state_dict() for name, player in zip(PLAYER_NAMES, self.players)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, player in zip(PLAYER_NAMES, self.players):
            player.load_state_dict(state[name])

    @property
    def games_done(self) -> int:
        """Games played so far (each player counts every game; player one's count is the run's)."""
        return self.players[0].counters["games_done"]

    def _meta(self) -> dict[str, Any]:
        one = self.players[0].counters
        return {"learner": self.name, "seed": self.seed, "params": self.p.model_dump(mode="json"),
                "games": one["games_done"], "steps": one["env_steps"]}

    def snapshot(self) -> NetworkAgent:
        """A greedy agent on a CPU copy of player one's online network (later training does not change it)."""
        one = self.players[0]
        net = copy.deepcopy(one.online).to("cpu").eval()
        return NetworkAgent(self.game, net, one.config, "greedy", name=self.name, meta=self._meta(), device="cpu")

    def final_agent(self) -> NetworkAgent:
        agent = self.snapshot()
        stats = {f"{name}_{key}": player.counters[key] for name, player in zip(PLAYER_NAMES, self.players)
                 for key in ("env_steps", "grad_steps")}
        agent.stats = {**self._meta(), **stats}
        return agent

    # ------------------------------------------------------------------ the loop
    def train_segment(self, start: int, end: int) -> None:
        """Games ``start`` .. ``end - 1``, each played to its end by the two players."""
        t0 = time.perf_counter()
        sums = [{"loss": torch.zeros((), device=p.device), "q": torch.zeros((), device=p.device)}
                for p in self.players]
        counts = [{"loss": 0, "q": 0} for _ in self.players]
        for index in range(start, end):
            self._game(index, sums, counts)
        metrics = {"games_per_s": (end - start) / max(time.perf_counter() - t0, 1e-9)}
        for name, player, s, c in zip(PLAYER_NAMES, self.players, sums, counts):
            metrics.update({f"{name}_epsilon": player.epsilon(),
                            f"{name}_grad_steps": float(player.counters["grad_steps"]),
                            f"{name}_replay_size": float(len(player.buffer))})
            if c["loss"]:
                metrics[f"{name}_loss"] = float(s["loss"].item()) / c["loss"]
            if c["q"]:
                metrics[f"{name}_mean_q"] = float(s["q"].item()) / c["q"]
        self.log_metrics(metrics, end)

    def _game(self, index: int, sums: list[dict], counts: list[dict]) -> None:
        """Game ``index``: the players move in turn on the shared board (each through its own DQN step), then each
        stores its final transition and learns for its seat."""
        game, board, players = self.game, self.board, self.players
        seats = player_seats(index)
        for player, seat in zip(players, seats):
            player.learner_player[0] = seat
        board.states[0] = np.asarray(game.initial_state(), dtype=np.int64)
        row = np.zeros(1, dtype=np.int64)
        per_move = self.p.update_on == "env_steps"
        while True:
            states = board.states[row]  # a copy: the player keeps it as its pending s
            mover = game.to_move_batch(states).astype(np.int64)
            k = 0 if mover[0] == seats[0] else 1
            action = players[k]._learner_moves(row, states, mover, sums[k], counts[k])
            finished, returns = board.step(action)
            players[k].counters["env_steps"] += 1
            if finished[0]:
                break
            if per_move:
                players[k]._learn_due(1, sums[k], counts[k])
        for j, player in enumerate(players):
            player.env.states[0] = board.states[0]  # the final position, from which the player's end is stored
            seat_ends = player._finish_games(finished, returns)
            player._learn_due(int(j == k) if per_move else seat_ends, sums[j], counts[j])


LEARNER = Seed002DqPairLearner
