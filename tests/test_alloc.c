/* test_alloc.c - allocation-failure injection. The library's allocator
   hooks (DP_MALLOC, DP_REALLOC, DP_CALLOC, DP_FREE) are defined here as an
   allocator that counts live blocks and fails the N-th allocation. For
   every operation below the sweep runs it with N = 1, 2, ... until a run
   makes fewer than N allocations (the injection never fires) and succeeds.
   Every run with a failed allocation must return DP_ERR_NOMEM with a
   message, leave no block allocated, leave a failed reader's graph or
   cluster empty and write no output file (neither PATH nor PATH.tmp; an
   existing PATH untouched). A run whose injected failure did not make the
   operation fail counts as a failure too (an error swallowed). The
   executor's worker threads allocate as well: the allocator takes a lock.
   Also: each of the executor's pthread_create calls failing in turn. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t t_mu = PTHREAD_MUTEX_INITIALIZER;
static int    t_armed;         /* count (and fail) allocations only when set */
static long   t_count;         /* allocations counted since the run began    */
static long   t_fail_at;       /* fail the allocation with this count; 0: none */
static long   t_fired;         /* injected failures in this run              */
static long   t_live;          /* blocks allocated and not yet freed         */

static int t_inject(void)
{
    int fail = 0;
    pthread_mutex_lock(&t_mu);
    if (t_armed && ++t_count == t_fail_at) { t_fired++; fail = 1; }
    pthread_mutex_unlock(&t_mu);
    return fail;
}

static void t_born(void *p)
{
    if (!p) return;
    pthread_mutex_lock(&t_mu);
    t_live++;
    pthread_mutex_unlock(&t_mu);
}

static void *t_malloc(size_t n)
{
    void *p;
    if (t_inject()) return NULL;
    p = malloc(n ? n : 1);
    t_born(p);
    return p;
}

static void *t_calloc(size_t n, size_t size)
{
    void *p;
    if (t_inject()) return NULL;
    p = calloc(n ? n : 1, size ? size : 1);
    t_born(p);
    return p;
}

static void *t_realloc(void *p, size_t n)
{
    void *q;
    if (t_inject()) return NULL;
    q = realloc(p, n ? n : 1);
    if (!p) t_born(q);
    return q;
}

static void t_free(void *p)
{
    if (!p) return;
    pthread_mutex_lock(&t_mu);
    t_live--;
    pthread_mutex_unlock(&t_mu);
    free(p);
}

/* pthread_create: the executor's calls go through t_thread_create, which
   fails the t_thread_fail_at-th call when set. */
static int t_thread_calls, t_thread_fail_at;
static int t_thread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

#define DP_MALLOC(sz)     t_malloc(sz)
#define DP_REALLOC(p, sz) t_realloc(p, sz)
#define DP_CALLOC(n, sz)  t_calloc(n, sz)
#define DP_FREE(p)        t_free(p)
#define pthread_create    t_thread_create
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#undef pthread_create
#include "dp_test.h"

static int t_thread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (++t_thread_calls == t_thread_fail_at) return 11;   /* EAGAIN */
    return pthread_create(th, attr, fn, arg);
}

/* ---- the sweep ---------------------------------------------------------- */
typedef int (*op_fn)(void *ctx, dp_error *err);

typedef struct { const char *name; long points; } row_t;
static row_t rows[64];
static int n_rows;

/* Scratch files of an operation that writes one: after a failed run
   neither `path` nor `path`.tmp may exist, unless `keep` names the
   content an existing `path` must still have. */
static const char *out_path, *out_keep;

static int out_clean(char *why, size_t n)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
    if (dp_test_exists(tmp)) { snprintf(why, n, "%s left behind", tmp); return 0; }
    if (!out_keep) {
        if (dp_test_exists(out_path)) { snprintf(why, n, "partial %s written", out_path); return 0; }
        return 1;
    }
    {
        size_t len;
        char *b = dp_test_read_file(out_path, &len);
        int same = b && len == strlen(out_keep) && memcmp(b, out_keep, len) == 0;
        free(b);
        if (!same) snprintf(why, n, "existing %s changed", out_path);
        return same;
    }
}

