#!/usr/bin/env python3
"""onnx2dpg.py - convert an ONNX model into a doppler graph (native format).

usage: demos/onnx2dpg.py MODEL.onnx -o GRAPH.dpg [--batch N] [--dim NAME=VALUE ...]
                         [--coarsen K] [--opaque] [--no-weights] [--speed S] [--bandwidth B]

Reads MODEL with the `onnx` package (Debian: python3-onnx, which installs
for /usr/bin/python3: when the python3 running this script cannot import
onnx, the script runs itself again with /usr/bin/python3) and numpy, binds
the dimensions of the graph inputs, folds what is known before run time
(constants and shapes), and writes one op per remaining ONNX node.

Binding the graph inputs
- --dim NAME=VALUE: the dimension named NAME anywhere (graph inputs,
  outputs, value_info).
- --batch N: the first dimension of the graph inputs (not initializers) of
  rank 1 or more. Where one of them is symbolic or unknown, each symbolic or
  unknown first dimension becomes N (one that --dim names keeps its --dim
  value), and N binds that symbolic name everywhere; fixed ones stay. Where
  all are fixed (the model was exported with a fixed batch B: the first
  input's first dimension) and N differs from B, every input whose first
  dimension is B gets N, the model's own value_info and output shapes are
  dropped, and everything below is inferred and folded anew; the model is
  refused (exit 1, no file) when that fails or a graph output's first
  dimension does not come out N (a Reshape to a constant shape that holds
  B, say), with how to export the batch as a dynamic axis. --batch where no
  graph input has a first dimension is refused too: --batch is never
  ignored. The header comment states the batch used.

Folding (before the ops are made)
  Repeated to a fixpoint: ONNX shape inference runs (with data
  propagation); then, in topological order, every node whose inputs are
  all known values (initializers, Constant outputs, outputs of nodes
  already folded) is evaluated with numpy, as is every Shape and Size of a
  tensor whose shape inference gave a fully known shape; their outputs
  become known values, and inference runs again with them as constants.
  Op types evaluated (default domain): Shape (start, end), Size, Identity,
  Reshape (0 and -1, allowzero), Flatten, Squeeze and Unsqueeze (axes as
  attribute or input), Transpose, Gather, Concat, Slice, Expand, Tile,
  ConstantOfShape, Range, Where, Cast, Equal, Less, LessOrEqual, Greater,
  GreaterOrEqual, Not, And, Or, Xor, Add, Sub, Mul, Div (integers truncated
  toward zero, as the ONNX reference and onnxruntime), Mod (fmod 0: the
  divisor's sign; 1: the dividend's), Neg, Abs, Floor, Ceil, Sqrt, Pow,
  Max, Min, ReduceSum, ReduceProd, ReduceMax, ReduceMin, ReduceMean (axes
  as attribute or input, keepdims, noop_with_empty_axes), Trilu, CumSum;
  on the types numpy holds (not strings, bfloat16, float8 or 4-bit). A node
  whose output would hold more than 2^24 elements is not evaluated and
  stays an op, except the views (Identity, Reshape, Flatten, Squeeze,
  Unsqueeze), which copy nothing and fold whatever their size and type
  (also on an initializer whose data is in an external file). A node numpy
  cannot evaluate (a division by zero, shapes that do not fit) stays an op.
  Folded nodes are not ops: like Constant nodes, they cost nothing.

What becomes what
- A node that is neither a Constant nor folded is an op named after the
  node: its name, or OpType_INDEX when it has none (INDEX: its position in
  the model's node list); characters the format does not allow in a name
  (bytes <= 0x20, 0x7f, '#', '=', ',') become '_', at most 127 bytes, '_2',
  '_3', ... where two would clash.
- A graph input (not an initializer) is a zero-cost source op of kind
  input, bytes = its tensor's size. Known values (initializers, Constant
  and folded outputs) are not ops: they are taken to be wherever their
  consumer runs, so they cost neither compute nor transfers.
- Weights (resident memory): a known value an op reads as data is a
  `weight NAME bytes=B` record, and the op lists it in `weights=W1,...`.
  The weight is the value's view root: from the tensor read, folded views
  (Identity, Reshape, Flatten, Squeeze, Unsqueeze) are followed back to
  their data input while that is a known value; the tensor reached names
  the weight and gives its bytes. So a chain of views on an initializer
  (torch writes an Identity for a weight two modules share) is that
  initializer, one weight; any other folded value (a Cast or Transpose of
  a weight, a folded mask, a Range) is a weight of its own. B = element
  count x the dtype's element size (rounded up for 4-bit types; a sparse
  initializer counts as dense; strings: the bytes of their characters).
  Op parameters are never weights: the inputs Reshape 1 (shape), Expand 1
  (shape), Slice 1-4 (starts, ends, axes, steps), Squeeze and Unsqueeze 1
  (axes), Tile 1 (repeats), ConstantOfShape 0, Range 0-2, Pad 1 and 3
  (pads, axes), Resize 1-3 (roi, scales, sizes), Upsample 1, Split 1
  (split), TopK 1 (k), the Reduce* ops' 1 (axes), CumSum 1 (axis), Trilu 1
  (k), OneHot 1 (depth). A tensor several ops read is one weight used by
  each: doppler holds it once on every device that runs one of them
  (replicated), for the whole run. Weight names follow the op names' rule.
  Initializers no op reads are left out. --no-weights writes none (the
  graph as before weights existed). Weights change nothing else written:
  ops, FLOPs, bytes and edges are the same with and without them.
- Sources: every op line ends in `source=S1,S2,...`, the exact names of
  the ONNX nodes the op stands for (a node without a name: OpType_INDEX as
  above), percent-encoded: every byte <= 0x20, 0x7f and the bytes of '%',
  ',', '=' and '#' are written %XX (two uppercase hex digits), every other
  byte as is (UTF-8 multi-byte sequences included). An op lists its own
  node (a coarsened op: its members, in order), then the Constant and
  folded nodes that go with it, in the model's node order. A Constant or
  folded node goes with the first op written that reads its output,
  directly or through other folded nodes; one that no op reads (dead) goes
  with the last op written. A graph input's op lists the input's name.
  Every node of the model is listed exactly once in the file (checked). A
  node or graph input whose name holds a NUL byte, or a graph input
  without a name, is refused.
- An edge u -> v for every producer u of a tensor v consumes; its bytes are
  the sizes of the distinct tensors of u that v reads. An op's bytes are the
  sizes of all of its node's outputs (shape from inference times the dtype's
  size).
- Kinds: MatMul, Gemm, MatMulInteger -> matmul; Conv, ConvTranspose ->
  matmul (an implicit GEMM: the kind selects a cluster's tensor-core speed),
  except a depthwise convolution (group = input channels > 1), which is
  memory-bound -> opaque; Add, Sub, Sum -> add; Mul, Div -> mul (scale
  when the other operand is a one-element known value); Relu -> relu;
  Gelu, FastGelu -> gelu; Softmax, LogSoftmax -> softmax;
  LayerNormalization -> layernorm; RMSNormalization,
  SimplifiedLayerNormalization -> rmsnorm; ReduceSum, ReduceMean -> reduce;
  Concat -> concat; Split -> split; Transpose -> transpose; Identity ->
  copy; every other op type -> opaque. The kind selects a calibrated
  cluster's per-kind speed; the ops carry no 2-D shape, so `doppler exec`
  refuses them: --opaque writes every op as opaque (cost only), which the
  executor runs as busy kernels of the modelled time.
- compute, in FLOPs (one multiply-add = 2), per op type:
    MatMul, MatMulInteger  2 x output elements x K (A's last dimension): 2MNK
    Gemm                   2 x M x N x K (the bias is not counted)
    Conv                   2 x output elements x Cin/group x kernel elements
                           (= 2 x kernel x Cin x Cout x output pixels per group)
    ConvTranspose          2 x input elements x Cout/group x kernel elements
    Softmax, LogSoftmax, LayerNormalization, InstanceNormalization,
    GroupNormalization     5 per output element
    RMSNormalization, SimplifiedLayerNormalization
                           4 per output element (doppler's rmsnorm)
    BatchNormalization     2 per output element (inference: scale, shift)
    Exp, Log, Sigmoid, Tanh, Erf, Gelu and other transcendental
    activations            4 per output element (doppler's silu)
    other element-wise ops (Add, Sub, Mul, Div, Pow, Sqrt, Relu, Clip,
    Where, Cast, comparisons, ...)       1 per output element
    Reduce*, ArgMax, ArgMin, GlobalAveragePool, GlobalMaxPool
                           1 per input element
    MaxPool, AveragePool, LpPool   output elements x kernel elements
    Transpose, Concat, Split, Slice, Gather*, Expand, Tile, Pad, Resize,
    Scatter*, ...          1 per output element (a copy)
    Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout, Shape, Size
                           0 (views and metadata)
  An op type with no rule gets its output element count and is listed once
  on standard error.
- Units: `units speed=1e9 bandwidth=1e10` as doppler's own workloads (FLOPs
  at 1e9 per second, bytes at 1e10 per second on a default device and link);
  --speed and --bandwidth set others (e.g. --speed 1e14 --bandwidth 1e11 for
  GPUs behind NVLink-class links). A --cluster file overrides them.

--coarsen K merges cheap element-wise ops (the element-wise and view op
types above, not Softmax or the normalisations) into their producer: an op
whose inputs all come from one op (or merged op) joins it, while that holds
fewer than K nodes. The merged op is named after what it holds ('a+b+c', or
'a+N_more' past the name limit, every member listed in a comment line above
it), its compute is the sum of its members' (the total is unchanged), its
kind that of its costliest member, its bytes the tensors that leave it, its
weights the union of its members' (each once).

Malformed or unsupported models (unreadable file, a tensor nobody produces,
a cycle, a node with subgraphs, a NUL in a name) give exit status 1 and a
message naming the node; no output file is written (the graph goes to
GRAPH.tmp and is renamed at the end). So does a size still unknown after
folding, with the node, the tensor and the cause: a free dimension of a
graph input (and the --dim NAME=VALUE or --batch N that binds it), a value
known only at run time (the node whose value is needed: a NonZero, a graph
input's values, a node that could not be folded), or shape inference
(with what onnx's strict mode says).
"""
import math
import os
import sys
import time

