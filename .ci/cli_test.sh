#!/usr/bin/env bash
# .ci/cli_test.sh [DOPPLER] - checks build/doppler (or DOPPLER) end to end:
# every command, the JSON keys, the exit codes (0 ok, 1 failure, 2 bad usage)
# and the error messages. Run by ./build.sh test and sanitize from the
# repository root; prints one closing line "N passed, N failed, N skipped".
set -u
D=${1:-build/doppler}
DATA=${DP_DATA:-../shared/data}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skipped() { skip=$((skip + 1)); echo "skip: $*"; }

# expect RC DESC CMD... : runs CMD (stdout to $T/out, stderr to $T/err)
expect() {
    local want=$1 desc=$2 rc
    shift 2
    "$@" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
    if [ "$rc" = "$want" ]; then ok; else
        bad "$desc: exit $rc, expected $want"
        sed 's/^/    /' "$T/err" | head -n 5
    fi
}

# contains FILE PATTERN DESC
contains() {
    if grep -q -- "$2" "$1"; then ok; else bad "$3: no '$2' in $(basename "$1")"; sed 's/^/    /' "$1" | head -n 5; fi
}

HAVE_PY=0
command -v python3 >/dev/null 2>&1 && HAVE_PY=1
# json_check FILE PYTHON-EXPR DESC: the file is JSON (bound to j) and EXPR holds
json_check() {
    if [ "$HAVE_PY" = 0 ]; then skipped "$3 (no python3)"; return; fi
    if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" 2>"$T/pyerr"; then
        ok
    else
        bad "$3"
        sed 's/^/    /' "$T/pyerr" | tail -n 3
    fi
}

# ---- usage: exit 0 for help, 2 for bad usage -------------------------------
expect 0 "help" "$D" help
contains "$T/out" "commands:" "help lists the commands"
expect 0 "--help" "$D" --help
for c in info place sim bench train convert gen exec calibrate; do
    expect 0 "help $c" "$D" help "$c"
    expect 0 "$c --help" "$D" "$c" --help
    contains "$T/out" "usage: doppler $c" "$c --help shows its usage"
done
expect 2 "no command" "$D"
expect 2 "unknown command" "$D" frobnicate
expect 2 "help of an unknown command" "$D" help frobnicate
expect 2 "unknown option" "$D" info graphs/heft_example.dpg --frob
contains "$T/err" "unknown option '--frob'" "unknown option is named"
expect 2 "info without a graph" "$D" info
expect 2 "place without --method" "$D" place graphs/heft_example.dpg
expect 2 "unknown method" "$D" place graphs/heft_example.dpg --method nope
expect 2 "--devices 0" "$D" info graphs/heft_example.dpg --devices 0
expect 2 "--devices abc" "$D" info graphs/heft_example.dpg --devices abc
expect 2 "--devices without a value" "$D" info graphs/heft_example.dpg --devices
expect 2 "--devices and --cluster" "$D" info graphs/heft_example.dpg --devices 3 --cluster reference
expect 2 "bad --order" "$D" place graphs/heft_example.dpg --method cp --order lifo
expect 2 "bad --format" "$D" info graphs/heft_example.dpg --format xml
expect 2 "bad --seed" "$D" place graphs/heft_example.dpg --method random --seed -3
expect 2 "sim without --assign" "$D" sim graphs/heft_example.dpg
expect 2 "bench unknown method" "$D" bench graphs/heft_example.dpg --methods cp,nope
expect 2 "gen unknown shape" "$D" gen weird -o "$T/x.dpg"
expect 2 "gen without -o" "$D" gen layered --nodes 10
expect 2 "gen --density 2" "$D" gen layered --density 2 -o "$T/x.dpg"
expect 2 "convert with one argument" "$D" convert graphs/heft_example.dpg
expect 2 "convert --to xml" "$D" convert graphs/heft_example.dpg "$T/x" --to xml
expect 2 "--json and --md" "$D" bench graphs/heft_example.dpg --json --md
expect 2 "--memory -1" "$D" info graphs/heft_example.dpg --memory -1
contains "$T/err" "--memory: '-1' is not a number of bytes >= 0" "--memory -1: the message names the value"
expect 2 "--memory abc" "$D" place graphs/heft_example.dpg --method cp --memory abc
contains "$T/err" "--memory: 'abc' is not a number" "--memory abc: the message names the value"
expect 2 "--memory inf" "$D" sim graphs/heft_example.dpg --assign "$T/none.assign" --memory inf
expect 2 "--memory nan" "$D" bench graphs/heft_example.dpg --memory nan
expect 2 "--memory 5x" "$D" exec graphs/heft_example.dpg --assign "$T/none.assign" --backend cpu --memory 5x
expect 2 "--memory empty" "$D" train graphs/heft_example.dpg --out "$T/x.dpl" --memory ''
expect 2 "--memory-ratio 0" "$D" train graphs/heft_example.dpg --out "$T/x.dpl" --memory-ratio 0
contains "$T/err" "--memory-ratio: '0' is not a list of at most 8 numbers > 0" "--memory-ratio 0: the message names the value"
expect 2 "--memory-ratio, two values for three counts" "$D" train graphs/heft_example.dpg --out "$T/x.dpl" --devices 2,4,8 --memory-ratio 1.5,2
contains "$T/err" "2 values for 3 device counts" "--memory-ratio count: says why"
expect 2 "--memory-ratio with --memory" "$D" train graphs/heft_example.dpg --out "$T/x.dpl" --memory 10 --memory-ratio 2
# --memory-ratio 1.5: a -> b, each 100 resident bytes, a's output 10 (the
# transfer costs 10: unconstrained, cp and its imitation keep them together);
# one device needs 210, the devices hold 210 / 1.5 = 140 each: apart (110
# each, b's copy of a's output counted)
printf 'doppler-graph 1\nop a compute=1 bytes=10 resident=100\nop b compute=1 resident=100\nedge a b\n' >"$T/mr.dpg"
expect 0 "train without --memory-ratio" "$D" train "$T/mr.dpg" --devices 2 --stages il --episodes 20 --out "$T/mr.dpl" --out-assign "$T/mr.assign"
if [ "$(grep -v '^#' "$T/mr.assign" | sort -u | wc -l)" = 1 ]; then ok; else bad "train, unlimited: a and b apart: $(tr '\n' ' ' <"$T/mr.assign")"; fi
expect 0 "train --memory-ratio" "$D" train "$T/mr.dpg" --devices 2 --memory-ratio 1.5 --stages il --episodes 20 --out "$T/mr.dpl" --out-assign "$T/mr.assign"
if [ "$(grep -v '^#' "$T/mr.assign" | sort -u | wc -l)" = 2 ]; then ok; else bad "train --memory-ratio 1.5: the two ops share a device: $(tr '\n' ' ' <"$T/mr.assign")"; fi
expect 2 "--memory without a value" "$D" bench graphs/heft_example.dpg --memory
expect 2 "--memory for gen" "$D" gen layered --nodes 10 --memory 100 -o "$T/x.dpg"
contains "$T/err" "unknown option '--memory'" "gen takes no --memory"
expect 2 "gen layered --weights" "$D" gen layered --weights -o "$T/x.dpg"
contains "$T/err" "--weights is for the workloads" "--weights on a random DAG: says why"
expect 2 "gen chainmm --vocab" "$D" gen chainmm --vocab 64 -o "$T/x.dpg"
contains "$T/err" "--vocab is for gpt" "--vocab on chainmm: says why"
expect 2 "gen gpt --vocab 0" "$D" gen gpt --vocab 0 -o "$T/x.dpg"

# ---- failures: exit 1 with the library's message ---------------------------
expect 1 "missing graph" "$D" info "$T/none.dpg"
contains "$T/err" "none.dpg" "missing file is named"
printf 'doppler-graph 1\nop a compute=1\nop b compute=-4\n' >"$T/neg.dpg"
expect 1 "negative compute" "$D" info "$T/neg.dpg"
contains "$T/err" "neg.dpg:3" "parse error names file and line"
printf 'doppler-graph 1\nop a compute=1\nop b compute=1\nedge a b\nedge b a\n' >"$T/cyc.dpg"
expect 1 "cycle" "$D" info "$T/cyc.dpg"
expect 1 "missing cluster file" "$D" info graphs/heft_example.dpg --cluster "$T/none.dpc"
expect 1 "unknown preset" "$D" info graphs/heft_example.dpg --cluster nosuchpreset
expect 1 "devtimes 3 on 4 devices" "$D" info graphs/heft_example.dpg --devices 4
printf '0\n1\n7\n0\n0\n0\n0\n0\n0\n0\n' >"$T/bad.assign"
expect 1 "device out of range in assignment" "$D" sim graphs/heft_example.dpg --assign "$T/bad.assign"
contains "$T/err" "bad.assign" "assignment error names the file"
printf '0\n1\n' >"$T/short.assign"
expect 1 "short assignment" "$D" sim graphs/heft_example.dpg --assign "$T/short.assign"

# ---- gen, info, convert ----------------------------------------------------
expect 0 "gen layered" "$D" gen layered --nodes 40 --width 6 --density 0.4 --ccr 0.5 --seed 7 -o "$T/l.dpg"
expect 0 "gen random" "$D" gen random --nodes 30 --seed 3 -o "$T/r.dpg"
expect 0 "gen is deterministic" "$D" gen layered --nodes 40 --width 6 --density 0.4 --ccr 0.5 --seed 7 -o "$T/l2.dpg"
if cmp -s "$T/l.dpg" "$T/l2.dpg"; then ok; else bad "same seed, different graphs"; fi
expect 0 "gen to stdout" "$D" gen layered --nodes 12 -o -
contains "$T/out" "doppler-graph 1" "gen -o - writes the graph"
expect 0 "info --json" "$D" info "$T/l.dpg" --json
json_check "$T/out" "j['nodes'] == 40 and all(k in j for k in ('graph','nodes','edges','cp_length','lower_bound','devices')) and j['devices'] == 4 and j['lower_bound'] >= j['cp_length']" "info --json keys"
expect 0 "info human" "$D" info "$T/l.dpg" --devices 8
contains "$T/out" "lower bound" "info prints the lower bound"
printf '\357\273\277doppler-graph 1\r\nop a compute=2\r\nop b compute=3\r\nedge a b\r\n' >"$T/bom.dpg"
expect 0 "info on a graph with a byte-order mark and CRLF" "$D" info "$T/bom.dpg" --devices 1 --json
json_check "$T/out" "j['nodes'] == 2 and j['format'] == 'native' and j['cp_length'] == 5" "the marked graph: 2 ops, critical path 2 + 3"
expect 0 "convert native -> native" "$D" convert "$T/l.dpg" "$T/l3.dpg"
expect 0 "convert back" "$D" convert "$T/l3.dpg" "$T/l4.dpg"
if cmp -s "$T/l3.dpg" "$T/l4.dpg"; then ok; else bad "native round trip differs"; fi
expect 0 "convert to stdout" "$D" convert "$T/l.dpg" - --to native
contains "$T/out" "doppler-graph 1" "convert - writes the graph"
# the binary format: written by extension, read by its magic, back the same
expect 0 "convert native -> binary" "$D" convert "$T/l.dpg" "$T/l.dpb"
contains "$T/out" "wrote $T/l.dpb (binary): 40 ops" "convert names the binary format"
if [ "$(head -c 4 "$T/l.dpb" | od -An -tx1 | tr -d ' ')" = 89445042 ]; then ok; else bad ".dpb: no magic"; fi
expect 0 "info on a .dpb" "$D" info "$T/l.dpb" --json
json_check "$T/out" "j['nodes'] == 40 and j['format'] == 'binary'" "info on a .dpb: 40 ops, format binary"
cp "$T/out" "$T/info_dpb.json"
expect 0 "info on the .dpg" "$D" info "$T/l.dpg" --json
json_check "$T/out" "all(j[k] == json.load(open('$T/info_dpb.json'))[k] for k in ('nodes', 'edges', 'cp_length', 'lower_bound'))" "info: the .dpb and the .dpg agree"
expect 0 "convert binary -> native" "$D" convert "$T/l.dpb" "$T/l5.dpg"
if cmp -s "$T/l3.dpg" "$T/l5.dpg"; then ok; else bad "dpg -> dpb -> dpg differs"; fi
cp "$T/l.dpb" "$T/lb.bin"
expect 0 "a .dpb by its content, whatever its name" "$D" place "$T/lb.bin" --method heft --devices 3
expect 0 "--format binary" "$D" info "$T/lb.bin" --format binary
expect 0 "convert --to binary to a file of another name" "$D" convert "$T/l.dpg" "$T/l6.out" --to binary
if cmp -s "$T/l.dpb" "$T/l6.out"; then ok; else bad "--to binary: not the same .dpb"; fi
head -c 1000 "$T/l.dpb" >"$T/cut.dpb"
expect 1 "a cut .dpb" "$D" info "$T/cut.dpb"
contains "$T/err" "cut.dpb: offset 16: the header says" "a cut .dpb: the message names the offset"
contains "$T/err" "the file has 1000 (truncated)" "a cut .dpb: and the size"
expect 1 "a .dpb read as native" "$D" info "$T/l.dpb" --format native
contains "$T/err" "binary data (byte 0x1a at offset 6)" "a .dpb read as text: the byte"
expect 1 "a text file read as binary" "$D" info "$T/l.dpg" --format binary
contains "$T/err" "not a .dpb file" "a text file read as binary: the message"
expect 2 "--to with an unknown format" "$D" convert "$T/l.dpg" "$T/x.dpb" --to dpb
contains "$T/err" "(native, doppler, stg, binary)" "--to: the formats listed"

