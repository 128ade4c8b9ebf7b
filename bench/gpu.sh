#!/usr/bin/env bash
# bench/gpu.sh - the CUDA executor against the user's alternative on the
# same GPU, in one run (bench/RESULTS.md, part 6). Prints markdown.
#
#   1. the machine: GPU, driver, CUDA
#   2. matmul TFLOP/s at 1024^3 and 4096^3 per precision (exec_bench matmul);
#      then the A/B of the two tensor-core kernels (1 dp__k_mma, 2
#      dp__k_mma2, the default) at 1024..8192 (the loser is to be deleted)
#   3. the memory-bound kernels on 16-256 MB tensors against the executor's
#      own device-to-device copy (exec_bench kernels, graph dispatch)
#      and the A/B of the two row kernels (softmax, rmsnorm, layernorm: 1 a
#      warp per row, 2 a block per long row, the default) against a copy
#      (exec_bench rows; the loser is to be deleted)
#   4. dispatch: us per op under dynamic, static and graph (exec_bench overhead)
#   5. whole workloads: chainmm (3 products) and ffnn (3 layers) at dim 4096
#      (batch 4096) on one logical device, per precision; at dim 256 the best
#      of single, cp, heft and anneal on 1, 2 and 4 logical devices of a
#      cluster calibrated under graph dispatch (graphs/*_256_p2.dpg), and
#      the same workloads unpartitioned (P = 1, as torch runs them) on one
#      logical device
#   6. logical devices as partitions of the GPU (exec on 4 logical devices:
#      sharing, wall against prediction)
#   7. PyTorch on the same GPU (bench/torch_gpu.py; skipped with its reason
#      where torch or the GPU is missing)
#   8. without --quick: the calibrated simulator against the executor
#      (bench/gpu_predict.sh, dims 256 and 1024) and stage III on the GPU
#      (bench/gpu_stage3.sh); bench/gpu_check.sh runs these as sections of
#      their own
#
#     DP_NVCC_ARCH=sm_90 ./build.sh && bench/gpu.sh [--quick]
#
# Each section has a time limit (LIMIT seconds, default 240) so that one
# stuck step cannot use up a lent machine's time; a section that fails says
# so and the next one runs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
D=${D:-build/doppler}     # D, EB: the programs (a GPU build elsewhere)
EB=${EB:-build/exec_bench}
LIMIT=${LIMIT:-240}
QUICK=
[ "${1:-}" = --quick ] && QUICK=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
py=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' 2>/dev/null; then py=$p; break; fi
done
section() { echo; echo "### $*"; echo; }
run() { timeout "$LIMIT" "$@" || echo "(failed or timed out: rc $? for: $*)"; }

section "Machine"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
else
    echo "no nvidia-smi"
fi
nvcc --version 2>/dev/null | tail -2 | head -1
[ -n "$py" ] && "$py" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)'
git log -1 --format='main at %h (%cd)' --date=short 2>/dev/null

section "Matmul (TFLOP/s)"
run "$EB" matmul --backend cuda --precision fp32,tf32,bf16 --sizes 1024,4096

section "Matmul: the two tensor-core kernels (A/B)"
run "$EB" matmul --backend cuda --precision tf32,bf16 --sizes ${QUICK:+1024,4096}${QUICK:-1024,2048,4096,8192} --mm-kernel 1,2

section "Memory-bound kernels (graph dispatch, one logical device)"
run "$EB" kernels --backend cuda --dispatch graph --sizes ${QUICK:+2048}${QUICK:-2048,4096,8192} --reps 5

section "Row kernels: a warp per row (1) against a block per long row (2), A/B"
run "$EB" rows --backend cuda --sizes ${QUICK:+4096,8192}${QUICK:-2048,4096,8192} --rows-kernel 1,2

section "Dispatch (us per op)"
for x in dynamic static graph; do
    run "$EB" overhead --backend cuda --dispatch $x
done

