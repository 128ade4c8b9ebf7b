/* test_kernels.c - the reference CPU kernels of the real op kinds on tiny
   tensors worked out by hand, the shape checks, the block-partitioned
   workloads (op counts by formula), and the executor running them: every
   placement gives the single-device outputs bit for bit. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

/* A graph of `nin` inputs of the given shapes feeding one op of `kind`. */
static int one_op(dp_graph *g, dp_kind kind, int nin, const int *shape, int rows, int cols, int arg)
{
    dp_error err;
    dp_op_desc d;
    int i, id;
    dp_graph_init(g);
    for (i = 0; i < nin; i++) {
        memset(&d, 0, sizeof d);
        d.kind = DP_OP_INPUT; d.rows = shape[2 * i]; d.cols = shape[2 * i + 1];
        if (dp_graph_add_op(g, &d, &id, &err)) { CHECK(0, "%s", err.msg); return -1; }
    }
    memset(&d, 0, sizeof d);
    d.kind = kind; d.rows = rows; d.cols = cols; d.arg = arg;
    if (dp_graph_add_op(g, &d, &id, &err)) { CHECK(0, "%s", err.msg); return -1; }
    for (i = 0; i < nin; i++) if (dp_graph_add_edge(g, i, nin, 0, &err)) { CHECK(0, "%s", err.msg); return -1; }
    if (dp_graph_finalize(g, &err)) { CHECK(0, "%s", err.msg); return -1; }
    int rc = dp_graph_check_tensors(g, &err);
    CHECK(rc == 0, "%s: shapes refused: %s", dp_kind_name(kind), err.msg);
    return rc;
}

static void expect(const char *what, const float *got, const float *want, int n, float tol)
{
    for (int i = 0; i < n; i++)
        CHECK(fabsf(got[i] - want[i]) <= tol + fabsf(want[i]) * 1e-6f, "%s[%d]: got %.7g, want %.7g", what, i, got[i], want[i]);
}

