"""Reference system 000's Connect 4 learner (experiment 04, ``04_c4_ql_uci.py``) as published, its two bugs fixed.

What it reproduces (SEEDS.md, "Seed 000", sections "Learning algorithms" and "Experiments"; the seed's code
where SEEDS.md is silent):

* **Q(s, a) = V(s o a)**, one value network of the afterstate (the board after the agent's move, before the
  reply).  The network is the ``seed000`` preset (nn/presets.py): conv 64@3x3 valid, 3 x conv 64@3x3 same, ReLU,
  dense 256 without activation, dense 1, tanh.  Its input is the seed's ``normalize_board``: one 6x7 plane with
  X = +1, O = -1, empty 0, top row first (``seed000_planes``), so V is X's value whoever is to move.  Initial
  weights are Keras's defaults (Glorot-uniform kernels, zero biases; ``init: torch`` gives torch's).
* **Episodes** (``FixedGameMDP(UCI position, RandPlayer, opp_idx=1)``): each starts from a fresh uniformly drawn
  UCI 8-ply position (any label; X to move), the agent is X, and the opponent's reply is folded into the
  transition: s' is the agent's next decision position, or the end.  Reward: the agent's result +1/0/-1 when the
  game ended (by its move or by the reply), else 0.
* **Behaviour**: epsilon-greedy with one uniform draw per decision (``EGreedy``: a uniform legal move when the
  draw is below epsilon); epsilon per episode falls linearly 1.0 -> 0.1 over 5,000 episodes, then stays
  (``LinearAnnealing``).  Greedy = the first legal move (columns left to right) of largest V(s o a), the network
  evaluated on every afterstate, terminal ones too (the seed's ``GreedyQ`` and ``Connect4DeepNetwork.__getitem__``).
* **Learning**: replay memory of 20,000 transitions; after every environment step (from the first transition
  on) one minibatch of min(len, 32) transitions drawn uniformly *without* replacement (SEEDS.md's min(len, 32) is
  the shape of ``random.sample``), MSE loss, one plain SGD step (lr 0.001).
* **Budget**: 15,000 episodes.  The seed's own seed (383) is not a training seed of ours: the experiment's seeds
  give the generators (numpy for starts, exploration, the opponent and minibatches; torch for the initial weights).

The two bugs fixed (SEEDS.md, "Where code and document differ"), and nothing else:

1. **Train/query mismatch.**  The seed trains the network on s' (X to move, after the reply) but queries it on
   afterstates (O to move).  Here each transition trains V on the afterstate the agent chose, the input it is
   queried on.
2. **No max in the target.**  The seed's target is 0.99 * V(s'), the same network on the same input, which for a
   non-terminal s' only pulls values toward 0.  Here the target is r when the episode ended (by the agent's move
   or the opponent's reply), else gamma * max over the legal a' of s' of V(s' o a'): the value of the agent's best
   next afterstate, computed with the same network under no_grad, terminal afterstates included (as greedy play
   values them).  No target network: the seed's code has none.  Its report's DQN loss names a target network
   theta^- and a max; the max is the fix, the target network is in the text only and is not added.

Differences that are not choices of the seed's:

* The opponent draws from the learner's generator, fresh for every reply.  The seed re-creates its
  ``RandPlayer(random_state=383)`` in an ``on_episode_begin`` callback; SEEDS.md and the report call the opponent
  random, so a uniformly random reply is what is reproduced.
* Keras flattens channels last and torch channels first: the dense layer's inputs are a permutation of each
  other, the same family of functions under the same (i.i.d.) initialisation.
* Evaluation every 500 episodes (``EpisodicWLDPlotter``) is not part of training here: the pipeline's curve and
  evaluate stages judge snapshots and the final agent (the seed protocol: ``evaluate/uci_protocols.py``).
* ``starts: initial`` (the empty board) exists for quick runs (the registry's ``small_run``); the seed has only UCI
  starts.

The agent (``Seed000Agent`` in agents/seed000_afterstate.py, saved as kind ``seed000_afterstate``): as X it plays
the seed's greedy policy; as O (the ladders alternate seats) it plays the afterstate of least value for X, the same
V read from O's side.  The seed's agent never plays O and this network is never trained from O's seat, so
second-seat results measure generalisation only.  ``value_batch`` (the value accuracy on the UCI labels) is the
greedy afterstate value for the player to move.  ``agents.learned.LOADERS`` names that agent module for the kind,
so any process loads the model (``model:`` specs, the web page, MLflow's pyfunc) without importing the learner.

Throughput (one thread, the project's 2-core machine with the other core busy): about 30 ms an environment step
(a forward pass on the up to 224 next afterstates of the minibatch, and a training step on 32); an episode is 6
to 8 agent decisions, so 1,500 episodes took 5 minutes and the seed's 15,000 take about 50.  params.yaml's default
run is the shorter one; profiles/full.yaml runs the seed's budget.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardrl.agents.afterstate import afterstates
from boardrl.agents.base import Agent
from boardrl.agents.seed000_afterstate import SHAPE, X, Seed000Agent, network_values, seed000_planes
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.learn.core.base import Learner, LearnError, rng_from_json, rng_state_json
from boardrl.learn.core.device import pick_device, torch_threads
from boardrl.learn.core.replay import ReplayBuffer
from boardrl.learn.seed000_afterstate_params import Seed000AfterstateParams
from boardrl.nn import AnyNetwork, build_network, network_preset, parse_network_config


# ---------------------------------------------------------------------------------------------- input and network
def resolve_network(spec: str | dict) -> AnyNetwork:
    """The full network config a params ``network`` stands for on the seed's input."""
    return network_preset(spec, SHAPE) if isinstance(spec, str) else parse_network_config(spec)


