#!/usr/bin/env python3
"""torch_models.py - eight real models exported by torch.onnx.export and
converted by demos/onnx2dpg.py (nothing downloaded: every model is built in
code with random weights).

usage: bench/torch_models.py [--models a,b,...] [--out DIR]

Models (input batch exported as a dynamic axis, opset 17):
  resnet18, resnet50, mobilenet_v2   torchvision, weights=None, x[batch, 3, 224, 224]
  googlenet, inception_v3            torchvision, aux_logits=False, init_weights=False;
                                     x[batch, 3, 224, 224] (inception_v3: 299 x 299)
  vit_b_16                           torchvision, weights=None, x[batch, 3, 224, 224]
  transformer                        nn.TransformerEncoder: 12 layers, d_model 768, 12
                                     heads, ffn 3072, batch_first; x[batch, 128, 768]
  gpt2                               a GPT-2-small-like decoder written here: token
                                     embedding 50257 x 768, learned position embedding of
                                     torch.arange(seq), 12 blocks (LayerNorm, causal
                                     self-attention written out with matmuls and a mask,
                                     MLP 3072 with GELU), final LayerNorm, tied LM head;
                                     x[batch, seq] of token ids (seq a dynamic axis too)

Each is converted with --batch 1 (and --dim seq=128 for gpt2); resnet18 also
with --batch 8, and once exported with a fixed batch of 1 and converted with
--batch 8 (the rescale of a fixed batch). Prints a markdown table: model,
ONNX nodes (of them Constant and folded), ops, edges, weights (count and
MB), GFLOPs, conversion seconds (the converter's process, python's start
and the model's loading included) and export seconds. Writes each .onnx
and .dpg to DIR (default build/tmp/torch_models) for others to place (the
.dpg as NAME_bB.dpg, B the batch). Exit status 1 if a model fails to export
or convert. Run from the repository root with a python that has torch,
torchvision and onnx; nothing is downloaded.
"""
import argparse
import inspect
import math
import os
import re
import subprocess
import sys
import time

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "googlenet", "inception_v3", "vit_b_16", "transformer", "gpt2"]
OPSET = 17
SEQ = 128
CONVERTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demos", "onnx2dpg.py")


