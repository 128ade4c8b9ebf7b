#!/usr/bin/env python3
"""test_onnx.py - demos/onnx2dpg.py on ONNX models built with onnx.helper
(demos/onnx_models.py: an MLP, a Llama-style block, a small convnet, a
10,000-node chain; a model whose initializers, one shared by two ops, and
Constant become weights, simulated with the shared weight on two devices;
the patterns torch.onnx.export writes that folding makes convertible: a
learned token expanded to a shape made of Constants, nn.MultiheadAttention's
Slice ends from Shape -> Gather -> Add -> Div -> Mul, a Range of a bound
dimension, a Reshape target from Shape, an Identity on a shared weight; a
fixed batch rescaled and one refused; Conv kinds; unknown sizes and their
causes; every folding rule op by op; source= names and the mapping JSON of
`doppler place --out NAME.json` round-tripped) and, when torch is
importable, models exported by torch.onnx.export (a block; a learned token
concatenated, nn.MultiheadAttention, an embedding of torch.arange(seq)).
Every expected count, FLOP total, byte size, edge and source list is
written here from the model's dimensions and the documented rules (where
torch chooses the node names, ops are found by kind); the converted graphs
are then placed with every method of build/doppler (or $DOPPLER_CLI). Run
from the repository root (./build.sh test does); skips with a reason when
no python has the onnx package, and the torch parts when torch is missing.
Closes with the line "N passed, N failed, N skipped" like the C tests."""
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
from dp_test import check, skip, done  # noqa: E402


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


def read_sources(path):
    """[(op name, [source names])] in file order, the source= field percent-decoded;
    also checks that the field holds only what the format allows."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            tok = line.split()
            if not tok or tok[0] != "op":
                continue
            src = [t for t in tok[2:] if t.startswith("source=")]
            if not check(len(src) == 1, "%s: op %s has %d source= fields" % (path, tok[1], len(src))):
                out.append((tok[1], []))
                continue
            names = []
            for enc in src[0][len("source="):].split(","):
                raw = enc.encode("utf-8")
                check(raw and not any(b <= 0x20 or b in b"\x7f=#," for b in raw),
                      "%s: op %s: source entry %r holds a byte it must escape" % (path, tok[1], enc))
                dec, i = bytearray(), 0
                while i < len(raw):
                    if raw[i] == ord("%"):
                        hx = raw[i + 1:i + 3].decode("ascii", "replace")
                        ok = len(hx) == 2 and all(c in "0123456789ABCDEF" for c in hx)
                        check(ok, "%s: op %s: bad escape in %r" % (path, tok[1], enc))
                        dec.append(int(hx, 16) if ok else 0)
                        i += 3
                    else:
                        dec.append(raw[i])
                        i += 1
                names.append(dec.decode("utf-8"))
            out.append((tok[1], names))
    return out


def node_names(m):
    """The source names of a model's nodes (documented: the name, or OpType_INDEX) and graph inputs."""
    inits = {t.name for t in m.graph.initializer}
    return [vi.name for vi in m.graph.input if vi.name not in inits] + \
        [nd.name or "%s_%d" % (nd.op_type, i) for i, nd in enumerate(m.graph.node)]


def check_sources(tag, path, onnx_path):
    """Every node and graph input of the model is listed once across the source lists."""
    got = sorted(n for _, ns in read_sources(path) for n in ns)
    want = sorted(node_names(onnx.load(onnx_path)))
    check(got == want, "%s: source lists %d entries, the model %d names; differ: %s" % (
        tag, len(got), len(want), sorted(set(got) ^ set(want))[:8]))


def make_model(nodes, inputs, outputs, inits=(), vi=(), opsets=(("", 17),), name="m"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits), value_info=list(vi))
    mm = helper.make_model(g, opset_imports=[helper.make_opsetid(a, b) for a, b in opsets])
    mm.ir_version = 8
    return mm


def ints(name, vals):
    return helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals)


def const(name, out, value):
    """A Constant node named name; value: a TensorProto or a list of int64 or a Python int (a scalar)."""
    if isinstance(value, list):
        value = ints(name + "_v", value)
    elif isinstance(value, int):
        value = helper.make_tensor(name + "_v", TensorProto.INT64, [], [value])
    return helper.make_node("Constant", [], [out], name=name, value=value)


def zeros(name, dims, dtype=None):
    return helper.make_tensor(name, dtype or TensorProto.FLOAT, dims, [0] * math.prod(dims))


def save_convert(tag, m, *args):
    """Saves model m as TMP/tag.onnx and converts it to TMP/tag.dpg; returns (process, dpg, onnx path)."""
    p, out = TMP + "/%s.onnx" % tag, TMP + "/%s.dpg" % tag
    onnx.save(m, p)
    r = convert(p, out, *args)
    return r, out, p


def header(path):
    with open(path, encoding="utf-8") as f:
        return [next(f) for _ in range(3)][1:]


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
        check(dict(read_sources(outc)).get(g) == ["fc1", "fc1_bias", "relu1"], "mlp --coarsen 4: sources %s" % read_sources(outc))
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
    # scalars two, eps, inv_sqrt_hd (float32). heads_shape and model_shape, what the Reshapes read
    # as their shape, are op parameters, not weights
    ws = dict(read_weights(out))
    wbytes = 4 * (4 * D * D + 3 * D * F + 2 * D + 3)
    check(len(ws) == 12 and sum(ws.values()) == wbytes, "llama: %d weights, %g bytes, expected 12 and %d" % (
        len(ws), sum(ws.values()), wbytes))
    ops, _ = read_dpg(out)
    check(not any(w in o["weights"] for o in ops.values() for w in ("heads_shape", "model_shape")),
          "llama: a Reshape's shape is used as a weight")
    # shared: two and eps by both norms
    for w, users in (("two", [a + "_pow", n + "_pow"]), ("eps", [a + "_eps", n + "_eps"])):
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
    check_sources("llama --coarsen 8", outc, m)
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
        "conv1": ("matmul", conv(9, 3, 8, 16 * 16, 1), 4 * N * 8 * 16 * 16),     # an implicit GEMM
        "relu1": ("relu", N * 8 * 16 * 16, 4 * N * 8 * 16 * 16),
        "pool1": ("opaque", N * 8 * 8 * 8 * 4, 4 * N * 8 * 8 * 8),    # output x kernel (2x2)
        "conv2": ("matmul", conv(9, 8, 16, 8 * 8, 2), 4 * N * 16 * 8 * 8),      # 2 groups of 4 channels
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
    torch_export(Block(), torch.zeros(B, T, D), m, ["x"], ["y"], {"x": {0: "batch"}, "y": {0: "batch"}})
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


