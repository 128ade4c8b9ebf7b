#!/usr/bin/env python3
"""test_torch_place.py - demos/torch_place.py, the PyTorch bridge.

1. Op semantics: each ONNX op implementation in torch_place.OPS on small
   inputs against a reference written here (torch or numpy computations,
   naive loops for the pools), with the cases where ONNX differs from
   torch's defaults: Gemm's transA/transB/alpha/beta, Conv's asymmetric
   pads and auto_pad, MaxPool's ceil_mode, pads and default stride of 1,
   AveragePool's count_include_pad, Slice's negative steps and huge ends,
   Reshape's 0/-1/allowzero, integer Div truncating toward zero, ...
2. Refusals: a model with unsupported op types and attributes is refused
   before anything runs, every unsupported type named with a node of each;
   a mapping that misses a node is refused.
3. End to end, with a forced mapping alternating two logical devices (both
   on the cpu): a small convnet with BatchNorm, pools and upsampling, a
   TransformerEncoderLayer, a tiny GPT-like block (torch.arange positions,
   exported with dynamic axes and run at another shape too) and a tiny
   resnet-like block: the placed module's outputs equal the original's
   within tolerance, every ONNX node is mapped, and the number of copy
   nodes equals the number of distinct (tensor, destination device) pairs
   crossing devices, computed here from the ONNX graph and the mapping.
4. Through the real doppler CLI (build/doppler or $DOPPLER_CLI, when built):
   methods cp and doppler on homogeneous:2; the mapping checked against
   the CLI's own assignment read through the .dpg's ops; the mapping fed
   back with mapping=; the command line (--check, --mapping-out).
5. The README's walk-through (the python block of "## From a PyTorch module
   to a placed module") is run; a missing block is a failure.

Run from the repository root. Needs torch and onnx: when this python lacks
them, it runs itself with /usr/bin/python3; without them it skips with the
reason. Ends with "N passed, N failed, N skipped" like the C tests."""
import json
import math
import os
import re
import subprocess
import sys
import time
import urllib.parse

SYSTEM_PYTHON = "/usr/bin/python3"

try:
    import onnx
    import torch
except ImportError as e:
    if os.environ.get("TORCH_PLACE_REEXEC") != "1" and os.access(SYSTEM_PYTHON, os.X_OK) and \
            os.path.realpath(SYSTEM_PYTHON) != os.path.realpath(sys.executable or ""):
        os.environ["TORCH_PLACE_REEXEC"] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
    print("SKIP: no python with torch and onnx (%s with %s%s)" % (
        e, sys.executable, "" if not os.access(SYSTEM_PYTHON, os.X_OK) else " and " + SYSTEM_PYTHON))
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)

import numpy as np  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from onnx import helper, TensorProto  # noqa: E402

sys.path.insert(0, "demos")
import torch_place as tp  # noqa: E402

CLI = os.environ.get("DOPPLER_CLI", "build/doppler")
TMP = "build/tmp/torch_place"
from dp_test import check, skip, done  # noqa: E402
torch.manual_seed(0)


def close(got, want, tol=1e-5):
    """Same shape and dtype, values within tol (absolute and relative)."""
    if not isinstance(want, torch.Tensor):
        want = torch.as_tensor(np.asarray(want))
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype.is_floating_point:
        return torch.allclose(got.double(), want.double(), rtol=tol, atol=tol, equal_nan=True)
    return torch.equal(got, want)


def op(name, *args, **kw):
    return tp.OPS[name](*args, **kw)


def check_op(tag, got, want, tol=1e-5):
    """got equals want (a tensor, an array, or a list: taken in got's dtype)."""
    if isinstance(want, torch.Tensor):
        want_t = want
    elif isinstance(want, list):
        want_t = torch.tensor(want, dtype=got.dtype)
    else:
        want_t = torch.as_tensor(np.asarray(want))
    same = got.shape == want_t.shape and got.dtype == want_t.dtype and got.numel()
    check(close(got, want_t, tol), "%s: got %s %s, expected %s %s" % (
        tag, tuple(got.shape), got.dtype, tuple(want_t.shape), want_t.dtype) +
        (" (max diff %.3g)" % (got.double() - want_t.double()).abs().max().item() if same else ""))


# ---------------------------------------------------------------------------
# 1. op semantics
# ---------------------------------------------------------------------------
def naive_pool2d(x, k, s, pads, ceil_mode, mode, count_include_pad=0):
    """ONNX MaxPool / AveragePool by loops: pads = [top, left, bottom, right];
    output length floor or ceil((n + pads - k) / s) + 1, less one where ceil
    mode would start the last window beyond the input and its leading pad;
    a window covers padded positions [-begin, n + end); max over the input's
    elements in it, average over the input's elements divided by the
    positions counted (in the padded area if count_include_pad, else in the
    input)."""
    N, C, H, W = x.shape
    sizes = []
    for n, kk, ss, b, e in ((H, k[0], s[0], pads[0], pads[2]), (W, k[1], s[1], pads[1], pads[3])):
        r = (n + b + e - kk) / ss
        o = (math.ceil(r) if ceil_mode else math.floor(r)) + 1
        if ceil_mode and (o - 1) * ss >= n + b:
            o -= 1
        sizes.append(o)
    out = torch.zeros(N, C, sizes[0], sizes[1], dtype=torch.float64)
    xd = x.double()
    for i in range(sizes[0]):
        for j in range(sizes[1]):
            h0, w0 = i * s[0] - pads[0], j * s[1] - pads[1]
            h1, w1 = min(h0 + k[0], H + pads[2]), min(w0 + k[1], W + pads[3])
            hs, ws = max(h0, 0), max(w0, 0)
            he, we = min(h1, H), min(w1, W)
            win = xd[:, :, hs:he, ws:we]
            if mode == "max":
                out[:, :, i, j] = win.amax(dim=(2, 3))
            else:
                cnt = (h1 - h0) * (w1 - w0) if count_include_pad else (he - hs) * (we - ws)
                out[:, :, i, j] = win.sum(dim=(2, 3)) / cnt
    return out.to(x.dtype)