/* Past its first 64 injection points a sweep tries every sweep_stride-th
   (1: all). The calibration sweep under AddressSanitizer takes a stride:
   its 5,900 points rerun thread start-ups and kernels about 17 million
   allocations deep, over 4 minutes there; the plain build tries them all. */
static long sweep_stride = 1;
#if defined(__SANITIZE_ADDRESS__)
#define DP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DP_TEST_ASAN 1
#endif
#endif

static void sweep(const char *name, op_fn fn, void *ctx)
{
    long N, bad_code = 0, bad_leak = 0, bad_silent = 0, bad_file = 0, limit = 200000;
    int ok_final = 0, printed = 0;
    dp_error err;
    char why[1200];
    double t0 = dp_now();
    for (N = 1; N < limit; N += N < 64 ? 1 : sweep_stride) {
        long live0 = t_live, fired, count;
        int rc;
        memset(&err, 0, sizeof err);
        pthread_mutex_lock(&t_mu);
        t_count = 0; t_fail_at = N; t_fired = 0; t_armed = 1;
        pthread_mutex_unlock(&t_mu);
        rc = fn(ctx, &err);
        pthread_mutex_lock(&t_mu);
        t_armed = 0; fired = t_fired; count = t_count;
        pthread_mutex_unlock(&t_mu);
        if (t_live != live0) {
            if (printed++ < 4) printf("  %s: allocation %ld failed: %ld blocks leaked (rc %d '%s')\n", name, N, t_live - live0, rc, err.msg);
            bad_leak++;
        }
        if (out_path && (fired || rc) && !out_clean(why, sizeof why)) {
            if (printed++ < 4) printf("  %s: allocation %ld failed: %s\n", name, N, why);
            bad_file++;
        }
        if (!fired) {   /* the run made fewer than N allocations */
            ok_final = rc == 0;
            if (!ok_final) printf("  %s: failed with no allocation failing: rc %d '%s'\n", name, rc, err.msg);
            (void)count;
            break;
        }
        if (rc == 0) {
            if (printed++ < 4) printf("  %s: allocation %ld failed but the operation succeeded\n", name, N);
            bad_silent++;
        } else if (rc != DP_ERR_NOMEM || err.code != DP_ERR_NOMEM || !err.msg[0]) {
            if (printed++ < 4) printf("  %s: allocation %ld failed: rc %d, err.code %d, message '%s' (expected out of memory with a message)\n",
                                      name, N, rc, (int)err.code, err.msg);
            bad_code++;
        }
    }
    CHECK(ok_final, "%s: succeeds once no allocation fails", name);
    CHECK(N < limit, "%s: more than %ld allocations", name, limit);
    CHECK(bad_code == 0, "%s: %ld of %ld failed allocations did not give DP_ERR_NOMEM with a message", name, bad_code, N - 1);
    CHECK(bad_leak == 0, "%s: %ld of %ld failed allocations leaked", name, bad_leak, N - 1);
    CHECK(bad_silent == 0, "%s: %ld of %ld failed allocations were swallowed", name, bad_silent, N - 1);
    if (out_path) CHECK(bad_file == 0, "%s: %ld of %ld failed allocations left a partial output file", name, bad_file, N - 1);
    CHECK(N - 1 > 0, "%s: made no allocation at all (the hooks are not used?)", name);
    if (n_rows < (int)(sizeof rows / sizeof rows[0])) { rows[n_rows].name = name; rows[n_rows].points = N - 1; n_rows++; }
    printf("  %-44s %5ld injection points%s, %.2f s\n", name, N - 1,
           sweep_stride > 1 ? " (every one of the first 64, then a sample)" : "", dp_now() - t0);
    fflush(stdout);
    out_path = out_keep = NULL;
}

