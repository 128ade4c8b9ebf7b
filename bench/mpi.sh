#!/usr/bin/env bash
# bench/mpi.sh - the MPI executor on this machine, 2 ranks (bench/RESULTS.md
# part 11): (1) calibrate --backend mpi, then for chainmm, ffnn, llama-block
# and llama-layer (P 2, dim $DIM, default 512) placed by cp, heft and doppler
# (the pretrained policy, zero-shot) on that cluster, the simulator's
# prediction against the median wall time of exec --backend mpi (5 runs);
# (2) MPI's one-way time and bandwidth between the two ranks by message size
# (build/mpi_bench). Needs mpirun and ./build.sh's MPI build (mpicc).
# Usage: bench/mpi.sh [ROUNDS] (rounds of the whole table, default 1).
# Open MPI's shared-memory transport moves a large message between two
# local ranks by one of two means: CMA (a single copy by the receiver,
# process_vm_readv; Open MPI's default) or copies through shared memory.
# On the VM of RESULTS part 11 a 256 KiB process_vm_readv took 0.07 to
# 1 ms, inside the receiving rank's MPI_Testsome, its dispatcher stalled
# meanwhile; through shared memory the same messages are steady (and
# ping-pong bandwidth is higher). So this bench runs with
# OMPI_MCA_btl_vader_single_copy_mechanism=none unless SINGLE_COPY says
# otherwise (SINGLE_COPY=cma: Open MPI's default); the first line says
# which. Other MPIs ignore the variable.
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-1}
DIM=${DIM:-512}
D=build/doppler
M=${DOPPLER_MPI:-build/doppler_mpi}
for f in $D $M build/mpi_bench; do [ -x $f ] || { echo "bench/mpi.sh: $f missing (./build.sh with mpicc)" >&2; exit 1; }; done
command -v mpirun >/dev/null || { echo "bench/mpi.sh: no mpirun" >&2; exit 1; }
export OMPI_MCA_btl_vader_single_copy_mechanism=${SINGLE_COPY:-none}
run() { mpirun --allow-run-as-root --oversubscribe -np 2 "$@"; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
num() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg); $(mpirun --version | head -n 1); btl_vader_single_copy_mechanism=$OMPI_MCA_btl_vader_single_copy_mechanism"
for r in $(seq "$ROUNDS"); do
    run $M calibrate --backend mpi -o "$T/two.dpc" --json >"$T/cal.json"
    echo
    echo "round $r: calibrated: $(cat "$T/cal.json")"
    echo
    echo "| workload (P 2, dim $DIM) | method | predicted (ms) | wall (ms) | error |"
    echo "|---|---|---:|---:|---:|"
    errs=()
    for w in chainmm ffnn llama-block llama-layer; do
        $D gen $w --parts 2 --dim "$DIM" -o "$T/$w.dpg" >/dev/null
        for m in cp heft doppler; do
            $D place "$T/$w.dpg" --cluster "$T/two.dpc" --method $m -o "$T/$w.$m" >/dev/null
            run $M exec "$T/$w.dpg" --assign "$T/$w.$m" --cluster "$T/two.dpc" --backend mpi --reps 5 --json >"$T/x.json"
            p=$(num "$T/x.json" predicted); wl=$(num "$T/x.json" wall_median)
            e=$(python3 -c "print('%+.1f' % (100 * ($wl / $p - 1)))")
            errs+=("${e#+}")
            printf '| %s | %s | %.2f | %.2f | %s%% |\n' "$w" "$m" "$(python3 -c "print($p*1e3)")" "$(python3 -c "print($wl*1e3)")" "$e"
        done
    done
    python3 -c "
import statistics, sys
e = [abs(float(x)) for x in sys.argv[1:]]
print('\nround $r: median |error| %.1f%%, worst %.1f%% over %d runs' % (statistics.median(e), max(e), len(e)))" "${errs[@]}"
done
echo
echo "MPI between the two ranks (build/mpi_bench, dp_mpi_pingpong):"
echo
run build/mpi_bench