PROG = "onnx2dpg"
SYSTEM_PYTHON = "/usr/bin/python3"   # where Debian's python3-onnx installs


def find_onnx():
    """Imports onnx, or re-runs this script with the system python that has it."""
    try:
        import onnx  # noqa: F401
        return
    except ImportError:
        pass
    me = os.path.realpath(sys.executable or "")
    if (os.environ.get("ONNX2DPG_REEXEC") != "1" and os.access(SYSTEM_PYTHON, os.X_OK)
            and os.path.realpath(SYSTEM_PYTHON) != me):
        os.environ["ONNX2DPG_REEXEC"] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
    sys.stderr.write(
        "%s: the Python package 'onnx' is missing: %s cannot import it%s.\n"
        "  Debian/Ubuntu: apt-get install python3-onnx (it installs for %s)\n"
        "  elsewhere:     python3 -m pip install onnx\n"
        % (PROG, sys.executable, "" if me == os.path.realpath(SYSTEM_PYTHON) or not os.access(SYSTEM_PYTHON, os.X_OK)
           else ", nor can " + SYSTEM_PYTHON, SYSTEM_PYTHON))
    sys.exit(1)


class ConvertError(Exception):
    pass


# ---------------------------------------------------------------------------
# op types
# ---------------------------------------------------------------------------
KIND = {
    "MatMul": "matmul", "Gemm": "matmul", "MatMulInteger": "matmul",
    "Conv": "matmul", "ConvTranspose": "matmul",     # but depthwise: opaque (node_flops)
    "Add": "add", "Sub": "add", "Sum": "add",
    "Mul": "mul", "Div": "mul",
    "Relu": "relu", "Gelu": "gelu", "FastGelu": "gelu",
    "Softmax": "softmax", "LogSoftmax": "softmax",
    "LayerNormalization": "layernorm",
    "RMSNormalization": "rmsnorm", "SimplifiedLayerNormalization": "rmsnorm",
    "ReduceSum": "reduce", "ReduceMean": "reduce",
    "Concat": "concat", "Split": "split", "Transpose": "transpose", "Identity": "copy",
}

TRANSCENDENTAL = set("""Exp Log Sigmoid Tanh Erf Gelu FastGelu Softplus Softsign Elu Selu Celu
    Mish Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh ThresholdedRelu""".split())
ELEMENTWISE = set("""Add Sub Mul Div Pow Mod Neg Abs Sqrt Reciprocal Floor Ceil Round Sign
    Relu LeakyRelu PRelu Clip HardSigmoid HardSwish Max Min Mean Sum Where Cast CastLike
    Equal Less LessOrEqual Greater GreaterOrEqual And Or Xor Not BitShift IsNaN IsInf
    BitwiseAnd BitwiseOr BitwiseXor BitwiseNot QuantizeLinear DequantizeLinear""".split())
VIEWS = set("Reshape Flatten Squeeze Unsqueeze Identity Dropout Shape Size".split())
ROWWISE5 = set("Softmax LogSoftmax LayerNormalization InstanceNormalization GroupNormalization".split())
ROWWISE4 = set("RMSNormalization SimplifiedLayerNormalization".split())
REDUCTIONS = set("""ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2
    ReduceLogSum ReduceLogSumExp ReduceSumSquare ArgMax ArgMin GlobalAveragePool
    GlobalMaxPool GlobalLpPool""".split())
POOLS = set("MaxPool AveragePool LpPool".split())
COPIES = set("""Transpose Concat Split Slice Gather GatherElements GatherND Expand Tile Pad
    Resize Upsample ScatterND ScatterElements Scatter DepthToSpace SpaceToDepth
    ConstantOfShape Range Trilu CumSum OneHot ReverseSequence Compress NonZero TopK
    EyeLike""".split())
# what --coarsen merges into its producer
CHEAP = (ELEMENTWISE | TRANSCENDENTAL | VIEWS) - {"Shape", "Size"}

SUBGRAPH_OPS = "If, Loop, Scan"

# op parameters: the inputs (by position) an op reads as its shape, axes,
# indices or sizes, never weights (the module doc)
PARAM_INPUTS = {
    "Reshape": (1,), "Expand": (1,), "Slice": (1, 2, 3, 4), "Squeeze": (1,), "Unsqueeze": (1,),
    "Tile": (1,), "ConstantOfShape": (0,), "Range": (0, 1, 2), "Pad": (1, 3), "Resize": (1, 2, 3),
    "Upsample": (1,), "Split": (1,), "TopK": (1,), "CumSum": (1,), "Trilu": (1,), "OneHot": (1,),
}
for _t in REDUCTIONS:
    if _t.startswith("Reduce"):
        PARAM_INPUTS[_t] = (1,)
# op types whose output size depends on their inputs' values, not only their shapes
DATA_DEPENDENT = set("NonZero Unique NonMaxSuppression Compress StringSplit".split())

# bytes per element of TensorProto data types (strings have no fixed size)
DTYPE_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4,
               13: 8, 14: 8, 15: 16, 16: 2, 17: 1, 18: 1, 19: 1, 20: 1, 21: 0.5, 22: 0.5}


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


# ---------------------------------------------------------------------------
# names
# ---------------------------------------------------------------------------
MAX_NAME = 127   # DP_MAX_NAME


def clean_name(s):
    out = []
    for ch in s:
        o = ord(ch)
        out.append("_" if o <= 32 or o == 127 or ch in "#=," else ch)
    s = "".join(out)
    b = s.encode("utf-8")
    if len(b) > MAX_NAME:
        s = b[:MAX_NAME].decode("utf-8", "ignore")
    return s or "_"


class Names:
    """Unique names of at most MAX_NAME bytes."""

    def __init__(self):
        self.used = set()

    def take(self, want):
        base = clean_name(want)
        name, k = base, 2
        while name in self.used:
            suffix = "_%d" % k
            name = base.encode("utf-8")[:MAX_NAME - len(suffix)].decode("utf-8", "ignore") + suffix
            k += 1
        self.used.add(name)
        return name


def source_name(node, i):
    """The name source= lists for node i: its own, or OpType_INDEX."""
    return node.name or "%s_%d" % (node.op_type, i)