def torch_export(module, args, path, inputs, outputs, axes):
    """torch.onnx.export at opset 17 with dynamic axes (torch 2.x: its TorchScript exporter)."""
    import inspect
    import torch
    kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(module, args, path, input_names=inputs, output_names=outputs, dynamic_axes=axes,
                      opset_version=17, **kw)


def test_torch_patterns():
    """The three torch patterns that failed before folding, exported by torch itself."""
    try:
        import torch
    except Exception as e:   # absent, or present and broken
        skip("torch patterns: no torch for %s (%s)" % (sys.executable, str(e).splitlines()[0] if str(e) else type(e).__name__))
        return []
    torch.manual_seed(0)
    graphs = []

    # 1. a learned token expanded to the batch and concatenated (ViT's class token)
    B, T, D = 3, 4, 8

    class Tok(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = torch.nn.Parameter(torch.zeros(1, 1, D))

        def forward(self, x):
            return torch.cat([self.tok.expand(x.shape[0], -1, -1), x], dim=1)

    m = TMP + "/torch_token.onnx"
    torch_export(Tok(), torch.zeros(2, T, D), m, ["x"], ["y"], {"x": {0: "batch"}, "y": {0: "batch"}})
    out = TMP + "/torch_token.dpg"
    r = convert(m, out, "--batch", str(B))
    check(r.returncode == 0 and r.stderr == "", "torch token: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode == 0:
        ops, _ = read_dpg(out)
        cat = [k for k, o in ops.items() if o["kind"] == "concat"]
        # the input and the Concat; everything else folds (the expanded token: B x 1 x D float32)
        if check(len(ops) == 2 and len(cat) == 1, "torch token: ops %s" % sorted(ops)):
            want = {"x": ("input", 0, 4 * B * T * D), cat[0]: ("concat", B * (T + 1) * D, 4 * B * (T + 1) * D)}
            check_graph("torch token", out, want, chain_edges(want, [("x", cat[0])]))
            ws = read_weights(out)
            check(len(ws) == 1 and ws[0][1] == 4 * B * D and ops[cat[0]]["weights"] == [ws[0][0]],
                  "torch token: weights %s" % ws)
        check_sources("torch token", out, m)
        graphs.append(out)

    # 2. nn.MultiheadAttention: its chunks are Slices whose ends come from Shape -> Gather -> Add -> Div -> Mul
    B, T, E, H = 2, 5, 16, 2
    hd, N = E // H, B * T

    class MHA(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = torch.nn.MultiheadAttention(E, H, batch_first=True)

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False)[0]

    m = TMP + "/torch_mha.onnx"
    torch_export(MHA().eval(), torch.zeros(3, T, E), m, ["x"], ["y"], {"x": {0: "batch"}, "y": {0: "batch"}})
    out = TMP + "/torch_mha.dpg"
    r = convert(m, out, "--batch", str(B))
    check(r.returncode == 0 and r.stderr == "", "torch mha: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode == 0:
        ops, edges = read_dpg(out)
        # in-projection (N x E -> 3E), scores and context per head (T x T x hd each), out-projection
        mm = sorted(o["compute"] for o in ops.values() if o["kind"] == "matmul")
        want_mm = sorted([2 * N * E * 3 * E, 2 * B * H * T * T * hd, 2 * B * H * T * hd * T, 2 * N * E * E])
        check(mm == want_mm, "torch mha: matmul FLOPs %s, expected %s" % (mm, want_mm))
        sm = [o for o in ops.values() if o["kind"] == "softmax"]
        check(len(sm) == 1 and sm[0]["compute"] == 5 * B * H * T * T and sm[0]["bytes"] == 4 * B * H * T * T,
              "torch mha: softmax %s" % sm)
        # the parameters: in_proj weight and bias (3E x E, 3E), out_proj weight and bias; the one-element
        # scale factors are weights of 4 bytes
        big = sum(b for _, b in read_weights(out) if b > 8)
        check(big == 4 * (3 * E * E + 3 * E + E * E + E), "torch mha: weights %s" % read_weights(out))
        # one source (the input, 4 N E bytes out) and one sink (the output, N x E)
        srcs = {a for a, b in edges} - {b for a, b in edges}
        sinks = set(ops) - {a for a, b in edges}
        check(srcs == {"x"} and ops["x"]["bytes"] == 4 * N * E and len(sinks) == 1 and
              ops[sinks.pop()]["bytes"] == 4 * N * E, "torch mha: sources %s, sinks %s" % (srcs, sinks))
        check_sources("torch mha", out, m)
        graphs.append(out)

    # 3. an embedding of torch.arange(seq): Range of the input's second dimension, bound by --dim
    B, S, Vocab, P, D = 2, 5, 10, 16, 8

    class Pos(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = torch.nn.Embedding(Vocab, D)
            self.pos = torch.nn.Embedding(P, D)

        def forward(self, i):
            return self.tok(i) + self.pos(torch.arange(i.shape[1]))

    m = TMP + "/torch_arange.onnx"
    torch_export(Pos(), torch.zeros(3, 7, dtype=torch.long), m, ["i"], ["y"],
                 {"i": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
    out = TMP + "/torch_arange.dpg"
    r = convert(m, out, "--batch", str(B), "--dim", "seq=%d" % S)
    check(r.returncode == 0 and r.stderr == "", "torch arange: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode == 0:
        ops, _ = read_dpg(out)
        g = [k for k in ops if k not in ("i",) and ops[k]["kind"] == "opaque"]
        a = [k for k in ops if ops[k]["kind"] == "add"]
        # the token Gather and the Add; Range and the position rows it picks fold (S x D float32, a weight)
        if check(len(ops) == 3 and len(g) == 1 and len(a) == 1, "torch arange: ops %s" % ops):
            want = {"i": ("input", 0, 8 * B * S), g[0]: ("opaque", B * S * D, 4 * B * S * D),
                    a[0]: ("add", B * S * D, 4 * B * S * D)}
            check_graph("torch arange", out, want, chain_edges(want, [("i", g[0]), (g[0], a[0])]))
            ws = dict(read_weights(out))
            check(sorted(ws.values()) == sorted([4 * Vocab * D, 4 * S * D]) and ws.get(ops[g[0]]["weights"][0]) == 4 * Vocab * D
                  and ws.get(ops[a[0]]["weights"][0]) == 4 * S * D, "torch arange: weights %s" % ws)
        check_sources("torch arange", out, m)
        graphs.append(out)
    r = convert(m, TMP + "/torch_arange_noseq.dpg", "--batch", str(B))
    check(r.returncode == 1 and "--dim seq=" in r.stderr, "torch arange without seq: %d %r" % (r.returncode, r.stderr))
    return graphs


def test_fold_ops():
    """The folding rules op by op (onnx2dpg.fold_node with numpy), against values worked out by hand."""
    import numpy as np
    import onnx2dpg as c
    N = helper.make_node
    i64, f32 = np.int64, np.float32
    A = lambda *v, dt=i64: np.array(v, dtype=dt)                           # noqa: E731
    grid = np.arange(24, dtype=i64).reshape(2, 3, 4)
    cases = [  # (node, inputs, expected value; None: not folded)
        (N("Div", ["a", "b"], ["y"]), [A(-7, 7, -8), A(2, 2, -3)], A(-3, 3, 2)),            # truncated toward zero
        (N("Div", ["a", "b"], ["y"]), [A(1, 2), A(0, 1)], None),                             # by zero: stays an op
        (N("Div", ["a", "b"], ["y"]), [A(3.0, dt=f32), A(2.0, dt=f32)], A(1.5, dt=f32)),
        (N("Mod", ["a", "b"], ["y"]), [A(-7, 7), A(2, -2)], A(1, -1)),                       # the divisor's sign
        (N("Mod", ["a", "b"], ["y"], fmod=1), [A(-7, 7), A(2, -2)], A(-1, 1)),               # the dividend's
        (N("Shape", ["x"], ["y"], start=1, end=-1), [np.zeros((2, 3, 4, 5))], A(3, 4)),
        (N("Shape", ["x"], ["y"], start=-10), [np.zeros((2, 3))], A(2, 3)),                  # clamped
        (N("Size", ["x"], ["y"]), [np.zeros((2, 3, 4, 5))], np.array(120, dtype=i64)),
        (N("Gather", ["x", "i"], ["y"]), [A(5, 6, 7), np.array(-1, dtype=i64)], np.array(7, dtype=i64)),
        (N("Gather", ["x", "i"], ["y"], axis=1), [grid, A(2, 0)], grid[:, [2, 0]]),
        (N("Concat", ["a", "b"], ["y"], axis=0), [A(1), A(2, 3)], A(1, 2, 3)),
        (N("Unsqueeze", ["x", "ax"], ["y"]), [A(4, 5, 6), A(0, -1)], A(4, 5, 6).reshape(1, 3, 1)),
        (N("Squeeze", ["x"], ["y"], axes=[1]), [np.zeros((2, 1, 3, 1))], np.zeros((2, 3, 1))),  # axes attribute
        (N("Squeeze", ["x"], ["y"]), [np.zeros((2, 1, 3, 1))], np.zeros((2, 3))),               # every 1
        (N("Squeeze", ["x", "ax"], ["y"]), [np.zeros((2, 3)), A(0)], None),                      # not a 1
        (N("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", TensorProto.INT64, [1], [7])),
         [A(2, 3)], np.full((2, 3), 7, dtype=i64)),
        (N("ConstantOfShape", ["s"], ["y"]), [A(2)], np.zeros(2, dtype=f32)),                 # default: float 0
        (N("Expand", ["x", "s"], ["y"]), [A(1, 2, 3).reshape(3, 1), A(2, 1, 4)], np.tile(A(1, 2, 3).reshape(1, 3, 1), (2, 1, 4))),
        (N("Range", ["a", "b", "c"], ["y"]), [np.array(1, i64), np.array(10, i64), np.array(3, i64)], A(1, 4, 7)),
        (N("Range", ["a", "b", "c"], ["y"]), [np.array(0, f32), np.array(1, f32), np.array(0.25, f32)],
         A(0, 0.25, 0.5, 0.75, dt=f32)),
        (N("Range", ["a", "b", "c"], ["y"]), [np.array(5, i64), np.array(1, i64), np.array(1, i64)], A(dt=i64)),  # empty
        (N("Slice", ["x", "s", "e", "a", "t"], ["y"]), [np.arange(10, dtype=i64), A(8), A(-2 ** 63), A(0), A(-3)], A(8, 5, 2)),
        (N("Slice", ["x", "s", "e", "a", "t"], ["y"]), [np.arange(10, dtype=i64), A(2), A(2 ** 62), A(-1), A(2)], A(2, 4, 6, 8)),
        (N("Slice", ["x", "s", "e"], ["y"]), [grid, A(1, 1), A(2, -1)], grid[1:2, 1:2]),   # axes 0, 1 by default
        (N("Where", ["c", "a", "b"], ["y"]), [A(True, False, dt=bool), A(1, 2), A(-1)], A(1, -1)),
        (N("Equal", ["a", "b"], ["y"]), [A(1, 2), A(2)], A(False, True, dt=bool)),
        (N("Less", ["a", "b"], ["y"]), [A(1, 2), A(2)], A(True, False, dt=bool)),
        (N("Greater", ["a", "b"], ["y"]), [A(1, 3), A(2)], A(False, True, dt=bool)),
        (N("Not", ["a"], ["y"]), [A(True, False, dt=bool)], A(False, True, dt=bool)),
        (N("And", ["a", "b"], ["y"]), [A(True, True, dt=bool), A(True, False, dt=bool)], A(True, False, dt=bool)),
        (N("Or", ["a", "b"], ["y"]), [A(False, False, dt=bool), A(True, False, dt=bool)], A(True, False, dt=bool)),
        (N("Cast", ["a"], ["y"], to=TensorProto.INT64), [A(1.7, -1.7, dt=f32)], A(1, -1)),
        (N("Cast", ["a"], ["y"], to=TensorProto.BFLOAT16), [A(1.0, dt=f32)], None),           # no numpy type
        (N("Add", ["a", "b"], ["y"]), [A(1, 2), A(10)], A(11, 12)),
        (N("Sub", ["a", "b"], ["y"]), [A(1, 2), A(10)], A(-9, -8)),
        (N("Mul", ["a", "b"], ["y"]), [A(1, 2), A(10)], A(10, 20)),
        (N("Neg", ["a"], ["y"]), [A(1, -2)], A(-1, 2)),
        (N("Abs", ["a"], ["y"]), [A(1, -2)], A(1, 2)),
        (N("Floor", ["a"], ["y"]), [A(1.5, -1.5, dt=f32)], A(1, -2, dt=f32)),
        (N("Ceil", ["a"], ["y"]), [A(1.5, -1.5, dt=f32)], A(2, -1, dt=f32)),
        (N("Sqrt", ["a"], ["y"]), [A(4, 9, dt=f32)], A(2, 3, dt=f32)),
        (N("Pow", ["a", "b"], ["y"]), [A(2, 3), A(3)], A(8, 27)),                             # the base's type
        (N("Max", ["a", "b", "c"], ["y"]), [A(1, 5), A(3), A(0, 4)], A(3, 5)),
        (N("Min", ["a", "b"], ["y"]), [A(1, 5), A(3)], A(1, 3)),
        (N("Reshape", ["x", "s"], ["y"]), [grid, A(0, -1)], grid.reshape(2, 12)),             # 0 copies, -1 infers
        (N("Reshape", ["x", "s"], ["y"], allowzero=1), [np.zeros((0, 3)), A(3, 0)], np.zeros((3, 0))),
        (N("Reshape", ["x", "s"], ["y"]), [grid, A(5, -1)], None),                             # 24 is no multiple of 5
        (N("Transpose", ["x"], ["y"], perm=[2, 0, 1]), [grid], grid.transpose(2, 0, 1)),
        (N("Transpose", ["x"], ["y"]), [grid], grid.transpose(2, 1, 0)),                       # reversed
        (N("Identity", ["x"], ["y"]), [grid], grid),
        (N("Flatten", ["x"], ["y"], axis=2), [grid], grid.reshape(6, 4)),
        (N("Flatten", ["x"], ["y"], axis=0), [grid], grid.reshape(1, 24)),
        (N("Tile", ["x", "r"], ["y"]), [A(1, 2).reshape(1, 2), A(2, 2)], A(1, 2, 1, 2, 1, 2, 1, 2).reshape(2, 4)),
        (N("ReduceSum", ["x", "ax"], ["y"], keepdims=0), [grid, A(1)], grid.sum(axis=1)),
        (N("ReduceProd", ["x"], ["y"], axes=[0]), [A(2, 3, 4).reshape(3, 1)], A(24).reshape(1, 1)),
        (N("ReduceMax", ["x"], ["y"], keepdims=0), [grid], np.array(23, dtype=i64)),
        (N("ReduceMin", ["x"], ["y"], axes=[-1]), [grid], grid.min(axis=-1, keepdims=True)),
        (N("ReduceSum", ["x", "ax"], ["y"], noop_with_empty_axes=1), [grid, A(dt=i64)], grid),
        (N("Trilu", ["x"], ["y"], upper=0), [np.ones((3, 3), i64)], A(1, 0, 0, 1, 1, 0, 1, 1, 1).reshape(3, 3)),
        (N("Trilu", ["x", "k"], ["y"]), [np.ones((2, 3), i64), np.array(1, i64)], A(0, 1, 1, 0, 0, 1).reshape(2, 3)),
        (N("CumSum", ["x", "ax"], ["y"]), [A(1, 2, 3), np.array(0, i64)], A(1, 3, 6)),
        (N("CumSum", ["x", "ax"], ["y"], exclusive=1, reverse=1), [A(1, 2, 3), np.array(0, i64)], A(5, 3, 0)),
        # the size cap: an output over 2^24 elements is not made (it stays an op)
        (N("Expand", ["x", "s"], ["y"]), [A(1), A(2 ** 24 + 1)], None),
        (N("ConstantOfShape", ["s"], ["y"]), [A(4096, 4097)], None),
        (N("Range", ["a", "b", "c"], ["y"]), [np.array(0, i64), np.array(2 ** 24 + 1, i64), np.array(1, i64)], None),
    ]
    for node, ins, want in cases:
        known = {x: c.Known.of(v) for x, v in zip(node.input, ins)}
        tag = "fold %s %s: %s" % (node.op_type, [a.name for a in node.attribute], [v.tolist() for v in ins if v.size < 30])
        got = c.fold_node(node, known, lambda t: None, c.folders())
        if want is None:
            check(got is None, "%s: folded, expected to stay an op" % tag)
            continue
        if not check(got is not None and "y" in got, "%s: not folded" % tag):
            continue
        v = got["y"].value()
        check(v.dtype == want.dtype and v.shape == want.shape and np.array_equal(v, want),
              "%s: %r, expected %r" % (tag, v, want))
    # a view folds on its shape alone: an initializer whose data is in an external file
    k = c.Known(TensorProto.FLOAT, (4, 8))                                   # no value
    got = c.fold_node(N("Reshape", ["w", "s"], ["y"]), {"w": k, "s": c.Known.of(A(-1))}, lambda t: None, c.folders())
    check(got is not None and got["y"].shape == (32,) and got["y"].value() is None, "fold Reshape of external data: %s" % got)
    got = c.fold_node(N("Transpose", ["w"], ["y"]), {"w": k}, lambda t: None, c.folders())
    check(got is None, "fold Transpose of external data: folded")
    # Shape of a tensor that is not known, by its inferred shape
    got = c.fold_node(N("Shape", ["t"], ["y"]), {}, lambda t: (3, 5), c.folders())
    check(got is not None and got["y"].value().tolist() == [3, 5], "fold Shape by inference: %s" % got)
    # percent-encoding of source names
    check(c.percent_encode("a b,c=d#e%f\x7fg\x01ж") == "a%20b%2Cc%3Dd%23e%25f%7Fg%01ж",
          "percent_encode: %r" % c.percent_encode("a b,c=d#e%f\x7fg\x01ж"))


# ---------------------------------------------------------------------------
# folding: the patterns torch.onnx.export writes, built with onnx.helper
def test_expand_token():
    """ViT's class token: Expand of a learned token to a shape made only of Constants
    (torch turns expand(n, -1, -1) into Where(Equal(shape, -1), 1, shape)), then Concat."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F = TensorProto.FLOAT
    B, T, D = 2, 3, 8                 # a fixed batch of 2
    nodes = [const("tok_shape", "ts", [B, -1, -1]),
             const("minus_one", "m1", [-1]),
             N("Equal", ["ts", "m1"], ["eq"], name="is_minus"),
             const("ones3", "o3", [1, 1, 1]),
             N("Where", ["eq", "o3", "ts"], ["shp"], name="fix_shape"),
             N("Expand", ["cls", "shp"], ["tok"], name="expand_tok"),
             N("Concat", ["tok", "x"], ["y0"], name="cat", axis=1),
             N("Add", ["y0", "pos"], ["y"], name="add_pos")]
    m = make_model(nodes, [V("x", F, [B, T, D])], [V("y", F, [B, T + 1, D])],
                   [zeros("cls", [1, 1, D]), zeros("pos", [1, T + 1, D])])
    r, out, p = save_convert("expand_token", m)
    check(r.returncode == 0, "expand_token: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    # is_minus, fix_shape, expand_tok fold; the three Constants are no ops either
    want = {"x": ("input", 0, 4 * B * T * D),
            "cat": ("concat", B * (T + 1) * D, 4 * B * (T + 1) * D),   # a copy: one per output element
            "add_pos": ("add", B * (T + 1) * D, 4 * B * (T + 1) * D)}
    ops, _ = check_graph("expand_token", out, want, chain_edges(want, [("x", "cat"), ("cat", "add_pos")]))
    # the expanded token is a folded value read as data: a weight of its own, B x 1 x D float32
    check(read_weights(out) == [("tok", 4 * B * D), ("pos", 4 * (T + 1) * D)], "expand_token: weights %s" % read_weights(out))
    check({k: o["weights"] for k, o in ops.items()} == {"x": [], "cat": ["tok"], "add_pos": ["pos"]},
          "expand_token: uses %s" % {k: o["weights"] for k, o in ops.items()})
    src = read_sources(out)
    check(src == [("x", ["x"]), ("cat", ["cat", "tok_shape", "minus_one", "is_minus", "ones3", "fix_shape", "expand_tok"]),
                  ("add_pos", ["add_pos"])], "expand_token: sources %s" % src)
    h = header(out)
    check("; batch 2 (as exported)" in h[0] and h[1].startswith("# 3 ops (8 ONNX nodes: 3 Constant, 3 folded), 2 edges"),
          "expand_token: header %s" % h)
    # --batch 5 rescales the fixed batch, but the token's shape holds 2: Concat cannot join
    # [2, 1, D] and [5, 3, D], so the model is refused with how to export it
    r, out, p = save_convert("expand_token_b5", m, "--batch", "5")
    check(r.returncode == 1 and not os.path.exists(out) and not os.path.exists(out + ".tmp"),
          "expand_token --batch 5: exit %d, file written %s" % (r.returncode, os.path.exists(out)))
    check(all(w in r.stderr for w in ("fixed batch of 2", "--batch 5", "dynamic_axes={'x': {0: 'batch'}")),
          "expand_token --batch 5: message %r" % r.stderr)


def test_mha_slice():
    """nn.MultiheadAttention's chunking: Slice ends from Shape -> Gather -> Add -> Div -> Mul
    of the in-projection, whose shape is fixed once --batch binds the batch."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F = TensorProto.FLOAT
    B, T, D = 2, 4, 8
    nodes = [N("MatMul", ["x", "W"], ["h"], name="qkv"),                    # [B, T, 3D]
             N("Shape", ["h"], ["s"], name="sh"),
             const("idx", "i", -1),
             N("Gather", ["s", "i"], ["n3"], name="g", axis=0),                 # 3D
             const("one", "c1", 1),
             N("Add", ["n3", "c1"], ["n3p"], name="a1"),                        # 3D + 1
             const("three", "c3", 3),
             N("Div", ["n3p", "c3"], ["dd"], name="d"),                         # (3D + 1) / 3 = D, truncated
             N("Mul", ["dd", "c1"], ["e_q"], name="m_q"),
             const("axes0", "ax0", [0]),
             N("Unsqueeze", ["e_q", "ax0"], ["end_q"], name="u_q"),
             const("zero1", "z1", [0]),
             const("last", "axl", [-1]),
             N("Slice", ["h", "z1", "end_q", "axl"], ["q"], name="slice_q"),
             const("two", "c2", 2),
             N("Mul", ["dd", "c2"], ["e_k"], name="m_k"),
             N("Unsqueeze", ["e_k", "ax0"], ["end_k"], name="u_k"),
             N("Slice", ["h", "end_q", "end_k", "axl"], ["k"], name="slice_k"),
             N("Add", ["q", "k"], ["y"], name="sum_qk")]
    m = make_model(nodes, [V("x", F, ["batch", T, D])], [V("y", F, ["batch", T, D])], [zeros("W", [D, 3 * D])])
    r, out, p = save_convert("mha_slice", m, "--batch", str(B))
    check(r.returncode == 0, "mha_slice: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    want = {"x": ("input", 0, 4 * B * T * D),
            "qkv": ("matmul", 2 * B * T * D * 3 * D, 4 * B * T * 3 * D),
            "slice_q": ("opaque", B * T * D, 4 * B * T * D),     # a copy of the first D columns
            "slice_k": ("opaque", B * T * D, 4 * B * T * D),
            "sum_qk": ("add", B * T * D, 4 * B * T * D)}
    ops, _ = check_graph("mha_slice", out, want, chain_edges(want, [("x", "qkv"), ("qkv", "slice_q"), ("qkv", "slice_k"),
                                                                    ("slice_q", "sum_qk"), ("slice_k", "sum_qk")]))
    # starts, ends and axes are op parameters: the only weight is W
    check(read_weights(out) == [("W", 4 * D * 3 * D)] and ops.get("slice_q", {}).get("weights") == [],
          "mha_slice: weights %s" % read_weights(out))
    # what makes the ends goes with slice_q, the first op to read it; two, m_k, u_k only slice_k reads
    src = dict(read_sources(out))
    check(src.get("slice_q") == ["slice_q", "sh", "idx", "g", "one", "a1", "three", "d", "m_q", "axes0", "u_q",
                                 "zero1", "last"] and src.get("slice_k") == ["slice_k", "two", "m_k", "u_k"],
          "mha_slice: sources %s" % src)


def test_range_embedding():
    """torch.arange(seq): Range of a Shape's element, bound by --dim seq, then a position embedding."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    B, S, Vocab, P, D = 2, 5, 10, 16, 8
    nodes = [N("Gather", ["emb", "ids"], ["e"], name="tok_emb"),              # [B, S, D]
             N("Shape", ["ids"], ["s"], name="sh"),
             const("one_idx", "i1", 1),
             N("Gather", ["s", "i1"], ["n"], name="g"),
             const("zero", "c0", 0),
             const("step", "c1", 1),
             N("Range", ["c0", "n", "c1"], ["r"], name="rng"),
             N("Gather", ["pos", "r"], ["p"], name="pos_emb"),                 # [S, D]
             N("Add", ["e", "p"], ["y"], name="add")]
    m = make_model(nodes, [V("ids", I64, ["batch", "seq"])], [V("y", F, ["batch", "seq", D])],
                   [zeros("emb", [Vocab, D]), zeros("pos", [P, D])])
    r, out, p = save_convert("range_emb", m, "--batch", str(B), "--dim", "seq=%d" % S)
    check(r.returncode == 0, "range_emb: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode == 0:
        # Range folds, and so does the Gather of the position rows (every input known): the
        # S x D rows it picks are a weight of their own, read by add
        want = {"ids": ("input", 0, 8 * B * S),
                "tok_emb": ("opaque", B * S * D, 4 * B * S * D),
                "add": ("add", B * S * D, 4 * B * S * D)}
        ops, _ = check_graph("range_emb", out, want, chain_edges(want, [("ids", "tok_emb"), ("tok_emb", "add")]))
        check(read_weights(out) == [("emb", 4 * Vocab * D), ("p", 4 * S * D)], "range_emb: weights %s" % read_weights(out))
        check(dict(read_sources(out)).get("add") == ["add", "sh", "one_idx", "g", "zero", "step", "rng", "pos_emb"],
              "range_emb: sources %s" % read_sources(out))
    # seq unbound: the message names the flag (not "known only at run time")
    r, out, p = save_convert("range_emb_noseq", m, "--batch", str(B))
    check(r.returncode == 1 and "--dim seq=" in r.stderr and "run time" not in r.stderr,
          "range_emb without seq: exit %d, %r" % (r.returncode, r.stderr))


def test_reshape_from_shape():
    """A Reshape whose target is Concat(Shape(x)[0], -1) (torch's x.view(x.size(0), -1))."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F = TensorProto.FLOAT
    B = 3
    nodes = [N("Shape", ["x"], ["s"], name="sh"),
             N("Gather", ["s", "idx0"], ["b"], name="g0"),                    # [1]: the batch
             N("Concat", ["b", "minus1"], ["tgt"], name="target", axis=0),
             N("Reshape", ["x", "tgt"], ["flat"], name="flatten"),
             N("MatMul", ["flat", "W"], ["y"], name="fc")]
    m = make_model(nodes, [V("x", F, ["batch", 4, 6])], [V("y", F, ["batch", 5])],
                   [ints("idx0", [0]), ints("minus1", [-1]), zeros("W", [24, 5])])
    r, out, p = save_convert("reshape_shape", m, "--batch", str(B))
    check(r.returncode == 0, "reshape_shape: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    want = {"x": ("input", 0, 4 * B * 24),
            "flatten": ("opaque", 0, 4 * B * 24),                 # a view
            "fc": ("matmul", 2 * B * 24 * 5, 4 * B * 5)}
    check_graph("reshape_shape", out, want, chain_edges(want, [("x", "flatten"), ("flatten", "fc")]))
    # idx0 and minus1 are read only by folded nodes: no weights
    check(read_weights(out) == [("W", 4 * 24 * 5)], "reshape_shape: weights %s" % read_weights(out))
    check(read_sources(out) == [("x", ["x"]), ("flatten", ["flatten", "sh", "g0", "target"]), ("fc", ["fc"])],
          "reshape_shape: sources %s" % read_sources(out))


def test_shared_weight():
    """torch's Identity for a weight two modules share folds into its reader: one weight W;
    a Transpose of W folds too but is a weight of its own."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F = TensorProto.FLOAT
    nodes = [N("Identity", ["W"], ["W2"], name="w_alias"),
             N("Reshape", ["W2", "shape88"], ["W3"], name="w_view"),
             N("MatMul", ["x", "W"], ["h"], name="mm1"),
             N("MatMul", ["h", "W3"], ["h2"], name="mm2"),
             N("Transpose", ["W"], ["Wt"], name="wt"),
             N("MatMul", ["h2", "Wt"], ["y"], name="mm3")]
    m = make_model(nodes, [V("x", F, [2, 8])], [V("y", F, [2, 8])], [zeros("W", [8, 8]), ints("shape88", [8, 8])])
    r, out, p = save_convert("shared_weight", m)
    check(r.returncode == 0, "shared_weight: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    want = {"x": ("input", 0, 4 * 2 * 8)}
    for k in ("mm1", "mm2", "mm3"):
        want[k] = ("matmul", 2 * 2 * 8 * 8, 4 * 2 * 8)
    ops, _ = check_graph("shared_weight", out, want, chain_edges(want, [("x", "mm1"), ("mm1", "mm2"), ("mm2", "mm3")]))
    check(read_weights(out) == [("W", 4 * 64), ("Wt", 4 * 64)], "shared_weight: weights %s" % read_weights(out))
    uses = {k: o["weights"] for k, o in ops.items()}
    check(uses == {"x": [], "mm1": ["W"], "mm2": ["W"], "mm3": ["Wt"]}, "shared_weight: uses %s" % uses)
    check(dict(read_sources(out)) == {"x": ["x"], "mm1": ["mm1"], "mm2": ["mm2", "w_alias", "w_view"], "mm3": ["mm3", "wt"]},
          "shared_weight: sources %s" % read_sources(out))


def test_rescale():
    """--batch on a model exported with a fixed batch: rescaled where it follows."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F = TensorProto.FLOAT
    nodes = [N("MatMul", ["x", "W"], ["h"], name="mm"), N("Relu", ["h"], ["y"], name="relu")]
    # the model's own value_info holds the exported batch 1: it is dropped when rescaling
    m = make_model(nodes, [V("x", F, [1, 16])], [V("y", F, [1, 4])], [zeros("W", [16, 4])], vi=[V("h", F, [1, 4])])
    for args, B, note in (([], 1, "batch 1 (as exported)"), (["--batch", "1"], 1, "batch 1\n"),
                          (["--batch", "8"], 8, "batch 8 (the model's fixed batch 1, rescaled)")):
        tag = "rescale_%s" % (args[1] if args else "none")
        r, out, p = save_convert(tag, m, *args)
        check(r.returncode == 0, "%s: exit %d: %s" % (tag, r.returncode, r.stderr))
        if r.returncode:
            continue
        want = {"x": ("input", 0, 4 * B * 16), "mm": ("matmul", 2 * B * 16 * 4, 4 * B * 4), "relu": ("relu", B * 4, 4 * B * 4)}
        check_graph(tag, out, want, chain_edges(want, [("x", "mm"), ("mm", "relu")]))
        check(header(out)[0].endswith("; " + note.strip() + "\n"), "%s: header %r" % (tag, header(out)[0]))
    # a Reshape to the constant shape [1, 16] keeps the batch at 1: refused
    nodes = [N("Reshape", ["x", "to16"], ["f"], name="flat"), N("Relu", ["f"], ["y"], name="relu")]
    m = make_model(nodes, [V("x", F, [1, 4, 4])], [V("y", F, [1, 16])], [ints("to16", [1, 16])])
    r, out, p = save_convert("rescale_refused", m, "--batch", "8")
    check(r.returncode == 1 and not os.path.exists(out) and not os.path.exists(out + ".tmp"),
          "rescale_refused: exit %d, %s" % (r.returncode, r.stderr))
    check(all(w in r.stderr for w in ("fixed batch of 1", "--batch 8", "dynamic_axes=")), "rescale_refused: %r" % r.stderr)
    # --batch where no graph input has a first dimension: refused, never ignored
    m = make_model([N("Relu", ["x"], ["y"], name="relu")], [V("x", F, [])], [V("y", F, [])])
    r, out, p = save_convert("batch_scalar", m, "--batch", "4")
    check(r.returncode == 1 and "--batch 4" in r.stderr and not os.path.exists(out), "batch_scalar: %d %r" % (r.returncode, r.stderr))


def test_conv_kinds():
    """Conv and ConvTranspose are matmul (implicit GEMM), a depthwise Conv opaque."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F = TensorProto.FLOAT
    nodes = [N("Conv", ["x", "Wd"], ["d"], name="dw", group=4, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("ConvTranspose", ["d", "Wu"], ["y"], name="up", kernel_shape=[2, 2], strides=[2, 2])]
    m = make_model(nodes, [V("x", F, [1, 4, 8, 8])], [V("y", F, [1, 2, 16, 16])],
                   [zeros("Wd", [4, 1, 3, 3]), zeros("Wu", [4, 2, 2, 2])])
    r, out, p = save_convert("conv_kinds", m)
    check(r.returncode == 0, "conv_kinds: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    want = {"x": ("input", 0, 4 * 4 * 64),
            "dw": ("opaque", 2 * (4 * 64) * 1 * 9, 4 * 4 * 64),             # output x Cin/group x kernel
            "up": ("matmul", 2 * (4 * 64) * 2 * 4, 4 * 2 * 256)}            # input x Cout/group x kernel
    check_graph("conv_kinds", out, want, chain_edges(want, [("x", "dw"), ("dw", "up")]))


def test_unknown_sizes():
    """A size still unknown: the node, the tensor and the cause."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    # NonZero: its output size depends on the values
    m = make_model([N("NonZero", ["x"], ["nz_out"], name="nz"), N("Transpose", ["nz_out"], ["y"], name="tp")],
                   [V("x", F, [6])], [V("y", I64, None)])
    r, out, p = save_convert("unknown_nonzero", m)
    check(r.returncode == 1 and "'nz'" in r.stderr and "nz_out" in r.stderr and "known only at run time" in r.stderr,
          "unknown_nonzero: %d %r" % (r.returncode, r.stderr))
    # a Range to the largest value of the input: the input's values are needed
    m = make_model([N("ReduceMax", ["x"], ["mx"], name="mx", keepdims=0),
                    N("Range", ["c0", "mx", "c1"], ["r"], name="rng"),
                    N("Neg", ["r"], ["y"], name="neg")],
                   [V("x", I64, [6])], [V("y", I64, None)],
                   [helper.make_tensor("c0", I64, [], [0]), helper.make_tensor("c1", I64, [], [1])])
    r, out, p = save_convert("unknown_range", m)
    check(r.returncode == 1 and "'rng'" in r.stderr and "known only at run time" in r.stderr and
          "graph input 'x'" in r.stderr, "unknown_range: %d %r" % (r.returncode, r.stderr))
    # a Reshape to a shape made from a dimension left free: the flag that binds it (named at the
    # graph input, the first op written)
    m = make_model([N("Shape", ["x"], ["s"], name="sh"),
                    N("ReduceProd", ["s"], ["n"], name="count", keepdims=1),
                    N("Reshape", ["x", "n"], ["y"], name="flat")],
                   [V("x", F, [2, "seq"])], [V("y", F, None)])
    r, out, p = save_convert("unknown_free", m)
    check(r.returncode == 1 and "graph input 'x'" in r.stderr and "--dim seq=" in r.stderr and "run time" not in r.stderr,
          "unknown_free: %d %r" % (r.returncode, r.stderr))
    r, out, p = save_convert("unknown_free_bound", m, "--dim", "seq=3")
    check(r.returncode == 0 and read_dpg(out)[0].get("flat", {}).get("bytes") == 4 * 6,
          "unknown_free with --dim seq=3: %d %r" % (r.returncode, r.stderr))
    # a NUL in a node's name: refused, naming the node by its position
    m = make_model([N("Relu", ["x"], ["y"], name="a\0b")], [V("x", F, [2])], [V("y", F, [2])])
    r, out, p = save_convert("nul_name", m)
    check(r.returncode == 1 and "node 0 (Relu)" in r.stderr and "NUL" in r.stderr and not os.path.exists(out),
          "nul_name: %d %r" % (r.returncode, r.stderr))


def test_sources():
    """source= round trip: exact node names back from the file, and the mapping JSON that
    build/doppler writes for them (place --out NAME.json)."""
    V, N = helper.make_tensor_value_info, helper.make_node
    F = TensorProto.FLOAT
    long1 = "L" * 150 + "a" * 51                  # 201 characters, equal to long2 in the first 150
    long2 = "L" * 150 + "b" * 51
    odd = "ноль→1 #=,%"
    nodes = [helper.make_node("Constant", [], ["c"], name="const", value=zeros("cv", [512])),
             N("Relu", ["x"], ["t0"], name="x"),                               # the graph input's name too
             N("MatMul", ["t0", "Wa"], ["ta"], name="a b"),
             N("MatMul", ["t0", "Wb"], ["tb"], name="a_b"),
             N("Add", ["ta", "c"], ["t1"], name=long1),
             N("Neg", ["c"], ["cneg"], name="fold me"),                        # folds (its input is known)
             N("Add", ["tb", "cneg"], ["t2"], name=long2),
             N("Relu", ["t1"], ["t3"], name="dup"),
             N("Relu", ["t2"], ["t4"], name="dup"),
             N("Add", ["t3", "t4"], ["y"], name=odd),
             helper.make_node("Constant", [], ["unused"], name="dead", value=zeros("dv", [2]))]
    m = make_model(nodes, [V("x", F, [2, 64])], [V("y", F, [2, 512])], [zeros("Wa", [64, 512]), zeros("Wb", [64, 512])])
    r, out, p = save_convert("sources", m)
    check(r.returncode == 0, "sources: exit %d: %s" % (r.returncode, r.stderr))
    if r.returncode:
        return
    # op names: cleaned, at most 127 bytes, unique; source lists: exact, the Constant with its
    # first reader, the folded Neg with its reader, the dead Constant with the last op
    cut = long1[:127]
    want = [("x", ["x"]), ("x_2", ["x"]), ("a_b", ["a b"]), ("a_b_2", ["a_b"]), (cut, [long1, "const"]),
            (cut[:125] + "_2", [long2, "fold me"]), ("dup", ["dup"]), ("dup_2", ["dup"]),
            ("ноль→1____%", [odd, "dead"])]
    src = read_sources(out)
    check(src == want, "sources: %s, expected %s" % (src, want))
    text = open(out, encoding="utf-8").read()
    check("source=a%20b\n" in text, "sources: 'a b' not written as a%20b")
    check("source=ноль→1%20%23%3D%2C%25,dead\n" in text, "sources: the non-ASCII name's encoding")
    check_sources("sources", out, p)

    # the mapping JSON: keys exactly the model's node names, each with its op's device
    # (a name several entries share: their devices in op order), as the assignment says
    mp, asg = TMP + "/sources_map.json", TMP + "/sources.assign"
    r1 = run([CLI, "place", out, "--method", "cp", "--devices", "2", "--out", mp])
    r2 = run([CLI, "place", out, "--method", "cp", "--devices", "2", "--out", asg])
    try:
        j = json.load(open(mp, encoding="utf-8")) if r1.returncode == 0 else {}
    except ValueError:
        j = {}
    if r1.returncode != 0 or j.get("format") != "doppler-mapping 1":
        skip("mapping JSON: %s does not write one for --out NAME.json (exit %d: %s)" % (
            CLI, r1.returncode, r1.stderr.strip()[-200:]))
        return
    check(r2.returncode == 0, "sources: place --out %s: exit %d %s" % (asg, r2.returncode, r2.stderr))
    devs = [int(ln) for ln in open(asg) if ln.strip() and not ln.startswith("#")]
    check(len(devs) == len(want), "sources: %d devices in the assignment, %d ops" % (len(devs), len(want)))
    expect = {}
    for (_, names), d in zip(want, devs):
        for nm in names:
            expect.setdefault(nm, []).append(d)
    expect = {k: v[0] if len(v) == 1 else v for k, v in expect.items()}
    check(set(j["mapping"]) == {nd.name for nd in m.graph.node}, "sources: mapping keys %s" % sorted(j["mapping"]))
    check(j["mapping"] == expect, "sources: mapping %s, expected %s" % (j["mapping"], expect))
    check(j.get("devices") == 2 and j.get("method") == "cp", "sources: mapping header %s" % {
        k: v for k, v in j.items() if k != "mapping"})


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
    # the Constant node goes with join, the op that reads it
    check(read_sources(out) == [("X", ["X"]), ("mm", ["mm"]), ("add_a", ["add_a"]), ("mul_b", ["mul_b"]),
                                ("join", ["join", "const"])], "weights: sources %s" % read_sources(out))
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
    graphs += test_torch_patterns()
    test_fold_ops()
    test_expand_token()
    test_mha_slice()
    test_range_embedding()
    test_reshape_from_shape()
    test_shared_weight()
    test_rescale()
    test_conv_kinds()
    test_unknown_sizes()
    test_sources()
    test_errors()
    test_weights()
    test_chain()
    test_place(graphs)
    print("test_onnx took %.1f s (python %s, onnx %s)" % (time.time() - t0, sys.version.split()[0], onnx.__version__))
    return done()


if __name__ == "__main__":
    sys.exit(main())
