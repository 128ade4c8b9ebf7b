#!/usr/bin/env bash
# tests/test_build.sh - the build's own rules: ./build.sh installs nothing
# (no package manager runs; .ci/run installs what CI's tests need, stb_ds
# and Open MPI included), tests/test_stb_ds.c skips without stb_ds naming
# the command that installs it, doppler_cuda.cu compiles without a warning
# under nvcc with the host compiler at -O2 -Wall -Wextra (what DP_WERROR=1
# makes errors; skipped without nvcc), and so does doppler.h's MPI section
# under mpicc and mpicxx (skipped without them). Run by ./build.sh test from the repository
# root; prints one closing line "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.." || exit 1
CC=${CC:-gcc}
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skipped() { skip=$((skip + 1)); echo "SKIP: $*"; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# build.sh: no package manager outside comments and messages
if grep -vE '^[[:space:]]*#|^[[:space:]]*echo ' build.sh | grep -nE '\b(apt-get|apt|dnf|yum|pip3?|conda|brew)[[:space:]]+install\b' >"$T/inst"; then
    bad "build.sh installs packages:"; sed 's/^/    /' "$T/inst"
else ok; fi
if grep -q 'libstb-dev' .ci/run && grep -q 'stb_ds.h' .ci/run; then ok; else bad ".ci/run does not install libstb-dev for tests/test_stb_ds.c"; fi
if grep -q 'openmpi-bin' .ci/run && grep -q 'libopenmpi-dev' .ci/run; then ok; else bad ".ci/run does not install openmpi-bin and libopenmpi-dev for tests/test_mpi.sh"; fi

# the MPI section (DP_WITH_MPI): no warning as C under mpicc, as C++ under
# mpicxx (skipped without them); a program without DP_WITH_MPI never sees it
MPICC=${MPICC:-$(command -v mpicc || true)}
if [ -n "$MPICC" ] && [ "$MPICC" != none ]; then
    for lang in c c++; do
        comp=$MPICC std=-std=gnu11
        [ $lang = c++ ] && { comp=$(command -v mpicxx || true); std=-std=c++17; }
        [ -z "$comp" ] && { skipped "no mpicxx: the MPI section as C++ not checked"; continue; }
        if "$comp" -x $lang $std -O2 -Wall -Wextra -I. -DDP_WITH_MPI -DDOPPLER_IMPLEMENTATION -c -o "$T/mpi.o" doppler.h >"$T/mpi.log" 2>&1 && ! grep -qi warning "$T/mpi.log"; then ok
        else bad "doppler.h with DP_WITH_MPI as $lang ($comp): warnings or errors:"; head -n 10 "$T/mpi.log" | sed 's/^/    /'; fi
    done
else
    skipped "no mpicc: the MPI section's warnings not checked"
fi

# the stb_ds test without stb_ds: a skip whose reason is the install command
if "$CC" -std=gnu11 -O0 -I. -DDP_TEST_NO_STB_DS -o "$T/stb" tests/test_stb_ds.c tests/test_stb_ds_tu2.c -lm -pthread >"$T/cc.log" 2>&1; then
    "$T/stb" >"$T/out" 2>&1
    if grep -q '^SKIP: .*apt-get install libstb-dev' "$T/out" && grep -q '^0 passed, 0 failed, 1 skipped$' "$T/out"; then ok; else
        bad "tests/test_stb_ds.c without stb_ds: no skip naming 'apt-get install libstb-dev'"; sed 's/^/    /' "$T/out" | head -n 3
    fi
else
    bad "tests/test_stb_ds.c does not compile with -DDP_TEST_NO_STB_DS"; head -n 5 "$T/cc.log"
fi

# doppler_cuda.cu: no warning at -O2 (nvcc's host compiler warns there, not at -O0)
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)}
if [ -n "$NVCC" ] && [ "$NVCC" != none ]; then
    if "$NVCC" -std=c++17 -O2 -I. -Xcompiler -Wall,-Wextra,-O2 -c doppler_cuda.cu -o "$T/cuda.o" >"$T/nv.log" 2>&1; then
        if grep -qiE 'warning' "$T/nv.log"; then bad "doppler_cuda.cu warns under nvcc -Xcompiler -Wall,-Wextra,-O2:"; grep -iE -A2 'warning' "$T/nv.log" | head -n 12 | sed 's/^/    /'
        else ok; fi
    else
        bad "doppler_cuda.cu does not compile under nvcc"; head -n 10 "$T/nv.log" | sed 's/^/    /'
    fi
else
    skipped "no nvcc: doppler_cuda.cu's warnings not checked"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
