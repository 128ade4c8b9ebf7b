#!/usr/bin/env python3
"""test_onnx.py - demos/onnx2dpg.py on ONNX models built with onnx.helper
(demos/onnx_models.py: an MLP, a Llama-style block, a small convnet, a
10,000-node chain; a model whose initializers, one shared by two ops, and
Constant become weights, simulated with the shared weight on two devices)
and, when torch is importable, one exported by torch.onnx.export. Every expected count, FLOP total, byte size and edge is
written here from the model's dimensions and the documented rules; the
converted graphs are then placed with every method of build/doppler (or
$DOPPLER_CLI). Run from the repository root (./build.sh test does); skips
with a reason when no python has the onnx package. Closes with the line
"N passed, N failed, N skipped" like the C tests."""
import json
import math
import os
import subprocess
import sys
import time

SYSTEM_PYTHON = "/usr/bin/python3"   # Debian's python3-onnx installs for it

try:
    import onnx
except ImportError:
    if os.environ.get("ONNX2DPG_REEXEC") != "1" and os.access(SYSTEM_PYTHON, os.X_OK) and \
            os.path.realpath(SYSTEM_PYTHON) != os.path.realpath(sys.executable or ""):
        os.environ["ONNX2DPG_REEXEC"] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
    print("SKIP: no python with the onnx package (tried %s%s; Debian/Ubuntu: apt-get install python3-onnx)"
          % (sys.executable, "" if not os.access(SYSTEM_PYTHON, os.X_OK) else " and " + SYSTEM_PYTHON))
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)

from onnx import helper, TensorProto  # noqa: E402

sys.path.insert(0, "demos")
import onnx_models  # noqa: E402

CLI = os.environ.get("DOPPLER_CLI", "build/doppler")
TMP = "build/tmp/onnx"
CONVERTER = "demos/onnx2dpg.py"
METHODS = ["single", "round-robin", "random", "cp", "heft", "enumopt", "anneal", "doppler", "placeto"]
n_pass = n_fail = n_skip = 0


def check(cond, msg):
    global n_pass, n_fail
    if cond:
        n_pass += 1
    else:
        n_fail += 1
        print("FAIL test_onnx.py:%d: %s" % (sys._getframe(1).f_lineno, msg), flush=True)
    return cond


def skip(msg):
    global n_skip
    n_skip += 1
    print("SKIP: " + msg, flush=True)


def run(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          stdin=subprocess.DEVNULL, **kw)


def convert(model, out, *args):
    """Runs the converter with this python; returns the CompletedProcess."""
    if os.path.exists(out):
        os.unlink(out)
    return run([sys.executable, CONVERTER, model, "-o", out] + list(args))


def read_dpg(path):
    """ops: name -> dict(kind, compute, bytes, held, weights (names, in order)); edges: (src, dst) -> bytes."""
    ops, edges, held = {}, {}, {}
    with open(path) as f:
        for line in f:
            tok = line.split()
            if not tok:
                continue
            if tok[0] == "#" and len(tok) > 2 and tok[2] == "holds:":
                held[tok[1]] = tok[3:]
            elif tok[0] == "op":
                kv = dict(t.split("=", 1) for t in tok[2:])
                ops[tok[1]] = {"kind": kv.get("kind", "opaque"), "compute": float(kv.get("compute", 0)),
                               "bytes": float(kv.get("bytes", 0)), "held": held.get(tok[1]),
                               "weights": kv["weights"].split(",") if "weights" in kv else []}
            elif tok[0] == "edge":
                kv = dict(t.split("=", 1) for t in tok[3:])
                edges[(tok[1], tok[2])] = float(kv["bytes"]) if "bytes" in kv else ops[tok[1]]["bytes"]
    return ops, edges


def read_weights(path):
    """The weight records: [(name, bytes)] in file order."""
    out = []
    with open(path) as f:
        for line in f:
            tok = line.split()
            if tok and tok[0] == "weight":
                kv = dict(t.split("=", 1) for t in tok[2:])
                out.append((tok[1], float(kv.get("bytes", 0))))
    return out


def without_weights(path):
    """The file's records less the weight records and the ops' weights= fields."""
    keep = []
    with open(path) as f:
        for line in f:
            tok = line.split()
            if tok and tok[0] not in ("#", "weight"):
                keep.append(" ".join(t for t in tok if not t.startswith("weights=")))
    return keep


def info(path):
    r = run([CLI, "info", path, "--json"])
    return json.loads(r.stdout) if r.returncode == 0 else None


