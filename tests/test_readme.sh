#!/usr/bin/env bash
# tests/test_readme.sh [DOPPLER] - the README's examples run as written.
#
# Every shell command of README.md (the indented command blocks and the
# `build/doppler ...` examples of the command table), in the README's order,
# in a scratch folder that looks like the repository root (build/doppler is
# DOPPLER or $DOPPLER_CLI, default build/doppler; graphs/, demos/,
# policies/, doppler.h, doppler_cuda.cu linked in; prog.c is the README's C
# example): each must exit 0. Those that need what the repository does not
# ship (an ONNX model of your own), a GPU, nvcc or MPI skip with the reason
# (mpirun runs with --allow-run-as-root --oversubscribe added), and
# ./build.sh (which runs this test) is not run again. Then the C example
# compiles as C and as C++ (g++ -x c++) without a warning of its own and
# both print the same. Run by ./build.sh test from the repository root;
# prints one closing line "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
D=${1:-${DOPPLER_CLI:-build/doppler}}
case $D in /*) ;; *) D=$ROOT/$D ;; esac
CC=${CC:-gcc}
CXX=${CXX:-g++}
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skipped() { skip=$((skip + 1)); echo "SKIP: $*"; }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" = 0 ]; exit $?; }

if [ ! -x "$D" ]; then skipped "no CLI at $D (build it first)"; finish; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/build"
ln -s "$D" "$T/build/doppler"
for f in graphs demos policies doppler.h doppler_cuda.cu; do ln -s "$ROOT/$f" "$T/$f"; done
awk '/^```c$/ {f = 1; next} /^```$/ {f = 0} f' README.md >"$T/prog.c"

# The commands, one a line, in the README's order: indented lines (outside
# fenced blocks) that start with a command, and the examples of the
# command-line tool's table.
awk '
    /^```/ { fence = !fence; next }
    fence { next }
    /^    [^ ]/ {
        line = substr($0, 5)
        sub(/[ \t]+#.*$/, "", line)          # a trailing comment
        split(line, w, " ")
        if (w[1] ~ /^(\.\/build\.sh|build\/doppler|python3|cc|gcc|nvcc|mpicc|mpirun|cp)$/) print line
        next
    }
    /^## / { cli = $0 ~ /command-line tool/ }   # the examples table, not Results: reproduce
    /^\|/ && cli {
        n = split($0, cell, "|")
        ex = cell[n - 1]
        if (match(ex, /`build\/doppler [^`]*`/)) print substr(ex, RSTART + 1, RLENGTH - 2)
    }
' README.md >"$T/commands"
n=$(wc -l <"$T/commands")
if [ "$n" -ge 15 ]; then ok; else bad "only $n commands found in README.md (extraction broken?)"; fi

have_gpu=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU && have_gpu=1
# the files a skipped example would have written (its -o and --out): an
# example that reads one skips too, and so on down the chain (the README's
# MPI examples place with the cluster file 'mpirun ... calibrate' writes)
missing=" "
makes() { set -f; set -- $1; set +f; while [ $# -gt 1 ]; do case $1 in -o | --out) missing="$missing$2 " ;; esac; shift; done; }
reads_missing() { local w; set -f; for w in $1; do case $missing in *" $w "*) set +f; echo "$w"; return 0 ;; esac; done; set +f; return 1; }
while IFS= read -r cmd; do
    why=
    case $cmd in
        ./build.sh*) why="the build itself (it runs this test)" ;;
        *model.onnx* | *model.dpg*) why="needs an ONNX model of your own (model.onnx; tests/test_onnx.py covers the importer)" ;;
        nvcc*) command -v "${NVCC:-nvcc}" >/dev/null 2>&1 || why="no nvcc" ;;
        *"--backend cuda"*) [ "$have_gpu" = 1 ] || why="no GPU" ;;
        mpicc*) command -v mpicc >/dev/null 2>&1 || why="no mpicc (Debian: libopenmpi-dev)" ;;
        mpirun*)
            if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$T/build/doppler_mpi" ]; then why="no mpirun or no build/doppler_mpi"; else
                # as root (CI's containers), more ranks than cores (CI's 2 cores)
                cmd="mpirun --allow-run-as-root --oversubscribe ${cmd#mpirun }"
            fi ;;
    esac
    if [ -z "$why" ] && f=$(reads_missing "$cmd"); then why="needs $f, which a skipped example writes"; fi
    if [ -n "$why" ]; then skipped "'$cmd': $why"; makes "$cmd"; continue; fi
    if (cd "$T" && timeout 300 bash -c "$cmd" </dev/null >"$T/out" 2>"$T/err"); then ok; else
        bad "README example exits nonzero: $cmd"
        sed 's/^/    /' "$T/err" | tail -n 5
    fi
done <"$T/commands"

# the documents agree with bench/RESULTS.md: the pretrained policy's
# zero-shot count and its mean against anneal (the headline), Placeto's
# seeds (part 4), the CUDA executor's GPU run (part 6)
flat() { tr '\n' ' ' <"$1" | tr -s ' '; }
flat bench/RESULTS.md >"$T/results"; flat README.md >"$T/readme"; sed -n '1,/^#define/p' doppler.h | sed 's/^ *//' | flat /dev/stdin >"$T/top"
n=$(sed -n 's/.*zero-shot: at or below min(cp, heft) on \([0-9]*\) of 30.*/\1/p' "$T/results")
pct=$(sed -n 's/.*of 30 (target 90%: met), -\([0-9.]*\)% against anneal.*/\1/p' "$T/results")
if [ -n "$n" ] && [ -n "$pct" ]; then
    for f in readme top; do
        if grep -q "at or below cp and heft on $n of 30" "$T/$f" && grep -q "$pct% better than annealing" "$T/$f"; then ok; else
            bad "$f: not 'at or below cp and heft on $n of 30' and '$pct% better than annealing' (bench/RESULTS.md's headline)"; fi
    done
    if grep -q "behind cp and heft on $((30 - n)) of 30" "$T/readme"; then ok; else bad "README's limits: not 'behind cp and heft on $((30 - n)) of 30'"; fi
