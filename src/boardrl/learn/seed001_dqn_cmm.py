"""Reference system 001's DQN_CMM as published: its network, target, optimiser, replay and self-play loop.

What it reproduces (SEEDS.md, "Seed 001", "Learning algorithm"; the code base mattdeak/dots-boxes-RL where SEEDS.md
is silent: ``DQN.py``, ``ai_agents.py``, ``environment.py``, ``simulation.py``):

* **Network**: the ``seed001`` preset (nn/presets.py): two inception blocks (1x1 and 3x3 'same' convs, ELU, 16+16
  then 32+32 channels, ELU after the concatenation), FC 256 ELU twice, one **tanh** output per edge, weights from a
  truncated normal with sd 0.1, biases 0.  Loss: mean squared error over **all** outputs of the minibatch.
* **Optimiser**: TF1's ``RMSPropOptimizer(1e-6)`` with its defaults, decay 0.9, momentum 0, epsilon 1e-10 inside
  the square root, mean square started at ones (learn/core/tf1_rmsprop.py: torch's RMSprop has decay 0.99, epsilon
  1e-8 outside the root and a zero start, so it is not used); every gradient clipped by value to [-1, 1] first.
* **Target ("conditional minimax")**, ``cmm_targets``: for the action taken,
  ``y[a] = Q(s, a) + tanh(r) + gamma * phi * max_a' Q(s', a')`` with Q from the learner's **own** network (no
  target network: the code predicts q_next with the network it trains), phi = +1 when the learner moves again in
  s' and -1 when the opponent does, and q_next = 0 for a terminal s'.  Every other output's target is its current
  prediction, so only a's error is non-zero, but the mean is still over all outputs, as published (the step is
  1/n_actions of a per-action MSE's).  The max runs over **all** outputs, drawn edges included: the code's
  ``q_next.max(axis=1)`` (``next_max: all``; ``legal`` masks it to the undrawn edges).  Q(s, a) itself is part of
  its own target, so this is not a standard TD error; kept as the system wrote it.
* **Rewards**: 0 except at the end: win +1, loss -1, draw 0 (tanh in the target: +-0.7616).
* **When transitions are recorded** (``environment.py``'s ``step``), ``record_after_move``:
  after a move that passes the turn, the *opponent* of the mover records its pending (s, a) with s' = the state the
  mover faced (before that move) and phi = -1; after a scoring move that does not end the game, the mover records
  (s, a, the new state, 0, phi = +1); at the end both players record their pending (s, a) as terminal with their
  result.  Only the learning agent records (the frozen copy does not learn), so each of its decisions is recorded
  exactly once.
* **Replay**: a table of 20,000 transitions (state rows here, encoded when sampled); from the 10,000th recorded
  transition on, one minibatch of 100 per recorded transition, drawn uniformly **with** replacement
  (``np.random.choice`` in the code).
* **Acting**: the learning agent is epsilon-greedy with epsilon 0.05 constant (one uniform draw per decision, a
  uniform undrawn edge below epsilon), otherwise greedy over the **undrawn** edges with ties broken uniformly; the
  frozen copy ("target" agent) is greedy the same way and never explores.
* **Self-play against a frozen copy** (``simulation.py``): the target agent's weights are the learner's, copied
  every ``update_step`` games (25,000 at the code's HEAD; the paper: 1,000 at first, 5,000 -> 10,000 from game
  400k); seats alternate every game, the learner first in game 0.  Budget: games (the system: 1,000,000 on 4x4
  boxes).

Differences that are not choices of the system's:

* **Input**: the game's (5, 2s+1, 2s+1) planes from the mover's view (edges drawn and undrawn, walls per box, both
  scores) instead of the system's s x s x 4 walls tensor, so the saved model is the ``network`` agent every other
  experiment's network uses (agents/network.py).  The system's tensor holds no scores; ours holds the mover's and
  its opponent's.
* **The frozen copy starts as a copy** of the learner's initial weights.  The system's target agent is a second
  network with its own random initialisation until the first copy (or the model on disk when a run restarted).
* **No stale transition across games.**  The system's agent objects outlive a game, so as second player its first
  record of a game joins the previous game's last decision to the new empty board; here a game's end consumes the
  pending decision and nothing joins two games.
* **The saved agent** breaks exact ties of its greedy play towards the first edge (``NetworkAgent``); training
  breaks them at random as the system does.  Float outputs of a tanh are practically never equal.
* Every random number comes from the experiment's seeded generators (numpy for play, exploration and minibatches;
  torch for the initial weights), so a run is a function of (game, params, seed) and resumes bit for bit.
* The system's own evaluation (1,000 games against random, moderate and advanced every 1,000 training games, seats
  alternating) is the pipeline's curve stage at its curve points, not part of training.

Throughput: see docs/learners/seed001_dqn_cmm.md (measured on the project's 2-core machine, one torch thread).
"""

