/* test_cuda.c - the CUDA executor (doppler_cuda.cu). Built by nvcc with
   doppler_cuda.cu (when nvcc is found); plain C, compiled by the host
   compiler through nvcc.

   Without a GPU (this always runs):
   - the GPU algorithm of every real op kind, run on the host by
     dp__cuda_host_kernel with the kernels' own element, index and row
     functions, against the CPU kernels: bit for bit where the two compute
     the same sequence of float operations (input fill, add/reduce in input
     order, even over several launches, mul, scale, relu, gelu, silu,
     concat, split, transpose, copy), within DP_EXEC_TOL where the order
     differs (matmul with fused multiply-adds, softmax and the norms by lane
     partials and a butterfly); and whole workloads run op by op through the
     same host emulation against the CPU executor's outputs (TF32 and BF16:
   the tensor-core kernel's emulation against the CPU executor in the same
   precision, within dp_exec_tolerance);
   - argument errors found before a GPU is touched, and DP_ERR_DEVICE with
     the runtime's reason when there is no GPU.
   With a GPU (else one SKIP line each, with the reason; a failure instead
   when DP_REQUIRE_GPU is set to non-zero, for GPU machines): every op kind on
   the GPU against the CPU kernels and against the host emulation; every
   workload in graphs/ under single, round-robin and random placements on
   1, 2 and 4 logical devices, FIFO and priority, against the CPU
   executor's outputs; opaque graphs' measured schedules against the model;
   arena overflow; device memory before and after repeated runs. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static const char *g_no_gpu;          /* why there is no GPU, or NULL */
/* One op against the CPU kernel: only the summation order and an ulp or
   two of expf/tanhf apart (measured on the host: 2e-7 to 3e-7). Whole
   graphs: DP_EXEC_TOL (errors grow through the graph). */
#define OP_TOL 1e-5
static char g_no_gpu_buf[512];

/* A graph of `nin` input ops of the given shapes feeding one op of kind. */
static int one_op(dp_graph *g, dp_kind kind, int nin, const int *shape, int rows, int cols, int arg)
{
    dp_error err;
    dp_op_desc d;
    memset(&err, 0, sizeof err);
    dp_graph_init(g);
    for (int i = 0; i < nin; i++) {
        memset(&d, 0, sizeof d);
        d.kind = DP_OP_INPUT; d.rows = shape[2 * i]; d.cols = shape[2 * i + 1];
        d.compute = (double)d.rows * d.cols; d.out_bytes = 4.0 * d.rows * d.cols;
        if (dp_graph_add_op(g, &d, NULL, &err)) { CHECK(0, "%s", err.msg); return -1; }
    }
    memset(&d, 0, sizeof d);
    d.kind = kind; d.rows = rows; d.cols = cols; d.arg = arg;
    d.compute = (double)rows * cols; d.out_bytes = 4.0 * rows * cols;
    if (dp_graph_add_op(g, &d, NULL, &err)) { CHECK(0, "%s", err.msg); return -1; }
    for (int i = 0; i < nin; i++) if (dp_graph_add_edge(g, i, nin, 4.0 * shape[2 * i] * shape[2 * i + 1], &err)) { CHECK(0, "%s", err.msg); return -1; }
    if (dp_graph_finalize(g, &err) || dp_graph_check_tensors(g, &err)) { CHECK(0, "%s: %s", dp_kind_name(kind), err.msg); return -1; }
    return 0;
}

/* The largest |a - b| relative to the largest |b| (dp_exec_compare's measure). */
static double rel_err(const float *a, const float *b, size_t n)
{
    double scale = 0, e = 0;
    for (size_t j = 0; j < n; j++) if (fabs(b[j]) > scale) scale = fabs(b[j]);
    if (!(scale > 0)) scale = 1;
    for (size_t j = 0; j < n; j++) {
        double d = fabs((double)a[j] - (double)b[j]);
        if (!(d == d)) d = HUGE_VAL;
        if (d / scale > e) e = d / scale;
    }
    return e;
}

static size_t count_diff(const float *a, const float *b, size_t n)
{
    size_t bad = 0;
    for (size_t j = 0; j < n; j++) bad += memcmp(&a[j], &b[j], sizeof(float)) != 0;
    return bad;
}

/* Inputs of a one-op graph as the executors fill them (seed), the CPU
   kernel's output and the host emulation's. */
typedef struct { float **in, *cpu, *emu; size_t n; } run_t;

static void host_run(const dp_graph *g, uint64_t seed, run_t *r)
{
    int v = g->n_ops - 1, nin = g->n_ops - 1;
    r->in = (float **)calloc((size_t)nin + 1, sizeof(float *));
    for (int i = 0; i < nin; i++) {
        size_t len = (size_t)g->rows[i] * g->cols[i];
        r->in[i] = (float *)malloc(sizeof(float) * (len ? len : 1));
        for (size_t j = 0; j < len; j++) r->in[i][j] = dp_input_value(seed, i, j);
    }
    r->n = (size_t)g->rows[v] * g->cols[v];
    r->cpu = (float *)calloc(r->n + 1, sizeof(float));
    r->emu = (float *)calloc(r->n + 1, sizeof(float));
    /* inputs in edge order: edge i comes from input i */
    dp__kernel(g, v, (const float *const *)r->in, r->cpu, seed);
    dp__cuda_host_kernel(g, v, (const float *const *)r->in, r->emu, seed);
}

static void run_free(const dp_graph *g, run_t *r)
{
    for (int i = 0; i < g->n_ops - 1; i++) free(r->in[i]);
    free(r->in); free(r->cpu); free(r->emu);
}

/* The kinds whose GPU algorithm performs the CPU's float operations in the
   CPU's order (their outputs must be equal bit for bit on the host). */
static int same_ops(dp_kind k)
{
    return k != DP_OP_MATMUL && k != DP_OP_SOFTMAX && k != DP_OP_RMSNORM && k != DP_OP_LAYERNORM;
}
/* ... and also on the GPU (no transcendental function of CUDA's own). */
static int same_on_gpu(dp_kind k) { return same_ops(k) && k != DP_OP_GELU && k != DP_OP_SILU; }

typedef struct { dp_kind kind; int nin; int shape[8]; int rows, cols, arg; } case_t;

/* Odd shapes: tiles and warps only partly full. */
static const case_t g_cases[] = {
    {DP_OP_INPUT, 0, {0}, 37, 53, 0},
    {DP_OP_MATMUL, 2, {37, 45, 45, 53}, 37, 53, 0},
    {DP_OP_MATMUL, 2, {64, 96, 96, 32}, 64, 32, 0},
    {DP_OP_MATMUL, 2, {5, 1, 1, 7}, 5, 7, 0},
    {DP_OP_ADD, 3, {37, 53, 37, 53, 37, 53}, 37, 53, 0},
    {DP_OP_REDUCE, 2, {33, 40, 33, 40}, 33, 40, 0},
    {DP_OP_MUL, 2, {37, 53, 37, 53}, 37, 53, 0},
    {DP_OP_SCALE, 1, {37, 53}, 37, 53, 0},
    {DP_OP_SCALE, 1, {37, 53}, 37, 53, 7},
    {DP_OP_RELU, 1, {37, 53}, 37, 53, 0},
    {DP_OP_GELU, 1, {37, 53}, 37, 53, 0},
    {DP_OP_SILU, 1, {37, 53}, 37, 53, 0},
    {DP_OP_SOFTMAX, 1, {37, 53}, 37, 53, 0},
    {DP_OP_SOFTMAX, 1, {9, 300}, 9, 300, 0},
    {DP_OP_SOFTMAX, 1, {4, 5}, 4, 5, 0},
    {DP_OP_RMSNORM, 1, {37, 53}, 37, 53, 0},
    {DP_OP_RMSNORM, 1, {3, 1000}, 3, 1000, 0},
    {DP_OP_LAYERNORM, 1, {37, 53}, 37, 53, 0},
    {DP_OP_LAYERNORM, 1, {2, 7}, 2, 7, 0},
    {DP_OP_CONCAT, 3, {37, 5, 37, 20, 37, 1}, 37, 26, 0},
    {DP_OP_SPLIT, 1, {37, 54}, 37, 18, 2},
    {DP_OP_TRANSPOSE, 1, {53, 37}, 37, 53, 0},
    {DP_OP_COPY, 1, {37, 53}, 37, 53, 0},
    /* shapes in multiples of 4: the element kernels' 16-byte path */
    {DP_OP_INPUT, 0, {0}, 36, 52, 0},
    {DP_OP_ADD, 3, {36, 52, 36, 52, 36, 52}, 36, 52, 0},
    {DP_OP_MUL, 2, {36, 52, 36, 52}, 36, 52, 0},
    {DP_OP_SCALE, 1, {36, 52}, 36, 52, 0},
    {DP_OP_RELU, 1, {36, 52}, 36, 52, 0},
    {DP_OP_GELU, 1, {36, 52}, 36, 52, 0},
    {DP_OP_SILU, 1, {36, 52}, 36, 52, 0},
    {DP_OP_CONCAT, 3, {36, 4, 36, 20, 36, 8}, 36, 32, 0},
    {DP_OP_SPLIT, 1, {36, 48}, 36, 16, 1},
    {DP_OP_TRANSPOSE, 1, {96, 64}, 64, 96, 0},
    /* long rows: a block per row (over 1536 floats, up to 12286 with its
       two floats), one warp per block staged (12287), not staged (12289) */
    {DP_OP_SOFTMAX, 1, {3, 2048}, 3, 2048, 0},
    {DP_OP_RMSNORM, 1, {3, 1537}, 3, 1537, 0},
    {DP_OP_LAYERNORM, 1, {2, 4099}, 2, 4099, 0},
    {DP_OP_SOFTMAX, 1, {2, 12286}, 2, 12286, 0},
    {DP_OP_RMSNORM, 1, {2, 12287}, 2, 12287, 0},
    {DP_OP_LAYERNORM, 1, {1, 12289}, 1, 12289, 0},
};
#define N_CASES ((int)(sizeof g_cases / sizeof g_cases[0]))

static int build_case(dp_graph *g, const case_t *c) { return one_op(g, c->kind, c->nin, c->shape, c->rows, c->cols, c->arg); }

/* Many inputs: add over 37 (three launches of 16, 16 and 5) and concat of 20. */
static void check_many_inputs(void)
{
    int shape[2 * 40];
    dp_graph g;
    run_t r;
    for (int i = 0; i < 37; i++) { shape[2 * i] = 9; shape[2 * i + 1] = 11; }
    if (!one_op(&g, DP_OP_ADD, 37, shape, 9, 11, 0)) {
        host_run(&g, 5, &r);
        CHECK(count_diff(r.emu, r.cpu, r.n) == 0, "add of 37 inputs (3 launches): %zu elements differ from the CPU's", count_diff(r.emu, r.cpu, r.n));
        /* by hand: element 0 is the sum in input order */
        float s = r.in[0][0];
        for (int i = 1; i < 37; i++) s += r.in[i][0];
        CHECK(r.emu[0] == s, "add of 37 inputs: %.9g, by hand %.9g", r.emu[0], s);
        run_free(&g, &r);
    }
    dp_graph_free(&g);
    int cols = 0;
    for (int i = 0; i < 20; i++) { shape[2 * i] = 3; shape[2 * i + 1] = 1 + i % 4; cols += 1 + i % 4; }
    if (!one_op(&g, DP_OP_CONCAT, 20, shape, 3, cols, 0)) {
        host_run(&g, 6, &r);
        CHECK(count_diff(r.emu, r.cpu, r.n) == 0, "concat of 20 inputs (2 launches): %zu elements differ", count_diff(r.emu, r.cpu, r.n));
        /* by hand: row 2's last element is input 19's last (4 columns wide) */
        CHECK(r.emu[2 * cols + cols - 1] == r.in[19][2 * 4 + 3], "concat of 20: last element %.9g, want %.9g", r.emu[2 * cols + cols - 1], r.in[19][2 * 4 + 3]);
        run_free(&g, &r);
    }
    dp_graph_free(&g);
    /* widths of 4 and 8: the 16-byte path, its second launch from column 96 */
    cols = 0;
    for (int i = 0; i < 20; i++) { shape[2 * i] = 3; shape[2 * i + 1] = 4 + 4 * (i % 2); cols += 4 + 4 * (i % 2); }
    if (!one_op(&g, DP_OP_CONCAT, 20, shape, 3, cols, 0)) {
        host_run(&g, 7, &r);
        CHECK(count_diff(r.emu, r.cpu, r.n) == 0, "concat of 20 in widths 4, 8 (2 launches): %zu elements differ", count_diff(r.emu, r.cpu, r.n));
        /* by hand: inputs 0..15 are 8 x 4 + 8 x 8 = 96 columns, so row 1's
           column 96 is input 16's first element of row 1 */
        CHECK(r.emu[1 * cols + 96] == r.in[16][1 * 4], "concat of 20: row 1 column 96 %.9g, want %.9g", r.emu[1 * cols + 96], r.in[16][1 * 4]);
        run_free(&g, &r);
    }
    dp_graph_free(&g);
}

