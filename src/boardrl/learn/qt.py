"""Seed 002's tabular ``QTPlayer``: a Monte-Carlo-style backward Q-update at the end of each game.

What it reproduces (../shared/SEEDS.md, "Seed 002"; sections Games, Learning algorithms, Training loop):

* **Values.** ``Q(s, a)`` keyed by the *absolute* board (a tic-tac-toe state row ``(x, o)`` is absolute
  already), so one table serves both seats; Q starts at 0.  Defaults lr 0.2, epsilon 0.2 (constant), gamma 0.97.
* **Update.** At the end of a game, over the player's own moves newest first::

      Q(s, a) += lr * (target - Q(s, a))
      first target = the player's final reward; next target = gamma * max over the already-visited actions of s

  with rewards (P1, P2) = win (1, -1), loss (-1, 1), tie (0.2, 0.5); P1 is the player who moves first.
* **"Already visited" actions** are those with an entry in the seed's ``Qtable[state]`` dict.  ``getQ`` creates
  an entry (value 0) whenever it reads one, so a state's entries are: every action the player took there (its
  update reads it), plus *every legal action* of a state where the player ever chose greedily (the greedy
  choice reads all legal actions' values).  States where it only explored hold just the explored actions.
  The max is taken after the state's own update, so it includes the just-updated action; if that is the only
  entry, it is the max.  Here an absent entry is NaN in the training table (a table with ``init_std`` 0);
  the agents see NaN as 0, exactly what ``getQ`` returns for it.
* **Action choice.** With probability epsilon uniform over legal actions (``random.choice``); otherwise argmax of
  the legal actions' Q with ties broken **uniformly at random** (the seed's ``np.random.choice(flatnonzero(qs
  == qs.max()))``), both in training and in the seed's evaluation.
* **Regimes** (``Auxiliary.train``; seats alternate, in even games the other player moves first):
  ``opponent`` (a fixed agent, seed: Random), ``second_qt`` (a second, independently learning QTPlayer with its
  own table; the saved agent is the first one) and ``snapshots`` (self-play against a frozen ``deepcopy`` of the
  learner refreshed every 20,000 games; ``stop_learning()`` sets the copy's epsilon to 0, so the copy plays
  greedily with random ties and never learns; the first copy, of the empty table, therefore plays uniformly).

Engines.  The seed's own setting (tic-tac-toe, ``parallel_games: 1``, Random or QT opponents) runs whole games
in one numba kernel: one game, its updates, the next game, with (plies, 3) uniforms per game drawn in one stream,
so checkpoints and eval points do not change the result.  Anything else (other opponent agents, other games,
``parallel_games`` > 1) runs on the batched engine; with ``parallel_games: 1`` it is the seed's order too (the
tests check both engines entry for entry against a transcription of the seed's code).  ``parallel_games`` > 1
plays that many games side by side: a game's moves then see the table without the updates of the games beside
it (at most ``parallel_games - 1``), finished games are updated in row order (bit-for-bit reproducible), and
segment ends drain the batch.  Snapshot refreshes always fall between games.

The trained agent is a ``QTAgent`` (agents/qt.py) over the table (absent entries read as 0), saved as kind
``qt_table``: it keeps the seed's random tie-break, which the seed evaluated its QT with, where the project's
``GreedyQAgent`` breaks ties to the first action.  The two differ only where legal actions tie, i.e. in states
the learner rarely or never updated (measured at the seed's budgets: up to 2 points of the loss rate vs Random
and 4 vs MaxMin, in either direction).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numba import njit
from pydantic import BaseModel, ConfigDict, Field, model_validator

from boardrl.agents.base import Agent, RandomAgent
from boardrl.agents.learned import QTable, table_find, table_find_or_insert
from boardrl.agents.qt import QTAgent, _nth_legal, greedy_random_ties
from boardrl.games._kernels import popcount
from boardrl.games.base import Game
from boardrl.games.tictactoe import apply, legal_bits, status
from boardrl.learn.core.base import Learner, LearnError, LearnerParams, rng_from_json, rng_state_json
from boardrl.learn.core.slots import GameSlots, segment_stop, waves

REGIMES = ("opponent", "second_qt", "snapshots")


class QTRewards(BaseModel):
    """Final rewards by result and seat (SEEDS.md Seed 002, Games: win (1, -1), loss (-1, 1), tie (0.2, 0.5))."""

    model_config = ConfigDict(extra="forbid")

    win: float = Field(1.0, description="reward of the winner")
    loss: float = Field(-1.0, description="reward of the loser")
    tie_first: float = Field(0.2, description="tie reward of the player who moved first (P1, 'punished more')")
    tie_second: float = Field(0.5, description="tie reward of the player who moved second (P2)")


class QTParams(LearnerParams):
    """Defaults reproduce seed 002's QTPlayer trained against Random for 100,000 games, one game at a time."""

    games: int = Field(100_000, ge=1, description="training games")
    lr: float = Field(0.2, gt=0.0, le=1.0, description="learning rate of the backward update")
    epsilon: float = Field(0.2, ge=0.0, le=1.0, description="constant exploration rate of each learning QT")
    gamma: float = Field(0.97, ge=0.0, le=1.0, description="discount per own move in the backward update")
    regime: Literal["opponent", "second_qt", "snapshots"] = Field(
        "opponent", description="opponent: a fixed agent; second_qt: a second learning QT with its own table; "
        "snapshots: a frozen greedy copy of the own table, refreshed every snapshot_every games")
    opponent: str = Field("random", description="make_agent spec of the fixed opponent (regime opponent only)")
    snapshot_every: int = Field(20_000, ge=1, description="games between refreshes of the frozen copy "
                                "(regime snapshots only; seed code 20,000, its notebook text 10,000)")
    rewards: QTRewards = Field(default_factory=QTRewards, description="final rewards by result and seat")
    parallel_games: int = Field(1, ge=1, description="games played side by side (1 = the seed's exact order)")

    @model_validator(mode="after")
    def _regime_fields(self) -> "QTParams":
        if self.regime != "opponent" and "opponent" in self.model_fields_set:
            raise ValueError(f"opponent applies only to regime 'opponent', not {self.regime!r}")
        if self.regime != "snapshots" and "snapshot_every" in self.model_fields_set:
            raise ValueError(f"snapshot_every applies only to regime 'snapshots', not {self.regime!r}")
        return self


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def qt_move(keys, used, vals, learning, row, legal, eps, u_explore, u_pick, u_tie) -> tuple[int, int, bool]:
    """One epsilon-greedy move of a QT in state ``row``: (action, slot, state inserted).

    A learning QT inserts the state (no entries yet: NaN) and, after a greedy choice, creates the entries of all
    legal actions (getQ read them); a frozen QT only reads (slot -1 for a state it never stored).
    """
    inserted = False
    if learning:
        slot, inserted = table_find_or_insert(keys, used, vals, row, np.uint64(0), 0.0)
        if inserted:
            vals[slot, :] = np.nan
        q = vals[slot]
    else:
        slot = table_find(keys, used, row)
        q = vals[slot] if slot >= 0 else np.zeros(vals.shape[1])
    explore = u_explore < eps
    if explore:
        a = _nth_legal(legal, q, 0.0, False, u_pick)
    else:
        a = greedy_random_ties(q, legal, u_tie)
        if learning:
            for b in range(legal.shape[0]):
                if legal[b] and np.isnan(vals[slot, b]):
                    vals[slot, b] = 0.0
    return a, slot, inserted


