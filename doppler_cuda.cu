/* doppler_cuda.cu - the CUDA companion of doppler.h: the CUDA stream executor.

   C ABI declared in doppler.h (>>api-cuda): device discovery, a self-test,
   dp_exec_cuda (run a placed graph on the GPUs), dp_calibrate_cuda (measure
   them into a cluster file); the executor's machinery for one MPI rank's
   devices (dp__cu_rank_open, >>cuda-rank: the MPI executor on GPUs); and a
   host emulation of the GPU kernels for tests (dp__cuda_host_kernel; these
   declared in doppler.h's >>internal). This
   file includes doppler.h WITHOUT DOPPLER_IMPLEMENTATION (the program's C
   file compiles it); it calls functions of the library (dp_check,
   dp_dispatch, dp_op_time, dp_exec_op_bytes, dp__fail, ...), so link it
   with one C file that defines DOPPLER_IMPLEMENTATION:

       nvcc -O2 -I. -o prog prog.c doppler_cuda.cu -lpthread

   Build it without --use_fast_math: the kernels rely on IEEE float
   division and square root to match the CPU kernels.

   THE EXECUTOR (dp_exec_cuda)
   - Logical devices: the cluster's device d runs on GPU d % G, G the GPUs
     used (opts->gpus, 0 -> all present, at most the logical devices). Each
     logical device has its own compute stream. Where several share a GPU,
     each gets a partition of its SMs (>>cuda-partitions): the driver API's
     green contexts, its functions found through the runtime's
     cudaGetDriverEntryPointByVersion (in the versions of the cuda.h it is
     built with; no -lcuda) into a table held by the call's state: the GPU's SM resource
     (cuDeviceGetDevResource) split (cuDevSmResourceSplitByCount: once into
     like groups, or one group at a time from the remainder when the sizes
     differ) into the sizes dp__cu_partition gives from the devices'
     speeds, a green context per part (cuDevResourceGenerateDesc,
     cuGreenCtxCreate) and the device's compute stream made in it
     (cuGreenCtxStreamCreate; a CUstream is a cudaStream_t, so launches,
     pool allocations and events go through the runtime as before). Each
     launch is then capped at the partition's resident blocks. Where that
     cannot be (no entry points, no SM partitioning, too many devices for
     the minimum partition, a failed call) the GPU is shared as before: each
     launch capped at (resident blocks of the GPU) / (logical devices on
     it), a share, not a partition; dp_exec_result.sharing and sharing_note
     say which and why (the library prints nothing). Every kernel loops over
     its work with a grid stride and computes each output element the same
     way whatever the grid, so the outputs do not depend on the sharing.
   - Dispatch: dp_dispatch (doppler.h, >>dispatch), the runtime model's
     dispatcher, on the calling thread, with the hooks below: one op at a
     time per logical device, FIFO or priority, work-conserving. launch
     allocates the op's output from the GPU's pool on the compute stream,
     makes the stream wait for the copies of its remote inputs (their
     events), enqueues the kernel(s) and records an end event; the op
     joins the list of work in flight. wait polls the end events of that
     list (cudaEventQuery) until some have completed or the
     deadline (copies held to their modelled arrival) has passed, yielding
     the CPU between rounds. Polling replaced a host function per op
     (cudaLaunchHostFunc waking a condition variable), which on an H100
     cost 30 to 60 us per op, more than dim-256 kernels take
     (bench/RESULTS.md part 6). A faulting kernel makes its event's query
     fail, so a failure ends the run instead of hanging it.
   - Static dispatch (opts->dispatch DP_DISPATCH_STATIC): the simulator's
     schedule for the placement (dp_sim_run with the run's order) sorted
     by start time, ties in topological order, is launched op by op with
     the same launch and copy code, each op after the copies of its remote
     inputs, and only then awaited: the streams and their events order
     everything, the host never waits between ops, and no buffer is freed
     before the run ends (peak_bytes: every buffer; device_bytes checked
     against that first: DP_ERR_INFEASIBLE).
   - Graph dispatch (DP_DISPATCH_GRAPH): every buffer allocated up front,
     then the static sequence captured from GPU 0's control stream (each
     stream forks from it and joins it again; an op with a consumer on
     another logical device records an event its copies wait on, the only
     nodes besides the kernels and copies) and instantiated once; each run
     is one cudaGraphLaunch, so the host costs nothing per op.
   - Copies: each (source, destination) pair of logical devices used by a
     cross edge has a copy stream on the destination's GPU. copy allocates
     the destination buffer there, waits for the producer's end event and
     copies with cudaMemcpyPeerAsync between GPUs (direct where
     cudaDeviceCanAccessPeer allows it: peer access is enabled with
     cudaDeviceEnablePeerAccess and each GPU's pool is opened to such peers
     with cudaMemPoolSetAccess; otherwise the runtime stages the copy
     through the host) or, within a GPU, a paced copy (dp__k_pcopy, unless
     opts->link_pacing is -1: then cudaMemcpyAsync), then records an
     event, which the consumer's stream waits on and wait polls.
   - Links (>>cuda-links): logical devices of one GPU would exchange data
     at TB/s, unlike GPUs on links. A copy between two of them is a kernel
     that copies with a grid stride and lasts the cluster's link time for
     the pair, latency + bytes / bandwidth (the simulator's dp_xfer_time):
     a real op's buffer's actual bytes, the cluster's units as seconds (a
     calibrated cluster's, as exec's prediction reads them); an opaque op's
     the graph's bytes, x seconds_per_unit (its modelled arrival); capped at 60 s
     (dp__cu_pace_ns): every block takes the earliest start of the copy on
     %globaltimer (atomicMin into the pair's slot), the last block to finish
     (an atomic counter) sleeps until start + that time and resets the slot
     for the next copy, so the same code runs dynamic, static and captured
     in a graph (replays reset it too). One copy at a time per pair (its
     stream). Under the simulator's DP_LINK_SERIAL the time runs from the
     copy's start, after the pair's previous copy; under DP_LINK_FREE,
     where the simulator overlaps a pair's transfers, from the producer's
     end (its end stamp), so a copy queued behind another is not charged
     the wait unless the other outlasts its own modelled arrival. The
     copy streams are the primary context's, not the destination's
     partition: a copy would otherwise wait for SMs behind the destination's
     kernels, while the simulator's links are independent of compute.
   - Memory: one stream-ordered pool per GPU (cudaMemPoolCreate), grown once
     before the first run and destroyed at the end; buffers are allocated
     with cudaMallocFromPoolAsync and freed with cudaFreeAsync when the
     dispatcher releases them (after every user completed), sinks' outputs
     after each run once read back. Bytes are accounted by the dispatcher
     per logical device (peak_bytes, the device_bytes arena:
     DP_ERR_INFEASIBLE).
   - Kernels: every real op kind with the semantics of the CPU kernels
     (doppler.h, >>kernels): input fill (bit for bit the CPU's values),
     matmul in 32x32 shared-memory tiles (products summed in k order with
     fused multiply-adds; opts->precision DP_PREC_FP32), or on the tensor
     cores (TF32 or BF16 mma with FP32 accumulation, the default on sm_80+:
     >>cuda-mma), n-ary add/reduce in input order (bit for bit),
     mul, scale, relu, gelu, silu, concat, split, transpose, copy, and
     softmax/rmsnorm/layernorm with one warp per row (32 lane partial sums,
     then a butterfly; rows over 1536 floats staged by a whole block, its
     first warp making the same sums: dp__cu_rows_launch). The per-element
     functions are __host__ __device__ and dp__cuda_host_kernel runs them
     on the host, so tests check the GPU algorithms against the CPU kernels
     without a GPU. Opaque ops: one block
     hashes its inputs (the bytes each edge carries), writes its output (a
     function of that hash) and spins on the GPU's %globaltimer until its
     modelled time (dp_op_time x seconds_per_unit) has passed since it began.
   - Timing: the kernels stamp themselves (>>cuda-kernels): each op's
     start is the earliest start of any block of its kernels and its end
     the latest end, on the GPU's global timer (nanoseconds), against a
     stamp each GPU writes at the start of the run before anything is
     launched; read back once per run. Timing events per op (a start and
     an end record: microseconds of GPU time each, and the host's launch
     inside the op's time) were replaced by these. A copy op (a
     cudaMemcpyAsync) is bracketed by two one-thread stamp kernels; an op
     of an empty tensor launches nothing and starts and ends when its last
     input was ready. Each GPU has its own start stamp (their global
     timers need not agree); they are made back to back. wall: the host's
     time from the start of the run to the last completion seen by the
     dispatcher.
   - Hardware queues: CUDA gives each GPU 8 connections by default
     (CUDA_DEVICE_MAX_CONNECTIONS); several logical devices on one GPU
     use more streams than that (a compute stream and copy streams each),
     so unrelated streams can be serialised. The library does not change
     the process's environment; a program that shares a GPU among many
     logical devices can set CUDA_DEVICE_MAX_CONNECTIONS=32 before its
     first CUDA call.
   - Errors: every CUDA call goes through cudaCheck(), which records the
     file, the line, the call and the runtime's message into the caller's
     dp_error (DP_ERR_DEVICE) and jumps to the function's `done:` label. On
     any failure the executor synchronises every stream it made, frees every
     buffer it holds, destroys its events, streams and pools, restores the
     caller's current device and returns the first error. Nothing exits,
     nothing prints.

   THE CALIBRATION (dp_calibrate_cuda, >>cuda-calibrate)
   It measures what the simulator's cost model reads (dp_op_time: an op
   takes overhead + work / speed, starting when its inputs are there) the
   way the executor runs ops: under the dispatch and precision asked for,
   through dp_exec_cuda itself. Per op kind and side S (16, 32, ... up to
   opts->size), one run of a graph with, on every logical device at once
   (each in the partition the executor gives it), a chain of
   DP__CUCAL_CHAIN ops of the kind on S x S tensors, each consuming its
   predecessor's output (input, concat and split cannot chain: independent
   ops); the op's time is the median of its ops' own stamps (end - start),
   its speed dp_op_flops / that time, and the points over S make the kind's
   speed curve (kindspeed D KIND W:S ...: small ops are priced at their
   own, launch- and latency-bound speed, not at large-size throughput).
   The per-op overhead is the median gap between an op's end and its
   dependent successor's start over the device's chains. Links: copy
   bandwidth (16 MiB copies) and the executor's hand-off latency (chains
   alternating between two logical devices).
*/
#include <cuda.h>           /* the driver API's types (green contexts); no -lcuda */
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doppler.h"

/* ----------------------------------------------------------------------
   >>cuda-errors
   Messages are formatted by the library's dp__fail (doppler.h, >>internal).
   ---------------------------------------------------------------------- */
static void dp__cuda_ok(dp_error *err)
{
    if (err) {
        err->code = DP_OK;
        err->msg[0] = 0;
    }
}

/* A failed CUDA call. There is no device-specific dp_code yet, so the
   failure is reported as DP_ERR_DEVICE. */
static int dp__cuda_fail(cudaError_t e, const char *call, const char *file, int line,
                         dp_error *err)
{
    if (e == cudaSuccess) return DP_OK;
    (void)cudaGetLastError(); /* clear the non-sticky error state */
    return dp__fail(err, DP_ERR_DEVICE, "%s:%d: %s: %s (%s)", file, line, call,
                    cudaGetErrorString(e), cudaGetErrorName(e));
}

