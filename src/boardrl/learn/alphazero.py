"""AlphaZero (Silver et al. 2017/2018): batched self-play with PUCT search, a replay window, policy + value loss.

Read top to bottom: the params, the replay window, then the loop.

**Self-play.**  ``parallel_games`` games run side by side; every move, one batched search (agents/puct.py) runs
``simulations`` simulations from every unfinished game with Dirichlet noise at the roots, and all the trees'
leaves go to the network together.  The move is drawn from the root visit counts at temperature 1 for the first
``temperature_plies`` plies of a game, then the most visited (temperature 0).  Each decision stores (state row,
visit distribution pi, mover); when the game ends each of its decisions gets z = the result for its mover.

**Gumbel (optional).**  With ``search`` ``gumbel`` the search is Gumbel AlphaZero (agents/gumbel.py): Gumbel
noise and sequential halving at the root choose the move, and pi is the completed-Q improved policy instead of
the visit counts; ``noise``, ``dirichlet_alpha``, ``temperature_plies``, ``c_puct`` and ``fpu`` are then unused
(ignored rather than refused: their defaults are non-zero, so refusing them would refuse the defaults).

**Playout caps (optional).**  With ``full_search_share`` p < 1 (KataGo's playout cap randomization) each move of
each game is drawn from that game's generator: with probability p the full search, stored as a training
position; otherwise ``fast_simulations`` (no root noise for PUCT, as KataGo), played but not stored.  The full
rows of a ply are searched together, the fast rows together: at most two search calls a ply.  p = 1 draws
nothing, so the default run is what it was.

**Random streams and workers.**  Every random draw of self-play game g (cap draws, root noise or Gumbel g,
move samples, its league member and that member's moves) comes from game g's own generator, derived from
(seed, g) (``learn/alphazero_selfplay.py``, which holds self-play as a function of weights, params, seed and game
indices, and says why network batches are padded).  So the games may run in ``workers`` Ray actors
(``learn/core/selfplay_pool.py``; the param, else ``$BOARDRL_SELFPLAY_WORKERS``, else in-process): the learner
splits a batch into contiguous chunks of games, sends the self-play network's weights once per generation, and
adds the merged records in the in-process order, so the model is the same for any worker count (tested,
tests/learn/test_selfplay_ray.py; docs/ray.md).  The learner's own generator draws only minibatches,
augmentation and gating seeds.

**Learning.**  After every ``train_every`` finished games, ``updates`` minibatches are drawn from the last
``window`` positions, each row replaced by a uniformly drawn image under the game's symmetries (the action map
moves pi with it), and the network is fitted to (pi, z): cross-entropy of the policy (or seed 003's MSE) plus
the value's mean squared error, Adam with weight decay.

**Tactics (optional).**  With ``tactics`` the self-play search's leaf values are exact where the game's
short-tactics check settles them (a win before the mover's turn ends, or no safe line; ``TacticalEvaluator``), and
with ``eval_tactics`` the trained agent's, which saves the setting.  The network still learns only from game
results and visit counts.  Two switches because they act apart: on Conniption (README "AlphaZero") the check in
play alone won sols, cells and hybrid as second; only with it in self-play too did the agent win games against
flip as second.

**League games (optional).**  With ``opponents`` (agent specs) and ``opponent_share`` > 0 that share of the games
is played against a fixed player drawn per game, the learner's seat alternating (``learn/core/league.py`` says why and
how they are scheduled).  Only the learner's own decisions are stored; their z is the game's result.

**Gating (optional).**  With ``gating_games`` > 0 the candidate network plays that many games (seats alternating)
against the network self-play currently uses, both searching ``simulations`` per move; it replaces it when it
scores at least ``gating_threshold`` (AlphaGo Zero's 0.55).  Off by default, as in AlphaZero.

The budget counts finished self-play games.  A segment plays whole batches (only the budget and the learning
phases cut a batch short), so nothing is in flight at its end, where curve points and checkpoints fall does not
change the games, and a resumed run equals an uninterrupted one (the state dict holds networks, optimizer,
window and random state).  Defaults are ours, tuned for a 2-core CPU; seed 003's tic-tac-toe setup is an
experiment in params.yaml.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch
from torch import nn

from boardrl.agents.alphazero import AlphaZeroAgent
from boardrl.agents.base import Agent
from boardrl.agents.puct import SearchSettings, has_tactics
from boardrl.errors import BoardRLError
from boardrl.games.base import Game
from boardrl.learn.alphazero_params import AlphaZeroParams
from boardrl.learn.alphazero_selfplay import ActorSpec, Records, SelfPlayer
from boardrl.learn.core.base import Learner, LearnError, rng_from_json, rng_state_json
from boardrl.learn.core.device import adam, pick_device, torch_threads
from boardrl.learn.core.league import League
from boardrl.learn.core.selfplay_pool import resolved_workers
from boardrl.nn import build_network, network_preset, parse_network_config


# ---------------------------------------------------------------------------------------------- replay window
class Window:
    """The last ``capacity`` positions: state rows, search policies pi and results z for the mover (a ring)."""

    def __init__(self, capacity: int, width: int, num_actions: int) -> None:
        self.rows = np.zeros((capacity, width), np.int64)
        self.pi = np.zeros((capacity, num_actions), np.float32)
        self.z = np.zeros(capacity, np.float32)
        self.count = 0  # positions ever added; the ring holds the last min(count, capacity)

    def __len__(self) -> int:
        return min(self.count, len(self.z))

    def add(self, rows: np.ndarray, pi: np.ndarray, z: np.ndarray) -> None:
        idx = (self.count + np.arange(len(z))) % len(self.z)
        self.rows[idx], self.pi[idx], self.z[idx] = rows, pi, z
        self.count += len(z)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        idx = rng.integers(0, len(self), size=n)
        return self.rows[idx], self.pi[idx], self.z[idx]

    def state_dict(self) -> dict[str, Any]:
        n = len(self)
        return {"rows": self.rows[:n].copy(), "pi": self.pi[:n].copy(), "z": self.z[:n].copy(), "count": self.count}

    def load_state_dict(self, d: dict[str, Any]) -> None:
        n = len(np.asarray(d["z"]))
        self.rows[:n], self.pi[:n], self.z[:n] = d["rows"], d["pi"], d["z"]
        self.count = int(d["count"])


def augment(game: Game, rows: np.ndarray, pi: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each row replaced by its image under a uniformly drawn symmetry, pi moved by that symmetry's action map."""
    images, maps = game.symmetries_batch(rows)
    k = rng.integers(0, len(maps), size=len(rows))
    out_rows = images[k, np.arange(len(rows))]
    out_pi = np.zeros_like(pi)
    np.put_along_axis(out_pi, maps[k], pi, axis=1)  # out_pi[i, maps[k_i][a]] = pi[i, a]
    return out_rows, out_pi


