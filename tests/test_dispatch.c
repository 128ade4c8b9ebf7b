/* test_dispatch.c - the dispatcher (dp_dispatch) that the CUDA executor runs
   on, driven here by a simulated device: hooks on a simulated clock whose
   ops take exactly their modelled time and whose copies run one at a time
   per device pair, like the CUDA executor's copy streams. In that world
   the dispatcher must reproduce the simulator's schedule op for op (it
   implements the same runtime model), never start an op before its inputs
   are there, never release a buffer still in use, release every buffer
   but the sinks' exactly once, account the bytes as worked out by hand,
   and fail cleanly on a full arena or a failing hook. Also the executors'
   shared helpers (buffer sizes, default scales, dp_input_value) and the
   kept outputs of the CPU executor with dp_exec_compare. Needs no GPU. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

/* ---- the simulated device --------------------------------------------- */
typedef struct { double t; unsigned seq; int id; } fev;

typedef struct fake {
    const dp_graph *g; const dp_cluster *c; const int *assign;
    double spu, now;
    fev *ev; int nev; unsigned seq;
    int *busy;                      /* [nd] op running or -1                     */
    char *op_state;                 /* [n] 0 waiting, 1 running, 2 done          */
    char *out_alive, *out_freed;    /* [n] output allocated / released           */
    char *x_state;                  /* [m] 0 none, 1 copying, 2 copied           */
    char *x_alive, *x_freed;        /* [m]                                       */
    double *pair_free;              /* [nd*nd] the pair's copy stream is free at */
    double *start, *end;            /* [n]                                       */
    int violations;
    char first[512];                /* the first violation                       */
    int launches, fail_launch_at;   /* a failing launch, to test errors          */
} fake;

static void violate(fake *f, const char *fmt, ...)
{
    if (f->violations++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->first, sizeof f->first, fmt, ap);
        va_end(ap);
    }
}

static void fev_push(fake *f, double t, int id)
{
    int i = f->nev++;
    fev e = {t, f->seq++, id};
    while (i > 0) {
        fev *p = &f->ev[(i - 1) / 2];
        if (p->t < e.t || (p->t == e.t && p->seq < e.seq)) break;
        f->ev[i] = *p;
        i = (i - 1) / 2;
    }
    f->ev[i] = e;
}

static fev fev_pop(fake *f)
{
    fev top = f->ev[0], last = f->ev[--f->nev];
    int i = 0, n = f->nev;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && (f->ev[c + 1].t < f->ev[c].t || (f->ev[c + 1].t == f->ev[c].t && f->ev[c + 1].seq < f->ev[c].seq))) c++;
        if (last.t < f->ev[c].t || (last.t == f->ev[c].t && last.seq < f->ev[c].seq)) break;
        f->ev[i] = f->ev[c];
        i = c;
    }
    if (n > 0) f->ev[i] = last;
    return top;
}

static double f_now(void *ctx) { return ((fake *)ctx)->now; }

static int f_launch(void *ctx, int v, int d, dp_error *err)
{
    fake *f = (fake *)ctx;
    const dp_graph *g = f->g;
    if (++f->launches == f->fail_launch_at) {
        err->code = DP_ERR_DEVICE;
        snprintf(err->msg, sizeof err->msg, "fake: launch %d failed", f->launches);
        return DP_ERR_DEVICE;
    }
    if (f->assign[v] != d) violate(f, "op %d launched on device %d, assigned to %d", v, d, f->assign[v]);
    if (f->busy[d] >= 0) violate(f, "op %d launched on device %d while op %d runs there", v, d, f->busy[d]);
    if (f->op_state[v] != 0) violate(f, "op %d launched twice", v);
    for (int k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
        int e = g->in_edge[k], u = g->src[e];
        if (f->assign[u] == d) {
            if (f->op_state[u] != 2 || !f->out_alive[u]) violate(f, "op %d launched before its local input %d is there (state %d, alive %d)", v, u, f->op_state[u], f->out_alive[u]);
        } else if (f->x_state[e] != 2 || !f->x_alive[e]) {
            violate(f, "op %d launched before the copy of edge %d is there", v, e);
        }
    }
    f->busy[d] = v;
    f->op_state[v] = 1;
    f->out_alive[v] = 1;
    f->start[v] = f->now;
    fev_push(f, f->now + dp_op_time(g, f->c, v, d) * f->spu, v);
    return 0;
}