def percent_encode(name):
    """source= spelling: bytes <= 0x20, 0x7f, '%', ',', '=', '#' as %XX; others as they are."""
    out = bytearray()
    for b in name.encode("utf-8"):
        if b <= 0x20 or b == 0x7f or b in b"%,=#":
            out += b"%%%02X" % b
        else:
            out.append(b)
    return out.decode("utf-8")


# ---------------------------------------------------------------------------
# known values and their folding
# ---------------------------------------------------------------------------
FOLD_CAP = 1 << 24     # elements: a node whose output would be larger stays an op
VIEW_FOLD = set("Identity Reshape Flatten Squeeze Unsqueeze".split())


def np_types():
    """ONNX data type -> numpy dtype, for the types folding handles."""
    import numpy as np
    return {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
            9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


class NotFoldable(Exception):
    pass


class Known:
    """A tensor known before run time: an initializer, a Constant node's
    output or a folded node's output. dtype: ONNX data type; shape: a tuple;
    value(): the numpy array, made on first use (None where the data is not
    in the model file: external data)."""

    def __init__(self, dtype, shape, array=None, load=None):
        self.dtype, self.shape = dtype, tuple(int(d) for d in shape)
        self._array, self._load = array, load

    @staticmethod
    def of(array):
        import numpy as np
        array = np.asarray(array)
        for dt, npt in np_types().items():
            if array.dtype == npt:
                return Known(dt, array.shape, array)
        raise NotFoldable("numpy type %s" % array.dtype)

    def size(self):
        return prod(self.shape)

    def value(self):
        if self._array is None and self._load is not None:
            self._array, self._load = self._load(), None
        return self._array


def initializer_known(t, dims=None):
    """Known of an initializer (dims: a sparse one's dense shape)."""
    from onnx import numpy_helper
    if dims is None:
        external = t.data_location == 1   # TensorProto.EXTERNAL: data not loaded
        return Known(t.data_type, t.dims, load=None if external else (lambda: numpy_helper.to_array(t)))
    return Known(t.values.data_type, dims, load=lambda: sparse_to_dense(t))


def sparse_to_dense(sp):
    import numpy as np
    from onnx import numpy_helper
    dims = tuple(sp.dims)
    if prod(dims) > FOLD_CAP:
        return None
    vals = numpy_helper.to_array(sp.values)
    idx = numpy_helper.to_array(sp.indices)
    dense = np.zeros(prod(dims), dtype=vals.dtype)
    if idx.ndim == 2:
        idx = np.ravel_multi_index(tuple(idx.T), dims)
    dense[idx] = vals
    return dense.reshape(dims)


def constant_known(node):
    """Known of a Constant node's output (from its attribute)."""
    import numpy as np
    from onnx import numpy_helper
    for a in node.attribute:
        if a.name == "value":
            return Known(a.t.data_type, a.t.dims, load=lambda t=a.t: numpy_helper.to_array(t))
        if a.name == "sparse_value":
            return Known(a.sparse_tensor.values.data_type, a.sparse_tensor.dims,
                         load=lambda sp=a.sparse_tensor: sparse_to_dense(sp))
        if a.name == "value_float":
            return Known.of(np.array(a.f, dtype=np.float32))
        if a.name == "value_floats":
            return Known.of(np.array(list(a.floats), dtype=np.float32))
        if a.name == "value_int":
            return Known.of(np.array(a.i, dtype=np.int64))
        if a.name == "value_ints":
            return Known.of(np.array(list(a.ints), dtype=np.int64))
        if a.name == "value_string":
            return Known(8, ())
        if a.name == "value_strings":
            return Known(8, (len(a.strings),))
    return Known(1, ())


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            import onnx
            return onnx.helper.get_attribute_value(a)
    return default


def axes_of(node, xs, k=1):
    """A node's axes: input k when given, else the attribute (None: neither)."""
    if len(xs) > k and xs[k] is not None:
        return [int(a) for a in xs[k].reshape(-1)]
    a = attr(node, "axes")
    return None if a is None else [int(x) for x in a]


def view_shape(node, shape, xs):
    """Output shape of a view op (Identity, Reshape, Flatten, Squeeze, Unsqueeze)
    on a tensor of this shape; xs: the inputs' values (xs[0] unused)."""
    t, r = node.op_type, len(shape)
    if t == "Identity":
        return shape
    if t == "Flatten":
        axis = attr(node, "axis", 1)
        axis += r if axis < 0 else 0
        if not 0 <= axis <= r:
            raise NotFoldable("axis")
        return (prod(shape[:axis]), prod(shape[axis:]))
    if t == "Squeeze":
        axes = axes_of(node, xs)
        if axes is None:
            return tuple(d for d in shape if d != 1)
        axes = {a + r if a < 0 else a for a in axes}
        if any(not 0 <= a < r or shape[a] != 1 for a in axes):
            raise NotFoldable("squeeze axes")
        return tuple(d for i, d in enumerate(shape) if i not in axes)
    if t == "Unsqueeze":
        axes = axes_of(node, xs)
        n = r + len(axes or ())
        axes = sorted(a + n if a < 0 else a for a in axes or ())
        if len(set(axes)) != len(axes) or any(not 0 <= a < n for a in axes):
            raise NotFoldable("unsqueeze axes")
        out, rest = [], iter(shape)
        for i in range(n):
            out.append(1 if i in axes else next(rest))
        return tuple(out)
    # Reshape
    target = [int(d) for d in xs[1].reshape(-1)]
    allowzero = attr(node, "allowzero", 0)
    out = [shape[i] if d == 0 and not allowzero and i < r else d for i, d in enumerate(target)]
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise NotFoldable("reshape target")
    total = prod(shape)
    if -1 in out:
        rest = prod(d for d in out if d != -1)
        if rest == 0 or total % rest:
            raise NotFoldable("reshape target")
        out[out.index(-1)] = total // rest
    if prod(out) != total:
        raise NotFoldable("reshape target")
    return tuple(out)


def clamp(x, lo, hi):
    return max(lo, min(hi, x))


def fold_slice(node, xs):
    data = xs[0]
    if len(xs) >= 3:
        starts, ends = list(xs[1].reshape(-1)), list(xs[2].reshape(-1))
        axes = list(xs[3].reshape(-1)) if len(xs) > 3 and xs[3] is not None else list(range(len(starts)))
        steps = list(xs[4].reshape(-1)) if len(xs) > 4 and xs[4] is not None else [1] * len(starts)
    else:   # opset < 10: attributes
        starts, ends = attr(node, "starts"), attr(node, "ends")
        axes = attr(node, "axes", list(range(len(starts))))
        steps = [1] * len(starts)
    idx = [slice(None)] * data.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        s, e, a, st = int(s), int(e), int(a), int(st)
        a += data.ndim if a < 0 else 0
        d = data.shape[a]
        if st == 0:
            raise NotFoldable("step 0")
        s += d if s < 0 else 0
        e += d if e < 0 else 0
        if st > 0:
            s, e = clamp(s, 0, d), clamp(e, 0, d)
        else:
            s, e = clamp(s, 0, d - 1), clamp(e, -1, d - 1)
        idx[a] = slice(s, e if e >= 0 else None, st)
    return data[tuple(idx)]


def fold_div(a, b):
    import numpy as np
    if a.dtype.kind in "iu":
        if np.any(b == 0):
            raise NotFoldable("integer division by zero")
        q = np.abs(a) // np.abs(b)
        return np.where((a < 0) != (b < 0), -q, q)      # truncated toward zero
    return a / b


def fold_pow(a, b):
    """a ** b in a's type (integers exact where the exponents are not negative)."""
    import numpy as np
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.all(b >= 0):
        return np.power(a, b.astype(a.dtype))
    return np.power(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)


def fold_mod(node, a, b):
    import numpy as np
    if a.dtype.kind in "iu" and np.any(b == 0):
        raise NotFoldable("integer modulo by zero")
    return np.fmod(a, b) if attr(node, "fmod", 0) else np.mod(a, b)


def fold_reduce(node, xs):
    import numpy as np
    x = xs[0]
    axes = axes_of(node, xs)
    keep = bool(attr(node, "keepdims", 1))
    if not axes:
        if attr(node, "noop_with_empty_axes", 0):
            return x
        axes = list(range(x.ndim))
    axes = tuple(a + x.ndim if a < 0 else a for a in axes)
    f = {"ReduceSum": np.sum, "ReduceProd": np.prod, "ReduceMax": np.max, "ReduceMin": np.min,
         "ReduceMean": np.mean}[node.op_type]
    return f(x, axis=axes, keepdims=keep).astype(x.dtype)


def fold_range(xs):
    import numpy as np
    start, limit, delta = (x.reshape(()) for x in xs)
    if delta == 0:
        raise NotFoldable("delta 0")
    n = max(int(math.ceil((float(limit) - float(start)) / float(delta))), 0)
    return (start + np.arange(n, dtype=start.dtype) * delta).astype(start.dtype)


def fold_cumsum(node, xs):
    import numpy as np
    x, axis = xs[0], int(xs[1].reshape(()))
    a = np.flip(x, axis) if attr(node, "reverse", 0) else x
    c = np.cumsum(a, axis=axis, dtype=x.dtype)
    if attr(node, "exclusive", 0):
        c = c - a
    return np.flip(c, axis) if attr(node, "reverse", 0) else c


def fold_shape(shape, node):
    r = len(shape)
    start, end = attr(node, "start", 0), attr(node, "end", r)
    start = clamp(start + r if start < 0 else start, 0, r)
    end = clamp(end + r if end < 0 else end, 0, r)
    return list(shape[start:end])


def folders():
    """op type -> f(node, input values) -> the output value."""
    import numpy as np
    same = lambda f: lambda n, x: f(*x[:2]).astype(x[0].dtype)          # noqa: E731
    cmp = lambda f: lambda n, x: f(*x[:2])                               # noqa: E731
    one = lambda f: lambda n, x: f(x[0]).astype(x[0].dtype)             # noqa: E731
    return {
        "Add": same(np.add), "Sub": same(np.subtract), "Mul": same(np.multiply),
        "Div": lambda n, x: fold_div(*x[:2]).astype(x[0].dtype),
        "Mod": lambda n, x: fold_mod(n, *x[:2]).astype(x[0].dtype),
        "Pow": lambda n, x: fold_pow(*x[:2]),
        "Max": lambda n, x: np.maximum.reduce(np.broadcast_arrays(*x)).astype(x[0].dtype),
        "Min": lambda n, x: np.minimum.reduce(np.broadcast_arrays(*x)).astype(x[0].dtype),
        "Equal": cmp(np.equal), "Less": cmp(np.less), "LessOrEqual": cmp(np.less_equal),
        "Greater": cmp(np.greater), "GreaterOrEqual": cmp(np.greater_equal),
        "And": cmp(np.logical_and), "Or": cmp(np.logical_or), "Xor": cmp(np.logical_xor),
        "Not": lambda n, x: np.logical_not(x[0]),
        "Neg": one(np.negative), "Abs": one(np.abs), "Floor": one(np.floor), "Ceil": one(np.ceil),
        "Sqrt": one(np.sqrt),
        "Where": lambda n, x: np.where(x[0], x[1], x[2]).astype(x[1].dtype),
        "Cast": lambda n, x: x[0].astype(np_types()[attr(n, "to")]),
        "Transpose": lambda n, x: np.transpose(x[0], attr(n, "perm")),
        "Gather": lambda n, x: np.take(x[0], x[1].astype(np.int64), axis=attr(n, "axis", 0)),
        "Concat": lambda n, x: np.concatenate(x, axis=attr(n, "axis")),
        "Slice": fold_slice,
        "Expand": lambda n, x: np.broadcast_to(x[0], np.broadcast_shapes(x[0].shape, tuple(int(d) for d in x[1]))),
        "Tile": lambda n, x: np.tile(x[0], [int(r) for r in x[1]]),
        "ConstantOfShape": lambda n, x: constant_of_shape(n, x[0]),
        "Range": lambda n, x: fold_range(x),
        "ReduceSum": fold_reduce, "ReduceProd": fold_reduce, "ReduceMax": fold_reduce,
        "ReduceMin": fold_reduce, "ReduceMean": fold_reduce,
        "Trilu": lambda n, x: (np.triu if attr(n, "upper", 1) else np.tril)(
            x[0], int(x[1].reshape(())) if len(x) > 1 and x[1] is not None else 0),
        "CumSum": fold_cumsum,
    }


def constant_of_shape(node, shape):
    import numpy as np
    from onnx import numpy_helper
    v = attr(node, "value")
    fill = numpy_helper.to_array(v).reshape(-1)[0] if v is not None else np.float32(0)
    return np.full(tuple(int(d) for d in shape), fill, dtype=fill.dtype)


def folded_size(node, ks):
    """Elements the output of node would hold, from its known inputs (ks)."""
    import numpy as np
    t = node.op_type
    shapes = [k.shape for k in ks if k is not None]
    val = lambda j: ks[j].value()                               # noqa: E731
    if t == "Expand":
        return prod(np.broadcast_shapes(ks[0].shape, tuple(int(d) for d in val(1))))
    if t == "ConstantOfShape":
        return prod(int(d) for d in val(0))
    if t == "Range":
        start, limit, delta = (float(val(j).reshape(())) for j in range(3))
        return max(int(math.ceil((limit - start) / delta)), 0) if delta else 0
    if t == "Tile":
        return prod(d * int(r) for d, r in zip(ks[0].shape, val(1)))
    if t == "Gather":
        s, axis = ks[0].shape, attr(node, "axis", 0)
        axis += len(s) if axis < 0 else 0
        return prod(s[:axis]) * ks[1].size() * prod(s[axis + 1:])
    if t == "Concat":
        return sum(prod(s) for s in shapes)
    if t in ELEMENTWISE:
        return prod(np.broadcast_shapes(*shapes))
    return max(prod(s) for s in shapes)


def fold_node(node, known, static_shape, fold_fns):
    """Evaluates node when the module doc's folding rules allow: returns
    {output name: Known}, or None (it stays an op)."""
    import numpy as np
    t = node.op_type
    if node.domain not in ("", "ai.onnx") or not (t in fold_fns or t in VIEW_FOLD or t in ("Shape", "Size")):
        return None
    ins, out = list(node.input), node.output[0] if node.output else ""
    if not out or not ins:
        return None
    if t in ("Shape", "Size"):
        s = known[ins[0]].shape if ins[0] in known else static_shape(ins[0])
        if s is None:
            return None
        return {out: Known.of(np.array(prod(s) if t == "Size" else fold_shape(s, node), dtype=np.int64))}
    if any(x and x not in known for x in ins):
        return None
    ks = [known[x] if x else None for x in ins]
    try:
        with np.errstate(all="ignore"):
            if t in VIEW_FOLD:   # the shape alone; the data (a weight, maybe) is read only if needed
                params = [None] + [k.value() if k is not None else None for k in ks[1:]]
                s, src = view_shape(node, ks[0].shape, params), ks[0]
                return {out: Known(src.dtype, s, load=lambda: None if src.value() is None else src.value().reshape(s))}
            if any(k is not None and k.dtype not in np_types() for k in ks):
                return None
            if folded_size(node, ks) > FOLD_CAP:
                return None
            xs = [k.value() if k is not None else None for k in ks]
            if any(x is None and k is not None for x, k in zip(xs, ks)):
                return None
            return {out: Known.of(fold_fns[t](node, xs))}
    except Exception:   # an op numpy cannot evaluate this way stays an op
        return None


# ---------------------------------------------------------------------------
# the conversion
# ---------------------------------------------------------------------------
def node_label(node, i):
    return "node '%s' (%s)" % (node.name, node.op_type) if node.name else "node %d (%s, no name)" % (i, node.op_type)


def tensor_type(vi):
    """(dtype, dims) of a ValueInfoProto; dims entries are ints or the
    dimension's name (str) or None; dims None = no shape."""
    t = vi.type
    if t.WhichOneof("value") != "tensor_type":
        return None, None
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return tt.elem_type, None
    dims = []
    for d in tt.shape.dim:
        w = d.WhichOneof("value")
        dims.append(d.dim_value if w == "dim_value" else (d.dim_param if w == "dim_param" else None))
    return tt.elem_type, dims


def is_static(dims):
    return dims is not None and all(isinstance(d, int) for d in dims)


def check_model(model):
    """The structural refusals of the module doc; returns what they find."""
    import onnx
    graph = model.graph
    if len(graph.node) == 0:
        raise ConvertError("the model's graph has no nodes")
    nodes = list(graph.node)
    for i, node in enumerate(nodes):
        if "\0" in node.name:
            raise ConvertError("node %d (%s): its name holds a NUL byte" % (i, node.op_type))
        for a in node.attribute:
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                raise ConvertError("%s: ops with subgraphs (%s) are not supported" % (node_label(node, i), SUBGRAPH_OPS))
    init_names = {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    graph_inputs = [vi for vi in graph.input if vi.name not in init_names]
    for vi in graph_inputs:
        if not vi.name or "\0" in vi.name:
            raise ConvertError("graph input %r: a name must be non-empty and hold no NUL byte" % vi.name)
    known = {}
    for t in graph.initializer:
        known[t.name] = initializer_known(t)
    for t in graph.sparse_initializer:
        known[t.values.name] = initializer_known(t, t.dims)
    producer, const_nodes = {}, set()
    for i, node in enumerate(nodes):
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            const_nodes.add(i)
        for o in node.output:
            if not o:
                continue
            if o in producer:
                raise ConvertError("%s: output '%s' is also produced by %s" % (node_label(node, i), o, node_label(nodes[producer[o]], producer[o])))
            if o in init_names:
                raise ConvertError("%s: output '%s' is also an initializer" % (node_label(node, i), o))
            producer[o] = i
            if i in const_nodes:
                known[o] = constant_known(node)
    input_names = {vi.name for vi in graph_inputs}
    for i, node in enumerate(nodes):
        for t in node.input:
            if t and t not in producer and t not in input_names and t not in known:
                raise ConvertError("%s: input '%s' is produced by no node and is no initializer or graph input" % (node_label(node, i), t))
    return {"nodes": nodes, "init_names": init_names, "graph_inputs": graph_inputs, "known": known,
            "producer": producer, "const_nodes": const_nodes, "order": topological_order(nodes, producer)}


def topological_order(nodes, producer):
    """The nodes' indices in a topological order (the file's where it is one)."""
    n = len(nodes)
    preds = [set() for _ in range(n)]
    for i, node in enumerate(nodes):
        for t in node.input:
            if t in producer:
                preds[i].add(producer[t])
    if all(p < i for i in range(n) for p in preds[i]):
        return list(range(n))
    import heapq
    succ = [[] for _ in range(n)]
    indeg = [len(preds[i]) for i in range(n)]
    for i in range(n):
        for p in preds[i]:
            succ[p].append(i)
    heap = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        i = heapq.heappop(heap)
        order.append(i)
        for s in succ[i]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, s)
    if len(order) < n:
        left = [i for i in range(n) if indeg[i] > 0]
        raise ConvertError("%s is on a cycle (%d nodes are)" % (node_label(nodes[left[0]], left[0]), len(left)))
    return order


def bind_inputs(graph, batch, dims, graph_inputs):
    """Binds the graph inputs' dimensions (--batch, --dim: the module doc).
    Returns (the --dim names seen and used, the fixed batch that --batch
    rescaled or None)."""
    bound = dict(dims)
    rescaled = None
    if batch is not None:
        firsts = [vi.type.tensor_type.shape.dim[0] for vi in graph_inputs
                  if vi.type.WhichOneof("value") == "tensor_type" and vi.type.tensor_type.HasField("shape")
                  and len(vi.type.tensor_type.shape.dim) > 0]
        if not firsts:
            raise ConvertError("--batch %d: no graph input has a first dimension to bind" % batch)
        if all(d.WhichOneof("value") == "dim_value" for d in firsts):
            fixed = firsts[0].dim_value
            if fixed != batch:          # exported with a fixed batch: rescale it
                rescaled = fixed
                for d in firsts:
                    if d.dim_value == fixed:
                        d.dim_value = batch
                del graph.value_info[:]
                for vi in graph.output:
                    if vi.type.WhichOneof("value") == "tensor_type":
                        vi.type.tensor_type.ClearField("shape")
        else:
            for d in firsts:
                w = d.WhichOneof("value")
                if w == "dim_value" or (w == "dim_param" and d.dim_param in dims):
                    continue
                if w == "dim_param":
                    bound.setdefault(d.dim_param, batch)
                d.dim_value = batch
    used = set()
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        if vi.type.WhichOneof("value") != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            if d.WhichOneof("value") == "dim_param" and d.dim_param in bound:
                used.add(d.dim_param)
                d.dim_value = bound[d.dim_param]
    return used, rescaled


def unbound_input_dims(graph_inputs):
    """[(dim name or None, input name, index)] of the graph inputs' free dims."""
    out = []
    for vi in graph_inputs:
        _, dims = tensor_type(vi)
        for i, d in enumerate(dims or []):
            if not isinstance(d, int):
                out.append((d, vi.name, i))
    return out


def dim_hint(free):
    hints = []
    for d, inp, i in free:
        if d is None:
            hints.append("dimension %d of input '%s' is unknown (%s)" % (i, inp, "--batch N binds it" if i == 0 else "the model must fix it"))
        else:
            h = "--dim %s=VALUE" % d
            if i == 0:
                h += " or --batch N"
            hints.append("'%s' (input '%s', dimension %d): pass %s" % (d, inp, i, h))
    return "; ".join(dict.fromkeys(hints))


def infer(model, parts, skip, protos):
    """ONNX shape inference on the model less the nodes in skip (Constant and
    folded ones), the known values they leave as constants (small ones with
    their values, the rest as typed inputs). Returns (name -> (dtype, dims),
    the model inferred)."""
    import onnx
    from onnx import helper, numpy_helper, shape_inference
    known, nodes = parts["known"], parts["nodes"]
    m = onnx.ModelProto()
    m.ir_version = max(model.ir_version, 4)
    m.opset_import.extend(model.opset_import)
    m.functions.extend(model.functions)
    g = m.graph
    g.name = model.graph.name
    g.input.extend(parts["graph_inputs"])
    live = [n for i, n in enumerate(nodes) if i not in skip]
    for name in dict.fromkeys(x for n in live for x in n.input if x in known):
        k = known[name]
        if name not in protos:   # the values inference may use: small, or integers (shapes)
            small = k.dtype in np_types() and (k.size() <= 64 or (k.dtype in (6, 7) and k.size() <= 1 << 16))
            v = k.value() if small else None
            protos[name] = numpy_helper.from_array(v, name) if v is not None else None
        if protos[name] is not None:
            g.initializer.append(protos[name])
        else:
            g.input.append(helper.make_tensor_value_info(name, k.dtype, k.shape))
    g.node.extend(live)
    g.output.extend(vi for vi in model.graph.output if vi.name not in known)
    g.value_info.extend(vi for vi in model.graph.value_info if vi.name not in known)
    try:
        m = shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)
    except Exception as e:
        raise ConvertError("shape inference failed: %s" % str(e).strip())
    info = {}
    for vi in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
        dt, ds = tensor_type(vi)
        if dt is not None and (vi.name not in info or info[vi.name][1] is None):
            info[vi.name] = (dt, ds)
    return info, m


