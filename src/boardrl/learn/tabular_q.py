"""Tabular Q-learning: self-play with negamax targets, or against a fixed opponent (seed 000's algorithm).

Values are stored from the view of the player to move (negamax), so one table serves both seats and the greedy
agent is a plain argmax.  After the mover plays ``a`` in ``s`` the next decision state ``s'`` gives the target

    r                          if s' is terminal (r = the mover's result, +1/0/-1)
    +gamma * max_a' Q(s', a')  if the same player moves again in s' (an extra turn, as in Dots and Boxes)
    -gamma * max_a' Q(s', a')  if the opponent moves in s'

and ``Q(s, a) += alpha * (target - Q(s, a))``.  This is seed 000's max/min update (values for player 0, max
when player 0 moves in s', min otherwise) written from the mover's side, with the extra-turn case made explicit.
Against a fixed opponent (seed 000's FixedGameMDP) the opponent's replies are folded into the transition: s' is
the learner's next decision state, so the sign is always +.

With ``reward: margin`` the terminal reward is the final score margin instead of the result, so in games with a
score (Dots and Boxes) the values are the exact-referee margins and greedy play is margin-optimal.

Behaviour policy: epsilon-greedy with an ``Exploration`` schedule; seed 000 uses epsilon = 1 (uniform random).
Unseen entries start at N(0, init_std) (seed 000: 0.3), drawn as a pure function of (seed, state, action)
(see agents/learned.py).  ``parallel_games`` games run side by side on the batched engine and their updates are
applied one row at a time in a numba kernel, so the order is fixed and results are bit-for-bit reproducible.

``trace: true`` reproduces seed 000's experiments 01/02 ("Q-value trace"): after every training game the values
Q(start, a) of every legal action of the start position are recorded (``records()["trace"]``, rows
{game, action, q}).  Seed 000 plays one game at a time, so a trace needs ``parallel_games: 1``; then game k's
row is exactly the table after k sequential games.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numba import njit
from pydantic import Field, model_validator

from boardrl.agents.base import Agent
from boardrl.agents.learned import GreedyQAgent, QTable, greedy_first, table_find_or_insert
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.learn.core.base import Exploration, Learner, LearnError, LearnerParams, rng_from_json, rng_state_json
from boardrl.learn.core.opponent import OpponentFields, learner_players
from boardrl.learn.core.slots import GameSlots, segment_stop, waves
from boardrl.learn.core.space import BUDGET, choices, floats, fraction_of

class TabularQParams(LearnerParams, OpponentFields):
    """Defaults reproduce seed 000 experiment 03: self-play from the empty board, alpha 0.1, gamma 1,
    uniform random behaviour (epsilon 1), unseen entries N(0, 0.3), 70,000 games."""

    games: int = Field(70_000, ge=1, description="training games")
    alpha: float = Field(0.1, gt=0.0, le=1.0, description="learning rate")
    gamma: float = Field(1.0, ge=0.0, le=1.0, description="discount per decision")
    init_std: float = Field(0.3, ge=0.0, description="standard deviation of unseen entries' initial values")
    exploration: Exploration = Field(default_factory=lambda: Exploration(schedule="constant", start=1.0))
    start: str = Field("", description="move string of the position every game starts from ('' = initial)")
    parallel_games: int = Field(256, ge=1, description="games played side by side on the batched engine")
    reward: Literal["result", "margin"] = Field(
        "result", description="terminal reward: the result (+1/0/-1, seed 000) or the final score margin "
        "(games that keep a score, e.g. Dots and Boxes: learns margin-optimal play, as the referee judges it)"
    )

    trace: bool = Field(
        False, description="record Q(start, a) of every legal action after every game (seed 000 exp 01/02); "
        "needs parallel_games 1"
    )

    @model_validator(mode="after")
    def _trace_is_sequential(self) -> "TabularQParams":
        if self.trace and self.parallel_games != 1:
            raise ValueError(f"trace needs parallel_games 1 (seed 000 plays one game at a time), "
                             f"got {self.parallel_games}")
        return self


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _pick_legal(legal: np.ndarray, u: float) -> int:
    k = 0
    for a in range(legal.shape[0]):
        if legal[a]:
            k += 1
    r = min(int(u * k), k - 1)
    for a in range(legal.shape[0]):
        if legal[a]:
            if r == 0:
                return a
            r -= 1
    return -1


@njit(cache=True)
def _learner_moves(keys, used, vals, init_seed, init_std, states, legal, mover, is_learner,
                   pend_slot, pend_act, pend_mover, alpha, gamma, eps, u_explore, u_pick, actions) -> int:
    """For each learner row: finish its pending transition into this state, then choose epsilon-greedily.

    Returns the number of states inserted into the table.
    """
    inserted = 0
    for i in range(states.shape[0]):
        if not is_learner[i]:
            continue
        slot, new = table_find_or_insert(keys, used, vals, states[i], init_seed, init_std)
        inserted += new
        p = pend_slot[i]
        if p >= 0:
            best = -np.inf
            for a in range(legal.shape[1]):
                if legal[i, a] and vals[slot, a] > best:
                    best = vals[slot, a]
            sign = 1.0 if mover[i] == pend_mover[i] else -1.0
            q = vals[p, pend_act[i]]
            vals[p, pend_act[i]] = q + alpha * (sign * gamma * best - q)
        if u_explore[i] < eps:
            a = _pick_legal(legal[i], u_pick[i])
        else:
            a = greedy_first(vals[slot], legal[i])
        actions[i] = a
        pend_slot[i] = slot
        pend_act[i] = a
        pend_mover[i] = mover[i]
    return inserted


@njit(cache=True)
def _terminal_updates(vals, finished, rets, pend_slot, pend_act, pend_mover, alpha) -> None:
    """Games that just ended: the pending transition's target is the pending mover's result."""
    for i in range(finished.shape[0]):
        if finished[i]:
            p = pend_slot[i]
            if p >= 0:
                q = vals[p, pend_act[i]]
                vals[p, pend_act[i]] = q + alpha * (rets[i, pend_mover[i]] - q)
            pend_slot[i] = -1


# ---------------------------------------------------------------------------------------------- the loop
class _Trainer:
    """Plays training games in parallel slots of a batched game and updates the table."""

    def __init__(self, game: Game, p: TabularQParams, table: QTable, rng: np.random.Generator,
                 start: tuple, opponent: Agent | None) -> None:
        self.game, self.p, self.table, self.rng = game, p, table, rng
        self.start_row = np.asarray(start, dtype=np.int64)
        self.opponent = opponent
        self.learner_moves = 0
        self.games_done = 0
        self.trace_actions = game.legal_actions(start) if p.trace else []
        #: row g = Q(start, trace_actions) after game g+1 (NaN: not played yet); None without a trace
        self.trace = np.full((p.games, len(self.trace_actions)), np.nan) if p.trace else None

    def _record_trace(self, first: int, count: int) -> None:
        """Q(start, a) for the games numbered first .. first+count-1 that just ended (one, with a trace)."""
        if self.trace is not None:
            q = self.table.q_values(self.start_row)[0, self.trace_actions]
            self.trace[first:first + count] = q

    def _learner_players(self, game_numbers: np.ndarray) -> np.ndarray:
        """Player the learner is in each of these games (-1: both, in self-play)."""
        if self.opponent is None:
            return np.full(game_numbers.shape, -1, dtype=np.int64)
        return learner_players(self.p.learner_seat, game_numbers)

    def _margins(self, states: np.ndarray, finished: np.ndarray) -> np.ndarray:
        """(N, 2) final score margins from each player's view, for the rows of games that just ended."""
        out = np.zeros((states.shape[0], 2), dtype=np.float64)
        rows = np.flatnonzero(finished)
        batch_margin = getattr(self.game, "score_margin_batch", None)
        if batch_margin is not None:
            m = np.asarray(batch_margin(states[rows]), dtype=np.float64)
        else:
            st = self.game.state_type
            m = np.array([self.game.score_margin(st(*map(int, states[i]))) for i in rows], dtype=np.float64)
        out[rows, 0], out[rows, 1] = m, -m
        return out

    def play(self, first_game: int, end_game: int) -> None:
        """Play games number first_game .. end_game-1 to completion, wave by wave (learn/core/slots.py)."""
        for lo, hi in waves(first_game, end_game, self.p.parallel_games):
            self._play_wave(lo, hi)
        self.games_done = end_game

    def _play_wave(self, first_game: int, end_game: int) -> None:
        """Games first_game .. end_game-1 side by side to completion (no game left in flight)."""
        slots = GameSlots(self.game, first_game, end_game, self.p.parallel_games, self.start_row)
        batch, active, b = slots.batch, slots.active, slots.rows
        lp = self._learner_players(slots.number)
        pend_slot = np.full(b, -1, dtype=np.int64)
        pend_act = np.zeros(b, dtype=np.int64)
        pend_mover = np.zeros(b, dtype=np.int64)
        if self.opponent is not None:
            self.opponent.reset()
        while slots.running:
            states = batch.states
            legal = self.game.legal_mask_batch(states)
            mover = self.game.to_move_batch(states).astype(np.int64)
            is_learner = active & ((lp < 0) | (mover == lp))
            remap = self.table.reserve(int(is_learner.sum()))
            if remap is not None:
                pend_slot = np.where(pend_slot >= 0, remap[np.maximum(pend_slot, 0)], -1)
            u = self.rng.random((2, b))
            actions = np.zeros(b, dtype=np.int64)
            t = self.table
            t.count += _learner_moves(
                t.keys, t.used, t.vals, t.init_seed, t.init_std, states, legal, mover, is_learner,
                pend_slot, pend_act, pend_mover, self.p.alpha, self.p.gamma,
                self.p.exploration.epsilon(first_game + slots.done), u[0], u[1], actions,
            )
            self.learner_moves += int(is_learner.sum())
            opp_rows = active & ~is_learner
            if opp_rows.any():
                actions[opp_rows] = self.opponent.act_batch(states[opp_rows], self.rng)
            finished, rets = batch.step(actions)
            if not finished.any():
                continue
            if self.p.reward == "margin":
                rets = self._margins(batch.states, finished)
            _terminal_updates(self.table.vals, finished, rets, pend_slot, pend_act, pend_mover, self.p.alpha)
            self._record_trace(first_game + slots.done, int(finished.sum()))
            restart = slots.recycle(finished)
            lp[restart] = self._learner_players(slots.number[restart])