/* ---- inputs --------------------------------------------------------------- */
static const char NATIVE[] =
    "doppler-graph 1\n"
    "units speed=2 bandwidth=3\n"
    "external_inputs 1\n"
    "devtimes 2\n"
    "op in kind=input compute=1 bytes=64 shape=4x4 time=1,2\n"
    "op w kind=input compute=1 bytes=64 shape=4x4 time=1,-1\n"
    "op mm kind=matmul compute=128 bytes=64 shape=4x4 time=3,4\n"
    "op r kind=relu compute=16 bytes=64 mem=8 shape=4x4 time=1,1\n"
    "op s kind=split compute=1 bytes=32 shape=4x2 arg=1 time=1,1\n"
    "op a5 compute=5 time=1,1\n"
    "op a6 compute=6 time=2,2\n"
    "edge in mm\nedge w mm bytes=60\nedge mm r\nedge r s\nedge s a5\nedge a5 a6 bytes=7\nedge r a6\n";
static const char DOPPLER[] = "8\n0, 1,\n0, 0, 1, 2, 3, 4,\n1, 2, 3, 4, 5, 5,\n"
                              "10,5\n20,6\n30,7,matmul\n40,8\n50,9\n60,10\n";
static const char STG[] = "5\n0 0 0\n1 3 1 0\n2 4 1 0\n3 5 2 1 2\n4 2 1 3\n5 7 2 2 4\n6 0 1 5\n";
static const char CLUSTER[] = "doppler-cluster 1\ndevices 3\nlink serial\nspeed 2\nbandwidth 5\nlatency 0.1\n"
                              "memory 1e9\ndevice 0 name=gpu0 speed=3\ndevice 2 memory=2e9\n"
                              "pair 0 1 bandwidth=7 latency=0.2\nkindspeed all matmul 9\nkindspeed 1 relu 4\n";
static const char ASSIGN[] = "# a comment\n0\n1\n1\n0\n1\n0\n0\n";

/* weights, source names, a counts line: read as text, and as the binary
   file convert writes of it (p_binary) */
static const char NATIVE_W[] =
    "doppler-graph 1\n"
    "counts ops=4 edges=3 weights=2\n"
    "weight w0 bytes=4096\nweight w1 bytes=12\n"
    "op a compute=3 bytes=8 weights=w0,w1 source=onnx/Conv%201,x\n"
    "op b compute=2 bytes=8 resident=5 weights=w1\n"
    "op c compute=1 bytes=4 source=c\n"
    "op d compute=4\n"
    "edge a b\nedge b c bytes=2\nedge a d\nend\n";

static char p_native[512], p_native_w[512], p_binary[512], p_doppler[512], p_stg[512], p_cluster[512], p_assign[512];
static char p_pol_doppler[512], p_pol_placeto[512], p_save[512], p_gantt[512];

/* ---- operations --------------------------------------------------------- */
static int graph_empty(const dp_graph *g)
{
    return g->n_ops == 0 && g->n_edges == 0 && !g->name && !g->src && !g->topo && !g->dp__names && !g->dp__edges && !g->dp__pool;
}

typedef struct { const char *path; dp_format fmt; } read_ctx;

static int op_read_graph(void *ctx, dp_error *err)
{
    read_ctx *r = (read_ctx *)ctx;
    dp_graph g;
    int rc = dp_graph_read(&g, r->path, r->fmt, err);
    if (rc) CHECK(graph_empty(&g), "%s: a failed read left a non-empty graph", r->path);
    dp_graph_free(&g);
    return rc;
}

static int op_read_cluster(void *ctx, dp_error *err)
{
    dp_cluster c;
    int rc = dp_cluster_read(&c, (const char *)ctx, err);
    if (rc) CHECK(c.n == 0 && !c.speed && !c.bandwidth, "a failed cluster read left a non-empty cluster");
    dp_cluster_free(&c);
    return rc;
}

static int op_read_assign(void *ctx, dp_error *err)
{
    int a[7] = {9, 9, 9, 9, 9, 9, 9}, i, untouched = 1;
    int rc = dp_assign_read((const char *)ctx, 7, 2, a, err);
    for (i = 0; i < 7; i++) untouched &= a[i] == 9;
    if (rc) CHECK(untouched, "a failed assignment read wrote the assignment");
    return rc;
}

static int op_load_policy(void *ctx, dp_error *err)
{
    dp_policy p;
    int rc = dp_policy_load(&p, (const char *)ctx, err);
    if (rc) CHECK(!p.sel && !p.plc, "a failed policy load left parameters allocated");
    dp_policy_free(&p);
    return rc;
}