/* Host emulation of every kind against the CPU kernels. */
static void check_host_kernels(void)
{
    double worst[DP_KIND__COUNT];
    memset(worst, 0, sizeof worst);
    for (int i = 0; i < N_CASES; i++) {
        const case_t *c = &g_cases[i];
        dp_graph g;
        run_t r;
        if (build_case(&g, c)) { dp_graph_free(&g); continue; }
        host_run(&g, 11 + (uint64_t)i, &r);
        if (same_ops(c->kind)) {
            size_t bad = count_diff(r.emu, r.cpu, r.n);
            CHECK(bad == 0, "%s %dx%d: %zu of %zu elements differ from the CPU kernel's", dp_kind_name(c->kind), c->rows, c->cols, bad, r.n);
        } else {
            double e = rel_err(r.emu, r.cpu, r.n);
            if (e > worst[c->kind]) worst[c->kind] = e;
            CHECK(e <= OP_TOL, "%s %dx%d: error %.3g against the CPU kernel, tolerance %g", dp_kind_name(c->kind), c->rows, c->cols, e, OP_TOL);
        }
        run_free(&g, &r);
        dp_graph_free(&g);
    }
    printf("  host emulation against the CPU kernels: matmul %.2g, softmax %.2g, rmsnorm %.2g, layernorm %.2g (relative to each tensor's largest value)\n",
           worst[DP_OP_MATMUL], worst[DP_OP_SOFTMAX], worst[DP_OP_RMSNORM], worst[DP_OP_LAYERNORM]);
    /* by hand: softmax of [0, ln 3] is [1/4, 3/4]; rmsnorm of [3, 4] is
       [3, 4] / sqrt(12.5 + 1e-6); layernorm of [1, 3] is [-1, 1] / sqrt(1 + 1e-6) */
    {
        int sh[2] = {1, 2};
        dp_graph g;
        float x[2], out[2];
        const float *in[1] = {x};
        if (!one_op(&g, DP_OP_SOFTMAX, 1, sh, 1, 2, 0)) {
            x[0] = 0; x[1] = logf(3.0f);
            dp__cuda_host_kernel(&g, 1, in, out, 0);
            CHECK(fabsf(out[0] - 0.25f) < 1e-6f && fabsf(out[1] - 0.75f) < 1e-6f, "softmax [0, ln 3]: [%.7g, %.7g], by hand [0.25, 0.75]", out[0], out[1]);
        }
        dp_graph_free(&g);
        if (!one_op(&g, DP_OP_RMSNORM, 1, sh, 1, 2, 0)) {
            x[0] = 3; x[1] = 4;
            dp__cuda_host_kernel(&g, 1, in, out, 0);
            double s = sqrt(12.5 + 1e-6);
            CHECK(fabs(out[0] - 3 / s) < 1e-6 && fabs(out[1] - 4 / s) < 1e-6, "rmsnorm [3, 4]: [%.7g, %.7g], by hand [%.7g, %.7g]", out[0], out[1], 3 / s, 4 / s);
        }
        dp_graph_free(&g);
        if (!one_op(&g, DP_OP_LAYERNORM, 1, sh, 1, 2, 0)) {
            x[0] = 1; x[1] = 3;
            dp__cuda_host_kernel(&g, 1, in, out, 0);
            double s = sqrt(1 + 1e-6);
            CHECK(fabs(out[0] + 1 / s) < 1e-6 && fabs(out[1] - 1 / s) < 1e-6, "layernorm [1, 3]: [%.7g, %.7g], by hand [%.7g, %.7g]", out[0], out[1], -1 / s, 1 / s);
        }
        dp_graph_free(&g);
        int mm[4] = {2, 3, 3, 2};
        float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, o4[4];
        const float *in2[2] = {a, b};
        if (!one_op(&g, DP_OP_MATMUL, 2, mm, 2, 2, 0)) {
            dp__cuda_host_kernel(&g, 2, in2, o4, 0);
            CHECK(o4[0] == 4 && o4[1] == 5 && o4[2] == 10 && o4[3] == 11, "matmul by hand: [%g %g; %g %g], want [4 5; 10 11]", o4[0], o4[1], o4[2], o4[3]);
        }
        dp_graph_free(&g);
    }
    /* the fill: the kernel's hash equals dp_input_value bit for bit */
    {
        int sh[1] = {0};
        dp_graph g;
        (void)sh;
        if (!one_op(&g, DP_OP_INPUT, 0, sh, 1, 4096, 0)) {
            float *o = (float *)malloc(sizeof(float) * 4096);
            uint64_t seeds[3] = {0, 1, 0xfedcba9876543210ULL};
            for (int s = 0; s < 3; s++) {
                dp__cuda_host_kernel(&g, 0, NULL, o, seeds[s]);
                size_t bad = 0;
                for (size_t j = 0; j < 4096; j++) bad += o[j] != dp_input_value(seeds[s], 0, j);
                CHECK(bad == 0, "input fill, seed %llx: %zu of 4096 values differ from dp_input_value", (unsigned long long)seeds[s], bad);
            }
            free(o);
        }
        dp_graph_free(&g);
    }
    check_many_inputs();
}

/* A whole graph through the host emulation, op by op in topological
   order; the sinks' outputs into out[v]. */
static void emulate_graph(const dp_graph *g, uint64_t seed, int prec, float **out)
{
    float **buf = (float **)calloc((size_t)g->n_ops, sizeof(float *));
    const float **in = (const float **)calloc((size_t)g->n_edges + 1, sizeof(float *));
    for (int t = 0; t < g->n_ops; t++) {
        int v = g->topo[t];
        for (int k = g->in_off[v]; k < g->in_off[v + 1]; k++) in[k - g->in_off[v]] = buf[g->src[g->in_edge[k]]];
        buf[v] = (float *)malloc(sizeof(float) * ((size_t)g->rows[v] * g->cols[v] + 1));
        if (g->kind[v] == DP_OP_MATMUL && (prec == DP_PREC_TF32 || prec == DP_PREC_BF16))
            dp__cuda_host_mma2(g->rows[v], g->cols[g->src[g->in_edge[g->in_off[v]]]], g->cols[v], in[0], in[1], buf[v], prec, 128, 128, 0, 0);
        else dp__cuda_host_kernel(g, v, in, buf[v], seed);
    }
    for (int v = 0; v < g->n_ops; v++) {
        if (g->out_off[v + 1] == g->out_off[v]) out[v] = buf[v];
        else free(buf[v]);
    }
    free(buf);
    free((void *)in);
}

static const char *g_workloads[] = {"graphs/chainmm_256_p2.dpg", "graphs/ffnn_256_p2.dpg", "graphs/llama_block_256_p2.dpg", "graphs/llama_layer_256_p2.dpg"};

/* The shipped workloads through the host emulation against the CPU
   executor, in each precision: TF32 and BF16 through the tensor-core
   kernel's emulation (dp__cuda_host_mma2) against the CPU executor in the
   same precision (inputs rounded alike), within dp_exec_tolerance. */
static void check_host_workloads(void)
{
    for (int w = 0; w < 4; w++)
      for (int p = DP_PREC_FP32; p <= DP_PREC_BF16; p++) {
        dp_graph g;
        dp_cluster c;
        dp_error err;
        dp_exec_result r, emu;
        dp_exec_opts eo;
        memset(&err, 0, sizeof err);
        if (dp_graph_read(&g, g_workloads[w], DP_FORMAT_AUTO, &err)) { CHECK(0, "%s: %s", g_workloads[w], err.msg); continue; }
        dp_cluster_homogeneous(&c, 1, 1e9, 1e10, 0, &err);
        int *one = (int *)calloc((size_t)g.n_ops, sizeof(int));
        memset(&eo, 0, sizeof eo);
        eo.precision = (dp_precision)p;
        eo.keep_outputs = 1; eo.seed = 3;
        if (!dp_exec_cpu(&g, &c, one, &eo, &r, &err)) {
            double e = -1, tol = dp_exec_tolerance(p);
            int worst = -1;
            CHECK(r.precision == p, "%s: the CPU executor ran %s, asked %s", g_workloads[w], dp_precision_name(r.precision), dp_precision_name(p));
            memset(&emu, 0, sizeof emu);
            emu.n_ops = g.n_ops;
            emu.outputs = (float **)calloc((size_t)g.n_ops, sizeof(float *));
            emulate_graph(&g, 3, p, emu.outputs);
            CHECK(dp_exec_compare(&g, &emu, &r, &e, &worst, &err) == 0, "%s: compare: %s", g_workloads[w], err.msg);
            CHECK(e <= tol, "%s, %s: the GPU algorithm on the host is %.3g off the CPU executor at '%s' (tolerance %g)",
                  g_workloads[w], dp_precision_name(p), e, worst >= 0 ? g.name[worst] : "?", tol);
            printf("  %s, %s: GPU algorithm on the host against the CPU executor in %s: %.2g (tolerance %g)\n", g_workloads[w], dp_precision_name(p), dp_precision_name(p), e, tol);
            for (int v = 0; v < emu.n_ops; v++) free(emu.outputs[v]);   /* this test's malloc, not the library's allocator */
            free(emu.outputs);
            dp_exec_result_free(&r);
        } else CHECK(0, "%s: exec: %s", g_workloads[w], err.msg);
        free(one);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
}

/* Refusals before any GPU is touched, and no GPU: DP_ERR_DEVICE. */
static void check_arguments(void)
{
    dp_graph g;
    dp_cluster c;
    dp_error err;
    dp_exec_result r;
    dp_exec_opts eo;
    int sh[2] = {4, 4}, a[2] = {0, 1}, rc;
    memset(&err, 0, sizeof err);
    memset(&eo, 0, sizeof eo);
    eo.precision = DP_PREC_FP32;   /* the exact FP32 kernel (tensor cores: check_*_mma) */
    if (one_op(&g, DP_OP_RELU, 1, sh, 4, 4, 0)) return;
    dp_cluster_homogeneous(&c, 2, 1e9, 1e10, 0, &err);
    rc = dp_exec_cuda(&g, &c, a, &eo, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "result"), "NULL result: rc %d '%s'", rc, err.msg);
    {   /* the row kernels' timing: bad arguments refused before any GPU is touched */
        double t = 0;
        rc = dp__cuda_rows_time_kernel(0, DP_OP_RELU, 0, 4, 4, 1, &t, NULL, &err);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "kind"), "rows time of relu: rc %d '%s'", rc, err.msg);
        rc = dp__cuda_rows_time_kernel(0, DP_OP_SOFTMAX, 3, 4, 4, 1, &t, NULL, &err);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "row kernel 3"), "rows time, kernel 3: rc %d '%s'", rc, err.msg);
        rc = dp__cuda_rows_time_kernel(0, DP_OP_RMSNORM, 0, 0, 4, 1, &t, NULL, &err);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "0 x 4"), "rows time, 0 rows: rc %d '%s'", rc, err.msg);
        rc = dp__cuda_rows_time_kernel(0, DP_OP_LAYERNORM, 0, 4, 4, 0, &t, NULL, &err);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "reps 0"), "rows time, 0 reps: rc %d '%s'", rc, err.msg);
    }
    rc = dp_exec_cuda(NULL, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_ARG, "NULL graph: rc %d '%s'", rc, err.msg);
    rc = dp_exec_cuda(&g, NULL, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_ARG, "NULL cluster: rc %d '%s'", rc, err.msg);
    rc = dp_exec_cuda(&g, &c, NULL, &eo, &r, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "assignment"), "NULL assignment: rc %d '%s'", rc, err.msg);
    a[1] = 2;
    rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "device 2"), "device 2 of 2: rc %d '%s'", rc, err.msg);
    a[1] = 1;
    eo.reps = -1;
    rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "reps"), "reps -1: rc %d '%s'", rc, err.msg);
    eo.reps = 0; eo.gpus = -1;
    rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "gpus"), "gpus -1: rc %d '%s'", rc, err.msg);
    eo.gpus = 0; eo.device_bytes = -1;
    rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE, "negative arena: rc %d '%s'", rc, err.msg);
    eo.device_bytes = 0;
    eo.dispatch = (dp_dispatch_mode)7;
    rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "dispatch 7"), "dispatch 7: rc %d '%s'", rc, err.msg);
    eo.dispatch = DP_DISPATCH_DYNAMIC;
    eo.link_pacing = 2;
    rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "link_pacing 2"), "link_pacing 2: rc %d '%s'", rc, err.msg);
    eo.link_pacing = 0;
    CHECK(r.wall_runs == NULL && r.outputs == NULL && r.sms == NULL, "a refused run left result arrays");
    dp_graph_free(&g);
    /* a real op reading an opaque one: the shape check refuses it */
    {
        dp_op_desc d;
        dp_graph_init(&g);
        memset(&d, 0, sizeof d);
        d.compute = 1; d.out_bytes = 8;
        dp_graph_add_op(&g, &d, NULL, &err);
        d.kind = DP_OP_RELU; d.rows = 1; d.cols = 2;
        dp_graph_add_op(&g, &d, NULL, &err);
        dp_graph_add_edge(&g, 0, 1, 8, &err);
        dp_graph_finalize(&g, &err);
        rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
        CHECK(rc == DP_ERR_GRAPH && strstr(err.msg, "opaque"), "real op reading an opaque one: rc %d '%s'", rc, err.msg);
        dp_graph_free(&g);
    }
    {
        dp_calibrate_opts co;
        dp_cluster out;
        memset(&co, 0, sizeof co);
        co.size = 4;
        rc = dp_calibrate_cuda(&out, &co, &err);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "size"), "calibrate size 4: rc %d '%s'", rc, err.msg);
        co.size = 0; co.devices = -1;
        rc = dp_calibrate_cuda(&out, &co, &err);
        CHECK(rc == DP_ERR_RANGE, "calibrate devices -1: rc %d '%s'", rc, err.msg);
        co.devices = 0; co.dispatch = 7;
        rc = dp_calibrate_cuda(&out, &co, &err);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "dispatch 7"), "calibrate dispatch 7: rc %d '%s'", rc, err.msg);
        rc = dp_calibrate_cuda(NULL, NULL, &err);
        CHECK(rc == DP_ERR_ARG, "calibrate into NULL: rc %d '%s'", rc, err.msg);
    }
    /* no GPU: a valid run fails with DP_ERR_DEVICE and the runtime's reason */
    if (g_no_gpu) {
        int sh2[2] = {4, 4};
        if (!one_op(&g, DP_OP_RELU, 1, sh2, 4, 4, 0)) {
            rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
            CHECK(rc == DP_ERR_DEVICE && strstr(err.msg, "no CUDA device: "), "no GPU: rc %d '%s'", rc, err.msg);
            CHECK(r.wall_runs == NULL, "no GPU: result arrays left");
            dp_calibrate_opts co;
            dp_cluster out;
            memset(&co, 0, sizeof co);
            rc = dp_calibrate_cuda(&out, &co, &err);
            CHECK(rc == DP_ERR_DEVICE && strstr(err.msg, "no CUDA device: "), "calibrate without a GPU: rc %d '%s'", rc, err.msg);
        }
        dp_graph_free(&g);
    }
    dp_cluster_free(&c);
}

