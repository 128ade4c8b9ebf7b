#!/usr/bin/env bash
# bench/gpu_stage3.sh - DOPPLER's stage III on the CUDA executor against the
# heuristics, every placement measured on the GPU (bench/RESULTS.md part 6;
# issue 41, item 4).
#
# The machine: DEVICES logical devices (default 4) of the GPU, partitions of
# its SMs where the driver has green contexts, measured by `calibrate
# --backend cuda --dispatch X`; the cluster's links then made PCIe-like:
# every pair LINK_BW bytes/s (default 25.6e9, the a100-pcie preset's: PCIe
# Gen4 x16 at 80%) after LINK_LAT s (default 1e-5), one transfer at a time
# per pair (link serial, as the GPU presets), which the executor's paced
# copies then take. So four quarters of an H200 (33 SMs each, about an
# A100's TF32) over PCIe Gen4.
#
# For each workload (WORKLOADS, default the shipped dim-256 ones): cp, heft,
# anneal, pipeline and doppler zero-shot (the pretrained policy); then for
# each seed in SEEDS (default 1 2 3): the pretrained policy trained on by
# stage sim (SIM episodes, default 2000; these run side by side, JOBS at a
# time, before anything is measured) and then by stage real on the executor
# (REAL episodes, default 300, each cost the median of TRAIN_REPS runs,
# default 3), which scores its greedy placement by a run every SELECT
# episodes (default 50), its start included, and keeps the best parameters
# (train --select), so that it cannot end worse than it started by its own
# measure. Every placement of a workload is then measured in ROUNDS rounds
# (default 3) of REPS / ROUNDS runs each (REPS default 9), the placements
# interleaved, so that drift falls on all alike: the median of its runs.
#
# Output: a line per placement as it is measured (workload, seed or -,
# method, median wall ms, the simulator's prediction ms, training s); then a
# markdown table per workload; then the closing lines (bench/gpu_check.sh
# shows the last four): the seeds at which stage real ended no worse than it
# started (it kept stage sim's placement, or its placement's wall is at most
# NOISE, default 2%, over that one's),
# and the seeds at which doppler after stage real is at or below the best
# heuristic.
#
#     bench/gpu_stage3.sh [DOPPLER]      # DOPPLER: the CLI (default build/doppler)
#     BACKEND=cpu SIM=200 REAL=20 bench/gpu_stage3.sh   # the same on the CPU executor
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:-build/doppler}
B=${BACKEND:-cuda}   # BACKEND=cpu: the same on the CPU executor
# DISPATCH: how the CUDA executor issues the ops (exec --dispatch), for the
# measurements and for stage III alike; default graph (the CPU: dynamic)
X=${DISPATCH:-graph}
[ "$B" = cpu ] && X=dynamic
N=${DEVICES:-4}
LINK_BW=${LINK_BW:-25.6e9}
LINK_LAT=${LINK_LAT:-1e-5}
WORKLOADS=${WORKLOADS:-chainmm_256_p2 ffnn_256_p2 llama_block_256_p2 llama_layer_256_p2}
SEEDS=${SEEDS:-1 2 3}
SIM=${SIM:-2000}
REAL=${REAL:-300}
TRAIN_REPS=${TRAIN_REPS:-3}
SELECT=${SELECT:-50}
REPS=${REPS:-9}
ROUNDS=${ROUNDS:-3}
NOISE=${NOISE:-0.02}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# 4 logical devices have 4 compute streams and 12 copy streams: more than
# the 8 hardware queues a process gets by default
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
per=$(( (REPS + ROUNDS - 1) / ROUNDS ))
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# the executor's options for exec and stage real
xopt=(--backend "$B")
[ "$B" = cuda ] && xopt+=(--dispatch "$X")

# the cluster: calibrated, then PCIe-like links
C=$dir/node.dpc
"$D" calibrate "${xopt[@]}" --devices "$N" -o "$dir/cal.dpc"
awk -v bw="$LINK_BW" -v lat="$LINK_LAT" '
    /^(link|pair|bandwidth|latency|internode|nodes) / { next }
    { print }
    /^devices / { print "link serial"; print "bandwidth " bw; print "latency " lat }' "$dir/cal.dpc" >"$C"
echo "cluster: $N logical devices ($B, $X dispatch), links $LINK_BW bytes/s after $LINK_LAT s, serial"

# stage sim for every workload and seed, JOBS at a time
t0=$(date +%s.%N)
for w in $WORKLOADS; do
    for s in $SEEDS; do
        (
            a=$(date +%s.%N)
            "$D" train "graphs/$w.dpg" --cluster "$C" --init pretrained --stages sim --episodes "$SIM" \
                --seed "$s" -o "$dir/$w.$s.sim.dpl" >"$dir/$w.$s.sim.log" 2>&1
            b=$(date +%s.%N)
            awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/$w.$s.sim.secs"
        ) &
        while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    done
done
wait || true
for w in $WORKLOADS; do for s in $SEEDS; do
    [ -s "$dir/$w.$s.sim.dpl" ] || { echo "stage sim failed: $w seed $s: $(tail -1 "$dir/$w.$s.sim.log")"; exit 1; }
done; done
echo "stage sim: $(echo "$WORKLOADS" | wc -w) workloads x $(echo "$SEEDS" | wc -w) seeds, $SIM episodes each, in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s"

# MEDIAN of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

