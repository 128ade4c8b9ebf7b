#!/usr/bin/env bash
# bench/pretrained.sh - the pretrained policy (policies/doppler_family.dpl):
# remade by policies/make_family.sh and compared byte for byte with the
# shipped file, then placed zero-shot (greedy + 64 samples, no training) on
# graphs that are not in its training family: other sizes, block counts,
# widths, seeds and communication ratios of the same generators, and the
# three DOPPLER reference graphs, on 2, 4 and 8 devices, against cp, heft
# and anneal at its default budget (build/learn_bench zeroshot; seed 1, then
# the mean over seeds 1-10 of the policy's samples and anneal); then the
# same placements polished by local search (one pass, and up to 100: place
# --polish) against anneal given as many simulations; last, anneal at its
# default budget started from the policy's placement against from cp's.
# Run from the repository root after ./build.sh bench; DP_DATA as run.sh.
#
#     bench/pretrained.sh --seeds "1 2 3"
#
# instead remakes the policy with each of those training seeds
# (bench/family_sweep.sh "--seed S"... on these zero-shot graphs; JOBS as
# there) and prints each one's zero-shot summary line, without polish: how
# much the seed alone moves the targets (bench/RESULTS.md part 4).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DATA=${DP_DATA:-../shared/data}
status=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PIN=()
command -v taskset >/dev/null 2>&1 && PIN=(taskset -c 0)
SEEDS=
case "${1:-}" in
    "") ;;
    --seeds) SEEDS=${2:?--seeds needs a list}; [ -n "$SEEDS" ] || exit 2 ;;
    *) echo "usage: bench/pretrained.sh [--seeds \"S...\"]" >&2; exit 2 ;;
esac

# the unseen graphs (none of them in make_family.sh)
gen() { build/doppler gen "$@" >/dev/null || status=1; }
gen chainmm --parts 4 --dim 512 --layers 2 -o "$dir/chainmm_p4_l2.dpg"
gen ffnn --parts 3 --layers 4 --dim 384 --batch 96 -o "$dir/ffnn_p3_l4.dpg"
gen llama-block --parts 3 --dim 768 -o "$dir/llama_block_p3_d768.dpg"
gen llama-layer --parts 2 --layers 2 --dim 384 -o "$dir/llama_layer_p2_d384.dpg"
gen layered --nodes 80 --ccr 2 --seed 31 -o "$dir/layered_80.dpg"
gen random --nodes 180 --ccr 1 --seed 32 -o "$dir/random_180.dpg"
gen random --nodes 100 --ccr 0.5 --seed 33 -o "$dir/random_100.dpg"
graphs=("$dir"/*.dpg)
[ -d "$DATA/doppler" ] && graphs+=("$DATA"/doppler/*.txt)
if [ -n "$SEEDS" ]; then
    # the reference graphs join the generated ones in the folder the sweep places
    for f in "${graphs[@]}"; do [ -e "$dir/$(basename "$f")" ] || ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$dir/"; done
    variants=()
    for s in $SEEDS; do variants+=("--seed $s"); done
    SWEEP_GRAPHS=$dir bench/family_sweep.sh "${variants[@]}" || status=1
    exit $status
fi
echo "#### Remaking it"
echo
t0=$(date +%s.%N)
if policies/make_family.sh build/doppler "$dir/family.dpl" >"$dir/train.log" 2>&1; then
    t1=$(date +%s.%N)
    printf 'policies/make_family.sh: %s, %s s wall; ' "$(grep -m1 '^trained' "$dir/train.log")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }')"
    if cmp -s "$dir/family.dpl" policies/doppler_family.dpl; then
        echo "byte for byte the shipped policies/doppler_family.dpl ($(wc -c <policies/doppler_family.dpl) bytes)."
    else
        echo "NOT the shipped file (another compiler or machine: the floating-point sums differ)."
    fi
else
    echo "policies/make_family.sh failed:"; tail -3 "$dir/train.log"; status=1
fi

echo
echo "#### Zero-shot on unseen graphs, makespan / lower bound (one core; seconds per placement)"
echo
"${PIN[@]}" build/learn_bench zeroshot policies/doppler_family.dpl --devices 2,4,8 --samples 64 --polish 1 --seeds 10 "${graphs[@]}" || status=1
echo
echo "#### The same, polished until no move gains (at most 100 passes): the summary"
echo
"${PIN[@]}" build/learn_bench zeroshot policies/doppler_family.dpl --devices 2,4,8 --samples 64 --polish 100 "${graphs[@]}" | tail -n 1 || status=1
echo
echo "#### anneal (default budget, seeds 1-3) started from the policy's placement against from cp's"
echo
# place --method doppler --out P, then place --method anneal --start P
n=0; sum_cp=0; sum_pol=0; better=0; worse=0
for f in "${graphs[@]}"; do
    for d in 2 4 8; do
        build/doppler place "$f" --method doppler --devices "$d" --out "$dir/p.assign" >/dev/null || { status=1; continue; }
        for s in 1 2 3; do
            a=$("${PIN[@]}" build/doppler place "$f" --method anneal --devices "$d" --seed "$s" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
            b=$("${PIN[@]}" build/doppler place "$f" --method anneal --devices "$d" --seed "$s" --start "$dir/p.assign" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
            if [ -z "$a" ] || [ -z "$b" ]; then status=1; continue; fi
            n=$((n + 1))
            sum_cp=$(awk -v x="$sum_cp" -v y="$a" 'BEGIN { print x + y }')
            sum_pol=$(awk -v x="$sum_pol" -v y="$b" 'BEGIN { print x + y }')
            awk -v x="$b" -v y="$a" 'BEGIN { exit !(x + 0 < y + 0) }' && better=$((better + 1))
            awk -v x="$b" -v y="$a" 'BEGIN { exit !(x + 0 > y + 0) }' && worse=$((worse + 1))
        done
    done
done
[ "$n" -gt 0 ] && awk -v n="$n" -v a="$sum_cp" -v b="$sum_pol" -v w="$better" -v l="$worse" \
    'BEGIN { printf "%d runs: from cp %.4f, from the policy %.4f (mean makespan / lower bound); better %d, worse %d, tied %d\n", n, a / n, b / n, w, l, n - w - l }'
exit $status