/* ---- with a GPU ---------------------------------------------------------- */
/* The partition arithmetic (dp__cu_partition), by hand: an H200's 132
   SMs, minimum 8, alignment 8, and odd granularities. */
static void check_partition_math(void)
{
    dp_error err;
    int out[20], rc;
    static const struct { int sms, min, align, n; double speed[4]; int want[4]; const char *what; } cs[] = {
        {132, 8, 8, 4, {0}, {32, 32, 32, 32}, "4 equal on 132: 33 -> 32"},
        {132, 8, 8, 2, {0}, {64, 64}, "2 equal on 132: 66 -> 64"},
        {132, 8, 8, 2, {3, 1}, {96, 32}, "3:1 on 132: 99 -> 96, 33 -> 32"},
        {132, 8, 8, 3, {0}, {40, 40, 40}, "3 equal on 132: 44 -> 40"},
        {132, 8, 8, 3, {1, 1, 2}, {32, 32, 64}, "1:1:2 on 132: 33 -> 32, 66 -> 64"},
        {132, 8, 8, 2, {100, 1}, {120, 8}, "100:1 on 132: 130.7 -> 128, 1.3 -> 8 (the minimum), 136 > 132: the largest gives back 8"},
        {100, 6, 4, 3, {0}, {32, 32, 32}, "3 equal on 100, min 6, align 4: 33.3 -> 32"},
        {100, 6, 4, 4, {5, 1, 1, 1}, {60, 12, 12, 12}, "5:1:1:1 on 100, min 6 (-> 8), align 4: 62.5 -> 60, 12.5 -> 12"},
        {10, 3, 1, 3, {0}, {3, 3, 3}, "3 equal on 10, min 3, align 1: 3.3 -> 3"},
        {16, 8, 8, 2, {1, 1}, {8, 8}, "2 of the minimum exactly on 16"},
        {7, 0, 0, 2, {0}, {3, 3}, "min and align 0 read as 1: 3.5 -> 3"},
    };
    memset(&err, 0, sizeof err);
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        rc = dp__cu_partition(cs[k].sms, cs[k].min, cs[k].align, cs[k].speed[0] > 0 ? cs[k].speed : NULL, cs[k].n, out, &err);
        int ok = rc == 0;
        for (int i = 0; ok && i < cs[k].n; i++) ok = out[i] == cs[k].want[i];
        CHECK(ok, "partition %s: rc %d '%s', got %d %d %d %d", cs[k].what, rc, rc ? err.msg : "", out[0], cs[k].n > 1 ? out[1] : -1,
              cs[k].n > 2 ? out[2] : -1, cs[k].n > 3 ? out[3] : -1);
    }
    rc = dp__cu_partition(132, 8, 8, NULL, 17, out, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "17 partitions") && strstr(err.msg, "132"), "17 of 8 on 132: rc %d '%s'", rc, err.msg);
    rc = dp__cu_partition(132, 8, 8, NULL, 16, out, &err);
    CHECK(rc == 0 && out[0] == 8 && out[15] == 8, "16 of 8 on 132 (132/16 = 8.25 -> 8): rc %d, %d", rc, out[0]);
    rc = dp__cu_partition(132, 6, 4, NULL, 17, out, &err);   /* minimum 6 on alignment 4 is 8: 136 > 132 */
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "at least 8"), "17 of min 6 align 4 on 132: rc %d '%s'", rc, err.msg);
    {
        double bad[2] = {1, 0};
        rc = dp__cu_partition(132, 8, 8, bad, 2, out, &err);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "speed 0"), "speed 0: rc %d '%s'", rc, err.msg);
    }
    rc = dp__cu_partition(132, 8, 8, NULL, 0, out, &err);
    CHECK(rc == DP_ERR_ARG, "0 partitions: rc %d", rc);
}

/* The paced link time (dp__cu_pace_ns), by hand. */
static void check_pace_math(void)
{
    /* 5 us + 1 MB at 1e10 B/s = 100 us: 105 us */
    CHECK(dp__cu_pace_ns(5e-6, 1e10, 1e6, 1.0) == 105000ULL, "5 us + 1e6 B / 1e10 B/s: %llu ns, want 105000", dp__cu_pace_ns(5e-6, 1e10, 1e6, 1.0));
    /* graph units: latency 2, 3e10 bytes at 1e10 per unit = 5 units, 1 ms per unit: 5 ms */
    CHECK(dp__cu_pace_ns(2, 1e10, 3e10, 1e-3) == 5000000ULL, "5 units of 1 ms: %llu ns", dp__cu_pace_ns(2, 1e10, 3e10, 1e-3));
    CHECK(dp__cu_pace_ns(0, 1e10, 0, 1.0) == 0, "nothing: %llu ns", dp__cu_pace_ns(0, 1e10, 0, 1.0));
    CHECK(dp__cu_pace_ns(1e-9, 1e300, 1, 1.0) == 1, "1 ns: %llu", dp__cu_pace_ns(1e-9, 1e300, 1, 1.0));
    CHECK(dp__cu_pace_ns(0.4e-9, 0, 100, 1.0) == 0, "0.4 ns rounds to 0, bandwidth 0: no byte time: %llu", dp__cu_pace_ns(0.4e-9, 0, 100, 1.0));
    CHECK(dp__cu_pace_ns(1e-6, INFINITY, 1e9, 1.0) == 1000, "infinite bandwidth: latency only: %llu", dp__cu_pace_ns(1e-6, INFINITY, 1e9, 1.0));
    CHECK(dp__cu_pace_ns(-1, 1e10, 1e3, 1.0) == 0, "negative: 0");
    CHECK(dp__cu_pace_ns(NAN, 1e10, 1e3, 1.0) == 0, "NaN: 0");
    CHECK(dp__cu_pace_ns(3600, 1e10, 0, 1.0) == DP__CU_PACE_MAX_NS, "an hour: clamped to 60 s: %llu", dp__cu_pace_ns(3600, 1e10, 0, 1.0));
}

/* The MPI executor's staging plan on GPUs (dp__cu_stage_plan), by hand:
   ops a (device 0), b (1), c (0), d (2); edges a->b 100 bytes, a->c 300,
   b->d 5, c->d 1000. With devices 0 and 1 here, b->d and c->d cross: b->d
   at 0 (5 bytes, raised to 8), c->d at 256 (8 rounded up to 256), the
   block 256 + 1000 = 1256 bytes; the same from the other side (device 2
   here). With device 0 alone here: a->b at 0 (100), c->d at 256, 1256.
   bytes_scale 2 doubles each: b->d 10 at 0, c->d 2000 at 256: 2256. */
static void check_stage_plan(void)
{
    static const char *names[4] = { "a", "b", "c", "d" };
    static const int dev[4] = { 0, 1, 0, 2 }, src[4] = { 0, 0, 1, 2 }, dst[4] = { 1, 2, 3, 3 };
    static const double bytes[4] = { 100, 300, 5, 1000 };
    static const unsigned char here01[3] = { 1, 1, 0 }, here2[3] = { 0, 0, 1 }, here0[3] = { 1, 0, 0 };
    dp_graph g;
    dp_error err;
    dp_op_desc d;
    size_t off[4], total;
    int e, rc = 0, ab = -1, ac = -1, bd = -1, cd = -1;
    dp_graph_init(&g);
    memset(&d, 0, sizeof d);
    d.compute = 1; d.out_bytes = 1;
    for (int v = 0; v < 4 && !rc; v++) { d.name = names[v]; rc = dp_graph_add_op(&g, &d, NULL, &err); }
    for (e = 0; e < 4 && !rc; e++) rc = dp_graph_add_edge(&g, src[e], dst[e], bytes[e], &err);
    if (!rc) rc = dp_graph_finalize(&g, &err);
    CHECK(rc == 0, "stage plan graph: %s", err.msg);
    if (rc) { dp_graph_free(&g); return; }
    for (e = 0; e < g.n_edges; e++) {   /* the edges' indices after finalize */
        int u = g.src[e], v = g.dst[e];
        if (u == 0 && v == 1) ab = e;
        if (u == 0 && v == 2) ac = e;
        if (u == 1 && v == 3) bd = e;
        if (u == 2 && v == 3) cd = e;
    }
    total = dp__cu_stage_plan(&g, dev, here01, 1.0, off);
    CHECK(total == 1256 && off[bd] == 0 && off[cd] == 256 && off[ab] == SIZE_MAX && off[ac] == SIZE_MAX,
          "devices 0, 1 here: block %zu (1256), b->d at %zu (0), c->d at %zu (256), a->b %zu a->c %zu (none)", total, off[bd], off[cd], off[ab], off[ac]);
    total = dp__cu_stage_plan(&g, dev, here2, 1.0, off);
    CHECK(total == 1256 && off[bd] == 0 && off[cd] == 256 && off[ab] == SIZE_MAX && off[ac] == SIZE_MAX,
          "device 2 here: block %zu (1256), b->d at %zu (0), c->d at %zu (256)", total, off[bd], off[cd]);
    total = dp__cu_stage_plan(&g, dev, here0, 1.0, off);
    CHECK(total == 1256 && off[ab] == 0 && off[cd] == 256 && off[ac] == SIZE_MAX && off[bd] == SIZE_MAX,
          "device 0 here: block %zu (1256), a->b at %zu (0), c->d at %zu (256), b->d %zu (none)", total, off[ab], off[cd], off[bd]);
    total = dp__cu_stage_plan(&g, dev, here01, 2.0, off);
    CHECK(total == 2256 && off[bd] == 0 && off[cd] == 256, "bytes_scale 2: block %zu (2256), b->d at %zu, c->d at %zu", total, off[bd], off[cd]);
    dp_graph_free(&g);
}

/* dp_calibrate_cuda's arithmetic (dp__cucal_median, _chain_stats,
   _curve), by hand. */
static void check_calibrate_math(void)
{
    double v3[3] = {3, 1, 2}, v4[4] = {4, 1, 3, 2};
    CHECK(dp__cucal_median(v3, 3) == 2, "median of 3 1 2: %g", v3[1]);
    CHECK(dp__cucal_median(v4, 4) == 2, "lower median of 4 1 3 2: 2");
    CHECK(dp__cucal_median(NULL, 0) == 0, "median of nothing: 0");
    {
        /* a chain of 5 ops, stored as ops 6, 5, 4, 3, 2 of 7 (chain order
           reversed against the index): end - start 8 10 5 14 2 -> median 8;
           gaps 2 5 1 5 -> lower median 2 */
        double st[7] = {-1, -1, 50, 31, 25, 10, 0}, en[7] = {-1, -1, 52, 45, 30, 20, 8}, t = -1, gp = -1, gaps[4] = {0};
        int ops[5] = {6, 5, 4, 3, 2};
        int rc = dp__cucal_chain_stats(st, en, ops, 5, 1, &t, gaps, &gp);
        CHECK(rc == 0 && t == 8 && gp == 2, "chain: rc %d, op time %g (want 8), gap %g (want 2)", rc, t, gp);
        CHECK(gaps[0] == 2 && gaps[1] == 5 && gaps[2] == 1 && gaps[3] == 5, "chain gaps in chain order: %g %g %g %g (want 2 5 1 5)", gaps[0], gaps[1], gaps[2], gaps[3]);
        gaps[0] = -7;
        rc = dp__cucal_chain_stats(st, en, ops, 5, 0, &t, gaps, &gp);
        CHECK(rc == 0 && t == 8 && gp == 0 && gaps[0] == -7, "independent ops: op time %g, gap %g (want 0), gaps untouched", t, gp);
        rc = dp__cucal_chain_stats(st, en, ops, 1, 1, &t, NULL, &gp);
        CHECK(rc == 0 && t == 8 && gp == 0, "one op (op 6: 8 - 0): time %g (want 8), gap %g (want 0)", t, gp);
        CHECK(dp__cucal_chain_stats(st, en, ops, 0, 1, &t, NULL, &gp) == -1, "0 ops refused");
        CHECK(dp__cucal_chain_stats(st, en, ops, DP__CUCAL_MAX_CHAIN + 1, 1, &t, NULL, &gp) == -1, "too long a chain refused");
        CHECK(dp__cucal_chain_stats(st, en, ops, 5, 1, NULL, NULL, &gp) == -1, "no op_time refused");
    }
    {
        /* work 100 800 800 6400 51200 at 1 0.8 5 4 8 us: 800 at 0.8 us is
           raised to 1 us (8e8), the second 800 dropped, then 6400 / 4 us
           = 1.6e9, 51200 / 8 us = 6.4e9 */
        double w[5] = {100, 800, 800, 6400, 51200}, sec[5] = {1e-6, 0.8e-6, 5e-6, 4e-6, 8e-6};
        double want[4][2] = {{100, 1e8}, {800, 8e8}, {6400, 1.6e9}, {51200, 6.4e9}};
        dp_speed_point pts[5];
        int m = dp__cucal_curve(w, sec, 5, pts), ok = m == 4;
        for (int i = 0; ok && i < 4; i++) ok = pts[i].work == want[i][0] && fabs(pts[i].speed / want[i][1] - 1) < 1e-12;
        CHECK(ok, "curve: %d points (want 4): %g:%g %g:%g ...", m, pts[0].work, pts[0].speed, pts[1].work, pts[1].speed);
        /* NaN and 0 s: 1e-9 s; work 0 and -1 dropped */
        double w2[4] = {0, -1, 10, 20}, s2[4] = {1, 1, NAN, 0};
        m = dp__cucal_curve(w2, s2, 4, pts);
        CHECK(m == 2 && pts[0].work == 10 && fabs(pts[0].speed / 1e10 - 1) < 1e-12 && pts[1].work == 20 && fabs(pts[1].speed / 2e10 - 1) < 1e-12,
              "curve of NaN and 0 s: %d points, %g:%g", m, pts[0].work, pts[0].speed);
        CHECK(dp__cucal_curve(w, sec, 0, pts) == 0, "no points: 0");
    }
}

