/* test_runtime.c - one runtime model: the simulator and the CPU executor
   make the same dispatch decisions.

   The CPU executor runs the dispatcher of >>dispatch (dp__rt_loop) on its
   worker threads; the simulator applies the same rule in simulated time.
   On random generated graphs (dp_gen, layered and random shapes, several
   seeds and sizes), random placements on 1, 2 and 3 devices, FIFO and
   PRIORITY order (b-level and random priorities), FREE and SERIAL links,
   with zero-cost kernels (every op costs EPS units: its busy kernel ends
   at once), each device must run its ops in the simulator's order.

   Real time decides where the simulator ties, so the graphs are made so
   that it never has to: a copy takes a whole number of units (its bytes,
   1..K, at a bandwidth of 1; latency 0), UNIT seconds each, and a
   placement (random, or random runs of the topological order) is kept
   only when the copies into each device arrive at least half a unit
   apart in the simulator (ops cost EPS, so everything a device does
   between two arrivals takes next to nothing in both). On one device there
   are no copies and the orders must agree on every graph. Other processes
   can still hold a worker thread off its core for part of a unit: a
   mismatch is retried twice before it counts as a failure.

   Then the dispatcher's other driver: dp_dispatch on a simulated clock
   written here (ops end their modelled time after they start; a copy is
   done when its transfer ends, which the clock works out itself: issued
   at once, or on a SERIAL link when the pair's previous copy is done,
   lasting latency + bytes / bandwidth; each wait returns every event at
   the earliest time, in the order they were scheduled) must reproduce
   dp_sim_run exactly, ties included: every op's start and end, and the
   copies in the simulator's order (xfers) at its times. The graphs have
   small integer costs, zero-cost ops and tied priorities, so that ties
   are everywhere; copies take at least a unit (a copy that takes no time
   arrives within the instant in the simulator, after the next launches
   through hooks). */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

#define UNIT 0.004   /* executor seconds per time unit   */
#define EPS  1e-6    /* an op's cost in units            */
#define K    8       /* a copy takes 1..K units          */

static const double *g_key;
static const int *g_dev;
static int by_device_then_start(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (g_dev[x] != g_dev[y]) return g_dev[x] - g_dev[y];
    if (g_key[x] != g_key[y]) return g_key[x] < g_key[y] ? -1 : 1;
    return x - y;
}

/* Ops grouped by device, each device's in the order they started. */
static void device_orders(const double *start, const int *assign, int n, int *out)
{
    for (int v = 0; v < n; v++) out[v] = v;
    g_key = start;
    g_dev = assign;
    qsort(out, (size_t)n, sizeof(int), by_device_then_start);
}

/* Copies into each device at least half a unit apart, and after time 0. */
static int arrivals_apart(const dp_sim *s, int nd)
{
    for (int d = 0; d < nd; d++)
        for (int i = 0; i < s->n_xfers; i++) {
            if (s->xfers[i].to != d) continue;
            if (s->xfers[i].end < 0.5) return 0;
            for (int j = i + 1; j < s->n_xfers; j++)
                if (s->xfers[j].to == d && fabs(s->xfers[i].end - s->xfers[j].end) < 0.5) return 0;
        }
    return 1;
}

static int g_configs, g_retried, g_rejected;

