#!/usr/bin/env python3
"""onnx_models.py - small ONNX models built with onnx.helper (no download).

usage: demos/onnx_models.py mlp|llama-block|convnet|chain -o MODEL.onnx
           [--dim D] [--heads H] [--ffn F] [--layers L] [--nodes N]

  mlp          X[batch, 64] -> MatMul+Add+Relu (128) -> Gemm (10) -> Softmax
  llama-block  x[batch, seq, D]: RMSNorm as Pow, ReduceMean, Add, Sqrt, Div,
               Mul (as torch.onnx.export writes it), Q/K/V projections, H
               heads (Reshape, Transpose), scores, scale, Softmax, weighted
               sum, output projection, residual; RMSNorm, gated SiLU MLP
               (Sigmoid, Mul) of width F, residual. --layers L stacks L blocks.
  convnet      X[batch, 3, 16, 16] -> Conv 3x3 (8) -> Relu -> MaxPool 2 ->
               Conv 3x3 (16, 2 groups) -> Relu -> GlobalAveragePool ->
               Flatten -> Gemm (10)
  chain        X[batch, 16] -> N alternating Relu and Add-a-bias nodes

Dimensions batch and seq stay symbolic: bind them when converting
(demos/onnx2dpg.py MODEL -o G --batch 1 --dim seq=128). Weights are
initializers filled with zeros (only their shapes matter to doppler).
The tests (tests/test_onnx.py) and graphs/onnx_llama_block.dpg use these.
"""
import sys

OPSET = 17   # LayerNormalization exists; ReduceMean takes axes as an attribute


def _h():
    import onnx
    from onnx import helper, TensorProto
    return onnx, helper, TensorProto


def _zeros(name, dims):
    onnx, helper, TensorProto = _h()
    n = 1
    for d in dims:
        n *= d
    return helper.make_tensor(name, TensorProto.FLOAT, dims, [0.0] * n)


def _ints(name, vals):
    onnx, helper, TensorProto = _h()
    return helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals)


def _scalar(name, v):
    onnx, helper, TensorProto = _h()
    return helper.make_tensor(name, TensorProto.FLOAT, [], [v])


def _model(nodes, inputs, outputs, inits, name):
    onnx, helper, TensorProto = _h()
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, producer_name="doppler onnx_models.py",
                          opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m


def mlp(width=64, hidden=128, classes=10):
    onnx, helper, TensorProto = _h()
    N = helper.make_node
    nodes = [
        N("MatMul", ["X", "W1"], ["h1"], name="fc1"),
        N("Add", ["h1", "b1"], ["h1b"], name="fc1_bias"),
        N("Relu", ["h1b"], ["a1"], name="relu1"),
        N("Gemm", ["a1", "W2", "b2"], ["logits"], name="fc2", transB=1),
        N("Softmax", ["logits"], ["Y"], name="softmax", axis=-1),
    ]
    inits = [_zeros("W1", [width, hidden]), _zeros("b1", [hidden]),
             _zeros("W2", [classes, hidden]), _zeros("b2", [classes])]
    return _model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", width])],
                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", classes])], inits, "mlp")


def _rmsnorm(nodes, inits, tag, x):
    onnx, helper, TensorProto = _h()
    N = helper.make_node
    nodes += [
        N("Pow", [x, "two"], [tag + "_sq"], name=tag + "_pow"),
        N("ReduceMean", [tag + "_sq"], [tag + "_ms"], name=tag + "_mean", axes=[-1], keepdims=1),
        N("Add", [tag + "_ms", "eps"], [tag + "_mse"], name=tag + "_eps"),
        N("Sqrt", [tag + "_mse"], [tag + "_rms"], name=tag + "_sqrt"),
        N("Div", [x, tag + "_rms"], [tag + "_xn"], name=tag + "_div"),
        N("Mul", [tag + "_xn", tag + "_g"], [tag + "_out"], name=tag + "_scale"),
    ]
    return tag + "_out"


