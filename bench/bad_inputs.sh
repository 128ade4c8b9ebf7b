#!/usr/bin/env bash
# bench/bad_inputs.sh [CLI] - bad inputs, one per class, against the CLI
# (bench/RESULTS.md part 7): each row gives the command's class, its exit
# status against the one expected (1: a failure; 2: bad usage, such as an
# output naming an input or another output), the first words of its message, the
# seconds it took, and whether every file it was given or could have
# written is as before (checksums and modes, hard links). A row whose
# status, files or time (a refusal before the work: under 2 s) is not as
# expected is a defect; the closing line counts them (target 0). From the
# repository root after ./build.sh; about 10 s.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
D=${1:-build/doppler}
case "$D" in /*) ;; *) D=$PWD/$D ;; esac
R=$PWD
G=$R/graphs/layered_100.dpg
T=$(mktemp -d)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
cd "$T" || exit 1
defects=0
rows=0
echo "| class | command | exit (expected) | message | seconds | files as before |"
echo "|---|---|---|---|---:|---|"
# state FILE...: checksum, mode and link count of each (or "none")
state() {
    local f
    for f in "$@"; do
        if [ -e "$f" ]; then printf '%s %s %s\n' "$(cksum <"$f" | cut -d' ' -f1)" "$(stat -c '%a %h' "$f")" "$f"
        else printf 'none %s\n' "$f"; fi
    done
}
# row CLASS EXPECTED-RC "FILES TO KEEP" CMD... : runs CMD in $T
row() {
    local class=$1 want=$2 keep=$3 rc t0 t1 secs msg before after ok=yes
    shift 3
    cp "$G" g.dpg   # every row gets the graph afresh
    # shellcheck disable=SC2086
    before=$(state $keep)
    t0=$(date +%s.%N)
    "$@" >out.txt 2>err.txt </dev/null
    rc=$?
    t1=$(date +%s.%N)
    # shellcheck disable=SC2086
    after=$(state $keep)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    [ "$before" = "$after" ] || ok=NO
    msg=$(head -c 300 err.txt | head -n 1 | sed 's/^doppler[^:]*: //; s/|/\\|/g')
    msg=${msg//$R\//}
    msg=${msg:0:90}
    local cmd="${*/#$D/doppler}"
    cmd=${cmd//$R\//}
    local bad=""
    if [ "$rc" != "$want" ] || [ "$ok" != yes ] || awk -v s="$secs" 'BEGIN { exit !(s > 2) }'; then
        bad=" **DEFECT**"
        defects=$((defects + 1))
    fi
    rows=$((rows + 1))
    echo "| $class | \`${cmd:0:80}\` | $rc ($want)$bad | $msg | $secs | $ok |"
}
cp "$G" g.dpg
echo "S" >keep.assign
mkdir dir
# outputs checked before the work
row "output in a missing directory" 1 "g.dpg" "$D" train g.dpg --stages il --episodes 3000 -o missing/p.dpl
row "curve in a missing directory" 1 "g.dpg" "$D" train g.dpg --stages il --episodes 3000 -o p.dpl --curve missing/c.csv
row "output is a directory" 1 "" "$D" calibrate --backend cpu -o dir
row "output is the input graph" 2 "g.dpg" "$D" place g.dpg --method heft -o g.dpg
row "Gantt chart over the input" 2 "g.dpg" "$D" place g.dpg --method heft --gantt g.dpg
row "policy over the input graph" 2 "g.dpg" "$D" train g.dpg --stages il --episodes 10 -o g.dpg
"$D" place g.dpg --method heft -o a.assign >/dev/null 2>&1
row "sim's chart over its assignment" 2 "g.dpg a.assign" "$D" sim g.dpg --assign a.assign --gantt a.assign
row "two outputs, one file" 2 "keep.assign" "$D" place g.dpg --method heft -o keep.assign --gantt keep.assign
# a failure leaves every output as it was
row "one bad output of two" 1 "keep.assign" "$D" place g.dpg --method heft -o keep.assign --gantt dir
echo "P" >p.dpl
row "policy kept when its curve fails" 1 "p.dpl" "$D" train g.dpg --stages il --episodes 10 -o p.dpl --curve-svg dir
# rewriting keeps mode and links; read-only refused
echo "S" >private.assign; chmod 600 private.assign
"$D" place g.dpg --method heft -o private.assign >/dev/null 2>&1
m=$(stat -c %a private.assign)
rows=$((rows + 1))
if [ "$m" = 600 ]; then echo "| mode kept on rewrite | \`doppler place ... -o private.assign\` (mode 600) | 0 (0) | | | mode $m |"
else echo "| mode kept on rewrite | \`doppler place ... -o private.assign\` (mode 600) | 0 (0) **DEFECT** | | | mode $m |"; defects=$((defects + 1)); fi
echo "R" >ro.assign; chmod 444 ro.assign
row "read-only output" 1 "ro.assign" "$D" place g.dpg --method heft -o ro.assign
echo "H" >h1.assign; ln h1.assign h2.assign
"$D" place g.dpg --method heft -o h1.assign >/dev/null 2>&1
rows=$((rows + 1))
if cmp -s h1.assign h2.assign && [ "$(stat -c %h h1.assign)" = 2 ]; then echo "| hard link kept on rewrite | \`doppler place ... -o h1.assign\` | 0 (0) | | | linked |"
else echo "| hard link kept on rewrite | \`doppler place ... -o h1.assign\` | 0 (0) **DEFECT** | | | broken |"; defects=$((defects + 1)); fi
# hostile names in SVG and JSON
printf 'doppler-graph 1\nop a\377\376<&]]> compute=1\nop b"\\\302 compute=2\nedge a\377\376<&]]> b"\\\302\n' >bad.dpg
row "non-UTF-8 bytes, quotes, < and & in names" 0 "bad.dpg" "$D" place bad.dpg --method heft --devices 1 --gantt bad.svg --json
rows=$((rows + 1))
if python3 -c 'import json, sys, xml.etree.ElementTree as E; json.load(open("out.txt")); E.parse("bad.svg")' 2>/dev/null; then
    echo "| ... its SVG and JSON parse (python3 xml, json) | | | | | yes |"