static int f_copy(void *ctx, int e, dp_error *err)
{
    fake *f = (fake *)ctx;
    const dp_graph *g = f->g;
    int u = g->src[e], a = f->assign[u], b = f->assign[g->dst[e]], nd = f->c->n;
    (void)err;
    if (a == b) violate(f, "copy of edge %d within device %d", e, a);
    if (f->op_state[u] != 2 || !f->out_alive[u]) violate(f, "copy of edge %d before its producer %d is done", e, u);
    if (f->x_state[e] != 0) violate(f, "edge %d copied twice", e);
    f->x_state[e] = 1;
    f->x_alive[e] = 1;
    /* real data takes the link's time; an opaque op's copy is instant here
       (the dispatcher holds it until its modelled arrival) */
    double st = f->now, dur = g->kind[u] != DP_OP_OPAQUE ? dp_xfer_time(f->c, g->bytes[e], a, b) * f->spu : 0;
    double *pf = &f->pair_free[a * nd + b];
    if (*pf > st) st = *pf;
    *pf = st + dur;
    fev_push(f, st + dur, -1 - e);
    return 0;
}

static int f_release(void *ctx, int op, int e, dp_error *err)
{
    fake *f = (fake *)ctx;
    const dp_graph *g = f->g;
    (void)err;
    if ((op >= 0) == (e >= 0)) { violate(f, "release(%d, %d): exactly one of op and edge", op, e); return 0; }
    if (op >= 0) {
        if (!f->out_alive[op]) violate(f, "output of op %d released but not held", op);
        if (g->out_off[op + 1] == g->out_off[op]) violate(f, "output of sink %d released", op);
        for (int k = g->out_off[op]; k < g->out_off[op + 1]; k++) {
            int ed = g->out_edge[k], w = g->dst[ed];
            if (f->assign[w] == f->assign[op] ? f->op_state[w] != 2 : f->x_state[ed] != 2)
                violate(f, "output of op %d released while %s %d still needs it", op, f->assign[w] == f->assign[op] ? "op" : "the copy of edge", f->assign[w] == f->assign[op] ? w : ed);
        }
        f->out_alive[op] = 0;
        f->out_freed[op]++;
    } else {
        if (!f->x_alive[e]) violate(f, "copy of edge %d released but not held", e);
        if (f->op_state[g->dst[e]] != 2) violate(f, "copy of edge %d released before its consumer %d is done", e, g->dst[e]);
        f->x_alive[e] = 0;
        f->x_freed[e]++;
    }
    return 0;
}

static int f_wait(void *ctx, double deadline, int *done, int max, int *count, dp_error *err)
{
    fake *f = (fake *)ctx;
    *count = 0;
    if (f->nev == 0 && deadline < 0) {
        err->code = DP_ERR_GRAPH;
        snprintf(err->msg, sizeof err->msg, "fake: wait with nothing in flight");
        return DP_ERR_GRAPH;
    }
    if (deadline >= 0 && (f->nev == 0 || deadline < f->ev[0].t)) {
        if (deadline > f->now) f->now = deadline;
        return 0;
    }
    f->now = f->ev[0].t;
    while (f->nev > 0 && f->ev[0].t == f->now) {
        fev e = fev_pop(f);
        if (*count == max) { violate(f, "more completions than wait's max %d", max); break; }
        done[(*count)++] = e.id;
        if (e.id >= 0) {
            f->op_state[e.id] = 2;
            f->busy[f->assign[e.id]] = -1;
            f->end[e.id] = f->now;
        } else {
            f->x_state[-1 - e.id] = 2;
        }
    }
    return 0;
}

