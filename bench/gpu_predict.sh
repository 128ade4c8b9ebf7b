#!/usr/bin/env bash
# bench/gpu_predict.sh - does the calibrated simulator predict the CUDA
# executor? (bench/RESULTS.md part 6; issue 41's target: median |error| at
# most 10%, worst at most 25%.)
#
# For dim D in DIMS (default "256 1024") and N logical devices in DEVICES
# (default "1 2 4", sharing one GPU: partitions where the driver has green
# contexts): a cluster from `calibrate --backend cuda --devices N --dispatch
# X`, then chainmm, ffnn, llama-block and llama-layer (P = 2) placed by
# single, round-robin, cp, heft, anneal and doppler (the shipped policy,
# zero-shot; on one device only single), each run REPS times (median) under
# dispatch X (default graph). One markdown row per run: the measured wall
# and the prediction, ms, and the error (wall / predicted - 1); then the
# median and the worst |error|, overall and per device count.
#
#     DP_NVCC_ARCH=sm_90 ./build.sh && bench/gpu_predict.sh [DOPPLER]
#     DIMS=256 DEVICES="2 4" DISPATCH=static bench/gpu_predict.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
D=${1:-build/doppler}
DIMS=${DIMS:-256 1024}
DEVICES=${DEVICES:-1 2 4}
X=${DISPATCH:-graph}
REPS=${REPS:-9}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
rows=$dir/rows
: >"$rows"
echo "| dim | logical devices | workload | placement | wall (ms) | predicted (ms) | error |"
echo "|---:|---:|---|---|---:|---:|---:|"
for n in $DEVICES; do
    C=$dir/c$n.dpc
    if ! "$D" calibrate --backend cuda --devices "$n" --dispatch "$X" -o "$C" >"$dir/cal.txt" 2>&1; then
        echo "calibrate --devices $n failed: $(tail -1 "$dir/cal.txt")"
        continue
    fi
    for dim in $DIMS; do
        for w in chainmm ffnn llama-block llama-layer; do
            G=$dir/${w}_$dim.dpg
            [ -f "$G" ] || "$D" gen "$w" --dim "$dim" --parts 2 -o "$G" >/dev/null || continue
            for m in single round-robin cp heft anneal doppler; do
                [ "$n" = 1 ] && [ "$m" != single ] && continue
                "$D" place "$G" --method "$m" --cluster "$C" -o "$dir/a.assign" >/dev/null 2>&1 || { echo "| $dim | $n | $w | $m | place failed | | |"; continue; }
                line=$("$D" exec "$G" --assign "$dir/a.assign" --cluster "$C" --backend cuda --dispatch "$X" --reps "$REPS" --json --no-verify 2>/dev/null)
                wall=$(printf '%s' "$line" | sed -n 's/.*"wall_median": \([0-9.e+-]*\).*/\1/p')
                pred=$(printf '%s' "$line" | sed -n 's/.*"predicted": \([0-9.e+-]*\).*/\1/p')
                if [ -z "$wall" ] || [ -z "$pred" ]; then echo "| $dim | $n | $w | $m | exec failed | | |"; continue; fi
                awk -v d="$dim" -v n="$n" -v w="$w" -v m="$m" -v a="$wall" -v p="$pred" 'BEGIN {
                    e = a / p - 1; printf "| %s | %s | %s | %s | %.3f | %.3f | %+.1f%% |\n", d, n, w, m, a * 1e3, p * 1e3, 100 * e }'
                awk -v n="$n" -v a="$wall" -v p="$pred" 'BEGIN { e = a / p - 1; if (e < 0) e = -e; print n, e }' >>"$rows"
            done
        done
    done
done
summary() {   # LABEL FILTER
    awk -v f="$2" '$1 == f || f == "all" { print $2 }' "$rows" | sort -g | awk -v l="$1" '{ v[NR] = $1 } END {
        if (NR == 0) { print l ": no runs"; exit }
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%s: %d runs, median |error| %.1f%%, worst %.1f%%\n", l, NR, 100 * m, 100 * v[NR] }'
}
echo
summary "all ($X dispatch)" all
for n in $DEVICES; do summary "$n logical device(s)" "$n"; done
