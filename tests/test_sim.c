/* test_sim.c - the discrete-event simulator on small graphs whose schedules
   are worked out by hand (see the runtime model at the top of doppler.h).
   Devices are d0, d1, ...; "x 2-7" means x runs from t=2 to t=7. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"



static dp_cluster cluster(int n, double speed, double bw, double lat)
{
    dp_cluster c;
    dp_error err;
    memset(&c, 0, sizeof c);
    memset(&err, 0, sizeof err);
    int rc = dp_cluster_homogeneous(&c, n, speed, bw, lat, &err);
    CHECK(rc == 0, "dp_cluster_homogeneous: %s", err.msg);
    return c;
}

/* init + run; on success the caller frees s */
static int run(dp_sim *s, const dp_graph *g, const dp_cluster *c, const int *assign,
               dp_order order, const double *prio, int track)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    memset(s, 0, sizeof *s);
    int rc = dp_sim_init(s, g, c, &err);
    CHECK(rc == 0, "dp_sim_init: %s", err.msg);
    if (rc) return rc;
    dp_sim_opts o;
    memset(&o, 0, sizeof o);
    o.order = order;
    o.priority = prio;
    o.track_memory = track;
    rc = dp_sim_run(s, assign, &o, &err);
    CHECK(rc == 0, "dp_sim_run: %s", err.msg);
    if (rc) dp_sim_free(s);
    return rc;
}

static void check_times(const dp_sim *s, int n, const double *start, const double *end,
                        const char *what)
{
    char w[128];
    for (int i = 0; i < n; i++) {
        snprintf(w, sizeof w, "%s: start of op %d", what, i);
        CHECK_NEAR(s->start[i], start[i], 1e-12, w);
        snprintf(w, sizeof w, "%s: end of op %d", what, i);
        CHECK_NEAR(s->end[i], end[i], 1e-12, w);
    }
}

static void check_xfer(const dp_sim *s, int k, int edge, int from, int to, double st,
                       double en, const char *what)
{
    CHECK(k < s->n_xfers, "%s: only %d transfers", what, s->n_xfers);
    if (k >= s->n_xfers) return;
    const dp_xfer *x = &s->xfers[k];
    CHECK(x->edge == edge && x->from == from && x->to == to,
          "%s: xfer %d is edge %d %d->%d, expected edge %d %d->%d", what, k, x->edge,
          x->from, x->to, edge, from, to);
    char w[128];
    snprintf(w, sizeof w, "%s: xfer %d start", what, k);
    CHECK_NEAR(x->start, st, 1e-12, w);
    snprintf(w, sizeof w, "%s: xfer %d end", what, k);
    CHECK_NEAR(x->end, en, 1e-12, w);
}