#: The schedules that move from start to end (a sweep draws their end and decay only then).
_DECAYING = {"exploration.schedule": ["linear", "exponential"]}


class TabularQLearner(Learner):
    """Tabular Q-learning (see the module docstring); the loop, checkpoints and eval points are the base's."""

    name = "tabular_q"
    params_model = TabularQParams
    unit = "games"
    small_run = ("tictactoe", {"games": 600, "parallel_games": 64, "opponent": "random", "exploration": {
        "schedule": "exponential", "start": 1.0, "end": 0.1, "decay_games": 300}})
    #: What a sweep varies (boardrl.learn.core.space); params.yaml `sweeps.<id>.space` may narrow it.  A decaying
    #: schedule's end is drawn as a fraction of its start (it never starts below its end) and its decay as a
    #: fraction of the trial's budget (it never outlasts training); a constant schedule draws neither.
    search_space = {
        "alpha": floats(0.01, 1.0, log=True),
        "gamma": floats(0.8, 1.0),
        "init_std": floats(0.0, 1.0),
        "exploration.schedule": choices("constant", "linear", "exponential"),
        "exploration.start": floats(0.05, 1.0),
        "exploration.end": fraction_of("exploration.start", 0.0, 0.5, when=_DECAYING),
        "exploration.decay_games": fraction_of(BUDGET, 0.01, 1.0, log=True, when=_DECAYING),
    }

    def check_game(self, game: Game, params: TabularQParams) -> None:
        start = self._start_state(game, params.start)
        if params.reward == "margin" and game.score_margin(start) is None:
            raise LearnError(f"tabular_q reward 'margin': {game.game_id} keeps no score; use reward 'result'")

    def setup(self, game: Game, params: TabularQParams, seed: int, opponent: Agent | None) -> None:
        init_seed = int(np.random.SeedSequence(seed, spawn_key=(1,)).generate_state(1, np.uint64)[0])
        table = QTable(len(game.state_type._fields), game.num_actions, init_seed, params.init_std)
        self.game, self.params, self.seed = game, params, int(seed)
        self.trainer = _Trainer(game, params, table, np.random.default_rng(seed),
                                self._start_state(game, params.start), opponent)

    def train_segment(self, start: int, end: int) -> int:
        stop = segment_stop(end, self.params.games, self.params.parallel_games)
        self.trainer.play(start, stop)
        return stop

    def state_dict(self) -> dict:
        keys, vals = self.trainer.table.compact()
        return {"keys": keys, "values": vals, "init_seed": int(self.trainer.table.init_seed),
                "rng": rng_state_json(self.trainer.rng), "learner_moves": self.trainer.learner_moves,
                "games_done": self.trainer.games_done,
                "trace": None if self.trainer.trace is None else self.trainer.trace.copy()}

    def load_state_dict(self, state: dict) -> None:
        self.trainer.table = QTable.from_arrays(state["keys"], state["values"], state["init_seed"],
                                                self.params.init_std)
        self.trainer.rng = rng_from_json(state["rng"])
        self.trainer.learner_moves = int(state["learner_moves"])
        self.trainer.games_done = int(state["games_done"])
        if self.trainer.trace is not None:
            self.trainer.trace = np.array(state["trace"], dtype=np.float64)

    def records(self) -> dict[str, list[dict]]:
        """``trace``: Q(start, a) after each game played so far, one row per (game, legal action)."""
        t = self.trainer
        if t.trace is None:
            return {}
        names = [self.game.format_move(a) for a in t.trace_actions]
        return {"trace": [{"game": g + 1, "action": name, "q": float(q)}
                          for g in range(t.games_done) for name, q in zip(names, t.trace[g])]}

    def _meta(self, games: int) -> dict:
        return {"learner": self.name, "seed": self.seed, "params": self.params.model_dump(mode="json"),
                "games": games}

    def snapshot(self) -> GreedyQAgent:
        return GreedyQAgent(self.game, self.trainer.table.copy(), self.name, self._meta(self.trainer.games_done))

    def final_agent(self) -> GreedyQAgent:
        t = self.trainer
        meta = {**self._meta(self.params.games), "states": len(t.table), "learner_moves": t.learner_moves}
        agent = GreedyQAgent(self.game, t.table, self.name, meta)
        agent.stats = dict(meta)  # facts of this run; the base adds its seconds (not saved with the model)
        return agent

    @staticmethod
    def _start_state(game: Game, moves: str):
        try:
            state = game.replay(moves)
        except BoardRLError as exc:
            raise LearnError(f"tabular_q start {moves!r}: {exc}") from None
        if game.is_over(state):
            raise LearnError(f"tabular_q start {moves!r}: the game is already over there")
        return state


LEARNER = TabularQLearner
