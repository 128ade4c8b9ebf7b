#!/usr/bin/env bash
# bench/gpu_stage3.sh - DOPPLER's stage III on the CUDA executor against the
# heuristics, every placement measured on the GPU (bench/RESULTS.md part 6).
# For each shipped dim-256 workload on 2 logical devices of a calibrated
# cluster: cp, heft and anneal; then, for seeds 1-3, a policy trained with
# il 500 + sim 2000 and one trained with il 500 + sim 2000 + real 300 on the
# GPU (the same seed: the same first two stages). Prints one line per
# placement: graph, seed (- for a heuristic), method, measured median wall
# (s, 9 runs), the simulator's prediction (s), training seconds.
#
#     bench/gpu_stage3.sh [DOPPLER]      # DOPPLER: the CLI (default build/doppler)
#     BACKEND=cpu bench/gpu_stage3.sh    # the same on the CPU executor
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:-build/doppler}
B=${BACKEND:-cuda}   # BACKEND=cpu: the same on the CPU executor
# DISPATCH: how the CUDA executor issues the ops (exec --dispatch), for the
# measurements and for stage III alike; default graph (the CPU: dynamic)
X=${DISPATCH:-graph}
[ "$B" = cpu ] && X=dynamic
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
C=$dir/gpu2.dpc
"$D" calibrate --backend $B --devices 2 -o "$C"
wall() {   # GRAPH ASSIGN: "median predicted"
    "$D" exec "$1" --assign "$2" --cluster "$C" --backend $B --dispatch $X --reps 9 --json --no-verify |
        sed 's/.*"wall_median": \([0-9.e-]*\).*"predicted": \([0-9.e-]*\).*/\1 \2/'
}
for g in chainmm ffnn llama_block llama_layer; do
    G=graphs/${g}_256_p2.dpg
    for m in cp heft anneal; do
        "$D" place "$G" --method $m --cluster "$C" -o "$dir/a.assign" >/dev/null
        echo "$g - $m $(wall "$G" "$dir/a.assign")"
    done
    for s in 1 2 3; do
        for st in "il,sim 500,2000" "il,sim,real 500,2000,300 --backend $B --dispatch $X"; do
            set -- $st
            t0=$(date +%s.%N)
            "$D" train "$G" --cluster "$C" --stages $1 --episodes $2 ${3:+$3 $4 $5 $6} --seed $s -o "$dir/p.dpl" >/dev/null
            t1=$(date +%s.%N)
            "$D" place "$G" --method doppler --policy "$dir/p.dpl" --cluster "$C" -o "$dir/a.assign" >/dev/null
            echo "$g $s doppler-$1 $(wall "$G" "$dir/a.assign") $(awk "BEGIN { print $t1 - $t0 }")"
        done
    done
done