# ---- place, sim, bench -----------------------------------------------------
expect 0 "place heft" "$D" place graphs/heft_example.dpg --method heft --json --out "$T/h.assign" --gantt "$T/h.svg"
cp "$T/out" "$T/place.json"
json_check "$T/place.json" "j['schedule_length'] == 80 and j['devices'] == 3 and len(j['assignment']) == 10 and all(k in j for k in ('graph','method','devices','makespan','lower_bound','seconds','assignment'))" "heft on the HEFT example: schedule length 80 (the paper's)"
contains "$T/h.svg" "<svg" "place --gantt writes an SVG"
expect 0 "place --no-transfers" "$D" place graphs/heft_example.dpg --method heft --gantt "$T/nt.svg" --no-transfers
if grep -q "marker-end" "$T/h.svg" && ! grep -q "marker-end" "$T/nt.svg"; then ok; else bad "--no-transfers keeps the arrows out (and only then)"; fi
expect 0 "sim the heft assignment" "$D" sim graphs/heft_example.dpg --assign "$T/h.assign" --json
cp "$T/out" "$T/sim.json"
json_check "$T/sim.json" "len(j['ops']) == 10 and all(set(o) >= {'node','device','start','end'} for o in j['ops']) and j['makespan'] == json.load(open('$T/place.json'))['makespan']" "sim --json ops, makespan equal to place's"
expect 0 "sim human with gantt" "$D" sim graphs/heft_example.dpg --assign "$T/h.assign" --order priority --gantt "$T/s.svg"
contains "$T/out" "x lower bound" "sim prints the ratio"
contains "$T/s.svg" "</svg>" "sim --gantt writes a whole SVG"
expect 0 "place human" "$D" place "$T/l.dpg" --method cp --devices 3 --out "$T/l.assign"
contains "$T/out" "x lower bound" "place prints the ratio"
expect 0 "place anneal from a start" "$D" place "$T/l.dpg" --method anneal --devices 3 --budget 200 --start "$T/l.assign" --seed 5 --json
json_check "$T/out" "j['simulations'] >= 1 and j['makespan'] >= j['lower_bound'] * (1 - 1e-12)" "anneal --budget --start"
# enumopt from cp on layered_300 (4 devices): most moves are decided by
# their lower bound; simulated or bounded, each pass scores every op on
# each other device (900 moves), and 3 runs more are simulated (the start,
# the final scoring, the single-device fallback's)
expect 0 "place enumopt, the move bound" "$D" place graphs/layered_300.dpg --method enumopt --json
json_check "$T/out" "j.get('moves_bounded', 0) > j['simulations'] and (j['simulations'] + j['moves_bounded']) % 900 == 3" "enumopt: moves bounded, simulations + bounded whole passes"
# --time-limit: a budget of hours stopped after 0.5 s, said in the output
t0=$(date +%s)
expect 0 "place anneal --time-limit" "$D" place "$T/l.dpg" --method anneal --devices 3 --budget 2000000000 --time-limit 0.5 --json
json_check "$T/out" "j['time_limited'] is True and j['makespan'] >= j['lower_bound'] * (1 - 1e-12)" "anneal --time-limit says it stopped"
if [ $(( $(date +%s) - t0 )) -lt 10 ]; then ok; else bad "anneal --time-limit 0.5 ran $(( $(date +%s) - t0 )) s"; fi
expect 0 "place enumopt --time-limit (text)" "$D" place "$T/l.dpg" --method enumopt --devices 3 --time-limit 1e-6
contains "$T/out" "stopped by --time-limit" "enumopt --time-limit says it stopped"
# a limit not reached changes nothing (the seconds aside)
expect 0 "place anneal, no --time-limit" "$D" place "$T/l.dpg" --method anneal --devices 3 --budget 500 --json
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j.pop("seconds"); print(json.dumps(j, sort_keys=True))' "$T/out" >"$T/nolimit.json" 2>/dev/null
expect 0 "place anneal, --time-limit not reached" "$D" place "$T/l.dpg" --method anneal --devices 3 --budget 500 --time-limit 1000 --json
json_check "$T/out" "j.pop('time_limited') is False and j.pop('stopped_by') is None and j.pop('seconds') >= 0 and json.dumps(j, sort_keys=True) == open('$T/nolimit.json').read().strip()" "anneal: a time limit not reached, the same answer"
# bench: a row a clock stopped is marked '~', the legend says by what
expect 0 "bench anneal --time-limit" "$D" bench "$T/l.dpg" --methods cp,anneal --devices 3 --budget 2000000000 --time-limit 0.2
contains "$T/out" "anneal .*[0-9]~ " "bench marks the stopped row '~'"
contains "$T/out" "^~ stopped by --time-limit 0.2 s" "bench's legend for '~'"
expect 0 "bench anneal --time-limit --json" "$D" bench "$T/l.dpg" --methods cp,anneal --devices 3 --budget 2000000000 --time-limit 0.2 --json
json_check "$T/out" "[(r['time_limited'], r['stopped_by']) for r in j] == [(False, None), (True, 'time-limit')]" "bench --json: time_limited and stopped_by per row"
expect 0 "place on a preset" "$D" place "$T/l.dpg" --method heft --cluster homogeneous:2 --json
json_check "$T/out" "j['devices'] == 2" "--cluster homogeneous:2 gives 2 devices"
printf 'doppler-cluster 1\ndevices 3\nlink serial\nspeed 2\n' >"$T/c.dpc"
expect 0 "place on a cluster file" "$D" place "$T/l.dpg" --method cp --cluster "$T/c.dpc" --order priority --json
json_check "$T/out" "j['devices'] == 3 and j['order'] == 'priority'" "--cluster FILE and --order"
expect 0 "bench --json" "$D" bench "$T/l.dpg" "$T/r.dpg" --methods cp,heft,random --json
json_check "$T/out" "len(j) == 6 and all(r['makespan'] >= r['lower_bound'] * (1 - 1e-12) and len(r['assignment']) == r['ops'] for r in j)" "bench --json rows"
expect 0 "bench --md" "$D" bench "$T/l.dpg" --methods all --md
contains "$T/out" "|---" "bench --md prints a markdown table"
expect 0 "bench table" "$D" bench "$T/l.dpg" graphs/heft_example.dpg --methods single,cp
contains "$T/out" "best per graph" "bench prints the best method per graph"
expect 1 "bench with a bad graph" "$D" bench "$T/l.dpg" "$T/none.dpg" --methods cp
contains "$T/out" "cp" "bench keeps the good graph's rows"

# ---- memory: resident bytes and weights, refusals, infeasible cells ---------
# a and b share the weight W (1000 bytes) and hold their own resident bytes
printf 'doppler-graph 1\nweight W bytes=1000\nop a compute=1 bytes=10 resident=100 weights=W\nop b compute=1 bytes=10 mem=5 resident=50 weights=W\nedge a b\n' >"$T/w.dpg"
printf '0\n1\n' >"$T/w.assign"
expect 0 "info on a graph with a shared weight" "$D" info "$T/w.dpg" --devices 2 --memory 2e3 --json
# resident: 100 + 50 + W once; the largest op: a, its 100 and W's 1000
json_check "$T/out" "j['weights'] == 1 and j['resident_bytes'] == 1150 and j['max_op_resident'] == 1100 and j['max_op_resident_op'] == 'a' and j['memory'] == [2000, 2000]" "info: 1 weight, 1150 resident bytes, op a holds 1100, --memory on each device"
expect 0 "info text with a shared weight" "$D" info "$T/w.dpg" --devices 2
contains "$T/out" "^weights  *1$" "info prints the weights"
contains "$T/out" "^resident  *1150 bytes" "info prints the resident bytes"
contains "$T/out" "^largest op  *1100 bytes (op 'a'" "info prints the largest op's resident bytes"
contains "$T/out" "^memory  *unlimited" "info: unlimited memory by default"
expect 0 "info on a graph without resident bytes" "$D" info graphs/heft_example.dpg --json
json_check "$T/out" "j['weights'] == 0 and j['resident_bytes'] == 0 and j['max_op_resident'] == 0 and j['max_op_resident_op'] is None and j['memory'] == [0, 0, 0]" "info: no resident bytes, zeros"
# The runtime's peaks by hand (a on device 0, b on 1; W is held on both):
# device 0 holds 100 + 1000 from the start, and a's output (10) from a's
# start: 1110; device 1 holds 50 + 1000, the copy of a's output (10) from
# a's end, then b's output (10) and workspace (5) while b runs: 1075.
# Makespan: a 1, the copy 10 bytes at bandwidth 1, b 1.
expect 0 "sim with a shared weight" "$D" sim "$T/w.dpg" --assign "$T/w.assign" --devices 2 --json
json_check "$T/out" "j['peak_bytes'] == [1110, 1075] and j['makespan'] == 12" "sim: each device's peak by hand (1110, 1075), makespan 12"
expect 0 "sim at a peak equal to the memory" "$D" sim "$T/w.dpg" --assign "$T/w.assign" --devices 2 --memory 1110
contains "$T/out" "^0  .*  1110$" "sim prints device 0's peak"
expect 1 "sim over memory" "$D" sim "$T/w.dpg" --assign "$T/w.assign" --devices 2 --memory 1109 --gantt "$T/over.svg" --json
contains "$T/err" "device 0 peaks at 1110 bytes, over its memory of 1109" "sim over memory: the message names the device, its peak and its memory"
if [ ! -e "$T/over.svg" ] && [ ! -s "$T/out" ]; then ok; else bad "sim over memory wrote a chart or a result"; fi
printf 'doppler-cluster 1\ndevices 2\nmemory 1109\n' >"$T/m1109.dpc"
expect 1 "sim over a cluster file's memory" "$D" sim "$T/w.dpg" --assign "$T/w.assign" --cluster "$T/m1109.dpc"
contains "$T/err" "device 0 peaks at 1110 bytes, over its memory of 1109" "the cluster file's memory: the same refusal"
expect 0 "--memory 0 lifts a cluster file's memory" "$D" sim "$T/w.dpg" --assign "$T/w.assign" --cluster "$T/m1109.dpc" --memory 0 --gantt "$T/w.svg"
contains "$T/w.svg" "</svg>" "sim --gantt with memory tracked writes a whole SVG"
expect 1 "exec over memory" "$D" exec "$T/w.dpg" --assign "$T/w.assign" --backend cpu --devices 2 --memory 1109 --trace-svg "$T/over2.svg" --json
contains "$T/err" "device 0 peaks at 1110 bytes, over its memory of 1109" "exec over memory: refused with the simulator's peak"
if [ ! -e "$T/over2.svg" ] && [ ! -s "$T/out" ]; then ok; else bad "exec over memory ran or wrote something"; fi
expect 0 "exec at a peak equal to the memory" "$D" exec "$T/w.dpg" --assign "$T/w.assign" --backend cpu --devices 2 --memory 1110 --reps 1 --json
json_check "$T/out" "j['outputs_match'] is True and j['devices'] == 2" "exec within memory runs (the single-device check unlimited)"
# op a alone needs 10 + 100 + 1000 bytes: it fits on no device of 1100
expect 1 "place where an op fits nowhere" "$D" place "$T/w.dpg" --method cp --devices 2 --memory 1100 --out "$T/w_none.assign"
contains "$T/err" "op 'a'" "place infeasible: the message names the op"
if [ ! -e "$T/w_none.assign" ]; then ok; else bad "an infeasible place wrote an assignment"; fi
# four independent ops of 60 resident bytes, devices of 100: one op a device.
# On 4 devices single is infeasible and every other method places one op on
# each (makespan 1); on 2 devices every method is.
printf 'doppler-graph 1\nop a compute=1 resident=60\nop b compute=1 resident=60\nop c compute=1 resident=60\nop d compute=1 resident=60\n' >"$T/r4.dpg"
expect 0 "bench with an infeasible cell --json" "$D" bench "$T/r4.dpg" --devices 4 --memory 100 --json
json_check "$T/out" "[r['method'] for r in j] == ['single', 'round-robin', 'random', 'cp', 'heft', 'enumopt', 'anneal', 'pipeline'] and j[0]['infeasible'] is True and j[0]['makespan'] is None and j[0]['ratio'] is None and j[0]['assignment'] is None and 'no single device' in j[0]['reason'] and j[0]['lower_bound'] == 1 and all(r['infeasible'] is False and r['fallback'] is None and r['makespan'] == 1 and sorted(r['assignment']) == [0, 1, 2, 3] for r in j[1:])" "bench --json: single infeasible (makespan null), every other method one op a device"
expect 0 "bench with an infeasible cell" "$D" bench "$T/r4.dpg" --devices 4 --memory 100
contains "$T/out" "^r4 .* single  *infeasible  *1  *- " "the infeasible cell in the table"
contains "$T/out" "^r4 .* pipeline  *1  *1  *1.000 " "the table goes on after it"
contains "$T/out" "^  r4  *round-robin  *1 " "best per graph: the first placed method"
contains "$T/err" "r4.dpg with single: no single device" "the infeasible cell's reason on stderr"
expect 0 "bench --md with an infeasible cell" "$D" bench "$T/r4.dpg" --devices 4 --memory 100 --methods single,cp --md
contains "$T/out" "^| r4 .*| single  *| *infeasible |" "the infeasible cell in the markdown table"
if [ "$(grep -c '^| r4 ' "$T/out")" = 2 ]; then ok; else bad "bench --md: not 2 rows"; fi
expect 0 "bench where every method is infeasible" "$D" bench "$T/r4.dpg" --devices 2 --memory 100 --methods all
if [ "$(grep -c '^r4 .* infeasible ' "$T/out")" = 8 ] && ! grep -q "best per graph" "$T/out"; then ok; else bad "bench all infeasible: not 8 infeasible rows and no best"; fi
expect 1 "bench with an infeasible cell and a missing graph" "$D" bench "$T/r4.dpg" "$T/none.dpg" --devices 4 --memory 100 --methods single,cp
contains "$T/out" "^r4 .* cp  *1 " "bench: the infeasible cell and the good rows kept beside a bad graph"
expect 0 "train --memory" "$D" train "$T/r4.dpg" --devices 4 --memory 100 --stages il,sim --episodes 5,5 --hidden 4 --layers 1 --out "$T/r4.dpl" --out-assign "$T/r4.assign" --json
json_check "$T/out" "j['devices'] == 4 and j['best_found'][0]['cost'] == 1" "train within memory: the best placement found, one op a device (1)"
expect 0 "sim the training's best within memory" "$D" sim "$T/r4.dpg" --assign "$T/r4.assign" --devices 4 --memory 100 --json
json_check "$T/out" "sorted(j['assignment']) == [0, 1, 2, 3] and j['peak_bytes'] == [60, 60, 60, 60]" "the training's best: one op a device, 60 bytes each"

