/* test_placers.c - the heuristic placers on small hand-made graphs. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_error err;



static dp_cluster cluster(int n)
{
    dp_cluster c;
    memset(&c, 0, sizeof c);
    CHECK(dp_cluster_homogeneous(&c, n, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    return c;
}

static double simulate(const dp_graph *g, const dp_cluster *c, const int *asg, dp_order order)
{
    dp_sim_opts o;
    memset(&o, 0, sizeof o);
    o.order = order;
    double mk = -1;
    CHECK(dp_simulate(g, c, asg, &o, &mk, &err) == 0, "simulate: %s", err.msg);
    return mk;
}

static int place(dp_method m, const dp_graph *g, const dp_cluster *c, const dp_place_opts *po,
                 int *asg, dp_place_result *res)
{
    memset(res, 0, sizeof *res);
    memset(&err, 0, sizeof err);
    return dp_place(m, g, c, po, asg, res, &err);
}

/* ---- cp and heft on a fork, by hand ------------------------------------ */
static void test_cp_fork(void)
{
    /* s(2) idx0 -> c(1) idx1 [5 B], b(3) idx2 [2 B], a(4) idx3 [1 B];
       2 unit devices, bandwidth 1.
       b-levels: a 4, b 3, c 1, s = 2 + max(1+4, 2+3, 5+1) = 8.
       cp: s: start 0 on both -> d0, s 0-2.
           legal {c, b, a}: max b-level a: d0 start 2 (local), d1 2+1=3 -> d0, 2-6
           b: d0 6, d1 2+2 = 4 -> d1, 4-7
           c: d0 6, d1 max(2+5, 7) = 7 -> d0, 6-7
       order s a b c = 0 3 2 1; assignment {0, 0, 1, 0}; length 7.
       Simulated (FIFO): d0 s 0-2, c and a ready at 2, c (lower index) 2-3,
       a 3-7; d1 b 4-7 -> 7. */
    op_t ops[] = {{"s", 2, 0, 0}, {"c", 1, 0, 0}, {"b", 3, 0, 0}, {"a", 4, 0, 0}};
    ed_t eds[] = {{0, 1, 5}, {0, 2, 2}, {0, 3, 1}};
    dp_graph g;
    if (dp_test_build(&g, 4, ops, 3, eds)) return;
    dp_cluster c = cluster(2);
    double bl[4];
    CHECK(dp_blevel(&g, &c, bl) == 0, "blevel");
    CHECK_NEAR(bl[0], 8, 0, "b-level s");
    CHECK_NEAR(bl[1], 1, 0, "b-level c");
    CHECK_NEAR(bl[2], 3, 0, "b-level b");
    CHECK_NEAR(bl[3], 4, 0, "b-level a");
    int asg[4], order[4];
    double len = -1;
    CHECK(dp_place_cp(&g, &c, asg, order, &len, &err) == 0, "cp: %s", err.msg);
    int want_a[4] = {0, 0, 1, 0}, want_o[4] = {0, 3, 2, 1};
    CHECK(memcmp(asg, want_a, sizeof asg) == 0, "cp assignment %d %d %d %d", asg[0], asg[1], asg[2],
          asg[3]);
    CHECK(memcmp(order, want_o, sizeof order) == 0, "cp order %d %d %d %d", order[0], order[1],
          order[2], order[3]);
    CHECK_NEAR(len, 7, 0, "cp schedule length");
    int asg2[4];
    double len2 = -1;
    CHECK(dp_place_cp(&g, &c, asg2, NULL, &len2, &err) == 0 && len2 == 7 &&
          memcmp(asg2, want_a, sizeof asg2) == 0, "cp without order");
    dp_place_result res;
    dp_place_opts po;
    memset(&po, 0, sizeof po);
    CHECK(place(DP_METHOD_CP, &g, &c, &po, asg, &res) == 0, "dp_place cp: %s", err.msg);
    CHECK_NEAR(res.schedule_length, 7, 0, "dp_place cp schedule_length");
    CHECK_NEAR(res.makespan, 7, 0, "dp_place cp makespan (simulated)");
    CHECK_NEAR(res.lower_bound, 6, 0, "lower bound: cp 2+4 = 6, work 10/2 = 5");
    /* heft, by hand: the same choices (EFT = EST + time on identical devices):
       a d0 6 vs d1 7; b d0 9 vs d1 7; c d0 7 vs d1 8 -> {0,0,1,0}, 7 */
    double st[4], fin[4];
    CHECK(dp_place_heft(&g, &c, asg, st, fin, &len, &err) == 0, "heft: %s", err.msg);
    CHECK(memcmp(asg, want_a, sizeof asg) == 0, "heft assignment");
    CHECK_NEAR(len, 7, 0, "heft schedule length");
    CHECK_NEAR(st[3], 2, 0, "heft start a");
    CHECK_NEAR(st[2], 4, 0, "heft start b");
    CHECK_NEAR(st[1], 6, 0, "heft start c");
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- cp picks the device with the earliest start ------------------------ */
static void test_cp_earliest_start(void)
{
    /* p(1) idx0 and q(5) idx1 sources, r(1) idx2 child of p [10 B];
       2 devices.  b-levels: q 5, p 1 + 10 + 1 = 12, r 1.
       cp: p (12): d0 -> 0-1.  q (5): d0 start 1, d1 start 0 -> d1 0-5.
           r (1): d0 start 1 (local), d1 max(1+10, 5) = 11 -> d0 1-2.
       {0, 1, 0}, length 5. */
    op_t ops[] = {{"p", 1, 10, 0}, {"q", 5, 0, 0}, {"r", 1, 0, 0}};
    ed_t eds[] = {{0, 2, 10}};
    dp_graph g;
    if (dp_test_build(&g, 3, ops, 1, eds)) return;
    dp_cluster c = cluster(2);
    int asg[3], order[3];
    double len = -1;
    CHECK(dp_place_cp(&g, &c, asg, order, &len, &err) == 0, "cp: %s", err.msg);
    CHECK(asg[0] == 0 && asg[1] == 1 && asg[2] == 0, "cp earliest start %d %d %d", asg[0], asg[1],
          asg[2]);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2, "cp order %d %d %d", order[0], order[1],
          order[2]);
    CHECK_NEAR(len, 5, 0, "cp length");
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- single, round-robin, random ---------------------------------------- */
static void test_simple(void)
{
    /* chain of 5 (topological order = index order), 3 devices */
    op_t ops[] = {{"o0", 1, 1, 0}, {"o1", 2, 1, 0}, {"o2", 3, 1, 0}, {"o3", 4, 1, 0}, {"o4", 5, 1, 0}};
    ed_t eds[] = {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}};
    dp_graph g;
    if (dp_test_build(&g, 5, ops, 4, eds)) return;
    dp_cluster c = cluster(3);
    dp_place_opts po;
    memset(&po, 0, sizeof po);
    dp_place_result res;
    int asg[5];
    /* single: everything on device 0; 1+2+3+4+5 = 15 */
    CHECK(place(DP_METHOD_SINGLE, &g, &c, &po, asg, &res) == 0, "single: %s", err.msg);
    int want_s[5] = {0, 0, 0, 0, 0};
    CHECK(memcmp(asg, want_s, sizeof asg) == 0, "single placement");
    CHECK_NEAR(res.makespan, 15, 0, "single makespan");
    CHECK(res.makespan == res.schedule_length, "single: schedule_length != makespan");
    CHECK(res.fallback == 0, "single reports a fallback");
    /* round-robin: 0 1 2 0 1; every edge crosses devices: 15 + 4 x 1 = 19 */
    po.no_fallback = 1;
    CHECK(place(DP_METHOD_ROUND_ROBIN, &g, &c, &po, asg, &res) == 0, "round-robin: %s", err.msg);
    int want_r[5] = {0, 1, 2, 0, 1};
    CHECK(memcmp(asg, want_r, sizeof asg) == 0, "round-robin placement %d %d %d %d %d", asg[0], asg[1],
          asg[2], asg[3], asg[4]);
    CHECK_NEAR(res.makespan, 19, 0, "round-robin makespan");
    CHECK(res.fallback == 0 && res.simulations == 1, "round-robin without fallback: fallback %d, %ld simulations", res.fallback, res.simulations);
    /* with the fallback (the default): one device's 15 beats 19, and is
       returned, scored by one more simulation */
    po.no_fallback = 0;
    CHECK(place(DP_METHOD_ROUND_ROBIN, &g, &c, &po, asg, &res) == 0, "round-robin: %s", err.msg);
    CHECK(memcmp(asg, want_s, sizeof asg) == 0, "round-robin's fallback placement %d %d %d %d %d", asg[0], asg[1],
          asg[2], asg[3], asg[4]);
    CHECK_NEAR(res.makespan, 15, 0, "round-robin's fallback makespan");
    CHECK(res.fallback == 1 && res.simulations == 2, "round-robin: fallback %d, %ld simulations", res.fallback, res.simulations);
    dp_cluster_free(&c);
    dp_graph_free(&g);

    /* random: 40 independent ops on 4 devices */
    dp_graph_init(&g);
    for (int i = 0; i < 40; i++) {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        d.compute = 1 + i % 3;
        int id;
        dp_graph_add_op(&g, &d, &id, &err);
    }
    if (dp_graph_finalize(&g, &err) != 0) { CHECK(0, "finalize: %s", err.msg); return; }
    CHECK(strcmp(g.name[7], "op7") == 0, "default name '%s', expected 'op7'", g.name[7]);
    c = cluster(4);
    int r1[40], r2[40], r3[40];
    po.seed = 1;
    CHECK(place(DP_METHOD_RANDOM, &g, &c, &po, r1, &res) == 0, "random 1");
    CHECK(place(DP_METHOD_RANDOM, &g, &c, &po, r2, &res) == 0, "random 1 again");
    po.seed = 2;
    CHECK(place(DP_METHOD_RANDOM, &g, &c, &po, r3, &res) == 0, "random 2");
    CHECK(memcmp(r1, r2, sizeof r1) == 0, "random differs for the same seed");
    CHECK(memcmp(r1, r3, sizeof r1) != 0, "random identical for seeds 1 and 2");
    int used[4] = {0, 0, 0, 0}, ok = 1;
    for (int i = 0; i < 40; i++) {
        ok &= r1[i] >= 0 && r1[i] < 4;
        if (r1[i] >= 0 && r1[i] < 4) used[r1[i]]++;
    }
    CHECK(ok, "random device out of range");
    /* P(a device unused in 40 uniform draws) = 4 * 0.75^40 ~ 4e-5 */
    CHECK(used[0] && used[1] && used[2] && used[3], "random leaves a device unused: %d %d %d %d",
          used[0], used[1], used[2], used[3]);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- enumopt and anneal ------------------------------------------------- */
static void test_search(void)
{
    /* fork-join s(1) -> x(4), y(6) -> t(2), 0 bytes, 2 devices.
       all on d0: 13.  Moving x or y to d1 gives 1 + 6 + 2 = 9 = the lower
       bound (cp s-y-t), so any improving search reaches 9. */
    op_t ops[] = {{"s", 1, 0, 0}, {"x", 4, 0, 0}, {"y", 6, 0, 0}, {"t", 2, 0, 0}};
    ed_t eds[] = {{0, 1, 0}, {0, 2, 0}, {1, 3, 0}, {2, 3, 0}};
    dp_graph g;
    if (dp_test_build(&g, 4, ops, 4, eds)) return;
    dp_cluster c = cluster(2);
    int start[4] = {0, 0, 0, 0}, asg[4];
    dp_place_opts po;
    memset(&po, 0, sizeof po);
    po.start = start;
    po.seed = 3;
    po.budget = 200;
    dp_place_result res;
    CHECK(place(DP_METHOD_ENUMOPT, &g, &c, &po, asg, &res) == 0, "enumopt: %s", err.msg);
    CHECK_NEAR(res.makespan, 9, 0, "enumopt from all-on-d0");
    CHECK(res.simulations > 0, "enumopt reports %ld simulations", res.simulations);
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg, &res) == 0, "anneal: %s", err.msg);
    /* 200 random single-op moves over 16 placements, a quarter of them
       improving from the start: anneal keeps the best it saw */
    CHECK_NEAR(res.makespan, 9, 0, "anneal from all-on-d0");
    /* the budget, the scoring run and the one-device fallback's */
    CHECK(res.simulations > 0 && res.simulations <= 202, "anneal used %ld simulations for budget 200",
          res.simulations);
    dp_cluster_free(&c);
    dp_graph_free(&g);

    /* generated graphs: never worse than the start, FIFO and PRIORITY */
    for (int gi = 0; gi < 4; gi++) {
        dp_gen_opts go;
        memset(&go, 0, sizeof go);
        go.nodes = 30;
        go.shape = gi % 2 ? DP_GEN_RANDOM : DP_GEN_LAYERED;
        go.ccr = 0.5 + gi;
        go.seed = 100 + (uint64_t)gi;
        if (dp_gen(&g, &go, &err) != 0) { CHECK(0, "gen: %s", err.msg); continue; }
        c = cluster(3);
        int *st = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
        int *out = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
        for (int kind = 0; kind < 3; kind++) {
            for (int i = 0; i < g.n_ops; i++)
                st[i] = kind == 0 ? 0 : kind == 1 ? i % 3 : (int)((i * 7 + gi) % 3);
            for (int ord = 0; ord < 2; ord++) {
                dp_order order = ord ? DP_ORDER_PRIORITY : DP_ORDER_FIFO;
                double base = simulate(&g, &c, st, order);
                const dp_method ms[2] = {DP_METHOD_ENUMOPT, DP_METHOD_ANNEAL};
                for (int m = 0; m < 2; m++) {
                    memset(&po, 0, sizeof po);
                    po.start = st;
                    po.order = order;
                    po.seed = 9;
                    po.budget = 300;
                    po.max_passes = 2;
                    int rc = place(ms[m], &g, &c, &po, out, &res);
                    CHECK(rc == 0, "%s: %s", dp_method_name(ms[m]), err.msg);
                    if (rc) continue;
                    CHECK(res.makespan <= base + 1e-9, "gen %d start %d order %d: %s %.17g worse than start %.17g",
                          gi, kind, ord, dp_method_name(ms[m]), res.makespan, base);
                    double again = simulate(&g, &c, out, order);
                    CHECK_NEAR(res.makespan, again, 1e-9, "search result re-simulated");
                }
            }
        }
        /* enumopt run to convergence is a local optimum: no single move
           improves it */
        memset(&po, 0, sizeof po);
        if (place(DP_METHOD_ENUMOPT, &g, &c, &po, out, &res) == 0) {
            int improvable = 0;
            for (int v = 0; v < g.n_ops && !improvable; v++) {
                int keep = out[v];
                for (int d = 0; d < 3; d++) {
                    if (d == keep) continue;
                    out[v] = d;
                    if (simulate(&g, &c, out, DP_ORDER_FIFO) < res.makespan - 1e-9) improvable = 1;
                }
                out[v] = keep;
            }
            CHECK(!improvable, "gen %d: enumopt stopped where a single move still improves", gi);
        } else {
            CHECK(0, "enumopt to convergence: %s", err.msg);
        }
        free(st);
        free(out);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
}