static void fake_init(fake *f, const dp_graph *g, const dp_cluster *c, const int *assign, double spu)
{
    int n = g->n_ops, m = g->n_edges, nd = c->n;
    memset(f, 0, sizeof *f);
    f->g = g; f->c = c; f->assign = assign; f->spu = spu;
    f->ev = (fev *)calloc((size_t)(n + m + 1), sizeof(fev));
    f->busy = (int *)malloc(sizeof(int) * (size_t)nd);
    for (int d = 0; d < nd; d++) f->busy[d] = -1;
    f->op_state = (char *)calloc((size_t)n + 1, 1); f->out_alive = (char *)calloc((size_t)n + 1, 1);
    f->out_freed = (char *)calloc((size_t)n + 1, 1); f->x_state = (char *)calloc((size_t)m + 1, 1);
    f->x_alive = (char *)calloc((size_t)m + 1, 1); f->x_freed = (char *)calloc((size_t)m + 1, 1);
    f->pair_free = (double *)calloc((size_t)nd * nd, sizeof(double));
    f->start = (double *)calloc((size_t)n + 1, sizeof(double)); f->end = (double *)calloc((size_t)n + 1, sizeof(double));
}

static void fake_free(fake *f)
{
    free(f->ev); free(f->busy); free(f->op_state); free(f->out_alive); free(f->out_freed); free(f->x_state);
    free(f->x_alive); free(f->x_freed); free(f->pair_free); free(f->start); free(f->end);
}

static dp_dispatch_hooks fake_hooks(fake *f)
{
    dp_dispatch_hooks h = {f, f_now, f_launch, f_copy, f_release, f_wait};
    return h;
}

/* After a complete run: every op ran, every buffer but the sinks' outputs
   was released exactly once, nothing else is held. */
static void check_clean(const char *what, const fake *f)
{
    const dp_graph *g = f->g;
    int bad = 0;
    for (int v = 0; v < g->n_ops; v++) {
        int sink = g->out_off[v + 1] == g->out_off[v];
        if (f->op_state[v] != 2 || f->out_freed[v] != !sink || f->out_alive[v] != sink) {
            if (bad++ < 3) printf("  %s: op %d: state %d, released %d times, held %d (sink %d)\n", what, v, f->op_state[v], f->out_freed[v], f->out_alive[v], sink);
        }
    }
    for (int e = 0; e < g->n_edges; e++) {
        int cross = f->assign[g->src[e]] != f->assign[g->dst[e]];
        if (f->x_freed[e] != cross || f->x_alive[e] || f->x_state[e] != (cross ? 2 : 0)) {
            if (bad++ < 3) printf("  %s: edge %d: copy released %d times, held %d, state %d (cross %d)\n", what, e, f->x_freed[e], f->x_alive[e], f->x_state[e], cross);
        }
    }
    CHECK(!bad, "%s: %d ops or copies not run or not released exactly once", what, bad);
    CHECK(f->violations == 0, "%s: %d violations, first: %s", what, f->violations, f->first);
}

/* One graph, one placement, one order: the dispatcher on the simulated
   device against dp_sim, op by op. */
static void check_against_sim(const char *name, const dp_graph *g, dp_cluster *c, const int *assign, dp_order order)
{
    char what[256];
    dp_error err;
    dp_sim s;
    dp_sim_opts so;
    dp_exec_opts eo;
    fake f;
    memset(&err, 0, sizeof err);
    memset(&so, 0, sizeof so);
    memset(&eo, 0, sizeof eo);
    snprintf(what, sizeof what, "%s, %d devices, %s, %s links", name, c->n, order ? "priority" : "fifo", c->link == DP_LINK_SERIAL ? "serial" : "free");
    so.order = order;
    if (dp_sim_init(&s, g, c, &err) || dp_sim_run(&s, assign, &so, &err)) { CHECK(0, "%s: sim: %s", what, err.msg); dp_sim_free(&s); return; }
    eo.order = order;
    eo.seconds_per_unit = 1;
    fake_init(&f, g, c, assign, 1);
    dp_dispatch_hooks h = fake_hooks(&f);
    double *peak = (double *)calloc((size_t)c->n, sizeof(double));
    int rc = dp_dispatch(g, c, assign, &eo, &h, peak, &err);
    CHECK(rc == 0, "%s: dispatch: %s", what, err.msg);
    if (rc == 0) {
        int bad = 0;
        for (int v = 0; v < g->n_ops; v++)
            if (f.start[v] != s.start[v] || f.end[v] != s.end[v]) {
                if (bad++ < 3) printf("  %s: op %d ran [%.17g, %.17g], the simulator says [%.17g, %.17g]\n", what, v, f.start[v], f.end[v], s.start[v], s.end[v]);
            }
        CHECK(!bad, "%s: %d ops scheduled unlike the simulator", what, bad);
        check_clean(what, &f);
        for (int d = 0; d < c->n; d++) CHECK(peak[d] >= 0, "%s: peak %g", what, peak[d]);
    }
    free(peak);
    fake_free(&f);
    dp_sim_free(&s);
}