def check_graph(tag, path, want_ops, want_edges):
    """want_ops: name -> (kind or None, compute, bytes); want_edges: (src, dst) -> bytes."""
    ops, edges = read_dpg(path)
    check(set(ops) == set(want_ops), "%s: ops %s, expected %s" % (tag, sorted(ops), sorted(want_ops)))
    for name, (kind, compute, nbytes) in want_ops.items():
        if name not in ops:
            continue
        o = ops[name]
        if kind is not None:
            check(o["kind"] == kind, "%s: op %s kind %s, expected %s" % (tag, name, o["kind"], kind))
        check(o["compute"] == compute, "%s: op %s compute %g, expected %g" % (tag, name, o["compute"], compute))
        check(o["bytes"] == nbytes, "%s: op %s bytes %g, expected %g" % (tag, name, o["bytes"], nbytes))
    check(set(edges) == set(want_edges), "%s: edges differ: extra %s, missing %s" % (
        tag, sorted(set(edges) - set(want_edges)), sorted(set(want_edges) - set(edges))))
    for e, b in want_edges.items():
        if e in edges:
            check(edges[e] == b, "%s: edge %s -> %s bytes %g, expected %g" % (tag, e[0], e[1], edges[e], b))
    j = info(path)
    if check(j is not None, "%s: doppler info cannot read %s" % (tag, path)):
        total = sum(c for _, c, _ in want_ops.values())
        check(j["nodes"] == len(want_ops) and j["edges"] == len(want_edges),
              "%s: doppler info: %d nodes %d edges, expected %d and %d" % (tag, j["nodes"], j["edges"], len(want_ops), len(want_edges)))
        check(abs(j["total_compute"] - total) <= 1e-9 * total,
              "%s: doppler info: total compute %.17g, expected %.17g" % (tag, j["total_compute"], total))
    return ops, edges


def chain_edges(want_ops, pairs):
    """Edges whose bytes are the producer's whole output."""
    return {(a, b): want_ops[a][2] for a, b in pairs}


# ---------------------------------------------------------------------------
def test_mlp():
    m = TMP + "/mlp.onnx"
    onnx.save(onnx_models.mlp(), m)
    B, D, H, C = 8, 64, 128, 10      # --batch 8; the model's widths
    out = TMP + "/mlp.dpg"
    r = convert(m, out, "--batch", str(B))
    check(r.returncode == 0, "mlp: exit %d: %s" % (r.returncode, r.stderr))
    want = {
        "X": ("input", 0, 4 * B * D),                 # zero-cost source op
        "fc1": ("matmul", 2 * B * D * H, 4 * B * H),  # 2MNK
        "fc1_bias": ("add", B * H, 4 * B * H),        # one per element
        "relu1": ("relu", B * H, 4 * B * H),
        "fc2": ("matmul", 2 * B * H * C, 4 * B * C),  # Gemm 2MNK, bias not counted
        "softmax": ("softmax", 5 * B * C, 4 * B * C),
    }
    check_graph("mlp", out, want, chain_edges(want, [("X", "fc1"), ("fc1", "fc1_bias"), ("fc1_bias", "relu1"),
                                                     ("relu1", "fc2"), ("fc2", "softmax")]))
    check(r.stderr == "", "mlp: a rule is missing: %s" % r.stderr)
    # the initializers as weights: W1 [D, H], b1 [H], W2 [C, H], b2 [C], float32
    ws = read_weights(out)
    check(ws == [("W1", 4 * D * H), ("b1", 4 * H), ("W2", 4 * C * H), ("b2", 4 * C)], "mlp: weights %s" % ws)
    ops, _ = read_dpg(out)
    uses = {k: o["weights"] for k, o in ops.items()}
    check(uses == {"X": [], "fc1": ["W1"], "fc1_bias": ["b1"], "relu1": [], "fc2": ["W2", "b2"], "softmax": []},
          "mlp: weights used %s" % uses)

    # --coarsen 4: the bias add and the relu join fc1; Softmax is not element-wise
    outc = TMP + "/mlp_c4.dpg"
    r = convert(m, outc, "--batch", str(B), "--coarsen", "4")
    check(r.returncode == 0, "mlp --coarsen 4: exit %d: %s" % (r.returncode, r.stderr))
    g = "fc1+fc1_bias+relu1"
    wc = {"X": want["X"], g: ("matmul", 2 * B * D * H + 2 * B * H, 4 * B * H), "fc2": want["fc2"], "softmax": want["softmax"]}
    ops, _ = check_graph("mlp --coarsen 4", outc, wc, chain_edges(wc, [("X", g), (g, "fc2"), ("fc2", "softmax")]))
    if g in ops:
        check(ops[g]["held"] == ["fc1", "fc1_bias", "relu1"], "mlp --coarsen 4: holds %s" % ops[g]["held"])
        check(ops[g]["weights"] == ["W1", "b1"], "mlp --coarsen 4: %s uses %s" % (g, ops[g]["weights"]))
    # --coarsen 2: at most two nodes per op
    out2 = TMP + "/mlp_c2.dpg"
    r = convert(m, out2, "--batch", str(B), "--coarsen", "2")
    g2 = "fc1+fc1_bias"
    w2 = {"X": want["X"], g2: ("matmul", 2 * B * D * H + B * H, 4 * B * H), "relu1": want["relu1"],
          "fc2": want["fc2"], "softmax": want["softmax"]}
    check_graph("mlp --coarsen 2", out2, w2, chain_edges(w2, [("X", g2), (g2, "relu1"), ("relu1", "fc2"), ("fc2", "softmax")]))

    # a symbolic batch left unbound: the message names the node and the option
    bad = TMP + "/mlp_nobatch.dpg"
    r = convert(m, bad)
    check(r.returncode == 1, "mlp without --batch: exit %d" % r.returncode)
    check("fc1" in r.stderr and "--batch" in r.stderr and "--dim batch=" in r.stderr,
          "mlp without --batch: message %r" % r.stderr)
    check(not os.path.exists(bad) and not os.path.exists(bad + ".tmp"), "mlp without --batch: an output file was written")
    # the same bound by name
    r = convert(m, bad, "--dim", "batch=%d" % B)
    check(r.returncode == 0 and read_dpg(bad)[0]["fc1"]["compute"] == 2 * B * D * H,
          "mlp --dim batch=8: exit %d %s" % (r.returncode, r.stderr))

    # --opaque: cost-only ops, which the CPU executor runs as busy kernels
    outo = TMP + "/mlp_opaque.dpg"
    r = convert(m, outo, "--batch", str(B), "--opaque")
    ops, _ = read_dpg(outo)
    check(r.returncode == 0 and all(o["kind"] == "opaque" for o in ops.values()), "mlp --opaque: kinds %s" % ops)
    assign = TMP + "/mlp_opaque.assign"
    r = run([CLI, "place", outo, "--method", "round-robin", "--devices", "2", "--out", assign])
    r = run([CLI, "exec", outo, "--assign", assign, "--backend", "cpu", "--devices", "2", "--reps", "1", "--json"])
    check(r.returncode == 0 and json.loads(r.stdout or "{}").get("wall_median", 0) > 0,
          "mlp --opaque: exec exit %d: %s" % (r.returncode, r.stderr))
    return [out, outc]


