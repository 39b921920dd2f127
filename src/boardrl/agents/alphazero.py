"""AlphaZeroAgent: a policy/value network played through the batched PUCT search (agents/puct.py).

Why a NetworkAgent subclass: the same network is two players -- the search (``simulations`` per move, the
strong one) and the raw policy (``network_agent()``, no search) -- and the report measures both; saving,
loading and ``value_batch`` (the network's value, for value accuracy) are the network agent's.  ``act_batch``
runs one search over all the rows a match hands it, so the network sees batches of rows x ``leaves_per_wave``
positions; ``act`` is the one-row case.  The move is the most visited root action (ties: the higher prior, then
the lower action), deterministic given the network: temperature belongs to self-play, not to evaluation.

Saved as kind ``alphazero`` with the search settings in agent.json, so ``model:<experiment>`` plays with the
simulations it was trained for and ``model:<experiment>,simulations=800`` overrides them.  ``rollout_weight``
(agent.json ``value``) mixes random playouts into the leaf values (``MixedEvaluator``, AlphaGo's leaf value); 0,
the default and what models saved before it read as, is the network's value alone;
``model:<experiment>,rollout_weight=1,rollouts=4`` overrides it too.  ``tactics`` (agent.json ``value``; false in
models saved before it) puts the game's exact short-tactics values in place of the leaf estimates
(``TacticalEvaluator``); ``model:<experiment>,tactics=0`` searches without them, ``tactics=1`` with them.

``method`` ``gumbel`` (agent.json ``method`` with its ``gumbel`` settings, written only for a Gumbel agent; models
saved before it, or without it, read as ``puct``) searches with Gumbel AlphaZero (agents/gumbel.py) instead: no
Gumbel noise at evaluation, so the move is the best action after sequential halving, deterministic given the
network.  ``model:<experiment>,search=gumbel`` (or ``search=puct``) switches a saved model.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boardrl.agents.gumbel import GumbelSettings, gumbel_search
from boardrl.agents.network import NetworkAgent
from boardrl.agents.output_cache import DEFAULT_ENTRIES
from boardrl.agents.puct import (MixedEvaluator, NetworkEvaluator, RolloutEvaluator, SearchSettings, most_visited,
                                 search, with_tactics)
from boardrl.errors import BoardRLError
from boardrl.games.base import Game

#: Search methods an AlphaZero agent plays with.
METHODS = ("puct", "gumbel")
#: Gumbel's own settings (the budget and leaves per wave are the PUCT settings'), with their defaults.
GUMBEL_DEFAULTS = {k: GumbelSettings.__dataclass_fields__[k].default
                   for k in ("considered_actions", "c_visit", "c_scale")}

#: Roots searched together at most (memory: rows x (simulations + 1) x actions per tree array).
MAX_TREES = 512


class AlphaZeroAgent(NetworkAgent):
    """PUCT search with a policy/value network evaluator (see the module docstring)."""

    kind = "alphazero"
    wants_batches = True

    def __init__(self, game: Game, network: torch.nn.Module, config: Any, settings: SearchSettings,
                 name: str = "alphazero", meta: dict | None = None, device: Any = None,
                 rollout_weight: float = 0.0, rollouts: int = 1, tactics: bool = False, method: str = "puct",
                 gumbel: dict | None = None) -> None:
        super().__init__(game, network, config, "greedy", name=name, meta=meta, device=device)
        if self.config.head != "policy_value":
            raise BoardRLError(f"{name}: AlphaZero needs a policy_value network, not a {self.config.head} head")
        self.network.eval()
        self.settings_search = replace(settings, noise=0.0)
        self.rollout_weight, self.rollouts, self.tactics = float(rollout_weight), int(rollouts), bool(tactics)
        network_evaluator = NetworkEvaluator(game, self.network, self.device, cache_entries=DEFAULT_ENTRIES)
        mixed = MixedEvaluator(network_evaluator, RolloutEvaluator(game, self.rollouts), self.rollout_weight)
        self.evaluator = with_tactics(game, mixed, self.tactics)
        if method not in METHODS:
            raise BoardRLError(f"{name}: unknown search {method!r}; choices: {', '.join(METHODS)}")
        self.method, self.gumbel = method, {**GUMBEL_DEFAULTS, **(gumbel or {})}
        self.gumbel_settings = GumbelSettings(simulations=self.settings_search.simulations,
                                              leaves_per_wave=self.settings_search.leaves_per_wave, **self.gumbel)

    @property
    def simulations(self) -> int:
        return self.settings_search.simulations

    def with_simulations(self, simulations: int, name: str | None = None) -> "AlphaZeroAgent":
        """The same network (shared) searching ``simulations`` per move."""
        return self.with_search(simulations=simulations, name=name)

    def with_search(self, simulations: int | None = None, rollout_weight: float | None = None,
                    rollouts: int | None = None, tactics: bool | None = None, search: str | None = None,
                    name: str | None = None) -> "AlphaZeroAgent":
        """The same network (shared) with the settings given changed and the others kept: the search budget, the
        playout share of the leaf value (``model:<id>,rollout_weight=1,rollouts=4`` tries playout values on a
        trained model without retraining), the tactics check and the search method (``search``: puct or gumbel)."""
        settings = self.settings_search if simulations is None else replace(self.settings_search,
                                                                            simulations=int(simulations))
        weight = self.rollout_weight if rollout_weight is None else rollout_weight
        return AlphaZeroAgent(self.game, self.network, self.config, settings, name or self.name, self.meta,
                              self.device, weight, self.rollouts if rollouts is None else rollouts,
                              self.tactics if tactics is None else bool(tactics), search or self.method,
                              self.gumbel)

    def network_agent(self, name: str | None = None) -> NetworkAgent:
        """The raw policy: the most probable legal move of the network, no search."""
        return NetworkAgent(self.game, self.network, self.config, "greedy", name=name or f"{self.name} (network)",
                            meta=self.meta, device=self.device)

    # ------------------------------------------------------------------ acting
    def act_batch(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows = self._rows(states)
        out = np.empty(len(rows), dtype=np.int64)
        for lo in range(0, len(rows), MAX_TREES):
            if self.method == "gumbel":
                out[lo:lo + MAX_TREES] = gumbel_search(self.game, rows[lo:lo + MAX_TREES], self.evaluator,
                                                       self.gumbel_settings, rng, noise=False).actions
                continue
            trees = search(self.game, rows[lo:lo + MAX_TREES], self.evaluator, self.settings_search, rng)
            out[lo:lo + MAX_TREES] = most_visited(trees.root_visits(), trees.prior[:, 0, :])
        return out

    # ------------------------------------------------------------------ saving
    def extra_info(self) -> dict[str, Any]:
        info = {"search": asdict(self.settings_search),
                "value": {"rollout_weight": self.rollout_weight, "rollouts": self.rollouts, "tactics": self.tactics}}
        if self.method != "puct":  # a PUCT agent's agent.json stays as it was before Gumbel
            info.update(method=self.method, gumbel=dict(self.gumbel))
        return info

    @classmethod
    def load(cls, game: Game, info: dict, model_dir: Path, device: Any = None) -> "AlphaZeroAgent":
        from boardrl.agents.learned import ModelError

        net = NetworkAgent.load(game, info, model_dir, device)
        try:
            settings = SearchSettings(**(info.get("search") or {}))
        except (TypeError, BoardRLError) as exc:
            raise ModelError(f"{Path(model_dir)}: bad search settings in agent.json: {exc}") from None
        value = {"rollout_weight": 0.0, "rollouts": 1, "tactics": False, **(info.get("value") or {})}
        try:
            weight, rollouts = float(value["rollout_weight"]), int(value["rollouts"])
            if not isinstance(value["tactics"], bool):
                raise TypeError(f"tactics must be true or false, got {value['tactics']!r}")
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{Path(model_dir)}: bad value settings in agent.json: {exc}") from None
        if not 0.0 <= weight <= 1.0 or rollouts < 1:
            raise ModelError(f"{Path(model_dir)}: bad value settings in agent.json: rollout_weight must be in "
                             f"[0, 1] and rollouts >= 1, got {weight} and {rollouts}")
        method, gumbel = info.get("method", "puct"), {**GUMBEL_DEFAULTS, **(info.get("gumbel") or {})}
        try:
            if method not in METHODS:
                raise BoardRLError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
            GumbelSettings(**gumbel)
        except (TypeError, BoardRLError) as exc:
            raise ModelError(f"{Path(model_dir)}: bad gumbel settings in agent.json: {exc}") from None
        return cls(game, net.network, net.config, settings, name=info["agent"], meta=info.get("meta"),
                   device=net.device, rollout_weight=weight, rollouts=rollouts, tactics=value["tactics"],
                   method=method, gumbel=gumbel)