from __future__ import annotations

import copy
import time
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from boardrl.agents.base import Agent
from boardrl.agents.network import NetworkAgent
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.learn.core.base import Learner, LearnError, rng_from_json, rng_state_json
from boardrl.learn.core.device import pick_device, torch_threads
from boardrl.learn.core.replay import ReplayBuffer
from boardrl.learn.core.tf1_rmsprop import TF1RMSProp
from boardrl.learn.seed001_dqn_cmm_params import Seed001DqnCmmParams
from boardrl.nn import AnyNetwork, build_network, network_preset, parse_network_config


def resolve_network(spec: str | dict, game: Game) -> AnyNetwork:
    """The full network config a params ``network`` stands for on this game's planes."""
    return network_preset(spec, game.encoding_shape) if isinstance(spec, str) else parse_network_config(spec)


# ---------------------------------------------------------------------------------------------- the target
def cmm_targets(q: Tensor, q_next: Tensor, action: Tensor, reward: Tensor, done: Tensor, same_mover: Tensor,
                next_legal: Tensor, gamma: float, next_max: str) -> Tensor:
    """(B, A) targets of the conditional minimax (module docstring): the current predictions ``q``, with
    ``tanh(r) + gamma * phi * max_a' q_next`` added at each row's action (phi = +1 when ``same_mover``, else -1;
    nothing bootstrapped where ``done``).

    ``q`` and ``q_next`` are detached network outputs on s and s'; ``next_max`` is "all" (the system's max over
    every output) or "legal" (over ``next_legal`` only).
    """
    if next_max == "legal":
        q_next = q_next.masked_fill(~next_legal, float("-inf"))
    best = q_next.amax(dim=1)
    phi = torch.where(same_mover, 1.0, -1.0).to(q.dtype)
    bootstrap = torch.where(done, torch.zeros_like(best), gamma * phi * best)
    target = q.clone()
    rows = torch.arange(q.shape[0], device=q.device)
    target[rows, action] += torch.tanh(reward) + bootstrap
    return target


# ---------------------------------------------------------------------------------------------- transitions
class Transition(NamedTuple):
    """One recorded transition of the learning agent (state rows; ``same_mover`` is phi = +1)."""

    obs: np.ndarray
    action: int
    next_obs: np.ndarray
    reward: float
    done: bool
    same_mover: bool


class Pending(NamedTuple):
    """The learning agent's last decision not yet recorded: the state it faced and the edge it drew."""

    obs: np.ndarray
    action: int


def record_after_move(pending: Pending | None, learner: int, mover: int, before: np.ndarray, action: int,
                      after: np.ndarray, next_mover: int, over: bool,
                      result: float) -> tuple[Transition | None, Pending | None]:
    """What the learning agent (player ``learner``) records after ``mover`` drew ``action`` in ``before``, giving
    ``after`` (``next_mover`` to move; ``over``: the game ended, ``result`` the learner's +1/0/-1 there).

    Returns (the transition recorded or None, the pending decision afterwards).  The system's rules
    (``environment.py``'s ``step``): at the end the pending decision is recorded as terminal with the result; a
    scoring move is recorded by its mover with phi = +1 and s' = the new state; a move that passes the turn makes
    the mover's opponent record its pending decision with s' = ``before`` (the state the mover faced) and phi = -1.
    """
    if mover == learner:
        pending = Pending(before, int(action))
    if over:
        if pending is None:
            return None, None
        return Transition(pending.obs, pending.action, after, float(result), True, True), None
    if next_mover == mover:  # the move scored: the mover moves again
        if mover != learner:
            return None, pending
        return Transition(before, int(action), after, 0.0, False, True), None
    if mover != learner and pending is not None:  # the opponent passed the turn back
        return Transition(pending.obs, pending.action, before, 0.0, False, False), None
    return None, pending