/* A calibrated cluster predicts a small workload: calibrate one logical
   device under graph dispatch (sides 16..256), then chainmm dim 256 P 2
   (128 x 128 blocks: the 128^3 matmuls the one-size calibration
   mispriced by 2-4x) on it under graph dispatch; its median wall within
   25% of the simulator's makespan (issue 41's worst-case target for
   calibrated predictions; the old calibration was 219% off here). */
static void check_gpu_calibrate(void)
{
    dp_error err;
    dp_graph g;
    dp_cluster c;
    dp_calibrate_opts co;
    dp_exec_opts eo;
    dp_exec_result r;
    double pred = 0;
    memset(&err, 0, sizeof err);
    memset(&co, 0, sizeof co);
    co.devices = 1; co.size = 256; co.dispatch = DP_DISPATCH_GRAPH;
    double t0 = dp_now();
    if (dp_calibrate_cuda(&c, &co, &err)) { CHECK(0, "calibrate: %s", err.msg); return; }
    printf("  calibrate (1 device, graph, sides 16..256): %.1f s, overhead %.2f us\n", dp_now() - t0, c.overhead[0] * 1e6);
    {
        size_t at = DP_OP_MATMUL;
        int n = c.curve_len[at], ok = n == 5;
        for (int i = 1; ok && i < n; i++) ok = c.curve[at * DP_MAX_CURVE + i].work > c.curve[at * DP_MAX_CURVE + i - 1].work;
        CHECK(ok, "matmul curve: %d points (want 5: sides 16..256), work increasing", n);
        CHECK(c.overhead[0] >= 0 && c.overhead[0] < 1e-3, "overhead %g s in [0, 1 ms)", c.overhead[0]);
    }
    if (dp_graph_read(&g, "graphs/chainmm_256_p2.dpg", DP_FORMAT_AUTO, &err)) { CHECK(0, "read: %s", err.msg); dp_cluster_free(&c); return; }
    int *a = (int *)calloc((size_t)g.n_ops, sizeof(int));   /* single: all on device 0 */
    memset(&eo, 0, sizeof eo);
    eo.reps = 9; eo.dispatch = DP_DISPATCH_GRAPH;
    if (dp_simulate(&g, &c, a, NULL, &pred, &err)) CHECK(0, "simulate: %s", err.msg);
    else if (dp_exec_cuda(&g, &c, a, &eo, &r, &err)) CHECK(0, "exec: %s", err.msg);
    else {
        double e = pred > 0 ? r.wall_median / pred - 1 : 1e9;
        printf("  chainmm_256_p2 single, graph: wall %.3f ms, predicted %.3f ms (%+.1f%%)\n", r.wall_median * 1e3, pred * 1e3, 100 * e);
        CHECK(fabs(e) <= 0.25, "chainmm_256_p2 on a calibrated cluster: wall %.3f ms vs predicted %.3f ms: %+.1f%% (limit 25%%)",
              r.wall_median * 1e3, pred * 1e3, 100 * e);
        dp_exec_result_free(&r);
    }
    free(a);
    dp_graph_free(&g);
    dp_cluster_free(&c);
}

static void check_gpu_kernels(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    for (int i = 0; i < N_CASES; i++) {
        const case_t *c = &g_cases[i];
        dp_graph g;
        dp_cluster cl;
        dp_exec_opts eo;
        dp_exec_result r;
        run_t h;
        if (build_case(&g, c)) { dp_graph_free(&g); continue; }
        dp_cluster_homogeneous(&cl, 1, 1e9, 1e10, 0, &err);
        int *one = (int *)calloc((size_t)g.n_ops, sizeof(int));
        uint64_t seed = 11 + (uint64_t)i;
        memset(&eo, 0, sizeof eo);
        eo.precision = DP_PREC_FP32;   /* the exact FP32 kernel (tensor cores: check_*_mma) */
        eo.keep_outputs = 1; eo.seed = seed;
        host_run(&g, seed, &h);
        int v = g.n_ops - 1;
        if (!dp_exec_cuda(&g, &cl, one, &eo, &r, &err)) {
            const float *o = r.outputs[v];
            CHECK(o != NULL, "%s: no output kept", dp_kind_name(c->kind));
            if (o) {
                if (same_on_gpu(c->kind))
                    CHECK(count_diff(o, h.cpu, h.n) == 0, "GPU %s %dx%d: %zu elements differ from the CPU kernel's", dp_kind_name(c->kind), c->rows, c->cols, count_diff(o, h.cpu, h.n));
                else
                    CHECK(rel_err(o, h.cpu, h.n) <= OP_TOL, "GPU %s %dx%d: error %.3g against the CPU kernel", dp_kind_name(c->kind), c->rows, c->cols, rel_err(o, h.cpu, h.n));
                /* no transcendental function: the GPU computes exactly the emulation */
                if (c->kind != DP_OP_GELU && c->kind != DP_OP_SILU && c->kind != DP_OP_SOFTMAX)
                    CHECK(count_diff(o, h.emu, h.n) == 0, "GPU %s %dx%d: %zu elements differ from its host emulation", dp_kind_name(c->kind), c->rows, c->cols, count_diff(o, h.emu, h.n));
            }
            dp_exec_result_free(&r);
        } else CHECK(0, "GPU %s: %s", dp_kind_name(c->kind), err.msg);
        run_free(&g, &h);
        free(one);
        dp_cluster_free(&cl);
        dp_graph_free(&g);
    }
}

/* The row kernels' A/B (dp__cuda_rows_time_kernel): a warp per row (1)
   and a block per long row (2) give the same outputs bit for bit, and the
   norms those of the host emulation; shapes at each side of the switches
   (1536 floats: 8 warps of dp__k_rows no longer fit; 12286: the block's
   row and two floats still do; 12288: one warp's row does). */
static void check_gpu_rows_ab(void)
{
    static const int shapes[][2] = {{64, 1536}, {64, 1537}, {33, 2048}, {9, 4099}, {8, 8192}, {3, 12286}, {3, 12287}, {2, 12289}};
    static const dp_kind kinds[] = {DP_OP_SOFTMAX, DP_OP_RMSNORM, DP_OP_LAYERNORM};
    dp_error err;
    memset(&err, 0, sizeof err);
    for (int si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++)
        for (int ki = 0; ki < 3; ki++) {
            int r = shapes[si][0], c = shapes[si][1], shape[2] = {r, c};
            size_t n = (size_t)r * c;
            float *o1 = (float *)malloc(sizeof(float) * n), *o2 = (float *)malloc(sizeof(float) * n);
            double t1 = 0, t2 = 0;
            dp_graph g;
            run_t h;
            if (dp__cuda_rows_time_kernel(0, kinds[ki], 1, r, c, 1, &t1, o1, &err) || dp__cuda_rows_time_kernel(0, kinds[ki], 2, r, c, 1, &t2, o2, &err)) {
                CHECK(0, "rows A/B %s %dx%d: %s", dp_kind_name(kinds[ki]), r, c, err.msg);
            } else {
                CHECK(count_diff(o1, o2, n) == 0, "rows A/B %s %dx%d: %zu elements differ between the two row kernels", dp_kind_name(kinds[ki]), r, c, count_diff(o1, o2, n));
                CHECK(t1 > 0 && t2 > 0, "rows A/B %s %dx%d: times %g, %g s", dp_kind_name(kinds[ki]), r, c, t1, t2);
                if (!one_op(&g, kinds[ki], 1, shape, r, c, 0)) {
                    host_run(&g, 1, &h);   /* the input of seed 1, op 0: the timing's */
                    CHECK(rel_err(o2, h.cpu, n) <= OP_TOL, "rows A/B %s %dx%d: error %.3g against the CPU kernel", dp_kind_name(kinds[ki]), r, c, rel_err(o2, h.cpu, n));
                    if (kinds[ki] != DP_OP_SOFTMAX)   /* no expf of CUDA's own */
                        CHECK(count_diff(o2, h.emu, n) == 0, "rows A/B %s %dx%d: %zu elements differ from the host emulation", dp_kind_name(kinds[ki]), r, c, count_diff(o2, h.emu, n));
                    run_free(&g, &h);
                }
                dp_graph_free(&g);
            }
            free(o1); free(o2);
        }
}

/* ---- the tensor-core matmul (DP_PREC_TF32, DP_PREC_BF16) ---- */
static float f_of(double x) { return (float)x; }

/* The input roundings of the hardware, by hand: TF32 keeps 10 mantissa
   bits, to nearest with ties away from zero (cvt.rna); BF16 keeps 7, to
   nearest with ties to even (__float2bfloat16_rn). */
static void check_mma_rounding(void)
{
    const double t10 = ldexp(1, -10), t11 = ldexp(1, -11), b7 = ldexp(1, -7), b8 = ldexp(1, -8);
    struct { double x, tf32, bf16; } v[] = {
        {1.0, 1.0, 1.0},
        {1 + t11, 1 + t10, 1.0},                           /* tf32 tie: away; bf16: below half */
        {1 + 3 * t11, 1 + 2 * t10, 1.0},                   /* tf32 tie between 1+2^-10 and 1+2^-9: away */
        {1 + ldexp(1, -12), 1.0, 1.0},                     /* below half an ulp */
        {1 + t11 + ldexp(1, -23), 1 + t10, 1.0},
        {-(1 + t11), -(1 + t10), -1.0},                    /* away from zero, negative */
        {1 + b8, 1 + b8, 1.0},                             /* bf16 tie, 1.0000000 even: down */
        {1 + 3 * b8, 1 + 3 * b8, 1 + 2 * b7},              /* bf16 tie, 1.0000001 odd: up to even */
        {1 + b8 + ldexp(1, -20), 1 + b8, 1 + b7},          /* bf16 above half */
        {3.0, 3.0, 3.0},
        {255.0, 255.0, 255.0},
        {257.0, 257.0, 256.0},                             /* 257 = 256 + 1: bf16 tie, even: 256 */
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        float x = f_of(v[i].x), t = dp__round_tf32(x), b = dp__round_bf16(x);
        CHECK(t == f_of(v[i].tf32), "tf32(%.10g) = %.10g, expected %.10g", v[i].x, t, v[i].tf32);
        CHECK(b == f_of(v[i].bf16), "bf16(%.10g) = %.10g, expected %.10g", v[i].x, b, v[i].bf16);
    }
    CHECK(isnan(dp__round_tf32(NAN)) && isnan(dp__round_bf16(NAN)), "NaN rounds to NaN");
    CHECK(isinf(dp__round_tf32(INFINITY)) && dp__round_bf16(-INFINITY) == -INFINITY, "inf rounds to inf");
    /* the bound's formula, by hand */
    CHECK(dp_matmul_err_bound(DP_PREC_FP32, 1) == ldexp(1, -24) / (1 - ldexp(1, -24)), "fp32 bound at K 1: %.17g", dp_matmul_err_bound(DP_PREC_FP32, 1));
    CHECK(dp_matmul_err_bound(DP_PREC_TF32, 0) == ldexp(1, -10) + ldexp(1, -22), "tf32 bound at K 0: %.17g", dp_matmul_err_bound(DP_PREC_TF32, 0));
    CHECK(dp_matmul_err_bound(DP_PREC_BF16, 0) == ldexp(1, -7) + ldexp(1, -16), "bf16 bound at K 0: %.17g", dp_matmul_err_bound(DP_PREC_BF16, 0));
    CHECK(dp_matmul_err_bound(DP_PREC_TF32, 1LL << 24) == HUGE_VAL, "K 2^24: no bound");
}

/* The emulated kernel on one shape: small integers (exact in TF32, BF16
   and in FP32 sums) must give the exact product; uniform inputs must be
   within the bound of the double product. Returns the largest error
   relative to the bound (0 for integers). bn 0: the first kernel's
   emulation (bm-row tiles); else the second's (bm x bn tiles). */
static void mma_case(int r, int K, int c, int prec, int bm, int bn, int vec_a, int vec_b, int ints, uint64_t seed, double *worst)
{
    float *A = (float *)malloc(sizeof(float) * (size_t)r * K), *B = (float *)malloc(sizeof(float) * (size_t)K * c);
    float *C = (float *)malloc(sizeof(float) * (size_t)r * c);
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    for (long long i = 0; i < (long long)r * K; i++) A[i] = ints ? (float)(dp_rng_int(&rng, 9) - 4) : (float)(2 * dp_rng_uniform(&rng) - 1);
    for (long long i = 0; i < (long long)K * c; i++) B[i] = ints ? (float)(dp_rng_int(&rng, 9) - 4) : (float)(2 * dp_rng_uniform(&rng) - 1);
    for (long long i = 0; i < (long long)r * c; i++) C[i] = NAN;   /* every element must be written */
    int rc = bn ? dp__cuda_host_mma2(r, K, c, A, B, C, prec, bm, bn, vec_a, vec_b) : dp__cuda_host_mma(r, K, c, A, B, C, prec, bm, vec_a, vec_b);
    CHECK(rc == 0, "host mma%s %dx%dx%d: rc %d", bn ? "2" : "", r, K, c, rc);
    double bound = dp_matmul_err_bound(prec, K);
    long long bad = 0;
    for (int i = 0; i < r && rc == 0; i++)
        for (int j = 0; j < c; j++) {
            double s = 0, sa = 0;
            for (int k = 0; k < K; k++) { s += (double)A[(long long)i * K + k] * B[(long long)k * c + j]; sa += fabs((double)A[(long long)i * K + k] * B[(long long)k * c + j]); }
            double got = C[(long long)i * c + j], e = fabs(got - s);
            if (ints) bad += !(got == s);
            else {
                if (!(e <= bound * sa)) bad++;
                if (sa > 0 && e / (bound * sa) > *worst) *worst = e / (bound * sa);
            }
        }
    CHECK(bad == 0, "host %s mma%s %dx%dx%d (%dx%d tiles, %s A, %s B, %s): %lld elements %s", dp_precision_name(prec), bn ? "2" : "", r, K, c, bm, bn ? bn : 128, vec_a ? "16-byte" : "4-byte",
          vec_b ? "16-byte" : "4-byte", ints ? "integers" : "uniform", bad, ints ? "not the exact product" : "outside the error bound");
    free(A); free(B); free(C);
}

