/* test_exec.c - the threaded CPU executor (dp_exec_cpu): equal outputs
   across placements, the measured schedule obeys the runtime model, ops
   take at least their modelled time, arena limits fail cleanly, bad
   inputs are refused. Every graph is scaled so that its single-device run
   takes about 0.02 s; the whole program takes a few seconds. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"
#include <sys/wait.h>

#define SINGLE_S 0.02   /* seconds of the single-device run */

static double spu_for(const dp_graph *g, const dp_cluster *c)
{
    double work = 0;
    for (int v = 0; v < g->n_ops; v++) work += dp_op_time(g, c, v, dp_fastest_device(g, c, v));
    return work > 0 ? SINGLE_S / work : 1e-3;
}

static const double *g_cmp_start;
static int by_start(const void *a, const void *b)
{
    double x = g_cmp_start[*(const int *)a], y = g_cmp_start[*(const int *)b];
    return x < y ? -1 : x > y;
}

/* (b) and (c): the measured schedule of r against the model */
static void check_schedule(const char *what, const dp_graph *g, const dp_cluster *c, const int *assign,
                           const dp_exec_result *r, int reps, int opaque_times)
{
    int n = g->n_ops, bad = 0;
    CHECK(r->n_ops == n && r->n_devices == c->n, "%s: result sizes %d ops %d devices", what, r->n_ops, r->n_devices);
    CHECK(r->reps == reps && r->wall_runs, "%s: %d runs recorded, want %d", what, r->reps, reps);
    double mx = 0, mn = 1e300;
    for (int i = 0; i < r->reps; i++) {
        if (!(r->wall_runs[i] > 0)) bad++;
        if (r->wall_runs[i] > mx) mx = r->wall_runs[i];
        if (r->wall_runs[i] < mn) mn = r->wall_runs[i];
    }
    CHECK(!bad, "%s: a run of no wall time", what);
    CHECK(r->wall_median >= mn && r->wall_median <= mx, "%s: median %g outside the runs [%g, %g]", what, r->wall_median, mn, mx);
    /* every op ran */
    bad = 0;
    for (int v = 0; v < n; v++)
        if (!(r->start[v] >= 0 && r->end[v] > r->start[v] && r->end[v] <= r->wall_median + 1e-6)) {
            if (bad++ < 3) printf("  %s: op %d ran [%g, %g], wall %g\n", what, v, r->start[v], r->end[v], r->wall_median);
        }
    CHECK(!bad, "%s: %d ops with no proper interval", what, bad);
    /* each op's thread CPU time (when asked for): within its interval
       (clock granularity aside), and some recorded when ops ran */
    if (r->cpu) {
        double sc = 0, sd = 0;
        bad = 0;
        for (int v = 0; v < n; v++) {
            if (!(r->cpu[v] >= 0 && r->cpu[v] <= r->end[v] - r->start[v] + 1e-4)) bad++;
            sc += r->cpu[v]; sd += r->end[v] - r->start[v];
        }
        CHECK(!bad, "%s: %d ops with a CPU time outside their interval", what, bad);
        CHECK(sd < 1e-3 || sc > 0, "%s: ops ran %g s but no CPU time was recorded", what, sd);
    }
    /* dependencies */
    bad = 0;
    for (int e = 0; e < g->n_edges; e++)
        if (r->start[g->dst[e]] < r->end[g->src[e]] - 1e-6) {
            if (bad++ < 3) printf("  %s: edge %d->%d: start %.9g before the input's end %.9g\n", what, g->src[e], g->dst[e], r->start[g->dst[e]], r->end[g->src[e]]);
        }
    CHECK(!bad, "%s: %d edges violated", what, bad);
    /* one op at a time per device; busy time = the sum of its ops' times */
    int *ops = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int d = 0; d < c->n; d++) {
        int k = 0;
        double sum = 0;
        for (int v = 0; v < n; v++) if (assign[v] == d) { ops[k++] = v; sum += r->end[v] - r->start[v]; }
        g_cmp_start = r->start;
        qsort(ops, (size_t)k, sizeof(int), by_start);
        bad = 0;
        for (int i = 1; i < k; i++)
            if (r->start[ops[i]] < r->end[ops[i - 1]] - 1e-9) {
                if (bad++ < 3) printf("  %s: device %d: op %d starts %.9g before op %d ends %.9g\n", what, d, ops[i], r->start[ops[i]], ops[i - 1], r->end[ops[i - 1]]);
            }
        CHECK(!bad, "%s: device %d runs ops at once", what, d);
        CHECK_NEAR(r->busy[d], sum, 1e-6, what);
        CHECK(r->peak_bytes[d] >= 0 && (k == 0 || r->peak_bytes[d] > 0), "%s: device %d peak %g bytes with %d ops", what, d, r->peak_bytes[d], k);
    }
    free(ops);
    /* (c) opaque ops busy-compute at least their modelled time */
    if (opaque_times) {
        bad = 0;
        for (int v = 0; v < n; v++) {
            double want = dp_op_time(g, c, v, assign[v]) * r->seconds_per_unit;
            if (r->end[v] - r->start[v] < want - 1e-4) {
                if (bad++ < 3) printf("  %s: op %d took %.9g s, modelled %.9g s\n", what, v, r->end[v] - r->start[v], want);
            }
        }
        CHECK(!bad, "%s: %d ops shorter than modelled", what, bad);
    }
}