/* ---- memory capacity ---------------------------------------------------- */
static void test_memory_capacity(void)
{
    /* a(out 200), b(10), c(200), d(10), independent, compute 1 each;
       2 devices of 250: everything on one device needs 420; a feasible
       placement must separate a and c. */
    op_t ops[] = {{"a", 1, 200, 0}, {"b", 1, 10, 0}, {"c", 1, 200, 0}, {"d", 1, 10, 0}};
    dp_graph g;
    if (dp_test_build(&g, 4, ops, 0, NULL)) return;
    dp_cluster c = cluster(2);
    c.memory[0] = c.memory[1] = 250;
    int all0[4] = {0, 0, 0, 0};
    double sm[2];
    CHECK(dp_static_memory(&g, &c, all0, sm) == 0, "static memory");
    CHECK_NEAR(sm[0], 420, 0, "static memory all on d0");
    CHECK_NEAR(sm[1], 0, 0, "static memory d1 empty");
    for (int m = 0; m < DP_METHOD__COUNT; m++) {
        dp_place_opts po;
        memset(&po, 0, sizeof po);
        po.seed = 5;
        po.budget = 100;
        int asg[4] = {-1, -1, -1, -1};
        dp_place_result res;
        int rc = place((dp_method)m, &g, &c, &po, asg, &res);
        if (m == DP_METHOD_SINGLE && rc == DP_ERR_INFEASIBLE) {
            /* one device cannot hold it all: refusing is right */
            CHECK(err.code == DP_ERR_INFEASIBLE && err.msg[0], "single: message");
            continue;
        }
        CHECK(rc == 0, "%s with memory 250: %s", dp_method_name((dp_method)m), err.msg);
        if (rc) continue;
        CHECK(dp_static_memory(&g, &c, asg, sm) == 0, "static memory");
        CHECK(sm[0] <= 250 && sm[1] <= 250, "%s exceeds memory: %g %g", dp_method_name((dp_method)m),
              sm[0], sm[1]);
    }
    /* capacity 150: a alone needs 200 -> no placement exists */
    c.memory[0] = c.memory[1] = 150;
    for (int m = 0; m < DP_METHOD__COUNT; m++) {
        dp_place_opts po;
        memset(&po, 0, sizeof po);
        po.budget = 50;
        int asg[4];
        dp_place_result res;
        int rc = place((dp_method)m, &g, &c, &po, asg, &res);
        CHECK(rc == DP_ERR_INFEASIBLE && err.code == DP_ERR_INFEASIBLE,
              "%s with memory 150: rc %d code %d", dp_method_name((dp_method)m), rc, (int)err.code);
        CHECK(dp_test_stristr(err.msg, "memory") != NULL || dp_test_stristr(err.msg, "hold") != NULL,
              "%s: unclear message '%s'", dp_method_name((dp_method)m), err.msg);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);

    /* with edges, received tensors count: a(200)->b(10) [200 B],
       c(200)->d(10) [200 B]; memory 250: only {a,b} | {c,d} fits (210 each).
       A greedy placer may fail to find it; if it succeeds it must fit. */
    op_t ops2[] = {{"a", 1, 200, 0}, {"b", 1, 10, 0}, {"c", 1, 200, 0}, {"d", 1, 10, 0}};
    ed_t eds2[] = {{0, 1, 200}, {2, 3, 200}};
    if (dp_test_build(&g, 4, ops2, 2, eds2)) return;
    c = cluster(2);
    c.memory[0] = c.memory[1] = 250;
    int split[4] = {0, 1, 0, 1};
    CHECK(dp_static_memory(&g, &c, split, sm) == 0, "static memory");
    /* d0: a 200 + c 200 = 400; d1: b 10 + d 10 + copies 200 + 200 = 420 */
    CHECK_NEAR(sm[0], 400, 0, "static memory split d0");
    CHECK_NEAR(sm[1], 420, 0, "static memory split d1 (with received tensors)");
    for (int m = 0; m < DP_METHOD__COUNT; m++) {
        dp_place_opts po;
        memset(&po, 0, sizeof po);
        po.budget = 100;
        int asg[4] = {-1, -1, -1, -1};
        dp_place_result res;
        int rc = place((dp_method)m, &g, &c, &po, asg, &res);
        CHECK(rc == 0 || rc == DP_ERR_INFEASIBLE, "%s: rc %d: %s", dp_method_name((dp_method)m), rc,
              err.msg);
        if (rc) continue;
        CHECK(dp_static_memory(&g, &c, asg, sm) == 0 && sm[0] <= 250 && sm[1] <= 250,
              "%s exceeds memory with edges: %g %g", dp_method_name((dp_method)m), sm[0], sm[1]);
    }
    /* a start placement over capacity is refused by the search placers */
    dp_place_opts po;
    memset(&po, 0, sizeof po);
    po.start = split;
    int asg[4];
    dp_place_result res;
    CHECK(place(DP_METHOD_ENUMOPT, &g, &c, &po, asg, &res) == DP_ERR_INFEASIBLE,
          "enumopt accepts a start over capacity: rc %d", (int)err.code);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* dp_place_opts.time_limit: anneal with a budget it could not spend in
   minutes and enumopt stop at the first look at the clock past the limit,
   with a placement no worse than their start (cp's here) and the result
   saying so; no limit: time_limited 0; a negative one is refused. */
static void test_time_limit(void)
{
    dp_gen_opts go;
    dp_graph g;
    dp_place_opts po;
    dp_place_result res, cp;
    int *asg, m;
    double t0;
    memset(&go, 0, sizeof go);
    go.nodes = 300; go.shape = DP_GEN_LAYERED; go.ccr = 1; go.seed = 7;
    if (dp_gen(&g, &go, &err) != 0) { CHECK(0, "gen: %s", err.msg); return; }
    dp_cluster c = cluster(8);
    asg = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    memset(&po, 0, sizeof po);
    CHECK(place(DP_METHOD_CP, &g, &c, &po, asg, &cp) == 0 && cp.time_limited == 0, "cp: %s", err.msg);
    for (m = 0; m < 2; m++) {
        dp_method meth = m ? DP_METHOD_ANNEAL : DP_METHOD_ENUMOPT;
        memset(&po, 0, sizeof po);
        po.budget = 2000000000;     /* anneal: hours at this graph's speed */
        po.time_limit = m ? 0.3 : 1e-6;
        t0 = dp_now();
        CHECK(place(meth, &g, &c, &po, asg, &res) == 0, "%s with a time limit: %s", dp_method_name(meth), err.msg);
        t0 = dp_now() - t0;
        CHECK(res.time_limited == DP_TIME_LIMITED, "%s: not stopped by its time limit (%ld simulations)", dp_method_name(meth), res.simulations);
        CHECK(t0 < po.time_limit + 2, "%s: %g s for a time limit of %g s", dp_method_name(meth), t0, po.time_limit);
        CHECK(res.makespan <= cp.makespan + 1e-9, "%s stopped at %g, worse than its start (cp) %g", dp_method_name(meth), res.makespan, cp.makespan);
        CHECK_NEAR(res.makespan, simulate(&g, &c, asg, DP_ORDER_FIFO), 1e-9, "time-limited answer re-simulated");
    }
    memset(&po, 0, sizeof po);
    po.budget = 500;
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg, &res) == 0 && res.time_limited == 0, "anneal without a limit: time_limited %d", res.time_limited);
    po.time_limit = -1;
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg, &res) == DP_ERR_RANGE && strstr(err.msg, "time limit -1"), "negative time limit: '%s'", err.msg);
    free(asg);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* anneal's default budget, 20 x ops x devices simulations within
   dp_place_opts.time_bound seconds (and enumopt's default passes within
   the same bound): a small graph spends its count well
   within the default bound, exactly as with no bound; a bound too short
   for the count stops it there (DP_TIME_BOUNDED, no worse than the
   start); a budget or a time limit given replaces the bound; a bound
   that is not a number is refused. */