# ---- source names, mapping files, GPU presets ------------------------------
cat >"$T/src.dpg" <<'EOF'
doppler-graph 1
op in compute=0 bytes=4e6 source=x
op mm kind=matmul compute=4e12 bytes=4e6 source=a%20b,dup
op act kind=relu compute=1e6 bytes=4e6 source=dup,%D0%BD%23
edge in mm
edge mm act
EOF
expect 0 "place with a mapping file" "$D" place "$T/src.dpg" --method cp --devices 2 --out "$T/map.json"
expect 0 "the same placement as an assignment" "$D" place "$T/src.dpg" --method cp --devices 2 --out "$T/map.txt"
a=($(grep -v '^#' "$T/map.txt"))
if [ "${#a[@]}" = 3 ]; then ok; else bad "assignment file: $(tr '\n' ' ' <"$T/map.txt")"; fi
json_check "$T/map.json" "j['format'] == 'doppler-mapping 1' and j['mapping'] == {'x': ${a[0]:-9}, 'a b': ${a[1]:-9}, 'dup': [${a[1]:-9}, ${a[2]:-9}], '\u043d#': ${a[2]:-9}} and j['devices'] == 2 and j['entries'] == 5 and j['method'] == 'cp'" \
    "mapping: source names decoded, each on its op's device, a shared name as a list in op order"
# two machines: a transfer across them at --internode's bandwidth and latency
printf 'doppler-graph 1\nop a compute=1 bytes=100\nop b compute=1\nedge a b\n' >"$T/two.dpg"
printf '0\n1\n' >"$T/two.assign"
expect 0 "sim across two machines" "$D" sim "$T/two.dpg" --assign "$T/two.assign" --devices 2 --machines 2 --internode 50,0.5 --json
json_check "$T/out" "abs(j['makespan'] - (1 + 0.5 + 100 / 50 + 1)) < 1e-12" "makespan across machines: 1 + 0.5 + 100/50 + 1"
expect 0 "sim on one machine" "$D" sim "$T/two.dpg" --assign "$T/two.assign" --devices 2 --json
json_check "$T/out" "abs(j['makespan'] - 102) < 1e-12" "makespan on one machine: 1 + 100/1 + 1"
expect 2 "--machines without --internode" "$D" sim "$T/two.dpg" --assign "$T/two.assign" --devices 2 --machines 2
expect 2 "--internode with a comma and no latency" "$D" sim "$T/two.dpg" --assign "$T/two.assign" --devices 2 --machines 2 --internode 50,
contains "$T/err" "expected BANDWIDTH\[,LATENCY\]" "--internode 50,: the message"
expect 1 "--internode 0" "$D" sim "$T/two.dpg" --assign "$T/two.assign" --devices 2 --machines 2 --internode 0
contains "$T/err" "bandwidth 0 between nodes must be positive" "--internode 0: the library's message"
expect 0 "sim reads the mapping back" "$D" sim "$T/src.dpg" --assign "$T/map.json" --devices 2 --json
json_check "$T/out" "j['assignment'] == [${a[0]:-9}, ${a[1]:-9}, ${a[2]:-9}]" "sim --assign F.json: the placement place wrote"
printf '{"mapping": {"x": 0, "a b": 1, "dup": [1, 0]}}\n' >"$T/bad.json"
expect 1 "a mapping that leaves a name out" "$D" sim "$T/src.dpg" --assign "$T/bad.json" --devices 2
contains "$T/err" "op 'act': no device for" "a mapping without an entry: the message names the op"
expect 0 "convert keeps source names" "$D" convert "$T/src.dpg" "$T/src2.dpg"
contains "$T/src2.dpg" "source=dup,н%23" "convert: source names re-escaped"
expect 1 "STG cannot carry source names" "$D" convert "$T/src.dpg" "$T/src.stg"
contains "$T/err" "op 'in' has source names" "STG refusal names the op"
# 4e12 FLOPs of matmul on an H100 at bf16: 5 us + 4e12 / (0.7 x 989.4e12) s
expect 0 "place on an H100 preset" "$D" place "$T/src.dpg" --method single --cluster h100-sxm:2 --precision bf16 --json
json_check "$T/out" "abs(j['makespan'] - (3*5e-6 + 4e12/(0.7*989.4e12) + 1e6/(0.9*3.35e12/4))) < 1e-12" "H100 bf16 makespan by hand"
expect 2 "--precision without a preset" "$D" place "$T/src.dpg" --method cp --precision bf16
contains "$T/err" "applies to a GPU preset" "--precision alone: the message"
expect 1 "fp8 on an A100" "$D" info "$T/src.dpg" --cluster a100-sxm:2 --precision fp8
contains "$T/err" "has no fp8" "fp8 on an A100: the message"
expect 1 "nine GPUs on one board" "$D" info "$T/src.dpg" --cluster h100-sxm:9
contains "$T/err" "'9' not in 1..8" "h100-sxm:9: the message"

# ---- pipeline and the single-device fallback --------------------------------
# a -> c, b -> d, each of compute 2, on 2 devices: topological order a b c d
# cut into stages {a, b} {c, d} (4 each); c starts when a ends (2), d when b
# ends (4): makespan 6, below one device's 8 (no fallback)
printf 'doppler-graph 1\nop a compute=2\nop b compute=2\nop c compute=2\nop d compute=2\nedge a c\nedge b d\n' >"$T/pp.dpg"
expect 0 "place pipeline" "$D" place "$T/pp.dpg" --method pipeline --devices 2 --json
json_check "$T/out" "j['method'] == 'pipeline' and j['assignment'] == [0, 0, 1, 1] and j['makespan'] == 6 and j['fallback'] is None" "pipeline: stages {a, b} {c, d}, makespan 6, no fallback"
# a chain a(4) b(1) c(1) d(2): stages {a} {b, c, d} (4 and 4); with b, c, d
# of 50 resident bytes on devices of 100, {b, c, d} does not fit: {a, b}
# {c, d} (5 and 3). One device (8, the same makespan) holds 150: no fallback
printf 'doppler-graph 1\nop a compute=4\nop b compute=1 resident=50\nop c compute=1 resident=50\nop d compute=2 resident=50\nedge a b\nedge b c\nedge c d\n' >"$T/pm.dpg"
expect 0 "place pipeline, unlimited memory" "$D" place "$T/pm.dpg" --method pipeline --devices 2 --json
json_check "$T/out" "j['assignment'] == [0, 1, 1, 1] and j['makespan'] == 8 and j['fallback'] is None" "pipeline: stages {a} {b, c, d}"
expect 0 "place pipeline within memory" "$D" place "$T/pm.dpg" --method pipeline --devices 2 --memory 100 --json
json_check "$T/out" "j['assignment'] == [0, 0, 1, 1] and j['makespan'] == 8 and j['fallback'] is None" "pipeline within memory: stages {a, b} {c, d}"
expect 0 "place pipeline text" "$D" place "$T/pp.dpg" --method pipeline --devices 2
contains "$T/out" "^method  *pipeline$" "place names the pipeline method"
if grep -q "^fallback" "$T/out"; then bad "place pipeline: a fallback line without a fallback"; else ok; fi
# a -> b -> c, compute 1, edges of 100 bytes at bandwidth 1: round-robin puts
# b on device 1 (1 + 100 + 1 + 100 + 1 = 203); one device takes 3
printf 'doppler-graph 1\nop a compute=1 bytes=100\nop b compute=1 bytes=100\nop c compute=1\nedge a b\nedge b c\n' >"$T/ch.dpg"
expect 0 "place round-robin: the single-device fallback" "$D" place "$T/ch.dpg" --method round-robin --devices 2 --json
json_check "$T/out" "j['fallback'] == 'single' and j['assignment'] == [0, 0, 0] and j['makespan'] == 3" "round-robin on the chain: fallback single, device 0, makespan 3"
expect 0 "place round-robin: the fallback in text" "$D" place "$T/ch.dpg" --method round-robin --devices 2
contains "$T/out" "^fallback  *single device 0: better than round-robin's own answer" "place says it fell back to one device"
expect 0 "place doppler: the fallback field" "$D" place "$T/ch.dpg" --method doppler --devices 2 --json
json_check "$T/out" "j['fallback'] in (None, 'single') and j['makespan'] == 3 and (j['fallback'] is None or j['assignment'] == [0, 0, 0])" "doppler on the chain: never worse than one device (3)"
expect 0 "place doppler --improve: the fallback field" "$D" place "$T/ch.dpg" --method doppler --devices 2 --improve 5 --samples 2 --json
json_check "$T/out" "j['fallback'] in (None, 'single') and j['makespan'] == 3" "doppler --improve on the chain: never worse than one device (3)"
expect 0 "bench marks the fallback" "$D" bench "$T/ch.dpg" --devices 2 --methods round-robin,cp --json
json_check "$T/out" "[r['fallback'] for r in j] == ['single', None] and [r['makespan'] for r in j] == [3, 3]" "bench --json: fallback single for round-robin, null for cp"
expect 0 "bench marks the fallback in text" "$D" bench "$T/ch.dpg" --devices 2 --methods round-robin,cp
contains "$T/out" "^ch .* round-robin  *3\* " "bench: the fallback's makespan marked '*'"
contains "$T/out" "^ch .* cp  *3  " "bench: cp's own makespan unmarked"
contains "$T/out" "^\* a fallback: the best single device" "bench: the legend of '*'"

# ---- costs whose sums overflow: refused, never a result of inf or nan --------
printf 'doppler-graph 1\nop a compute=1e308\nop b compute=1e308\nedge a b\n' >"$T/sum.dpg"
for c in info place sim; do
    case $c in
        place) args=(--method heft) ;;
        sim) printf '0\n0\n' >"$T/sum.assign"; args=(--assign "$T/sum.assign") ;;
        *) args=() ;;
    esac
    expect 1 "$c on a graph of 1e308 + 1e308" "$D" "$c" "$T/sum.dpg" "${args[@]}"
    contains "$T/err" "sum.dpg: op 'b' (node 1): the total compute of the ops up to it, 1e+308 + 1e+308, is not finite" "$c: the message names the file, the op and the sum"
    if sed "s|$T||g" "$T/out" | grep -Eqi '(^|[^a-z])(inf|nan)([^a-z]|$)'; then bad "$c printed inf or nan"; else ok; fi
done
printf 'doppler-graph 1\nop a compute=1e308\nop b compute=1\nedge a b\n' >"$T/big.dpg"
expect 0 "place a(1e308) -> b(1): finite" "$D" place "$T/big.dpg" --method heft --devices 2
# (the temporary directory's random name left out of the search)
if sed "s|$T||g" "$T/out" | grep -Eqi '(^|[^a-z])(inf|nan)([^a-z]|$)'; then bad "place a(1e308) -> b(1) printed inf or nan"; sed 's/^/    /' "$T/out"; else ok; fi
contains "$T/out" "100.0%" "a(1e308) -> b(1): device 0 busy all along"
printf 'doppler-cluster 1\ndevices 2\nspeed 0.5\n' >"$T/half.dpc"
expect 1 "place a(1e308) on speed 0.5" "$D" place "$T/big.dpg" --method heft --cluster "$T/half.dpc"
contains "$T/err" "big.dpg on the cluster $T/half.dpc: op 'a' (node 0): its time on device 0 (compute 1e+308 at speed 0.5) is not finite" "speed 0.5: names the graph, the cluster and the op"

