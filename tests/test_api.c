/* test_api.c - what the command-line tool used to do on its own, now
   library calls a program embedding the header can make: SEL's order as a
   priority, a runtime as a training cost (the simulator, or an executor),
   stage lists from text, the training curve as CSV, DOPPLER's
   deployment stage and a policy's answer polished by local search. Every
   expected value is worked out by hand below. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_cluster cluster(int n)
{
    dp_cluster c;
    dp_error err;
    memset(&c, 0, sizeof c);
    memset(&err, 0, sizeof err);
    int rc = dp_cluster_homogeneous(&c, n, 1, 1, 0, &err);
    CHECK(rc == 0, "dp_cluster_homogeneous: %s", err.msg);
    return c;
}

/* ---- 1. order to priority ---------------------------------------------- */
static void test_order_to_priority(void)
{
    /* SEL chose op 2 first, then 0, 3, 1: the first chosen gets n = 4 */
    const int order[4] = {2, 0, 3, 1};
    double prio[4] = {0, 0, 0, 0};
    dp_order_to_priority(order, 4, prio);
    CHECK(prio[2] == 4 && prio[0] == 3 && prio[3] == 2 && prio[1] == 1,
          "priorities %g %g %g %g, expected 3 1 4 2", prio[0], prio[1], prio[2], prio[3]);
}

/* ---- 2. the simulator as a training cost -------------------------------- */
static void test_runtime_cost_sim(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    /* a(2) -> b(3) -> c(4), 7-byte edges, unit devices, bandwidth 1:
       all on d0: 2 + 3 + 4 = 9; b alone on d1: a 0-2, copy 2-9, b 9-12,
       copy 12-19, c 19-23 */
    op_t ops[] = {{"a", 2, 0, 0}, {"b", 3, 0, 0}, {"c", 4, 0, 0}};
    ed_t eds[] = {{0, 1, 7}, {1, 2, 7}};
    dp_graph g;
    if (dp_test_build(&g, 3, ops, 2, eds)) return;
    dp_cluster c = cluster(2);
    const int one[3] = {0, 0, 0}, split[3] = {0, 1, 0}, order[3] = {0, 1, 2};
    double cost = -1;
    dp_runtime rt;
    memset(&rt, 0, sizeof rt);
    CHECK(dp_runtime_cost(NULL, &g, &c, one, order, &cost, &err) == 0 && cost == 9,
          "NULL runtime, one device: %g (%s), expected 9", cost, err.msg);
    CHECK(dp_runtime_cost(&rt, &g, &c, split, NULL, &cost, &err) == 0 && cost == 23,
          "simulator, split: %g (%s), expected 23", cost, err.msg);
    rt.order = DP_ORDER_PRIORITY;
    CHECK(dp_runtime_cost(&rt, &g, &c, one, NULL, &cost, &err) == DP_ERR_ARG,
          "priority order without SEL's order: not refused");
    rt.order = DP_ORDER_FIFO;
    rt.reps = -1;
    CHECK(dp_runtime_cost(&rt, &g, &c, one, order, &cost, &err) == DP_ERR_RANGE,
          "negative reps: not refused");
    CHECK(dp_runtime_cost(&rt, &g, &c, NULL, order, &cost, &err) == DP_ERR_ARG,
          "no assignment: not refused");
    dp_graph_free(&g);

    /* SEL's order decides the priority: x(4) and y(1) are sources on d0,
       y -> z(10) on d1 (an empty edge). FIFO takes x first (the lower
       index): x 0-4, y 4-5, z 5-15 = 15. SEL's order y, x, z gives y the
       highest priority: y 0-1, x 1-5, z 1-11 = 11. */
    op_t ops2[] = {{"x", 4, 0, 0}, {"y", 1, 0, 0}, {"z", 10, 0, 0}};
    ed_t eds2[] = {{1, 2, 0}};
    if (dp_test_build(&g, 3, ops2, 1, eds2)) return;
    const int assign[3] = {0, 0, 1}, sel[3] = {1, 0, 2};
    rt.reps = 0;
    CHECK(dp_runtime_cost(&rt, &g, &c, assign, sel, &cost, &err) == 0 && cost == 15,
          "FIFO: %g (%s), expected 15", cost, err.msg);
    rt.order = DP_ORDER_PRIORITY;
    CHECK(dp_runtime_cost(&rt, &g, &c, assign, sel, &cost, &err) == 0 && cost == 11,
          "priority from SEL's order: %g (%s), expected 11", cost, err.msg);
    dp_graph_free(&g);
    dp_cluster_free(&c);
}

