#!/usr/bin/env bash
# bench/run.sh - the benchmarks behind bench/RESULTS.md, printed as markdown.
# Run through ./build.sh bench (which builds build/doppler, build/stg_bench
# and build/sim_bench first), from the repository root.
#   1. every placer on the three DOPPLER reference graphs, 4 devices;
#   2. every placer on the STG set: mean and worst ratio to the proven optimum
#      per size (50, 100) and processor count (2, 4, 8, 16);
#   3. simulator throughput: simulations per second of cp's assignment, one
#      core, >= 1 s per graph (target: >= 100,000/s on ffnn_192nodes).
# Parts 1 and 2 need the reference data in ../shared/data (DP_DATA overrides);
# they are skipped with a message when it is absent.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
DATA=${DP_DATA:-../shared/data}
status=0
for p in build/doppler build/stg_bench build/sim_bench; do
    [ -x "$p" ] || { echo "bench/run.sh: $p missing: run ./build.sh bench" >&2; exit 1; }
done
# one core for the timings where taskset exists
PIN=()
command -v taskset >/dev/null 2>&1 && PIN=(taskset -c 0)

echo "# doppler benchmarks"
echo
echo "$(date -u +%Y-%m-%d), $(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(${CC:-gcc} --version | head -n 1)"

echo
echo "## 1. Placers on the DOPPLER reference graphs (4 devices, FIFO runtime)"
echo
if [ -d "$DATA/doppler" ]; then
    "${PIN[@]}" build/doppler bench "$DATA"/doppler/*.txt --methods all --devices 4 --md || status=1
else
    echo "skipped: $DATA/doppler not found"
fi

echo
echo "## 2. Placers on the STG set against the proven optima (no communication)"
if [ -d "$DATA/stg" ]; then
    "${PIN[@]}" build/stg_bench --data "$DATA/stg" || status=1
else
    echo
    echo "skipped: $DATA/stg not found"
fi

echo
echo "## 3. Simulator throughput (cp's assignment, 4 devices, one core)"
echo
sim_graphs=()
[ -d "$DATA/doppler" ] && sim_graphs+=("$DATA"/doppler/*.txt)
mapfile -t -O "${#sim_graphs[@]}" sim_graphs < <(printf '%s\n' graphs/*.dpg | sort -V)
"${PIN[@]}" build/sim_bench "${sim_graphs[@]}" || status=1
exit $status