/* (a) + (b) + (c) on one graph: single, round-robin, random and cp
   placements on 2 and 4 devices, FIFO and priority, equal digests */
static void check_graph(const char *name, const dp_graph *g, int opaque_times, int check_digest)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    for (int nd = 2; nd <= 4; nd += 2) {
        dp_cluster c;
        if (g->n_dev_time && nd > g->n_dev_time) continue;   /* times for fewer devices */
        if (dp_cluster_for_graph(&c, g, nd, &err)) { CHECK(0, "%s: cluster: %s", name, err.msg); continue; }
        int *one = (int *)calloc((size_t)g->n_ops, sizeof(int));
        int *a = (int *)malloc(sizeof(int) * (size_t)g->n_ops);
        dp_exec_opts eo;
        dp_exec_result r1, r;
        memset(&eo, 0, sizeof eo);
        eo.seconds_per_unit = spu_for(g, &c);
        eo.seed = 3;
        int rc = dp_exec_cpu(g, &c, one, &eo, &r1, &err);
        CHECK(rc == 0, "%s: single-device exec: %s", name, err.msg);
        if (rc) { free(one); free(a); dp_cluster_free(&c); continue; }
        CHECK(r1.seconds_per_unit == eo.seconds_per_unit, "%s: seconds_per_unit %g, asked %g", name, r1.seconds_per_unit, eo.seconds_per_unit);
        {
            char what[256];
            snprintf(what, sizeof what, "%s, %d devices, all on device 0", name, nd);
            check_schedule(what, g, &c, one, &r1, 1, opaque_times);
        }
        static const dp_method ms[] = {DP_METHOD_SINGLE, DP_METHOD_ROUND_ROBIN, DP_METHOD_RANDOM, DP_METHOD_CP};
        for (int mi = 0; mi < 4; mi++)
            for (int order = 0; order < 2; order++) {
                dp_place_opts po;
                dp_place_result pr;
                char what[256];
                memset(&po, 0, sizeof po);
                po.seed = 7 + (uint64_t)nd;
                if (dp_place(ms[mi], g, &c, &po, a, &pr, &err)) { CHECK(0, "%s: place: %s", name, err.msg); continue; }
                eo.order = order ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
                eo.reps = mi == 3 ? 3 : 1;
                eo.cpu_times = mi % 2;
                snprintf(what, sizeof what, "%s, %d devices, %s, %s", name, nd, dp_method_name(ms[mi]), order ? "priority" : "fifo");
                if (dp_exec_cpu(g, &c, a, &eo, &r, &err)) { CHECK(0, "%s: exec: %s", what, err.msg); continue; }
                CHECK((r.cpu != NULL) == (eo.cpu_times != 0), "%s: cpu times %s, asked %d", what, r.cpu ? "given" : "not given", eo.cpu_times);
                CHECK(!check_digest || r.digest == r1.digest, "%s: digest %llx, single device %llx", what,
                      (unsigned long long)r.digest, (unsigned long long)r1.digest);
                check_schedule(what, g, &c, a, &r, eo.reps, opaque_times);
                if (mi == 3 && order == 0 && opaque_times) {
                    double ms_sim = 0;
                    dp_sim_opts so;
                    memset(&so, 0, sizeof so);
                    if (!dp_simulate(g, &c, a, &so, &ms_sim, &err))
                        printf("  %s: wall %.4g s, simulator %.4g s (%+.0f%%)\n", what, r.wall_median,
                               ms_sim * r.seconds_per_unit, 100 * (r.wall_median / (ms_sim * r.seconds_per_unit) - 1));
                }
                dp_exec_result_free(&r);
                CHECK(r.wall_runs == NULL && r.start == NULL, "%s: result not cleared by free", what);
            }
        /* SERIAL links: one transfer at a time per device pair */
        c.link = DP_LINK_SERIAL;
        eo.order = DP_ORDER_FIFO; eo.reps = 1; eo.cpu_times = 0;
        for (int v = 0; v < g->n_ops; v++) a[v] = v % nd;
        if (!dp_exec_cpu(g, &c, a, &eo, &r, &err)) {
            char what[256];
            snprintf(what, sizeof what, "%s, %d devices, op %% %d, serial links", name, nd, nd);
            CHECK(!check_digest || r.digest == r1.digest, "%s: digest differs", what);
            check_schedule(what, g, &c, a, &r, 1, opaque_times);
            dp_exec_result_free(&r);
        } else CHECK(0, "%s: serial exec: %s", name, err.msg);
        dp_exec_result_free(&r1);
        free(one); free(a);
        dp_cluster_free(&c);
    }
}

