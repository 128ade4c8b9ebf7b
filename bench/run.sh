#!/usr/bin/env bash
# bench/run.sh [--all] - the benchmarks behind bench/RESULTS.md, printed as
# markdown under the page's section titles. ./build.sh bench runs it (after
# building build/doppler, stg_bench, sim_bench, learn_bench and exec_bench);
# run from the repository root.
#   1. Placers on the reference graphs: every placer on the three DOPPLER
#      reference graphs, 4 devices.
#   2. STG against proven optima: every placer, mean and worst ratio to the
#      optimum per size (50, 100) and processor count (2, 4, 8, 16).
#   3. Simulator throughput: cp's assignment, one core (target: >= 100,000
#      simulations/s on ffnn_192nodes).
#      Large graphs (bench/scale.sh): read, cp, heft, one simulation, anneal
#      under a time limit, the pretrained policy with 64 samples, at 10^4,
#      10^5, 10^6 ops (chain, layered, wide random), seconds, peak memory
#      and growth exponents; the searches' moves per second with the move
#      bound and without (bench/moves.sh). About 25 minutes.
#   4. DOPPLER and Placeto learning: per-episode time; quality after il 500
#      + sim 2000 over ten seeds with the defaults, without the guards and
#      with the paper's REINFORCE; stability of long runs (il 1000 + sim
#      20000) with and without the guards; Placeto's time and quality
#      (its one-step improvement and the paper's REINFORCE);
#      generalisation on STG 50; the pretrained policy (bench/pretrained.sh)
#      and per-graph training from it (then its best placement polished).
#   5. CPU executor: dispatch overhead, opaque graphs against the simulator,
#      DOPPLER trained on the executor (stage III), real-op workloads against
#      the calibrated simulator (measure on a quiet machine).
#   6. CUDA executor: only when build/doppler_cuda_probe finds a GPU.
#   7. Hardening: bad inputs, one per class (bench/bad_inputs.sh); the rest
#      not run here (./build.sh fuzz, test, sanitize, valgrind).
#   8. ONNX import: bench/onnx_bench.sh (skipped without the onnx package).
#   9. placement within device memory: bench/memory.sh (memory-bound
#      workloads, every method within memory, against the pretrained policy).
#  10. PyTorch models: bench/torch_bench.sh (eight models converted, every
#      method on the H100 presets, the bridge's overhead; skipped without
#      torch, torchvision and onnx).
#  11. Across machines: bench/mpi.sh (the MPI executor on 2 local ranks:
#      prediction against wall time, MPI's one-way time and bandwidth;
#      skipped without mpirun or build/doppler_mpi) and bench/mpi_place.sh
#      (placement on simulated 2 x 4 and 4 x 8 clusters).
# --all also runs what the page lists only as tried and not kept or in
# summary, which the default run leaves out: the per-seed tables (quality
# --per-seed), the training diagnostics of two long runs with and without
# the guards (learn_bench diag), 8 rollouts per update, PRIORITY order, and
# stability on four generated graphs (il 1000 + sim 10000, five seeds).
# Parts 1, 2 and most of 4 need the reference data in ../shared/data
# (DP_DATA overrides); they are skipped with a message when it is absent.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ALL=0
case "${1:-}" in
    "") ;;
    --all) ALL=1 ;;
    *) echo "usage: bench/run.sh [--all]" >&2; exit 2 ;;
esac
DATA=${DP_DATA:-../shared/data}
status=0
for p in build/doppler build/stg_bench build/sim_bench build/learn_bench build/exec_bench; do
    [ -x "$p" ] || { echo "bench/run.sh: $p missing: run ./build.sh bench" >&2; exit 1; }
