"""A/B: torch CPU threads 1 against 2 for the neural learners, on each experiment's own params.

    python benchmarks/torch_threads.py [--repeats 3] [--experiments connect4_dqn,...]
    BOARDRL_CPU_ISA=native python benchmarks/torch_threads.py   # the same without the instruction-set pin

Why: the DQN and AlphaZero learners use ``DEFAULT_THREADS`` (2) unless their params set ``threads``
(learn/core/device.py ``torch_threads``), because their convolutional nets trained 1.4-1.6x faster on both cores of an
idle 2-core machine, while small MLPs do better on one.  The count is a constant, not the machine's cores,
because it changes the model bits.  Each run trains the experiment's learner alone (no learning curve, no files
kept) on a shortened budget.  Runs alternate 1 and 2 threads, each in a fresh process (torch's thread pool
cannot shrink once used), so a busy neighbour hits both.  Prints the median seconds of each and the ratio.  The
pin (boardrl/cpu_pins.py) costs speed, mostly through MKL's SSE2 branch.  Running once with
``BOARDRL_CPU_ISA=native`` measures that cost on the real learners.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: experiment -> budget override (the unit of its learner) that takes 10-40 s on 2 cores
CASES = {
    "dots_and_boxes_3x3_dqn": {"steps": 30000},
    "dots_and_boxes_2x2_seed001_dqn": {"steps": 7000},
    "connect4_dqn": {"steps": 60000},
    "conniption_dqn": {"steps": 40000},
    "tictactoe_dqn": {"steps": 20000},
    "tictactoe_seed002_dqn_vs_semirandom": {"steps": 10000},
    "connect4_alphazero": {"games": 256},
    "tictactoe_alphazero": {"games": 2048},
}


def train_seconds(exp_id: str, overrides: dict) -> float:
    """Train ``exp_id``'s learner (seed 0) with ``overrides`` in this process; wall seconds of the training."""
    from boardrl.config import load_params
    from boardrl.games import make_game
    from boardrl.learn import make_learner

    params = load_params(ROOT / "params.yaml", only_experiment=exp_id)
    e = params.experiment(exp_id)
    budget_key = next(iter(overrides.keys() & {"steps", "games"}))
    e.params.update(overrides, checkpoint_every=overrides[budget_key])
    learner_params = params.learner_params(exp_id)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        make_learner(e.learner).train(make_game(e.game), learner_params, seed=0, checkpoint_dir=Path(tmp),
                                      eval_points=[], on_eval=None, progress=False)
    return time.perf_counter() - started


def one_run(exp_id: str, overrides: dict, threads: int) -> float:
    """``train_seconds`` in a fresh interpreter with ``threads`` torch threads."""
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import torch_threads as t; "
            f"print(t.train_seconds({exp_id!r}, json.loads({json.dumps({**overrides, 'threads': threads})!r})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--experiments", default=",".join(CASES), help="comma-separated ids of CASES")
    args = parser.parse_args()
    for exp_id in args.experiments.split(","):
        if exp_id not in CASES:
            sys.exit(f"error: --experiments: no case {exp_id!r}; cases: {', '.join(CASES)}")
        times: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.repeats):
            for threads in (1, 2):
                times[threads].append(one_run(exp_id, CASES[exp_id], threads))
        one, two = statistics.median(times[1]), statistics.median(times[2])
        print(f"{exp_id} {CASES[exp_id]}: 1 thread {one:.1f} s, 2 threads {two:.1f} s, ratio {one / two:.2f}x "
              f"(median of {args.repeats})", flush=True)


if __name__ == "__main__":
    main()
