#!/usr/bin/env bash
# build.sh - build, test, demo and bench doppler. No make, no cmake.
#
#   ./build.sh            build the CLI, demos, bench programs and tests into build/
#   ./build.sh test       build, then run every test program (tests/test_*.c,
#                         *.cpp, *.py, *.sh, then .ci/cli_test.sh); the last
#                         line is the total "N passed, N failed, N skipped"
#   ./build.sh sanitize   the same under -fsanitize=address,undefined (build/sanitize/)
#   ./build.sh valgrind   .ci/valgrind.sh: one short round of every CLI command
#                         under valgrind: zero errors and zero leaks
#   ./build.sh demo       build the CLI, train a DOPPLER policy (il, sim, real on
#                         the simulator), compare it with every heuristic, chart it
#   ./build.sh bench      bench/run.sh: markdown tables for bench/RESULTS.md
#   ./build.sh fuzz [S]   .ci/fuzz.sh: libFuzzer (clang) on every reader for S
#                         seconds each (default 60), seeded from tests/corpus/
#   ./build.sh clean      remove build/
#
# The implementation is compiled once per set of flags (build/doppler.o,
# build/sanitize/doppler.o) and the programs link it. Each is compiled with
# -DDOPPLER_IMPLEMENTATION_DONE, doppler.h's guard against a second copy of
# the implementation, so that its own "#define DOPPLER_IMPLEMENTATION" (every
# program stays buildable by one cc command, see README) adds nothing. These
# compile it themselves: learn_bench (-O3 -march=native), the C++ test, and
# the tests that name private dp__ functions, replace the allocator
# (DP_MALLOC) or test linkage (DOPPLER_STATIC, their _tuN files).
#
# With nvcc (found on PATH or in /usr/local/cuda), build/doppler and
# build/exec_bench are linked by nvcc with the CUDA executor (doppler_cuda.cu,
# compiled once into build/doppler_cuda.o; -DDP_WITH_CUDA: --backend cuda),
# and build/test_cuda_cu and the probe are added; without it everything is
# CPU-only and --backend cuda says so.
#
# With mpicc (Open MPI's or MPICH's wrapper, found on PATH), the MPI
# executor is built too (-DDP_WITH_MPI: --backend mpi): build/mpi/doppler.o,
# linked by build/doppler_mpi (the CLI, run under mpirun), build/test_mpi
# (run by tests/test_mpi.sh under mpirun with 2 and 3 ranks) and
# build/mpi_bench; without it they are not built and tests/test_mpi.sh skips.
# With both nvcc and mpicc, build/mpi/doppler.o also has -DDP_WITH_CUDA (a
# rank's devices may be its GPUs: --mpi-devices cuda) and those programs are
# linked by nvcc with mpicc as its host compiler (nvcc -ccbin mpicc: MPI's
# flags and libraries come with it; -lstdc++ for doppler_cuda.o) and
# build/doppler_cuda.o.
#
# Environment: CC (gcc), CXX (g++), NVCC (nvcc when found; "none": CPU-only),
# MPICC (mpicc when found; "none": no MPI build),
# DP_NVCC_ARCH (nvcc -arch, e.g. native or sm_90 on a GPU machine; default:
# sm_75 code with compute_75 and compute_80 PTX, which the driver compiles
# for the GPU at first use; the tensor-core matmul needs sm_80+),
# DP_JOBS (2 parallel compilations), DP_WERROR=1 or CI=true (add -Werror),
# DP_TEST_TIMEOUT (seconds per test program, 300), DP_DATA (the reference data,
# ../shared/data).
set -uo pipefail
cd "$(dirname "$0")" || exit 1