def llama_block(dim=32, heads=2, ffn=64, layers=1):
    """L Llama-style blocks on x[batch, seq, dim]."""
    onnx, helper, TensorProto = _h()
    if dim % heads:
        raise ValueError("dim %d is not a multiple of heads %d" % (dim, heads))
    hd = dim // heads
    N = helper.make_node
    nodes, inits = [], [_scalar("two", 2.0), _scalar("eps", 1e-6), _scalar("inv_sqrt_hd", hd ** -0.5),
                        _ints("heads_shape", [0, 0, heads, hd]), _ints("model_shape", [0, 0, dim])]
    x = "x"
    for l in range(layers):
        p = "L%d" % l
        for w, shp in (("Wq", [dim, dim]), ("Wk", [dim, dim]), ("Wv", [dim, dim]), ("Wo", [dim, dim]),
                       ("Wgate", [dim, ffn]), ("Wup", [dim, ffn]), ("Wdown", [ffn, dim])):
            inits.append(_zeros("%s_%s" % (p, w), shp))
        inits += [_zeros(p + "_attn_norm_g", [dim]), _zeros(p + "_mlp_norm_g", [dim])]
        n1 = _rmsnorm(nodes, inits, p + "_attn_norm", x)
        for t in "qkv":
            nodes.append(N("MatMul", [n1, "%s_W%s" % (p, t)], ["%s_%s" % (p, t)], name="%s_%s_proj" % (p, t)))
            nodes.append(N("Reshape", ["%s_%s" % (p, t), "heads_shape"], ["%s_%s4" % (p, t)], name="%s_%s_heads" % (p, t)))
        nodes += [
            N("Transpose", [p + "_q4"], [p + "_qh"], name=p + "_q_T", perm=[0, 2, 1, 3]),
            N("Transpose", [p + "_k4"], [p + "_kh"], name=p + "_k_T", perm=[0, 2, 3, 1]),
            N("Transpose", [p + "_v4"], [p + "_vh"], name=p + "_v_T", perm=[0, 2, 1, 3]),
            N("MatMul", [p + "_qh", p + "_kh"], [p + "_scores"], name=p + "_scores"),
            N("Mul", [p + "_scores", "inv_sqrt_hd"], [p + "_scaled"], name=p + "_scale"),
            N("Softmax", [p + "_scaled"], [p + "_probs"], name=p + "_softmax", axis=-1),
            N("MatMul", [p + "_probs", p + "_vh"], [p + "_ctx"], name=p + "_context"),
            N("Transpose", [p + "_ctx"], [p + "_ctxT"], name=p + "_ctx_T", perm=[0, 2, 1, 3]),
            N("Reshape", [p + "_ctxT", "model_shape"], [p + "_ctx2"], name=p + "_ctx_merge"),
            N("MatMul", [p + "_ctx2", p + "_Wo"], [p + "_attn"], name=p + "_o_proj"),
            N("Add", [x, p + "_attn"], [p + "_h"], name=p + "_residual1"),
        ]
        n2 = _rmsnorm(nodes, inits, p + "_mlp_norm", p + "_h")
        out = "y" if l == layers - 1 else p + "_out"
        nodes += [
            N("MatMul", [n2, p + "_Wgate"], [p + "_gate"], name=p + "_gate_proj"),
            N("MatMul", [n2, p + "_Wup"], [p + "_up"], name=p + "_up_proj"),
            N("Sigmoid", [p + "_gate"], [p + "_sig"], name=p + "_sigmoid"),
            N("Mul", [p + "_gate", p + "_sig"], [p + "_silu"], name=p + "_silu"),
            N("Mul", [p + "_silu", p + "_up"], [p + "_glu"], name=p + "_glu"),
            N("MatMul", [p + "_glu", p + "_Wdown"], [p + "_mlp"], name=p + "_down_proj"),
            N("Add", [p + "_h", p + "_mlp"], [out], name=p + "_residual2"),
        ]
        x = out
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", dim])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", dim])], inits,
                  "llama_block")


def convnet():
    onnx, helper, TensorProto = _h()
    N = helper.make_node
    nodes = [
        N("Conv", ["X", "C1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("Relu", ["c1"], ["r1"], name="relu1"),
        N("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        N("Conv", ["p1", "C2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2),
        N("Relu", ["c2"], ["r2"], name="relu2"),
        N("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        N("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        N("Gemm", ["flat", "Wfc", "bfc"], ["Y"], name="fc", transB=1),
    ]
    inits = [_zeros("C1", [8, 3, 3, 3]), _zeros("C2", [16, 4, 3, 3]), _zeros("Wfc", [10, 16]), _zeros("bfc", [10])]
    return _model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 3, 16, 16])],
                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 10])], inits, "convnet")


def chain(n=10000, width=16):
    """n nodes in a chain: Relu, Add(bias), Relu, Add(bias), ..."""
    onnx, helper, TensorProto = _h()
    N = helper.make_node
    nodes, prev = [], "X"
    for i in range(n):
        out = "Y" if i == n - 1 else "t%d" % i
        if i % 2 == 0:
            nodes.append(N("Relu", [prev], [out], name="relu%d" % i))
        else:
            nodes.append(N("Add", [prev, "bias"], [out], name="add%d" % i))
        prev = out
    return _model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", width])],
                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", width])],
                  [_zeros("bias", [width])], "chain")


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="onnx_models.py", description="Write a small ONNX model built with onnx.helper.")
    ap.add_argument("model", choices=["mlp", "llama-block", "convnet", "chain"])
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--dim", type=int, default=32, help="llama-block: model width (32)")
    ap.add_argument("--heads", type=int, default=2, help="llama-block: attention heads (2)")
    ap.add_argument("--ffn", type=int, default=64, help="llama-block: MLP width (64)")
    ap.add_argument("--layers", type=int, default=1, help="llama-block: blocks (1)")
    ap.add_argument("--nodes", type=int, default=10000, help="chain: nodes (10000)")
    a = ap.parse_args(argv)
    try:
        import onnx
    except ImportError:
        sys.exit("onnx_models.py: the Python package 'onnx' is missing (Debian/Ubuntu: apt-get install "
                 "python3-onnx, for /usr/bin/python3; elsewhere: python3 -m pip install onnx)")
    m = {"mlp": mlp, "convnet": convnet,
         "llama-block": lambda: llama_block(a.dim, a.heads, a.ffn, a.layers),
         "chain": lambda: chain(a.nodes)}[a.model]()
    onnx.save(m, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