/* Dispatch order: a source and 6 children on one device, all made ready
   by the source's completion: FIFO runs them in index order, PRIORITY by
   the given priorities (here the reverse). */
static void check_dispatch_order(void)
{
    static const op_t ops[] = {{"s", 1, 1, 0}, {"c1", 1, 1, 0}, {"c2", 1, 1, 0}, {"c3", 1, 1, 0},
                               {"c4", 1, 1, 0}, {"c5", 1, 1, 0}, {"c6", 1, 1, 0}};
    static const ed_t eds[] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {0, 4, 1}, {0, 5, 1}, {0, 6, 1}};
    dp_graph g;
    dp_cluster c;
    dp_error e;
    memset(&e, 0, sizeof e);
    if (dp_test_build(&g, 7, ops, 6, eds)) return;
    dp_cluster_for_graph(&c, &g, 2, &e);
    int a[7] = {0, 0, 0, 0, 0, 0, 0};
    double prio[7] = {100, 1, 2, 3, 4, 5, 6};
    for (int order = 0; order < 2; order++) {
        dp_exec_opts o;
        dp_exec_result r;
        memset(&o, 0, sizeof o);
        o.seconds_per_unit = 1e-3;
        o.order = order ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
        o.priority = order ? prio : NULL;
        if (dp_exec_cpu(&g, &c, a, &o, &r, &e)) { CHECK(0, "exec: %s", e.msg); continue; }
        int ok = 1;
        for (int v = 2; v <= 6; v++)
            ok &= order ? r.start[v] < r.start[v - 1] : r.start[v] > r.start[v - 1];
        CHECK(ok, "%s: children did not run in %s order", order ? "priority" : "fifo", order ? "priority" : "index");
        dp_exec_result_free(&r);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* (d) arena limits too small: a clean error, nothing leaked (ASan) */
static void check_limits(const dp_graph *g)
{
    dp_error err;
    dp_cluster c;
    dp_exec_opts eo;
    dp_exec_result r;
    memset(&err, 0, sizeof err);
    if (dp_cluster_for_graph(&c, g, 2, &err)) { CHECK(0, "cluster: %s", err.msg); return; }
    int *a = (int *)malloc(sizeof(int) * (size_t)g->n_ops);
    for (int v = 0; v < g->n_ops; v++) a[v] = v % 2;
    memset(&eo, 0, sizeof eo);
    eo.seconds_per_unit = spu_for(g, &c);
    if (dp_exec_cpu(g, &c, a, &eo, &r, &err)) { CHECK(0, "exec: %s", err.msg); goto out; }
    double scale = r.bytes_scale, need = 0;
    dp_exec_result_free(&r);
    for (int v = 0; v < g->n_ops; v++) {
        double b = floor(g->out_bytes[v] * scale + 0.5);
        if (b > need) need = b;
    }
    /* nothing fits; the largest output does not fit (mid-run failure) */
    double limits[2] = {1, need - 1};
    for (int i = 0; i < 2; i++) {
        if (limits[i] < 1) continue;
        for (int reps = 1; reps <= 2; reps++) {
            memset(&err, 0, sizeof err);
            eo.device_bytes = limits[i];
            eo.reps = reps;
            memset(&r, 0x5a, sizeof r);
            int rc = dp_exec_cpu(g, &c, a, &eo, &r, &err);
            CHECK(rc != 0, "arena of %g bytes (largest buffer %g): no error", limits[i], need);
            CHECK(rc == 0 || (int)err.code == rc, "error code %d, returned %d", (int)err.code, rc);
            CHECK(rc == 0 || (err.msg[0] && strstr(err.msg, "arena")), "arena error message: '%s'", err.msg);
            CHECK(rc == 0 || rc == DP_ERR_INFEASIBLE, "arena full: code %d, expected DP_ERR_INFEASIBLE", rc);
            CHECK(r.wall_runs == NULL && r.busy == NULL && r.start == NULL, "a failed run left result arrays");
            if (!rc) dp_exec_result_free(&r);
            /* and NULL err is fine too */
            rc = dp_exec_cpu(g, &c, a, &eo, &r, NULL);
            CHECK(rc != 0, "arena of %g bytes with err NULL: no error", limits[i]);
            if (!rc) dp_exec_result_free(&r);
        }
    }
    /* a big enough arena runs */
    eo.device_bytes = 1e12; eo.reps = 1;
    if (!dp_exec_cpu(g, &c, a, &eo, &r, &err)) { CHECK(r.peak_bytes[0] <= 1e12, "peak within the arena"); dp_exec_result_free(&r); }
    else CHECK(0, "a large arena failed: %s", err.msg);
out:
    free(a);
    dp_cluster_free(&c);
}

/* (e) bad inputs */
static void check_bad_inputs(const dp_graph *g)
{
    dp_error err;
    dp_cluster c;
    dp_exec_result r;
    dp_exec_opts eo;
    memset(&err, 0, sizeof err);
    if (dp_cluster_for_graph(&c, g, 2, &err)) { CHECK(0, "cluster: %s", err.msg); return; }
    int *a = (int *)calloc((size_t)g->n_ops, sizeof(int));
    memset(&eo, 0, sizeof eo);
    eo.seconds_per_unit = spu_for(g, &c);
    int rc;

    a[g->n_ops - 1] = 2;
    rc = dp_exec_cpu(g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "device 2"), "device 2 of 2: rc %d '%s'", rc, err.msg);
    a[g->n_ops - 1] = -1;
    rc = dp_exec_cpu(g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE, "device -1: rc %d '%s'", rc, err.msg);
    a[g->n_ops - 1] = 0;

    rc = dp_exec_cpu(NULL, &c, a, &eo, &r, &err);
    CHECK(rc != 0 && err.msg[0], "NULL graph: rc %d '%s'", rc, err.msg);
    rc = dp_exec_cpu(g, NULL, a, &eo, &r, &err);
    CHECK(rc != 0 && err.msg[0], "NULL cluster: rc %d '%s'", rc, err.msg);
    rc = dp_exec_cpu(g, &c, a, &eo, NULL, &err);
    CHECK(rc == DP_ERR_ARG, "NULL result: rc %d '%s'", rc, err.msg);
    eo.dispatch = DP_DISPATCH_STATIC;
    rc = dp_exec_cpu(g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "dynamic"), "static dispatch on the CPU: rc %d '%s'", rc, err.msg);
    eo.dispatch = DP_DISPATCH_DYNAMIC;
    {
        dp_graph raw;
        dp_graph_init(&raw);
        rc = dp_exec_cpu(&raw, &c, a, &eo, &r, &err);
        CHECK(rc == DP_ERR_ARG, "graph not finalised: rc %d '%s'", rc, err.msg);
        dp_graph_free(&raw);
    }
    eo.reps = -1;
    rc = dp_exec_cpu(g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE, "reps -1: rc %d '%s'", rc, err.msg);
    eo.reps = 1; eo.seconds_per_unit = -1;
    rc = dp_exec_cpu(g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE, "negative seconds_per_unit: rc %d '%s'", rc, err.msg);
    eo.seconds_per_unit = spu_for(g, &c); eo.device_bytes = -5;
    rc = dp_exec_cpu(g, &c, a, &eo, &r, &err);
    CHECK(rc == DP_ERR_RANGE, "negative arena: rc %d '%s'", rc, err.msg);
    eo.device_bytes = 0;
    /* opts NULL: defaults (the single-device run takes 0.1 s) */
    rc = dp_exec_cpu(g, &c, a, NULL, &r, &err);
    CHECK(rc == 0, "opts NULL: %s", err.msg);
    if (!rc) {
        CHECK(r.reps == 1 && r.wall_median >= 0.1 - 1e-3, "opts NULL: %d runs, wall %g s (want >= 0.1 s on one device)", r.reps, r.wall_median);
        dp_exec_result_free(&r);
    }
    free(a);
    dp_cluster_free(&c);
}