@njit(cache=True)
def _qt_moves(keys, used, vals, learning, states, legal, rows, eps, u, hist_slot, hist_act, hist_len,
              actions) -> int:
    """``qt_move`` for each of the ``rows`` one QT plays (``u``: (3, N) uniforms); returns states inserted."""
    inserted = 0
    for i in range(states.shape[0]):
        if not rows[i]:
            continue
        a, slot, new = qt_move(keys, used, vals, learning, states[i], legal[i], eps, u[0, i], u[1, i], u[2, i])
        inserted += new
        if learning:
            hist_slot[i, hist_len[i]] = slot
            hist_act[i, hist_len[i]] = a
            hist_len[i] += 1
        actions[i] = a
    return inserted


@njit(cache=True)
def final_reward(result: float, player: int, win: float, loss: float, tie_first: float, tie_second: float) -> float:
    """The seed's reward of ``player`` (0 = moved first) for its result (+ win, - loss, 0 tie)."""
    if result > 0:
        return win
    if result < 0:
        return loss
    return tie_first if player == 0 else tie_second


@njit(cache=True)
def backward_update(vals, slots, acts, n, reward, lr, gamma) -> None:
    """The seed's ``QTPlayer.learn``: newest move first, target = reward, then gamma * max of the state's entries."""
    target = reward
    for k in range(n - 1, -1, -1):
        s, a = slots[k], acts[k]
        q = vals[s, a]
        if np.isnan(q):
            q = 0.0
        vals[s, a] = q + lr * (target - q)
        best = -np.inf
        for b in range(vals.shape[1]):
            v = vals[s, b]
            if not np.isnan(v) and v > best:
                best = v
        target = gamma * best