# ---- output files: one rule for every file written --------------------------
# a regular file or a new name: PATH.tmp, renamed; a symbolic link: written
# through (the link stays); a device or a FIFO: written in place
expect 0 "--gantt /dev/null" "$D" place graphs/heft_example.dpg --method heft --gantt /dev/null --out /dev/null
if [ -c /dev/null ] && [ ! -e /dev/null.tmp ]; then ok; else bad "/dev/null is no longer a character device"; fi
if [ -c /dev/full ]; then
    expect 1 "--out /dev/full" "$D" place graphs/heft_example.dpg --method heft --out /dev/full
    contains "$T/err" "/dev/full: write error: No space left on device" "/dev/full: the message names the file and ENOSPC"
    expect 1 "gen -o /dev/full" "$D" gen layered --nodes 12 -o /dev/full
    expect 1 "--gantt /dev/full" "$D" place graphs/heft_example.dpg --method heft --gantt /dev/full
    contains "$T/err" "/dev/full: write error" "--gantt /dev/full: the message names the file"
    if [ -c /dev/full ] && [ ! -e /dev/full.tmp ]; then ok; else bad "/dev/full is no longer a character device"; fi
else
    skipped "no /dev/full here"
fi
expect 0 "place --out FILE" "$D" place graphs/heft_example.dpg --method heft --out "$T/plain.assign"
echo old >"$T/target.assign"
ln -s target.assign "$T/link.assign"
expect 0 "place --out LINK" "$D" place graphs/heft_example.dpg --method heft --out "$T/link.assign"
if [ -L "$T/link.assign" ] && [ "$(readlink "$T/link.assign")" = target.assign ]; then ok; else bad "--out LINK replaced the link"; fi
if cmp -s "$T/plain.assign" "$T/target.assign"; then ok; else bad "--out LINK: the link's target does not hold the assignment"; fi
ln -s made.dpg "$T/dangling.dpg"
expect 0 "gen -o DANGLING-LINK" "$D" gen layered --nodes 12 -o "$T/dangling.dpg"
if [ -L "$T/dangling.dpg" ] && [ -f "$T/made.dpg" ] && head -n 1 "$T/made.dpg" | grep -q "doppler-graph 1"; then ok; else bad "a dangling link's target was not created"; fi
ln -s loop2 "$T/loop1"; ln -s loop1 "$T/loop2"
expect 1 "--out a loop of links" "$D" place graphs/heft_example.dpg --method heft --out "$T/loop1"
contains "$T/err" "symbolic links" "a loop of links: says why"
if [ -L "$T/loop1" ] && [ -L "$T/loop2" ]; then ok; else bad "a loop of links was replaced"; fi
if mkfifo "$T/fifo"; then
    timeout 20 cat "$T/fifo" >"$T/fifo.got" &
    reader=$!
    expect 0 "place --out FIFO" "$D" place graphs/heft_example.dpg --method heft --out "$T/fifo"
    : <>"$T/fifo"   # releases the reader whatever happened (opening read-write never waits)
    wait "$reader"
    if cmp -s "$T/plain.assign" "$T/fifo.got"; then ok; else bad "the FIFO's reader did not get the assignment"; fi
    if [ -p "$T/fifo" ] && [ ! -e "$T/fifo.tmp" ]; then ok; else bad "the FIFO is no longer a FIFO"; fi
else
    skipped "mkfifo failed"
fi
ln -s curve-target.csv "$T/curve-link.csv"
expect 0 "train: policy and SVG to /dev/null, --curve LINK" "$D" train graphs/heft_example.dpg --episodes 3,3 --hidden 4 --layers 1 \
    --out /dev/null --curve-svg /dev/null --curve "$T/curve-link.csv"
if [ -L "$T/curve-link.csv" ] && [ "$(wc -l <"$T/curve-target.csv")" = 7 ]; then ok; else bad "--curve LINK: the target holds the header and 6 rows, the link stays"; fi
"$D" gen layered --nodes 12 --seed 7 -o /dev/stdout 2>"$T/err" </dev/null | cat >"$T/stdout.dpg"
"$D" gen layered --nodes 12 --seed 7 -o "$T/file.dpg" >/dev/null 2>&1 </dev/null
# the graph, then gen's own line "wrote /dev/stdout ..."
if diff <(grep -v '^wrote /dev/stdout' "$T/stdout.dpg") "$T/file.dpg" >/dev/null && [ "$(tail -n 1 "$T/stdout.dpg" | cut -c1-17)" = "wrote /dev/stdout" ]; then ok; else bad "gen -o /dev/stdout into a pipe: not the graph of gen -o FILE, then its line"; fi
"$D" gen layered --nodes 12 --seed 7 -o /dev/stdout >"$T/stdout2.dpg" 2>"$T/err" </dev/null
if [ "$(head -n 1 "$T/stdout2.dpg")" = "doppler-graph 1" ] && grep -q "^wrote /dev/stdout" "$T/stdout2.dpg"; then ok; else bad "gen -o /dev/stdout > FILE: the graph and then the CLI's line"; fi

# ---- train, place --method doppler, bench with the policy -------------------
G=graphs/layered_50.dpg
TR=(train "$G" --stages il,sim --episodes 30,30 --hidden 8 --layers 1 --seed 3)
expect 0 "train a tiny policy" "$D" "${TR[@]}" --out "$T/p.dpl" --curve "$T/c.csv" --curve-svg "$T/c.svg"
if [ -s "$T/p.dpl" ]; then ok; else bad "train writes the policy file"; fi
contains "$T/out" "stage il" "train prints a summary line per stage (not a terminal)"
contains "$T/out" "stage sim" "train prints the sim stage's summary"
if [ "$(head -n 1 "$T/c.csv")" = "stage,episode,graph,cost,lower_bound,ratio,best,epsilon,lr,loss,entropy,seconds" ]; then ok; else bad "curve CSV header"; fi
if [ "$(wc -l <"$T/c.csv")" = 61 ]; then ok; else bad "curve CSV: header + 60 rows, got $(wc -l <"$T/c.csv") lines"; fi
contains "$T/c.svg" "</svg>" "train --curve-svg writes a whole SVG"
expect 0 "train again, same seed" "$D" "${TR[@]}" --out "$T/p2.dpl"
if cmp -s "$T/p.dpl" "$T/p2.dpl"; then ok; else bad "same seed, different policy files"; fi
expect 0 "train --json with stage real" "$D" train "$G" --stages il,real --episodes 5,5 --hidden 8 --layers 1 --shared-gnn --order priority --lr 1e-3 --entropy 0.01 --out "$T/p3.dpl" --json
contains "$T/err" "no --backend given, costs come from the simulator" "stage real says it runs on the simulator"
json_check "$T/out" "j['episodes'] == 10 and [s['stage'] for s in j['stages']] == ['il', 'real'] and j['shared_gnn'] and j['greedy'][0]['ratio'] >= 1 - 1e-12" "train --json summary"
# train --time-limit: stopped after the first episode past it, the policy
# at the stop written and usable; --progress on stderr (not a terminal)
t0=$(date +%s)
expect 0 "train --time-limit --progress" "$D" train "$G" --stages il,sim --episodes 100000,100000 --hidden 8 --layers 1 --time-limit 1.5 --progress --out "$T/tl.dpl"
contains "$T/out" "^stopped by --time-limit 1.5 s: the policy is the one at the stop" "train --time-limit says it stopped"
contains "$T/err" "^train: [0-9]* of 100000 ([0-9]*%) il episodes, best makespan .*, [0-9]* s left$" "train --progress: stage, episodes and time left on stderr"
if [ $(( $(date +%s) - t0 )) -lt 15 ]; then ok; else bad "train --time-limit 1.5 ran $(( $(date +%s) - t0 )) s"; fi
expect 0 "place with the time-limited policy" "$D" place "$G" --method doppler --policy "$T/tl.dpl" --json
expect 0 "train --time-limit --json" "$D" train "$G" --stages il,sim --episodes 100000,100000 --hidden 8 --layers 1 --time-limit 0.5 --out "$T/tl.dpl" --json
json_check "$T/out" "j['time_limited'] is True and 0 < j['episodes'] < 200000" "train --json: time_limited"
expect 0 "train --time-limit not reached" "$D" "${TR[@]}" --time-limit 1000 --out "$T/p4.dpl" --json
json_check "$T/out" "j['time_limited'] is False" "train --json: a time limit not reached"
if cmp -s "$T/p.dpl" "$T/p4.dpl"; then ok; else bad "train: a time limit not reached changed the policy file"; fi
expect 0 "place --method doppler" "$D" place "$G" --method doppler --policy "$T/p.dpl" --json --out "$T/d.assign"
cp "$T/out" "$T/d.json"
json_check "$T/d.json" "j['method'] == 'doppler' and len(j['assignment']) == 50 and sorted(j['sel_order']) == list(range(50)) and j['makespan'] >= j['lower_bound'] * (1 - 1e-12) and all(k in j for k in ('ratio','seconds'))" "place doppler --json"
expect 0 "sim the doppler assignment" "$D" sim "$G" --assign "$T/d.assign" --json
json_check "$T/out" "j['makespan'] == json.load(open('$T/d.json'))['makespan']" "doppler's assignment simulates to the same makespan"
expect 0 "place doppler --samples, priority" "$D" place "$G" --method doppler --policy "$T/p.dpl" --samples 8 --order priority --gantt "$T/d.svg"
contains "$T/out" "x lower bound" "place doppler prints the ratio"
expect 0 "place doppler on an unseen graph" "$D" place "$T/r.dpg" --method doppler --policy "$T/p.dpl" --devices 3 --json
json_check "$T/out" "j['devices'] == 3 and len(j['assignment']) == 30" "the policy places an unseen graph"
head -c 100 "$T/p.dpl" >"$T/trunc.dpl"
expect 1 "truncated policy file" "$D" place "$G" --method doppler --policy "$T/trunc.dpl"
contains "$T/err" "trunc.dpl" "truncated policy: the message names the file"
expect 1 "missing policy file" "$D" place "$G" --method doppler --policy "$T/none.dpl"
# without --policy: the pretrained policy compiled in (policies/doppler_family.dpl), 64 samples
expect 0 "place doppler without --policy: the pretrained policy" "$D" place "$G" --method doppler
contains "$T/out" "doppler_family.dpl, pretrained" "the pretrained policy named"
contains "$T/out" "insertion" "the pretrained policy's partial schedule fills idle gaps (--insertion)"
contains "$T/out" "^samples  *64 " "the pretrained policy's 64 samples"
# 2 to 66: the greedy placement and the best single device (the fallback)
# always, and of the 64 samples only those that can still win (a sample
# whose busiest device has more work than the best makespan so far cannot)
sims=$(awk '/^simulations/ { print $2 }' "$T/out")
if [ -n "$sims" ] && [ "$sims" -ge 2 ] && [ "$sims" -le 66 ]; then ok; else bad "greedy + 64 samples + one device: '$sims' simulations, not 2..66"; fi
# --threads: the same placement and makespan from the samples drawn on 3 threads
expect 0 "place doppler --threads 1" "$D" place "$G" --method doppler --out "$T/thr1.assign"
grep '^makespan' "$T/out" >"$T/thr1.ms"
expect 0 "place doppler --threads 3" "$D" place "$G" --method doppler --threads 3 --out "$T/thr3.assign"
grep '^makespan' "$T/out" >"$T/thr3.ms"
if cmp -s "$T/thr1.assign" "$T/thr3.assign" && cmp -s "$T/thr1.ms" "$T/thr3.ms"; then ok; else bad "doppler's samples on 3 threads: another placement or makespan than on one"; fi
expect 2 "place cp --threads 2" "$D" place "$G" --method cp --threads 2
contains "$T/err" "doppler's samples" "--threads with a heuristic says what it is for"
expect 2 "place doppler --threads 0" "$D" place "$G" --method doppler --threads 0
expect 0 "place doppler --polish 2" "$D" place "$G" --method doppler --polish 2 --json --out "$T/pol.assign"
cp "$T/out" "$T/pol.json"
json_check "$T/pol.json" "j['polish'] == 2 and j['simulations'] > 65 and j['makespan'] >= j['lower_bound'] * (1 - 1e-12)" "place --polish: the passes' simulations counted"
expect 0 "sim the --polish assignment" "$D" sim "$G" --assign "$T/pol.assign" --json
json_check "$T/out" "j['makespan'] == json.load(open('$T/pol.json'))['makespan']" "the --polish assignment simulates to its makespan"
expect 2 "place cp --polish" "$D" place "$G" --method cp --polish 2
contains "$T/err" "enumopt --start" "--polish with a heuristic points to enumopt"
expect 2 "place doppler --polish 101" "$D" place "$G" --method doppler --polish 101
# --time-limit and --progress for the learned placer's searches: samples,
# --polish and --improve stop at the limit with the best so far
expect 0 "place doppler --polish --time-limit" "$D" place "$G" --method doppler --polish 100 --time-limit 1e-6 --json
json_check "$T/out" "j['time_limited'] is True and j['stopped_by'] == 'time-limit' and j['makespan'] >= j['lower_bound'] * (1 - 1e-12)" "doppler --polish --time-limit says it stopped"
expect 0 "place doppler --polish 2 --time-limit, not reached" "$D" place "$G" --method doppler --polish 2 --time-limit 1000 --json
json_check "$T/out" "j['time_limited'] is False and j['makespan'] == json.load(open('$T/pol.json'))['makespan'] and j['assignment'] == json.load(open('$T/pol.json'))['assignment']" "doppler --polish: a time limit not reached, the same answer"
t0=$(date +%s)
expect 0 "place doppler --improve --time-limit --progress" "$D" place "$G" --method doppler --improve 100000 --time-limit 1.5 --progress
contains "$T/out" "stopped by --time-limit 1.5 s" "doppler --improve --time-limit says it stopped"
contains "$T/err" "^doppler: [0-9]* of 100000 ([0-9]*%) episodes, best makespan [0-9.e+]*, [0-9]* s, [0-9]* s left$" "doppler --improve --progress: episodes and time left on stderr"
if [ $(( $(date +%s) - t0 )) -lt 10 ]; then ok; else bad "doppler --improve --time-limit 1.5 ran $(( $(date +%s) - t0 )) s"; fi
expect 2 "place doppler greedy --time-limit" "$D" place "$G" --method doppler --samples 0 --time-limit 5
contains "$T/err" "--time-limit applies to doppler's samples, --improve and --polish" "a greedy placement has nothing to stop"
expect 0 "place doppler, pretrained samples, --time-limit" "$D" place "$G" --method doppler --time-limit 1000 --json
json_check "$T/out" "j['time_limited'] is False and j['samples'] == 64" "the pretrained policy's samples take --time-limit"
expect 0 "place doppler, the pretrained policy, --samples 0" "$D" place "$G" --method doppler --samples 0 --json
json_check "$T/out" "j['samples'] == 0 and j['simulations'] == 2 and 'pretrained' in j['policy']" "pretrained, greedy only (and the single-device fallback scored)"
expect 2 "place placeto without --policy" "$D" place "$G" --method placeto
contains "$T/err" "placeto needs --policy" "placeto without --policy"
expect 2 "train: unknown stage" "$D" train "$G" --stages il,foo --out "$T/x.dpl"
expect 2 "train: stages out of order" "$D" train "$G" --stages sim,il --episodes 5,5 --out "$T/x.dpl"
expect 2 "train: --episodes count mismatch" "$D" train "$G" --stages il,sim --episodes 30 --out "$T/x.dpl"
expect 2 "train without --out" "$D" train "$G" --episodes 5,5
if [ ! -e "$T/x.dpl" ]; then ok; else bad "a bad train usage wrote a policy"; fi
# the best placement found in training, rollouts, deployment-stage search
expect 0 "train --rollouts --out-assign --json" "$D" train "$G" --stages il,sim --episodes 20,24 --rollouts 4 --hidden 8 --layers 1 --select off --out "$T/pr.dpl" --out-assign "$T/best.assign" --json
cp "$T/out" "$T/tr.json"
# (the final greedy placement is no episode: without selection it may beat them all)
json_check "$T/tr.json" "j['episodes'] == 44 and j['simulations'] == 44 and j['out_assign'] == '$T/best.assign' and j['best_found'][0]['ratio'] >= 1 - 1e-12 and j['greedy'][0]['ratio'] >= 1 - 1e-12" "train --json reports the best placement found"
# selection (on by default): 44 episodes, and the greedy placement scored at
# the stage's start, after sim episodes 4, 8, 12, 16 and 20 (rollouts of 4)
# and at its end
expect 0 "train with selection --json" "$D" train "$G" --stages il,sim --episodes 20,24 --rollouts 4 --hidden 8 --layers 1 --out "$T/ps.dpl" --json
json_check "$T/out" "j['episodes'] == 44 and j['simulations'] == 51 and j['stages'][0]['kept'] == -1 and j['stages'][1]['kept'] in (0, 4, 8, 12, 16, 20, 24)" "train --json: selection's simulations and kept episode"
expect 0 "sim the best assignment found in training" "$D" sim "$G" --assign "$T/best.assign" --json
json_check "$T/out" "j['makespan'] == json.load(open('$T/tr.json'))['best_found'][0]['cost']" "the best assignment simulates to the reported cost"
expect 0 "train --out-assign (text)" "$D" train "$G" --episodes 10,10 --hidden 8 --layers 1 --out "$T/pr2.dpl" --out-assign "$T/best2.assign"
contains "$T/out" "best placement found in training" "train prints the best placement found"
contains "$T/out" "stage sim kept the parameters after its episode" "train prints which parameters selection kept"
expect 0 "place doppler --improve" "$D" place "$G" --method doppler --policy "$T/p.dpl" --samples 4 --improve 30 --json --out "$T/imp.assign"
cp "$T/out" "$T/imp.json"
# 30 episodes, selection's 31 greedy scores (the start, then after each
# episode: every 30 / 20 = 1), then greedy + 4 samples (1 to 5 simulated)
# and the single-device fallback (1)
json_check "$T/imp.json" "j['improve'] == 30 and 63 <= j['simulations'] <= 67 and j['makespan'] >= j['lower_bound'] * (1 - 1e-12)" "place --improve: simulations counted"
expect 0 "sim the --improve assignment" "$D" sim "$G" --assign "$T/imp.assign" --json
json_check "$T/out" "j['makespan'] == json.load(open('$T/imp.json'))['makespan']" "the --improve assignment simulates to its makespan"
expect 2 "place --improve with cp" "$D" place "$G" --method cp --improve 10
expect 2 "train --out-assign with two graphs" "$D" train "$G" "$G" --episodes 5,5 --out "$T/x.dpl" --out-assign "$T/x.assign"
expect 2 "train --rollouts 0" "$D" train "$G" --episodes 5,5 --rollouts 0 --out "$T/x.dpl"
expect 2 "train placeto --rollouts" "$D" train "$G" --algo placeto --rollouts 2 --out "$T/x.dpl"
expect 2 "train --step-baseline maybe" "$D" train "$G" --episodes 5,5 --step-baseline maybe --out "$T/x.dpl"
contains "$T/err" "neither on nor off" "--step-baseline: the message names the accepted values"
expect 2 "train placeto --step-baseline off" "$D" train "$G" --algo placeto --step-baseline off --out "$T/x.dpl"
expect 2 "train placeto --ppo" "$D" train "$G" --algo placeto --ppo 3 --out "$T/x.dpl"
expect 2 "train placeto --critic" "$D" train "$G" --algo placeto --critic --out "$T/x.dpl"
expect 2 "train doppler --reinforce" "$D" train "$G" --reinforce --out "$T/x.dpl"
contains "$T/err" "for --algo placeto" "--reinforce is placeto's"
expect 2 "train doppler --tau" "$D" train "$G" --tau 0.1 --out "$T/x.dpl"
expect 2 "train placeto --reinforce --tau" "$D" train "$G" --algo placeto --reinforce --tau 0.1 --out "$T/x.dpl"
expect 2 "train placeto --tau 0" "$D" train "$G" --algo placeto --tau 0 --out "$T/x.dpl"
expect 2 "train --critic --step-baseline off" "$D" train "$G" --episodes 5,5 --critic --step-baseline off --out "$T/x.dpl"
contains "$T/err" "per-step baseline" "--critic with --step-baseline off: the message says why"
expect 2 "train --ppo 0" "$D" train "$G" --episodes 5,5 --ppo 0 --out "$T/x.dpl"
expect 2 "train --ppo-clip 1" "$D" train "$G" --episodes 5,5 --ppo-clip 1 --out "$T/x.dpl"
expect 0 "train --ppo 3 --rollouts 2 --critic" "$D" train "$G" --episodes 10,10 --hidden 8 --layers 1 --ppo 3 --rollouts 2 --critic --out "$T/ppo.dpl" --json
json_check "$T/out" "j['episodes'] == 20" "train with PPO and the critic trains"
expect 0 "place with the PPO-trained policy" "$D" place "$G" --method doppler --policy "$T/ppo.dpl" --json
expect 0 "train --step-baseline off" "$D" train "$G" --episodes 10,10 --hidden 8 --layers 1 --step-baseline off --out "$T/sb.dpl" --json
json_check "$T/out" "j['episodes'] == 20" "train --step-baseline off trains"
if [ ! -e "$T/x.dpl" ] && [ ! -e "$T/x.assign" ]; then ok; else bad "a refused train wrote a file"; fi
expect 0 "bench with doppler" "$D" bench "$G" --methods cp,doppler --policy "$T/p.dpl" --json
json_check "$T/out" "[r['method'] for r in j] == ['cp', 'doppler']" "bench lists doppler"
expect 0 "bench doppler without --policy: the pretrained policy" "$D" bench "$G" --methods cp,doppler --json
json_check "$T/out" "len(j) == 2 and j[1]['method'] == 'doppler' and j[1]['ratio'] >= 1" "bench with the pretrained policy"
expect 1 "bench with a truncated policy" "$D" bench "$G" --methods doppler --policy "$T/trunc.dpl"