summary=$dir/summary
: >"$summary"
: >"$dir/same"
for w in $WORKLOADS; do
    G=graphs/$w.dpg
    names=()
    for m in cp heft anneal pipeline doppler; do
        "$D" place "$G" --method "$m" --cluster "$C" -o "$dir/$w.$m.assign" >/dev/null
        echo 0 >"$dir/$w.$m.secs"
        names+=("$m")
    done
    for s in $SEEDS; do
        "$D" place "$G" --method doppler --policy "$dir/$w.$s.sim.dpl" --cluster "$C" -o "$dir/$w.sim$s.assign" >/dev/null
        cp "$dir/$w.$s.sim.secs" "$dir/$w.sim$s.secs"
        a=$(date +%s.%N)
        "$D" train "$G" --cluster "$C" --init "$dir/$w.$s.sim.dpl" --stages real --episodes "$REAL" --reps "$TRAIN_REPS" \
            --select "$SELECT" "${xopt[@]}" --seed "$s" -o "$dir/$w.$s.real.dpl" >"$dir/$w.$s.real.log" 2>&1 ||
            { echo "stage real failed: $w seed $s: $(tail -1 "$dir/$w.$s.real.log")"; exit 1; }
        b=$(date +%s.%N)
        "$D" place "$G" --method doppler --policy "$dir/$w.$s.real.dpl" --cluster "$C" -o "$dir/$w.real$s.assign" >/dev/null
        awk -v a="$a" -v b="$b" -v p="$(cat "$dir/$w.$s.sim.secs")" 'BEGIN { printf "%.1f\n", p + b - a }' >"$dir/$w.real$s.secs"
        cmp -s "$dir/$w.sim$s.assign" "$dir/$w.real$s.assign" && same=1 || same=0
        echo "$w $s $same" >>"$dir/same"
        names+=("sim$s" "real$s")
    done
    # every placement measured in ROUNDS interleaved rounds
    for m in "${names[@]}"; do : >"$dir/$w.$m.walls"; done
    for ((r = 0; r < ROUNDS; r++)); do
        for m in "${names[@]}"; do
            line=$("$D" exec "$G" --assign "$dir/$w.$m.assign" --cluster "$C" "${xopt[@]}" --reps "$per" --json --no-verify 2>/dev/null)
            printf '%s' "$line" | sed -n 's/.*"wall_runs": \[\([^]]*\)\].*/\1/p' | tr ',' '\n' | tr -d ' ' >>"$dir/$w.$m.walls"
            printf '%s' "$line" | sed -n 's/.*"predicted": \([0-9.e+-]*\).*/\1/p' >"$dir/$w.$m.pred"
        done
    done
    for m in "${names[@]}"; do
        wall=$(median <"$dir/$w.$m.walls")
        case $m in sim*) seed=${m#sim} label=doppler-sim ;; real*) seed=${m#real} label=doppler-real ;;
            doppler) seed=- label=doppler-zero-shot ;; *) seed=- label=$m ;; esac
        echo "$w $seed $label $wall $(cat "$dir/$w.$m.pred") $(cat "$dir/$w.$m.secs")" >>"$summary"
        awk -v w="$w" -v s="$seed" -v l="$label" -v a="$wall" -v p="$(cat "$dir/$w.$m.pred")" -v t="$(cat "$dir/$w.$m.secs")" \
            'BEGIN { printf "%s %s %s %.4f ms, predicted %.4f ms, trained %s s\n", w, s, l, a * 1e3, p * 1e3, t }'
    done
done

echo
echo "| workload | cp | heft | anneal | pipeline | doppler zero-shot | doppler + sim $SIM (seeds) | + real $REAL (seeds) |"
echo "|---|---:|---:|---:|---:|---:|---|---|"
awk '{ w[NR] = $1; s[NR] = $2; m[NR] = $3; t[NR] = $4 * 1e3 }
END {
    for (i = 1; i <= NR; i++) {
        if (!(w[i] in seen)) { seen[w[i]] = 1; order[++nw] = w[i] }
        if (s[i] == "-") v[w[i], m[i]] = sprintf("%.3f", t[i])
        else if (m[i] == "doppler-sim") sim[w[i]] = sim[w[i]] (sim[w[i]] == "" ? "" : " / ") sprintf("%.3f", t[i])
        else real[w[i]] = real[w[i]] (real[w[i]] == "" ? "" : " / ") sprintf("%.3f", t[i])
    }
    for (k = 1; k <= nw; k++) { x = order[k]
        printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", x, v[x, "cp"], v[x, "heft"], v[x, "anneal"], v[x, "pipeline"], v[x, "doppler-zero-shot"], sim[x], real[x] }
}' "$summary"
echo
echo "wall ms, the median of $((per * ROUNDS)) runs in $ROUNDS interleaved rounds; $N logical devices, $X dispatch"
awk -v noise="$NOISE" 'FILENAME ~ /same$/ { if ($3) same[$1, $2] = 1; next }
    { if ($2 == "-") { if ($3 != "doppler-zero-shot" && (!($1 in best) || $4 < best[$1])) best[$1] = $4 }
      else if ($3 == "doppler-sim") sim[$1, $2] = $4; else real[$1, $2] = $4; if ($2 != "-") seeds[$1, $2] = 1 }
END {
    for (k in seeds) { split(k, p, SUBSEP); n++
        if (k in same) { ok++; kept++ } else if (real[k] <= sim[k] * (1 + noise)) ok++
        if (real[k] <= best[p[1]]) beat++
        if (sim[k] <= best[p[1]]) beats++ }
    printf "stage real no worse than its start (its start'"'"'s placement kept, or a wall at most %g%% over it): %d of %d seeds (%d kept)\n", 100 * noise, ok, n, kept
    printf "doppler + sim at or below the best heuristic (cp, heft, anneal, pipeline): %d of %d seeds\n", beats, n
    printf "doppler + real at or below the best heuristic: %d of %d seeds\n", beat, n
}' "$dir/same" "$summary"