static void check_host_mma(void)
{
    static const int sz[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 129};
    const int ns = (int)(sizeof sz / sizeof sz[0]);
    double worst = 0;
    check_mma_rounding();
    for (int p = DP_PREC_TF32; p <= DP_PREC_BF16; p++) {
        for (int i = 0; i < ns; i++)
            for (int j = 0; j < ns; j++) {
                int r = sz[i], c = sz[j], K = sz[(7 * i + j) % ns];
                int bm = (i + j) % 2 ? 64 : 128;   /* both block tiles, alternately */
                mma_case(r, K, c, p, bm, 0, 0, 0, 1, 100 + (uint64_t)(i * ns + j), &worst);
                if (K % 4 == 0 || c % 4 == 0) mma_case(r, K, c, p, 192 - bm, 0, K % 4 == 0, c % 4 == 0, 1, 200 + (uint64_t)(i * ns + j), &worst);
            }
        mma_case(130, 257, 131, p, 128, 0, 0, 0, 1, 7, &worst);
        mma_case(130, 257, 131, p, 64, 0, 1, 0, 1, 7, &worst);
        mma_case(128, 256, 256, p, 128, 0, 1, 1, 1, 8, &worst);   /* whole tiles only */
        mma_case(64, 256, 128, p, 64, 0, 1, 1, 1, 8, &worst);
        /* a tie of each rounding through the kernel: A = 1 + 2^-11 (tf32:
           away, 1 + 2^-10) or 1 + 3 2^-8 (bf16: even, 1 + 2^-6), B = 1 */
        {
            float a = p == DP_PREC_TF32 ? f_of(1 + ldexp(1, -11)) : f_of(1 + 3 * ldexp(1, -8)), b = 1, o = 0;
            double want = p == DP_PREC_TF32 ? 1 + ldexp(1, -10) : 1 + ldexp(1, -6);
            dp__cuda_host_mma(1, 1, 1, &a, &b, &o, p, 128, 0, 0);
            CHECK(o == f_of(want), "host %s mma of a tie: %.10g, expected %.10g", dp_precision_name(p), o, want);
        }
        double w = 0;
        mma_case(37, 100, 45, p, 64, 0, 0, 0, 0, 9, &w);
        mma_case(129, 300, 130, p, 128, 0, 0, 0, 0, 10, &w);
        mma_case(64, 1000, 8, p, 128, 0, 1, 1, 0, 11, &w);
        /* the inputs are really rounded: the error is a visible part of the bound */
        CHECK(w > 1e-3 && w <= 1, "host %s mma on uniform inputs: largest error %.3g of the bound", dp_precision_name(p), w);
        printf("  host %s mma: uniform inputs, largest error %.3g of the bound\n", dp_precision_name(p), w);
    }
    CHECK(dp__cuda_host_mma(1, 1, 1, NULL, NULL, NULL, DP_PREC_FP32, 128, 0, 0) == -1, "host mma refuses fp32");
    CHECK(dp__cuda_host_mma(1, 1, 1, NULL, NULL, NULL, DP_PREC_TF32, 32, 0, 0) == -1, "host mma refuses 32-row tiles");
}

/* ----- the second tensor-core kernel (dp__k_mma2) -----
   Its index maps against the PTX ISA's fragment layouts, written out here
   again from "Matrix fragments for mma.m16n8k8" (.tf32) and "mma.m16n8k16"
   (.bf16), g = lane / 4, t = lane % 4:
     tf32 A: a0 (g, t) a1 (g+8, t) a2 (g, t+4) a3 (g+8, t+4); B: b0 (t, g) b1 (t+4, g)
     bf16 A: a0,a1 (g, 2t..) a2,a3 (g+8, 2t..) a4,a5 (g, 2t+8..) a6,a7 (g+8, 2t+8..);
          B: b0,b1 (2t.., g) b2,b3 (2t+8.., g)
     accumulators: c0 (g, 2t) c1 (g, 2t+1) c2 (g+8, 2t) c3 (g+8, 2t+1) */
static void ptx_a(int prec, int lane, int e, int *row, int *kap)
{
    int g = lane / 4, t = lane % 4;
    if (prec == DP_PREC_BF16) { *row = g + 8 * ((e / 2) % 2); *kap = 2 * t + e % 2 + 8 * (e / 4); }
    else { *row = g + 8 * (e % 2); *kap = t + 4 * (e / 2); }
}
static int ptx_b(int prec, int lane, int e) { int t = lane % 4; return prec == DP_PREC_BF16 ? 2 * t + e % 2 + 8 * (e / 2) : t + 4 * e; }
static int mm2(int map, int a, int b, int c, int d, int e, int f, int *o1)
{
    int in[6] = {a, b, c, d, e, f}, out[2] = {-1, -1};
    int rc = dp__cuda_mma2_map(map, in, out);
    if (o1) *o1 = out[1];
    return rc ? -1000 : out[0];
}

/* eight 16-byte accesses (float offsets) of a quarter warp: in eight
   distinct groups of four banks (no conflict) */
static int quads_distinct(const int *off)
{
    int seen = 0;
    for (int i = 0; i < 8; i++) seen |= 1 << (off[i] / 4 % 8);
    return seen == 0xff;
}

static void check_mma2_maps(void)
{
    int o1, bad;
    /* k_of by hand: tf32 8 (kap % 4) + 2 kk + kap / 4, bf16 8 ((kap / 2) % 4) + 4 kk + 2 (kap / 8) + kap % 2 */
    CHECK(mm2(0, DP_PREC_TF32, 0, 0, 0, 0, 0, NULL) == 0 && mm2(0, DP_PREC_TF32, 0, 4, 0, 0, 0, NULL) == 1 && mm2(0, DP_PREC_TF32, 1, 5, 0, 0, 0, NULL) == 11 &&
          mm2(0, DP_PREC_TF32, 3, 7, 0, 0, 0, NULL) == 31 && mm2(0, DP_PREC_TF32, 2, 3, 0, 0, 0, NULL) == 28, "mma2 k_of tf32 by hand");
    CHECK(mm2(0, DP_PREC_BF16, 0, 0, 0, 0, 0, NULL) == 0 && mm2(0, DP_PREC_BF16, 0, 1, 0, 0, 0, NULL) == 1 && mm2(0, DP_PREC_BF16, 0, 8, 0, 0, 0, NULL) == 2 &&
          mm2(0, DP_PREC_BF16, 0, 9, 0, 0, 0, NULL) == 3 && mm2(0, DP_PREC_BF16, 0, 2, 0, 0, 0, NULL) == 8 && mm2(0, DP_PREC_BF16, 1, 6, 0, 0, 0, NULL) == 28 &&
          mm2(0, DP_PREC_BF16, 1, 15, 0, 0, 0, NULL) == 31, "mma2 k_of bf16 by hand");
    CHECK(dp__cuda_mma2_map(10, (int[6]){0}, (int[2]){0}) == -1, "mma2 map 10 refused");
    for (int p = DP_PREC_TF32; p <= DP_PREC_BF16; p++) {
        int kf = p == DP_PREC_BF16 ? 16 : 8, na = p == DP_PREC_BF16 ? 8 : 4, nb = p == DP_PREC_BF16 ? 4 : 2, seen[32] = {0};
        /* k_of: each of the step's 32 K indices once */
        for (int kk = 0; kk < 32 / kf; kk++)
            for (int kap = 0; kap < kf; kap++) { int k = mm2(0, p, kk, kap, 0, 0, 0, NULL); if (k >= 0 && k < 32) seen[k]++; }
        bad = 0;
        for (int k = 0; k < 32; k++) bad += seen[k] != 1;
        CHECK(bad == 0, "mma2 %s k_of: not a permutation of 0..31 (%d indices not once)", dp_precision_name(p), bad);
        /* the kernel's A and B sources are where the mma's layout has each
           element, in the permuted K order; one kk's elements of one row in
           one 16-byte chunk; B's 4 mma tiles of a load in one chunk */
        bad = 0;
        for (int lane = 0; lane < 32; lane++)
            for (int kk = 0; kk < 32 / kf; kk++) {
                int chunk[2] = {-1, -1};
                for (int e = 0; e < na; e++) {
                    int row, kap, k = mm2(1, p, lane, kk, e, 0, 0, &o1);
                    ptx_a(p, lane, e, &row, &kap);
                    bad += k != row || o1 != mm2(0, p, kk, kap, 0, 0, 0, NULL);
                    if (chunk[row / 8] < 0) chunk[row / 8] = o1 / 4;
                    bad += chunk[row / 8] != o1 / 4;
                }
                for (int nt = 4; nt <= 8; nt += 4)
                    for (int e = 0; e < nb; e++)
                        for (int j = 0; j < nt; j++) {
                            int k = mm2(2, p, lane, kk, e, nt, j, &o1);
                            bad += k != mm2(0, p, kk, ptx_b(p, lane, e), 0, 0, 0, NULL) || o1 != mm2(3, nt, j, lane / 4, 0, 0, 0, NULL);
                            bad += o1 % 4 != j % 4;   /* column 4c + j % 4 of a chunk: tiles 4h .. 4h+3 in one load */
                        }
            }
        CHECK(bad == 0, "mma2 %s fragment sources: %d differ from the PTX layout in the permuted K order", dp_precision_name(p), bad);
    }
    /* by hand: tf32 lane 6 (g 1, t 2) a2 of kk 1 is (g, t+4) = (1, 6): K index 8*2 + 2 + 1 = 19 */
    CHECK(mm2(1, DP_PREC_TF32, 6, 1, 2, 0, 0, &o1) == 1 && o1 == 19, "mma2 A source of tf32 lane 6 a2 kk 1: (1, 19)");
    /* bf16 lane 5 (g 1, t 1) a5 of kk 1 is (g, 2t+9) = (1, 11): 8 ((11/2) % 4) + 4 + 2 + 1 = 15 */
    CHECK(mm2(1, DP_PREC_BF16, 5, 1, 5, 0, 0, &o1) == 1 && o1 == 15, "mma2 A source of bf16 lane 5 a5 kk 1: (1, 15)");
    /* tf32 lane 13 (g 3, t 1) b1 of kk 2, tile 5 of 8: K (t+4 = 5) -> 8 + 4 + 1 = 13, column 4 (2*3 + 1) + 1 = 29 */
    CHECK(mm2(2, DP_PREC_TF32, 13, 2, 1, 8, 5, &o1) == 13 && o1 == 29, "mma2 B source of tf32 lane 13 b1 kk 2 tile 5: (13, 29)");
    /* columns: 8 tiles: 8n + j; 4 tiles: 4 (2 (n % 4) + n / 4) + j */
    CHECK(mm2(3, 8, 3, 2, 0, 0, 0, NULL) == 19 && mm2(3, 8, 5, 1, 0, 0, 0, NULL) == 13 && mm2(3, 4, 2, 5, 0, 0, 0, NULL) == 14 && mm2(3, 4, 1, 0, 0, 0, 0, NULL) == 1,
          "mma2 column map by hand");
    for (int nt = 4; nt <= 8; nt += 4) {
        int seen[64] = {0};
        bad = 0;
        for (int j = 0; j < nt; j++)
            for (int n = 0; n < 8; n++) { int col = mm2(3, nt, j, n, 0, 0, 0, NULL); if (col >= 0 && col < 8 * nt) seen[col]++; }
        for (int col = 0; col < 8 * nt; col++) bad += seen[col] != 1;
        CHECK(bad == 0, "mma2 column map of %d tiles: not a permutation (%d)", nt, bad);
        /* the epilogue: store (hi, e1, h) of a lane writes accumulators [4h + i][2 hi + e1],
           i.e. mma tile 4h + i's element c_(2 hi + e1) at (g + 8 hi, 2t + e1) */
        bad = 0;
        for (int lane = 0; lane < 32; lane++)
            for (int hi = 0; hi < 2; hi++)
                for (int e1 = 0; e1 < 2; e1++)
                    for (int h = 0; h < nt / 4; h++) {
                        int row = mm2(4, nt, lane, hi, e1, h, 0, &o1);
                        bad += row != lane / 4 + 8 * hi || o1 % 4 != 0;
                        for (int i = 0; i < 4; i++) bad += o1 + i != mm2(3, nt, 4 * h + i, 2 * (lane % 4) + e1, 0, 0, 0, NULL);
                    }
        CHECK(bad == 0, "mma2 epilogue of %d tiles: %d stores not where the accumulators' layout has them", nt, bad);
    }
    /* lane 6 (g 1, t 2), NT 8, hi 1, e1 1, h 0: row 9, columns 16t + 8 = 40.. */
    CHECK(mm2(4, 8, 6, 1, 1, 0, 0, &o1) == 9 && o1 == 40, "mma2 store of lane 6 (hi 1, e1 1): row 9, column 40");
    /* shared memory: the swizzled offsets a permutation of the tile, and by hand */
    {
        static int seen[4096];
        memset(seen, 0, sizeof seen);
        bad = 0;
        for (int row = 0; row < 128; row++)
            for (int k = 0; k < 32; k++) { int o = mm2(5, row, k, 0, 0, 0, 0, NULL); if (o >= 0 && o < 4096) seen[o]++; }
        for (int i = 0; i < 4096; i++) bad += seen[i] != 1;
        CHECK(bad == 0, "mma2 A offsets: not a permutation of the 128 x 32 tile (%d)", bad);
        CHECK(mm2(5, 0, 5, 0, 0, 0, 0, NULL) == 5 && mm2(5, 1, 5, 0, 0, 0, 0, NULL) == 32 + 1 && mm2(5, 3, 30, 0, 0, 0, 0, NULL) == 96 + 26,
              "mma2 A offsets by hand (row 1: chunks swapped in pairs)");
        for (int bn = 64; bn <= 128; bn += 64) {
            memset(seen, 0, sizeof seen);
            bad = 0;
            for (int k = 0; k < 32; k++)
                for (int n = 0; n < bn; n++) { int o = mm2(6, bn, k, n, 0, 0, 0, NULL); if (o >= 0 && o < 32 * bn) seen[o]++; }
            for (int i = 0; i < 32 * bn; i++) bad += seen[i] != 1;
            CHECK(bad == 0, "mma2 B offsets (rows of %d): not a permutation (%d)", bn, bad);
        }
        /* row 8: chunk ^ 1; row 16: ^ 4; row 24: ^ 5 */
        CHECK(mm2(6, 128, 8, 1, 0, 0, 0, NULL) == 1024 + 5 && mm2(6, 128, 16, 6, 0, 0, 0, NULL) == 2048 + 22 && mm2(6, 64, 24, 33, 0, 0, 0, NULL) == 1536 + 53,
              "mma2 B offsets by hand");
    }
    /* bank conflicts: each quarter warp's 16-byte fragment loads, copies and roundings */
    bad = 0;
    for (int p = DP_PREC_TF32; p <= DP_PREC_BF16; p++) {
        int kf = p == DP_PREC_BF16 ? 16 : 8, na = p == DP_PREC_BF16 ? 8 : 4, nb = p == DP_PREC_BF16 ? 4 : 2;
        for (int kk = 0; kk < 32 / kf; kk++)
            for (int q = 0; q < 4; q++) {
                for (int rbase = 0; rbase < 128; rbase += 16)
                    for (int hi = 0; hi < 2; hi++) {
                        int off[8];
                        for (int l = 0; l < 8; l++) {
                            int lane = 8 * q + l, e = 0;
                            while (e < na && mm2(1, p, lane, kk, e, 0, 0, NULL) / 8 != hi) e++;
                            int row = mm2(1, p, lane, kk, e, 0, 0, &o1);
                            off[l] = mm2(5, rbase + row, o1 / 4 * 4, 0, 0, 0, 0, NULL);
                        }
                        bad += !quads_distinct(off);
                    }
                for (int nt = 4; nt <= 8; nt += 4)
                    for (int wc = 0; wc < 16 * nt; wc += 8 * nt)
                        for (int e = 0; e < nb; e++)
                            for (int h = 0; h < nt / 4; h++) {
                                int off[8];
                                for (int l = 0; l < 8; l++) {
                                    int k = mm2(2, p, 8 * q + l, kk, e, nt, 4 * h, &o1);
                                    off[l] = mm2(6, 16 * nt, k, wc + o1, 0, 0, 0, NULL);
                                }
                                bad += !quads_distinct(off);
                            }
            }
    }
    for (int q = 0; q < 128 * 32 / 4; q += 8) {   /* copies (and roundings) of 8 threads: A rows of 8 chunks, B rows of bn / 4 */
        int off[8], offb[8], offc[8];
        for (int l = 0; l < 8; l++) {
            off[l] = mm2(5, (q + l) / 8, (q + l) % 8 * 4, 0, 0, 0, 0, NULL);
            offb[l] = mm2(6, 128, (q + l) / 32, (q + l) % 32 * 4, 0, 0, 0, NULL);
            offc[l] = mm2(6, 64, (q + l) / 16 % 32, (q + l) % 16 * 4, 0, 0, 0, NULL);
        }
        bad += !quads_distinct(off) + !quads_distinct(offb) + !quads_distinct(offc);
    }
    CHECK(bad == 0, "mma2 shared memory: %d quarter warps with a bank conflict", bad);
    /* the tile order by hand: 10 x 3 tiles, bands of 8 rows */
    {
        static const int want[][3] = {{0, 0, 0}, {1, 1, 0}, {7, 7, 0}, {8, 0, 1}, {23, 7, 2}, {24, 8, 0}, {25, 9, 0}, {26, 8, 1}, {29, 9, 2}};
        bad = 0;
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) bad += mm2(7, want[i][0], 10, 3, 0, 0, 0, &o1) != want[i][1] || o1 != want[i][2];
        CHECK(bad == 0, "mma2 tile order of 10 x 3 tiles by hand: %d differ", bad);
    }
    /* every tile once, for the grids of the generated workloads' matmuls:
       dims 256..8192 in steps of 256 cut into P = 1..8 blocks (dim / P x
       dim / P, and batch 64 x dim / P), in each block tile */
    {
        static unsigned char seen[128 * 128];
        long grids = 0;
        bad = 0;
        for (int dim = 256; dim <= 8192; dim += 256)
            for (int P = 1; P <= 8; P++) {
                if (dim % P) continue;
                int blk = dim / P;
                for (int s = 0; s < 3; s++)
                    for (int rr = 0; rr < 2; rr++) {
                        int bm = s == 0 ? 128 : 64, bn = s == 2 ? 64 : 128, r = rr ? 64 : blk;
                        int tr = (r + bm - 1) / bm, tc = (blk + bn - 1) / bn;
                        memset(seen, 0, (size_t)tr * tc);
                        for (int t = 0; t < tr * tc; t++) {
                            int ti = mm2(7, t, tr, tc, 0, 0, 0, &o1);
                            if (ti >= 0 && ti < tr && o1 >= 0 && o1 < tc) seen[ti * tc + o1]++;
                            /* the band: rows t / (8 tc) * 8 .. + 7 */
                            bad += ti / 8 != t / (8 * tc);
                        }
                        for (int i = 0; i < tr * tc; i++) bad += seen[i] != 1;
                        grids++;
                    }
            }
        CHECK(bad == 0, "mma2 tile order over %ld workload grids: %d tiles not once or outside their band", grids, bad);
    }
    /* the block tile: at a cap of 1056 (132 SMs x 8), the largest with at least 264 tiles */
    CHECK(mm2(8, 4096, 4096, 1056, 0, 0, 0, &o1) == 128 && o1 == 128, "mma2 shape of 4096^2: 128 x 128 (1024 tiles)");
    CHECK(mm2(8, 2048, 2048, 1056, 0, 0, 0, &o1) == 64 && o1 == 128, "mma2 shape of 2048^2: 64 x 128 (256 tiles of 128 x 128 are < 264)");
    CHECK(mm2(8, 1024, 1024, 1056, 0, 0, 0, &o1) == 64 && o1 == 64, "mma2 shape of 1024^2: 64 x 64");
    CHECK(mm2(8, 64, 8192, 64, 0, 0, 0, &o1) == 64 && o1 == 128, "mma2 shape of 64 x 8192 at cap 64: 64 x 128 (64 rows: no 128-row tiles)");
    CHECK(mm2(9, 3, 128, 128, 0, 0, 0, &o1) == 64 && o1 == 64 && mm2(9, 2, 64, 64, 0, 0, 0, &o1) == 32 && o1 == 0 && mm2(9, 1, 64, 128, 0, 0, 0, &o1) == 0 && o1 == 64,
          "mma2 warp tiles by hand");
}