else echo "| ... its SVG and JSON parse (python3 xml, json) | | **DEFECT** | | | no |"; defects=$((defects + 1)); fi
# truncation, huge values, devices
"$D" convert "$G" new.dpg >/dev/null 2>&1   # written now: it declares its counts
head -n 60 new.dpg >cut.dpg
row "graph cut at a line boundary" 1 "cut.dpg" "$D" info cut.dpg
head -n 60 "$G" >oldcut.dpg
row "an old file (no counts) cut: reads, unchecked" 0 "oldcut.dpg" "$D" info oldcut.dpg
{ printf 'doppler-graph 1\nop a compute='; head -c 1000000 /dev/zero | tr '\0' 9; printf '9e999\n'; } >huge.dpg
row "a 10^6-digit number" 1 "huge.dpg" "$D" info huge.dpg
grep -q "not finite" err.txt || { echo "| ... its message ends with the reason | | **DEFECT** | | | |"; defects=$((defects + 1)); rows=$((rows + 1)); }
row "/dev/zero as a graph" 1 "" "$D" info /dev/zero
printf 'doppler-graph 1\nop a compute=1 compute=2\n' >twice.dpg
row "a field given twice" 1 "twice.dpg" "$D" info twice.dpg
# options
row "an option the method does not read" 2 "" "$D" place g.dpg --method heft --budget 5
row "an option given twice" 2 "" "$D" info g.dpg --devices 2 --devices 4
row "--devices against the graph's times" 1 "" "$D" info "$R/graphs/heft_example.dpg" --devices 4
row "'-' as an output: standard output" 0 "g.dpg" "$D" place g.dpg --method heft -o -
[ -e ./- ] && { echo "| ... no file named '-' | | **DEFECT** | | | |"; defects=$((defects + 1)); rows=$((rows + 1)); }
echo
echo "$rows rows, $defects defects (target 0)"
[ "$defects" = 0 ]
