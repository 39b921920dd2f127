"""Seed 004's "Q-learning" on Conniption: an exponential moving average of an immediate score, one table per pairing.

What it reproduces (SEEDS.md, "Seed 004", section "Learning agents"; the seed's final ``src/agents/reinforce.py``
and ``src/agents/evaluation.py`` @38545e0, read where SEEDS.md is silent):

* **Table.** Keyed by the whole Conniption state row (board, stage, flips of each player, last-flip flag, player,
  status).  The seed keys by (board, stage, num_flips, is_down); ``is_down`` is the parity of the flip counts, so
  our key is that key plus the last-flip flag (finer, never coarser).  Values are player 0's view and start at 0.
* **Update**, no bootstrapping, no discount: ``Q(s, a) <- (1 - alpha) Q(s, a) + alpha * reward``, alpha 0.45.
* **Rewards.**  ``qlearn``: the evaluation (Flip by default) of the state right after the stage-move.
  ``minimaxq``: the depth-3 minimax value of the chosen move from the seed's AI search
  (``agents.conniption.root_values``, the benchmark players' own search).  A ``none`` gets a bonus from the
  mover's view (player 0 maximises, player 1 minimises): the reward is multiplied by the factor when it is
  favourable to the mover (> 0 for player 0, < 0 for player 1) and divided by it otherwise; the factor is 1.5
  for qlearn and 2 for minimaxq (``tieChoice_priority_qlearn``).
* **Policy.** epsilon-greedy over the legal moves; player 0 takes the largest Q, player 1 the smallest.  Ties:
  uniform among the tied legal moves (the seed's ``choose_action``: ``random.choice(max_states)``; SEEDS.md
  does not say) or, with ``tie_break: priority``, the benchmark players' ``priority_tie_break``.  A decision
  with one legal move is played without a draw or an update (the seed updates that entry too, but an entry
  whose state has one legal move is never read, so play is the same).
* **Schedule.** Game ``g`` (0-based) is played with ``epsilon = exp(-decay * g)``; training stops at the first
  game whose epsilon would be below ``tolerance`` (at least 20 games): 1,727 games for qlearn (decay 0.004),
  1,382 for minimaxq (0.005).  ``games`` defaults to that number and any other value is refused: the budget
  is part of the schedule, not a free knob (shrink it through ``decay`` or ``tolerance``).
* **One table per opponent and seat** (``opponent``, ``learner_seat``), as QLEARN1 / QLEARN2 / MINIMAXQ1 /
  MINIMAXQ2 against one benchmark each.  ``learner_seat: both`` runs the two one-seat trainings side by side
  (each its own generator from the same seed, so each table is exactly the one its one-seat run gives) and keeps
  both tables in one agent, which plays the table of the seat it is given.  Why: the pipeline then needs one
  experiment per opponent instead of two; each of seed 004's twenty one-table stages spent more time starting
  Python, MLflow and DVC's lock update than its two seconds of training.
* **Test play** (the seed's in-simulator test: learning on, epsilon = alpha = 0): the table is frozen, a state
  never seen has all values 0, so the tie rule decides there.  ``Seed004QAgent`` (agents/seed004_q.py) plays
  exactly that.

Not reproduced: the seed's first test game still runs with alpha 0.45 and epsilon ~0.001 (its ``reset``
switches to test mode only after that game), and its global root cache (see ``agents/conniption.py``).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from boardrl.agents.base import Agent
from boardrl.agents.conniption import EVALUATIONS, RANDOM_EVAL, evaluate, root_values
from boardrl.agents.learned import QTable, table_find_or_insert
from boardrl.agents.seed004_q import Seed004QAgent, greedy_action
from boardrl.games.base import Game
from boardrl.games.conniption import NONE, Conniption, ConniptionState, apply
from boardrl.learn.core.base import Learner, LearnError, LearnerParams, rng_from_json, rng_state_json

#: The seats ``learner_seat`` trains a table for, in the order of the agent's tables.
TRAINED_SEATS = {"first": (0,), "second": (1,), "both": (0, 1)}
#: Per rule: epsilon decay ``a`` of exp(-a * game) and the ``none`` bonus factor (SEEDS.md, "Learning agents").
DECAY = {"qlearn": 0.004, "minimaxq": 0.005}
NONE_BONUS = {"qlearn": 1.5, "minimaxq": 2.0}
SEARCH_DEPTH = 3  # the seed's NUM_LOOK, MinimaxQ's search depth
MIN_GAMES = 20  # the seed's simulator trains at least 20 games


# ---------------------------------------------------------------------------------------------- the seed's numbers
def derived_games(decay: float, tolerance: float) -> int:
    """Training games of the seed's loop: the first game g with exp(-decay * g) < tolerance, at least 20."""
    return max(MIN_GAMES, math.floor(math.log(1.0 / tolerance) / decay) + 1)


