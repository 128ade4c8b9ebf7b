#!/usr/bin/env bash
# .ci/fuzz.sh [SECONDS] - libFuzzer (clang) on every reader, one binary per
# target of tests/fuzz/fuzz.c, each run for SECONDS (default 60), DP_JOBS
# (2) at a time; run by ./build.sh fuzz. The implementation is compiled once
# (build/fuzz/doppler.o) and every target links it. New inputs go to
# build/fuzz/corpus-NAME, crashes to build/fuzz/crash-NAME-*; the seeds in
# tests/corpus are read only (add each crash to them and fix it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
secs=${1:-60}
JOBS=${DP_JOBS:-2}
F=build/fuzz
SAN="-std=gnu11 -g -O1 -I. -fsanitize=address,undefined"
TARGETS="native:DP_FUZZ_NATIVE:native doppler:DP_FUZZ_DOPPLER:doppler stg:DP_FUZZ_STG:stg
auto:DP_FUZZ_AUTO:native,doppler,stg cluster:DP_FUZZ_CLUSTER:cluster assign:DP_FUZZ_ASSIGN:assign
policy:DP_FUZZ_POLICY:policy binary:DP_FUZZ_BINARY:binary"

if ! echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' |
    clang -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then
    echo ".ci/fuzz.sh: needs clang with libFuzzer (-fsanitize=fuzzer)" >&2
    exit 1
fi
mkdir -p "$F"
echo "  CLANG $F/doppler.o"
clang $SAN -fsanitize=fuzzer-no-link -x c -DDOPPLER_IMPLEMENTATION -c -o "$F/doppler.o" doppler.h || exit 1

# each target: build, then run; DP_JOBS at a time
for t in $TARGETS; do
    IFS=: read -r name macro seeds <<<"$t"
    dirs=()
    for d in ${seeds//,/ }; do dirs+=("tests/corpus/$d"); done
    mkdir -p "$F/corpus-$name"
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n 2>/dev/null; done
    echo "  FUZZ  $name for ${secs}s"
    (
        rm -f "$F/$name.rc"
        clang $SAN -fsanitize=fuzzer -DDOPPLER_IMPLEMENTATION_DONE -DDP_FUZZ_TARGET="$macro" \
            -o "$F/$name" tests/fuzz/fuzz.c "$F/doppler.o" -lm -pthread || exit 1
        "$F/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$F/crash-$name-" "$F/corpus-$name" "${dirs[@]}"
        echo $? >"$F/$name.rc"
    ) >"$F/$name.log" 2>&1 </dev/null &
done
wait

bad=0 failed=()
printf '\n| target | seconds | executions | corpus | crashes |\n|---|---:|---:|---:|---:|\n'
for t in $TARGETS; do
    IFS=: read -r name macro seeds <<<"$t"
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$F/$name.log" | grep -o '[0-9]*$' | tail -n 1)
    crashes=$(find "$F" -maxdepth 1 -name "crash-$name-*" | wc -l)
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$secs" "${runs:-?}" "$(find "$F/corpus-$name" -type f | wc -l)" "$crashes"
    [ "$crashes" = 0 ] && [ "$(cat "$F/$name.rc" 2>/dev/null)" = 0 ] || { bad=1; failed+=("$name"); }
done
for name in ${failed[@]+"${failed[@]}"}; do echo "--- $name:"; tail -n 20 "$F/$name.log"; done
if [ "$bad" = 1 ]; then
    echo "failures: see $F/TARGET.log; crashes: $F/crash-*; reproduce with $F/TARGET FILE, then copy FILE into tests/corpus/"
    exit 1
fi