def rmsnorm_ops(tag, T, D, x_bytes):
    return {
        tag + "_pow": ("opaque", T * D, 4 * T * D),
        tag + "_mean": ("reduce", T * D, 4 * T),      # one per input element
        tag + "_eps": ("add", T, 4 * T),
        tag + "_sqrt": ("opaque", T, 4 * T),
        tag + "_div": ("mul", T * D, 4 * T * D),
        tag + "_scale": ("mul", T * D, 4 * T * D),
    }


def test_llama():
    T, D, H, F = 16, 32, 2, 64       # --dim seq=16, width, heads, MLP width; --batch 1
    hd = D // H
    m = TMP + "/llama.onnx"
    onnx.save(onnx_models.llama_block(D, H, F), m)
    out = TMP + "/llama.dpg"
    r = convert(m, out, "--batch", "1", "--dim", "seq=%d" % T)
    check(r.returncode == 0, "llama: exit %d: %s" % (r.returncode, r.stderr))
    a, n = "L0_attn_norm", "L0_mlp_norm"
    want = {"x": ("input", 0, 4 * T * D)}
    want.update(rmsnorm_ops(a, T, D, 4 * T * D))
    want.update(rmsnorm_ops(n, T, D, 4 * T * D))
    for t in "qkv":
        want["L0_%s_proj" % t] = ("matmul", 2 * T * D * D, 4 * T * D)
        want["L0_%s_heads" % t] = ("opaque", 0, 4 * T * D)       # Reshape: a view
        want["L0_%s_T" % t] = ("transpose", T * D, 4 * T * D)    # a copy
    want.update({
        "L0_scores": ("matmul", 2 * H * T * T * hd, 4 * H * T * T),
        "L0_scale": ("scale", H * T * T, 4 * H * T * T),          # Mul by a one-element constant
        "L0_softmax": ("softmax", 5 * H * T * T, 4 * H * T * T),
        "L0_context": ("matmul", 2 * H * T * hd * T, 4 * H * T * hd),
        "L0_ctx_T": ("transpose", T * D, 4 * T * D),
        "L0_ctx_merge": ("opaque", 0, 4 * T * D),
        "L0_o_proj": ("matmul", 2 * T * D * D, 4 * T * D),
        "L0_residual1": ("add", T * D, 4 * T * D),
        "L0_gate_proj": ("matmul", 2 * T * D * F, 4 * T * F),
        "L0_up_proj": ("matmul", 2 * T * D * F, 4 * T * F),
        "L0_sigmoid": ("opaque", 4 * T * F, 4 * T * F),           # transcendental: 4
        "L0_silu": ("mul", T * F, 4 * T * F),
        "L0_glu": ("mul", T * F, 4 * T * F),
        "L0_down_proj": ("matmul", 2 * T * F * D, 4 * T * D),
        "L0_residual2": ("add", T * D, 4 * T * D),
    })
    check(len(want) == 37, "llama: %d expected ops, the model has 36 nodes and 1 input" % len(want))
    pairs = [("x", a + "_pow"), ("x", a + "_div"), ("x", "L0_residual1")]
    for norm, src, dst in ((a, "x", "q"), (n, "L0_residual1", None)):
        pairs += [(norm + "_pow", norm + "_mean"), (norm + "_mean", norm + "_eps"), (norm + "_eps", norm + "_sqrt"),
                  (norm + "_sqrt", norm + "_div"), (norm + "_div", norm + "_scale")]
    for t in "qkv":
        pairs += [(a + "_scale", "L0_%s_proj" % t), ("L0_%s_proj" % t, "L0_%s_heads" % t),
                  ("L0_%s_heads" % t, "L0_%s_T" % t)]
    pairs += [("L0_q_T", "L0_scores"), ("L0_k_T", "L0_scores"), ("L0_scores", "L0_scale"), ("L0_scale", "L0_softmax"),
              ("L0_softmax", "L0_context"), ("L0_v_T", "L0_context"), ("L0_context", "L0_ctx_T"),
              ("L0_ctx_T", "L0_ctx_merge"), ("L0_ctx_merge", "L0_o_proj"), ("L0_o_proj", "L0_residual1"),
              ("L0_residual1", n + "_pow"), ("L0_residual1", n + "_div"), (n + "_scale", "L0_gate_proj"),
              (n + "_scale", "L0_up_proj"), ("L0_gate_proj", "L0_sigmoid"), ("L0_gate_proj", "L0_silu"),
              ("L0_sigmoid", "L0_silu"), ("L0_silu", "L0_glu"), ("L0_up_proj", "L0_glu"), ("L0_glu", "L0_down_proj"),
              ("L0_residual1", "L0_residual2"), ("L0_down_proj", "L0_residual2")]
    check(len(pairs) == 44, "llama: %d expected edges" % len(pairs))
    check_graph("llama", out, want, chain_edges(want, pairs))
    total = sum(c for _, c, _ in want.values())
    # weights: Wq, Wk, Wv, Wo (D x D), Wgate, Wup (D x F), Wdown (F x D), two gains (D), float32; the
    # scalars two, eps, inv_sqrt_hd (float32); heads_shape (4 x int64), model_shape (3 x int64)
    ws = dict(read_weights(out))
    wbytes = 4 * (4 * D * D + 3 * D * F + 2 * D + 3) + 8 * (4 + 3)
    check(len(ws) == 14 and sum(ws.values()) == wbytes, "llama: %d weights, %g bytes, expected 14 and %d" % (
        len(ws), sum(ws.values()), wbytes))
    ops, _ = read_dpg(out)
    # shared: heads_shape by the three head reshapes, two and eps by both norms
    for w, users in (("heads_shape", ["L0_q_heads", "L0_k_heads", "L0_v_heads"]),
                     ("two", [a + "_pow", n + "_pow"]), ("eps", [a + "_eps", n + "_eps"])):
        got = sorted(k for k, o in ops.items() if w in o["weights"])
        check(got == sorted(users), "llama: weight %s used by %s, expected %s" % (w, got, users))

    # --coarsen 8: element-wise chains join their producer (worked out by hand
    # from the model: an op joins when all its inputs come from one group)
    outc = TMP + "/llama_c8.dpg"
    r = convert(m, outc, "--batch", "1", "--dim", "seq=%d" % T, "--coarsen", "8")
    check(r.returncode == 0, "llama --coarsen 8: exit %d: %s" % (r.returncode, r.stderr))
    groups = [["x"], [a + "_pow"], [a + "_mean", a + "_eps", a + "_sqrt"], [a + "_div", a + "_scale"],
              ["L0_q_proj", "L0_q_heads"], ["L0_k_proj", "L0_k_heads"], ["L0_v_proj", "L0_v_heads"],
              ["L0_q_T"], ["L0_k_T"], ["L0_v_T"], ["L0_scores", "L0_scale"], ["L0_softmax"], ["L0_context"],
              ["L0_ctx_T", "L0_ctx_merge"], ["L0_o_proj"], ["L0_residual1", n + "_pow"],
              [n + "_mean", n + "_eps", n + "_sqrt"], [n + "_div", n + "_scale"],
              ["L0_gate_proj", "L0_sigmoid", "L0_silu"], ["L0_up_proj"], ["L0_glu"], ["L0_down_proj"], ["L0_residual2"]]
    ops, edges = read_dpg(outc)
    names = {"+".join(g) for g in groups}
    check(set(ops) == names, "llama --coarsen 8: ops %s, expected %s" % (sorted(set(ops) ^ names), len(names)))
    for g in groups:
        nm = "+".join(g)
        if nm in ops:
            check(ops[nm]["compute"] == sum(want[x][1] for x in g), "llama --coarsen 8: %s compute %g" % (nm, ops[nm]["compute"]))
            check(len(g) == 1 or ops[nm]["held"] == g, "llama --coarsen 8: %s holds %s" % (nm, ops[nm]["held"]))
    # the residual group sends the residual (T x D) and the square (T x D) out
    g = "L0_residual1+" + n + "_pow"
    if g in ops:
        check(ops[g]["bytes"] == 2 * 4 * T * D, "llama --coarsen 8: %s bytes %g" % (g, ops[g]["bytes"]))
        check(edges.get((g, n + "_mean+" + n + "_eps+" + n + "_sqrt")) == 4 * T * D and
              edges.get((g, "L0_residual2")) == 4 * T * D, "llama --coarsen 8: edge bytes out of %s" % g)
    j = info(outc)
    check(j is not None and abs(j["total_compute"] - total) <= 1e-9 * total and j["edges"] == 29,
          "llama --coarsen 8: total compute %s (expected %g, unchanged), edges %s (expected 29)" % (
              j and j["total_compute"], total, j and j["edges"]))
    # --coarsen 2: at most two nodes per op (26 ops, counted by hand)
    out2 = TMP + "/llama_c2.dpg"
    r = convert(m, out2, "--batch", "1", "--dim", "seq=%d" % T, "--coarsen", "2")
    j = info(out2)
    check(r.returncode == 0 and j is not None and j["nodes"] == 26 and abs(j["total_compute"] - total) <= 1e-9 * total,
          "llama --coarsen 2: %s ops, compute %s" % (j and j["nodes"], j and j["total_compute"]))
    ops, _ = read_dpg(out2)
    check("L0_gate_proj+L0_sigmoid" in ops and "L0_silu" in ops, "llama --coarsen 2: the gate group %s" % sorted(ops))

    # seq left unbound: the message names the node and the --dim to pass
    bad = TMP + "/llama_noseq.dpg"
    r = convert(m, bad, "--batch", "1")
    check(r.returncode == 1 and "--dim seq=" in r.stderr and "L0_attn_norm_pow" in r.stderr and not os.path.exists(bad),
          "llama without seq: exit %d, %r" % (r.returncode, r.stderr))
    return [out, outc]