/* ---- 1. chain --------------------------------------------------------- */
static void test_chain(void)
{
    /* a(2) -> b(3) -> c(4), edges 7 bytes, 2 unit devices, bandwidth 1 */
    op_t ops[] = {{"a", 2, 0, 0}, {"b", 3, 0, 0}, {"c", 4, 0, 0}};
    ed_t eds[] = {{0, 1, 7}, {1, 2, 7}};
    dp_graph g;
    if (dp_test_build(&g, 3, ops, 2, eds)) return;
    dp_cluster c = cluster(2, 1, 1, 0);
    dp_sim s;
    /* all on d0: a 0-2, b 2-5, c 5-9; no transfers; busy d0 9, d1 0 */
    int all0[] = {0, 0, 0};
    if (run(&s, &g, &c, all0, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 2, 5}, en[] = {2, 5, 9};
        CHECK_NEAR(s.makespan, 9, 0, "chain on one device");
        check_times(&s, 3, st, en, "chain d0");
        CHECK(s.n_xfers == 0, "chain d0: %d transfers, expected 0", s.n_xfers);
        CHECK_NEAR(s.busy[0], 9, 0, "chain busy d0");
        CHECK_NEAR(s.busy[1], 0, 0, "chain busy d1");
        dp_sim_free(&s);
    }
    /* a d0, b d1, c d0: a 0-2, xfer 2-9 (7 bytes / 1), b 9-12, xfer 12-19,
       c 19-23 */
    int alt[] = {0, 1, 0};
    if (run(&s, &g, &c, alt, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 9, 19}, en[] = {2, 12, 23};
        CHECK_NEAR(s.makespan, 23, 0, "chain alternating");
        check_times(&s, 3, st, en, "chain alt");
        CHECK(s.n_xfers == 2, "chain alt: %d transfers, expected 2", s.n_xfers);
        check_xfer(&s, 0, 0, 0, 1, 2, 9, "chain alt");
        check_xfer(&s, 1, 1, 1, 0, 12, 19, "chain alt");
        CHECK_NEAR(s.busy[0], 6, 0, "chain alt busy d0 (2+4)");
        CHECK_NEAR(s.busy[1], 3, 0, "chain alt busy d1");
        dp_sim_free(&s);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 2. fork-join, busy time, stats ------------------------------------ */
static void test_fork_join(void)
{
    /* s(1) -> x(4), y(6) -> t(2), zero-byte edges */
    op_t ops[] = {{"s", 1, 0, 0}, {"x", 4, 0, 0}, {"y", 6, 0, 0}, {"t", 2, 0, 0}};
    ed_t eds[] = {{0, 1, 0}, {0, 2, 0}, {1, 3, 0}, {2, 3, 0}};
    dp_graph g;
    if (dp_test_build(&g, 4, ops, 4, eds)) return;
    dp_cluster c = cluster(2, 1, 1, 0);
    dp_sim s;
    /* s d0, x d0, y d1, t d0: s 0-1, x 1-5, y 1-7, t 7-9; busy d0 1+4+2=7, d1 6 */
    int a1[] = {0, 0, 1, 0};
    if (run(&s, &g, &c, a1, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 1, 1, 7}, en[] = {1, 5, 7, 9};
        CHECK_NEAR(s.makespan, 9, 0, "fork-join on two devices");
        check_times(&s, 4, st, en, "fork-join");
        CHECK_NEAR(s.busy[0], 7, 0, "fork-join busy d0");
        CHECK_NEAR(s.busy[1], 6, 0, "fork-join busy d1");
        dp_sim_free(&s);
    }
    /* all on d1: s 0-1, x 1-5 (x, y both ready at 1: lower index), y 5-11,
       t 11-13 */
    int a2[] = {1, 1, 1, 1};
    if (run(&s, &g, &c, a2, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 1, 5, 11}, en[] = {1, 5, 11, 13};
        CHECK_NEAR(s.makespan, 13, 0, "fork-join on d1");
        check_times(&s, 4, st, en, "fork-join d1");
        CHECK_NEAR(s.busy[0], 0, 0, "fork-join d1 busy d0");
        CHECK_NEAR(s.busy[1], 13, 0, "fork-join d1 busy d1");
        dp_sim_free(&s);
    }
    double mk = -1;
    dp_error err;
    CHECK(dp_simulate(&g, &c, a1, NULL, &mk, &err) == 0, "dp_simulate with NULL opts: %s", err.msg);
    CHECK_NEAR(mk, 9, 0, "dp_simulate fork-join");

    /* stats: 4 nodes, 4 edges, 1 source, 1 sink, depth 3 (s-y-t),
       total compute 13, cp 1+6+2 = 9, work 13/2 = 6.5, bound 9, bytes 0 */
    dp_stats st;
    memset(&st, 0, sizeof st);
    CHECK(dp_graph_stats(&g, &c, &st) == 0, "stats fork-join");
    CHECK(st.nodes == 4 && st.edges == 4 && st.sources == 1 && st.sinks == 1 && st.depth == 3,
          "fork-join stats nodes %d edges %d sources %d sinks %d depth %d", st.nodes,
          st.edges, st.sources, st.sinks, st.depth);
    CHECK_NEAR(st.total_compute, 13, 0, "fork-join total_compute");
    CHECK_NEAR(st.cp_length, 9, 0, "fork-join cp_length");
    CHECK_NEAR(st.work_bound, 6.5, 0, "fork-join work_bound");
    CHECK_NEAR(st.lower_bound, 9, 0, "fork-join stats lower_bound");
    CHECK_NEAR(st.total_bytes, 0, 0, "fork-join total_bytes");
    CHECK_NEAR(dp_lower_bound(&g, &c), 9, 0, "fork-join dp_lower_bound");
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 3. stats and lower bound on a graph with several sources/sinks ---- */
static void test_stats(void)
{
    /* a(1), b(2) sources; a->c(3) 1B, b->c 2B, a->d(4) 3B; e(5) isolated.
       sources a, b, e = 3; sinks c, d, e = 3; depth 2; compute 15;
       cp = max(a+c 4, b+c 5, a+d 5, e 5) = 5; bytes 6.
       2 devices: work 15/2 = 7.5 -> bound 7.5.  4 devices: 3.75 -> bound 5. */
    op_t ops[] = {{"a", 1, 0, 0}, {"b", 2, 0, 0}, {"c", 3, 0, 0}, {"d", 4, 0, 0}, {"e", 5, 0, 0}};
    ed_t eds[] = {{0, 2, 1}, {1, 2, 2}, {0, 3, 3}};
    dp_graph g;
    if (dp_test_build(&g, 5, ops, 3, eds)) return;
    dp_cluster c2 = cluster(2, 1, 1, 0), c4 = cluster(4, 1, 1, 0);
    dp_stats st;
    memset(&st, 0, sizeof st);
    CHECK(dp_graph_stats(&g, &c2, &st) == 0, "stats");
    CHECK(st.nodes == 5 && st.edges == 3 && st.sources == 3 && st.sinks == 3 && st.depth == 2,
          "stats nodes %d edges %d sources %d sinks %d depth %d", st.nodes, st.edges,
          st.sources, st.sinks, st.depth);
    CHECK_NEAR(st.total_compute, 15, 0, "total_compute");
    CHECK_NEAR(st.cp_length, 5, 0, "cp_length");
    CHECK_NEAR(st.work_bound, 7.5, 0, "work_bound 2 devices");
    CHECK_NEAR(st.lower_bound, 7.5, 0, "lower_bound 2 devices");
    CHECK_NEAR(st.total_bytes, 6, 0, "total_bytes");
    CHECK_NEAR(dp_lower_bound(&g, &c2), 7.5, 0, "dp_lower_bound 2 devices");
    CHECK_NEAR(dp_lower_bound(&g, &c4), 5, 0, "dp_lower_bound 4 devices");
    /* a chain of one op: everything 1 */
    dp_graph g1;
    op_t one[] = {{"solo", 3, 0, 0}};
    if (dp_test_build(&g1, 1, one, 0, NULL) == 0) {
        CHECK(dp_graph_stats(&g1, &c4, &st) == 0, "stats solo");
        CHECK(st.nodes == 1 && st.edges == 0 && st.sources == 1 && st.sinks == 1 && st.depth == 1,
              "solo stats %d %d %d %d %d", st.nodes, st.edges, st.sources, st.sinks, st.depth);
        CHECK_NEAR(st.cp_length, 3, 0, "solo cp");
        CHECK_NEAR(st.work_bound, 0.75, 0, "solo work bound 3/4");
        dp_graph_free(&g1);
    }
    dp_cluster_free(&c2);
    dp_cluster_free(&c4);
    dp_graph_free(&g);
}

/* ---- 4. communication on/off, latency ---------------------------------- */
static void test_comm(void)
{
    /* a(2) -> b(3), 10 bytes; bandwidth 2 -> transfer 5 */
    op_t ops[] = {{"a", 2, 10, 0}, {"b", 3, 0, 0}};
    ed_t eds[] = {{0, 1, 10}};
    dp_graph g;
    if (dp_test_build(&g, 2, ops, 1, eds)) return;
    dp_cluster c = cluster(2, 1, 2, 0);
    dp_sim s;
    int same[] = {1, 1}, diff[] = {0, 1};
    /* same device: 2 + 3 = 5, no transfer */
    if (run(&s, &g, &c, same, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 5, 0, "comm off (same device)");
        CHECK(s.n_xfers == 0, "same device: %d transfers", s.n_xfers);
        dp_sim_free(&s);
    }
    /* different: a 0-2, transfer 2-7 (10/2), b 7-10 */
    if (run(&s, &g, &c, diff, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 10, 0, "comm on (different devices)");
        CHECK_NEAR(s.start[1], 7, 0, "b starts when the tensor arrives");
        CHECK(s.n_xfers == 1, "different devices: %d transfers", s.n_xfers);
        check_xfer(&s, 0, 0, 0, 1, 2, 7, "comm");
        dp_sim_free(&s);
    }
    CHECK_NEAR(dp_xfer_time(&c, 10, 0, 1), 5, 0, "dp_xfer_time 10 bytes / 2");
    CHECK_NEAR(dp_xfer_time(&c, 10, 1, 1), 0, 0, "dp_xfer_time same device");
    dp_cluster_free(&c);

    /* latency 1.5: transfer = 1.5 + 10/2 = 6.5; a 0-2, b 8.5-11.5 */
    c = cluster(2, 1, 2, 1.5);
    if (run(&s, &g, &c, diff, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 11.5, 0, "latency + bytes/bandwidth");
        check_xfer(&s, 0, 0, 0, 1, 2, 8.5, "latency");
        dp_sim_free(&s);
    }
    /* same device: latency not paid, 5 */
    if (run(&s, &g, &c, same, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 5, 0, "latency not paid on one device");
        dp_sim_free(&s);
    }
    CHECK_NEAR(dp_xfer_time(&c, 10, 0, 1), 6.5, 0, "dp_xfer_time with latency");
    CHECK_NEAR(dp_xfer_time(&c, 0, 0, 1), 1.5, 0, "dp_xfer_time of 0 bytes = the latency");
    /* a per-pair bandwidth: d0 -> d1 at 10 B/unit: 1.5 + 10/10 = 2.5 -> b 4.5-7.5;
       the reverse direction keeps 2 */
    c.bandwidth[0 * 2 + 1] = 10;
    if (run(&s, &g, &c, diff, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 7.5, 0, "per-pair bandwidth");
        dp_sim_free(&s);
    }
    CHECK_NEAR(dp_xfer_time(&c, 10, 1, 0), 6.5, 0, "reverse pair unchanged");
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 5. free vs serial links ------------------------------------------- */
static void test_links(void)
{
    /* a(1) on d0; b(2) idx1 and c(2) idx2 on d1; edge 0 = a->c (4 B),
       edge 1 = a->b (4 B); bandwidth 1. */
    op_t ops[] = {{"a", 1, 4, 0}, {"b", 2, 0, 0}, {"c", 2, 0, 0}};
    ed_t eds[] = {{0, 2, 4}, {0, 1, 4}};
    dp_graph g;
    if (dp_test_build(&g, 3, ops, 2, eds)) return;
    dp_cluster c = cluster(2, 1, 1, 0);
    dp_sim s;
    int asg[] = {0, 1, 1};
    /* FREE: both transfers 1-5; b and c ready at 5, tie -> lower index b:
       b 5-7, c 7-9 */
    if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 5, 7}, en[] = {1, 7, 9};
        CHECK_NEAR(s.makespan, 9, 0, "free links");
        check_times(&s, 3, st, en, "free links");
        CHECK(s.n_xfers == 2, "free: %d transfers", s.n_xfers);
        check_xfer(&s, 0, 0, 0, 1, 1, 5, "free");
        check_xfer(&s, 1, 1, 0, 1, 1, 5, "free");
        dp_sim_free(&s);
    }
    /* SERIAL: both issued at 1, ties by edge index: edge 0 (a->c) 1-5,
       edge 1 (a->b) 5-9; c 5-7, b 9-11 */
    c.link = DP_LINK_SERIAL;
    if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 9, 5}, en[] = {1, 11, 7};
        CHECK_NEAR(s.makespan, 11, 0, "serial link");
        check_times(&s, 3, st, en, "serial link");
        CHECK(s.n_xfers == 2, "serial: %d transfers", s.n_xfers);
        check_xfer(&s, 0, 0, 0, 1, 1, 5, "serial");
        check_xfer(&s, 1, 1, 0, 1, 5, 9, "serial");
        dp_sim_free(&s);
    }
    dp_cluster_free(&c);
    /* SERIAL with different destinations: links (0,1) and (0,2) are separate,
       both transfers 1-5; b on d1 5-7, c on d2 5-7 */
    c = cluster(3, 1, 1, 0);
    c.link = DP_LINK_SERIAL;
    int asg3[] = {0, 1, 2};
    if (run(&s, &g, &c, asg3, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 7, 0, "serial, two different links");
        CHECK_NEAR(s.start[1], 5, 0, "serial two links: b start");
        CHECK_NEAR(s.start[2], 5, 0, "serial two links: c start");
        dp_sim_free(&s);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 6. FIFO vs PRIORITY ------------------------------------------------ */
static void test_order(void)
{
    /* r(1) idx0 d0; p(3) idx1 d0 (leaf); q(1) idx2 d0 -> w(5) idx3 d1.
       Edges r->p, r->q, q->w with 0 bytes.  2 unit devices. */
    op_t ops[] = {{"r", 1, 0, 0}, {"p", 3, 0, 0}, {"q", 1, 0, 0}, {"w", 5, 0, 0}};
    ed_t eds[] = {{0, 1, 0}, {0, 2, 0}, {2, 3, 0}};
    dp_graph g;
    if (dp_test_build(&g, 4, ops, 3, eds)) return;
    dp_cluster c = cluster(2, 1, 1, 0);
    dp_sim s;
    int asg[] = {0, 0, 0, 1};
    /* FIFO: p, q ready at 1, tie -> lower index p: p 1-4, q 4-5, w 5-10 */
    if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 1, 4, 5}, en[] = {1, 4, 5, 10};
        CHECK_NEAR(s.makespan, 10, 0, "FIFO");
        check_times(&s, 4, st, en, "FIFO");
        dp_sim_free(&s);
    }
    /* PRIORITY with b-level (NULL): b(p) = 3, b(q) = 1 + 0 + 5 = 6 -> q first:
       q 1-2, p 2-5, w 2-7 */
    if (run(&s, &g, &c, asg, DP_ORDER_PRIORITY, NULL, 0) == 0) {
        double st[] = {0, 2, 1, 2}, en[] = {1, 5, 2, 7};
        CHECK_NEAR(s.makespan, 7, 0, "PRIORITY (b-level)");
        check_times(&s, 4, st, en, "PRIORITY b-level");
        dp_sim_free(&s);
    }
    /* explicit priorities favouring p give the FIFO schedule back (10);
       favouring q give 7 */
    double pp[] = {0, 5, 1, 0}, pq[] = {0, 1, 5, 0};
    if (run(&s, &g, &c, asg, DP_ORDER_PRIORITY, pp, 0) == 0) {
        CHECK_NEAR(s.makespan, 10, 0, "PRIORITY favouring p");
        dp_sim_free(&s);
    }
    if (run(&s, &g, &c, asg, DP_ORDER_PRIORITY, pq, 0) == 0) {
        CHECK_NEAR(s.makespan, 7, 0, "PRIORITY favouring q");
        dp_sim_free(&s);
    }
    double bl[4];
    CHECK(dp_blevel(&g, &c, bl) == 0, "blevel");
    /* b-levels: w 5, q 6, p 3, r 1 + max(3, 6) = 7 */
    CHECK_NEAR(bl[0], 7, 0, "blevel r");
    CHECK_NEAR(bl[1], 3, 0, "blevel p");
    CHECK_NEAR(bl[2], 6, 0, "blevel q");
    CHECK_NEAR(bl[3], 5, 0, "blevel w");
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 7. FIFO is by ready time, not by index ----------------------------- */
static void test_fifo_ready_time(void)
{
    /* d0: a(2) idx0 source, y(1) idx1 (child of b), x(1) idx3 source;
       d1: b(1) idx2 source; b -> y 0.5 bytes, bandwidth 1.
       t0: d0 ready {a, x} -> a 0-2; d1 b 0-1; y ready at 1.5.
       FIFO at t2: x (ready 0) before y (ready 1.5): x 2-3, y 3-4.
       PRIORITY {10,5,0,1}: y (5) before x (1): y 2-3, x 3-4. */
    op_t ops[] = {{"a", 2, 0, 0}, {"y", 1, 0, 0}, {"b", 1, 0.5, 0}, {"x", 1, 0, 0}};
    ed_t eds[] = {{2, 1, 0.5}};
    dp_graph g;
    if (dp_test_build(&g, 4, ops, 1, eds)) return;
    dp_cluster c = cluster(2, 1, 1, 0);
    dp_sim s;
    int asg[] = {0, 0, 1, 0};
    if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 3, 0, 2}, en[] = {2, 4, 1, 3};
        check_times(&s, 4, st, en, "FIFO by ready time");
        dp_sim_free(&s);
    }
    /* equal priorities: ties by ready time, i.e. the FIFO schedule */
    double flat[] = {0, 0, 0, 0};
    if (run(&s, &g, &c, asg, DP_ORDER_PRIORITY, flat, 0) == 0) {
        double st[] = {0, 3, 0, 2}, en[] = {2, 4, 1, 3};
        check_times(&s, 4, st, en, "PRIORITY all equal -> by ready time");
        dp_sim_free(&s);
    }
    double pr[] = {10, 5, 0, 1};
    if (run(&s, &g, &c, asg, DP_ORDER_PRIORITY, pr, 0) == 0) {
        double st[] = {0, 2, 0, 3}, en[] = {2, 3, 1, 4};
        check_times(&s, 4, st, en, "PRIORITY explicit");
        dp_sim_free(&s);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 8. events at one instant are applied before devices pick ----------- */
static void test_simultaneous(void)
{
    /* d1: p(2) idx0 source; d0: q(1) idx1 source; r(1) idx2 on d1, child of
       q over 1 byte (bandwidth 1) -> input arrives at 2; s(1) idx3 on d1,
       child of p (local) -> ready at 2.  At t=2 both the completion of p and
       the arrival for r happen; both ready at 2, tie -> lower index r:
       r 2-3, s 3-4. */
    op_t ops[] = {{"p", 2, 0, 0}, {"q", 1, 1, 0}, {"r", 1, 0, 0}, {"s", 1, 0, 0}};
    ed_t eds[] = {{1, 2, 1}, {0, 3, 0}};
    dp_graph g;
    if (dp_test_build(&g, 4, ops, 2, eds)) return;
    dp_cluster c = cluster(2, 1, 1, 0);
    dp_sim s;
    int asg[] = {1, 0, 1, 1};
    if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 0, 2, 3}, en[] = {2, 1, 3, 4};
        CHECK_NEAR(s.makespan, 4, 0, "simultaneous events");
        check_times(&s, 4, st, en, "simultaneous events");
        dp_sim_free(&s);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 9. heterogeneous speeds ------------------------------------------- */
static void test_speeds(void)
{
    /* a(6) -> b(4), 0 bytes; speeds d0 1, d1 2. */
    op_t ops[] = {{"a", 6, 0, 0}, {"b", 4, 0, 0}};
    ed_t eds[] = {{0, 1, 0}};
    dp_graph g;
    if (dp_test_build(&g, 2, ops, 1, eds)) return;
    dp_cluster c = cluster(2, 1, 1, 0);
    c.speed[1] = 2;
    CHECK_NEAR(dp_op_time(&g, &c, 0, 0), 6, 0, "op time a on d0");
    CHECK_NEAR(dp_op_time(&g, &c, 0, 1), 3, 0, "op time a on d1 (6/2)");
    CHECK_NEAR(dp_op_time(&g, &c, 1, 1), 2, 0, "op time b on d1 (4/2)");
    CHECK(dp_fastest_device(&g, &c, 0) == 1, "fastest device of a");
    dp_sim s;
    /* a d1 0-3, b d0 3-7 */
    int asg[] = {1, 0};
    if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 0) == 0) {
        double st[] = {0, 3}, en[] = {3, 7};
        CHECK_NEAR(s.makespan, 7, 0, "heterogeneous speeds");
        check_times(&s, 2, st, en, "speeds");
        CHECK_NEAR(s.busy[0], 4, 0, "busy d0");
        CHECK_NEAR(s.busy[1], 3, 0, "busy d1");
        dp_sim_free(&s);
    }
    /* lower bound: cp on fastest = 3 + 2 = 5; work (3+2)/2 = 2.5 -> 5 */
    CHECK_NEAR(dp_lower_bound(&g, &c), 5, 0, "lower bound, speeds");
    /* b-level: mean times a (6+3)/2 = 4.5, b (4+2)/2 = 3 -> a 7.5, b 3 */
    double bl[2];
    CHECK(dp_blevel(&g, &c, bl) == 0, "blevel");
    CHECK_NEAR(bl[0], 7.5, 0, "blevel a, speeds");
    CHECK_NEAR(bl[1], 3, 0, "blevel b, speeds");
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 10. per-device time override ------------------------------------- */
static void test_dev_time(void)
{
    /* a compute 8, times {5, -1}; b compute 3, times {-1, 1}; speeds {1, 2}.
       op time: a d0 5 (override), a d1 8/2 = 4; b d0 3/1 = 3, b d1 1. */
    dp_graph g;
    dp_error err;
    memset(&err, 0, sizeof err);
    dp_graph_init(&g);
    double ta[2] = {5, -1}, tb[2] = {-1, 1};
    dp_op_desc d;
    memset(&d, 0, sizeof d);
    d.name = "a"; d.compute = 8; d.dev_time = ta; d.n_dev_time = 2;
    int id;
    CHECK(dp_graph_add_op(&g, &d, &id, &err) == 0, "add a: %s", err.msg);
    d.name = "b"; d.compute = 3; d.dev_time = tb;
    CHECK(dp_graph_add_op(&g, &d, &id, &err) == 0, "add b: %s", err.msg);
    CHECK(dp_graph_add_edge(&g, 0, 1, 0, &err) == 0, "edge: %s", err.msg);
    if (dp_graph_finalize(&g, &err) != 0) {
        CHECK(0, "finalize: %s", err.msg);
        dp_graph_free(&g);
        return;
    }
    CHECK(g.n_dev_time == 2, "n_dev_time %d", g.n_dev_time);
    dp_cluster c = cluster(2, 1, 1, 0);
    c.speed[1] = 2;
    CHECK(dp_check(&g, &c, &err) == 0, "dp_check: %s", err.msg);
    CHECK_NEAR(dp_op_time(&g, &c, 0, 0), 5, 0, "override a d0");
    CHECK_NEAR(dp_op_time(&g, &c, 0, 1), 4, 0, "a d1 = compute/speed");
    CHECK_NEAR(dp_op_time(&g, &c, 1, 0), 3, 0, "b d0 = compute/speed");
    CHECK_NEAR(dp_op_time(&g, &c, 1, 1), 1, 0, "override b d1");
    CHECK(dp_fastest_device(&g, &c, 0) == 1, "fastest a (4 < 5)");
    dp_sim s;
    int a01[] = {0, 1}, a11[] = {1, 1}, a10[] = {1, 0};
    /* a d0 0-5, b d1 5-6 */
    if (run(&s, &g, &c, a01, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 6, 0, "dev_time: a d0, b d1");
        dp_sim_free(&s);
    }
    /* a d1 0-4, b d1 4-5 */
    if (run(&s, &g, &c, a11, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 5, 0, "dev_time: both d1");
        dp_sim_free(&s);
    }
    /* a d1 0-4, b d0 4-7 */
    if (run(&s, &g, &c, a10, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK_NEAR(s.makespan, 7, 0, "dev_time: a d1, b d0");
        dp_sim_free(&s);
    }
    /* lower bound: 4 + 1 = 5 (work (4+1)/2 = 2.5) */
    CHECK_NEAR(dp_lower_bound(&g, &c), 5, 0, "lower bound with overrides");
    dp_cluster_free(&c);
    /* a cluster with more devices than time columns does not fit the graph */
    c = cluster(3, 1, 1, 0);
    memset(&err, 0, sizeof err);
    CHECK(dp_check(&g, &c, &err) != 0 && err.code != DP_OK && err.msg[0],
          "dp_check accepts 3 devices for 2 time columns");
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 11. memory peaks --------------------------------------------------- */
static void test_memory(void)
{
    dp_sim s;
    /* Chain on d0: a(1, out 100, ws 10) -> b(1, out 50, ws 20) -> c(1, out 30, ws 5).
       t0 a starts: 100+10 = 110
       t1 a ends: -10 -> 100; b starts: +50+20 -> 170
       t2 b ends: -20, a's output freed (b done) -100 -> 50; c: +30+5 -> 85
       t3 c ends: -5, b's output freed -> 30 (c's output stays).
       peak d0 = 170 (it would be 205 if allocations at t=2 came before
       the frees), d1 = 0. */
    {
        op_t ops[] = {{"a", 1, 100, 10}, {"b", 1, 50, 20}, {"c", 1, 30, 5}};
        ed_t eds[] = {{0, 1, 100}, {1, 2, 50}};
        dp_graph g;
        if (dp_test_build(&g, 3, ops, 2, eds) == 0) {
            dp_cluster c = cluster(2, 1, 1, 0);
            int asg[] = {0, 0, 0};
            if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 1) == 0) {
                CHECK_NEAR(s.peak_bytes[0], 170, 0, "memory chain peak d0");
                CHECK_NEAR(s.peak_bytes[1], 0, 0, "memory chain peak d1");
                CHECK_NEAR(s.makespan, 3, 0, "memory chain makespan");
                dp_sim_free(&s);
            }
            dp_cluster_free(&c);
            dp_graph_free(&g);
        }
    }
    /* Across devices, bandwidth 100:
       a(1, out 100) d0 -> b(2, out 40) d1 (edge 100 B: 1 time unit)
       a -> c(5, out 10) d0 (local);  c -> f(1, out 200) d0 (local).
       d0: t0 a +100 = 100; t1 c +10 = 110; copy to d1 issued at 1, done at 2;
           t6 c ends: a's output freed (c done, copy done) -> 10; f +200 -> 210;
           t7 f ends: c's output freed -> 200.  peak 210 (310 if a's output
           were never freed).
       d1: t1 copy buffer +100; t2 b +40 -> 140; t4 b ends: buffer freed -> 40.
           peak 140 (100 if the buffer were freed on arrival). */
    {
        op_t ops[] = {{"a", 1, 100, 0}, {"b", 2, 40, 0}, {"c", 5, 10, 0}, {"f", 1, 200, 0}};
        ed_t eds[] = {{0, 1, 100}, {0, 2, 100}, {2, 3, 10}};
        dp_graph g;
        if (dp_test_build(&g, 4, ops, 3, eds) == 0) {
            dp_cluster c = cluster(2, 1, 100, 0);
            int asg[] = {0, 1, 0, 0};
            if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 1) == 0) {
                CHECK_NEAR(s.peak_bytes[0], 210, 0, "memory cross-device peak d0");
                CHECK_NEAR(s.peak_bytes[1], 140, 0, "memory cross-device peak d1");
                /* a 0-1, c 1-6, f 6-7; b 2-4 -> 7 */
                CHECK_NEAR(s.makespan, 7, 0, "memory cross-device makespan");
                double mk1 = s.makespan;
                dp_sim_free(&s);
                /* memory tracking does not change the schedule */
                if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 0) == 0) {
                    CHECK(s.makespan == mk1, "track_memory changes makespan");
                    dp_sim_free(&s);
                }
            }
            /* static memory: d0 = outputs 100+10+200 = 310 (no received tensors);
               d1 = 40 + one copy of a's tensor 100 = 140 */
            double sm[2] = {-1, -1};
            CHECK(dp_static_memory(&g, &c, asg, sm) == 0, "dp_static_memory");
            CHECK_NEAR(sm[0], 310, 0, "static memory d0");
            CHECK_NEAR(sm[1], 140, 0, "static memory d1");
            dp_cluster_free(&c);
            dp_graph_free(&g);
        }
    }
}