static void test_kernels(void)
{
    dp_graph g;
    float out[16];
    /* matmul (2x3)(3x2): [1 2 3; 4 5 6] [1 0; 0 1; 1 1] = [4 5; 10 11] */
    {
        int sh[] = {2, 3, 3, 2};
        float a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 0, 0, 1, 1, 1}, want[] = {4, 5, 10, 11};
        const float *in[] = {a, b};
        if (!one_op(&g, DP_OP_MATMUL, 2, sh, 2, 2, 0)) { dp__kernel(&g, 2, in, out, 0); expect("matmul", out, want, 4, 0); }
        dp_graph_free(&g);
    }
    /* matmul (1x2)(2x10), wide enough for the eight-column path and its
       remainder: [1 2] [j; 10 - j] = j + 20 - 2j = 20 - j */
    {
        int sh[] = {1, 2, 2, 10};
        float a[] = {1, 2}, b[20], want[10], wide[10];
        for (int j = 0; j < 10; j++) { b[j] = (float)j; b[10 + j] = (float)(10 - j); want[j] = (float)(20 - j); }
        const float *in[] = {a, b};
        if (!one_op(&g, DP_OP_MATMUL, 2, sh, 1, 10, 0)) { dp__kernel(&g, 2, in, wide, 0); expect("matmul 1x2x10", wide, want, 10, 0); }
        dp_graph_free(&g);
    }
    /* matmul 13x17 by 17x19 of awkward values: bit for bit the sum over k
       in order from 0, as documented (so every placement agrees) */
    {
        int sh[] = {13, 17, 17, 19};
        static float a[13 * 17], b[17 * 19], got[13 * 19], want[13 * 19];
        for (int i = 0; i < 13 * 17; i++) a[i] = (float)((i * 37 % 101) - 50) / 7.0f;
        for (int i = 0; i < 17 * 19; i++) b[i] = (float)((i * 53 % 97) - 48) / 3.0f;
        for (int i = 0; i < 13; i++)
            for (int j = 0; j < 19; j++) {
                float acc = 0;
                for (int k = 0; k < 17; k++) acc += a[i * 17 + k] * b[k * 19 + j];
                want[i * 19 + j] = acc;
            }
        const float *in[] = {a, b};
        if (!one_op(&g, DP_OP_MATMUL, 2, sh, 13, 19, 0)) {
            dp__kernel(&g, 2, in, got, 0);
            CHECK(memcmp(got, want, sizeof got) == 0, "matmul 13x17x19 differs from the in-order sum");
        }
        dp_graph_free(&g);
    }
    /* add of three: 1+2+3 = 6, -1+0.5+0.25 = -0.25 */
    {
        int sh[] = {1, 2, 1, 2, 1, 2};
        float a[] = {1, -1}, b[] = {2, 0.5f}, c[] = {3, 0.25f}, want[] = {6, -0.25f};
        const float *in[] = {a, b, c};
        if (!one_op(&g, DP_OP_ADD, 3, sh, 1, 2, 0)) { dp__kernel(&g, 3, in, out, 0); expect("add", out, want, 2, 0); }
        dp_graph_free(&g);
    }
    /* mul, relu, scale (1/sqrt(4) = 0.5), copy */
    {
        int sh[] = {1, 4, 1, 4};
        float a[] = {1, -2, 3, -4}, b[] = {2, 2, -1, 0.5f};
        float wmul[] = {2, -4, -3, -2}, wrelu[] = {1, 0, 3, 0}, wscale[] = {0.5f, -1, 1.5f, -2};
        const float *in[] = {a, b};
        if (!one_op(&g, DP_OP_MUL, 2, sh, 1, 4, 0)) { dp__kernel(&g, 2, in, out, 0); expect("mul", out, wmul, 4, 0); }
        dp_graph_free(&g);
        if (!one_op(&g, DP_OP_RELU, 1, sh, 1, 4, 0)) { dp__kernel(&g, 1, in, out, 0); expect("relu", out, wrelu, 4, 0); }
        dp_graph_free(&g);
        if (!one_op(&g, DP_OP_SCALE, 1, sh, 1, 4, 0)) { dp__kernel(&g, 1, in, out, 0); expect("scale", out, wscale, 4, 0); }
        dp_graph_free(&g);
        if (!one_op(&g, DP_OP_COPY, 1, sh, 1, 4, 0)) { dp__kernel(&g, 1, in, out, 0); expect("copy", out, a, 4, 0); }
        dp_graph_free(&g);
    }
    /* softmax of [0, ln 3] = [1/4, 3/4]; of [5, 5] = [1/2, 1/2] */
    {
        int sh[] = {2, 2};
        float a[] = {0, logf(3), 5, 5}, want[] = {0.25f, 0.75f, 0.5f, 0.5f};
        const float *in[] = {a};
        if (!one_op(&g, DP_OP_SOFTMAX, 1, sh, 2, 2, 0)) { dp__kernel(&g, 1, in, out, 0); expect("softmax", out, want, 4, 1e-6f); }
        dp_graph_free(&g);
    }
    /* rmsnorm of [3, 4]: rms = sqrt((9+16)/2) = 3.5355; [0.8485, 1.1314];
       layernorm of [1, 3]: mean 2, var 1: [-1, 1] */
    {
        int sh[] = {1, 2};
        float a[] = {3, 4}, b[] = {1, 3}, want_r[] = {3 / sqrtf(12.5f), 4 / sqrtf(12.5f)}, want_l[] = {-1, 1};
        const float *in[] = {a};
        if (!one_op(&g, DP_OP_RMSNORM, 1, sh, 1, 2, 0)) { dp__kernel(&g, 1, in, out, 0); expect("rmsnorm", out, want_r, 2, 1e-5f); }
        dp_graph_free(&g);
        in[0] = b;
        if (!one_op(&g, DP_OP_LAYERNORM, 1, sh, 1, 2, 0)) { dp__kernel(&g, 1, in, out, 0); expect("layernorm", out, want_l, 2, 1e-5f); }
        dp_graph_free(&g);
    }
    /* silu(0) = 0, silu(ln 3) = ln3 * 3/4; gelu(0) = 0, gelu large ~ x */
    {
        int sh[] = {1, 2};
        float a[] = {0, logf(3)}, want[] = {0, logf(3) * 0.75f};
        float b[] = {0, 10}, wantg[] = {0, 10};
        const float *in[] = {a};
        if (!one_op(&g, DP_OP_SILU, 1, sh, 1, 2, 0)) { dp__kernel(&g, 1, in, out, 0); expect("silu", out, want, 2, 1e-6f); }
        dp_graph_free(&g);
        in[0] = b;
        if (!one_op(&g, DP_OP_GELU, 1, sh, 1, 2, 0)) { dp__kernel(&g, 1, in, out, 0); expect("gelu", out, wantg, 2, 1e-5f); }
        dp_graph_free(&g);
    }
    /* concat [1 2] and [3] by columns = [1 2 3]; split block 1 of width 2 of
       [1 2 3 4 5 6] = [3 4]; transpose of [1 2 3; 4 5 6] = [1 4; 2 5; 3 6] */
    {
        int sh[] = {1, 2, 1, 1}, sh2[] = {1, 6}, sh3[] = {2, 3};
        float a[] = {1, 2}, b[] = {3}, want[] = {1, 2, 3};
        float c[] = {1, 2, 3, 4, 5, 6}, want_s[] = {3, 4}, want_t[] = {1, 4, 2, 5, 3, 6};
        const float *in[] = {a, b};
        if (!one_op(&g, DP_OP_CONCAT, 2, sh, 1, 3, 0)) { dp__kernel(&g, 2, in, out, 0); expect("concat", out, want, 3, 0); }
        dp_graph_free(&g);
        in[0] = c;
        if (!one_op(&g, DP_OP_SPLIT, 1, sh2, 1, 2, 1)) { dp__kernel(&g, 1, in, out, 0); expect("split", out, want_s, 2, 0); }
        dp_graph_free(&g);
        if (!one_op(&g, DP_OP_TRANSPOSE, 1, sh3, 3, 2, 0)) { dp__kernel(&g, 1, in, out, 0); expect("transpose", out, want_t, 6, 0); }
        dp_graph_free(&g);
    }
    /* inputs: deterministic, in [-1, 1), differ by op and index */
    {
        float x = dp__input_value(7, 3, 0), y = dp__input_value(7, 3, 0), z = dp__input_value(7, 4, 0);
        CHECK(x == y && x != z && x >= -1 && x < 1, "input values %g %g %g", x, y, z);
    }
}

