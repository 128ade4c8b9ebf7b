#!/usr/bin/env bash
# bench/mpi_place.sh - placement quality on simulated multi-machine clusters
# whose links between machines are 10x slower than the links inside one.
#
#     bench/mpi_place.sh [DOPPLER]      # DOPPLER: the CLI (default build/doppler)
#
# Run from the repository root (after ./build.sh). Two clusters: 2 machines
# x 4 devices (8) and 4 machines x 8 devices (32), each made by
# '--devices N --machines K --internode B,L': inside a machine the default
# links of '--devices N' in the graph's own units (dp_cluster_for_graph:
# bandwidth = the graph's unit bandwidth, latency 0), between machines
# bandwidth B = 1/10 of that and latency 10 x 0 = 0. The unit bandwidth is
# 1e10 bytes/s for the generated workloads and the DOPPLER reference graphs
# and 1 byte per time unit for the generated layered/random DAGs; the script
# checks it per graph before placing (a round-robin placement simulated with
# B = the intra bandwidth must give the plain cluster's makespan, and with
# B / 10 a longer one).
#
# Graphs (none in policies/make_family.sh's training family): six made here
# with 'doppler gen' and fixed seeds (100-1000 ops: block-partitioned ML
# workloads and random DAGs with communication), and two DOPPLER reference
# graphs from ../shared/data/doppler (DP_DATA; skipped with a note where
# absent). Methods: pipeline, cp, heft, anneal (its default budget, 20 x ops
# x devices simulations given as --budget, without the default time
# bound, seed 1), doppler (zero-shot: the pretrained policy,
# greedy + 64 samples, seed 1). Prints Markdown on standard output: per
# cluster the makespan / lower bound of each method (best in bold), the
# geometric mean per method, the count of graphs where doppler <= min(cp,
# heft), and the wall seconds per method summed over the graphs (each call
# timed as a whole process, pinned to one core where taskset exists).
# Progress goes to standard error; a method that fails is shown as 'fail'
# in the table and listed below it, and the script then exits 1. About 5
# minutes on a 2-core VM, most of it anneal on 32 devices.
set -eu
DOPPLER=${1:-build/doppler}
DATA=${DP_DATA:-../shared/data}
[ -x "$DOPPLER" ] || { echo "mpi_place.sh: $DOPPLER: no such executable (run ./build.sh first)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PIN=()
command -v taskset >/dev/null 2>&1 && PIN=(taskset -c 0)
run() { ${PIN[@]+"${PIN[@]}"} "$DOPPLER" "$@"; }
t_start=$(date +%s.%N)

# name|file|intra bandwidth|what
graphs=()
gen() {   # gen NAME INTRA_BW GEN-ARGS...
    local name=$1 bw=$2; shift 2
    "$DOPPLER" gen "$@" -o "$dir/$name.dpg" >/dev/null
    graphs+=("$name|$dir/$name.dpg|$bw|gen $*")
}
gen chainmm_p4_d512_l6     1e10 chainmm --parts 4 --dim 512 --layers 6
gen ffnn_p4_d128_b128_l6   1e10 ffnn --parts 4 --dim 128 --batch 128 --layers 6
gen llama_layer_p4_d128_l2 1e10 llama-layer --parts 4 --dim 128 --batch 64 --layers 2
gen gpt_p4_d128_l1         1e10 gpt --parts 4 --dim 128 --layers 1
gen layered_400_ccr1_s7    1    layered --nodes 400 --ccr 1 --seed 7
gen random_300_ccr0.5_s11  1    random --nodes 300 --density 0.1 --ccr 0.5 --seed 11
notes=()
for f in ffnn_192nodes transformer_block_215nodes; do
    if [ -f "$DATA/doppler/$f.txt" ]; then
        graphs+=("ref_$f|$DATA/doppler/$f.txt|1e10|DOPPLER reference graph")
    else
        notes+=("skipped ref_$f: $DATA/doppler/$f.txt not found (DP_DATA)")
        echo "mpi_place.sh: skipped ref_$f: $DATA/doppler/$f.txt not found" >&2
    fi
done

clusters=("2x4|8|2" "4x8|32|4")
methods=(pipeline cp heft anneal doppler)
inter() { python3 -c 'import sys; print(repr(float(sys.argv[1]) / 10))' "$1"; }

# the intra-node bandwidth check (8 devices, 2 machines)
ms() { run sim "$file" --assign "$dir/rr.assign" --devices 8 "$@" --json |
       python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["makespan"]))'; }
for gr in "${graphs[@]}"; do
    IFS='|' read -r name file bw _ <<<"$gr"
    run place "$file" --method round-robin --devices 8 -o "$dir/rr.assign" >/dev/null
    plain=$(ms); same=$(ms --machines 2 --internode "$bw,0"); slow=$(ms --machines 2 --internode "$(inter "$bw"),0")
    python3 - "$name" "$bw" "$plain" "$same" "$slow" <<'EOF'
import sys
name, bw, plain, same, slow = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
if abs(same - plain) > 1e-9 * plain:
    sys.exit(f"mpi_place.sh: {name}: intra-node bandwidth is not {bw}: round-robin makespan {plain} plain, {same} with --internode {bw},0")
if not slow > plain:
    sys.exit(f"mpi_place.sh: {name}: --internode {bw}/10 did not slow round-robin ({plain} -> {slow})")
EOF
done
echo "intra-node bandwidths checked" >&2

