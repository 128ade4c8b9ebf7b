/* test_numeric.c - numerical safety of training. A cost, loss or gradient
   that is NaN or infinite stops dp_train with DP_ERR_RANGE and a message
   naming the stage, the episode and the graph, before that episode's
   update: the policy's parameters are then bit for bit those of a run
   stopped (by on_episode) just before the failing episode. Non-finite
   options are refused up front. A policy that is not finite is never
   saved over an existing file. */
#include <math.h>
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_error err;

static int same_params(const dp_policy *a, const dp_policy *b)
{
    if (a->n_sel != b->n_sel || a->n_plc != b->n_plc) return 0;
    if (a->n_sel && memcmp(a->sel, b->sel, sizeof(double) * (size_t)a->n_sel)) return 0;
    return memcmp(a->plc, b->plc, sizeof(double) * (size_t)a->n_plc) == 0;
}

static int all_finite(const dp_policy *p)
{
    int i, ok = 1;
    for (i = 0; i < p->n_sel; i++) ok &= isfinite(p->sel[i]) != 0;
    for (i = 0; i < p->n_plc; i++) ok &= isfinite(p->plc[i]) != 0;
    return ok;
}

/* ---- callbacks ------------------------------------------------------------ */
typedef struct {
    int calls, bad_at;      /* the bad_at-th call (0-based) returns `bad`  */
    double bad;
    const dp_graph *const *gs;
    int bad_graph;          /* which graph that call was for               */
} cost_ctx;

static int cost_cb(void *ctx, const dp_graph *g, const dp_cluster *c, const int *assign, const int *order,
                   double *cost, dp_error *e)
{
    cost_ctx *k = (cost_ctx *)ctx;
    int n = k->calls++, i;
    (void)order;
    if (n == k->bad_at) {
        for (i = 0; i < 2; i++) if (k->gs[i] == g) k->bad_graph = i;
        *cost = k->bad;
        return 0;
    }
    return dp_simulate(g, c, assign, NULL, cost, e);
}

typedef struct { int calls, stop_after; } count_ctx;

static int count_cb(void *ctx, const dp_episode_info *info)
{
    count_ctx *k = (count_ctx *)ctx;
    (void)info;
    k->calls++;
    return k->stop_after > 0 && k->calls >= k->stop_after;   /* stop_after 0: never */
}

static dp_graph G[2];
static dp_cluster C;

static int new_policy(dp_policy *p, dp_algo algo)
{
    dp_policy_opts po;
    memset(&po, 0, sizeof po);
    po.hidden = 6; po.layers = 2; po.seed = 11; po.algo = algo; po.devices = algo == DP_ALGO_PLACETO ? C.n : 0;
    int rc = dp_policy_init(p, &po, &err);
    CHECK(rc == 0, "policy: %s", err.msg);
    return rc;
}

/* Trains a fresh policy with `to` until it fails; then trains another fresh
   one with the same options but stopped by on_episode after the episodes
   the first completed; both must have the same parameters, bit for bit.
   Returns the failing run's code (its message in err). */
static int fail_and_compare(dp_algo algo, dp_train_opts to, int n_graphs, const char *what, long *episodes)
{
    dp_policy a, b;
    dp_train_result ra, rb;
    const dp_graph *gs[2] = { &G[0], &G[1] };
    count_ctx ka = {0, 0}, kb = {0, 0};
    dp_error eb;
    int rc, rc2;
    if (new_policy(&a, algo)) return -1;
    if (new_policy(&b, algo)) { dp_policy_free(&a); return -1; }
    to.on_episode = count_cb; to.on_episode_ctx = &ka;
    to.select = -1;   /* a run stopped by on_episode would end with the selection */
    memset(&err, 0, sizeof err);
    rc = dp_train(&a, gs, n_graphs, &C, &to, &ra, &err);
    *episodes = ra.episodes;
    CHECK(rc == DP_ERR_RANGE && (int)err.code == rc, "%s: rc %d '%s'", what, rc, err.msg);
    CHECK(ra.episodes == ka.calls, "%s: %ld episodes counted, %d reported", what, ra.episodes, ka.calls);
    CHECK(all_finite(&a), "%s: parameters not finite after the failure", what);
    if (ka.calls > 0) {
        kb.stop_after = ka.calls;
        to.on_episode_ctx = &kb;
        if (to.cost) ((cost_ctx *)to.cost_ctx)->calls = 0, ((cost_ctx *)to.cost_ctx)->bad_at = -1;
        rc2 = dp_train(&b, gs, n_graphs, &C, &to, &rb, &eb);
        CHECK(rc2 == 0 && rb.episodes == ka.calls, "%s: the run stopped before episode %d: rc %d, %ld episodes '%s'",
              what, ka.calls, rc2, rb.episodes, eb.msg);
    }
    CHECK(same_params(&a, &b), "%s: parameters differ from a run stopped just before the failing episode", what);
    dp_policy_free(&a);
    dp_policy_free(&b);
    return rc;
}