static void check_host_mma2(void)
{
    static const int sz[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 129};
    static const int shp[3][2] = {{128, 128}, {64, 128}, {64, 64}};
    const int ns = (int)(sizeof sz / sizeof sz[0]);
    double worst = 0;
    check_mma2_maps();
    for (int p = DP_PREC_TF32; p <= DP_PREC_BF16; p++) {
        for (int i = 0; i < ns; i++)
            for (int j = 0; j < ns; j++) {
                int r = sz[i], c = sz[j], K = sz[(7 * i + j) % ns], s = (i + j) % 3;
                mma_case(r, K, c, p, shp[s][0], shp[s][1], 0, 0, 1, 300 + (uint64_t)(i * ns + j), &worst);
                if (K % 4 == 0 || c % 4 == 0) mma_case(r, K, c, p, shp[(s + 1) % 3][0], shp[(s + 1) % 3][1], K % 4 == 0, c % 4 == 0, 1, 400 + (uint64_t)(i * ns + j), &worst);
            }
        /* the generated workloads' blocks (dim / P for dims 256..8192, P
           1..8) leave these remainders at the tile edges: a side of 36
           (252 / 7), 85 (255 / 3: not a workload, odd), 146 (1024 / 7,
           rounded: odd), 192 (768 / 4), 320 (1280 / 4), with K steps
           in and across 32 */
        mma_case(130, 257, 131, p, 128, 128, 0, 0, 1, 7, &worst);
        mma_case(130, 260, 131, p, 64, 64, 1, 0, 1, 7, &worst);
        mma_case(192, 96, 320, p, 128, 128, 1, 1, 1, 8, &worst);
        mma_case(64, 146, 146, p, 64, 128, 0, 0, 1, 9, &worst);
        mma_case(85, 36, 200, p, 64, 64, 1, 1, 1, 10, &worst);
        mma_case(256, 64, 256, p, 128, 128, 1, 1, 1, 11, &worst);   /* whole tiles only */
        /* two ties through the kernel: A = 1 + 2^-11 (tf32: away, 1 + 2^-10) or 1 + 3 2^-8 (bf16: even, 1 + 2^-6), B = 1 */
        {
            float a = p == DP_PREC_TF32 ? f_of(1 + ldexp(1, -11)) : f_of(1 + 3 * ldexp(1, -8)), b = 1, o = 0;
            double want = p == DP_PREC_TF32 ? 1 + ldexp(1, -10) : 1 + ldexp(1, -6);
            dp__cuda_host_mma2(1, 1, 1, &a, &b, &o, p, 64, 64, 0, 0);
            CHECK(o == f_of(want), "host %s mma2 of a tie: %.10g, expected %.10g", dp_precision_name(p), o, want);
        }
        /* the order of accumulation, by hand: one row of ones times a
           column of 2^24 at K 0, 1 at K 1 and 1 at K 2 and 3 (tf32) or 4
           and 5 (bf16). The kernel's mma 0 of the step sums K 0, 1, 8, 9, ...
           (tf32) or K 0..3, 8..11, ... (bf16): 2^24 + 1 exactly, rounded
           to even in the accumulator: 2^24; mma 1 then adds 2 exactly:
           2^24 + 2. Natural groups of 8 or 16 (2^24 + 3, to even: 2^24 +
           4) or a float sum element by element (2^24) would differ. */
        for (int s = 0; s < 3; s++) {
            float a[32], b[32], o = 0;
            for (int k = 0; k < 32; k++) { a[k] = 1; b[k] = 0; }
            b[0] = f_of(ldexp(1, 24)); b[1] = 1;
            if (p == DP_PREC_TF32) b[2] = b[3] = 1; else b[4] = b[5] = 1;
            dp__cuda_host_mma2(1, 32, 1, a, b, &o, p, shp[s][0], shp[s][1], s != 1, 0);
            CHECK(o == f_of(ldexp(1, 24) + 2), "host %s mma2 order of accumulation (%dx%d tiles): %.10g, expected 2^24 + 2", dp_precision_name(p), shp[s][0], shp[s][1], o);
        }
        /* and across steps: 2^24 at K 0, 1 at K 32 (the next step's mma 0), 1 at K 1: step 0 gives 2^24 + 1 -> 2^24, step 1 adds 1 -> 2^24 */
        {
            float a[40], b[40], o = 0;
            for (int k = 0; k < 40; k++) { a[k] = 1; b[k] = 0; }
            b[0] = f_of(ldexp(1, 24)); b[1] = 1; b[32] = 1;
            dp__cuda_host_mma2(1, 40, 1, a, b, &o, p, 64, 64, 0, 0);
            CHECK(o == f_of(ldexp(1, 24)), "host %s mma2 across steps: %.10g, expected 2^24", dp_precision_name(p), o);
        }
        double w = 0;
        mma_case(37, 100, 45, p, 64, 64, 0, 0, 0, 9, &w);
        mma_case(129, 300, 130, p, 128, 128, 0, 0, 0, 10, &w);
        mma_case(64, 1000, 8, p, 64, 128, 1, 1, 0, 11, &w);
        CHECK(w > 1e-3 && w <= 1, "host %s mma2 on uniform inputs: largest error %.3g of the bound", dp_precision_name(p), w);
        printf("  host %s mma2: uniform inputs, largest error %.3g of the bound\n", dp_precision_name(p), w);
        /* the result does not depend on the block tile or the copy width: bit for bit */
        {
            int r = 150, K = 200, c = 136;
            float *A = (float *)malloc(sizeof(float) * (size_t)r * K), *B = (float *)malloc(sizeof(float) * (size_t)K * c);
            float *C0 = (float *)malloc(sizeof(float) * (size_t)r * c), *C1 = (float *)malloc(sizeof(float) * (size_t)r * c);
            dp_rng rng;
            dp_rng_seed(&rng, 12);
            for (int i = 0; i < r * K; i++) A[i] = (float)(2 * dp_rng_uniform(&rng) - 1);
            for (int i = 0; i < K * c; i++) B[i] = (float)(2 * dp_rng_uniform(&rng) - 1);
            dp__cuda_host_mma2(r, K, c, A, B, C0, p, 128, 128, 1, 1);
            for (int s = 1; s < 3; s++) {
                dp__cuda_host_mma2(r, K, c, A, B, C1, p, shp[s][0], shp[s][1], s == 1, 0);
                CHECK(count_diff(C0, C1, (size_t)r * c) == 0, "host %s mma2: %dx%d tiles differ from 128x128", dp_precision_name(p), shp[s][0], shp[s][1]);
            }
            free(A); free(B); free(C0); free(C1);
        }
    }
    CHECK(dp__cuda_host_mma2(1, 1, 1, NULL, NULL, NULL, DP_PREC_FP32, 128, 128, 0, 0) == -1, "host mma2 refuses fp32");
    CHECK(dp__cuda_host_mma2(1, 1, 1, NULL, NULL, NULL, DP_PREC_TF32, 128, 64, 0, 0) == -1, "host mma2 refuses 128 x 64 tiles");
}

/* The tensor cores on the GPU: single matmuls of edge shapes against the
   double product within dp_matmul_err_bound per element (inputs as the
   executor fills them), twice bit for bit the same, and the precision
   reported. */
