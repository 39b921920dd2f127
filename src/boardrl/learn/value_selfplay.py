"""Seed 003's self-play value learners on one loop: TD(0), TD(lambda), Q-network and DQN(lambda).

SEEDS.md "Seed 003", Algorithms: every learner plays epsilon-greedy self-play (epsilon 0.1), keeps a 10k
replay memory, trains with SGD on batches of 32 with MSE, and works in epochs of 100 games.  They differ in

- what the network values: V(afterstate) (td0, td_lambda; ``agents/afterstate.py``) or Q(s, a) (qnet,
  dqn_lambda; a ``NetworkAgent``), both from the side to move (negamax), so one network serves both seats;
- the target: one step from a **target network** synced each epoch (td0, qnet) or the lambda-return from the
  online network, recomputed for the whole memory each epoch (td_lambda, dqn_lambda; ``learn/lambda_returns.py``);
- whether exploratory moves are stored (td0, qnet: no; lambda learners: yes) and how many updates an epoch
  gets (900 or 100).

Our configuration (params.yaml; the defaults stay the seed's) adds what closes seed 003's gap to perfect play,
found by checking the greedy agent against the exact referee on every position a perfect opponent can reach:
its losses as second were a handful of fork defences after openings its own greedy self-play never plays.
Hence more exploration (epsilon 0.3 or a decaying ``Exploration`` schedule), ``symmetry`` (each game stored as
its 8 images, so a line learned once is learned in every orientation), a Watkins cut (``cut_at_exploration``:
a lambda-return stops before an exploratory move, so the Q learners can keep exploratory samples, valid
one-step targets, without following exploratory continuations), a 128-128 MLP with torch's initialisation,
and Adam.

Fixed against the seed: every sample bootstraps from its own successor (the seed's Q targets all used the
first sample's), and the TD(0) agent can be evaluated (the seed's crashed at its first evaluation).

The batched engine: an epoch's games are played side by side (``games_per_epoch`` rows), all afterstates or
Q values of a step in one forward pass; the epoch's updates follow.  The seed interleaved one update per game
inside the epoch; here the network is frozen while an epoch is played (as the seed's TD(0)/Q learners were).
Each sample's row of the memory is the position a move was played from (Q) or the afterstate a move was played
from (V: the opponent's reply leads to the next afterstate), so a row is "exploratory" when that move was.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Literal

import numpy as np
import torch

from boardrl.agents.afterstate import AfterstateAgent, afterstate_scores, value_network_fn
from boardrl.agents.base import Agent
from boardrl.agents.network import NetworkAgent, encode_states, greedy_actions
from boardrl.games.base import Game, random_legal_actions
from boardrl.learn.core.base import Learner, LearnError, rng_from_json, rng_state_json
from boardrl.learn.core.device import adam, pick_device, torch_threads
from boardrl.learn.lambda_returns import EpisodeBuffer
from boardrl.nn import build_network
from boardrl.learn.value_params import SelfPlayValueParams


def symmetric_episodes(
    game: Game, states: np.ndarray, actions: np.ndarray, explored: np.ndarray, length: np.ndarray,
    results: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each of ``n`` played games and its images under the game's S symmetries, as S * n games of their own.

    Why whole episodes and not rows: an image of an episode is an episode (positions, moves and results all
    map together), so the lambda-return links and the exploration flags carry over unchanged.  Arguments as
    ``_rows`` (states (L+1, n, W), actions / explored (L, n), length (n,), results (n, 2)); game ``s * n + p``
    of the output is game ``p`` under symmetry ``s`` (identity first, so games 0..n-1 are the originals).
    """
    steps1, n, width = states.shape
    images, maps = game.symmetries_batch(states.reshape(-1, width))
    s = images.shape[0]
    states = images.reshape(s, steps1, n, width).transpose(1, 0, 2, 3).reshape(steps1, s * n, width)
    actions = maps[:, actions].transpose(1, 0, 2).reshape(actions.shape[0], s * n)
    return (np.ascontiguousarray(states), np.ascontiguousarray(actions), np.tile(explored, (1, s)),
            np.tile(length, s), np.tile(results, (s, 1)))


