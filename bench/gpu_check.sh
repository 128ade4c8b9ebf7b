#!/usr/bin/env bash
# bench/gpu_check.sh - every check and figure a GPU is wanted for (bench/
# RESULTS.md part 6), in one run, the most important first, within a time
# budget, so that a GPU lent for a few minutes is spent on measuring and not
# on typing. The programs are built beforehand where nvcc is (a GPU machine
# need not have it) and travel with the tree:
#
#     DP_NVCC_ARCH=sm_90 ./build.sh                 # where nvcc is
#     bench/gpu_check.sh --budget 480 --dir LOGS    # on the GPU machine
#     bench/gpu_check.sh --dry-run                  # anywhere: the plan, and
#                                                   # what is missing for it
#
# Sections, in this order (--only A,B,... runs only those, still in this order):
#   machine   GPU, driver, CUDA, torch, the commit; build/doppler_cuda_probe
#             (no GPU, or a build without nvcc: the run stops here, exit 1,
#             with the reason)
#   test      DP_REQUIRE_GPU=1 build/test_cuda_cu: outputs against the CPU
#             executor's under every dispatch, partitions, paced links, the
#             tensor-core kernels against the double product
#   gpu       bench/gpu.sh --quick: matmul per precision and the two
#             tensor-core kernels, memory-bound kernels, dispatch, whole
#             workloads, logical devices as partitions, PyTorch's side
#   predict   DIMS=256 bench/gpu_predict.sh: the calibrated simulator
#             against the measured wall, 1, 2 and 4 logical devices
#   sanitize  compute-sanitizer: memcheck with leak check under each
#             dispatch, racecheck (dynamic, static), synccheck (graph), on
#             llama-block over 4 logical devices (skipped, with the reason,
#             where compute-sanitizer is missing)
#   predict1k DIMS=1024 bench/gpu_predict.sh
#   mpi       tests/test_mpi.sh: the MPI executor, its ranks' GPUs included
#             (--mpi-devices cuda; skipped where mpirun or build/test_mpi
#             is missing)
#   stage3    bench/gpu_stage3.sh: stage III on the GPU (the longest; what
#             the budget leaves)
#
# Each section runs under a cap (its own, cut to what the budget has left)
# and is skipped, saying so, when less than its minimum is left. Its whole
# output goes to DIR/NN-name.log (DIR: --dir, default a new directory under
# /tmp, named at the end); stdout gets each section's key lines as it ends
# and a closing table (section, status, seconds, key line). A section
# passes when it exits 0 and, for the benchmark scripts (gpu, predict,
# predict1k: they go on past a failed step), no line of its log says
# "failed". Exit status: 0 when every section that ran passed, 1 otherwise
# (no GPU included).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
budget=480
dir=
dry=
only=
all="machine test gpu predict sanitize predict1k mpi stage3"
while [ $# -gt 0 ]; do
    case $1 in
    --budget) budget=${2:-}; shift 2 ;;
    --dir) dir=${2:-}; shift 2 ;;
    --only) only=${2:-}; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --section) run_section=${2:-}; shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
run_section=${run_section:-}
case $budget in '' | *[!0-9]*) echo "gpu_check.sh: --budget '$budget' is not a whole number of seconds" >&2; exit 2 ;; esac
sections=$all
if [ -n "$only" ]; then
    for s in ${only//,/ }; do
        case " $all " in *" $s "*) ;; *) echo "gpu_check.sh: --only: no section '$s' (sections: $all)" >&2; exit 2 ;; esac
    done
    sections=
    for s in $all; do case ",$only," in *",$s,"*) sections="$sections $s" ;; esac; done
fi
D=${D:-build/doppler}
EB=${EB:-build/exec_bench}
SAN=$(command -v compute-sanitizer || { [ -x /usr/local/cuda/bin/compute-sanitizer ] && echo /usr/local/cuda/bin/compute-sanitizer; } || true)
if [ -z "$dry" ] && [ -z "$run_section" ]; then
    [ -n "$dir" ] || dir=$(mktemp -d /tmp/gpu_check.XXXXXX)
    mkdir -p "$dir" || exit 1
fi
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
rows=
failed=0
num=0