@njit(cache=True)
def _learn_finished(vals, finished, player, rets, hist_slot, hist_act, hist_len, lr, gamma, rewards) -> None:
    """Backward updates of the finished rows, in row order; ``player[i]`` is the seat this QT had in row i."""
    for i in range(finished.shape[0]):
        if not finished[i]:
            continue
        p = player[i]
        r = final_reward(rets[i, p], p, rewards[0], rewards[1], rewards[2], rewards[3])
        backward_update(vals, hist_slot[i], hist_act[i], hist_len[i], r, lr, gamma)
        hist_len[i] = 0


#: Kinds of the player beside the learner in the tic-tac-toe kernel.
OTHER_RANDOM, OTHER_LEARNING, OTHER_FROZEN = 0, 1, 2
#: Unfinished tic-tac-toe states reachable from the empty board: no QT table can hold more.
TTT_UNFINISHED = 4520
TTT_PLIES = 9


@njit(cache=True)
def _ttt_result(status: int, player: int) -> float:
    """+1 / 0 / -1 for ``player`` from tictactoe.status (0 X won, 1 O won, 2 draw)."""
    if status == 2:
        return 0.0
    return 1.0 if status == player else -1.0


@njit(cache=True)
def _ttt_games(first, u, a_keys, a_used, a_vals, b_keys, b_used, b_vals, other_kind, eps, lr, gamma,
               rewards) -> tuple[int, int]:
    """Tic-tac-toe games ``first ..`` one at a time, each followed by its updates: the seed's exact order.

    ``u[g, ply]`` = (explore, pick, tie) uniforms of the mover at that ply; a random opponent uses the pick.
    Table b is the second QT (learning) or the frozen copy.  Returns the states inserted into a and b.
    """
    inserted_a, inserted_b = 0, 0
    slots = np.zeros((2, 5), dtype=np.int64)
    acts = np.zeros((2, 5), dtype=np.int64)
    lens = np.zeros(2, dtype=np.int64)
    legal = np.zeros(9, dtype=np.bool_)
    row = np.zeros(2, dtype=np.int64)
    dummy = np.zeros(9)
    for g in range(u.shape[0]):
        lp = 1 - (first + g) % 2
        x, o, st, ply = 0, 0, -1, 0
        lens[:] = 0
        while st == -1:
            bits = legal_bits(x, o)
            for c in range(9):
                legal[c] = (bits >> c) & 1
            row[0], row[1] = x, o
            mover = 0 if popcount(x) == popcount(o) else 1
            side = 0 if mover == lp else 1
            ue, up, ut = u[g, ply, 0], u[g, ply, 1], u[g, ply, 2]
            if side == 0:
                a, slot, new = qt_move(a_keys, a_used, a_vals, True, row, legal, eps, ue, up, ut)
                inserted_a += new
            elif other_kind == OTHER_RANDOM:
                a, slot = _nth_legal(legal, dummy, 0.0, False, up), -1
            else:
                learns = other_kind == OTHER_LEARNING
                a, slot, new = qt_move(b_keys, b_used, b_vals, learns, row, legal, eps if learns else 0.0,
                                       ue, up, ut)
                inserted_b += new
            if side == 0 or other_kind == OTHER_LEARNING:
                slots[side, lens[side]], acts[side, lens[side]] = slot, a
                lens[side] += 1
            x, o = apply(x, o, a)
            st = status(x, o)
            ply += 1
        r = final_reward(_ttt_result(st, lp), lp, rewards[0], rewards[1], rewards[2], rewards[3])
        backward_update(a_vals, slots[0], acts[0], lens[0], r, lr, gamma)
        if other_kind == OTHER_LEARNING:
            p = 1 - lp
            r = final_reward(_ttt_result(st, p), p, rewards[0], rewards[1], rewards[2], rewards[3])
            backward_update(b_vals, slots[1], acts[1], lens[1], r, lr, gamma)
    return inserted_a, inserted_b