static void check_graph(const char *name, const dp_graph *g, int real)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    for (int nd = 2; nd <= 4; nd++) {
        dp_cluster c;
        if (g->n_dev_time && nd > g->n_dev_time) continue;
        if (dp_cluster_for_graph(&c, g, nd, &err)) { CHECK(0, "%s: cluster: %s", name, err.msg); continue; }
        int *a = (int *)malloc(sizeof(int) * (size_t)g->n_ops);
        static const dp_method ms[] = {DP_METHOD_SINGLE, DP_METHOD_ROUND_ROBIN, DP_METHOD_RANDOM, DP_METHOD_CP};
        for (int mi = 0; mi < 4; mi++) {
            dp_place_opts po;
            dp_place_result pr;
            memset(&po, 0, sizeof po);
            po.seed = 11 + (uint64_t)nd;
            if (dp_place(ms[mi], g, &c, &po, a, &pr, &err)) { CHECK(0, "%s: place: %s", name, err.msg); continue; }
            char nm[200];
            snprintf(nm, sizeof nm, "%s, %s", name, dp_method_name(ms[mi]));
            for (int link = 0; link < 2; link++) {
                /* real copies take their time on a copy stream per pair:
                   one at a time, the simulator's SERIAL links */
                if (real && link == 0) continue;
                c.link = link ? DP_LINK_SERIAL : DP_LINK_FREE;
                for (int order = 0; order < 2; order++) check_against_sim(nm, g, &c, a, (dp_order)order);
            }
        }
        free(a);
        dp_cluster_free(&c);
    }
}

/* Peak bytes worked out by hand: a (100 bytes) on device 0 feeds b (50
   bytes) on device 1 over an edge of 100 bytes, and c (30 bytes) on device
   0. Device 0 holds a (100) then, while the copy is made, a and c (130);
   device 1 holds the copy (100) and b's output (50) while b runs: 150.
   With an arena of 140 bytes device 1 cannot hold both. */