/* the graphs and cluster the placing, training and executing sweeps share */
static dp_graph G, W;       /* a generated opaque DAG; a real-op workload */
static dp_cluster C3, C2;   /* 3 devices with memory limits; 2 plain ones */
static dp_policy PD, PP;    /* doppler, placeto (3 devices) */

typedef struct { dp_method m; dp_order order; } place_ctx;

static int op_place(void *ctx, dp_error *err)
{
    place_ctx *pc = (place_ctx *)ctx;
    int a[64];
    dp_place_opts o;
    dp_place_result r;
    memset(&o, 0, sizeof o);
    o.seed = 3; o.order = pc->order; o.budget = 40;
    return dp_place(pc->m, &G, &C3, &o, a, &r, err);
}

/* the policy's greedy placement and samples, on threads threads */
static int policy_place(const dp_policy *p, int samples, int threads, dp_error *err)
{
    int a[64], order[64];
    double ms;
    dp_infer_opts o;
    memset(&o, 0, sizeof o);
    o.samples = samples; o.seed = 5; o.threads = threads;
    return dp_policy_place(p, &G, &C3, &o, a, order, &ms, err);
}

static int op_policy_place(void *ctx, dp_error *err) { return policy_place((const dp_policy *)ctx, 2, 0, err); }

/* the samples on 3 threads: each other thread's context and simulator */
static int op_policy_place_threads(void *ctx, dp_error *err) { return policy_place((const dp_policy *)ctx, 4, 3, err); }

typedef struct { dp_algo algo; dp_stage stage; dp_order order; } train_ctx;

static int op_train(void *ctx, dp_error *err)
{
    train_ctx *tc = (train_ctx *)ctx;
    dp_policy p;
    dp_policy_opts po;
    dp_train_opts to;
    dp_train_result tr;
    const dp_graph *gs[2] = { &G, &G };
    int rc;
    memset(&po, 0, sizeof po);
    po.hidden = 4; po.layers = 1; po.seed = 2; po.algo = tc->algo; po.devices = tc->algo == DP_ALGO_PLACETO ? 3 : 0;
    if ((rc = dp_policy_init(&p, &po, err))) return rc;
    memset(&to, 0, sizeof to);
    to.episodes[tc->stage] = 1;
    to.order = tc->order;
    to.seed = 4;
    rc = dp_train(&p, gs, 2, &C3, &to, &tr, err);
    dp_policy_free(&p);
    return rc;
}

static int op_save(void *ctx, dp_error *err)
{
    (void)ctx;
    return dp_policy_save(&PD, p_save, err);
}

typedef struct { const dp_graph *g; dp_order order; } exec_ctx;

static int op_exec(void *ctx, dp_error *err)
{
    exec_ctx *ec = (exec_ctx *)ctx;
    int a[256], v;
    dp_exec_opts o;
    dp_exec_result r;
    for (v = 0; v < ec->g->n_ops; v++) a[v] = (v / 3) % 2;
    memset(&o, 0, sizeof o);
    o.order = ec->order;
    o.seconds_per_unit = 1e-9;   /* busy kernels take no time to speak of */
    o.seed = 7;
    int rc = dp_exec_cpu(ec->g, &C2, a, &o, &r, err);
    if (rc) CHECK(!r.wall_runs && !r.start && !r.busy, "a failed execution left results allocated");
    dp_exec_result_free(&r);
    return rc;
}

static int op_gen(void *ctx, dp_error *err)
{
    dp_graph g;
    int rc;
    (void)ctx;
    dp_gen_opts o;
    memset(&o, 0, sizeof o);
    o.nodes = 20; o.seed = 9; o.ccr = 0.5; o.shape = DP_GEN_RANDOM;
    rc = dp_gen(&g, &o, err);
    if (rc) CHECK(graph_empty(&g), "a failed dp_gen left a non-empty graph");
    dp_graph_free(&g);
    return rc;
}

static int op_workload(void *ctx, dp_error *err)
{
    dp_graph g;
    dp_workload_opts o;
    int rc;
    (void)ctx;
    memset(&o, 0, sizeof o);
    o.kind = DP_WL_LLAMA_BLOCK; o.parts = 2; o.dim = 8; o.batch = 4;
    rc = dp_gen_workload(&g, &o, err);
    if (rc) CHECK(graph_empty(&g), "a failed dp_gen_workload left a non-empty graph");
    dp_graph_free(&g);
    return rc;
}

