#!/usr/bin/env bash
# bench/memory.sh - placement within device memory (bench/RESULTS.md, part 9).
#
# Memory-bound workloads: 'doppler gen ... --weights' (the weight matrices
# are resident weights, float32) at sizes whose weights exceed one device:
# a Llama-style stack, two GPT-style decoder stacks, a wide FFNN, a chain
# of matrix products and one wide Llama block, on 2, 4 and 8 GPU-like
# devices (speed 2e14 FLOP/s, links 2e11 B/s and 10 us, the orders of an
# NVLink node) each holding S / K bytes: S is the memory the whole graph
# needs on one device (the weights and every output, as the placers count
# it; at these small batches mostly the weights), K 1.5 on 2 devices, 2.5
# on 4, 3 on 8 (1.5x to 3x smaller than the model). Each method (pipeline,
# cp, heft, anneal at its default budget, doppler zero-shot: the
# pretrained policy, greedy + 64 samples) places each; each answer is
# simulated again with its memory checked ('sim' refuses a placement over
# memory; a row would say OVER MEMORY). Cells: makespan / lower bound and
# the placer's seconds, or 'infeasible'; '*' marks the best single
# device's fallback, '^' pipeline's (every placement of the policy met a
# memory dead end). The summary: doppler at or below min(pipeline, cp,
# heft), its mean ratio to anneal, its time against anneal's. From the
# repository root after ./build.sh; about 30 s.
#
#     bench/memory.sh [SEED]        (POLICY=P.dpl: that policy for doppler)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
SEED=${1:-1}
D=build/doppler
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PIN=()
command -v taskset >/dev/null 2>&1 && PIN=(taskset -c 0)
gen() { "$D" gen "$@" --weights >/dev/null || exit 1; }
gen llama-layer --parts 2 --dim 4096 --layers 4 --batch 128 -o "$dir/llama_layer_d4096_l4.dpg"
gen gpt --parts 2 --dim 1024 --layers 6 --batch 128 -o "$dir/gpt_d1024_l6.dpg"
gen gpt --parts 3 --dim 1536 --layers 4 --batch 96 -o "$dir/gpt_d1536_l4_p3.dpg"
gen ffnn --parts 4 --dim 8192 --layers 4 --batch 128 -o "$dir/ffnn_d8192_l4.dpg"
gen chainmm --parts 2 --dim 8192 --layers 3 -o "$dir/chainmm_d8192_l3.dpg"
gen llama-block --parts 4 --dim 8192 --batch 128 -o "$dir/llama_block_d8192.dpg"

methods="pipeline cp heft anneal doppler"
echo "| graph | weights | all on one device | devices | memory each | $(echo $methods | sed 's/ / | /g') |"
echo "|---|---|---|---|---|$(for m in $methods; do printf -- '---|'; done)"
summary=$dir/summary
: >"$summary"
for g in "$dir"/*.dpg; do
    name=$(basename "$g" .dpg)
    W=$("$D" info "$g" | awk '$1 == "resident" { print $2 }')
    # S: everything on one device (dp_static_memory: the weights, every
    # output held to the end); the devices hold S / K each
    S=$(awk '$1 == "op" || $1 == "weight" { for (i = 3; i <= NF; i++) if ($i ~ /^(bytes|mem|resident)=/) { split($i, kv, "="); s += kv[2] } } END { printf "%.17g", s }' "$g")
    for nd in 2 4 8; do
        case $nd in 2) K=1.5 ;; 4) K=2.5 ;; 8) K=3 ;; esac
        mem=$(awk -v w="$S" -v k="$K" 'BEGIN { printf "%.6g", w / k }')
        c=$dir/c$nd.dpc
        printf 'doppler-cluster 1\ndevices %d\nspeed 2e14\nbandwidth 2e11\nlatency 1e-5\nmemory %s\n' "$nd" "$mem" >"$c"
        row="| $name | $(awk -v w="$W" 'BEGIN { printf "%.3g GB", w / 1e9 }') | $(awk -v w="$S" 'BEGIN { printf "%.3g GB", w / 1e9 }') | $nd | $(awk -v m="$mem" 'BEGIN { printf "%.3g GB", m / 1e9 }') |"
        line="$name $nd"
        for m in $methods; do
            a=$dir/a.assign
            extra=()
            [ "$m" = doppler ] && extra=(--samples 64 ${POLICY:+--policy "$POLICY"})
            if out=$("${PIN[@]}" "$D" place "$g" --method "$m" --cluster "$c" --seed "$SEED" "${extra[@]}" --json -o "$a" 2>"$dir/err"); then
                ms=$(echo "$out" | sed -n 's/.*"makespan": *\([0-9.eE+-]*\).*/\1/p' | head -1)
                lb=$(echo "$out" | sed -n 's/.*"lower_bound": *\([0-9.eE+-]*\).*/\1/p' | head -1)
                sec=$(echo "$out" | sed -n 's/.*"seconds": *\([0-9.eE+-]*\).*/\1/p' | head -1)
                fb=
                echo "$out" | grep -q '"fallback": *"single"' && fb='*'
                echo "$out" | grep -q '"fallback": *"pipeline"' && fb='^'
                if "$D" sim "$g" --cluster "$c" --assign "$a" >/dev/null 2>"$dir/simerr"; then ok=; else ok=' OVER MEMORY'; fi
                r=$(awk -v a="$ms" -v b="$lb" 'BEGIN { printf "%.3f", a / b }')
                row="$row $r$fb ($(awk -v s="$sec" 'BEGIN { printf "%.2g", s }') s)$ok |"
                line="$line $m=$r:$sec"
            else
                row="$row infeasible |"
                line="$line $m=1e300:0"
            fi
        done
        echo "$row"
        echo "$line" >>"$summary"
    done
done
echo
awk '{
    for (i = 3; i <= NF; i++) { split($i, kv, "="); split(kv[2], rs, ":"); r[kv[1]] = rs[1] + 0; s[kv[1]] = rs[2] + 0 }
    h = r["pipeline"]; if (r["cp"] < h) h = r["cp"]; if (r["heft"] < h) h = r["heft"]
    n++
    if (r["doppler"] < 1e299 && r["doppler"] <= h * (1 + 1e-9)) beat++
    if (r["doppler"] < 1e299 && r["anneal"] < 1e299) { na++; rel += r["doppler"] / r["anneal"] - 1; ts += s["doppler"]; ta += s["anneal"] }
    for (m in r) if (r[m] >= 1e299) bad[m]++
} END {
    frac = (ta > 0) ? ts / ta : 0
    mean = (na > 0) ? 100 * rel / na : 0
    printf "doppler zero-shot at or below min(pipeline, cp, heft): %d of %d (%.0f%%); against anneal: %+.1f%% on average (%d placements), in %.3f of its time (%.1f s against %.1f s)\n", beat, n, 100 * beat / n, mean, na, frac, ts, ta
    for (m in bad) printf "infeasible: %s %d\n", m, bad[m]
}' "$summary"
