#!/usr/bin/env bash
# bench/family_sweep.sh - variants of the pretrained policy's recipe
# (policies/make_family.sh) judged on validation graphs that are neither in
# its family nor in bench/pretrained.sh's zero-shot set: 8 generated graphs
# x 2, 4, 8 devices, greedy + 64 samples (build/learn_bench zeroshot). One
# line per variant: its train options, then the summary line (at or below
# min(cp, heft), mean and worst against anneal). bench/RESULTS.md part 4
# ("The pretrained policy") chose the embedding's width with
#
#     JOBS=2 bench/family_sweep.sh "--seed "{1..8}" --hidden 32" "--seed "{1..8}" --hidden 16" \
#         "--seed "{1..8}" --hidden 8" "--seed "{1..8}" --hidden 4" "--seed "{1..4}" --hidden 24"
#
# and earlier (hidden 32, 16 cores) swept seeds, --lr, --anchor, --entropy,
# --layers and --rollouts the same way.
#
# VARIANT: train options appended to the recipe's (the last value of an
# option wins). JOBS: variants trained at once (default 1). SWEEP_GRAPHS: a
# folder whose .dpg and .txt graphs are placed instead of the validation
# graphs (bench/pretrained.sh --seeds: its zero-shot graphs). SWEEP_COMM=1:
# instead, the four validation workloads timed on faster devices (their
# units line's speed 1e11 and 1e12 FLOP/s instead of 1e9, links alike), so
# that transfers weigh as on GPUs: a mean transfer over a mean op (CCR)
# of 0.3-0.6 and 2.8-5.6 instead of 0.005; SWEEP_COMM="S..." at the speeds
# listed (1e13: CCR 28-56). FAMILY_EPISODES (read by
# policies/make_family.sh) changes the stages' episodes: "4000,1" is
# stage il alone; FAMILY_INSERTION set empty drops --insertion. Run from the repository root after ./build.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || { echo "usage: bench/family_sweep.sh VARIANT..." >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gen() { build/doppler gen "$@" >/dev/null || exit 1; }
if [ -n "${SWEEP_GRAPHS:-}" ]; then
    shopt -s nullglob
    graphs=("$SWEEP_GRAPHS"/*.dpg "$SWEEP_GRAPHS"/*.txt)
    [ ${#graphs[@]} -gt 0 ] || { echo "bench/family_sweep.sh: no .dpg or .txt graph in $SWEEP_GRAPHS" >&2; exit 2; }
else
mkdir "$dir/val"
gen chainmm --parts 3 --dim 384 --layers 3 -o "$dir/val/chainmm_p3_l3.dpg"
gen ffnn --parts 2 --layers 3 --dim 256 --batch 128 -o "$dir/val/ffnn_p2_l3.dpg"
gen llama-block --parts 4 --dim 512 -o "$dir/val/llama_block_p4_d512.dpg"
gen llama-layer --parts 3 --layers 2 --dim 384 -o "$dir/val/llama_layer_p3.dpg"
gen layered --nodes 120 --ccr 1.5 --seed 41 -o "$dir/val/layered_120.dpg"
gen random --nodes 140 --ccr 2 --seed 42 -o "$dir/val/random_140.dpg"
gen layered --nodes 60 --ccr 0.5 --seed 43 -o "$dir/val/layered_60.dpg"
gen random --nodes 80 --ccr 3 --seed 44 -o "$dir/val/random_80.dpg"
graphs=("$dir"/val/*.dpg)
if [ "${SWEEP_COMM:-0}" != 0 ]; then
    speeds=$SWEEP_COMM
    [ "$speeds" = 1 ] && speeds="1e11 1e12"
    mkdir "$dir/comm"
    for f in "$dir"/val/chainmm_* "$dir"/val/ffnn_* "$dir"/val/llama_*; do
        for s in $speeds; do
            sed "s/^units speed=1000000000 /units speed=$s /" "$f" >"$dir/comm/$(basename "$f" .dpg)_s$s.dpg"
        done
    done
    graphs=("$dir"/comm/*.dpg)
fi
fi
one() {   # INDEX VARIANT
    FAMILY_OPTS="$2" policies/make_family.sh build/doppler "$dir/p$1.dpl" >"$dir/t$1.log" 2>&1 || { echo "$2: training failed" >"$dir/r$1"; return; }
    echo "[$2] $(build/learn_bench zeroshot "$dir/p$1.dpl" --devices 2,4,8 --samples 64 "${graphs[@]}" | tail -n 1)" >"$dir/r$1"
}
i=0
for v in "$@"; do
    one $i "$v" &
    i=$((i + 1))
    while [ "$(jobs -r | wc -l)" -ge "${JOBS:-1}" ]; do wait -n; done
done
wait
for ((k = 0; k < i; k++)); do cat "$dir/r$k"; done