CC=${CC:-gcc}
CXX=${CXX:-g++}
JOBS=${DP_JOBS:-2}
TEST_TIMEOUT=${DP_TEST_TIMEOUT:-300}
WERROR=
if [ "${CI:-}" = true ] || [ "${DP_WERROR:-0}" = 1 ]; then WERROR=-Werror; fi
WARN="-Wall -Wextra $WERROR"
CFLAGS="-std=gnu11 -O2 $WARN -I."
CXXFLAGS="-std=c++17 -O2 $WARN -I."
LIBS="-lm -pthread"
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)}
[ "$NVCC" = none ] && NVCC=   # NVCC=none: CPU-only on purpose
# without DP_NVCC_ARCH: nvcc's default sm_75 code and PTX, plus compute_80 PTX
# (the tensor-core matmul, tf32/bf16 mma, needs sm_80+), which the driver
# compiles for an sm_80+ GPU at first use
NVARCH="-gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_80,code=compute_80"
[ -n "${DP_NVCC_ARCH:-}" ] && NVARCH="-arch=$DP_NVCC_ARCH"
NVFLAGS="-O2 -I. -Xcompiler -Wall,-Wextra $NVARCH"
[ -n "$WERROR" ] && NVFLAGS="$NVFLAGS -Werror all-warnings -Xcompiler -Werror"
NVLIBS="-lpthread -lm"
DATA=${DP_DATA:-../shared/data}   # the reference data, when present
MPICC=${MPICC:-$(command -v mpicc || true)}
[ "$MPICC" = none ] && MPICC=   # MPICC=none: no MPI build on purpose
MPI_OBJ=build/mpi/doppler.o

# stb_ds: only tests/test_stb_ds.c uses it (a program with its own stb_ds
# links with doppler, which needs nothing). build.sh installs nothing: the
# test skips without it, saying how to install it (.ci/run installs it)
want_stb() {
    if echo '#include <stb/stb_ds.h>' | "$CC" -E -x c - >/dev/null 2>&1; then return 0; fi
    echo "build.sh: stb_ds.h not found: tests/test_stb_ds.c will skip (Debian/Ubuntu: sudo apt-get install libstb-dev)"
}

# ---------------------------------------------------------------------------
# compiling, DP_JOBS at a time: each job logs to build/log/NAME.log and
# leaves its exit status in build/log/NAME.rc; finish_jobs shows the logs and
# collects the failed targets in FAILED.
# ---------------------------------------------------------------------------
JOB_NAMES=()
FAILED=()

finish_jobs() {
    wait
    local n rc
    for n in ${JOB_NAMES[@]+"${JOB_NAMES[@]}"}; do
        rc=$(cat "build/log/$n.rc" 2>/dev/null || echo 1)
        [ -s "build/log/$n.log" ] && { echo "--- $n:"; cat "build/log/$n.log"; }
        [ "$rc" = 0 ] || { echo "build.sh: FAILED to build $n"; FAILED+=("$n"); }
    done
    JOB_NAMES=()
}