def test_ops():
    r = torch.randn
    # Gemm: alpha A' B' + beta C for every transA/transB and C shape
    A, B = r(3, 4), r(4, 5)
    for ta in (0, 1):
        for tb in (0, 1):
            for cshape in (None, (5,), (3, 5), (1, 5), ()):
                C = None if cshape is None else torch.randn(cshape)
                a, b = (A.t().contiguous() if ta else A), (B.t().contiguous() if tb else B)
                for alpha, beta in ((1.0, 1.0), (0.5, 2.0)):
                    want = alpha * (A.double() @ B.double()) + (0 if C is None else beta * C.double())
                    check_op("Gemm transA=%d transB=%d C%s alpha=%g beta=%g" % (ta, tb, cshape, alpha, beta),
                             op("Gemm", a, b, C, alpha=alpha, beta=beta, transA=ta, transB=tb), want.float())
    x4, w4 = r(2, 1, 3, 4), r(5, 4, 4)
    check_op("MatMul broadcast", op("MatMul", x4, w4), torch.einsum("bhik,nkj->bnij", x4, w4).reshape(2, 5, 3, 4), 1e-5)

    # Conv: pads [begin..., end...], asymmetric ones padded first; auto_pad; dilations; groups; 1-D and 3-D
    x, w, b = r(1, 4, 7, 6), r(6, 2, 3, 3), r(6)
    check_op("Conv pads 1, groups 2", op("Conv", x, w, b, pads=[1, 1, 1, 1], group=2),
             F.conv2d(x, w, b, padding=1, groups=2))
    check_op("Conv asymmetric pads", op("Conv", x, w, None, pads=[0, 1, 2, 0], strides=[2, 1], group=2),
             F.conv2d(F.pad(x, [1, 0, 0, 2]), w, None, stride=(2, 1), groups=2))
    # SAME_UPPER, 7 x 6, kernel 3, stride 2: outputs ceil(n/2) = 4, 3; total pads 2, 1 -> (1,1), (0,1)
    check_op("Conv SAME_UPPER", op("Conv", x, w, b, auto_pad="SAME_UPPER", strides=[2, 2], group=2),
             F.conv2d(F.pad(x, [0, 1, 1, 1]), w, b, stride=2, groups=2))
    check_op("Conv SAME_LOWER", op("Conv", x, w, b, auto_pad="SAME_LOWER", strides=[2, 2], group=2),
             F.conv2d(F.pad(x, [1, 0, 1, 1]), w, b, stride=2, groups=2))
    check_op("Conv VALID dilations 2", op("Conv", x, w, b, auto_pad="VALID", dilations=[2, 1], group=2),
             F.conv2d(x, w, b, dilation=(2, 1), groups=2))
    x1, w1 = r(2, 3, 9), r(4, 3, 2)
    check_op("Conv 1-D", op("Conv", x1, w1, None, pads=[1, 0], strides=[2]), F.conv1d(F.pad(x1, [1, 0]), w1, stride=2))
    x3, w3 = r(1, 2, 4, 5, 3), r(3, 2, 2, 2, 2)
    check_op("Conv 3-D", op("Conv", x3, w3, None, pads=[1, 1, 1, 1, 1, 1]), F.conv3d(x3, w3, padding=1))

    # ConvTranspose: full transposed convolution, pads cropped, output_shape
    xt, wt, bt = r(1, 4, 3, 5), r(4, 3, 3, 3), r(3)
    check_op("ConvTranspose pads 1 stride 2 output_padding 1",
             op("ConvTranspose", xt, wt, bt, pads=[1, 1, 1, 1], strides=[2, 2], output_padding=[1, 1]),
             F.conv_transpose2d(xt, wt, bt, stride=2, padding=1, output_padding=1))
    full = F.conv_transpose2d(xt, wt, bt, stride=2)
    check_op("ConvTranspose asymmetric pads", op("ConvTranspose", xt, wt, bt, pads=[0, 1, 2, 0], strides=[2, 2]),
             full[:, :, 0:full.shape[2] - 2, 1:])
    # output_shape 6 x 10 from full 7 x 11: total 1 each, SAME_UPPER puts it at the end
    check_op("ConvTranspose output_shape SAME_UPPER",
             op("ConvTranspose", xt, wt, bt, strides=[2, 2], output_shape=[6, 10], auto_pad="SAME_UPPER"),
             full[:, :, :6, :10])
    xg, wg = r(1, 4, 3, 3), r(4, 1, 2, 2)
    check_op("ConvTranspose groups 2 dilations 2", op("ConvTranspose", xg, wg, None, group=2, dilations=[2, 2]),
             F.conv_transpose2d(xg, wg, groups=2, dilation=2))

    # element-wise; integer Div truncates toward zero; Mod's two rules; Pow keeps the base's type
    ai, bi = torch.tensor([-7, 7, -8, 9]), torch.tensor([2, -2, 3, 3])
    check_op("Div int64 truncates", op("Div", ai, bi), [-3, -3, -2, 3])
    check_op("Div int32 truncates", op("Div", ai.int(), bi.int()), torch.tensor([-3, -3, -2, 3], dtype=torch.int32))
    check_op("Div float", op("Div", ai.float(), bi.float()), (ai.float() / bi.float()))
    check_op("Mod fmod=0 (divisor's sign)", op("Mod", torch.tensor([-7, 7]), torch.tensor([3, -3])), [2, -2])
    check_op("Mod fmod=1 (dividend's sign)", op("Mod", torch.tensor([-7., 7.]), torch.tensor([3., -3.]), fmod=1),
             np.array([-1., 1.], dtype=np.float32))
    check_op("Pow int base, float exponent", op("Pow", torch.tensor([2, 3]), torch.tensor([2.0, 3.0])), [4, 27])
    check_op("Pow float", op("Pow", torch.tensor([4.0, 9.0]), torch.tensor(0.5)), np.array([2., 3.], dtype=np.float32))
    u = torch.linspace(-3, 3, 13)
    pos = torch.linspace(0.5, 4, 8)
    for name, x, want in [("Sqrt", pos, np.sqrt(pos.numpy())), ("Reciprocal", pos, 1 / pos.numpy()),
                          ("Neg", u, -u.numpy()), ("Abs", u, np.abs(u.numpy())), ("Exp", u, np.exp(u.numpy())),
                          ("Log", pos, np.log(pos.numpy())), ("Tanh", u, np.tanh(u.numpy())),
                          ("Erf", u, [math.erf(v) for v in u.tolist()]),
                          ("Sigmoid", u, 1 / (1 + np.exp(-u.numpy()))), ("Relu", u, np.maximum(u.numpy(), 0)),
                          ("Floor", u * 0.7, np.floor(u.numpy() * 0.7)), ("Ceil", u * 0.7, np.ceil(u.numpy() * 0.7)),
                          ("Sin", u, np.sin(u.numpy())), ("Cos", u, np.cos(u.numpy())),
                          ("Round", torch.tensor([0.5, 1.5, 2.5, -0.5]), [0., 2., 2., -0.]),
                          ("HardSwish", u, u.numpy() * np.clip(u.numpy() / 6 + 0.5, 0, 1))]:
        check_op(name, op(name, x), np.asarray(want, dtype=np.float32))
    check_op("LeakyRelu alpha 0.1", op("LeakyRelu", u, alpha=0.1), np.where(u.numpy() < 0, 0.1 * u.numpy(), u.numpy()))
    check_op("HardSigmoid default alpha 0.2", op("HardSigmoid", u), np.clip(0.2 * u.numpy() + 0.5, 0, 1))
    check_op("HardSigmoid alpha 1/6", op("HardSigmoid", u, alpha=1 / 6), np.clip(u.numpy() / 6 + 0.5, 0, 1))
    check_op("Gelu", op("Gelu", u), [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in u.tolist()])
    check_op("Gelu tanh", op("Gelu", u, approximate="tanh"),
             [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in u.tolist()])
    check_op("Clip min and max", op("Clip", u, -1.0, 2.0), np.clip(u.numpy(), -1, 2))
    check_op("Clip max only", op("Clip", u, None, 0.5), np.minimum(u.numpy(), 0.5))
    check_op("Clip no bounds", op("Clip", u), u)
    check_op("Clip tensor bounds", op("Clip", u, torch.tensor(-2.0), torch.tensor(1.0)), np.clip(u.numpy(), -2, 1))
    check_op("Max variadic", op("Max", u, -u, torch.tensor(0.5)), np.maximum(np.abs(u.numpy()), 0.5))
    check_op("Min variadic", op("Min", u, -u), -np.abs(u.numpy()))
    c = torch.tensor([True, False, True])
    check_op("Where", op("Where", c, torch.tensor([1., 2., 3.]), torch.tensor(0.)), np.array([1., 0., 3.], dtype=np.float32))
    e1, e2 = torch.tensor([1, 2, 3]), torch.tensor([3, 2, 1])
    check_op("Equal", op("Equal", e1, e2), [False, True, False])
    check_op("Less", op("Less", e1, e2), [True, False, False])
    check_op("Greater", op("Greater", e1, e2), [False, False, True])
    check_op("Not", op("Not", c), [False, True, False])
    check_op("And", op("And", c, torch.tensor([True, True, False])), [True, False, False])
    check_op("Or", op("Or", c, torch.tensor([False, True, False])), [True, True, True])
    check_op("Cast float -> int64 truncates", op("Cast", torch.tensor([-1.7, 1.7, 2.5]), to=torch.int64), [-1, 1, 2])
    check_op("Cast float -> bool", op("Cast", torch.tensor([0.0, -0.5, 2.0]), to=torch.bool), [False, True, True])
    check_op("Identity", op("Identity", u), u)
    check_op("Dropout (inference)", op("Dropout", u, torch.tensor(0.5)), u)

    # softmax, normalisations
    s = r(2, 3, 4)
    e = np.exp(s.numpy() - s.numpy().max(axis=1, keepdims=True))
    check_op("Softmax axis 1", op("Softmax", s, axis=1), e / e.sum(axis=1, keepdims=True))
    check_op("LogSoftmax", op("LogSoftmax", s), torch.log(torch.softmax(s.double(), -1)).float())
    g, bb = r(3, 4), r(3, 4)
    sd = s.double()
    m, v = sd.mean(dim=(1, 2), keepdim=True), sd.var(dim=(1, 2), unbiased=False, keepdim=True)
    check_op("LayerNormalization axis -2", op("LayerNormalization", s, g, bb, axis=-2, epsilon=1e-5),
             ((sd - m) / torch.sqrt(v + 1e-5) * g.double() + bb.double()).float())
    m1, v1 = sd.mean(dim=2, keepdim=True), sd.var(dim=2, unbiased=False, keepdim=True)
    check_op("LayerNormalization scale broadcast, no bias", op("LayerNormalization", s, torch.tensor([2.0])),
             ((sd - m1) / torch.sqrt(v1 + 1e-5) * 2).float())
    xb = r(2, 3, 4, 5)
    sc, bi_, mean, var = r(3), r(3), r(3), torch.rand(3) + 0.5
    sh = (1, 3, 1, 1)
    check_op("BatchNormalization", op("BatchNormalization", xb, sc, bi_, mean, var, epsilon=1e-3),
             ((xb.double() - mean.double().reshape(sh)) / torch.sqrt(var.double().reshape(sh) + 1e-3)
              * sc.double().reshape(sh) + bi_.double().reshape(sh)).float())
    xd = xb.double()
    mi, vi = xd.mean(dim=(2, 3), keepdim=True), xd.var(dim=(2, 3), unbiased=False, keepdim=True)
    check_op("InstanceNormalization", op("InstanceNormalization", xb, sc, bi_, epsilon=1e-5),
             ((xd - mi) / torch.sqrt(vi + 1e-5) * sc.double().reshape(sh) + bi_.double().reshape(sh)).float())

    # reductions
    check_op("ReduceMean axes [1, -1]", op("ReduceMean", s, axes=[1, -1]), s.numpy().mean(axis=(1, 2), keepdims=True))
    check_op("ReduceMean keepdims 0", op("ReduceMean", s, axes=[0], keepdims=0), s.numpy().mean(axis=0))
    check_op("ReduceSum axes input", op("ReduceSum", s, torch.tensor([2])), s.numpy().sum(axis=2, keepdims=True))
    check_op("ReduceSum no axes: all", op("ReduceSum", s, None, keepdims=0), torch.tensor(s.double().sum().item()).float())
    check_op("ReduceSum no axes, noop", op("ReduceSum", s, None, noop_with_empty_axes=1), s)
    check_op("ReduceSum int32 stays int32", op("ReduceSum", torch.tensor([[1, 2], [3, 4]], dtype=torch.int32), [1]),
             torch.tensor([[3], [7]], dtype=torch.int32))
    check_op("ReduceMax", op("ReduceMax", s, axes=[0, 2], keepdims=0), s.numpy().max(axis=(0, 2)))
    t = torch.tensor([[1., 5., 5.], [7., 7., 2.]])
    check_op("ArgMax first of ties", op("ArgMax", t, axis=1), [[1], [0]])
    check_op("ArgMax last of ties", op("ArgMax", t, axis=1, select_last_index=1), [[2], [1]])
    check_op("ArgMax axis 0 keepdims 0", op("ArgMax", t, keepdims=0), [1, 1, 0])
    cs = torch.tensor([[1, 2, 3], [4, 5, 6]])
    check_op("CumSum", op("CumSum", cs, 1), [[1, 3, 6], [4, 9, 15]])
    check_op("CumSum exclusive", op("CumSum", cs, 1, exclusive=1), [[0, 1, 3], [0, 4, 9]])
    check_op("CumSum reverse", op("CumSum", cs, -1, reverse=1), [[6, 5, 3], [15, 11, 6]])
    check_op("CumSum exclusive reverse", op("CumSum", cs, 1, exclusive=1, reverse=1), [[5, 3, 0], [11, 6, 0]])

    # pools against the loops
    xp = r(2, 3, 7, 6)
    for k, st, pads, ceil in [([3, 3], [2, 2], [1, 1, 1, 1], 1), ([3, 2], [2, 2], [0, 0, 0, 0], 1),
                              ([2, 2], [1, 1], [0, 0, 0, 0], 0), ([3, 3], [2, 3], [0, 1, 2, 0], 0),
                              ([3, 3], [2, 2], [2, 0, 1, 1], 1), ([2, 3], [3, 2], [1, 1, 1, 1], 1)]:
        kw = dict(kernel_shape=k, strides=st, pads=pads, ceil_mode=ceil)
        check_op("MaxPool %s" % kw, op("MaxPool", xp, **kw), naive_pool2d(xp, k, st, pads, ceil, "max"))
        for cip in (0, 1):
            check_op("AveragePool %s count_include_pad=%d" % (kw, cip),
                     op("AveragePool", xp, count_include_pad=cip, **kw),
                     naive_pool2d(xp, k, st, pads, ceil, "avg", cip))
    check_op("MaxPool strides default to 1", op("MaxPool", xp, kernel_shape=[2, 2]),
             naive_pool2d(xp, [2, 2], [1, 1], [0, 0, 0, 0], 0, "max"))
    check_op("MaxPool SAME_UPPER", op("MaxPool", xp, kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
             naive_pool2d(xp, [3, 3], [2, 2], [1, 0, 1, 1], 0, "max"))   # 7: total 2 -> 1,1; 6: total 1 -> 0,1
    x1d = r(1, 2, 9)
    check_op("AveragePool 1-D asymmetric", op("AveragePool", x1d, kernel_shape=[3], strides=[2], pads=[2, 0]),
             naive_pool2d(x1d.unsqueeze(2), [1, 3], [1, 2], [0, 2, 0, 0], 0, "avg", 0).squeeze(2))
    check_op("GlobalAveragePool", op("GlobalAveragePool", xp), xp.numpy().mean(axis=(2, 3), keepdims=True))
    check_op("GlobalMaxPool", op("GlobalMaxPool", xp), xp.numpy().max(axis=(2, 3), keepdims=True))

    # shapes
    a = r(2, 3, 4)
    an = a.numpy()
    check_op("Reshape 0 and -1", op("Reshape", a, [0, -1]), an.reshape(2, 12))
    check_op("Reshape 0 copies the input's dimension", op("Reshape", a, torch.tensor([2, 0, 2, 2])), an.reshape(2, 3, 2, 2))
    z = torch.zeros(0, 3)
    check_op("Reshape allowzero=1 keeps 0", op("Reshape", z, [3, 0], allowzero=1), np.zeros((3, 0), dtype=np.float32))
    check_op("Reshape allowzero=0 copies", op("Reshape", z, [0, 3]), np.zeros((0, 3), dtype=np.float32))
    for ax, shape in ((0, (1, 24)), (2, (6, 4)), (-1, (6, 4)), (3, (24, 1))):
        check_op("Flatten axis %d" % ax, op("Flatten", a, axis=ax), an.reshape(shape))
    check_op("Transpose default reverses", op("Transpose", a), an.transpose())
    check_op("Transpose perm", op("Transpose", a, perm=[1, 0, 2]), an.transpose(1, 0, 2))
    check_op("Concat axis -1", op("Concat", a, a[:, :, :1], axis=-1), np.concatenate([an, an[:, :, :1]], -1))
    parts = op("Split", a, [1, 3], axis=2)
    check(isinstance(parts, tuple) and len(parts) == 2 and close(parts[0], an[:, :, :1]) and close(parts[1], an[:, :, 1:]),
          "Split sizes [1, 3]")
    parts = op("Split", a, axis=1, num_outputs=3)
    check(len(parts) == 3 and all(close(p, an[:, i:i + 1]) for i, p in enumerate(parts)), "Split equal parts")
    parts = op("Split", r(7), num_outputs=3)
    check([p.shape[0] for p in parts] == [3, 3, 1], "Split 7 in 3: %s, expected 3, 3, 1" % [p.shape[0] for p in parts])
    big = 2 ** 63 - 1
    sl = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    st = torch.from_numpy(sl)
    for starts, ends, axes, steps, want in [
            ([1], [big], [1], None, sl[:, 1:]),
            ([-2], [big], [2], None, sl[:, :, -2:]),
            ([0, 1], [-1, 1000], [0, 2], [1, 2], sl[0:-1, :, 1:1000:2]),
            ([-1], [-big], [1], [-1], sl[:, ::-1]),
            ([10], [0], [2], [-2], sl[:, :, 10:0:-2]),
            ([3], [1], [1], [1], sl[:, 3:1]),
            ([-100], [2], [0], None, sl[-100:2]),
            ([2, -1], [0, -big], [0, 1], [-1, -3], sl[2:0:-1, -1::-3])]:
        check_op("Slice starts %s ends %s axes %s steps %s" % (starts, ends, axes, steps),
                 op("Slice", st, starts, ends, axes, steps), np.ascontiguousarray(want))
    check_op("Slice tensor operands", op("Slice", st, torch.tensor([1]), torch.tensor([3])), sl[1:3])
    gd = np.arange(12, dtype=np.float32).reshape(3, 4)
    check_op("Gather negative indices", op("Gather", torch.from_numpy(gd), torch.tensor([[0, -1], [2, 1]])),
             np.take(gd, [[0, -1], [2, 1]], axis=0))
    check_op("Gather scalar index axis 1", op("Gather", torch.from_numpy(gd), torch.tensor(-2), axis=1),
             np.take(gd, -2, axis=1))
    check_op("Gather int32 indices", op("Gather", torch.from_numpy(gd), torch.tensor([1], dtype=torch.int32)), gd[[1]])
    check_op("GatherElements", op("GatherElements", torch.from_numpy(gd), torch.tensor([[0, -1], [1, 0]]), axis=1),
             np.take_along_axis(gd[:2], np.array([[0, 3], [1, 0]]), axis=1))
    check_op("Unsqueeze [0, -1]", op("Unsqueeze", a, [0, -1]), an.reshape(1, 2, 3, 4, 1))
    check_op("Unsqueeze [1, 3]", op("Unsqueeze", a, torch.tensor([3, 1])), an.reshape(2, 1, 3, 1, 4))
    q = r(1, 3, 1, 2)
    check_op("Squeeze axes [-2]", op("Squeeze", q, [-2]), q.numpy().reshape(1, 3, 2))
    check_op("Squeeze all", op("Squeeze", q), q.numpy().reshape(3, 2))
    ex = r(3, 1)
    check_op("Expand bidirectional", op("Expand", ex, [2, 1, 4]), np.broadcast_to(ex.numpy(), (2, 3, 4)))
    check_op("Expand with 1 where the input is larger", op("Expand", ex, torch.tensor([1, 1])), ex)
    check_op("Tile", op("Tile", ex, [2, 3]), np.tile(ex.numpy(), (2, 3)))
    check_op("Shape", op("Shape", a), [2, 3, 4])
    check_op("Shape start/end", op("Shape", a, start=-2, end=3), [3, 4])
    check_op("Size", op("Size", a), np.int64(24))
    check_op("ConstantOfShape default float 0", op("ConstantOfShape", torch.tensor([2, 3])), np.zeros((2, 3), np.float32))
    check_op("ConstantOfShape int64 value", op("ConstantOfShape", [2], value=7, dtype=torch.int64), [7, 7])
    check_op("Range int", op("Range", torch.tensor(1), torch.tensor(10), torch.tensor(3)), np.arange(1, 10, 3))
    check_op("Range float", op("Range", torch.tensor(1.0), torch.tensor(2.0), torch.tensor(0.3)),
             np.arange(1.0, 2.0, 0.3, dtype=np.float32), 1e-6)
    check_op("Range empty", op("Range", torch.tensor(5), torch.tensor(1), torch.tensor(1)), np.zeros(0, np.int64))
    pd = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    pt = torch.from_numpy(pd)
    check_op("Pad constant, negative crops", op("Pad", pt, [0, 1, -1, 0, 0, 2], torch.tensor(9.0)),
             np.pad(pd, ((0, 0), (1, 0), (0, 2)), constant_values=9)[:, :, 1:])
    check_op("Pad reflect", op("Pad", pt, [0, 0, 2, 0, 0, 1], mode="reflect"),
             np.pad(pd, ((0, 0), (0, 0), (2, 1)), mode="reflect"))
    check_op("Pad edge", op("Pad", pt, [0, 0, 1, 0, 0, 2], mode="edge"), np.pad(pd, ((0, 0), (0, 0), (1, 2)), mode="edge"))
    check_op("Pad axes", op("Pad", pt, [1, 2], None, [-1]), np.pad(pd, ((0, 0), (0, 0), (1, 2))))
    tr = r(4, 5)
    check_op("Trilu upper k=1", op("Trilu", tr, 1), np.triu(tr.numpy(), 1))
    check_op("Trilu lower k=-1", op("Trilu", tr, torch.tensor(-1), upper=0), np.tril(tr.numpy(), -1))
    e3, e4 = r(2, 3), r(3, 4)
    check_op("Einsum", op("Einsum", e3, e4, equation="ij,jk->ik"), (e3.double() @ e4.double()).float())
    check_op("Einsum transpose", op("Einsum", tr, equation="ij->ji"), tr.numpy().T)

    # Resize: nearest (asymmetric + floor is torch's nearest), linear (half_pixel = torch's bilinear)
    img = r(1, 2, 3, 4)
    check_op("Resize nearest asymmetric floor scales 2", op("Resize", img, None, [1, 1, 2, 2], mode="nearest",
             coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             F.interpolate(img, scale_factor=2, mode="nearest"))
    check_op("Resize nearest sizes", op("Resize", img, None, None, [1, 2, 5, 7], coordinate_transformation_mode="asymmetric",
             nearest_mode="floor"), F.interpolate(img, size=(5, 7), mode="nearest"))
    check_op("Resize linear half_pixel", op("Resize", img, None, [1, 1, 2, 1.5], mode="linear"),
             F.interpolate(img, scale_factor=(2, 1.5), mode="bilinear", align_corners=False))
    check_op("Resize linear align_corners", op("Resize", img, None, None, [1, 2, 5, 9], mode="linear",
             coordinate_transformation_mode="align_corners"),
             F.interpolate(img, size=(5, 9), mode="bilinear", align_corners=True))
    check_op("Resize linear pytorch_half_pixel", op("Resize", img, None, None, [1, 2, 6, 3], mode="linear",
             coordinate_transformation_mode="pytorch_half_pixel"),
             F.interpolate(img, size=(6, 3), mode="bilinear", align_corners=False))
    # round_prefer_floor, half_pixel: output 0..3 of a 2 -> 4 upscale map to -0.25, 0.25, 0.75, 1.25 -> 0, 0, 1, 1
    check_op("Resize nearest half_pixel round_prefer_floor",
             op("Resize", torch.tensor([[10., 20.]]), None, [1, 2]), [[10., 10., 20., 20.]])
    # 3 -> 2: x_orig = (x + 0.5) * 1.5 - 0.5 = 0.25, 1.75 -> 0, 2 (rounding), prefer ceil on ties
    check_op("Resize nearest downscale", op("Resize", torch.tensor([[1., 2., 3.]]), None, None, [1, 2]), [[1., 3.]])
    check_op("Resize nearest round_prefer_ceil ties", op("Resize", torch.tensor([[1., 2., 3., 4.]]), None, [1, 0.5],
             coordinate_transformation_mode="asymmetric", nearest_mode="round_prefer_ceil"), [[1., 3.]])
    check(sorted(tp.OPS) == sorted(set(tp.OPS)) and len(tp.OPS) >= 75, "OPS has %d op types" % len(tp.OPS))


# ---------------------------------------------------------------------------
# 2. refusals
# ---------------------------------------------------------------------------
def tiny_model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "t", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_refusals():
    V = helper.make_tensor_value_info
    X = V("X", TensorProto.FLOAT, [1, 3, 4, 4])
    nodes = [helper.make_node("Relu", ["X"], ["a"], name="r0"),
             helper.make_node("Det", ["a"], ["b"], name="det_first"),
             helper.make_node("Det", ["b"], ["c"], name="det_second"),
             helper.make_node("Frob", ["c"], ["d"], name="frob", domain="my.ops"),
             helper.make_node("Resize", ["d", "", "sc"], ["e"], name="cubic", mode="cubic"),
             helper.make_node("Conv", ["e", "W"], ["f"], name="conv_odd", odd_attribute=3),
             helper.make_node("MaxPool", ["f"], ["g", "idx"], name="pool_idx", kernel_shape=[2, 2]),
             helper.make_node("Add", ["g", "idx"], ["Y"], name="uses_idx"),
             helper.make_node("Cast", ["a"], ["s"], name="cast_str", to=TensorProto.STRING),
             helper.make_node("Constant", [], ["k"], name="const_str", value_string="text")]
    m = tiny_model(nodes, [X], [V("Y", TensorProto.FLOAT, None)],
                   [helper.make_tensor("sc", TensorProto.FLOAT, [4], [1, 1, 2, 2]),
                    helper.make_tensor("W", TensorProto.FLOAT, [3, 3, 1, 1], [0.0] * 9)])
    try:
        tp.build(m, {n.name: 0 for n in nodes}, {0: torch.device("cpu")})
        check(False, "a model with Det, my.ops.Frob and cubic Resize was built")
    except tp.UnsupportedModelError as e:
        msg = str(e)
        for want in ("Det (node 'det_first')", "my.ops.Frob (node 'frob')", "mode=cubic", "cubic",
                     "odd_attribute", "conv_odd", "pool_idx", "cast_str", "const_str"):
            check(want in msg, "the refusal lacks %r: %s" % (want, msg))
        check("det_second" not in msg, "the refusal names a second Det node: %s" % msg)

    ok = tiny_model([helper.make_node("Relu", ["X"], ["a"], name="r0"), helper.make_node("Neg", ["a"], ["Y"], name="n1")],
                    [X], [V("Y", TensorProto.FLOAT, None)])
    try:
        tp.build(ok, {"r0": 0}, {0: torch.device("cpu")})
        check(False, "a mapping without n1 was accepted")
    except tp.PlaceError as e:
        check("n1" in str(e) and "no device" in str(e), "missing node: %s" % e)
    try:
        tp.build(ok, {"r0": 0, "n1": 3}, {0: torch.device("cpu")})
        check(False, "logical device 3 of 1 was accepted")
    except tp.PlaceError as e:
        check("n1" in str(e) and "3" in str(e), "device out of range: %s" % e)


# ---------------------------------------------------------------------------
# 3. end to end with a forced alternating mapping
# ---------------------------------------------------------------------------
class ConvNet(nn.Module):
    """Conv + BatchNorm (folded by the export), BatchNorm after a Relu (kept), pools, upsampling."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.b2 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.avg = nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = self.b2(F.relu(self.b1(self.c1(x))))
        y = F.hardswish(self.c2(y)) + self.up(self.pool(y))[:, :, :4, :4]
        y = self.avg(self.up2(y))
        y = y.mean(dim=(2, 3))
        return torch.log_softmax(self.fc(y), dim=-1), y.clamp(0, 1)


class TinyGPT(nn.Module):
    """Token and torch.arange position embeddings, causal attention, a GELU MLP, a head."""

    def __init__(self, vocab=40, d=32, heads=4, T=16):
        super().__init__()
        self.h = heads
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        hd = x.shape[-1] // self.h
        q, k, v = [t.reshape(B, T, self.h, hd).transpose(1, 2) for t in (q, k, v)]
        att = (q @ k.transpose(-2, -1)) * (hd ** -0.5)
        att = att.masked_fill(pos[None, :] > pos[:, None], float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, -1))
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return self.head(self.lnf(x))


class ResBlock(nn.Module):
    """A resnet basic block with a strided 1x1 downsample branch, pooled into a Linear."""

    def __init__(self, cin=4, cout=8):
        super().__init__()
        self.c1, self.n1 = nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.n2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=2, bias=False), nn.BatchNorm2d(cout))
        self.fc = nn.Linear(cout, 3)

    def forward(self, x):
        y = F.relu(self.n1(self.c1(x)))
        y = F.relu(self.n2(self.c2(y)) + self.down(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


def randomize_bn(m):
    """Non-trivial running statistics, so that BatchNorm is not the identity."""
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.5, 0.5)
    return m.eval()


def expected_copies(model, mapping):
    """Distinct (tensor, destination device) pairs where a node that runs reads a tensor
    made by a node that runs on another device. Constants (initializers, Constant
    outputs, outputs of nodes whose inputs are all constant), graph inputs and the
    inputs of Shape and Size (their shape is read, not their values) are no copies."""
    g = model.graph
    const = {t.name for t in g.initializer}
    producer = {}
    for i, n in enumerate(g.node):
        if n.op_type == "Constant" or all(t == "" or t in const for t in n.input):
            const.update(o for o in n.output if o)
            continue
        for o in n.output:
            producer[o] = tp.node_key(n, i)
    pairs = set()
    for i, n in enumerate(g.node):
        if all(o in const for o in n.output if o):
            continue
        d = mapping[tp.node_key(n, i)]
        if n.op_type in ("Shape", "Size"):     # these read only their input's shape, where it is
            continue
        for t in n.input:
            if t in producer and mapping[producer[t]] != d:
                pairs.add((t, d))
    return len(pairs)


def copy_nodes(placed):
    """The placed program's `.to` nodes between ops (not input moves, not output moves)."""
    return [n for n in placed.graph.nodes if n.op == "call_method" and n.target == "to"
            and n.args[0].op != "placeholder" and not any(u.op == "output" for u in n.users)]


def outputs_equal(tag, got, want, tol):
    got = list(got) if isinstance(got, tuple) else [got]
    want = list(want) if isinstance(want, tuple) else [want]
    ok = len(got) == len(want) and all(g.shape == w.shape for g, w in zip(got, want))
    diff = max((g - w).abs().max().item() for g, w in zip(got, want)) if ok else float("inf")
    check(ok and diff <= tol, "%s: outputs differ by %.3g (tolerance %g)" % (tag, diff, tol))


def test_end_to_end():
    cases = [("convnet", randomize_bn(ConvNet()), (torch.randn(2, 3, 8, 8),), None, None),
             ("transformer", nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True).eval(),
              (torch.randn(2, 5, 32),), None, None),
             ("gpt", TinyGPT().eval(), (torch.randint(0, 40, (2, 16)),), {"idx": {0: "batch", 1: "T"}},
              (torch.randint(0, 40, (3, 9)),)),
             ("resblock", randomize_bn(ResBlock()), (torch.randn(2, 4, 8, 8),), None, None)]
    for tag, module, x, dyn, other in cases:
        d = os.path.join(TMP, tag)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        tp.export(module, x, path, dynamic_axes=dyn)
        model = onnx.load(path)
        tp.normalize_names(model)
        keys = [tp.node_key(n, i) for i, n in enumerate(model.graph.node)]
        check(len(set(keys)) == len(keys) and all(keys), "%s: node names not unique" % tag)
        mapping = {k: i % 2 for i, k in enumerate(keys)}
        with open(os.path.join(d, "mapping.json"), "w") as f:
            json.dump({"format": "doppler-mapping 1", "mapping": mapping}, f)
        placed = tp.place(module, x, mapping=os.path.join(d, "mapping.json"), devices=["cpu", "cpu"],
                          workdir=d, dynamic_axes=dyn)
        with torch.no_grad():
            outputs_equal(tag, placed(*x), module(*x), 1e-4)
            if other is not None:
                outputs_equal(tag + " at another shape", placed(*other), module(*other), 1e-4)
        check(placed.mapping == mapping, "%s: placed.mapping is not the mapping given" % tag)
        want = expected_copies(model, mapping)
        got = copy_nodes(placed)
        check(want > 0 and len(got) == want == placed.copies,
              "%s: %d copy nodes, .copies %d, expected %d" % (tag, len(got), placed.copies, want))
        check(len({(n.args[0].name, n.args[1]) for n in got}) == len(got), "%s: a copy node repeats" % tag)
        ops = [n for n in placed.graph.nodes if n.op == "call_function" and n.target in tp.OPS.values()]
        check(0 < len(ops) <= len(keys), "%s: %d op nodes for %d ONNX nodes" % (tag, len(ops), len(keys)))
        check("torch_place_" in placed.code and "_to_d1" in placed.code, "%s: the code names no ops or copies" % tag)
        if tag == "convnet":
            types = {n.op_type for n in model.graph.node}
            for t in ("Conv", "BatchNormalization", "MaxPool", "AveragePool", "Resize", "HardSwish", "Gemm", "Clip",
                      "ReduceMean", "LogSoftmax", "Slice"):
                check(t in types, "convnet: the export has no %s (has %s)" % (t, sorted(types)))
        if tag == "gpt":
            types = {n.op_type for n in model.graph.node}
            for t in ("Range", "Where", "Split", "Gather", "LayerNormalization", "Erf", "Shape"):
                check(t in types, "gpt: the export has no %s (has %s)" % (t, sorted(types)))
        # three logical devices on one torch device (devices cycle), outputs still equal
        if tag == "resblock":
            m3 = {k: i % 3 for i, k in enumerate(keys)}
            p3 = tp.place(module, x, mapping=m3, devices="cpu")
            with torch.no_grad():
                outputs_equal("resblock on 3 logical devices", p3(*x), module(*x), 1e-4)
            check(len(p3.devices) == 3 and p3.copies == expected_copies(model, m3),
                  "resblock 3 devices: %s, %d copies, expected %d" % (p3.devices, p3.copies, expected_copies(model, m3)))
    # torch's training flag is restored by the export
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).train()
    p = tp.export(m, torch.randn(2, 4), os.path.join(TMP, "train.onnx"))
    check(m.training and p == (["input"], ["output_0"]), "export: training flag %s, names %s" % (m.training, p))