static void check_one(dp_gen_shape shape, int nodes, int nd, uint64_t seed, dp_link_model link)
{
    dp_error e = {0};
    dp_gen_opts go = {0};
    dp_graph g;
    dp_cluster c;
    dp_rng r;
    go.shape = shape; go.nodes = nodes; go.seed = seed; go.ccr = 1;
    if (dp_gen(&g, &go, &e)) { CHECK(0, "dp_gen: %s", e.msg); return; }
    if (dp_cluster_homogeneous(&c, nd, 1, 1, 0, &e)) { CHECK(0, "cluster: %s", e.msg); dp_graph_free(&g); return; }
    c.link = link;
    int n = g.n_ops;
    int *a = (int *)malloc(sizeof(int) * (size_t)n), *want = (int *)malloc(sizeof(int) * (size_t)n), *got = (int *)malloc(sizeof(int) * (size_t)n);
    double *prio = (double *)malloc(sizeof(double) * (size_t)n);
    dp_rng_seed(&r, seed * 7919 + (uint64_t)nd);
    for (int v = 0; v < n; v++) g.compute[v] = EPS;
    /* a placement and copy times whose arrivals the simulator keeps apart */
    int found = 0;
    for (int tries = 0; tries < 200 && !found; tries++) {
        dp_sim s;
        /* uniformly random, or (every other try, fewer copies) runs of
           the topological order on random devices */
        for (int i = 0, d = 0; i < n; i++) {
            if (tries % 2 == 0 || dp_rng_int(&r, 4) == 0) d = dp_rng_int(&r, nd);
            a[g.topo[i]] = d;
        }
        for (int k = 0; k < g.n_edges; k++) g.bytes[k] = 1 + dp_rng_int(&r, K);
        if (dp_sim_init(&s, &g, &c, &e)) break;
        found = !dp_sim_run(&s, a, NULL, &e) && arrivals_apart(&s, nd);
        dp_sim_free(&s);
    }
    if (!found) { g_rejected++; printf("  no tie-free placement: %s graph of %d ops (seed %llu), %d devices, %s links\n", shape == DP_GEN_LAYERED ? "layered" : "random", n, (unsigned long long)seed, nd, link == DP_LINK_SERIAL ? "serial" : "free"); goto out; }
    for (int v = 0; v < n; v++) prio[v] = dp_rng_uniform(&r);
    for (int mode = 0; mode < 3; mode++) {   /* FIFO, PRIORITY by b-level, PRIORITY by random priorities */
        dp_sim s;
        dp_sim_opts so;
        dp_exec_opts eo;
        memset(&so, 0, sizeof so);
        memset(&eo, 0, sizeof eo);
        so.order = eo.order = mode ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
        so.priority = eo.priority = mode == 2 ? prio : NULL;
        eo.seconds_per_unit = UNIT;
        if (dp_sim_init(&s, &g, &c, &e) || dp_sim_run(&s, a, &so, &e)) { CHECK(0, "simulator: %s", e.msg); dp_sim_free(&s); continue; }
        device_orders(s.start, a, n, want);
        int same = 0, tries;
        for (tries = 0; tries < 3 && !same; tries++) {
            dp_exec_result er;
            if (dp_exec_cpu(&g, &c, a, &eo, &er, &e)) { CHECK(0, "executor: %s", e.msg); break; }
            device_orders(er.start, a, n, got);
            same = !memcmp(want, got, sizeof(int) * (size_t)n);
            dp_exec_result_free(&er);
        }
        g_configs++;
        if (same && tries > 1) g_retried++;
        CHECK(same, "%s graph of %d ops (seed %llu), %d device(s), %s links, %s: the executor's per-device order differs from the simulator's",
              shape == DP_GEN_LAYERED ? "layered" : "random", n, (unsigned long long)seed, nd, link == DP_LINK_SERIAL ? "serial" : "free",
              mode == 0 ? "fifo" : mode == 1 ? "priority (b-level)" : "priority (random)");
        dp_sim_free(&s);
    }
out:
    free(a); free(want); free(got); free(prio);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- dp_dispatch on a simulated clock -------------------------------- */
typedef struct { double t; int id; } sev;   /* kept in the order scheduled */

typedef struct sclock {
    const dp_graph *g; const dp_cluster *c; const int *assign;
    double now;
    sev *ev; int nev;
    double *pair_free;            /* [nd*nd] SERIAL: the pair's last copy is done at */
    double *start, *end;          /* [n] as seen here                               */
    int *xe, nx;                  /* copies in the order issued                     */
    double *xs, *xend;            /* their transfer's start and end                 */
} sclock;

static double sc_now(void *ctx) { return ((sclock *)ctx)->now; }

static int sc_launch(void *ctx, int v, int d, dp_error *err)
{
    sclock *k = (sclock *)ctx;
    (void)err;
    k->start[v] = k->now;
    k->ev[k->nev].t = k->now + dp_op_time(k->g, k->c, v, d);
    k->ev[k->nev++].id = v;
    return 0;
}

static int sc_copy(void *ctx, int e, dp_error *err)
{
    sclock *k = (sclock *)ctx;
    int a = k->assign[k->g->src[e]], b = k->assign[k->g->dst[e]];
    double st = k->now;
    (void)err;
    if (k->c->link == DP_LINK_SERIAL && k->pair_free[a * k->c->n + b] > st) st = k->pair_free[a * k->c->n + b];
    k->xe[k->nx] = e; k->xs[k->nx] = st;
    k->xend[k->nx] = st + k->c->latency[a * k->c->n + b] + k->g->bytes[e] / k->c->bandwidth[a * k->c->n + b];
    k->pair_free[a * k->c->n + b] = k->xend[k->nx];
    k->ev[k->nev].t = k->xend[k->nx++];
    k->ev[k->nev++].id = -1 - e;
    return 0;
}

static int sc_release(void *ctx, int op, int e, dp_error *err) { (void)ctx; (void)op; (void)e; (void)err; return 0; }

/* Every event at the earliest time, in the order scheduled (or the
   deadline, when it comes first). */
static int sc_wait(void *ctx, double deadline, int *done, int max, int *count, dp_error *err)
{
    sclock *k = (sclock *)ctx;
    double t = deadline;
    int i, kept = 0;
    *count = 0;
    for (i = 0; i < k->nev; i++) if (t < 0 || k->ev[i].t < t) t = k->ev[i].t;
    if (t < 0) { snprintf(err->msg, sizeof err->msg, "clock: nothing scheduled"); return err->code = DP_ERR_GRAPH; }
    k->now = t;
    for (i = 0; i < k->nev; i++) {
        if (k->ev[i].t == t && *count < max) {
            done[(*count)++] = k->ev[i].id;
            if (k->ev[i].id >= 0) k->end[k->ev[i].id] = t;
        } else {
            k->ev[kept++] = k->ev[i];
        }
    }
    k->nev = kept;
    return 0;
}

/* One placement, order and link model: the dispatcher on the clock above
   against dp_sim_run. */
static void check_clocked(const dp_graph *g, dp_cluster *c, const int *a, dp_order order, const double *prio, const char *what)
{
    dp_error e = {0};
    dp_sim s;
    dp_sim_opts so = {0};
    dp_exec_opts eo = {0};
    sclock k;
    int n = g->n_ops, m = g->n_edges, nd = c->n, bad = 0;
    so.order = eo.order = order;
    so.priority = eo.priority = prio;
    eo.seconds_per_unit = 1;
    if (dp_sim_init(&s, g, c, &e) || dp_sim_run(&s, a, &so, &e)) { CHECK(0, "%s: simulator: %s", what, e.msg); dp_sim_free(&s); return; }
    memset(&k, 0, sizeof k);
    k.g = g; k.c = c; k.assign = a;
    k.ev = (sev *)malloc(sizeof(sev) * (size_t)(n + m + 1));
    k.pair_free = (double *)calloc((size_t)nd * nd, sizeof(double));
    k.start = (double *)calloc((size_t)n, sizeof(double)); k.end = (double *)calloc((size_t)n, sizeof(double));
    k.xe = (int *)malloc(sizeof(int) * (size_t)(m + 1));
    k.xs = (double *)malloc(sizeof(double) * (size_t)(m + 1)); k.xend = (double *)malloc(sizeof(double) * (size_t)(m + 1));
    dp_dispatch_hooks h = {&k, sc_now, sc_launch, sc_copy, sc_release, sc_wait};
    int rc = dp_dispatch(g, c, a, &eo, &h, NULL, &e);
    CHECK(rc == 0, "%s: dispatch: %s", what, e.msg);
    if (rc == 0) {
        for (int v = 0; v < n; v++)
            if (k.start[v] != s.start[v] || k.end[v] != s.end[v]) {
                if (bad++ < 3) printf("  %s: op %d ran [%g, %g] through hooks, [%g, %g] in the simulator\n", what, v, k.start[v], k.end[v], s.start[v], s.end[v]);
            }
        CHECK(!bad, "%s: %d ops scheduled unlike the simulator", what, bad);
        bad = k.nx != s.n_xfers;
        for (int i = 0; i < k.nx && !bad; i++)
            if (k.xe[i] != s.xfers[i].edge || k.xs[i] != s.xfers[i].start || k.xend[i] != s.xfers[i].end) {
                printf("  %s: copy %d: edge %d over [%g, %g] through hooks, edge %d over [%g, %g] in the simulator\n", what, i, k.xe[i], k.xs[i], k.xend[i],
                       s.xfers[i].edge, s.xfers[i].start, s.xfers[i].end);
                bad = 1;
            }
        CHECK(!bad, "%s: %d copies through hooks, %d in the simulator, or not in its order and times", what, k.nx, s.n_xfers);
    }
    free(k.ev); free(k.pair_free); free(k.start); free(k.end); free(k.xe); free(k.xs); free(k.xend);
    dp_sim_free(&s);
}

static int g_clocked;

static void check_clocked_graph(dp_gen_shape shape, int nodes, uint64_t seed)
{
    dp_error e = {0};
    dp_gen_opts go = {0};
    dp_graph g;
    dp_rng r;
    go.shape = shape; go.nodes = nodes; go.seed = seed; go.ccr = 1;
    if (dp_gen(&g, &go, &e)) { CHECK(0, "dp_gen: %s", e.msg); return; }
    int n = g.n_ops;
    int *a = (int *)malloc(sizeof(int) * (size_t)n);
    double *tied = (double *)malloc(sizeof(double) * (size_t)n);
    dp_rng_seed(&r, seed * 31 + (uint64_t)nodes);
    for (int v = 0; v < n; v++) { g.compute[v] = dp_rng_int(&r, 4); tied[v] = dp_rng_int(&r, 3); }
    for (int k = 0; k < g.n_edges; k++) g.bytes[k] = 1 + dp_rng_int(&r, 3);
    for (int nd = 1; nd <= 4; nd++)
        for (int lat = 0; lat < 2; lat++) {
            dp_cluster c;
            if (dp_cluster_homogeneous(&c, nd, 1, 1, lat, &e)) { CHECK(0, "cluster: %s", e.msg); continue; }
            if (nd > 2) c.speed[nd - 1] = 2;
            for (int i = 0, d = 0; i < n; i++) {      /* runs of the topological order */
                if (dp_rng_int(&r, 3) == 0) d = dp_rng_int(&r, nd);
                a[g.topo[i]] = d;
            }
            for (int link = 0; link < 2; link++)
                for (int mode = 0; mode < 3; mode++) {
                    char what[200];
                    c.link = link ? DP_LINK_SERIAL : DP_LINK_FREE;
                    snprintf(what, sizeof what, "%s graph of %d ops (seed %llu), %d device(s), latency %d, %s links, %s", shape == DP_GEN_LAYERED ? "layered" : "random",
                             n, (unsigned long long)seed, nd, lat, link ? "serial" : "free", mode == 0 ? "fifo" : mode == 1 ? "priority (b-level)" : "priority (tied)");
                    check_clocked(&g, &c, a, mode ? DP_ORDER_PRIORITY : DP_ORDER_FIFO, mode == 2 ? tied : NULL, what);
                    g_clocked++;
                }
            dp_cluster_free(&c);
        }
    free(a); free(tied);
    dp_graph_free(&g);
}

int main(void)
{
    double t0 = dp_now();
    static const int sizes[2] = {10, 20};
    for (int shape = 0; shape < 2; shape++)
        for (int si = 0; si < 2; si++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                check_one((dp_gen_shape)shape, sizes[si], 1, seed, DP_LINK_FREE);
                for (int nd = 2; nd <= 3 && seed <= 2; nd++)
                    for (int link = 0; link < 2; link++)
                        check_one((dp_gen_shape)shape, sizes[si], nd, seed, link ? DP_LINK_SERIAL : DP_LINK_FREE);
            }
    printf("test_runtime: %d configurations compared, %d needed a retry, %d graphs without a tie-free placement (skipped); %.1f s\n",
           g_configs, g_retried, g_rejected, dp_now() - t0);
    CHECK(g_rejected == 0, "%d graphs without a tie-free placement: the comparison covers too little", g_rejected);
    t0 = dp_now();
    for (int shape = 0; shape < 2; shape++)
        for (int nodes = 10; nodes <= 40; nodes += 15)
            for (uint64_t seed = 1; seed <= 4; seed++) check_clocked_graph((dp_gen_shape)shape, nodes, seed);
    printf("test_runtime: dp_dispatch on a simulated clock against dp_sim_run: %d configurations; %.1f s\n", g_clocked, dp_now() - t0);
    return dp_test_done();
}