class SelfPlayValueLearner(Learner):
    """The loop of module docstring; subclasses set ``values`` ("afterstate" or "q") and ``lambda_returns``."""

    unit = "games"
    arithmetic = "torch"
    #: One intra-op thread: for an MLP of a few thousand weights on batches of 32, torch's threading costs more
    #: than it saves (measured on the 2-core machine: 0.36 ms vs 7 ms per SGD update with 2 threads).
    default_threads = 1
    small_run = ("tictactoe", {"games": 260, "games_per_epoch": 50, "updates_per_epoch": 20, "buffer": 500,
                               "device": "cpu"})
    values: ClassVar[Literal["afterstate", "q"]]
    lambda_returns: ClassVar[bool]

    # ------------------------------------------------------------------ setup and state
    def check_game(self, game: Game, params: SelfPlayValueParams) -> None:
        if not hasattr(game, "encoding_shape"):
            raise LearnError(f"{self.name}: {game.game_id} has no network encoding")

    def setup(self, game: Game, params: SelfPlayValueParams, seed: int, opponent: Agent | None) -> None:
        if opponent is not None:
            raise LearnError(f"{self.name} learns by self-play only; it takes no opponent")
        torch_threads(params.threads, self.default_threads)
        self.game, self.p, self.seed = game, params, int(seed)
        self.device = pick_device(params.device)
        torch.manual_seed(seed)
        outputs = 1 if self.values == "afterstate" else game.num_actions
        self.net = build_network(params.network, game.encoding_shape, outputs)
        if params.init_std > 0:
            for module in self.net.modules():
                if isinstance(module, torch.nn.Linear):
                    torch.nn.init.normal_(module.weight, 0.0, params.init_std)
        self.net.to(self.device)
        self.target = None if self.lambda_returns else copy.deepcopy(self.net)
        opt = torch.optim.SGD if params.optimizer == "sgd" else adam
        self.opt = opt(self.net.parameters(), lr=params.lr)
        self.rng = np.random.default_rng(seed)
        self.memory = EpisodeBuffer(params.buffer, game.encoding_shape, game.num_actions)
        self.games_done = 0

    def state_dict(self) -> dict[str, Any]:
        return {"net": self.net.state_dict(), "target": None if self.target is None else self.target.state_dict(),
                "opt": self.opt.state_dict(), "rng": rng_state_json(self.rng), "memory": self.memory.state_dict(),
                "games_done": self.games_done}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        if self.target is not None:
            self.target.load_state_dict(state["target"])
        self.opt.load_state_dict(state["opt"])
        self.rng = rng_from_json(state["rng"])
        self.memory.load_state_dict(state["memory"])
        self.games_done = int(state["games_done"])

    def snapshot(self) -> Agent:
        net = copy.deepcopy(self.net)
        meta = {"learner": self.name, "seed": self.seed, "params": self.p.model_dump(mode="json"),
                "games": self.games_done}
        cls = AfterstateAgent if self.values == "afterstate" else NetworkAgent
        return cls(self.game, net, self.p.network, name=self.name, meta=meta, device=self.device)

    # ------------------------------------------------------------------ the loop
    def train_segment(self, start: int, end: int) -> int:
        """Whole epochs from game ``start`` until ``end`` is reached; returns the games played.

        An epoch (``games_per_epoch`` games side by side, then its updates) is the unit of work: only the budget
        cuts one short, so where curve points and checkpoints fall does not change the training.
        """
        per = self.p.games_per_epoch
        g = start
        while g < end:
            chunk_end = min(self.p.games, (g // per + 1) * per)
            eps = self.p.exploration.epsilon(g)
            self.memory.add(self._play(chunk_end - g, eps))
            updates = self._updates_due(g, chunk_end)
            self._set_learning_rate(chunk_end)
            if self.lambda_returns and updates:
                self._refresh_returns()
            losses = [self._update() for _ in range(updates) if len(self.memory) >= self.p.batch]
            if self.target is not None and chunk_end % per == 0:
                self.target.load_state_dict(self.net.state_dict())
            g = self.games_done = chunk_end
            if losses:
                self.log_metrics({"loss": float(np.mean(losses)), "epsilon": eps}, g)
        return g

    def _set_learning_rate(self, games: int) -> None:
        """``lr``, or with ``lr_end`` the linear fall from lr to lr_end at this game count (the epoch's end)."""
        p = self.p
        if p.lr_end is not None:
            for group in self.opt.param_groups:
                group["lr"] = p.lr + (p.lr_end - p.lr) * min(1.0, games / p.games)

    def _updates_due(self, g: int, chunk_end: int) -> int:
        """The SGD updates after games g .. chunk_end: a whole epoch's when an epoch completes, none mid-epoch.

        Why: an epoch is played whole (``train_segment``), so ``chunk_end`` is an epoch's end or the budget's;
        only the last, partial epoch of a run (games not a multiple of games_per_epoch) gets its pro-rated share.
        """
        per, total = self.p.games_per_epoch, self.p.games
        if chunk_end % per == 0:
            return self.p.updates_per_epoch
        if chunk_end == total:
            return self.p.updates_per_epoch * (total % per) // per
        return 0

    def _scores(self, states: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """(N, A) what greedy play maximises: afterstate values or Q values, for the player to move."""
        if self.values == "afterstate":
            return afterstate_scores(self.game, states, legal, value_network_fn(self.net, self.game, self.device))
        with torch.no_grad():
            x = torch.from_numpy(encode_states(self.game, states)).to(self.device)
            return self.net(x).double().cpu().numpy()

    def _play(self, n: int, eps: float) -> dict[str, np.ndarray]:
        """Play ``n`` self-play games side by side to the end; their memory rows (``_rows``)."""
        batch = self.game.batched(n, auto_reset=False)
        states, actions, explored = [batch.states.copy()], [], []
        results = np.zeros((n, 2))
        length = np.zeros(n, dtype=np.int64)
        active = np.ones(n, dtype=np.bool_)
        while active.any():
            rows = np.flatnonzero(active)
            legal = self.game.legal_mask_batch(batch.states[rows])
            greedy = greedy_actions(self._scores(batch.states[rows], legal), legal)
            explore = self.rng.random(rows.size) < eps
            step = np.zeros(n, dtype=np.int64)
            step[rows] = np.where(explore, random_legal_actions(legal, self.rng), greedy)
            flag = np.zeros(n, dtype=np.bool_)
            flag[rows] = explore
            finished, rets = batch.step(step)
            results[finished] = rets[finished]
            length[rows] += 1
            active &= ~finished
            states.append(batch.states.copy())
            actions.append(step)
            explored.append(flag)
        episodes = (np.stack(states), np.stack(actions), np.stack(explored), length, results)
        return self._rows(*(symmetric_episodes(self.game, *episodes) if self.p.symmetry else episodes))

    def _rows(self, states: np.ndarray, actions: np.ndarray, explored: np.ndarray, length: np.ndarray,
              results: np.ndarray) -> dict[str, np.ndarray]:
        """Memory rows of the finished games, game by game, linked to their successors (lambda_returns.py).

        ``states`` (L+1, n, W): position before move t in each game (terminal positions repeat at the end).
        Row t of game p: position t (t >= 1 for afterstates: the first afterstate is after move 0), its move,
        position t+1.
        """
        steps, n = actions.shape
        t = np.arange(steps)[:, None]
        first = 1 if self.values == "afterstate" else 0
        stored = (t >= first) & (t < length[None, :])
        if not self.p.store_exploratory:
            stored &= ~explored
        link = np.zeros_like(stored)
        link[:-1] = stored[:-1] & stored[1:]
        if self.p.cut_at_exploration:
            link[:-1] &= ~explored[1:]
        depth = np.zeros((steps, n), dtype=np.int64)
        for k in range(steps - 2, -1, -1):
            depth[k] = np.where(link[k], depth[k + 1] + 1, 0)
        order = stored.T  # game-major: rows of one game are consecutive
        index = (np.cumsum(order.reshape(-1)) - 1).reshape(n, steps).T
        nxt = np.full((steps, n), -1, dtype=np.int64)
        nxt[:-1] = np.where(link[:-1], index[1:], -1)
        pp, tt = np.nonzero(order)  # (game, t) pairs in game-major order
        here, after = states[tt, pp], states[tt + 1, pp]
        mover = self.game.to_move_batch(here).astype(np.int64)
        done = tt + 1 == length[pp]
        same = self.game.to_move_batch(after).astype(np.int64) == mover
        return {
            "obs": encode_states(self.game, here), "next_obs": encode_states(self.game, after),
            "next_legal": self.game.legal_mask_batch(after), "action": actions[tt, pp],
            "reward": np.where(done, results[pp, mover], 0.0).astype(np.float32), "done": done,
            "sign": np.where(same, 1, -1).astype(np.int8), "next_index": nxt[tt, pp], "depth": depth[tt, pp],
            "ret": np.zeros(tt.size, np.float32),
        }

    # ------------------------------------------------------------------ learning
    def _next_values(self, net: torch.nn.Module, next_obs: torch.Tensor, next_legal: torch.Tensor) -> torch.Tensor:
        """Value of each next position for its player to move: V, or the max over its legal Q values."""
        out = net(next_obs)
        if self.values == "afterstate":
            return out.reshape(-1)
        masked = torch.where(next_legal, out, torch.full_like(out, -torch.inf))
        best = masked.amax(dim=1)
        return torch.where(next_legal.any(dim=1), best, torch.zeros_like(best))

    def _refresh_returns(self) -> None:
        """Recompute every stored lambda-return with the current network (seed 003: every 100 games)."""
        a, n = self.memory.arrays, len(self.memory)
        with torch.no_grad():
            x = torch.from_numpy(a["next_obs"][:n]).to(self.device)
            legal = torch.from_numpy(a["next_legal"][:n]).to(self.device)
            v = self._next_values(self.net, x, legal).double().cpu().numpy()
        self.memory.refresh_returns(v, self.p.gamma, self.p.lam)

    def _update(self) -> float:
        """One SGD step on a uniform batch of the memory; returns the loss."""
        keys = ("obs", "action", "ret") if self.lambda_returns else \
            ("obs", "action", "reward", "done", "sign", "next_obs", "next_legal")
        b = self.memory.batch(self.rng.integers(0, len(self.memory), self.p.batch), keys)
        dev = self.device
        obs = torch.from_numpy(b["obs"]).to(dev)
        if self.lambda_returns:
            target = torch.from_numpy(b["ret"]).to(dev)
        else:
            with torch.no_grad():
                v = self._next_values(self.target, torch.from_numpy(b["next_obs"]).to(dev),
                                      torch.from_numpy(b["next_legal"]).to(dev))
            boot = self.p.gamma * torch.from_numpy(b["sign"]).to(dev).float() * v
            target = torch.where(torch.from_numpy(b["done"]).to(dev), torch.from_numpy(b["reward"]).to(dev), boot)
        out = self.net(obs)
        if self.values == "afterstate":
            pred = out.reshape(-1)
        else:
            pred = out.gather(1, torch.from_numpy(b["action"]).to(dev)[:, None]).squeeze(1)
        loss = torch.nn.functional.mse_loss(pred, target.float())
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return float(loss.item())