static void test_time_bound(void)
{
    dp_gen_opts go;
    dp_graph g;
    dp_place_opts po;
    dp_place_result res, nob, cp;
    int *asg, *asg2;
    double t0;
    memset(&go, 0, sizeof go);
    go.nodes = 30; go.shape = DP_GEN_LAYERED; go.ccr = 1; go.seed = 3;
    if (dp_gen(&g, &go, &err) != 0) { CHECK(0, "gen: %s", err.msg); return; }
    dp_cluster c = cluster(4);
    asg = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    asg2 = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    memset(&po, 0, sizeof po);
    po.no_fallback = 1;   /* the count of simulations: the search's and the scoring run */
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg, &res) == 0, "anneal, default bound: %s", err.msg);
    CHECK(res.time_limited == 0 && res.simulations + res.bounded == 20L * g.n_ops * c.n + 1,
          "anneal's default count within the bound: %ld simulations, time_limited %d", res.simulations, res.time_limited);
    po.time_bound = -1;   /* no bound: the same search */
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg2, &nob) == 0, "anneal, no bound: %s", err.msg);
    CHECK(nob.makespan == res.makespan && nob.simulations == res.simulations && memcmp(asg, asg2, sizeof(int) * (size_t)g.n_ops) == 0,
          "the default bound changed a search it did not stop: %g, %g", res.makespan, nob.makespan);
    po.time_bound = 0; po.budget = 20 * g.n_ops * c.n;   /* the count given: the same search */
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg2, &nob) == 0 && nob.makespan == res.makespan &&
          memcmp(asg, asg2, sizeof(int) * (size_t)g.n_ops) == 0, "anneal with its count as a budget: %g, %g", nob.makespan, res.makespan);
    po.time_bound = NAN;
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg, &res) == DP_ERR_RANGE && strstr(err.msg, "time bound"), "time bound NaN: '%s'", err.msg);
    free(asg); free(asg2);
    dp_cluster_free(&c);
    dp_graph_free(&g);

    /* 300 ops on 8 devices: 48000 simulations, seconds; a bound of 0.2 s
       stops them */
    go.nodes = 300; go.seed = 7;
    if (dp_gen(&g, &go, &err) != 0) { CHECK(0, "gen: %s", err.msg); return; }
    c = cluster(8);
    asg = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    memset(&po, 0, sizeof po);
    CHECK(place(DP_METHOD_CP, &g, &c, &po, asg, &cp) == 0, "cp: %s", err.msg);
    po.time_bound = 0.2;
    t0 = dp_now();
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg, &res) == 0, "anneal, bound 0.2 s: %s", err.msg);
    t0 = dp_now() - t0;
    CHECK(res.time_limited == DP_TIME_BOUNDED && res.simulations < 20L * g.n_ops * c.n,
          "anneal: not stopped by its time bound (time_limited %d, %ld simulations)", res.time_limited, res.simulations);
    CHECK(t0 < 0.2 + 2, "anneal: %g s for a time bound of 0.2 s", t0);
    CHECK(res.makespan <= cp.makespan + 1e-9, "anneal stopped by its bound at %g, worse than its start (cp) %g", res.makespan, cp.makespan);
    CHECK_NEAR(res.makespan, simulate(&g, &c, asg, DP_ORDER_FIFO), 1e-9, "bounded answer re-simulated");
    po.time_limit = 0.2;   /* the caller's limit, not the bound, stops it */
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg, &res) == 0 && res.time_limited == DP_TIME_LIMITED,
          "anneal with a time limit: time_limited %d (%s)", res.time_limited, err.msg);
    po.time_limit = 0; po.budget = 300;   /* a budget: no bound */
    po.time_bound = 1e-9;
    CHECK(place(DP_METHOD_ANNEAL, &g, &c, &po, asg, &res) == 0 && res.time_limited == 0,
          "anneal with a budget: time_limited %d (%s)", res.time_limited, err.msg);
    /* enumopt's passes: the same bound where max_passes is not given, none
       where it is; within the default bound the same search as without */
    memset(&po, 0, sizeof po);
    po.time_bound = 1e-4;
    CHECK(place(DP_METHOD_ENUMOPT, &g, &c, &po, asg, &res) == 0 && res.time_limited == DP_TIME_BOUNDED,
          "enumopt, bound 0.1 ms: time_limited %d (%s)", res.time_limited, err.msg);
    CHECK(res.makespan <= cp.makespan + 1e-9, "enumopt stopped by its bound at %g, worse than its start (cp) %g", res.makespan, cp.makespan);
    CHECK_NEAR(res.makespan, simulate(&g, &c, asg, DP_ORDER_FIFO), 1e-9, "enumopt's bounded answer re-simulated");
    po.max_passes = 100;
    CHECK(place(DP_METHOD_ENUMOPT, &g, &c, &po, asg, &res) == 0 && res.time_limited == 0,
          "enumopt with max_passes: time_limited %d (%s)", res.time_limited, err.msg);
    asg2 = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    memset(&po, 0, sizeof po);
    CHECK(place(DP_METHOD_ENUMOPT, &g, &c, &po, asg2, &nob) == 0 && nob.time_limited == 0 && nob.makespan == res.makespan &&
          memcmp(asg, asg2, sizeof(int) * (size_t)g.n_ops) == 0,
          "enumopt within its default bound: %g (time_limited %d), with max_passes %g", nob.makespan, nob.time_limited, res.makespan);
    free(asg2);
    free(asg);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- the move bound ------------------------------------------------------
   enumopt and anneal skip the simulation of a move that a lower bound
   decides (dp__mbound). First the bound itself: for random placements and
   random moves it is never above the moved placement's simulated
   makespan (FIFO and PRIORITY, free and serial links, devices of
   different speeds, latencies). Then the searches: with the bound and
   without it (no_move_bound), the same placement, makespan and count of
   moves scored, on generated graphs with and without transfers and with
   device memory that binds; and the bound must decide some moves. */
