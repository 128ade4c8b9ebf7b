#!/usr/bin/env python3
"""torch_place.py - place a PyTorch module's ops on several devices with doppler.

usage: demos/torch_place.py MODULE_SPEC --input-shape 1,3,224,224 [--input-shape ...]
                            [--method M] [--cluster C] [--precision P] [--seed S]
                            [--devices cpu,cuda:0,...] [--check] [--mapping-out MAP.json]
                            [--code] [--workdir DIR] [--doppler PATH]
       demos/torch_place.py --bench [--runs N]

As a module (demos/ on sys.path):

    import torch_place
    placed = torch_place.place(module, example_inputs, method="doppler", cluster="h100-sxm:4")
    y = placed(*example_inputs)        # equals module(*example_inputs) within rounding
    print(placed.summary())

place() takes an nn.Module and example inputs (a tensor or a tuple of them)
and does four things:

1. Export. torch.onnx.export(module.eval(), example_inputs) at opset 17
   (dynamo=False where the installed torch's export has that parameter),
   constant folding on, to model.onnx in a work directory (workdir=, or a
   temporary directory that lives as long as the returned module). The
   graph inputs are named after forward()'s parameters, the outputs
   output_0, output_1, ...; the module's training flag is restored. Node
   names become keys: an unnamed node is named OPTYPE_INDEX (the
   converter's name for it), a name already taken gets _2, _3, ...
   Mappings are {ONNX node name: logical device}.
2. Convert. The graph is run once on the CPU on the example inputs with
   this file's op implementations (run_onnx), and a copy of it whose
   value_info gives every tensor the shape it had (model.shapes.onnx)
   goes through demos/onnx2dpg.py's convert() (imported, in process) to
   model.dpg: ops with FLOPs, bytes and weights, each listing in source=
   the ONNX nodes it stands for (Constant and folded nodes with their
   consumer).
3. Place. The doppler CLI (doppler=, else $DOPPLER_CLI, else build/doppler
   in this repository) runs
       doppler place model.dpg --method M --cluster C [--precision P] --seed S --out model.mapping.json
   and that file, {"format": "doppler-mapping 1", "devices": N,
   "makespan": X, "mapping": {SOURCE_NAME: DEVICE, ...}}, is the placement
   (a name several ops share maps to a list: its first device is taken).
   mapping= (a dict, such a JSON file or a plain {name: device} JSON, or
   an int: every node on that logical device) replaces steps 2 and 3. A Constant node the mapping leaves out goes to
   the device of its first reader; any other node left out is an error.
4. Apply. The ONNX graph becomes a torch.fx GraphModule (a PlacedModule)
   with one fx node per ONNX node, in the model's topological order; each
   calls this file's torch implementation of its op type (OPS) on the
   torch device of its logical device:
   - Initializers, Constant values and the outputs of every node whose
     inputs are all constant (such as the exporter's Identity of a shared
     weight; computed once, here) are buffers: one per (tensor, logical
     device reading it), on that device; logical devices on one torch
     device share the storage. A constant in a shape-like operand
     (Reshape's shape, Slice's starts, ...: STATIC) is written into the
     code as a Python list instead.
   - Where a node reads a tensor made on another logical device, one
     `.to(device)` fx node per (tensor, destination logical device) is
     inserted and reused by every reader there; .copies counts them. Two
     logical devices on one torch device still get the copy node (a no-op
     at run time), so the code shows the placement's transfers. Shape and
     Size read their input's shape where it is made: no copy.
   - Graph inputs are moved (`.to`) to each logical device that reads
     them; outputs are returned on output_device (default: the device of
     the first example input): one tensor, or a tuple when the graph has
     several outputs.
   Ops run from one Python thread in the ONNX order; on CUDA the launches
   are asynchronous, so devices overlap as far as their streams allow.
   Before anything runs every node is checked (check_supported): op types
   without an implementation, attributes or attribute values the
   implementation does not take, and consumed secondary outputs raise
   UnsupportedModelError, which names every unsupported op type with one
   node of each and every other problem.

The result, a PlacedModule (torch.fx.GraphModule), also carries .mapping
(ONNX node name -> logical device, every node), .devices (logical device
-> torch device), .copies, .predicted (doppler's simulated makespan:
seconds with a GPU preset such as h100-sxm:4; with homogeneous:N, unit
devices of one FLOP and one byte per time unit; None with mapping=),
.graph_path (model.dpg; None with mapping=), .onnx_path, .method,
.cluster, .output_device and summary(); print(placed.code) shows the
program, its names derived from the ONNX names
('/layer1/layer1.0/conv1/Conv' -> layer1_0_conv1_Conv, a copy of it to
logical device 2 -> layer1_0_conv1_Conv_to_d2, a weight's buffer there
-> ..._d2).

devices: a list (or comma-separated string) of torch devices, logical device
k on devices[k % len(devices)]; default: cuda:0 .. cuda:N-1 when N CUDA
devices are there for the N logical devices, else all on "cpu" (with a
warning).

Op semantics follow ONNX opsets 13-17 (the export's; the opset-18 forms
that moved axes/num_outputs to inputs or attributes are accepted too):
Conv and ConvTranspose (pads, strides, dilations, group, auto_pad,
output_padding, output_shape), Gemm (transA, transB, alpha, beta), MatMul,
Einsum, element-wise arithmetic (Add, Sub, Mul, Div with integer division
truncating toward zero, Pow, Mod with fmod, Max, Min, Sum, Mean),
unary maths and activations, normalisations (LayerNormalization,
BatchNormalization in inference, InstanceNormalization), reductions, pools
(MaxPool and AveragePool with pads, ceil_mode, count_include_pad; global
pools), shape ops (Reshape with 0, -1 and allowzero, Flatten, Transpose,
Squeeze, Unsqueeze, Expand, Concat, Split, Slice with negative steps and
clamped ends, Gather, GatherElements, Tile, Pad, Shape, Size), creation
(ConstantOfShape, Range, Constant), logic (Where, comparisons, Not, And,
Or, Xor), Cast, Identity, Dropout (inference), Trilu, CumSum, ArgMax,
ArgMin and Resize (nearest and linear, any coordinate transformation but
tf_crop_and_resize). sorted(OPS) lists them.

Limits: inference only (the placed module holds its own copies of the
weights as buffers, not the original's parameters; no gradients reach the
original); the graph is what torch's exporter traced, so Python control flow
is frozen at the example inputs, and shapes too unless dynamic_axes is
given (the placement is made for the example's shapes either way); op
types outside OPS (custom domains, ops with subgraphs such as If and Loop,
quantized and random ops, ...) are refused; step 2 costs one forward pass
on the CPU; no op runs in place (ReLU(inplace=True) and `+=` allocate); the
placed module's .to()/.cuda() would move every buffer to one device, undoing
the placement.

--bench times the placed module with every op on one device against the
original (CPU; resnet18 at 1x3x224x224, a transformer encoder layer), the
median of --runs runs each, and prints the overhead.

Needs torch and onnx: when the python3 running this file cannot import
them, it runs itself again with /usr/bin/python3 (where Debian installs
python3-onnx).
"""
import functools
import importlib
import importlib.util
import inspect
import json
import math
import operator
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

PROG = "torch_place"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SYSTEM_PYTHON = "/usr/bin/python3"
OPSET = 17          # the export's opset
MIN_OPSET = 13      # the oldest opset whose semantics OPS implements


def _reexec_if_missing():
    """CLI only: runs this file again with the system python when torch or onnx is missing."""
    try:
        import onnx  # noqa: F401
        import torch  # noqa: F401
        return
    except ImportError as e:
        missing = str(e)
    me = os.path.realpath(sys.executable or "")
    if (os.environ.get("TORCH_PLACE_REEXEC") != "1" and os.access(SYSTEM_PYTHON, os.X_OK)
            and os.path.realpath(SYSTEM_PYTHON) != me):
        os.environ["TORCH_PLACE_REEXEC"] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
    sys.stderr.write("%s: needs the Python packages torch and onnx (%s with %s)\n" % (PROG, missing, sys.executable))
    sys.exit(1)