def greedy_random_ties(q: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> int:
    """The legal action of largest ``q``, ties broken uniformly (a draw from ``rng`` only when there is a tie)."""
    masked = np.where(legal, q, -np.inf)
    best = np.flatnonzero(masked == masked.max())
    return int(best[0]) if best.size == 1 else int(best[rng.integers(best.size)])


# ---------------------------------------------------------------------------------------------- the learner
class Seed001DqnCmmLearner(Learner):
    """Reference system 001's DQN_CMM (module docstring); the loop, checkpoints and eval points are the base's.

    The unit of work is one game, played start to end inside a segment (the replay, both networks, the optimiser
    and the generator are in the checkpoint), so curve points and checkpoints do not change the model.
    """

    name = "seed001_dqn_cmm"
    params_model = Seed001DqnCmmParams
    unit = "games"
    arithmetic = "torch"
    #: One thread: a forward pass on one position per move and minibatches of 100 keep a second thread idle.
    default_threads = 1
    small_run = ("dots_and_boxes_2x2", {"games": 14, "buffer_size": 60, "learning_starts": 30, "batch_size": 8,
                                        "update_step": 4, "lr": 1e-3, "device": "cpu",
                                        "network": {"body": "mlp", "hidden": [16], "head": "q",
                                                    "value_activation": "tanh"}})

    def check_game(self, game: Game, params: Seed001DqnCmmParams) -> None:
        if not game.game_id.startswith("dots_and_boxes_"):
            raise LearnError(f"seed001_dqn_cmm plays Dots and Boxes only (the system's game), not {game.game_id}")
        try:
            config = resolve_network(params.network, game)
            build_network(config, game.encoding_shape, game.num_actions)
        except BoardRLError as exc:
            raise LearnError(f"seed001_dqn_cmm network: {exc}") from None
        if config.head != "q":
            raise LearnError(f"seed001_dqn_cmm needs a q head (one output per edge), not {config.head}")

    # ------------------------------------------------------------------ setup and state
    def setup(self, game: Game, params: Seed001DqnCmmParams, seed: int, opponent: Agent | None) -> None:
        if opponent is not None:
            raise LearnError("seed001_dqn_cmm plays its own frozen copy; it takes no opponent")
        p = self.p = params
        self.game, self.seed = game, int(seed)
        torch_threads(p.threads, self.default_threads)
        self.device = pick_device(p.device)
        torch.manual_seed(seed)
        self.config = resolve_network(p.network, game)
        self.net = build_network(self.config, game.encoding_shape, game.num_actions).to(self.device)
        self.frozen = copy.deepcopy(self.net).eval()
        for q in self.frozen.parameters():
            q.requires_grad_(False)
        self.opt = TF1RMSProp(self.net.parameters(), lr=p.lr, decay=p.rms_decay, momentum=0.0,
                              epsilon=p.rms_epsilon)
        width = len(game.state_type._fields)
        self.buffer = ReplayBuffer(p.buffer_size, (width,), game.num_actions, obs_dtype=np.int64)
        self.rng = np.random.default_rng(seed)
        self.counters = {"games_done": 0, "transitions": 0, "grad_steps": 0, "copies": 0, "wins": 0, "draws": 0,
                         "losses": 0}

    def state_dict(self) -> dict[str, Any]:
        return {"net": self.net.state_dict(), "frozen": self.frozen.state_dict(), "opt": self.opt.state_dict(),
                "replay": self.buffer.state_dict(), "rng": rng_state_json(self.rng), "counters": dict(self.counters)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.frozen.load_state_dict(state["frozen"])
        self.opt.load_state_dict(state["opt"])
        self.buffer.load_state_dict(state["replay"])
        self.rng = rng_from_json(state["rng"])
        self.counters = {k: int(v) for k, v in state["counters"].items()}

    def _meta(self) -> dict[str, Any]:
        return {"learner": self.name, "seed": self.seed, "params": self.p.model_dump(mode="json"),
                "games": self.counters["games_done"], "transitions": self.counters["transitions"]}

    def snapshot(self) -> NetworkAgent:
        """A greedy agent on a CPU copy of the learner's network (later training does not change it)."""
        net = copy.deepcopy(self.net).to("cpu").eval()
        return NetworkAgent(self.game, net, self.config, "greedy", name=self.name, meta=self._meta(), device="cpu")

    def final_agent(self) -> NetworkAgent:
        agent = self.snapshot()
        c = self.counters
        agent.stats = {**self._meta(), **{k: c[k] for k in ("grad_steps", "copies", "wins", "draws", "losses")}}
        return agent

    # ------------------------------------------------------------------ the loop
    def learner_player(self, game_index: int) -> int:
        """The learner's seat in 0-based game ``game_index``: first in even games, second in odd ones."""
        return int(game_index) % 2

    def train_segment(self, start: int, end: int) -> None:
        """Games ``start`` .. ``end - 1``, each played to its end; the frozen copy refreshed every update_step."""
        t0 = time.perf_counter()
        sums = {"loss": torch.zeros((), device=self.device), "steps": 0}
        for g in range(start, end):
            self._game(g, sums)
            self.counters["games_done"] = g + 1
            if (g + 1) % self.p.update_step == 0:
                self.frozen.load_state_dict(self.net.state_dict())
                self.counters["copies"] += 1
        c = self.counters
        metrics = {"games_per_s": (end - start) / max(time.perf_counter() - t0, 1e-9),
                   "transitions": float(c["transitions"]), "grad_steps": float(c["grad_steps"]),
                   "replay_size": float(len(self.buffer)), "copies": float(c["copies"]),
                   "train_win_rate": c["wins"] / max(c["games_done"], 1)}
        if sums["steps"]:
            metrics["loss"] = float(sums["loss"].item()) / sums["steps"]
        self.log_metrics(metrics, end)

    def _values(self, net: nn.Module, row: np.ndarray) -> np.ndarray:
        """(A,) outputs of ``net`` on one state row."""
        x = torch.from_numpy(self.game.encode_batch(row[None])).to(self.device)
        with torch.no_grad():
            return net(x)[0].float().cpu().numpy()

    def _move(self, row: np.ndarray, learning: bool) -> int:
        """The learning agent's epsilon-greedy move, or the frozen copy's greedy one."""
        legal = self.game.legal_mask_batch(row[None])[0]
        if learning and self.rng.random() < self.p.epsilon:
            free = np.flatnonzero(legal)
            return int(free[self.rng.integers(free.size)])
        self.net.eval()
        return greedy_random_ties(self._values(self.net if learning else self.frozen, row), legal, self.rng)

    def _game(self, index: int, sums: dict) -> None:
        """One game against the frozen copy: moves, the system's transition records, a minibatch per record."""
        game, learner = self.game, self.learner_player(index)
        state = game.initial_state()
        pending: Pending | None = None
        while True:
            before = np.asarray(state, dtype=np.int64)
            mover = game.to_move(state)
            action = self._move(before, mover == learner)
            state = game.play(state, action)
            after = np.asarray(state, dtype=np.int64)
            over = game.is_over(state)
            result = game.returns(state)[learner] if over else 0.0
            record, pending = record_after_move(pending, learner, mover, before, action, after,
                                                game.to_move(state), over, result)
            if record is not None:
                self._record(record, sums)
            if over:
                key = "wins" if result > 0 else "losses" if result < 0 else "draws"
                self.counters[key] += 1
                return

    def _record(self, t: Transition, sums: dict) -> None:
        """Store one transition; from ``learning_starts`` recorded transitions on, one minibatch."""
        legal = (np.zeros((1, self.game.num_actions), dtype=np.bool_) if t.done
                 else self.game.legal_mask_batch(t.next_obs[None]))
        self.buffer.add_batch(obs=t.obs[None], action=np.array([t.action]), reward=np.array([t.reward]),
                              next_obs=t.next_obs[None], next_legal=legal, done=np.array([t.done]),
                              same_mover=np.array([t.same_mover]))
        self.counters["transitions"] += 1
        if self.counters["transitions"] >= self.p.learning_starts:
            sums["loss"] += self._learn()
            sums["steps"] += 1

    def _learn(self) -> Tensor:
        """One minibatch of ``batch_size`` transitions drawn with replacement: targets, MSE over all outputs,
        gradients clipped by value, one TF1 RMSProp step; returns the detached loss."""
        p, game, dev = self.p, self.game, self.device
        b = self.buffer.sample(p.batch_size, self.rng)
        obs = torch.from_numpy(game.encode_batch(b.obs)).to(dev)
        done = torch.from_numpy(b.done).to(dev)
        q_next = torch.zeros((len(b.action), game.num_actions), device=dev)
        live = np.flatnonzero(~b.done)
        self.net.eval()
        if live.size:
            with torch.no_grad():
                q_next[torch.from_numpy(live).to(dev)] = self.net(
                    torch.from_numpy(game.encode_batch(b.next_obs[live])).to(dev))
        self.net.train()
        q = self.net(obs)
        target = cmm_targets(q.detach(), q_next, torch.from_numpy(b.action).to(dev),
                             torch.from_numpy(b.reward).to(dev), done, torch.from_numpy(b.same_mover).to(dev),
                             torch.from_numpy(b.next_legal).to(dev), p.gamma, p.next_max)
        loss = nn.functional.mse_loss(q, target)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_value_(self.net.parameters(), p.clip_grad_value)
        self.opt.step()
        self.counters["grad_steps"] += 1
        return loss.detach()


LEARNER = Seed001DqnCmmLearner