static int op_copy(void *ctx, dp_error *err)
{
    dp_graph g;
    int rc = dp_graph_copy(&g, (const dp_graph *)ctx, err);
    if (rc) CHECK(graph_empty(&g), "a failed dp_graph_copy left a non-empty graph");
    dp_graph_free(&g);
    return rc;
}

static int op_stats(void *ctx, dp_error *err)
{
    dp_stats st;
    int rc = dp_graph_stats((const dp_graph *)ctx, &C3, &st);
    /* dp_graph_stats has no dp_error: say what failed here */
    if (rc == DP_ERR_NOMEM && err) { err->code = DP_ERR_NOMEM; snprintf(err->msg, sizeof err->msg, "stats: out of memory"); }
    return rc;
}

static int op_gantt(void *ctx, dp_error *err)
{
    dp_sim s;
    int a[64], v, rc;
    (void)ctx;
    for (v = 0; v < G.n_ops; v++) a[v] = v % 3;
    if ((rc = dp_sim_init(&s, &G, &C3, err))) return rc;
    dp_sim_opts so;
    memset(&so, 0, sizeof so);
    so.order = DP_ORDER_PRIORITY; so.track_memory = 1;
    if (!(rc = dp_sim_run(&s, a, &so, err))) rc = dp_gantt_svg(p_gantt, &s, a, NULL, err);
    dp_sim_free(&s);
    return rc;
}

static int op_calibrate(void *ctx, dp_error *err)
{
    dp_calibrate_opts o;
    dp_cluster c;
    int rc;
    memset(&o, 0, sizeof o);
    o.devices = *(const int *)ctx; o.size = 8; o.seconds = 1e-6;
    rc = dp_calibrate_cpu(&c, &o, err);
    if (rc) CHECK(c.n == 0 && !c.speed, "a failed calibration left a cluster");
    dp_cluster_free(&c);
    return rc;
}

/* ---- the executor's threads failing to start ------------------------------- */
static void test_thread_failures(void)
{
    int k, a[256], v;
    for (v = 0; v < W.n_ops; v++) a[v] = v % 2;
    for (k = 1; k <= 2 * C2.n; k++) {
        dp_exec_opts o;
        dp_exec_result r;
        dp_error err;
        long live0 = t_live;
        memset(&o, 0, sizeof o);
        memset(&err, 0, sizeof err);
        o.seconds_per_unit = 1e-9;
        t_thread_calls = 0; t_thread_fail_at = k;
        int rc = dp_exec_cpu(&W, &C2, a, &o, &r, &err);
        t_thread_fail_at = 0;
        CHECK(rc != 0 && (int)err.code == rc && dp_test_stristr(err.msg, "thread"),
              "pthread_create %d of %d failing: rc %d '%s'", k, 2 * C2.n, rc, err.msg);
        CHECK(t_live == live0, "pthread_create %d failing: %ld blocks leaked", k, t_live - live0);
    }
    for (k = 1; k <= 2; k++) {   /* calibration's threads, 2 devices */
        dp_calibrate_opts co;
        dp_cluster c;
        dp_error err;
        long live0 = t_live;
        memset(&co, 0, sizeof co);
        memset(&err, 0, sizeof err);
        co.devices = 2; co.size = 8; co.seconds = 1e-6;
        t_thread_calls = 0; t_thread_fail_at = k;
        int rc = dp_calibrate_cpu(&c, &co, &err);
        t_thread_fail_at = 0;
        CHECK(rc != 0 && (int)err.code == rc && dp_test_stristr(err.msg, "thread") && c.n == 0,
              "calibration, pthread_create %d failing: rc %d '%s'", k, rc, err.msg);
        CHECK(t_live == live0, "calibration, pthread_create %d failing: %ld blocks leaked", k, t_live - live0);
    }
    {   /* and then it runs */
        dp_exec_opts o;
        dp_exec_result r;
        dp_error err;
        memset(&o, 0, sizeof o);
        o.seconds_per_unit = 1e-9;
        int rc = dp_exec_cpu(&W, &C2, a, &o, &r, &err);
        CHECK(rc == 0, "exec after the thread failures: %s", err.msg);
        dp_exec_result_free(&r);
    }
}