static void check_gpu_mma(void)
{
    static const int shapes[][3] = {{1, 1, 1}, {7, 9, 5}, {17, 33, 15}, {100, 129, 64}, {129, 31, 257}, {256, 256, 256}, {300, 1000, 200}, {64, 4096, 64},
                                       {64, 146, 146}, {192, 96, 320}, {2304, 40, 2112}};   /* the last: 128 x 128 tiles on 132 SMs */
    dp_error err;
    memset(&err, 0, sizeof err);
    for (int p = DP_PREC_DEFAULT; p <= DP_PREC_BF16; p++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int r = shapes[s][0], K = shapes[s][1], c = shapes[s][2], sh[4] = {r, K, K, c};
            dp_graph g;
            dp_cluster cl;
            dp_exec_opts eo;
            dp_exec_result x, y;
            run_t h;
            if (p == DP_PREC_FP32) continue;   /* check_gpu_kernels */
            if (one_op(&g, DP_OP_MATMUL, 2, sh, r, c, 0)) { dp_graph_free(&g); continue; }
            dp_cluster_homogeneous(&cl, 1, 1e9, 1e10, 0, &err);
            int one[3] = {0, 0, 0};
            memset(&eo, 0, sizeof eo);
            eo.keep_outputs = 1; eo.seed = 21 + s; eo.precision = (dp_precision)p;
            host_run(&g, eo.seed, &h);
            int okx = !dp_exec_cuda(&g, &cl, one, &eo, &x, &err);
            CHECK(okx, "GPU %s matmul %dx%dx%d: %s", dp_precision_name(p), r, K, c, err.msg);
            if (okx) {
                int okp = x.precision == (p == DP_PREC_DEFAULT ? DP_PREC_TF32 : p);
                CHECK(okp, "GPU %s matmul: precision %s reported (DEFAULT is TF32 on an sm_80+ GPU and build)", dp_precision_name(p), dp_precision_name(x.precision));
                double bound = dp_matmul_err_bound(x.precision, K), w = 0;
                long long bad = 0;
                const float *o = x.outputs[2];
                for (int i = 0; i < r; i++)
                    for (int j = 0; j < c; j++) {
                        double e = 0, sa = 0;
                        for (int k = 0; k < K; k++) { double t = (double)h.in[0][(long long)i * K + k] * h.in[1][(long long)k * c + j]; e += t; sa += fabs(t); }
                        double d = fabs((double)o[(long long)i * c + j] - e);
                        if (!(d <= bound * sa)) bad++;
                        if (sa > 0 && d / (bound * sa) > w) w = d / (bound * sa);
                    }
                CHECK(bad == 0, "GPU %s matmul %dx%dx%d: %lld elements outside the error bound (largest %.3g of it)", dp_precision_name(x.precision), r, K, c, bad, w);
                /* the host emulation: within the same bound of the GPU (both are) */
                float *em = (float *)malloc(sizeof(float) * (size_t)r * c);
                if (x.precision != DP_PREC_FP32 && r * (long long)K * c <= 20000000LL) {
                    dp__cuda_host_mma2(r, K, c, h.in[0], h.in[1], em, x.precision, 128, 128, 0, 0);
                    CHECK(rel_err(o, em, (size_t)r * c) <= 2 * bound * K, "GPU %s matmul %dx%dx%d: %.3g off its host emulation", dp_precision_name(x.precision), r, K, c, rel_err(o, em, (size_t)r * c));
                    /* how far the tensor cores' own sums follow the model (each mma's products exact): for the record */
                    printf("  GPU %s matmul %dx%dx%d: %zu of %lld elements bit for bit as the emulation\n", dp_precision_name(x.precision), r, K, c,
                           (size_t)r * c - count_diff(o, em, (size_t)r * c), (long long)r * c);
                }
                free(em);
                if (!dp_exec_cuda(&g, &cl, one, &eo, &y, &err)) {
                    CHECK(count_diff(o, y.outputs[2], (size_t)r * c) == 0, "GPU %s matmul %dx%dx%d: two runs differ", dp_precision_name(p), r, K, c);
                    dp_exec_result_free(&y);
                } else CHECK(0, "GPU %s matmul, second run: %s", dp_precision_name(p), err.msg);
                dp_exec_result_free(&x);
            }
            run_free(&g, &h);
            dp_cluster_free(&cl);
            dp_graph_free(&g);
        }
}

static const double *g_cmp_start;
static int by_start(const void *a, const void *b)
{
    double x = g_cmp_start[*(const int *)a], y = g_cmp_start[*(const int *)b];
    return x < y ? -1 : x > y;
}

/* The measured schedule obeys the model: every op after its inputs, one at
   a time per logical device, busy = its ops' time, opaque ops at least
   their modelled time. Event times are good to about a microsecond. */
static void check_schedule(const char *what, const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_result *r, int opaque)
{
    const double eps = 5e-6;
    int n = g->n_ops, bad = 0;
    CHECK(r->n_ops == n && r->n_devices == c->n && r->gpus >= 1, "%s: result sizes %d ops %d devices %d GPUs", what, r->n_ops, r->n_devices, r->gpus);
    for (int v = 0; v < n; v++)
        if (!(r->start[v] >= -eps && r->end[v] >= r->start[v] && r->end[v] <= r->wall_median + eps)) bad++;
    CHECK(!bad, "%s: %d ops with no proper interval", what, bad);
    bad = 0;
    for (int e = 0; e < g->n_edges; e++)
        if (r->start[g->dst[e]] < r->end[g->src[e]] - eps) {
            if (bad++ < 3) printf("  %s: edge %d->%d: start %.9g before the input's end %.9g\n", what, g->src[e], g->dst[e], r->start[g->dst[e]], r->end[g->src[e]]);
        }
    CHECK(!bad, "%s: %d edges violated", what, bad);
    int *ops = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int d = 0; d < c->n; d++) {
        int k = 0;
        double sum = 0;
        for (int v = 0; v < n; v++) if (assign[v] == d) { ops[k++] = v; sum += r->end[v] - r->start[v]; }
        g_cmp_start = r->start;
        qsort(ops, (size_t)k, sizeof(int), by_start);
        bad = 0;
        for (int i = 1; i < k; i++) if (r->start[ops[i]] < r->end[ops[i - 1]] - eps) bad++;
        CHECK(!bad, "%s: device %d runs ops at once", what, d);
        CHECK_NEAR(r->busy[d], sum, 1e-6, what);
    }
    free(ops);
    if (opaque) {
        bad = 0;
        for (int v = 0; v < n; v++) {
            double want = dp_op_time(g, c, v, assign[v]) * r->seconds_per_unit;
            if (r->end[v] - r->start[v] < want - 2e-6) {
                if (bad++ < 3) printf("  %s: op %d took %.9g s, modelled %.9g s\n", what, v, r->end[v] - r->start[v], want);
            }
        }
        CHECK(!bad, "%s: %d opaque ops shorter than modelled", what, bad);
    }
}

/* Static and graph dispatch: each device ran its ops in the simulator's
   order (start times, ties in topological order) and held every buffer
   to the end. */
static void check_static_order(const char *what, const dp_graph *g, const dp_cluster *c, const int *assign, const dp_exec_result *r, dp_order order)
{
    dp_sim s;
    dp_sim_opts so;
    dp_error err;
    int n = g->n_ops, bad = 0, *rank = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1));
    memset(&so, 0, sizeof so);
    memset(&err, 0, sizeof err);
    so.order = order;
    for (int i = 0; i < n; i++) rank[g->topo[i]] = i;
    if (dp_sim_init(&s, g, c, &err) || dp_sim_run(&s, assign, &so, &err)) { CHECK(0, "%s: simulator: %s", what, err.msg); free(rank); return; }
    for (int u = 0; u < n; u++)
        for (int v = 0; v < n; v++) {
            if (u == v || assign[u] != assign[v]) continue;
            int sim_first = s.start[u] < s.start[v] || (s.start[u] == s.start[v] && rank[u] < rank[v]);
            if (sim_first && r->start[u] > r->start[v] && bad++ < 3)
                printf("  %s: ops %d and %d on device %d ran in the other order\n", what, u, v, assign[u]);
        }
    CHECK(!bad, "%s: %d pairs of ops out of the simulator's order", what, bad);
    for (int d = 0; d < c->n; d++) {
        double held = 0;
        for (int v = 0; v < n; v++) if (assign[v] == d) held += (double)dp_exec_op_bytes(g, v, r->bytes_scale);
        for (int e = 0; e < g->n_edges; e++)
            if (assign[g->src[e]] != d && assign[g->dst[e]] == d) held += (double)dp_exec_edge_bytes(g, e, r->bytes_scale);
        CHECK_NEAR(r->peak_bytes[d], held, 0.5, what);
    }
    dp_sim_free(&s);
    free(rank);
}

static void check_gpu_workloads(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    for (int w = 0; w < 4; w++) {
        dp_graph g;
        if (dp_graph_read(&g, g_workloads[w], DP_FORMAT_AUTO, &err)) { CHECK(0, "%s: %s", g_workloads[w], err.msg); continue; }
        dp_exec_result ref;
        dp_exec_opts eo;
        dp_cluster c1;
        int *a = (int *)calloc((size_t)g.n_ops, sizeof(int));
        memset(&eo, 0, sizeof eo);
        eo.precision = DP_PREC_FP32;   /* the exact FP32 kernel (tensor cores: check_*_mma) */
        eo.keep_outputs = 1; eo.seed = 5;
        dp_cluster_homogeneous(&c1, 1, 1e9, 1e10, 0, &err);
        if (dp_exec_cpu(&g, &c1, a, &eo, &ref, &err)) { CHECK(0, "%s: cpu: %s", g_workloads[w], err.msg); free(a); dp_cluster_free(&c1); dp_graph_free(&g); continue; }
        uint64_t digest1 = 0;
        int have_digest = 0;
        for (int nd = 1; nd <= 4; nd *= 2) {
            dp_cluster c;
            dp_cluster_for_graph(&c, &g, nd, &err);
            static const dp_method ms[] = {DP_METHOD_SINGLE, DP_METHOD_ROUND_ROBIN, DP_METHOD_RANDOM};
            for (int mi = 0; mi < 3; mi++)
                for (int order = 0; order < 6; order++) {   /* fifo, priority; each dynamic, static, graph */
                    dp_place_opts po;
                    dp_place_result pr;
                    dp_exec_result r;
                    char what[256];
                    memset(&po, 0, sizeof po);
                    po.seed = 3 + (uint64_t)nd;
                    if (dp_place(ms[mi], &g, &c, &po, a, &pr, &err)) { CHECK(0, "place: %s", err.msg); continue; }
                    eo.order = order % 2 ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
                    eo.dispatch = (dp_dispatch_mode)(order / 2);
                    eo.reps = 2;
                    snprintf(what, sizeof what, "%s on %d logical devices, %s, %s, %s", g_workloads[w], nd, dp_method_name(ms[mi]),
                             order % 2 ? "priority" : "fifo", order < 2 ? "dynamic" : order < 4 ? "static" : "graph");
                    if (dp_exec_cuda(&g, &c, a, &eo, &r, &err)) { CHECK(0, "%s: %s", what, err.msg); continue; }
                    double e = -1;
                    int worst = -1;
                    CHECK(dp_exec_compare(&g, &r, &ref, &e, &worst, &err) == 0 && e <= DP_EXEC_TOL, "%s: outputs %.3g off the CPU's at '%s' (tolerance %g)", what, e, worst >= 0 ? g.name[worst] : "?", DP_EXEC_TOL);
                    if (!have_digest) { digest1 = r.digest; have_digest = 1; }
                    CHECK(r.digest == digest1, "%s: digest %llx, first placement's %llx", what, (unsigned long long)r.digest, (unsigned long long)digest1);
                    check_schedule(what, &g, &c, a, &r, 0);
                    if (order >= 2) check_static_order(what, &g, &c, a, &r, eo.order);
                    if (mi == 1 && order % 2 == 0) printf("  %s: wall %.3f ms, max error %.2g\n", what, r.wall_median * 1e3, e);
                    dp_exec_result_free(&r);
                }
            dp_cluster_free(&c);
        }
        /* the default precision (TF32 tensor cores on sm_80+), round-robin
           on 4 logical devices, against the CPU executor in the precision
           that ran, within dp_exec_tolerance (as exec verifies) */
        {
            dp_cluster c4;
            dp_place_opts po;
            dp_place_result pr;
            dp_exec_result r, rp;
            dp_exec_opts ep = eo;
            memset(&po, 0, sizeof po);
            ep.precision = DP_PREC_DEFAULT; ep.order = DP_ORDER_FIFO; ep.dispatch = DP_DISPATCH_DYNAMIC; ep.reps = 1;
            dp_cluster_for_graph(&c4, &g, 4, &err);
            if (dp_place(DP_METHOD_ROUND_ROBIN, &g, &c4, &po, a, &pr, &err) || dp_exec_cuda(&g, &c4, a, &ep, &r, &err)) CHECK(0, "%s, default precision: %s", g_workloads[w], err.msg);
            else {
                memset(a, 0, sizeof(int) * (size_t)g.n_ops);
                ep.precision = (dp_precision)r.precision;
                if (dp_exec_cpu(&g, &c1, a, &ep, &rp, &err)) CHECK(0, "%s: cpu in %s: %s", g_workloads[w], dp_precision_name(r.precision), err.msg);
                else {
                    double e = -1, tol = dp_exec_tolerance(r.precision);
                    int worst = -1;
                    CHECK(dp_exec_compare(&g, &r, &rp, &e, &worst, &err) == 0 && e <= tol, "%s, 4 logical devices, %s: outputs %.3g off the CPU's in %s at '%s' (tolerance %g)",
                          g_workloads[w], dp_precision_name(r.precision), e, dp_precision_name(r.precision), worst >= 0 ? g.name[worst] : "?", tol);
                    printf("  %s on 4 logical devices, default precision (%s): %.2g off the CPU executor in %s (tolerance %g)\n", g_workloads[w], dp_precision_name(r.precision), e, dp_precision_name(r.precision), tol);
                    dp_exec_result_free(&rp);
                }
                dp_exec_result_free(&r);
            }
            memset(a, 0, sizeof(int) * (size_t)g.n_ops);
            dp_cluster_free(&c4);
        }
        dp_exec_result_free(&ref);
        free(a);
        dp_cluster_free(&c1);
        dp_graph_free(&g);
    }
}

