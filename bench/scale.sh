#!/usr/bin/env bash
# bench/scale.sh [--sizes "10000 100000 1000000"] [--time-limit S] [--dense]
#                [--threads T]
# Large graphs (issue 45; bench/RESULTS.md part 3): for each family and
# size, build/scale_bench's steps (read, cp, heft, one simulation, anneal
# under a time limit, the pretrained DOPPLER policy greedy + 64 samples),
# seconds and peak resident memory, then the growth exponent of each step
# in each family: the slope of log(seconds) and of log(peak) against
# log(ops), least squares over the sizes. Families (4 devices, the graph's
# own units):
#   chain    ops in a line, compute 1, 1 byte per edge
#   layered  doppler gen layered --width 100 --density 0.05 (about 6 edges
#            an op, between consecutive levels)
#   random   doppler gen random --width 1000 --density 0.003 (wide: 1000
#            ops a level, about 7.5 edges an op, spanning up to 3 levels)
# --threads T: the learned placer's samples drawn by T threads (default 1;
# the same placements; the other steps run on one).
# --dense adds the issue's graph: doppler gen layered --nodes 100000 (the
# generator's defaults: width 316, density 0.3, 9.6 M edges).
# Markdown on standard output. Run from the repository root after
# ./build.sh; it needs about 3 GB of memory and 10 GB of /tmp at 10^6.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
SIZES="10000 100000 1000000"
LIMIT=10
DENSE=0
THREADS=1
while [ $# -gt 0 ]; do
    case "$1" in
        --sizes) SIZES=$2; shift 2 ;;
        --time-limit) LIMIT=$2; shift 2 ;;
        --dense) DENSE=1; shift ;;
        --threads) THREADS=$2; shift 2 ;;
        *) echo "usage: bench/scale.sh [--sizes \"N...\"] [--time-limit S] [--dense] [--threads T]" >&2; exit 2 ;;
    esac
done
for p in build/doppler build/scale_bench; do
    [ -x "$p" ] || { echo "bench/scale.sh: $p missing: run ./build.sh" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gen() {  # FAMILY N FILE
    case "$1" in
        chain) awk -v n="$2" 'BEGIN { print "doppler-graph 1"
                   for (i = 0; i < n; i++) print "op o" i " compute=1 bytes=1"
                   for (i = 1; i < n; i++) print "edge o" i - 1 " o" i }' >"$3" ;;
        layered) build/doppler gen layered --nodes "$2" --width 100 --density 0.05 -o "$3" >/dev/null ;;
        random) build/doppler gen random --nodes "$2" --width 1000 --density 0.003 -o "$3" >/dev/null ;;
        dense) build/doppler gen layered --nodes "$2" -o "$3" >/dev/null ;;
    esac
}

echo "### Large graphs"
echo
echo "    bench/scale.sh --sizes \"$SIZES\" --time-limit $LIMIT$([ $DENSE = 1 ] && echo ' --dense')$([ "$THREADS" != 1 ] && echo " --threads $THREADS")"
echo
echo "$(date -u +%Y-%m-%d); $(nproc --all) cores, one used (doppler's samples: $THREADS threads); 4 devices; seconds (peak resident MB, the graph included)."
echo "sim: one simulation of cp's placement (its workspace included); anneal: --time-limit $LIMIT;"
echo "doppler: the pretrained policy, greedy + 64 samples."
echo
echo "| family | ops | edges | MB | read | cp | heft | sim | anneal | doppler |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
runs=()
families="chain layered random"
for fam in $families $([ $DENSE = 1 ] && echo dense); do
    sizes=$SIZES
    [ "$fam" = dense ] && sizes=100000
    for n in $sizes; do
        f=$tmp/$fam$n.dpg
        gen "$fam" "$n" "$f" || { echo "bench/scale.sh: gen $fam $n failed" >&2; continue; }
        out=$tmp/$fam$n.out
        build/scale_bench --time-limit "$LIMIT" --threads "$THREADS" "$f" >"$out" 2>"$tmp/err" || { echo "bench/scale.sh: $fam $n: $(cat "$tmp/err")" >&2; }
        runs+=("$fam $n $out")
        awk -F'\t' -v fam="$fam" -v n="$n" -v mb="$(du -m "$f" | cut -f1)" '
            $1 == "read" { split($5, a, " "); edges = a[3] }
            { s[$1] = sprintf("%.2f (%.0f)", $2, $3 / 1048576) }
            END { printf "| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", fam, n, edges, mb,
                  s["read"], s["cp"], s["heft"], s["sim"], s["anneal"], s["doppler"] }' "$out"
        rm -f "$f"
    done
done
echo
echo "Growth exponents (slope of log seconds, and of log peak memory, against log ops):"
echo
echo "| family | read | cp | heft | sim | doppler |"
echo "|---|---:|---:|---:|---:|---:|"
for fam in $families; do
    for r in "${runs[@]}"; do
        set -- $r
        [ "$1" = "$fam" ] && awk -F'\t' -v n="$2" '{ print n "\t" $0 }' "$3"
    done | awk -F'\t' -v fam="$fam" '
        { x = log($1); k = $2; t = $3 > 1e-4 ? $3 : 1e-4
          n[k]++; sx[k] += x; sxx[k] += x * x; st[k] += log(t); sxt[k] += x * log(t); sm[k] += log($4); sxm[k] += x * log($4) }
        function slope(k, sy, sxy) { d = n[k] * sxx[k] - sx[k] * sx[k]; return d > 0 ? (n[k] * sxy - sx[k] * sy) / d : 0 }
        END { printf "| %s", fam
              split("read cp heft sim doppler", ks, " ")
              for (i = 1; i <= 5; i++) { k = ks[i]
                  if (n[k] >= 2) printf " | %.2f (%.2f)", slope(k, st[k], sxt[k]), slope(k, sm[k], sxm[k]); else printf " | -" }
              print " |" }'
done