static int setup(void)
{
    dp_error err;
    dp_gen_opts go;
    dp_workload_opts wo;
    dp_policy_opts po;
    memset(&err, 0, sizeof err);
    dp_test_tmp(p_native, sizeof p_native, "alloc_native.dpg");
    dp_test_tmp(p_native_w, sizeof p_native_w, "alloc_native_w.dpg");
    dp_test_tmp(p_binary, sizeof p_binary, "alloc_binary.dpb");
    dp_test_tmp(p_doppler, sizeof p_doppler, "alloc_doppler.txt");
    dp_test_tmp(p_stg, sizeof p_stg, "alloc_stg.stg");
    dp_test_tmp(p_cluster, sizeof p_cluster, "alloc_cluster.dpc");
    dp_test_tmp(p_assign, sizeof p_assign, "alloc_assign.txt");
    dp_test_tmp(p_pol_doppler, sizeof p_pol_doppler, "alloc_doppler.dpl");
    dp_test_tmp(p_pol_placeto, sizeof p_pol_placeto, "alloc_placeto.dpl");
    dp_test_tmp(p_save, sizeof p_save, "alloc_save.dpl");
    dp_test_tmp(p_gantt, sizeof p_gantt, "alloc_gantt.svg");
    if (dp_test_write_file(p_native, NATIVE, strlen(NATIVE)) || dp_test_write_file(p_doppler, DOPPLER, strlen(DOPPLER)) ||
        dp_test_write_file(p_stg, STG, strlen(STG)) || dp_test_write_file(p_cluster, CLUSTER, strlen(CLUSTER)) ||
        dp_test_write_file(p_assign, ASSIGN, strlen(ASSIGN)) || dp_test_write_file(p_native_w, NATIVE_W, strlen(NATIVE_W))) {
        CHECK(0, "cannot write the inputs under build/tmp");
        return -1;
    }
    {
        dp_graph g;
        if (dp_graph_read(&g, p_native_w, DP_FORMAT_NATIVE, &err) || dp_graph_write(&g, p_binary, DP_FORMAT_BINARY, &err)) {
            CHECK(0, "setup: %s", err.msg);
            return -1;
        }
        dp_graph_free(&g);
    }
    memset(&go, 0, sizeof go);
    go.nodes = 12; go.seed = 1; go.ccr = 1;
    memset(&wo, 0, sizeof wo);
    wo.kind = DP_WL_CHAINMM; wo.parts = 2; wo.dim = 8; wo.layers = 2;
    memset(&po, 0, sizeof po);
    po.hidden = 4; po.layers = 1; po.seed = 1;
    if (dp_gen(&G, &go, &err) || dp_gen_workload(&W, &wo, &err) || dp_cluster_read(&C3, p_cluster, &err) ||
        dp_cluster_homogeneous(&C2, 2, 1e9, 1e10, 0, &err) || dp_policy_init(&PD, &po, &err)) {
        CHECK(0, "setup: %s", err.msg);
        return -1;
    }
    po.algo = DP_ALGO_PLACETO; po.devices = 3;
    if (dp_policy_init(&PP, &po, &err) || dp_policy_save(&PD, p_pol_doppler, &err) || dp_policy_save(&PP, p_pol_placeto, &err)) {
        CHECK(0, "setup: %s", err.msg);
        return -1;
    }
    return 0;
}