/* Two regressions (both were bugs):
   - a NULL assignment crashed instead of returning DP_ERR_ARG;
   - an opaque op hashed a local input over its producer's out_bytes but a
     copied one over the edge's bytes, so the digest depended on the
     placement whenever an edge carries less than its source's output
     (graphs/heft_example.dpg: 'doppler exec' said the outputs DIFFER). */
static void check_regressions(void)
{
    static const op_t ops[] = {{"a", 1, 64, 0}, {"b", 1, 8, 0}};
    static const ed_t eds[] = {{0, 1, 16}};
    dp_graph g;
    dp_cluster c;
    dp_error e;
    dp_exec_result r0, r1;
    memset(&e, 0, sizeof e);
    if (dp_test_build(&g, 2, ops, 1, eds)) return;
    dp_cluster_for_graph(&c, &g, 2, &e);
    int one[2] = {0, 0}, two[2] = {0, 1};
    dp_exec_opts o;
    memset(&o, 0, sizeof o);
    o.seconds_per_unit = 1e-3;
    if (!dp_exec_cpu(&g, &c, one, &o, &r0, &e)) {
        if (!dp_exec_cpu(&g, &c, two, &o, &r1, &e)) {
            CHECK(r0.digest == r1.digest, "edge of 16 bytes from an output of 64: digest on one device %llx, on two %llx",
                  (unsigned long long)r0.digest, (unsigned long long)r1.digest);
            dp_exec_result_free(&r1);
        } else CHECK(0, "exec: %s", e.msg);
        dp_exec_result_free(&r0);
    } else CHECK(0, "exec: %s", e.msg);
    /* NULL assignment, in a child so that a crash is counted, not fatal */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dp_exec_result r;
        int rc = dp_exec_cpu(&g, &c, NULL, &o, &r, &e);
        if (!rc) dp_exec_result_free(&r);
        _exit(rc == DP_ERR_ARG ? 0 : 1);
    }
    int st = 0;
    if (pid > 0) waitpid(pid, &st, 0);
    CHECK(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "NULL assignment: %s",
          pid <= 0 ? "fork failed" : WIFSIGNALED(st) ? "crashed" : "no DP_ERR_ARG");
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* dp_cluster_scale_speed against hand-computed op times, and
   dp_calibrate_cpu_speed's factor and errors. */
