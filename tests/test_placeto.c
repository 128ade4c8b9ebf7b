/* test_placeto.c - Placeto: the progressive message-passing layer by hand,
   the parent/child/parallel groups by hand, finite-difference checks of the
   embedding, the head, the episode gradient and the one-step improvement
   (by hand), learning on a small graph with either update,
   checkpoints, refusals and determinism.
   Uses the private dp__ functions of >>gnn and >>placeto. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_error err;

/* ========================================================================
   1. The layer's modes on a chain a -> b -> c, H = 1, worked by hand.
   One round with Ws = 0, Wf = Wb = 1, af = ab = 0, b = 0 computes
   h'_v = h_v + relu(mean of the sources over v's neighbours).
   ======================================================================== */
static void test_layer_modes(void)
{
    dp_graph g;
    op_t ops[3] = {{"a", 1, 0, 0}, {"b", 1, 0, 0}, {"c", 1, 0, 0}};
    ed_t eds[2] = {{0, 1, 0}, {1, 2, 0}};
    if (dp_test_build(&g, 3, ops, 2, eds)) return;
    /* the edge feature (lat + bytes ibw) / mean op time: 0 without links */
    dp__ef ce = {g.bytes, 1, 1, 4, 0}, ce2 = {g.bytes, 1, 1, 4, 1};
    double pre[3], mf[3], mb[3], out[3];
    /* BOTH (6 numbers): Ws Wf Wb af ab b; FWD and BWD (4): Ws Wm am b.
       The layer also takes the weights with each matrix transposed: with
       H = 1 that is the same array. */
    double both[6] = {0, 1, 1, 0, 0, 0}, dir[4] = {0, 1, 0, 0};
    double h_src[3] = {1, 0, 0}, h_snk[3] = {0, 0, 1};

    /* synchronous: only direct neighbours of the round's inputs, the
       parents' mean and the children's mean entering separately.
       a: 1 + relu(Wb * b = 0) = 1; b: 0 + relu(Wf * a + Wb * c = 1 + 0) = 1;
       c: 0 + relu(Wf * b = 0) = 0 */
    dp__mp_forward(&g, &ce, 1, DP__MP_BOTH, both, both, h_src, out, pre, mf, mb, 0, 1);
    CHECK_NEAR(out[0], 1.0, 1e-15, "BOTH a");
    CHECK_NEAR(out[1], 1.0, 1e-15, "BOTH b");
    CHECK_NEAR(out[2], 0.0, 1e-15, "BOTH c (two hops away: not reached in one round)");
    /* the same round with its messages made two ops at a time (inference's
       blocks of rows: ops a and b, then c, in buffers of two rows): the
       same values */
    double mf2[3] = {0, 0, -7}, mb2[3] = {0, 0, -7}, out2[3];
    dp__mp_forward(&g, &ce, 1, DP__MP_BOTH, both, both, h_src, out2, pre, mf2, mb2, 2, 1);
    CHECK(out2[0] == 1 && out2[1] == 1 && out2[2] == 0 && mf2[2] == -7 && mb2[2] == -7,
          "BOTH in blocks of two ops: %g %g %g (a third row written: %g %g)", out2[0], out2[1], out2[2], mf2[2], mb2[2]);
    /* ... where the second block's op has messages of its own, the two
       directions weighed apart (Wf 1, Wb 2) and b the only nonzero input:
       a: 0 + relu(Wb * b = 2) = 2; b: 1 + relu(Wf * a + Wb * c = 0) = 1;
       c: 0 + relu(Wf * b = 1) = 1, whole and two ops at a time (c's
       messages added to its own row, made from its own neighbours) */
    double both2[6] = {0, 1, 2, 0, 0, 0}, h_mid[3] = {0, 1, 0};
    for (int rows = 0; rows <= 2; rows += 2) {
        double mf3[3] = {0, 0, -7}, mb3[3] = {0, 0, -7};
        dp__mp_forward(&g, &ce, 1, DP__MP_BOTH, both2, both2, h_mid, out2, pre, mf3, mb3, rows, 1);
        CHECK(out2[0] == 2 && out2[1] == 1 && out2[2] == 1, "BOTH, Wb 2, %s: %g %g %g (want 2 1 1)", rows ? "in blocks of two ops" : "whole",
              out2[0], out2[1], out2[2]);
    }

    /* progressive forward: a = 1; b = 0 + relu(a' = 1) = 1; c = 0 + relu(b' = 1) = 1 */
    dp__mp_forward(&g, &ce, 1, DP__MP_FWD, dir, dir, h_src, out, pre, mf, mb, 0, 1);
    CHECK_NEAR(out[0], 1.0, 1e-15, "FWD a");
    CHECK_NEAR(out[1], 1.0, 1e-15, "FWD b");
    CHECK_NEAR(out[2], 1.0, 1e-15, "FWD c (reached through b's new value)");
    /* ... and it ignores children: from the sink nothing flows up */
    dp__mp_forward(&g, &ce, 1, DP__MP_FWD, dir, dir, h_snk, out, pre, mf, mb, 0, 1);
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 1, "FWD from the sink: %g %g %g", out[0], out[1], out[2]);

    /* progressive backward, the mirror image */
    dp__mp_forward(&g, &ce, 1, DP__MP_BWD, dir, dir, h_snk, out, pre, mf, mb, 0, 1);
    CHECK(out[0] == 1 && out[1] == 1 && out[2] == 1, "BWD from the sink: %g %g %g", out[0], out[1], out[2]);
    dp__mp_forward(&g, &ce, 1, DP__MP_BWD, dir, dir, h_src, out, pre, mf, mb, 0, 1);
    CHECK(out[0] == 1 && out[1] == 0 && out[2] == 0, "BWD from the source: %g %g %g", out[0], out[1], out[2]);

    /* edge features: with af = 2 and c_e = (1 + 0 bytes) / 4 = 0.25 the
       message into b is a' + 0.5: b = 0 + relu(1.5) */
    double dir_e[4] = {0, 1, 2, 0};
    CHECK(dp__ef_at(&ce2, 0) == 0.25 && dp__ef_at(&ce2, 1) == 0.25 && dp__ef_at(&ce, 0) == 0, "edge features %g %g, without links %g",
          dp__ef_at(&ce2, 0), dp__ef_at(&ce2, 1), dp__ef_at(&ce, 0));
    dp__mp_forward(&g, &ce2, 1, DP__MP_FWD, dir_e, dir_e, h_src, out, pre, mf, mb, 0, 1);
    CHECK_NEAR(out[1], 1.5, 1e-15, "FWD b with an edge feature");
    CHECK_NEAR(out[2], 2.0, 1e-15, "FWD c = relu(b' + 0.5)");
    dp_graph_free(&g);
}