/* ---- 3. an executor as a training cost ---------------------------------- */
typedef struct { int calls, reps, fail; dp_order order; double spu, prio[3]; int has_prio; } fake_seen;
static fake_seen seen;

/* an executor that measured 0.5 s, running opaque ops 0.25 s per unit */
static int fake_exec(const dp_graph *g, const dp_cluster *c, const int *assign,
                     const dp_exec_opts *opts, dp_exec_result *res, dp_error *err)
{
    (void)c; (void)assign;
    seen.calls++;
    seen.reps = opts->reps;
    seen.order = opts->order;
    seen.spu = opts->seconds_per_unit;
    seen.has_prio = opts->priority != NULL;
    if (opts->priority) memcpy(seen.prio, opts->priority, sizeof(double) * (size_t)g->n_ops);
    if (seen.fail) {
        snprintf(err->msg, sizeof err->msg, "fake executor: device lost");
        err->code = DP_ERR_IO;
        return DP_ERR_IO;
    }
    memset(res, 0, sizeof *res);
    res->wall_median = 0.5;
    res->seconds_per_unit = 0.25;
    return 0;
}

static void test_runtime_cost_exec(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    op_t ops[] = {{"x", 4, 0, 0}, {"y", 1, 0, 0}, {"z", 10, 0, 0}};
    ed_t eds[] = {{1, 2, 0}};
    dp_graph g;
    if (dp_test_build(&g, 3, ops, 1, eds)) return;
    dp_cluster c = cluster(2);
    const int assign[3] = {0, 0, 1}, sel[3] = {1, 0, 2};
    dp_exec_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.seconds_per_unit = 0.25;
    eo.reps = 99;            /* the runtime's own reps win */
    dp_runtime rt;
    memset(&rt, 0, sizeof rt);
    rt.exec = fake_exec;
    rt.reps = 3;
    rt.exec_opts = &eo;
    double cost = -1;
    /* opaque ops: 0.5 s / 0.25 s per unit = 2 units */
    CHECK(dp_runtime_cost(&rt, &g, &c, assign, sel, &cost, &err) == 0 && cost == 2,
          "executor cost %g (%s), expected 2", cost, err.msg);
    CHECK(seen.calls == 1 && seen.reps == 3 && seen.order == DP_ORDER_FIFO && seen.spu == 0.25 && !seen.has_prio,
          "executor saw calls %d reps %d order %d spu %g priority %d", seen.calls, seen.reps, (int)seen.order,
          seen.spu, seen.has_prio);
    rt.order = DP_ORDER_PRIORITY;
    CHECK(dp_runtime_cost(&rt, &g, &c, assign, sel, &cost, &err) == 0 && cost == 2,
          "executor cost, priority: %g (%s)", cost, err.msg);
    CHECK(seen.has_prio && seen.order == DP_ORDER_PRIORITY && seen.prio[1] == 3 && seen.prio[0] == 2 && seen.prio[2] == 1,
          "priority passed: %d, %g %g %g (expected 2 3 1)", seen.has_prio, seen.prio[0], seen.prio[1], seen.prio[2]);
    seen.fail = 1;
    cost = -1;
    CHECK(dp_runtime_cost(&rt, &g, &c, assign, sel, &cost, &err) == DP_ERR_IO && strstr(err.msg, "device lost") && cost == -1,
          "executor failure: not passed on (%s, cost %g)", err.msg, cost);
    dp_graph_free(&g);
    dp_cluster_free(&c);
}

/* ---- 4. stage lists from text ------------------------------------------- */
static void sentinel(dp_train_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int k = 0; k < DP_STAGE__COUNT; k++) { o->episodes[k] = 7; o->lr[k] = 0.7; }
    o->seed = 42;
}

static int untouched(const dp_train_opts *o)
{
    for (int k = 0; k < DP_STAGE__COUNT; k++)
        if (o->episodes[k] != 7 || o->lr[k] != 0.7) return 0;
    return o->seed == 42;
}

