#!/usr/bin/env bash
# bench/torch_bench.sh - PyTorch models end to end (bench/RESULTS.md, part 10).
#
# 1. bench/torch_models.py: eight models built in code with random weights
#    (torchvision resnet18, resnet50, mobilenet_v2, googlenet, inception_v3,
#    vit_b_16; a 12-layer nn.TransformerEncoder of width 768; a GPT-2-small-
#    like decoder of 12 blocks, 128 tokens), exported with torch.onnx.export
#    at opset 17 and converted by demos/onnx2dpg.py at batch 1 (and resnet18
#    at batch 8, also from a fixed-batch export): nodes, ops, weights, FLOPs,
#    seconds.
# 2. Every method on each converted graph on the H100 presets (h100-sxm:4 and
#    h100-sxm:8, fp32 and bf16): makespan / lower bound per method, the
#    lower bound and the best makespan in ms, doppler's (the pretrained
#    policy, zero-shot, greedy + 64 samples; then with --polish 1, one pass
#    of local search) and anneal's seconds; Placeto trained on each graph
#    (stage sim, 50 episodes from cp's placement), then greedy.
# 3. demos/torch_place.py --bench: the placed module with every op on one
#    device against the original (CPU), the bridge's own overhead.
# From the repository root after ./build.sh; needs /usr/bin/python3 (or
# python3) with torch, torchvision and onnx; skips (exit 0) without them.
# About 7 minutes on 2 cores.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
D=build/doppler
dir=build/tmp/torch_models
py=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch, torchvision, onnx' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "skipped: no python with torch, torchvision and onnx (Debian: python3-torch python3-torchvision python3-onnx)"
    exit 0
fi
echo "### Conversion"
echo
"$py" bench/torch_models.py --out "$dir" || exit 1
models="resnet18 resnet50 mobilenet_v2 googlenet inception_v3 vit_b_16 transformer gpt2"
methods="single,round-robin,random,cp,heft,enumopt,anneal,pipeline,doppler"
for cl in h100-sxm:4 h100-sxm:8; do
    for prec in fp32 bf16; do
        echo
        echo "### $cl, $prec"
        echo
        graphs=()
        for m in $models; do graphs+=("$dir/${m}_b1.dpg"); done
        "$D" bench "${graphs[@]}" --cluster "$cl" --precision "$prec" --methods "$methods" --json >"$dir/bench.json" ||
            exit 1
        : >"$dir/polish.json"   # the policy's answer then one pass of local search
        : >"$dir/placeto.json"  # Placeto trained on the graph (sim, 50 episodes from cp), then greedy
        for g in "${graphs[@]}"; do
            "$D" place "$g" --cluster "$cl" --precision "$prec" --method doppler --polish 1 --json >>"$dir/polish.json" ||
                exit 1
            "$D" train "$g" --algo placeto --stages sim --episodes 50 --cluster "$cl" --precision "$prec" \
                --out "$dir/placeto.dpl" >/dev/null || exit 1
            "$D" place "$g" --cluster "$cl" --precision "$prec" --method placeto --policy "$dir/placeto.dpl" \
                --json >>"$dir/placeto.json" || exit 1
        done
        "$py" - "$dir/bench.json" "$methods" "$dir/polish.json" "$dir/placeto.json" <<'EOF'
import json, os, sys
rows = json.load(open(sys.argv[1]))
methods = sys.argv[2].split(",")
for path, name in ((sys.argv[3], "doppler+polish"), (sys.argv[4], "placeto")):
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            r["method"] = name
            r.setdefault("infeasible", False)
            rows.append(r)
    methods.append(name)
by = {}
for r in rows:
    by.setdefault(os.path.basename(r["graph"])[:-len("_b1.dpg")], {})[r["method"]] = r
print("| model | ops | lower bound ms | best ms | " + " | ".join(methods) + " | doppler s | anneal s |")
print("|---|---:|---:|---:|" + "---:|" * len(methods) + "---:|---:|")
wins = pwins = total = 0
for g, ms in by.items():
    lb = ms["cp"]["lower_bound"]
    best = min(r["makespan"] for r in ms.values() if not r["infeasible"])
    cells = []
    for m in methods:
        r = ms[m]
        cells.append("infeasible" if r["infeasible"] else "%.3f%s" % (r["ratio"], "*" if r["fallback"] else ""))
    d = ms["doppler"]["makespan"]
    total += 1
    wins += d <= min(ms["cp"]["makespan"], ms["heft"]["makespan"]) * (1 + 1e-9)
    pwins += ms["doppler+polish"]["makespan"] <= min(ms["cp"]["makespan"], ms["heft"]["makespan"]) * (1 + 1e-9)
    print("| %s | %d | %.4g | %.4g | %s | %.3g | %.3g |" % (g, ms["cp"]["ops"], lb * 1e3, best * 1e3, " | ".join(cells),
                                                       ms["doppler"]["seconds"], ms["anneal"]["seconds"]))
print()
print("doppler at or below min(cp, heft) on %d of %d, polished %d of %d; '*': the best single device's fallback" % (
    wins, total, pwins, total))
EOF
    done
done
echo
echo "### The bridge's overhead (CPU)"
echo
"$py" demos/torch_place.py --bench || exit 1