section "Workloads"
wall() {   # GRAPH ASSIGN CLUSTER PRECISION: the median wall (s) of 9 runs under graph dispatch
    timeout "$LIMIT" "$D" exec "$1" --assign "$2" --cluster "$3" --backend cuda --dispatch graph --precision "$4" --reps 9 --json --no-verify |
        sed -n 's/.*"wall_median": \([0-9.e+-]*\).*/\1/p'
}
row() {    # LABEL PRECISION DEVICES METHOD GRAPH CLUSTER: a table row, $dir/a.assign's wall (ms)
    echo "| $1 | $2 | $3 | $4 | $(awk "BEGIN { printf \"%.3f\", $(wall "$5" "$dir/a.assign" "$6" "$2") * 1e3 }") |"
}
echo "| workload | precision | logical devices | placement | wall (ms) |"
echo "|---|---|---:|---|---:|"
"$D" calibrate --backend cuda --devices 1 --dispatch graph -o "$dir/c1.dpc" >/dev/null 2>&1
"$D" gen chainmm --parts 1 --dim 4096 -o "$dir/chainmm_4096.dpg"
"$D" gen ffnn --parts 1 --dim 4096 --batch 4096 -o "$dir/ffnn_4096.dpg"
for w in chainmm ffnn; do
    "$D" place "$dir/${w}_4096.dpg" --method single --cluster "$dir/c1.dpc" -o "$dir/a.assign" >/dev/null
    for p in fp32 tf32 bf16; do
        row "${w} dim 4096" $p 1 single "$dir/${w}_4096.dpg" "$dir/c1.dpc"
    done
done
# dim 256 also unpartitioned (P = 1), as torch runs it: fewer, larger ops
"$D" gen chainmm --parts 1 --dim 256 --layers 3 -o "$dir/chainmm_256_p1.dpg" >/dev/null
"$D" gen ffnn --parts 1 --dim 256 --batch 64 --layers 3 -o "$dir/ffnn_256_p1.dpg" >/dev/null
for w in chainmm ffnn; do
    "$D" place "$dir/${w}_256_p1.dpg" --method single --cluster "$dir/c1.dpc" -o "$dir/a.assign" >/dev/null
    row "${w} dim 256, P = 1" tf32 1 single "$dir/${w}_256_p1.dpg" "$dir/c1.dpc"
done
for n in 1 2 4; do
    "$D" calibrate --backend cuda --devices $n --dispatch graph -o "$dir/c$n.dpc" >/dev/null 2>&1 || { echo "calibrate $n failed"; continue; }
    for w in chainmm ffnn; do
        G=graphs/${w}_256_p2.dpg
        for m in single cp heft anneal; do
            [ $n = 1 ] && [ $m != single ] && continue
            "$D" place "$G" --method $m --cluster "$dir/c$n.dpc" -o "$dir/a.assign" >/dev/null
            row "${w} dim 256" tf32 $n $m "$G" "$dir/c$n.dpc"
        done
    done
done

section "Logical devices on one GPU"
G=graphs/llama_block_256_p2.dpg
if [ -f "$dir/c4.dpc" ]; then
    "$D" place "$G" --method cp --cluster "$dir/c4.dpc" -o "$dir/a.assign" >/dev/null
    run "$D" exec "$G" --assign "$dir/a.assign" --cluster "$dir/c4.dpc" --backend cuda --dispatch graph --reps 9
    echo
    echo "The same four logical devices as a 4-GPU node over PCIe: the calibrated cluster with every link 25 GB/s and 10 us (paced on the GPU):"
    sed -E 's/^(pair [0-9]+ [0-9]+) .*/\1 bandwidth=2.5e10 latency=1e-05/' "$dir/c4.dpc" >"$dir/pcie4.dpc"
    "$D" place "$G" --method cp --cluster "$dir/pcie4.dpc" -o "$dir/a.assign" >/dev/null
    run "$D" exec "$G" --assign "$dir/a.assign" --cluster "$dir/pcie4.dpc" --backend cuda --dispatch graph --reps 9
fi

section "PyTorch on the same GPU"
if [ -n "$py" ]; then
    run "$py" bench/torch_gpu.py ${QUICK:+--quick}
else
    echo "skipped: no python3 with torch"
fi

# the tables of part 6 that have scripts of their own: bench/gpu_check.sh
# runs those as sections of their own after gpu.sh --quick
if [ -z "$QUICK" ]; then
    section "The calibrated simulator against the executor (graph dispatch, 1, 2 and 4 logical devices)"
    LIMIT=$((2 * LIMIT)) REPS=5 run bench/gpu_predict.sh "$D"
    section "Stage III on the GPU against the heuristics (4 logical devices over PCIe-like links)"
    LIMIT=$((2 * LIMIT)) ROUNDS=1 run bench/gpu_stage3.sh "$D"
fi