#define cudaCheck(call)                                                        \
    do {                                                                       \
        rc = dp__cuda_fail((call), #call, __FILE__, __LINE__, err);            \
        if (rc) goto done;                                                     \
    } while (0)

/* ----------------------------------------------------------------------
   >>cuda-devices
   ---------------------------------------------------------------------- */
extern "C" int dp_cuda_device_count(int *count, dp_error *err)
{
    int rc = DP_OK, n = 0;
    if (!count) return dp__fail(err, DP_ERR_ARG, "dp_cuda_device_count: count is NULL");
    *count = 0;
    dp__cuda_ok(err);
    cudaCheck(cudaGetDeviceCount(&n));
    *count = n;
done:
    return rc;
}

static int dp__cuda_check_dev(int dev, dp_error *err)
{
    int rc = DP_OK, n = 0;
    cudaCheck(cudaGetDeviceCount(&n));
    if (dev < 0 || dev >= n)
        return dp__fail(err, DP_ERR_RANGE, "CUDA device %d does not exist (%d device%s)",
                        dev, n, n == 1 ? "" : "s");
done:
    return rc;
}

extern "C" int dp_cuda_device_name(int dev, char *buf, int len, dp_error *err)
{
    int rc = DP_OK;
    cudaDeviceProp prop;
    if (!buf || len <= 0)
        return dp__fail(err, DP_ERR_ARG, "dp_cuda_device_name: no buffer (len %d)", len);
    buf[0] = 0;
    dp__cuda_ok(err);
    if ((rc = dp__cuda_check_dev(dev, err))) return rc;
    cudaCheck(cudaGetDeviceProperties(&prop, dev));
    snprintf(buf, (size_t)len, "%s", prop.name);
done:
    return rc;
}

extern "C" int dp_cuda_device_info(int dev, dp_cuda_info *info, dp_error *err)
{
    int rc = DP_OK, prev = -1;
    size_t free_b = 0, total_b = 0;
    cudaDeviceProp prop;
    if (!info) return dp__fail(err, DP_ERR_ARG, "dp_cuda_device_info: info is NULL");
    memset(info, 0, sizeof *info);
    dp__cuda_ok(err);
    if ((rc = dp__cuda_check_dev(dev, err))) return rc;
    cudaCheck(cudaGetDeviceProperties(&prop, dev));
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->major = prop.major;
    info->minor = prop.minor;
    info->multiprocessors = prop.multiProcessorCount;
    info->total_bytes = (double)prop.totalGlobalMem;
    cudaCheck(cudaGetDevice(&prev));
    cudaCheck(cudaSetDevice(dev));
    cudaCheck(cudaMemGetInfo(&free_b, &total_b));
    info->free_bytes = (double)free_b;
done:
    if (prev >= 0) (void)cudaSetDevice(prev);
    return rc;
}

/* ----------------------------------------------------------------------
   >>cuda-selftest
   ---------------------------------------------------------------------- */
__global__ static void dp__axpy_kernel(int n, double a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" int dp_cuda_selftest(int dev, int n, double *seconds, dp_error *err)
{
    int rc = DP_OK, prev = -1;
    double *hx = NULL, *hy = NULL, *dx = NULL, *dy = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    float ms = 0;
    const double a = 2.0;
    if (seconds) *seconds = 0;
    if (n <= 0) return dp__fail(err, DP_ERR_ARG, "dp_cuda_selftest: n = %d", n);
    dp__cuda_ok(err);
    if ((rc = dp__cuda_check_dev(dev, err))) return rc;
    hx = (double *)malloc(sizeof *hx * (size_t)n);
    hy = (double *)malloc(sizeof *hy * (size_t)n);
    if (!hx || !hy) {
        rc = dp__fail(err, DP_ERR_NOMEM, "dp_cuda_selftest: %d doubles", n);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        hx[i] = (double)i;
        hy[i] = 1.0;
    }
    cudaCheck(cudaGetDevice(&prev));
    cudaCheck(cudaSetDevice(dev));
    cudaCheck(cudaMalloc((void **)&dx, sizeof *dx * (size_t)n));
    cudaCheck(cudaMalloc((void **)&dy, sizeof *dy * (size_t)n));
    cudaCheck(cudaMemcpy(dx, hx, sizeof *hx * (size_t)n, cudaMemcpyHostToDevice));
    cudaCheck(cudaMemcpy(dy, hy, sizeof *hy * (size_t)n, cudaMemcpyHostToDevice));
    cudaCheck(cudaEventCreate(&t0));
    cudaCheck(cudaEventCreate(&t1));
    cudaCheck(cudaEventRecord(t0, 0));
    dp__axpy_kernel<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
    cudaCheck(cudaGetLastError());
    cudaCheck(cudaEventRecord(t1, 0));
    cudaCheck(cudaEventSynchronize(t1));
    cudaCheck(cudaEventElapsedTime(&ms, t0, t1));
    cudaCheck(cudaMemcpy(hy, dy, sizeof *hy * (size_t)n, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        double want = a * (double)i + 1.0;
        if (fabs(hy[i] - want) > 1e-12 * (1.0 + fabs(want))) {
            rc = dp__fail(err, DP_ERR_RANGE,
                          "dp_cuda_selftest: device %d: y[%d] = %.17g, expected %.17g",
                          dev, i, hy[i], want);
            goto done;
        }
    }
    if (seconds) *seconds = ms / 1e3;
done:
    if (t0) (void)cudaEventDestroy(t0);
    if (t1) (void)cudaEventDestroy(t1);
    if (dx) (void)cudaFree(dx);
    if (dy) (void)cudaFree(dy);
    if (prev >= 0) (void)cudaSetDevice(prev);
    free(hx);
    free(hy);
    return rc;
}
/* ----------------------------------------------------------------------
   >>cuda-math
   Per-element and per-row functions, __host__ __device__: the kernels run
   them on the GPU, dp__cuda_host_kernel on the host. Float arithmetic is
   spelled with the _rn intrinsics on the device, so that nvcc does not fuse
   a multiply and an add where the CPU kernel does not (only explicit fmaf
   is fused, identically on both sides).
   ---------------------------------------------------------------------- */
#define DP__CU_MAXIN 16     /* inputs per launch (more: several launches)  */
#define DP__CU_LANES 32     /* lanes of a warp: one warp per row            */
#define DP__CU_THREADS 256  /* threads per block of the element kernels    */

#ifdef __CUDA_ARCH__
#define DP__ADD(a, b) __fadd_rn((a), (b))
#define DP__SUB(a, b) __fsub_rn((a), (b))
#define DP__MUL(a, b) __fmul_rn((a), (b))
#define DP__DIV(a, b) __fdiv_rn((a), (b))
#define DP__SQRT(a)   __fsqrt_rn(a)
#else
#define DP__ADD(a, b) ((a) + (b))
#define DP__SUB(a, b) ((a) - (b))
#define DP__MUL(a, b) ((a) * (b))
#define DP__DIV(a, b) ((a) / (b))
#define DP__SQRT(a)   sqrtf(a)
#endif

/* dp_input_value's hash: integer mixing, then one exact double product and
   one float conversion (rounded to nearest on both sides). */
__host__ __device__ static inline float dp__cu_input_value(unsigned long long seed, int op, unsigned long long i)
{
    unsigned long long z = seed ^ ((unsigned long long)op << 32) ^ i;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (float)((double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

/* 0.5 x (1 + tanh(0.7978845608 (x + 0.044715 x^3))), in the CPU's order */
__host__ __device__ static inline float dp__cu_gelu(float x)
{
    float x3 = DP__MUL(DP__MUL(DP__MUL(0.044715f, x), x), x);
    float t = tanhf(DP__MUL(0.7978845608f, DP__ADD(x, x3)));
    return DP__MUL(DP__MUL(0.5f, x), DP__ADD(1.0f, t));
}

__host__ __device__ static inline float dp__cu_silu(float x) { return DP__DIV(x, DP__ADD(1.0f, expf(-x))); }

/* One launch's worth of an element-wise op (input, add/reduce, mul, scale,
   relu, gelu, silu, concat, split, transpose): work item e of n. Add and
   concat take at most DP__CU_MAXIN inputs a launch: a later launch of an
   add goes on from the partial sum in out (first = 0), of a concat from
   output column off. */
typedef struct dp__cu_ew {
    int kind, nin, first;
    long long n;                     /* work items                          */
    int r, c;                        /* output shape                         */
    int ci;                          /* split: input columns; concat: the
                                        columns this launch writes          */
    int off;                         /* split, concat: first column          */
    float s;                         /* scale                               */
    unsigned long long seed;
    int op;
    const float *in[DP__CU_MAXIN];
    int cols[DP__CU_MAXIN];          /* concat: columns of each input        */
    float *out;
    int vec;                         /* 1: work items are groups of 4
                                        elements, loaded and stored as
                                        float4 (dp__cu_ew_apply4); n counts
                                        the groups                          */
} dp__cu_ew;

/* e / c and e % c, in 32-bit arithmetic where e fits (a 64-bit division
   costs a GPU several times more). */
__host__ __device__ static inline void dp__cu_divmod(long long e, int c, long long *q, int *rem)
{
    if (e <= 0x7fffffffLL) { unsigned u = (unsigned)e; *q = u / (unsigned)c; *rem = (int)(u % (unsigned)c); }
    else { *q = e / c; *rem = (int)(e % c); }
}

/* The one-input element functions (scale, relu, gelu, silu) of x. */
__host__ __device__ static inline float dp__cu_unary(int kind, float x, float s)
{
    switch (kind) {
    case DP_OP_SCALE: return DP__MUL(x, s);
    case DP_OP_RELU: return x > 0 ? x : 0.0f;
    case DP_OP_GELU: return dp__cu_gelu(x);
    default: return dp__cu_silu(x);
    }
}

/* Concat's work item e (of the r x ci columns this launch writes): *dst
   gets its index in the output, and the element it copies is returned. */
__host__ __device__ static inline const float *dp__cu_concat_src(const dp__cu_ew *a, long long e, long long *dst)
{
    long long i;
    int q, jj, k = 0;
    dp__cu_divmod(e, a->ci, &i, &q);
    jj = q;
    while (k < a->nin - 1 && jj >= a->cols[k]) { jj -= a->cols[k]; k++; }
    *dst = i * a->c + a->off + q;
    return a->in[k] + i * a->cols[k] + jj;
}

__host__ __device__ static inline void dp__cu_ew_apply(const dp__cu_ew *a, long long e)
{
    switch (a->kind) {
    case DP_OP_INPUT: a->out[e] = dp__cu_input_value(a->seed, a->op, (unsigned long long)e); break;
    case DP_OP_ADD: case DP_OP_REDUCE: {
        float s = a->first ? a->in[0][e] : a->out[e];
        for (int k = a->first ? 1 : 0; k < a->nin; k++) s = DP__ADD(s, a->in[k][e]);
        a->out[e] = s;
        break;
    }
    case DP_OP_MUL: a->out[e] = DP__MUL(a->in[0][e], a->in[1][e]); break;
    case DP_OP_SCALE: case DP_OP_RELU: case DP_OP_GELU: case DP_OP_SILU: a->out[e] = dp__cu_unary(a->kind, a->in[0][e], a->s); break;
    case DP_OP_SPLIT: { long long i; int j; dp__cu_divmod(e, a->c, &i, &j); a->out[e] = a->in[0][i * a->ci + a->off + j]; break; }
    case DP_OP_TRANSPOSE: { long long i; int j; dp__cu_divmod(e, a->c, &i, &j); a->out[e] = a->in[0][(long long)j * a->r + i]; break; }
    case DP_OP_CONCAT: {
        long long d;
        const float *src = dp__cu_concat_src(a, e, &d);
        a->out[d] = *src;
        break;
    }
    default: break;
    }
}

/* Work item g of a vectorised launch (a->vec): elements 4g .. 4g + 3 of
   the output (split, concat: of the columns this launch writes), each
   computed as dp__cu_ew_apply computes it; only the loads and stores are
   16 bytes wide. dp__cu_ew_setup sets vec only where every row length,
   column offset and pointer keeps the 4 elements in one row of one input
   and 16-byte aligned. */
__host__ __device__ static inline float4 dp__cu_ld4(const float *p) { return *(const float4 *)p; }

__host__ __device__ static inline void dp__cu_ew_apply4(const dp__cu_ew *a, long long g)
{
    long long e = 4 * g;
    float4 o;
    float *po = (float *)&o;
    switch (a->kind) {
    case DP_OP_INPUT:
        for (int t = 0; t < 4; t++) po[t] = dp__cu_input_value(a->seed, a->op, (unsigned long long)(e + t));
        break;
    case DP_OP_ADD: case DP_OP_REDUCE: {
        o = a->first ? dp__cu_ld4(a->in[0] + e) : dp__cu_ld4(a->out + e);
        for (int k = a->first ? 1 : 0; k < a->nin; k++) {
            float4 x = dp__cu_ld4(a->in[k] + e);
            o.x = DP__ADD(o.x, x.x); o.y = DP__ADD(o.y, x.y); o.z = DP__ADD(o.z, x.z); o.w = DP__ADD(o.w, x.w);
        }
        break;
    }
    case DP_OP_MUL: {
        float4 x = dp__cu_ld4(a->in[0] + e), y = dp__cu_ld4(a->in[1] + e);
        o.x = DP__MUL(x.x, y.x); o.y = DP__MUL(x.y, y.y); o.z = DP__MUL(x.z, y.z); o.w = DP__MUL(x.w, y.w);
        break;
    }
    case DP_OP_SCALE: case DP_OP_RELU: case DP_OP_GELU: case DP_OP_SILU: {
        float4 x = dp__cu_ld4(a->in[0] + e);
        const float *px = (const float *)&x;
        for (int t = 0; t < 4; t++) po[t] = dp__cu_unary(a->kind, px[t], a->s);
        break;
    }
    case DP_OP_SPLIT: {
        long long i;
        int j;
        dp__cu_divmod(e, a->c, &i, &j);
        o = dp__cu_ld4(a->in[0] + i * a->ci + a->off + j);
        break;
    }
    case DP_OP_CONCAT: {
        long long d;
        const float *src = dp__cu_concat_src(a, e, &d);
        *(float4 *)(a->out + d) = dp__cu_ld4(src);
        return;
    }
    default: return;
    }
    *(float4 *)(a->out + e) = o;
}

/* Rows (softmax, rmsnorm, layernorm): lane `lane` of 32 takes columns
   lane, lane + 32, ... in order; the lanes' partials are then combined by
   a butterfly (lane l adds lane l ^ o's value, o = 16, 8, 4, 2, 1). */
__host__ __device__ static inline float dp__cu_part_max(const float *x, int c, int lane)
{
    float m = -INFINITY;
    for (int j = lane; j < c; j += DP__CU_LANES) m = fmaxf(m, x[j]);
    return m;
}

__host__ __device__ static inline float dp__cu_part_expsum(const float *x, int c, float mx, int lane)
{
    float s = 0;
    for (int j = lane; j < c; j += DP__CU_LANES) s = DP__ADD(s, expf(DP__SUB(x[j], mx)));
    return s;
}

__host__ __device__ static inline float dp__cu_part_sum(const float *x, int c, int lane)
{
    float s = 0;
    for (int j = lane; j < c; j += DP__CU_LANES) s = DP__ADD(s, x[j]);
    return s;
}

__host__ __device__ static inline float dp__cu_part_sqdev(const float *x, int c, float mu, int lane)
{
    float s = 0;
    for (int j = lane; j < c; j += DP__CU_LANES) {
        float d = DP__SUB(x[j], mu);
        s = DP__ADD(s, DP__MUL(d, d));
    }
    return s;
}

__host__ __device__ static inline float dp__cu_softmax_out(float x, float mx, float s) { return DP__DIV(expf(DP__SUB(x, mx)), s); }
__host__ __device__ static inline float dp__cu_mean(float sum, int c) { return DP__DIV(sum, (float)c); }
/* 1 / sqrt(ss / c + 1e-6), as the CPU's norms */
__host__ __device__ static inline float dp__cu_norm_inv(float ss, int c) { return DP__DIV(1.0f, DP__SQRT(DP__ADD(DP__DIV(ss, (float)c), 1e-6f))); }
__host__ __device__ static inline float dp__cu_norm_out(float x, float mu, float inv) { return DP__MUL(DP__SUB(x, mu), inv); }

/* The element-wise launches of real op v (add and concat: one per
   DP__CU_MAXIN inputs), and the arguments of launch `chunk`. in[k] is the
   input on in-edge k of v; out its output. */
static int dp__cu_ew_chunks(const dp_graph *g, int v)
{
    int nin = g->in_off[v + 1] - g->in_off[v];
    dp_kind k = g->kind[v];
    if (k != DP_OP_ADD && k != DP_OP_REDUCE && k != DP_OP_CONCAT) return 1;
    return nin <= DP__CU_MAXIN ? 1 : (nin + DP__CU_MAXIN - 1) / DP__CU_MAXIN;
}

static void dp__cu_ew_setup(const dp_graph *g, int v, const float *const *in, float *out, uint64_t seed, int chunk, dp__cu_ew *a)
{
    int nin = g->in_off[v + 1] - g->in_off[v], k, k0 = chunk * DP__CU_MAXIN;
    const int *ie = g->in_edge + g->in_off[v];
    memset(a, 0, sizeof *a);
    a->kind = (int)g->kind[v];
    a->r = g->rows[v];
    a->c = g->cols[v];
    a->n = (long long)a->r * a->c;
    a->out = out;
    a->seed = (unsigned long long)seed;
    a->op = v;
    switch (g->kind[v]) {
    case DP_OP_INPUT: break;
    case DP_OP_ADD: case DP_OP_REDUCE: case DP_OP_CONCAT:
        a->nin = nin - k0 < DP__CU_MAXIN ? nin - k0 : DP__CU_MAXIN;
        a->first = chunk == 0;
        for (k = 0; k < a->nin; k++) {
            a->in[k] = in[k0 + k];
            a->cols[k] = g->cols[g->src[ie[k0 + k]]];
        }
        if (g->kind[v] == DP_OP_CONCAT) {
            for (k = 0; k < k0; k++) a->off += g->cols[g->src[ie[k]]];
            for (k = 0; k < a->nin; k++) a->ci += a->cols[k];
            a->n = (long long)a->r * a->ci;
        }
        break;
    case DP_OP_MUL: a->nin = 2; a->in[0] = in[0]; a->in[1] = in[1]; break;
    case DP_OP_SPLIT:
        a->nin = 1; a->in[0] = in[0];
        a->ci = g->cols[g->src[ie[0]]];
        a->off = g->arg[v] * a->c;
        break;
    case DP_OP_SCALE:
        a->nin = 1; a->in[0] = in[0];
        a->s = 1.0f / sqrtf((float)(g->arg[v] > 0 ? g->arg[v] : a->c));   /* the CPU's expression, on the host */
        break;
    default: a->nin = 1; a->in[0] = in[0]; break;
    }
    /* 16-byte loads and stores where every 4 consecutive elements stay in
       one row of one input, aligned */
    {
        int ok = (((uintptr_t)out) & 15) == 0 && a->n % 4 == 0;
        switch (g->kind[v]) {
        case DP_OP_INPUT: case DP_OP_ADD: case DP_OP_REDUCE: case DP_OP_MUL: case DP_OP_SCALE:
        case DP_OP_RELU: case DP_OP_GELU: case DP_OP_SILU: break;
        case DP_OP_SPLIT: ok = ok && a->c % 4 == 0 && a->ci % 4 == 0 && a->off % 4 == 0; break;
        case DP_OP_CONCAT:
            ok = ok && a->c % 4 == 0 && a->ci % 4 == 0 && a->off % 4 == 0;
            for (k = 0; k < a->nin; k++) ok = ok && a->cols[k] % 4 == 0;
            break;
        default: ok = 0; break;
        }
        for (k = 0; k < a->nin; k++) ok = ok && (((uintptr_t)a->in[k]) & 15) == 0;
        if (ok) { a->vec = 1; a->n /= 4; }
    }
}

static int dp__cu_is_row_op(dp_kind k) { return k == DP_OP_SOFTMAX || k == DP_OP_RMSNORM || k == DP_OP_LAYERNORM; }

/* ----------------------------------------------------------------------
   >>cuda-kernels
   Every kernel loops over its work with a grid stride: the grid only
   decides who computes what, never how an element is computed.

   Every kernel of the executor also stamps its op's time on the GPU's
   global timer (ts: NULL pointers where nobody asks, as in calibration):
   each block's first thread lowers *ts.t0 to the time it began and, after
   the block's work, raises *ts.t1 to the time it ended (atomicMin and
   atomicMax), so that over every block, and every launch of an op of
   several, t0 is its start and t1 its end. A run reads the stamps back
   once at its end; timing events per op (two event records per op, a few
   microseconds each on the GPU) are no longer needed.
   ---------------------------------------------------------------------- */
typedef struct dp__cu_ts { unsigned long long *t0, *t1; } dp__cu_ts;

__device__ static inline unsigned long long dp__cu_clock(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ static inline void dp__cu_stamp_begin(dp__cu_ts ts)
{
    if (ts.t0 && threadIdx.x == 0 && threadIdx.y == 0) atomicMin(ts.t0, dp__cu_clock());
}

/* After the block's work: every thread of the block calls it (the flag is
   the same for all, so the barrier has every thread). */
__device__ static inline void dp__cu_stamp_end(dp__cu_ts ts)
{
    if (!ts.t1) return;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicMax(ts.t1, dp__cu_clock());
}

/* A stamp of its own, for work that is no kernel of ours (a copy op's
   cudaMemcpyAsync) and for the start of a run: *t0 lowered (begin) or *t1
   raised. */
__global__ static void dp__k_stamp(dp__cu_ts ts)
{
    if (ts.t0) atomicMin(ts.t0, dp__cu_clock());
    if (ts.t1) atomicMax(ts.t1, dp__cu_clock());
}
__global__ static void dp__k_ew(const __grid_constant__ dp__cu_ew a, dp__cu_ts ts)
{
    dp__cu_stamp_begin(ts);
    if (a.vec) {
        for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.n; e += (long long)gridDim.x * blockDim.x)
            dp__cu_ew_apply4(&a, e);
    } else {
        for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < a.n; e += (long long)gridDim.x * blockDim.x)
            dp__cu_ew_apply(&a, e);
    }
    dp__cu_stamp_end(ts);
}


__device__ static inline float dp__cu_warp_sum(float v)
{
    for (int o = DP__CU_LANES / 2; o > 0; o >>= 1) v = DP__ADD(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ static inline float dp__cu_warp_max(float v)
{
    for (int o = DP__CU_LANES / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Row xr (c floats) copied into shared memory sr by thread i of the n
   that share the copy (a warp's lanes, or a block's threads), 16-byte
   loads where the row allows (c a multiple of 4, xr 16-byte aligned), U
   of them unrolled per thread: many loads in flight. The caller's
   barriers order it with the reads of sr. */
template <int U>
__device__ static inline void dp__cu_stage_row(float *sr, const float *xr, int c, int i, int n)
{
    if ((c & 3) == 0 && ((uintptr_t)xr & 15) == 0) {
#pragma unroll (U)
        for (int j = 4 * i; j < c; j += 4 * n) *(float4 *)(sr + j) = *(const float4 *)(xr + j);
    } else {
#pragma unroll (U)
        for (int j = i; j < c; j += n) sr[j] = xr[j];
    }
}

/* One warp per row; the row loop is the same for all lanes of a warp, so
   the shuffles always have every lane. With `staged`, each warp first
   copies its row into its c floats of shared memory (16-byte loads where
   the row allows) and makes its passes (two or three) over that copy, so
   that the row is read from memory once; the passes, and so the results,
   are the same either way. */
#define DP__CU_ROW_SMEM 49152   /* bytes of shared memory a block of rows may use */
__global__ static void dp__k_rows(int kind, const float *x, float *o, int r, int c, int staged, dp__cu_ts ts)
{
    extern __shared__ float dp__rowbuf[];
    dp__cu_stamp_begin(ts);
    int lane = threadIdx.x & (DP__CU_LANES - 1), wpb = blockDim.x / DP__CU_LANES;
    for (long long row = (long long)blockIdx.x * wpb + threadIdx.x / DP__CU_LANES; row < r; row += (long long)gridDim.x * wpb) {
        const float *xr = x + row * c;
        float *orow = o + row * c;
        if (staged) {
            float *sr = dp__rowbuf + (size_t)(threadIdx.x / DP__CU_LANES) * c;
            __syncwarp();   /* the previous row's last reads of sr are done */
            dp__cu_stage_row<8>(sr, xr, c, lane, DP__CU_LANES);
            __syncwarp();
            if (kind == DP_OP_SOFTMAX) {
                /* each lane's own columns: exp(x - max) computed once, kept
                   in place of x, summed in the same order and divided as
                   dp__cu_softmax_out does */
                float mx = dp__cu_warp_max(dp__cu_part_max(sr, c, lane));
                for (int j = lane; j < c; j += DP__CU_LANES) sr[j] = expf(DP__SUB(sr[j], mx));
                float s = dp__cu_warp_sum(dp__cu_part_sum(sr, c, lane));
                for (int j = lane; j < c; j += DP__CU_LANES) orow[j] = DP__DIV(sr[j], s);
                continue;
            }
            xr = sr;
        }
        if (kind == DP_OP_SOFTMAX) {
            float mx = dp__cu_warp_max(dp__cu_part_max(xr, c, lane));
            float s = dp__cu_warp_sum(dp__cu_part_expsum(xr, c, mx, lane));
            for (int j = lane; j < c; j += DP__CU_LANES) orow[j] = dp__cu_softmax_out(xr[j], mx, s);
        } else {
            float mu = kind == DP_OP_LAYERNORM ? dp__cu_mean(dp__cu_warp_sum(dp__cu_part_sum(xr, c, lane)), c) : 0.0f;
            float inv = dp__cu_norm_inv(dp__cu_warp_sum(dp__cu_part_sqdev(xr, c, mu, lane)), c);
            for (int j = lane; j < c; j += DP__CU_LANES) orow[j] = dp__cu_norm_out(xr[j], mu, inv);
        }
    }
    dp__cu_stamp_end(ts);
}

/* One block of DP__CU_THREADS threads per row (dp__cu_rows_launch's
   second kernel, for rows too long for 8 of dp__k_rows' warps to stage in
   DP__CU_ROW_SMEM): every warp of the block copies part of the row into
   shared memory, so that 8 warps' loads are in flight for one row where
   dp__k_rows has one warp's (a row of 8192 floats left it one warp per
   block and 7 per SM, 41-60% of the copy bandwidth on an H200). Warp 0
   alone then makes each reduction, its lanes over their own columns in
   order and the butterfly: the float operations of dp__k_rows and of the
   host emulation, so the same results bit for bit; the element passes
   (softmax's exp, the outputs) are shared by every thread. Shared
   memory: the row, then red[2], which hands warp 0's values to the block
   (DP__CU_ROWB_SMEM(c) bytes, all of it dynamic: a static array would
   count on top of the launch's bytes against the 48 KiB). */
#define DP__CU_ROWB_SMEM(c) ((size_t)((c) + 2) * sizeof(float))
__global__ static void dp__k_rows_block(int kind, const float *x, float *o, int r, int c, dp__cu_ts ts)
{
    extern __shared__ float dp__rowbuf[];
    float *sr = dp__rowbuf, *red = dp__rowbuf + c;
    int t = threadIdx.x, nt = blockDim.x, lane = t & (DP__CU_LANES - 1), warp0 = t < DP__CU_LANES;
    dp__cu_stamp_begin(ts);
    for (long long row = blockIdx.x; row < r; row += gridDim.x) {   /* the same rows for every thread: the barriers have them all */
        const float *xr = x + row * c;
        float *orow = o + row * c;
        __syncthreads();   /* the previous row's reads of sr and red are done */
        dp__cu_stage_row<4>(sr, xr, c, t, nt);
        __syncthreads();
        if (kind == DP_OP_SOFTMAX) {
            if (warp0) {
                float mx = dp__cu_warp_max(dp__cu_part_max(sr, c, lane));
                if (lane == 0) red[0] = mx;
            }
            __syncthreads();
            float mx = red[0];
            for (int j = t; j < c; j += nt) sr[j] = expf(DP__SUB(sr[j], mx));
            __syncthreads();
            if (warp0) {
                float sum = dp__cu_warp_sum(dp__cu_part_sum(sr, c, lane));
                if (lane == 0) red[1] = sum;
            }
            __syncthreads();
            float sum = red[1];
            for (int j = t; j < c; j += nt) orow[j] = DP__DIV(sr[j], sum);
        } else {
            if (warp0) {
                float mu = kind == DP_OP_LAYERNORM ? dp__cu_mean(dp__cu_warp_sum(dp__cu_part_sum(sr, c, lane)), c) : 0.0f;
                float inv = dp__cu_norm_inv(dp__cu_warp_sum(dp__cu_part_sqdev(sr, c, mu, lane)), c);
                if (lane == 0) { red[0] = mu; red[1] = inv; }
            }
            __syncthreads();
            float mu = red[0], inv = red[1];
            for (int j = t; j < c; j += nt) orow[j] = dp__cu_norm_out(sr[j], mu, inv);
        }
    }
    dp__cu_stamp_end(ts);
}

/* C (r x c) = A (r x K) B (K x c) in 32 x 32 output tiles: 32 x 8 threads,
   thread (tx, ty) computes rows ty, ty + 8, ty + 16, ty + 24 of column tx;
   K in steps of 32 through shared memory; each output sums its products in
   k order with fmaf. */
#define DP__TILE 32
#define DP__TROWS 8
__global__ static void dp__k_matmul(const float *A, const float *B, float *C, int r, int K, int c, dp__cu_ts ts)
{
    __shared__ float As[DP__TILE][DP__TILE + 1], Bs[DP__TILE][DP__TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    dp__cu_stamp_begin(ts);
    long long tr = (r + DP__TILE - 1) / DP__TILE, tc = (c + DP__TILE - 1) / DP__TILE;
    for (long long t = blockIdx.x; t < tr * tc; t += gridDim.x) {
        int i0 = (int)(t / tc) * DP__TILE, j0 = (int)(t % tc) * DP__TILE;
        float acc[DP__TILE / DP__TROWS];
        for (int q = 0; q < DP__TILE / DP__TROWS; q++) acc[q] = 0.0f;
        for (int k0 = 0; k0 < K; k0 += DP__TILE) {
            int kn = K - k0 < DP__TILE ? K - k0 : DP__TILE;
            for (int q = 0; q < DP__TILE / DP__TROWS; q++) {
                int ii = ty + DP__TROWS * q;
                As[ii][tx] = (i0 + ii < r && tx < kn) ? A[(long long)(i0 + ii) * K + k0 + tx] : 0.0f;
                Bs[ii][tx] = (ii < kn && j0 + tx < c) ? B[(long long)(k0 + ii) * c + j0 + tx] : 0.0f;
            }
            __syncthreads();
            for (int kk = 0; kk < kn; kk++) {
                float b = Bs[kk][tx];
                for (int q = 0; q < DP__TILE / DP__TROWS; q++) acc[q] = fmaf(As[ty + DP__TROWS * q][kk], b, acc[q]);
            }
            __syncthreads();
        }
        for (int q = 0; q < DP__TILE / DP__TROWS; q++) {
            int i = i0 + ty + DP__TROWS * q, j = j0 + tx;
            if (i < r && j < c) C[(long long)i * c + j] = acc[q];
        }
    }
    dp__cu_stamp_end(ts);
}

/* out (r x c) = in (c x r) transposed, in 32 x 32 tiles through shared
   memory, so that both the reads of in and the writes of out are
   coalesced (the element-wise form reads in with a stride of r). Only data
   moves: the output is the element-wise kernel's, bit for bit. */
__global__ static void dp__k_transpose(const float *in, float *out, int r, int c, dp__cu_ts ts)
{
    __shared__ float tile[DP__TILE][DP__TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    long long tr = (r + DP__TILE - 1) / DP__TILE, tc = (c + DP__TILE - 1) / DP__TILE;
    dp__cu_stamp_begin(ts);
    for (long long t = blockIdx.x; t < tr * tc; t += gridDim.x) {
        int i0 = (int)(t / tc) * DP__TILE, j0 = (int)(t % tc) * DP__TILE;
        /* in's rows j0.., columns i0..: in[j][i] = out[i][j] */
        for (int q = ty; q < DP__TILE; q += DP__TROWS)
            if (j0 + q < c && i0 + tx < r) tile[q][tx] = in[(long long)(j0 + q) * r + i0 + tx];
        __syncthreads();
        for (int q = ty; q < DP__TILE; q += DP__TROWS)
            if (i0 + q < r && j0 + tx < c) out[(long long)(i0 + q) * c + j0 + tx] = tile[tx][q];
        __syncthreads();
    }
    dp__cu_stamp_end(ts);
}

/* ----------------------------------------------------------------------
   >>cuda-mma
   The tensor-core matmul (DP_PREC_TF32, DP_PREC_BF16; sm_80+): C (r x c)
   = A (r x K) B (K x c), row-major floats. Two kernels: dp__k_mma here
   (the first, kept for one A/B measurement) and dp__k_mma2 (>>cuda-mma2,
   the default), which uses this section's fragment maps and copies.
   - Block tile BM x 128 (BM 128, or 64 where 128-row tiles would not give
     two blocks per SM, e.g. 1024 x 1024 on an H100), K in steps of 32; 8
     warps as 2 (rows) x 4 (columns), each owning a BM/2 x 32 warp tile:
     BM/32 x 4 mma tiles of 16 x 8, BM/2 FP32 accumulators per lane. Blocks
     loop over the tiles with a grid stride (the launch cap, as the other
     kernels).
   - Staging: the A tile (128 x 32) and B tile (32 x 128) of each K step are
     copied to shared memory as floats with cp.async, STAGES (3, or 2 where
     a GPU's shared memory is smaller) steps in flight. 16-byte copies where
     the row stride (K for A, c for B) is a multiple of 4 floats and the
     pointer 16-byte aligned (decided per launch on the host), else 4-byte
     copies. Out-of-range elements are copied with source size 0, i.e. zero
     filled, so that the edge tiles and a K that is not a multiple of 8 or
     16 add zero products; stores are guarded.
   - Rows of shared memory are padded so that the fragment reads are free
     of bank conflicts: A rows of 36 floats (TF32: lane (g, t) reads bank
     4g + t) or 40 (BF16: float2 reads at 8g + 2t per half warp), B rows
     of 136 (TF32: bank 8t + g) or 132 (BF16: bank 8t + g + {0, 4}).
   - Fragments are read from shared memory with plain loads (no ldmatrix:
     the staged floats are converted on the way, cvt.rna.tf32.f32 or
     __floats2bfloat162_rn), by the index maps below, which the host
     emulation (dp__cuda_host_mma) uses as well. Fragment layouts, PTX ISA
     "Matrix fragments for mma.m16n8k8" (.tf32) and "mma.m16n8k16" (.bf16),
     g = lane / 4, t = lane % 4:
       m16n8k8 tf32:  a0 (g, t) a1 (g+8, t) a2 (g, t+4) a3 (g+8, t+4);
                      b0 (k t, n g) b1 (t+4, g)
       m16n8k16 bf16: a0,a1 (g, 2t..2t+1) a2,a3 (g+8, 2t..) a4,a5 (g, 2t+8..)
                      a6,a7 (g+8, 2t+8..); b0,b1 (k 2t..2t+1, n g)
                      b2,b3 (2t+8.., g); two bf16 per register, the lower
                      index in the lower half
       accumulators:  c0 (g, 2t) c1 (g, 2t+1) c2 (g+8, 2t) c3 (g+8, 2t+1)
   - Deterministic: each output's K steps run in order in one warp.
   ---------------------------------------------------------------------- */
static unsigned dp__cu_blocks(long long work, int per, int cap);
#define DP__MM_BM 128       /* block tile rows, the larger of the two     */
#define DP__MM_BN 128
#define DP__MM_BK 32
#define DP__MM_THREADS 256
#define DP__MM_WN 32        /* warp tile columns: 4 mma tiles of 8 (rows: BM / 2) */
#define DP__MM_MT (DP__MM_BM / 32)   /* mma tiles of 16 rows per warp, at most */
#define DP__MM_NT (DP__MM_WN / 8)

__host__ __device__ static inline int dp__mm_sa(int prec) { return prec == DP_PREC_BF16 ? DP__MM_BK + 8 : DP__MM_BK + 4; }
__host__ __device__ static inline int dp__mm_sb(int prec) { return prec == DP_PREC_BF16 ? DP__MM_BN + 4 : DP__MM_BN + 8; }
__host__ __device__ static inline int dp__mm_stage_floats(int prec, int bm) { return bm * dp__mm_sa(prec) + DP__MM_BK * dp__mm_sb(prec); }
/* k of one mma: 8 (tf32) or 16 (bf16) */
__host__ __device__ static inline int dp__mm_kf(int prec) { return prec == DP_PREC_BF16 ? 16 : 8; }
/* warp w's tile within a block tile of bm rows */
__host__ __device__ static inline void dp__mm_warp_at(int w, int bm, int *row, int *col) { *row = (w >> 2) * (bm / 2); *col = (w & 3) * DP__MM_WN; }
/* element e of lane's A fragment (tf32 a0..a3, bf16 a0..a7): its row and k in the 16 x kf tile */
__host__ __device__ static inline void dp__mm_a_at(int prec, int lane, int e, int *row, int *k)
{
    int g = lane >> 2, t = lane & 3;
    if (prec == DP_PREC_BF16) { *row = g + 8 * ((e >> 1) & 1); *k = 2 * t + (e & 1) + 8 * (e >> 2); }
    else { *row = g + 8 * (e & 1); *k = t + 4 * (e >> 1); }
}
/* element e of lane's B fragment (tf32 b0..b1, bf16 b0..b3): its k and column in the kf x 8 tile */
__host__ __device__ static inline void dp__mm_b_at(int prec, int lane, int e, int *k, int *col)
{
    int g = lane >> 2, t = lane & 3;
    *col = g;
    *k = prec == DP_PREC_BF16 ? 2 * t + (e & 1) + 8 * (e >> 1) : t + 4 * e;
}
/* accumulator e (c0..c3) of lane: its row and column in the 16 x 8 tile */
__host__ __device__ static inline void dp__mm_c_at(int lane, int e, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3;
    *row = g + 8 * (e >> 1);
    *col = 2 * t + (e & 1);
}
/* Staging: copy q (0 .. 1023 with 16-byte copies, 0 .. 4095 with 4-byte)
   of a tile `width` floats wide: its row and first column. */
__host__ __device__ static inline void dp__mm_copy_at(int q, int width, int vw, int *row, int *col)
{
    int per = width / vw;
    *row = q / per;
    *col = (q % per) * vw;
}
/* floats of global element (gr, gc) of a rows x cols matrix that one copy
   of vw floats may read: 0 out of range (zero fill), else vw (vw 4: cols
   is a multiple of 4, so a copy is all in or all out) */
__host__ __device__ static inline int dp__mm_copy_n(int gr, int gc, int rows, int cols, int vw)
{
    return gr < rows && gc < cols ? vw : 0;
}

/* The hardware's input roundings, on the host (the emulation below, the
   CPU executor's TF32 and BF16 matmuls): doppler.h's dp__round_tf32 and
   dp__round_bf16, so that the emulation and the CPU reference round alike */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ static inline uint32_t dp__mm_tf32(float x)
{
    uint32_t u;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
    return u;
}
__device__ static inline uint32_t dp__mm_bf16x2(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);   /* .x, the lower half: lo */
    uint32_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}
__device__ static inline void dp__mm_cp(float *dst, const float *src, int n, int vw)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    if (vw == 4) asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(n * 4));
    else asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(n * 4));
}

/* K step kt of tile (i0, j0) into stage buffer sm */
template <int PREC, int BM>
__device__ static inline void dp__mm_stage(float *sm, const float *A, const float *B, int r, int K, int c, int i0, int j0,
                                           int k0, int vwa, int vwb)
{
    const int sa = dp__mm_sa(PREC), sb = dp__mm_sb(PREC);
    float *As = sm, *Bs = sm + BM * sa;
    int tid = threadIdx.x, row, col;
    for (int q = tid; q < BM * DP__MM_BK / vwa; q += DP__MM_THREADS) {
        dp__mm_copy_at(q, DP__MM_BK, vwa, &row, &col);
        int n = dp__mm_copy_n(i0 + row, k0 + col, r, K, vwa);
        dp__mm_cp(As + row * sa + col, n ? A + (long long)(i0 + row) * K + k0 + col : A, n, vwa);
    }
    for (int q = tid; q < DP__MM_BK * DP__MM_BN / vwb; q += DP__MM_THREADS) {
        dp__mm_copy_at(q, DP__MM_BN, vwb, &row, &col);
        int n = dp__mm_copy_n(k0 + row, j0 + col, K, c, vwb);
        dp__mm_cp(Bs + row * sb + col, n ? B + (long long)(k0 + row) * c + j0 + col : B, n, vwb);
    }
}

/* one K step (32) of the warp's BM/2 x 32 tile from stage buffer sm */
template <int PREC, int BM>
__device__ static inline void dp__mm_compute(const float *sm, int wr, int wc, int lane, float (&acc)[BM / 32][DP__MM_NT][4])
{
    const int sa = dp__mm_sa(PREC), sb = dp__mm_sb(PREC), kf = dp__mm_kf(PREC);
    const float *As = sm, *Bs = sm + BM * sa;
#pragma unroll
    for (int kk = 0; kk < DP__MM_BK; kk += kf) {
        uint32_t a[BM / 32][4], b[DP__MM_NT][2];
        int row, k, col;
#pragma unroll
        for (int mt = 0; mt < BM / 32; mt++) {
            const float *at = As + (wr + mt * 16) * sa + kk;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                if (PREC == DP_PREC_BF16) {
                    dp__mm_a_at(PREC, lane, 2 * e, &row, &k);   /* elements 2e, 2e + 1: (row, k), (row, k + 1) */
                    float2 f = *(const float2 *)(at + row * sa + k);
                    a[mt][e] = dp__mm_bf16x2(f.x, f.y);
                } else {
                    dp__mm_a_at(PREC, lane, e, &row, &k);
                    a[mt][e] = dp__mm_tf32(at[row * sa + k]);
                }
            }
        }
#pragma unroll
        for (int nt = 0; nt < DP__MM_NT; nt++) {
            const float *bt = Bs + kk * sb + wc + nt * 8;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                if (PREC == DP_PREC_BF16) {
                    int k1, col1;
                    dp__mm_b_at(PREC, lane, 2 * e, &k, &col);
                    dp__mm_b_at(PREC, lane, 2 * e + 1, &k1, &col1);
                    b[nt][e] = dp__mm_bf16x2(bt[k * sb + col], bt[k1 * sb + col1]);
                } else {
                    dp__mm_b_at(PREC, lane, e, &k, &col);
                    b[nt][e] = dp__mm_tf32(bt[k * sb + col]);
                }
            }
        }
#pragma unroll
        for (int mt = 0; mt < BM / 32; mt++)
#pragma unroll
            for (int nt = 0; nt < DP__MM_NT; nt++) {
                float *d = acc[mt][nt];
                if (PREC == DP_PREC_BF16)
                    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                                 : "r"(a[mt][0]), "r"(a[mt][1]), "r"(a[mt][2]), "r"(a[mt][3]), "r"(b[nt][0]), "r"(b[nt][1]));
                else
                    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                                 : "r"(a[mt][0]), "r"(a[mt][1]), "r"(a[mt][2]), "r"(a[mt][3]), "r"(b[nt][0]), "r"(b[nt][1]));
            }
    }
}
#endif

/* vwa, vwb: floats per copy of A and B (4 or 1). A no-op where compiled
   for below sm_80 (dp__mm_path refuses such a binary before a launch). */
template <int PREC, int STAGES, int BM>
__global__ static void __launch_bounds__(DP__MM_THREADS) dp__k_mma(const float *A, const float *B, float *C, int r, int K, int c, int vwa, int vwb, dp__cu_ts ts)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ float4 dp__mm_smem[];
    dp__cu_stamp_begin(ts);
    float *sm = (float *)dp__mm_smem;
    const int stage = dp__mm_stage_floats(PREC, BM);
    int lane = threadIdx.x & 31, wr, wc;
    dp__mm_warp_at(threadIdx.x >> 5, BM, &wr, &wc);
    long long tr = (r + BM - 1) / BM, tc = (c + DP__MM_BN - 1) / DP__MM_BN;
    int nk = (K + DP__MM_BK - 1) / DP__MM_BK;
    for (long long t = blockIdx.x; t < tr * tc; t += gridDim.x) {
        int i0 = (int)(t / tc) * BM, j0 = (int)(t % tc) * DP__MM_BN;
        float acc[BM / 32][DP__MM_NT][4];
#pragma unroll
        for (int mt = 0; mt < BM / 32; mt++)
#pragma unroll
            for (int nt = 0; nt < DP__MM_NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.0f;
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < nk) dp__mm_stage<PREC, BM>(sm + s * stage, A, B, r, K, c, i0, j0, s * DP__MM_BK, vwa, vwb);
            asm volatile("cp.async.commit_group;\n" ::);
        }
        for (int kt = 0; kt < nk; kt++) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
            __syncthreads();   /* step kt is in; every warp is done with step kt - 1's buffer */
            int pf = kt + STAGES - 1;
            if (pf < nk) dp__mm_stage<PREC, BM>(sm + (pf % STAGES) * stage, A, B, r, K, c, i0, j0, pf * DP__MM_BK, vwa, vwb);
            asm volatile("cp.async.commit_group;\n" ::);
            dp__mm_compute<PREC, BM>(sm + (kt % STAGES) * stage, wr, wc, lane, acc);
        }
        asm volatile("cp.async.wait_group 0;\n" ::);
        __syncthreads();   /* the next tile's copies reuse the buffers */
#pragma unroll
        for (int mt = 0; mt < BM / 32; mt++)
#pragma unroll
            for (int nt = 0; nt < DP__MM_NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    int row, col;
                    dp__mm_c_at(lane, e, &row, &col);
                    int i = i0 + wr + mt * 16 + row, j = j0 + wc + nt * 8 + col;
                    if (i < r && j < c) C[(long long)i * c + j] = acc[mt][nt][e];
                }
    }
    dp__cu_stamp_end(ts);
#else
    (void)A; (void)B; (void)C; (void)r; (void)K; (void)c; (void)vwa; (void)vwb; (void)ts;
#endif
}