res="$dir/results.tsv"   # cluster graph ops internode method makespan lb ratio fallback wall status
: >"$res"
for cl in "${clusters[@]}"; do
    IFS='|' read -r cname ndev nmach <<<"$cl"
    for gr in "${graphs[@]}"; do
        IFS='|' read -r name file bw _ <<<"$gr"
        ib=$(inter "$bw")
        for m in "${methods[@]}"; do
            echo "$cname $name $m" >&2
            # anneal: its count, 20 x ops x devices, given as --budget: on
            # 32 devices it runs past its default time bound (30 s)
            budget=()
            if [ "$m" = anneal ]; then
                ops=$("$DOPPLER" info "$file" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["nodes"])')
                budget=(--budget $((20 * ops * ndev)))
            fi
            t0=$(date +%s.%N)
            if run place "$file" --method "$m" --devices "$ndev" --machines "$nmach" --internode "$ib,0" \
                   ${budget[@]+"${budget[@]}"} --json >"$dir/out.json" 2>"$dir/err"; then st=ok; else st=fail; fi
            t1=$(date +%s.%N)
            python3 - "$dir/out.json" "$dir/err" "$cname" "$name" "$ib" "$m" "$t0" "$t1" "$st" >>"$res" <<'EOF'
import json, sys
out, err, cname, name, ib, m, t0, t1, st = sys.argv[1:]
wall = float(t1) - float(t0)
if st == "ok":
    d = json.load(open(out))
    print("\t".join(map(str, [cname, name, d.get("nodes", len(d["assignment"])), ib, m, repr(d["makespan"]),
                              repr(d["lower_bound"]), repr(d["ratio"]), d.get("fallback") or "-", "%.3f" % wall, "ok"])))
else:
    msg = open(err).read().strip().replace("\t", " ").replace("\n", " ")[:200]
    print("\t".join([cname, name, "?", ib, m, "nan", "nan", "nan", "-", "%.3f" % wall, "fail: " + msg]))
EOF
        done
    done
done

total=$(python3 -c 'import sys; print("%.0f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$t_start" "$(date +%s.%N)")
python3 - "$res" "$total" "${notes[@]+"${notes[@]}"}" <<'EOF'
import math, sys
from collections import OrderedDict
res, total, notes = sys.argv[1], sys.argv[2], sys.argv[3:]
methods = ["pipeline", "cp", "heft", "anneal", "doppler"]
clusters = OrderedDict([("2x4", "2 machines x 4 devices (8)"), ("4x8", "4 machines x 8 devices (32)")])
rows = [l.rstrip("\n").split("\t") for l in open(res) if l.strip()]
R = OrderedDict()
for c, g, ops, ib, m, ms, lb, ratio, fb, wall, st in rows:
    R.setdefault(c, OrderedDict()).setdefault(g, {})[m] = dict(
        ops=ops, ib=ib, ms=float(ms), ratio=float(ratio), fb=fb, wall=float(wall), st=st)
fails = []
print("Makespan / lower bound (simulator, FIFO); best per row in **bold**; `s`: the method's answer was the best single device (fallback).")
print("Intra-node links: the default of `--devices N` in the graph's units (bandwidth 1e10 B/s for the workloads and the")
print("DOPPLER graphs, 1 B per time unit for layered/random; latency 0). Inter-node (`--internode B,L`): B = intra / 10")
print("(1e9 resp. 0.1), L = 10 x 0 = 0. anneal: default budget (20 x ops x devices simulations), seed 1; doppler: the")
print("pretrained policy zero-shot, greedy + 64 samples, seed 1.")
for c, desc in clusters.items():
    if c not in R:
        continue
    print()
    print(f"#### {desc}; inter-node links 10x slower (B = intra B / 10, L = 0)")
    print()
    print("| graph | ops | inter B | " + " | ".join(methods) + " |")
    print("|---|---:|---:|" + "---:|" * len(methods))
    logs = {m: [] for m in methods}
    wins = n = 0
    for g, by in R[c].items():
        ok = {m: v for m, v in by.items() if v["st"] == "ok"}
        best = min(v["ms"] for v in ok.values()) if ok else None
        cells = []
        for m in methods:
            v = by.get(m)
            if v is None or v["st"] != "ok":
                cells.append("fail")
                fails.append(f"{c} {g} {m}: {v['st'] if v else 'missing'}")
                continue
            s = "%.3f" % v["ratio"] + (" s" if v["fb"] != "-" else "")
            if v["ms"] <= best * (1 + 1e-9):
                s = f"**{s}**"
            cells.append(s)
            logs[m].append(math.log(v["ratio"]))
        if all(m in ok for m in ("cp", "heft", "doppler")):
            n += 1
            wins += ok["doppler"]["ms"] <= min(ok["cp"]["ms"], ok["heft"]["ms"]) * (1 + 1e-9)
        ops = next((v["ops"] for v in by.values() if v["ops"] != "?"), "?")
        ib = next(iter(by.values()))["ib"]
        print(f"| {g} | {ops} | {('%g' % float(ib)).replace('e+0', 'e')} | " + " | ".join(cells) + " |")
    gm = ["%.3f" % math.exp(sum(l) / len(l)) if l else "-" for l in (logs[m] for m in methods)]
    print(f"| **geomean** ({c}) | | | " + " | ".join(gm) + " |")
    print(f"| doppler <= min(cp, heft) | | | {wins} of {n} graphs |" + " |" * (len(methods) - 1))
print()
print("Wall seconds per method, summed over the graphs (whole `doppler place` process, one core):")
print()
print("| cluster | " + " | ".join(methods) + " |")
print("|---|" + "---:|" * len(methods))
for c in clusters:
    if c in R:
        print(f"| {c} | " + " | ".join("%.1f" % sum(by[m]["wall"] for by in R[c].values() if m in by) for m in methods) + " |")
print()
for note in notes:
    print(f"Note: {note}")
for f in fails:
    print(f"Failed: {f}")
print(f"Total run time of bench/mpi_place.sh: {total} s.")
sys.exit(1 if fails else 0)
EOF