else
    bad "bench/RESULTS.md's headline: no zero-shot count or percentage found"
fi
if grep -q "5, 1, 5 of 5" "$T/results"; then
    if grep -q "5, 1 and 5 of 5 seeds" "$T/readme" && ! grep -qi "placeto leaves cp at every seed" "$T/readme"; then ok; else bad "README: Placeto's seeds are not RESULTS part 4's 5, 1, 5 of 5"; fi
    if ! grep -q "never leaves cp's placement (as on the reference graphs" "$T/results"; then ok; else bad "RESULTS part 10 says Placeto never leaves cp on the reference graphs; part 4: 5, 1, 5 of 5"; fi
fi
if grep -q "H100 80GB" "$T/results"; then
    if ! grep -qi "has not been run on a GPU" "$T/top"; then ok; else bad "doppler.h's top comment: the CUDA executor 'has not been run on a GPU', RESULTS part 6 ran it on an H100"; fi
fi

# the C example: as C and as C++, no warning of its own, the same output
for lang in c c++; do
    if [ "$lang" = c ]; then comp=("$CC" -std=gnu11); else comp=("$CXX" -x c++ -std=c++17); fi
    if (cd "$T" && "${comp[@]}" -O1 -Wall -Wextra -I. -o "prog-$lang" prog.c -lm -pthread) >"$T/cc.log" 2>&1; then
        if grep -q "prog\.c:[0-9]*:[0-9]*: \(warning\|error\)" "$T/cc.log"; then
            bad "the README's C example warns as $lang"
            grep "prog\.c:" "$T/cc.log" | head -n 5 | sed 's/^/    /'
        else ok; fi
        if (cd "$T" && "./prog-$lang" >"out-$lang"); then ok; else bad "the README's C example, compiled as $lang, exits nonzero"; fi
    else
        bad "the README's C example does not compile as $lang"
        grep -E "error" "$T/cc.log" | head -n 5 | sed 's/^/    /'
    fi
done
if [ -s "$T/out-c" ] && cmp -s "$T/out-c" "$T/out-c++"; then ok; else bad "the C example prints differently as C and as C++"; fi
finish