static void check_speed_refresh(void)
{
    dp_cluster c;
    dp_error e;
    memset(&e, 0, sizeof e);
    /* two devices of speed 4, overhead 0.5 on device 1; a matmul curve
       (work 10: speed 2, work 1000: speed 8) on every device. A matmul of
       work 10 (the curve's first point) takes 10 / 2 = 5, + 0.5 on device
       1; an opaque op of compute 8 takes 8 / 4 = 2 (2.5 on device 1).
       Scaled by 2 on device 1 only: 10 / 4 + 0.5 = 3 and 8 / 8 + 0.5 =
       1.5 there (the overhead stays), device 0 unchanged. */
    if (dp_cluster_homogeneous(&c, 2, 4, 1, 0, &e)) { CHECK(0, "cluster: %s", e.msg); return; }
    c.overhead[1] = 0.5;
    dp_speed_point pts[2] = {{10, 2}, {1000, 8}};
    CHECK(dp_cluster_set_curve(&c, -1, DP_OP_MATMUL, pts, 2, &e) == 0, "set_curve: %s", e.msg);
    dp_graph g;
    dp_graph_init(&g);
    dp_op_desc d;
    memset(&d, 0, sizeof d);
    d.kind = DP_OP_INPUT; d.rows = 2; d.cols = 2; d.compute = 1;
    CHECK(dp_graph_add_op(&g, &d, NULL, &e) == 0, "op: %s", e.msg);
    memset(&d, 0, sizeof d);
    d.kind = DP_OP_MATMUL; d.rows = 2; d.cols = 2; d.compute = 10;
    CHECK(dp_graph_add_op(&g, &d, NULL, &e) == 0, "op: %s", e.msg);
    memset(&d, 0, sizeof d);
    d.name = "x"; d.compute = 8;
    CHECK(dp_graph_add_op(&g, &d, NULL, &e) == 0, "op: %s", e.msg);
    CHECK(dp_graph_add_edge(&g, 0, 1, 0, &e) == 0 && dp_graph_finalize(&g, &e) == 0, "graph: %s", e.msg);
    CHECK_NEAR(dp_op_time(&g, &c, 1, 0), 5, 1e-12, "matmul on device 0");
    CHECK_NEAR(dp_op_time(&g, &c, 1, 1), 5.5, 1e-12, "matmul on device 1");
    CHECK_NEAR(dp_op_time(&g, &c, 2, 1), 2.5, 1e-12, "opaque op on device 1");
    CHECK(dp_cluster_scale_speed(&c, 1, 2, &e) == 0, "scale_speed: %s", e.msg);
    CHECK_NEAR(dp_op_time(&g, &c, 1, 0), 5, 1e-12, "matmul on device 0 after scaling device 1");
    CHECK_NEAR(dp_op_time(&g, &c, 1, 1), 3, 1e-12, "matmul on device 1 scaled by 2");
    CHECK_NEAR(dp_op_time(&g, &c, 2, 0), 2, 1e-12, "opaque op on device 0");
    CHECK_NEAR(dp_op_time(&g, &c, 2, 1), 1.5, 1e-12, "opaque op on device 1 scaled by 2");
    CHECK(dp_cluster_scale_speed(&c, -1, 0.5, &e) == 0, "scale_speed all: %s", e.msg);
    CHECK_NEAR(dp_op_time(&g, &c, 1, 0), 10, 1e-12, "matmul on device 0 scaled by 0.5");
    CHECK(dp_cluster_scale_speed(&c, 2, 2, &e) == DP_ERR_RANGE && strstr(e.msg, "device 2"), "scale device 2: '%s'", e.msg);
    CHECK(dp_cluster_scale_speed(&c, -1, 0, &e) == DP_ERR_RANGE && strstr(e.msg, "factor 0"), "factor 0: '%s'", e.msg);
    CHECK(dp_cluster_scale_speed(&c, -1, NAN, &e) == DP_ERR_RANGE && dp_test_stristr(e.msg, "nan"), "factor NaN: '%s'", e.msg);
    CHECK_NEAR(dp_op_time(&g, &c, 1, 0), 10, 1e-12, "a refused scaling changed nothing");
    dp_graph_free(&g);
    dp_cluster_free(&c);

    /* the factor against a fresh calibration: positive and finite (its
       value is the machine's: not checked beyond a wide band), and the
       option checks */
    dp_calibrate_opts co;
    memset(&co, 0, sizeof co);
    co.devices = 2; co.size = 32; co.seconds = 0.002; co.sweeps = 1;
    if (dp_calibrate_cpu(&c, &co, &e) == 0) {
        double f = -1;
        CHECK(dp_calibrate_cpu_speed(&c, &co, &f, &e) == 0, "calibrate_speed: %s", e.msg);
        CHECK(f > 0.05 && f < 20, "speed factor %g right after calibrating", f);
        co.seconds = 0;
        co.size = 4;
        CHECK(dp_calibrate_cpu_speed(&c, &co, &f, &e) == DP_ERR_RANGE && strstr(e.msg, "size 4"), "size 4: '%s'", e.msg);
        co.size = 32; co.seconds = -1;
        CHECK(dp_calibrate_cpu_speed(&c, &co, &f, &e) == DP_ERR_RANGE && strstr(e.msg, "seconds -1"), "seconds -1: '%s'", e.msg);
        CHECK(dp_calibrate_cpu_speed(&c, NULL, NULL, &e) == DP_ERR_ARG, "no factor: '%s'", e.msg);
        CHECK(dp_calibrate_cpu_speed(NULL, NULL, &f, &e) == DP_ERR_ARG, "no cluster: '%s'", e.msg);
        dp_cluster_free(&c);
    } else CHECK(0, "calibrate: %s", e.msg);
}