# ---- training that stops on a value that is not finite ---------------------
# A learning rate of 1e300 throws the weights to about 1e300 in the first
# update; the next episode's forward pass overflows (its loss is NaN). The
# policy after the first update is kept, the exit status is 1.
expect 1 "train that diverges" "$D" train "$G" --stages il --episodes 20 --lr 1e300 --hidden 8 --layers 1 \
    --out "$T/nan.dpl" --curve "$T/nan.csv"
contains "$T/err" "stage il, episode 1, graph 0" "divergence: the message names the stage, episode and graph"
contains "$T/err" "loss -*nan is not finite" "divergence: the message says what is not finite"
contains "$T/err" "wrote the last good policy (after 1 episode) to $T/nan.dpl" "divergence: says it kept the last good policy"
if [ -s "$T/nan.dpl" ] && [ ! -e "$T/nan.dpl.tmp" ]; then ok; else bad "divergence: the last good policy is written, no .tmp left"; fi
if [ "$(wc -l <"$T/nan.csv" 2>/dev/null)" = 2 ]; then ok; else bad "divergence: the curve holds the one good episode"; fi
expect 0 "the last good policy loads and places" "$D" place "$G" --method doppler --policy "$T/nan.dpl"
# a graph whose makespan would overflow is refused when read: no training,
# and an existing --out stays as it was
printf 'doppler-graph 1\nop a compute=1e308\nop b compute=1e308\nedge a b\n' >"$T/inf.dpg"
cp "$T/p.dpl" "$T/keep.dpl"
expect 1 "train on a graph whose total compute is inf" "$D" train "$T/inf.dpg" --devices 1 --stages il --episodes 5 --hidden 8 \
    --layers 1 --out "$T/keep.dpl"
contains "$T/err" "inf.dpg: op 'b' (node 1): the total compute" "inf total: the message names the file and the op"
if cmp -s "$T/p.dpl" "$T/keep.dpl" && [ ! -e "$T/keep.dpl.tmp" ]; then ok; else bad "a refused training replaced an existing policy"; fi

