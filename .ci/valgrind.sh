#!/usr/bin/env bash
# .ci/valgrind.sh - the CLI built -O1 -g (build/valgrind/doppler), one short
# round of every kind of work (gen, convert to a .dpb and info on it, train
# il/sim/real and placeto, place with heuristics and both policies, sim,
# exec of real-op and opaque graphs, a refused bad input and a cut .dpb),
# each step under memcheck with full leak checking; tiny graphs, 2 devices.
# Every step must end with zero errors and zero leaks.
# Run by ./build.sh valgrind (and .ci/run); CC, DP_WERROR=1 or CI=true as
# build.sh. Prints one closing line "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
CC=${CC:-gcc}
WARN="-Wall -Wextra"
if [ "${CI:-}" = true ] || [ "${DP_WERROR:-0}" = 1 ]; then WARN="$WARN -Werror"; fi

need_valgrind() {
    if command -v valgrind >/dev/null 2>&1; then return 0; fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "valgrind not found: installing it"
        export DEBIAN_FRONTEND=noninteractive
        if apt-get update && apt-get install -y valgrind; then return 0; fi
    fi
    echo ".ci/valgrind.sh: valgrind not found (Debian/Ubuntu: sudo apt-get install valgrind)" >&2
    exit 1
}

need_valgrind
V=build/valgrind
mkdir -p "$V"
# the pretrained policy as build.sh embeds it
[ build/pretrained_policy.h -nt policies/doppler_family.dpl ] && [ build/pretrained_policy.h -nt policies/embed.sh ] ||
    policies/embed.sh policies/doppler_family.dpl build/pretrained_policy.h || exit 1
echo "  CC    $V/doppler"
"$CC" -std=gnu11 $WARN -I. -O1 -g -Ibuild '-DDP_PRETRAINED_POLICY="pretrained_policy.h"' \
    -o "$V/doppler" demos/doppler.c -lm -pthread || { echo ".ci/valgrind.sh: FAILED to build $V/doppler"; exit 1; }
d=$V/run pass=0 fail=0
VG=(valgrind --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all
    --error-exitcode=99 --track-fds=no --num-callers=30)
rm -rf "$d"
mkdir -p "$d"
t0=$(date +%s)
# step NAME WANT-STATUS ARGS...: one CLI run under memcheck
step() {
    local name=$1 want=$2 rc errs
    shift 2
    "${VG[@]}" --log-file="$d/$name.vg" "$V/doppler" "$@" >"$d/$name.out" 2>&1 </dev/null
    rc=$?
    errs=$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$d/$name.vg" | tail -n 1)
    printf '%-14s exit %s: %s\n' "$name" "$rc" "$(grep -E 'in use at exit|total heap usage|ERROR SUMMARY|LEAK SUMMARY|All heap blocks were freed|definitely lost:|indirectly lost:|possibly lost:|still reachable:' "$d/$name.vg" |
        sed 's/^==[0-9]*== *//' | tr '\n' ' ' | sed 's/  */ /g')"
    if [ "$rc" = "$want" ] && [ "$errs" = "ERROR SUMMARY: 0 errors" ] &&
        grep -q 'All heap blocks were freed -- no leaks are possible' "$d/$name.vg"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $name: exit $rc (expected $want), $errs; see $d/$name.vg"
        grep -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|[0-9,]+ bytes in)' "$d/$name.vg" | head -n 10
        sed 's/^/    /' "$d/$name.out" | tail -n 5
    fi
}
step gen-layered 0 gen layered --nodes 14 --ccr 0.5 --seed 3 -o "$d/g.dpg"
step gen-chainmm 0 gen chainmm --parts 2 --dim 16 --layers 1 -o "$d/w.dpg"
step info 0 info "$d/g.dpg" --devices 2 --json
step convert-dpb 0 convert "$d/g.dpg" "$d/g.dpb"
step info-dpb 0 info "$d/g.dpb" --devices 2 --json
step train-doppler 0 train "$d/g.dpg" --devices 2 --stages il,sim,real --episodes 3,3,2 --hidden 4 \
    --layers 1 --out "$d/pol.dpl" --curve "$d/curve.csv" --curve-svg "$d/curve.svg"
step train-diverges 1 train "$d/g.dpg" --devices 2 --stages il --episodes 4 --lr 1e300 --hidden 4 --layers 1 \
    --out "$d/nan.dpl"
step train-placeto 0 train "$d/g.dpg" --algo placeto --devices 2 --episodes 2 --hidden 4 --out "$d/pt.dpl"
step place-doppler 0 place "$d/g.dpg" --method doppler --policy "$d/pol.dpl" --devices 2 --samples 2 \
    --out "$d/a.txt" --gantt "$d/place.svg"
step place-placeto 0 place "$d/g.dpg" --method placeto --policy "$d/pt.dpl" --devices 2 --json
step place-anneal 0 place "$d/g.dpg" --method anneal --devices 2 --budget 60 --order priority
step bench 0 bench "$d/g.dpg" --devices 2 --methods single,round-robin,random,cp,heft,enumopt
step sim 0 sim "$d/g.dpg" --assign "$d/a.txt" --devices 2 --gantt "$d/sim.svg" --json
step place-chainmm 0 place "$d/w.dpg" --method cp --devices 2 --out "$d/wa.txt"
step exec-chainmm 0 exec "$d/w.dpg" --assign "$d/wa.txt" --backend cpu --devices 2 --reps 1
step exec-opaque 0 exec "$d/g.dpg" --assign "$d/a.txt" --backend cpu --devices 2 --reps 1 --no-verify
printf 'doppler-graph 1\nop a compute=1\nop b compute=-4\n' >"$d/bad.dpg"
step bad-input 1 info "$d/bad.dpg"
head -c 800 "$d/g.dpb" >"$d/cut.dpb"
step bad-dpb 1 info "$d/cut.dpb"
echo "valgrind round: $(( $(date +%s) - t0 )) s"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