/* dp_calibrate_cpu on small sizes: sane values (positive, finite, zero where
   they must be), the curves at the work dp_op_flops gives each measured
   shape (by hand), time growing with work along every curve, the options
   checked. No machine-specific number is asserted. */
static void check_calibration(void)
{
    dp_cluster c;
    dp_error e;
    dp_calibrate_opts co;
    memset(&e, 0, sizeof e);
    memset(&co, 0, sizeof co);
    co.devices = 2; co.size = 32; co.seconds = 0.003;
    if (dp_calibrate_cpu(&c, &co, &e)) { CHECK(0, "calibrate: %s", e.msg); return; }
    CHECK(c.n == 2, "%d devices", c.n);
    for (int d = 0; d < c.n; d++) {
        CHECK(c.speed[d] > 0 && c.speed[d] < HUGE_VAL, "device %d speed %g", d, c.speed[d]);
        CHECK(c.overhead[d] > 0 && c.overhead[d] < 0.1, "device %d per-op overhead %g s", d, c.overhead[d]);
        CHECK(c.memory[d] == 0, "device %d memory %g", d, c.memory[d]);
        for (int b = 0; b < c.n; b++) {
            double bw = c.bandwidth[d * c.n + b], lat = c.latency[d * c.n + b];
            CHECK(bw > 0 && bw < HUGE_VAL, "bandwidth %d -> %d: %g", d, b, bw);
            CHECK(d == b ? lat == 0 : (lat >= 0 && lat < 0.1), "latency %d -> %d: %g s", d, b, lat);
        }
        CHECK(c.curve_len[(size_t)d * DP_KIND__COUNT + DP_OP_OPAQUE] == 0, "a curve for opaque ops");
        for (int k = 1; k < DP_KIND__COUNT; k++) {
            size_t at = (size_t)d * DP_KIND__COUNT + k;
            const dp_speed_point *p = c.curve + at * DP_MAX_CURVE;
            CHECK(c.curve_len[at] == 2, "%s: %d points, want 2 (sides 16 and 32)", dp_kind_name((dp_kind)k), c.curve_len[at]);
            if (c.curve_len[at] != 2) continue;
            for (int i = 0; i < 2; i++)
                CHECK(p[i].speed > 0 && p[i].speed < HUGE_VAL, "%s point %d speed %g", dp_kind_name((dp_kind)k), i, p[i].speed);
            CHECK(p[1].work / p[1].speed > p[0].work / p[0].speed, "%s: side 32 takes %g s, side 16 %g s",
                  dp_kind_name((dp_kind)k), p[1].work / p[1].speed, p[0].work / p[0].speed);
        }
        /* the measured shapes' work, by hand: matmul 2 s^3, concat s x 2s,
           split s x s/2, softmax 5 s^2, silu 4 s^2, add of two: s^2 */
        const dp_speed_point *mm = c.curve + ((size_t)d * DP_KIND__COUNT + DP_OP_MATMUL) * DP_MAX_CURVE;
        const dp_speed_point *cat = c.curve + ((size_t)d * DP_KIND__COUNT + DP_OP_CONCAT) * DP_MAX_CURVE;
        const dp_speed_point *spl = c.curve + ((size_t)d * DP_KIND__COUNT + DP_OP_SPLIT) * DP_MAX_CURVE;
        const dp_speed_point *sm = c.curve + ((size_t)d * DP_KIND__COUNT + DP_OP_SOFTMAX) * DP_MAX_CURVE;
        const dp_speed_point *si = c.curve + ((size_t)d * DP_KIND__COUNT + DP_OP_SILU) * DP_MAX_CURVE;
        const dp_speed_point *ad = c.curve + ((size_t)d * DP_KIND__COUNT + DP_OP_ADD) * DP_MAX_CURVE;
        CHECK(mm[0].work == 8192 && mm[1].work == 65536, "matmul work %g %g", mm[0].work, mm[1].work);
        CHECK(cat[0].work == 512 && cat[1].work == 2048, "concat work %g %g", cat[0].work, cat[1].work);
        CHECK(spl[0].work == 128 && spl[1].work == 512, "split work %g %g", spl[0].work, spl[1].work);
        CHECK(sm[0].work == 1280 && sm[1].work == 5120, "softmax work %g %g", sm[0].work, sm[1].work);
        CHECK(si[0].work == 1024 && si[1].work == 4096, "silu work %g %g", si[0].work, si[1].work);
        CHECK(ad[0].work == 256 && ad[1].work == 1024, "add work %g %g", ad[0].work, ad[1].work);
        CHECK(c.speed[d] == mm[1].speed, "opaque speed %g: the largest matmul's %g", c.speed[d], mm[1].speed);
    }
    /* the file round trip keeps the whole model */
    char path[256];
    dp_cluster r;
    dp_test_tmp(path, sizeof path, "exec_cal.dpc");
    if (dp_cluster_write(&c, path, &e) == 0 && dp_cluster_read(&r, path, &e) == 0) {
        int same = r.n == c.n;
        for (int d = 0; same && d < c.n; d++) {
            same &= r.overhead[d] == c.overhead[d] && r.speed[d] == c.speed[d];
            for (int k = 0; k < DP_KIND__COUNT; k++) {
                size_t at = (size_t)d * DP_KIND__COUNT + k;
                same &= r.curve_len[at] == c.curve_len[at];
                for (int i = 0; same && i < c.curve_len[at]; i++)
                    same &= r.curve[at * DP_MAX_CURVE + i].work == c.curve[at * DP_MAX_CURVE + i].work &&
                            r.curve[at * DP_MAX_CURVE + i].speed == c.curve[at * DP_MAX_CURVE + i].speed;
            }
        }
        CHECK(same, "calibrated cluster round trip differs");
        dp_cluster_free(&r);
    } else CHECK(0, "calibrated cluster write/read: %s", e.msg);
    dp_cluster_free(&c);
    /* options out of range */
    co.devices = -1;
    CHECK(dp_calibrate_cpu(&c, &co, &e) == DP_ERR_RANGE && strstr(e.msg, "-1"), "devices -1: '%s'", e.msg);
    co.devices = 2; co.size = 4;
    CHECK(dp_calibrate_cpu(&c, &co, &e) == DP_ERR_RANGE && strstr(e.msg, "4"), "size 4: '%s'", e.msg);
    co.size = 32; co.seconds = 11;
    CHECK(dp_calibrate_cpu(&c, &co, &e) == DP_ERR_RANGE && strstr(e.msg, "11"), "seconds 11: '%s'", e.msg);
    co.seconds = 0; co.dispatch = DP_DISPATCH_GRAPH;
    CHECK(dp_calibrate_cpu(&c, &co, &e) == DP_ERR_ARG && strstr(e.msg, "dispatch 2"), "dispatch graph on the CPU: '%s'", e.msg);
    co.dispatch = 0;
    co.seconds = 0.002; co.sweeps = 101;
    CHECK(dp_calibrate_cpu(&c, &co, &e) == DP_ERR_RANGE && strstr(e.msg, "sweeps 101"), "sweeps 101: '%s'", e.msg);
    co.sweeps = -3;
    CHECK(dp_calibrate_cpu(&c, &co, &e) == DP_ERR_RANGE && strstr(e.msg, "sweeps -3"), "sweeps -3: '%s'", e.msg);
    /* one device: no hand-off to measure; a single side (size 8); two
       sweeps (each point the mean of two) */
    co.devices = 1; co.size = 8; co.seconds = 0.002; co.sweeps = 2;
    if (dp_calibrate_cpu(&c, &co, &e) == 0) {
        CHECK(c.n == 1 && c.latency[0] == 0 && c.curve_len[DP_OP_MATMUL] == 1 && c.curve[DP_OP_MATMUL * DP_MAX_CURVE].work == 1024,
              "one device, size 8: n %d, %d matmul points at work %g", c.n, c.curve_len[DP_OP_MATMUL], c.curve[DP_OP_MATMUL * DP_MAX_CURVE].work);
        dp_cluster_free(&c);
    } else CHECK(0, "calibrate one device: %s", e.msg);
    check_speed_refresh();
}