def fold(model, parts):
    """Folding to a fixpoint (the module doc). Adds the folded outputs to
    parts["known"]; returns (shapes: name -> (dtype, dims), the folded
    nodes' indices, the last model inferred)."""
    known, nodes = parts["known"], parts["nodes"]
    fns = folders()
    skip = set(parts["const_nodes"])
    folded = set()
    protos = {}
    while True:
        info, work = infer(model, parts, skip, protos)

        def static_shape(t):
            ds = info.get(t, (None, None))[1]
            return tuple(ds) if is_static(ds) else None

        new = 0
        for i in parts["order"]:
            if i in skip:
                continue
            got = fold_node(nodes[i], known, static_shape, fns)
            if got:
                known.update(got)
                skip.add(i)
                folded.add(i)
                new += 1
        if not new:
            break
    for t, k in known.items():
        info[t] = (k.dtype, list(k.shape))
    return info, folded, work


def why_unknown(t, info, parts):
    """Why the size of tensor t is still unknown: ("free", [(dim, input, index)]),
    ("runtime", what), ("unfolded", node index, tensor) or ("inference", node index)."""
    known, nodes, producer = parts["known"], parts["nodes"], parts["producer"]
    free = unbound_input_dims(parts["graph_inputs"])
    fold_types = set(folders()) | VIEW_FOLD | {"Shape", "Size"}
    seen = set()

    def static(x):
        return x in known or is_static(info.get(x, (None, None))[1])

    def shape_of(x):
        if static(x) or ("s", x) in seen:
            return None
        seen.add(("s", x))
        p = producer.get(x)
        if p is None:                       # a graph input
            fs = [f for f in free if f[1] == x]
            return ("free", fs) if fs else ("inference", None)
        node = nodes[p]
        for y in node.input:
            r = y and shape_of(y)
            if r:
                return r
        if node.op_type in DATA_DEPENDENT:
            return ("runtime", "the output size of %s depends on its input's values" % node_label(node, p))
        for j in PARAM_INPUTS.get(node.op_type, ()):
            r = j < len(node.input) and node.input[j] and value_of(node.input[j])
            if r:
                return r
        return ("inference", p)

    def value_of(x):
        if x in known or ("v", x) in seen:
            return None
        seen.add(("v", x))
        p = producer.get(x)
        if p is None:
            return ("runtime", "the values of graph input '%s'" % x)
        node = nodes[p]
        if node.op_type in ("Shape", "Size"):
            return shape_of(node.input[0]) or ("inference", p)
        if node.op_type not in fold_types or node.domain not in ("", "ai.onnx"):
            return ("runtime", "the value of '%s', the output of %s" % (x, node_label(node, p)))
        for y in node.input:
            r = y and value_of(y)
            if r:
                return r
        return ("unfolded", p, x)

    return shape_of(t) or ("inference", producer.get(t))