def test_convnet():
    N = 2                             # --batch 2
    m = TMP + "/convnet.onnx"
    onnx.save(onnx_models.convnet(), m)
    out = TMP + "/convnet.dpg"
    r = convert(m, out, "--batch", str(N))
    check(r.returncode == 0, "convnet: exit %d: %s" % (r.returncode, r.stderr))

    def conv(k, cin, cout, pixels, groups):   # 2 x kernel x Cin x Cout x output pixels, per group
        return groups * 2 * k * (cin // groups) * (cout // groups) * pixels * N

    want = {
        "X": ("input", 0, 4 * N * 3 * 16 * 16),
        "conv1": ("opaque", conv(9, 3, 8, 16 * 16, 1), 4 * N * 8 * 16 * 16),
        "relu1": ("relu", N * 8 * 16 * 16, 4 * N * 8 * 16 * 16),
        "pool1": ("opaque", N * 8 * 8 * 8 * 4, 4 * N * 8 * 8 * 8),    # output x kernel (2x2)
        "conv2": ("opaque", conv(9, 8, 16, 8 * 8, 2), 4 * N * 16 * 8 * 8),
        "relu2": ("relu", N * 16 * 8 * 8, 4 * N * 16 * 8 * 8),
        "gap": ("opaque", N * 16 * 8 * 8, 4 * N * 16),               # one per input element
        "flatten": ("opaque", 0, 4 * N * 16),
        "fc": ("matmul", 2 * N * 16 * 10, 4 * N * 10),
    }
    check_graph("convnet", out, want, chain_edges(want, [("X", "conv1"), ("conv1", "relu1"), ("relu1", "pool1"),
                                                         ("pool1", "conv2"), ("conv2", "relu2"), ("relu2", "gap"),
                                                         ("gap", "flatten"), ("flatten", "fc")]))
    return [out]


def test_torch():
    try:
        import torch
    except Exception as e:   # absent, or present and broken
        skip("torch.onnx.export: no torch for %s (%s)" % (sys.executable, str(e).splitlines()[0] if str(e) else type(e).__name__))
        return []
    B, T, D, F = 2, 8, 16, 32

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(D)
            self.up = torch.nn.Linear(D, F)
            self.down = torch.nn.Linear(F, D)

        def forward(self, x):
            return x + self.down(torch.nn.functional.relu(self.up(self.norm(x))))

    m = TMP + "/torch_block.onnx"
    torch.onnx.export(Block(), torch.zeros(B, T, D), m, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
    out = TMP + "/torch_block.dpg"
    r = convert(m, out, "--batch", str(B))
    check(r.returncode == 0, "torch: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return []
    ops, edges = read_dpg(out)
    mm = sorted(o["compute"] for o in ops.values() if o["kind"] == "matmul")
    check(mm == [2 * B * T * D * F] * 2, "torch: matmul FLOPs %s, expected two of 2 x %d x %d x %d" % (mm, B * T, D, F))
    ln = [o for o in ops.values() if o["kind"] == "layernorm"]
    check(len(ln) == 1 and ln[0]["compute"] == 5 * B * T * D and ln[0]["bytes"] == 4 * B * T * D,
          "torch: layernorm %s" % ln)
    # LayerNormalization, MatMul + Add (bias), Relu, MatMul + Add (bias), Add (residual): one per element but
    # the matmuls and the norm
    elem = B * T * F + B * T * F + B * T * D + B * T * D
    total = 2 * 2 * B * T * D * F + 5 * B * T * D + elem
    # the parameters as weights: LayerNorm scale and bias (D each), up (D x F, F), down (F x D, D); float32
    ws = read_weights(out)
    wbytes = 4 * (2 * D + D * F + F + F * D + D)
    check(len(ws) == 6 and sum(b for _, b in ws) == wbytes, "torch: weights %s, expected 6 of %d bytes in all" % (ws, wbytes))
    mm_w = [len(o["weights"]) for o in ops.values() if o["kind"] == "matmul"]
    check(mm_w == [1, 1], "torch: the matmuls use %s weights, expected one each" % mm_w)
    j = info(out)
    check(j is not None and j["nodes"] == 8 and abs(j["total_compute"] - total) <= 1e-9 * total,
          "torch: %s ops (expected 7 nodes and the input), compute %s (expected %d)" % (
              j and j["nodes"], j and j["total_compute"], total))
    return [out]


def test_errors():
    d = TMP
    V = helper.make_tensor_value_info

    def model(nodes, inputs, outputs, inits=(), vi=(), opsets=(("", 17),)):
        g = helper.make_graph(nodes, "bad", inputs, outputs, list(inits), value_info=list(vi))
        mm = helper.make_model(g, opset_imports=[helper.make_opsetid(a, b) for a, b in opsets])
        mm.ir_version = 8
        return mm

    def refused(tag, m, want_words, *args):
        p, out = d + "/%s.onnx" % tag, d + "/%s.dpg" % tag
        if isinstance(m, bytes):
            with open(p, "wb") as f:
                f.write(m)
        else:
            onnx.save(m, p)
        r = convert(p, out, *args)
        check(r.returncode == 1, "%s: exit %d, expected 1 (%s)" % (tag, r.returncode, r.stderr.strip()))
        check(all(w in r.stderr for w in want_words), "%s: message %r lacks %s" % (tag, r.stderr.strip(), want_words))
        check(not os.path.exists(out) and not os.path.exists(out + ".tmp"), "%s: output file written" % tag)

    X = V("X", TensorProto.FLOAT, [2, 3])
    refused("not_onnx", b"this is not a protobuf \xff\xff\xff", ["not a readable ONNX model"])
    refused("undefined_input", model([helper.make_node("Add", ["X", "ghost"], ["Y"], name="adder")], [X],
                                     [V("Y", TensorProto.FLOAT, [2, 3])]), ["adder", "ghost"])
    refused("bad_shapes", model([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm_bad")],
                                [X, V("W", TensorProto.FLOAT, [4, 5])], [V("Y", TensorProto.FLOAT, None)]),
            ["mm_bad", "shape"])
    then_g = helper.make_graph([helper.make_node("Identity", ["X"], ["t"])], "then", [], [V("t", TensorProto.FLOAT, [2, 3])])
    refused("subgraph", model([helper.make_node("If", ["c"], ["Y"], name="branch", then_branch=then_g, else_branch=then_g)],
                              [V("c", TensorProto.BOOL, []), X], [V("Y", TensorProto.FLOAT, [2, 3])]),
            ["branch", "subgraphs"])
    cyc = model([helper.make_node("Relu", ["b"], ["a"], name="ra"), helper.make_node("Relu", ["a"], ["b"], name="rb")],
                [X], [V("a", TensorProto.FLOAT, [2, 3])])
    refused("cycle", cyc, ["cycle"])
    refused("strings", model([helper.make_node("Identity", ["S"], ["Y"], name="id_str")],
                             [V("S", TensorProto.STRING, [2])], [V("Y", TensorProto.STRING, [2])]), ["S", "data type"])
    # bad usage: exit 2 (argparse), nothing written
    r = convert(d + "/cycle.onnx", d + "/usage.dpg", "--dim", "seq=x")
    check(r.returncode == 2 and "--dim" in r.stderr and not os.path.exists(d + "/usage.dpg"),
          "--dim seq=x: exit %d, %r" % (r.returncode, r.stderr))

    # an op type with no rule: output elements, listed once on stderr
    frob = model([helper.make_node("Frob", ["X"], ["f1"], name="frob1", domain="my.ops"),
                  helper.make_node("Frob", ["f1"], ["f2"], name="frob2", domain="my.ops"),
                  helper.make_node("Relu", ["f2"], ["Y"], name="relu")],
                 [X], [V("Y", TensorProto.FLOAT, [2, 3])],
                 vi=[V("f1", TensorProto.FLOAT, [2, 3]), V("f2", TensorProto.FLOAT, [2, 3])],
                 opsets=(("", 17), ("my.ops", 1)))
    p, out = d + "/frob.onnx", d + "/frob.dpg"
    onnx.save(frob, p)
    r = convert(p, out)
    check(r.returncode == 0, "frob: exit %d: %s" % (r.returncode, r.stderr))
    lines = [ln for ln in r.stderr.splitlines() if "Frob" in ln]
    check(len(lines) == 1 and "2 nodes" in lines[0], "frob: stderr %r" % r.stderr)
    if r.returncode == 0:
        ops, _ = read_dpg(out)
        check(ops["frob1"]["compute"] == 6 and ops["frob2"]["compute"] == 6 and ops["frob1"]["kind"] == "opaque",
              "frob: ops %s" % ops)


def test_weights():
    """Initializers and Constant outputs as weights: records, uses, --coarsen, and the
    simulated peaks with a shared weight on two devices (worked out by hand)."""
    V = helper.make_tensor_value_info
    F = TensorProto.FLOAT
    nodes = [
        helper.make_node("Constant", [], ["s_1_shared"], name="const",
                         value=helper.make_tensor("cv", F, [2, 8], [0.0] * 16)),
        helper.make_node("MatMul", ["X", "W"], ["h"], name="mm"),
        helper.make_node("Add", ["h", "s=1 shared"], ["a"], name="add_a"),
        helper.make_node("Mul", ["h", "s=1 shared"], ["b"], name="mul_b"),
        helper.make_node("Sum", ["a", "b", "s_1_shared"], ["Y"], name="join"),
    ]
    inits = [helper.make_tensor("W", F, [4, 8], [0.0] * 32),            # 4 x 8 float32 = 128 bytes
             helper.make_tensor("s=1 shared", F, [8], [0.0] * 8),       # 32 bytes, read by add_a and mul_b
             helper.make_tensor("unused", F, [100], [0.0] * 100)]       # read by no node: no weight
    g = helper.make_graph(nodes, "weights", [V("X", F, [2, 4])], [V("Y", F, [2, 8])], inits)
    mm = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    mm.ir_version = 8
    m, out = TMP + "/weights.onnx", TMP + "/weights.dpg"
    onnx.save(mm, m)
    r = convert(m, out)
    check(r.returncode == 0, "weights: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    # names by the op names' rule: ' ' and '=' become '_'; the Constant's output, also
    # s_1_shared, comes second (its reader is later in the file) and gets _2
    ws = read_weights(out)
    check(ws == [("W", 128), ("s_1_shared", 4 * 8), ("s_1_shared_2", 4 * 2 * 8)], "weights: records %s" % ws)
    want = {"X": ("input", 0, 4 * 2 * 4),
            "mm": ("matmul", 2 * 2 * 8 * 4, 4 * 2 * 8),
            "add_a": ("add", 2 * 8, 4 * 2 * 8),
            "mul_b": ("mul", 2 * 8, 4 * 2 * 8),          # not scale: the weight has 8 elements
            "join": ("add", 2 * 8, 4 * 2 * 8)}
    ops, _ = check_graph("weights", out, want, chain_edges(want, [("X", "mm"), ("mm", "add_a"), ("mm", "mul_b"),
                                                                  ("add_a", "join"), ("mul_b", "join")]))
    uses = {k: o["weights"] for k, o in ops.items()}
    check(uses == {"X": [], "mm": ["W"], "add_a": ["s_1_shared"], "mul_b": ["s_1_shared"], "join": ["s_1_shared_2"]},
          "weights: uses %s" % uses)
    # --no-weights: the same graph less the weights (the figures before weights)
    out0 = TMP + "/weights_none.dpg"
    r = convert(m, out0, "--no-weights")
    check(r.returncode == 0 and read_weights(out0) == [] and "weights=" not in open(out0).read(),
          "weights --no-weights: exit %d, weights written" % r.returncode)
    check(r.returncode == 0 and without_weights(out) == without_weights(out0),
          "weights: ops, edges or bytes differ with and without weights")
    # --coarsen 4: add_a, mul_b and join (element-wise, reading only mm's group) join mm;
    # the shared weight is used once by the merged op
    outc = TMP + "/weights_c4.dpg"
    r = convert(m, outc, "--coarsen", "4")
    grp = "mm+add_a+mul_b+join"
    wc = {"X": want["X"], grp: ("matmul", 2 * 2 * 8 * 4 + 3 * 2 * 8, 4 * 2 * 8)}
    ops, _ = check_graph("weights --coarsen 4", outc, wc, chain_edges(wc, [("X", grp)]))
    check(read_weights(outc) == ws, "weights --coarsen 4: records %s" % read_weights(outc))
    if grp in ops:
        check(ops[grp]["weights"] == ["W", "s_1_shared", "s_1_shared_2"],
              "weights --coarsen 4: %s uses %s" % (grp, ops[grp]["weights"]))

    # doppler sim, 2 devices (speed 1e9, bandwidth 1e10, no latency): X, mm, add_a, join on
    # device 0, mul_b on device 1, so the shared weight (32) is held on both. Times in ns:
    #   dev 0: X 0..0 (out 32); mm 0..128 (out h 64; X's output freed at 128); add_a
    #          128..144 (out a 64; h freed at 144, after its copy); copy of b (64) from 150.4;
    #          join 156.8..172.8 (out Y 64, a sink's, stays): peak at 156.8 = a + copy of b + Y
    #          = 192 over the weights W + shared + constant = 128 + 32 + 64 = 224 -> 416
    #   dev 1: copy of h (64) at 128, arrives 134.4; mul_b 134.4..150.4 (out b 64): peak
    #          64 + 64 = 128 over the shared weight 32 -> 160
    assign = TMP + "/weights.assign"
    with open(assign, "w") as f:
        f.write("0\n0\n0\n1\n0\n")
    peaks = {}
    for tag, g in (("weights", out), ("no weights", out0)):
        r = run([CLI, "sim", g, "--devices", "2", "--assign", assign, "--json"])
        j = json.loads(r.stdout) if r.returncode == 0 else {}
        peaks[tag] = j.get("peak_bytes")
        check(r.returncode == 0 and abs(j.get("makespan", 0) - 172.8e-9) <= 1e-15,
              "weights: sim %s: exit %d, makespan %s (expected 172.8 ns) %s" % (tag, r.returncode, j.get("makespan"),
                                                                             r.stderr.strip()))
    check(peaks["weights"] == [416, 160], "weights: sim peak bytes %s, expected [416, 160]" % peaks["weights"])
    check(peaks["no weights"] == [192, 128], "weights: sim peak bytes without weights %s, expected [192, 128]" %
          peaks["no weights"])
    # all on device 0: every weight once there; nothing on device 1
    with open(assign, "w") as f:
        f.write("0\n0\n0\n0\n0\n")
    r = run([CLI, "sim", out, "--devices", "2", "--assign", assign, "--json"])
    j = json.loads(r.stdout) if r.returncode == 0 else {}
    # one device: X 32 until mm ends; h, a, b, Y 64 each; peak when join runs: a + b + Y = 192
    # (h freed when mul_b, its last reader, ends), or during mul_b: h + a + b = 192
    check(j.get("peak_bytes") == [224 + 192, 0], "weights: sim on one device: peak bytes %s, expected [416, 0]" %
          j.get("peak_bytes"))
    # doppler info reads it; where it reports resident memory, the weights total 224
    j = info(out)
    if j is not None:
        for k in ("weight_bytes", "resident_bytes"):
            if k in j:
                check(j[k] == 224, "weights: doppler info %s %s, expected 224" % (k, j[k]))


def test_chain():
    """10,000 nodes: the count and the FLOPs; the time is printed (bench/RESULTS.md)."""
    n, B, W = 10000, 4, 16
    m = TMP + "/chain.onnx"
    onnx.save(onnx_models.chain(n, W), m)
    out = TMP + "/chain.dpg"
    t0 = time.time()
    r = convert(m, out, "--batch", str(B))
    dt = time.time() - t0
    check(r.returncode == 0, "chain: exit %d: %s" % (r.returncode, r.stderr))
    j = info(out)
    check(j is not None and j["nodes"] == n + 1 and j["edges"] == n and j["total_compute"] == n * B * W,
          "chain: %s" % ((j and (j["nodes"], j["edges"], j["total_compute"])),))
    print("chain of %d nodes converted in %.2f s (the converter's own process, python start included)" % (n, dt))
    outc = TMP + "/chain_c16.dpg"
    r = convert(m, outc, "--batch", str(B), "--coarsen", "16")
    j = info(outc)
    # relu0 reads the input op (never a group head) and heads the first group
    check(r.returncode == 0 and j is not None and j["nodes"] == 1 + math.ceil(n / 16) and j["total_compute"] == n * B * W,
          "chain --coarsen 16: %s" % ((j and (j["nodes"], j["total_compute"])),))


def test_place(graphs):
    pol, pt = TMP + "/policy.dpl", TMP + "/placeto.dpl"
    r1 = run([CLI, "train", graphs[0], "--stages", "il", "--episodes", "5", "--hidden", "8", "--layers", "1", "--out", pol])
    check(r1.returncode == 0, "train doppler: exit %d: %s" % (r1.returncode, r1.stderr[-300:]))
    r2 = run([CLI, "train", graphs[0], "--algo", "placeto", "--episodes", "2", "--hidden", "8", "--out", pt])
    check(r2.returncode == 0, "train placeto: exit %d: %s" % (r2.returncode, r2.stderr[-300:]))
    for g in graphs:
        for meth in METHODS:
            args = [CLI, "place", g, "--method", meth, "--json"]
            if meth == "doppler":
                args += ["--policy", pol, "--samples", "2"]
            elif meth == "placeto":
                args += ["--policy", pt]
            r = run(args)
            ok = r.returncode == 0
            try:
                j = json.loads(r.stdout) if ok else {}
            except ValueError:
                j, ok = {}, False
            ms, lb = j.get("makespan", float("nan")), j.get("lower_bound", float("nan"))
            check(ok and math.isfinite(ms) and lb > 0 and ms >= lb * (1 - 1e-12),
                  "place %s --method %s: exit %d, makespan %s, lower bound %s %s" % (
                      g, meth, r.returncode, ms, lb, r.stderr.strip()[-200:]))


def main():
    os.makedirs(TMP, exist_ok=True)
    if not os.access(CLI, os.X_OK):
        check(False, "%s is not built" % CLI)
    t0 = time.time()
    graphs = test_mlp()
    graphs += test_llama()
    graphs += test_convnet()
    graphs += test_torch()
    test_errors()
    test_weights()
    test_chain()
    test_place(graphs)
    print("test_onnx took %.1f s (python %s, onnx %s)" % (time.time() - t0, sys.version.split()[0], onnx.__version__))
    print("%d passed, %d failed, %d skipped" % (n_pass, n_fail, n_skip), flush=True)
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