int main(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    double t0 = dp_now();

    /* hand-built: a diamond with an extra chain, and a fan-out/fan-in */
    {
        /* bytes in the graph's units: a transfer takes about an op's time */
        static const op_t ops[] = {{"a", 2, 2, 0}, {"b", 3, 1, 0}, {"c", 1, 1.5, 0}, {"d", 2, 0.5, 0},
                                   {"e", 1, 0.25, 0}, {"f", 4, 0.1, 0}};
        static const ed_t eds[] = {{0, 1, 2}, {0, 2, 2}, {1, 3, 1}, {2, 3, 1.5}, {3, 4, 0.5}, {2, 5, 1.5}};
        dp_graph g;
        if (!dp_test_build(&g, 6, ops, 6, eds)) {
            check_graph("diamond", &g, 1, 1);
            check_limits(&g);
            check_bad_inputs(&g);
        }
        dp_graph_free(&g);
    }
    {
        /* one source, 8 parallel ops, one sink; zero-cost ops too */
        op_t ops[10];
        ed_t eds[16];
        static char names[10][16];
        int m = 0;
        for (int i = 0; i < 10; i++) {
            snprintf(names[i], sizeof names[i], "o%d", i);
            ops[i].name = names[i]; ops[i].compute = (i == 0 || i == 9) ? 0 : 1 + i % 3;
            ops[i].out = 0.25 * (i + 1); ops[i].mem = 0;
        }
        for (int i = 1; i <= 8; i++) { eds[m].s = 0; eds[m].d = i; eds[m++].bytes = 0.25; }
        for (int i = 1; i <= 8; i++) { eds[m].s = i; eds[m].d = 9; eds[m++].bytes = 0.25 * (i + 1); }
        dp_graph g;
        if (!dp_test_build(&g, 10, ops, m, eds)) check_graph("fan", &g, 1, 1);
        dp_graph_free(&g);
    }
    /* generated: layered, 40 ops, ccr 0.5 */
    {
        dp_graph g;
        dp_gen_opts go;
        memset(&go, 0, sizeof go);
        go.shape = DP_GEN_LAYERED; go.nodes = 40; go.ccr = 0.5; go.seed = 4;
        dp_graph_init(&g);
        if (dp_gen(&g, &go, &err)) CHECK(0, "gen: %s", err.msg);
        else {
            check_graph("layered_40", &g, 1, 1);
            check_limits(&g);
        }
        dp_graph_free(&g);
        go.shape = DP_GEN_RANDOM; go.nodes = 30; go.seed = 9; go.ccr = 2;
        dp_graph_init(&g);
        if (dp_gen(&g, &go, &err)) CHECK(0, "gen: %s", err.msg);
        else check_graph("random_30", &g, 1, 1);
        dp_graph_free(&g);
    }
    /* a workload of real ops: schedule and digests (kernel times are not modelled) */
    {
        dp_graph g;
        dp_workload_opts wo;
        memset(&wo, 0, sizeof wo);
        wo.kind = DP_WL_CHAINMM; wo.parts = 2; wo.dim = 32; wo.layers = 2;
        dp_graph_init(&g);
        if (dp_gen_workload(&g, &wo, &err)) CHECK(0, "workload: %s", err.msg);
        else {
            check_graph("chainmm", &g, 0, 1);
            check_limits(&g);
        }
        dp_graph_free(&g);
    }
    /* per-device times (the HEFT paper's example); its edges carry less
       than their sources' outputs (see check_regressions) */
    {
        dp_graph g;
        if (dp_graph_read(&g, "graphs/heft_example.dpg", DP_FORMAT_AUTO, &err)) CHECK(0, "read heft_example: %s", err.msg);
        else check_graph("heft_example", &g, 1, 1);
        dp_graph_free(&g);
    }
    check_dispatch_order();
    check_calibration();
    /* the DOPPLER reference's chain_mm graph, when present */
    if (dp_test_have_data("doppler/chain_mm_112nodes.txt")) {
        char path[1024];
        dp_graph g;
        dp_test_data_path(path, sizeof path, "doppler/chain_mm_112nodes.txt");
        if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &err)) CHECK(0, "read %s: %s", path, err.msg);
        else check_graph("chain_mm_112nodes", &g, 1, 1);
        dp_graph_free(&g);
    }
    check_regressions();
    printf("test_exec took %.1f s\n", dp_now() - t0);
    return dp_test_done();
}