static void test_move_bound(void)
{
    long bounded_total = 0, checked = 0, above = 0;
    for (int gi = 0; gi < 8; gi++) {
        static const double ccr[4] = {0, 0.5, 2, 8};
        dp_gen_opts go;
        memset(&go, 0, sizeof go);
        go.shape = gi % 2 ? DP_GEN_RANDOM : DP_GEN_LAYERED;
        go.nodes = 40 + 15 * gi;
        go.ccr = ccr[gi % 4];
        go.seed = (uint64_t)(7 + gi);
        dp_graph g;
        memset(&g, 0, sizeof g);
        if (dp_gen(&g, &go, &err)) { CHECK(0, "gen: %s", err.msg); continue; }
        int nd = 2 + gi % 3;
        dp_cluster c = cluster(nd);
        for (int d = 0; d < nd; d++) {
            c.speed[d] = 1 + 0.25 * d;
            for (int q = 0; q < nd; q++) if (q != d && gi % 2) c.latency[d * nd + q] = 0.5;
        }
        c.link = gi % 4 == 3 ? DP_LINK_FREE : DP_LINK_SERIAL;
        int n = g.n_ops;
        int *a = (int *)malloc(sizeof(int) * (size_t)n), *b = (int *)malloc(sizeof(int) * (size_t)n);
        dp__mbound mb;
        dp_sim ms_sim;   /* the bound reads its op times */
        memset(&mb, 0, sizeof mb);
        memset(&ms_sim, 0, sizeof ms_sim);
        if (dp_sim_init(&ms_sim, &g, &c, &err) || dp__mb_init(&mb, &ms_sim, &err)) {
            CHECK(0, "bound: %s", err.msg);
            dp__mb_free(&mb); dp_sim_free(&ms_sim); free(a); free(b); dp_cluster_free(&c); dp_graph_free(&g);
            continue;
        }
        dp_rng rng;
        dp_rng_seed(&rng, 100 + gi);
        for (int t = 0; t < 40; t++) {
            for (int v = 0; v < n; v++) a[v] = dp_rng_int(&rng, nd);
            dp__mb_levels(&mb, a);
            int v = dp_rng_int(&rng, n), d = (a[v] + 1 + dp_rng_int(&rng, nd - 1)) % nd;
            double lb = dp__mb_bound(&mb, a, v, d);
            memcpy(b, a, sizeof(int) * (size_t)n);
            b[v] = d;
            for (int ord = 0; ord < 2; ord++) {
                double ms = simulate(&g, &c, b, ord ? DP_ORDER_PRIORITY : DP_ORDER_FIFO);
                checked++;
                if (lb > ms) { above++; printf("  graph %d: bound %.17g above the makespan %.17g\n", gi, lb, ms); }
            }
        }
        dp__mb_free(&mb);
        dp_sim_free(&ms_sim);
        /* the searches, with and without the bound */
        for (int mem = 0; mem < 2; mem++) {
            if (mem) {   /* memory that binds: 3/4 of all outputs and copies */
                double tot = 0;
                for (int v = 0; v < n; v++) tot += g.out_bytes[v];
                for (int e = 0; e < g.n_edges; e++) tot += g.bytes[e];
                if (tot <= 0) continue;
                for (int d = 0; d < nd; d++) c.memory[d] = 0.75 * tot;
            }
            for (int m = 0; m < 2; m++) {
                dp_method meth = m ? DP_METHOD_ANNEAL : DP_METHOD_ENUMOPT;
                dp_place_opts po;
                dp_place_result r1, r2;
                memset(&po, 0, sizeof po);
                po.seed = (uint64_t)gi;
                po.budget = 3000;
                po.no_fallback = 1;
                int rc1 = place(meth, &g, &c, &po, a, &r1);
                po.no_move_bound = 1;
                int rc2 = place(meth, &g, &c, &po, b, &r2);
                CHECK(rc1 == 0 && rc2 == 0, "%s graph %d memory %d: %s", dp_method_name(meth), gi, mem, err.msg);
                if (rc1 || rc2) continue;
                CHECK(r1.makespan == r2.makespan && memcmp(a, b, sizeof(int) * (size_t)n) == 0 &&
                      r1.simulations + r1.bounded == r2.simulations && r2.bounded == 0,
                      "%s graph %d memory %d: with the bound %.17g (%ld simulated + %ld bounded), without %.17g (%ld)",
                      dp_method_name(meth), gi, mem, r1.makespan, r1.simulations, r1.bounded, r2.makespan, r2.simulations);
                bounded_total += r1.bounded;
            }
        }
        free(a); free(b);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
    CHECK(checked == 640 && above == 0, "the bound was above the simulated makespan in %ld of %ld moves", above, checked);
    printf("move bound: %ld moves decided without a simulation\n", bounded_total);
    CHECK(bounded_total > 1000, "the bound decided only %ld moves: the test does not exercise it", bounded_total);
}

/* ---- op times in one column where every device is alike ----------------- */
/* g with every op's time given per device (dev_time) as what the cost
   model makes of it on c (speed 1, no overhead: compute / 1, exact), so
   that its op times are g's, but kept n_dev times wide */
static int with_dev_times(const dp_graph *g, int n_dev, dp_graph *out)
{
    double *t = (double *)malloc(sizeof(double) * (size_t)n_dev);
    int rc = 0;
    dp_graph_init(out);
    for (int v = 0; v < g->n_ops && !rc; v++) {
        dp_op_desc od;
        memset(&od, 0, sizeof od);
        od.name = g->name[v]; od.kind = g->kind[v]; od.compute = g->compute[v];
        od.out_bytes = g->out_bytes[v]; od.mem_bytes = g->mem_bytes[v]; od.resident = g->resident[v];
        for (int d = 0; d < n_dev; d++) t[d] = g->compute[v];
        od.dev_time = t; od.n_dev_time = n_dev;
        rc = dp_graph_add_op(out, &od, NULL, &err);
    }
    for (int e = 0; e < g->n_edges && !rc; e++) rc = dp_graph_add_edge(out, g->src[e], g->dst[e], g->bytes[e], &err);
    if (!rc) rc = dp_graph_finalize(out, &err);
    free(t);
    return rc;
}

static void test_times_width(void)
{
    dp_gen_opts go;
    dp_graph g, gt;
    memset(&go, 0, sizeof go);
    go.shape = DP_GEN_LAYERED; go.nodes = 60; go.ccr = 1; go.seed = 5;
    if (dp_gen(&g, &go, &err)) { CHECK(0, "gen: %s", err.msg); return; }
    dp_cluster c = cluster(4), one = cluster(1);
    /* the width: one column only where dp_op_time is the same function of
       the op on every device */
    CHECK(dp__times_width(&g, &c) == 1 && dp__times_width(&g, &one) == 1, "identical devices: %d columns", dp__times_width(&g, &c));
    c.speed[2] = 1.5;
    CHECK(dp__times_width(&g, &c) == 4, "a faster device: %d columns, not 4", dp__times_width(&g, &c));
    c.speed[2] = 1;
    for (int d = 0; d < 4; d++) c.overhead[d] = 0.5;
    CHECK(dp__times_width(&g, &c) == 1, "the same overhead on every device: %d columns, not 1", dp__times_width(&g, &c));
    c.overhead[3] = 0.25;
    CHECK(dp__times_width(&g, &c) == 4, "another overhead on one device: %d columns, not 4", dp__times_width(&g, &c));
    for (int d = 0; d < 4; d++) c.overhead[d] = 0;
    for (int k = 0; k < 4 * DP_KIND__COUNT; k++) c.kind_speed[k] = 2;
    CHECK(dp__times_width(&g, &c) == 1, "the same kind speeds: %d columns, not 1", dp__times_width(&g, &c));
    c.kind_speed[1 * DP_KIND__COUNT + DP_OP_MATMUL] = 3;
    CHECK(dp__times_width(&g, &c) == 4, "one device's matmul speed apart: %d columns, not 4", dp__times_width(&g, &c));
    c.kind_speed[1 * DP_KIND__COUNT + DP_OP_MATMUL] = 2;   /* alike again: the curve alone differs below */
    c.curve_len[0 * DP_KIND__COUNT + DP_OP_MATMUL] = 1;
    c.curve[(0 * DP_KIND__COUNT + DP_OP_MATMUL) * DP_MAX_CURVE].work = 1;
    c.curve[(0 * DP_KIND__COUNT + DP_OP_MATMUL) * DP_MAX_CURVE].speed = 3;
    CHECK(dp__times_width(&g, &c) == 4, "a curve on one device: %d columns, not 4", dp__times_width(&g, &c));
    for (int d = 0; d < 4; d++) c.curve_len[d * DP_KIND__COUNT + DP_OP_MATMUL] = 0;
    for (int k = 0; k < 4 * DP_KIND__COUNT; k++) c.kind_speed[k] = 0;
    if (with_dev_times(&g, 4, &gt)) { CHECK(0, "dev_time copy: %s", err.msg); dp_cluster_free(&c); dp_cluster_free(&one); dp_graph_free(&g); return; }
    CHECK(dp__times_width(&gt, &c) == 4, "per-device times: %d columns, not 4", dp__times_width(&gt, &c));
    for (int v = 0; v < g.n_ops; v++)
        for (int d = 0; d < 4; d++)
            if (dp_op_time(&g, &c, v, d) != dp_op_time(&gt, &c, v, d)) { CHECK(0, "op %d device %d: the copy's time differs", v, d); v = g.n_ops; break; }
    /* the same schedules from one column as from four: the simulator, the
       move bound's searches, the list schedulers and the learned placer */
    int n = g.n_ops, *a = (int *)malloc(sizeof(int) * (size_t)n), *b = (int *)malloc(sizeof(int) * (size_t)n);
    dp_rng rng;
    dp_rng_seed(&rng, 9);
    for (int t = 0; t < 20; t++) {
        for (int v = 0; v < n; v++) a[v] = dp_rng_int(&rng, 4);
        for (int ord = 0; ord < 2; ord++) {
            double m1 = simulate(&g, &c, a, ord ? DP_ORDER_PRIORITY : DP_ORDER_FIFO), m4 = simulate(&gt, &c, a, ord ? DP_ORDER_PRIORITY : DP_ORDER_FIFO);
            if (m1 != m4) { CHECK(0, "placement %d order %d: makespan %.17g from one column, %.17g from four", t, ord, m1, m4); t = 20; break; }
        }
    }
    static const dp_method meth[] = { DP_METHOD_CP, DP_METHOD_HEFT, DP_METHOD_ANNEAL, DP_METHOD_ENUMOPT };
    for (int k = 0; k < 4; k++) {
        dp_place_opts po;
        dp_place_result r1, r4;
        memset(&po, 0, sizeof po);
        po.seed = 3; po.budget = 2000;
        int rc1 = place(meth[k], &g, &c, &po, a, &r1), rc4 = place(meth[k], &gt, &c, &po, b, &r4);
        CHECK(rc1 == 0 && rc4 == 0, "%s: %s", dp_method_name(meth[k]), err.msg);
        CHECK(!rc1 && !rc4 && r1.makespan == r4.makespan && r1.simulations == r4.simulations && !memcmp(a, b, sizeof(int) * (size_t)n),
              "%s: one column %.17g (%ld simulations), four %.17g (%ld)", dp_method_name(meth[k]), r1.makespan, r1.simulations, r4.makespan, r4.simulations);
    }
    dp_policy p;
    dp_policy_opts pol = {0};
    pol.hidden = 8; pol.layers = 2; pol.seed = 4; pol.insertion = 1;
    if (dp_policy_init(&p, &pol, &err) == 0) {
        for (int threads = 1; threads <= 2; threads++) {
            dp_infer_opts io = {0};
            double m1 = 0, m4 = 0;
            io.samples = 16; io.seed = 7; io.threads = threads;
            int rc1 = dp_policy_place(&p, &g, &c, &io, a, NULL, &m1, &err), rc4 = dp_policy_place(&p, &gt, &c, &io, b, NULL, &m4, &err);
            CHECK(!rc1 && !rc4 && m1 == m4 && !memcmp(a, b, sizeof(int) * (size_t)n),
                  "learned placer on %d threads: one column %.17g, four %.17g (%s)", threads, m1, m4, err.msg);
        }
        dp_policy_free(&p);
    } else CHECK(0, "policy: %s", err.msg);
    free(a); free(b);
    dp_cluster_free(&c); dp_cluster_free(&one);
    dp_graph_free(&gt); dp_graph_free(&g);
}

int main(void)
{
    memset(&err, 0, sizeof err);
    test_cp_fork();
    test_cp_earliest_start();
    test_simple();
    test_search();
    test_memory_capacity();
    test_time_limit();
    test_time_bound();
    test_move_bound();
    test_times_width();
    return dp_test_done();
}