/* The message names the stage, the episode, the graph and the quantity. */
static void check_msg(const char *what, const char *stage, long episode, int graph, const char *quantity, const char *value)
{
    char ep[48], gr[48];
    snprintf(ep, sizeof ep, "episode %ld", episode);
    snprintf(gr, sizeof gr, "graph %d", graph);
    CHECK(strstr(err.msg, stage) && strstr(err.msg, ep) && strstr(err.msg, gr) && strstr(err.msg, quantity) &&
          dp_test_stristr(err.msg, value),
          "%s: message should name stage %s, %s, %s, the %s and '%s': '%s'", what, stage, ep, gr, quantity, value, err.msg);
}

static void test_bad_costs(void)
{
    static const struct { double v; const char *text; } bad[] = { {NAN, "nan"}, {INFINITY, "inf"}, {-1.0, "-1"} };
    const dp_graph *gs[2] = { &G[0], &G[1] };
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 2; k++) {
            int at = k ? 6 : 0;   /* the first real episode, and a later one */
            cost_ctx cc = {0, at, bad[i].v, gs, -1};
            dp_train_opts to;
            char what[96];
            long eps;
            memset(&to, 0, sizeof to);
            to.episodes[DP_STAGE_IL] = 3; to.episodes[DP_STAGE_REAL] = 12; to.seed = 5;
            to.cost = cost_cb; to.cost_ctx = &cc;
            snprintf(what, sizeof what, "cost %s at real episode %d", bad[i].text, at);
            fail_and_compare(DP_ALGO_DOPPLER, to, 2, what, &eps);
            CHECK(eps == 3 + at, "%s: %ld episodes done before it, expected %d", what, eps, 3 + at);
            check_msg(what, "real", at, cc.bad_graph, "cost", bad[i].text);
        }
    }
}

/* A learning rate of 1e300: the first update throws the weights to about
   +-1e300, the next forward pass overflows. Imitation sees a NaN loss;
   REINFORCE clamps its log-probabilities, so there the gradient is the
   first thing that is not finite. */
static void test_divergence(void)
{
    dp_train_opts to;
    long eps;
    memset(&to, 0, sizeof to);
    to.episodes[DP_STAGE_IL] = 10; to.lr[DP_STAGE_IL] = 1e300; to.seed = 3;
    fail_and_compare(DP_ALGO_DOPPLER, to, 1, "doppler il, lr 1e300", &eps);
    CHECK(eps >= 1, "doppler il, lr 1e300: failed at episode %ld, before any update", eps);
    check_msg("doppler il, lr 1e300", "il", eps, 0, "loss", "nan");

    memset(&to, 0, sizeof to);
    to.episodes[DP_STAGE_SIM] = 10; to.lr[DP_STAGE_SIM] = 1e300; to.seed = 3;
    fail_and_compare(DP_ALGO_DOPPLER, to, 1, "doppler sim, lr 1e300", &eps);
    CHECK(eps >= 1, "doppler sim, lr 1e300: failed at episode %ld, before any update", eps);
    check_msg("doppler sim, lr 1e300", "sim", eps, 0, "gradient", "nan");

    memset(&to, 0, sizeof to);
    to.episodes[DP_STAGE_SIM] = 10; to.lr[DP_STAGE_SIM] = 1e300; to.seed = 3;
    fail_and_compare(DP_ALGO_PLACETO, to, 1, "placeto sim, lr 1e300", &eps);
    CHECK(eps >= 1, "placeto sim, lr 1e300: failed at episode %ld, before any update", eps);
    CHECK(strstr(err.msg, "sim") && dp_test_stristr(err.msg, "nan"), "placeto: '%s'", err.msg);

    /* the same in the second of two graphs: the message names the graph */
    memset(&to, 0, sizeof to);
    to.episodes[DP_STAGE_IL] = 10; to.lr[DP_STAGE_IL] = 1e300; to.seed = 3;
    fail_and_compare(DP_ALGO_DOPPLER, to, 2, "two graphs, lr 1e300", &eps);
    CHECK(strstr(err.msg, "graph 0") || strstr(err.msg, "graph 1"), "two graphs: '%s'", err.msg);

    /* and an ordinary rate trains the same graph without complaint */
    {
        dp_policy p;
        dp_train_result r;
        const dp_graph *gs[1] = { &G[0] };
        if (new_policy(&p, DP_ALGO_DOPPLER) == 0) {
            memset(&to, 0, sizeof to);
            to.episodes[DP_STAGE_IL] = 10; to.episodes[DP_STAGE_SIM] = 10; to.seed = 3;
            int rc = dp_train(&p, gs, 1, &C, &to, &r, &err);
            CHECK(rc == 0 && r.episodes == 20 && all_finite(&p), "default rates: rc %d '%s'", rc, err.msg);
            dp_policy_free(&p);
        }
    }
}

/* A policy whose weights overflow the first forward pass: episode 0 fails,
   no update is made, the parameters are untouched. */