int main(void)
{
    double t0 = dp_now();
    int i;
    long live0 = t_live;
    if (setup()) return dp_test_done();
    printf("allocation-failure sweeps (operation: allocations that were failed in turn)\n");
    {
        read_ctx r[] = { {p_native, DP_FORMAT_NATIVE}, {p_doppler, DP_FORMAT_DOPPLER}, {p_stg, DP_FORMAT_STG}, {p_stg, DP_FORMAT_AUTO},
                         {p_native_w, DP_FORMAT_AUTO}, {p_binary, DP_FORMAT_BINARY}, {p_binary, DP_FORMAT_AUTO} };
        sweep("load native graph", op_read_graph, &r[0]);
        sweep("load DOPPLER graph", op_read_graph, &r[1]);
        sweep("load STG graph", op_read_graph, &r[2]);
        sweep("load STG graph (format detected)", op_read_graph, &r[3]);
        sweep("load native graph (weights, sources, counts)", op_read_graph, &r[4]);
        sweep("load binary graph", op_read_graph, &r[5]);
        sweep("load binary graph (format detected)", op_read_graph, &r[6]);
    }
    sweep("load cluster file", op_read_cluster, p_cluster);
    sweep("load assignment file", op_read_assign, p_assign);
    sweep("load doppler policy", op_load_policy, p_pol_doppler);
    sweep("load placeto policy", op_load_policy, p_pol_placeto);
    sweep("gen (random DAG)", op_gen, NULL);
    sweep("gen workload (llama-block)", op_workload, NULL);
    sweep("copy a graph", op_copy, &W);
    sweep("graph statistics", op_stats, &G);
    for (i = 0; i < DP_METHOD__COUNT; i++) {
        static place_ctx pc[DP_METHOD__COUNT][2];
        static char names[DP_METHOD__COUNT][2][64];
        int o;
        for (o = 0; o < 2; o++) {
            pc[i][o].m = (dp_method)i; pc[i][o].order = o ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
            snprintf(names[i][o], sizeof names[i][o], "place %s (%s)", dp_method_name((dp_method)i), o ? "priority" : "fifo");
            sweep(names[i][o], op_place, &pc[i][o]);
        }
    }
    sweep("place with the doppler policy", op_policy_place, &PD);
    sweep("place doppler, samples on 3 threads", op_policy_place_threads, &PD);
    sweep("place with the placeto policy", op_policy_place, &PP);
    {
        static train_ctx tc[] = { {DP_ALGO_DOPPLER, DP_STAGE_IL, DP_ORDER_FIFO}, {DP_ALGO_DOPPLER, DP_STAGE_SIM, DP_ORDER_PRIORITY},
                                  {DP_ALGO_DOPPLER, DP_STAGE_REAL, DP_ORDER_FIFO}, {DP_ALGO_PLACETO, DP_STAGE_SIM, DP_ORDER_FIFO} };
        sweep("train doppler, one il episode", op_train, &tc[0]);
        sweep("train doppler, one sim episode", op_train, &tc[1]);
        sweep("train doppler, one real episode", op_train, &tc[2]);
        sweep("train placeto, one sim episode", op_train, &tc[3]);
    }
    out_path = p_save; out_keep = NULL;
    remove(p_save);
    sweep("save a policy (no file before)", op_save, NULL);
    {
        static const char old[] = "an older file that a failed save must leave alone\n";
        dp_test_write_file(p_save, old, strlen(old));
        out_path = p_save; out_keep = old;
        sweep("save a policy (over an existing file)", op_save, NULL);
    }
    remove(p_gantt);
    out_path = p_gantt;
    sweep("simulate and chart (gantt svg)", op_gantt, NULL);
    {
        static exec_ctx ec[] = { {&W, DP_ORDER_FIFO}, {&G, DP_ORDER_PRIORITY} };
        sweep("execute chainmm (real ops), 2 devices", op_exec, &ec[0]);
        sweep("execute an opaque DAG, 2 devices, priority", op_exec, &ec[1]);
    }
    {
        static const int one = 1;
#ifdef DP_TEST_ASAN
        sweep_stride = 13;
#endif
        sweep("calibrate (1 device)", op_calibrate, (void *)&one);
        sweep_stride = 1;
    }
    test_thread_failures();

    dp_policy_free(&PD); dp_policy_free(&PP);
    dp_cluster_free(&C3); dp_cluster_free(&C2);
    dp_graph_free(&G); dp_graph_free(&W);
    CHECK(t_live == live0, "%ld blocks still allocated at the end", t_live - live0);
    {
        long total = 0;
        for (i = 0; i < n_rows; i++) total += rows[i].points;
        printf("%d operations, %ld injection points in all\n", n_rows, total);
    }
    printf("test_alloc: %.2f s\n", dp_now() - t0);
    return dp_test_done();
}