static void refused(const char *stages, const char *episodes, const char *lr, int code, const char *says)
{
    dp_train_opts o;
    dp_error err;
    memset(&err, 0, sizeof err);
    sentinel(&o);
    int rc = dp_train_stages_parse(&o, stages, episodes, lr, &err);
    CHECK(rc == code && strstr(err.msg, says) && untouched(&o),
          "stages '%s' episodes '%s' lr '%s': rc %d (expected %d), '%s' (expected to say '%s'), options %s",
          stages ? stages : "(null)", episodes ? episodes : "(null)", lr ? lr : "(null)", rc, code, err.msg, says,
          untouched(&o) ? "untouched" : "changed");
}

static void test_stages_parse(void)
{
    dp_train_opts o;
    dp_error err;
    memset(&err, 0, sizeof err);
    sentinel(&o);
    CHECK(dp_train_stages_parse(&o, NULL, NULL, NULL, &err) == 0 && o.episodes[DP_STAGE_IL] == 2000 &&
          o.episodes[DP_STAGE_SIM] == 2000 && o.episodes[DP_STAGE_REAL] == 0 && o.lr[DP_STAGE_IL] == 0 &&
          o.lr[DP_STAGE_SIM] == 0 && o.lr[DP_STAGE_REAL] == 0 && o.seed == 42,
          "defaults: %d %d %d, lr %g %g %g (%s)", o.episodes[0], o.episodes[1], o.episodes[2], o.lr[0], o.lr[1],
          o.lr[2], err.msg);
    sentinel(&o);
    CHECK(dp_train_stages_parse(&o, "il,sim,real", "10,20,30", "0.5", &err) == 0 && o.episodes[DP_STAGE_IL] == 10 &&
          o.episodes[DP_STAGE_SIM] == 20 && o.episodes[DP_STAGE_REAL] == 30 && o.lr[DP_STAGE_IL] == 0.5 &&
          o.lr[DP_STAGE_SIM] == 0.5 && o.lr[DP_STAGE_REAL] == 0.5,
          "three stages, one rate: %d %d %d, lr %g %g %g (%s)", o.episodes[0], o.episodes[1], o.episodes[2],
          o.lr[0], o.lr[1], o.lr[2], err.msg);
    sentinel(&o);
    CHECK(dp_train_stages_parse(&o, "sim,real", "5,6", "1e-3,2e-3", &err) == 0 && o.episodes[DP_STAGE_IL] == 0 &&
          o.episodes[DP_STAGE_SIM] == 5 && o.episodes[DP_STAGE_REAL] == 6 && o.lr[DP_STAGE_IL] == 0 &&
          o.lr[DP_STAGE_SIM] == 1e-3 && o.lr[DP_STAGE_REAL] == 2e-3,
          "two stages, a rate each: %d %d %d, lr %g %g %g (%s)", o.episodes[0], o.episodes[1], o.episodes[2],
          o.lr[0], o.lr[1], o.lr[2], err.msg);
    refused("il,foo", NULL, NULL, DP_ERR_PARSE, "unknown stage 'foo'");
    refused("sim,il", NULL, NULL, DP_ERR_PARSE, "in the order il,sim,real");
    refused("il,il", NULL, NULL, DP_ERR_PARSE, "in the order il,sim,real");
    refused("il,", NULL, NULL, DP_ERR_PARSE, "not a list");
    refused("", NULL, NULL, DP_ERR_PARSE, "not a list");
    refused("il,sim", "0,5", NULL, DP_ERR_RANGE, "at least 1");
    refused("il,sim", "100", NULL, DP_ERR_PARSE, "1 count for 2 stages");
    refused("il,sim", "10,x", NULL, DP_ERR_PARSE, "'10,x' is not a list of counts");
    refused("il,sim", "10,-5", NULL, DP_ERR_PARSE, "not a list of counts");
    refused("il,sim", "10,20", "0", DP_ERR_RANGE, "positive");
    refused("il,sim", "10,20", "1,2,3", DP_ERR_PARSE, "3 rates for 2 stages");
    CHECK(dp_train_stages_parse(NULL, "il", "1", NULL, &err) == DP_ERR_ARG, "no options: not refused");
}

