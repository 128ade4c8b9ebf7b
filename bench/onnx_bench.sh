#!/usr/bin/env bash
# bench/onnx_bench.sh [NODES] - times demos/onnx2dpg.py on models built by
# demos/onnx_models.py: a chain of NODES (default 10000) element-wise nodes,
# plain and with --coarsen 16, and a stack of Llama-style blocks of about
# NODES nodes (36 a block), plain and with --coarsen 8; then doppler info and
# cp on the plain chain. Prints a markdown table. Run from the repository root after ./build.sh. Skips (exit
# 0) when no python has the onnx package.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
n=${1:-10000}
d=build/tmp/onnx_bench
mkdir -p "$d"
py=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import onnx' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "skipped: no python with the onnx package (Debian/Ubuntu: apt-get install python3-onnx)"
    exit 0
fi
"$py" demos/onnx_models.py chain --nodes "$n" -o "$d/chain.onnx" || exit 1
layers=$(((n + 35) / 36))
"$py" demos/onnx_models.py llama-block --layers "$layers" -o "$d/llama.onnx" || exit 1
# seconds of wall time of a command (its output to $d/out)
secs() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >"$d/out" 2>&1 || { cat "$d/out" >&2; return 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
echo "$n-node chain ($(du -k "$d/chain.onnx" | cut -f1) KiB), $layers Llama-style blocks ($((36 * layers)) nodes, $(du -k "$d/llama.onnx" | cut -f1) KiB with its weights), $("$py" -c 'import onnx, sys; print("python", sys.version.split()[0], "onnx", onnx.__version__)'), $(nproc) cores"
echo
echo "| command | seconds (wall, python start included) | ops out |"
echo "|---|---:|---:|"
for k in 1 16; do
    t=$(secs "$py" demos/onnx2dpg.py "$d/chain.onnx" -o "$d/chain_$k.dpg" --batch 4 --coarsen "$k") || exit 1
    echo "| onnx2dpg.py chain.onnx --batch 4 --coarsen $k | $t | $(grep -c '^op ' "$d/chain_$k.dpg") |"
done
for k in 1 8; do
    t=$(secs "$py" demos/onnx2dpg.py "$d/llama.onnx" -o "$d/llama_$k.dpg" --batch 1 --dim seq=128 --coarsen "$k") || exit 1
    echo "| onnx2dpg.py llama.onnx --batch 1 --dim seq=128 --coarsen $k | $t | $(grep -c '^op ' "$d/llama_$k.dpg") |"
done
t=$(secs build/doppler info "$d/chain_1.dpg") || exit 1
echo "| doppler info (the $((n + 1))-op graph) | $t | |"
t=$(secs build/doppler place "$d/chain_1.dpg" --method cp) || exit 1
echo "| doppler place --method cp (the $((n + 1))-op graph) | $t | |"