static void test_shape_errors(void)
{
    dp_graph g;
    dp_error err;
    dp_op_desc d;
    /* matmul with mismatched inner dimensions (2x3)(2x2) */
    int sh[] = {2, 3, 2, 2};
    dp_graph_init(&g);
    for (int i = 0; i < 2; i++) {
        memset(&d, 0, sizeof d);
        d.kind = DP_OP_INPUT; d.rows = sh[2 * i]; d.cols = sh[2 * i + 1];
        dp_graph_add_op(&g, &d, NULL, &err);
    }
    memset(&d, 0, sizeof d);
    d.kind = DP_OP_MATMUL; d.rows = 2; d.cols = 2; d.name = "mm";
    dp_graph_add_op(&g, &d, NULL, &err);
    dp_graph_add_edge(&g, 0, 2, 0, &err);
    dp_graph_add_edge(&g, 1, 2, 0, &err);
    dp_graph_finalize(&g, &err);
    CHECK(dp_graph_check_tensors(&g, &err) == DP_ERR_GRAPH && strstr(err.msg, "mm"), "bad matmul accepted: %s", err.msg);
    dp_graph_free(&g);
    /* a real op without a shape; a negative shape */
    dp_graph_init(&g);
    memset(&d, 0, sizeof d);
    d.kind = DP_OP_RELU; d.name = "r";
    dp_graph_add_op(&g, &d, NULL, &err);
    dp_graph_finalize(&g, &err);
    CHECK(dp_graph_check_tensors(&g, &err) == DP_ERR_GRAPH && strstr(err.msg, "no shape"), "shapeless relu accepted: %s", err.msg);
    dp_graph_free(&g);
    dp_graph_init(&g);
    memset(&d, 0, sizeof d);
    d.kind = DP_OP_INPUT; d.rows = -1; d.cols = 2;
    CHECK(dp_graph_add_op(&g, &d, NULL, &err) == DP_ERR_RANGE, "negative shape accepted");
    dp_graph_free(&g);
}