def epsilon(decay: float, game_index: int) -> float:
    """epsilon of 0-based training game ``game_index`` (the seed: e ** (-a * trial) after each finished game)."""
    return math.exp(-decay * game_index)


def none_bonus(value: float, mover: int, factor: float) -> float:
    """The seed's bias towards ``none``: x factor when ``value`` favours the mover (player 0: > 0, player 1: < 0)."""
    favourable = value > 0 if mover == 0 else value < 0
    return value * factor if favourable else value / factor


# ---------------------------------------------------------------------------------------------- params
class Seed004QParams(LearnerParams):
    """Defaults reproduce seed 004's QLEARN1 against Flip (final code: Flip evaluation, alpha 0.45)."""

    rule: Literal["qlearn", "minimaxq"] = Field(
        "qlearn", description="qlearn: reward = evaluation after the move; minimaxq: depth-3 minimax value of it")
    opponent: str = Field("flip", description="make_agent spec of the fixed opponent (one table per opponent)")
    learner_seat: Literal["first", "second", "both"] = Field(
        "first", description="the learner's fixed seat; both: one table per seat, trained side by side")
    evaluation: Literal[EVALUATIONS] = Field("flip", description="evaluation function of the rewards")
    alpha: float = Field(0.45, gt=0.0, le=1.0, description="moving-average rate")
    decay: float | None = Field(
        None, gt=0.0, description="a in epsilon = exp(-a * game); null: the rule's seed value (0.004, 0.005)")
    tolerance: float = Field(0.001, gt=0.0, lt=1.0, description="training stops once epsilon < tolerance")
    games: int | None = Field(
        None, ge=1, description="training games; null: derived from decay and tolerance (others are refused)")
    tie_break: Literal["uniform", "priority"] = Field(
        "uniform", description="ties among best moves: uniform (seed's code) or none > place > flip")

    @model_validator(mode="after")
    def _derive_budget(self) -> "Seed004QParams":
        if self.decay is None:
            self.decay = DECAY[self.rule]
        need = derived_games(self.decay, self.tolerance)
        if self.games is None:
            self.games = need
        elif self.games != need:
            raise ValueError(f"games {self.games} disagrees with the schedule: epsilon = exp(-{self.decay} g) "
                             f"falls below {self.tolerance} after {need} games; leave games out or change "
                             "decay/tolerance")
        return self