def convert(path, batch=None, dims=None, coarsen=1, opaque=False, speed=1e9, bandwidth=1e10, warn=None,
            weights=True):
    """Returns the text of the native graph and a summary dict."""
    import onnx
    dims = dims or {}
    warn = warn or (lambda s: sys.stderr.write(s + "\n"))
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as e:   # protobuf decode errors have several types
        raise ConvertError("not a readable ONNX model: %s" % (str(e).strip() or type(e).__name__))
    parts = check_model(model)
    used, rescaled = bind_inputs(model.graph, batch, dims, parts["graph_inputs"])
    for name in dims:
        if name not in used:
            warn("%s: warning: --dim %s: no graph input, output or value_info has a dimension named '%s'" % (PROG, name, name))
    flags = "%s%s%s" % (" --batch %d" % batch if batch is not None else "",
                        "".join(" --dim %s=%d" % kv for kv in sorted(dims.items())),
                        " --coarsen %d" % coarsen if coarsen > 1 else "")
    header = "# %s, converted by onnx2dpg.py%s; " % (os.path.basename(path), flags)
    if batch is not None:
        header += "batch %d" % batch
        if rescaled is not None:
            header += " (the model's fixed batch %d, rescaled)" % rescaled
    else:
        firsts = sorted({tensor_type(vi)[1][0] for vi in parts["graph_inputs"] if tensor_type(vi)[1]}, key=str)
        header += ("batch %s (as exported)" % firsts[0] if len(firsts) == 1 else "no batch dimension" if not firsts
                   else "the graph inputs' first dimensions are %s" % ", ".join(map(str, firsts)))
    if rescaled is None:
        return convert_model(model, parts, header, batch, coarsen, opaque, speed, bandwidth, warn, weights)
    try:
        text, summary = convert_model(model, parts, header, batch, coarsen, opaque, speed, bandwidth, warn, weights,
                                      rescaled=True)
    except ConvertError as e:
        ins = [vi.name for vi in parts["graph_inputs"]]
        outs = [vi.name for vi in model.graph.output]
        axes = ", ".join("%r: {0: 'batch'}" % n for n in ins + outs)
        raise ConvertError(
            "the model was exported with a fixed batch of %d and does not rescale to --batch %d (%s); "
            "export it with the batch as a dynamic axis, e.g. torch.onnx.export(model, args, f, input_names=%r, "
            "output_names=%r, dynamic_axes={%s}), then convert it with --batch %d" % (
                rescaled, batch, e, ins, outs, axes, batch))
    return text, summary