/* ========================================================================
   2. The groups of the head, by hand.
   a -> b, a -> c, b -> d, c -> d, b -> f, e alone.
   ======================================================================== */
static void test_groups(void)
{
    dp_graph g;
    dp_cluster c;
    op_t ops[6] = {{"a", 1, 1, 0}, {"b", 2, 1, 0}, {"c", 3, 1, 0}, {"d", 1, 1, 0}, {"e", 1, 1, 0}, {"f", 1, 1, 0}};
    ed_t eds[5] = {{0, 1, 1}, {0, 2, 1}, {1, 3, 1}, {2, 3, 1}, {1, 5, 1}};
    if (dp_test_build(&g, 6, ops, 5, eds)) return;
    CHECK(dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    dp_policy p;
    dp_policy_opts po = {0};
    po.algo = DP_ALGO_PLACETO; po.devices = 2; po.hidden = 4; po.seed = 1;
    CHECK(dp_policy_init(&p, &po, &err) == 0, "policy: %s", err.msg);
    dp__pctx x;
    CHECK(dp__pt_init(&x, &g, &c, &p, DP_METHOD_SINGLE, DP_ORDER_FIFO, 0, &err) == 0, "init: %s", err.msg);
    /* expected groups: 0 self, 1 ancestor, 2 descendant, 3 parallel */
    static const int want[6][6] = {
        /* v = a */ {0, 2, 2, 2, 3, 2},
        /* v = b */ {1, 0, 3, 2, 3, 2},
        /* v = c */ {1, 3, 0, 2, 3, 3},
        /* v = d */ {1, 1, 1, 0, 3, 3},
        /* v = e */ {3, 3, 3, 3, 0, 3},
        /* v = f */ {1, 1, 3, 3, 3, 0},
    };
    for (int v = 0; v < 6; v++) {
        double cnt[4] = {0, 0, 0, 0};
        dp__pt_embed(&x, p.plc);
        dp__pt_head(&x, p.plc, v);
        int ok = 1;
        for (int q = 0; q < 6; q++) { ok &= x.mark[q] == want[v][q]; cnt[want[v][q]] += 1; }
        CHECK(ok, "op %s: groups %d %d %d %d %d %d", ops[v].name, x.mark[0], x.mark[1], x.mark[2], x.mark[3], x.mark[4], x.mark[5]);
        for (int k = 0; k < 4; k++) CHECK(x.cnt[k] == cnt[k], "op %s group %d: %g ops, expected %g", ops[v].name, k, x.cnt[k], cnt[k]);
        /* u's group parts are the group means of the final embedding */
        const double *e = dp__gnn_round(&x.gnn, x.gnn.h, 2 * x.K);
        for (int k = 1; k < 4; k++)
            for (int i = 0; i < x.H; i++) {
                double s = 0;
                for (int q = 0; q < 6; q++) if (want[v][q] == k) s += e[q * x.H + i];
                CHECK_NEAR(x.u[k * x.H + i], cnt[k] ? s / cnt[k] : 0, 1e-12, "group mean");
            }
        double ps = 0;
        for (int d = 0; d < 2; d++) ps += x.prob[d];
        CHECK_NEAR(ps, 1.0, 1e-12, "probabilities sum to 1");
    }
    /* features: the starting one-hot, cost and output z-scored (costs 1 2 3 1 1 1) */
    {
        double mu = 9.0 / 6, sd = sqrt((3 * 0.25 + 0.25 + 2.25 + 0.25) / 6);
        CHECK_NEAR(x.x[1 * x.F + 0], (2 - mu) / sd, 1e-12, "z-scored cost of b");
        CHECK_NEAR(x.x[2 * x.F + 0], (3 - mu) / sd, 1e-12, "z-scored cost of c");
    }
    dp__pt_free(&x);
    dp_policy_free(&p);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ========================================================================
   3. Finite differences
   ======================================================================== */
static int gen_graph(dp_graph *g, int nodes, double ccr, uint64_t seed)
{
    dp_gen_opts go;
    memset(&go, 0, sizeof go);
    go.nodes = nodes; go.ccr = ccr; go.seed = seed;
    int rc = dp_gen(g, &go, &err);
    CHECK(rc == 0, "dp_gen: %s", err.msg);
    return rc;
}

/* the named blocks of Placeto's parameter vector */
static int pt_blocks(const dp_policy *p, const char **name, size_t *off, size_t *len)
{
    int H = p->opts.hidden, D = p->opts.devices, K = p->opts.layers, nb = 0;
    static char names[64][24];
    name[nb] = "input"; off[nb] = 0; len[nb] = dp__pt_round_off(H, D, 0); nb++;
    for (int r = 0; r < 2 * K; r++) {
        snprintf(names[r], sizeof names[r], "%s round %d", r % 2 ? "BWD" : "FWD", r / 2);
        name[nb] = names[r]; off[nb] = dp__pt_round_off(H, D, r); len[nb] = dp__pt_round_off(H, D, r + 1) - off[nb]; nb++;
    }
    size_t h = dp__pt_round_off(H, D, 2 * K);
    name[nb] = "W1"; off[nb] = h; len[nb] = 4 * (size_t)H * H; nb++;
    name[nb] = "b1"; off[nb] = h + 4 * (size_t)H * H; len[nb] = H; nb++;
    name[nb] = "W2"; off[nb] = off[nb - 1] + H; len[nb] = (size_t)D * H; nb++;
    name[nb] = "b2"; off[nb] = off[nb - 1] + (size_t)D * H; len[nb] = D; nb++;
    name[nb] = "keep"; off[nb] = off[nb - 1] + D; len[nb] = 1; nb++;
    CHECK(off[nb - 1] + len[nb - 1] == (size_t)p->n_plc, "blocks cover %zu of %d parameters", off[nb - 1] + len[nb - 1], p->n_plc);
    return nb;
}

/* Compares gradient an[] with central differences of f over every
   parameter: each must agree to 1e-5 (relative) at step 1e-6 or, where a
   ReLU kink lies within the step, at 1e-7 or 1e-8. */
typedef double (*objective)(void *ctx, dp_policy *p);

static void fd_compare(dp_policy *p, const double *an, objective f, void *ctx, const char *what)
{
    const char *name[64];
    size_t off[64], len[64];
    int nb = pt_blocks(p, name, off, len);
    for (int b = 0; b < nb; b++) {
        int bad = 0, nonzero = 0;
        double worst = 0;
        for (size_t i = off[b]; i < off[b] + len[b]; i++) {
            double w = p->plc[i], rel = 1, f0 = f(ctx, p);
            for (double h = 1e-6; h >= 1e-8 && rel > 1e-5; h /= 10) {
                p->plc[i] = w + h; double a = f(ctx, p);
                p->plc[i] = w - h; double c = f(ctx, p);
                p->plc[i] = w;
                double fd = (a - c) / (2 * h), up = (a - f0) / h, dn = (f0 - c) / h;
                rel = fabs(fd - an[i]) / (fabs(fd) + fabs(an[i]) + 1e-3);   /* ~1e-8 absolute near 0 */
                /* a ReLU exactly at its kink (a pre-activation of exactly 0):
                   the one-sided slopes differ and the analytic value (the
                   slope of the side that counts pre = 0 as off) is one of them */
                if (fabs(up - dn) > 1e-3 * (fabs(up) + fabs(dn)) &&
                    (fabs(an[i] - up) <= 1e-5 * (fabs(up) + 1e-9) || fabs(an[i] - dn) <= 1e-5 * (fabs(dn) + 1e-9)))
                    rel = 0;
            }
            nonzero += an[i] != 0;
            if (rel > worst) worst = rel;
            if (rel > 1e-5 && getenv("DP_TEST_VERBOSE")) printf("  %s: %s[%zu] analytic %.10g rel %.3g\n", what, name[b], i - off[b], an[i], rel);
            if (rel > 1e-5) bad++;
        }
        CHECK(bad == 0, "%s: %s: %d of %zu parameters disagree (worst relative error %.3g)", what, name[b], bad, len[b], worst);
        CHECK(nonzero > 0, "%s: %s: the gradient is all zero (nothing checked)", what, name[b]);
    }
}

typedef struct step_ctx { dp__pctx *x; int v; const double *r; } step_ctx;

/* sum_d r_d logit_d at op v in the current state */
static double step_objective(void *c, dp_policy *p)
{
    step_ctx *s = (step_ctx *)c;
    dp__pt_embed(s->x, p->plc);
    dp__pt_head(s->x, p->plc, s->v);
    double L = 0;
    for (int d = 0; d < s->x->nd; d++) L += s->r[d] * s->x->logit[d];
    return L;
}

typedef struct ep_ctx { dp__pctx *x; const double *adv; } ep_ctx;

/* The REINFORCE surrogate with the recorded moves replayed and their
   advantages held fixed: (1/n) sum_t adv_t (-log p_t(a_t)). */
static double episode_objective(void *c, dp_policy *p)
{
    ep_ctx *s = (ep_ctx *)c;
    dp__roll_opts ro = {0};
    dp__roll_stats rs;
    double cost, L = 0;
    dp_error e;
    int rc = dp__pt_episode(s->x, p, &ro, 1, NULL, DP_ORDER_FIFO, NULL, NULL, NULL, &cost, &rs, &e);
    if (rc) return NAN;
    for (int t = 0; t < s->x->n; t++) L -= s->adv[t] * s->x->lp[t];
    return L / s->x->n;
}

static void test_gradients(void)
{
    dp_graph g;
    dp_cluster c;
    if (gen_graph(&g, 14, 1.0, 3)) return;
    CHECK(dp_cluster_homogeneous(&c, 3, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    for (int K = 1; K <= 2; K++) {
        dp_policy p;
        dp_policy_opts po = {0};
        po.algo = DP_ALGO_PLACETO; po.devices = 3; po.hidden = 5; po.layers = K; po.seed = 11 + K;
        CHECK(dp_policy_init(&p, &po, &err) == 0, "policy: %s", err.msg);
        dp__pctx x;
        if (dp__pt_init(&x, &g, &c, &p, DP_METHOD_ROUND_ROBIN, DP_ORDER_FIFO, 1, &err)) {
            CHECK(0, "init: %s", err.msg);
            dp_policy_free(&p);
            continue;
        }
        double *gs = calloc((size_t)p.n_plc, sizeof(double)), *g1 = calloc((size_t)p.n_plc, sizeof(double));
        double *g2 = calloc((size_t)p.n_plc, sizeof(double));
        /* one step: a mixed state (some ops visited and moved), op 6 current */
        for (int v = 0; v < x.n; v++) {
            double *row = x.x + (size_t)v * x.F;
            int dev = (v * 7) % 3;
            row[2] = v == 6; row[3] = v < 6;
            for (int d = 0; d < 3; d++) row[4 + d] = d == dev;
        }
        double r[3] = {0.7, -1.3, 0.4};
        step_ctx sc = {&x, 6, r};
        step_objective(&sc, &p);
        memcpy(x.dl, r, sizeof r);
        dp__pt_backward(&x, p.plc, 6, gs);
        fd_compare(&p, gs, step_objective, &sc, K == 1 ? "one step, K=1" : "one step, K=2");

        /* a whole episode: sampled moves, gamma 0.7, baselines not zero;
           no keep prior, so that many moves change the makespan */
        p.plc[p.n_plc - 1] = 0;
        dp_rng rng;
        dp_rng_seed(&rng, 5);
        x.seen = 1; x.decay = 0.9;
        for (int t = 0; t < x.n; t++) x.base[t] = 0.05 * (dp_rng_uniform(&rng) - 0.5);
        dp__roll_opts ro = {0};
        dp__roll_stats rs;
        double cost;
        ro.sample = 1; ro.train = 1; ro.gamma = 0.7; ro.eps = 0.3;
        CHECK(dp__pt_episode(&x, &p, &ro, 0, &rng, DP_ORDER_FIFO, g1, g2, gs, &cost, &rs, &err) == 0, "episode: %s", err.msg);
        /* the advantages the gradient used, recomputed from the makespans
           by hand: R_t = r_t + 0.7 R_{t+1} over the starting makespan */
        double *adv = calloc((size_t)x.n, sizeof(double)), R = 0;
        int moved = 0;
        for (int t = x.n - 1; t >= 0; t--) {
            double after = t + 1 < x.n ? x.mstep[t + 1] : cost;
            R = (x.mstep[t] - after) / x.m0 + 0.7 * R;
            moved += x.mstep[t] != after;
            adv[t] = x.adv[t];
        }
        CHECK(moved > 0, "the episode changed the makespan at no step (nothing tested): m0 %g cost %g mstep0 %g sims %ld", x.m0, cost, x.mstep[0], x.sims);
        CHECK_NEAR(R, (x.m0 - cost) / x.m0 + 0, 1.0, "return of step 0 is finite");
        ep_ctx ec = {&x, adv};
        fd_compare(&p, g1, episode_objective, &ec, K == 1 ? "episode, K=1" : "episode, K=2");
        free(adv); free(gs); free(g1); free(g2);
        dp__pt_free(&x);
        dp_policy_free(&p);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ========================================================================
   3b. The one-step improvement (dp_train_opts.placeto_reinforce 0), by
   hand. Ops a (cost 1), b (cost 2), c (cost 3), no edges, 2 devices, the
   sweep starting with all three on device 0 (single: makespan 6) and
   visiting a, b, c. At a: on device 1 the makespan is 5 (b and c after
   each other on 0), r = (6 - 5) / 6 = 1/6, its own device r = 0.
   tau = 1/6 makes q proportional to (p_0, e p_1). The step's loss
   -sum_d q_d log p_d (q held fixed) is checked against finite
   differences, then a whole training sweep: it follows the policy's most
   likely device, simulates the other one (one more per op: 3 in all) and
   keeps the best placement it simulated.
   ======================================================================== */
typedef struct xe_ctx { dp__pctx *x; int v; const double *q; } xe_ctx;

/* -sum_d q_d log p_d at op v in the current state, q fixed */
static double xe_objective(void *c, dp_policy *p)
{
    xe_ctx *s = (xe_ctx *)c;
    dp__pt_embed(s->x, p->plc);
    dp__pt_head(s->x, p->plc, s->v);
    double L = 0, mx = s->x->logit[0], z = 0;
    for (int d = 1; d < s->x->nd; d++) if (s->x->logit[d] > mx) mx = s->x->logit[d];
    for (int d = 0; d < s->x->nd; d++) z += exp(s->x->logit[d] - mx);
    for (int d = 0; d < s->x->nd; d++) L -= s->q[d] * (s->x->logit[d] - mx - log(z));
    return L;
}

static void test_improve_step(void)
{
    dp_graph g;
    dp_cluster c;
    op_t ops[3] = {{"a", 1, 0, 0}, {"b", 2, 0, 0}, {"c", 3, 0, 0}};
    if (dp_test_build(&g, 3, ops, 0, NULL)) return;
    CHECK(dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    dp_policy p;
    dp_policy_opts po = {0};
    po.algo = DP_ALGO_PLACETO; po.devices = 2; po.hidden = 4; po.seed = 6;
    CHECK(dp_policy_init(&p, &po, &err) == 0, "policy: %s", err.msg);
    p.plc[p.n_plc - 1] = 0.5;   /* a smaller keep prior: both devices likely */
    dp__pctx x;
    if (dp__pt_init(&x, &g, &c, &p, DP_METHOD_SINGLE, DP_ORDER_FIFO, 1, &err)) {
        CHECK(0, "init: %s", err.msg);
        dp_policy_free(&p); dp_cluster_free(&c); dp_graph_free(&g);
        return;
    }
    CHECK(x.m0 == 6 && g.topo[0] == 0 && g.topo[1] == 1 && g.topo[2] == 2, "start %g, visit order %d %d %d", x.m0, g.topo[0], g.topo[1], g.topo[2]);
    double *g1 = calloc((size_t)p.n_plc, sizeof(double)), *gs = calloc((size_t)p.n_plc, sizeof(double));
    double *g2 = calloc((size_t)p.n_plc, sizeof(double));
    /* the state of the sweep's first step: a current, nothing visited, all on 0 */
    memcpy(x.assign, x.start, sizeof(int) * 3);
    x.run_best = x.m0;
    for (int v = 0; v < 3; v++) {
        double *row = x.x + (size_t)v * x.F;
        row[2] = v == 0; row[3] = 0; row[4] = 1; row[5] = 0;
    }
    dp__pt_embed(&x, p.plc);
    dp__pt_head(&x, p.plc, 0);
    double p0 = x.prob[0], p1 = x.prob[1];
    dp__roll_opts ro = {0};
    dp__roll_stats rs;
    memset(&rs, 0, sizeof rs);
    ro.train = 1; ro.improve = 1; ro.tau = 1.0 / 6;
    CHECK(dp__pt_improve(&x, &p, &ro, 0, 6, DP_ORDER_FIFO, g1, gs, &rs, &err) == 0, "improve: %s", err.msg);
    CHECK(x.md[0] == 6 && x.md[1] == 5, "makespans with a on 0, 1: %g %g (6, 5)", x.md[0], x.md[1]);
    CHECK(x.sims == 1 && x.assign[0] == 0, "%ld simulations, a left on %d", x.sims, x.assign[0]);
    CHECK(x.run_best == 5 && x.best_assign[0] == 1 && x.best_assign[1] == 0 && x.best_assign[2] == 0,
          "best %g (5: a alone on 1)", x.run_best);
    double q[2] = {p0 / (p0 + M_E * p1), M_E * p1 / (p0 + M_E * p1)};
    CHECK_NEAR(x.dl[0], p0 - q[0], 1e-14, "dl_0 = p_0 - q_0");
    CHECK_NEAR(x.dl[1], p1 - q[1], 1e-14, "dl_1 = p_1 - q_1");
    CHECK_NEAR(rs.wlogp, q[0] * log(p0) + q[1] * log(p1), 1e-14, "the step's loss is -sum q log p");
    for (int i = 0; i < p.n_plc; i++) CHECK(g1[i] == gs[i], "g1 gets the step's gradient (%d)", i);
    xe_ctx xc = {&x, 0, q};
    fd_compare(&p, gs, xe_objective, &xc, "one-step improvement");

    /* a whole training sweep, no random moves */
    double cost;
    dp_rng rng;
    dp_rng_seed(&rng, 1);
    memset(g1, 0, sizeof(double) * (size_t)p.n_plc);
    ro.eps = 0;
    CHECK(dp__pt_episode(&x, &p, &ro, 0, &rng, DP_ORDER_FIFO, g1, g2, gs, &cost, &rs, &err) == 0, "episode: %s", err.msg);
    CHECK(x.sims == 3, "%ld simulations (3: the other device for each of 3 ops)", x.sims);
    /* each move the most likely of two devices: p of at least 1/2 */
    for (int t = 0; t < 3; t++) CHECK(x.lp[t] >= log(0.5), "step %d moved to a device of probability %g", t, exp(x.lp[t]));
    CHECK(x.run_best <= 5 && x.run_best >= 3, "best of the sweep %g (every placement simulated: 3..6)", x.run_best);
    dp_policy_free(&p);
    free(g1); free(gs); free(g2);
    dp__pt_free(&x);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ========================================================================
   4. Training improves on the starting placement.
   A fork-join graph: src -> 6 parallel ops of cost 1 -> sink, tiny
   transfers, 2 devices, every sweep starting from all on one device
   (makespan 8 = 1 + 6 + 1). Balanced, three ops a device: the far
   device's ops start at 1.01 (one transfer) and end at 4.01; with the
   sink on the source's device it waits for their outputs until 4.02 and
   ends at 5.02; on the far device it waits for the near device's outputs
   (4 + 0.01) and ends at 5.01, the optimum. One op off balance: 6.
   ======================================================================== */
static void test_learns(void)
{
    dp_graph g;
    dp_cluster c;
    op_t ops[8] = {{"src", 1, 0.01, 0}, {"p1", 1, 0.01, 0}, {"p2", 1, 0.01, 0}, {"p3", 1, 0.01, 0},
                   {"p4", 1, 0.01, 0}, {"p5", 1, 0.01, 0}, {"p6", 1, 0.01, 0}, {"snk", 1, 0, 0}};
    ed_t eds[12];
    for (int i = 0; i < 6; i++) { eds[i] = (ed_t){0, 1 + i, 0.01}; eds[6 + i] = (ed_t){1 + i, 7, 0.01}; }
    if (dp_test_build(&g, 8, ops, 12, eds)) return;
    CHECK(dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    dp_place_result pr;
    int a[8];
    CHECK(dp_place(DP_METHOD_SINGLE, &g, &c, NULL, a, &pr, &err) == 0 && pr.makespan == 8, "single: %g", pr.makespan);
    /* both updates: the one-step improvement (default), the paper's REINFORCE */
    for (int reinforce = 0; reinforce <= 1; reinforce++) {
        const char *name = reinforce ? "REINFORCE" : "one-step improvement";
        dp_policy p;
        dp_policy_opts po = {0};
        po.algo = DP_ALGO_PLACETO; po.devices = 2; po.hidden = 16; po.seed = 2;
        CHECK(dp_policy_init(&p, &po, &err) == 0, "policy: %s", err.msg);
        dp_infer_opts io = {0};
        io.start = "single";
        double before = 0, after = 0;
        CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &before, &err) == 0, "place: %s", err.msg);
        dp_train_opts to;
        memset(&to, 0, sizeof to);
        to.episodes[DP_STAGE_SIM] = reinforce ? 1500 : 300; to.seed = 3; to.start = "single";
        to.placeto_reinforce = reinforce;
        dp_train_result tr;
        const dp_graph *gs[1] = {&g};
        CHECK(dp_train(&p, gs, 1, &c, &to, &tr, &err) == 0, "train: %s", err.msg);
        CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &after, &err) == 0, "place: %s", err.msg);
        printf("  placeto (%s) on fork-join, 2 devices, from single (8): greedy %g before training, %g after; "
               "mean of the last 10%% of sweeps %g\n", name, before, after, tr.final_cost[DP_STAGE_SIM]);
        CHECK(before == 8, "%s: the untrained greedy sweep moves ops (keep prior): %g", name, before);
        CHECK(after <= 5.02 + 1e-9, "%s: after training the greedy sweep gives %g, not a balanced placement (5.01 or 5.02)", name, after);
        CHECK(tr.final_cost[DP_STAGE_SIM] < 5.2, "%s: sweeps at the end average %g (a uniform policy: about 6)", name, tr.final_cost[DP_STAGE_SIM]);
        CHECK(tr.episodes == to.episodes[DP_STAGE_SIM], "%s: %ld episodes", name, tr.episodes);
        dp_policy_free(&p);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ========================================================================
   5. Checkpoints, refusals, determinism
   ======================================================================== */
static int same_policy(const dp_policy *a, const dp_policy *b)
{
    return a->algo == b->algo && a->n_sel == b->n_sel && a->n_plc == b->n_plc &&
           a->opts.devices == b->opts.devices && a->opts.hidden == b->opts.hidden &&
           a->opts.layers == b->opts.layers && memcmp(a->plc, b->plc, sizeof(double) * (size_t)a->n_plc) == 0;
}

static void test_checkpoint_and_errors(void)
{
    dp_graph g;
    dp_cluster c, c3;
    if (gen_graph(&g, 25, 0.5, 7)) return;
    CHECK(dp_cluster_homogeneous(&c, 4, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    CHECK(dp_cluster_homogeneous(&c3, 3, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    const dp_graph *gs[1] = {&g};
    dp_policy p, q, r;
    dp_policy_opts po = {0};
    po.algo = DP_ALGO_PLACETO; po.hidden = 8; po.seed = 4;   /* devices 0 -> 4 */
    CHECK(dp_policy_init(&p, &po, &err) == 0 && p.opts.devices == 4 && p.opts.layers == 1 && p.sel == NULL && p.n_sel == 0,
          "defaults: devices %d layers %d", p.opts.devices, p.opts.layers);
    dp_train_opts to;
    memset(&to, 0, sizeof to);
    to.episodes[DP_STAGE_SIM] = 20; to.seed = 9;
    dp_train_result tr;
    CHECK(dp_train(&p, gs, 1, &c, &to, &tr, &err) == 0, "train: %s", err.msg);
    CHECK(tr.simulations == 20L * g.n_ops * 3, "%ld simulations for 20 sweeps of %d ops, each on 3 other devices", tr.simulations, g.n_ops);
    {
        /* the paper's REINFORCE: at most one simulation per move */
        dp_policy pr;
        dp_train_opts tp = to;
        dp_train_result trp;
        tp.placeto_reinforce = 1;
        CHECK(dp_policy_init(&pr, &po, &err) == 0, "policy: %s", err.msg);
        CHECK(dp_train(&pr, gs, 1, &c, &tp, &trp, &err) == 0, "train: %s", err.msg);
        CHECK(trp.simulations > 0 && trp.simulations <= 20L * g.n_ops, "REINFORCE: %ld simulations for 20 sweeps of %d ops", trp.simulations, g.n_ops);
        dp_policy_free(&pr);
    }

    /* same seeds, same parameters */
    CHECK(dp_policy_init(&r, &po, &err) == 0, "policy: %s", err.msg);
    CHECK(dp_train(&r, gs, 1, &c, &to, NULL, &err) == 0, "train: %s", err.msg);
    CHECK(same_policy(&p, &r), "two runs with the same seeds differ");
    dp_policy_free(&r);

    char path[256];
    dp_test_tmp(path, sizeof path, "placeto.dpl");
    CHECK(dp_policy_save(&p, path, &err) == 0, "save: %s", err.msg);
    CHECK(dp_policy_load(&q, path, &err) == 0, "load: %s", err.msg);
    CHECK(same_policy(&p, &q), "loaded placeto policy differs");
    {
        int a1[25], a2[25], o1[25];
        double m1, m2;
        dp_infer_opts io = {0};
        io.samples = 3; io.seed = 2;
        CHECK(dp_policy_place(&p, &g, &c, &io, a1, o1, &m1, &err) == 0, "place: %s", err.msg);
        CHECK(dp_policy_place(&q, &g, &c, &io, a2, NULL, &m2, &err) == 0, "place: %s", err.msg);
        CHECK(memcmp(a1, a2, sizeof a1) == 0 && m1 == m2, "placement after load differs");
        CHECK(memcmp(o1, g.topo, sizeof o1) == 0, "order is not the topological visit order");
        /* the best of the sweep is never worse than the start (cp) */
        dp_place_result pr;
        int ac[25];
        CHECK(dp_place(DP_METHOD_CP, &g, &c, NULL, ac, &pr, &err) == 0, "cp: %s", err.msg);
        CHECK(m1 <= pr.makespan, "placeto %g is worse than its start, cp %g", m1, pr.makespan);
        /* the reported makespan is the simulator's for the returned placement */
        dp_sim s;
        CHECK(dp_sim_init(&s, &g, &c, &err) == 0 && dp_sim_run(&s, a1, NULL, &err) == 0, "sim: %s", err.msg);
        CHECK(s.makespan == m1, "reported %g, simulated %g", m1, s.makespan);
        dp_sim_free(&s);
    }
    /* the checkpoint header: version 2, algo 2, devices 4, 4 op features, 0 device features */
    {
        size_t len = 0;
        unsigned char *b = (unsigned char *)dp_test_read_file(path, &len);
        CHECK(b && len == 56 + 8 * (size_t)p.n_plc + 8, "checkpoint is %zu bytes", len);
        if (b && len > 56) {
            CHECK(b[8] == 2 && b[12] == 2 && b[28] == 4 && b[32] == 4 && b[36] == 0, "header %d %d %d %d %d", b[8], b[12], b[28], b[32], b[36]);
            /* a placeto header claiming a shared GNN, or 0 devices: refused */
            b[24] = 1;
            CHECK(dp_policy_load_mem(&r, b, len, "x.dpl", &err) != 0, "shared placeto accepted");
            b[24] = 0; b[28] = 0;
            CHECK(dp_policy_load_mem(&r, b, len, "x.dpl", &err) != 0 && strstr(err.msg, "device count"), "0 devices: '%s'", err.msg);
        }
        free(b);
    }
    dp_policy_free(&q);

    /* a policy for 4 devices on a 3-device cluster */
    int a3[25];
    memset(&err, 0, sizeof err);
    int rc = dp_policy_place(&p, &g, &c3, NULL, a3, NULL, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "4 devices") && strstr(err.msg, "has 3"), "device count mismatch: rc %d '%s'", rc, err.msg);
    rc = dp_train(&p, gs, 1, &c3, &to, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "training graph 0") && strstr(err.msg, "has 3"), "train on 3 devices: rc %d '%s'", rc, err.msg);
    /* stages il and real, and an unknown start */
    dp_train_opts bad = to;
    bad.episodes[DP_STAGE_IL] = 5;
    rc = dp_train(&p, gs, 1, &c, &bad, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "imitation"), "stage il: rc %d '%s'", rc, err.msg);
    bad = to; bad.episodes[DP_STAGE_REAL] = 5;
    rc = dp_train(&p, gs, 1, &c, &bad, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "simulator only"), "stage real: rc %d '%s'", rc, err.msg);
    bad = to; bad.start = "best";
    rc = dp_train(&p, gs, 1, &c, &bad, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "'best'"), "start 'best': rc %d '%s'", rc, err.msg);
    bad = to; bad.ppo_epochs = 3;
    rc = dp_train(&p, gs, 1, &c, &bad, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "ppo_epochs 3"), "ppo_epochs 3: rc %d '%s'", rc, err.msg);
    bad = to; bad.placeto_reinforce = 2;
    rc = dp_train(&p, gs, 1, &c, &bad, NULL, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "placeto_reinforce 2"), "placeto_reinforce 2: rc %d '%s'", rc, err.msg);
    bad = to; bad.placeto_tau = -1;
    rc = dp_train(&p, gs, 1, &c, &bad, NULL, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "placeto_tau -1"), "placeto_tau -1: rc %d '%s'", rc, err.msg);
    bad = to; bad.placeto_tau = NAN;
    rc = dp_train(&p, gs, 1, &c, &bad, NULL, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "placeto_tau nan"), "placeto_tau NaN: rc %d '%s'", rc, err.msg);
    bad = to; bad.critic = 1;
    rc = dp_train(&p, gs, 1, &c, &bad, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "critic"), "critic: rc %d '%s'", rc, err.msg);
    dp_infer_opts io = {0};
    io.start = "nope";
    rc = dp_policy_place(&p, &g, &c, &io, a3, NULL, NULL, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "'nope'"), "place start 'nope': rc %d '%s'", rc, err.msg);
    /* bad policy options */
    dp_policy z;
    dp_policy_opts zo = {0};
    zo.algo = DP_ALGO_PLACETO; zo.devices = DP_MAX_DEVICES + 1;
    CHECK(dp_policy_init(&z, &zo, &err) == DP_ERR_LIMIT, "devices %d accepted", zo.devices);
    zo.algo = (dp_algo)9; zo.devices = 0;
    CHECK(dp_policy_init(&z, &zo, &err) == DP_ERR_ARG, "algorithm 9 accepted");
    dp_policy_free(&p);
    dp_cluster_free(&c3);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

int main(void)
{
    test_layer_modes();
    test_groups();
    test_gradients();
    test_improve_step();
    test_learns();
    test_checkpoint_and_errors();
    return dp_test_done();
}