/* ----------------------------------------------------------------------
   >>cuda-mma2
   The tensor-core matmul, second kernel (dp__k_mma2, the default): the
   same product, precisions and fragment layouts as dp__k_mma above, with
   fewer instructions per mma. The first kernel stays selectable for one
   A/B measurement on a GPU (exec_bench matmul --mm-kernel 1,2, run by
   bench/gpu.sh); the slower of the two is to be deleted after it,
   with its emulation and its code in dp__mm_path and dp__mm_launch.
   - 4 warps as 2 x 2; block tile BM x BN of 128 x 128, 64 x 128 or 64 x
     64 (the largest that gives about two tiles per SM, dp__mm2_shape),
     warp tile BM/2 x BN/2 (64 x 64 at most: MT = BM/32 by NT = BN/16 mma
     tiles, 4 MT NT FP32 accumulators per lane). K in steps of 32, STAGES
     (3, or 2 where shared memory is smaller) steps in flight, copied with
     cp.async and zero filled as in dp__k_mma.
   - TF32: once a step's copies are in, each thread rounds the floats it
     copied (cvt.rna.tf32.f32) in place, before the barrier that hands the
     step to the warps: one rounding per element and block, where dp__k_mma
     rounded each fragment element it read (cvt.rna.tf32.f32 is three
     instructions). BF16: packed per fragment (cvt.rn.bf16x2.f32, one
     instruction per two elements), as before.
   - The K indices of a step are dealt to its mmas in a permuted order
     (dp__mm2_k_of): mma kk of a step multiplies the step's K indices
     k_of(kk, 0 .. kf - 1), so that lane (g, t)'s A elements of all the
     step's mmas are the floats 8t .. 8t+7 of its rows g and g+8 (two
     16-byte loads a row and step) and its B elements of mma kk those of
     the step's rows 8t + k_pos. The columns of a warp tile are dealt to
     its mma tiles in a permuted order too (dp__mm2_col): lane g's B
     elements of the NT mma tiles are NT contiguous floats of a row (NT/4
     16-byte loads), and a lane's accumulators of one row are 4-float runs
     of C (16-byte stores where c is a multiple of 4). Per warp tile and
     step of 32: 16 loads of 16 bytes per 32 mma (64 x 64) where dp__k_mma
     had 24 loads of 4 bytes per 16, and no cvt in TF32.
   - Shared-memory rows are not padded: 16-byte chunks are placed by an XOR
     of the chunk index with bits of the row (dp__mm2_a_off, _b_off) so
     that each quarter warp's eight 16-byte accesses (copies, rounding,
     fragment loads) fall in eight distinct groups of four banks.
   - Tiles are visited in bands of DP__MM2_BAND tile rows (dp__mm2_tile_at):
     the blocks that run at once share rows of A and columns of B in L2.
   - Deterministic: each output's sum is the same sequence of additions
     whatever the tile shape: for each step in order, for kk in order, the
     accumulator plus the mma's products; dp__cuda_host_mma2 emulates it.
   ---------------------------------------------------------------------- */
#define DP__MM2_THREADS 128
#define DP__MM2_BAND 8      /* tile rows per band of the tile order */

/* The step's K index (0 .. 31) that mma kk multiplies as its k index kap */
__host__ __device__ static inline int dp__mm2_k_of(int prec, int kk, int kap)
{
    if (prec == DP_PREC_BF16) return 8 * ((kap >> 1) & 3) + 4 * kk + 2 * (kap >> 3) + (kap & 1);
    return 8 * (kap & 3) + 2 * kk + (kap >> 2);
}
/* The kernel's source of element e of lane (g, t)'s A fragment of mma kk
   (tf32 a0..a3, bf16 a0..a7): row g + 8 a_hi of the mma tile, the step's
   K index 8t + a_pos. The elements of one kk and one row lie in one
   16-byte chunk (pos & ~3 the same). */
__host__ __device__ static inline int dp__mm2_a_hi(int prec, int e) { return prec == DP_PREC_BF16 ? (e >> 1) & 1 : e & 1; }
__host__ __device__ static inline int dp__mm2_a_pos(int prec, int kk, int e) { return prec == DP_PREC_BF16 ? 4 * kk + 2 * (e >> 2) + (e & 1) : 2 * kk + (e >> 1); }
/* ... of element e of its B fragment of mma kk (tf32 b0..b1, bf16
   b0..b3): the step's row 8t + b_pos */
__host__ __device__ static inline int dp__mm2_b_pos(int prec, int kk, int e) { return prec == DP_PREC_BF16 ? 4 * kk + e : 2 * kk + e; }
/* The 16-byte chunk of a warp tile's row that holds the columns of mma
   tiles 4h .. 4h+3 at mma column n (NT mma tiles of 8 columns): lane g
   reads chunks 2g, 2g+1 (NT 8) or 2 (g % 4) + g / 4 (NT 4) */
__host__ __device__ static inline int dp__mm2_bchunk(int nt, int n, int h) { return nt == 8 ? 2 * n + h : 2 * (n & 3) + (n >> 2); }
/* The warp-tile column of column n of mma tile j */
__host__ __device__ static inline int dp__mm2_col(int nt, int j, int n) { return 4 * dp__mm2_bchunk(nt, n, j >> 2) + (j & 3); }
/* Offsets in floats of A's (row, k) in a stage's A tile (rows of 32) and
   of B's (k, n) in its B tile (rows of bn) */
__host__ __device__ static inline int dp__mm2_a_off(int row, int k) { return row * DP__MM_BK + ((((k >> 2) ^ (row & 1)) << 2) | (k & 3)); }
__host__ __device__ static inline int dp__mm2_bsw(int k) { return ((k >> 3) & 1) | (((k >> 4) & 1) << 2); }
__host__ __device__ static inline int dp__mm2_b_off(int bn, int k, int n) { return k * bn + ((((n >> 2) ^ dp__mm2_bsw(k)) << 2) | (n & 3)); }
__host__ __device__ static inline int dp__mm2_stage_floats(int bm, int bn) { return DP__MM_BK * (bm + bn); }
/* Tile t of tr x tc in the visiting order: bands of DP__MM2_BAND tile
   rows (the last may have fewer), each walked column by column */
__host__ __device__ static inline void dp__mm2_tile_at(long long t, long long tr, long long tc, long long *ti, long long *tj)
{
    long long first = t / (DP__MM2_BAND * tc) * DP__MM2_BAND, rows = tr - first < DP__MM2_BAND ? tr - first : DP__MM2_BAND;
    long long in = t - first * tc;
    *ti = first + in % rows;
    *tj = in / rows;
}
/* The warp tile of warp w */
__host__ __device__ static inline void dp__mm2_warp_at(int w, int bm, int bn, int *row, int *col) { *row = (w >> 1) * (bm / 2); *col = (w & 1) * (bn / 2); }
/* The epilogue's store (mt, hi, e1, h) of lane (g, t): floats i = 0..3 of
   C's row g + 8 hi of mma tile row mt, warp-tile columns col + i, from
   accumulators [mt][4h + i][2 hi + e1] */
__host__ __device__ static inline int dp__mm2_store_col(int nt, int lane, int e1, int h) { return 4 * dp__mm2_bchunk(nt, 2 * (lane & 3) + e1, h); }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ static inline float dp__mm2_f4(float4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

/* Copy q (dp__mm_copy_at) of step k0 of tile (i0, j0) into stage buffer
   sm, of A (ab 0) or B (1), vw floats; and the same floats rounded to TF32
   in place once they are in (a thread's own copies are visible to it after
   cp.async.wait_group) */
template <int BM, int BN>
__device__ static inline void dp__mm2_copy(float *sm, int ab, int q, int vw, const float *A, const float *B, int r, int K, int c, int i0, int j0, int k0)
{
    int row, col;
    if (ab == 0) {
        dp__mm_copy_at(q, DP__MM_BK, vw, &row, &col);
        int n = dp__mm_copy_n(i0 + row, k0 + col, r, K, vw);
        dp__mm_cp(sm + dp__mm2_a_off(row, col), n ? A + (long long)(i0 + row) * K + k0 + col : A, n, vw);
    } else {
        dp__mm_copy_at(q, BN, vw, &row, &col);
        int n = dp__mm_copy_n(k0 + row, j0 + col, K, c, vw);
        dp__mm_cp(sm + BM * DP__MM_BK + dp__mm2_b_off(BN, row, col), n ? B + (long long)(k0 + row) * c + j0 + col : B, n, vw);
    }
}
template <int BM, int BN>
__device__ static inline void dp__mm2_round_copy(float *sm, int ab, int q, int vw)
{
    int row, col;
    dp__mm_copy_at(q, ab ? BN : DP__MM_BK, vw, &row, &col);
    float *p = ab ? sm + BM * DP__MM_BK + dp__mm2_b_off(BN, row, col) : sm + dp__mm2_a_off(row, col);
    if (vw == 4) {
        float4 v = *(float4 *)p;
        v.x = __uint_as_float(dp__mm_tf32(v.x)); v.y = __uint_as_float(dp__mm_tf32(v.y));
        v.z = __uint_as_float(dp__mm_tf32(v.z)); v.w = __uint_as_float(dp__mm_tf32(v.w));
        *(float4 *)p = v;
    } else *p = __uint_as_float(dp__mm_tf32(*p));
}

/* This thread's copies of a step (or, ROUND: their rounding) */
template <int BM, int BN, int ROUND>
__device__ static inline void dp__mm2_stage(float *sm, const float *A, const float *B, int r, int K, int c, int i0, int j0, int k0, int vwa, int vwb)
{
    /* not unrolled: the unrolled copies' addresses, hoisted out of the K
       loop, cost the 128 x 128 kernels registers and spills */
#pragma unroll 1
    for (int q = threadIdx.x; q < BM * DP__MM_BK / vwa; q += DP__MM2_THREADS) {
        if (ROUND) dp__mm2_round_copy<BM, BN>(sm, 0, q, vwa);
        else dp__mm2_copy<BM, BN>(sm, 0, q, vwa, A, B, r, K, c, i0, j0, k0);
    }
#pragma unroll 1
    for (int q = threadIdx.x; q < DP__MM_BK * BN / vwb; q += DP__MM2_THREADS) {
        if (ROUND) dp__mm2_round_copy<BM, BN>(sm, 1, q, vwb);
        else dp__mm2_copy<BM, BN>(sm, 1, q, vwb, A, B, r, K, c, i0, j0, k0);
    }
}

/* One step (32) of the warp's BM/2 x BN/2 tile from stage buffer sm */
template <int PREC, int BM, int BN>
__device__ static inline void dp__mm2_compute(const float *sm, int wr, int wc, int lane, float (&acc)[BM / 32][BN / 16][4])
{
    constexpr int MT = BM / 32, NT = BN / 16, KF = PREC == DP_PREC_BF16 ? 16 : 8;
    constexpr int NA = PREC == DP_PREC_BF16 ? 8 : 4, NB = PREC == DP_PREC_BF16 ? 4 : 2;
    const float *As = sm, *Bs = sm + BM * DP__MM_BK;
    const int g = lane >> 2, t = lane & 3;
    /* h: the lane's A chunk (floats 8t + 4h ..) of the mmas kk that read it
       (tf32: 2h, 2h + 1; bf16: h), loaded once for them */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float4 av[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int hi = 0; hi < 2; hi++) av[mt][hi] = *(const float4 *)(As + dp__mm2_a_off(wr + 16 * mt + g + 8 * hi, 8 * t + 4 * h));
#pragma unroll
        for (int kk = 0; kk < DP__MM_BK / KF; kk++) {
            if ((dp__mm2_a_pos(PREC, kk, 0) & ~3) != 4 * h) continue;
            float4 bv[NB][NT / 4];
            uint32_t a[MT][4], b[NT][2];
#pragma unroll
            for (int e = 0; e < NB; e++)
#pragma unroll
                for (int hb = 0; hb < NT / 4; hb++)
                    bv[e][hb] = *(const float4 *)(Bs + dp__mm2_b_off(BN, 8 * t + dp__mm2_b_pos(PREC, kk, e), wc + 4 * dp__mm2_bchunk(NT, g, hb)));
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < NA; e += 2) {
                    float x0 = dp__mm2_f4(av[mt][dp__mm2_a_hi(PREC, e)], dp__mm2_a_pos(PREC, kk, e) & 3);
                    float x1 = dp__mm2_f4(av[mt][dp__mm2_a_hi(PREC, e + 1)], dp__mm2_a_pos(PREC, kk, e + 1) & 3);
                    if (PREC == DP_PREC_BF16) a[mt][e >> 1] = dp__mm_bf16x2(x0, x1);
                    else { a[mt][e] = __float_as_uint(x0); a[mt][e + 1] = __float_as_uint(x1); }   /* rounded: dp__mm2_round_copy */
                }
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int e = 0; e < NB; e += 2) {
                    float x0 = dp__mm2_f4(bv[e][j >> 2], j & 3), x1 = dp__mm2_f4(bv[e + 1][j >> 2], j & 3);
                    if (PREC == DP_PREC_BF16) b[j][e >> 1] = dp__mm_bf16x2(x0, x1);
                    else { b[j][e] = __float_as_uint(x0); b[j][e + 1] = __float_as_uint(x1); }
                }
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int j = 0; j < NT; j++) {
                    float *d = acc[mt][j];
                    if (PREC == DP_PREC_BF16)
                        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                                     : "r"(a[mt][0]), "r"(a[mt][1]), "r"(a[mt][2]), "r"(a[mt][3]), "r"(b[j][0]), "r"(b[j][1]));
                    else
                        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                                     : "r"(a[mt][0]), "r"(a[mt][1]), "r"(a[mt][2]), "r"(a[mt][3]), "r"(b[j][0]), "r"(b[j][1]));
                }
        }
    }
}
#endif

/* vwa, vwb: floats per copy of A and B (4 or 1); vwc: 4 where C's rows
   take 16-byte stores, else 1. A no-op below sm_80, as dp__k_mma. */
template <int PREC, int STAGES, int BM, int BN>
__global__ static void __launch_bounds__(DP__MM2_THREADS, 2) dp__k_mma2(const float *A, const float *B, float *C, int r, int K, int c, int vwa, int vwb, int vwc, dp__cu_ts ts)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr int MT = BM / 32, NT = BN / 16;
    extern __shared__ float4 dp__mm_smem[];
    dp__cu_stamp_begin(ts);
    float *sm = (float *)dp__mm_smem;
    const int stage = dp__mm2_stage_floats(BM, BN), lane = threadIdx.x & 31, g = lane >> 2;
    int wr, wc;
    dp__mm2_warp_at(threadIdx.x >> 5, BM, BN, &wr, &wc);
    long long tr = (r + BM - 1) / BM, tc = (c + BN - 1) / BN;
    int nk = (K + DP__MM_BK - 1) / DP__MM_BK;
    for (long long t = blockIdx.x; t < tr * tc; t += gridDim.x) {
        long long ti, tj;
        dp__mm2_tile_at(t, tr, tc, &ti, &tj);
        int i0 = (int)ti * BM, j0 = (int)tj * BN;
        float acc[MT][NT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[mt][j][e] = 0.0f;
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < nk) dp__mm2_stage<BM, BN, 0>(sm + s * stage, A, B, r, K, c, i0, j0, s * DP__MM_BK, vwa, vwb);
            asm volatile("cp.async.commit_group;\n" ::);
        }
        for (int kt = 0; kt < nk; kt++) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
            if (PREC == DP_PREC_TF32) dp__mm2_stage<BM, BN, 1>(sm + (kt % STAGES) * stage, A, B, r, K, c, i0, j0, 0, vwa, vwb);
            __syncthreads();   /* step kt is in (and rounded); every warp is done with step kt - 1's buffer */
            int pf = kt + STAGES - 1;
            if (pf < nk) dp__mm2_stage<BM, BN, 0>(sm + (pf % STAGES) * stage, A, B, r, K, c, i0, j0, pf * DP__MM_BK, vwa, vwb);
            asm volatile("cp.async.commit_group;\n" ::);
            dp__mm2_compute<PREC, BM, BN>(sm + (kt % STAGES) * stage, wr, wc, lane, acc);
        }
        asm volatile("cp.async.wait_group 0;\n" ::);
        __syncthreads();   /* the next tile's copies reuse the buffers */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int hi = 0; hi < 2; hi++) {
                int i = i0 + wr + 16 * mt + g + 8 * hi;
                if (i >= r) continue;
                float *row = C + (long long)i * c;
#pragma unroll
                for (int e1 = 0; e1 < 2; e1++)
#pragma unroll
                    for (int h = 0; h < NT / 4; h++) {
                        int j = j0 + wc + dp__mm2_store_col(NT, lane, e1, h);
                        const float *v0 = acc[mt][4 * h], *v1 = acc[mt][4 * h + 1], *v2 = acc[mt][4 * h + 2], *v3 = acc[mt][4 * h + 3];
                        int e = 2 * hi + e1;
                        if (vwc == 4 && j < c) *(float4 *)(row + j) = make_float4(v0[e], v1[e], v2[e], v3[e]);
                        else {
                            if (j < c) row[j] = v0[e];
                            if (j + 1 < c) row[j + 1] = v1[e];
                            if (j + 2 < c) row[j + 2] = v2[e];
                            if (j + 3 < c) row[j + 3] = v3[e];
                        }
                    }
            }
    }
    dp__cu_stamp_end(ts);
#else
    (void)A; (void)B; (void)C; (void)r; (void)K; (void)c; (void)vwa; (void)vwb; (void)vwc; (void)ts;
#endif
}

/* Bytes of shared memory of a launch */
static size_t dp__mm2_smem_bytes(int stages, int bm, int bn) { return sizeof(float) * (size_t)dp__mm2_stage_floats(bm, bn) * (size_t)stages; }

/* The shared-memory limit of each tile shape raised to its size */
template <int PREC, int STAGES>
static int dp__mm2_attrs(dp_error *err)
{
    int rc = DP_OK;
    cudaCheck(cudaFuncSetAttribute(dp__k_mma2<PREC, STAGES, 128, 128>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dp__mm2_smem_bytes(STAGES, 128, 128)));
    cudaCheck(cudaFuncSetAttribute(dp__k_mma2<PREC, STAGES, 64, 128>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dp__mm2_smem_bytes(STAGES, 64, 128)));
    cudaCheck(cudaFuncSetAttribute(dp__k_mma2<PREC, STAGES, 64, 64>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dp__mm2_smem_bytes(STAGES, 64, 64)));
done:
    return rc;
}

/* The block tile for an r x c product at a launch cap of cap blocks
   (about 8 per SM): the largest of 128 x 128 (for r > 64), 64 x 128 and
   64 x 64 whose tiles number at least cap / 4 (two per SM), else 64 x 64 */
__host__ __device__ static inline void dp__mm2_shape(int r, int c, int cap, int *bm, int *bn)
{
    long long rows128 = (r + 127) / 128, rows64 = (r + 63) / 64, cols128 = (c + 127) / 128;
    if (r > 64 && rows128 * cols128 * 4 >= cap) { *bm = 128; *bn = 128; }
    else if (rows64 * cols128 * 4 >= cap) { *bm = 64; *bn = 128; }
    else { *bm = 64; *bn = 64; }
}

/* Enqueues the second kernel of precision prec and stages on stream s; a
   launch of no rows or columns (the executor's warm-up) launches each
   tile shape once */
static int dp__mm2_launch(int prec, int stages, const float *A, const float *B, float *C, int r, int K, int c, int cap, cudaStream_t s, dp__cu_ts ts, dp_error *err)
{
    int rc = DP_OK, bm, bn;
    int vwa = K % 4 == 0 && (uintptr_t)A % 16 == 0 ? 4 : 1, vwb = c % 4 == 0 && (uintptr_t)B % 16 == 0 ? 4 : 1;
    int vwc = c % 4 == 0 && (uintptr_t)C % 16 == 0 ? 4 : 1;
    dp__mm2_shape(r, c, cap, &bm, &bn);
    for (int w = r < 1 || c < 1 ? 0 : -1; w < 3; w++) {   /* w: the warm-up's shape */
        if (w >= 0) { bm = w == 0 ? 128 : 64; bn = w == 2 ? 64 : 128; }
        long long tiles = (long long)((r + bm - 1) / bm) * ((c + bn - 1) / bn);
        unsigned blocks = dp__cu_blocks(tiles, 1, cap);
        size_t sh = dp__mm2_smem_bytes(stages, bm, bn);
#define DP__MM2_GO(P, S) do { \
        if (bm == 128) dp__k_mma2<P, S, 128, 128><<<blocks, DP__MM2_THREADS, sh, s>>>(A, B, C, r, K, c, vwa, vwb, vwc, ts); \
        else if (bn == 128) dp__k_mma2<P, S, 64, 128><<<blocks, DP__MM2_THREADS, sh, s>>>(A, B, C, r, K, c, vwa, vwb, vwc, ts); \
        else dp__k_mma2<P, S, 64, 64><<<blocks, DP__MM2_THREADS, sh, s>>>(A, B, C, r, K, c, vwa, vwb, vwc, ts); } while (0)
        if (prec == DP_PREC_BF16) { if (stages == 3) DP__MM2_GO(DP_PREC_BF16, 3); else DP__MM2_GO(DP_PREC_BF16, 2); }
        else { if (stages == 3) DP__MM2_GO(DP_PREC_TF32, 3); else DP__MM2_GO(DP_PREC_TF32, 2); }
#undef DP__MM2_GO
        cudaCheck(cudaGetLastError());
        if (w < 0) break;
    }
done:
    return rc;
}

/* ----------------------------------------------------------------------
   >>cuda-mma-launch
   Both kernels' setup and launch.
   ---------------------------------------------------------------------- */
/* Bytes of shared memory of a launch */
static size_t dp__mm_smem_bytes(int prec, int stages, int bm) { return sizeof(float) * (size_t)dp__mm_stage_floats(prec, bm) * (size_t)stages; }

/* The shared-memory limit of each variant raised to its size */
template <int PREC, int STAGES>
static int dp__mm_attrs(dp_error *err)
{
    int rc = DP_OK;
    cudaCheck(cudaFuncSetAttribute(dp__k_mma<PREC, STAGES, 128>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dp__mm_smem_bytes(PREC, STAGES, 128)));
    cudaCheck(cudaFuncSetAttribute(dp__k_mma<PREC, STAGES, 64>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dp__mm_smem_bytes(PREC, STAGES, 64)));
done:
    return rc;
}

/* The matmul variant of a launch, one int: 0 the FP32 kernel, else
   precision + 16 x stages + 256 x kernel (1 dp__k_mma, 2 dp__k_mma2). */
#define DP__MM_CODE(kernel, prec, stages) ((prec) + 16 * (stages) + 256 * (kernel))
#define DP__MM_KERNEL 2     /* the executor's kernel (see >>cuda-mma2)  */

/* The tensor-core path on the current GPU (dev): *code gets the variant
   for precision want (DEFAULT: TF32 where it can, else FP32; FP32: 0) and
   kernel (1 or 2; 0: DP__MM_KERNEL), with the stages that its shared
   memory holds, the kernels' shared-memory limit raised to that. TF32 or
   BF16 where it cannot: DP_ERR_DEVICE naming the reason. */
