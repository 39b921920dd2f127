#!/bin/bash
# The CUDA check behind README's GPU figures ("AlphaZero", 2026-11-26): on a machine with a CUDA GPU, run the
# torch code's tests on the GPU (the learners' `device: auto` picks it), the DQN and AlphaZero benchmarks with the
# GPU and with it hidden (same machine: a fair ratio), and the connect4_alphazero experiment's default training.
#
#   bash benchmarks/cuda_check.sh [OUTDIR]      # default OUTDIR: build/cuda_check
#
# Needs the project importable (`make install`, or PYTHONPATH=src with its dependencies) and pytest-xdist.
# Each step has its own time limit, so a slow one cannot hide the others' results.
set -u
cd "$(dirname "$0")/.."
out="${1:-build/cuda_check}"
mkdir -p "$out"
py="${PYTHON:-python3}"
{ nvidia-smi -L; nproc; "$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"; } \
    > "$out/env.txt" 2>&1
tests=(tests/learn/test_{alphazero,dqn,learned_agent,nn,td_lambda,torch_resume,value_selfplay}.py
       tests/agents/test_{alphazero_agent,network_agent,puct}.py)
step() {  # step NAME LIMIT COMMAND...: run it, append its status and seconds to OUT/NAME.log
    local name=$1 limit=$2 s; shift 2; s=$(date +%s)
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    echo "rc=$? $(( $(date +%s) - s )) s" >> "$out/$name.log"
}
step tests_cuda 300 "$py" -m pytest -p no:cacheprovider -n 8 --timeout 250 -rfEs "${tests[@]}"
step bench_gpu 150 "$py" benchmarks/run.py --only dqn --only alphazero --repeats 1 --output "$out/bench_gpu.json"
step bench_cpu 150 env CUDA_VISIBLE_DEVICES= "$py" benchmarks/run.py --only dqn --only alphazero --repeats 1 \
    --output "$out/bench_cpu.json"
step az_train_gpu 200 "$py" pipeline/train.py --experiment connect4_alphazero   # the train stage, outside DVC
step az_play_gpu 200 "$py" -m boardrl.cli match connect4 model:connect4_alphazero tactical --games 100
tail -n 1 "$out"/*.log