# ---------------------------------------------------------------------------
# 4. the doppler CLI
# ---------------------------------------------------------------------------
def dpg_sources(dpg):
    """[[ONNX names of op i]] in the .dpg's op order (source=, percent-decoded)."""
    out = []
    with open(dpg, encoding="utf-8") as f:
        for ln in f:
            tok = ln.split()
            if tok and tok[0] == "op":
                src = [t[len("source="):] for t in tok[2:] if t.startswith("source=")]
                out.append([urllib.parse.unquote(x) for x in src[0].split(",")] if src else [])
    return out


def test_cli():
    if not os.access(CLI, os.X_OK):
        skip("%s is not built: no placement through the CLI" % CLI)
        return
    module = randomize_bn(ResBlock())
    x = (torch.randn(2, 4, 8, 8),)
    for method, cluster, precision in (("cp", "homogeneous:2", None), ("doppler", "h100-sxm:2", "bf16")):
        tag = "CLI %s %s" % (method, cluster)
        d = os.path.join(TMP, "cli_" + method)
        placed = tp.place(module, x, method=method, cluster=cluster, precision=precision, devices="cpu", workdir=d,
                          doppler=CLI, place_args=["--samples", "4"] if method == "doppler" else [])
        with torch.no_grad():
            outputs_equal(tag, placed(*x), module(*x), 1e-4)
        model = onnx.load(placed.onnx_path)
        keys = [tp.node_key(n, i) for i, n in enumerate(model.graph.node)]
        check(sorted(placed.mapping) == sorted(keys) and set(placed.mapping.values()) <= {0, 1},
              "%s: the mapping does not cover the %d nodes: %s" % (tag, len(keys), placed.mapping))
        check(placed.predicted is not None and placed.predicted > 0 and len(placed.devices) == 2,
              "%s: predicted %s, devices %s" % (tag, placed.predicted, placed.devices))
        check(placed.copies == expected_copies(model, placed.mapping),
              "%s: %d copies, expected %d" % (tag, placed.copies, expected_copies(model, placed.mapping)))
        # source=: every ONNX node exactly once; the mapping is the CLI's assignment through them
        sources = dpg_sources(placed.graph_path)
        inputs = {vi.name for vi in model.graph.input}
        named = [s for names in sources for s in names if s not in inputs]
        check(sorted(named) == sorted(keys), "%s: source= names %d entries for %d nodes" % (tag, len(named), len(keys)))
        args = [CLI, "place", placed.graph_path, "--method", method, "--cluster", cluster, "--json"]
        args += ["--precision", precision] if precision else []
        args += ["--samples", "4"] if method == "doppler" else []
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        assignment = json.loads(r.stdout)["assignment"] if r.returncode == 0 else []
        want = {s: dev for names, dev in zip(sources, assignment) for s in names if s not in inputs}
        check(len(assignment) == len(sources) and want == placed.mapping,
              "%s: the mapping differs from the CLI's assignment: %s vs %s" % (tag, placed.mapping, want))
        if method == "cp":
            again = tp.place(module, x, mapping=placed.mapping, devices="cpu")
            check(again.mapping == placed.mapping and again.copies == placed.copies,
                  "mapping= of the CLI's mapping: %s copies, expected %s" % (again.copies, placed.copies))
        else:
            check(placed.predicted < 1.0, "%s: predicted %s s for a tiny block on two H100s" % (tag, placed.predicted))
    try:
        tp.place(module, x, method="cp", cluster="no-such-preset:3", devices="cpu", doppler=CLI)
        check(False, "an unknown cluster was accepted")
    except tp.PlaceError as e:
        check("no-such-preset" in str(e), "unknown cluster: %s" % e)

    # the command line: a module from a file, --check, --mapping-out
    spec = os.path.join(TMP, "tiny_module.py")
    with open(spec, "w") as f:
        f.write("import torch.nn as nn\n\ndef build():\n"
                "    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),\n"
                "                         nn.Flatten(), nn.Linear(4, 2))\n")
    out = os.path.join(TMP, "cli_mapping.json")
    if os.path.exists(out):
        os.unlink(out)
    r = subprocess.run([sys.executable, "demos/torch_place.py", spec + ":build", "--input-shape", "2,3,6,6",
                        "--method", "cp", "--cluster", "homogeneous:2", "--devices", "cpu", "--check",
                        "--mapping-out", out, "--doppler", CLI],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    m = re.search(r"max abs difference (\S+)", r.stdout)
    check(r.returncode == 0 and m and float(m.group(1)) < 1e-5 and "cross-device copies" in r.stdout,
          "torch_place.py --check: exit %d: %s %s" % (r.returncode, r.stdout, r.stderr[-500:]))
    try:
        with open(out) as f:
            j = json.load(f)
        check(j["format"] == "doppler-mapping 1" and j["devices"] == 2 and len(j["mapping"]) >= 5,
              "--mapping-out: %s" % j)
    except (OSError, ValueError, KeyError) as e:
        check(False, "--mapping-out: %s" % e)
    r = subprocess.run([sys.executable, "demos/torch_place.py", spec + ":nothing", "--input-shape", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    check(r.returncode == 1 and "nothing" in r.stderr, "a missing callable: exit %d: %s" % (r.returncode, r.stderr))


# ---------------------------------------------------------------------------
# 5. the README's walk-through
# ---------------------------------------------------------------------------
def test_readme():
    with open("README.md", encoding="utf-8") as f:
        text = f.read()
    sec = re.search(r"^## From a PyTorch module to a placed module\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    block = re.search(r"```python\n(.*?)```", sec.group(1), re.S) if sec else None
    if not check(block is not None, "README.md has no python block under '## From a PyTorch module to a placed module'"):
        return
    if not os.access(CLI, os.X_OK):
        skip("the README walk-through needs %s" % CLI)
        return
    env = dict(os.environ, DOPPLER_CLI=os.path.abspath(CLI))
    r = subprocess.run([sys.executable, "-c", block.group(1)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env)
    check(r.returncode == 0, "the README walk-through: exit %d:\n%s%s" % (r.returncode, r.stdout, r.stderr[-1500:]))


def main():
    os.makedirs(TMP, exist_ok=True)
    t0 = time.time()
    for name, fn in [("ops", test_ops), ("refusals", test_refusals),
                     ("end to end", test_end_to_end), ("CLI", test_cli), ("README", test_readme)]:
        t = time.time()
        try:
            fn()
        except Exception as e:   # one part's crash is a failure, the others still run
            import traceback
            traceback.print_exc()
            check(False, "%s: %s: %s" % (name, type(e).__name__, e))
        print("  %-12s %.1f s" % (name, time.time() - t), flush=True)
    print("test_torch_place took %.1f s (python %s, torch %s, onnx %s)" % (
        time.time() - t0, sys.version.split()[0], torch.__version__, onnx.__version__))
    return done()


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")        # the exporter's TracerWarnings
    sys.exit(main())