static int dp__mm_path_kernel(int dev, int want, int kernel, int *code, const char *who, dp_error *err)
{
    int rc = DP_OK, major = 0, optin = 0, prec = want == DP_PREC_DEFAULT ? DP_PREC_TF32 : want, stages;
    size_t need3, need2;
    cudaFuncAttributes fa;
    *code = 0;
    if (kernel == 0) kernel = DP__MM_KERNEL;
    if (kernel != 1 && kernel != 2) return dp__fail(err, DP_ERR_RANGE, "%s: matmul kernel %d is none of 0 (the default), 1, 2", who, kernel);
    if (want == DP_PREC_FP32) return DP_OK;
    need3 = kernel == 1 ? dp__mm_smem_bytes(prec, 3, 128) : dp__mm2_smem_bytes(3, 128, 128);
    need2 = kernel == 1 ? dp__mm_smem_bytes(prec, 2, 128) : dp__mm2_smem_bytes(2, 128, 128);
    cudaCheck(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    cudaCheck(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    cudaCheck(cudaFuncGetAttributes(&fa, dp__k_mma<DP_PREC_TF32, 3, 128>));
    stages = optin >= (int)need3 ? 3 : 2;
    if (major < 8 || fa.ptxVersion < 80 || optin < (int)need2) {
        if (want == DP_PREC_DEFAULT) return DP_OK;   /* the FP32 kernel */
        return dp__fail(err, DP_ERR_DEVICE,
                        "%s: %s needs a GPU of compute capability 8.0+ and a build for sm_80+ (DP_NVCC_ARCH): GPU %d is %d.x, "
                        "the kernel was compiled for compute_%d, %d bytes of shared memory per block", who, dp_precision_name(prec), dev,
                        major, fa.ptxVersion, optin);
    }
    if (kernel == 2) {
        if (prec == DP_PREC_BF16) rc = stages == 3 ? dp__mm2_attrs<DP_PREC_BF16, 3>(err) : dp__mm2_attrs<DP_PREC_BF16, 2>(err);
        else rc = stages == 3 ? dp__mm2_attrs<DP_PREC_TF32, 3>(err) : dp__mm2_attrs<DP_PREC_TF32, 2>(err);
    } else {
        if (prec == DP_PREC_BF16) rc = stages == 3 ? dp__mm_attrs<DP_PREC_BF16, 3>(err) : dp__mm_attrs<DP_PREC_BF16, 2>(err);
        else rc = stages == 3 ? dp__mm_attrs<DP_PREC_TF32, 3>(err) : dp__mm_attrs<DP_PREC_TF32, 2>(err);
    }
    if (rc) goto done;
    *code = DP__MM_CODE(kernel, prec, stages);
done:
    return rc;
}
/* ... of the default kernel */
static int dp__mm_path(int dev, int want, int *code, const char *who, dp_error *err) { return dp__mm_path_kernel(dev, want, 0, code, who, err); }

/* The precision of a code (FP32 for 0) */
static int dp__mm_prec(int code) { return code ? code % 16 : DP_PREC_FP32; }

/* The block tile's rows for an r x c product at a launch cap of cap
   blocks (about 8 per SM): 64 where 128-row tiles would give fewer than
   two blocks per SM (cap / 4), else 128. */
static int dp__mm_bm(int r, int c, int cap)
{
    long long tiles = (long long)((r + 127) / 128) * ((c + DP__MM_BN - 1) / DP__MM_BN);
    return tiles * 4 < cap ? 64 : 128;
}

/* Enqueues the tensor-core matmul of variant code on stream s */
static int dp__mm_launch(int code, const float *A, const float *B, float *C, int r, int K, int c, int cap, cudaStream_t s, dp__cu_ts ts, dp_error *err)
{
    int rc = DP_OK, prec = code % 16, stages = code / 16 % 16, bm = dp__mm_bm(r, c, cap);
    if (code / 256 == 2) return dp__mm2_launch(prec, stages, A, B, C, r, K, c, cap, s, ts, err);
    int vwa = K % 4 == 0 && (uintptr_t)A % 16 == 0 ? 4 : 1, vwb = c % 4 == 0 && (uintptr_t)B % 16 == 0 ? 4 : 1;
    long long tiles = (long long)((r + bm - 1) / bm) * ((c + DP__MM_BN - 1) / DP__MM_BN);
    unsigned blocks = dp__cu_blocks(tiles, 1, cap);
    size_t sh = dp__mm_smem_bytes(prec, stages, bm);
#define DP__MM_GO(P, S, M) dp__k_mma<P, S, M><<<blocks, DP__MM_THREADS, sh, s>>>(A, B, C, r, K, c, vwa, vwb, ts)
    if (prec == DP_PREC_BF16) {
        if (stages == 3) { if (bm == 64) DP__MM_GO(DP_PREC_BF16, 3, 64); else DP__MM_GO(DP_PREC_BF16, 3, 128); }
        else { if (bm == 64) DP__MM_GO(DP_PREC_BF16, 2, 64); else DP__MM_GO(DP_PREC_BF16, 2, 128); }
    } else {
        if (stages == 3) { if (bm == 64) DP__MM_GO(DP_PREC_TF32, 3, 64); else DP__MM_GO(DP_PREC_TF32, 3, 128); }
        else { if (bm == 64) DP__MM_GO(DP_PREC_TF32, 2, 64); else DP__MM_GO(DP_PREC_TF32, 2, 128); }
    }
#undef DP__MM_GO
    cudaCheck(cudaGetLastError());
done:
    return rc;
}

/* Opaque ops, one block of DP__CU_THREADS threads. st (2 words on the
   device, one pair per logical device) carries the op's start time and
   running hash from one launch to the next when it has more than
   DP__CU_MAXIN inputs. The hash of an input: thread t mixes words t, t +
   256, ... in order, the 32 partials of each warp are folded by a fixed
   tree of shuffles, thread 0 folds the 8 warps' in order and adds the
   trailing bytes: deterministic (an input of no whole word skips the
   folds, which would only fold the threads' numbers). The last
   launch writes the output (a function of the hash), waits until start +
   ns on the GPU's global timer, and leaves the hash in the first word. */
typedef struct dp__cu_opq {
    const unsigned char *in[DP__CU_MAXIN];
    unsigned long long len[DP__CU_MAXIN];  /* bytes of each input to hash  */
    int nin, first, last, op;
    unsigned char *out;
    unsigned long long size, ns;
    unsigned long long *st;
    dp__cu_ts ts;
} dp__cu_opq;

__global__ static void dp__k_opaque(dp__cu_opq a)
{
    __shared__ unsigned long long part[DP__CU_THREADS / DP__CU_LANES];
    __shared__ unsigned long long hs;
    const unsigned long long P = 0x100000001b3ULL, G = 0x9e3779b97f4a7c15ULL;
    int t = threadIdx.x;
    dp__cu_stamp_begin(a.ts);
    if (t == 0) {
        if (a.first) { a.st[0] = dp__cu_clock(); a.st[1] = 0xcbf29ce484222325ULL ^ (unsigned long long)a.op; }
        hs = a.st[1];
    }
    __syncthreads();
    for (int k = 0; k < a.nin; k++) {
        unsigned long long words = a.len[k] / 8, ht = hs ^ ((unsigned long long)t * G);
        const unsigned long long *w = (const unsigned long long *)a.in[k];
        if (words > 0) {
            for (unsigned long long i = (unsigned long long)t; i < words; i += DP__CU_THREADS) { ht = (ht ^ w[i]) * P; ht ^= ht >> 29; }
            for (int o = DP__CU_LANES / 2; o > 0; o >>= 1) {   /* lane l folds in lane l + o: lane 0 ends with the warp's */
                unsigned long long f = (ht * P) ^ __shfl_down_sync(0xffffffffu, ht, o);
                ht = f ^ (f >> 29);
            }
            if ((t & (DP__CU_LANES - 1)) == 0) part[t / DP__CU_LANES] = ht;
            __syncthreads();
        }
        if (t == 0) {
            unsigned long long h = hs;
            for (int q = 0; words > 0 && q < DP__CU_THREADS / DP__CU_LANES; q++) { h = (h ^ part[q]) * P; h ^= h >> 29; }
            for (unsigned long long i = words * 8; i < a.len[k]; i++) h = (h ^ a.in[k][i]) * P;
            hs = h;
        }
        __syncthreads();
    }
    unsigned long long h = hs;
    if (!a.last) {
        if (t == 0) a.st[1] = h;
        dp__cu_stamp_end(a.ts);
        return;
    }
    for (unsigned long long i = (unsigned long long)t * 8; i + 8 <= a.size; i += 8ULL * DP__CU_THREADS)
        *(unsigned long long *)(a.out + i) = h + i * G;
    if (t == 0) {
        for (unsigned long long i = a.size / 8 * 8; i < a.size; i++) a.out[i] = (unsigned char)(h >> (8 * (i & 7)));
    }
    __syncthreads();
    if (t == 0) {
        unsigned long long end = a.st[0] + a.ns;
        while (dp__cu_clock() < end) __nanosleep(256);
        if (a.size >= 8) *(unsigned long long *)a.out = h;
    }
    dp__cu_stamp_end(a.ts);
}

/* >>cuda-links
   A paced copy between two logical devices on one GPU:
   every block records the earliest start on the GPU's clock (slot[0],
   atomicMin), copies its share of the n bytes with a grid stride (16 bytes
   at a time where both ends allow, else bytes) and clears the tail up to
   size; the last block to finish (slot[1], an atomic counter) waits until
   start + ns and resets the slot for the copy stream's next copy (or the
   graph's next replay). One slot per copy stream: its copies run one after
   another. */
typedef struct dp__cu_pc {
    unsigned char *dst;
    const unsigned char *src;
    unsigned long long n, size, ns;
    unsigned long long *slot;   /* [2]: start (ULLONG_MAX when idle), blocks done */
    const unsigned long long *from;   /* free links: the producer's end stamp
                                         (the transfer's modelled start), else NULL */
} dp__cu_pc;

__global__ static void dp__k_pcopy(dp__cu_pc a)
{
    unsigned long long i, stride = (unsigned long long)gridDim.x * blockDim.x,
                       t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) atomicMin(&a.slot[0], dp__cu_clock());
    if ((((uintptr_t)a.dst | (uintptr_t)a.src) & 15) == 0) {
        unsigned long long q = a.n / 16;
        for (i = t; i < q; i += stride) ((uint4 *)a.dst)[i] = ((const uint4 *)a.src)[i];
        for (i = q * 16 + t; i < a.n; i += stride) a.dst[i] = a.src[i];
    } else {
        for (i = t; i < a.n; i += stride) a.dst[i] = a.src[i];
    }
    for (i = a.n + t; i < a.size; i += stride) a.dst[i] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        unsigned long long done = atomicAdd(&a.slot[1], 1ULL);
        if (done == gridDim.x - 1ULL) {   /* the last block */
            /* a producer that launched nothing left no end stamp (0): from
               the copy's start then */
            unsigned long long st = a.from && *a.from ? *a.from : atomicAdd(&a.slot[0], 0ULL), end = st + a.ns;
            while (dp__cu_clock() < end) __nanosleep(256);
            a.slot[0] = ~0ULL;
            a.slot[1] = 0;
            __threadfence();
        }
    }
}

/* Blocks for `work` items of `per` each, at most cap, at least 1. */
static unsigned dp__cu_blocks(long long work, int per, int cap)
{
    long long b = (work + per - 1) / per;
    if (b > cap) b = cap;
    if (b < 1) b = 1;
    return (unsigned)b;
}

/* The row kernels (softmax, rmsnorm, layernorm) of an r x c op on stream
   s. Kernel 1: dp__k_rows, a warp per row, rows staged in shared memory
   where at least one fits in the block's DP__CU_ROW_SMEM bytes, as many
   warps (rows) a block as fit, at most 8 (the cap stays the same number
   of warps). Kernel 2 (the default, DP__ROWS_KERNEL): the same, but rows
   that leave dp__k_rows fewer than 8 warps a block (more than
   DP__CU_ROW_SMEM / 32 bytes: over 1536 floats) and still fit with
   dp__k_rows_block's two floats (at most 12286) go to it, a block per
   row. Both give the same results bit for bit; the first stays
   selectable for one A/B measurement on a GPU (exec_bench rows
   --rows-kernel 1,2, run by bench/gpu.sh), after which the slower is to
   be deleted. */
#define DP__ROWS_KERNEL 2
static int dp__cu_rows_launch(int kernel, dp_kind kind, const float *in, float *out, int r, int c, int cap, cudaStream_t s, dp__cu_ts ts, dp_error *err)
{
    int rc = DP_OK, wpb = DP__CU_THREADS / DP__CU_LANES, cap_rows;
    size_t row = (size_t)c * sizeof(float);
    int staged = row <= DP__CU_ROW_SMEM;
    if (kernel == 0) kernel = DP__ROWS_KERNEL;
    if (kernel == 2 && (size_t)wpb * row > DP__CU_ROW_SMEM && DP__CU_ROWB_SMEM(c) <= DP__CU_ROW_SMEM) {
        dp__k_rows_block<<<dp__cu_blocks(r, 1, cap), DP__CU_THREADS, DP__CU_ROWB_SMEM(c), s>>>((int)kind, in, out, r, c, ts);
        cudaCheck(cudaGetLastError());
        return rc;
    }
    if (staged && (size_t)wpb * row > DP__CU_ROW_SMEM) wpb = (int)(DP__CU_ROW_SMEM / row);
    cap_rows = cap * (DP__CU_THREADS / DP__CU_LANES) / wpb;
    dp__k_rows<<<dp__cu_blocks(r, wpb, cap_rows), wpb * DP__CU_LANES, staged ? (size_t)wpb * row : 0, s>>>((int)kind, in, out, r, c, staged, ts);
    cudaCheck(cudaGetLastError());
done:
    return rc;
}

/* Enqueues real op v on stream s: in[k] the input of its in-edge k, out its
   output (device pointers), at most cap blocks a launch. */
static int dp__cu_run_real(const dp_graph *g, int v, const float *const *in, float *out, uint64_t seed, int cap, int mm,
                           cudaStream_t s, dp__cu_ts ts, dp_error *err)
{
    int rc = DP_OK, r = g->rows[v], c = g->cols[v];
    dp_kind kind = g->kind[v];
    if ((long long)r * c == 0) return DP_OK;   /* an empty tensor: nothing to compute */
    if (kind == DP_OP_MATMUL) {
        int K = g->cols[g->src[g->in_edge[g->in_off[v]]]];
        if (mm) return dp__mm_launch(mm, in[0], in[1], out, r, K, c, cap, s, ts, err);
        long long tiles = (long long)((r + DP__TILE - 1) / DP__TILE) * ((c + DP__TILE - 1) / DP__TILE);
        dp__k_matmul<<<dp__cu_blocks(tiles, 1, cap), dim3(DP__TILE, DP__TROWS), 0, s>>>(in[0], in[1], out, r, K, c, ts);
        cudaCheck(cudaGetLastError());
    } else if (dp__cu_is_row_op(kind)) {
        if ((rc = dp__cu_rows_launch(0, kind, in[0], out, r, c, cap, s, ts, err))) goto done;
    } else if (kind == DP_OP_TRANSPOSE) {
        long long tiles = (long long)((r + DP__TILE - 1) / DP__TILE) * ((c + DP__TILE - 1) / DP__TILE);
        dp__k_transpose<<<dp__cu_blocks(tiles, 1, cap), dim3(DP__TILE, DP__TROWS), 0, s>>>(in[0], out, r, c, ts);
        cudaCheck(cudaGetLastError());
    } else if (kind == DP_OP_COPY) {
        dp__cu_ts t0 = {ts.t0, NULL}, t1 = {NULL, ts.t1};
        if (ts.t0) { dp__k_stamp<<<1, 1, 0, s>>>(t0); cudaCheck(cudaGetLastError()); }
        cudaCheck(cudaMemcpyAsync(out, in[0], sizeof(float) * (size_t)r * (size_t)c, cudaMemcpyDeviceToDevice, s));
        if (ts.t1) { dp__k_stamp<<<1, 1, 0, s>>>(t1); cudaCheck(cudaGetLastError()); }
    } else {
        int chunks = dp__cu_ew_chunks(g, v);
        for (int ch = 0; ch < chunks; ch++) {
            dp__cu_ew a;
            dp__cu_ew_setup(g, v, in, out, seed, ch, &a);
            if (a.n == 0) continue;
            dp__k_ew<<<dp__cu_blocks(a.n, DP__CU_THREADS, cap), DP__CU_THREADS, 0, s>>>(a, ts);
            cudaCheck(cudaGetLastError());
        }
    }
done:
    return rc;
}

/* ----------------------------------------------------------------------
   >>cuda-hostref
   ---------------------------------------------------------------------- */
/* The butterfly of 32 lane values, as the warp computes it. */
static float dp__cu_host_butterfly(float *v, int is_max)
{
    float t[DP__CU_LANES];
    for (int o = DP__CU_LANES / 2; o > 0; o >>= 1) {
        for (int l = 0; l < DP__CU_LANES; l++) t[l] = is_max ? fmaxf(v[l], v[l ^ o]) : v[l] + v[l ^ o];
        memcpy(v, t, sizeof t);
    }
    return v[0];
}

extern "C" void dp__cuda_host_kernel(const dp_graph *g, int v, const float *const *in, float *out, uint64_t seed)
{
    int r = g->rows[v], c = g->cols[v];
    dp_kind kind = g->kind[v];
    if (kind == DP_OP_OPAQUE || (long long)r * c == 0) return;
    if (kind == DP_OP_MATMUL) {
        int K = g->cols[g->src[g->in_edge[g->in_off[v]]]];
        for (long long i = 0; i < r; i++)
            for (long long j = 0; j < c; j++) {
                float acc = 0.0f;
                for (long long k = 0; k < K; k++) acc = fmaf(in[0][i * K + k], in[1][k * c + j], acc);
                out[i * c + j] = acc;
            }
    } else if (dp__cu_is_row_op(kind)) {
        float p[DP__CU_LANES];
        for (long long i = 0; i < r; i++) {
            const float *xr = in[0] + i * c;
            float *orow = out + i * c;
            if (kind == DP_OP_SOFTMAX) {
                for (int l = 0; l < DP__CU_LANES; l++) p[l] = dp__cu_part_max(xr, c, l);
                float mx = dp__cu_host_butterfly(p, 1);
                for (int l = 0; l < DP__CU_LANES; l++) p[l] = dp__cu_part_expsum(xr, c, mx, l);
                float s = dp__cu_host_butterfly(p, 0);
                for (int j = 0; j < c; j++) orow[j] = dp__cu_softmax_out(xr[j], mx, s);
            } else {
                float mu = 0.0f;
                if (kind == DP_OP_LAYERNORM) {
                    for (int l = 0; l < DP__CU_LANES; l++) p[l] = dp__cu_part_sum(xr, c, l);
                    mu = dp__cu_mean(dp__cu_host_butterfly(p, 0), c);
                }
                for (int l = 0; l < DP__CU_LANES; l++) p[l] = dp__cu_part_sqdev(xr, c, mu, l);
                float inv = dp__cu_norm_inv(dp__cu_host_butterfly(p, 0), c);
                for (int j = 0; j < c; j++) orow[j] = dp__cu_norm_out(xr[j], mu, inv);
            }
        }
    } else if (kind == DP_OP_COPY) {
        memcpy(out, in[0], sizeof(float) * (size_t)r * (size_t)c);
    } else {
        int chunks = dp__cu_ew_chunks(g, v);
        for (int ch = 0; ch < chunks; ch++) {
            dp__cu_ew a;
            dp__cu_ew_setup(g, v, in, out, seed, ch, &a);
            for (long long e = 0; e < a.n; e++) {
                if (a.vec) dp__cu_ew_apply4(&a, e);
                else dp__cu_ew_apply(&a, e);
            }
        }
    }
}

/* The tensor-core matmul on the host: the kernel's loops, index maps and
   zero fill, one block tile at a time, the 8 warps' 32 lanes' fragments
   gathered into each mma's 16 x kf and kf x 8 matrices. */
extern "C" int dp__cuda_host_mma(int r, int K, int c, const float *A, const float *B, float *C, int precision, int bm, int vec_a, int vec_b)
{
    const int prec = precision, vwa = vec_a ? 4 : 1, vwb = vec_b ? 4 : 1, mts = bm / 32;
    if ((prec != DP_PREC_TF32 && prec != DP_PREC_BF16) || (bm != 64 && bm != 128)) return -1;
    const int sa = dp__mm_sa(prec), sb = dp__mm_sb(prec), kf = dp__mm_kf(prec);
    const int na = prec == DP_PREC_BF16 ? 8 : 4, nb = prec == DP_PREC_BF16 ? 4 : 2;
    float *sm = (float *)malloc(sizeof(float) * (size_t)dp__mm_stage_floats(prec, bm));
    float (*acc)[32][DP__MM_MT][DP__MM_NT][4] = (float (*)[32][DP__MM_MT][DP__MM_NT][4])malloc(sizeof(float) * 8 * 32 * DP__MM_MT * DP__MM_NT * 4);
    if (!sm || !acc) { free(sm); free(acc); return -2; }
    float *As = sm, *Bs = sm + bm * sa;
    long long tr = (r + bm - 1) / bm, tc = (c + DP__MM_BN - 1) / DP__MM_BN;
    int nk = (K + DP__MM_BK - 1) / DP__MM_BK;
    for (long long t = 0; t < tr * tc; t++) {
        int i0 = (int)(t / tc) * bm, j0 = (int)(t % tc) * DP__MM_BN;
        memset(acc, 0, sizeof(float) * 8 * 32 * DP__MM_MT * DP__MM_NT * 4);
        for (int kt = 0; kt < nk; kt++) {
            int k0 = kt * DP__MM_BK, row, col;
            /* the copies (NaN where no copy writes: the padding, never read) */
            for (int i = 0; i < dp__mm_stage_floats(prec, bm); i++) sm[i] = NAN;
            for (int q = 0; q < bm * DP__MM_BK / vwa; q++) {
                dp__mm_copy_at(q, DP__MM_BK, vwa, &row, &col);
                int n = dp__mm_copy_n(i0 + row, k0 + col, r, K, vwa);
                for (int e = 0; e < vwa; e++) As[row * sa + col + e] = e < n ? A[(long long)(i0 + row) * K + k0 + col + e] : 0.0f;
            }
            for (int q = 0; q < DP__MM_BK * DP__MM_BN / vwb; q++) {
                dp__mm_copy_at(q, DP__MM_BN, vwb, &row, &col);
                int n = dp__mm_copy_n(k0 + row, j0 + col, K, c, vwb);
                for (int e = 0; e < vwb; e++) Bs[row * sb + col + e] = e < n ? B[(long long)(k0 + row) * c + j0 + col + e] : 0.0f;
            }
            for (int w = 0; w < 8; w++) {
                int wr, wc;
                dp__mm_warp_at(w, bm, &wr, &wc);
                for (int kk = 0; kk < DP__MM_BK; kk += kf)
                    for (int mt = 0; mt < mts; mt++)
                        for (int nt = 0; nt < DP__MM_NT; nt++) {
                            /* the mma's operands, each element from the lane that holds it */
                            float am[16][16], bm[16][8];
                            int k;
                            for (int lane = 0; lane < 32; lane++) {
                                for (int e = 0; e < na; e++) {
                                    dp__mm_a_at(prec, lane, e, &row, &k);
                                    float x = As[(wr + mt * 16 + row) * sa + kk + k];
                                    am[row][k] = prec == DP_PREC_BF16 ? dp__round_bf16(x) : dp__round_tf32(x);
                                }
                                for (int e = 0; e < nb; e++) {
                                    dp__mm_b_at(prec, lane, e, &k, &col);
                                    float x = Bs[(kk + k) * sb + wc + nt * 8 + col];
                                    bm[k][col] = prec == DP_PREC_BF16 ? dp__round_bf16(x) : dp__round_tf32(x);
                                }
                            }
                            for (int lane = 0; lane < 32; lane++)
                                for (int e = 0; e < 4; e++) {
                                    double s = 0;
                                    dp__mm_c_at(lane, e, &row, &col);
                                    for (k = 0; k < kf; k++) s += (double)am[row][k] * (double)bm[k][col];
                                    float *d = &acc[w][lane][mt][nt][e];
                                    *d = (float)((double)*d + s);
                                }
                        }
            }
        }
        for (int w = 0; w < 8; w++) {
            int wr, wc, row, col;
            dp__mm_warp_at(w, bm, &wr, &wc);
            for (int lane = 0; lane < 32; lane++)
                for (int mt = 0; mt < mts; mt++)
                    for (int nt = 0; nt < DP__MM_NT; nt++)
                        for (int e = 0; e < 4; e++) {
                            dp__mm_c_at(lane, e, &row, &col);
                            int i = i0 + wr + mt * 16 + row, j = j0 + wc + nt * 8 + col;
                            if (i < r && j < c) C[(long long)i * c + j] = acc[w][lane][mt][nt][e];
                        }
        }
    }
    free(sm);
    free(acc);
    return 0;
}

/* The second tensor-core kernel on the host (dp__k_mma2): its tile order,
   copies into the swizzled stage buffer with zero fill, TF32's rounding
   in place, and for each warp, step, kk and lane the fragment elements
   read from the offsets the kernel reads (a_hi, a_pos, b_pos, col), each
   put where the mma's layout (dp__mm_a_at, _b_at) has it; each mma's
   products summed exactly, then added to the FP32 accumulator; stores
   through the epilogue's map. */
extern "C" int dp__cuda_host_mma2(int r, int K, int c, const float *A, const float *B, float *C, int precision, int bm, int bn, int vec_a, int vec_b)
{
    const int prec = precision, vwa = vec_a ? 4 : 1, vwb = vec_b ? 4 : 1;
    if ((prec != DP_PREC_TF32 && prec != DP_PREC_BF16) || !((bm == 128 && bn == 128) || (bm == 64 && (bn == 128 || bn == 64)))) return -1;
    const int kf = dp__mm_kf(prec), mts = bm / 32, nts = bn / 16, nf = dp__mm2_stage_floats(bm, bn);
    const int na = prec == DP_PREC_BF16 ? 8 : 4, nb = prec == DP_PREC_BF16 ? 4 : 2;
    float *sm = (float *)malloc(sizeof(float) * (size_t)nf);
    float (*acc)[32][4][8][4] = (float (*)[32][4][8][4])malloc(sizeof(float) * 4 * 32 * 4 * 8 * 4);
    if (!sm || !acc) { free(sm); free(acc); return -2; }
    float *As = sm, *Bs = sm + bm * DP__MM_BK;
    long long tr = (r + bm - 1) / bm, tc = (c + bn - 1) / bn;
    int nk = (K + DP__MM_BK - 1) / DP__MM_BK;
    for (long long t = 0; t < tr * tc; t++) {
        long long ti, tj;
        dp__mm2_tile_at(t, tr, tc, &ti, &tj);
        int i0 = (int)ti * bm, j0 = (int)tj * bn, row, col;
        memset(acc, 0, sizeof(float) * 4 * 32 * 4 * 8 * 4);
        for (int kt = 0; kt < nk; kt++) {
            int k0 = kt * DP__MM_BK;
            for (int i = 0; i < nf; i++) sm[i] = NAN;   /* every float must be copied */
            for (int q = 0; q < bm * DP__MM_BK / vwa; q++) {
                dp__mm_copy_at(q, DP__MM_BK, vwa, &row, &col);
                int n = dp__mm_copy_n(i0 + row, k0 + col, r, K, vwa);
                for (int e = 0; e < vwa; e++) {
                    float x = e < n ? A[(long long)(i0 + row) * K + k0 + col + e] : 0.0f;
                    As[dp__mm2_a_off(row, col) + e] = prec == DP_PREC_TF32 ? dp__round_tf32(x) : x;   /* dp__mm2_round_copy */
                }
            }
            for (int q = 0; q < DP__MM_BK * bn / vwb; q++) {
                dp__mm_copy_at(q, bn, vwb, &row, &col);
                int n = dp__mm_copy_n(k0 + row, j0 + col, K, c, vwb);
                for (int e = 0; e < vwb; e++) {
                    float x = e < n ? B[(long long)(k0 + row) * c + j0 + col + e] : 0.0f;
                    Bs[dp__mm2_b_off(bn, row, col) + e] = prec == DP_PREC_TF32 ? dp__round_tf32(x) : x;
                }
            }
            for (int w = 0; w < 4; w++) {
                int wr, wc;
                dp__mm2_warp_at(w, bm, bn, &wr, &wc);
                for (int kk = 0; kk < DP__MM_BK / kf; kk++)
                    for (int mt = 0; mt < mts; mt++)
                        for (int j = 0; j < nts; j++) {
                            /* the mma's operands, each element from the lane that holds it */
                            float am[16][16], bmat[16][8];
                            int kap;
                            for (int lane = 0; lane < 32; lane++) {
                                int g = lane >> 2, tq = lane & 3;
                                for (int e = 0; e < na; e++) {
                                    float x = As[dp__mm2_a_off(wr + 16 * mt + g + 8 * dp__mm2_a_hi(prec, e), 8 * tq + dp__mm2_a_pos(prec, kk, e))];
                                    dp__mm_a_at(prec, lane, e, &row, &kap);
                                    am[row][kap] = prec == DP_PREC_BF16 ? dp__round_bf16(x) : x;
                                }
                                for (int e = 0; e < nb; e++) {
                                    float x = Bs[dp__mm2_b_off(bn, 8 * tq + dp__mm2_b_pos(prec, kk, e), wc + dp__mm2_col(nts, j, g))];
                                    dp__mm_b_at(prec, lane, e, &kap, &col);
                                    bmat[kap][col] = prec == DP_PREC_BF16 ? dp__round_bf16(x) : x;
                                }
                            }
                            for (int lane = 0; lane < 32; lane++)
                                for (int e = 0; e < 4; e++) {
                                    double s = 0;
                                    dp__mm_c_at(lane, e, &row, &col);
                                    for (kap = 0; kap < kf; kap++) s += (double)am[row][kap] * (double)bmat[kap][col];
                                    float *d = &acc[w][lane][mt][j][e];
                                    *d = (float)((double)*d + s);
                                }
                        }
            }
        }
        /* the epilogue's stores */
        for (int w = 0; w < 4; w++) {
            int wr, wc;
            dp__mm2_warp_at(w, bm, bn, &wr, &wc);
            for (int lane = 0; lane < 32; lane++)
                for (int mt = 0; mt < mts; mt++)
                    for (int hi = 0; hi < 2; hi++)
                        for (int e1 = 0; e1 < 2; e1++)
                            for (int h = 0; h < nts / 4; h++)
                                for (int i = 0; i < 4; i++) {
                                    int gi = i0 + wr + 16 * mt + (lane >> 2) + 8 * hi, gj = j0 + wc + dp__mm2_store_col(nts, lane, e1, h) + i;
                                    if (gi < r && gj < c) C[(long long)gi * c + gj] = acc[w][lane][mt][4 * h + i][2 * hi + e1];
                                }
        }
    }
    free(sm);
    free(acc);
    return 0;
}

/* The second kernel's maps, for tests/test_cuda.c (see doppler.h) */
extern "C" int dp__cuda_mma2_map(int map, const int *in, int *out)
{
    int g = in[1] >> 2, t = in[1] & 3, bm, bn, wr, wc;
    long long ti, tj;
    switch (map) {
    case 0: out[0] = dp__mm2_k_of(in[0], in[1], in[2]); return 0;
    case 1: out[0] = g + 8 * dp__mm2_a_hi(in[0], in[3]); out[1] = 8 * t + dp__mm2_a_pos(in[0], in[2], in[3]); return 0;
    case 2: out[0] = 8 * t + dp__mm2_b_pos(in[0], in[2], in[3]); out[1] = dp__mm2_col(in[4], in[5], g); return 0;
    case 3: out[0] = dp__mm2_col(in[0], in[1], in[2]); return 0;
    case 4: out[0] = g + 8 * in[2]; out[1] = dp__mm2_store_col(in[0], in[1], in[3], in[4]); return 0;
    case 5: out[0] = dp__mm2_a_off(in[0], in[1]); return 0;
    case 6: out[0] = dp__mm2_b_off(in[0], in[1], in[2]); return 0;
    case 7: dp__mm2_tile_at(in[0], in[1], in[2], &ti, &tj); out[0] = (int)ti; out[1] = (int)tj; return 0;
    case 8: dp__mm2_shape(in[0], in[1], in[2], &bm, &bn); out[0] = bm; out[1] = bn; return 0;
    case 9: dp__mm2_warp_at(in[0], in[1], in[2], &wr, &wc); out[0] = wr; out[1] = wc; return 0;
    default: return -1;
    }
}

/* ----------------------------------------------------------------------
   >>cuda-partitions
   Logical devices that share a GPU each get a green context of their own
   SMs (the driver API, resolved through the runtime's
   cudaGetDriverEntryPointByVersion: no -lcuda). The entry points live in
   a table held by the executor's (or the calibration's) state, not in a
   global.
   ---------------------------------------------------------------------- */
