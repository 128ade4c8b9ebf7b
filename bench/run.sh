#!/usr/bin/env bash
# bench/run.sh - the benchmarks behind bench/RESULTS.md, printed as markdown.
# Run through ./build.sh bench (which builds build/doppler, build/stg_bench
# and build/sim_bench first), from the repository root.
#   1. every placer on the three DOPPLER reference graphs, 4 devices;
#   2. every placer on the STG set: mean and worst ratio to the proven optimum
#      per size (50, 100) and processor count (2, 4, 8, 16);
#   3. simulator throughput: simulations per second of cp's assignment, one
#      core, >= 1 s per graph (target: >= 100,000/s on ffnn_192nodes).
#   4. DOPPLER learning: ms per imitation / REINFORCE episode and per greedy
#      inference on the reference graphs (one core, hidden 32, 3 rounds);
#      quality after il 500 + sim 2000 episodes against the heuristics (ten
#      seeds, with a table per seed, and ten with the paper's REINFORCE; five
#      with 8 rollouts per update, and five in PRIORITY order);
#      generalisation on STG 50 (train rand0000-0059, place rand0060-0089);
#      the pretrained policy remade byte for byte and placed zero-shot on
#      unseen generated and reference graphs (bench/pretrained.sh), and
#      per-graph training started from it.
#   5. the CPU executor: dispatch overhead per op, and its wall time against
#      the simulator's prediction on every shipped and reference graph
#      (2 devices; cp, heft and random placements); real-op workloads against
#      the simulator on a cluster from dp_calibrate_cpu (measure on a quiet
#      machine: other processes' load lengthens the executor's wall time).
#   6. the CUDA executor, when build/doppler_cuda_probe finds a GPU (a build
#      with nvcc): dispatch overhead per op; workloads on 1, 2 and 4 logical
#      devices against the GPU-calibrated simulator.
#   8. ONNX import: demos/onnx2dpg.py on a 10,000-node model (bench/onnx_bench.sh;
#      skipped without the onnx package).
# Parts 1 and 2 need the reference data in ../shared/data (DP_DATA overrides);
# they are skipped with a message when it is absent.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DATA=${DP_DATA:-../shared/data}
status=0
for p in build/doppler build/stg_bench build/sim_bench build/learn_bench build/exec_bench; do
    [ -x "$p" ] || { echo "bench/run.sh: $p missing: run ./build.sh bench" >&2; exit 1; }
done
# one core for the timings where taskset exists
PIN=()
command -v taskset >/dev/null 2>&1 && PIN=(taskset -c 0)

echo "# doppler benchmarks"
echo
echo "$(date -u +%Y-%m-%d), $(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(${CC:-gcc} --version | head -n 1)"