# what a section needs that is not there, or nothing
missing() {
    local s=$1 need=
    case $s in
    machine) need="build/doppler_cuda_probe" ;;
    test) need="build/test_cuda_cu" ;;
    gpu) need="$D $EB" ;;
    predict | predict1k | stage3) need="$D" ;;
    mpi) need="build/test_mpi build/doppler_mpi" ;;
    sanitize) need="$D" ;;
    esac
    for f in $need; do [ -x "$f" ] || { echo "$f is not built (DP_NVCC_ARCH=sm_90 ./build.sh where nvcc is)"; return; }; done
    if [ "$s" = mpi ] && ! command -v mpirun >/dev/null; then echo "no mpirun"; return; fi
    if [ "$s" = sanitize ] && [ -z "$SAN" ]; then echo "no compute-sanitizer on PATH nor in /usr/local/cuda/bin"; return; fi
}

# the key lines of a section's log
key() {
    local s=$1 log=$2
    case $s in
    machine) grep -E 'CUDA device|compute capability|self-test|NVIDIA|^torch|main at|release' "$log" ;;
    test) grep -E '^FAIL|passed, [0-9]+ failed' "$log" | tail -6 ;;
    gpu) grep -E 'NOT met|sharing|failed|skipped|Machine' "$log" | head -12 ;;
    predict | predict1k) grep -E '^median|^worst|failed' "$log" | tail -8 ;;
    sanitize) grep -E 'ERROR SUMMARY|^run |^sanitizer:' "$log" | tail -16 ;;
    mpi) grep -E '^FAIL|^SKIP|passed, [0-9]+ failed' "$log" | tail -6 ;;
    stage3) tail -4 "$log" ;;
    esac
}

# the sections themselves (each run as `gpu_check.sh --section NAME`, a
# process of its own that the cap can stop with everything it started)
sec_machine() {
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    else
        echo "no nvidia-smi"
    fi
    command -v nvcc >/dev/null && nvcc --version | tail -2 | head -1
    for p in python3 /usr/bin/python3; do
        "$p" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "GPU", torch.cuda.is_available())' 2>/dev/null && break
    done
    git log -1 --format='main at %h (%cd)' --date=short 2>/dev/null || echo "main at: no git here (a copy of the tree; name the commit it was made from)"
    build/doppler_cuda_probe
}
sec_test() { DP_REQUIRE_GPU=1 build/test_cuda_cu; }
sec_gpu() { LIMIT=100 D=$D EB=$EB bench/gpu.sh --quick; }
sec_predict() { DIMS=256 REPS=5 bench/gpu_predict.sh "$D"; }
sec_predict1k() { DIMS=1024 REPS=5 bench/gpu_predict.sh "$D"; }
sec_mpi() { tests/test_mpi.sh; }
# one round of 9 runs per placement (not 3 of 3): a CUDA process start per
# measurement is most of the section's time
sec_stage3() { ROUNDS=1 bench/gpu_stage3.sh "$D"; }
sec_sanitize() {
    local G=graphs/llama_block_256_p2.dpg t rc=0 r tool args runs=0 bad=0
    t=$(mktemp -d)
    "$D" place "$G" --method cp --devices 4 -o "$t/a.assign" >/dev/null || { rm -rf "$t"; return 1; }
    # each tool once before any twice, should the cap stop the section
    for r in "memcheck --leak-check full|--dispatch graph" "racecheck|--dispatch dynamic" "synccheck|--dispatch graph" \
             "memcheck --leak-check full|--dispatch dynamic" "racecheck|--dispatch static" \
             "memcheck --leak-check full|--dispatch static" "memcheck|--dispatch graph --precision bf16"; do
        tool=${r%%|*} args=${r#*|}
        echo "run --tool $tool, exec $args"
        runs=$((runs + 1))
        # shellcheck disable=SC2086  # tool and args are words
        "$SAN" --error-exitcode 9 --tool $tool "$D" exec "$G" --assign "$t/a.assign" --devices 4 --backend cuda --reps 1 $args >"$t/out" 2>&1 || { rc=1; bad=$((bad + 1)); }
        tail -3 "$t/out"
    done
    rm -rf "$t"
    echo "sanitizer: $runs runs, $((runs - bad)) clean (the tool found nothing and exec passed)"
    return "$rc"
}
describe() {
    case $1 in
    machine) echo "nvidia-smi, nvcc, torch, the commit; build/doppler_cuda_probe" ;;
    test) echo "DP_REQUIRE_GPU=1 build/test_cuda_cu" ;;
    gpu) echo "LIMIT=100 bench/gpu.sh --quick" ;;
    predict) echo "DIMS=256 REPS=5 bench/gpu_predict.sh" ;;
    predict1k) echo "DIMS=1024 REPS=5 bench/gpu_predict.sh" ;;
    sanitize) echo "${SAN:-compute-sanitizer} memcheck (leaks; dynamic, static, graph; bf16 graph), racecheck (dynamic, static), synccheck (graph): doppler exec llama_block_256_p2 on 4 logical devices" ;;
    mpi) echo "tests/test_mpi.sh" ;;
    stage3) echo "ROUNDS=1 bench/gpu_stage3.sh: 4 logical devices over PCIe-like links; cp, heft, anneal, pipeline, doppler zero-shot, + sim 2000, + real 300 (seeds 1-3)" ;;
    esac
}

