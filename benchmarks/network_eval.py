"""Connect 4 AlphaZero's network on the CPU: evaluations per second by runtime, batch size and torch threads, and
whether each runtime computes the same outputs as the pipeline's.

    python benchmarks/network_eval.py [--repeats 5] [--out benchmarks/network_eval.json]
    python benchmarks/network_eval.py --runtimes eager --batches 256 --network '{"body": "residual", "channels": 16,
        "blocks": 2, "head": "policy_value", "head_hidden": 64}' --out /tmp/small.json   # another network's cost
    BOARDRL_CPU_ISA=native python benchmarks/network_eval.py --out /tmp/native.json   # without the CPU pins

Why: the network is 97% of Connect 4 self-play time (docs/studies/speed.md), so issue 36 asks which way of running
it is fastest here: the batch size per call, inference mode (kept since d65207e), the thread count,
``torch.compile`` and ONNX Runtime.  A runtime may replace the pipeline's only if it is faster *and* computes the
same bits, because a trained model must not depend on how it was computed (the CPU pins of boardrl/cpu_pins.py
exist for that); where it is faster but not exact, the figure says what the bits would cost.

Runtimes, each on the same inputs, the ``connect4_alphazero`` network of params.yaml with seeded untrained
weights (speed and exactness do not depend on the weights' values):

- ``eager``: ``torch.inference_mode`` and the module itself, as ``agents/puct.py`` ``NetworkEvaluator`` runs it;
- ``compile``: ``torch.compile`` (inductor, its default mode), one graph per batch size; its compile time is given;
- ``onnxruntime``: the module exported by ``torch.onnx.export``, run by an ONNX Runtime session on as many
  intra-op threads; left out, and said so, where ``onnxruntime`` is not installed (``pip install onnxruntime
  onnx onnxscript``).

Inputs are the encodings of positions from random play (the shape and sparsity of self-play's).  Each thread
count runs in a fresh process (torch's thread pool cannot shrink once used); within it, each timing is the median
of ``--repeats`` runs of at least 0.3 s each.  Exactness: the largest absolute difference from ``eager`` over the
policy logits and values, and whether every output is bitwise equal.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
BATCHES = (64, 256, 1024)  # 256: one self-play search wave of connect4_alphazero's parallel_games
THREADS = (1, 2)


def positions(game, n: int, seed: int = 0) -> np.ndarray:
    """``n`` encoded positions drawn from random play from the empty board (float32, the network's input): 64
    games played on (a finished one starts again) until eight times ``n`` positions were seen, so the draw
    covers every depth of a game, not only its first moves."""
    from boardrl.games.base import random_legal_actions

    rng = np.random.default_rng(seed)
    env = game.batched(64, auto_reset=True)
    seen = []
    while sum(len(s) for s in seen) < 8 * n:
        env.step(random_legal_actions(env.legal_mask(), rng))
        seen.append(env.states.copy())
    rows = np.concatenate(seen)
    return game.encode_batch(rows[rng.choice(len(rows), size=n, replace=False)])


def rate(call: Callable[[], Any], batch: int, repeats: int) -> float:
    """Evaluations per second of ``call`` on ``batch`` positions: the median of ``repeats`` timed runs."""
    call()
    runs = []
    for _ in range(repeats):
        calls, t0 = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - t0) < 0.3:
            call()
            calls += 1
        runs.append(calls * batch / elapsed)
    return statistics.median(runs)


def compare(ref: tuple[np.ndarray, np.ndarray], got: tuple[np.ndarray, np.ndarray]) -> dict[str, Any]:
    diff = max(float(np.max(np.abs(r - g))) for r, g in zip(ref, got))
    return {"max_abs_diff": diff, "bitwise_equal": all(np.array_equal(r, g) for r, g in zip(ref, got))}


def onnx_session(net, example, threads: int, folder: Path):
    """An ONNX Runtime session of ``net`` with a dynamic batch axis, or None where onnxruntime is missing."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    import torch

    path = folder / "net.onnx"
    torch.onnx.export(net, (example,), str(path), input_names=["x"], output_names=["logits", "value"],
                      dynamic_axes={"x": {0: "n"}}, dynamo=False)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def measure(threads: int, repeats: int, batches: tuple[int, ...] = BATCHES, network: str | None = None,
            runtimes: tuple[str, ...] = ("eager", "compile", "onnxruntime")) -> dict[str, Any]:
    """Every runtime and batch size on ``threads`` torch (and ONNX Runtime) threads, in this process."""
    import boardrl  # noqa: F401  (first: the CPU pins, boardrl/cpu_pins.py, precede torch loading its libraries)
    import torch

    from boardrl.config import load_params
    from boardrl.games import make_game
    from boardrl.nn import build_network, network_preset, parse_network_config

    torch.set_num_threads(threads)
    p = load_params(HERE.parent / "params.yaml").learner_params("connect4_alphazero")
    game = make_game("connect4")
    torch.manual_seed(0)
    spec = json.loads(network) if network and network.startswith("{") else (network or p.network)
    config = network_preset(spec, game.encoding_shape) if isinstance(spec, str) else parse_network_config(spec)
    net = build_network(config, game.encoding_shape, game.num_actions).eval()
    inputs = torch.from_numpy(positions(game, max(batches)))
    out: dict[str, Any] = {"threads": threads, "cpu_isa": os.environ.get("BOARDRL_CPU_ISA", "pinned"),
                           "torch": torch.__version__, "network": config.model_dump(),
                           "parameters": sum(t.numel() for t in net.parameters()), "runtimes": {}}

    def eager(x):
        with torch.inference_mode():
            logits, value = net(x)
        return logits.numpy(), value.numpy()

    compiled = torch.compile(net, dynamic=False) if "compile" in runtimes else None

    def compiled_call(x):
        with torch.inference_mode():
            logits, value = compiled(x)
        return logits.numpy(), value.numpy()

    with tempfile.TemporaryDirectory() as folder:
        session = onnx_session(net, inputs[:batches[0]], threads, Path(folder)) if "onnxruntime" in runtimes else None
        calls: dict[str, Callable] = {"eager": eager, "compile": compiled_call}
        if session is not None:
            calls["onnxruntime"] = lambda x: tuple(session.run(None, {"x": x.numpy()}))
        elif "onnxruntime" in runtimes:
            out["onnxruntime"] = "not installed"
        for name, run in ((k, v) for k, v in calls.items() if k in runtimes):
            rows = {}
            for batch in batches:
                x = inputs[:batch].contiguous()
                t0 = time.perf_counter()
                first = run(x)  # compile: traces and builds this batch size's graph here
                first_s = time.perf_counter() - t0
                rows[str(batch)] = {"evals_per_s": rate(lambda: run(x), batch, repeats), "first_call_s": first_s,
                                    **compare(eager(x), first)}
            out["runtimes"][name] = rows
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=HERE / "network_eval.json")
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)), help="positions per call, comma-separated")
    ap.add_argument("--network", help="a preset name or a network config as JSON (default: connect4_alphazero's)")
    ap.add_argument("--runtimes", default="eager,compile,onnxruntime", help="comma-separated")
    ap.add_argument("--threads", type=int, help=argparse.SUPPRESS)  # a child process: one thread count
    args = ap.parse_args()
    batches = tuple(int(b) for b in args.batches.split(","))
    if args.threads:
        print(json.dumps(measure(args.threads, args.repeats, batches, args.network,
                                 tuple(args.runtimes.split(",")))))
        return
    results = []
    for threads in THREADS:
        child = ["--threads", str(threads), "--repeats", str(args.repeats), "--batches", args.batches,
                 "--runtimes", args.runtimes, *(["--network", args.network] if args.network else [])]
        res = subprocess.run([sys.executable, __file__, *child], capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"error: the {threads}-thread run failed: {res.stderr.strip().splitlines()[-1:]}")
        results.append(json.loads(res.stdout.strip().splitlines()[-1]))
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print("threads runtime      batch  evals/s   vs eager  first call s  max |diff|  bitwise")
    for r in results:
        eager = r["runtimes"]["eager"]
        for name, rows in r["runtimes"].items():
            for batch, row in rows.items():
                print(f"{r['threads']:>7} {name:<12} {batch:>5} {row['evals_per_s']:>9,.0f} "
                      f"{row['evals_per_s'] / eager[batch]['evals_per_s']:>8.2f}x {row['first_call_s']:>12.2f} "
                      f"{row['max_abs_diff']:>11.2e}  {row['bitwise_equal']}")
        if "onnxruntime" in r:
            print(f"{r['threads']:>7} onnxruntime: {r['onnxruntime']}")


if __name__ == "__main__":
    main()
