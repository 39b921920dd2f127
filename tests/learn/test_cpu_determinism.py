"""A torch model is the same on every machine: instruction sets pinned (boardrl/cpu_pins.py), threads fixed.

Two subprocesses stand in for two machines.  One lets every library use AVX-512: ATen ``avx512``, oneDNN
``AVX512_CORE``, and MKL its own dispatch.  The other is capped at AVX2: ATen ``avx2``, oneDNN ``AVX2``, and
MKL's ``AVX2`` branch.  Each trains the same small experiments.  With the pin (importing boardrl) the model
files must be byte-equal.  Without it (``BOARDRL_CPU_ISA=native``) they must differ: that control shows the
caps really change the arithmetic here, so the equality means something.  The control is skipped on a CPU
without AVX-512, where the two machines are the same.

Measured on an AMD EPYC (Zen 4, AVX-512): sha256 prefixes of each saved model directory, for the avx512 and
avx2 machines.  Without the pin the caps change every case: DQN connect4 86ca1ff7 / 2523d08d, AlphaZero
tic-tac-toe 0c927b0e / e02bad52, TD(lambda) 9c260e48 / 028ab20e.  The causes are oneDNN's AVX-512 and AVX2
convolutions, ATen's AVX-512 and AVX2 softmax, and MKL's own and AVX2 branches.  With the pin both machines
give 9f0bc39a, b8c24475 and 38126dc2.  The thread count changes the bits too, pin or not: the AlphaZero connect4
tower trained with 1 and with 2 threads differs.  So learn/core/device.py fixes the count rather than taking the
machine's cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from boardrl import cpu_pins
from boardrl.errors import BoardRLError
from boardrl.learn.core import device

#: What each stand-in machine's environment caps (ATen, oneDNN, MKL); the pin must override all of it.
MACHINES: dict[str, dict[str, str]] = {
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"},
}
#: name -> (learner, game, params): one conv DQN, one AlphaZero, one value learner, a few seconds each.
CASES: dict[str, tuple[str, str, dict]] = {
    "dqn_connect4": ("dqn", "connect4", {"steps": 600, "learning_starts": 100, "batch_size": 32, "parallel_envs": 16,
                                         "target_every": 50, "device": "cpu", "threads": 1}),
    "alphazero_tictactoe": ("alphazero", "tictactoe", {"games": 32, "parallel_games": 16, "simulations": 8,
                                                       "train_every": 16, "updates": 5, "batch_size": 64,
                                                       "device": "cpu", "threads": 1}),
    "td_lambda_tictactoe": ("td_lambda", "tictactoe", {"games": 300, "device": "cpu"}),
}
#: Trains CASES (argv[1], JSON) in a fresh interpreter; prints torch's capability and each model's sha256.
TRAIN = """
import hashlib, json, sys, tempfile
from pathlib import Path
import boardrl  # first: the pin must come before torch runs
import torch
from boardrl.games import make_game
from boardrl.learn import make_learner

out = {"capability": torch.backends.cpu.get_cpu_capability(), "models": {}}
with tempfile.TemporaryDirectory() as tmp:
    for name, (learner, game, params) in json.loads(sys.argv[1]).items():
        agent = make_learner(learner).train(make_game(game), params, seed=0, checkpoint_dir=Path(tmp, name, "ck"),
                                            eval_points=[])
        agent.save(Path(tmp, name, "model"))
        digest = hashlib.sha256()
        for f in sorted(Path(tmp, name, "model").iterdir()):
            digest.update(f.name.encode() + f.read_bytes())
        out["models"][name] = digest.hexdigest()