/* ---- 11b. memory: an output lives until its copies are done ------------ */
static void test_memory_copies(void)
{
    dp_sim s;
    /* a(1, out 100) d0 -> b(1, out 5) d1 [100 B at bandwidth 10: 10 units];
       a -> c(1, out 10) d0; c -> f(1, out 50) d0.
       d0: t0 a +100; t1 c +10 -> 110 (copy issued, runs 1-11);
           t2 c ends, a's output still being copied; f +50 -> 160;
           t3 f ends: c's output freed -> 150; t11 copy done: a freed -> 50.
           peak 160 (110 if a's output were freed when c finished).
       d1: t1 buffer +100; t11 b +5 -> 105; t12 buffer freed -> 5. peak 105. */
    {
        op_t ops[] = {{"a", 1, 100, 0}, {"b", 1, 5, 0}, {"c", 1, 10, 0}, {"f", 1, 50, 0}};
        ed_t eds[] = {{0, 1, 100}, {0, 2, 100}, {2, 3, 10}};
        dp_graph g;
        if (dp_test_build(&g, 4, ops, 3, eds) == 0) {
            dp_cluster c = cluster(2, 1, 10, 0);
            int asg[] = {0, 1, 0, 0};
            if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 1) == 0) {
                CHECK_NEAR(s.makespan, 12, 0, "copy-lifetime makespan");
                CHECK_NEAR(s.peak_bytes[0], 160, 0, "output kept until its copy is done (d0)");
                CHECK_NEAR(s.peak_bytes[1], 105, 0, "copy buffer until its consumer ends (d1)");
                dp_sim_free(&s);
            }
            dp_cluster_free(&c);
            dp_graph_free(&g);
        }
    }
    /* SERIAL link, three copies of a(1, out 4) d0 to d1, all issued at t=1:
       edge 0 a->c 1-5, edge 1 a->b 5-9, edge 2 a->d 9-13 (4 B, bandwidth 1);
       c 5-6, b 9-10, d 13-14 (compute 1 each, no outputs).
       d1: the three buffers are allocated at issue (t=1): 12; freed at 6,
       10, 14.  peak 12 (it would be 8 if allocated when each copy starts).
       d0: a's 4 bytes until the last copy is done: peak 4. */
    {
        op_t ops[] = {{"a", 1, 4, 0}, {"b", 1, 0, 0}, {"c", 1, 0, 0}, {"d", 1, 0, 0}};
        ed_t eds[] = {{0, 2, 4}, {0, 1, 4}, {0, 3, 4}};
        dp_graph g;
        if (dp_test_build(&g, 4, ops, 3, eds) == 0) {
            dp_cluster c = cluster(2, 1, 1, 0);
            c.link = DP_LINK_SERIAL;
            int asg[] = {0, 1, 1, 1};
            if (run(&s, &g, &c, asg, DP_ORDER_FIFO, NULL, 1) == 0) {
                double st[] = {0, 9, 5, 13}, en[] = {1, 10, 6, 14};
                check_times(&s, 4, st, en, "serial three copies");
                CHECK_NEAR(s.makespan, 14, 0, "serial three copies makespan");
                CHECK_NEAR(s.peak_bytes[1], 12, 0, "buffers allocated at issue (serial)");
                CHECK_NEAR(s.peak_bytes[0], 4, 0, "source output on d0");
                check_xfer(&s, 2, 2, 0, 1, 9, 13, "serial three copies");
                dp_sim_free(&s);
            }
            dp_cluster_free(&c);
            dp_graph_free(&g);
        }
    }
}