def convert_model(model, parts, header, batch, coarsen, opaque, speed, bandwidth, warn, weights, rescaled=False):
    """The conversion of a checked model whose inputs are bound (the module doc)."""
    import onnx
    from onnx import shape_inference
    graph = model.graph
    nodes, known, producer = parts["nodes"], parts["known"], parts["producer"]
    const_nodes, order, graph_inputs = parts["const_nodes"], parts["order"], parts["graph_inputs"]
    n = len(nodes)
    info, folded, work = fold(model, parts)
    not_op = const_nodes | folded
    consumed = set(t for i, nd in enumerate(nodes) if i not in not_op for t in nd.input if t) | \
        {vi.name for vi in graph.output}

    # the shape of a tensor, or an error naming the node, the tensor and why
    strict_msg = []

    def strict_diagnosis():
        if not strict_msg:
            try:
                shape_inference.infer_shapes(work, check_type=True, strict_mode=True, data_prop=True)
                strict_msg.append("")
            except Exception as e:
                strict_msg.append(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
        return strict_msg[0]

    def unknown(t):
        """Why t has no size: the message's part after the node."""
        ds = info.get(t, (None, None))[1]
        named = [d for d in dict.fromkeys(ds or []) if isinstance(d, str) and d and not d.startswith("unk__")]
        free = unbound_input_dims(graph_inputs)
        if named:
            firsts = {d for d, _, i in free if i == 0}
            return "'%s' has symbolic dimension%s %s: pass %s" % (
                t, "s" if len(named) > 1 else "", ", ".join("'%s'" % d for d in named),
                " ".join("--dim %s=VALUE%s" % (d, " (or --batch N)" if d in firsts else "") for d in named))
        try:
            why = why_unknown(t, info, parts)
        except RecursionError:
            why = ("inference", producer.get(t))
        if why[0] == "free":
            return "the size of '%s' is unknown: it depends on free dimensions of the graph inputs: %s" % (t, dim_hint(why[1]))
        if why[0] == "runtime":
            return "the size of '%s' depends on values known only at run time: %s" % (t, why[1])
        if why[0] == "unfolded":
            p = why[1]
            return ("the size of '%s' is unknown: it needs the value of '%s', the output of %s, whose inputs are all "
                    "known but which was not folded (an output over %d elements, a type numpy does not hold, or "
                    "values numpy cannot evaluate)" % (t, why[2], node_label(nodes[p], p), FOLD_CAP))
        p = why[1]
        msg = "shape inference found no shape for '%s'%s" % (
            t, "" if p is None or p == producer.get(t) else " (it loses the shape at %s)" % node_label(nodes[p], p))
        if free:
            return msg + "; the graph inputs have free dimensions: " + dim_hint(free)
        d = strict_diagnosis()
        return msg + "; ONNX shape inference (onnx %s) says: %s" % (onnx.__version__, d or "nothing (the op type may have no shape function)")

    def shape(t, who, required=True):
        dt, ds = info.get(t, (None, None))
        if is_static(ds) and dt in DTYPE_BYTES:
            return dt, ds
        if not required:
            return None
        if is_static(ds):
            raise ConvertError("%s: '%s' has data type %d, whose element size is not fixed (strings) or unknown" % (who, t, dt))
        raise ConvertError("%s: %s" % (who, unknown(t)))

    def numel(t, who):
        return prod(shape(t, who)[1])

    def nbytes(t, who):
        dt, ds = shape(t, who)
        return DTYPE_BYTES[dt] * prod(ds)

    # weights: a known value read as data, named after its view root
    init_tensor = {t.name: (t, None) for t in graph.initializer}
    init_tensor.update({t.values.name: (t.values, t.dims) for t in graph.sparse_initializer})

    def view_root(t):
        while t in producer and producer[t] in folded and nodes[producer[t]].op_type in VIEW_FOLD:
            t = nodes[producer[t]].input[0]
        return t

    def weight_bytes(t):
        if t in init_tensor:
            return tensor_bytes(*init_tensor[t])
        if producer[t] in const_nodes:
            return constant_bytes(nodes[producer[t]])
        k = known[t]
        return int(math.ceil(k.size() * DTYPE_BYTES[k.dtype])) if k.dtype in DTYPE_BYTES else None

    # ops: graph inputs, then the nodes that are neither Constant nor folded
    names = Names()
    ops = []          # dicts: name, kind, compute, bytes, outs, sizes, type, node, weights
    op_of_tensor = {}
    first_reader = {}
    for i in order:
        for t in nodes[i].input:
            first_reader.setdefault(t, i)
    for vi in graph_inputs:
        who = "graph input '%s'" % vi.name
        if vi.name in first_reader:
            who += " (read by %s)" % node_label(nodes[first_reader[vi.name]], first_reader[vi.name])
        ops.append({"name": names.take(vi.name), "kind": "input", "compute": 0.0, "bytes": nbytes(vi.name, who),
                    "outs": [vi.name], "type": None, "node": None, "weights": []})
        op_of_tensor[vi.name] = len(ops) - 1
    no_rule = {}
    for i in order:
        node = nodes[i]
        if i in not_op:
            continue
        who = node_label(node, i)
        outs = [o for o in node.output if o]
        if not outs:
            raise ConvertError("%s has no outputs" % who)
        sizes = {}
        for o in outs:
            s = shape(o, who, required=o in consumed)
            sizes[o] = DTYPE_BYTES[s[0]] * prod(s[1]) if s else 0
        flops, kind = node_flops(node, who, numel, shape, known, no_rule)
        params = PARAM_INPUTS.get(node.op_type, ())
        ws = list(dict.fromkeys(view_root(t) for j, t in enumerate(node.input)
                                if t in known and j not in params)) if weights else []
        ops.append({"name": names.take(source_name(node, i)), "kind": kind, "compute": float(flops),
                    "bytes": float(sum(sizes.values())), "outs": outs, "sizes": sizes, "type": node.op_type,
                    "node": i, "weights": ws})
        for o in outs:
            op_of_tensor[o] = len(ops) - 1
    if rescaled:
        for vi in graph.output:
            ds = info.get(vi.name, (None, None))[1]
            if not is_static(ds) or not ds or ds[0] != batch:
                raise ConvertError("graph output '%s' has %s" % (
                    vi.name, "no known shape" if not is_static(ds) else "no first dimension" if not ds else
                    "first dimension %d, not %d" % (ds[0], batch)))
    if no_rule:
        warn("%s: no FLOP rule for %s: compute = output elements" % (
            PROG, ", ".join("%s (%d node%s)" % (k, v, "" if v == 1 else "s") for k, v in sorted(no_rule.items()))))

    # inputs of every op: producer op -> the distinct tensors read from it
    reads = []
    for op in ops:
        r = {}
        if op["node"] is not None:
            for t in nodes[op["node"]].input:
                if t in op_of_tensor:
                    r.setdefault(op_of_tensor[t], [])
                    if t not in r[op_of_tensor[t]]:
                        r[op_of_tensor[t]].append(t)
        reads.append(r)

    # --coarsen K: cheap element-wise ops join their producer's group
    group = list(range(len(ops)))
    size = [1] * len(ops)
    if coarsen > 1:
        for v, op in enumerate(ops):
            if op["node"] is None or op["type"] not in CHEAP or not reads[v]:
                continue
            gs = {group[u] for u in reads[v]}
            if len(gs) != 1:
                continue
            g = gs.pop()
            if ops[g]["node"] is None or size[g] >= coarsen:
                continue
            group[v] = g
            size[g] += 1
    members = {}
    for v in range(len(ops)):
        members.setdefault(group[v], []).append(v)
    heads = [v for v in range(len(ops)) if group[v] == v]
    if not heads:
        raise ConvertError("nothing is left to place: the model has no graph inputs and every node folds to a constant")

    # edges between groups, bytes of distinct tensors
    tbytes = {}
    for op in ops:
        if op["node"] is None:
            tbytes[op["outs"][0]] = op["bytes"]
        else:
            tbytes.update(op["sizes"])
    edges = {}   # (src head, dst head) -> set of tensors
    for v in range(len(ops)):
        for u, ts in reads[v].items():
            a, b = group[u], group[v]
            if a != b:
                edges.setdefault((a, b), set()).update(ts)
    graph_outs = {vi.name for vi in graph.output}

    # sources: each Constant or folded node goes with the first op written that reads it,
    # directly or through other folded nodes; a dead one with the last op written
    position = {h: k for k, h in enumerate(heads)}
    op_position = {ops[v]["node"]: position[group[v]] for v in range(len(ops)) if ops[v]["node"] is not None}
    readers_of = {}
    for i, nd in enumerate(nodes):
        for t in nd.input:
            readers_of.setdefault(t, []).append(i)
    goes_with = {}
    for i in reversed(order):
        if i in not_op:
            ps = [op_position[r] if r in op_position else goes_with.get(r)
                  for o in nodes[i].output for r in readers_of.get(o, ())]
            ps = [p for p in ps if p is not None]
            goes_with[i] = min(ps) if ps else None
    attached = [[] for _ in heads]
    for i in sorted(goes_with):
        attached[len(heads) - 1 if goes_with[i] is None else goes_with[i]].append(i)
    sources = []
    listed = []
    for k, h in enumerate(heads):
        own = [ops[v]["node"] for v in members[h]]
        if own == [None]:
            sources.append([ops[h]["outs"][0]])
            continue
        listed += own + attached[k]
        sources.append([source_name(nodes[i], i) for i in own + attached[k]])
    if sorted(listed) != list(range(n)):
        raise ConvertError("internal error: the source lists hold %d entries for %d nodes" % (len(listed), n))

    readers = {}   # tensor -> ops reading it
    for v in range(len(ops)):
        for ts in reads[v].values():
            for t in ts:
                readers.setdefault(t, []).append(v)
    out_ops = []
    final_name = {}
    nm2 = Names()
    for h in heads:
        mem = members[h]
        if len(mem) == 1:
            op = ops[h]
            final_name[h] = nm2.take(op["name"])
            out_ops.append((final_name[h], op["kind"], op["compute"], op["bytes"], None, op["weights"]))
            continue
        leaving = 0.0
        for v in mem:
            for t in ops[v]["outs"]:
                if t in graph_outs or any(group[c] != h for c in readers.get(t, ())):
                    leaving += tbytes[t]
        if leaving == 0:
            leaving = ops[mem[-1]]["bytes"]
        costliest = max(mem, key=lambda v: (ops[v]["compute"], -v))
        joined = "+".join(ops[v]["name"] for v in mem)
        if len(joined.encode("utf-8")) > MAX_NAME:
            suffix = "+%d_more" % (len(mem) - 1)
            joined = ops[h]["name"].encode("utf-8")[:MAX_NAME - len(suffix)].decode("utf-8", "ignore") + suffix
        final_name[h] = nm2.take(joined)
        out_ops.append((final_name[h], ops[costliest]["kind"], sum(ops[v]["compute"] for v in mem), leaving,
                        " ".join(ops[v]["name"] for v in mem),
                        list(dict.fromkeys(t for v in mem for t in ops[v]["weights"]))))

    lines = ["doppler-graph 1", header,
             "# %d ops (%d ONNX nodes: %d Constant, %d folded), %d edges; compute in FLOPs, bytes in bytes" % (
                 len(out_ops), n, len(const_nodes), len(folded), len(edges)),
             "units speed=%s bandwidth=%s" % (num(speed), num(bandwidth))]
    # weights: the known values the ops read, in the order of their first reader
    wname, wbytes = {}, {}
    wnames = Names()
    for o in out_ops:
        for t in o[5]:
            if t not in wname:
                wname[t] = wnames.take(t)
                wbytes[t] = weight_bytes(t)
    unsized = [t for t in wname if wbytes[t] is None]
    if unsized:
        warn("%s: warning: weight%s %s: data type of unknown element size, written with bytes=0" % (
            PROG, "s" if len(unsized) > 1 else "", ", ".join("'%s'" % t for t in unsized[:5]) +
            (" and %d more" % (len(unsized) - 5) if len(unsized) > 5 else "")))
        for t in unsized:
            wbytes[t] = 0
    wtotal = sum(wbytes.values())
    if wname:
        lines.append("# %d weights (initializers, Constant and folded values), %s bytes, held on every device that uses them" % (
            len(wname), num(wtotal)))
    for t, w in wname.items():
        lines.append("weight %s bytes=%s" % (w, num(wbytes[t])))
    for (name, kind, compute, nb, held, ws), src in zip(out_ops, sources):
        if held is not None:
            lines.append("# %s holds: %s" % (name, held))
        k = "opaque" if opaque else kind
        lines.append("op %s%s compute=%s bytes=%s%s source=%s" % (
            name, "" if k == "opaque" else " kind=" + k, num(compute), num(nb),
            " weights=" + ",".join(wname[t] for t in ws) if ws else "", ",".join(percent_encode(s) for s in src)))
    src_bytes = {}
    for h, o in zip(heads, out_ops):
        src_bytes[h] = o[3]
    for (a, b), ts in sorted(edges.items(), key=lambda e: (e[0][1], e[0][0])):
        eb = sum(tbytes[t] for t in ts)
        lines.append("edge %s %s%s" % (final_name[a], final_name[b], "" if eb == src_bytes[a] else " bytes=" + num(eb)))
    summary = {"ops": len(out_ops), "nodes": n, "constants": len(const_nodes), "folded": len(folded),
               "edges": len(edges), "compute": sum(o[2] for o in out_ops), "no_rule": no_rule,
               "weights": len(wname), "weight_bytes": wtotal}
    return "\n".join(lines) + "\n", summary


def num(x):
    """An exact short form: integers as integers, others with 17 digits."""
    if x == int(x) and abs(x) < 2 ** 53:
        return "%d" % int(x)
    return "%.17g" % x


def tensor_bytes(t, dims=None):
    """Bytes a TensorProto holds: element count x element size (dims: a sparse
    tensor's dense shape); strings: the bytes of their characters."""
    if t.data_type == 8:   # STRING
        return sum(len(x) for x in t.string_data)
    if t.data_type not in DTYPE_BYTES:
        return None        # an element size this script does not know
    n = prod(t.dims if dims is None else dims)
    return int(math.ceil(n * DTYPE_BYTES[t.data_type]))


def constant_bytes(node):
    """Bytes of a Constant node's value (from its attribute)."""
    for a in node.attribute:
        if a.name == "value":
            return tensor_bytes(a.t)
        if a.name == "sparse_value":
            return tensor_bytes(a.sparse_tensor.values, a.sparse_tensor.dims)
        if a.name == "value_float" or a.name == "value_int":
            return 4 if a.name == "value_float" else 8
        if a.name == "value_floats":
            return 4 * len(a.floats)
        if a.name == "value_ints":
            return 8 * len(a.ints)
        if a.name == "value_string":
            return len(a.s)
        if a.name == "value_strings":
            return sum(len(x) for x in a.strings)
    return 0


def node_flops(node, who, numel, shape, known, no_rule):
    """(FLOPs, doppler kind) of one node by the rules in the module doc."""
    t = node.op_type
    out = node.output[0]
    kind = KIND.get(t, "opaque") if node.domain in ("", "ai.onnx", "com.microsoft") else "opaque"
    ins = list(node.input)

    def in_shape(k):
        if k >= len(ins) or not ins[k]:
            raise ConvertError("%s: input %d is missing" % (who, k))
        return shape(ins[k], who)[1]

    if t in ("Mul", "Div") and kind == "mul":
        if any(x in known and known[x].size() == 1 for x in ins[:2]) and not all(x in known for x in ins[:2]):
            kind = "scale"
    if t in ("MatMul", "MatMulInteger"):
        a = in_shape(0)
        k = a[-1] if a else 1
        return 2 * numel(out, who) * k, kind
    if t == "Gemm":
        a = in_shape(0)
        if len(a) != 2:
            raise ConvertError("%s: A has rank %d, Gemm needs 2" % (who, len(a)))
        k = a[0] if attr(node, "transA", 0) else a[1]
        return 2 * numel(out, who) * k, kind
    if t in ("Conv", "ConvTranspose"):
        x, w = in_shape(0), in_shape(1)
        group = attr(node, "group", 1)
        if len(x) >= 2 and group > 1 and group == x[1]:
            kind = "opaque"          # depthwise: memory-bound, no GEMM to speak of
        if t == "Conv":
            return 2 * numel(out, who) * prod(w[1:]), kind
        return 2 * prod(x) * prod(w[1:]), kind
    if t in ROWWISE5:
        return 5 * numel(out, who), kind
    if t in ROWWISE4:
        return 4 * numel(out, who), kind
    if t == "BatchNormalization":
        return 2 * numel(out, who), kind
    if t in TRANSCENDENTAL:
        return 4 * numel(out, who), kind
    if t in ELEMENTWISE:
        return numel(out, who), kind
    if t in REDUCTIONS:
        return prod(in_shape(0)), kind
    if t in POOLS:
        ks = attr(node, "kernel_shape")
        if not ks:
            raise ConvertError("%s: no kernel_shape" % who)
        return numel(out, who) * prod(ks), kind
    if t in COPIES:
        return sum(numel(o, who) for o in node.output if o), kind
    if t in VIEWS:
        return 0, kind
    no_rule[t] = no_rule.get(t, 0) + 1
    return sum(numel(o, who) for o in node.output if o), kind


def parse_args(argv):
    import argparse
    ap = argparse.ArgumentParser(
        prog="onnx2dpg.py", description="Convert an ONNX model into a doppler graph (native .dpg format).",
        epilog="The rules (what becomes an op, FLOPs per op type, kinds) are in this script's top comment.")
    ap.add_argument("model", help="the ONNX model file")
    ap.add_argument("-o", "--out", required=True, help="the graph to write (native format)")
    ap.add_argument("--batch", type=int, help="the graph inputs' first dimension: binds a symbolic or unknown one, "
                                              "rescales a fixed one (refused where the model does not follow)")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                    help="size of the symbolic dimension NAME (repeatable)")
    ap.add_argument("--coarsen", type=int, default=1, metavar="K",
                    help="merge cheap element-wise ops into their producer, at most K nodes per op (default 1: off)")
    ap.add_argument("--opaque", action="store_true", help="write every op as kind opaque (for doppler exec)")
    ap.add_argument("--no-weights", dest="weights", action="store_false",
                    help="write no weights (by default every initializer, Constant or folded value an op reads "
                         "as data is a weight: resident bytes held on each device running an op that reads it)")
    ap.add_argument("--speed", type=float, default=1e9, help="units speed: FLOPs per time unit of a default device (1e9)")
    ap.add_argument("--bandwidth", type=float, default=1e10, help="units bandwidth: bytes per time unit of a default link (1e10)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    a = ap.parse_args(argv)
    dims = {}
    for d in a.dim:
        k, eq, v = d.partition("=")
        if not eq or not k or not v.isdigit() or int(v) < 1:
            ap.error("--dim '%s': expected NAME=VALUE with VALUE a positive integer" % d)
        dims[k] = int(v)
    if a.batch is not None and a.batch < 1:
        ap.error("--batch %d: must be positive" % a.batch)
    if a.coarsen < 1:
        ap.error("--coarsen %d: must be at least 1" % a.coarsen)
    for what, x in (("--speed", a.speed), ("--bandwidth", a.bandwidth)):
        if not (x > 0 and x != float("inf")):
            ap.error("%s %g: must be positive and finite" % (what, x))
    a.dims = dims
    return a


def main(argv):
    a = parse_args(argv)
    find_onnx()
    t0 = time.time()
    try:
        text, s = convert(a.model, a.batch, a.dims, a.coarsen, a.opaque, a.speed, a.bandwidth, weights=a.weights)
    except ConvertError as e:
        sys.stderr.write("%s: %s: %s\n" % (PROG, a.model, e))
        return 1
    except OSError as e:
        sys.stderr.write("%s: %s: %s\n" % (PROG, a.model, e))
        return 1
    tmp = a.out + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, a.out)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        sys.stderr.write("%s: %s: %s\n" % (PROG, a.out, e))
        return 1
    if not a.quiet:
        print("%s: %d ops from %d ONNX nodes (%d Constant, %d folded), %d edges, %.6g FLOPs, %d weights of %.6g bytes "
              "-> %s (%.2f s)" % (PROG, s["ops"], s["nodes"], s["constants"], s["folded"], s["edges"], s["compute"],
                                  s["weights"], s["weight_bytes"], a.out, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