static void check_bytes(void)
{
    static const op_t ops[] = {{"a", 1, 100, 0}, {"b", 1, 50, 0}, {"c", 1, 30, 0}};
    static const ed_t eds[] = {{0, 1, 100}, {0, 2, 100}};
    dp_graph g;
    dp_cluster c;
    dp_error err;
    dp_exec_opts eo;
    fake f;
    memset(&err, 0, sizeof err);
    if (dp_test_build(&g, 3, ops, 2, eds)) return;
    dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err);
    int a[3] = {0, 1, 0};
    double peak[2] = {-1, -1};
    memset(&eo, 0, sizeof eo);
    eo.seconds_per_unit = 1; eo.bytes_scale = 1;
    fake_init(&f, &g, &c, a, 1);
    dp_dispatch_hooks h = fake_hooks(&f);
    int rc = dp_dispatch(&g, &c, a, &eo, &h, peak, &err);
    CHECK(rc == 0, "bytes: dispatch: %s", err.msg);
    CHECK(peak[0] == 130 && peak[1] == 150, "bytes: peaks %g and %g, by hand 130 and 150", peak[0], peak[1]);
    check_clean("bytes", &f);
    fake_free(&f);

    eo.device_bytes = 140;
    fake_init(&f, &g, &c, a, 1);
    h = fake_hooks(&f);
    rc = dp_dispatch(&g, &c, a, &eo, &h, peak, &err);
    CHECK(rc == DP_ERR_INFEASIBLE && strstr(err.msg, "arena") && strstr(err.msg, "device 1"), "arena of 140: rc %d '%s'", rc, err.msg);
    CHECK(f.violations == 0, "arena of 140: %s", f.first);
    fake_free(&f);

    /* the cluster's memory is the default arena */
    c.memory[0] = 120;
    eo.device_bytes = 0;
    fake_init(&f, &g, &c, a, 1);
    h = fake_hooks(&f);
    rc = dp_dispatch(&g, &c, a, &eo, &h, peak, &err);
    CHECK(rc == DP_ERR_INFEASIBLE && strstr(err.msg, "device 0"), "cluster memory 120 on device 0: rc %d '%s'", rc, err.msg);
    fake_free(&f);
    c.memory[0] = 0;

    /* a failing hook: its code and message come back, nothing more starts */
    eo.device_bytes = 0;
    fake_init(&f, &g, &c, a, 1);
    f.fail_launch_at = 2;
    h = fake_hooks(&f);
    rc = dp_dispatch(&g, &c, a, &eo, &h, peak, &err);
    CHECK(rc == DP_ERR_DEVICE && !strcmp(err.msg, "fake: launch 2 failed"), "failing launch: rc %d '%s'", rc, err.msg);
    CHECK(f.launches == 2, "failing launch: %d launches, want 2 (nothing after the failure)", f.launches);
    fake_free(&f);

    /* bad arguments */
    fake_init(&f, &g, &c, a, 1);
    h = fake_hooks(&f);
    rc = dp_dispatch(&g, &c, NULL, &eo, &h, peak, &err);
    CHECK(rc == DP_ERR_ARG, "NULL assignment: rc %d", rc);
    h.wait = NULL;
    rc = dp_dispatch(&g, &c, a, &eo, &h, peak, &err);
    CHECK(rc == DP_ERR_ARG, "no wait hook: rc %d", rc);
    h = fake_hooks(&f);
    a[1] = 2;
    rc = dp_dispatch(&g, &c, a, &eo, &h, peak, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "device 2"), "device 2 of 2: rc %d '%s'", rc, err.msg);
    a[1] = 1;
    CHECK(f.launches == 0, "refused runs launched %d ops", f.launches);
    fake_free(&f);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* A copy out of an opaque op arrives at issue + latency + bytes/bandwidth,
   not when the (instant) copy completes: b starts at 1 + 2 + 8/4 = 5. */