/* dp_op_flops by hand: a 2 x 3 output (6 elements), inner dimension 4 */
static void test_flops(void)
{
    CHECK(dp_op_flops(DP_OP_MATMUL, 2, 3, 4, 2) == 48, "matmul 2x4x3: %g", dp_op_flops(DP_OP_MATMUL, 2, 3, 4, 2));
    CHECK(dp_op_flops(DP_OP_ADD, 2, 3, 0, 3) == 12, "add of 3: %g", dp_op_flops(DP_OP_ADD, 2, 3, 0, 3));
    CHECK(dp_op_flops(DP_OP_REDUCE, 2, 3, 0, 4) == 18, "reduce of 4: %g", dp_op_flops(DP_OP_REDUCE, 2, 3, 0, 4));
    CHECK(dp_op_flops(DP_OP_ADD, 2, 3, 0, 1) == 0, "add of 1: %g", dp_op_flops(DP_OP_ADD, 2, 3, 0, 1));
    CHECK(dp_op_flops(DP_OP_SILU, 2, 3, 0, 1) == 24 && dp_op_flops(DP_OP_RMSNORM, 2, 3, 0, 1) == 24, "silu/rmsnorm");
    CHECK(dp_op_flops(DP_OP_SOFTMAX, 2, 3, 0, 1) == 30 && dp_op_flops(DP_OP_LAYERNORM, 2, 3, 0, 1) == 30, "softmax/layernorm");
    CHECK(dp_op_flops(DP_OP_GELU, 2, 3, 0, 1) == 48, "gelu: %g", dp_op_flops(DP_OP_GELU, 2, 3, 0, 1));
    static const dp_kind one[] = {DP_OP_INPUT, DP_OP_MUL, DP_OP_SCALE, DP_OP_RELU, DP_OP_CONCAT, DP_OP_SPLIT, DP_OP_TRANSPOSE, DP_OP_COPY};
    for (int i = 0; i < 8; i++) CHECK(dp_op_flops(one[i], 2, 3, 0, 1) == 6, "%s: %g", dp_kind_name(one[i]), dp_op_flops(one[i], 2, 3, 0, 1));
    CHECK(dp_op_flops(DP_OP_OPAQUE, 2, 3, 4, 2) == 0, "opaque: %g", dp_op_flops(DP_OP_OPAQUE, 2, 3, 4, 2));
}

