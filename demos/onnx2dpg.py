#!/usr/bin/env python3
"""onnx2dpg.py - convert an ONNX model into a doppler graph (native format).

usage: demos/onnx2dpg.py MODEL.onnx -o GRAPH.dpg [--batch N] [--dim NAME=VALUE ...]
                         [--coarsen K] [--opaque] [--no-weights] [--speed S] [--bandwidth B]

Reads MODEL with the `onnx` package (Debian: python3-onnx, which installs
for /usr/bin/python3: when the python3 running this script cannot import
onnx, the script runs itself again with /usr/bin/python3), binds the
symbolic dimensions of the graph inputs (--batch N: a symbolic or unknown
first dimension of every graph input; --dim NAME=VALUE: the dimension named
NAME anywhere), runs ONNX shape inference, and writes one op per ONNX node.

What becomes what
- A node is an op named after the node (its op type and index when it has
  no name; characters the format does not allow become '_').
- A graph input (not an initializer) is a zero-cost source op of kind
  input, bytes = its tensor's size. Initializers and Constant nodes are not
  ops: weights are taken to be wherever their consumer runs, so they cost
  neither compute nor transfers.
- Weights (resident memory): every initializer (dense or sparse) and every
  Constant node's output that a node reads becomes a `weight NAME bytes=B`
  record (B = element count x the dtype's element size, rounded up for
  4-bit types; a sparse initializer counts as dense; strings: the bytes of
  their characters), and every op reading it lists it in `weights=W1,...`.
  A tensor several ops read is one weight used by each: doppler holds it
  once on every device that runs one of them (replicated), for the whole
  run. Weight names follow the op names' rule (disallowed characters
  become '_', at most 127 bytes, '_2', '_3', ... where two would clash).
  Initializers no node reads are left out. --no-weights writes none (the
  graph as before weights existed). Weights change nothing else written:
  ops, FLOPs, bytes and edges are the same with and without them.
- An edge u -> v for every producer u of a tensor v consumes; its bytes are
  the sizes of the distinct tensors of u that v reads. An op's bytes are the
  sizes of all of its node's outputs (shape from inference times the dtype's
  size).
- Kinds: MatMul, Gemm, MatMulInteger -> matmul; Add, Sub, Sum -> add; Mul,
  Div -> mul (scale when the other operand is a one-element constant);
  Relu -> relu; Gelu, FastGelu -> gelu; Softmax, LogSoftmax -> softmax;
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
a cycle, a node with subgraphs, a shape inference cannot find) give exit
status 1 and a message naming the node; no output file is written (the
graph goes to GRAPH.tmp and is renamed at the end).
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


def bind_dims(graph, batch, dims, init_names):
    """Sets symbolic dimensions: --dim NAME=VALUE everywhere, --batch N on the
    first dimension of the graph inputs. Returns the names seen and used."""
    bound = dict(dims)
    for vi in graph.input:
        if vi.name in init_names or vi.type.WhichOneof("value") != "tensor_type":
            continue
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            continue
        for i, d in enumerate(tt.shape.dim):
            w = d.WhichOneof("value")
            if i == 0 and batch is not None and w != "dim_value":
                if w == "dim_param" and d.dim_param in dims:
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
    return used


def unbound_input_dims(graph, init_names):
    """[(dim name or None, input name, index)] of the graph inputs' free dims."""
    out = []
    for vi in graph.input:
        if vi.name in init_names:
            continue
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