static void test_huge_weights(void)
{
    dp_policy p, keep;
    dp_train_result r;
    dp_train_opts to;
    const dp_graph *gs[1] = { &G[0] };
    if (new_policy(&p, DP_ALGO_DOPPLER) || new_policy(&keep, DP_ALGO_DOPPLER)) return;
    for (int i = 0; i < p.n_sel; i++) p.sel[i] *= 1e300;
    for (int i = 0; i < p.n_plc; i++) p.plc[i] *= 1e300;
    for (int i = 0; i < p.n_sel; i++) keep.sel[i] = p.sel[i];
    for (int i = 0; i < p.n_plc; i++) keep.plc[i] = p.plc[i];
    for (int st = DP_STAGE_IL; st <= DP_STAGE_SIM; st++) {
        memset(&to, 0, sizeof to);
        to.episodes[st] = 5;
        memset(&err, 0, sizeof err);
        int rc = dp_train(&p, gs, 1, &C, &to, &r, &err);
        CHECK(rc == DP_ERR_RANGE && r.episodes == 0 && strstr(err.msg, "episode 0") && strstr(err.msg, dp_stage_name((dp_stage)st)),
              "weights of 1e300, stage %s: rc %d, %ld episodes '%s'", dp_stage_name((dp_stage)st), rc, r.episodes, err.msg);
        CHECK(same_params(&p, &keep), "weights of 1e300, stage %s: parameters changed", dp_stage_name((dp_stage)st));
    }
    dp_policy_free(&p);
    dp_policy_free(&keep);
}

static void test_bad_options(void)
{
    dp_policy p, keep;
    dp_train_result r;
    const dp_graph *gs[1] = { &G[0] };
    if (new_policy(&p, DP_ALGO_DOPPLER) || new_policy(&keep, DP_ALGO_DOPPLER)) return;
    for (int k = 0; k < 9; k++) {
        dp_train_opts to;
        memset(&to, 0, sizeof to);
        to.episodes[DP_STAGE_IL] = 3;
        switch (k) {
        case 0: to.lr[DP_STAGE_IL] = NAN; break;
        case 1: to.lr[DP_STAGE_IL] = INFINITY; break;
        case 2: to.lr[DP_STAGE_IL] = -1e-3; break;
        case 3: to.eps_start[DP_STAGE_IL] = NAN; break;
        case 4: to.gamma = NAN; break;
        case 5: to.clip = INFINITY; break;
        case 6: to.entropy = NAN; break;
        case 7: to.lr_final = -INFINITY; break;
        case 8: to.baseline_decay = 2; break;
        }
        memset(&err, 0, sizeof err);
        int rc = dp_train(&p, gs, 1, &C, &to, &r, &err);
        CHECK(rc == DP_ERR_RANGE && err.msg[0], "bad option %d: rc %d '%s'", k, rc, err.msg);
        CHECK(same_params(&p, &keep), "bad option %d changed the policy", k);
    }
    dp_policy_free(&p);
    dp_policy_free(&keep);
}

/* An existing policy file is never replaced by a policy that is not finite. */
static void test_save_guard(void)
{
    dp_policy p;
    char path[256], tmp[300];
    static const char old[] = "the previous policy file\n";
    if (new_policy(&p, DP_ALGO_DOPPLER)) return;
    dp_test_tmp(path, sizeof path, "numeric_keep.dpl");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    for (int k = 0; k < 2; k++) {
        dp_test_write_file(path, old, sizeof old - 1);
        double save = p.plc[p.n_plc / 2];
        p.plc[p.n_plc / 2] = k ? INFINITY : NAN;
        memset(&err, 0, sizeof err);
        int rc = dp_policy_save(&p, path, &err);
        p.plc[p.n_plc / 2] = save;
        size_t len = 0;
        char *back = dp_test_read_file(path, &len);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "parameter"), "saving a %s parameter: rc %d '%s'", k ? "inf" : "NaN", rc, err.msg);
        CHECK(back && len == sizeof old - 1 && memcmp(back, old, len) == 0, "the existing file was replaced by a %s policy", k ? "inf" : "NaN");
        CHECK(!dp_test_exists(tmp), "%s left behind", tmp);
        free(back);
    }
    memset(&err, 0, sizeof err);
    CHECK(dp_policy_save(&p, path, &err) == 0, "saving the finite policy: %s", err.msg);
    remove(path);
    dp_policy_free(&p);
}

int main(void)
{
    dp_gen_opts go;
    double t0 = dp_now();
    memset(&go, 0, sizeof go);
    go.nodes = 14; go.seed = 44; go.ccr = 0.5;
    if (dp_gen(&G[0], &go, &err)) { CHECK(0, "gen: %s", err.msg); return dp_test_done(); }
    go.nodes = 10; go.seed = 45; go.shape = DP_GEN_RANDOM;
    if (dp_gen(&G[1], &go, &err)) { CHECK(0, "gen: %s", err.msg); return dp_test_done(); }
    if (dp_cluster_homogeneous(&C, 3, 1, 1, 0, &err)) { CHECK(0, "cluster: %s", err.msg); return dp_test_done(); }
    test_bad_costs();
    test_divergence();
    test_huge_weights();
    test_bad_options();
    test_save_guard();
    dp_cluster_free(&C);
    dp_graph_free(&G[0]);
    dp_graph_free(&G[1]);
    printf("test_numeric: %.2f s\n", dp_now() - t0);
    return dp_test_done();
}