/* ---- 12. repeated runs on one dp_sim ------------------------------------ */
static void test_repeat(void)
{
    op_t ops[] = {{"s", 1, 3, 2}, {"x", 4, 5, 0}, {"y", 6, 1, 1}, {"t", 2, 1, 0}, {"u", 3, 2, 0}};
    ed_t eds[] = {{0, 1, 3}, {0, 2, 3}, {1, 3, 5}, {2, 3, 1}, {0, 4, 3}, {4, 3, 2}};
    dp_graph g;
    if (dp_test_build(&g, 5, ops, 6, eds)) return;
    dp_cluster c = cluster(3, 1, 1, 0.25);
    c.link = DP_LINK_SERIAL;
    dp_sim s;
    dp_error err;
    memset(&s, 0, sizeof s);
    if (dp_sim_init(&s, &g, &c, &err) != 0) {
        CHECK(0, "init: %s", err.msg);
    } else {
        int a1[] = {0, 1, 2, 0, 1}, a2[] = {2, 2, 0, 1, 0};
        dp_sim_opts o;
        memset(&o, 0, sizeof o);
        o.track_memory = 1;
        double mk, st[5], en[5], busy[3], peak[3];
        dp_xfer xf[16];
        int nx;
        CHECK(dp_sim_run(&s, a1, &o, &err) == 0, "run 1: %s", err.msg);
        mk = s.makespan;
        memcpy(st, s.start, sizeof st);
        memcpy(en, s.end, sizeof en);
        memcpy(busy, s.busy, sizeof busy);
        memcpy(peak, s.peak_bytes, sizeof peak);
        nx = s.n_xfers;
        CHECK(nx <= 16, "n_xfers %d", nx);
        if (nx > 16) nx = 16;
        memcpy(xf, s.xfers, sizeof(dp_xfer) * (size_t)nx);
        for (int rep = 0; rep < 3; rep++) {
            CHECK(dp_sim_run(&s, a2, &o, &err) == 0, "run other: %s", err.msg);
            o.order = DP_ORDER_PRIORITY;
            CHECK(dp_sim_run(&s, a2, &o, &err) == 0, "run other prio: %s", err.msg);
            o.order = DP_ORDER_FIFO;
            CHECK(dp_sim_run(&s, a1, &o, &err) == 0, "run again: %s", err.msg);
            CHECK(memcmp(&mk, &s.makespan, sizeof mk) == 0, "repeat makespan %.17g vs %.17g",
                  s.makespan, mk);
            CHECK(memcmp(st, s.start, sizeof st) == 0 && memcmp(en, s.end, sizeof en) == 0,
                  "repeat start/end differ");
            CHECK(memcmp(busy, s.busy, sizeof busy) == 0, "repeat busy differs");
            CHECK(memcmp(peak, s.peak_bytes, sizeof peak) == 0, "repeat peak differs");
            CHECK(s.n_xfers == nx && memcmp(xf, s.xfers, sizeof(dp_xfer) * (size_t)nx) == 0,
                  "repeat transfers differ");
        }
        /* by hand, a1 = s d0, x d1, y d2, t d0, u d1; serial, latency 0.25:
           s 0-1; s->x (3 B) on link 0->1: 1-4.25; s->y (0->2): 1-4.25;
           s->u (0->1, edge 4) after edge 0: 4.25-7.5.
           x d1 4.25-8.25; y d2 4.25-10.25; u d1 8.25-11.25 (ready 7.5, d1 busy
           until 8.25).  x->t (d1->d0, 5 B): 8.25-13.5; y->t (d2->d0, 1 B):
           10.25-11.5; u->t (d1->d0, 2 B): after edge 2 on link 1->0: 13.5-15.75.
           t d0 15.75-17.75. */
        CHECK_NEAR(mk, 17.75, 0, "serial + latency hand schedule");
        CHECK_NEAR(st[4], 8.25, 0, "u start");
        CHECK_NEAR(st[3], 15.75, 0, "t start");
        /* without transfer records (as the searches score): the same
           schedule, n_xfers 0; recorded again on the next run that asks */
        CHECK(nx == 6, "a1 moves 6 tensors between devices (%d)", nx);
        o.no_xfers = 1;
        CHECK(dp_sim_run(&s, a1, &o, &err) == 0, "run without records: %s", err.msg);
        CHECK(s.n_xfers == 0 && memcmp(&mk, &s.makespan, sizeof mk) == 0 && memcmp(st, s.start, sizeof st) == 0 &&
              memcmp(en, s.end, sizeof en) == 0 && memcmp(busy, s.busy, sizeof busy) == 0,
              "no_xfers: %d records, makespan %.17g (%.17g)", s.n_xfers, s.makespan, mk);
        o.no_xfers = 0;
        CHECK(dp_sim_run(&s, a1, &o, &err) == 0 && s.n_xfers == nx && memcmp(xf, s.xfers, sizeof(dp_xfer) * (size_t)nx) == 0,
              "records again: %d transfers (%d)", s.n_xfers, nx);
        dp_sim_free(&s);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 12b. a run without counting bytes, and one with a stop bound -------- */
/* Without track_memory and transfer records, on free links, a copy's
   arrival is no event of its own (its consumer is ready at its latest
   input, one event): the schedule is the one the tracked run makes,
   which keeps an event per copy, bit for bit, on generated graphs, both
   orders (serial links: an event per copy in both). A stop bound at the
   makespan stops nothing; one below it stops the run, no makespan. */
static void test_untracked(void)
{
    for (int gi = 0; gi < 16; gi++) {
        dp_gen_opts go;
        dp_graph g;
        dp_error err;
        memset(&go, 0, sizeof go);
        go.nodes = 60 + 20 * gi;
        go.shape = gi % 2 ? DP_GEN_RANDOM : DP_GEN_LAYERED;
        go.ccr = gi % 4 == 0 ? 0 : 0.25 * gi;
        go.seed = 500 + (uint64_t)gi;
        if (dp_gen(&g, &go, &err) != 0) { CHECK(0, "gen: %s", err.msg); continue; }
        dp_cluster c = cluster(2 + gi % 3, 1, 1, gi % 3 == 1 ? 0.5 : 0);
        if (gi % 4 >= 2) c.link = DP_LINK_SERIAL;
        int n = g.n_ops, *asg = (int *)malloc(sizeof(int) * (size_t)n);
        double *st = (double *)malloc(sizeof(double) * (size_t)n), *en = (double *)malloc(sizeof(double) * (size_t)n);
        dp_rng rng;
        dp_rng_seed(&rng, 77 + (uint64_t)gi);
        for (int v = 0; v < n; v++) asg[v] = (int)(dp_rng_next(&rng) % (uint64_t)c.n);
        dp_sim s;
        if (st && en && asg && dp_sim_init(&s, &g, &c, &err) == 0) {
            for (int ord = 0; ord < 2; ord++) {
                dp_sim_opts o;
                memset(&o, 0, sizeof o);
                o.order = ord ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
                o.track_memory = 1;
                CHECK(dp_sim_run(&s, asg, &o, &err) == 0, "tracked run: %s", err.msg);
                double mk = s.makespan;
                memcpy(st, s.start, sizeof(double) * (size_t)n);
                memcpy(en, s.end, sizeof(double) * (size_t)n);
                o.track_memory = 0;
                o.no_xfers = 1;
                CHECK(dp_sim_run(&s, asg, &o, &err) == 0, "untracked run: %s", err.msg);
                CHECK(memcmp(&mk, &s.makespan, sizeof mk) == 0 && memcmp(st, s.start, sizeof(double) * (size_t)n) == 0 &&
                      memcmp(en, s.end, sizeof(double) * (size_t)n) == 0,
                      "graph %d order %d: untracked makespan %.17g, tracked %.17g (or the starts and ends differ)", gi, ord, s.makespan, mk);
                CHECK(dp__sim_run(&s, asg, &o, mk, &err) == 0 && s.makespan == mk, "graph %d: stop at the makespan stopped it (%g)", gi, s.makespan);
                CHECK(dp__sim_run(&s, asg, &o, mk * (1 - 1e-6), &err) == 0 && s.makespan == HUGE_VAL, "graph %d: stop below the makespan: %g", gi, s.makespan);
            }
            dp_sim_free(&s);
        } else CHECK(0, "graph %d: allocation or dp_sim_init failed", gi);
        free(asg); free(st); free(en);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
}

/* ---- 13. bad arguments --------------------------------------------------- */
static void test_bad_args(void)
{
    op_t ops[] = {{"a", 1, 0, 0}, {"b", 1, 0, 0}};
    ed_t eds[] = {{0, 1, 0}};
    dp_graph g;
    if (dp_test_build(&g, 2, ops, 1, eds)) return;
    dp_cluster c = cluster(2, 1, 1, 0);
    dp_sim s;
    dp_error err;
    memset(&s, 0, sizeof s);
    if (dp_sim_init(&s, &g, &c, &err) == 0) {
        int bad[] = {0, 2}, neg[] = {-1, 0};
        dp_sim_opts o;
        memset(&o, 0, sizeof o);
        memset(&err, 0, sizeof err);
        CHECK(dp_sim_run(&s, bad, &o, &err) != 0 && err.code != DP_OK,
              "device 2 of 2 accepted by dp_sim_run");
        memset(&err, 0, sizeof err);
        CHECK(dp_sim_run(&s, neg, &o, &err) != 0 && err.code != DP_OK,
              "device -1 accepted by dp_sim_run");
        /* still usable after a refused run */
        int ok[] = {0, 1};
        CHECK(dp_sim_run(&s, ok, &o, &err) == 0 && s.makespan == 2,
              "run after refusal: %s", err.msg);
        dp_sim_free(&s);
    }
    /* builder refusals */
    dp_graph h;
    dp_graph_init(&h);
    dp_op_desc d;
    memset(&d, 0, sizeof d);
    d.name = "only";
    int id;
    CHECK(dp_graph_add_op(&h, &d, &id, &err) == 0, "add only");
    memset(&err, 0, sizeof err);
    CHECK(dp_graph_add_edge(&h, 0, 5, 1, &err) != 0 && err.code != DP_OK, "edge to op 5 accepted");
    memset(&err, 0, sizeof err);
    CHECK(dp_graph_add_edge(&h, 0, 0, 1, &err) != 0 && err.code != DP_OK, "self loop accepted");
    memset(&err, 0, sizeof err);
    d.name = "neg"; d.compute = -1;
    CHECK(dp_graph_add_op(&h, &d, &id, &err) != 0 && err.code == DP_ERR_RANGE,
          "negative compute accepted (code %d)", (int)err.code);
    d.compute = NAN;
    memset(&err, 0, sizeof err);
    CHECK(dp_graph_add_op(&h, &d, &id, &err) != 0 && err.code == DP_ERR_RANGE,
          "NaN compute accepted (code %d)", (int)err.code);
    d.name = "only"; d.compute = 1;
    memset(&err, 0, sizeof err);
    CHECK(dp_graph_add_op(&h, &d, &id, &err) != 0 && err.code == DP_ERR_GRAPH &&
          strstr(err.msg, "only"), "duplicate name accepted (code %d: %s)", (int)err.code, err.msg);
    d.name = "has space";
    memset(&err, 0, sizeof err);
    CHECK(dp_graph_add_op(&h, &d, &id, &err) != 0, "name with a space accepted");
    dp_graph_free(&h);
    /* cycle via the builder */
    dp_graph_init(&h);
    const char *nm[] = {"c0", "c1", "c2"};
    for (int i = 0; i < 3; i++) {
        d.name = nm[i]; d.compute = 1;
        dp_graph_add_op(&h, &d, &id, &err);
    }
    dp_graph_add_edge(&h, 0, 1, 0, &err);
    dp_graph_add_edge(&h, 1, 2, 0, &err);
    dp_graph_add_edge(&h, 2, 1, 0, &err);
    memset(&err, 0, sizeof err);
    CHECK(dp_graph_finalize(&h, &err) == DP_ERR_CYCLE && err.code == DP_ERR_CYCLE &&
          (strstr(err.msg, "c1") || strstr(err.msg, "c2")),
          "cycle c1->c2->c1 not reported with an op on it: code %d '%s'", (int)err.code, err.msg);
    dp_graph_free(&h);
    /* NULL err is allowed */
    dp_graph_init(&h);
    d.name = "z"; d.compute = -5;
    CHECK(dp_graph_add_op(&h, &d, &id, NULL) != 0, "negative compute with NULL err");
    dp_graph_free(&h);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* Costs near the largest double (1.797e308): every cost finite, their
   sums not. dp_graph_finalize refuses a total compute of 1e308 + 1e308;
   dp_check (so dp_sim_init and the placers) refuses a graph and cluster
   whose op times, or their sum with the transfers', are not finite,
   naming the op or edge; the simulator names an op that finishes at inf
   when the cluster changed after dp_sim_init. */
static int has(const dp_error *e, const char *what) { return strstr(e->msg, what) != NULL; }

static void test_overflow(void)
{
    dp_error err;
    dp_graph g;
    dp_cluster c;
    dp_sim s;
    dp_stats st;
    int assign[2] = {0, 0}, rc;
    memset(&err, 0, sizeof err);

    /* built by the API: 1e308 + 1e308 is refused at finalize */
    {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        dp_graph_init(&g);
        d.compute = 1e308;
        d.name = "a"; dp_graph_add_op(&g, &d, NULL, &err);
        d.name = "b"; dp_graph_add_op(&g, &d, NULL, &err);
        rc = dp_graph_finalize(&g, &err);
        CHECK(rc == DP_ERR_RANGE && has(&err, "op 'b' (node 1): the total compute of the ops up to it, 1e+308 + 1e+308, is not finite"),
              "API graph of 2 x 1e308: rc %d '%s'", rc, err.msg);
        CHECK(!g.finalized, "the refused graph is not finalised");
        dp_graph_free(&g);
    }

    /* a(1e308) -> b(1): 1e308 + 1 = 1e308 is finite, and runs on speed 1:
       a 0-1e308, b 1e308-1e308 (1 is below 1e308's precision) */
    const op_t big[2] = {{"a", 1e308, 0, 0}, {"b", 1, 0, 0}};
    const ed_t e1[1] = {{0, 1, 0}};
    if (dp_test_build(&g, 2, big, 1, e1)) return;
    c = cluster(1, 1, 1, 0);
    CHECK(dp_graph_stats(&g, &c, &st) == 0 && st.total_compute == 1e308 && st.cp_length == 1e308,
          "stats of a(1e308) -> b(1) on speed 1: total %g, cp %g", st.total_compute, st.cp_length);
    if (run(&s, &g, &c, assign, DP_ORDER_FIFO, NULL, 0) == 0) {
        CHECK(s.makespan == 1e308 && s.busy[0] == 1e308, "makespan %g, busy %g: both 1e308", s.makespan, s.busy[0]);
        dp_sim_free(&s);
    }
    dp_cluster_free(&c);
    /* speed 0.5: a takes 2e308, not finite */
    c = cluster(2, 0.5, 1, 0);
    rc = dp_check(&g, &c, &err);
    CHECK(rc == DP_ERR_RANGE && has(&err, "op 'a' (node 0): its time on device 0 (compute 1e+308 at speed 0.5) is not finite"),
          "speed 0.5: rc %d '%s'", rc, err.msg);
    memset(&s, 0, sizeof s);
    CHECK(dp_sim_init(&s, &g, &c, &err) == DP_ERR_RANGE && has(&err, "op 'a'"), "dp_sim_init refuses it: '%s'", err.msg);
    dp_sim_free(&s);
    {
        int a2[2];
        dp_place_result pr;
        CHECK(dp_place(DP_METHOD_HEFT, &g, &c, NULL, a2, &pr, &err) == DP_ERR_RANGE && has(&err, "op 'a'"),
              "heft refuses it: '%s'", err.msg);
    }
    CHECK(dp_graph_stats(&g, &c, &st) == DP_ERR_RANGE, "dp_graph_stats: a lower bound of inf is refused");
    dp_cluster_free(&c);
    dp_graph_free(&g);

    /* two independent ops of 6e307 on 2 devices of speed 0.6: each takes
       1e308, one after the other 2e308: refused at b */
    const op_t two[2] = {{"a", 6e307, 0, 0}, {"b", 6e307, 0, 0}};
    if (dp_test_build(&g, 2, two, 0, NULL)) return;
    c = cluster(2, 0.6, 1, 0);
    rc = dp_check(&g, &c, &err);
    CHECK(rc == DP_ERR_RANGE && has(&err, "op 'b' (node 1): the times of the ops up to it, each on its slowest device, add up past the largest number"),
          "2 x 1e308 in time: rc %d '%s'", rc, err.msg);
    dp_cluster_free(&c);
    c = cluster(2, 1, 1, 0);   /* speed 1: 6e307 + 6e307 = 1.2e308, finite */
    CHECK(dp_check(&g, &c, &err) == 0, "2 x 6e307 at speed 1: %s", err.msg);
    dp_cluster_free(&c);
    dp_graph_free(&g);

    /* a -> b carrying 1e308 bytes on a link of bandwidth 0.5: 2e308 */
    const op_t ab[2] = {{"a", 1, 1e308, 0}, {"b", 1, 0, 0}};
    const ed_t e2[1] = {{0, 1, 1e308}};
    if (dp_test_build(&g, 2, ab, 1, e2)) return;
    c = cluster(2, 1, 0.5, 0);
    rc = dp_check(&g, &c, &err);
    CHECK(rc == DP_ERR_RANGE && has(&err, "edge a -> b (edge 0): a transfer of its bytes on the slowest link takes a time that is not finite"),
          "1e308 bytes at bandwidth 0.5: rc %d '%s'", rc, err.msg);
    dp_cluster_free(&c);
    c = cluster(1, 1, 0.5, 0);   /* one device: no transfer, 1 + 1 */
    CHECK(dp_check(&g, &c, &err) == 0, "the same graph on one device: %s", err.msg);
    dp_cluster_free(&c);
    dp_graph_free(&g);

    /* a link whose time per byte is not finite: 1 / 1e-320 = inf */
    const op_t ab1[2] = {{"a", 1, 1, 0}, {"b", 1, 0, 0}};
    const ed_t e3[1] = {{0, 1, 1}};
    if (dp_test_build(&g, 2, ab1, 1, e3)) return;
    c = cluster(2, 1, 1, 0);
    c.bandwidth[0 * 2 + 1] = 1e-320;
    rc = dp_check(&g, &c, &err);
    CHECK(rc == DP_ERR_RANGE && has(&err, "link 0 -> 1: bandwidth") && has(&err, "not finite"),
          "bandwidth 1e-320: rc %d '%s'", rc, err.msg);
    /* changed after dp_sim_init: b, on d1, receives a's byte at inf */
    c.bandwidth[0 * 2 + 1] = 1;
    memset(&s, 0, sizeof s);
    if (dp_sim_init(&s, &g, &c, &err) == 0) {
        int a01[2] = {0, 1};
        c.bandwidth[0 * 2 + 1] = 1e-320;
        rc = dp_sim_run(&s, a01, NULL, &err);
        CHECK(rc == DP_ERR_RANGE && has(&err, "op 'b' (node 1) on device 1 finishes at inf"),
              "a transfer of inf after dp_sim_init: rc %d '%s'", rc, err.msg);
        c.bandwidth[0 * 2 + 1] = 1;
        CHECK(dp_sim_run(&s, a01, NULL, &err) == 0 && s.makespan == 3, "bandwidth back to 1: a 0-1, byte 1-2, b 2-3: %g", s.makespan);
    } else CHECK(0, "dp_sim_init: %s", err.msg);
    dp_sim_free(&s);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

int main(void)
{
    test_chain();
    test_fork_join();
    test_stats();
    test_comm();
    test_links();
    test_order();
    test_fifo_ready_time();
    test_simultaneous();
    test_speeds();
    test_dev_time();
    test_memory();
    test_memory_copies();
    test_repeat();
    test_untracked();
    test_bad_args();
    test_overflow();
    return dp_test_done();
}