static void test_workloads(void)
{
    static const char *kname[4] = { "chainmm", "ffnn", "llama-block", "llama-layer" };
    for (int kind = 0; kind < 4; kind++)
        for (int P = 1; P <= 3; P++) {
            dp_graph g;
            dp_error err;
            dp_workload_opts o;
            memset(&o, 0, sizeof o);
            o.kind = (dp_workload)kind; o.parts = P; o.dim = 12; o.batch = 5; o.layers = 2;
            if (dp_gen_workload(&g, &o, &err)) { CHECK(0, "gen: %s", err.msg); continue; }
            /* chainmm: P^2 inputs for M0, then per layer P^2 inputs, P^3
               matmuls and (P > 1) P^2 reduces. ffnn: P inputs for X, then per
               layer P^2 weight inputs, P^2 matmuls, (P > 1) P reduces, P relus. */
            /* llama: P input blocks, then per block 7 P^2 weight inputs, two
               rmsnorms of P + 2 ops (concat, norm, P splits), seven block
               products of P^2 matmuls (+ P reduces when P > 1), 5 ops per
               head (transpose, scores, scale, softmax, weighted sum),
               2 P residual adds, P silu and P products: per block
               14 P^2 + 11 P + 4 (+ 7 P); llama-block is one block,
               llama-layer here two. */
            int r = P > 1 ? P : 0, per_block = 14 * P * P + 11 * P + 4 + 7 * r;
            int want = kind == 0 ? P * P + 2 * (P * P + P * P * P + (P > 1 ? P * P : 0))
                     : kind == 1 ? P + 2 * (P * P + P * P + (P > 1 ? P : 0) + P)
                     : P + (kind == 2 ? 1 : 2) * per_block;
            CHECK(g.n_ops == want, "%s P=%d: %d ops, want %d", kname[kind], P, g.n_ops, want);
            /* every op's compute is the documented FLOP count of its shape
               (the rule dp_calibrate_cpu measures speeds by), by hand */
            {
                int bad = 0;
                for (int v = 0; v < g.n_ops; v++) {
                    int nin = g.in_off[v + 1] - g.in_off[v], K = nin ? g.cols[g.src[g.in_edge[g.in_off[v]]]] : 0;
                    double rc = (double)g.rows[v] * g.cols[v], want_f;
                    switch (g.kind[v]) {
                    case DP_OP_MATMUL: want_f = 2.0 * K * rc; break;
                    case DP_OP_ADD: case DP_OP_REDUCE: want_f = (nin - 1) * rc; break;
                    case DP_OP_SILU: case DP_OP_RMSNORM: want_f = 4 * rc; break;
                    case DP_OP_SOFTMAX: want_f = 5 * rc; break;
                    default: want_f = rc;
                    }
                    if (g.compute[v] != want_f || dp_op_flops(g.kind[v], g.rows[v], g.cols[v], K, nin) != want_f) {
                        if (!bad) CHECK(0, "%s P=%d: op %s (%s) compute %g, dp_op_flops %g, want %g", kname[kind], P, g.name[v],
                                        dp_kind_name(g.kind[v]), g.compute[v], dp_op_flops(g.kind[v], g.rows[v], g.cols[v], K, nin), want_f);
                        bad++;
                    }
                }
            }
            /* the round trip keeps shapes and args */
            char path[256];
            dp_graph g2;
            dp_test_tmp(path, sizeof path, "workload.dpg");
            if (!dp_graph_write(&g, path, DP_FORMAT_NATIVE, &err) && !dp_graph_read(&g2, path, DP_FORMAT_AUTO, &err)) {
                int same = g2.n_ops == g.n_ops;
                for (int v = 0; same && v < g.n_ops; v++)
                    same = g.rows[v] == g2.rows[v] && g.cols[v] == g2.cols[v] && g.arg[v] == g2.arg[v] && g.kind[v] == g2.kind[v];
                CHECK(same, "round trip lost shapes");
                dp_graph_free(&g2);
            } else CHECK(0, "round trip: %s", err.msg);
            /* executed under several placements: the single-device outputs */
            for (int nd = 2; nd <= 4; nd += 2) {
                dp_cluster c;
                dp_exec_opts eo;
                dp_exec_result r1, r;
                int *a = (int *)malloc(sizeof(int) * g.n_ops), *one = (int *)calloc((size_t)g.n_ops, sizeof(int));
                dp_cluster_for_graph(&c, &g, nd, &err);
                memset(&eo, 0, sizeof eo);
                eo.seed = 11;
                if (dp_exec_cpu(&g, &c, one, &eo, &r1, &err)) { CHECK(0, "exec: %s", err.msg); break; }
                for (int m = 0; m < 3; m++) {
                    dp_place_opts po;
                    dp_place_result pr;
                    memset(&po, 0, sizeof po);
                    po.seed = 5;
                    dp_place(m == 0 ? DP_METHOD_ROUND_ROBIN : m == 1 ? DP_METHOD_RANDOM : DP_METHOD_CP, &g, &c, &po, a, &pr, &err);
                    eo.order = m == 2 ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
                    if (dp_exec_cpu(&g, &c, a, &eo, &r, &err)) { CHECK(0, "exec: %s", err.msg); continue; }
                    CHECK(r.digest == r1.digest, "%s P=%d %d devices placement %d: outputs differ from one device", kname[kind], P, nd, m);
                    for (int e = 0; e < g.n_edges; e++)
                        CHECK(r.start[g.dst[e]] >= r.end[g.src[e]] - 1e-9, "op started before its input was done");
                    dp_exec_result_free(&r);
                }
                /* another input seed: other outputs */
                eo.seed = 12; eo.order = DP_ORDER_FIFO;
                if (!dp_exec_cpu(&g, &c, one, &eo, &r, &err)) { CHECK(r.digest != r1.digest, "the input seed changed nothing"); dp_exec_result_free(&r); }
                dp_exec_result_free(&r1);
                free(a); free(one);
                dp_cluster_free(&c);
            }
            dp_graph_free(&g);
        }
    dp_graph g;
    dp_error err;
    dp_workload_opts o;
    memset(&o, 0, sizeof o);
    o.kind = (dp_workload)7;
    CHECK(dp_gen_workload(&g, &o, &err) == DP_ERR_ARG && strstr(err.msg, "unknown"), "workload kind 7: %s", err.msg);
    o.kind = DP_WL_CHAINMM; o.parts = 3; o.dim = 10;
    CHECK(dp_gen_workload(&g, &o, &err) == DP_ERR_RANGE && strstr(err.msg, "multiple"), "dim 10 parts 3 accepted");
}