# ---- placeto: train, place, bench beside doppler -----------------------------
PT=(train "$G" --algo placeto --episodes 20 --hidden 8 --seed 3)
expect 0 "train a tiny placeto policy" "$D" "${PT[@]}" --out "$T/pt.dpl" --curve "$T/ptc.csv" --json
json_check "$T/out" "j['algo'] == 'placeto' and j['from'] == 'cp' and j['episodes'] == 20 and [s['stage'] for s in j['stages']] == ['sim'] and j['greedy'][0]['ratio'] >= 1 - 1e-12" "train --algo placeto --json"
if [ "$(wc -l <"$T/ptc.csv")" = 21 ]; then ok; else bad "placeto curve CSV: header + 20 rows"; fi
# the one-step improvement simulates every other device of each op (3 x 50
# per sweep); the paper's REINFORCE at most one move per op
json_check "$T/out" "j['simulations'] == 20 * 50 * 3" "placeto: 3 x 50 simulations a sweep"
expect 0 "train placeto --reinforce" "$D" train "$G" --algo placeto --reinforce --episodes 20 --hidden 8 --seed 3 --out "$T/ptr.dpl" --json
json_check "$T/out" "0 < j['simulations'] <= 20 * 50" "placeto --reinforce: at most one simulation a move"
if cmp -s "$T/pt.dpl" "$T/ptr.dpl"; then bad "placeto --reinforce trained the same policy"; else ok; fi
expect 0 "train placeto again, same seed" "$D" "${PT[@]}" --out "$T/pt2.dpl"
if cmp -s "$T/pt.dpl" "$T/pt2.dpl"; then ok; else bad "placeto: same seed, different policy files"; fi
contains "$T/out" "training placeto" "train --algo placeto says so"
expect 0 "place --method placeto" "$D" place "$G" --method placeto --policy "$T/pt.dpl" --json --out "$T/pt.assign"
cp "$T/out" "$T/pt.json"
json_check "$T/pt.json" "j['method'] == 'placeto' and j['from'] == 'cp' and len(j['assignment']) == 50 and sorted(j['visit_order']) == list(range(50))" "place placeto --json"
expect 0 "sim the placeto assignment" "$D" sim "$G" --assign "$T/pt.assign" --json
json_check "$T/out" "j['makespan'] == json.load(open('$T/pt.json'))['makespan']" "placeto's assignment simulates to the same makespan"
expect 0 "place cp" "$D" place "$G" --method cp --json
json_check "$T/out" "json.load(open('$T/pt.json'))['makespan'] <= j['makespan']" "placeto from cp is never worse than cp"
expect 0 "place placeto --from single --samples" "$D" place "$G" --method placeto --policy "$T/pt.dpl" --from single --samples 3
contains "$T/out" "starts from      single" "place placeto names its start"
expect 0 "place placeto: the fallback field" "$D" place "$T/ch.dpg" --method placeto --policy "$T/pt.dpl" --from round-robin --json
json_check "$T/out" "j['fallback'] in (None, 'single') and j['makespan'] == 3 and (j['fallback'] is None or j['assignment'] == [0, 0, 0])" "placeto from round-robin on the chain: never worse than one device (3)"
expect 0 "place --method pipeline as placeto's start" "$D" place "$G" --method placeto --policy "$T/pt.dpl" --from pipeline --json
json_check "$T/out" "j['from'] == 'pipeline' and len(j['assignment']) == 50" "placeto starts from pipeline"
expect 1 "a doppler policy for --method placeto" "$D" place "$G" --method placeto --policy "$T/p.dpl"
contains "$T/err" "is a doppler policy" "doppler policy refused by placeto: says why"
contains "$T/err" "p.dpl" "doppler policy refused by placeto: names the file"
expect 1 "a placeto policy for --method doppler" "$D" place "$G" --method doppler --policy "$T/pt.dpl"
contains "$T/err" "is a placeto policy" "placeto policy refused by doppler: says why"
expect 1 "a placeto policy for 4 devices on 3" "$D" place "$G" --method placeto --policy "$T/pt.dpl" --devices 3
contains "$T/err" "places on 4 devices, the cluster has 3" "device count mismatch: says both counts"
expect 2 "place placeto --from nonsense" "$D" place "$G" --method placeto --policy "$T/pt.dpl" --from best
expect 2 "--from for a heuristic" "$D" place "$G" --method cp --from single
expect 1 "train placeto with stage il" "$D" train "$G" --algo placeto --stages il,sim --episodes 5,5 --out "$T/x.dpl"
contains "$T/err" "imitation" "placeto stage il: says why"
expect 2 "train --algo unknown" "$D" train "$G" --algo gdp --out "$T/x.dpl"
expect 2 "train placeto --shared-gnn" "$D" train "$G" --algo placeto --shared-gnn --out "$T/x.dpl"
expect 2 "train placeto --insertion" "$D" train "$G" --algo placeto --insertion --out "$T/x.dpl"
contains "$T/err" "insertion is for --algo doppler" "placeto --insertion: the refusal says why"
expect 0 "train --insertion" "$D" train "$G" --stages il --episodes 5 --hidden 4 --layers 1 --insertion --out "$T/ins.dpl" --json
json_check "$T/out" "j['insertion'] == True" "train --insertion reports it"
if [ "$(od -An -tu1 -j8 -N1 "$T/ins.dpl" | tr -d ' ')" = 3 ]; then ok; else bad "train --insertion: policy file version not 3"; fi
expect 0 "place with an insertion policy" "$D" place "$G" --method doppler --policy "$T/ins.dpl"
contains "$T/out" "insertion" "place names the policy's insertion"
expect 0 "train --op-logits" "$D" train "$G" --stages il,sim --episodes 5,20 --hidden 4 --layers 1 --op-logits 3 --out "$T/ops.dpl" --json
json_check "$T/out" "j['op_logits'] == 3 and j['op_prior'] is None and j['op_restart'] == 8 and j['episodes'] == 25" "train --op-logits reports its rate, default prior and restart, and episodes"
expect 0 "train --op-restart -1" "$D" train "$G" --stages il,sim --episodes 5,20 --hidden 4 --layers 1 --op-logits 3 --op-restart -1 --out "$T/ops_nr.dpl" --json
json_check "$T/out" "j['op_restart'] == -1" "train --op-restart reports it"
expect 2 "train --op-restart alone" "$D" train "$G" --op-restart 4 --out "$T/x.dpl"
contains "$T/err" "--op-restart are for --op-logits" "--op-restart alone: says why"
expect 2 "train --op-restart -2" "$D" train "$G" --op-logits 3 --op-restart -2 --out "$T/x.dpl"
expect 2 "train placeto --op-restart" "$D" train "$G" --algo placeto --op-restart 4 --out "$T/x.dpl"
expect 2 "place --op-restart without --op-logits" "$D" place "$G" --method doppler --improve 20 --op-restart 2
expect 0 "place --improve --op-logits --op-restart" "$D" place "$G" --method doppler --improve 20 --op-logits 3 --op-restart 1 --json
json_check "$T/out" "j['makespan'] > 0" "place --improve --op-restart answers"
if [ "$(od -An -tu1 -j8 -N1 "$T/ops.dpl" | tr -d ' ')" = 4 ]; then ok; else bad "train --op-logits: policy file version not 4"; fi
expect 0 "place with per-op logits" "$D" place "$G" --method doppler --policy "$T/ops.dpl"
contains "$T/out" "per-op logits" "place names the policy's per-op logits"
expect 0 "per-op logits on another cluster" "$D" place "$G" --method doppler --policy "$T/ops.dpl" --devices 3
expect 2 "train --op-logits on two graphs" "$D" train "$G" "$G" --op-logits 3 --out "$T/x.dpl"
contains "$T/err" "exactly one GRAPH" "--op-logits on two graphs: says why"
expect 2 "train --op-prior alone" "$D" train "$G" --op-prior 2 --out "$T/x.dpl"
expect 2 "train placeto --op-logits" "$D" train "$G" --algo placeto --op-logits 3 --out "$T/x.dpl"
expect 2 "place --op-logits without --improve" "$D" place "$G" --method doppler --op-logits 3
expect 0 "place --improve --op-logits" "$D" place "$G" --method doppler --improve 20 --op-logits 3 --op-prior 3 --json
json_check "$T/out" "j['makespan'] > 0" "place --improve --op-logits answers"
expect 0 "train --init pretrained" "$D" train "$G" --init pretrained --stages sim --episodes 20 --op-logits 3 --out "$T/init.dpl" --json
json_check "$T/out" "j['init'] == 'pretrained' and j['hidden'] == 4 and j['insertion'] == True" "train --init pretrained: the pretrained policy's sizes"
expect 0 "train --init FILE" "$D" train "$G" --init "$T/ops.dpl" --stages sim --episodes 5 --out "$T/init2.dpl" --json
json_check "$T/out" "j['init'].endswith('ops.dpl') and j['hidden'] == 4 and j['layers'] == 1" "train --init FILE: that file's sizes"
expect 2 "train --init with --hidden" "$D" train "$G" --init pretrained --hidden 8 --out "$T/x.dpl"
contains "$T/err" "are the --init policy's" "--init with --hidden: says why"
expect 1 "train --init a doppler policy as placeto" "$D" train "$G" --init "$T/ops.dpl" --algo placeto --out "$T/x.dpl"
contains "$T/err" "a doppler policy, and --algo is placeto" "--init of the other algorithm: says why"
expect 1 "train --init a placeto policy for 4 devices on 3" "$D" train "$G" --algo placeto --init "$T/pt.dpl" --devices 3 --stages sim --episodes 2 --out "$T/x.dpl"
contains "$T/err" "places on 4 devices, the cluster has 3" "--init placeto device count: says both counts"
expect 1 "train --init a missing file" "$D" train "$G" --init "$T/none.dpl" --out "$T/x.dpl"
if [ ! -e "$T/x.dpl" ]; then ok; else bad "a refused --init wrote a policy"; fi
if [ ! -e "$T/x.dpl" ]; then ok; else bad "a refused placeto training wrote a policy"; fi
expect 0 "bench with both learned placers" "$D" bench "$G" --methods cp,placeto,doppler --policy "$T/p.dpl" --policy "$T/pt.dpl" --json
json_check "$T/out" "[r['method'] for r in j] == ['cp', 'placeto', 'doppler']" "bench lists placeto and doppler"
expect 0 "bench all with both policies" "$D" bench "$G" --policy "$T/pt.dpl" --policy "$T/p.dpl" --json
json_check "$T/out" "[r['method'] for r in j][-2:] == ['doppler', 'placeto']" "bench all adds both learned placers"
expect 1 "bench with two doppler policies" "$D" bench "$G" --methods doppler --policy "$T/p.dpl" --policy "$T/p2.dpl"
expect 2 "bench with three policies" "$D" bench "$G" --policy "$T/p.dpl" --policy "$T/pt.dpl" --policy "$T/p2.dpl"

# ---- the CPU executor, workloads, calibration ------------------------------
expect 0 "gen chainmm" "$D" gen chainmm --parts 2 --dim 64 --layers 2 -o "$T/cm.dpg"
expect 0 "gen ffnn" "$D" gen ffnn --parts 2 --dim 64 --batch 16 --layers 2 -o "$T/ff.dpg"
expect 2 "gen an unknown workload" "$D" gen llama-everything -o "$T/x.dpg"
expect 0 "gen llama-block" "$D" gen llama-block --parts 2 --dim 32 --batch 8 -o "$T/lb.dpg"
expect 0 "gen llama-layer" "$D" gen llama-layer --parts 2 --dim 32 --batch 8 --layers 2 -o "$T/ll.dpg"
expect 0 "place llama-layer" "$D" place "$T/ll.dpg" --method random --devices 2 --out "$T/ll.asg"
# weights (the library's gpt and --weights): resident weights, opaque ops
expect 0 "gen ffnn --weights" "$D" gen ffnn --parts 2 --dim 64 --batch 16 --layers 2 --weights -o "$T/ffw.dpg"
expect 0 "info on ffnn --weights" "$D" info "$T/ffw.dpg" --json
# 2 layers' W, each 2 x 2 blocks of 32 x 32 float32 (4096 bytes), each block
# read by one matmul
json_check "$T/out" "j['weights'] == 8 and j['resident_bytes'] == 8 * 4096 and j['max_op_resident'] == 4096" "ffnn --weights: 8 weight blocks of 4096 bytes, one per matmul"
expect 0 "gen gpt --weights --vocab" "$D" gen gpt --parts 2 --dim 32 --batch 8 --layers 1 --vocab 64 --weights -o "$T/gpt.dpg"
expect 0 "info on gpt --weights" "$D" info "$T/gpt.dpg" --json
# one block: Q, K, V and the output projection (32 x 32 each, 2 x 2 blocks
# of 16 x 16), the MLP's 32 x 128 and 128 x 32 (4 chunks of 32 x 32 each, in
# 2 x 2 blocks), the head 32 x 64 (2 x 2 blocks of 16 x 32): 16 + 32 + 4
# weights, 12 x 32^2 + 32 x 64 floats; a head matmul reads 16 x 32 floats
cp "$T/out" "$T/gpt.json"
json_check "$T/gpt.json" "j['weights'] == 52 and j['resident_bytes'] == 4 * (12 * 32 * 32 + 32 * 64) and j['max_op_resident'] == 4 * 16 * 32 and j['max_op_resident_op'].startswith('head_mm')" "gpt --weights: 52 weight blocks, 57344 bytes, a head matmul holds 2048"
# 57344 resident bytes fit no device of 40000: pipeline spreads them, within memory
expect 0 "place gpt with pipeline within memory" "$D" place "$T/gpt.dpg" --method pipeline --devices 4 --memory 40000 --json --out "$T/gpt.assign"
json_check "$T/out" "len(j['assignment']) == json.load(open('$T/gpt.json'))['nodes'] and j['fallback'] is None and len(set(j['assignment'])) >= 2" "pipeline places gpt over several devices"
expect 0 "sim gpt's pipeline within memory" "$D" sim "$T/gpt.dpg" --assign "$T/gpt.assign" --devices 4 --memory 40000 --json
json_check "$T/out" "0 < max(j['peak_bytes']) <= 40000" "gpt's pipeline placement peaks within memory"
expect 0 "exec llama-layer" "$D" exec "$T/ll.dpg" --assign "$T/ll.asg" --backend cpu --devices 2 --json
json_check "$T/out" "j['outputs_match'] is True" "exec: llama-layer gives the single-device outputs"
expect 0 "place chainmm" "$D" place "$T/cm.dpg" --method round-robin --devices 2 --out "$T/cm.asg"
expect 0 "exec chainmm" "$D" exec "$T/cm.dpg" --assign "$T/cm.asg" --backend cpu --devices 2 --reps 2 --json
json_check "$T/out" "j['outputs_match'] is True and j['wall_median'] > 0 and len(j['wall_runs']) == 2 and len(j['busy']) == 2" "exec: real ops give the single-device outputs"
expect 0 "place layered_50" "$D" place graphs/layered_50.dpg --method cp --devices 2 --out "$T/l50.asg"
expect 0 "exec an opaque graph" "$D" exec graphs/layered_50.dpg --assign "$T/l50.asg" --backend cpu --devices 2 --json --trace-svg "$T/trace.svg"
# busy kernels spin until their modelled time is up, so a run cannot beat the
# simulator's makespan; how close above it lands depends on the machine's
# load (bench/RESULTS.md section 5 measures it): here only a gross stall fails
json_check "$T/out" "j['outputs_match'] is True and 0.95 <= j['wall_median'] / j['predicted'] < 10" "exec: opaque graph no faster than the simulator's prediction, not stalled"
if grep -q "<svg" "$T/trace.svg" 2>/dev/null; then ok; else bad "exec --trace-svg wrote no chart"; fi
expect 2 "exec with an unknown backend" "$D" exec graphs/layered_50.dpg --assign "$T/l50.asg" --backend gpu
expect 2 "exec without --assign" "$D" exec graphs/layered_50.dpg --backend cpu
expect 1 "exec with a bad assignment" "$D" exec graphs/layered_50.dpg --assign graphs/layered_50.dpg --backend cpu
expect 0 "calibrate" "$D" calibrate --backend cpu --devices 2 -o "$T/cpu.dpc" --json
json_check "$T/out" "j['devices'] == 2 and j['matmul_flops'] > 0 and j['bandwidth'] > 0 and j['overhead'] > 0" "calibrate measured something"
expect 0 "sim on the calibrated cluster" "$D" sim "$T/cm.dpg" --assign "$T/cm.asg" --cluster "$T/cpu.dpc" --json
expect 0 "train with stage real on the CPU executor" "$D" train graphs/layered_50.dpg --stages il,real --episodes 10,5 --backend cpu --devices 2 --hidden 8 --layers 1 --out "$T/real.dpl" --json
json_check "$T/out" "j['real_costs'] == 'cpu executor'" "train --backend cpu uses the executor"
expect 2 "train with an unknown backend" "$D" train graphs/layered_50.dpg --stages il,real --episodes 5,5 --backend gpu --out "$T/x2.dpl"
# static and graph dispatch are the CUDA executor's: refused elsewhere, nothing written
expect 2 "exec --dispatch static on the CPU" "$D" exec graphs/layered_50.dpg --assign "$T/l50.asg" --backend cpu --dispatch static
expect 2 "calibrate --dispatch graph on the CPU" "$D" calibrate --backend cpu --dispatch graph -o "$T/nd.dpc"
expect 2 "train --dispatch graph without --backend" "$D" train graphs/layered_50.dpg --stages il --episodes 5 --dispatch graph --out "$T/nd.dpl"
expect 2 "exec --dispatch with an unknown mode" "$D" exec graphs/layered_50.dpg --assign "$T/l50.asg" --backend cpu --dispatch eager
# --precision: the kernels' with exec and calibrate; the CPU's is fp32 only
expect 2 "exec --backend cpu --precision tf32" "$D" exec graphs/layered_50.dpg --assign "$T/l50.asg" --backend cpu --precision tf32
if grep -q "fp32 only" "$T/err"; then ok; else bad "exec --backend cpu --precision tf32: no 'fp32 only' in: $(cat "$T/err")"; fi
expect 2 "exec --precision fp16 without a preset" "$D" exec graphs/layered_50.dpg --assign "$T/l50.asg" --backend cpu --precision fp16
expect 0 "exec --backend cpu --precision fp32" "$D" exec graphs/layered_50.dpg --assign "$T/l50.asg" --backend cpu --precision fp32 --reps 1
expect 2 "calibrate --backend cpu --precision bf16" "$D" calibrate --backend cpu --precision bf16 -o "$T/nd2.dpc"
if [ ! -e "$T/nd.dpc" ] && [ ! -e "$T/nd.dpl" ]; then ok; else bad "a refused --dispatch left a file"; fi