static void check_modelled_arrival(void)
{
    static const op_t ops[] = {{"a", 1, 8, 0}, {"b", 1, 8, 0}};
    static const ed_t eds[] = {{0, 1, 8}};
    dp_graph g;
    dp_cluster c;
    dp_error err;
    dp_exec_opts eo;
    fake f;
    memset(&err, 0, sizeof err);
    if (dp_test_build(&g, 2, ops, 1, eds)) return;
    dp_cluster_homogeneous(&c, 2, 1, 4, 2, &err);
    int a[2] = {0, 1};
    memset(&eo, 0, sizeof eo);
    eo.seconds_per_unit = 1;
    fake_init(&f, &g, &c, a, 1);
    dp_dispatch_hooks h = fake_hooks(&f);
    int rc = dp_dispatch(&g, &c, a, &eo, &h, NULL, &err);
    CHECK(rc == 0 && f.start[1] == 5 && f.end[1] == 6, "modelled arrival: rc %d, b ran [%g, %g], by hand [5, 6]", rc, f.start[1], f.end[1]);
    /* twice the time scale: everything doubles */
    fake_free(&f);
    eo.seconds_per_unit = 2;
    fake_init(&f, &g, &c, a, 2);
    h = fake_hooks(&f);
    rc = dp_dispatch(&g, &c, a, &eo, &h, NULL, &err);
    CHECK(rc == 0 && f.start[1] == 10 && f.end[1] == 12, "modelled arrival, 2 s a unit: rc %d, b ran [%g, %g], by hand [10, 12]", rc, f.start[1], f.end[1]);
    fake_free(&f);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- helpers shared by the executors ----------------------------------- */
static void check_helpers(void)
{
    dp_graph g;
    dp_cluster c;
    dp_error err;
    memset(&err, 0, sizeof err);
    /* buffer sizes: a real 3x5 op holds 60 bytes; opaque ones their bytes
       times the scale, rounded, at least 8 */
    {
        dp_op_desc d;
        dp_graph_init(&g);
        memset(&d, 0, sizeof d);
        d.kind = DP_OP_INPUT; d.rows = 3; d.cols = 5; d.out_bytes = 999; d.compute = 3;
        dp_graph_add_op(&g, &d, NULL, &err);
        memset(&d, 0, sizeof d);
        d.out_bytes = 1000.6; d.compute = 1;
        dp_graph_add_op(&g, &d, NULL, &err);
        memset(&d, 0, sizeof d);
        d.out_bytes = 3.4; d.compute = 6;
        dp_graph_add_op(&g, &d, NULL, &err);
        dp_graph_add_edge(&g, 0, 1, 7, &err);
        dp_graph_add_edge(&g, 1, 2, 131072, &err);
        CHECK(dp_graph_finalize(&g, &err) == 0, "finalize: %s", err.msg);
        CHECK(dp_exec_op_bytes(&g, 0, 1) == 60 && dp_exec_op_bytes(&g, 0, 0.001) == 60, "real op bytes %zu", dp_exec_op_bytes(&g, 0, 1));
        CHECK(dp_exec_op_bytes(&g, 1, 1) == 1001 && dp_exec_op_bytes(&g, 1, 0.5) == 500, "opaque op bytes %zu, %zu", dp_exec_op_bytes(&g, 1, 1), dp_exec_op_bytes(&g, 1, 0.5));
        CHECK(dp_exec_op_bytes(&g, 2, 1) == 8, "tiny opaque op: %zu bytes, want 8", dp_exec_op_bytes(&g, 2, 1));
        CHECK(dp_exec_edge_bytes(&g, 0, 1) == 60, "edge out of a real op: %zu bytes, want its output's 60", dp_exec_edge_bytes(&g, 0, 1));
        CHECK(dp_exec_edge_bytes(&g, 1, 0.25) == 32768, "opaque edge at scale 1/4: %zu", dp_exec_edge_bytes(&g, 1, 0.25));
        /* defaults: 10 units of work at speed 2 on the fastest device is 5 s
           a run, so 0.1 s takes 0.02 s a unit; the largest buffer (131072)
           is scaled to 64 KiB */
        dp_cluster_homogeneous(&c, 2, 2, 1, 0, &err);
        c.speed[1] = 1;
        double spu = 0, bs = 0, keep = 3;
        dp_exec_scales(&g, &c, &spu, &bs);
        CHECK_NEAR(spu, 0.1 / 5, 1e-15, "default seconds per unit");
        CHECK_NEAR(bs, 0.5, 0, "default bytes scale");
        dp_exec_scales(&g, &c, &keep, NULL);
        CHECK(keep == 3, "a given seconds_per_unit is kept: %g", keep);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
    /* dp_input_value: splitmix64 of seed ^ op << 32 ^ i, top 53 bits as a
       fraction of 2, minus 1. seed 0, op 0, i 0 hashes 0 to 0: -1 exactly. */
    CHECK(dp_input_value(0, 0, 0) == -1.0f, "input value of (0, 0, 0): %.9g, by hand -1", dp_input_value(0, 0, 0));
    {
        int lo = 0, hi = 0, bad = 0;
        double sum = 0;
        for (int i = 0; i < 100000; i++) {
            float x = dp_input_value(5, i % 7, (size_t)i);
            if (!(x >= -1.0f && x < 1.0f)) bad++;
            lo += x < -0.9f; hi += x > 0.9f;
            sum += x;
        }
        CHECK(!bad, "%d input values outside [-1, 1)", bad);
        CHECK(lo > 4000 && lo < 6000 && hi > 4000 && hi < 6000, "input values not uniform: %d below -0.9, %d above 0.9 of 100000", lo, hi);
        CHECK(fabs(sum / 100000) < 0.01, "input values' mean %g", sum / 100000);
        CHECK(dp_input_value(5, 1, 3) != dp_input_value(5, 2, 3) && dp_input_value(5, 1, 3) != dp_input_value(6, 1, 3), "input values ignore the op or the seed");
    }
}

/* keep_outputs on the CPU executor, and dp_exec_compare */
static void check_outputs(void)
{
    dp_graph g;
    dp_cluster c;
    dp_error err;
    dp_exec_opts eo;
    dp_exec_result r1, r2;
    memset(&err, 0, sizeof err);
    /* X (2x3 input) -> relu (sink); X -> scale by 1/sqrt(4) (sink) */
    {
        dp_op_desc d;
        dp_graph_init(&g);
        memset(&d, 0, sizeof d);
        d.kind = DP_OP_INPUT; d.rows = 2; d.cols = 3; d.compute = 6; d.out_bytes = 24;
        dp_graph_add_op(&g, &d, NULL, &err);
        d.kind = DP_OP_RELU;
        dp_graph_add_op(&g, &d, NULL, &err);
        d.kind = DP_OP_SCALE; d.arg = 4;
        dp_graph_add_op(&g, &d, NULL, &err);
        dp_graph_add_edge(&g, 0, 1, 24, &err);
        dp_graph_add_edge(&g, 0, 2, 24, &err);
        CHECK(dp_graph_finalize(&g, &err) == 0, "finalize: %s", err.msg);
    }
    dp_cluster_homogeneous(&c, 2, 1e9, 1e10, 0, &err);
    int a[3] = {0, 1, 0};
    memset(&eo, 0, sizeof eo);
    eo.keep_outputs = 1; eo.seed = 9; eo.reps = 2;
    int rc = dp_exec_cpu(&g, &c, a, &eo, &r1, &err);
    CHECK(rc == 0, "exec: %s", err.msg);
    if (!rc) {
        CHECK(r1.outputs && !r1.outputs[0] && r1.outputs[1] && r1.outputs[2], "outputs kept: input %p relu %p scale %p",
              r1.outputs ? (void *)r1.outputs[0] : NULL, r1.outputs ? (void *)r1.outputs[1] : NULL, r1.outputs ? (void *)r1.outputs[2] : NULL);
        if (r1.outputs && r1.outputs[1] && r1.outputs[2]) {
            int bad = 0;
            for (int j = 0; j < 6; j++) {
                float x = dp_input_value(9, 0, (size_t)j);
                if (r1.outputs[1][j] != (x > 0 ? x : 0.0f) || r1.outputs[2][j] != x * 0.5f) bad++;
            }
            CHECK(!bad, "%d kept outputs differ from relu(x) and x/2", bad);
            /* the same on one device: equal; then a perturbed copy */
            int one[3] = {0, 0, 0};
            if (!dp_exec_cpu(&g, &c, one, &eo, &r2, &err)) {
                double e = -1;
                int w = -2;
                CHECK(dp_exec_compare(&g, &r2, &r1, &e, &w, &err) == 0 && e == 0, "one device against two: error %g (%s)", e, err.msg);
                float mx = 0;
                for (int j = 0; j < 6; j++) if (fabsf(r1.outputs[2][j]) > mx) mx = fabsf(r1.outputs[2][j]);
                r2.outputs[2][4] += 0.25f * mx;
                CHECK(dp_exec_compare(&g, &r2, &r1, &e, &w, &err) == 0 && fabs(e - 0.25) < 1e-6 && w == 2, "a quarter of the scale off: error %g at op %d, want 0.25 at op 2", e, w);
                r2.outputs[1][0] = NAN;
                CHECK(dp_exec_compare(&g, &r2, &r1, &e, &w, &err) == 0 && isinf(e) && w == 1, "NaN: error %g at op %d, want inf at op 1", e, w);
                float *kept = r2.outputs[1];   /* the library's memory: dp_exec_result_free frees it */
                r2.outputs[1] = NULL;
                CHECK(dp_exec_compare(&g, &r2, &r1, &e, &w, &err) == DP_ERR_ARG && strstr(err.msg, "keep_outputs"), "missing output: '%s'", err.msg);
                r2.outputs[1] = kept;
                dp_exec_result_free(&r2);
            } else CHECK(0, "exec: %s", err.msg);
        }
        dp_exec_result_free(&r1);
        CHECK(r1.outputs == NULL, "outputs not cleared by free");
    }
    /* without keep_outputs: none */
    eo.keep_outputs = 0;
    if (!dp_exec_cpu(&g, &c, a, &eo, &r1, &err)) {
        CHECK(r1.outputs == NULL, "outputs kept without keep_outputs");
        dp_exec_result_free(&r1);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);

    /* a workload's outputs: every placement gives the single-device ones bit for bit */
    dp_workload_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.kind = DP_WL_LLAMA_BLOCK; wo.parts = 2; wo.dim = 32; wo.batch = 8;
    if (dp_gen_workload(&g, &wo, &err)) { CHECK(0, "workload: %s", err.msg); return; }
    dp_cluster_homogeneous(&c, 3, 1e9, 1e10, 0, &err);
    int *one = (int *)calloc((size_t)g.n_ops, sizeof(int)), *rr = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    for (int v = 0; v < g.n_ops; v++) rr[v] = v % 3;
    memset(&eo, 0, sizeof eo);
    eo.keep_outputs = 1;
    if (!dp_exec_cpu(&g, &c, one, &eo, &r1, &err) && !dp_exec_cpu(&g, &c, rr, &eo, &r2, &err)) {
        double e = -1;
        int sinks = 0;
        for (int v = 0; v < g.n_ops; v++) sinks += r2.outputs[v] != NULL;
        CHECK(sinks == wo.parts, "llama-block keeps %d outputs, want its %d residual blocks", sinks, wo.parts);
        CHECK(dp_exec_compare(&g, &r2, &r1, &e, NULL, &err) == 0 && e == 0, "llama-block on 3 devices: error %g against one device", e);
        dp_exec_result_free(&r1);
        dp_exec_result_free(&r2);
    } else CHECK(0, "exec: %s", err.msg);
    free(one); free(rr);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

int main(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    double t0 = dp_now();
    {
        static const op_t ops[] = {{"a", 2, 2, 0}, {"b", 3, 1, 0}, {"c", 1, 1.5, 0}, {"d", 2, 0.5, 0},
                                   {"e", 1, 0.25, 0}, {"f", 4, 0.1, 0}};
        static const ed_t eds[] = {{0, 1, 2}, {0, 2, 2}, {1, 3, 1}, {2, 3, 1.5}, {3, 4, 0.5}, {2, 5, 1.5}};
        dp_graph g;
        if (!dp_test_build(&g, 6, ops, 6, eds)) check_graph("diamond", &g, 0);
        dp_graph_free(&g);
    }
    {
        /* zero-cost source and sink around 8 parallel ops */
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
        if (!dp_test_build(&g, 10, ops, m, eds)) check_graph("fan", &g, 0);
        dp_graph_free(&g);
    }
    for (int shape = 0; shape < 2; shape++) {
        dp_graph g;
        dp_gen_opts go;
        memset(&go, 0, sizeof go);
        go.shape = shape ? DP_GEN_RANDOM : DP_GEN_LAYERED; go.nodes = shape ? 60 : 80; go.ccr = shape ? 2 : 0.5; go.seed = 5 + (uint64_t)shape;
        if (dp_gen(&g, &go, &err)) CHECK(0, "gen: %s", err.msg);
        else check_graph(shape ? "random_60" : "layered_80", &g, 0);
        dp_graph_free(&g);
    }
    {
        dp_graph g;
        if (dp_graph_read(&g, "graphs/heft_example.dpg", DP_FORMAT_AUTO, &err)) CHECK(0, "read heft_example: %s", err.msg);
        else check_graph("heft_example", &g, 0);
        dp_graph_free(&g);
    }
    for (int kind = 0; kind < 4; kind++) {
        dp_graph g;
        dp_workload_opts wo;
        memset(&wo, 0, sizeof wo);
        wo.kind = (dp_workload)kind; wo.parts = 2; wo.dim = 32; wo.batch = 8; wo.layers = 2;
        if (dp_gen_workload(&g, &wo, &err)) CHECK(0, "workload: %s", err.msg);
        else {
            static const char *nm[4] = {"chainmm", "ffnn", "llama-block", "llama-layer"};
            check_graph(nm[kind], &g, 1);
        }
        dp_graph_free(&g);
    }
    check_bytes();
    check_modelled_arrival();
    check_helpers();
    check_outputs();
    printf("test_dispatch took %.1f s\n", dp_now() - t0);
    return dp_test_done();
}