done
# one core for the timings where taskset exists
PIN=()
command -v taskset >/dev/null 2>&1 && PIN=(taskset -c 0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the switches that turn the guards off (the anchor and selection)
NOGUARDS=(--anchor -1 --select -1)

# improve_polish GRAPH...: per graph, the pretrained policy tuned on it for
# IMPROVE episodes (default 2000; IMPROVE_OPTS: more place options), its
# best placement polished (place --improve IMPROVE --polish 100) at seeds
# 1-SEEDS (default 10), against anneal at its default budget at the same
# seed (anneal's answer is a random draw: ffnn 1.114 to 1.242 over 1-10)
improve_polish() {
    local f s out r sum n below simsum an ansum ansims
    echo "| graph | seeds | improve + polish, mean makespan / lower bound | at or below anneal (same seed) | mean simulations | anneal (default budget), mean | anneal's simulations |"
    echo "|---|---:|---:|---|---:|---:|---:|"
    for f in "$@"; do
        sum=0; n=0; below=0; simsum=0; ansum=0; ansims=0
        for s in $(seq 1 "${SEEDS:-10}"); do
            out=$("${PIN[@]}" build/doppler place "$f" --method anneal --seed "$s") || { status=1; continue; }
            an=$(echo "$out" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
            ansims=$(echo "$out" | awk '/^simulations/ { print $2 }')
            # shellcheck disable=SC2086
            out=$("${PIN[@]}" build/doppler place "$f" --method doppler --improve "${IMPROVE:-2000}" ${IMPROVE_OPTS:-} --polish 100 --seed "$s") || { status=1; continue; }
            r=$(echo "$out" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
            simsum=$((simsum + $(echo "$out" | awk '/^simulations/ { print $2 }')))
            sum=$(awk -v a="$sum" -v b="$r" 'BEGIN { print a + b }'); ansum=$(awk -v a="$ansum" -v b="$an" 'BEGIN { print a + b }')
            n=$((n + 1))
            awk -v a="$r" -v b="$an" 'BEGIN { exit !(a + 0 <= b + 0) }' && below=$((below + 1))
        done
        [ "$n" -gt 0 ] || continue
        printf '| %s | %d | %s | %d of %d | %d | %s | %s |\n' "$(basename "$f")" "$n" \
            "$(awk -v a="$sum" -v n="$n" 'BEGIN { printf "%.3f", a / n }')" "$below" "$n" $((simsum / n)) \
            "$(awk -v a="$ansum" -v n="$n" 'BEGIN { printf "%.3f", a / n }')" "$ansims"
    done
}

echo "# doppler benchmarks"
echo
echo "$(date -u +%Y-%m-%d), $(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(${CC:-gcc} --version | head -n 1)"

echo
echo "## 1. Placers on the reference graphs"
echo
if [ -d "$DATA/doppler" ]; then
    "${PIN[@]}" build/doppler bench "$DATA"/doppler/*.txt --methods all --devices 4 --md || status=1
else
    echo "skipped: $DATA/doppler not found"
fi

echo
echo "## 2. STG against proven optima"
if [ -d "$DATA/stg" ]; then
    "${PIN[@]}" build/stg_bench --data "$DATA/stg" || status=1
else
    echo
    echo "skipped: $DATA/stg not found"
fi

echo
echo "## 3. Simulator throughput"
echo
sim_graphs=()
[ -d "$DATA/doppler" ] && sim_graphs+=("$DATA"/doppler/*.txt)
mapfile -t -O "${#sim_graphs[@]}" sim_graphs < <(printf '%s\n' graphs/*.dpg | sort -V)
"${PIN[@]}" build/sim_bench "${sim_graphs[@]}" || status=1
echo
"${PIN[@]}" bench/scale.sh --dense || status=1
echo
"${PIN[@]}" bench/moves.sh || status=1

QHEAD="| graph | lower bound | seeds | simulations | episodes to within 5% of final, training time | doppler greedy | doppler best of greedy + 64 samples | search: best found in training + sampling | cp | heft | enumopt | anneal (same simulations) | policy <= every heuristic | search <= every heuristic | policy <= anneal (same simulations) | search <= anneal (default budget, same seed; its mean) |"
QRULE="|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|"
SHEAD="| graph | devices | episodes | worse than after il | on one device | greedy after il | greedy after sim | training time |"
SRULE="|---|---:|---|---|---|---:|---:|---:|"
# quality GRAPH... -- OPTIONS: one table, a row per graph (with --all, then
# the per-seed tables of those runs)
quality() {
    local graphs=() f per=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do graphs+=("$1"); shift; done
    shift
    [ "$ALL" = 1 ] && per=(--per-seed)
    echo "$QHEAD"
    echo "$QRULE"
    : >"$tmp/perseed"
    for f in "${graphs[@]}"; do
        "${PIN[@]}" build/learn_bench quality "$f" "$@" "${per[@]}" >"$tmp/q.out" || status=1
        head -n 1 "$tmp/q.out"
        tail -n +2 "$tmp/q.out" >>"$tmp/perseed"
    done
    if [ -s "$tmp/perseed" ]; then
        echo
        echo "Per seed (the runs above; percent: best of samples or search against the best heuristic, - is better):"
        cat "$tmp/perseed"
    fi
}
# gen_at SPEED OUT ARGS...: a `doppler gen ARGS` workload with its devices at
# SPEED FLOP/s instead of 1e9 (transfers weigh more)
gen_at() {
    local s=$1 out=$2
    shift 2
    build/doppler gen "$@" -o "$out.tmp" >/dev/null &&
        sed "s/^units speed=1000000000 /units speed=$s /" "$out.tmp" >"$out" && rm "$out.tmp" || status=1
}
# at_anneal_budget GRAPH...: per-op logits (--op-logits 3) from the
# pretrained policy given anneal's default budget (20 x ops x devices
# simulations), seeds 1-10, one table
at_anneal_budget() {
    local f n
    echo "$QHEAD"
    echo "$QRULE"
    for f in "$@"; do
        n=$(build/doppler place "$f" --method anneal | awk '/^simulations/ { print $2 }')
        "${PIN[@]}" build/learn_bench quality "$f" --seeds 10 --il 0 --sim "$n" --init policies/doppler_family.dpl --op-logits 3 || status=1
    done
}
# op_validation: per-graph training from the pretrained policy on six
# generated graphs that no setting was tuned on (none in the family or the
# zero-shot set; transfers weigh as on the reference graphs: workloads on
# devices of 1e11 or 1e12 FLOP/s, DAGs of CCR 1 and 2), sim 2000, seeds
# 1-10, 4 devices: the network tuned (the default) against per-op logits
# (--op-logits) at the settings tried, restarts at 4000 and 8000 too, and at
# anneal's default budget; then three other graphs on 2 and 8 devices, to
# confirm the choice, and four fresh graphs for the restarts. The per-op
# defaults were chosen here.
op_validation() {
    local d=$tmp/opval f v n
    mkdir -p "$d/c"
    gen_at 1e12 "$d/chainmm_p4_s1e12.dpg" chainmm --parts 4 --dim 512 --layers 4
    gen_at 1e12 "$d/ffnn_p4_s1e12.dpg" ffnn --parts 4 --layers 3 --batch 96 --dim 384
    gen_at 1e12 "$d/llama_layer_p3_s1e12.dpg" llama-layer --parts 3 --dim 384 --layers 1
    gen_at 1e11 "$d/llama_block_p4_s1e11.dpg" llama-block --parts 4 --dim 512
    build/doppler gen layered --nodes 150 --ccr 2 --seed 77 -o "$d/layered_150_ccr2.dpg" >/dev/null
    build/doppler gen random --nodes 120 --ccr 1 --seed 78 -o "$d/random_120_ccr1.dpg" >/dev/null
    gen_at 1e12 "$d/c/llama_block_p3_s1e12.dpg" llama-block --parts 3 --dim 384
    gen_at 1e11 "$d/c/ffnn_p3_l4_s1e11.dpg" ffnn --parts 3 --layers 4 --dim 384 --batch 96
    build/doppler gen layered --nodes 200 --ccr 1 --seed 91 -o "$d/c/layered_200_ccr1.dpg" >/dev/null
    for v in "" "--op-logits 3" "--op-logits 3 --op-restart -1" "--op-logits 3 --op-prior 4" "--op-logits 3 --op-prior 6" \
             "--op-logits 3 --op-batch 16" "--op-logits 3 --op-batch 8" "--op-logits 3 --op-elite 4 --op-prior 5" \
             "--op-logits 1 --op-prior 4" "--op-logits 3 --op-restart 2" "--op-logits 3 --op-restart 4" \
             "--op-logits 3 --op-restart 12" "--op-logits 3 --op-restart 16"; do
        echo
        echo "Options: ${v:-(none: the network tuned)}"
        echo
        # shellcheck disable=SC2086
        quality "$d"/*.dpg -- --seeds 10 --il 0 --sim 2000 --init policies/doppler_family.dpl $v
    done
    # restarts (--op-restart, default 8) against none at larger budgets
    for n in 4000 8000; do
        for v in "--op-logits 3" "--op-logits 3 --op-restart -1"; do
            echo
            echo "sim $n, options: $v"
            echo
            # shellcheck disable=SC2086
            quality "$d"/*.dpg -- --seeds 10 --il 0 --sim "$n" --init policies/doppler_family.dpl $v
        done
    done
    echo
    echo "Per-op logits given anneal's default budget:"
    echo
    at_anneal_budget "$d"/*.dpg
    # four fresh graphs, larger (200-304 ops), made after the choice
    mkdir -p "$d/f"
    gen_at 1e12 "$d/f/llama_layer_p4_s1e12.dpg" llama-layer --parts 4 --dim 256 --layers 1
    gen_at 1e11 "$d/f/chainmm_p3_s1e11.dpg" chainmm --parts 3 --dim 384 --layers 5
    build/doppler gen layered --nodes 250 --ccr 0.5 --seed 301 -o "$d/f/layered_250_ccr05.dpg" >/dev/null
    build/doppler gen random --nodes 200 --ccr 3 --seed 302 -o "$d/f/random_200_ccr3.dpg" >/dev/null
    for n in 2000 4000; do
        for v in "--op-logits 3" "--op-logits 3 --op-restart -1"; do
            echo
            echo "Fresh graphs, sim $n, options: $v"
            echo
            # shellcheck disable=SC2086
            quality "$d"/f/*.dpg -- --seeds 10 --il 0 --sim "$n" --init policies/doppler_family.dpl $v
        done
    done
    for n in 2 8; do
        for v in "" "--op-logits 3" "--op-logits 3 --op-restart -1" "--op-logits 3 --op-prior 6"; do
            echo
            echo "$n devices, options: ${v:-(none: the network tuned)}"
            echo
            # shellcheck disable=SC2086
            quality "$d"/c/*.dpg -- --devices "$n" --seeds 10 --il 0 --sim 2000 --init policies/doppler_family.dpl $v
        done
    done
}
# stability GRAPH... -- OPTIONS: one table, a row per graph
stability() {
    local graphs=() f
    while [ $# -gt 0 ] && [ "$1" != -- ]; do graphs+=("$1"); shift; done
    shift
    echo "$SHEAD"
    echo "$SRULE"
    for f in "${graphs[@]}"; do "${PIN[@]}" build/learn_bench stability "$f" "$@" || status=1; done
}

echo
echo "## 4. DOPPLER and Placeto learning"
echo
if [ -d "$DATA/doppler" ]; then
    ref=("$DATA"/doppler/*.txt)
    echo "### Per-episode time"
    echo
    echo "4 devices, one core; reference: ChainMM 1.84 s train / 1.18 s infer, FFNN 4.25 / 2.87, Llama-block 3.65 / 2.46"
    echo
    echo "| graph | ops | devices | ms / imitation episode | ms / REINFORCE episode | ms / greedy inference | peak RSS MiB |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for f in "${ref[@]}"; do "${PIN[@]}" build/learn_bench timing "$f" || status=1; done
    echo
    echo "### Quality after il 500 + sim 2000, ten seeds"
    echo
    echo "The defaults (4 devices, FIFO), makespan / lower bound, mean ± sd over seeds 1-10:"
    echo
    quality "${ref[@]}" -- --seeds 10
    echo
    echo "Without the guards (--anchor -1 --select -1):"
    echo
    quality "${ref[@]}" -- --seeds 10 "${NOGUARDS[@]}"
    echo
    echo "The paper's REINFORCE (--step-bl -1 --gamma 0.99: no per-step baseline, discount 0.99; no guards):"
    echo
    quality "${ref[@]}" -- --seeds 10 --step-bl -1 --gamma 0.99 "${NOGUARDS[@]}"
    echo
    echo "### Stability of long runs"
    echo
    echo "il 1000 + sim 20000 episodes, with the guards (the defaults), seeds 1-10:"
    echo
    stability "${ref[@]}" graphs/llama_layer_256_p2.dpg -- --seeds 10
    echo
    echo "Without the guards (--anchor -1 --select -1), seeds 1-5:"
    echo
    stability "${ref[@]}" graphs/llama_layer_256_p2.dpg -- --seeds 5 "${NOGUARDS[@]}"
    if [ "$ALL" = 1 ]; then
        gen() { build/doppler gen "$@" >/dev/null || status=1; }
        gen layered --nodes 150 --ccr 1 --seed 5 -o "$tmp/layered_150_ccr1.dpg"
        gen random --nodes 120 --ccr 2 --seed 9 -o "$tmp/random_120_ccr2.dpg"
        gen llama-block --parts 4 --dim 512 -o "$tmp/llama_block_p4.dpg"
        gen llama-layer --parts 2 --layers 2 --dim 384 -o "$tmp/llama_layer_l2.dpg"
        generated=("$tmp/layered_150_ccr1.dpg" "$tmp/random_120_ccr2.dpg" "$tmp/llama_block_p4.dpg" "$tmp/llama_layer_l2.dpg")
        echo
        echo "Generated graphs, il 1000 + sim 10000, seeds 1-5, with the guards:"
        echo
        stability "${generated[@]}" -- --seeds 5 --sim 10000
        echo
        echo "The same without the guards:"
        echo
        stability "${generated[@]}" -- --seeds 5 --sim 10000 "${NOGUARDS[@]}"
        echo
        echo "### Why REINFORCE stalls and why long runs collapse"
        echo
        echo "Diagnostics of two long runs (il 1000 + sim 20000; means per 2500 episodes), without and with the guards."
        for g in 0 1; do
            for run in "graphs/llama_layer_256_p2.dpg --seed 1" "$DATA/doppler/ffnn_192nodes.txt --seed 7"; do
                opts=()
                [ "$g" = 0 ] && opts=("${NOGUARDS[@]}")
                echo
                echo "$([ "$g" = 0 ] && echo "Without the guards" || echo "With the guards"), $(basename "${run%% *}") ${run#* }:"
                echo
                # shellcheck disable=SC2086
                "${PIN[@]}" build/learn_bench diag $run --il 1000 --sim 20000 --window 2500 "${opts[@]}" || status=1
            done
        done
        echo
        echo "### Tried and not kept (learning)"
        echo
        echo "8 rollouts per update, leave-one-out baselines (--rollouts 8 --lr-sim 2e-3), seeds 1-5:"
        echo
        quality "${ref[@]}" -- --seeds 5 --rollouts 8 --lr-sim 2e-3
        echo
        echo "PRIORITY order (doppler trained and run in SEL's order; the heuristics and anneal in b-level order), seeds 1-5:"
        echo
        quality "${ref[@]}" -- --seeds 5 --order priority
    fi
    echo
    echo "### Placeto"
    echo
    echo "Per episode, 4 devices, one core; reference Placeto: ChainMM 3.72 s train, FFNN 9.24, Llama-block 9.40"
    echo
    echo "| graph | ops | devices | ms / training episode (a sweep: per step the embedding, the head, every other device simulated, the backward pass) | ms / greedy inference | peak RSS MiB |"
    echo "|---|---:|---:|---:|---:|---:|"
    for f in "${ref[@]}"; do "${PIN[@]}" build/learn_bench timing "$f" --algo placeto --episodes 100 || status=1; done
    echo
    echo "Quality after sim 2000 episodes from cp (4 devices, FIFO), makespan / lower bound, seeds 1-5: the one-step improvement (the default), then the paper's REINFORCE (--reinforce 1):"
    echo
    echo "$QHEAD" | sed 's/doppler/placeto/g; s/policy <=/placeto <=/g'
    echo "$QRULE"
    for f in "${ref[@]}"; do "${PIN[@]}" build/learn_bench quality "$f" --algo placeto --sim 2000 --seeds 5 || status=1; done
    for f in "${ref[@]}"; do "${PIN[@]}" build/learn_bench quality "$f" --algo placeto --sim 2000 --seeds 5 --reinforce 1 || status=1; done
    if [ "$ALL" = 1 ]; then
        echo
        echo "Longer on ffnn, sim 5000, seeds 1-5 (per seed):"
        echo
        "${PIN[@]}" build/learn_bench quality "$DATA/doppler/ffnn_192nodes.txt" --algo placeto --sim 5000 --seeds 5 --per-seed || status=1
    fi
else
    echo "skipped: $DATA/doppler not found"
fi
echo
echo "### Generalisation on STG"
echo
if [ -d "$DATA/stg" ]; then
    echo "Train on STG 50 rand0000-0059, place rand0060-0089 unseen; makespan / proven optimum, mean (worst) [at optimum]"
    echo
    echo "| learned placer | processors | training | learned placer | heft | cp |"
    echo "|---|---:|---|---|---|---|"
    "${PIN[@]}" build/learn_bench general "$DATA/stg" --procs 4 --il 1000 --sim 2000 || status=1
    "${PIN[@]}" build/learn_bench general "$DATA/stg" --procs 4 --sim 2000 --algo placeto || status=1
else
    echo "skipped: $DATA/stg not found"
fi
echo
echo "### The pretrained policy"
echo
bench/pretrained.sh || status=1
if [ -d "$DATA/doppler" ]; then
    echo
    echo "Per-graph training from it: sim 2000 episodes, no il, seeds 1-10 (4 devices, FIFO), makespan / lower bound:"
    echo
    quality "$DATA"/doppler/*.txt -- --seeds 10 --il 0 --sim 2000 --init policies/doppler_family.dpl
    echo
    echo "The same with per-op logits (--op-logits 3: stage sim learns a per-op table from the policy's placement, the network's weights stay):"
    echo
    quality "$DATA"/doppler/*.txt -- --seeds 10 --il 0 --sim 2000 --init policies/doppler_family.dpl --op-logits 3
    echo
    echo "The deployment stage's best placement polished until no single move gains (place --improve 2000 --polish 100), seeds 1-10, against anneal at its default budget at the same seed:"
    echo
    improve_polish "$DATA"/doppler/*.txt
    echo
    echo "The same with per-op logits (place --improve 2000 --op-logits 3 --polish 100):"
    echo
    IMPROVE_OPTS="--op-logits 3" improve_polish "$DATA"/doppler/*.txt
    echo
    echo "The same with place --improve 6000, seeds 1-20:"
    echo
    IMPROVE=6000 SEEDS=20 improve_polish "$DATA"/doppler/*.txt
    if [ "$ALL" = 1 ]; then
        for o in "12000" "6000 --op-logits 3"; do
            echo
            echo "The same with place --improve $o:"
            echo
            # shellcheck disable=SC2086
            IMPROVE=${o%% *} IMPROVE_OPTS=$(echo "$o" | cut -s -d' ' -f2-) improve_polish "$DATA"/doppler/*.txt
        done
        echo
        echo "Per-op logits given anneal's default budget (seeds 1-10):"
        echo
        at_anneal_budget "$DATA"/doppler/*.txt
        echo
        echo "Per-op logits against the network tuned, on generated graphs (the rate and prior chosen there):"
        op_validation
        echo
        echo "From scratch with --insertion (il 500 + sim 2000):"
        echo
        quality "$DATA"/doppler/*.txt -- --seeds 10 --insertion 1
        # part 4: the same at other budgets
        for n in 100 500; do
            echo
            echo "The same with sim $n:"
            echo
            quality "$DATA"/doppler/*.txt -- --seeds 10 --il 0 --sim "$n" --init policies/doppler_family.dpl
        done
        for n in 500 1000 4000; do
            echo
            echo "Per-op logits (--op-logits 3) with sim $n:"
            echo
            quality "$DATA"/doppler/*.txt -- --seeds 10 --il 0 --sim "$n" --init policies/doppler_family.dpl --op-logits 3
        done
        for v in "--op-logits 3" "--op-logits 3 --op-restart -1"; do
            echo
            echo "Seeds 11-20, sim 2000, $v:"
            echo
            # shellcheck disable=SC2086
            quality "$DATA"/doppler/*.txt -- --seeds 10 --seed 11 --il 0 --sim 2000 --init policies/doppler_family.dpl $v
        done
        # part 4, "PPO and a learned critic": the same with each option set
        for v in "--rollouts 4" "--ppo 3" "--ppo 4 --rollouts 4" "--critic 1" "--critic 1 --ppo 3"; do
            echo
            echo "The same with $v:"
            echo
            # shellcheck disable=SC2086
            quality "$DATA"/doppler/*.txt -- --seeds 10 --il 0 --sim 2000 --init policies/doppler_family.dpl $v
        done
        echo
        echo "ms per episode with --ppo 3, --ppo 4 --rollouts 4, --critic 1 (ffnn):"
        echo
        for v in "--ppo 3" "--ppo 4 --rollouts 4" "--critic 1"; do
            # shellcheck disable=SC2086
            "${PIN[@]}" build/learn_bench timing "$DATA/doppler/ffnn_192nodes.txt" $v | tail -n 1 || status=1
        done
        echo
        echo "The family recipe with --ppo 3 and --critic, seeds 1-3, on the validation graphs:"
        echo
        FAMILY_INSERTION='' bench/family_sweep.sh "--seed "{1..3} "--seed "{1..3}" --ppo 3" "--seed "{1..3}" --critic" || status=1
        echo
        echo "The embedding's width for the pretrained policy, seeds 1-8 (24: 1-4), on the validation graphs:"
        echo
        FAMILY_INSERTION='' bench/family_sweep.sh "--seed "{1..8}" --hidden 32" "--seed "{1..8}" --hidden 16" "--seed "{1..8}" --hidden 8" \
            "--seed "{1..8}" --hidden 4" "--seed "{1..4}" --hidden 24" || status=1
        echo
        echo "Seeds 1-8 of the shipped recipe, zero-shot on the unseen graphs above (the seed alone), then validation, and the recipe without --insertion (FAMILY_INSERTION=):"
        echo
        bench/pretrained.sh --seeds "1 2 3 4 5 6 7 8" || status=1
        bench/family_sweep.sh "--seed "{1..8} || status=1
        SWEEP_COMM=1 bench/family_sweep.sh "--seed "{1..4} || status=1
        SWEEP_COMM=1e13 bench/family_sweep.sh "--seed "{1..4} || status=1
        FAMILY_INSERTION='' bench/pretrained.sh --seeds "1 2 3 4 5 6 7 8" || status=1
        FAMILY_INSERTION='' bench/family_sweep.sh "--seed "{1..8} || status=1
        echo
        echo "What stage sim adds to the family: stage il alone (FAMILY_EPISODES=IL,1) against the recipe, on the validation graphs and on the validation workloads timed on faster devices (SWEEP_COMM=1):"
        echo
        for comm in 0 1; do
            FAMILY_INSERTION='' SWEEP_COMM=$comm bench/family_sweep.sh "--seed "{1..4} || status=1
            FAMILY_INSERTION='' SWEEP_COMM=$comm FAMILY_EPISODES=4000,1 bench/family_sweep.sh "--seed "{1..4} || status=1
        done
        FAMILY_INSERTION='' FAMILY_EPISODES=24000,1 bench/family_sweep.sh "--seed "{1..8} || status=1
        FAMILY_INSERTION='' FAMILY_EPISODES=24000,8000 bench/family_sweep.sh "--seed "{1..8} || status=1
        FAMILY_INSERTION='' FAMILY_EPISODES=48000,1 bench/family_sweep.sh "--seed "{1..8} || status=1
        FAMILY_INSERTION='' FAMILY_EPISODES=48000,8000 bench/family_sweep.sh "--seed "{1..4} "--seed "{1..4}" --anchor 1" "--seed "{1..4}" --anchor 0.3" || status=1
        FAMILY_INSERTION='' SWEEP_COMM=1 FAMILY_EPISODES=48000,1 bench/family_sweep.sh "--seed "{1..4} || status=1
        FAMILY_INSERTION='' FAMILY_EPISODES=12000,8000 bench/family_sweep.sh "--seed "{1..8} || status=1
        echo
        echo "The same on the validation workloads on devices 10^4 x faster (SWEEP_COMM=1e13): the recipe, il 4000, il 12000 + sim 8000, il 48000 (+ sim 8000):"
        echo
        for e in 4000,8000 4000,1 12000,8000; do
            FAMILY_INSERTION='' SWEEP_COMM=1e13 FAMILY_EPISODES=$e bench/family_sweep.sh "--seed "{1..4} || status=1
        done
        FAMILY_INSERTION='' SWEEP_COMM=1e13 FAMILY_EPISODES=48000,1 bench/family_sweep.sh "--seed "{1..2} || status=1
        FAMILY_INSERTION='' SWEEP_COMM=1e13 FAMILY_EPISODES=48000,8000 bench/family_sweep.sh "--seed "{1..4} || status=1
        echo
        echo "Stage il alone (48000 episodes), then il 12000 + sim 8000, seeds 1-8, zero-shot on the unseen graphs above:"
        echo
        FAMILY_INSERTION='' FAMILY_EPISODES=48000,1 bench/pretrained.sh --seeds "1 2 3 4 5 6 7 8" || status=1
        FAMILY_INSERTION='' FAMILY_EPISODES=12000,8000 bench/pretrained.sh --seeds "1 2 3 4 5 6 7 8" || status=1
    fi
fi
echo
echo "## 5. CPU executor"
echo
echo "2 devices = 2 compute threads + 2 copy threads. Dispatch overhead (zero-cost ops):"
echo
build/exec_bench overhead || status=1
echo
echo "Opaque graphs: wall time against the simulator's prediction (ops are busy kernels of their modelled time; no calibration):"
echo
sim_graphs=(graphs/heft_example.dpg graphs/layered_*.dpg graphs/random_*.dpg)
[ -d "$DATA/doppler" ] && sim_graphs+=("$DATA"/doppler/*.txt)
build/exec_bench simreal "${sim_graphs[@]}" --devices 2 --reps 3 || status=1
echo
echo "DOPPLER trained with stage III on the executor, measured against the heuristics (wall ms, the median of 3 interleaved rounds of 7 runs, the simulator's prediction in brackets):"
echo
echo "| graph | devices | episodes il + sim + real (training time) | doppler | cp | heft | enumopt |"
echo "|---|---:|---|---:|---:|---:|---:|"
for f in graphs/chainmm_*.dpg graphs/ffnn_*.dpg graphs/llama_*.dpg graphs/heft_example.dpg graphs/layered_*.dpg graphs/random_*.dpg; do
    build/exec_bench realtrain "$f" --devices 2 || status=1
done
echo
echo "Real-op workloads against the calibrated simulator (3 rounds of calibrate + run):"
echo
build/exec_bench workloads --devices 2 --rounds 3 --reps 3 || status=1
echo
echo "## 6. CUDA executor"
echo
if [ ! -x build/doppler_cuda_probe ]; then
    echo "skipped: a build without nvcc (no build/doppler_cuda_probe)"
elif build/doppler_cuda_probe | grep -q '^[0-9]* CUDA device'; then
    build/doppler_cuda_probe
    echo
    echo "Dispatch overhead (zero-cost ops: one block hashing nothing):"
    echo
    for dsp in dynamic static graph; do build/exec_bench overhead --backend cuda --dispatch $dsp || status=1; done
    echo
    echo "Opaque graphs: wall time against the simulator's prediction (2 logical devices):"
    echo
    build/exec_bench simreal "${sim_graphs[@]}" --devices 2 --reps 3 --backend cuda || status=1
    echo
    echo "Real-op workloads on 1, 2 and 4 logical devices against the GPU-calibrated simulator, each dispatch:"
    echo
    CUDA_DEVICE_MAX_CONNECTIONS=32 build/exec_bench gpu || status=1
    echo
    echo "Stage III on the GPU against the heuristics (4 logical devices, PCIe-like links; wall ms, predicted ms, training s):"
    echo
    CUDA_DEVICE_MAX_CONNECTIONS=32 bench/gpu_stage3.sh || status=1
    echo
    echo "Against PyTorch on the same GPU: matmul, memory-bound kernels, dispatch, workloads, logical devices:"
    bench/gpu.sh || status=1
    echo
    echo "The calibrated simulator against the executor (dims 256 and 1024, 1, 2 and 4 logical devices):"
    echo
    bench/gpu_predict.sh || status=1
else
    echo "skipped: no GPU: $(build/doppler_cuda_probe 2>&1 | head -n 1)"
fi
echo
echo "## 7. Hardening"
echo
echo "Not run here: ./build.sh fuzz SECONDS, ./build.sh test (tests/test_alloc.c, test_malformed.c, test_numeric.c, test_truncate.c), ./build.sh sanitize, ./build.sh valgrind."
echo
bench/bad_inputs.sh || status=1
echo
echo "## 8. ONNX import"
echo
bench/onnx_bench.sh || status=1
echo
echo "## 9. Placement within device memory"
echo
bench/memory.sh || status=1
echo
echo "## 10. PyTorch models"
echo
bench/torch_bench.sh || status=1
echo
echo "## 11. Across machines: the MPI executor"
echo
if command -v mpirun >/dev/null 2>&1 && [ -x build/doppler_mpi ]; then
    bench/mpi.sh 3 || status=1
else
    echo "skipped: no mpirun or build/doppler_mpi (./build.sh builds it where mpicc is found)"
fi
echo
bench/mpi_place.sh || status=1
exit $status