# ---------------------------------------------------------------------------------------------- the learner
class AlphaZeroLearner(Learner):
    """AlphaZero (see the module docstring); the loop, checkpoints and eval points are the base's."""

    name = "alphazero"
    params_model = AlphaZeroParams
    unit = "games"
    arithmetic = "torch"
    small_run = ("tictactoe", {"games": 60, "network": {"body": "mlp", "hidden": [16], "head": "policy_value"},
                               "simulations": 4, "eval_simulations": 3, "parallel_games": 12, "train_every": 24,
                               "updates": 3, "batch_size": 16, "window": 200, "temperature_plies": 2,
                               "device": "cpu"})

    def check_game(self, game: Game, params: AlphaZeroParams) -> None:
        try:
            config = self._config(params.network, game)
            build_network(config, game.encoding_shape, game.num_actions)
        except BoardRLError as exc:
            raise LearnError(f"alphazero network: {exc}") from None
        if config.head != "policy_value":
            raise LearnError(f"alphazero needs a policy_value head, not {config.head}")
        for name in ("tactics", "eval_tactics"):
            if getattr(params, name) and not has_tactics(game):
                raise LearnError(f"alphazero {name}: {game.game_id} has no exact short-tactics check")

    @staticmethod
    def _config(spec: str | dict, game: Game):
        return network_preset(spec, game.encoding_shape) if isinstance(spec, str) else parse_network_config(spec)

    # ------------------------------------------------------------------ setup
    def setup(self, game: Game, params: AlphaZeroParams, seed: int, opponent: Agent | None) -> None:
        p = self.p = params
        self.game, self.seed = game, int(seed)
        threads = torch_threads(p.threads, self.default_threads)
        self.device = pick_device(p.device)
        torch.manual_seed(seed)
        self.config = self._config(p.network, game)
        self.net = build_network(self.config, game.encoding_shape, game.num_actions).to(self.device)
        self.player = copy.deepcopy(self.net).eval()  # the network self-play uses (the best one, with gating)
        self.opt = adam(self.net.parameters(), lr=p.lr, weight_decay=p.weight_decay)
        self.window = Window(p.window, len(game.state_type._fields), game.num_actions)
        self.rng = np.random.default_rng(seed)
        self.league = League(game, p.opponents, p.opponent_share, self.name)
        self.self_player = SelfPlayer(game, p, self.player, self.device, self.league)
        self._start_pool(threads)
        self.counters = {"games": 0, "positions": 0, "updates": 0, "since_train": 0, "promotions": 0}

    def _search_settings(self, noise: bool) -> SearchSettings:
        return self.self_player.search_settings(noise)

    def _start_pool(self, threads: int) -> None:
        """The Ray actors, when workers are asked for (param, else environment); none: nothing of Ray imported."""
        workers = resolved_workers(self.p.workers)
        self.pool, self.pool_weights_sent = None, False
        if workers is None:
            return
        from boardrl.learn.core.selfplay_pool import SelfPlayPool

        spec = ActorSpec(self.game.game_id, self.p.model_dump(mode="json"), self.config, threads)
        self.pool = SelfPlayPool(workers, spec, cpus_per_actor=threads)

    # ------------------------------------------------------------------ the loop
    def train_segment(self, start: int, end: int) -> int:
        """Self-play batches from game ``start`` until ``end`` is reached (learning after every ``train_every``).

        A batch is ``parallel_games`` games, or fewer where a learning phase or the budget comes first; never
        where ``end`` (a curve point or a checkpoint) falls, so the batches are the same however the run is cut.
        Returns the games played, which may pass ``end`` by up to a batch.
        """
        clock = {"self_play_s": 0.0, "learn_s": 0.0, "tree_s": 0.0, "engine_s": 0.0, "evaluator_s": 0.0}
        losses: list[tuple[float, float]] = []
        t0 = time.perf_counter()
        while self.counters["games"] < end:
            batch = min(self.p.parallel_games, self.p.games - self.counters["games"], self.p.train_every
                        - self.counters["since_train"])
            t = time.perf_counter()
            self._self_play(batch, clock)
            clock["self_play_s"] += time.perf_counter() - t
            if self.counters["since_train"] >= self.p.train_every:
                t = time.perf_counter()
                losses += self._learn()
                clock["learn_s"] += time.perf_counter() - t
        self._log(start, self.counters["games"], time.perf_counter() - t0, clock, losses)
        return self.counters["games"]

    def _self_play(self, n: int, clock: dict[str, float] | None = None) -> None:
        """Play the next ``n`` games side by side to the end (in-process, or in the Ray actors); add the learner's
        positions to the window in the in-process order."""
        first = self.counters["games"]
        if self.pool is None:
            records = self.self_player.play(self.seed, first, n, clock)
        else:
            records = self._pool_play(first, n, clock)
        z = records.value_targets(self.p.value_target_q)
        self.window.add(records.rows, records.pi, z)
        self.counters["games"] += n
        self.counters["since_train"] += n
        self.counters["positions"] += len(z)

    def _pool_play(self, first: int, n: int, clock: dict[str, float] | None) -> Records:
        """The games in the actors: the generation's weights sent once, the chunks' records merged."""
        if not self.pool_weights_sent:
            self.pool.set_weights({k: v.detach().cpu() for k, v in self.player.state_dict().items()})
            self.pool_weights_sent = True
        parts = self.pool.play(self.seed, first, n)
        for _, part_clock in parts:
            for key, value in part_clock.items():
                if clock is not None:
                    clock[key] = clock.get(key, 0.0) + value
        return Records.merge([records for records, _ in parts])

    def close(self) -> None:
        """Stop the self-play actors (if any); the runtime stays for the process."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def _gumbel_fields(self) -> dict[str, Any]:
        """Gumbel's own settings (m, c_visit, c_scale), for the search and the agents."""
        return {"considered_actions": self.p.considered_actions, "c_visit": self.p.c_visit, "c_scale": self.p.c_scale}

    def _learn(self) -> list[tuple[float, float]]:
        """One learning phase: ``updates`` minibatches, then (with gating) the arena."""
        self.counters["since_train"] = 0
        losses = [self._update() for _ in range(self.p.updates)]
        if self.p.gating_games > 0:
            self._gate()
        else:
            self.player.load_state_dict(self.net.state_dict())
        self.pool_weights_sent = False
        return losses

    def _update(self) -> tuple[float, float]:
        """One minibatch of (pi, z) with symmetry augmentation; returns (policy loss, value loss)."""
        p, game, dev = self.p, self.game, self.device
        rows, pi, z = self.window.sample(p.batch_size, self.rng)
        if p.symmetry:
            rows, pi = augment(game, rows, pi, self.rng)
        x = torch.from_numpy(game.encode_batch(rows)).to(dev)
        legal = torch.from_numpy(game.legal_mask_batch(rows)).to(dev)
        target_pi, target_z = torch.from_numpy(pi).to(dev), torch.from_numpy(z).to(dev)
        self.net.train()
        logits, value = self.net(x)
        logits = logits.masked_fill(~legal, -1e9)  # illegal actions: probability 0, and 0 * log 0 counts 0
        if p.policy_loss == "cross_entropy":
            policy_loss = -(target_pi * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        else:
            policy_loss = ((torch.softmax(logits, dim=1) - target_pi) ** 2).sum(dim=1).mean()
        value_loss = nn.functional.mse_loss(value, target_z)
        self.opt.zero_grad(set_to_none=True)
        (policy_loss + value_loss).backward()
        self.opt.step()
        self.counters["updates"] += 1
        return float(policy_loss.detach()), float(value_loss.detach())

    def _gate(self) -> None:
        """Arena: the candidate replaces the self-play network when it scores >= gating_threshold."""
        from boardrl.evaluate.match import play_match

        settings, method = self._search_settings(noise=False), self.p.search  # the self-play search, no noise
        cand = AlphaZeroAgent(self.game, copy.deepcopy(self.net).eval(), self.config, settings, "candidate",
                              method=method, gumbel=self._gumbel_fields())
        best = AlphaZeroAgent(self.game, self.player, self.config, settings, "best", method=method,
                              gumbel=self._gumbel_fields())
        res = play_match(self.game, cand, best, self.p.gating_games, seed=int(self.rng.integers(2**31)))
        c = res.combined
        score = (c.wins + 0.5 * c.draws) / max(c.games, 1)
        self.log_metrics({"gating_score": score}, self.counters["games"])
        if score >= self.p.gating_threshold:
            self.player.load_state_dict(self.net.state_dict())
            self.counters["promotions"] += 1

    def _log(self, start: int, end: int, seconds: float, clock: dict, losses: list) -> None:
        metrics = {"games_per_s": (end - start) / max(seconds, 1e-9), "positions": float(self.counters["positions"]),
                   "updates": float(self.counters["updates"]), "window": float(len(self.window)), **clock}
        if losses:
            metrics["policy_loss"] = float(np.mean([l[0] for l in losses]))
            metrics["value_loss"] = float(np.mean([l[1] for l in losses]))
        if self.p.gating_games > 0:
            metrics["promotions"] = float(self.counters["promotions"])
        self.log_metrics(metrics, end)

    # ------------------------------------------------------------------ checkpoints and agents
    def state_dict(self) -> dict[str, Any]:
        return {"net": self.net.state_dict(), "player": self.player.state_dict(), "opt": self.opt.state_dict(),
                "window": self.window.state_dict(), "rng": rng_state_json(self.rng), "counters": dict(self.counters)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.player.load_state_dict(state["player"])
        self.pool_weights_sent = False
        self.opt.load_state_dict(state["opt"])
        self.window.load_state_dict(state["window"])
        self.rng = rng_from_json(state["rng"])
        self.counters = {k: int(v) for k, v in state["counters"].items()}

    def _meta(self) -> dict[str, Any]:
        return {"learner": self.name, "seed": self.seed, "params": self.p.model_dump(mode="json"),
                "games": self.counters["games"], "positions": self.counters["positions"],
                "updates": self.counters["updates"]}

    def snapshot(self) -> AlphaZeroAgent:
        """The self-play network on the CPU, searching ``eval_simulations`` per move."""
        p = self.p
        settings = SearchSettings(simulations=p.eval_simulations, c_puct=p.c_puct, fpu=p.fpu,
                                  leaves_per_wave=p.eval_leaves_per_wave, dirichlet_alpha=p.dirichlet_alpha)
        net = copy.deepcopy(self.player).to("cpu").eval()
        return AlphaZeroAgent(self.game, net, self.config, settings, name=self.name, meta=self._meta(), device="cpu",
                              rollout_weight=p.eval_rollout_weight, rollouts=p.eval_rollouts,
                              tactics=p.eval_tactics, method=p.eval_search, gumbel=self._gumbel_fields())


LEARNER = AlphaZeroLearner