print(json.dumps(out))
"""


def machine_env(machine: str, pinned: bool) -> dict[str, str]:
    """This process's environment without any pin, plus the machine's caps (and the opt-out if unpinned)."""
    drop = {cpu_pins.ISA_ENV, *(k for pins in cpu_pins.PINS.values() for k in pins)}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(MACHINES[machine])
    if not pinned:
        env[cpu_pins.ISA_ENV] = "native"
    return env


def train(machine: str, pinned: bool) -> dict:
    done = subprocess.run([sys.executable, "-c", TRAIN, json.dumps(CASES)], env=machine_env(machine, pinned),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, bool], dict]:
    """Every (machine, pinned) run, two at a time (the machine has two cores; each run uses one thread)."""
    keys = [(m, p) for p in (True, False) for m in MACHINES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(keys, pool.map(lambda k: train(*k), keys)))


def test_pinned_models_are_byte_equal_under_both_instruction_set_caps(runs):
    fast, slow = runs[("avx512", True)], runs[("avx2", True)]
    assert fast["capability"] == slow["capability"] == "AVX2"
    assert fast["models"] == slow["models"]


def test_without_the_pin_the_caps_change_every_model(runs):
    """The control: if the caps changed nothing here, the test above would prove nothing."""
    fast, slow = runs[("avx512", False)], runs[("avx2", False)]
    if fast["capability"] != "AVX512":
        pytest.skip(f"this CPU has no AVX-512 (torch runs {fast['capability']}): both stand-in machines are one")
    assert slow["capability"] == "AVX2"
    assert all(fast["models"][name] != slow["models"][name] for name in CASES), (fast["models"], slow["models"])


# ---------------------------------------------------------------------------------------------- the pieces
def test_pin_overrides_the_environment_and_native_leaves_it(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # whether this worker's torch ran is another test
    env = {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AUTO"}
    assert cpu_pins.pin_cpu_dispatch(env) == cpu_pins.PINS["avx2"]
    assert env == {**cpu_pins.PINS["avx2"]}
    mine = {cpu_pins.ISA_ENV: "Native", "ATEN_CPU_CAPABILITY": "avx512"}
    cpu_pins.pin_cpu_dispatch(mine)
    assert mine["ATEN_CPU_CAPABILITY"] == "avx512" and "MKL_CBWR" not in mine


def test_unknown_choice_warns_in_one_line_and_pins_the_default(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    env = {cpu_pins.ISA_ENV: "avx9"}
    assert cpu_pins.pin_cpu_dispatch(env, sys.stderr) == cpu_pins.PINS[cpu_pins.DEFAULT_ISA]
    err = capsys.readouterr().err
    assert "avx9" in err and err.count("\n") == 1


def test_torch_that_already_ran_unpinned_is_reported_in_one_line(monkeypatch, capsys):
    class Cpu:
        @staticmethod
        def get_cpu_capability() -> str:
            return "AVX512"

    fake = type("torch", (), {"backends": type("backends", (), {"cpu": Cpu})})
    monkeypatch.setitem(sys.modules, "torch", fake)
    cpu_pins.pin_cpu_dispatch({}, sys.stderr)
    err = capsys.readouterr().err
    assert "import boardrl before torch" in err and err.count("\n") == 1
    cpu_pins.pin_cpu_dispatch({cpu_pins.ISA_ENV: "native"}, sys.stderr)
    assert capsys.readouterr().err == ""


def test_threads_default_to_a_constant_not_the_machines_cores(monkeypatch):
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    monkeypatch.delenv(device.THREADS_ENV, raising=False)
    try:
        assert device.torch_threads() == torch.get_num_threads() == device.DEFAULT_THREADS
    finally:
        torch.set_num_threads(before)


def test_thread_count_precedence_param_then_environment_then_learner():
    assert device.resolved_threads(3, 1, {device.THREADS_ENV: "2"}) == 3
    assert device.resolved_threads(None, 1, {device.THREADS_ENV: "2"}) == 2
    assert device.resolved_threads(None, 1, {}) == 1
    with pytest.raises(BoardRLError, match=r"BOARDRL_TORCH_THREADS must be a positive integer, got 'two'"):
        device.resolved_threads(None, 1, {device.THREADS_ENV: "two"})
    with pytest.raises(BoardRLError, match="torch threads must be >= 1, got 0"):
        device.resolved_threads(0, 1, {})


def test_every_stage_of_an_experiment_plays_on_its_learners_threads(monkeypatch):
    """Train, curve and evaluate share one count: the param, else the learner's default (DQN and seed 003's
    learners 1, AlphaZero 2); a numpy learner has none.  pin_stage_threads sets it in the process."""
    torch = pytest.importorskip("torch")
    from boardrl.learn import learner_params_model, pin_stage_threads, stage_threads

    monkeypatch.delenv(device.THREADS_ENV, raising=False)  # tests/conftest.py sets 1 for the suite

    def lp(name, **fields):
        return learner_params_model(name).model_validate(fields)

    assert stage_threads("dqn", lp("dqn")) == 1 and stage_threads("dqn", lp("dqn", threads=2)) == 2
    assert stage_threads("alphazero", lp("alphazero")) == 2
    assert stage_threads("td_lambda", lp("td_lambda")) == stage_threads("qnet", lp("qnet")) == 1
    assert stage_threads("tabular_q", lp("tabular_q")) is None
    before = torch.get_num_threads()
    try:
        assert pin_stage_threads("alphazero", lp("alphazero")) == torch.get_num_threads() == 2
        assert pin_stage_threads("dqn", lp("dqn")) == torch.get_num_threads() == 1
        torch.set_num_threads(before)
        assert pin_stage_threads("tabular_q", lp("tabular_q")) is None and torch.get_num_threads() == before
    finally:
        torch.set_num_threads(before)


def test_learners_run_deterministic_algorithms_on_the_cpu():
    torch = pytest.importorskip("torch")
    device.pick_device("cpu")
    assert torch.are_deterministic_algorithms_enabled()
