"""DQN for two-player board games: replay, target network, Double DQN, dueling heads, n-step, masking.

Read top to bottom, CleanRL style: the params (one pydantic model), the TD target, the n-step folder, then the
loop.  Values are from the view of the player to move (negamax), so one network plays both seats.

**Self-play (``opponent: null``).**  After the mover plays ``a`` in ``s``, the next decision state ``s'`` gives

    y = r                                          if the game ended (r = the mover's result, or its score
                                                   margin with ``reward: margin``)
    y = r + gamma * sign * max_a' Q_target(s', a') otherwise; sign = +1 when the same player moves again in s'
                                                   (Dots and Boxes extra turn, Conniption stages), -1 when the
                                                   opponent moves

with the max over the *legal* actions of s' only.  Double DQN (van Hasselt et al. 2016; seed 002's update):
the online network picks ``a*`` = argmax over legal actions, the target network evaluates ``Q_target(s', a*)``.
n-step returns fold n consecutive decisions of one game: G = r_0 + gamma s_0 (r_1 + gamma s_1 (...)) with the
signs multiplied along the way, bootstrapping with gamma^n times the product of all n signs.

With ``reward: boxes`` every transition pays r = the change of the mover's score margin from s to s' (the
boxes it took minus those the opponent took in between; at the end, up to the final score), so with gamma 1
Q is the margin still to win, as in the tabular learners' margin reward (dots_table, tabular_q).  The greedy
policy is the one of ``reward: margin`` (the two returns differ by the margin already on the board), but a
box taken is rewarded at once instead of at the game's end, 20-odd decisions later.

**Fixed opponent (``opponent: <agent spec>``; seed 000's FixedGameMDP).**  The opponent's replies are folded
into the transition: s' is the learner's next decision state (or the end), so the sign is always +1.
``learner_seat`` picks which player the learner is (alternate: by game number).  League games (``opponents``
with ``opponent_share``, ``learn/core/league.py``) are such games for a share of the rows' games, the rest self-play;
each transition keeps its own sign, so the two kinds share one replay.

**Start positions.**  ``starts: uci`` starts every game from a uniformly drawn UCI 8-ply Connect 4 position
(X = player 0 to move; seed 000's experiment 04 with ``opponent: random, learner_seat: first``).

**Acting.**  ``parallel_envs`` games run side by side on the batched engine without auto-reset; every vector
step the rows where the learner moves get one batched forward pass, epsilon-greedy over legal actions (the
``Exploration`` schedule runs in learner env steps, or in gradient steps with ``exploration_clock``).  A finished row restarts at once.  ``steps`` counts the
learner's decisions; games in flight carry over from one segment to the next (saved in the checkpoint), and a
segment ends after a whole vector step, so curve points and checkpoints do not change the training; only the
run's last vector step lets just as many learner rows act as the budget has left.

**Learning.**  After ``learning_starts`` env steps, ``gradient_steps`` minibatches per ``train_every`` env
steps (a fractional credit carried across vector steps), or with ``update_on: game_ends`` per ``train_every``
finished games of the learner, counted per learning seat (seed 002's DQPlayer: one step at each game end, and
its epsilon decays in those steps: ``exploration_clock: grad_steps``), Adam (``lr`` throughout, or falling linearly to
``lr_end`` over the run), huber or MSE loss, gradient clipping by norm and/or value, target network copied
every ``target_every`` gradient steps (``tau`` 1) or moved by Polyak averaging (``tau`` < 1) at that period.
The replay keeps state rows, encoded to planes when sampled; ``symmetry`` maps each sampled transition by a
uniformly drawn symmetry of the board first (``symmetric_images``), so a line learned in one orientation is
learned in all (tic-tac-toe: 8, Connect 4: 2).

Defaults: seed 002's DQPlayer where it has a value (Double DQN, Adam 1e-3, replay 100,000, gamma 0.99; its
dueling net is ``network: seed002``); batch, update ratio, target period and the schedule are ours, chosen for
throughput on many parallel games (the seed takes one gradient step per game end).  The seed-000 and seed-001
protocols are experiments in params.yaml (see the report).
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from boardrl.agents.base import Agent
from boardrl.agents.network import NetworkAgent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game, random_legal_actions
from boardrl.learn.core.base import Learner, LearnError, rng_from_json, rng_state_json
from boardrl.learn.core.device import adam, pick_device, torch_threads
from boardrl.learn.dqn_params import DQNParams
from boardrl.learn.core.league import League
from boardrl.learn.core.opponent import learner_players
from boardrl.nn import AnyNetwork, build_network, network_preset, parse_network_config
from boardrl.learn.core.replay import ReplayBuffer

def resolve_network(spec: str | dict, game: Game) -> AnyNetwork:
    """The full network config a params ``network`` stands for on this game."""
    return network_preset(spec, game.encoding_shape) if isinstance(spec, str) else parse_network_config(spec)


# ---------------------------------------------------------------------------------------------- the TD target
def masked(q: Tensor, legal: Tensor) -> Tensor:
    """Q with illegal actions at -inf, so neither a max nor an argmax can pick them."""
    return q.masked_fill(~legal, float("-inf"))


def td_targets(online: nn.Module, target: nn.Module, reward: Tensor, next_obs: Tensor, next_legal: Tensor,
               done: Tensor, same_mover: Tensor, gamma_n: float, double: bool) -> Tensor:
    """y = r + gamma^n * sign * Q_target(s', a*), the bootstrap cut at the end (module docstring).

    a* = argmax over legal actions of the online net (Double DQN) or of the target net (plain DQN).  Call
    under ``torch.no_grad`` with the networks in the mode they should evaluate in.
    """
    q_target = target(next_obs)
    chooser = online(next_obs) if double else q_target
    best = masked(chooser, next_legal).argmax(dim=1, keepdim=True)
    value = q_target.gather(1, best).squeeze(1)
    bootstrap = ~done & next_legal.any(dim=1)
    sign = torch.where(same_mover, 1.0, -1.0)
    return reward + torch.where(bootstrap, gamma_n * sign * value, torch.zeros_like(value))


def seed001_targets(q_sa: Tensor, target: nn.Module, reward: Tensor, next_obs: Tensor, next_legal: Tensor,
                    done: Tensor, same_mover: Tensor, gamma_n: float) -> Tensor:
    """Seed 001's "conditional minimax" target (SEEDS.md, Seed 001, Target): y = Q(s,a) + tanh(r) + gamma * phi *
    max over legal a' of Q_target(s', a'), phi = +1 when the learner moves again, -1 otherwise, 0 after the end.

    Kept as the seed wrote it (Q(s,a) itself is part of the target, so the step is not a standard TD error);
    only the max is masked to legal actions, as the seed's greedy play was.
    """
    value = masked(target(next_obs), next_legal).amax(dim=1)
    bootstrap = ~done & next_legal.any(dim=1)
    sign = torch.where(same_mover, 1.0, -1.0)
    return q_sa + torch.tanh(reward) + torch.where(bootstrap, gamma_n * sign * value, torch.zeros_like(q_sa))


def symmetric_images(game: Game, rows: np.ndarray, next_rows: np.ndarray, action: np.ndarray,
                     next_legal: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Each transition (s, a, s', legal(s')) mapped by one uniformly drawn symmetry g of the game: (g s, g a, g s',
    g legal(s')).  Rewards, signs and ends do not change under a symmetry, so the TD target stays valid."""
    images, maps = game.symmetries_batch(rows)
    next_images, _ = game.symmetries_batch(next_rows)
    k = rng.integers(0, len(maps), size=len(rows))
    i = np.arange(len(rows))
    legal = np.zeros_like(next_legal)
    np.put_along_axis(legal, maps[k], next_legal, axis=1)  # legal[i, g(a)] = next_legal[i, a]
    return images[k, i], next_images[k, i], maps[k, action], legal


# ---------------------------------------------------------------------------------------------- n-step returns
class NStepFolder:
    """Per game row, the last decisions not yet turned into replay transitions (right-aligned, newest last).

    ``push`` adds one 1-step transition per given row and returns the n-step transitions that became complete:
    the oldest of a row holding n (bootstrapping from the new s'), or every pending one when the game ended.
    """

    def __init__(self, rows: int, n: int, obs_shape: tuple[int, ...], gamma: float,
                 obs_dtype: type = np.float32) -> None:
        self.n, self.gamma = int(n), float(gamma)
        self.obs = np.zeros((rows, n, *obs_shape), dtype=obs_dtype)
        self.action = np.zeros((rows, n), dtype=np.int64)
        self.reward = np.zeros((rows, n), dtype=np.float32)
        self.sign = np.ones((rows, n), dtype=np.float32)
        self.length = np.zeros(rows, dtype=np.int64)

    def push(self, rows: np.ndarray, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, same: np.ndarray,
             next_obs: np.ndarray, next_legal: np.ndarray, done: np.ndarray) -> dict[str, np.ndarray] | None:
        """Add transitions (row i: obs, action, reward, same mover in s'?, s', legal(s'), ended?)."""
        if rows.size == 0:
            return None
        for name, new in (("obs", obs), ("action", action), ("reward", reward),
                          ("sign", np.where(same, 1.0, -1.0))):
            arr = getattr(self, name)
            arr[rows, :-1] = arr[rows, 1:]
            arr[rows, -1] = new
        self.length[rows] = np.minimum(self.length[rows] + 1, self.n)
        g, s = self._returns(rows)
        full = ~done & (self.length[rows] == self.n)
        out = [self._emit(rows[full], np.zeros(int(full.sum()), np.int64), g[full, 0], s[full, 0], next_obs[full],
                          next_legal[full], False)]
        ended = np.flatnonzero(done)
        if ended.size:
            slot = np.arange(self.n)[None, :] >= (self.n - self.length[rows[ended]])[:, None]
            r_idx, m_idx = np.nonzero(slot)
            er = ended[r_idx]
            out.append(self._emit(rows[er], m_idx, g[er, m_idx], s[er, m_idx], next_obs[er],
                                  np.zeros_like(next_legal[er]), True))
        self.length[rows[full]] = self.n - 1
        self.length[rows[ended]] = 0
        return {k: np.concatenate([o[k] for o in out]) for k in out[0]}

    def _returns(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(G, sign product) for every start slot m: G_m = r_m + gamma s_m G_{m+1}, from the mover at m."""
        r, sg = self.reward[rows].astype(np.float64), self.sign[rows].astype(np.float64)
        g, s = np.zeros_like(r), np.zeros_like(r)
        g[:, -1], s[:, -1] = r[:, -1], sg[:, -1]
        for m in range(self.n - 2, -1, -1):
            g[:, m] = r[:, m] + self.gamma * sg[:, m] * g[:, m + 1]
            s[:, m] = sg[:, m] * s[:, m + 1]
        return g, s

    def _emit(self, rows, slots, g, s, next_obs, next_legal, done: bool) -> dict[str, np.ndarray]:
        return {"obs": self.obs[rows, slots], "action": self.action[rows, slots], "reward": g.astype(np.float32),
                "next_obs": next_obs, "next_legal": next_legal, "done": np.full(rows.size, done),
                "same_mover": s > 0}

    def state_dict(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k).copy() for k in ("obs", "action", "reward", "sign", "length")}

    def load_state_dict(self, d: dict[str, Any]) -> None:
        for k in ("obs", "action", "reward", "sign", "length"):
            getattr(self, k)[...] = np.asarray(d[k])


# ---------------------------------------------------------------------------------------------- start positions
def uci_start_rows(path: str | Path) -> np.ndarray:
    """(67,557, 3) Connect 4 state rows of the UCI table (every label); one-line ``LearnError`` when missing."""
    from boardrl.data import uci_table

    try:
        return uci_table.frame_states(uci_table.read_parquet(Path(path)))
    except BoardRLError as exc:
        raise LearnError(f"dqn starts 'uci': {exc}") from None


# ---------------------------------------------------------------------------------------------- the learner
class DQNLearner(Learner):
    """DQN (see the module docstring); the loop, checkpoints and eval points are the base's."""

    name = "dqn"
    params_model = DQNParams
    unit = "steps"
    arithmetic = "torch"
    #: One thread: minibatches of 32-128 keep two threads half idle (Connect 4's conv net: 97 s on 1 thread, 76 s
    #: on 2), so stages side by side on a core each get more done (experiments/parallel_repro.py).
    default_threads = 1
    small_run = ("tictactoe", {"steps": 600, "parallel_envs": 8, "learning_starts": 50, "batch_size": 16,
                               "target_every": 20, "n_step": 2, "device": "cpu",
                               "network": {"body": "mlp", "hidden": [16], "head": "dueling"},
                               "exploration": {"schedule": "linear", "start": 1.0, "end": 0.1, "decay_games": 300}})

    def check_game(self, game: Game, params: DQNParams) -> None:
        if params.starts == "uci" and game.game_id != "connect4":
            raise LearnError(f"dqn starts 'uci' needs connect4, not {game.game_id}")
        if params.reward != "result" and game.score_margin(game.initial_state()) is None:
            raise LearnError(f"dqn reward {params.reward!r}: {game.game_id} keeps no score; use reward 'result'")
        try:
            config = resolve_network(params.network, game)
            build_network(config, game.encoding_shape, game.num_actions)
        except BoardRLError as exc:
            raise LearnError(f"dqn network: {exc}") from None
        if config.head == "policy_value":
            raise LearnError("dqn needs a q or dueling head, not policy_value")

    # ------------------------------------------------------------------ setup
    def setup(self, game: Game, params: DQNParams, seed: int, opponent: Agent | None) -> None:
        p = self.p = params
        self.game, self.seed, self.opponent = game, int(seed), opponent
        torch_threads(p.threads, self.default_threads)
        self.device = pick_device(p.device)
        torch.manual_seed(seed)
        self.config = resolve_network(p.network, game)
        self.online = build_network(self.config, game.encoding_shape, game.num_actions).to(self.device)
        self.target = copy.deepcopy(self.online).eval()
        self.opt = adam(self.online.parameters(), lr=p.lr)
        width = len(game.initial_state())  # replay and folder keep state rows, encoded when sampled
        self.buffer = ReplayBuffer(p.buffer_size, (width,), game.num_actions, obs_dtype=np.int64)
        self.folder = NStepFolder(p.parallel_envs, p.n_step, (width,), p.gamma, obs_dtype=np.int64)
        self.rng = np.random.default_rng(seed)
        self.starts = uci_start_rows(p.uci_path) if p.starts == "uci" else None
        n = p.parallel_envs
        self.env = game.batched(n, auto_reset=False)
        self.learner_player = np.full(n, -1, dtype=np.int64)  # per row; -1 = self-play (both)
        self.league = League(game, p.opponents, p.opponent_share, self.name)
        self.member = np.zeros(n, dtype=np.int64)  # per row: the league member playing it (league games)
        self.pend_row = np.zeros((n, width), dtype=np.int64)
        self.pend_action = np.zeros(n, dtype=np.int64)
        self.pend_mover = np.zeros(n, dtype=np.int64)
        self.pend_valid = np.zeros(n, dtype=np.bool_)
        self.pend_margin = np.zeros(n, dtype=np.float32)  # reward boxes: the pending mover's margin at s
        self.counters = {"env_steps": 0, "grad_steps": 0, "games_started": 0, "games_done": 0}
        self.credit = 0.0
        self._restart(np.arange(n))

    def _restart(self, rows: np.ndarray) -> None:
        """Fresh games in these rows: a start position and (against an opponent) the learner's seat."""
        if rows.size == 0:
            return
        if self.starts is None:
            self.env.states[rows] = np.asarray(self.game.initial_state(), dtype=np.int64)
        else:
            self.env.states[rows] = self.starts[self.rng.integers(0, len(self.starts), size=rows.size)]
        numbers = self.counters["games_started"] + np.arange(rows.size)
        if self.opponent is not None:
            self.learner_player[rows] = learner_players(self.p.learner_seat, numbers)
        elif self.league.share > 0:
            theirs, self.member[rows] = self.league.seats(self.counters["games_started"], rows.size, self.rng)
            self.learner_player[rows] = np.where(theirs >= 0, 1 - theirs, -1)
        self.counters["games_started"] += int(rows.size)
        self.pend_valid[rows] = False

    # ------------------------------------------------------------------ the loop
    def train_segment(self, start: int, end: int) -> int:
        """Whole vector steps from ``start`` until ``end`` learner steps are reached; returns the steps taken.

        The vector step is the unit of work: only the budget cuts one short (its last rows wait), never a curve
        point or a checkpoint, so where those fall does not change the training.
        """
        clock = {"act_s": 0.0, "learn_s": 0.0, "engine_s": 0.0}
        sums = {"loss": torch.zeros((), device=self.device), "q": torch.zeros((), device=self.device)}
        counts = {"loss": 0, "q": 0}
        t_start = time.perf_counter()
        while self.counters["env_steps"] < end:
            t0 = time.perf_counter()
            states = self.env.states
            mover = self.game.to_move_batch(states).astype(np.int64)
            is_learner = (self.learner_player < 0) | (mover == self.learner_player)
            mine = np.flatnonzero(is_learner)[: self.p.steps - self.counters["env_steps"]]
            theirs = np.flatnonzero(~is_learner)
            actions = np.zeros(self.env.n, dtype=np.int64)
            actions[mine] = self._learner_moves(mine, states[mine], mover[mine], sums, counts)
            if theirs.size:
                actions[theirs] = self._opponent_moves(states[theirs], theirs)
            t1 = time.perf_counter()
            finished, returns = self._step(np.union1d(mine, theirs), actions)
            t2 = time.perf_counter()
            self.counters["env_steps"] += int(mine.size)
            seat_ends = self._finish_games(finished, returns)
            t3 = time.perf_counter()
            self._learn_due(int(mine.size) if self.p.update_on == "env_steps" else seat_ends, sums, counts)
            t4 = time.perf_counter()
            clock["act_s"] += (t1 - t0) + (t3 - t2)
            clock["engine_s"] += t2 - t1
            clock["learn_s"] += t4 - t3
        self._log(start, self.counters["env_steps"], time.perf_counter() - t_start, clock, sums, counts)
        return self.counters["env_steps"]

    def _opponent_moves(self, states: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The fixed opponent's moves, or in league games each row's member's."""
        if self.opponent is not None:
            return self.opponent.act_batch(states, self.rng)
        return self.league.moves(states, self.member[rows], self.rng)

    def _learner_moves(self, rows: np.ndarray, states: np.ndarray, mover: np.ndarray, sums: dict,
                       counts: dict) -> np.ndarray:
        """Complete the rows' pending transitions into these states, then choose epsilon-greedily."""
        legal = self.game.legal_mask_batch(states)
        pend = self.pend_valid[rows]
        r = rows[pend]
        margin = self._margin(states, mover)
        gained = self._margin(states[pend], self.pend_mover[r]) - self.pend_margin[r]
        self._store(self.folder.push(r, self.pend_row[r], self.pend_action[r], gained,
                                     mover[pend] == self.pend_mover[r], states[pend], legal[pend],
                                     np.zeros(r.size, np.bool_)))
        greedy = self._greedy(self.game.encode_batch(states), legal, sums, counts)
        explore = self.rng.random(rows.size) < self.epsilon()
        actions = np.where(explore, random_legal_actions(legal, self.rng), greedy)
        self.pend_row[rows], self.pend_action[rows], self.pend_mover[rows] = states, actions, mover
        self.pend_margin[rows] = margin
        self.pend_valid[rows] = True
        return actions

    def _margin(self, states: np.ndarray, player: np.ndarray) -> np.ndarray:
        """(N,) float32 score margin of ``player`` in each state with ``reward: boxes``; zeros otherwise."""
        if self.p.reward != "boxes":
            return np.zeros(len(states), dtype=np.float32)
        m = np.asarray(self.game.score_margin_batch(states), dtype=np.float32)
        return np.where(np.asarray(player) == 0, m, -m).astype(np.float32)

    def _greedy(self, obs: np.ndarray, legal: np.ndarray, sums: dict, counts: dict) -> np.ndarray:
        """Argmax of the online net over legal actions (one batched forward pass, one transfer back)."""
        if obs.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        self.online.eval()
        with torch.no_grad():
            q = masked(self.online(torch.from_numpy(obs).to(self.device)),
                       torch.from_numpy(legal).to(self.device))
            best, arg = q.max(dim=1)
            sums["q"] += best.sum()
        counts["q"] += obs.shape[0]
        return arg.cpu().numpy().astype(np.int64)

    def _step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step the given rows (all of them, or a subset at a segment's end); (finished, returns) for every row."""
        n = self.env.n
        if rows.size == n:
            return self.env.step(actions)
        finished, returns = np.zeros(n, dtype=np.bool_), np.zeros((n, 2), dtype=np.float32)
        if rows.size:
            sub = self.game.batched(rows.size, auto_reset=False)
            sub.states[:] = self.env.states[rows]
            finished[rows], returns[rows] = sub.step(actions[rows])
            self.env.states[rows] = sub.states
        return finished, returns

    def _finish_games(self, finished: np.ndarray, returns: np.ndarray) -> int:
        """Terminal transitions for the games that ended (the pending mover's result), then restart them; returns
        the learning seats of the ended games (a self-play game has two: seed 002 counts its updates so)."""
        ended = np.flatnonzero(finished)
        if ended.size == 0:
            return 0
        if self.p.reward == "margin":
            m = np.asarray(self.game.score_margin_batch(self.env.states[ended]), dtype=np.float32)
            returns = np.zeros_like(returns)
            returns[ended, 0], returns[ended, 1] = m, -m
        r = ended[self.pend_valid[ended]]
        if self.p.reward == "boxes":
            final = self._margin(self.env.states[r], self.pend_mover[r]) - self.pend_margin[r]
        else:
            final = returns[r, self.pend_mover[r]].astype(np.float32)
        self._store(self.folder.push(  # s' = the final position: never bootstrapped from (done, nothing legal)
            r, self.pend_row[r], self.pend_action[r], final,
            np.ones(r.size, np.bool_), self.env.states[r].copy(),
            np.zeros((r.size, self.game.num_actions), np.bool_), np.ones(r.size, np.bool_)))
        self.counters["games_done"] += int(ended.size)
        seats = int(np.where(self.learner_player[ended] < 0, 2, 1).sum())
        self._restart(ended)
        return seats

    def _store(self, batch: dict[str, np.ndarray] | None) -> None:
        if batch is not None and batch["action"].size:
            self.buffer.add_batch(**batch)

    # ------------------------------------------------------------------ learning
    def _learn_due(self, earned: int, sums: dict, counts: dict) -> None:
        """The gradient steps that ``earned`` env steps or game ends (``update_on``) bring (after
        learning_starts, once a minibatch is stored)."""
        p = self.p
        if self.counters["env_steps"] < p.learning_starts or len(self.buffer) < p.batch_size:
            return
        self.credit += earned * p.gradient_steps / p.train_every
        while self.credit >= 1.0:
            self.credit -= 1.0
            sums["loss"] += self._gradient_step()
            counts["loss"] += 1

    def _gradient_step(self) -> Tensor:
        """One minibatch: TD targets, loss, Adam step, clipping, target update; returns the detached loss."""
        p = self.p
        b = self._minibatch()
        self.online.eval()
        with torch.no_grad():
            if p.target == "seed001":
                q_sa = self.online(b["obs"]).gather(1, b["action"].unsqueeze(1)).squeeze(1)
                y = seed001_targets(q_sa, self.target, b["reward"], b["next_obs"], b["next_legal"], b["done"],
                                    b["same_mover"], p.gamma ** p.n_step)
            else:
                y = td_targets(self.online, self.target, b["reward"], b["next_obs"], b["next_legal"], b["done"],
                               b["same_mover"], p.gamma ** p.n_step, p.double)
        self.online.train()
        q = self.online(b["obs"]).gather(1, b["action"].unsqueeze(1)).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q, y) if p.loss == "huber" else nn.functional.mse_loss(q, y)
        self._set_learning_rate()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        if p.clip_grad_value is not None:
            nn.utils.clip_grad_value_(self.online.parameters(), p.clip_grad_value)
        if p.max_grad_norm is not None:
            nn.utils.clip_grad_norm_(self.online.parameters(), p.max_grad_norm)
        self.opt.step()
        self.counters["grad_steps"] += 1
        if self.counters["grad_steps"] % p.target_every == 0:
            self._update_target()
        return loss.detach()

    def epsilon(self) -> float:
        """The exploration rate now: the schedule at the count ``exploration_clock`` names."""
        return self.p.exploration.epsilon(self.counters[self.p.exploration_clock])

    def learning_rate(self, env_steps: int) -> float:
        """``lr``, or with ``lr_end`` the linear fall from lr to lr_end over the run's ``steps`` (a function of the
        step count alone, so a resumed run takes the same steps as an uninterrupted one)."""
        p = self.p
        if p.lr_end is None:
            return p.lr
        return p.lr + (p.lr_end - p.lr) * min(1.0, env_steps / p.steps)

    def _set_learning_rate(self) -> None:
        if self.p.lr_end is not None:
            for group in self.opt.param_groups:
                group["lr"] = self.learning_rate(self.counters["env_steps"])

    def _minibatch(self) -> dict[str, Tensor]:
        """A sampled minibatch on the device: state rows (each mapped by a random symmetry with ``symmetry``),
        encoded to planes here, so the replay holds compact rows and every image of a position is trained."""
        b = self.buffer.sample(self.p.batch_size, self.rng)
        rows, next_rows, action, next_legal = b.obs, b.next_obs, b.action, b.next_legal
        if self.p.symmetry:
            rows, next_rows, action, next_legal = symmetric_images(self.game, rows, next_rows, action, next_legal,
                                                                   self.rng)
        arrays = {"obs": self.game.encode_batch(rows), "action": action, "reward": b.reward,
                  "next_obs": self.game.encode_batch(next_rows), "next_legal": next_legal, "done": b.done,
                  "same_mover": b.same_mover}
        return {k: torch.from_numpy(np.ascontiguousarray(v)).to(self.device) for k, v in arrays.items()}

    def _update_target(self) -> None:
        if self.p.tau >= 1.0:
            self.target.load_state_dict(self.online.state_dict())
            return
        with torch.no_grad():
            for t, o in zip(self.target.state_dict().values(), self.online.state_dict().values()):
                if t.dtype.is_floating_point:
                    t.lerp_(o, self.p.tau)
                else:
                    t.copy_(o)

    def _log(self, start: int, end: int, seconds: float, clock: dict, sums: dict, counts: dict) -> None:
        metrics = {"epsilon": self.epsilon(), "learning_rate": self.learning_rate(end),
                   "env_steps_per_s": (end - start) / max(seconds, 1e-9),
                   "grad_steps": float(self.counters["grad_steps"]), "replay_size": float(len(self.buffer)),
                   "games": float(self.counters["games_done"]), **clock}
        for key in ("loss", "q"):
            if counts[key]:
                metrics["loss" if key == "loss" else "mean_q"] = float(sums[key].item()) / counts[key]
        self.log_metrics(metrics, end)

    # ------------------------------------------------------------------ checkpoints and agents
    def state_dict(self) -> dict[str, Any]:
        return {"online": self.online.state_dict(), "target": self.target.state_dict(),
                "opt": self.opt.state_dict(), "replay": self.buffer.state_dict(), "rng": rng_state_json(self.rng),
                "env": self.env.states.copy(), "learner_player": self.learner_player.copy(),
                "member": self.member.copy(),
                "pend_row": self.pend_row.copy(), "pend_action": self.pend_action.copy(),
                "pend_mover": self.pend_mover.copy(), "pend_valid": self.pend_valid.copy(),
                "pend_margin": self.pend_margin.copy(),
                "folder": self.folder.state_dict(), "counters": dict(self.counters), "credit": float(self.credit)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.online.load_state_dict(state["online"])
        self.target.load_state_dict(state["target"])
        self.opt.load_state_dict(state["opt"])
        self.buffer.load_state_dict(state["replay"])
        self.rng = rng_from_json(state["rng"])
        self.env.states[:] = np.asarray(state["env"])
        self.member[:] = np.asarray(state.get("member", 0))  # absent from checkpoints before league games
        for name in ("learner_player", "pend_row", "pend_action", "pend_mover", "pend_valid", "pend_margin"):
            getattr(self, name)[...] = np.asarray(state[name])
        self.folder.load_state_dict(state["folder"])
        self.counters = {k: int(v) for k, v in state["counters"].items()}
        self.credit = float(state["credit"])

    def _meta(self) -> dict[str, Any]:
        return {"learner": self.name, "seed": self.seed, "params": self.p.model_dump(mode="json"),
                "steps": self.counters["env_steps"], "games": self.counters["games_done"]}

    def snapshot(self) -> NetworkAgent:
        """A greedy agent on a CPU copy of the online network (later training does not change it)."""
        net = copy.deepcopy(self.online).to("cpu").eval()
        return NetworkAgent(self.game, net, self.config, "greedy", name=self.name, meta=self._meta(), device="cpu")

    def final_agent(self) -> NetworkAgent:
        agent = self.snapshot()
        agent.stats = {**self._meta(), "grad_steps": self.counters["grad_steps"]}
        return agent


LEARNER = DQNLearner