/* ---- 5. the training curve as CSV --------------------------------------- */
static void test_curve_csv(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    dp_episode_info r[3];
    memset(r, 0, sizeof r);
    r[0].stage = DP_STAGE_SIM; r[0].episode = 3; r[0].graph = 1; r[0].cost = 12; r[0].lower_bound = 8;
    r[0].best = 10; r[0].epsilon = 0.5; r[0].lr = 0.001; r[0].loss = -0.25; r[0].entropy = 1.5; r[0].seconds = 0.125;
    r[1].stage = DP_STAGE_IL; r[1].cost = 0; r[1].lower_bound = 0;     /* 0 / 0: ratio 1 */
    r[2].stage = DP_STAGE_REAL; r[2].cost = 3; r[2].lower_bound = 0;   /* 3 / 0: inf    */
    const char *want =
        "stage,episode,graph,cost,lower_bound,ratio,best,epsilon,lr,loss,entropy,seconds\n"
        "sim,3,1,12,8,1.500000,10,0.500000,0.001,-0.25,1.5,0.1250\n"
        "il,0,0,0,0,1.000000,0,0.000000,0,0,0,0.0000\n"
        "real,0,0,3,0,inf,0,0.000000,0,0,0,0.0000\n";
    char path[512];
    dp_test_tmp(path, sizeof path, "test_api_curve.csv");
    remove(path);
    CHECK(dp_curve_csv(path, r, 3, &err) == 0, "dp_curve_csv: %s", err.msg);
    size_t len = 0;
    char *got = dp_test_read_file(path, &len);
    CHECK(got && len == strlen(want) && memcmp(got, want, len) == 0, "curve CSV:\n%s\nexpected:\n%s", got ? got : "(none)", want);
    free(got);
    remove(path);
    CHECK(dp_curve_csv(path, NULL, 2, &err) == DP_ERR_ARG && !dp_test_exists(path), "records missing: not refused, or a file left");
    char bad[600];
    snprintf(bad, sizeof bad, "%s.missing-dir/curve.csv", path);
    CHECK(dp_curve_csv(bad, r, 3, &err) != 0 && strstr(err.msg, "missing-dir"), "unwritable path: '%s'", err.msg);
}

/* ---- 6. DOPPLER's deployment stage ---------------------------------------- */
static void test_improve(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    dp_graph g;
    dp_gen_opts go;
    memset(&go, 0, sizeof go);
    go.nodes = 30;
    go.ccr = 1;
    go.seed = 5;
    if (dp_gen(&g, &go, &err)) { CHECK(0, "dp_gen: %s", err.msg); return; }
    dp_cluster c = cluster(3);
    dp_policy p;
    memset(&p, 0, sizeof p);
    if (dp_policy_init(&p, NULL, &err)) { CHECK(0, "dp_policy_init: %s", err.msg); dp_graph_free(&g); return; }
    double *before = (double *)malloc(sizeof(double) * (size_t)p.n_plc);
    memcpy(before, p.plc, sizeof(double) * (size_t)p.n_plc);
    int n = g.n_ops, a1[64], o1[64], a2[64], o2[64];
    double m1 = -1, m2 = -1;
    dp_improve_opts io;
    memset(&io, 0, sizeof io);
    io.episodes = 20;
    io.samples = 4;
    io.seed = 7;
    CHECK(dp_policy_improve(&p, &g, &c, &io, a1, o1, &m1, &err) == 0, "improve: %s", err.msg);
    CHECK(memcmp(before, p.plc, sizeof(double) * (size_t)p.n_plc) == 0, "improve changed the policy it was given");
    CHECK(dp_policy_improve(&p, &g, &c, &io, a2, o2, &m2, &err) == 0 && m1 == m2 &&
          memcmp(a1, a2, sizeof(int) * (size_t)n) == 0 && memcmp(o1, o2, sizeof(int) * (size_t)n) == 0,
          "improve: not deterministic (%g, %g)", m1, m2);
    /* the answer is what it says: the simulator gives the same makespan,
       and SEL's order is a permutation of the ops */
    dp_sim s;
    memset(&s, 0, sizeof s);
    if (dp_sim_init(&s, &g, &c, &err) == 0) {
        CHECK(dp_sim_run(&s, a1, NULL, &err) == 0 && s.makespan == m1, "improve's makespan %g, simulated %g", m1, s.makespan);
        dp_sim_free(&s);
    }
    int seen_op[64] = {0}, perm = 1;
    for (int k = 0; k < n; k++) {
        if (o1[k] < 0 || o1[k] >= n || seen_op[o1[k]]++) perm = 0;
        if (a1[k] < 0 || a1[k] >= 3) perm = 0;
    }
    CHECK(perm, "improve: order not a permutation, or a device out of range");
    io.episodes = -1;
    CHECK(dp_policy_improve(&p, &g, &c, &io, a1, o1, &m1, &err) == DP_ERR_RANGE, "negative episodes: not refused");
    io.episodes = 5;
    CHECK(dp_policy_improve(NULL, &g, &c, &io, a1, o1, &m1, &err) == DP_ERR_ARG, "no policy: not refused");
    free(before);
    dp_policy_free(&p);
    dp_graph_free(&g);
    dp_cluster_free(&c);
}