# ---------------------------------------------------------------------------------------------- the players
class _QTSide:
    """One QTPlayer in the batch: its table, whether it learns, its epsilon and its per-row move history."""

    def __init__(self, table: QTable, learning: bool, epsilon: float, rows: int, horizon: int) -> None:
        self.table, self.learning, self.epsilon = table, learning, epsilon
        self.hist_slot = np.zeros((rows, horizon), dtype=np.int64)
        self.hist_act = np.zeros((rows, horizon), dtype=np.int64)
        self.hist_len = np.zeros(rows, dtype=np.int64)

    def move(self, states: np.ndarray, legal: np.ndarray, rows: np.ndarray, u: np.ndarray,
             actions: np.ndarray) -> None:
        if self.learning:
            self._make_room(int(rows.sum()))
        t = self.table
        t.count += _qt_moves(t.keys, t.used, t.vals, self.learning, states, legal, rows, self.epsilon, u,
                             self.hist_slot, self.hist_act, self.hist_len, actions)

    def learn(self, finished: np.ndarray, player: np.ndarray, rets: np.ndarray, p: QTParams) -> None:
        r = p.rewards
        rewards = np.array([r.win, r.loss, r.tie_first, r.tie_second], dtype=np.float64)
        _learn_finished(self.table.vals, finished, player, rets, self.hist_slot, self.hist_act, self.hist_len,
                        p.lr, p.gamma, rewards)

    def _make_room(self, extra: int) -> None:
        """Table capacity for ``extra`` inserts (remapping recorded slots) and history room for one more move."""
        remap = self.table.reserve(extra)
        if remap is not None:
            self.hist_slot = remap[self.hist_slot]  # entries past hist_len are unused: whatever they map to
        if self.hist_len.max(initial=0) >= self.hist_slot.shape[1]:
            pad = self.hist_slot.shape[1]
            self.hist_slot = np.pad(self.hist_slot, ((0, 0), (0, pad)))
            self.hist_act = np.pad(self.hist_act, ((0, 0), (0, pad)))


def new_table(game: Game) -> QTable:
    """An empty Q table with every unseen value 0 (the seed's Q initialisation)."""
    return QTable(len(game.state_type._fields), game.num_actions, init_seed=0, init_std=0.0)


def zero_filled(table: QTable) -> QTable:
    """A copy with absent entries (NaN) read as 0, as ``getQ`` reads them: what the greedy agents use."""
    out = table.copy()
    np.nan_to_num(out.vals, copy=False, nan=0.0)
    return out


# ---------------------------------------------------------------------------------------------- the loop
class _Trainer:
    """Plays the training games of one regime, ``parallel_games`` at a time, and updates the learning tables."""

    def __init__(self, game: Game, p: QTParams, rng: np.random.Generator, opponent: Agent | None) -> None:
        self.game, self.p, self.rng, self.opponent = game, p, rng, opponent
        self.table = new_table(game)  # the saved QT
        self.other = new_table(game) if p.regime != "opponent" else None  # second QT, or the frozen copy
        self.games_done = 0
        self.other_kind = {"second_qt": OTHER_LEARNING, "snapshots": OTHER_FROZEN}.get(p.regime, OTHER_RANDOM)
        # The seed's own setting (tic-tac-toe, one game at a time, QT or Random opponents) runs whole games in
        # one numba kernel; anything else (other games or opponents, games side by side) on the batched engine.
        self.whole_games = (game.game_id == "tictactoe" and p.parallel_games == 1
                            and (opponent is None or type(opponent) is RandomAgent))

    def wave(self) -> tuple[int, ...]:
        """The wave of games side by side (slots.py), or none: the seed's one-game-at-a-time kernel may stop
        after any game without changing the games (its draws are per game)."""
        return () if self.whole_games else (self.p.parallel_games,)

    def play(self, first: int, end: int) -> None:
        """Games number first .. end-1; the frozen copy is refreshed after every multiple of snapshot_every."""
        snap = (self.p.snapshot_every,) if self.p.regime == "snapshots" else ()
        for lo, stop in waves(first, end, *snap, *self.wave()):
            if self.whole_games:
                self._play_ttt(lo, stop)
            else:
                self._play_block(lo, stop)
            if self.p.regime == "snapshots" and stop % self.p.snapshot_every == 0:
                self.other = self.table.copy()  # deepcopy + stop_learning(): same values, never updated

    def _play_ttt(self, first: int, end: int, chunk: int = 4096) -> None:
        """Games first .. end-1 in the tic-tac-toe kernel, ``chunk`` games' uniforms drawn at a time."""
        r = self.p.rewards
        rewards = np.array([r.win, r.loss, r.tie_first, r.tie_second], dtype=np.float64)
        a = self.table
        b = self.other if self.other is not None else new_table(self.game)
        for t in (a, b):
            t.reserve(max(0, TTT_UNFINISHED - t.count))  # never grows inside the kernel
        for lo in range(first, end, chunk):
            u = self.rng.random((min(chunk, end - lo), TTT_PLIES, 3))
            new_a, new_b = _ttt_games(lo, u, a.keys, a.used, a.vals, b.keys, b.used, b.vals, self.other_kind,
                                      self.p.epsilon, self.p.lr, self.p.gamma, rewards)
            a.count += new_a
            b.count += new_b
        self.games_done = end

    def _sides(self, rows: int) -> tuple[_QTSide, _QTSide | None]:
        horizon = self.game.num_actions
        learner = _QTSide(self.table, True, self.p.epsilon, rows, horizon)
        if self.p.regime == "opponent":
            return learner, None
        learns = self.p.regime == "second_qt"
        return learner, _QTSide(self.other, learns, self.p.epsilon if learns else 0.0, rows, horizon)

    @staticmethod
    def _learner_players(game_numbers: np.ndarray) -> np.ndarray:
        """The learner's player in each game: in even games the other side moves first (SEEDS.md Training loop)."""
        return (1 - game_numbers % 2).astype(np.int64)

    def _play_block(self, first: int, end: int) -> None:
        slots = GameSlots(self.game, first, end, self.p.parallel_games, np.asarray(self.game.initial_state()))
        batch, active, b = slots.batch, slots.active, slots.rows
        lp = self._learner_players(slots.number)
        learner, other = self._sides(b)
        if self.opponent is not None:
            self.opponent.reset()
        while slots.running:
            states = batch.states
            legal = self.game.legal_mask_batch(states)
            mover = self.game.to_move_batch(states).astype(np.int64)
            mine = active & (mover == lp)
            theirs = active & ~mine
            u = self.rng.random((2, 3, b))
            actions = np.zeros(b, dtype=np.int64)
            learner.move(states, legal, mine, u[0], actions)
            if other is not None:
                other.move(states, legal, theirs, u[1], actions)
            elif theirs.any():
                actions[theirs] = self.opponent.act_batch(states[theirs], self.rng)
            finished, rets = batch.step(actions)
            if not finished.any():
                continue
            learner.learn(finished, lp, rets, self.p)
            if other is not None and other.learning:
                other.learn(finished, 1 - lp, rets, self.p)
            restart = slots.recycle(finished)
            lp[restart] = self._learner_players(slots.number[restart])
        self.games_done = end