def gpt2_small(torch, vocab=50257, dim=768, heads=12, layers=12, ffn=3072, max_seq=1024):
    """A GPT-2-small-like decoder: pre-LayerNorm blocks, attention written out with a causal mask."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.fc, self.out = nn.Linear(dim, ffn), nn.Linear(ffn, dim)

        def forward(self, x, mask):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            s = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d // heads))
            s = s.masked_fill(mask[:t, :t] == 0, float("-inf"))
            a = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(a)
            return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(max_seq, dim)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, vocab, bias=False)
            self.head.weight = self.wte.weight          # tied, as GPT-2
            self.register_buffer("mask", torch.tril(torch.ones(max_seq, max_seq)))

        def forward(self, ids):
            x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
            for blk in self.blocks:
                x = blk(x, self.mask)
            return self.head(self.ln_f(x))

    return GPT()


def build(name):
    """(module, example input, input name, dynamic axes, converter options)."""
    import torch
    import torchvision.models as tv
    img = torch.zeros(1, 3, 224, 224)
    batch = {0: "batch"}
    if name in ("resnet18", "resnet50", "mobilenet_v2", "vit_b_16"):
        return getattr(tv, name)(weights=None), img, {"x": batch}, []
    if name == "googlenet":
        return tv.googlenet(weights=None, aux_logits=False, init_weights=False), img, {"x": batch}, []
    if name == "inception_v3":
        return (tv.inception_v3(weights=None, aux_logits=False, init_weights=False),
                torch.zeros(1, 3, 299, 299), {"x": batch}, [])
    if name == "transformer":
        layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True)
        enc = torch.nn.TransformerEncoder(layer, 12)
        # the encoder deep-copies one layer 12 times, and the exporter merges identical
        # initializers into one: draw every layer's own weights, as a trained model has
        with torch.no_grad():
            for p in enc.parameters():
                p.normal_(0, 0.02)
        return enc, torch.zeros(1, SEQ, 768), {"x": batch}, []
    if name == "gpt2":
        return (gpt2_small(torch), torch.zeros(1, SEQ, dtype=torch.long), {"x": {0: "batch", 1: "seq"}},
                ["--dim", "seq=%d" % SEQ])
    raise ValueError(name)


def export(name, path, fixed_batch=False):
    """Exports model NAME to PATH; returns (seconds, converter options)."""
    import torch
    torch.manual_seed(0)
    model, x, axes, opts = build(name)
    model.eval()
    kw = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False          # torch 2.x: the TorchScript exporter
    t0 = time.time()
    # not under torch.no_grad(): eval mode without it keeps nn.MultiheadAttention off its fused
    # fast path, which the exporter cannot write
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], opset_version=OPSET,
                      dynamic_axes=None if fixed_batch else dict(axes, y=axes["x"]), **kw)
    return time.time() - t0, opts


def convert(onnx_path, dpg, opts):
    """Runs the converter; returns (seconds, its summary line's figures)."""
    t0 = time.time()
    r = subprocess.run([sys.executable, CONVERTER, onnx_path, "-o", dpg] + opts,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    dt = time.time() - t0
    if r.returncode != 0:
        raise RuntimeError("onnx2dpg.py %s: exit %d: %s" % (onnx_path, r.returncode, r.stderr.strip()))
    m = re.search(r"(\d+) ops from (\d+) ONNX nodes \((\d+) Constant, (\d+) folded\), (\d+) edges, (\S+) FLOPs, "
                  r"(\d+) weights of (\S+) bytes", r.stdout)
    ops, nodes, consts, folded, edges, flops, nw, wb = m.groups()
    return dt, {"ops": int(ops), "nodes": int(nodes), "constants": int(consts), "folded": int(folded),
                "edges": int(edges), "flops": float(flops), "weights": int(nw), "weight_bytes": float(wb)}


def main(argv):
    ap = argparse.ArgumentParser(prog="torch_models.py", description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, of: " + ", ".join(MODELS))
    ap.add_argument("--out", default="build/tmp/torch_models", help="where the .onnx and .dpg files go")
    a = ap.parse_args(argv)
    names = [m for m in a.models.split(",") if m]
    bad = [m for m in names if m not in MODELS]
    if bad:
        ap.error("unknown model%s %s (known: %s)" % ("s" if len(bad) > 1 else "", ", ".join(bad), ", ".join(MODELS)))
    try:
        import onnx
        import torch
        import torchvision
    except ImportError as e:
        sys.exit("torch_models.py: %s (needs torch, torchvision and onnx)" % e)
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    print("torch %s, torchvision %s, onnx %s, python %s, %d cores; opset %d, random weights" % (
        torch.__version__, torchvision.__version__, onnx.__version__, sys.version.split()[0], os.cpu_count() or 1, OPSET))
    print()
    print("| model | ONNX nodes (Constant, folded) | ops | edges | weights (MB) | GFLOPs | convert s | export s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    failed = 0
    runs = []
    for name in names:
        runs.append((name, name, False, ["--batch", "1"]))
        if name == "resnet18":
            runs.append((name + " --batch 8", name, False, ["--batch", "8"]))
            runs.append((name + " fixed batch 1, --batch 8", name + "_fixed1", True, ["--batch", "8"]))
    exported = {}
    for label, stem, fixed, opts in runs:
        path = os.path.join(a.out, stem + ".onnx")
        try:
            if stem not in exported:
                exported[stem] = export(stem.replace("_fixed1", ""), path, fixed_batch=fixed)
            et, extra = exported[stem]
            dpg = os.path.join(a.out, "%s_b%s.dpg" % (stem, opts[1]))
            ct, s = convert(path, dpg, opts + extra)
        except Exception as e:
            failed += 1
            print("| %s | failed: %s | | | | | | |" % (label, str(e).replace("|", "/").splitlines()[0][:300]), flush=True)
            continue
        print("| %s | %d (%d, %d) | %d | %d | %d (%.1f) | %.2f | %.2f | %.1f |" % (
            label, s["nodes"], s["constants"], s["folded"], s["ops"], s["edges"], s["weights"], s["weight_bytes"] / 1e6, s["flops"] / 1e9,
            ct, et), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