/* ---- 7. polish: local search from a policy's answer ---------------------
   Ops a, b, c of cost 1, 2, 3, no edges, 2 devices. Every placement but
   the optimum (c alone on one device: makespan 3) has a single move that
   lowers its makespan, and enumopt's passes (c, b, a by b-level) reach 3
   from each of the 8 (worked through: {abc} moves c (3); {ab|c} is it;
   {a|bc} moves c (4), then a (3); {ac|b} moves a (3); {b|ac} moves a
   (3); {bc|a} moves c (4), then a (3); and their mirror images). So an
   untrained policy, DOPPLER's or Placeto's, polished gives 3, with c
   alone, whatever it placed. */
static void test_polish(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    dp_graph g;
    op_t ops[3] = {{"a", 1, 0, 0}, {"b", 2, 0, 0}, {"c", 3, 0, 0}};
    if (dp_test_build(&g, 3, ops, 0, NULL)) return;
    dp_cluster c = cluster(2);
    for (int algo = DP_ALGO_DOPPLER; algo <= DP_ALGO_PLACETO; algo++) {
        const char *name = algo == DP_ALGO_DOPPLER ? "doppler" : "placeto";
        for (uint64_t seed = 1; seed <= 4; seed++) {
            dp_policy p;
            dp_policy_opts po;
            memset(&po, 0, sizeof po);
            po.algo = (dp_algo)algo; po.devices = 2; po.hidden = 4; po.seed = seed;
            if (dp_policy_init(&p, &po, &err)) { CHECK(0, "%s policy: %s", name, err.msg); continue; }
            dp_infer_opts io;
            memset(&io, 0, sizeof io);
            io.start = "single";   /* placeto: from {abc} (6) */
            int a0[3], a1[3];
            long s0 = 0, s1 = 0;
            double m0 = 0, m1 = 0;
            io.simulations = &s0;
            CHECK(dp_policy_place(&p, &g, &c, &io, a0, NULL, &m0, &err) == 0, "%s place: %s", name, err.msg);
            io.polish = 100; io.simulations = &s1;
            CHECK(dp_policy_place(&p, &g, &c, &io, a1, NULL, &m1, &err) == 0, "%s polish: %s", name, err.msg);
            CHECK(m1 == 3 && a1[0] == a1[1] && a1[2] != a1[0], "%s seed %d: polished %g on %d %d %d (3, c alone)",
                  name, (int)seed, m1, a1[0], a1[1], a1[2]);
            CHECK(m0 >= 3 && m0 <= 6, "%s seed %d: unpolished %g", name, (int)seed, m0);
            /* the passes' simulations: at least one pass of 3 ops x 1 other
               device, and the final scoring */
            CHECK(s0 >= 1 && s1 >= s0 + 4, "%s seed %d: simulations %ld unpolished, %ld polished", name, (int)seed, s0, s1);
            double ms = 0;
            CHECK(dp_simulate(&g, &c, a1, NULL, &ms, &err) == 0 && ms == m1, "%s: reported %g, simulated %g", name, m1, ms);
            io.polish = 101;
            CHECK(dp_policy_place(&p, &g, &c, &io, a1, NULL, &m1, &err) == DP_ERR_RANGE && strstr(err.msg, "polish 101"),
                  "%s: polish 101 not refused: '%s'", name, err.msg);
            io.polish = -1;
            CHECK(dp_policy_place(&p, &g, &c, &io, a1, NULL, &m1, &err) == DP_ERR_RANGE, "%s: polish -1 not refused", name);
            dp_policy_free(&p);
        }
    }
    /* the deployment stage polishes its best too */
    {
        dp_policy p;
        dp_improve_opts im;
        int a[3];
        long sims = 0;
        double m = 0;
        memset(&im, 0, sizeof im);
        im.episodes = 3; im.polish = 5; im.simulations = &sims;
        if (dp_policy_init(&p, NULL, &err) == 0) {
            CHECK(dp_policy_improve(&p, &g, &c, &im, a, NULL, &m, &err) == 0 && m == 3, "improve + polish: %g (%s)", m, err.msg);
            CHECK(sims >= 3, "improve + polish: %ld simulations", sims);
            dp_policy_free(&p);
        }
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- 8. time limits: training, samples, polish, the deployment stage ------
   Each given more work than it could do in minutes stops at the first
   look at the clock past its limit, says so, and answers with what it
   has (the policy at the stop; a placement no worse than the greedy one,
   simulating to its makespan); a limit not reached changes nothing; a
   limit that is negative is refused. */
typedef struct steps_seen { int calls, bad; } steps_seen;

static void on_step(void *ctx, const char *step, long done, long total, double best)
{
    steps_seen *s = (steps_seen *)ctx;
    s->calls++;
    if (strcmp(step, "samples") || done < 0 || done > total || !(best > 0)) s->bad++;
}

static void test_time_limits(void)
{
    dp_error err;
    dp_graph g;
    dp_gen_opts go;
    dp_policy p, q;
    dp_train_opts to;
    dp_train_result tr;
    dp_infer_opts io;
    dp_improve_opts im;
    double t0, greedy = 0, m = 0, m2 = 0, ms = 0;
    int *a, *a2, lim = -1;
    memset(&err, 0, sizeof err);
    memset(&go, 0, sizeof go);
    go.nodes = 60; go.ccr = 1; go.seed = 9;
    if (dp_gen(&g, &go, &err)) { CHECK(0, "dp_gen: %s", err.msg); return; }
    dp_cluster c = cluster(4);
    dp_policy_opts po;
    memset(&po, 0, sizeof po);
    po.hidden = 8; po.layers = 1; po.seed = 4;
    if (dp_policy_init(&p, &po, &err) || dp_policy_init(&q, &po, &err)) { CHECK(0, "dp_policy_init: %s", err.msg); dp_graph_free(&g); return; }
    a = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    a2 = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
    const dp_graph *gs[1] = {&g};

    /* training: stages of a million episodes, stopped after 0.3 s */
    memset(&to, 0, sizeof to);
    to.episodes[DP_STAGE_IL] = 1000000; to.episodes[DP_STAGE_SIM] = 1000000;
    to.time_limit = 0.3;
    t0 = dp_now();
    CHECK(dp_train(&p, gs, 1, &c, &to, &tr, &err) == 0, "train with a time limit: %s", err.msg);
    t0 = dp_now() - t0;
    CHECK(tr.time_limited == DP_TIME_LIMITED && tr.episodes > 0 && tr.episodes < 2000000,
          "train: time_limited %d after %ld episodes", tr.time_limited, tr.episodes);
    CHECK(t0 < 0.3 + 2, "train: %g s for a time limit of 0.3 s", t0);
    memset(&io, 0, sizeof io);
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &m, &err) == 0 && m > 0, "the policy at the stop places: %s", err.msg);
    /* a limit not reached: the same policy as none */
    memset(&to, 0, sizeof to);
    to.episodes[DP_STAGE_IL] = 10; to.episodes[DP_STAGE_SIM] = 10;
    CHECK(dp_train(&q, gs, 1, &c, &to, &tr, &err) == 0 && tr.time_limited == 0, "train: %s", err.msg);
    dp_policy_free(&p);
    if (dp_policy_init(&p, &po, &err)) { CHECK(0, "dp_policy_init: %s", err.msg); goto done; }
    to.time_limit = 1000;
    CHECK(dp_train(&p, gs, 1, &c, &to, &tr, &err) == 0 && tr.time_limited == 0, "train, limit not reached: %s", err.msg);
    CHECK(memcmp(p.sel, q.sel, sizeof(double) * (size_t)p.n_sel) == 0 && memcmp(p.plc, q.plc, sizeof(double) * (size_t)p.n_plc) == 0,
          "train: a time limit not reached changed the policy");
    to.time_limit = -1;
    CHECK(dp_train(&p, gs, 1, &c, &to, &tr, &err) == DP_ERR_RANGE && strstr(err.msg, "time limit -1"), "train: negative limit: '%s'", err.msg);

    /* samples and polish: the greedy placement always, then what the
       limit leaves */
    memset(&io, 0, sizeof io);
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &greedy, &err) == 0, "greedy: %s", err.msg);
    io.samples = 100000000; io.time_limit = 0.3; io.time_limited = &lim;
    t0 = dp_now();
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &m, &err) == 0, "samples with a time limit: %s", err.msg);
    t0 = dp_now() - t0;
    CHECK(lim == DP_TIME_LIMITED && t0 < 0.3 + 2 && m <= greedy, "samples: time_limited %d, %g s, makespan %g (greedy %g)", lim, t0, m, greedy);
    CHECK(dp_simulate(&g, &c, a, NULL, &ms, &err) == 0 && ms == m, "samples stopped: reported %g, simulated %g", m, ms);
    io.samples = 0; io.polish = 100; io.time_limit = 1e-9;
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &m, &err) == 0 && lim == DP_TIME_LIMITED && m <= greedy,
          "polish with a time limit: time_limited %d, makespan %g (greedy %g; %s)", lim, m, greedy, err.msg);
    CHECK(dp_simulate(&g, &c, a, NULL, &ms, &err) == 0 && ms == m, "polish stopped: reported %g, simulated %g", m, ms);
    io.samples = 16; io.polish = 2; io.time_limit = 0; io.time_limited = NULL;
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &m, &err) == 0, "samples + polish: %s", err.msg);
    io.time_limit = 1000; io.time_limited = &lim;
    CHECK(dp_policy_place(&p, &g, &c, &io, a2, NULL, &m2, &err) == 0 && lim == 0 && m2 == m && memcmp(a, a2, sizeof(int) * (size_t)g.n_ops) == 0,
          "samples + polish: a time limit not reached changed the answer (%g, %g)", m, m2);
    io.time_limit = -1;
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &m, &err) == DP_ERR_RANGE, "place: negative time limit not refused");
    /* progress only reports: the answer is the same with it; any report
       is of the samples, within their count */
    {
        steps_seen seen = {0, 0};
        memset(&io, 0, sizeof io);
        io.samples = 3000;
        CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &m, &err) == 0, "samples: %s", err.msg);
        io.progress = on_step; io.progress_ctx = &seen;
        CHECK(dp_policy_place(&p, &g, &c, &io, a2, NULL, &m2, &err) == 0 && m2 == m && memcmp(a, a2, sizeof(int) * (size_t)g.n_ops) == 0,
              "samples: progress changed the answer (%g, %g)", m, m2);
        CHECK(seen.bad == 0, "progress: %d of %d reports not of the samples within their count", seen.bad, seen.calls);
    }

    /* the deployment stage: a million episodes stopped after 0.3 s, its
       answer what it reached; a limit not reached changes nothing */
    memset(&im, 0, sizeof im);
    im.episodes = 1000000; im.samples = 4; im.polish = 2; im.time_limit = 0.3; im.time_limited = &lim;
    t0 = dp_now();
    CHECK(dp_policy_improve(&p, &g, &c, &im, a, NULL, &m, &err) == 0, "improve with a time limit: %s", err.msg);
    t0 = dp_now() - t0;
    CHECK(lim == DP_TIME_LIMITED && t0 < 0.3 + 2, "improve: time_limited %d, %g s", lim, t0);
    CHECK(dp_simulate(&g, &c, a, NULL, &ms, &err) == 0 && ms == m, "improve stopped: reported %g, simulated %g", m, ms);
    im.episodes = 20; im.time_limit = 0; im.time_limited = NULL;
    CHECK(dp_policy_improve(&p, &g, &c, &im, a, NULL, &m, &err) == 0, "improve: %s", err.msg);
    im.time_limit = 1000; im.time_limited = &lim;
    CHECK(dp_policy_improve(&p, &g, &c, &im, a2, NULL, &m2, &err) == 0 && lim == 0 && m2 == m && memcmp(a, a2, sizeof(int) * (size_t)g.n_ops) == 0,
          "improve: a time limit not reached changed the answer (%g, %g)", m, m2);
    im.time_limit = -1;
    CHECK(dp_policy_improve(&p, &g, &c, &im, a, NULL, &m, &err) == DP_ERR_RANGE, "improve: negative time limit not refused");
done:
    free(a); free(a2);
    dp_policy_free(&p);
    dp_policy_free(&q);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

int main(void)
{
    test_order_to_priority();
    test_runtime_cost_sim();
    test_runtime_cost_exec();
    test_stages_parse();
    test_curve_csv();
    test_improve();
    test_polish();
    test_time_limits();
    return dp_test_done();
}