# Up to date when OUT is newer than its inputs, every header, build.sh and
# the flags ($STAMP, rewritten when they change).
uptodate() {  # OUT INPUT...
    local out=$1 f
    shift
    [ -e "$out" ] || return 1
    for f in "$@" doppler.h tests/*.h tests/fuzz/*.c tests/test_*_tu[0-9].c build.sh "$STAMP"; do
        [ -e "$f" ] && [ "$f" -nt "$out" ] && return 1
    done
    return 0
}

set_stamp() {  # DIR FLAGS...
    STAMP=$1/.flags
    mkdir -p "$1" build/log
    shift
    [ "$(cat "$STAMP" 2>/dev/null)" = "$*" ] || echo "$*" >"$STAMP"
}

# job OUT "INPUTS" TAG CMD...: runs CMD in the background unless OUT is up to date
job() {
    local out=$1 inputs=$2 tag=$3 name
    shift 3
    uptodate "$out" $inputs && return 0
    echo "  $tag $out"
    rm -f "$out"
    name=$(echo "$out" | tr / _)
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n 2>/dev/null; done
    rm -f "build/log/$name.rc"
    ( "$@" >"build/log/$name.log" 2>&1; echo $? >"build/log/$name.rc" ) &
    JOB_NAMES+=("$name")
}

# built OUT: waits for OUT's job (if any); true when OUT is there
built() {
    local rc="build/log/$(echo "$1" | tr / _).rc"
    while [ ! -e "$rc" ] && [ -n "$(jobs -rp)" ]; do wait -n 2>/dev/null; done
    [ -e "$1" ]
}

cc_prog() {  # OUT "INPUTS" [FLAGS...]: a C program that compiles the implementation itself
    local out=$1 in=$2
    shift 2
    job "$out" "$in" "CC   " "$CC" $CFLAGS "$@" -o "$out" $in $LIBS
}

lib_prog() {  # OUT "INPUTS" [FLAGS...]: a C program linking $OBJ
    built "$OBJ" && cc_prog "$1" "$2 $OBJ" -DDOPPLER_IMPLEMENTATION_DONE "${@:3}"
}

nvcc_prog() {  # OUT "INPUTS" [FLAGS...]: a program linking build/doppler_cuda.o
    local out=$1 in="$2 $CUDA_OBJ"
    shift 2
    job "$out" "$in" NVCC "$NVCC" $NVFLAGS "$@" -o "$out" $in $NVLIBS
}

mpi_prog() {  # OUT "INPUTS" [FLAGS...]: an MPI program linking $MPI_OBJ (-DDP_WITH_MPI)
    local out=$1 in="$2 $MPI_OBJ"
    shift 2
    built "$MPI_OBJ" || return 0
    if [ -n "$NVCC" ] && built "$CUDA_OBJ"; then   # and a rank's GPUs (-DDP_WITH_CUDA)
        # nvcc links with mpicc, a C driver: the C++ runtime doppler_cuda.o needs named
        job "$out" "$in $CUDA_OBJ" NVCC "$NVCC" -ccbin "$MPICC" $NVFLAGS -DDP_WITH_MPI -DDP_WITH_CUDA -DDOPPLER_IMPLEMENTATION_DONE "$@" -o "$out" $in "$CUDA_OBJ" $NVLIBS -lstdc++
    else
        job "$out" "$in" MPICC "$MPICC" $CFLAGS -DDP_WITH_MPI -DDOPPLER_IMPLEMENTATION_DONE "$@" -o "$out" $in $LIBS
    fi
}

# the CLI and the executor benchmark: with the CUDA executor when nvcc is there
cli_prog() {  # OUT SRC [FLAGS...]
    if [ -n "$NVCC" ] && built "$CUDA_OBJ" && built "$OBJ"; then
        nvcc_prog "$1" "$2 $OBJ" -DDP_WITH_CUDA -DDOPPLER_IMPLEMENTATION_DONE "${@:3}"
    else
        lib_prog "$@"
    fi
}

# The pretrained policy compiled into every build of the CLI: its bytes as a
# C array (policies/embed.sh), which demos/doppler.c includes under
# DP_PRETRAINED_POLICY. A new policy file rebuilds the CLIs.
PRETRAINED=(-Ibuild '-DDP_PRETRAINED_POLICY="pretrained_policy.h"')
embed_policy() {
    mkdir -p build
    [ build/pretrained_policy.h -nt policies/doppler_family.dpl ] && [ build/pretrained_policy.h -nt policies/embed.sh ] && return 0
    policies/embed.sh policies/doppler_family.dpl build/pretrained_policy.h
    rm -f build/doppler build/sanitize/doppler build/doppler_mpi
}

# TEST_PROGS: the test programs of the last build_tests, in order. A test is
# tests/test_X.c with its further translation units tests/test_X_tuN.c.
TEST_PROGS=()
build_tests() {  # DIR
    local dir=$1 f stem in
    TEST_PROGS=()
    for f in tests/test_*.c; do
        stem=$(basename "$f" .c)
        case $stem in test_cuda | test_mpi | *_tu[0-9]) continue ;; esac   # nvcc, mpicc: in do_build; linked into test_X
        in="$f $(ls "tests/${stem}"_tu[0-9].c 2>/dev/null | tr '\n' ' ')"
        if grep -qE '#define (DP_MALLOC|DOPPLER_STATIC)|\bdp__[a-z]' $in; then
            cc_prog "$dir/$stem" "$in"
        else
            lib_prog "$dir/$stem" "$in"
        fi
        TEST_PROGS+=("$dir/$stem")
    done
    for f in tests/*.cpp; do
        stem=$(basename "$f" .cpp)
        job "$dir/${stem}_cpp" "$f" "CXX  " "$CXX" $CXXFLAGS -o "$dir/${stem}_cpp" "$f" $LIBS
        TEST_PROGS+=("$dir/${stem}_cpp")
    done
    # Python tests (the ONNX importer) and shell tests (the README's
    # examples, the build's own rules): run as they are, against $DOPPLER_CLI
    for f in tests/test_*.py tests/test_*.sh; do [ -e "$f" ] && TEST_PROGS+=("$f"); done
}

CUDA_OBJ=build/doppler_cuda.o
do_build() {  # [cli]: the CLI only
    want_stb
    set_stamp build "$CC $CFLAGS $CXX $CXXFLAGS $NVCC $NVFLAGS $MPICC"
    embed_policy
    OBJ=build/doppler.o
    job "$OBJ" "" "CC   " "$CC" $CFLAGS -x c -DDOPPLER_IMPLEMENTATION -c -o "$OBJ" doppler.h
    [ -n "$NVCC" ] && job "$CUDA_OBJ" doppler_cuda.cu NVCC "$NVCC" $NVFLAGS -c -o "$CUDA_OBJ" doppler_cuda.cu
    if [ -n "$MPICC" ] && [ "${1:-}" != cli ]; then
        mkdir -p build/mpi
        job "$MPI_OBJ" "" MPICC "$MPICC" $CFLAGS -x c -DDP_WITH_MPI ${NVCC:+-DDP_WITH_CUDA} -DDOPPLER_IMPLEMENTATION -c -o "$MPI_OBJ" doppler.h
    fi
    if [ "${1:-}" != cli ]; then
        # learning benchmarks: -O3 -march=native, the flags a user training on
        # this machine would use (the per-episode targets are measured so)
        cc_prog build/learn_bench bench/learn_bench.c -O3 -march=native
        [ -n "$NVCC" ] && built "$CUDA_OBJ" && nvcc_prog build/test_cuda_cu tests/test_cuda.c
        # clang's warnings on the CLI and exec_bench, with and without DP_WITH_CUDA
        command -v clang >/dev/null 2>&1 && job build/.clang-ok "demos/doppler.c bench/exec_bench.c" CLANG sh -c \
            "clang -std=gnu11 $WARN -I. -fsyntax-only demos/doppler.c && clang -std=gnu11 $WARN -I. -DDP_WITH_CUDA -fsyntax-only demos/doppler.c && clang -std=gnu11 $WARN -I. -DDP_WITH_CUDA -fsyntax-only bench/exec_bench.c && touch build/.clang-ok"
    fi
    [ -z "$NVCC" ] && echo "nvcc not found: building CPU-only"
    cli_prog build/doppler demos/doppler.c "${PRETRAINED[@]}"
    if [ "${1:-}" != cli ]; then
        cli_prog build/exec_bench bench/exec_bench.c
        lib_prog build/example demos/example.c
        lib_prog build/stg_bench bench/stg_bench.c
        lib_prog build/sim_bench bench/sim_bench.c
        lib_prog build/scale_bench bench/scale_bench.c
        build_tests build
        if [ -n "$MPICC" ]; then
            mpi_prog build/doppler_mpi demos/doppler.c "${PRETRAINED[@]}"
            mpi_prog build/test_mpi tests/test_mpi.c
            mpi_prog build/mpi_bench bench/mpi_bench.c
        else
            echo "mpicc not found: building without MPI (tests/test_mpi.sh skips; Debian: openmpi-bin libopenmpi-dev)"
        fi
        if [ -n "$NVCC" ] && built "$CUDA_OBJ"; then
            nvcc_prog build/doppler_cuda_probe "demos/cuda_probe.c $OBJ" -DDOPPLER_IMPLEMENTATION_DONE
            TEST_PROGS+=(build/test_cuda_cu)
        fi
    fi
    finish_jobs
    [ ${#FAILED[@]} -eq 0 ]
}

# ---------------------------------------------------------------------------
# running tests: every program from the repository root, its output shown;
# its closing line "N passed, N failed, N skipped" is added to the total. A
# program that crashes, times out, exits nonzero with no failure counted, or
# prints no closing line counts one failure more.
# ---------------------------------------------------------------------------
run_tests() {  # PROGRAM... ; then the CLI check with $CLI
    local tp=0 tf=0 ts=0 t name rc line p f s log
    mkdir -p build/log
    export DOPPLER_CLI=$CLI   # the CLI the Python tests run
    for t in "$@" cli; do
        name=$(basename "$t")
        log=build/log/run-$name.log
        echo "=== $name"
        if [ "$t" = cli ]; then
            timeout "$TEST_TIMEOUT" .ci/cli_test.sh "$CLI" </dev/null 2>&1 | tee "$log"
        else
            timeout "$TEST_TIMEOUT" "$t" </dev/null 2>&1 | tee "$log"
        fi
        rc=${PIPESTATUS[0]}
        line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
        if [ -n "$line" ]; then
            read -r p _ f _ s _ <<<"$line"
            tp=$((tp + p)); tf=$((tf + f)); ts=$((ts + s))
            if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
                echo "build.sh: $name exited with status $rc: counted as a failure"
                tf=$((tf + 1))
            fi
        else
            if [ "$rc" = 124 ]; then
                echo "build.sh: $name timed out after ${TEST_TIMEOUT}s: counted as a failure"
            else
                echo "build.sh: $name printed no closing line (exit status $rc): counted as a failure"
            fi
            tf=$((tf + 1))
        fi
    done
    # targets that did not build count as failures
    for t in ${FAILED[@]+"${FAILED[@]}"}; do
        echo "build.sh: $t did not build: counted as a failure"
        tf=$((tf + 1))
    done
    echo "$tp passed, $tf failed, $ts skipped"
    [ "$tf" = 0 ]
}

# only the programs that exist (a failed build leaves none)
existing() {
    local t
    for t in "$@"; do [ -x "$t" ] && echo "$t"; done
}

cmd_test() {
    do_build
    CLI=build/doppler
    local progs
    mapfile -t progs < <(existing ${TEST_PROGS[@]+"${TEST_PROGS[@]}"})
    run_tests ${progs[@]+"${progs[@]}"}
}

cmd_sanitize() {
    want_stb
    # no -Werror here: the instrumentation makes gcc warn where the plain
    # -O2 build (the warning check) does not, e.g. -Wformat-truncation
    local san="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    CFLAGS="-std=gnu11 -Wall -Wextra -I. $san"
    CXXFLAGS="-std=c++17 -Wall -Wextra -I. $san"
    set_stamp build/sanitize "$CC $CFLAGS $CXX $CXXFLAGS"
    embed_policy
    OBJ=build/sanitize/doppler.o
    job "$OBJ" "" "CC   " "$CC" $CFLAGS -x c -DDOPPLER_IMPLEMENTATION -c -o "$OBJ" doppler.h
    build_tests build/sanitize
    lib_prog build/sanitize/doppler demos/doppler.c "${PRETRAINED[@]}"
    finish_jobs
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    CLI=build/sanitize/doppler
    local progs
    mapfile -t progs < <(existing ${TEST_PROGS[@]+"${TEST_PROGS[@]}"})
    run_tests ${progs[@]+"${progs[@]}"}
}

cmd_demo() {
    do_build cli || exit 1
    local graphs g best name t0
    local train_graph=graphs/layered_100.dpg pol=build/demo_policy.dpl
    local samples=32   # at placement
    local sims
    t0=$(date +%s.%N)
    echo "== DOPPLER on one graph: $train_graph, 4 devices, from the pretrained policy"
    echo "   (policies/doppler_family.dpl), stages sim and real with per-op logits"
    echo "   (--op-logits 3: a device distribution per op, started from the policy's"
    echo "   placement, moved toward the 2 cheapest of every 32 episodes). Stage real"
    echo "   learns from a runtime's cost: the simulator stands in here, so that the demo"
    echo "   is short and the same on every machine (--backend cpu: the CPU executor's"
    echo "   wall time). The paper's pipeline from scratch: train --stages il,sim,real"
    echo
    build/doppler train "$train_graph" --init pretrained --stages sim,real --episodes 2000,500 --op-logits 3 --seed 1 \
        --out "$pol" --curve build/demo_curve.csv --curve-svg build/demo_curve.svg \
        --out-assign build/demo_search.assign | tee build/demo_train.out
    [ "${PIPESTATUS[0]}" = 0 ] || exit 1
    # doppler's simulations: training's (every episode and selection's
    # greedy scores, as train reports them), the greedy placement and the
    # samples; anneal gets as many (as in bench/RESULTS.md part 4)
    sims=$(sed -n 's/^trained [0-9]* episodes, \([0-9]*\) simulations.*/\1/p' build/demo_train.out)
    [ -n "$sims" ] || { echo "build.sh: no simulation count in train's output" >&2; exit 1; }
    sims=$((sims + 1 + samples))
    echo
    echo "== The learned placer (best of greedy and $samples samples) against every heuristic"
    echo "   (anneal given doppler's $sims simulations)"
    echo
    build/doppler bench "$train_graph" --methods all --policy "$pol" --samples "$samples" --budget "$sims" || exit 1
    build/doppler place "$train_graph" --method doppler --policy "$pol" --samples "$samples" \
        --gantt build/demo_doppler.svg --out build/demo_doppler.assign >/dev/null || exit 1
    echo
    echo "doppler's answer as DOPPLER deploys it, the best placement any of its training"
    echo "episodes reached (build/demo_search.assign):"
    build/doppler sim "$train_graph" --assign build/demo_search.assign | grep '^makespan' || exit 1
    echo "anneal at its default budget (20 x ops x devices simulations):"
    build/doppler place "$train_graph" --method anneal | grep '^makespan' || exit 1
    echo
    echo "Gantt chart of doppler on $(basename "$train_graph" .dpg): build/demo_doppler.svg"
    echo "Training curve: build/demo_curve.svg (every episode: build/demo_curve.csv)"
    echo

    mapfile -t graphs < <(printf '%s\n' graphs/*.dpg | sort -V)
    if [ -d "$DATA/doppler" ]; then
        graphs+=("$DATA"/doppler/*.txt)
    else
        echo "$DATA not found: the comparison runs on graphs/ only"
    fi
    echo "== Every graph, every heuristic and the pretrained policy (policies/doppler_family.dpl,"
    echo "   trained once on a family of generated graphs on 2, 4 and 8 devices; placed here"
    echo "   with greedy + 64 samples, no training). In its family: graphs/chainmm_256_p2,"
    echo "   ffnn_256_p2, llama_block_256_p2 and llama_layer_256_p2; unseen: the others and"
    echo "   the reference graphs. 4 devices (heft_example: its own 3 processors)."
    echo "   ratio = makespan / lower bound (max of critical path and work / devices)."
    echo
    local methods=single,round-robin,random,cp,heft,enumopt,anneal,doppler
    build/doppler bench "${graphs[@]}" --methods "$methods" || exit 1
    echo
    echo "== The pretrained policy's answer polished by one pass of local search"
    echo "   (place --polish 1: each op tried on every other device, a gain kept)"
    echo "   against anneal given as many simulations; ratio = makespan / lower bound"
    echo
    printf '%-32s %12s %12s %12s %12s\n' graph doppler "+ polish" simulations "anneal, as"
    local out pr ps pd ad wins=0 rows=0
    for g in "${graphs[@]}"; do
        out=$(build/doppler place "$g" --method doppler) || exit 1
        pd=$(echo "$out" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
        out=$(build/doppler place "$g" --method doppler --polish 1) || exit 1
        pr=$(echo "$out" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
        ps=$(echo "$out" | sed -n 's/^simulations *//p')
        ad=$(build/doppler place "$g" --method anneal --budget "$ps" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
        printf '%-32s %12s %12s %12s %12s\n' "$(basename "$g")" "$pd" "$pr" "$ps" "$ad"
        rows=$((rows + 1))
        awk -v a="$pr" -v b="$ad" 'BEGIN { exit !(a + 0 <= b + 0) }' && wins=$((wins + 1))
    done
    echo "doppler + polish at or below anneal given as many simulations on $wins of $rows graphs"
    echo
    echo "== The pretrained policy tuned on each graph: 2000 episodes of per-op logits from"
    echo "   its placement (place --improve 2000 --op-logits 3, seed 1: DOPPLER's stage II"
    echo "   on that graph), against anneal given as many simulations; ratio as above."
    echo "   Last, the network tuned for 6000 episodes and its best placement polished"
    echo "   (place --improve 6000 --polish 100) against anneal at its default budget"
    echo
    printf '%-32s %9s %12s %11s %16s %11s\n' graph "tuned" simulations "anneal, as" "anneal, default" "6000+polish"
    local full=0 full6=0 an p6
    wins=0 rows=0
    for g in "${graphs[@]}"; do
        out=$(build/doppler place "$g" --method doppler --improve 2000 --op-logits 3) || exit 1
        pr=$(echo "$out" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
        ps=$(echo "$out" | sed -n 's/^simulations *//p')
        ad=$(build/doppler place "$g" --method anneal --budget "$ps" | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
        an=$(build/doppler place "$g" --method anneal | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
        p6=$(build/doppler place "$g" --method doppler --improve 6000 --polish 100 | sed -n 's/^makespan .*(\(.*\) x lower bound)$/\1/p')
        printf '%-32s %9s %12s %11s %16s %11s\n' "$(basename "$g")" "$pr" "$ps" "$ad" "$an" "$p6"
        rows=$((rows + 1))
        awk -v a="$pr" -v b="$ad" 'BEGIN { exit !(a + 0 <= b + 0) }' && wins=$((wins + 1))
        awk -v a="$pr" -v b="$an" 'BEGIN { exit !(a + 0 <= b + 0) }' && full=$((full + 1))
        awk -v a="$p6" -v b="$an" 'BEGIN { exit !(a + 0 <= b + 0) }' && full6=$((full6 + 1))
    done
    echo "tuned doppler at or below anneal given as many simulations on $wins of $rows graphs,"
    echo "at or below anneal at its default budget (20 x ops x devices simulations) on $full of $rows;"
    echo "tuned 6000 and polished, at or below anneal at its default budget on $full6 of $rows"
    # Gantt charts of the best placement of one small and one larger graph
    for g in graphs/heft_example.dpg "$DATA/doppler/chain_mm_112nodes.txt"; do
        [ -e "$g" ] || g=graphs/layered_50.dpg
        [ -e "$g" ] || continue
        best=$(build/doppler bench "$g" --methods "$methods" --json |
            awk -F'"makespan": ' '/"method"/ {
                    split($0, a, "\"method\": \""); split(a[2], b, "\"");
                    split($2, c, ","); if (!n++ || c[1] + 0 < m) { m = c[1] + 0; meth = b[1] } }
                END { print meth }')
        [ -n "$best" ] || continue
        name=$(basename "$g")
        name=${name%.*}
        build/doppler place "$g" --method "$best" --gantt "build/demo_$name.svg" --out "build/demo_$name.assign" >/dev/null || exit 1
        echo "Gantt chart of $best on $name: build/demo_$name.svg"
    done
    echo
    awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN { printf "demo took %.1f s\n", t1 - t0 }'
}

case "${1:-build}" in
    build) do_build ;;
    test) cmd_test ;;
    sanitize) cmd_sanitize ;;
    demo) cmd_demo ;;
    bench) do_build && bench/run.sh ;;
    fuzz) .ci/fuzz.sh "${2:-60}" ;;
    valgrind) .ci/valgrind.sh ;;
    clean) rm -rf build ;;
    help | -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' ;;
    *)
        echo "usage: ./build.sh [build|test|sanitize|valgrind|demo|bench|fuzz [SECONDS]|clean]" >&2
        exit 2
        ;;
esac
