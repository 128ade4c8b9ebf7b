#!/usr/bin/env bash
# tests/test_mpi.sh - the MPI executor under mpirun: build/test_mpi (the
# library: tests/test_mpi.c) with 2 and with 3 ranks, then the CLI
# (build/doppler_mpi) under mpirun: calibrate, exec and train --stages
# ...,real with --backend mpi, rank 0 alone printing and writing (and a
# leader stopped while it trains named by the other rank); a cluster
# whose machines are not the ranks, and bad input on one rank only, fail
# every rank with one message (printed once); a rank killed mid-run ends
# the run within seconds, named; the CLI built without MPI says how to get
# it. Skips, saying why, without mpirun or the MPI build
# (./build.sh builds it where mpicc is found). Run by ./build.sh test from
# the repository root; prints one closing line "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skipped() { skip=$((skip + 1)); echo "SKIP: $*"; }
done_() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" = 0 ]; exit; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

MPIRUN=$(command -v mpirun || true)
if [ -z "$MPIRUN" ]; then skipped "no mpirun: the MPI executor is not run (Debian: apt-get install openmpi-bin libopenmpi-dev)"; done_; fi
if [ ! -x build/test_mpi ] || [ ! -x build/doppler_mpi ]; then
    skipped "build/test_mpi or build/doppler_mpi missing: ./build.sh builds them where mpicc is found (Debian: libopenmpi-dev)"; done_
fi
# as root (CI's containers) and with more ranks than cores (the 2-core CI machine)
run() { timeout 120 "$MPIRUN" --allow-run-as-root --oversubscribe "$@"; }
D=build/doppler_mpi
# rank_script FILE RANK PIDFILE ARGS...: a script for mpirun that runs
# $D ARGS on every rank, RANK first writing its pid (then $D's: exec) to
# PIDFILE; wait_pid PIDFILE waits up to 10 s for it
rank_script() {
    local f=$1 r=$2 p=$3
    shift 3
    { echo '#!/bin/sh'
      echo "[ \"\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}\" = $r ] && echo \$\$ >\"$p\""
      echo "exec $D $(printf '%q ' "$@")"; } >"$f"
    chmod +x "$f"
}
wait_pid() { for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.1; done; }

# the library's tests, with 2 ranks and with 3
for np in 2 3; do
    run -np "$np" build/test_mpi >"$T/lib$np" 2>&1
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$T/lib$np" | tail -n 1)
    if [ -z "$line" ]; then bad "test_mpi -np $np printed no closing line:"; tail -n 15 "$T/lib$np" | sed 's/^/    /'; continue; fi
    read -r p _ f _ s _ <<<"$line"
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    [ "$f" = 0 ] || grep '^FAIL' "$T/lib$np" | sed "s/^/    np $np: /"
done

# calibrate: every rank measures, rank 0 prints one line and writes the file
build/doppler gen chainmm --parts 2 --dim 64 -o "$T/g.dpg" >/dev/null || bad "gen failed"
if run -np 2 $D calibrate --backend mpi -o "$T/c.dpc" >"$T/cal" 2>"$T/cal.err" && [ -s "$T/c.dpc" ]; then ok; else bad "calibrate --backend mpi failed:"; cat "$T/cal.err" | head -n 5; fi
if [ "$(wc -l <"$T/cal")" = 1 ] && grep -q '^2 CPU devices on 2 machines (ranks): ' "$T/cal"; then ok; else bad "calibrate: not one line from rank 0:"; cat "$T/cal"; fi
if grep -q '^nodes 2$\|node=1' "$T/c.dpc"; then ok; else bad "calibrate: the cluster file has no second machine"; fi

# exec: one JSON object, from rank 0, the outputs those of one process
build/doppler place "$T/g.dpg" --cluster "$T/c.dpc" --method cp -o "$T/a" >/dev/null || bad "place failed"
if run -np 2 $D exec "$T/g.dpg" --assign "$T/a" --cluster "$T/c.dpc" --backend mpi --json >"$T/ex" 2>"$T/ex.err"; then ok; else bad "exec --backend mpi failed:"; head -n 5 "$T/ex.err"; fi
if [ "$(wc -l <"$T/ex")" = 1 ] && grep -q '"backend": "mpi"' "$T/ex" && grep -q '"ranks": 2' "$T/ex" && grep -q '"outputs_match": true' "$T/ex"; then ok
else bad "exec --json: not one object from rank 0 with backend mpi, 2 ranks, outputs matching:"; cat "$T/ex"; fi