static void check_gpu_opaque(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    for (int i = 0; i < 2; i++) {
        dp_graph g;
        if (i == 0) {
            if (dp_graph_read(&g, "graphs/layered_50.dpg", DP_FORMAT_AUTO, &err)) { CHECK(0, "read: %s", err.msg); continue; }
        } else {
            /* ops with more inputs than one launch takes */
            dp_gen_opts go;
            memset(&go, 0, sizeof go);
            go.shape = DP_GEN_RANDOM; go.nodes = 60; go.density = 0.9; go.jump = 5; go.ccr = 1; go.seed = 4;
            if (dp_gen(&g, &go, &err)) { CHECK(0, "gen: %s", err.msg); continue; }
        }
        uint64_t digest1 = 0;
        for (int nd = 1; nd <= 4; nd *= 2) {
            dp_cluster c;
            dp_cluster_for_graph(&c, &g, nd, &err);
            int *a = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
            for (int link = 0; link < 2; link++) {
                dp_place_opts po;
                dp_place_result pr;
                dp_exec_opts eo;
                dp_exec_result r;
                char what[256];
                memset(&po, 0, sizeof po);
                c.link = link ? DP_LINK_SERIAL : DP_LINK_FREE;
                if (dp_place(DP_METHOD_CP, &g, &c, &po, a, &pr, &err)) { CHECK(0, "place: %s", err.msg); continue; }
                memset(&eo, 0, sizeof eo);
                eo.precision = DP_PREC_FP32;   /* the exact FP32 kernel (tensor cores: check_*_mma) */
                eo.seconds_per_unit = 0.02 / dp_lower_bound(&g, &c) / nd;
                eo.reps = 3;
                snprintf(what, sizeof what, "opaque %s on %d logical devices, %s links", i ? "random_60" : "layered_50", nd, link ? "serial" : "free");
                if (dp_exec_cuda(&g, &c, a, &eo, &r, &err)) { CHECK(0, "%s: %s", what, err.msg); continue; }
                check_schedule(what, &g, &c, a, &r, 1);
                if (nd == 1 && link == 0) digest1 = r.digest;
                CHECK(r.digest == digest1, "%s: digest differs from one device's", what);
                double pred = pr.makespan * r.seconds_per_unit;
                printf("  %s: wall %.4f s, simulator %.4f s (%+.0f%%)\n", what, r.wall_median, pred, 100 * (r.wall_median / pred - 1));
                dp_exec_result_free(&r);
            }
            free(a);
            dp_cluster_free(&c);
        }
        dp_graph_free(&g);
    }
}

static void check_gpu_arena_and_leaks(void)
{
    dp_error err;
    dp_graph g;
    dp_cluster c;
    dp_exec_opts eo;
    dp_exec_result r;
    dp_cuda_info before, after;
    memset(&err, 0, sizeof err);
    if (dp_graph_read(&g, "graphs/llama_block_256_p2.dpg", DP_FORMAT_AUTO, &err)) { CHECK(0, "read: %s", err.msg); return; }
    dp_cluster_homogeneous(&c, 2, 1e9, 1e10, 0, &err);
    int *a = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    for (int v = 0; v < g.n_ops; v++) a[v] = v % 2;
    memset(&eo, 0, sizeof eo);
    eo.precision = DP_PREC_FP32;   /* the exact FP32 kernel (tensor cores: check_*_mma) */
    /* the largest buffer does not fit: a clean DP_ERR_INFEASIBLE */
    eo.device_bytes = 4.0 * 64 * 128 - 1;
    memset(&r, 0x5a, sizeof r);
    int rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_INFEASIBLE && strstr(err.msg, "arena"), "arena of %g bytes: rc %d '%s'", eo.device_bytes, rc, err.msg);
    CHECK(r.wall_runs == NULL && r.start == NULL && r.outputs == NULL, "a failed run left result arrays");
    eo.device_bytes = 0;
    /* repeated runs give back every byte */
    if (dp_cuda_device_info(0, &before, &err)) { CHECK(0, "device info: %s", err.msg); goto out; }
    for (int i = 0; i < 10; i++) {
        eo.keep_outputs = i & 1;
        if ((rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err))) { CHECK(0, "run %d: %s", i, err.msg); break; }
        dp_exec_result_free(&r);
        eo.device_bytes = i == 5 ? 1000 : 0;   /* and failed runs too */
        if (i == 5) { rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err); CHECK(rc == DP_ERR_INFEASIBLE, "small arena: rc %d", rc); eo.device_bytes = 0; }
    }
    if (dp_cuda_device_info(0, &after, &err)) { CHECK(0, "device info: %s", err.msg); goto out; }
    CHECK(after.free_bytes >= before.free_bytes - 2.0 * (1 << 20), "device memory free: %.0f before, %.0f after 11 runs", before.free_bytes, after.free_bytes);
    /* more GPUs than present */
    {
        int n = 0;
        dp_cuda_device_count(&n, &err);
        eo.gpus = n + 1;
        rc = dp_exec_cuda(&g, &c, a, &eo, &r, &err);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "GPUs"), "gpus %d of %d: rc %d '%s'", n + 1, n, rc, err.msg);
    }
out:
    free(a);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* Logical devices sharing GPU 0: partitions of their own SMs (equal for
   equal speeds, larger for a faster device), outputs as the CPU's under
   every dispatch; and a copy between two of them paced to its link time. */
static void check_gpu_partitions(void)
{
    dp_error err;
    dp_graph g;
    int require = getenv("DP_REQUIRE_GPU") && atoi(getenv("DP_REQUIRE_GPU")) != 0;
    memset(&err, 0, sizeof err);
    if (dp_graph_read(&g, "graphs/chainmm_256_p2.dpg", DP_FORMAT_AUTO, &err)) { CHECK(0, "read: %s", err.msg); return; }
    int *a = (int *)calloc((size_t)g.n_ops, sizeof(int));
    dp_exec_result ref;
    dp_exec_opts eo;
    dp_cluster c;
    memset(&eo, 0, sizeof eo);
    eo.keep_outputs = 1; eo.seed = 5;
    dp_cluster_homogeneous(&c, 1, 1e9, 1e10, 0, &err);
    if (dp_exec_cpu(&g, &c, a, &eo, &ref, &err)) { CHECK(0, "cpu: %s", err.msg); free(a); dp_cluster_free(&c); dp_graph_free(&g); return; }
    dp_cluster_free(&c);
    for (int het = 0; het < 2; het++) {
        int nd = het ? 2 : 4;
        dp_cluster_for_graph(&c, &g, nd, &err);
        if (het) c.speed[0] *= 3;   /* 3:1: the first partition about three times the second */
        for (int v = 0; v < g.n_ops; v++) a[v] = v % nd;
        for (int disp = 0; disp < 3; disp++) {
            dp_exec_result r;
            char what[200];
            double e = -1;
            int worst = -1, sum = 0, cpu_sms = 0;
            dp_cuda_info info;
            eo.gpus = 1; eo.reps = 2; eo.dispatch = (dp_dispatch_mode)disp;
            snprintf(what, sizeof what, "%d logical devices on GPU 0%s, %s", nd, het ? " (speeds 3:1)" : "", disp == 0 ? "dynamic" : disp == 1 ? "static" : "graph");
            if (dp_exec_cuda(&g, &c, a, &eo, &r, &err)) { CHECK(0, "%s: %s", what, err.msg); continue; }
            CHECK(dp_exec_compare(&g, &r, &ref, &e, &worst, &err) == 0 && e <= DP_EXEC_TOL, "%s: outputs %.3g off the CPU's", what, e);
            check_schedule(what, &g, &c, a, &r, 0);
            CHECK(r.sms != NULL, "%s: no sms", what);
            if (!r.sms) { dp_exec_result_free(&r); continue; }
            if (!dp_cuda_device_info(0, &info, &err)) cpu_sms = info.multiprocessors;
            for (int d = 0; d < nd; d++) sum += r.sms[d];
            if (disp == 0) printf("  %s: sharing %s%s%s, SMs %d %d %d %d of %d\n", what, r.sharing == DP_SHARING_PARTITIONS ? "partitions" : r.sharing == DP_SHARING_SHARED ? "shared" : "none",
                                  r.sharing == DP_SHARING_SHARED ? ": " : "", r.sharing_note, r.sms[0], r.sms[1], nd > 2 ? r.sms[2] : -1, nd > 3 ? r.sms[3] : -1, cpu_sms);
            if (r.sharing == DP_SHARING_PARTITIONS) {
                CHECK(sum <= cpu_sms || cpu_sms == 0, "%s: partitions of %d SMs on a GPU of %d", what, sum, cpu_sms);
                if (het) CHECK(r.sms[0] > r.sms[1], "%s: the faster device has %d SMs, the slower %d", what, r.sms[0], r.sms[1]);
                else CHECK(r.sms[0] == r.sms[1] && r.sms[1] == r.sms[2] && r.sms[2] == r.sms[3], "%s: equal devices, SMs %d %d %d %d", what, r.sms[0], r.sms[1], r.sms[2], r.sms[3]);
            } else {
                CHECK(!require && r.sharing == DP_SHARING_SHARED && r.sharing_note[0], "%s: sharing %d (%s), partitions wanted on a GPU machine", what, r.sharing, r.sharing_note);
            }
            dp_exec_result_free(&r);
        }
        dp_cluster_free(&c);
    }
    dp_exec_result_free(&ref);
    free(a);
    dp_graph_free(&g);
    /* a paced link: input on device 0, relu on device 1, 5 ms of latency */
    {
        dp_op_desc d;
        dp_graph h;
        int a2[2] = {0, 1};
        dp_graph_init(&h);
        memset(&d, 0, sizeof d);
        d.kind = DP_OP_INPUT; d.rows = 64; d.cols = 64; d.compute = 1; d.out_bytes = 4.0 * 64 * 64;
        dp_graph_add_op(&h, &d, NULL, &err);
        d.kind = DP_OP_RELU;
        dp_graph_add_op(&h, &d, NULL, &err);
        dp_graph_add_edge(&h, 0, 1, 4.0 * 64 * 64, &err);
        if (dp_graph_finalize(&h, &err) || dp_graph_check_tensors(&h, &err)) { CHECK(0, "pacing graph: %s", err.msg); dp_graph_free(&h); return; }
        dp_cluster_homogeneous(&c, 2, 1e9, 1e12, 0, &err);
        c.latency[0 * 2 + 1] = 0.005;   /* seconds (seconds_per_unit 1) */
        for (int pace = 0; pace < 2; pace++)
            for (int disp = 0; disp < 3; disp++) {
                dp_exec_result r;
                memset(&eo, 0, sizeof eo);
                eo.gpus = 1; eo.reps = 3; eo.seconds_per_unit = 1; eo.dispatch = (dp_dispatch_mode)disp;
                eo.link_pacing = pace ? 0 : -1;
                if (dp_exec_cuda(&h, &c, a2, &eo, &r, &err)) { CHECK(0, "pacing %d dispatch %d: %s", pace, disp, err.msg); continue; }
                double gap = r.start[1] - r.end[0];
                printf("  a 16 KiB copy with 5 ms of link latency, pacing %s, %s: the consumer starts %.3f ms after the producer ends\n",
                       pace ? "on" : "off", disp == 0 ? "dynamic" : disp == 1 ? "static" : "graph", gap * 1e3);
                if (pace) CHECK(gap >= 0.005 - 20e-6 && gap < 0.05, "paced copy: gap %.6f s, modelled 0.005 s", gap);
                else CHECK(gap < 0.004, "unpaced copy: gap %.6f s", gap);
                dp_exec_result_free(&r);
            }
        dp_cluster_free(&c);
        dp_graph_free(&h);
    }
}

int main(void)
{
    dp_error err;
    int n = 0;
    double t0 = dp_now();
    memset(&err, 0, sizeof err);
    if (dp_cuda_device_count(&n, &err)) {
        snprintf(g_no_gpu_buf, sizeof g_no_gpu_buf, "%s", err.msg);
        g_no_gpu = g_no_gpu_buf;
    } else if (n == 0) {
        g_no_gpu = "the CUDA runtime reports 0 devices";
    }
    check_host_kernels();
    check_host_workloads();
    check_host_mma();
    check_host_mma2();
    check_arguments();
    check_partition_math();
    check_pace_math();
    check_stage_plan();
    check_calibrate_math();
    if (g_no_gpu && getenv("DP_REQUIRE_GPU") && atoi(getenv("DP_REQUIRE_GPU")) != 0) {
        /* on a GPU machine a missing GPU is a failure, not four skips */
        CHECK(0, "DP_REQUIRE_GPU is set but %s", g_no_gpu);
    } else if (g_no_gpu) {
        SKIP("no CUDA device: %s (skipped: every op kind on the GPU against the CPU kernels)", g_no_gpu);
        SKIP("no CUDA device: %s (skipped: the two row kernels agree bit for bit on long rows)", g_no_gpu);
        SKIP("no CUDA device: %s (skipped: workloads under every placement on 1, 2 and 4 logical devices)", g_no_gpu);
        SKIP("no CUDA device: %s (skipped: opaque graphs' measured schedules)", g_no_gpu);
        SKIP("no CUDA device: %s (skipped: arena overflow, device memory after repeated runs)", g_no_gpu);
        SKIP("no CUDA device: %s (skipped: the tensor-core matmul on the GPU, tf32 and bf16)", g_no_gpu);
        SKIP("no CUDA device: %s (skipped: partitions of logical devices on one GPU, paced links)", g_no_gpu);
        SKIP("no CUDA device: %s (skipped: a calibrated cluster predicts chainmm_256_p2 within 25%%)", g_no_gpu);
    } else {
        char name[256];
        if (!dp_cuda_device_name(0, name, sizeof name, &err)) printf("  %d GPU%s, GPU 0: %s\n", n, n == 1 ? "" : "s", name);
        check_gpu_kernels();
        check_gpu_rows_ab();
        check_gpu_workloads();
        check_gpu_opaque();
        check_gpu_partitions();
        check_gpu_arena_and_leaks();
        check_gpu_mma();
        check_gpu_calibrate();
    }
    printf("test_cuda took %.1f s\n", dp_now() - t0);
    return dp_test_done();
}