echo
echo "## 1. Placers on the DOPPLER reference graphs (4 devices, FIFO runtime)"
echo
if [ -d "$DATA/doppler" ]; then
    "${PIN[@]}" build/doppler bench "$DATA"/doppler/*.txt --methods all --devices 4 --md || status=1
else
    echo "skipped: $DATA/doppler not found"
fi

echo
echo "## 2. Placers on the STG set against the proven optima (no communication)"
if [ -d "$DATA/stg" ]; then
    "${PIN[@]}" build/stg_bench --data "$DATA/stg" || status=1
else
    echo
    echo "skipped: $DATA/stg not found"
fi

echo
echo "## 3. Simulator throughput (cp's assignment, 4 devices, one core)"
echo
sim_graphs=()
[ -d "$DATA/doppler" ] && sim_graphs+=("$DATA"/doppler/*.txt)
mapfile -t -O "${#sim_graphs[@]}" sim_graphs < <(printf '%s\n' graphs/*.dpg | sort -V)
"${PIN[@]}" build/sim_bench "${sim_graphs[@]}" || status=1

echo
echo "## 4. DOPPLER and Placeto learning"
echo
if [ -d "$DATA/doppler" ]; then
    echo "### Per-episode time (4 devices, one core; reference: ChainMM 1.84 s train / 1.18 s infer, FFNN 4.25 / 2.87, Llama-block 3.65 / 2.46)"
    echo
    echo "| graph | ops | devices | ms / imitation episode | ms / REINFORCE episode | ms / greedy inference | peak RSS MiB |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for f in "$DATA"/doppler/*.txt; do "${PIN[@]}" build/learn_bench timing "$f" || status=1; done
    echo
    QHEAD="| graph | lower bound | seeds | simulations | episodes to within 5% of final, training time | doppler greedy | doppler best of greedy + 64 samples | search: best found in training + sampling | cp | heft | enumopt | anneal (same simulations) | policy <= every heuristic | search <= every heuristic | policy <= anneal (same simulations) | search <= anneal (default budget) |"
    QRULE="|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|"
    echo "### Quality after il 500 + sim 2000 episodes (4 devices, FIFO runtime), makespan / lower bound, mean ± sd over seeds 1-10"
    echo
    echo "$QHEAD"
    echo "$QRULE"
    # --per-seed: the row, then a table per seed; rows here, per-seed tables after
    PERSEED=$(mktemp)
    for f in "$DATA"/doppler/*.txt; do
        "${PIN[@]}" build/learn_bench quality "$f" --seeds 10 --per-seed > "$PERSEED.out" || status=1
        head -n 1 "$PERSEED.out"
        tail -n +2 "$PERSEED.out" >> "$PERSEED"
    done
    echo
    echo "#### Per seed (the runs above; percent: best of samples or search against the best heuristic, - is better)"
    cat "$PERSEED"
    rm -f "$PERSEED" "$PERSEED.out"
    echo "### The same without the anchor (--anchor -1: the defaults before 2026-11-24)"
    echo
    echo "$QHEAD"
    echo "$QRULE"
    for f in "$DATA"/doppler/*.txt; do "${PIN[@]}" build/learn_bench quality "$f" --seeds 10 --anchor -1 || status=1; done
    echo
    echo "### Stability: il 1000 + sim 20000 episodes, seeds 1-10 (runs whose final greedy placement is worse than after il; runs that end on one device)"
    echo
    SHEAD="| graph | devices | episodes | worse than after il | on one device | greedy after il | greedy after sim | training time |"
    SRULE="|---|---:|---|---|---|---:|---:|---:|"
    echo "$SHEAD"
    echo "$SRULE"
    for f in "$DATA"/doppler/*.txt graphs/llama_layer_256_p2.dpg; do "${PIN[@]}" build/learn_bench stability "$f" --seeds 10 || status=1; done
    echo
    echo "Without the anchor (--anchor -1), seeds 1-5:"
    echo
    echo "$SHEAD"
    echo "$SRULE"
    for f in "$DATA"/doppler/*.txt graphs/llama_layer_256_p2.dpg; do "${PIN[@]}" build/learn_bench stability "$f" --seeds 5 --anchor -1 || status=1; done
    echo
    echo "### Diagnostics of two runs that collapse without the anchor (il 1000 + sim 20000; means per 2500 episodes)"
    for a in -1 0; do
        for run in "graphs/llama_layer_256_p2.dpg --seed 1" "$DATA/doppler/ffnn_192nodes.txt --seed 7"; do
            echo
            echo "--anchor $a (0: the default), $(basename ${run%% *}) ${run#* }:"
            echo
            # shellcheck disable=SC2086
            "${PIN[@]}" build/learn_bench diag $run --il 1000 --sim 20000 --window 2500 --anchor "$a" || status=1
        done
    done
    echo
    echo "### The same with the paper's REINFORCE (--step-bl -1 --gamma 0.99: no per-step baseline, discount 0.99)"
    echo
    echo "$QHEAD"
    echo "$QRULE"
    for f in "$DATA"/doppler/*.txt; do "${PIN[@]}" build/learn_bench quality "$f" --seeds 10 --step-bl -1 --gamma 0.99 || status=1; done
    echo
    echo "### The same with --rollouts 8 --lr-sim 2e-3 (8 episodes per update, leave-one-out baseline)"
    echo
    echo "$QHEAD"
    echo "$QRULE"
    for f in "$DATA"/doppler/*.txt; do "${PIN[@]}" build/learn_bench quality "$f" --seeds 5 --rollouts 8 --lr-sim 2e-3 || status=1; done
    echo
    echo "### The same in PRIORITY order (doppler trained and run in SEL's order; the heuristics and anneal in b-level order)"
    echo
    echo "$QHEAD"
    echo "$QRULE"
    for f in "$DATA"/doppler/*.txt; do "${PIN[@]}" build/learn_bench quality "$f" --seeds 5 --order priority || status=1; done
    echo
    echo "### Placeto per-episode time (4 devices, one core; reference Placeto: ChainMM 3.72 s train, FFNN 9.24, Llama-block 9.40)"
    echo
    echo "| graph | ops | devices | ms / REINFORCE episode (a sweep: embedding, head, backward and a simulation per step) | ms / greedy inference | peak RSS MiB |"
    echo "|---|---:|---:|---:|---:|---:|"
    for f in "$DATA"/doppler/*.txt; do "${PIN[@]}" build/learn_bench timing "$f" --algo placeto --episodes 100 || status=1; done
    echo
    echo "### Placeto quality after sim 2000 episodes from cp (4 devices, FIFO), makespan / lower bound, seed 1"
    echo
    echo "$QHEAD" | sed 's/doppler/placeto/g; s/policy <=/placeto <=/'
    echo "$QRULE"
    for f in "$DATA"/doppler/*.txt; do "${PIN[@]}" build/learn_bench quality "$f" --algo placeto --sim 2000 || status=1; done
else
    echo "skipped: $DATA/doppler not found"
fi
echo
if [ -d "$DATA/stg" ]; then
    echo "### Generalisation: train on STG 50 rand0000-0059, place rand0060-0089 unseen; makespan / proven optimum, mean (worst) [at optimum]"
    echo
    echo "| learned placer | processors | training | learned placer | heft | cp |"
    echo "|---|---:|---|---|---|---|"
    "${PIN[@]}" build/learn_bench general "$DATA/stg" --procs 4 --il 1000 --sim 2000 || status=1
    "${PIN[@]}" build/learn_bench general "$DATA/stg" --procs 4 --sim 2000 --algo placeto || status=1
else
    echo "skipped: $DATA/stg not found"
fi
echo
echo "### The pretrained policy (policies/doppler_family.dpl)"
echo
bench/pretrained.sh || status=1
if [ -d "$DATA/doppler" ]; then
    echo
    echo "### Per-graph training from the pretrained policy: sim 2000 episodes, no il, ten seeds (4 devices, FIFO), makespan / lower bound"
    echo
    echo "$QHEAD"
    echo "$QRULE"
    for f in "$DATA"/doppler/*.txt; do "${PIN[@]}" build/learn_bench quality "$f" --seeds 10 --il 0 --sim 2000 --init policies/doppler_family.dpl || status=1; done
fi
echo
echo "## 5. CPU executor (2 devices = 2 compute threads + 2 copy threads)"
echo
echo "### Dispatch overhead (zero-cost ops)"
echo
build/exec_bench overhead || status=1
echo
echo "### Wall time against the simulator's prediction, opaque graphs (ops are busy kernels of their modelled time; no calibration needed)"
echo
sim_graphs=(graphs/heft_example.dpg graphs/layered_*.dpg graphs/random_*.dpg)
[ -d "$DATA/doppler" ] && sim_graphs+=("$DATA"/doppler/*.txt)
build/exec_bench simreal "${sim_graphs[@]}" --devices 2 --reps 3 || status=1
echo
echo "### DOPPLER trained with stage III on the executor, measured against the heuristics (2 devices; wall ms, the median of 3 interleaved rounds of 7 runs, the simulator's prediction in brackets)"
echo
echo "| graph | devices | episodes il + sim + real (training time) | doppler | cp | heft | enumopt |"
echo "|---|---:|---|---:|---:|---:|---:|"
for f in graphs/heft_example.dpg graphs/layered_*.dpg graphs/random_*.dpg graphs/chainmm_*.dpg graphs/ffnn_*.dpg graphs/llama_*.dpg; do
    build/exec_bench realtrain "$f" --devices 2 || status=1
done
echo
echo "### Real-op workloads against the calibrated simulator (2 devices; 3 rounds of calibrate + run)"
echo
build/exec_bench workloads --devices 2 --rounds 3 --reps 3 || status=1
echo
echo "## 6. CUDA executor"
echo
if [ -x build/doppler_cuda_probe ] && build/doppler_cuda_probe | grep -q '^[0-9]* CUDA device'; then
    build/doppler_cuda_probe
    echo
    echo "### Dispatch overhead (zero-cost ops: one block hashing nothing)"
    echo
    build/exec_bench overhead --backend cuda || status=1
    echo
    echo "### Opaque graphs: wall time against the simulator's prediction (2 logical devices)"
    echo
    build/exec_bench simreal "${sim_graphs[@]}" --devices 2 --reps 3 --backend cuda || status=1
    echo
    echo "### Real-op workloads on 1, 2 and 4 logical devices against the GPU-calibrated simulator"
    echo
    build/exec_bench gpu || status=1
else
    echo "skipped: no GPU (or a build without nvcc): $(build/doppler_cuda_probe 2>&1 | head -n 1)"
fi
echo
echo "## 8. ONNX import (demos/onnx2dpg.py)"
echo
bench/onnx_bench.sh || status=1
exit $status
