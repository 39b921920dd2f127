"""A small torch learner on the Learner base: killed, resumed, and bit-identical to an uninterrupted run (CPU).

The learner here is a real (if tiny) TD(0) value learner on Connect 4 random play: a batched engine whose rows
are in flight across segments, a replay ring buffer, an MLP with dropout (torch's global random state), Adam
(optimizer moments), and a numpy generator for moves and sampling.  Every one of those must be restored for
the resumed run to end on exactly the same weights.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch
from pydantic import Field

from boardrl.agents.base import Agent
from boardrl.games import make_game
from boardrl.games.base import random_legal_actions
from boardrl.learn.core.base import MANIFEST, Learner, LearnerParams, rng_from_json, rng_state_json

C4 = make_game("connect4")


class TinyParams(LearnerParams):
    steps: int = Field(300, ge=1)
    batch: int = 16
    capacity: int = 256
    lr: float = 1e-2
    parallel_games: int = 8


class ValueAgent(Agent):
    """One-ply greedy on the learned value: the move whose position is worst for the opponent."""

    batched = False

    def __init__(self, game, net: torch.nn.Module) -> None:
        super().__init__(game, "tiny_td")
        self.net = net.eval()

    def act(self, state, rng: np.random.Generator) -> int:
        moves = self.game.legal_actions(state)
        children = np.array([self.game.play(state, m) for m in moves], dtype=np.int64)
        with torch.no_grad():
            v = self.net(torch.from_numpy(self.game.encode_batch(children))).squeeze(1).numpy()
        return moves[int(np.argmin(v))]


class TinyTD(Learner):
    name = "tiny_td"
    params_model = TinyParams
    unit = "steps"

    def setup(self, game, params, seed, opponent) -> None:
        torch.manual_seed(seed)
        self.game, self.p = game, params
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(84, 32), torch.nn.ReLU(),
                                       torch.nn.Dropout(0.2), torch.nn.Linear(32, 1), torch.nn.Tanh())
        self.opt = torch.optim.Adam(self.net.parameters(), lr=params.lr)
        self.rng = np.random.default_rng(seed)
        self.env = game.batched(params.parallel_games)
        n, shape = params.capacity, (params.capacity, *game.encoding_shape)
        self.buf = {"obs": np.zeros(shape, np.float32), "next": np.zeros(shape, np.float32),
                    "reward": np.zeros(n, np.float32), "done": np.zeros(n, np.bool_), "size": 0, "pos": 0}

    def _add(self, obs, nxt, reward, done) -> None:
        for i in range(obs.shape[0]):
            b = self.buf
            b["obs"][b["pos"]], b["next"][b["pos"]] = obs[i], nxt[i]
            b["reward"][b["pos"]], b["done"][b["pos"]] = reward[i], done[i]
            b["pos"] = (b["pos"] + 1) % self.p.capacity
            b["size"] = min(b["size"] + 1, self.p.capacity)

    def train_segment(self, start: int, end: int) -> None:
        for step in range(start, end):
            obs = self.game.encode_batch(self.env.states)
            mover = self.env.to_move().astype(np.int64)
            finished, rets = self.env.step(random_legal_actions(self.env.legal_mask(), self.rng))
            reward = rets[np.arange(len(mover)), mover] * finished
            self._add(obs, self.game.encode_batch(self.env.states), reward, finished)
            idx = self.rng.integers(0, self.buf["size"], self.p.batch)
            o, n = torch.from_numpy(self.buf["obs"][idx]), torch.from_numpy(self.buf["next"][idx])
            r, d = torch.from_numpy(self.buf["reward"][idx]), torch.from_numpy(self.buf["done"][idx])
            with torch.no_grad():
                target = torch.where(d, r, -self.net(n).squeeze(1))
            loss = torch.mean((self.net.train()(o).squeeze(1) - target) ** 2)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.log_metrics({"loss": loss.item()}, step + 1)

    def state_dict(self) -> dict:
        return {"net": self.net.state_dict(), "opt": self.opt.state_dict(), "rng": rng_state_json(self.rng),
                "env": self.env.states.copy(), "buf": dict(self.buf)}

    def load_state_dict(self, state: dict) -> None:
        self.net.load_state_dict(state["net"])
        self.opt.load_state_dict(state["opt"])
        self.rng = rng_from_json(state["rng"])
        self.env.states[:] = state["env"]
        self.buf = dict(state["buf"])

    def snapshot(self) -> Agent:
        return ValueAgent(self.game, copy.deepcopy(self.net))


class Kill(Exception):
    """Stands for the process dying."""


PARAMS = {"steps": 300, "checkpoint_every": 70}
POINTS = [0, 100, 200, 300]


def run(ckpt, kill_at=None, losses=None):
    def on_eval(step, agent):
        if step == kill_at:
            raise Kill
        return {"step": step, "move": int(agent.act(C4.replay("4453"), np.random.default_rng(0)))}

    learner = TinyTD()
    agent = learner.train(C4, PARAMS, seed=5, checkpoint_dir=ckpt, eval_points=POINTS, on_eval=on_eval,
                          on_metrics=(lambda m, s: losses.append((s, m))) if losses is not None else None)
    return learner, agent


def test_killed_torch_run_resumes_bit_identical(tmp_path):
    ref, ref_agent = run(tmp_path / "ref")
    ck = tmp_path / "ck"
    with pytest.raises(Kill):
        run(ck, kill_at=200)  # dies at the eval at 200: last checkpoint at 140
    manifest = json.loads((ck / MANIFEST).read_text())
    assert manifest["done"] == 140 and manifest["tensors"] and manifest["arrays"]
    assert not any(ck.glob("*.pkl"))
    resumed, agent = run(ck)
    for key, value in ref.net.state_dict().items():
        assert torch.equal(value, resumed.net.state_dict()[key]), key  # bit for bit
    ref_moments = ref.opt.state_dict()["state"]
    for k, v in resumed.opt.state_dict()["state"].items():
        assert torch.equal(v["exp_avg_sq"], ref_moments[k]["exp_avg_sq"])
    assert resumed.evaluations == ref.evaluations and sorted(ref.evaluations) == POINTS
    assert not ck.exists()


def test_metrics_hook_gets_losses_and_throughput_with_steps(tmp_path):
    losses: list = []
    run(tmp_path / "ck", losses=losses)
    steps = [s for s, m in losses if "loss" in m]
    assert steps == list(range(1, 301))
    assert [s for s, m in losses if "steps_per_s" in m] == [70, 100, 140, 200, 210, 280, 300]


def test_checkpoint_loads_without_pickle(tmp_path):
    """Tensors come back through torch.load(weights_only=True) and arrays through np.load(allow_pickle=False)."""
    ck = tmp_path / "ck"
    with pytest.raises(Kill):
        run(ck, kill_at=100)
    manifest = json.loads((ck / MANIFEST).read_text())
    tensors = torch.load(ck / manifest["tensors"], weights_only=True)
    assert any(k.startswith("/learner/opt") for k in tensors) and "/torch_rng/cpu" in tensors
    with np.load(ck / manifest["arrays"], allow_pickle=False) as arrays:
        assert "/learner/buf/obs" in arrays.files