# 3 machines, 3 ranks; then 3 machines and 2 ranks: refused on every rank, said once
build/doppler gen ffnn --parts 3 --dim 48 --batch 16 -o "$T/f.dpg" >/dev/null
build/doppler place "$T/f.dpg" --devices 3 --machines 3 --internode 1e9,1e-5 --method heft -o "$T/fa" >/dev/null
if run -np 3 $D exec "$T/f.dpg" --assign "$T/fa" --devices 3 --machines 3 --internode 1e9,1e-5 --backend mpi --reps 2 >"$T/f3" 2>&1 \
   && grep -q 'mpi, 3 devices on 3 ranks' "$T/f3" && grep -q 'equal to the single-device run' "$T/f3"; then ok
else bad "exec with 3 ranks:"; head -n 8 "$T/f3"; fi
run -np 2 $D exec "$T/f.dpg" --assign "$T/fa" --devices 3 --machines 3 --internode 1e9,1e-5 --backend mpi >"$T/f2" 2>"$T/f2.err"
rc=$?
if [ "$rc" != 0 ] && [ "$(grep -c 'one rank per node' "$T/f2.err")" = 1 ] && [ ! -s "$T/f2" ]; then ok
else bad "3 machines on 2 ranks: exit $rc, the refusal not said once:"; cat "$T/f2.err" | head -n 5; fi

# bad input on rank 1 only: every rank fails with rank 1's message, printed once (by rank 0)
cat >"$T/one.sh" <<EOS
#!/bin/sh
a="$T/a"
[ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}}" = 1 ] && a="$T/missing"
exec $D exec "$T/g.dpg" --assign "\$a" --cluster "$T/c.dpc" --backend mpi
EOS
chmod +x "$T/one.sh"
run -np 2 "$T/one.sh" >"$T/b" 2>"$T/b.err"
rc=$?
if [ "$rc" != 0 ] && [ "$(grep -c "rank 1: .*missing" "$T/b.err")" = 1 ] && [ ! -s "$T/b" ]; then ok
else bad "a missing file on rank 1: exit $rc, not failed once with rank 1's message:"; head -n 5 "$T/b.err"; fi

# a rank that dies mid-run (SIGKILL): the run ends on every rank within
# seconds, not a hang, the dead rank named (by mpirun: a process that dies
# ends the job)
build/doppler gen layered --nodes 20 -o "$T/l.dpg" >/dev/null
build/doppler place "$T/l.dpg" --devices 2 --machines 2 --internode 1,0 --method round-robin -o "$T/l.a" >/dev/null
rank_script "$T/die.sh" 1 "$T/pid1" exec "$T/l.dpg" --assign "$T/l.a" --devices 2 --machines 2 --internode 1,0 --backend mpi --reps 200 --no-verify
start=$(date +%s)
run -np 2 "$T/die.sh" >"$T/die" 2>&1 &
job=$!
wait_pid "$T/pid1"
sleep 0.5
[ -s "$T/pid1" ] && kill -9 "$(cat "$T/pid1")" 2>/dev/null
wait $job
rc=$?
took=$(( $(date +%s) - start ))
if [ "$rc" != 0 ] && [ "$took" -lt 30 ] && grep -q 'rank 1' "$T/die"; then ok
else bad "a rank killed mid-run: exit $rc after ${took}s, rank 1 not named:"; grep -v '^-*$' "$T/die" | head -n 5; fi

# stage real across the ranks: rank 0 trains, both run every placement
if run -np 2 $D train "$T/g.dpg" --cluster "$T/c.dpc" --stages il,real --episodes 4,2 --backend mpi --out "$T/p.dpl" >"$T/tr" 2>"$T/tr.err" \
   && [ -s "$T/p.dpl" ] && grep -q "stage real: costs are the MPI executor's wall time" "$T/tr"; then ok