if __name__ == "__main__":
    _reexec_if_missing()

import torch  # noqa: E402
import torch.fx  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class PlaceError(Exception):
    """A step of place() failed: the export, the conversion, the doppler CLI, or the mapping."""


class UnsupportedModelError(PlaceError):
    """The ONNX graph has op types, attributes or outputs OPS does not implement."""


# ONNX TensorProto data types -> torch dtypes (the ones torch has)
DTYPES = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16, 6: torch.int32, 7: torch.int64,
          9: torch.bool, 10: torch.float16, 11: torch.float64, 14: torch.complex64, 15: torch.complex128,
          16: torch.bfloat16}


# ---------------------------------------------------------------------------
# ONNX op semantics in torch. An implementation takes the node's inputs as
# positional arguments (None for an absent optional input) and its
# attributes as keyword arguments under their ONNX names; it returns the
# output, or a tuple of outputs for multi-output ops (Split).
# ---------------------------------------------------------------------------
OPS = {}        # ONNX op type -> implementation
STATIC = {}     # ONNX op type -> positions of shape-like inputs: a constant there is passed as a Python value
CHECKS = {}     # ONNX op type -> f(attrs) returning what is unsupported in them, or None


def onnx_op(op_type, static=(), check=None):
    """Registers the decorated function as the implementation of op_type."""
    def register(fn):
        OPS[op_type] = fn
        STATIC[op_type] = frozenset(static)
        if check is not None:
            CHECKS[op_type] = check
        return fn
    return register


def _ints(v):
    """A list of Python ints from a tensor, list or number (None stays None)."""
    if v is None:
        return None
    if isinstance(v, torch.Tensor):
        v = v.tolist()
    return [int(v)] if isinstance(v, (int, float)) else [int(x) for x in v]


def _floats(v):
    if v is None:
        return None
    if isinstance(v, torch.Tensor):
        v = v.tolist()
    return [float(v)] if isinstance(v, (int, float)) else [float(x) for x in v]


def _scalar(v):
    """A Python number from a one-element tensor or a number."""
    return v.item() if isinstance(v, torch.Tensor) else v


def _axis(a, rank):
    return a + rank if a < 0 else a


# --- element-wise ----------------------------------------------------------
def _unary(op_type, fn):
    def impl(x):
        return fn(x)
    impl.__name__ = impl.__qualname__ = op_type
    onnx_op(op_type)(impl)


for _t, _f in [("Sqrt", torch.sqrt), ("Reciprocal", torch.reciprocal), ("Neg", torch.neg), ("Abs", torch.abs),
               ("Exp", torch.exp), ("Log", torch.log), ("Erf", torch.erf), ("Tanh", torch.tanh),
               ("Sigmoid", torch.sigmoid), ("Relu", torch.relu), ("Floor", torch.floor), ("Ceil", torch.ceil),
               ("Sin", torch.sin), ("Cos", torch.cos), ("Sign", torch.sign), ("Round", torch.round),
               ("Softplus", F.softplus), ("Not", torch.logical_not), ("HardSwish", F.hardswish)]:
    _unary(_t, _f)


def _binary(op_type, fn):
    def impl(a, b):
        return fn(a, b)
    impl.__name__ = impl.__qualname__ = op_type
    onnx_op(op_type)(impl)


for _t, _f in [("Add", torch.add), ("Sub", torch.sub), ("Mul", torch.mul), ("Equal", torch.eq),
               ("Less", torch.lt), ("Greater", torch.gt), ("LessOrEqual", torch.le), ("GreaterOrEqual", torch.ge),
               ("And", torch.logical_and), ("Or", torch.logical_or), ("Xor", torch.logical_xor),
               ("MatMul", torch.matmul)]:
    _binary(_t, _f)


@onnx_op("Div")
def Div(a, b):
    """Integer division truncates toward zero (C's rule, ONNX's reference)."""
    if not a.is_floating_point() and not a.is_complex():
        return torch.div(a, b, rounding_mode="trunc")
    return torch.div(a, b)


@onnx_op("Pow")
def Pow(a, b):
    """The result has the base's type."""
    y = torch.pow(a, b)
    return y if y.dtype == a.dtype else y.to(a.dtype)


@onnx_op("Mod")
def Mod(a, b, *, fmod=0):
    """fmod=0: the remainder takes the divisor's sign (integers); fmod=1: the dividend's (C fmod)."""
    return torch.fmod(a, b) if fmod else torch.remainder(a, b)


@onnx_op("Max")
def Max(*xs):
    return functools.reduce(torch.maximum, xs)


@onnx_op("Min")
def Min(*xs):
    return functools.reduce(torch.minimum, xs)


@onnx_op("Sum")
def Sum(*xs):
    return functools.reduce(torch.add, xs)


@onnx_op("Mean")
def Mean(*xs):
    return functools.reduce(torch.add, xs) / len(xs)


@onnx_op("Where")
def Where(cond, x, y):
    return torch.where(cond, x, y)


@onnx_op("LeakyRelu")
def LeakyRelu(x, *, alpha=0.01):
    return F.leaky_relu(x, alpha)


@onnx_op("Elu")
def Elu(x, *, alpha=1.0):
    return F.elu(x, alpha)


@onnx_op("PRelu")
def PRelu(x, slope):
    return torch.where(x < 0, x * slope, x)


@onnx_op("HardSigmoid")
def HardSigmoid(x, *, alpha=0.2, beta=0.5):
    """max(0, min(1, alpha x + beta))."""
    return torch.clamp(x * alpha + beta, 0, 1)


@onnx_op("Gelu")
def Gelu(x, *, approximate="none"):
    return F.gelu(x, approximate=approximate)


@onnx_op("Clip", static=(1, 2))
def Clip(x, min=None, max=None):
    """min(max(x, min), max); absent bounds are no bounds."""
    if min is not None:
        x = torch.clamp(x, min=min)
    if max is not None:
        x = torch.clamp(x, max=max)
    return x


@onnx_op("Cast", check=lambda a: None if a.get("to") in DTYPES else "to=%s (a type torch lacks)" % a.get("to"))
def Cast(x, *, to, saturate=1):
    """`to` is a torch dtype (the builder converts ONNX's enum)."""
    return x.to(to)


@onnx_op("CastLike")
def CastLike(x, like, *, saturate=1):
    return x.to(like.dtype)


@onnx_op("Identity")
def Identity(x):
    return x


@onnx_op("Dropout")
def Dropout(x, ratio=None, training_mode=None, *, seed=None):
    """Inference: the identity (the mask output is refused where used)."""
    return x