typedef struct dp__cudrv {
    int ok;   /* every entry point found */
    CUresult (CUDAAPI *err_string)(CUresult, const char **);
    CUresult (CUDAAPI *device_get)(CUdevice *, int);
    CUresult (CUDAAPI *dev_resource)(CUdevice, CUdevResource *, CUdevResourceType);
    CUresult (CUDAAPI *split)(CUdevResource *, unsigned int *, const CUdevResource *, CUdevResource *, unsigned int, unsigned int);
    CUresult (CUDAAPI *gen_desc)(CUdevResourceDesc *, CUdevResource *, unsigned int);
    CUresult (CUDAAPI *gc_create)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
    CUresult (CUDAAPI *gc_destroy)(CUgreenCtx);
    CUresult (CUDAAPI *gc_stream)(CUstream *, CUgreenCtx, unsigned int, int);
    CUresult (CUDAAPI *stream_destroy)(CUstream);
    CUresult (CUDAAPI *ctx_from_gc)(CUcontext *, CUgreenCtx);
    CUresult (CUDAAPI *ctx_push)(CUcontext);
    CUresult (CUDAAPI *ctx_pop)(CUcontext *);
} dp__cudrv;

/* Resolves the driver entry points in the versions of the cuda.h this file
   is compiled with (CUDART_VERSION: the function types above are that
   header's). Asking for 12.4's, when green contexts came in, failed on an
   H200 with driver 580: cuGreenCtxStreamCreate came in 12.5, and a symbol
   asked for at a version before its own is "version not sufficient". 0
   when all are found; else fills why (the first missing one) and leaves
   d->ok 0. */
static int dp__cudrv_load(dp__cudrv *d, char *why, size_t len)
{
    struct { const char *name; void **fp; } t[] = {
        {"cuGetErrorString", (void **)&d->err_string},
        {"cuDeviceGet", (void **)&d->device_get},
        {"cuDeviceGetDevResource", (void **)&d->dev_resource},
        {"cuDevSmResourceSplitByCount", (void **)&d->split},
        {"cuDevResourceGenerateDesc", (void **)&d->gen_desc},
        {"cuGreenCtxCreate", (void **)&d->gc_create},
        {"cuGreenCtxDestroy", (void **)&d->gc_destroy},
        {"cuGreenCtxStreamCreate", (void **)&d->gc_stream},
        {"cuStreamDestroy", (void **)&d->stream_destroy},
        {"cuCtxFromGreenCtx", (void **)&d->ctx_from_gc},
        {"cuCtxPushCurrent", (void **)&d->ctx_push},
        {"cuCtxPopCurrent", (void **)&d->ctx_pop},
    };
    memset(d, 0, sizeof *d);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        cudaError_t e = cudaGetDriverEntryPointByVersion(t[i].name, t[i].fp, CUDART_VERSION, cudaEnableDefault, &q);
        if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !*t[i].fp) {
            (void)cudaGetLastError();
            snprintf(why, len, "the driver has no %s (%s, query result %d)", t[i].name,
                     e != cudaSuccess ? cudaGetErrorName(e) : "cudaSuccess", (int)q);
            return 1;
        }
    }
    d->ok = 1;
    return 0;
}

/* A failed driver call, as dp__cuda_fail: file, line, call, the driver's
   message (cuGetErrorString through the table) and its number. */
static int dp__cu_drv_fail(const dp__cudrv *d, CUresult r, const char *call, const char *file, int line, dp_error *err)
{
    const char *msg = NULL;
    if (r == CUDA_SUCCESS) return DP_OK;
    if (!d->err_string || d->err_string(r, &msg) != CUDA_SUCCESS || !msg) msg = "unknown driver error";
    return dp__fail(err, DP_ERR_DEVICE, "%s:%d: %s: %s (CUresult %d)", file, line, call, msg, (int)r);
}