# ---- the CUDA executor: three situations, each checked ---------------------
# built without CUDA (no nvcc, or the sanitizer build): exit 1, "built
# without CUDA"; built with CUDA on a machine without a GPU: exit 1 with the
# runtime's reason ("no CUDA device: ..."); with a GPU: it runs.
"$D" exec graphs/layered_50.dpg --assign "$T/l50.asg" --backend cuda --devices 2 --json >"$T/cuda.out" 2>"$T/cuda.err" </dev/null
rc=$?
if [ "$rc" = 0 ]; then
    echo "(a GPU is present: the CUDA executor runs)"
    json_check "$T/cuda.out" "j['backend'] == 'cuda' and j['outputs_match'] is True and j['gpus'] >= 1 and j['wall_median'] > 0 and len(j['busy']) == 2" "exec --backend cuda on an opaque graph"
    expect 0 "exec chainmm on cuda" "$D" exec "$T/cm.dpg" --assign "$T/cm.asg" --backend cuda --devices 2 --reps 2 --precision fp32 --json --trace-svg "$T/cuda.svg"
    json_check "$T/out" "j['outputs_match'] is True and j['outputs_match_cpu'] is True and j['cpu_max_error'] <= 1e-3 and len(j['wall_runs']) == 2 and j['precision'] == 'fp32'" "exec chainmm on cuda: single-device outputs, within the tolerance of the CPU's"
    for p in tf32 bf16; do
        expect 0 "exec chainmm on cuda, $p" "$D" exec "$T/cm.dpg" --assign "$T/cm.asg" --backend cuda --devices 2 --reps 2 --precision $p --json
        json_check "$T/out" "j['precision'] == '$p' and j['outputs_match'] is True and j['outputs_match_cpu'] is True and j['cpu_max_error'] <= j['cpu_tolerance']" "exec chainmm on cuda, $p: the tensor cores, within their tolerance"
    done
    if grep -q "CUDA executor" "$T/cuda.svg" 2>/dev/null; then ok; else bad "exec --backend cuda --trace-svg: no chart titled for the CUDA executor"; fi
    expect 0 "exec llama-layer on cuda, 4 logical devices" "$D" exec "$T/ll.dpg" --assign "$T/ll.asg" --backend cuda --devices 4 --order priority --precision fp32 --json
    json_check "$T/out" "j['outputs_match'] is True and j['outputs_match_cpu'] is True" "exec llama-layer on cuda: outputs"
    expect 0 "calibrate cuda" "$D" calibrate --backend cuda --devices 2 -o "$T/cuda.dpc" --json
    json_check "$T/out" "j['devices'] == 2 and j['backend'] == 'cuda' and j['matmul_flops'] > 0 and j['bandwidth'] > 0" "calibrate cuda measured something"
    expect 0 "sim on the GPU-calibrated cluster" "$D" sim "$T/cm.dpg" --assign "$T/cm.asg" --cluster "$T/cuda.dpc" --json
    expect 0 "train with stage real on the CUDA executor" "$D" train graphs/layered_50.dpg --stages il,real --episodes 10,5 --backend cuda --devices 2 --hidden 8 --layers 1 --out "$T/realc.dpl" --json
    json_check "$T/out" "j['real_costs'] == 'cuda executor'" "train --backend cuda uses the CUDA executor"
else
    if [ "$rc" = 1 ]; then ok; else bad "exec --backend cuda without a GPU: exit $rc, expected 1"; fi
    if grep -q "built without CUDA" "$T/cuda.err"; then
        echo "(built without CUDA: --backend cuda refused)"
        why="built without CUDA"
    else
        echo "(built with CUDA, no GPU: --backend cuda fails with the runtime's reason)"
        why="no CUDA device: "
    fi
    contains "$T/cuda.err" "$why" "exec --backend cuda says why it cannot run"
    expect 1 "calibrate --backend cuda without a GPU" "$D" calibrate --backend cuda -o "$T/cuda.dpc"
    contains "$T/err" "$why" "calibrate --backend cuda says why"
    if [ -e "$T/cuda.dpc" ]; then bad "calibrate --backend cuda wrote a cluster file without a GPU"; else ok; fi
    expect 1 "train --backend cuda without a GPU" "$D" train graphs/layered_50.dpg --stages il,real --episodes 5,5 --backend cuda --devices 2 --out "$T/realc.dpl"
    contains "$T/err" "$why" "train --backend cuda says why"
    if [ -e "$T/realc.dpl" ]; then bad "train --backend cuda wrote a policy without a GPU"; else ok; fi
fi

# ---- the reference data, when present --------------------------------------
if [ -d "$DATA/doppler" ]; then
    f=$DATA/doppler/chain_mm_112nodes.txt
    expect 0 "info on chain_mm" "$D" info "$f" --json
    json_check "$T/out" "j['nodes'] == 76 and j['format'] == 'doppler'" "chain_mm has 76 ops"
    expect 0 "convert doppler -> native" "$D" convert "$f" "$T/cm.dpg"
    expect 0 "convert native -> doppler" "$D" convert "$T/cm.dpg" "$T/cm.txt"
    "$D" place "$f" --method cp --json >"$T/a.json" 2>"$T/err"
    "$D" place "$T/cm.dpg" --method cp --json >"$T/b.json" 2>>"$T/err"
    json_check "$T/a.json" "j['makespan'] == json.load(open('$T/b.json'))['makespan']" "native copy of chain_mm places the same"
else
    skipped "reference data ($DATA/doppler) not found"
fi
if [ -d "$DATA/stg" ]; then
    expect 0 "info on an STG graph" "$D" info "$DATA/stg/50/rand0000.stg" --format stg --json
    json_check "$T/out" "j['nodes'] == 52 and j['cp_length'] == 55" "STG rand0000: 50 tasks + 2 dummies, CP 55"
else
    skipped "reference data ($DATA/stg) not found"
fi

# ---- strict options: what the method or shape does not read, given twice ----
expect 2 "place heft --budget" "$D" place graphs/layered_50.dpg --method heft --budget 5
contains "$T/err" "--budget applies to --method anneal" "--budget names the method it applies to"
expect 2 "place heft --time-limit" "$D" place graphs/layered_50.dpg --method heft --time-limit 5
contains "$T/err" "--time-limit applies to --method anneal, enumopt, doppler and placeto" "--time-limit names the methods it applies to"
expect 2 "bench cp,heft --time-limit" "$D" bench graphs/layered_50.dpg --methods cp,heft --time-limit 5
contains "$T/err" "--time-limit applies to methods anneal, enumopt, doppler and placeto" "bench --time-limit without a search"
expect 2 "sim --time-limit" "$D" sim graphs/layered_50.dpg --assign "$T/none.assign" --time-limit 5
expect 2 "place cp --start" "$D" place graphs/layered_50.dpg --method cp --start "$T/none.assign"
contains "$T/err" "--start applies to --method enumopt and anneal" "--start names the methods it applies to"
expect 2 "place heft --progress" "$D" place graphs/layered_50.dpg --method heft --progress
contains "$T/err" "--progress applies to" "--progress names the methods it applies to"
expect 2 "place --no-transfers without --gantt" "$D" place graphs/layered_50.dpg --method cp --no-transfers
contains "$T/err" "--no-transfers applies to the chart of --gantt" "--no-transfers needs --gantt"
expect 2 "bench cp,heft --budget" "$D" bench graphs/layered_50.dpg --methods cp,heft --budget 5
contains "$T/err" "--budget applies to method anneal" "bench --budget without anneal"
expect 0 "bench cp,anneal --budget" "$D" bench graphs/layered_50.dpg --methods cp,anneal --budget 50
expect 0 "place anneal --budget" "$D" place graphs/layered_50.dpg --method anneal --budget 50
expect 2 "gen chainmm --nodes" "$D" gen chainmm --nodes 50 -o "$T/x.dpg"
contains "$T/err" "--nodes applies to the random DAGs" "--nodes names the shapes it applies to"
expect 2 "gen ffnn --seed" "$D" gen ffnn --seed 3 -o "$T/x.dpg"
contains "$T/err" "--seed applies to the random DAGs" "gen --seed is the random DAGs'"
expect 2 "gen layered --dim" "$D" gen layered --dim 64 -o "$T/x.dpg"
contains "$T/err" "--dim applies to the workloads" "--dim names the workloads"
expect 2 "gen layered --jump" "$D" gen layered --jump 2 -o "$T/x.dpg"
contains "$T/err" "--jump applies to random" "--jump is random's"
expect 2 "gen chainmm --batch" "$D" gen chainmm --batch 8 -o "$T/x.dpg"
contains "$T/err" "--batch applies to" "--batch is not chainmm's"
expect 2 "gen llama-block --layers" "$D" gen llama-block --layers 2 -o "$T/x.dpg"
contains "$T/err" "--layers applies to" "--layers is not llama-block's"
expect 2 "train --reps without --backend" "$D" train graphs/layered_50.dpg --reps 3 --out "$T/p.dpl"
contains "$T/err" "--reps applies to stage real" "--reps needs --backend"
expect 2 "train --backend without stage real" "$D" train graphs/layered_50.dpg --backend cpu --out "$T/p.dpl"
contains "$T/err" "--backend applies to stage real" "--backend needs stage real"
expect 2 "--devices twice" "$D" place graphs/layered_50.dpg --method cp --devices 2 --devices 3
contains "$T/err" "--devices given twice" "a repeated --devices is named"
expect 2 "-o and --out" "$D" gen layered --nodes 10 -o "$T/a.dpg" --out "$T/b.dpg"
contains "$T/err" "--out (or -o) given twice" "-o then --out is named"
expect 2 "--method twice" "$D" place graphs/layered_50.dpg --method cp --method=heft
contains "$T/err" "--method given twice" "a repeated --method=M is named"
expect 0 "a flag twice" "$D" info graphs/layered_50.dpg --json --json
expect 0 "help help" "$D" help help
contains "$T/out" "usage: doppler help" "help help gives help's usage"
expect 0 "help exec" "$D" help exec
contains "$T/out" "--format" "help exec lists --format"
# per-device time columns: --devices must match them
expect 1 "heft_example --devices 4" "$D" info graphs/heft_example.dpg --devices 4
contains "$T/err" "--devices 4 was given" "more devices than time columns: says --devices was given"
expect 1 "heft_example --devices 2" "$D" place graphs/heft_example.dpg --method heft --devices 2
contains "$T/err" "--devices 2 was given" "fewer devices than time columns: refused, naming --devices"
expect 0 "heft_example --devices 3" "$D" place graphs/heft_example.dpg --method heft --devices 3
expect 0 "heft_example, its own devices" "$D" place graphs/heft_example.dpg --method heft
# --progress: anneal reports on stderr (a run of more than a second) and
# places exactly as without it
expect 0 "anneal --progress" "$D" place graphs/layered_100.dpg --method anneal --devices 8 --budget 500000 --progress
grep -v '^seconds' "$T/out" >"$T/with"
contains "$T/err" "^anneal: [0-9]* of 500000 ([0-9]*%) simulations, best makespan" "anneal --progress reports on stderr"
expect 0 "anneal without --progress" "$D" place graphs/layered_100.dpg --method anneal --devices 8 --budget 500000
if [ ! -s "$T/err" ] && diff "$T/with" <(grep -v '^seconds' "$T/out") >/dev/null; then ok; else bad "anneal: --progress changed the placement or stderr is not quiet without it"; fi