# --- matrix products and convolutions --------------------------------------
@onnx_op("Gemm")
def Gemm(a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    """alpha A' B' + beta C, A' = A^T if transA, B' = B^T if transB; C broadcasts."""
    if transB and not transA and alpha == 1.0 and beta == 1.0 and (c is None or c.dim() <= 1):
        return F.linear(a, b, c)          # nn.Linear's own kernel
    a = a.t() if transA else a
    b = b.t() if transB else b
    if c is None or beta == 0.0:
        y = torch.matmul(a, b)
        return y if alpha == 1.0 else y * alpha
    return torch.addmm(c, a, b, beta=beta, alpha=alpha)


@onnx_op("Einsum")
def Einsum(*xs, equation):
    return torch.einsum(equation, *xs)


def _pads(auto_pad, pads, in_sizes, kernel, strides, dilations):
    """(begin, end) padding per spatial axis from ONNX's pads or auto_pad."""
    nd = len(kernel)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for n, k, s, d in zip(in_sizes, kernel, strides, dilations):
            out = -(-n // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
            small, big = total // 2, total - total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else big)
            end.append(big if auto_pad == "SAME_UPPER" else small)
        return begin, end
    if auto_pad == "VALID" or not pads:
        return [0] * nd, [0] * nd
    return list(pads[:nd]), list(pads[nd:])


def _torch_pad(begin, end):
    """F.pad's list (last axis first) for per-axis (begin, end) padding of the trailing axes."""
    out = []
    for b, e in zip(reversed(begin), reversed(end)):
        out += [b, e]
    return out


def _check_auto_pad(attrs):
    if attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        return "auto_pad=%s" % attrs["auto_pad"]
    return None


@onnx_op("Conv", check=_check_auto_pad)
def Conv(x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    """1-3 spatial dimensions; asymmetric pads are applied with F.pad first."""
    nd = x.dim() - 2
    strides = strides or [1] * nd
    dilations = dilations or [1] * nd
    begin, end = _pads(auto_pad, pads, x.shape[2:], w.shape[2:], strides, dilations)
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    if begin != end:
        x, begin = F.pad(x, _torch_pad(begin, end)), [0] * nd
    return conv(x, w, b, strides, begin, dilations, group)


@onnx_op("ConvTranspose", check=_check_auto_pad)
def ConvTranspose(x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
                  output_padding=None, output_shape=None, pads=None, strides=None):
    """Full transposed convolution, then the pads cropped (output_shape sets them as ONNX says)."""
    nd = x.dim() - 2
    strides = strides or [1] * nd
    dilations = dilations or [1] * nd
    output_padding = output_padding or [0] * nd
    k = w.shape[2:]
    full = [s * (n - 1) + op + (kk - 1) * d + 1
            for n, s, op, kk, d in zip(x.shape[2:], strides, output_padding, k, dilations)]
    if output_shape:
        total = [f - o for f, o in zip(full, output_shape[-nd:])]
        upper = auto_pad == "SAME_UPPER"
        begin = [t // 2 if upper else t - t // 2 for t in total]
        end = [t - t // 2 if upper else t // 2 for t in total]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        total = [f - n * s for f, n, s in zip(full, x.shape[2:], strides)]
        upper = auto_pad == "SAME_UPPER"
        begin = [t // 2 if upper else t - t // 2 for t in total]
        end = [t - t // 2 if upper else t // 2 for t in total]
    else:
        begin, end = _pads("NOTSET", pads, None, k, strides, dilations)
    conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    if begin == end and all(p >= 0 for p in begin):
        return conv(x, w, b, strides, begin, output_padding, group, dilations)
    y = conv(x, w, b, strides, 0, output_padding, group, dilations)
    idx = [slice(None)] * 2 + [slice(bb, y.shape[2 + i] - e) for i, (bb, e) in enumerate(zip(begin, end))]
    return y[tuple(idx)]


# --- normalisations, softmax -----------------------------------------------
@onnx_op("BatchNormalization", check=lambda a: "training_mode=1" if a.get("training_mode", 0) else None)
def BatchNormalization(x, scale, b, mean, var, *, epsilon=1e-5, momentum=0.9, training_mode=0):
    """Inference: (x - mean) / sqrt(var + epsilon) * scale + b per channel."""
    return F.batch_norm(x, mean, var, scale, b, False, 0.0, epsilon)


@onnx_op("InstanceNormalization")
def InstanceNormalization(x, scale, b, *, epsilon=1e-5):
    return F.instance_norm(x, weight=scale, bias=b, eps=epsilon)


@onnx_op("LayerNormalization")
def LayerNormalization(x, scale, b=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    """Normalises over the axes from `axis` on; scale and b broadcast onto them."""
    shape = x.shape[_axis(axis, x.dim()):]
    if scale.shape == shape and (b is None or b.shape == shape):
        return F.layer_norm(x, shape, scale, b, epsilon)
    y = F.layer_norm(x, shape, None, None, epsilon) * scale
    return y if b is None else y + b


@onnx_op("Softmax")
def Softmax(x, *, axis=-1):
    return torch.softmax(x, axis)


@onnx_op("LogSoftmax")
def LogSoftmax(x, *, axis=-1):
    return torch.log_softmax(x, axis)


# --- reductions --------------------------------------------------------------
def _reduce(fn, x, axes, keepdims, noop_with_empty_axes):
    axes = _ints(axes)
    if not axes:
        if noop_with_empty_axes or x.dim() == 0:
            return x
        axes = list(range(x.dim()))
    return fn(x, [_axis(a, x.dim()) for a in axes], bool(keepdims))


@onnx_op("ReduceSum", static=(1,))
def ReduceSum(x, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _reduce(lambda t, d, k: torch.sum(t, d, k, dtype=t.dtype), x, axes, keepdims, noop_with_empty_axes)


@onnx_op("ReduceMean", static=(1,))
def ReduceMean(x, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _reduce(torch.mean, x, axes, keepdims, noop_with_empty_axes)


@onnx_op("ReduceMax", static=(1,))
def ReduceMax(x, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _reduce(torch.amax, x, axes, keepdims, noop_with_empty_axes)


@onnx_op("ReduceMin", static=(1,))
def ReduceMin(x, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _reduce(torch.amin, x, axes, keepdims, noop_with_empty_axes)


def _prod(t, dims, keep):
    for d in sorted(dims, reverse=True):
        t = torch.prod(t, d, keep)
    return t


@onnx_op("ReduceProd", static=(1,))
def ReduceProd(x, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _reduce(_prod, x, axes, keepdims, noop_with_empty_axes)


def _arg(fn, x, axis, keepdims, select_last_index):
    if select_last_index:
        return x.shape[axis] - 1 - fn(x.flip(axis), axis, bool(keepdims))
    return fn(x, axis, bool(keepdims))


@onnx_op("ArgMax")
def ArgMax(x, *, axis=0, keepdims=1, select_last_index=0):
    """The index of the first maximum (the last with select_last_index=1)."""
    return _arg(torch.argmax, x, axis, keepdims, select_last_index)


@onnx_op("ArgMin")
def ArgMin(x, *, axis=0, keepdims=1, select_last_index=0):
    return _arg(torch.argmin, x, axis, keepdims, select_last_index)


@onnx_op("CumSum", static=(1,))
def CumSum(x, axis, *, exclusive=0, reverse=0):
    axis = _axis(int(_scalar(axis)), x.dim())
    if reverse:
        x = x.flip(axis)
    y = torch.cumsum(x, axis, dtype=x.dtype)
    if exclusive:       # shifted by one: [0, x0, x0 + x1, ...]
        y = torch.cat([torch.zeros_like(y.narrow(axis, 0, min(1, y.shape[axis]))),
                       y.narrow(axis, 0, max(y.shape[axis] - 1, 0))], axis)
    return y.flip(axis) if reverse else y


# --- pools -------------------------------------------------------------------
@onnx_op("MaxPool", check=_check_auto_pad)
def MaxPool(x, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape, pads=None, storage_order=0,
            strides=None):
    """Strides default to 1 (not the kernel, as in torch); pads beyond torch's limit
    (half the kernel) or asymmetric are applied as -inf first."""
    nd = len(kernel_shape)
    strides = strides or [1] * nd
    dilations = dilations or [1] * nd
    begin, end = _pads(auto_pad, pads, x.shape[2:], kernel_shape, strides, dilations)
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
    if begin != end or any(p > k // 2 for p, k in zip(begin, kernel_shape)):
        x, begin = F.pad(x, _torch_pad(begin, end), value=-math.inf), [0] * nd
    return pool(x, kernel_shape, strides, begin, dilations, ceil_mode=bool(ceil_mode))


def _check_avgpool(attrs):
    if any(d != 1 for d in attrs.get("dilations") or []):
        return "dilations=%s" % attrs["dilations"]
    return _check_auto_pad(attrs)


@onnx_op("AveragePool", check=_check_avgpool)
def AveragePool(x, *, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None, kernel_shape,
                pads=None, strides=None):
    """torch's pool where its padding can express ONNX's; else window sums of the
    zero-padded input divided by window sums of a mask of what is counted."""
    nd = len(kernel_shape)
    strides = strides or [1] * nd
    begin, end = _pads(auto_pad, pads, x.shape[2:], kernel_shape, strides, [1] * nd)
    if begin == end and all(p <= k // 2 for p, k in zip(begin, kernel_shape)):
        pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[nd - 1]
        return pool(x, kernel_shape, strides, begin, bool(ceil_mode), bool(count_include_pad))
    squeeze = nd == 1                    # avg_pool1d has no divisor_override
    if squeeze:
        x, kernel_shape, strides, begin, end = x.unsqueeze(2), [1] + list(kernel_shape), [1] + list(strides), \
            [0] + begin, [0] + end
    pool = F.avg_pool2d if len(kernel_shape) == 2 else F.avg_pool3d
    p = _torch_pad(begin, end)
    ones = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype, device=x.device)
    sums = pool(F.pad(x, p), kernel_shape, strides, 0, bool(ceil_mode), True, 1)
    counts = pool(F.pad(ones, p, value=1.0 if count_include_pad else 0.0), kernel_shape, strides, 0,
                  bool(ceil_mode), True, 1)
    y = sums / counts
    return y.squeeze(2) if squeeze else y


@onnx_op("GlobalAveragePool")
def GlobalAveragePool(x):
    return x.mean(dim=tuple(range(2, x.dim())), keepdim=True)


@onnx_op("GlobalMaxPool")
def GlobalMaxPool(x):
    return x.amax(dim=tuple(range(2, x.dim())), keepdim=True)


# --- shapes --------------------------------------------------------------------
@onnx_op("Reshape", static=(1,))
def Reshape(x, shape, *, allowzero=0):
    """-1: inferred; 0: the input's dimension there (allowzero=0) or zero (allowzero=1)."""
    s = _ints(shape)
    if not allowzero:
        s = [x.shape[i] if v == 0 else v for i, v in enumerate(s)]
    return x.reshape(s)


@onnx_op("Flatten")
def Flatten(x, *, axis=1):
    axis = _axis(axis, x.dim())
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


@onnx_op("Transpose")
def Transpose(x, *, perm=None):
    return x.permute(perm if perm is not None else list(range(x.dim() - 1, -1, -1)))


@onnx_op("Squeeze", static=(1,))
def Squeeze(x, axes=None):
    """Without axes: every dimension of size 1."""
    axes = _ints(axes)
    if axes is None:
        return x.squeeze()
    for a in sorted((_axis(a, x.dim()) for a in axes), reverse=True):
        x = x.squeeze(a)
    return x


@onnx_op("Unsqueeze", static=(1,))
def Unsqueeze(x, axes):
    """axes index the output (negative: from its end)."""
    axes = _ints(axes)
    rank = x.dim() + len(axes)
    for a in sorted(_axis(a, rank) for a in axes):
        x = x.unsqueeze(a)
    return x


@onnx_op("Expand", static=(1,))
def Expand(x, shape):
    """Bidirectional broadcast of x and shape."""
    return x.expand(torch.broadcast_shapes(x.shape, tuple(_ints(shape))))


@onnx_op("Tile", static=(1,))
def Tile(x, repeats):
    return x.repeat(_ints(repeats))


@onnx_op("Concat")
def Concat(*xs, axis):
    return torch.cat(xs, axis)


@onnx_op("Split", static=(1,))
def Split(x, split=None, *, axis=0, num_outputs=None):
    """Sizes from `split`, else num_outputs parts of ceil(n / num_outputs) (the last
    smaller); the builder sets num_outputs from the node's outputs."""
    if split is not None:
        return tuple(torch.split(x, _ints(split), axis))
    n = x.shape[axis]
    return tuple(torch.split(x, -(-n // num_outputs), axis))


@onnx_op("Slice", static=(1, 2, 3, 4))
def Slice(x, starts, ends, axes=None, steps=None):
    """Negative starts/ends count from the end; both are clamped (to [0, n] for a
    positive step, [-1, n-1] for a negative one, where end -1 means 'before 0')."""
    starts, ends = _ints(starts), _ints(ends)
    axes = _ints(axes) if axes is not None else list(range(len(starts)))
    steps = _ints(steps) if steps is not None else [1] * len(starts)
    idx = [slice(None)] * x.dim()
    backward = []
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        ax = _axis(ax, x.dim())
        n = x.shape[ax]
        st, en = st + n if st < 0 else st, en + n if en < 0 else en
        if sp > 0:
            idx[ax] = slice(min(max(st, 0), n), min(max(en, 0), n), sp)
        else:
            backward.append((ax, min(max(st, 0), n - 1), min(max(en, -1), n - 1), sp))
    y = x[tuple(idx)]
    for ax, st, en, sp in backward:
        y = y.index_select(ax, torch.arange(st, en, sp, device=y.device)) if y.shape[ax] else y
    return y


@onnx_op("Gather")
def Gather(data, indices, *, axis=0):
    """data.shape[:axis] + indices.shape + data.shape[axis+1:]; negative indices count from the end."""
    axis = _axis(axis, data.dim())
    idx = indices.long()
    idx = torch.where(idx < 0, idx + data.shape[axis], idx)
    y = data.index_select(axis, idx.reshape(-1))
    return y.reshape(data.shape[:axis] + idx.shape + data.shape[axis + 1:])


@onnx_op("GatherElements")
def GatherElements(data, indices, *, axis=0):
    axis = _axis(axis, data.dim())
    idx = indices.long()
    return torch.gather(data, axis, torch.where(idx < 0, idx + data.shape[axis], idx))


def _check_pad(attrs):
    mode = attrs.get("mode", "constant")
    return None if mode in ("constant", "reflect", "edge", "wrap") else "mode=%s" % mode


@onnx_op("Pad", static=(1, 2, 3), check=_check_pad)
def Pad(x, pads, constant_value=None, axes=None, *, mode="constant"):
    """pads = [begin of each axis..., end of each axis...] over `axes` (default all);
    negative pads crop (constant mode). edge = torch's replicate, wrap = circular."""
    pads = _ints(pads)
    axes = [_axis(a, x.dim()) for a in _ints(axes)] if axes is not None else list(range(x.dim()))
    begin, end = [0] * x.dim(), [0] * x.dim()
    for i, a in enumerate(axes):
        begin[a], end[a] = pads[i], pads[i + len(axes)]
    first = next((i for i in range(x.dim()) if begin[i] or end[i]), None)
    if first is None:
        return x
    p = _torch_pad(begin[first:], end[first:])
    if mode == "constant":
        return F.pad(x, p, value=_scalar(constant_value) if constant_value is not None else 0)
    return F.pad(x, p, {"reflect": "reflect", "edge": "replicate", "wrap": "circular"}[mode])


@onnx_op("Trilu", static=(1,))
def Trilu(x, k=None, *, upper=1):
    k = int(_scalar(k)) if k is not None else 0
    return torch.triu(x, k) if upper else torch.tril(x, k)


# --- shape values and creation ------------------------------------------------
@onnx_op("Shape")
def Shape(x, *, start=0, end=None, device=None):
    """device: where the result goes (default x's; the builder reads x where it is
    made, without a copy, and sets device to the node's)."""
    return torch.tensor(list(x.shape)[start:end], dtype=torch.int64, device=device or x.device)


@onnx_op("Size")
def Size(x, *, device=None):
    return torch.tensor(x.numel(), dtype=torch.int64, device=device or x.device)


METADATA = {"Shape", "Size"}   # op types that read only their input's shape


@onnx_op("ConstantOfShape", static=(0,))
def ConstantOfShape(shape, *, value=0.0, dtype=torch.float32):
    """value and dtype: the builder splits ONNX's one-element tensor attribute into them."""
    device = shape.device if isinstance(shape, torch.Tensor) else None
    return torch.full(_ints(shape), value, dtype=dtype, device=device)


@onnx_op("Range")
def Range(start, limit, delta):
    """max(ceil((limit - start) / delta), 0) elements, of start's type (empty where
    torch.arange would refuse the bounds' order)."""
    s, lim, d = _scalar(start), _scalar(limit), _scalar(delta)
    if math.ceil((lim - s) / d) <= 0:
        return torch.empty(0, dtype=start.dtype, device=start.device)
    return torch.arange(s, lim, d, dtype=start.dtype, device=start.device)


# --- Resize ---------------------------------------------------------------------
_COORD = {   # x_resized -> x_original; s = output / input, n_in, n_out: lengths
    "half_pixel": lambda x, s, n_in, n_out: (x + 0.5) / s - 0.5,
    "pytorch_half_pixel": lambda x, s, n_in, n_out: (x + 0.5) / s - 0.5 if n_out > 1 else x * 0.0,
    "align_corners": lambda x, s, n_in, n_out: x * ((n_in - 1) / (n_out - 1)) if n_out > 1 else x * 0.0,
    "asymmetric": lambda x, s, n_in, n_out: x / s,
    "tf_half_pixel_for_nn": lambda x, s, n_in, n_out: (x + 0.5) / s,
}
_NEAREST = {
    "round_prefer_floor": lambda x: torch.ceil(x - 0.5),
    "round_prefer_ceil": lambda x: torch.floor(x + 0.5),
    "floor": torch.floor,
    "ceil": torch.ceil,
}


def _check_resize(attrs):
    bad = []
    if attrs.get("mode", "nearest") not in ("nearest", "linear"):
        bad.append("mode=%s" % attrs["mode"])
    if attrs.get("coordinate_transformation_mode", "half_pixel") not in _COORD:
        bad.append("coordinate_transformation_mode=%s" % attrs["coordinate_transformation_mode"])
    if attrs.get("nearest_mode", "round_prefer_floor") not in _NEAREST:
        bad.append("nearest_mode=%s" % attrs["nearest_mode"])
    if attrs.get("antialias", 0):
        bad.append("antialias=1")
    if attrs.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        bad.append("keep_aspect_ratio_policy=%s" % attrs["keep_aspect_ratio_policy"])
    return ", ".join(bad) or None


@onnx_op("Resize", static=(1, 2, 3), check=_check_resize)
def Resize(x, roi=None, scales=None, sizes=None, *, mode="nearest", coordinate_transformation_mode="half_pixel",
           nearest_mode="round_prefer_floor", cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0,
           antialias=0, axes=None, keep_aspect_ratio_policy="stretch"):
    """Nearest or (multi)linear, one axis at a time: each output index maps to an
    input coordinate by the coordinate transformation (computed in float64), then
    to the nearest index (nearest_mode) or the two neighbours weighted (linear,
    coordinates clamped to the input). Output length: sizes, or floor(n x scale)."""
    axes = [_axis(a, x.dim()) for a in axes] if axes else list(range(x.dim()))
    sizes = _ints(sizes) or None
    scales = _floats(scales) or None
    y = x
    for i, a in enumerate(axes):
        n_in = x.shape[a]
        n_out = sizes[i] if sizes else int(math.floor(n_in * scales[i]))
        s = n_out / n_in if sizes else scales[i]
        if n_out == n_in and s == 1.0:
            continue
        pos = _COORD[coordinate_transformation_mode](
            torch.arange(n_out, dtype=torch.float64, device=x.device), s, n_in, n_out)
        if mode == "nearest":
            idx = _NEAREST[nearest_mode](pos).long().clamp(0, n_in - 1)
            y = y.index_select(a, idx)
            continue
        pos = pos.clamp(0, n_in - 1)
        i0 = pos.floor().long()
        i1 = (i0 + 1).clamp(max=n_in - 1)
        w = (pos - i0).to(y.dtype).reshape([-1 if d == a else 1 for d in range(y.dim())])
        y = y.index_select(a, i0) * (1 - w) + y.index_select(a, i1) * w
    return y


# ---------------------------------------------------------------------------
# ONNX graph -> torch.fx GraphModule, each node on its device
# ---------------------------------------------------------------------------
class PlacedModule(torch.fx.GraphModule):
    """The placed program: a GraphModule whose nodes run on the devices of their
    logical devices. Attributes: see the module doc (mapping, devices, copies,
    predicted, graph_path, onnx_path, method, cluster, output_device)."""

    def summary(self):
        """Ops, devices used, cross-device copies, predicted makespan, ops per device."""
        used = sorted(set(self.mapping.values()))
        lines = ["%d ONNX nodes on %d of %d logical devices, %d cross-device copies" % (
            len(self.mapping), len(used), len(self.devices), self.copies)]
        if self.predicted is not None:
            lines.append("predicted makespan %.6g (doppler place --method %s --cluster %s)" % (
                self.predicted, self.method, self.cluster))
        for d in sorted(self.devices):
            n = sum(1 for v in self.mapping.values() if v == d)
            lines.append("  device %d (%s): %d nodes" % (d, self.devices[d], n))
        return "\n".join(lines)


def _pyname(s, taken=None):
    """A readable Python identifier from an ONNX name: '/layer1/layer1.0/conv1/Conv' ->
    'layer1_0_conv1_Conv' (a scope repeated as the next scope's prefix is dropped);
    with `taken`, one not in it (_2, _3, ...), which is added to it."""
    parts = [p for p in re.split(r"[/:]+", s) if p]
    parts = [p for i, p in enumerate(parts) if not (i + 1 < len(parts) and parts[i + 1].startswith(p + "."))]
    name = re.sub(r"\W+", "_", "_".join(parts)).strip("_") or "t"
    if name[0].isdigit():
        name = "t_" + name
    if taken is not None:
        base, k = name, 2
        while name in taken:
            name, k = "%s_%d" % (base, k), k + 1
        taken.add(name)
    return name


def _attrs(node):
    """The node's attributes as Python values (strings decoded, tensors as TensorProto)."""
    import onnx
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8")
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [x.decode("utf-8") for x in v]
        out[a.name] = v
    return out


def _tensor(proto):
    """A CPU torch tensor from a TensorProto."""
    from onnx import numpy_helper
    if proto.data_type not in DTYPES:
        raise UnsupportedModelError("tensor '%s' has ONNX data type %d, which torch lacks" % (
            proto.name, proto.data_type))
    return torch.from_numpy(numpy_helper.to_array(proto).copy()).to(DTYPES[proto.data_type])


def _constant_value(attrs):
    """The value of a Constant node."""
    if "value" in attrs:
        return _tensor(attrs["value"])
    for name, dtype in (("value_float", torch.float32), ("value_floats", torch.float32),
                        ("value_int", torch.int64), ("value_ints", torch.int64)):
        if name in attrs:
            return torch.tensor(attrs[name], dtype=dtype)
    raise UnsupportedModelError("Constant with attribute %s" % ", ".join(attrs))


def _node_kwargs(node, attrs, n_outputs):
    """An implementation's keyword arguments from the node's attributes."""
    kw = dict(attrs)
    if node.op_type == "Cast":
        kw["to"] = DTYPES.get(kw["to"], kw["to"])
    elif node.op_type == "ConstantOfShape" and "value" in kw:
        v = _tensor(kw.pop("value"))
        kw["value"], kw["dtype"] = v.reshape(-1)[0].item(), v.dtype
    elif node.op_type == "Split" and "num_outputs" not in kw:
        kw["num_outputs"] = n_outputs
    return kw


def node_key(node, i):
    """The name a mapping uses for node i: its name, or OPTYPE_i when it has none."""
    return node.name or "%s_%d" % (node.op_type, i)


def _topological(nodes):
    """Node indices in topological order (the file's where it is one):
    onnx2dpg.py's, its cycle error as a PlaceError."""
    producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    try:
        return _onnx2dpg().topological_order(nodes, producer)
    except _onnx2dpg().ConvertError as e:
        raise PlaceError("the ONNX graph has a cycle: %s" % e)


def check_supported(model):
    """Raises UnsupportedModelError naming every unsupported op type (one node of
    each), attribute and consumed secondary output; returns nothing."""
    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    problems = []
    if opset is not None and opset < MIN_OPSET:
        problems.append("opset %d: op semantics are those of opsets %d and later" % (opset, MIN_OPSET))
    if len(graph.sparse_initializer):
        problems.append("sparse initializers are not supported")
    problems += ["initializer '%s': data type %d not supported" % (t.name, t.data_type)
                 for t in graph.initializer if t.data_type not in DTYPES]
    consumed = {t for n in graph.node for t in n.input if t} | {o.name for o in graph.output}
    unknown = {}
    for i, node in enumerate(graph.node):
        t = node.op_type if node.domain in ("", "ai.onnx") else "%s.%s" % (node.domain, node.op_type)
        if t != "Constant" and t not in OPS:
            unknown.setdefault(t, node_key(node, i))
            continue
        attrs = _attrs(node)
        if t == "Constant":
            if not {"value", "value_float", "value_floats", "value_int", "value_ints"} & set(attrs):
                problems.append("Constant node '%s': %s not supported" % (node_key(node, i), ", ".join(attrs)))
            elif "value" in attrs and attrs["value"].data_type not in DTYPES:
                problems.append("Constant node '%s': data type %d not supported" % (
                    node_key(node, i), attrs["value"].data_type))
            continue
        params = inspect.signature(OPS[t]).parameters
        extra = [a for a in _node_kwargs(node, attrs, len(node.output)) if a not in params]
        if extra:
            problems.append("%s node '%s': attribute%s %s not supported" % (
                t, node_key(node, i), "s" if len(extra) > 1 else "", ", ".join(extra)))
        bad = CHECKS[t](attrs) if t in CHECKS else None
        if bad:
            problems.append("%s node '%s': %s not supported" % (t, node_key(node, i), bad))
        if t != "Split" and any(o in consumed for o in node.output[1:] if o):
            problems.append("%s node '%s': only its first output is supported, and another is used" % (
                t, node_key(node, i)))
    if unknown:
        problems.insert(0, "unsupported op type%s: %s" % (
            "s" if len(unknown) > 1 else "",
            ", ".join("%s (node '%s')" % (t, n) for t, n in sorted(unknown.items()))))
    if problems:
        raise UnsupportedModelError("the ONNX graph cannot be run:\n  " + "\n  ".join(problems))


def build(model, mapping, devices, output_device="cpu"):
    """The PlacedModule running `model` (an onnx.ModelProto) with node k on the
    torch device devices[mapping[node_key(node, k)]] (devices: logical device
    -> torch device). Constant nodes absent from mapping go with their first
    reader. Returns the module; mapping, devices and copies are set on it."""
    check_supported(model)
    graph = model.graph
    nodes = list(graph.node)
    keys = [node_key(n, i) for i, n in enumerate(nodes)]
    order = _topological(nodes)

    # the device of every node; Constants absent from the mapping follow their first reader
    readers = {}
    for i in order:
        for t in nodes[i].input:
            if t:
                readers.setdefault(t, []).append(i)
    where = {}
    missing = []
    for i in order:
        if keys[i] in mapping:
            where[i] = int(mapping[keys[i]])
        elif nodes[i].op_type != "Constant":
            missing.append(keys[i])
    if missing:
        raise PlaceError("the mapping has no device for %d node%s: %s%s" % (
            len(missing), "" if len(missing) == 1 else "s", ", ".join(missing[:10]),
            " ..." if len(missing) > 10 else ""))
    for i in order:
        if i not in where:
            first = next((r for o in nodes[i].output for r in readers.get(o, ())), None)
            where[i] = where.get(first, 0) if first is not None else 0
    for i, d in where.items():
        if d not in devices:
            raise PlaceError("node '%s' is mapped to logical device %d; devices has %s" % (keys[i], d, sorted(devices)))

    # constants: initializers, Constant outputs, outputs of nodes whose inputs are all constant
    const = {t.name: _tensor(t) for t in graph.initializer}
    kwargs = {}
    for i in order:
        node = nodes[i]
        if node.op_type == "Constant":
            const[node.output[0]] = _constant_value(_attrs(node))
            continue
        kwargs[i] = _node_kwargs(node, _attrs(node), len(node.output))
        if all(t == "" or t in const for t in node.input):
            try:
                y = OPS[node.op_type](*[const[t] if t else None for t in node.input], **kwargs[i])
            except Exception as e:
                raise PlaceError("%s node '%s' on its constant inputs: %s" % (node.op_type, keys[i], e))
            for o, v in zip(node.output, y if isinstance(y, tuple) else (y,)):
                if o:
                    const[o] = v

    # the fx program; fx keeps its node names unique, `buffers` the attribute names
    g = torch.fx.Graph()
    root = torch.nn.Module()
    buffers = set()
    dev_str = {d: str(torch.device(v)) for d, v in devices.items()}
    env = {}            # tensor -> (fx node, logical device) of its producer (None: a graph input)
    moved = {}          # (tensor, logical device) -> fx node: copies, input moves, buffers
    on_device = {}      # (tensor, torch device) -> the constant's tensor there
    copies = 0

    def buffer(name, tensor):
        """A get_attr node reading `tensor`, registered as a buffer named after `name`."""
        attr = _pyname(name, buffers)
        root.register_buffer(attr, tensor)
        return g.create_node("get_attr", attr, name=attr)

    def value(t, d):
        """The fx node giving tensor t on logical device d."""
        nonlocal copies
        if (t, d) in moved:
            return moved[(t, d)]
        if t in const:
            key = (t, dev_str[d])
            if key not in on_device:
                on_device[key] = const[t].to(devices[d])
            moved[(t, d)] = buffer("%s_d%d" % (t, d), on_device[key])
            return moved[(t, d)]
        src, sd = env[t]
        if sd == d:
            return src
        moved[(t, d)] = g.create_node("call_method", "to", (src, dev_str[d]), name="%s_to_d%d" % (src.name, d))
        if sd is not None:          # a graph input's move is no copy between ops
            copies += 1
        return moved[(t, d)]

    for vi in graph.input:
        if vi.name not in const:
            env[vi.name] = (g.create_node("placeholder", _pyname(vi.name), name=_pyname(vi.name)), None)
    for i in order:
        node = nodes[i]
        if node.op_type == "Constant" or any(o in const for o in node.output if o):
            continue
        d = where[i]
        static = STATIC.get(node.op_type, ())
        args, kw = [], kwargs[i]
        for k, t in enumerate(node.input):
            if not t:
                args.append(None)
            elif k in static and t in const:
                args.append(const[t].tolist())
            elif node.op_type in METADATA:     # the shape is read where the tensor is: no copy
                args.append(env[t][0])
                kw = dict(kw, device=dev_str[d])
            else:
                args.append(value(t, d))
        while args and args[-1] is None:
            args.pop()
        fx_node = g.create_node("call_function", OPS[node.op_type], tuple(args), kw, name=_pyname(keys[i]))
        if node.op_type != "Split":
            env[node.output[0]] = (fx_node, d)
            continue
        for k, o in enumerate(node.output):
            if o:
                env[o] = (g.create_node("call_function", operator.getitem, (fx_node, k), name=_pyname(o)), d)

    out_dev = str(torch.device(output_device))
    results = []
    for vi in graph.output:
        if vi.name in const:
            results.append(buffer(vi.name + "_out", const[vi.name].to(out_dev)))
        else:
            results.append(g.create_node("call_method", "to", (env[vi.name][0], out_dev),
                                         name=_pyname(vi.name) + "_out"))
    g.output(results[0] if len(results) == 1 else tuple(results))
    g.lint()
    placed = PlacedModule(root, g, class_name="PlacedModule")
    placed.mapping = {keys[i]: where[i] for i in order}
    placed.devices = {d: torch.device(v) for d, v in devices.items()}
    placed.copies = copies
    placed.output_device = torch.device(output_device)
    placed.predicted = placed.graph_path = placed.onnx_path = placed.method = placed.cluster = None
    return placed


def run_onnx(model, inputs):
    """Evaluates the ONNX graph on the CPU with OPS, node by node: {tensor name:
    value} of every tensor (graph inputs, constants and node outputs)."""
    check_supported(model)
    graph = model.graph
    env = {t.name: _tensor(t) for t in graph.initializer}
    names = [vi.name for vi in graph.input if vi.name not in env]
    env.update(zip(names, (x.detach().cpu() for x in _as_tuple(inputs))))
    nodes = list(graph.node)
    with torch.no_grad():
        for i in _topological(nodes):
            node = nodes[i]
            if node.op_type == "Constant":
                env[node.output[0]] = _constant_value(_attrs(node))
                continue
            y = OPS[node.op_type](*[env[t] if t else None for t in node.input],
                                  **_node_kwargs(node, _attrs(node), len(node.output)))
            for o, v in zip(node.output, y if isinstance(y, tuple) else (y,)):
                if o:
                    env[o] = v
    return env


def with_shapes(model, values):
    """A copy of model whose graph inputs and outputs, and a value_info for every
    node output, carry the static type and shape of values[name] (run_onnx's):
    the converter then needs no shape inference of its own to size them."""
    import onnx
    onnx_type = {v: k for k, v in DTYPES.items()}

    def info(name):
        v = values[name]
        return onnx.helper.make_tensor_value_info(name, onnx_type[v.dtype], list(v.shape))
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {t.name for t in g.initializer}
    for vis in (g.input, g.output):
        for vi in vis:
            if vi.name in values and vi.name not in inits:
                vi.CopyFrom(info(vi.name))
    declared = {vi.name for vi in list(g.input) + list(g.output)}
    del g.value_info[:]
    g.value_info.extend(info(o) for n in g.node for o in n.output if o and o in values and o not in declared)
    return m


# ---------------------------------------------------------------------------
# export, convert, place
# ---------------------------------------------------------------------------
def _as_tuple(example_inputs):
    return tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)


def export(module, example_inputs, path, opset_version=OPSET, dynamic_axes=None):
    """torch.onnx.export of module in eval mode (its training flag restored) to
    path; inputs named after forward()'s parameters, outputs output_0, ...
    Returns the input and output names."""
    inputs = _as_tuple(example_inputs)
    params = [p for p in inspect.signature(module.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    in_names = [p.name for p in params[:len(inputs)]]
    if len(in_names) < len(inputs):
        in_names = ["input_%d" % k for k in range(len(inputs))]
    kw = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False
    was_training = module.training
    try:
        with torch.no_grad():
            out_names = ["output_%d" % k for k in range(len(_flat_outputs(module.eval()(*inputs))))]
        torch.onnx.export(module.eval(), inputs, path, opset_version=opset_version, input_names=in_names,
                          output_names=out_names, dynamic_axes=dynamic_axes, do_constant_folding=True, **kw)
    except Exception as e:
        raise PlaceError("torch.onnx.export failed: %s" % e) from e
    finally:
        module.train(was_training)
    return in_names, out_names


def _flat_outputs(y):
    if isinstance(y, torch.Tensor):
        return [y]
    if isinstance(y, dict):
        y = list(y.values())
    return [t for x in y for t in _flat_outputs(x)]


def normalize_names(model):
    """Makes node names keys: an unnamed node is named OPTYPE_INDEX (the name the
    converter's source= gives it), a name already taken (by a graph input or an
    earlier node) gets _2, _3, ... Returns how many names changed."""
    taken = {vi.name for vi in model.graph.input}
    changed = 0
    for i, node in enumerate(model.graph.node):
        base = node_key(node, i)
        name, k = base, 2
        while name in taken:
            name, k = "%s_%d" % (base, k), k + 1
        taken.add(name)
        if name != node.name:
            node.name = name
            changed += 1
    return changed


def _onnx2dpg():
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import onnx2dpg
    return onnx2dpg


def doppler_cli(doppler=None):
    """The doppler CLI: doppler=, else $DOPPLER_CLI, else build/doppler in the repository."""
    cli = doppler or os.environ.get("DOPPLER_CLI") or os.path.join(REPO, "build", "doppler")
    if not os.access(cli, os.X_OK):
        raise PlaceError("no doppler CLI at %s (build it with ./build.sh, or pass doppler= / set $DOPPLER_CLI)" % cli)
    return cli


def run_doppler(dpg, method, cluster, precision=None, seed=1, doppler=None, out=None, extra=()):
    """Runs doppler place on dpg writing the mapping JSON `out`; returns it as a
    dict ({"mapping": {ONNX name: device}, "devices": N, "makespan": X, ...})."""
    out = out or os.path.splitext(dpg)[0] + ".mapping.json"
    cmd = [doppler_cli(doppler), "place", dpg, "--method", method, "--cluster", cluster]
    if precision:
        cmd += ["--precision", precision]
    cmd += ["--seed", str(seed), "--out", out] + list(extra)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise PlaceError("%s failed (exit %d): %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    try:
        with open(out, encoding="utf-8") as f:
            j = json.load(f)
    except ValueError:
        j = None
    if not isinstance(j, dict) or j.get("format") != "doppler-mapping 1":
        raise PlaceError("%s wrote no mapping JSON to %s: a CLI from before mapping files? (./build.sh rebuilds it)" % (
            cmd[0], out))
    return j


def _read_mapping(mapping):
    """{name: device} from a dict or a JSON file (a doppler mapping, {"mapping": {...}},
    or the dict itself); a list value (a name several ops shared) gives its first device."""
    if isinstance(mapping, (str, os.PathLike)):
        with open(mapping, encoding="utf-8") as f:
            mapping = json.load(f)
    if isinstance(mapping.get("mapping"), dict):
        mapping = mapping["mapping"]
    return {name: int(d[0] if isinstance(d, list) else d) for name, d in mapping.items()}


def _torch_devices(devices, n):
    """{logical device: torch device} for n logical devices."""
    if devices is None:
        if torch.cuda.is_available() and torch.cuda.device_count() >= n:
            devices = ["cuda:%d" % k for k in range(n)]
        else:
            warnings.warn("%s: %d logical devices, %d CUDA devices: every op runs on the cpu" % (
                PROG, n, torch.cuda.device_count() if torch.cuda.is_available() else 0))
            devices = ["cpu"]
    if isinstance(devices, str):
        devices = devices.split(",")
    devices = [torch.device(d) for d in devices]
    if not devices:
        raise PlaceError("devices is empty")
    return {k: devices[k % len(devices)] for k in range(n)}


def place(module, example_inputs, method="doppler", cluster="h100-sxm:4", precision=None, devices=None, seed=1,
          doppler=None, workdir=None, mapping=None, output_device=None, dynamic_axes=None, place_args=()):
    """Exports module, places its ONNX graph with doppler and returns a PlacedModule
    running every op on its device (see the module doc for each step).

    method, cluster, precision, seed: doppler place's --method, --cluster,
        --precision, --seed; place_args: more CLI arguments (e.g. ["--samples", "8"]).
    devices: torch devices for the logical devices (list or "cpu,cuda:0"; logical
        device k on devices[k % len]); default: one CUDA device each if there
        are enough, else all on the cpu (with a warning).
    doppler: the CLI (default $DOPPLER_CLI or build/doppler).
    workdir: where model.onnx, model.dpg and model.mapping.json go (default: a
        temporary directory, removed with the returned module).
    mapping: {ONNX node name: logical device}, a mapping JSON file, or one logical
        device for every node (an int): no placement.
    output_device: where outputs are returned (default: the first input's device).
    dynamic_axes: passed to torch.onnx.export (the placement is made for the
        example inputs' shapes; the placed module accepts others as the export does)."""
    import onnx
    inputs = _as_tuple(example_inputs)
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="torch_place_")
        workdir = tmp.name
    os.makedirs(workdir, exist_ok=True)
    onnx_path = os.path.join(workdir, "model.onnx")
    export(module, inputs, onnx_path, dynamic_axes=dynamic_axes)
    model = onnx.load(onnx_path)
    if normalize_names(model):
        onnx.save(model, onnx_path)

    dpg = predicted = n_logical = None
    if mapping is None:
        # the converter sizes every tensor from the shapes of one run on the example inputs
        shaped = os.path.join(workdir, "model.shapes.onnx")
        onnx.save(with_shapes(model, run_onnx(model, inputs)), shaped)
        conv = _onnx2dpg()
        try:
            text, _ = conv.convert(shaped, warn=lambda s: warnings.warn(s))
        except conv.ConvertError as e:
            raise PlaceError("onnx2dpg: %s" % e) from e
        dpg = os.path.join(workdir, "model.dpg")
        with open(dpg, "w", encoding="utf-8") as f:
            f.write(text)
        j = run_doppler(dpg, method, cluster, precision, seed, doppler, os.path.join(workdir, "model.mapping.json"),
                        place_args)
        mapping, n_logical, predicted = _read_mapping(j), j["devices"], j["makespan"]
    else:
        method = cluster = None
        if isinstance(mapping, int):
            mapping = {node_key(n, i): mapping for i, n in enumerate(model.graph.node)}
        else:
            mapping = _read_mapping(mapping)
        n_logical = max(mapping.values(), default=0) + 1
    if output_device is None:
        output_device = inputs[0].device if inputs and isinstance(inputs[0], torch.Tensor) else "cpu"
    placed = build(model, mapping, _torch_devices(devices, n_logical), output_device)
    placed.predicted, placed.graph_path, placed.onnx_path = predicted, dpg, onnx_path
    placed.method, placed.cluster = method, cluster
    placed._workdir = tmp          # the temporary directory lives as long as the module
    return placed


# ---------------------------------------------------------------------------
# CLI and benchmark
# ---------------------------------------------------------------------------
def load_module(spec):
    """'package.module:callable' or 'path/to/file.py:callable' -> an nn.Module
    (the callable is called with no arguments unless it is a module already)."""
    where, _, attr = spec.rpartition(":")
    if not where or not attr:
        raise PlaceError("module spec '%s': expected MODULE:CALLABLE or FILE.py:CALLABLE" % spec)
    if where.endswith(".py"):
        s = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(where))[0], where)
        if s is None:
            raise PlaceError("cannot load %s" % where)
        mod = importlib.util.module_from_spec(s)
        s.loader.exec_module(mod)
    else:
        mod = importlib.import_module(where)
    obj = getattr(mod, attr)
    return obj if isinstance(obj, torch.nn.Module) else obj()


def _median_ms(fns, runs):
    """Median wall time in ms of each function, the functions timed in turn
    (one run of each per round, so that drifts of the machine hit them alike)."""
    times = [[] for _ in fns]
    with torch.no_grad():
        for fn in fns:
            fn()                                 # warm-up
        for _ in range(runs):
            for k, fn in enumerate(fns):
                t0 = time.perf_counter()
                fn()
                times[k].append((time.perf_counter() - t0) * 1e3)
    return [sorted(t)[len(t) // 2] for t in times]


def bench(runs=10, out=sys.stdout):
    """The placed module with every node on one logical device (the cpu) against the
    original module: the median of `runs` runs each, timed in turn. Returns rows
    (name, ONNX nodes, original ms, placed ms, max abs difference)."""
    import torchvision
    torch.manual_seed(0)
    cases = [("resnet18 1x3x224x224", torchvision.models.resnet18(), (torch.randn(1, 3, 224, 224),)),
             ("TransformerEncoderLayer d=256 h=4, 1x128 tokens",
              torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True), (torch.randn(1, 128, 256),)),
             ("TransformerEncoderLayer d=32 h=4, 2x16 tokens",
              torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True), (torch.randn(2, 16, 32),))]
    out.write("%s --bench: CPU, %d threads, torch %s, median of %d runs\n" % (
        PROG, torch.get_num_threads(), torch.__version__, runs))
    rows = []
    for name, m, x in cases:
        m.eval()
        placed = place(m, x, mapping=0, devices="cpu")
        n = len(placed.mapping)
        with torch.no_grad():
            diff = (placed(*x) - m(*x)).abs().max().item()
        t_orig, t_placed = _median_ms([lambda: m(*x), lambda: placed(*x)], runs)
        rows.append((name, n, t_orig, t_placed, diff))
        out.write("  %-48s %3d nodes  original %8.3f ms  placed %8.3f ms  %+6.1f%% (%+.1f us a node)"
                  "  max |diff| %.2g\n" % (
            name, n, t_orig, t_placed, 100 * (t_placed / t_orig - 1), 1e3 * (t_placed - t_orig) / n, diff))
    return rows


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="torch_place.py", description=(
        "Export a PyTorch module to ONNX, place its ops with doppler, run it placed."),
        epilog="The steps and rules are in this file's top comment.")
    ap.add_argument("module", nargs="?", help="MODULE:CALLABLE (e.g. torchvision.models:resnet18) or FILE.py:CALLABLE")
    ap.add_argument("--input-shape", action="append", default=[], metavar="D1,D2,...",
                    help="shape of an example input (repeat for several inputs)")
    ap.add_argument("--input-dtype", default="float32", help="dtype of the example inputs (default float32; "
                    "integer inputs are drawn from [0, --int-high))")
    ap.add_argument("--int-high", type=int, default=2, help="integer inputs: exclusive upper bound (default 2)")
    ap.add_argument("--method", default="doppler", help="doppler place --method (default doppler)")
    ap.add_argument("--cluster", default="h100-sxm:4", help="doppler place --cluster (default h100-sxm:4)")
    ap.add_argument("--precision", help="doppler place --precision")
    ap.add_argument("--seed", type=int, default=1, help="doppler place --seed (default 1); also the inputs' seed")
    ap.add_argument("--devices", help="torch devices of the logical devices, comma-separated (default: one CUDA "
                    "device each when there are enough, else cpu)")
    ap.add_argument("--mapping", help="a mapping JSON to apply instead of placing")
    ap.add_argument("--mapping-out", metavar="MAP.json", help="write the mapping JSON (doppler-mapping 1)")
    ap.add_argument("--check", action="store_true", help="compare the outputs with the original module's")
    ap.add_argument("--code", action="store_true", help="print the placed module's code")
    ap.add_argument("--workdir", help="keep model.onnx, model.dpg and the mapping here")
    ap.add_argument("--doppler", help="the doppler CLI (default $DOPPLER_CLI or build/doppler)")
    ap.add_argument("--bench", action="store_true", help="time the placed module (one device) against the original")
    ap.add_argument("--runs", type=int, default=10, help="--bench: runs per timing (default 10)")
    a = ap.parse_args(argv)
    if a.bench:
        bench(a.runs)
        return 0
    if not a.module or not a.input_shape:
        ap.error("MODULE and --input-shape are required (or --bench)")
    try:
        dtype = getattr(torch, a.input_dtype)
        torch.manual_seed(a.seed)
        shapes = [[int(d) for d in s.split(",")] for s in a.input_shape]
        inputs = tuple(torch.randn(s).to(dtype) if dtype.is_floating_point
                       else torch.randint(0, a.int_high, s, dtype=dtype) for s in shapes)
        module = load_module(a.module).eval()
        t0 = time.time()
        placed = place(module, inputs, method=a.method, cluster=a.cluster, precision=a.precision, devices=a.devices,
                       seed=a.seed, doppler=a.doppler, workdir=a.workdir, mapping=a.mapping)
    except (PlaceError, ValueError, ImportError, AttributeError, OSError) as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 1
    print("%s: %s placed in %.2f s" % (PROG, a.module, time.time() - t0))
    print(placed.summary())
    if a.code:
        print(placed.code)
    if a.check:
        with torch.no_grad():
            want = _flat_outputs(module(*inputs))
            got = _flat_outputs(placed(*inputs))
        diff = max((g.double() - w.double().to(g.device)).abs().max().item() for g, w in zip(got, want))
        print("check: max abs difference %.3g over %d output%s" % (diff, len(got), "" if len(got) == 1 else "s"))
    if a.mapping_out:
        with open(a.mapping_out, "w", encoding="utf-8") as f:
            json.dump({"format": "doppler-mapping 1", "graph": placed.graph_path, "method": placed.method,
                       "devices": len(placed.devices), "makespan": placed.predicted, "mapping": placed.mapping},
                      f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    # run as the module torch_place, so that the fx code names its ops torch_place_*
    sys.path.insert(0, HERE)
    import torch_place as _self
    sys.exit(_self.main(sys.argv[1:]))