else bad "train --backend mpi:"; head -n 5 "$T/tr" "$T/tr.err"; fi

# a leader that stops answering while it trains (SIGSTOP: no beats): the
# other rank, waiting for its next placement, names rank 0 after
# --mpi-timeout and the job ends, not a hang
rank_script "$T/stop.sh" 0 "$T/pid0" train "$T/g.dpg" --cluster "$T/c.dpc" --stages il,real --episodes 1000000,2 --backend mpi --mpi-timeout 2 --out "$T/stop.dpl"
start=$(date +%s)
run -np 2 "$T/stop.sh" >"$T/stop" 2>&1 &
job=$!
wait_pid "$T/pid0"
sleep 1.5
[ -s "$T/pid0" ] && kill -STOP "$(cat "$T/pid0")" 2>/dev/null
for _ in $(seq 300); do grep -q 'rank 0 did not answer' "$T/stop" && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
took=$(( $(date +%s) - start ))
[ -s "$T/pid0" ] && kill -9 "$(cat "$T/pid0")" 2>/dev/null
wait $job
if grep -q 'rank 0 did not answer' "$T/stop" && [ "$took" -lt 25 ] && [ ! -e "$T/stop.dpl" ]; then ok
else bad "a leader stopped while training: not named within 25 s (${took}s):"; grep -v '^-*$' "$T/stop" | head -n 5; fi
[ -s "$T/pid0" ] && kill -9 "$(cat "$T/pid0")" 2>/dev/null

# each rank's devices on its GPUs (--mpi-devices cuda): with a GPU on the
# machine, the outputs those of --backend cuda on one device; without one,
# every rank fails with the CUDA runtime's reason, said once; a build
# without CUDA says so
run -np 2 $D exec "$T/g.dpg" --assign "$T/a" --cluster "$T/c.dpc" --backend mpi --mpi-devices cuda >"$T/gpu" 2>"$T/gpu.err"
rc=$?
if grep -q 'built without DP_WITH_CUDA' "$T/gpu.err"; then skipped "build/doppler_mpi was built without CUDA (./build.sh adds it where nvcc and mpicc are both found): --mpi-devices cuda not run"
elif grep -q 'no CUDA device: ' "$T/gpu.err"; then
    if [ "$rc" = 1 ] && [ "$(grep -c 'no CUDA device: ' "$T/gpu.err")" = 1 ] && grep -q '^doppler: rank 0: no CUDA device: .*(cuda' "$T/gpu.err" && [ ! -s "$T/gpu" ]; then ok
    else bad "--mpi-devices cuda without a GPU: exit $rc, not one clean failure with the runtime's reason:"; head -n 5 "$T/gpu.err"; fi
    skipped "no CUDA device here: exec --backend mpi --mpi-devices cuda not run on GPUs"
elif [ "$rc" = 0 ] && grep -q 'on their GPUs' "$T/gpu" && grep -q 'equal to the single-device run' "$T/gpu"; then ok
else bad "exec --backend mpi --mpi-devices cuda: exit $rc:"; head -n 5 "$T/gpu" "$T/gpu.err"; fi

# --mpi-timeout without --backend mpi is a usage error
build/doppler exec "$T/g.dpg" --assign "$T/a" --cluster "$T/c.dpc" --backend cpu --mpi-timeout 5 >/dev/null 2>"$T/mt"
rc=$?
if [ "$rc" = 2 ] && grep -q 'applies to --backend mpi' "$T/mt"; then ok
else bad "--mpi-timeout with --backend cpu: exit $rc:"; cat "$T/mt"; fi

# the CLI without MPI: --backend mpi says how to get it
build/doppler exec "$T/g.dpg" --assign "$T/a" --cluster "$T/c.dpc" --backend mpi >/dev/null 2>"$T/nompi"
rc=$?
if [ "$rc" = 1 ] && grep -q 'built without MPI' "$T/nompi" && grep -q 'doppler_mpi' "$T/nompi"; then ok
else bad "--backend mpi without MPI: exit $rc:"; cat "$T/nompi"; fi
done_