/* The matmul in TF32 and BF16 (dp_exec_opts.precision): every element of
   A and B rounded as the tensor cores round it, then the FP32 loop. By
   hand, with e = 2^-11: a = [1 + e, 1 + e/2] (1 + 2^-11 is a TF32 tie,
   rounded away from zero to 1 + 2^-10, where ties to even would give 1;
   1 + 2^-12 is below half a TF32 ulp: 1; both are below half a BF16 ulp:
   1) times nine columns of B (the eight-column path and the remainder).
   BF16 ties to even: 1 + 2^-8 -> 1, 1 + 3 2^-8 -> 1 + 2^-6, 257 -> 256.
   Every product and sum below is exact in FP32. FP32 and DEFAULT: bit for
   bit a plain triple loop. */
static void test_precision(void)
{
    const double e = ldexp(1, -11), h = ldexp(1, -12), t = ldexp(1, -10), q = ldexp(1, -8);
    /* B's two rows: b0[j], b1[j] */
    const double b0[9] = {1, 0, 1, 1 + e, -(1 + e), 1 + q, 1 + 3 * q, 0, 1 + e};
    const double b1[9] = {0, 1, 1, 0, 0, 0, 0, 257, 1 + h};
    /* a's roundings: TF32 [1 + 2^-10, 1], BF16 [1, 1] */
    const double tf32[9] = {
        1 + t,                                   /* the tie, away from zero */
        1,                                       /* 1 + 2^-12: down */
        2 + t,
        (1 + t) * (1 + t),                       /* both rounded: 1 + 2^-9 + 2^-20 */
        -(1 + t) * (1 + t),                      /* away from zero when negative too */
        (1 + t) * (1 + q),                       /* 1 + 2^-8 is a TF32 value */
        (1 + t) * (1 + 3 * q),
        257,                                     /* 257 is a TF32 value; 1 x 257 */
        (1 + t) * (1 + t) + 1,                   /* 2 + 2^-9 + 2^-20 */
    };
    const double bf16[9] = {1, 1, 2, 1, -1, 1 /* tie, even: 1 */, 1 + ldexp(1, -6) /* tie, even: up */, 256 /* tie, even */, 2};
    float a[2], b[18], got[9], ref[9];
    const float *in[2] = {a, b};
    int sh[] = {1, 2, 2, 9};
    dp_graph g;
    a[0] = (float)(1 + e); a[1] = (float)(1 + h);
    for (int j = 0; j < 9; j++) { b[j] = (float)b0[j]; b[9 + j] = (float)b1[j]; }
    if (!one_op(&g, DP_OP_MATMUL, 2, sh, 1, 9, 0)) {
        dp__kernel_at(&g, 2, in, got, 0, DP_PREC_TF32);
        for (int j = 0; j < 9; j++) CHECK(got[j] == (float)tf32[j], "tf32 matmul column %d: %.10g, by hand %.10g", j, got[j], tf32[j]);
        dp__kernel_at(&g, 2, in, got, 0, DP_PREC_BF16);
        for (int j = 0; j < 9; j++) CHECK(got[j] == (float)bf16[j], "bf16 matmul column %d: %.10g, by hand %.10g", j, got[j], bf16[j]);
        /* FP32: the inputs as they are (1 + 2^-11 stays): the plain loop */
        for (int j = 0; j < 9; j++) { float s0 = 0; for (int k = 0; k < 2; k++) s0 += a[k] * b[9 * k + j]; ref[j] = s0; }
        for (int p = DP_PREC_DEFAULT; p <= DP_PREC_FP32; p++) {
            dp__kernel_at(&g, 2, in, got, 0, p);
            CHECK(memcmp(got, ref, sizeof got) == 0, "%s matmul differs from the plain loop", dp_precision_name(p));
        }
        CHECK(ref[0] == (float)(1 + e) && ref[8] == (float)(2 + t + e + ldexp(1, -22)), "fp32 keeps 1 + 2^-11: %.10g, %.10g", ref[0], ref[8]);
    }
    dp_graph_free(&g);
    /* the roundings themselves, the NaN and inf cases */
    CHECK(dp__round_tf32((float)(1 + 3 * e)) == (float)(1 + 2 * t), "tf32 tie between 1 + 2^-10 and 1 + 2^-9: away");
    CHECK(dp__round_tf32((float)(1 + e + ldexp(1, -23))) == (float)(1 + t), "tf32 above half: up");
    CHECK(dp__round_bf16((float)(1 + q + ldexp(1, -20))) == (float)(1 + ldexp(1, -7)), "bf16 above half: up");
    CHECK(isnan(dp__round_tf32(NAN)) && isnan(dp__round_bf16(NAN)), "NaN rounds to NaN");
    CHECK(dp__round_tf32(INFINITY) == INFINITY && dp__round_bf16(-INFINITY) == -INFINITY, "inf rounds to inf");
    /* through the CPU executor: precision reported, outputs the kernel's
       on the inputs the executor fills */
    {
        int shm[] = {7, 33, 33, 11};
        if (!one_op(&g, DP_OP_MATMUL, 2, shm, 7, 11, 0)) {
            dp_cluster c;
            dp_error err;
            int as[3] = {0, 0, 0};
            static float A[7 * 33], B[33 * 11], want[7 * 11];
            const float *inm[2] = {A, B};
            for (int i = 0; i < 7 * 33; i++) A[i] = dp_input_value(5, 0, (size_t)i);
            for (int i = 0; i < 33 * 11; i++) B[i] = dp_input_value(5, 1, (size_t)i);
            dp_cluster_homogeneous(&c, 1, 1e9, 1e10, 0, &err);
            for (int p = DP_PREC_DEFAULT; p <= DP_PREC_BF16; p++) {
                dp_exec_opts o;
                dp_exec_result r;
                memset(&o, 0, sizeof o);
                o.precision = (dp_precision)p; o.keep_outputs = 1; o.seed = 5;
                dp__kernel_at(&g, 2, inm, want, 5, p);
                if (dp_exec_cpu(&g, &c, as, &o, &r, &err)) { CHECK(0, "exec %s: %s", dp_precision_name(p), err.msg); continue; }
                CHECK(r.precision == (p == DP_PREC_DEFAULT ? DP_PREC_FP32 : p), "exec %s: precision %s reported", dp_precision_name(p), dp_precision_name(r.precision));
                CHECK(r.outputs[2] && memcmp(r.outputs[2], want, sizeof want) == 0, "exec %s: outputs differ from the kernel's", dp_precision_name(p));
                dp_exec_result_free(&r);
            }
            dp_cluster_free(&c);
        }
        dp_graph_free(&g);
    }
}

int main(void)
{
    test_kernels();
    test_precision();
    test_shape_errors();
    test_flops();
    test_workloads();
    return dp_test_done();
}