def convert(path, batch=None, dims=None, coarsen=1, opaque=False, speed=1e9, bandwidth=1e10, warn=None,
            weights=True):
    """Returns the text of the native graph and a summary dict."""
    import onnx
    from onnx import shape_inference
    dims = dims or {}
    warn = warn or (lambda s: sys.stderr.write(s + "\n"))
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as e:   # protobuf decode errors have several types
        raise ConvertError("not a readable ONNX model: %s" % (str(e).strip() or type(e).__name__))
    graph = model.graph
    if len(graph.node) == 0:
        raise ConvertError("the model's graph has no nodes")
    init_names = {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    for i, node in enumerate(graph.node):
        for a in node.attribute:
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                raise ConvertError("%s: ops with subgraphs (%s) are not supported" % (node_label(node, i), SUBGRAPH_OPS))
    used = bind_dims(graph, batch, dims, init_names)
    for name in dims:
        if name not in used:
            warn("%s: warning: --dim %s: no graph input, output or value_info has a dimension named '%s'" % (PROG, name, name))

    try:
        inferred = shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception as e:
        raise ConvertError("shape inference failed: %s" % str(e).strip())
    graph = inferred.graph

    # what we know about every tensor: name -> (dtype, dims)
    info = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        dt, ds = tensor_type(vi)
        if dt is not None and (vi.name not in info or info[vi.name][1] is None):
            info[vi.name] = (dt, ds)
    consts = {}                 # constant tensors (initializers, Constant outputs): name -> numel
    const_bytes = {}            # the same: name -> bytes held (the weights)
    for t in graph.initializer:
        info[t.name] = (t.data_type, list(t.dims))
        consts[t.name] = prod(t.dims)
        const_bytes[t.name] = tensor_bytes(t)
    for t in graph.sparse_initializer:
        info[t.values.name] = (t.values.data_type, list(t.dims))
        consts[t.values.name] = prod(t.dims)
        const_bytes[t.values.name] = tensor_bytes(t.values, t.dims)

    nodes = list(graph.node)
    producer = {}               # tensor -> index of the node making it
    is_const_node = [False] * len(nodes)
    for i, node in enumerate(nodes):
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            is_const_node[i] = True
            for o in node.output:
                if o:
                    const_bytes[o] = constant_bytes(node)
                if o in info and info[o][1] is not None:
                    consts[o] = prod(d for d in info[o][1] if isinstance(d, int))
                else:
                    consts[o] = 1
        for o in node.output:
            if not o:
                continue
            if o in producer:
                raise ConvertError("%s: output '%s' is also produced by %s" % (node_label(node, i), o, node_label(nodes[producer[o]], producer[o])))
            if o in init_names:
                raise ConvertError("%s: output '%s' is also an initializer" % (node_label(node, i), o))
            producer[o] = i
    graph_inputs = [vi for vi in graph.input if vi.name not in init_names]
    input_names = {vi.name for vi in graph_inputs}
    for i, node in enumerate(nodes):
        for t in node.input:
            if t and t not in producer and t not in input_names and t not in consts:
                raise ConvertError("%s: input '%s' is produced by no node and is no initializer or graph input" % (node_label(node, i), t))
    consumed = set(t for n in nodes for t in n.input if t) | {vi.name for vi in graph.output}

    # the shape of a tensor, or an error naming the node and the --dim to pass
    free = unbound_input_dims(graph, init_names)
    strict_msg = []

    def strict_diagnosis():
        if not strict_msg:
            try:
                shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
                strict_msg.append("")
            except Exception as e:
                strict_msg.append(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
        return strict_msg[0]

    def shape(t, who, required=True):
        dt, ds = info.get(t, (None, None))
        problem = None
        if ds is None:
            problem = "shape inference found no shape for '%s'" % t
        else:
            sym = [d for d in ds if not isinstance(d, int)]
            if sym:
                # onnx names the dimensions it could not compute unk__N
                named = [d for d in dict.fromkeys(sym) if d and not d.startswith("unk__")]
                if named:
                    firsts = {d for d, _, i in free if i == 0}
                    problem = "'%s' has symbolic dimension%s %s: pass %s" % (
                        t, "s" if len(named) > 1 else "", ", ".join("'%s'" % d for d in named),
                        " ".join("--dim %s=VALUE%s" % (d, " (or --batch N)" if d in firsts else "") for d in named))
                else:
                    problem = ("shape inference could not compute the size of a dimension of '%s' "
                               "(it depends on values known only at run time)" % t)
        if problem is None and dt not in DTYPE_BYTES:
            problem = "'%s' has data type %d, whose element size is not fixed (strings) or unknown" % (t, dt)
        if problem is None:
            return dt, ds
        if not required:
            return None
        msg = "%s: %s" % (who, problem)
        if ds is None or "symbolic" not in problem:
            if free:
                msg += "; the graph inputs have free dimensions: " + dim_hint(free)
            else:
                d = strict_diagnosis()
                msg += "; ONNX shape inference (onnx %s) says: %s" % (onnx.__version__, d or "nothing (the op type may have no shape function)")
        raise ConvertError(msg)

    def numel(t, who):
        return prod(shape(t, who)[1])

    def nbytes(t, who):
        dt, ds = shape(t, who)
        return DTYPE_BYTES[dt] * prod(ds)

    # topological order of the nodes (the file's order where it is one)
    n = len(nodes)
    preds = [set() for _ in range(n)]
    for i, node in enumerate(nodes):
        for t in node.input:
            if t in producer:
                preds[i].add(producer[t])
    order = []
    if all(p < i for i in range(n) for p in preds[i]):
        order = list(range(n))
    else:
        import heapq
        succ = [[] for _ in range(n)]
        indeg = [len(preds[i]) for i in range(n)]
        for i in range(n):
            for p in preds[i]:
                succ[p].append(i)
        heap = [i for i in range(n) if indeg[i] == 0]
        heapq.heapify(heap)
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

    # ops: graph inputs, then the nodes (Constant nodes are not ops)
    names = Names()
    ops = []          # dicts: name, kind, compute, out (tensors), types (op types), members
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
                    "outs": [vi.name], "members": [vi.name], "type": None, "node": None, "weights": []})
        op_of_tensor[vi.name] = len(ops) - 1
    no_rule = {}
    for i in order:
        node = nodes[i]
        if is_const_node[i]:
            continue
        who = node_label(node, i)
        outs = [o for o in node.output if o]
        if not outs:
            raise ConvertError("%s has no outputs" % who)
        sizes = {}
        for o in outs:
            s = shape(o, who, required=o in consumed)
            sizes[o] = DTYPE_BYTES[s[0]] * prod(s[1]) if s else 0
        flops, kind = node_flops(node, who, numel, shape, consts, no_rule)
        name = names.take(node.name or "%s_%d" % (node.op_type, i))
        ws = [t for t in dict.fromkeys(node.input) if t in const_bytes] if weights else []
        ops.append({"name": name, "kind": kind, "compute": float(flops), "bytes": float(sum(sizes.values())),
                    "outs": outs, "sizes": sizes, "members": [name], "type": node.op_type, "node": i,
                    "weights": ws})
        for o in outs:
            op_of_tensor[o] = len(ops) - 1
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

    lines = ["doppler-graph 1",
             "# %s, converted by onnx2dpg.py%s%s%s" % (
                 os.path.basename(path), " --batch %d" % batch if batch is not None else "",
                 "".join(" --dim %s=%d" % kv for kv in sorted(dims.items())),
                 " --coarsen %d" % coarsen if coarsen > 1 else ""),
             "# %d ops (%d ONNX nodes), %d edges; compute in FLOPs, bytes in bytes" % (len(out_ops), n, len(edges)),
             "units speed=%s bandwidth=%s" % (num(speed), num(bandwidth))]
    # weights: the constant tensors the ops read, in the order of their first reader
    wname = {}
    wnames = Names()
    for o in out_ops:
        for t in o[5]:
            if t not in wname:
                wname[t] = wnames.take(t)
    unsized = [t for t in wname if const_bytes[t] is None]
    if unsized:
        warn("%s: warning: weight%s %s: data type of unknown element size, written with bytes=0" % (
            PROG, "s" if len(unsized) > 1 else "", ", ".join("'%s'" % t for t in unsized[:5]) +
            (" and %d more" % (len(unsized) - 5) if len(unsized) > 5 else "")))
        for t in unsized:
            const_bytes[t] = 0
    wtotal = sum(const_bytes[t] for t in wname)
    if wname:
        lines.append("# %d weights (initializers and Constant outputs), %s bytes, held on every device that uses them" % (
            len(wname), num(wtotal)))
    for t, w in wname.items():
        lines.append("weight %s bytes=%s" % (w, num(const_bytes[t])))
    for name, kind, compute, nb, held, ws in out_ops:
        if held is not None:
            lines.append("# %s holds: %s" % (name, held))
        k = "opaque" if opaque else kind
        lines.append("op %s%s compute=%s bytes=%s%s" % (name, "" if k == "opaque" else " kind=" + k, num(compute), num(nb),
                                                       " weights=" + ",".join(wname[t] for t in ws) if ws else ""))
    src_bytes = {}
    for h, o in zip(heads, out_ops):
        src_bytes[h] = o[3]
    for (a, b), ts in sorted(edges.items(), key=lambda e: (e[0][1], e[0][0])):
        eb = sum(tbytes[t] for t in ts)
        lines.append("edge %s %s%s" % (final_name[a], final_name[b], "" if eb == src_bytes[a] else " bytes=" + num(eb)))
    summary = {"ops": len(out_ops), "nodes": n, "edges": len(edges),
               "compute": sum(o[2] for o in out_ops), "no_rule": no_rule,
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


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            import onnx
            return onnx.helper.get_attribute_value(a)
    return default


def node_flops(node, who, numel, shape, consts, no_rule):
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
        if any(x in consts and consts[x] == 1 for x in ins[:2]) and not all(x in consts for x in ins[:2]):
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
    if t == "Conv":
        w = in_shape(1)
        return 2 * numel(out, who) * prod(w[1:]), kind
    if t == "ConvTranspose":
        x, w = in_shape(0), in_shape(1)
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
    ap.add_argument("--batch", type=int, help="size of the graph inputs' symbolic or unknown first dimension")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                    help="size of the symbolic dimension NAME (repeatable)")
    ap.add_argument("--coarsen", type=int, default=1, metavar="K",
                    help="merge cheap element-wise ops into their producer, at most K nodes per op (default 1: off)")
    ap.add_argument("--opaque", action="store_true", help="write every op as kind opaque (for doppler exec)")
    ap.add_argument("--no-weights", dest="weights", action="store_false",
                    help="write no weights (by default every initializer and Constant a node reads is a weight: "
                         "resident bytes held on each device running an op that reads it)")
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
        print("%s: %d ops from %d ONNX nodes, %d edges, %.6g FLOPs, %d weights of %.6g bytes -> %s (%.2f s)" % (
            PROG, s["ops"], s["nodes"], s["edges"], s["compute"], s["weights"], s["weight_bytes"], a.out,
            time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