# ---------------------------------------------------------------------------------------------- training
class _Trainer:
    """One table's training games, one after another (the seed's order: each game sees every earlier update)."""

    def __init__(self, game: Conniption, p: Seed004QParams, seat: int, opponent: Agent,
                 rng: np.random.Generator) -> None:
        self.game, self.p, self.seat, self.opponent, self.rng = game, p, seat, opponent, rng
        self.table = QTable(len(game.state_type._fields), game.num_actions, 0, 0.0)
        self.code = EVALUATIONS.index(p.evaluation)
        self.games_done = 0
        self.learner_moves = 0

    def play(self, start: int, end: int) -> None:
        for g in range(start, end):
            self._game(epsilon(self.p.decay, g))
        self.games_done = end

    def _game(self, eps: float) -> None:
        game, state = self.game, self.game.initial_state()
        self.opponent.reset()
        while not game.is_over(state):
            if state.player == self.seat:
                action = self._learner_move(state, eps)
            else:
                action = self.opponent.act(state, self.rng)
            state = game.play(state, action)

    def _learner_move(self, state: ConniptionState, eps: float) -> int:
        legal = self.game.legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        t = self.table
        t.reserve(1)
        slot, inserted = table_find_or_insert(t.keys, t.used, t.vals, np.asarray(state, dtype=np.int64),
                                              t.init_seed, t.init_std)
        t.count += int(inserted)
        if self.rng.random() < eps:
            action = int(legal[self.rng.integers(len(legal))])
        else:
            action = greedy_action(t.vals[slot], legal, state.player, self.p.tie_break, self.rng)
        q = t.vals[slot, action]
        t.vals[slot, action] = (1.0 - self.p.alpha) * q + self.p.alpha * self.reward(state, action)
        self.learner_moves += 1
        return action

    def reward(self, state: ConniptionState, action: int) -> float:
        """The seed's immediate reward of ``action`` in ``state`` (player 0's view, ``none`` bonus applied)."""
        rng_state = self._eval_rng()
        if self.p.rule == "qlearn":
            t = apply(*state, action, self.game.seed_draw_rule)
            value = float(evaluate(t[0], t[1], t[3], t[4], self.code, rng_state))
        else:
            counter = np.zeros(1, dtype=np.int64)
            vals = root_values(*state, SEARCH_DEPTH, self.code, self.game.seed_draw_rule, rng_state, counter)
            value = float(vals[action])
        if action == NONE:
            value = none_bonus(value, state.player, NONE_BONUS[self.p.rule])
        return value

    def _eval_rng(self) -> np.ndarray:
        """State of the compiled search's generator: drawn only for the Random evaluation, which uses it."""
        seed = self.rng.integers(1, 2**63) if self.code == RANDOM_EVAL else 1
        return np.array([seed], dtype=np.uint64)


class Seed004QLearner(Learner):
    """Seed 004's QLearn / MinimaxQ (module docstring); the loop, checkpoints and eval points are the base's.

    ``games`` counts each table's games: ``learner_seat: both`` plays that many for each seat.
    """

    name = "seed004_q"
    params_model = Seed004QParams
    unit = "games"
    small_run = ("conniption", {"decay": 0.05, "tolerance": 0.01, "opponent": "random", "learner_seat": "both"})

    def check_game(self, game: Game, params: Seed004QParams) -> None:
        if not isinstance(game, Conniption):
            raise LearnError(f"seed004_q plays conniption only, got game {game.game_id!r}")

    def setup(self, game: Game, params: Seed004QParams, seed: int, opponent: Agent | None) -> None:
        if opponent is None:
            raise LearnError("seed004_q needs an opponent (params.opponent)")
        self.game, self.params, self.seed = game, params, int(seed)
        self.trainers = [_Trainer(game, params, seat, opponent, np.random.default_rng(seed))
                         for seat in TRAINED_SEATS[params.learner_seat]]

    def train_segment(self, start: int, end: int) -> None:
        for trainer in self.trainers:
            trainer.play(start, end)

    def state_dict(self) -> dict:
        seats = []
        for t in self.trainers:
            keys, vals = t.table.compact()
            seats.append({"keys": keys, "values": vals, "rng": rng_state_json(t.rng), "games_done": t.games_done,
                          "learner_moves": t.learner_moves})
        return {"seats": seats}

    def load_state_dict(self, state: dict) -> None:
        for t, saved in zip(self.trainers, state["seats"], strict=True):
            t.table = QTable.from_arrays(saved["keys"], saved["values"], 0, 0.0)
            t.rng = rng_from_json(saved["rng"])
            t.games_done = int(saved["games_done"])
            t.learner_moves = int(saved["learner_moves"])

    def _meta(self) -> dict:
        return {"learner": self.name, "seed": self.seed, "params": self.params.model_dump(mode="json"),
                "games": self.trainers[0].games_done}

    def snapshot(self) -> Seed004QAgent:
        tables = tuple(t.table.copy() for t in self.trainers)
        return Seed004QAgent(self.game, tables, self.params.tie_break, self.name, self._meta())

    def final_agent(self) -> Seed004QAgent:
        meta = {**self._meta(), "states": sum(len(t.table) for t in self.trainers),
                "learner_moves": sum(t.learner_moves for t in self.trainers)}
        agent = Seed004QAgent(self.game, tuple(t.table for t in self.trainers), self.params.tie_break, self.name,
                              meta)
        agent.stats = dict(meta)
        return agent


LEARNER = Seed004QLearner
