#!/usr/bin/env python3
"""bench/torch_gpu.py - the user's alternative on the same GPU: PyTorch's
figures that bench/gpu.sh sets beside the CUDA executor's (bench/RESULTS.md,
part 6). One line per figure, "key value unit", for the script to join:

  matmul N PREC    TFLOP/s of an N x N x N product (2 N^3 flops), PREC fp32
                   (TF32 off), tf32 (allow_tf32), bf16 (bf16 inputs, bf16
                   output as torch gives it), median of 20 timed products
                   after 5 warm-up ones, CUDA events around each
  copy MB          device-to-device copy of an MB-megabyte float tensor
                   (out.copy_(x)), GB/s of bytes copied (read + write is
                   twice that), median of 20
  chain eager|graph  us per op of a dependent chain of 2000 tiny kernels
                   (x = x + 1 on 256 floats), eagerly and replayed as one
                   CUDA graph
  ffnn|chainmm DIM MODE  ms of the workload as 'doppler gen' defines it at
                   dim DIM: chainmm multiplies 4 DIM x DIM matrices (3
                   products, left to right), ffnn applies 3 layers
                   relu(X W) to a BATCH x DIM input (batch 64 at dim 256,
                   DIM at 4096), MODE eager or graph (one CUDA graph
                   replay), TF32 for the products; median of 20

Prints "skipped: REASON" and exits 0 without torch or without a GPU.

    python3 bench/torch_gpu.py [--quick]
"""
import statistics
import sys


def main():
    try:
        import torch
    except Exception as ex:  # no torch at all
        print(f"skipped: no torch ({ex})")
        return 0
    if not torch.cuda.is_available():
        print("skipped: torch sees no CUDA device")
        return 0
    quick = "--quick" in sys.argv
    reps = 5 if quick else 20
    dev = torch.device("cuda")
    print(f"device {torch.cuda.get_device_name(0)}")
    print(f"torch {torch.__version__} cuda {torch.version.cuda}")

    def timed(fn, n=reps, warm=5):
        for _ in range(warm):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(n):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) / 1e3)
        return statistics.median(ts)

    def tf32(on):
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on

    gen = torch.Generator(device=dev).manual_seed(1)
    for n in (1024, 4096):
        for prec in ("fp32", "tf32", "bf16"):
            dt = torch.bfloat16 if prec == "bf16" else torch.float32
            a = torch.rand(n, n, device=dev, generator=gen).to(dt)
            b = torch.rand(n, n, device=dev, generator=gen).to(dt)
            tf32(prec == "tf32")
            s = timed(lambda: torch.mm(a, b))
            print(f"matmul {n} {prec} {2.0 * n ** 3 / s / 1e12:.1f} TFLOP/s")
    tf32(True)

    for mb in (16, 256):
        x = torch.rand(mb * 2 ** 18, device=dev, generator=gen)
        y = torch.empty_like(x)
        s = timed(lambda: y.copy_(x))
        print(f"copy {mb} {mb * 2 ** 20 / s / 1e9:.0f} GB/s")

    x0 = torch.zeros(256, device=dev)
    ops = 2000

    def chain():
        x = x0
        for _ in range(ops):
            x = x + 1
        return x
    s = timed(chain, n=5 if quick else 10, warm=2)
    print(f"chain eager {s / ops * 1e6:.2f} us/op")
    st = torch.cuda.Stream()
    st.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(st):
        chain()
    torch.cuda.current_stream().wait_stream(st)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        chain()
    s = timed(g.replay, n=5 if quick else 10, warm=2)
    print(f"chain graph {s / ops * 1e6:.2f} us/op")

    for dim in (256, 4096):
        batch = 64 if dim == 256 else dim
        mats = [torch.rand(dim, dim, device=dev, generator=gen) for _ in range(4)]
        xin = torch.rand(batch, dim, device=dev, generator=gen)
        ws = [torch.rand(dim, dim, device=dev, generator=gen) for _ in range(3)]

        def chainmm():
            r = mats[0]
            for m in mats[1:]:
                r = r @ m
            return r

        def ffnn():
            h = xin
            for w in ws:
                h = torch.relu(h @ w)
            return h
        for name, fn in (("chainmm", chainmm), ("ffnn", ffnn)):
            print(f"{name} {dim} eager {timed(fn) * 1e3:.4f} ms")
            st = torch.cuda.Stream()
            st.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(st):
                for _ in range(3):
                    fn()
            torch.cuda.current_stream().wait_stream(st)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                fn()
            print(f"{name} {dim} graph {timed(g.replay) * 1e3:.4f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