if [ -n "$run_section" ]; then
    case " $all " in *" $run_section "*) "sec_$run_section"; exit ;; esac
    echo "gpu_check.sh: --section: no section '$run_section'" >&2
    exit 2
fi

# section NAME CAP MIN: run it (or, --dry-run, say what would run)
section() {
    local s=$1 cap=$2 min=$3 why l t0 rc secs status log k nf
    num=$((num + 1))
    why=$(missing "$s")
    if [ -n "$dry" ]; then
        echo "$num. $s: up to $cap s (needs $min s left): $(describe "$s")${why:+; would be skipped: $why}"
        return
    fi
    l=$(left)
    log=$(printf '%s/%02d-%s.log' "$dir" "$num" "$s")
    if [ -n "$why" ]; then status="skipped: $why"; secs=0
    elif [ "$l" -lt "$min" ]; then status="skipped: $l s of the budget left, it needs $min"; secs=0
    else
        [ "$cap" -gt "$l" ] && cap=$l
        echo "## $s (up to $cap s)"
        t0=$(date +%s)
        timeout --kill-after=5 "$cap" "$0" --section "$s" >"$log" 2>&1
        rc=$?
        secs=$(($(date +%s) - t0))
        case $rc in
        0) status=ok
           # the benchmark scripts go on past a failed step and exit 0: their "failed" lines count
           case $s in gpu | predict | predict1k)
               nf=$(grep -c 'failed' "$log")
               [ "$nf" -gt 0 ] && { status="ran, $nf lines say failed"; failed=1; } ;;
           esac ;;
        124 | 137) status="stopped at its cap ($cap s)"; failed=1 ;;
        *) status="failed (rc $rc)"; failed=1 ;;
        esac
        key "$s" "$log" | sed 's/^/    /'
        echo "    -> $status, $secs s"
    fi
    k=$( [ -f "$log" ] && key "$s" "$log" | tail -1 | tr '|' '/' | cut -c1-100)
    rows="$rows| $s | $status | $secs | ${k:-} |
"
    if [ "$s" = machine ] && [ "${status%%:*}" = skipped ]; then
        echo "no CUDA build: $status; nothing else to run"
        rows="$rows| (the rest) | not run: no CUDA build | 0 | |
"
        failed=1
        return 1
    fi
    if [ "$s" = machine ] && [ "$status" = ok ] && grep -q '^no CUDA device' "$log"; then
        echo "no GPU: $(grep '^no CUDA device' "$log" | head -1); nothing else to run"
        rows="$rows| (the rest) | not run: no GPU | 0 | |
"
        failed=1
        return 1
    fi
    case $status in ok | skipped:*) ;; *) failed=1 ;; esac
    return 0
}

[ -n "$dry" ] && echo "bench/gpu_check.sh: budget $budget s; sections:$sections"
for s in $sections; do
    case $s in
    machine) section machine 30 5 || break ;;
    test) section test 180 45 ;;
    gpu) section gpu 300 90 ;;
    predict) section predict 180 60 ;;
    sanitize) section sanitize 150 40 ;;
    predict1k) section predict1k 150 60 ;;
    mpi) section mpi 150 40 ;;
    stage3) section stage3 900 120 ;;
    esac
done
[ -n "$dry" ] && exit 0
echo
echo "| section | status | seconds | key line |"
echo "|---|---|---:|---|"
printf '%s' "$rows"
echo
echo "logs: $dir; $(($(date +%s) - start)) s of a budget of $budget"
exit $failed