# ---- output paths: checked before any work, put in place together ----------
# every output is checked first (its directory there and writable, not a
# directory, not read-only: exit 1; the same file as another output or an
# input: exit 2), written to a temporary and put in place with the others
# only when all were written; a replaced file keeps its mode, a file of
# several hard links stays one file; '-' is standard output, refused as
# an input
O="$T/outs"
mkdir -p "$O/DIR"
expect 1 "train -o /nonexistent/p.dpl" "$D" train graphs/layered_100.dpg --stages il --episodes 3000 -o /nonexistent/p.dpl
contains "$T/err" "/nonexistent/p.dpl: no such directory" "train -o in a missing directory: names the path and why"
if [ ! -s "$T/out" ]; then ok; else bad "train -o /nonexistent/p.dpl trained before refusing"; fi
expect 1 "train --curve /nonexistent/c.csv" "$D" train graphs/layered_100.dpg --stages il --episodes 3000 -o "$O/p.dpl" --curve /nonexistent/c.csv
contains "$T/err" "curve: /nonexistent/c.csv: no such directory" "--curve in a missing directory: names the option and the path"
if [ ! -s "$T/out" ] && [ ! -e "$O/p.dpl" ]; then ok; else bad "train with a bad --curve trained or wrote the policy"; fi
expect 1 "calibrate -o DIR" "$D" calibrate --backend cpu -o "$O/DIR"
contains "$T/err" "^doppler calibrate: -o: .*DIR: is a directory" "calibrate -o DIR: refused before measuring, saying why"
expect 1 "place anneal -o /nonexistent/x" "$D" place graphs/layered_100.dpg --method anneal -o /nonexistent/x
contains "$T/err" "^doppler place: --out: /nonexistent/x: no such directory" "place -o /nonexistent/x: refused before placing"
cp graphs/layered_100.dpg "$O/g.dpg"
expect 2 "place g.dpg -o g.dpg" "$D" place "$O/g.dpg" --method heft -o "$O/g.dpg"
contains "$T/err" "is the input" "an output that is the input: says so"
expect 2 "place g.dpg --gantt g.dpg" "$D" place "$O/g.dpg" --method heft --gantt "$O/g.dpg"
expect 2 "train g.dpg -o g.dpg" "$D" train "$O/g.dpg" --episodes 3,3 -o "$O/g.dpg"
ln -s g.dpg "$O/g-link.dpg"; ln "$O/g.dpg" "$O/g-hard.dpg"
expect 2 "place g.dpg -o LINK-TO-g.dpg" "$D" place "$O/g.dpg" --method heft -o "$O/g-link.dpg"
expect 2 "place g.dpg -o HARD-LINK-OF-g.dpg" "$D" place "$O/g.dpg" --method heft -o "$O/g-hard.dpg"
if cmp -s graphs/layered_100.dpg "$O/g.dpg" && [ -L "$O/g-link.dpg" ]; then ok; else bad "a refused command changed its input"; fi
"$D" place "$O/g.dpg" --method heft -o "$O/a" >/dev/null 2>&1 </dev/null
expect 2 "sim --assign a --gantt a" "$D" sim "$O/g.dpg" --assign "$O/a" --gantt "$O/a"
if head -n 1 "$O/a" | grep -q "^# device"; then ok; else bad "sim --gantt over its --assign replaced it"; fi
expect 2 "place -o X --gantt X" "$D" place "$O/g.dpg" --method heft -o "$O/X" --gantt "$O/X"
contains "$T/err" "same file" "-o X --gantt X: two outputs naming the same file"
expect 2 "place -o X --gantt SUB/../X" "$D" place "$O/g.dpg" --method heft -o "$O/X" --gantt "$O/DIR/../X"
if [ ! -e "$O/X" ]; then ok; else bad "-o X --gantt X wrote X"; fi
cp "$O/a" "$O/ro.assign"; chmod 444 "$O/ro.assign"
expect 1 "place -o READ-ONLY" "$D" place "$O/g.dpg" --method cp -o "$O/ro.assign"
contains "$T/err" "ro.assign: read-only" "a read-only output: names it and says why"
if cmp -s "$O/a" "$O/ro.assign"; then ok; else bad "a read-only output was replaced"; fi
# a failure after one output was written leaves the others as they were
cp "$O/a" "$O/ok.assign"
expect 1 "place -o ok --gantt DIR" "$D" place "$O/g.dpg" --method cp -o "$O/ok.assign" --gantt "$O/DIR"
if [ -c /dev/full ]; then
    expect 1 "place -o ok --gantt /dev/full" "$D" place "$O/g.dpg" --method cp -o "$O/ok.assign" --gantt /dev/full
    "$D" train "$O/g.dpg" --episodes 3,3 --hidden 4 --layers 1 -o "$O/pol.dpl" >/dev/null 2>&1 </dev/null
    cp "$O/pol.dpl" "$O/pol.saved"
    for bad_opt in --curve --curve-svg --out-assign; do
        expect 1 "train $bad_opt /dev/full" "$D" train "$O/g.dpg" --episodes 3,3 --hidden 4 --layers 1 --seed 5 -o "$O/pol.dpl" $bad_opt /dev/full
        if cmp -s "$O/pol.dpl" "$O/pol.saved" && [ ! -e "$O/pol.dpl.tmp" ]; then ok; else bad "train $bad_opt /dev/full replaced the policy"; fi
    done
else
    skipped "no /dev/full here"
fi
if cmp -s "$O/a" "$O/ok.assign" && [ ! -e "$O/ok.assign.tmp" ]; then ok; else bad "a failing --gantt replaced the --out file"; fi
# mode and hard links kept
cp "$O/a" "$O/mode.assign"; chmod 640 "$O/mode.assign"
cp "$O/a" "$O/two.assign"; ln "$O/two.assign" "$O/two-hard.assign"
expect 0 "place -o FILE-OF-MODE-640 --gantt ..." "$D" place "$O/g.dpg" --method cp -o "$O/mode.assign" --gantt "$O/mode.svg"
if [ "$(stat -c %a "$O/mode.assign" 2>/dev/null)" = 640 ] && ! cmp -s "$O/a" "$O/mode.assign"; then ok; else bad "a replaced output lost its mode 640"; fi
expect 0 "place -o FILE-OF-TWO-LINKS --gantt ..." "$D" place "$O/g.dpg" --method cp -o "$O/two.assign" --gantt "$O/two.svg"
if [ "$O/two.assign" -ef "$O/two-hard.assign" ] && ! cmp -s "$O/a" "$O/two-hard.assign"; then ok; else bad "a file of two links: not written in place"; fi
# '-': standard output; refused as an input; two '-' refused
DA=$(cd "$(dirname "$D")" && pwd)/$(basename "$D")
G="$PWD/graphs/heft_example.dpg"
in_outs() { (cd "$O" && "$@"); }
expect 0 "place -o -" in_outs "$DA" place "$G" --method heft -o -
contains "$T/out" "^# device of each op" "place -o - writes the assignment to standard output"
expect 0 "train --curve -" in_outs "$DA" train "$G" --episodes 3,3 --hidden 4 --layers 1 -o p2.dpl --curve -
contains "$T/out" "^stage,episode" "train --curve - writes the curve to standard output"
expect 0 "train --out-assign -" in_outs "$DA" train "$G" --episodes 3,3 --hidden 4 --layers 1 -o p2.dpl --out-assign -
contains "$T/out" "^# device of each op" "train --out-assign - writes the assignment to standard output"
if [ ! -e "$O/-" ]; then ok; else bad "an output '-' made a file named '-'"; fi
expect 2 "two outputs '-'" "$D" place "$G" --method heft -o - --gantt -
contains "$T/err" "both '-'" "two outputs '-': says so"
expect 2 "info -" "$D" info -
contains "$T/err" "standard input" "'-' as an input: refused, saying why"
expect 2 "sim --assign -" "$D" sim "$G" --assign -
expect 2 "place --cluster -" "$D" place "$G" --method heft --cluster -
expect 2 "convert - OUT" "$D" convert - "$O/c.dpg"
if "$D" info /dev/stdin <"$G" >/dev/null 2>&1; then ok; else bad "info /dev/stdin: standard input by its name"; fi
expect 0 "help" "$D" help
contains "$T/out" "standard output as an output" "the main help states the rule of '-'"

# ---- hostile names: bytes that are not UTF-8, markup, quotes, controls ------
# op names may hold any byte above 0x20 but # = , and DEL; a file name any
# byte. --json stays JSON (\u00XX for a byte that is not UTF-8), the Gantt
# chart XML (U+FFFD for what XML cannot hold).
HN="$T/hostile_$(printf '\001\377')name.dpg"
printf 'doppler-graph 1\nop \377\376 compute=1 resident=5\nop a<b&c compute=2\nop ]]> compute=1\nop q"uo\047te compute=1\nedge \377\376 a<b&c\nedge a<b&c ]]>\nedge ]]> q"uo\047te\n' >"$HN"
expect 0 "info --json, hostile op and file names" "$D" info "$HN" --json
json_check "$T/out" "j['max_op_resident_op'] == '\u00ff\u00fe' and j['graph'].endswith('hostile_\u0001\u00ffname.dpg')" "info --json: op and file names that are not UTF-8 as \\u00XX"
expect 0 "place --gantt --json, hostile names" "$D" place "$HN" --method heft --devices 2 --gantt "$T/hostile.svg" --json
json_check "$T/out" "j['graph'].endswith('name.dpg')" "place --json with a file name that is not UTF-8"
if [ "$HAVE_PY" = 0 ]; then skipped "the Gantt chart of hostile names is XML (no python3)"
elif python3 -c "import sys, xml.etree.ElementTree as E; s = ''.join(E.parse(sys.argv[1]).getroot().itertext()); sys.exit(0 if 'a<b&c' in s and ']]>' in s and '\ufffd\ufffd' in s else 1)" "$T/hostile.svg" 2>"$T/pyerr"; then ok
else bad "place --gantt: the chart of hostile names is not XML holding them"; sed 's/^/    /' "$T/pyerr" | tail -n 3; fi

# ---- bench/gpu_check.sh: the plan anywhere; without a GPU it stops at once --
expect 0 "gpu_check.sh --dry-run" bench/gpu_check.sh --dry-run
contains "$T/out" "^8\. stage3: up to" "gpu_check.sh --dry-run lists its eight sections in order"
expect 0 "gpu_check.sh --only, dry" bench/gpu_check.sh --only sanitize,machine --dry-run
contains "$T/out" "^2\. sanitize" "gpu_check.sh --only keeps the sections' order"
expect 2 "gpu_check.sh --only an unknown section" bench/gpu_check.sh --only frob
contains "$T/err" "no section 'frob'" "gpu_check.sh names the unknown section"
expect 2 "gpu_check.sh --budget not a number" bench/gpu_check.sh --budget 1x
if [ -x build/doppler_cuda_probe ] && ! build/doppler_cuda_probe | grep -q '^no CUDA device'; then
    skipped "gpu_check.sh's stop without a GPU (a GPU is here)"
else
    expect 1 "gpu_check.sh without a GPU" bench/gpu_check.sh --budget 60 --dir "$T/gc"
    contains "$T/out" "nothing else to run" "gpu_check.sh stops after its first section without a GPU"
    contains "$T/out" "| machine | " "gpu_check.sh's closing table"
    if [ -x build/doppler_cuda_probe ]; then contains "$T/gc/01-machine.log" "^no CUDA device" "gpu_check.sh keeps the probe's reason in its log"; fi
fi

# ---- bench/gpu_stage3.sh on the CPU executor: its whole plan, tiny -------
expect 0 "gpu_stage3.sh on the CPU executor" env BACKEND=cpu DEVICES=2 SIM=20 REAL=4 SELECT=2 SEEDS=1 REPS=1 ROUNDS=1 JOBS=1 WORKLOADS=ffnn_256_p2 bench/gpu_stage3.sh "$D"
contains "$T/out" "links 25.6e9 bytes/s after 1e-5 s, serial" "gpu_stage3.sh makes the calibrated links PCIe-like"
for m in cp heft anneal pipeline doppler-zero-shot doppler-sim doppler-real; do
    contains "$T/out" "^ffnn_256_p2 [-1] $m [0-9.]* ms, predicted [0-9.]* ms, trained [0-9.]* s$" "gpu_stage3.sh measures $m"
done
contains "$T/out" "^| ffnn_256_p2 | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |$" "gpu_stage3.sh's table has every column"
contains "$T/out" "^stage real no worse than its start .*: [01] of 1 seeds ([01] kept)$" "gpu_stage3.sh says whether stage real ended no worse"
contains "$T/out" "^doppler + real at or below the best heuristic: [01] of 1 seeds$" "gpu_stage3.sh compares with the best heuristic"

# ---- the README's API example is demos/example.c ---------------------------
if [ -f README.md ] && [ -f demos/example.c ]; then
    if diff <(awk '/^```c$/ {f = 1; next} /^```$/ {f = 0} f' README.md) \
            <(sed '1,/^\*\//d' demos/example.c) >"$T/diff"; then ok; else
        bad "README's C example differs from demos/example.c"
        head -n 10 "$T/diff"
    fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