class QTLearner(Learner):
    """Seed 002's QTPlayer (see the module docstring); the loop, checkpoints and eval points are the base's."""

    name = "qt"
    params_model = QTParams
    unit = "games"
    small_run = ("tictactoe", {"games": 600, "regime": "snapshots", "snapshot_every": 150, "parallel_games": 64})

    def opponent_spec(self, params: QTParams) -> str | None:
        return params.opponent if params.regime == "opponent" else None

    def setup(self, game: Game, params: QTParams, seed: int, opponent: Agent | None) -> None:
        if params.regime == "opponent" and opponent is None:
            raise LearnError("qt regime 'opponent' needs an opponent agent")
        if params.regime != "opponent" and opponent is not None:
            raise LearnError(f"qt regime {params.regime!r} trains against QT players, not against {opponent.name!r}")
        self.game, self.params, self.seed = game, params, int(seed)
        self.trainer = _Trainer(game, params, np.random.default_rng(seed), opponent)

    def train_segment(self, start: int, end: int) -> int:
        stop = segment_stop(end, self.params.games, *self.trainer.wave())
        self.trainer.play(start, stop)
        return stop

    def state_dict(self) -> dict:
        t = self.trainer
        keys, vals = t.table.compact()
        state = {"keys": keys, "values": vals, "rng": rng_state_json(t.rng), "games_done": t.games_done}
        if t.other is not None:
            state["other_keys"], state["other_values"] = t.other.compact()
        return state

    def load_state_dict(self, state: dict) -> None:
        t = self.trainer
        t.table = QTable.from_arrays(state["keys"], state["values"], 0, 0.0)
        if t.other is not None:
            t.other = QTable.from_arrays(state["other_keys"], state["other_values"], 0, 0.0)
        t.rng = rng_from_json(state["rng"])
        t.games_done = int(state["games_done"])

    def _meta(self, games: int) -> dict:
        return {"learner": self.name, "seed": self.seed, "params": self.params.model_dump(mode="json"),
                "games": games}

    def snapshot(self) -> QTAgent:
        return QTAgent(self.game, zero_filled(self.trainer.table), self.name, self._meta(self.trainer.games_done))

    def final_agent(self) -> QTAgent:
        table = zero_filled(self.trainer.table)
        meta = {**self._meta(self.params.games), "states": len(table)}
        agent = QTAgent(self.game, table, self.name, meta)
        agent.stats = dict(meta)  # facts of this run; the base adds its seconds (not saved with the model)
        return agent


LEARNER = QTLearner