def keras_init(net: torch.nn.Module) -> None:
    """Keras's default initialisation: Glorot-uniform kernels (fan in/out with the receptive field), zero biases."""
    for module in net.modules():
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
            torch.nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)


def afterstate_targets(game: Game, value, reward: np.ndarray, next_rows: np.ndarray, next_legal: np.ndarray,
                       done: np.ndarray, gamma: float) -> np.ndarray:
    """float32 targets: r where the episode ended, else gamma * max over the legal a' of s' of V(s' o a').

    ``value(rows) -> (N,) float32 numpy`` is the network's V (X's view) of afterstate rows; every next
    afterstate is valued by it, terminal ones too.
    """
    y = np.asarray(reward, dtype=np.float32).copy()
    live = np.flatnonzero(~np.asarray(done, dtype=np.bool_))
    if live.size:
        pair, _, children, _ = afterstates(game, next_rows[live], next_legal[live])
        v = np.asarray(value(children), dtype=np.float32)
        best = np.full(live.size, -np.inf, dtype=np.float32)
        np.maximum.at(best, pair, v)
        y[live] = np.float32(gamma) * best
    return y


# ---------------------------------------------------------------------------------------------- the learner
class Seed000AfterstateLearner(Learner):
    """Reference system 000's experiment 04 (module docstring); the loop, checkpoints and eval points are the base's.

    The unit of work is one episode, played start to end inside a segment, so curve points and checkpoints
    (between episodes; the replay, the network and the generators are in the checkpoint) do not change the model.
    """

    name = "seed000_afterstate"
    params_model = Seed000AfterstateParams
    unit = "games"
    arithmetic = "torch"
    #: One thread: minibatches of 32 and forward passes on a few hundred positions (as DQN's Connect 4 net).
    default_threads = 1
    small_run = ("connect4", {"games": 14, "starts": "initial", "buffer_size": 40, "batch_size": 8, "device": "cpu",
                              "exploration": {"schedule": "linear", "start": 1.0, "end": 0.1, "decay_games": 7},
                              "network": {"body": "conv_stack", "layers": [{"channels": 4, "kernel": 3}],
                                          "dense": [8], "dense_activation": "none", "head": "q",
                                          "value_activation": "tanh"}})

    def check_game(self, game: Game, params: Seed000AfterstateParams) -> None:
        if game.game_id != "connect4":
            raise LearnError(f"seed000_afterstate plays connect4 only (the seed's 6x7 input), not {game.game_id}")
        try:
            config = resolve_network(params.network)
            build_network(config, SHAPE, 1)
        except BoardRLError as exc:
            raise LearnError(f"seed000_afterstate network: {exc}") from None
        if config.head != "q":
            raise LearnError(f"seed000_afterstate needs a q head (one value output), not {config.head}")

    # ------------------------------------------------------------------ setup and state
    def setup(self, game: Game, params: Seed000AfterstateParams, seed: int, opponent: Agent | None) -> None:
        if opponent is None:
            raise LearnError("seed000_afterstate needs an opponent (params.opponent)")
        p = self.p = params
        self.game, self.seed, self.opponent = game, int(seed), opponent
        torch_threads(p.threads, self.default_threads)
        self.device = pick_device(p.device)
        torch.manual_seed(seed)
        self.config = resolve_network(p.network)
        self.net = build_network(self.config, SHAPE, 1)
        if p.init == "keras":
            keras_init(self.net)
        self.net.to(self.device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=p.lr)
        width = len(game.state_type._fields)
        self.buffer = ReplayBuffer(p.buffer_size, (width,), game.num_actions, obs_dtype=np.int64)
        self.rng = np.random.default_rng(seed)
        self.starts = self._uci_rows() if p.starts == "uci" else None
        self.scratch = game.batched(1, auto_reset=False)
        self.counters = {"games_done": 0, "env_steps": 0, "wins": 0, "draws": 0, "losses": 0}

    def _uci_rows(self) -> np.ndarray:
        from boardrl.data import uci_table

        try:
            return uci_table.frame_states(uci_table.read_parquet(Path(self.p.uci_path)))
        except BoardRLError as exc:
            raise LearnError(f"seed000_afterstate starts 'uci': {exc}") from None

    def state_dict(self) -> dict[str, Any]:
        return {"net": self.net.state_dict(), "opt": self.opt.state_dict(), "replay": self.buffer.state_dict(),
                "rng": rng_state_json(self.rng), "counters": dict(self.counters)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.opt.load_state_dict(state["opt"])
        self.buffer.load_state_dict(state["replay"])
        self.rng = rng_from_json(state["rng"])
        self.counters = {k: int(v) for k, v in state["counters"].items()}

    def _meta(self) -> dict[str, Any]:
        return {"learner": self.name, "seed": self.seed, "params": self.p.model_dump(mode="json"),
                "games": self.counters["games_done"], "steps": self.counters["env_steps"]}

    def snapshot(self) -> Seed000Agent:
        """A greedy agent on a CPU copy of the network (later training does not change it)."""
        return Seed000Agent(self.game, copy.deepcopy(self.net).to("cpu"), self.config, self.name, self._meta())

    def final_agent(self) -> Seed000Agent:
        agent = self.snapshot()
        agent.stats = {**self._meta(), **{k: self.counters[k] for k in ("wins", "draws", "losses")}}
        return agent

    # ------------------------------------------------------------------ the loop
    def epsilon(self, episode: int) -> float:
        """epsilon of 0-based episode ``episode`` (the seed: annealed after every finished episode)."""
        return self.p.exploration.epsilon(episode)

    def train_segment(self, start: int, end: int) -> None:
        """Episodes ``start`` .. ``end - 1``, each played to its end."""
        loss_sum, updates = torch.zeros((), device=self.device), 0
        for episode in range(start, end):
            loss, steps = self._episode(self.epsilon(episode))
            loss_sum += loss
            updates += steps
            self.counters["games_done"] = episode + 1
        c = self.counters
        self.log_metrics({"loss": float(loss_sum.item()) / max(updates, 1), "epsilon": self.epsilon(end - 1),
                          "env_steps": float(c["env_steps"]), "replay_size": float(len(self.buffer)),
                          "train_win_rate": c["wins"] / max(c["games_done"], 1)}, end)

    def _start(self) -> np.ndarray:
        if self.starts is None:
            return np.asarray(self.game.initial_state(), dtype=np.int64)
        return self.starts[self.rng.integers(len(self.starts))].copy()

    def _play(self, row: np.ndarray, action: int) -> tuple[np.ndarray, bool, float]:
        """(next row, game over?, X's result there) after ``action`` in ``row``."""
        self.scratch.states[0] = row
        finished, rets = self.scratch.step(np.array([action], dtype=np.int64))
        return self.scratch.states[0].copy(), bool(finished[0]), float(rets[0, X])

    def _episode(self, eps: float) -> tuple[torch.Tensor, int]:
        """One episode from a fresh start: the agent's decisions, the opponent's replies, one minibatch a step."""
        game, s = self.game, self._start()
        if int(game.to_move_batch(s[None])[0]) != X:
            raise LearnError("seed000_afterstate: the agent plays X, but the start position has O to move")
        loss_sum, steps = torch.zeros((), device=self.device), 0
        while True:
            legal = game.legal_mask_batch(s[None])
            if self.rng.random() < eps:
                moves = np.flatnonzero(legal[0])
                action = int(moves[self.rng.integers(moves.size)])
            else:
                _, actions, children, _ = afterstates(game, s[None], legal)
                v = network_values(self.net, game, children, self.device)
                action = int(actions[int(torch.argmax(v))])  # the first largest: ties to the first legal move
            after, done, result = self._play(s, action)
            nxt = after
            if not done:
                reply = int(self.opponent.act_batch(after[None], self.rng)[0])
                nxt, done, result = self._play(after, reply)
            reward = result if done else 0.0
            next_legal = np.zeros((1, game.num_actions), dtype=np.bool_) if done else game.legal_mask_batch(nxt[None])
            self.buffer.add_batch(obs=after[None], action=np.array([action]), reward=np.array([reward]),
                                  next_obs=nxt[None], next_legal=next_legal, done=np.array([done]),
                                  same_mover=np.array([True]))
            loss_sum += self._learn()
            steps += 1
            self.counters["env_steps"] += 1
            if done:
                key = "wins" if reward > 0 else "losses" if reward < 0 else "draws"
                self.counters[key] += 1
                return loss_sum, steps
            s = nxt

    def _learn(self) -> torch.Tensor:
        """One SGD step on min(len, batch_size) distinct transitions; the detached loss."""
        n = len(self.buffer)
        idx = self.rng.choice(n, size=min(n, self.p.batch_size), replace=False)
        a = self.buffer.arrays
        self.net.eval()
        y = afterstate_targets(self.game, lambda rows: network_values(self.net, self.game, rows, self.device).cpu()
                               .numpy(), a["reward"][idx], a["next_obs"][idx], a["next_legal"][idx], a["done"][idx],
                               self.p.gamma)
        self.net.train()
        x = torch.from_numpy(seed000_planes(self.game, a["obs"][idx])).to(self.device)
        loss = torch.nn.functional.mse_loss(self.net(x).reshape(-1), torch.from_numpy(y).to(self.device))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss.detach()


LEARNER = Seed000AfterstateLearner