#define cuCheck(drv, call)                                                     \
    do {                                                                       \
        rc = dp__cu_drv_fail((drv), (call), #call, __FILE__, __LINE__, err);   \
        if (rc) goto done;                                                     \
    } while (0)

/* An event to record on a stream of green context gc (NULL: on a stream of
   the current GPU's primary context). An event and the stream it is
   recorded on must belong to one context (cuEventRecord: "otherwise
   CUDA_ERROR_INVALID_HANDLE"), and a green context's streams are its own:
   the event is made while gc's context is current (cuCtxFromGreenCtx,
   pushed for the call and popped). Waiting on it from another context's
   stream is allowed. */
static int dp__cu_event_in(const dp__cudrv *drv, CUgreenCtx gc, cudaEvent_t *ev, unsigned flags, dp_error *err)
{
    int rc = DP_OK;
    CUcontext ctx = NULL, was = NULL;
    cudaError_t e;
    if (!gc) {
        cudaCheck(cudaEventCreateWithFlags(ev, flags));
        return DP_OK;
    }
    cuCheck(drv, drv->ctx_from_gc(&ctx, gc));
    cuCheck(drv, drv->ctx_push(ctx));
    e = cudaEventCreateWithFlags(ev, flags);
    cuCheck(drv, drv->ctx_pop(&was));
    cudaCheck(e);
done:
    return rc;
}

extern "C" int dp__cu_partition(int sms, int min_part, int align, const double *speed, int n, int *out_sms, dp_error *err)
{
    double sum = 0;
    int lo, total = 0;
    if (n < 1 || !out_sms) return dp__fail(err, DP_ERR_ARG, "partition: %d partitions into %s", n, out_sms ? "an array" : "NULL");
    if (align < 1) align = 1;
    if (min_part < 1) min_part = 1;
    lo = (min_part + align - 1) / align * align;   /* the smallest partition */
    if (sms < 1 || (long long)lo * n > sms)
        return dp__fail(err, DP_ERR_RANGE, "partition: %d partitions of at least %d SMs do not fit in %d SMs", n, lo, sms);
    for (int i = 0; i < n; i++) {
        double v = speed ? speed[i] : 1.0;
        if (!(v > 0) || !isfinite(v))
            return dp__fail(err, DP_ERR_RANGE, "partition: speed %g of partition %d is not positive and finite", v, i);
        sum += v;
    }
    for (int i = 0; i < n; i++) {
        double share = (double)sms * (speed ? speed[i] : 1.0) / sum;
        int k = (int)floor(share / align + 1e-9) * align;   /* down to the alignment (1e-9: 132 * 1/4 is 33 exactly) */
        out_sms[i] = k < lo ? lo : k;
        total += out_sms[i];
    }
    /* minimums raised above their share can overfill the GPU: the largest
       partition gives back align SMs at a time (the lowest index first among
       equals); n x lo fits, so this ends */
    while (total > sms) {
        int big = -1;
        for (int i = 0; i < n; i++)
            if (out_sms[i] - align >= lo && (big < 0 || out_sms[i] > out_sms[big])) big = i;
        if (big < 0) return dp__fail(err, DP_ERR_RANGE, "partition: %d SMs cannot hold the %d partitions", sms, n);
        out_sms[big] -= align;
        total -= align;
    }
    return DP_OK;
}

extern "C" unsigned long long dp__cu_pace_ns(double latency, double bandwidth, double bytes, double seconds_per_unit)
{
    double t = latency, ns;
    if (bandwidth > 0 && isfinite(bandwidth) && bytes > 0) t += bytes / bandwidth;
    ns = t * seconds_per_unit * 1e9;
    if (!(ns > 0)) return 0;
    if (ns >= (double)DP__CU_PACE_MAX_NS) return DP__CU_PACE_MAX_NS;
    return (unsigned long long)(ns + 0.5);
}

/* The single speed a logical device's partition is sized by: the
   geometric mean over the op kinds of its speed for each (the speed at
   the largest work of the kind's curve, else the kind's speed, else the
   device's speed). A cluster without per-kind speeds: the device's speed. */
static double dp__cu_overall_speed(const dp_cluster *c, int d)
{
    double lg = 0;
    if (!c->kind_speed && !c->curve_len) return c->speed[d];
    for (int k = 0; k < DP_KIND__COUNT; k++) {
        size_t at = (size_t)d * DP_KIND__COUNT + k;
        double v = c->speed[d];
        if (c->curve_len && c->curve_len[at] > 0) v = c->curve[at * DP_MAX_CURVE + c->curve_len[at] - 1].speed;
        else if (c->kind_speed && c->kind_speed[at] > 0) v = c->kind_speed[at];
        lg += log(v);
    }
    return exp(lg / DP_KIND__COUNT);
}

/* The green contexts of the nd logical devices of GPU p that share it
   (devs[0..k-1]): its SM resource split into partitions sized by
   dp__cu_partition from their speeds, one green context each (gc[d],
   sms[d]). 0: made. Otherwise nothing is left made, why says what failed
   (a failed call's message in err2, not the run's error) and the caller
   shares the GPU as before. */
static int dp__cu_green(const dp__cudrv *drv, const dp_cluster *c, int p, const int *devs, int k,
                        CUgreenCtx *gc, int *sms, char *why, size_t len)
{
    dp_error e2, *err = &e2;
    int rc = DP_OK, *want = NULL, made = 0;
    double *speed = NULL;
    CUdevResource all, rest, *part = NULL;
    CUdevice dev = 0;
    unsigned int got = 0;
    int equal = 1;
    memset(&e2, 0, sizeof e2);
    memset(&all, 0, sizeof all);
    if (!(want = (int *)calloc((size_t)k, sizeof *want)) || !(speed = (double *)calloc((size_t)k, sizeof *speed)) ||
        !(part = (CUdevResource *)calloc((size_t)k, sizeof *part))) {
        snprintf(why, len, "out of memory");
        rc = DP_ERR_NOMEM;
        goto done;
    }
    cuCheck(drv, drv->device_get(&dev, p));   /* the runtime's ordinal p: the driver's device */
    cuCheck(drv, drv->dev_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    for (int i = 0; i < k; i++) speed[i] = dp__cu_overall_speed(c, devs[i]);
    if ((rc = dp__cu_partition((int)all.sm.smCount, (int)all.sm.minSmPartitionSize, (int)all.sm.smCoscheduledAlignment,
                               speed, k, want, err)))
        goto done;
    for (int i = 1; i < k; i++) equal &= want[i] == want[0];
    if (equal) {   /* one split into k like groups */
        got = (unsigned int)k;
        cuCheck(drv, drv->split(part, &got, &all, NULL, 0, (unsigned int)want[0]));
        if (got != (unsigned int)k) { rc = dp__fail(err, DP_ERR_DEVICE, "GPU %d split into %u groups of %d SMs, not %d", p, got, want[0], k); goto done; }
    } else {       /* one group at a time from what is left */
        rest = all;
        for (int i = 0; i < k; i++) {
            CUdevResource left;
            memset(&left, 0, sizeof left);
            got = 1;
            cuCheck(drv, drv->split(&part[i], &got, &rest, &left, 0, (unsigned int)want[i]));
            if (got != 1) { rc = dp__fail(err, DP_ERR_DEVICE, "GPU %d: no group of %d SMs left for partition %d", p, want[i], i); goto done; }
            rest = left;
        }
    }
    for (made = 0; made < k; made++) {
        CUdevResourceDesc desc;
        int d = devs[made];
        cuCheck(drv, drv->gen_desc(&desc, &part[made], 1));
        cuCheck(drv, drv->gc_create(&gc[d], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        sms[d] = (int)part[made].sm.smCount;
    }
done:
    if (rc) {
        if (why[0] == 0) snprintf(why, len, "GPU %d: %.140s", p, e2.msg);
        for (int i = 0; i < k; i++) {
            int d = devs[i];
            if (gc[d]) (void)drv->gc_destroy(gc[d]);
            gc[d] = NULL;
        }
        (void)cudaGetLastError();
    }
    free(want); free(speed); free(part);
    return rc;
}

/* ----------------------------------------------------------------------
   >>cuda-exec
   ---------------------------------------------------------------------- */
typedef struct dp__cux {
    const dp_graph *g; const dp_cluster *c; const int *assign;
    int n, m, nd, ngpu, cur_dev;
    double spu, bscale;
    uint64_t seed;
    int *gpu, *cap;              /* [nd] GPU of each logical device, blocks per launch */
    int prec;                    /* the dp_precision asked for               */
    int *mm;                     /* [ngpu] matmul variant (dp__mm_path)      */
    cudaStream_t *cs;            /* [nd] compute streams                      */
    cudaStream_t *xs;            /* [nd * nd] copy stream of pair (a, b)      */
    cudaStream_t *ctl;           /* [ngpu] each run's start stamp, read-backs */
    cudaMemPool_t *pool;         /* [ngpu]                                    */
    cudaEvent_t *eve;            /* [n] op done (dynamic dispatch: polled)    */
    unsigned long long **tsd;    /* [ngpu] stamps on each GPU: [0, n) ops'
                                    starts, [n, 2n) ends, [2n] the run's start */
    unsigned long long *tsh;     /* [2n + 1] one GPU's stamps read back       */
    unsigned char *remote;       /* [n] 1: op v has a consumer on another
                                    logical device (its copies wait on evd)  */
    cudaEvent_t *evx;            /* [m] copy done (cross edges)               */
    unsigned long long **st;     /* [nd] opaque ops' start time and hash      */
    void **buf, **xbuf;          /* [n] outputs, [m] copies                   */
    void **res;                  /* [nd] resident bytes (weights), held all call */
    const float **inp;           /* [m + 1] input pointers of one launch      */
    unsigned char *host;         /* read-back buffer                          */
    size_t host_len;
    int *fl, nfl;                /* [n + m] work in flight, in issue order:
                                    op v as v, edge e's copy as -1 - e       */
    /* graph dispatch: the static sequence captured once, launched per run */
    int planned;                 /* static or graph dispatch                  */
    int graph, capturing;
    cudaEvent_t *evd;            /* [n] op end where remote (static, graph)   */
    cudaEvent_t evf, *evj;       /* the capture's fork, [nd + nd * nd] joins  */
    cudaGraph_t cg;
    cudaGraphExec_t cge;
    /* partitions and links (>>cuda-partitions) */
    dp__cudrv drv;               /* the driver's entry points (drv.ok: found) */
    CUgreenCtx *gc;              /* [nd] logical device's green context, or NULL */
    int *sms;                    /* [nd] SMs its launches may use             */
    int sharing;                 /* DP_SHARING_*                              */
    char why[160];               /* DP_SHARING_SHARED: why                    */
    int pace;                    /* copies within a GPU paced (link_pacing)   */
    unsigned long long **slot;   /* [nd * nd] paced copy stream's start, count */
    /* one MPI rank's devices (>>cuda-rank): here[d] 1 for the logical
       devices this process runs (NULL: all; gpu[d] -1 for the others) */
    unsigned char *here;
    uint64_t *dig;               /* [n] each local sink's output hash, a run's */
    unsigned char *pin;          /* pinned host staging of cross-rank edges   */
    size_t *pin_off;             /* [m] edge's offset in pin (SIZE_MAX: none)  */
} dp__cux;

/* Makes GPU dev current unless *cur (the one made current last) says it
   is already: the executor and the calibration switch GPUs per launch. */
static int dp__cu_use(int *cur, int dev, dp_error *err)
{
    int rc = DP_OK;
    if (*cur != dev) {
        cudaCheck(cudaSetDevice(dev));
        *cur = dev;
    }
done:
    return rc;
}

/* The GPU of pair (a, b)'s copy stream: b's, or a's where b runs in
   another process (a rank's sends, staged out of a's GPU). */
static int dp__cu_pair_gpu(const dp__cux *x, long pair)
{
    int a = (int)(pair / x->nd), b = (int)(pair % x->nd);
    return x->gpu[b] >= 0 ? x->gpu[b] : x->gpu[a];
}

/* Stream i of the executor, in one numbering: the nd compute streams,
   then the nd * nd copy streams (pair (a, b), see dp__cu_pair_gpu), then
   the ngpu control streams; *gpu gets its GPU. NULL where none was made. */
static cudaStream_t dp__cu_stream(const dp__cux *x, long i, int *gpu)
{
    long nd = x->nd, nxs = nd * nd;
    if (i < nd) { *gpu = x->gpu[i]; return x->cs[i]; }
    if (i < nd + nxs) { *gpu = dp__cu_pair_gpu(x, i - nd); return x->xs[i - nd]; }
    *gpu = (int)(i - nd - nxs);
    return x->ctl[i - nd - nxs];
}

/* Lets GPU q read and write GPU p's memory directly, so that copies
   between them are not staged through the host (already enabled: fine). */
static int dp__cu_peer(int *cur, int q, int p, dp_error *err)
{
    int rc = DP_OK;
    cudaError_t e;
    if ((rc = dp__cu_use(cur, q, err))) return rc;
    e = cudaDeviceEnablePeerAccess(p, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
    else cudaCheck(e);
done:
    return rc;
}

/* A stream-ordered pool of pinned memory on GPU p (made current), into
   *pool: the executor's and the calibration's buffers come from one. */
static int dp__cu_pool_new(int *cur, int p, cudaMemPool_t *pool, dp_error *err)
{
    int rc = DP_OK;
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = p;
    if ((rc = dp__cu_use(cur, p, err))) return rc;
    cudaCheck(cudaMemPoolCreate(pool, &props));
done:
    return rc;
}

/* The G GPUs' pools pool[0..G) read and written by each other's GPUs
   where the hardware allows (peer access enabled first). */
static int dp__cu_pools_peer(int *cur, const cudaMemPool_t *pool, int G, dp_error *err)
{
    int rc = DP_OK;
    for (int p = 0; p < G; p++)
        for (int q = 0; q < G; q++) {
            int can = 0;
            cudaMemAccessDesc acc;
            if (p == q) continue;
            cudaCheck(cudaDeviceCanAccessPeer(&can, q, p));
            if (!can) continue;
            if ((rc = dp__cu_peer(cur, q, p, err))) return rc;
            memset(&acc, 0, sizeof acc);
            acc.location.type = cudaMemLocationTypeDevice;
            acc.location.id = q;
            acc.flags = cudaMemAccessFlagsProtReadWrite;
            cudaCheck(cudaMemPoolSetAccess(pool[p], &acc, 1));
        }
done:
    return rc;
}

/* The blocks a launch of a logical device on GPU gpu may use: the
   resident blocks (threads per SM / DP__CU_THREADS) of its partition's
   part_sms SMs, or (part_sms 0: not partitioned) of the GPU's SMs divided
   among the `share` logical devices on it; at least 1. *gpu_sms gets the
   GPU's SM count. */
static int dp__cu_block_cap(int gpu, int share, int part_sms, int *cap, int *gpu_sms, dp_error *err)
{
    int rc = DP_OK, sms = 0, threads = 0;
    cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu));
    cudaCheck(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, gpu));
    *gpu_sms = sms;
    *cap = part_sms > 0 ? part_sms * (threads / DP__CU_THREADS) : sms * (threads / DP__CU_THREADS) / share;
    if (*cap < 1) *cap = 1;
done:
    return rc;
}

/* A stream for logical device d (its green context's when it has one;
   d < 0: the current GPU's primary context). */
static int dp__cu_mkstream(dp__cux *x, int d, cudaStream_t *s, dp_error *err)
{
    int rc = DP_OK;
    if (d >= 0 && x->gc && x->gc[d]) {
        CUstream cs = NULL;
        cuCheck(&x->drv, x->drv.gc_stream(&cs, x->gc[d], CU_STREAM_NON_BLOCKING, 0));
        *s = (cudaStream_t)cs;
    } else {
        cudaCheck(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    }
done:
    return rc;
}

/* Destroys a stream made by dp__cu_mkstream for logical device d. */
static void dp__cu_rmstream(dp__cux *x, int d, cudaStream_t s)
{
    if (!s) return;
    if (d >= 0 && x->gc && x->gc[d]) (void)x->drv.stream_destroy((CUstream)s);
    else (void)cudaStreamDestroy(s);
}

static double dp__cu_now(void *ctx) { (void)ctx; return dp_now(); }

/* Opaque op v on logical device d: its inputs hashed, its output written,
   its modelled time spent (launches of DP__CU_MAXIN inputs each). */
static int dp__cu_run_opaque(dp__cux *x, int v, int d, const float *const *in, unsigned char *out, dp__cu_ts ts, dp_error *err)
{
    const dp_graph *g = x->g;
    int rc = DP_OK, nin = g->in_off[v + 1] - g->in_off[v], chunks = nin <= DP__CU_MAXIN ? 1 : (nin + DP__CU_MAXIN - 1) / DP__CU_MAXIN;
    /* the modelled time less the cluster's per-op overhead, which the
       dispatch itself costs */
    double ns = (dp_op_time(g, x->c, v, d) - (x->c->overhead ? x->c->overhead[d] : 0)) * x->spu * 1e9;
    for (int ch = 0; ch < chunks; ch++) {
        dp__cu_opq a;
        memset(&a, 0, sizeof a);
        a.first = ch == 0;
        a.last = ch == chunks - 1;
        a.op = v;
        a.out = out;
        a.size = dp_exec_op_bytes(g, v, x->bscale);
        a.ns = ns > 0 ? (unsigned long long)(ns + 0.5) : 0;
        a.st = x->st[d];
        a.ts = ts;
        for (int k = ch * DP__CU_MAXIN; k < nin && a.nin < DP__CU_MAXIN; k++) {
            int e = g->in_edge[g->in_off[v] + k], u = g->src[e];
            size_t lu = dp_exec_op_bytes(g, u, x->bscale), le = dp_exec_edge_bytes(g, e, x->bscale);
            /* the bytes the edge carries: the same wherever u ran */
            a.in[a.nin] = (const unsigned char *)in[k];
            a.len[a.nin++] = le < lu ? le : lu;
        }
        dp__k_opaque<<<1, DP__CU_THREADS, 0, x->cs[d]>>>(a);
        cudaCheck(cudaGetLastError());
    }
done:
    return rc;
}

static int dp__cu_launch(void *ctx, int v, int d, dp_error *err)
{
    dp__cux *x = (dp__cux *)ctx;
    const dp_graph *g = x->g;
    int rc = DP_OK, gp = x->gpu[d], nin = g->in_off[v + 1] - g->in_off[v];
    cudaStream_t s = x->cs[d];
    void *p = NULL;
    if ((rc = dp__cu_use(&x->cur_dev, gp, err))) return rc;
    size_t size = dp_exec_op_bytes(g, v, x->bscale);
    if (!x->buf[v]) {   /* graph dispatch: allocated before the capture */
        cudaCheck(cudaMallocFromPoolAsync(&p, size > 8 ? size : 8, x->pool[gp], s));
        x->buf[v] = p;
    }
    p = x->buf[v];
    for (int k = 0; k < nin; k++) {
        int e = g->in_edge[g->in_off[v] + k], u = g->src[e];
        if (x->assign[u] == d) {
            x->inp[k] = (const float *)x->buf[u];      /* same stream: already ordered */
        } else {
            x->inp[k] = (const float *)x->xbuf[e];
            cudaCheck(cudaStreamWaitEvent(s, x->evx[e], 0));
        }
    }
    {
        dp__cu_ts ts = { x->tsd[gp] + v, x->tsd[gp] + x->n + v };   /* the kernels stamp its start and end */
        if (g->kind[v] == DP_OP_OPAQUE) rc = dp__cu_run_opaque(x, v, d, x->inp, (unsigned char *)p, ts, err);
        else rc = dp__cu_run_real(g, v, x->inp, (float *)p, x->seed, x->cap[d], x->mm[x->gpu[d]], s, ts, err);
    }
    if (rc) goto done;
    if (!x->planned) {   /* dynamic: the host polls its end */
        cudaCheck(cudaEventRecord(x->eve[v], s));
        x->fl[x->nfl++] = v;
    } else if (x->remote[v]) {   /* its consumers' copies wait on this one */
        cudaCheck(cudaEventRecord(x->evd[v], s));
    }
done:
    return rc;
}

static int dp__cu_copy(void *ctx, int e, dp_error *err)
{
    dp__cux *x = (dp__cux *)ctx;
    const dp_graph *g = x->g;
    int rc = DP_OK, u = g->src[e], a = x->assign[u], b = x->assign[g->dst[e]], ga = x->gpu[a], gb = x->gpu[b];
    size_t size = dp_exec_edge_bytes(g, e, x->bscale), lu = dp_exec_op_bytes(g, u, x->bscale), nc = size < lu ? size : lu;
    cudaStream_t s = x->xs[(size_t)a * x->nd + b];
    void *p = NULL;
    if ((rc = dp__cu_use(&x->cur_dev, gb, err))) return rc;
    if (!x->xbuf[e]) {
        cudaCheck(cudaMallocFromPoolAsync(&p, size > 8 ? size : 8, x->pool[gb], s));
        x->xbuf[e] = p;
    }
    p = x->xbuf[e];
    cudaCheck(cudaStreamWaitEvent(s, x->planned ? x->evd[u] : x->eve[u], 0));
    if (ga == gb && x->pace) {   /* a link between logical devices of one GPU */
        dp__cu_pc k;
        size_t at = (size_t)a * x->nd + b;
        k.dst = (unsigned char *)p;
        k.src = (const unsigned char *)x->buf[u];
        k.n = nc;
        k.size = size;
        /* a real op's copy: its buffer's bytes, the cluster's units read as
           seconds (as the CLI's and exec_bench's predictions read them); an
           opaque op's: the graph's bytes, x seconds_per_unit (the
           dispatcher's modelled arrival, dp__rt_copy) */
        int real = g->kind[u] != DP_OP_OPAQUE;
        k.ns = dp__cu_pace_ns(x->c->latency[at], x->c->bandwidth[at], real ? (double)size : g->bytes[e], real ? 1.0 : x->spu);
        k.slot = x->slot[at];
        /* a serial link carries one transfer at a time: this copy's time
           runs from its start on the pair's stream (after the one before);
           free links let a pair's transfers overlap: from the producer's
           end (its kernels' end stamp, final once the stream has waited for
           it), so that a copy queued behind another on the stream is not
           charged the wait */
        k.from = x->c->link == DP_LINK_FREE ? x->tsd[ga] + x->n + u : NULL;
        dp__k_pcopy<<<dp__cu_blocks((long long)(size / 16 + 1), DP__CU_THREADS, x->cap[b]), DP__CU_THREADS, 0, s>>>(k);
        cudaCheck(cudaGetLastError());
    } else {
        if (ga == gb) cudaCheck(cudaMemcpyAsync(p, x->buf[u], nc, cudaMemcpyDeviceToDevice, s));
        else cudaCheck(cudaMemcpyPeerAsync(p, gb, x->buf[u], ga, nc, s));
        if (size > nc) cudaCheck(cudaMemsetAsync((unsigned char *)p + nc, 0, size - nc, s));
    }
    cudaCheck(cudaEventRecord(x->evx[e], s));
    if (!x->planned) x->fl[x->nfl++] = -1 - e;
done:
    return rc;
}

/* Every user of the buffer has completed (the dispatcher saw it), so it is
   freed on the owner's compute stream. */
static int dp__cu_release(void *ctx, int op, int e, dp_error *err)
{
    dp__cux *x = (dp__cux *)ctx;
    int rc = DP_OK, d = op >= 0 ? x->assign[op] : x->assign[x->g->dst[e]];
    void **p = op >= 0 ? &x->buf[op] : &x->xbuf[e];
    if (!*p) return DP_OK;
    if ((rc = dp__cu_use(&x->cur_dev, x->gpu[d], err))) return rc;
    cudaCheck(cudaFreeAsync(*p, x->cs[d]));
    *p = NULL;
done:
    return rc;
}

/* Polls the end events of the work in flight: the completed ones leave
   the list (which keeps its issue order) for done_ids. Between rounds
   with none the thread yields; it returns with none only once the deadline
   has passed. A failed query (a faulting kernel, a lost device) is the
   run's error. */
static int dp__cu_wait(void *ctx, double deadline, int *done_ids, int max, int *count, dp_error *err)
{
    dp__cux *x = (dp__cux *)ctx;
    *count = 0;
    for (;;) {
        int kept = 0;
        for (int i = 0; i < x->nfl; i++) {
            int id = x->fl[i];
            cudaError_t e = *count < max ? cudaEventQuery(id >= 0 ? x->eve[id] : x->evx[-1 - id]) : cudaErrorNotReady;
            if (e == cudaSuccess) { done_ids[(*count)++] = id; continue; }
            x->fl[kept++] = id;
            if (e == cudaErrorNotReady) continue;
            for (int j = i + 1; j < x->nfl; j++) x->fl[kept++] = x->fl[j];
            x->nfl = kept;
            return dp__cuda_fail(e, id >= 0 ? "cudaEventQuery(op end)" : "cudaEventQuery(copy end)", __FILE__, __LINE__, err);
        }
        x->nfl = kept;
        /* "not ready" is an answer, not a fault, but the runtime may keep it
           as the thread's last error, where the next launch's
           cudaGetLastError would find it */
        (void)cudaGetLastError();
        if (*count > 0 || (deadline >= 0 && dp_now() >= deadline)) return DP_OK;
        if (x->nfl == 0 && deadline < 0)
            return dp__fail(err, DP_ERR_GRAPH, "exec (cuda): waiting with nothing in flight and no deadline");
        sched_yield();
    }
}

/* DP_DISPATCH_STATIC: the simulator's schedule for the placement (its
   start times, ties in topological order) as one sequence of ops, made
   once per dp_exec_cuda call; every producer comes before its consumers,
   so each event a stream is made to wait for is recorded before. */
typedef struct dp__cu_key { double start; int rank, op; } dp__cu_key;

static int dp__cu_key_cmp(const void *a, const void *b)
{
    const dp__cu_key *p = (const dp__cu_key *)a, *q = (const dp__cu_key *)b;
    if (p->start != q->start) return p->start < q->start ? -1 : 1;
    return p->rank - q->rank;
}

static int dp__cu_static_plan(dp__cux *x, const dp_exec_opts *o, int *seq, double *held, dp_error *err)
{
    const dp_graph *g = x->g;
    int rc = DP_OK, n = x->n, have_sim = 0;
    dp_sim sim;
    dp_sim_opts so;
    dp__cu_key *key = (dp__cu_key *)calloc((size_t)n + 1, sizeof *key);
    if (!key) return dp__fail(err, DP_ERR_NOMEM, "exec (cuda): out of memory");
    memset(&so, 0, sizeof so);
    so.order = o->order;
    so.priority = o->priority;
    if ((rc = dp_sim_init(&sim, g, x->c, err))) goto done;
    have_sim = 1;
    if ((rc = dp_sim_run(&sim, x->assign, &so, err))) goto done;
    for (int i = 0; i < n; i++) { key[g->topo[i]].rank = i; key[g->topo[i]].op = g->topo[i]; }
    for (int v = 0; v < n; v++) key[v].start = sim.start[v];
    qsort(key, (size_t)n, sizeof *key, dp__cu_key_cmp);
    for (int i = 0; i < n; i++) seq[i] = key[i].op;
    /* every buffer is held to the end of the run */
    for (int d = 0; d < x->nd; d++) held[d] = 0;
    for (int v = 0; v < n; v++) held[x->assign[v]] += (double)dp_exec_op_bytes(g, v, x->bscale);
    for (int e = 0; e < x->m; e++)
        if (x->assign[g->src[e]] != x->assign[g->dst[e]]) held[x->assign[g->dst[e]]] += (double)dp_exec_edge_bytes(g, e, x->bscale);
    {
        /* and the resident bytes (weights), as the dispatcher counts them */
        double *rb = (double *)calloc((size_t)x->nd, sizeof *rb);
        if (!rb) { rc = dp__fail(err, DP_ERR_NOMEM, "exec (cuda): out of memory"); goto done; }
        (void)dp_resident_memory(g, x->c, x->assign, rb);
        for (int d = 0; d < x->nd; d++) held[d] += rb[d] > 0 ? floor(rb[d] * x->bscale + 0.5) : 0;
        free(rb);
    }
    for (int d = 0; d < x->nd; d++) {
        double limit = o->device_bytes > 0 ? o->device_bytes : x->c->memory ? x->c->memory[d] : 0;
        if (limit > 0 && held[d] > limit) {
            rc = dp__fail(err, DP_ERR_INFEASIBLE, "exec (cuda): static dispatch holds every buffer to the end of the run: %.17g bytes on device %d, over its %.17g", held[d], d, limit);
            goto done;
        }
    }
done:
    if (have_sim) dp_sim_free(&sim);
    free(key);
    return rc;
}

/* seq's ops launched in turn, each after the copies of its remote inputs
   (the launch and copy hooks of the dynamic dispatch, which make every
   stream wait on the events it needs): a static run, or a graph's capture. */
static int dp__cu_enqueue(dp__cux *x, const int *seq, dp_error *err)
{
    const dp_graph *g = x->g;
    int rc = DP_OK;
    for (int i = 0; i < x->n; i++) {
        int v = seq[i], d = x->assign[v];
        for (int k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int e = g->in_edge[k];
            if (x->assign[g->src[e]] != d && (rc = dp__cu_copy(x, e, err))) return rc;
        }
        if ((rc = dp__cu_launch(x, v, d, err))) return rc;
    }
    return rc;
}

static int dp__cu_sync(dp__cux *x, dp_error *err);

/* One run under DP_DISPATCH_STATIC: the sequence enqueued, then every
   stream awaited (a faulting kernel fails the wait). */
static int dp__cu_static_run(dp__cux *x, const int *seq, dp_error *err)
{
    int rc;
    if ((rc = dp__cu_enqueue(x, seq, err))) return rc;
    return dp__cu_sync(x, err);
}

/* DP_DISPATCH_GRAPH, once per dp_exec_cuda call: every buffer allocated
   (the graph keeps their addresses), then the static sequence captured
   from GPU 0's control stream (every stream forks from it and joins it
   again) and instantiated; each run is then one cudaGraphLaunch. */

static int dp__cu_graph_build(dp__cux *x, const int *seq, dp_error *err)
{
    const dp_graph *g = x->g;
    int rc = DP_OK, k = 0, nd = x->nd;
    cudaStream_t origin = x->ctl[0];
    for (int v = 0; v < x->n; v++) {
        int d = x->assign[v];
        size_t size = dp_exec_op_bytes(g, v, x->bscale);
        if ((rc = dp__cu_use(&x->cur_dev, x->gpu[d], err))) return rc;
        cudaCheck(cudaMallocFromPoolAsync(&x->buf[v], size > 8 ? size : 8, x->pool[x->gpu[d]], x->cs[d]));
    }
    for (int e = 0; e < x->m; e++) {
        int b = x->assign[g->dst[e]];
        size_t size = dp_exec_edge_bytes(g, e, x->bscale);
        if (x->assign[g->src[e]] == b) continue;
        if ((rc = dp__cu_use(&x->cur_dev, x->gpu[b], err))) return rc;
        cudaCheck(cudaMallocFromPoolAsync(&x->xbuf[e], size > 8 ? size : 8, x->pool[x->gpu[b]], x->cs[b]));
    }
    if ((rc = dp__cu_sync(x, err))) return rc;
    if ((rc = dp__cu_use(&x->cur_dev, 0, err))) return rc;
    cudaCheck(cudaEventCreateWithFlags(&x->evf, cudaEventDisableTiming));
    cudaCheck(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
    x->capturing = 1;
    cudaCheck(cudaEventRecord(x->evf, origin));
    for (int i = 0; i < nd + nd * nd; i++) {   /* the compute and copy streams */
        int gp = 0;
        cudaStream_t st = dp__cu_stream(x, i, &gp);
        if (!st) continue;
        if ((rc = dp__cu_use(&x->cur_dev, gp, err))) return rc;
        cudaCheck(cudaStreamWaitEvent(st, x->evf, 0));
    }
    if ((rc = dp__cu_enqueue(x, seq, err))) return rc;
    for (int i = 0; i < nd + nd * nd; i++) {
        int gp = 0;
        cudaStream_t st = dp__cu_stream(x, i, &gp);
        if (!st) continue;
        if ((rc = dp__cu_use(&x->cur_dev, gp, err))) return rc;
        /* streams 0..nd-1 are the compute streams, in their devices'
           green contexts; the copy streams are primary */
        if (!x->evj[k] && (rc = dp__cu_event_in(&x->drv, i < nd && x->gc ? x->gc[i] : NULL, &x->evj[k], cudaEventDisableTiming, err))) return rc;
        cudaCheck(cudaEventRecord(x->evj[k], st));
        if ((rc = dp__cu_use(&x->cur_dev, 0, err))) return rc;
        cudaCheck(cudaStreamWaitEvent(origin, x->evj[k], 0));
        k++;
    }
    x->capturing = 0;
    cudaCheck(cudaStreamEndCapture(origin, &x->cg));
    cudaCheck(cudaGraphInstantiate(&x->cge, x->cg, 0));
    x->nfl = 0;   /* the capture ran nothing */
done:
    return rc;
}

/* 64-bit mix of a buffer, word by word (the CPU executor's). */
static uint64_t dp__cu_hash(const unsigned char *b, size_t n, uint64_t h)
{
    size_t i;
    for (i = 0; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* Waits for every stream the executor made. Errors go to err; with err
   NULL (the failure path: the first error stands) it waits for the rest. */
static int dp__cu_sync(dp__cux *x, dp_error *err)
{
    int rc = DP_OK, r2;
    for (long i = 0; i < x->nd + (long)x->nd * x->nd + x->ngpu; i++) {
        int gp = 0;
        cudaStream_t s = dp__cu_stream(x, i, &gp);
        if (!s) continue;
        r2 = dp__cu_use(&x->cur_dev, gp, err);
        if (!r2) r2 = dp__cuda_fail(cudaStreamSynchronize(s), "cudaStreamSynchronize(stream)", __FILE__, __LINE__, err);
        if (r2 && !rc) rc = r2;
        if (rc && err) return rc;
    }
    return rc;
}

/* Waits for every stream, frees every buffer still held and waits for the
   frees; err as dp__cu_sync. */
static int dp__cu_drain(dp__cux *x, dp_error *err)
{
    int rc = dp__cu_sync(x, err), r2;
    if (rc && err) return rc;
    for (long i = 0; i < (long)x->n + x->m; i++) {
        void **p = i < x->n ? &x->buf[i] : &x->xbuf[i - x->n];
        int d = i < x->n ? x->assign[i] : x->assign[x->g->dst[i - x->n]];
        if (!*p) continue;
        r2 = dp__cu_use(&x->cur_dev, x->gpu[d], err);
        if (!r2) r2 = dp__cuda_fail(cudaFreeAsync(*p, x->cs[d]), "cudaFreeAsync(buffer, stream)", __FILE__, __LINE__, err);
        *p = NULL;
        if (r2 && !rc) rc = r2;
        if (rc && err) return rc;
    }
    r2 = dp__cu_sync(x, err);
    return rc ? rc : r2;
}

/* Destroys everything made by dp__cu_setup (what exists). */
static void dp__cu_teardown(dp__cux *x)
{
    /* every array exists once dp__cu_setup got past its allocations */
    int all = x->gpu && x->cap && x->cs && x->xs && x->ctl && x->pool && x->tsd && x->eve && x->evx &&
              x->st && x->buf && x->xbuf;
    if (x->capturing && x->ctl && x->ctl[0]) {   /* a capture that failed half-way */
        cudaGraph_t g = NULL;
        (void)cudaSetDevice(0);
        x->cur_dev = 0;   /* the drain below switches GPUs from here */
        (void)cudaStreamEndCapture(x->ctl[0], &g);
        if (g) (void)cudaGraphDestroy(g);
        x->capturing = 0;
    }
    if (x->cge) (void)cudaGraphExecDestroy(x->cge);
    if (x->cg) (void)cudaGraphDestroy(x->cg);
    if (all) {
        (void)dp__cu_drain(x, NULL);
        if (x->evd) for (int v = 0; v < x->n; v++) if (x->evd[v]) (void)cudaEventDestroy(x->evd[v]);
        if (x->evj) for (long i = 0; i < x->nd + (long)x->nd * x->nd; i++) if (x->evj[i]) (void)cudaEventDestroy(x->evj[i]);
        if (x->evf) (void)cudaEventDestroy(x->evf);
        for (int v = 0; v < x->n; v++) if (x->eve[v]) (void)cudaEventDestroy(x->eve[v]);
        for (int e = 0; e < x->m; e++) if (x->evx[e]) (void)cudaEventDestroy(x->evx[e]);
        for (int d = 0; d < x->nd; d++) {
            if (x->st[d]) { (void)cudaSetDevice(x->gpu[d]); (void)cudaFree(x->st[d]); }
            if (x->res && x->res[d]) { (void)cudaSetDevice(x->gpu[d]); (void)cudaFree(x->res[d]); }
            if (x->cs[d]) { (void)cudaSetDevice(x->gpu[d]); dp__cu_rmstream(x, d, x->cs[d]); }
        }
        for (long i = 0; i < (long)x->nd * x->nd; i++) {
            if (x->xs[i]) { (void)cudaSetDevice(dp__cu_pair_gpu(x, i)); dp__cu_rmstream(x, -1, x->xs[i]); }
            if (x->slot && x->slot[i]) { (void)cudaSetDevice(dp__cu_pair_gpu(x, i)); (void)cudaFree(x->slot[i]); }
        }
        for (int p = 0; p < x->ngpu; p++) {
            if (x->tsd[p]) { (void)cudaSetDevice(p); (void)cudaFree(x->tsd[p]); }
            if (x->ctl[p]) (void)cudaStreamDestroy(x->ctl[p]);
            if (x->pool[p]) (void)cudaMemPoolDestroy(x->pool[p]);
        }
    }
    /* the green contexts last: their streams are gone */
    if (x->gc) for (int d = 0; d < x->nd; d++) if (x->gc[d]) { (void)x->drv.gc_destroy(x->gc[d]); x->gc[d] = NULL; }
    x->cur_dev = -1;
    free(x->gc); free(x->sms); free(x->slot);
    free(x->gpu); free(x->cap); free(x->mm); free(x->cs); free(x->xs); free(x->ctl); free(x->pool); free(x->tsd); free(x->tsh);
    free(x->remote); free(x->eve); free(x->evx); free(x->st); free(x->buf); free(x->xbuf); free(x->inp);
    free(x->host); free(x->fl); free(x->evd); free(x->evj); free(x->res);
    free(x->dig); free(x->pin_off); free(x->here);
    if (x->pin) (void)cudaFreeHost(x->pin);
    x->pin = NULL;
    (void)cudaGetLastError();   /* leave no error of ours behind for the caller's next call */
}

/* The GPUs present, or DP_ERR_DEVICE "no CUDA device: <the runtime's reason>". */
static int dp__cu_gpus(int *n, dp_error *err)
{
    cudaError_t e = cudaGetDeviceCount(n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *n = 0;
        return dp__fail(err, DP_ERR_DEVICE, "no CUDA device: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    }
    if (*n < 1) return dp__fail(err, DP_ERR_DEVICE, "no CUDA device: the CUDA runtime reports 0 devices");
    return DP_OK;
}

/* Streams, pools, events and queues for one dp_exec_cuda call, or for
   one rank's devices (x->here): the k-th logical device this process runs
   is on GPU k % G, G the GPUs used (gpus, at most those devices). */
static int dp__cu_setup(dp__cux *x, int gpus, dp_error *err)
{
    const dp_graph *g = x->g;
    int rc = DP_OK, n = x->n, m = x->m, nd = x->nd, nl = 0, G;
    double *reserve = NULL;
    int *devs = NULL, *loc = NULL;
    char why[sizeof x->why];
    x->cur_dev = -1;
#define DP__CA(ptr, count) if (!((ptr) = (decltype(ptr))calloc((size_t)(count) + 1, sizeof *(ptr)))) { rc = dp__fail(err, DP_ERR_NOMEM, "exec (cuda): out of memory"); goto done; }
    DP__CA(x->gpu, nd); DP__CA(loc, nd);
    for (int d = 0; d < nd; d++) {
        x->gpu[d] = -1;
        if (!x->here || x->here[d]) loc[nl++] = d;
    }
    G = gpus < nl ? gpus : nl;
    for (int k = 0; k < nl; k++) x->gpu[loc[k]] = k % G;
    x->ngpu = G;
    x->sharing = nl > G ? DP_SHARING_PARTITIONS : DP_SHARING_NONE;
    DP__CA(x->cap, nd); DP__CA(x->mm, G); DP__CA(x->cs, nd); DP__CA(x->xs, (size_t)nd * nd); DP__CA(x->ctl, G);
    DP__CA(x->pool, G); DP__CA(x->tsd, G); DP__CA(x->tsh, (size_t)G * (2 * (size_t)n + 1)); DP__CA(x->remote, n);
    DP__CA(x->eve, n); DP__CA(x->evx, m); DP__CA(x->st, nd);
    DP__CA(x->buf, n); DP__CA(x->xbuf, m); DP__CA(x->inp, m); DP__CA(x->fl, n + m); DP__CA(x->dig, n);
    DP__CA(x->evd, n); DP__CA(x->evj, nd + (size_t)nd * nd); DP__CA(x->res, nd);
    DP__CA(x->gc, nd); DP__CA(x->sms, nd); DP__CA(x->slot, (size_t)nd * nd); DP__CA(devs, nd);
    DP__CA(reserve, nd);   /* [G] below, then [nd] for the resident bytes */
#undef DP__CA
    /* the bytes each GPU could hold at once, to grow its pool before the
       first run: its devices' outputs and the copies into them */
    for (int v = 0; v < n; v++)
        if (x->gpu[x->assign[v]] >= 0) reserve[x->gpu[x->assign[v]]] += (double)dp_exec_op_bytes(g, v, x->bscale);
    for (int e = 0; e < m; e++) {
        int b = x->assign[g->dst[e]];
        if (x->assign[g->src[e]] != b && x->gpu[b] >= 0) reserve[x->gpu[b]] += (double)dp_exec_edge_bytes(g, e, x->bscale);
    }
    for (int p = 0; p < G; p++) {
        uint64_t keep = UINT64_MAX;
        int no = 0;
        size_t free_b = 0, total_b = 0;
        void *tmp = NULL;
        if ((rc = dp__cu_pool_new(&x->cur_dev, p, &x->pool[p], err))) goto done;
        if ((rc = dp__mm_path(p, x->prec, &x->mm[p], "exec (cuda)", err))) goto done;
        cudaCheck(cudaMemPoolSetAttribute(x->pool[p], cudaMemPoolAttrReleaseThreshold, &keep));
        /* no hidden waits: an allocation on one logical device's stream
           must not be made to wait for a free queued on another's */
        cudaCheck(cudaMemPoolSetAttribute(x->pool[p], cudaMemPoolReuseAllowInternalDependencies, &no));
        cudaCheck(cudaStreamCreateWithFlags(&x->ctl[p], cudaStreamNonBlocking));
        cudaCheck(cudaMalloc((void **)&x->tsd[p], sizeof(unsigned long long) * (2 * (size_t)n + 1)));
        cudaCheck(cudaMemGetInfo(&free_b, &total_b));
        if (reserve[p] > 0.25 * (double)free_b) reserve[p] = 0.25 * (double)free_b;
        if (reserve[p] > (double)(1u << 30)) reserve[p] = (double)(1u << 30);
        if (reserve[p] >= 1) {
            cudaCheck(cudaMallocFromPoolAsync(&tmp, (size_t)reserve[p], x->pool[p], x->ctl[p]));
            cudaCheck(cudaFreeAsync(tmp, x->ctl[p]));
            cudaCheck(cudaStreamSynchronize(x->ctl[p]));
        }
    }
    if ((rc = dp__cu_pools_peer(&x->cur_dev, x->pool, G, err))) goto done;
    /* partitions: the logical devices of each shared GPU get green contexts
       of their own SMs; where that cannot be (no driver entry points, a GPU
       without SM partitioning, too many devices, a failed call) the GPU is
       shared as before and x->why says why (the first such reason) */
    if (nl > G && dp__cudrv_load(&x->drv, x->why, sizeof x->why)) x->sharing = DP_SHARING_SHARED;
    for (int p = 0; p < G && x->drv.ok; p++) {
        int k = 0;
        for (int i = p; i < nl; i += G) devs[k++] = loc[i];
        if (k < 2) continue;
        if ((rc = dp__cu_use(&x->cur_dev, p, err))) goto done;
        cudaCheck(cudaFree(0));   /* the primary context first */
        why[0] = 0;
        if (dp__cu_green(&x->drv, x->c, p, devs, k, x->gc, x->sms, why, sizeof why)) {
            if (x->sharing != DP_SHARING_SHARED) memcpy(x->why, why, sizeof why);   /* the first reason */
            x->sharing = DP_SHARING_SHARED;
        }
    }
    for (int d = 0; d < nd; d++) {
        int p = x->gpu[d], share = (nl - 1 - p) / G + 1, gsms = 0;
        if (p < 0) continue;
        if ((rc = dp__cu_use(&x->cur_dev, p, err))) goto done;
        if ((rc = dp__cu_block_cap(p, share, x->gc[d] ? x->sms[d] : 0, &x->cap[d], &gsms, err))) goto done;
        if (!x->gc[d]) x->sms[d] = gsms;
        if ((rc = dp__cu_mkstream(x, d, &x->cs[d], err))) goto done;
        cudaCheck(cudaMalloc((void **)&x->st[d], 2 * sizeof(unsigned long long)));
        cudaCheck(cudaMemsetAsync(x->st[d], 0, 2 * sizeof(unsigned long long), x->cs[d]));
    }
    /* resident bytes (weights): allocated and cleared before the first run,
       held to the end of the call (reserve is free again: it holds them) */
    (void)dp_resident_memory(g, x->c, x->assign, reserve);
    for (int d = 0; d < nd; d++) {
        double rb = reserve[d] > 0 ? floor(reserve[d] * x->bscale + 0.5) : 0;
        if (rb < 1 || x->gpu[d] < 0) continue;
        if ((rc = dp__cu_use(&x->cur_dev, x->gpu[d], err))) goto done;
        cudaCheck(cudaMalloc(&x->res[d], (size_t)rb));
        cudaCheck(cudaMemsetAsync(x->res[d], 0, (size_t)rb, x->cs[d]));
    }
    /* events only order and signal (the kernels' stamps time the ops):
       dynamic dispatch polls an event per op, static and graph dispatch
       order a remote consumer's copy after its producer */
    for (int e = 0; e < m; e++) if (x->assign[g->src[e]] != x->assign[g->dst[e]]) x->remote[g->src[e]] = 1;
    for (int v = 0; v < n; v++) {
        if (x->gpu[x->assign[v]] < 0) continue;
        if ((rc = dp__cu_use(&x->cur_dev, x->gpu[x->assign[v]], err))) goto done;
        /* recorded on its device's compute stream: in its green context */
        CUgreenCtx gv = x->gc ? x->gc[x->assign[v]] : NULL;
        if (!x->planned) { if ((rc = dp__cu_event_in(&x->drv, gv, &x->eve[v], cudaEventDisableTiming, err))) goto done; }
        else if (x->remote[v] && (rc = dp__cu_event_in(&x->drv, gv, &x->evd[v], cudaEventDisableTiming, err))) goto done;
    }
    for (int e = 0; e < m; e++) {
        int a = x->assign[g->src[e]], b = x->assign[g->dst[e]];
        /* a copy into a device here, or a rank's send staged out of one */
        if (a == b || (x->gpu[a] < 0 && x->gpu[b] < 0)) continue;
        if ((rc = dp__cu_use(&x->cur_dev, dp__cu_pair_gpu(x, (long)a * nd + b), err))) goto done;
        if (!x->xs[(size_t)a * nd + b]) {
            /* the primary context's, not the destination's partition: a copy
               must not queue behind the destination's kernels for SMs (the
               simulator's links are independent of compute); its blocks take
               the SMs outside the partitions first */
            if ((rc = dp__cu_mkstream(x, -1, &x->xs[(size_t)a * nd + b], err))) goto done;
            if (x->pace && x->gpu[b] >= 0 && x->gpu[a] == x->gpu[b]) {   /* the paced copies' slot: idle */
                cudaCheck(cudaMalloc((void **)&x->slot[(size_t)a * nd + b], 2 * sizeof(unsigned long long)));
                cudaCheck(cudaMemsetAsync(x->slot[(size_t)a * nd + b], 0xff, sizeof(unsigned long long), x->xs[(size_t)a * nd + b]));
                cudaCheck(cudaMemsetAsync(x->slot[(size_t)a * nd + b] + 1, 0, sizeof(unsigned long long), x->xs[(size_t)a * nd + b]));
            }
        }
        cudaCheck(cudaEventCreateWithFlags(&x->evx[e], cudaEventDisableTiming));
    }
    /* the default precision: TF32 where every GPU has the tensor-core
       path, else FP32 on all (one precision per run) */
    for (int p = 0; p < G; p++)
        if (!x->mm[p]) for (int q = 0; q < G; q++) x->mm[q] = 0;
    /* load every kernel once in every logical device's context (lazy
       module loading would otherwise charge the first run; a green context
       is a context of its own): launches with no work */
    for (int d = 0; d < nd; d++) {
        dp__cu_ew a;
        dp__cu_opq q;
        if (x->gpu[d] < 0) continue;
        memset(&a, 0, sizeof a);
        memset(&q, 0, sizeof q);
        q.st = x->st[d];
        if ((rc = dp__cu_use(&x->cur_dev, x->gpu[d], err))) goto done;
        dp__k_ew<<<1, DP__CU_THREADS, 0, x->cs[d]>>>(a, dp__cu_ts{NULL, NULL});
        cudaCheck(cudaGetLastError());
        dp__k_rows<<<1, DP__CU_THREADS, 0, x->cs[d]>>>(DP_OP_SOFTMAX, NULL, NULL, 0, 0, 0, dp__cu_ts{NULL, NULL});
        cudaCheck(cudaGetLastError());
        dp__k_rows_block<<<1, DP__CU_THREADS, 0, x->cs[d]>>>(DP_OP_SOFTMAX, NULL, NULL, 0, 0, dp__cu_ts{NULL, NULL});
        cudaCheck(cudaGetLastError());
        dp__k_matmul<<<1, dim3(DP__TILE, DP__TROWS), 0, x->cs[d]>>>(NULL, NULL, NULL, 0, 0, 0, dp__cu_ts{NULL, NULL});
        cudaCheck(cudaGetLastError());
        dp__k_stamp<<<1, 1, 0, x->cs[d]>>>(dp__cu_ts{NULL, NULL});
        cudaCheck(cudaGetLastError());
        dp__k_transpose<<<1, dim3(DP__TILE, DP__TROWS), 0, x->cs[d]>>>(NULL, NULL, 0, 0, dp__cu_ts{NULL, NULL});
        cudaCheck(cudaGetLastError());
        /* the tensor-core kernel's two block tiles (cap 1: 64 rows, 0: 128) */
        int mm = x->mm[x->gpu[d]];
        if (mm && ((rc = dp__mm_launch(mm, NULL, NULL, NULL, 0, 0, 0, 1, x->cs[d], dp__cu_ts{NULL, NULL}, err)) ||
                   (rc = dp__mm_launch(mm, NULL, NULL, NULL, 0, 0, 0, 0, x->cs[d], dp__cu_ts{NULL, NULL}, err)))) goto done;
        dp__k_opaque<<<1, DP__CU_THREADS, 0, x->cs[d]>>>(q);
        cudaCheck(cudaGetLastError());
    }
    for (long i = 0; i < (long)nd * nd; i++) {   /* the paced copy: no bytes, no wait */
        dp__cu_pc k;
        if (!x->slot[i]) continue;
        memset(&k, 0, sizeof k);
        k.slot = x->slot[i];
        if ((rc = dp__cu_use(&x->cur_dev, dp__cu_pair_gpu(x, i), err))) goto done;
        dp__k_pcopy<<<1, DP__CU_THREADS, 0, x->xs[i]>>>(k);
        cudaCheck(cudaGetLastError());
        cudaCheck(cudaStreamSynchronize(x->xs[i]));
    }
    for (int d = 0; d < nd; d++) {
        if (x->gpu[d] < 0) continue;
        if ((rc = dp__cu_use(&x->cur_dev, x->gpu[d], err))) goto done;
        cudaCheck(cudaStreamSynchronize(x->cs[d]));
    }
done:
    free(reserve); free(devs); free(loc);
    return rc;
}

/* The sinks' outputs of a run (those of this process's devices): read
   back, each one's hash into x->dig[v], and kept in keep[v] when keep is
   given (the last run's, real ops only; a NULL keep[v] is malloc'ed). */
static int dp__cu_read_sinks(dp__cux *x, float **keep, dp_error *err)
{
    const dp_graph *g = x->g;
    int rc = DP_OK;
    for (int v = 0; v < x->n; v++) {
        size_t len = dp_exec_op_bytes(g, v, x->bscale);
        int p = x->gpu[x->assign[v]];
        x->dig[v] = 0;
        if (g->out_off[v + 1] > g->out_off[v] || p < 0) continue;
        if (len > x->host_len) {
            unsigned char *nb = (unsigned char *)realloc(x->host, len);
            if (!nb) return dp__fail(err, DP_ERR_NOMEM, "exec (cuda): out of memory reading back %zu bytes", len);
            x->host = nb;
            x->host_len = len;
        }
        if ((rc = dp__cu_use(&x->cur_dev, p, err))) return rc;
        cudaCheck(cudaMemcpyAsync(x->host, x->buf[v], len, cudaMemcpyDeviceToHost, x->ctl[p]));
        cudaCheck(cudaStreamSynchronize(x->ctl[p]));
        x->dig[v] = dp__cu_hash(x->host, len, 0xcbf29ce484222325ULL ^ (uint64_t)v);
        if (keep && g->kind[v] != DP_OP_OPAQUE) {
            /* the library's allocator: dp_exec_result_free frees it */
            if (!keep[v] && !(keep[v] = (float *)dp__calloc(len, 1))) return dp__fail(err, DP_ERR_NOMEM, "exec (cuda): out of memory keeping outputs");
            memcpy(keep[v], x->host, len);
        }
    }
done:   /* cudaCheck's */
    return rc;
}

/* Each op's start and end in seconds from its GPU's start of the run, from
   the stamps of its kernels. An op that launched nothing (an empty tensor)
   starts and ends when its last input was ready. */
static int dp__cu_read_stamps(dp__cux *x, double *st, double *en, dp_error *err)
{
    const dp_graph *g = x->g;
    int rc = DP_OK, n = x->n;
    size_t stride = 2 * (size_t)n + 1;
    for (int p = 0; p < x->ngpu; p++) {
        if ((rc = dp__cu_use(&x->cur_dev, p, err))) return rc;
        cudaCheck(cudaMemcpy(x->tsh + p * stride, x->tsd[p], sizeof(unsigned long long) * stride, cudaMemcpyDeviceToHost));
    }
    for (int i = 0; i < n; i++) {
        int v = g->topo[i];
        if (x->gpu[x->assign[v]] < 0) continue;   /* another process's */
        const unsigned long long *t = x->tsh + x->gpu[x->assign[v]] * stride;
        if (t[v] == ~0ULL || t[n + v] < t[v]) {
            double ready = 0;
            for (int k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
                int u = g->src[g->in_edge[k]];
                if (en[u] > ready) ready = en[u];
            }
            st[v] = en[v] = ready;
            continue;
        }
        st[v] = (double)(long long)(t[v] - t[2 * (size_t)n]) * 1e-9;
        en[v] = (double)(long long)(t[n + v] - t[2 * (size_t)n]) * 1e-9;
        if (st[v] < 0) st[v] = 0;
        if (en[v] < st[v]) en[v] = st[v];
    }
done:   /* cudaCheck's */
    return rc;
}

/* A run's start: nothing in flight, the stamps cleared (starts to the
   largest value, ends to 0), then the run's start stamped on each GPU
   before anything is launched and awaited; *t (may be NULL) gets the
   host's clock (dp_now) right after. */
static int dp__cu_begin(dp__cux *x, double *t, dp_error *err)
{
    int rc = DP_OK, n = x->n;
    x->nfl = 0;   /* every stream is idle: nothing in flight */
    for (int p = 0; p < x->ngpu; p++) {
        if ((rc = dp__cu_use(&x->cur_dev, p, err))) return rc;
        cudaCheck(cudaMemsetAsync(x->tsd[p], 0xff, sizeof(unsigned long long) * (size_t)n, x->ctl[p]));
        cudaCheck(cudaMemsetAsync(x->tsd[p] + n, 0, sizeof(unsigned long long) * ((size_t)n + 1), x->ctl[p]));
        dp__k_stamp<<<1, 1, 0, x->ctl[p]>>>(dp__cu_ts{NULL, x->tsd[p] + 2 * (size_t)n});
        cudaCheck(cudaGetLastError());
    }
    for (int p = 0; p < x->ngpu; p++) {
        if ((rc = dp__cu_use(&x->cur_dev, p, err))) return rc;
        cudaCheck(cudaStreamSynchronize(x->ctl[p]));
    }
    if (t) *t = dp_now();
done:   /* cudaCheck's */
    return rc;
}

/* A run's end: every stream awaited, each op's start and end (seconds
   from its GPU's start stamp) and every sink's hash (x->dig) read, the
   outputs kept in keep (see dp__cu_read_sinks). */
static int dp__cu_end(dp__cux *x, double *st, double *en, float **keep, dp_error *err)
{
    int rc;
    if ((rc = dp__cu_sync(x, err)) || (rc = dp__cu_read_stamps(x, st, en, err))) return rc;
    return dp__cu_read_sinks(x, keep, err);
}

/* dp_exec_cuda's own options (after dp__exec_args) and the GPUs to use:
   *ngpu gets opts->gpus, or every GPU present. */
static int dp__cu_opts(const dp_exec_opts *o, int *ngpu, dp_error *err)
{
    int rc;
    if (o->gpus < 0) return dp__fail(err, DP_ERR_RANGE, "exec (cuda): gpus %d is negative", o->gpus);
    if (o->dispatch != DP_DISPATCH_DYNAMIC && o->dispatch != DP_DISPATCH_STATIC && o->dispatch != DP_DISPATCH_GRAPH)
        return dp__fail(err, DP_ERR_RANGE, "exec (cuda): dispatch %d is none of DP_DISPATCH_DYNAMIC (0), STATIC (1), GRAPH (2)", (int)o->dispatch);
    if (o->link_pacing < -1 || o->link_pacing > 1)
        return dp__fail(err, DP_ERR_RANGE, "exec (cuda): link_pacing %d is none of 0 (default: on), 1 (on), -1 (off)", o->link_pacing);
    if ((rc = dp__cu_gpus(ngpu, err))) return rc;
    if (o->gpus > *ngpu) return dp__fail(err, DP_ERR_RANGE, "exec (cuda): %d GPUs asked for, %d present", o->gpus, *ngpu);
    if (o->gpus) *ngpu = o->gpus;
    return DP_OK;
}

/* The call's state from its arguments (checked). */
static void dp__cu_init(dp__cux *x, const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_opts *o)
{
    x->g = g; x->c = c; x->assign = assign; x->n = g->n_ops; x->m = g->n_edges; x->nd = c->n;
    x->spu = o->seconds_per_unit; x->bscale = o->bytes_scale; x->seed = o->seed; x->prec = (int)o->precision;
    x->planned = o->dispatch != DP_DISPATCH_DYNAMIC;
    x->graph = o->dispatch == DP_DISPATCH_GRAPH;
    x->pace = o->link_pacing >= 0;
}

extern "C" int dp_exec_cuda(const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_opts *opts,
                            dp_exec_result *res, dp_error *err)
{
    dp_exec_opts o;
    dp__cux x;
    dp_dispatch_hooks h;
    int rc = DP_OK, n, nd, ngpu = 0, prev = -1, r;
    double *runs_start = NULL, *runs_end = NULL, *runs_busy = NULL, *runs_peak = NULL;
    int *seq = NULL;              /* static dispatch: the ops in launch order */
    double *held = NULL;          /* static dispatch: [nd] bytes held per run */
    uint64_t digest = 0;
    memset(&x, 0, sizeof x);
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (res) memset(res, 0, sizeof *res);
    dp__cuda_ok(err);
    /* arguments first: none of this needs a GPU */
    if ((rc = dp__exec_args(g, c, assign, &o, res, "exec (cuda)", err))) return rc;
    n = g->n_ops; nd = c->n;
    if ((rc = dp__cu_opts(&o, &ngpu, err))) return rc;
    cudaCheck(cudaGetDevice(&prev));
    dp__cu_init(&x, g, c, assign, &o);
#define DP__CA(ptr, count) if (!((ptr) = (decltype(ptr))calloc((size_t)(count) + 1, sizeof *(ptr)))) { rc = dp__fail(err, DP_ERR_NOMEM, "exec (cuda): out of memory"); goto done; }
    DP__CA(runs_start, (size_t)o.reps * n); DP__CA(runs_end, (size_t)o.reps * n);
    if (o.dispatch != DP_DISPATCH_DYNAMIC) { DP__CA(seq, n); DP__CA(held, nd); }
    DP__CA(runs_busy, (size_t)o.reps * nd); DP__CA(runs_peak, (size_t)o.reps * nd);
#undef DP__CA
    /* the result's arrays: the library's allocator, which dp_exec_result_free uses */
#define DP__CA(ptr, count) if (!((ptr) = (decltype(ptr))dp__calloc((size_t)(count) + 1, sizeof *(ptr)))) { rc = dp__fail(err, DP_ERR_NOMEM, "exec (cuda): out of memory"); goto done; }
    DP__CA(res->wall_runs, o.reps); DP__CA(res->busy, nd); DP__CA(res->start, n); DP__CA(res->end, n); DP__CA(res->peak_bytes, nd);
    DP__CA(res->sms, nd);
    if (o.keep_outputs) { DP__CA(res->outputs, n); res->n_ops = n; }
#undef DP__CA
    if (seq && (rc = dp__cu_static_plan(&x, &o, seq, held, err))) goto done;
    if ((rc = dp__cu_setup(&x, ngpu, err))) goto done;
    if (x.graph && (rc = dp__cu_graph_build(&x, seq, err))) goto done;
    h.ctx = &x; h.now = dp__cu_now; h.launch = dp__cu_launch; h.copy = dp__cu_copy; h.release = dp__cu_release; h.wait = dp__cu_wait;

    for (r = 0; r < o.reps; r++) {
        double *st = runs_start + (size_t)r * n, *en = runs_end + (size_t)r * n, *busy = runs_busy + (size_t)r * nd;
        double t0, wall;
        uint64_t dg = 0xcbf29ce484222325ULL;
        if ((rc = dp__cu_begin(&x, &t0, err))) goto done;
        if (x.graph) {
            if ((rc = dp__cu_use(&x.cur_dev, 0, err))) goto done;
            cudaCheck(cudaGraphLaunch(x.cge, x.ctl[0]));
            cudaCheck(cudaStreamSynchronize(x.ctl[0]));
            memcpy(runs_peak + (size_t)r * nd, held, sizeof(double) * (size_t)nd);
        } else if (seq) {
            if ((rc = dp__cu_static_run(&x, seq, err))) goto done;
            memcpy(runs_peak + (size_t)r * nd, held, sizeof(double) * (size_t)nd);
        } else if ((rc = dp_dispatch(g, c, assign, &o, &h, runs_peak + (size_t)r * nd, err))) goto done;
        wall = dp_now() - t0;
        if ((rc = dp__cu_end(&x, st, en, o.keep_outputs && r == o.reps - 1 ? res->outputs : NULL, err))) goto done;
        for (int v = 0; v < n; v++) {
            busy[assign[v]] += en[v] - st[v];
            if (en[v] > wall) wall = en[v];
            /* the digest: the sinks' hashes in op order */
            if (g->out_off[v + 1] == g->out_off[v]) dg = (dg ^ x.dig[v]) * 0x100000001b3ULL;
        }
        res->wall_runs[r] = wall;
        if (r == 0) digest = dg;
        else if (dg != digest) { rc = dp__fail(err, DP_ERR_DEVICE, "exec (cuda): run %d computed different outputs than run 0", r); goto done; }
        /* frees the sinks' outputs (a graph's buffers stay, for its next launch) */
        if ((rc = x.graph ? dp__cu_sync(&x, err) : dp__cu_drain(&x, err))) goto done;
    }
    {
        int med = dp__median_index(res->wall_runs, o.reps);   /* the median run, as dp_exec_cpu */
        res->n_ops = n; res->n_devices = nd; res->reps = o.reps;
        res->wall_median = res->wall_runs[med];
        memcpy(res->start, runs_start + (size_t)med * n, sizeof(double) * (size_t)n);
        memcpy(res->end, runs_end + (size_t)med * n, sizeof(double) * (size_t)n);
        memcpy(res->busy, runs_busy + (size_t)med * nd, sizeof(double) * (size_t)nd);
        memcpy(res->peak_bytes, runs_peak + (size_t)med * nd, sizeof(double) * (size_t)nd);
        res->digest = digest;
        res->seconds_per_unit = o.seconds_per_unit;
        res->bytes_scale = o.bytes_scale;
        res->gpus = x.ngpu;
        res->precision = dp__mm_prec(x.mm[0]);
        res->sharing = x.sharing;
        memcpy(res->sms, x.sms, sizeof(int) * (size_t)nd);
        if (x.sharing == DP_SHARING_SHARED) snprintf(res->sharing_note, sizeof res->sharing_note, "%s", x.why);
    }
done:
    dp__cu_teardown(&x);
    if (prev >= 0) (void)cudaSetDevice(prev);
    free(runs_start); free(runs_end); free(runs_busy); free(runs_peak);
    free(seq); free(held);
    if (rc) dp_exec_result_free(res);
    return rc;
}

/* ----------------------------------------------------------------------
   >>cuda-rank
   The executor's machinery for the logical devices of one MPI rank
   (doppler.h's >>mpi, built with DP_WITH_CUDA; declared in >>internal):
   the state, setup, hooks, stamps and read-backs of dp_exec_cuda on the
   devices here[d] only, the k-th of them on GPU k % G, dynamic dispatch.
   The MPI executor dispatches with these hooks and moves the tensors of
   cross-rank edges itself: out of the producer's output buffer (CUDA-aware
   MPI) or out of its staging buffer, into which send_stage copies it after
   the producer's end event (a copy on the pair's stream, its end event
   polled by ready); into the consumer's copy buffer (recv gives it, made
   from the pool and awaited, since MPI writes it from outside the streams)
   or into its staging buffer, and then arrived copies it to the device
   (and zeroes what the message did not carry) on the pair's stream and
   records the copy's end event, which wait returns as -1 - e as it does a
   copy between two devices here: the dispatcher's completion comes when
   the tensor is on the consumer's GPU. The staging buffers are one
   pinned block (cudaMallocHost) laid out by dp__cu_stage_plan.
   ---------------------------------------------------------------------- */
extern "C" size_t dp__cu_stage_plan(const dp_graph *g, const int *assign, const unsigned char *here, double bytes_scale, size_t *off)
{
    size_t total = 0;
    for (int e = 0; e < g->n_edges; e++) {
        int a = here[assign[g->src[e]]] != 0, b = here[assign[g->dst[e]]] != 0;
        off[e] = SIZE_MAX;
        if (a == b) continue;   /* within this process, or not its edge */
        total = (total + DP__CU_STAGE_ALIGN - 1) / DP__CU_STAGE_ALIGN * DP__CU_STAGE_ALIGN;
        off[e] = total;
        total += dp_exec_edge_bytes(g, e, bytes_scale);
    }
    return total;
}

static int dp__cur_begin(void *x, double *t, dp_error *err) { return dp__cu_begin((dp__cux *)x, t, err); }

static int dp__cur_end(void *xv, double *st, double *en, uint64_t *dig, float **keep, dp_error *err)
{
    dp__cux *x = (dp__cux *)xv;
    int rc = dp__cu_end(x, st, en, keep, err);
    if (!rc) memcpy(dig, x->dig, sizeof(uint64_t) * (size_t)x->n);
    return rc;
}

static int dp__cur_drain(void *x, dp_error *err) { return dp__cu_drain((dp__cux *)x, err); }

static void *dp__cur_out(void *x, int op) { return ((dp__cux *)x)->buf[op]; }

static void *dp__cur_stage(void *xv, int e)
{
    dp__cux *x = (dp__cux *)xv;
    return x->pin && x->pin_off[e] != SIZE_MAX ? x->pin + x->pin_off[e] : NULL;
}

/* Edge e's pair stream (source a, destination b) made current: b's GPU, or
   a's for a send. */
static cudaStream_t dp__cur_pair(dp__cux *x, int e, int *rc, dp_error *err)
{
    long pair = (long)x->assign[x->g->src[e]] * x->nd + x->assign[x->g->dst[e]];
    *rc = dp__cu_use(&x->cur_dev, dp__cu_pair_gpu(x, pair), err);
    return x->xs[pair];
}

/* Edge e's copy buffer on its consumer's device (from the pool, on the
   pair's stream) unless it has one. */
static int dp__cur_xbuf(dp__cux *x, int e, cudaStream_t s, dp_error *err)
{
    int rc = DP_OK, gb = x->gpu[x->assign[x->g->dst[e]]];
    size_t size = dp_exec_edge_bytes(x->g, e, x->bscale);
    if (!x->xbuf[e]) cudaCheck(cudaMallocFromPoolAsync(&x->xbuf[e], size > 8 ? size : 8, x->pool[gb], s));
done:
    return rc;
}

static int dp__cur_recv(void *xv, int e, void **dev, dp_error *err)
{
    dp__cux *x = (dp__cux *)xv;
    int rc;
    cudaStream_t s = dp__cur_pair(x, e, &rc, err);
    if (rc || (rc = dp__cur_xbuf(x, e, s, err))) return rc;
    cudaCheck(cudaStreamSynchronize(s));
    *dev = x->xbuf[e];
done:
    return rc;
}

static int dp__cur_send_stage(void *xv, int e, dp_error *err)
{
    dp__cux *x = (dp__cux *)xv;
    const dp_graph *g = x->g;
    int rc, u = g->src[e];
    size_t size = dp_exec_edge_bytes(g, e, x->bscale), lu = dp_exec_op_bytes(g, u, x->bscale);
    cudaStream_t s = dp__cur_pair(x, e, &rc, err);
    if (rc) return rc;
    if (!dp__cur_stage(x, e)) return dp__fail(err, DP_ERR_ARG, "exec (cuda rank): edge %d has no staging buffer", e);
    cudaCheck(cudaStreamWaitEvent(s, x->eve[u], 0));
    cudaCheck(cudaMemcpyAsync(dp__cur_stage(x, e), x->buf[u], size < lu ? size : lu, cudaMemcpyDeviceToHost, s));
    cudaCheck(cudaEventRecord(x->evx[e], s));
done:
    return rc;
}

static int dp__cur_arrived(void *xv, int e, size_t got, dp_error *err)
{
    dp__cux *x = (dp__cux *)xv;
    int rc;
    size_t size = dp_exec_edge_bytes(x->g, e, x->bscale);
    unsigned char *pin = (unsigned char *)dp__cur_stage(x, e);
    cudaStream_t s = dp__cur_pair(x, e, &rc, err);
    if (rc || (rc = dp__cur_xbuf(x, e, s, err))) return rc;
    if (got > size) got = size;
    if (pin && got) cudaCheck(cudaMemcpyAsync(x->xbuf[e], pin, got, cudaMemcpyHostToDevice, s));
    if (size > got) cudaCheck(cudaMemsetAsync((unsigned char *)x->xbuf[e] + got, 0, size - got, s));
    cudaCheck(cudaEventRecord(x->evx[e], s));
    x->fl[x->nfl++] = -1 - e;
done:
    return rc;
}

static int dp__cur_ready(void *xv, int e, int *ready, dp_error *err)
{
    cudaError_t q = cudaEventQuery(((dp__cux *)xv)->evx[e]);
    *ready = q == cudaSuccess;
    if (q == cudaErrorNotReady) { (void)cudaGetLastError(); return DP_OK; }
    return dp__cuda_fail(q, "cudaEventQuery(staging end)", __FILE__, __LINE__, err);
}

static void dp__cur_close(void *xv)
{
    dp__cux *x = (dp__cux *)xv;
    if (!x) return;
    dp__cu_teardown(x);
    free(x);
}

extern "C" int dp__cu_rank_open(dp__cu_rank *r, const dp_graph *g, const dp_cluster *c, const int *assign,
                                const unsigned char *here, const dp_exec_opts *o, int stage, dp_error *err)
{
    dp__cux *x = NULL;
    int rc = DP_OK, ngpu = 0;
    size_t pinned = 0;
    memset(r, 0, sizeof *r);
    dp__cuda_ok(err);
    if (o->dispatch != DP_DISPATCH_DYNAMIC)
        return dp__fail(err, DP_ERR_ARG, "exec (cuda rank): dispatch %d: a rank's GPUs are dispatched dynamically only", (int)o->dispatch);
    if ((rc = dp__cu_opts(o, &ngpu, err))) return rc;
    if (!(x = (dp__cux *)calloc(1, sizeof *x)) || !(x->here = (unsigned char *)malloc((size_t)c->n)) ||
        (stage && !(x->pin_off = (size_t *)calloc((size_t)g->n_edges + 1, sizeof *x->pin_off)))) {
        rc = dp__fail(err, DP_ERR_NOMEM, "exec (cuda rank): out of memory");
        goto done;
    }
    dp__cu_init(x, g, c, assign, o);
    memcpy(x->here, here, (size_t)c->n);
    if (stage) pinned = dp__cu_stage_plan(g, assign, here, x->bscale, x->pin_off);
    if ((rc = dp__cu_setup(x, ngpu, err))) goto done;
    if (pinned) cudaCheck(cudaMallocHost((void **)&x->pin, pinned));
    r->x = x;
    r->h.ctx = x; r->h.now = dp__cu_now; r->h.launch = dp__cu_launch; r->h.copy = dp__cu_copy;
    r->h.release = dp__cu_release; r->h.wait = dp__cu_wait;
    r->gpus = x->ngpu;
    r->precision = dp__mm_prec(x->mm[0]);
    r->begin = dp__cur_begin; r->end = dp__cur_end; r->drain = dp__cur_drain; r->out = dp__cur_out;
    r->stage = dp__cur_stage; r->recv = dp__cur_recv; r->send_stage = dp__cur_send_stage;
    r->arrived = dp__cur_arrived; r->ready = dp__cur_ready; r->close = dp__cur_close;
done:
    if (rc && x) {
        dp__cu_teardown(x);   /* what exists */
        free(x);
    }
    return rc;
}

/* ----------------------------------------------------------------------
   >>cuda-calibrate
   ---------------------------------------------------------------------- */
/* The calibration's state. Work is counted by dp_op_flops (the workloads'
   rule, as dp_calibrate_cpu counts it). */
typedef struct dp__cucal {
    int nd, G, cur_dev;
    dp_dispatch_mode dispatch;    /* how dp_exec_cuda runs the probes         */
    int prec;                     /* the dp_precision asked for               */
    int *gpu, *cap, *mm;          /* mm: the matmul variant (dp__mm_path)     */
    cudaStream_t *s;
    cudaEvent_t *e0, *e1;
    float **a, **b, **y;          /* per logical device: inputs and output   */
    void **big;                   /* per GPU: two 16 MiB buffers for copies   */
    cudaMemPool_t *pool;          /* per GPU, opened to its peers as dp_exec_cuda's */
    dp__cudrv drv;                /* partitions, as dp_exec_cuda's (>>cuda-partitions) */
    CUgreenCtx *gc;               /* per logical device, or NULL              */
    int *sms;                     /* per logical device: its partition's SMs  */
} dp__cucal;

/* Logical device d: its GPU, its share of the blocks, its memory, a
   stream, events and S x S inputs (dp_input_value, as on the CPU). */
static int dp__cucal_device(dp__cucal *k, dp_cluster *c, int d, int S, dp_error *err)
{
    int rc = DP_OK, nd = k->nd, G = k->G;
    int p = d % G, share = (nd - 1 - p) / G + 1, gsms = 0;
    size_t free_b = 0, total_b = 0;
    dp__cu_ew f;
    k->gpu[d] = p;
    if ((rc = dp__cu_use(&k->cur_dev, p, err))) goto done;
    if ((rc = dp__cu_block_cap(p, share, k->gc[d] ? k->sms[d] : 0, &k->cap[d], &gsms, err))) goto done;
    if ((rc = dp__mm_path(p, k->prec, &k->mm[d], "calibrate (cuda)", err))) goto done;
    cudaCheck(cudaMemGetInfo(&free_b, &total_b));
    c->memory[d] = (double)total_b / share;
    if (k->gc[d]) {   /* a partition: its SMs in the name */
        CUstream cs = NULL;
        char nm[64];
        snprintf(nm, sizeof nm, "cuda%d:gpu%d:sm%d", d, p, k->sms[d]);
        snprintf(c->name[d], sizeof c->name[d], "%.31s", nm);
        cuCheck(&k->drv, k->drv.gc_stream(&cs, k->gc[d], CU_STREAM_NON_BLOCKING, 0));
        k->s[d] = (cudaStream_t)cs;
    } else {
        snprintf(c->name[d], sizeof c->name[d], "cuda%d:gpu%d", d, p);
        cudaCheck(cudaStreamCreateWithFlags(&k->s[d], cudaStreamNonBlocking));
    }
    /* recorded on k->s[d]: in its green context where it has one; e1 is
       waited on through every batch: sleep, not spin */
    if ((rc = dp__cu_event_in(&k->drv, k->gc[d], &k->e0[d], cudaEventDefault, err))) goto done;
    if ((rc = dp__cu_event_in(&k->drv, k->gc[d], &k->e1[d], cudaEventBlockingSync, err))) goto done;
    cudaCheck(cudaMalloc((void **)&k->a[d], sizeof(float) * (size_t)S * S));
    cudaCheck(cudaMalloc((void **)&k->b[d], sizeof(float) * (size_t)S * S));
    cudaCheck(cudaMalloc((void **)&k->y[d], sizeof(float) * (size_t)S * S * 2));
    /* inputs: dp_input_value(1, 0, .) and (1, 1, .), as on the CPU */
    for (int q = 0; q < 2; q++) {
        memset(&f, 0, sizeof f);
        f.kind = DP_OP_INPUT; f.n = (long long)S * S; f.r = S; f.c = S; f.seed = 1; f.op = q; f.out = q ? k->b[d] : k->a[d];
        dp__k_ew<<<dp__cu_blocks(f.n, DP__CU_THREADS, k->cap[d]), DP__CU_THREADS, 0, k->s[d]>>>(f, dp__cu_ts{NULL, NULL});
        cudaCheck(cudaGetLastError());
    }
    cudaCheck(cudaStreamSynchronize(k->s[d]));
done:
    return rc;
}

/* The calibration's arithmetic (declared in doppler.h for
   tests/test_cuda.c; needs no GPU). */
static int dp__cucal_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The lower median of v[0..n) (sorted in place); 0 for n < 1. */
extern "C" double dp__cucal_median(double *v, int n)
{
    if (n < 1) return 0;
    qsort(v, (size_t)n, sizeof *v, dp__cucal_dcmp);
    return v[(n - 1) / 2];
}

/* One probe's ops ops[0..n) (in chain order) of a run's start and end
   stamps (seconds): *op_time the median of end - start; with chained
   nonzero, gaps[0..n-2] (may be NULL) get start[ops[i + 1]] - end[ops[i]],
   each op's wait from its predecessor's end to its own start, and *gap
   their median (0 without a chain or below two ops). Returns 0, or -1
   for n outside 1..DP__CUCAL_MAX_CHAIN or NULLs. */
extern "C" int dp__cucal_chain_stats(const double *start, const double *end, const int *ops, int n, int chained,
                                     double *op_time, double *gaps, double *gap)
{
    double t[DP__CUCAL_MAX_CHAIN], w[DP__CUCAL_MAX_CHAIN];
    if (!start || !end || !ops || !op_time || !gap || n < 1 || n > DP__CUCAL_MAX_CHAIN) return -1;
    for (int i = 0; i < n; i++) t[i] = end[ops[i]] - start[ops[i]];
    *op_time = dp__cucal_median(t, n);
    *gap = 0;
    if (chained && n > 1) {
        for (int i = 0; i + 1 < n; i++) {
            w[i] = start[ops[i + 1]] - end[ops[i]];
            if (gaps) gaps[i] = w[i];
        }
        *gap = dp__cucal_median(w, n - 1);
    }
    return 0;
}

/* A speed curve from n points measured at increasing sizes (work[i]
   FLOPs, seconds[i] the op's time): a point whose work does not exceed
   the last kept one's is dropped (the file format wants work strictly
   increasing); each time is raised to at least 1e-9 s and to the last
   kept point's time (a larger op of a kind never takes less time: a
   smaller time is noise, and it would make the curve claim that the
   larger op is faster than it is); speed = work / time. Non-finite or
   non-positive work is dropped. Returns the points written to out (at
   most n). */
extern "C" int dp__cucal_curve(const double *work, const double *seconds, int n, dp_speed_point *out)
{
    int m = 0;
    double last_t = 1e-9;
    for (int i = 0; i < n; i++) {
        double w = work[i], t = seconds[i];
        if (!(w > 0 && w < HUGE_VAL)) continue;
        if (m > 0 && !(w > out[m - 1].work)) continue;
        if (!(t >= last_t)) t = last_t;   /* NaN too */
        if (!(t < HUGE_VAL)) continue;
        out[m].work = w;
        out[m].speed = w / t;
        last_t = t;
        m++;
    }
    return m;
}

/* Every op kind's speed curve and the per-op overhead, measured as
   dp_exec_cuda runs ops under the dispatch and precision asked for. Per
   kind and side S in side[0..ns): one dp_exec_cuda run (median of
   DP__CUCAL_REPS) of a graph with, on every logical device at once (each
   in the partition dp_exec_cuda gives it), a chain of DP__CUCAL_CHAIN ops
   of the kind on S x S tensors, each consuming its predecessor's output
   (a second operand, where the kind takes two, an input op of the
   device's); input, concat (S x 2S out) and split (S x S/2) cannot chain:
   independent ops of theirs. The op's time on device d: the median of its
   ops' end - start (the kernels' own stamps on the GPU's timer); the
   point's work dp_op_flops, as the workloads count it; the curve by
   dp__cucal_curve. The overhead of device d: the median over all its
   chains' dependent pairs of the gap from an op's end to its successor's
   start, which is what the simulator adds to every op (dp_op_time:
   overhead + work / speed, the op starting when its predecessor ends).
   Opaque ops (c->speed): the largest matmul's speed. */
static int dp__cucal_curves(dp__cucal *k, dp_cluster *c, const int *side, int ns, dp_error *err)
{
    enum { K = DP__CUCAL_CHAIN, KC = DP_KIND__COUNT };
    int rc = DP_OK, nd = k->nd, have_cn = 0;
    size_t per_dev_gaps = (size_t)KC * ns * K;
    double *work = (double *)calloc((size_t)KC * ns + 1, sizeof(double));
    double *secs = (double *)calloc((size_t)nd * KC * ns + 1, sizeof(double));
    double *gaps = (double *)calloc((size_t)nd * per_dev_gaps + 1, sizeof(double));
    int *ngap = (int *)calloc((size_t)nd + 1, sizeof(int));
    int *as = (int *)calloc((size_t)nd * (K + 2) + 1, sizeof(int));
    dp_speed_point pts[DP_MAX_CURVE];
    dp_cluster cn;
    if (!work || !secs || !gaps || !ngap || !as) { rc = dp__fail(err, DP_ERR_NOMEM, "calibrate (cuda): out of memory"); goto done; }
    if (ns < 1 || ns > DP_MAX_CURVE) { rc = dp__fail(err, DP_ERR_LIMIT, "calibrate (cuda): %d sizes (limit %d)", ns, DP_MAX_CURVE); goto done; }
    /* the run's cluster: nd plain devices, memory unlimited (the arenas as
       large as the graph needs) */
    if ((rc = dp_cluster_homogeneous(&cn, nd, 1e9, 1e10, 0, err))) goto done;
    have_cn = 1;
    for (int kd = 1; kd < KC && !rc; kd++)
        for (int i = 0; i < ns && !rc; i++) {
            dp_kind kind = (dp_kind)kd;
            int S = side[i];
            int nin = kind == DP_OP_INPUT ? 0 : (kind == DP_OP_MATMUL || kind == DP_OP_ADD || kind == DP_OP_REDUCE || kind == DP_OP_MUL || kind == DP_OP_CONCAT) ? 2 : 1;
            int chained = kind != DP_OP_INPUT && kind != DP_OP_CONCAT && kind != DP_OP_SPLIT;
            int cols = kind == DP_OP_CONCAT ? 2 * S : kind == DP_OP_SPLIT ? (S / 2 > 0 ? S / 2 : 1) : S;
            int per = nin + K;   /* ops per logical device */
            double flops = dp_op_flops(kind, S, cols, S, nin);
            dp_graph g;
            dp_exec_opts eo;
            dp_exec_result r;
            dp_graph_init(&g);
            for (int d = 0; d < nd && !rc; d++) {
                int base = d * per;
                for (int j = 0; j < per && !rc; j++) {
                    dp_op_desc dd;
                    memset(&dd, 0, sizeof dd);
                    if (j < nin) { dd.kind = DP_OP_INPUT; dd.rows = S; dd.cols = S; dd.compute = dp_op_flops(DP_OP_INPUT, S, S, 0, 0); }
                    else { dd.kind = kind; dd.rows = S; dd.cols = cols; dd.compute = flops; }
                    dd.out_bytes = 4.0 * dd.rows * dd.cols;
                    as[base + j] = d;
                    rc = dp_graph_add_op(&g, &dd, NULL, err);
                }
                for (int j = nin; j < per && !rc; j++) {
                    /* the first operand: the predecessor in a chain (the
                       device's first input for the chain's first op) */
                    int first = chained && j > nin ? base + j - 1 : base;
                    if (nin >= 1) rc = dp_graph_add_edge(&g, first, base + j, 4.0 * S * S, err);
                    if (!rc && nin == 2) rc = dp_graph_add_edge(&g, base + 1, base + j, 4.0 * S * S, err);
                }
            }
            if (!rc) rc = dp_graph_finalize(&g, err);
            memset(&eo, 0, sizeof eo);
            eo.reps = DP__CUCAL_REPS;
            eo.gpus = k->G;
            eo.dispatch = k->dispatch;
            eo.precision = (dp_precision)k->prec;
            if (!rc && !(rc = dp_exec_cuda(&g, &cn, as, &eo, &r, err))) {
                int ops[K];
                work[(size_t)kd * ns + i] = flops;
                for (int d = 0; d < nd; d++) {
                    double t = 0, gp = 0;
                    for (int j = 0; j < K; j++) ops[j] = d * per + nin + j;
                    (void)dp__cucal_chain_stats(r.start, r.end, ops, K, chained, &t, gaps + (size_t)d * per_dev_gaps + ngap[d], &gp);
                    if (chained) ngap[d] += K - 1;
                    secs[((size_t)d * KC + kd) * ns + i] = t;
                }
                dp_exec_result_free(&r);
            }
            k->cur_dev = -1;   /* dp_exec_cuda restored the device it found */
            dp_graph_free(&g);
        }
    for (int d = 0; d < nd && !rc; d++) {
        for (int kd = 1; kd < KC && !rc; kd++) {
            int m = dp__cucal_curve(work + (size_t)kd * ns, secs + ((size_t)d * KC + kd) * ns, ns, pts);
            if (m < 1) { rc = dp__fail(err, DP_ERR_DEVICE, "%s:%d: calibrate (cuda): no usable time for %s on logical device %d", __FILE__, __LINE__, dp_kind_name((dp_kind)kd), d); break; }
            rc = dp_cluster_set_curve(c, d, (dp_kind)kd, pts, m, err);
            if (!rc && kd == DP_OP_MATMUL) c->speed[d] = pts[m - 1].speed;
        }
        if (!rc) {
            double o = dp__cucal_median(gaps + (size_t)d * per_dev_gaps, ngap[d]);
            c->overhead[d] = o > 0 ? o : 0;
        }
    }
done:
    if (have_cn) dp_cluster_free(&cn);
    free(work); free(secs); free(gaps); free(ngap); free(as);
    return rc;
}

/* Copy bandwidth between each pair of GPUs (one GPU to itself: an
   on-GPU copy), 16 MiB a copy, for `seconds`, into bw[p * G + q]. */
static int dp__cucal_bandwidth(dp__cucal *k, double *bw, double seconds, dp_error *err)
{
    int rc = DP_OK, G = k->G;
    const size_t BIG = (size_t)16 << 20;
    for (int p = 0; p < G; p++) {
        if ((rc = dp__cu_pool_new(&k->cur_dev, p, &k->pool[p], err))) goto done;
        cudaCheck(cudaMallocFromPoolAsync(&k->big[2 * p], BIG, k->pool[p], k->s[p]));
        cudaCheck(cudaMallocFromPoolAsync(&k->big[2 * p + 1], BIG, k->pool[p], k->s[p]));
        /* the copies' source is read: give it defined contents */
        cudaCheck(cudaMemsetAsync(k->big[2 * p], 0, BIG, k->s[p]));
        cudaCheck(cudaStreamSynchronize(k->s[p]));
    }
    if ((rc = dp__cu_pools_peer(&k->cur_dev, k->pool, G, err))) goto done;
    for (int p = 0; p < G; p++)
        for (int q = 0; q < G; q++) {
            int d = q, reps = 0;   /* logical device q runs on GPU q */
            float ms = 0;
            double t = 0;
            if ((rc = dp__cu_use(&k->cur_dev, q, err))) goto done;
            do {
                cudaCheck(cudaEventRecord(k->e0[d], k->s[d]));
                for (int i = 0; i < 4; i++) {
                    if (p == q) cudaCheck(cudaMemcpyAsync(k->big[2 * q + 1], k->big[2 * p], BIG, cudaMemcpyDeviceToDevice, k->s[d]));
                    else cudaCheck(cudaMemcpyPeerAsync(k->big[2 * q + 1], q, k->big[2 * p], p, BIG, k->s[d]));
                }
                cudaCheck(cudaEventRecord(k->e1[d], k->s[d]));
                cudaCheck(cudaEventSynchronize(k->e1[d]));
                cudaCheck(cudaEventElapsedTime(&ms, k->e0[d], k->e1[d]));
                t += ms / 1e3;
                reps += 4;
            } while (t < seconds);
            bw[p * G + q] = (double)reps * (double)BIG / t;
        }
done:
    return rc;
}

/* The executor's hand-off latency: a chain of tiny copy ops alternating
   between two logical devices against the same chain on one (0 with one
   logical device). */
static int dp__cucal_latency(dp__cucal *k, double *lat_out, dp_error *err)
{
    int rc = DP_OK, nd = k->nd, G = k->G;
    double lat = 0;
    if (nd > 1) {
        dp_graph ch;
        dp_cluster c2;
        dp_exec_opts eo;
        dp_exec_result r1, r2;
        const int N = 400;
        int *as = (int *)calloc((size_t)N, sizeof(int)), have_c2 = 0;
        if (!as) return dp__fail(err, DP_ERR_NOMEM, "calibrate (cuda): out of memory");
        dp_graph_init(&ch);
        for (int i = 0; i < N && !rc; i++) {
            dp_op_desc dd;
            memset(&dd, 0, sizeof dd);
            dd.kind = i ? DP_OP_COPY : DP_OP_INPUT; dd.rows = 1; dd.cols = 1;
            rc = dp_graph_add_op(&ch, &dd, NULL, err);
            if (!rc && i) rc = dp_graph_add_edge(&ch, i - 1, i, 4, err);
        }
        if (!rc) rc = dp_graph_finalize(&ch, err);
        if (!rc && !(rc = dp_cluster_homogeneous(&c2, 2, 1e9, 1e10, 0, err))) have_c2 = 1;
        memset(&eo, 0, sizeof eo);
        eo.reps = 5;
        eo.gpus = G;
        eo.dispatch = k->dispatch; eo.precision = (dp_precision)k->prec; eo.precision = (dp_precision)k->prec;
        if (!rc) rc = dp_exec_cuda(&ch, &c2, as, &eo, &r1, err);
        for (int i = 0; i < N; i++) as[i] = i % 2;
        if (!rc) {
            rc = dp_exec_cuda(&ch, &c2, as, &eo, &r2, err);
            if (!rc) { lat = (r2.wall_median - r1.wall_median) / (N - 1); dp_exec_result_free(&r2); }
            dp_exec_result_free(&r1);
        }
        if (have_c2) dp_cluster_free(&c2);
        dp_graph_free(&ch);
        free(as);
        k->cur_dev = -1;   /* dp_exec_cuda restored the device it found */
        if (lat < 0) lat = 0;
    }
    *lat_out = lat;
    return rc;
}

extern "C" int dp_calibrate_cuda(dp_cluster *out, const dp_calibrate_opts *opts, dp_error *err)
{
    dp_calibrate_opts o;
    dp_cluster c;
    dp__cucal k;
    /* nd, G: 0 until known (the cleanup after an early failure reads them) */
    int rc = DP_OK, ngpu = 0, prev = -1, S, nd = 0, G = 0;
    double *bw = NULL;            /* [G * G] bytes per second, GPU p to GPU q */
    int *devs = NULL;             /* the logical devices of one GPU           */
    char why[160] = "";           /* why a GPU has no partitions (unreported: the names say which have) */
    memset(&o, 0, sizeof o);
    memset(&c, 0, sizeof c);
    memset(&k, 0, sizeof k);
    if (opts) o = *opts;
    dp__cuda_ok(err);
    if (!out) return dp__fail(err, DP_ERR_ARG, "calibrate (cuda): no cluster given");
    memset(out, 0, sizeof *out);
    if (o.size == 0) o.size = 512;   /* as dp_calibrate_cpu's largest side */
    if (o.seconds == 0) o.seconds = 0.05;
    if (o.devices < 0 || o.devices > DP_MAX_DEVICES) return dp__fail(err, DP_ERR_RANGE, "calibrate (cuda): devices %d not in 0..%d", o.devices, DP_MAX_DEVICES);
    if (o.size < 8 || o.size > 2048) return dp__fail(err, DP_ERR_RANGE, "calibrate (cuda): size %d not in 8..2048", o.size);
    if (!(o.seconds > 0 && o.seconds <= 10)) return dp__fail(err, DP_ERR_RANGE, "calibrate (cuda): seconds %g not in (0, 10]", o.seconds);
    if (o.dispatch < DP_DISPATCH_DYNAMIC || o.dispatch > DP_DISPATCH_GRAPH) return dp__fail(err, DP_ERR_RANGE, "calibrate (cuda): dispatch %d is none of DP_DISPATCH_DYNAMIC (0), STATIC (1), GRAPH (2)", o.dispatch);
    if (o.precision < 0 || o.precision >= DP_PREC__COUNT) return dp__fail(err, DP_ERR_RANGE, "calibrate (cuda): precision %d is none of DP_PREC_DEFAULT (0), FP32 (1), TF32 (2), BF16 (3)", o.precision);
    if ((rc = dp__cu_gpus(&ngpu, err))) return rc;
    cudaCheck(cudaGetDevice(&prev));
    nd = o.devices ? o.devices : ngpu;
    G = ngpu < nd ? ngpu : nd;
    S = o.size;
    k.nd = nd; k.G = G; k.cur_dev = -1; k.dispatch = (dp_dispatch_mode)o.dispatch; k.prec = o.precision;
    if ((rc = dp_cluster_homogeneous(&c, nd, 1e9, 1e10, 0, err))) goto done;
#define DP__CA(ptr, count) if (!((ptr) = (decltype(ptr))calloc((size_t)(count) + 1, sizeof *(ptr)))) { rc = dp__fail(err, DP_ERR_NOMEM, "calibrate (cuda): out of memory"); goto done; }
    DP__CA(k.gpu, nd); DP__CA(k.cap, nd); DP__CA(k.mm, nd); DP__CA(k.s, nd); DP__CA(k.e0, nd); DP__CA(k.e1, nd);
    DP__CA(k.a, nd); DP__CA(k.b, nd); DP__CA(k.y, nd); DP__CA(k.big, 2 * G); DP__CA(bw, (size_t)G * G);
    DP__CA(k.pool, G); DP__CA(k.gc, nd); DP__CA(k.sms, nd); DP__CA(devs, nd);
#undef DP__CA
    /* the logical devices that share a GPU measured in partitions of their
       own SMs, as dp_exec_cuda runs them (equal ones: the cluster's speeds
       are what is being measured); where none can be made, shared */
    if (nd > G && !dp__cudrv_load(&k.drv, why, sizeof why))
        for (int p = 0; p < G; p++) {
            int kk = 0;
            for (int d = p; d < nd; d += G) devs[kk++] = d;
            if (kk < 2) continue;
            if ((rc = dp__cu_use(&k.cur_dev, p, err))) goto done;
            cudaCheck(cudaFree(0));   /* the primary context first */
            (void)dp__cu_green(&k.drv, &c, p, devs, kk, k.gc, k.sms, why, sizeof why);
        }
    for (int d = 0; d < nd; d++)
        if ((rc = dp__cucal_device(&k, &c, d, S, err))) goto done;
    {
        /* sides 16, 32, ... below size, then size (8 alone below 16), as
           dp_calibrate_cpu's */
        int side[DP_MAX_CURVE], ns = 0;
        for (int x = 16; x < S && ns < DP_MAX_CURVE - 1; x *= 2) side[ns++] = x;
        side[ns++] = S;
        if ((rc = dp__cucal_curves(&k, &c, side, ns, err))) goto done;
    }
    if ((rc = dp__cucal_bandwidth(&k, bw, o.seconds, err))) goto done;
    {
        double lat = 0;
        if ((rc = dp__cucal_latency(&k, &lat, err))) goto done;
        for (int a = 0; a < nd; a++)
            for (int b = 0; b < nd; b++) {
                c.bandwidth[a * nd + b] = bw[k.gpu[a] * G + k.gpu[b]];
                c.latency[a * nd + b] = a == b ? 0 : lat;
            }
    }
    *out = c;
    memset(&c, 0, sizeof c);
done:
    for (int i = 0; k.big && k.s && i < 2 * G; i++)
        if (k.big[i]) { (void)cudaSetDevice(i / 2); (void)cudaFreeAsync(k.big[i], k.s[i / 2]); (void)cudaStreamSynchronize(k.s[i / 2]); }
    for (int p = 0; k.pool && p < G; p++) if (k.pool[p]) (void)cudaMemPoolDestroy(k.pool[p]);
    for (int d = 0; d < nd && k.gpu && k.s && k.a && k.b && k.y && k.e0 && k.e1; d++) {
        (void)cudaSetDevice(k.gpu[d]);
        if (k.s[d]) (void)cudaStreamSynchronize(k.s[d]);
        if (k.a[d]) (void)cudaFree(k.a[d]);
        if (k.b[d]) (void)cudaFree(k.b[d]);
        if (k.y[d]) (void)cudaFree(k.y[d]);
        if (k.e0[d]) (void)cudaEventDestroy(k.e0[d]);
        if (k.e1[d]) (void)cudaEventDestroy(k.e1[d]);
        if (k.s[d] && k.gc && k.gc[d]) (void)k.drv.stream_destroy((CUstream)k.s[d]);
        else if (k.s[d]) (void)cudaStreamDestroy(k.s[d]);
    }
    for (int d = 0; d < nd && k.gc; d++) if (k.gc[d]) (void)k.drv.gc_destroy(k.gc[d]);
    if (prev >= 0) (void)cudaSetDevice(prev);
    (void)cudaGetLastError();
    free(k.gpu); free(k.cap); free(k.mm); free(k.s); free(k.e0); free(k.e1); free(k.a); free(k.b); free(k.y); free(k.big);
    free(k.pool); free(bw); free(k.gc); free(k.sms); free(devs);
    dp_cluster_free(&c);
    return rc;
}

/* ----------------------------------------------------------------------
   >>cuda-matmul-time
   ---------------------------------------------------------------------- */
static int dp__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* What dp__cu_time_median times: one launch (or copy) on stream s. */
typedef int (*dp__cu_launch_fn)(void *ctx, cudaStream_t s, dp_error *err);

/* reps launches of launch(ctx, s, err) after 3 of warm-up, CUDA events
   recorded around each on stream s: the median's seconds into *seconds
   (the kernel-alone timings, dp__cuda_matmul_time_kernel and
   dp__cuda_rows_time_kernel). */
static int dp__cu_time_median(dp__cu_launch_fn launch, void *ctx, cudaStream_t s, int reps, double *seconds, dp_error *err)
{
    int rc = DP_OK;
    cudaEvent_t t0 = NULL, t1 = NULL;
    double *ts = (double *)calloc((size_t)reps, sizeof *ts);
    if (!ts) return dp__fail(err, DP_ERR_NOMEM, "kernel time (cuda): out of memory");
    cudaCheck(cudaEventCreate(&t0));
    cudaCheck(cudaEventCreate(&t1));
    for (int i = -3; i < reps; i++) {
        float ms = 0;
        cudaCheck(cudaEventRecord(t0, s));
        if ((rc = launch(ctx, s, err))) goto done;
        cudaCheck(cudaEventRecord(t1, s));
        cudaCheck(cudaEventSynchronize(t1));
        cudaCheck(cudaEventElapsedTime(&ms, t0, t1));
        if (i >= 0) ts[i] = ms * 1e-3;
    }
    qsort(ts, (size_t)reps, sizeof *ts, dp__cmp_double);
    *seconds = ts[(reps - 1) / 2];
done:
    if (t0) (void)cudaEventDestroy(t0);
    if (t1) (void)cudaEventDestroy(t1);
    free(ts);
    return rc;
}

/* out (r x c) filled on stream s as the executors fill input op `op` of
   seed 1: dp_input_value(1, op, .) */
static int dp__cu_fill_input(float *out, int r, int c, int op, int cap, cudaStream_t s, dp_error *err)
{
    int rc = DP_OK;
    dp__cu_ew f;
    memset(&f, 0, sizeof f);
    f.kind = DP_OP_INPUT; f.r = r; f.c = c; f.n = (long long)r * c; f.seed = 1; f.op = op; f.out = out;
    dp__k_ew<<<dp__cu_blocks(f.n, DP__CU_THREADS, cap), DP__CU_THREADS, 0, s>>>(f, dp__cu_ts{NULL, NULL});
    cudaCheck(cudaGetLastError());
done:
    return rc;
}

extern "C" int dp_cuda_matmul_time(int dev, int precision, int r, int K, int c, int reps, double *seconds, int *used, dp_error *err)
{
    return dp__cuda_matmul_time_kernel(dev, precision, 0, r, K, c, reps, seconds, used, err);
}

/* ... with the tensor-core kernel chosen (0 the default, 1 dp__k_mma, 2
   dp__k_mma2), for the A/B measurement of >>cuda-mma2 */
typedef struct dp__cu_mmt { int code, r, K, c, cap; const float *A, *B; float *C; } dp__cu_mmt;

static int dp__cu_mmt_launch(void *ctx, cudaStream_t s, dp_error *err)
{
    const dp__cu_mmt *m = (const dp__cu_mmt *)ctx;
    int rc = DP_OK;
    if (m->code) return dp__mm_launch(m->code, m->A, m->B, m->C, m->r, m->K, m->c, m->cap, s, dp__cu_ts{NULL, NULL}, err);
    long long tiles = (long long)((m->r + DP__TILE - 1) / DP__TILE) * ((m->c + DP__TILE - 1) / DP__TILE);
    dp__k_matmul<<<dp__cu_blocks(tiles, 1, m->cap), dim3(DP__TILE, DP__TROWS), 0, s>>>(m->A, m->B, m->C, m->r, m->K, m->c, dp__cu_ts{NULL, NULL});
    cudaCheck(cudaGetLastError());
done:
    return rc;
}

extern "C" int dp__cuda_matmul_time_kernel(int dev, int precision, int kernel, int r, int K, int c, int reps, double *seconds, int *used, dp_error *err)
{
    int rc = DP_OK, prev = -1, gsms = 0;
    double secs = 0;
    float *A = NULL, *B = NULL, *C = NULL;
    cudaStream_t s = NULL;
    dp__cu_mmt m;
    memset(&m, 0, sizeof m);
    dp__cuda_ok(err);
    if (seconds) *seconds = 0;
    if (used) *used = 0;
    if (r < 1 || K < 1 || c < 1) return dp__fail(err, DP_ERR_RANGE, "matmul time (cuda): shape %d x %d x %d: every side must be >= 1", r, K, c);
    if (reps < 1 || reps > 100000) return dp__fail(err, DP_ERR_RANGE, "matmul time (cuda): reps %d not in 1..100000", reps);
    if (precision < 0 || precision >= DP_PREC__COUNT) return dp__fail(err, DP_ERR_RANGE, "matmul time (cuda): precision %d is none of DP_PREC_DEFAULT (0), FP32 (1), TF32 (2), BF16 (3)", precision);
    cudaCheck(cudaGetDevice(&prev));
    cudaCheck(cudaSetDevice(dev));
    if ((rc = dp__cu_block_cap(dev, 1, 0, &m.cap, &gsms, err))) goto done;
    if ((rc = dp__mm_path_kernel(dev, precision, kernel, &m.code, "matmul time (cuda)", err))) goto done;
    cudaCheck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaCheck(cudaMalloc((void **)&A, sizeof(float) * (size_t)r * K));
    cudaCheck(cudaMalloc((void **)&B, sizeof(float) * (size_t)K * c));
    cudaCheck(cudaMalloc((void **)&C, sizeof(float) * (size_t)r * c));
    /* the inputs as the executors fill ops 0 and 1: dp_input_value(1, 0, .), (1, 1, .) */
    if ((rc = dp__cu_fill_input(A, r, K, 0, m.cap, s, err)) || (rc = dp__cu_fill_input(B, K, c, 1, m.cap, s, err))) goto done;
    m.r = r; m.K = K; m.c = c; m.A = A; m.B = B; m.C = C;
    if ((rc = dp__cu_time_median(dp__cu_mmt_launch, &m, s, reps, &secs, err))) goto done;
    if (seconds) *seconds = secs;
    if (used) *used = dp__mm_prec(m.code);
done:
    if (s) (void)cudaStreamSynchronize(s);
    if (A) (void)cudaFree(A);
    if (B) (void)cudaFree(B);
    if (C) (void)cudaFree(C);
    if (s) (void)cudaStreamDestroy(s);
    if (prev >= 0) (void)cudaSetDevice(prev);
    return rc;
}

/* A row op (softmax, rmsnorm, layernorm; DP_OP_COPY: a device-to-device
   copy of as many bytes, the bandwidth to compare with) of r x c floats
   on GPU dev with the row kernel chosen (0 the default, 1 dp__k_rows
   alone, 2 with dp__k_rows_block: dp__cu_rows_launch), alone on a stream
   with every SM: the median of reps launches after 3 of warm-up into
   *seconds (CUDA events), and, where out is not NULL, the output (r c
   floats; the input is dp_input_value(1, 0, .), as the executors fill
   it), for the A/B measurement and its check that both kernels agree. */
typedef struct dp__cu_rowt { int kind, kernel, r, c, cap; const float *X; float *Y; } dp__cu_rowt;

static int dp__cu_rowt_launch(void *ctx, cudaStream_t s, dp_error *err)
{
    const dp__cu_rowt *w = (const dp__cu_rowt *)ctx;
    int rc = DP_OK;
    if (w->kind != DP_OP_COPY) return dp__cu_rows_launch(w->kernel, (dp_kind)w->kind, w->X, w->Y, w->r, w->c, w->cap, s, dp__cu_ts{NULL, NULL}, err);
    cudaCheck(cudaMemcpyAsync(w->Y, w->X, sizeof(float) * (size_t)w->r * (size_t)w->c, cudaMemcpyDeviceToDevice, s));
done:
    return rc;
}

extern "C" int dp__cuda_rows_time_kernel(int dev, int kind, int kernel, int r, int c, int reps, double *seconds, float *out, dp_error *err)
{
    int rc = DP_OK, prev = -1, gsms = 0;
    double secs = 0;
    float *X = NULL, *Y = NULL;
    cudaStream_t s = NULL;
    size_t n = (size_t)r * (size_t)c;
    dp__cu_rowt w;
    memset(&w, 0, sizeof w);
    dp__cuda_ok(err);
    if (seconds) *seconds = 0;
    if (r < 1 || c < 1) return dp__fail(err, DP_ERR_RANGE, "rows time (cuda): shape %d x %d: both sides must be >= 1", r, c);
    if (kind != DP_OP_COPY && !dp__cu_is_row_op((dp_kind)kind))
        return dp__fail(err, DP_ERR_RANGE, "rows time (cuda): kind %d is none of softmax, rmsnorm, layernorm, copy", kind);
    if (kernel < 0 || kernel > 2) return dp__fail(err, DP_ERR_RANGE, "rows time (cuda): row kernel %d is none of 0 (the default), 1, 2", kernel);
    if (reps < 1 || reps > 100000) return dp__fail(err, DP_ERR_RANGE, "rows time (cuda): reps %d not in 1..100000", reps);
    cudaCheck(cudaGetDevice(&prev));
    cudaCheck(cudaSetDevice(dev));
    if ((rc = dp__cu_block_cap(dev, 1, 0, &w.cap, &gsms, err))) goto done;
    cudaCheck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaCheck(cudaMalloc((void **)&X, sizeof(float) * n));
    cudaCheck(cudaMalloc((void **)&Y, sizeof(float) * n));
    if ((rc = dp__cu_fill_input(X, r, c, 0, w.cap, s, err))) goto done;
    w.kind = kind; w.kernel = kernel; w.r = r; w.c = c; w.X = X; w.Y = Y;
    if ((rc = dp__cu_time_median(dp__cu_rowt_launch, &w, s, reps, &secs, err))) goto done;
    if (seconds) *seconds = secs;
    if (out) cudaCheck(cudaMemcpy(out, Y, sizeof(float) * n, cudaMemcpyDeviceToHost));
done:
    if (s) (void)cudaStreamSynchronize(s);
    if (X) (void)cudaFree(X);
    if (Y) (void)cudaFree(Y);
    if (s) (void)cudaStreamDestroy(s);
    if (prev >= 0) (void)cudaSetDevice(prev);
    return rc;
}
