#!/usr/bin/env bash
# bench/moves.sh [--sizes "1000 10000 100000"] - the searches' moves scored
# per second with the move bound (a move it decides is not simulated) and
# without it (--no-move-bound: every move simulated): the same search, so
# the same makespan, in less time (issue 45; bench/RESULTS.md part 3).
# Graphs: doppler gen layered --width 100 --density 0.05 (about 6 edges an
# op), without transfers (ccr 0) and with them (ccr 1); 4 devices.
# anneal: a budget of 80 moves an op at 10^3 ops, 1 at 10^4, 0.01 at 10^5
# (its cooling runs the whole schedule each time); enumopt: 10 s at most.
# Markdown on standard output; run from the repository root after ./build.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
SIZES="1000 10000 100000"
[ "${1:-}" = --sizes ] && SIZES=$2
[ -x build/scale_bench ] || { echo "bench/moves.sh: build/scale_bench missing: run ./build.sh" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "### Moves scored per second, with and without the move bound"
echo
echo "    bench/moves.sh --sizes \"$SIZES\""
echo
echo "$(date -u +%Y-%m-%d); $(nproc --all) cores, one used; 4 devices; moves/s (simulated + bounded moves over seconds), makespan."
echo
echo "| graph | ops | method | moves | without the bound | with it | speed-up | bounded | makespan (same) |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---|"
for ccr in 0 1; do
    for n in $SIZES; do
        f=$tmp/l$n.dpg
        build/doppler gen layered --nodes "$n" --width 100 --density 0.05 --ccr "$ccr" -o "$f" >/dev/null || continue
        budget=$((n * 80))
        [ "$n" -ge 10000 ] && budget=$n
        [ "$n" -ge 100000 ] && budget=$((n / 100))
        for m in anneal enumopt; do
            a=$(build/scale_bench --steps "$m" --budget "$budget" --time-limit 10 --no-move-bound "$f" 2>&1)
            b=$(build/scale_bench --steps "$m" --budget "$budget" --time-limit 10 "$f" 2>&1)
            awk -F'\t' -v ccr="$ccr" -v n="$n" -v m="$m" -v a="$a" -v b="$b" 'BEGIN {
                split(a, x, "\t"); split(b, y, "\t")
                match(x[5], /[0-9]+ moves\/s/); ra = substr(x[5], RSTART, RLENGTH) + 0
                match(y[5], /[0-9]+ moves\/s/); rb = substr(y[5], RSTART, RLENGTH) + 0
                split(y[5], p, " "); sims = p[1] + p[4]; bnd = p[4]
                printf "| layered ccr %s | %d | %s | %d | %d | %d | %.2fx | %.0f%% | %s%s |\n", ccr, n, m, sims, ra, rb,
                       (ra > 0 ? rb / ra : 0), (sims > 0 ? 100 * bnd / sims : 0), y[4], (x[4] == y[4] ? "" : (" (without: " x[4] ")")) }'
        done
        rm -f "$f"
    done
done
