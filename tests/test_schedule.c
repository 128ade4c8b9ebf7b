/* test_schedule.c - property checks of the simulator on many random cases:
   every schedule it produces must obey the runtime model at the top of
   doppler.h, checked here from the outside:
   - an op runs for exactly its time on its device; devices run one op at
     a time; makespan = last end; busy = sum of op times;
   - every cross-device edge has one transfer record: it starts when the
     source ends (FREE) or, on a SERIAL link, when the source has ended and
     the transfers issued before it on that link are done (issue order:
     source end, then edge index); it lasts latency + bytes / bandwidth;
   - an op starts no earlier than all its inputs have arrived;
   - work conservation: a device is never idle while one of its ops is ready;
   - the choice rule: FIFO (earliest ready, then lower index) or PRIORITY
     (higher priority, then earlier ready, then lower index);
   - memory peaks recomputed from the schedule with the documented rules. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_error err;

#define TOL(x) (1e-9 * (1 + fabs(x)))

typedef struct { double t; int kind; double delta; } mev_t; /* kind 0 free, 1 alloc */

static int cmp_mev(const void *a, const void *b)
{
    const mev_t *x = (const mev_t *)a, *y = (const mev_t *)b;
    if (x->t < y->t) return -1;
    if (x->t > y->t) return 1;
    return x->kind - y->kind;
}

typedef struct { int v; double s, e; } iv_t;
static int cmp_iv(const void *a, const void *b)
{
    const iv_t *x = (const iv_t *)a, *y = (const iv_t *)b;
    return x->s < y->s ? -1 : x->s > y->s ? 1 : x->v - y->v;
}

/* Returns the number of violations found (each also reported). */
static int check_schedule(const dp_graph *g, const dp_cluster *c, const dp_sim *s, const int *asg,
                          dp_order order, const double *prio, int track, const char *what)
{
    int bad = 0, n = g->n_ops, nd = c->n;
#define VIOL(...)                                                          \
    do {                                                                   \
        if (bad++ < 4) { printf("  %s: ", what); printf(__VA_ARGS__); printf("\n"); } \
    } while (0)
    double *ready = (double *)calloc((size_t)n, sizeof(double));
    int *xrec = (int *)malloc(sizeof(int) * (size_t)g->n_edges);
    for (int e = 0; e < g->n_edges; e++) xrec[e] = -1;
    for (int k = 0; k < s->n_xfers; k++) {
        const dp_xfer *x = &s->xfers[k];
        if (x->edge < 0 || x->edge >= g->n_edges) { VIOL("xfer %d: bad edge %d", k, x->edge); continue; }
        if (xrec[x->edge] >= 0) VIOL("edge %d has two transfers", x->edge);
        xrec[x->edge] = k;
    }
    double mk = 0;
    double *busy = (double *)calloc((size_t)nd, sizeof(double));
    for (int v = 0; v < n; v++) {
        double t = dp_op_time(g, c, v, asg[v]);
        if (fabs(s->end[v] - s->start[v] - t) > TOL(t))
            VIOL("op %d runs %.17g, its time is %.17g", v, s->end[v] - s->start[v], t);
        if (s->start[v] < 0) VIOL("op %d starts at %g", v, s->start[v]);
        busy[asg[v]] += t;
        if (s->end[v] > mk) mk = s->end[v];
    }
    if (fabs(mk - s->makespan) > TOL(mk)) VIOL("makespan %.17g, last end %.17g", s->makespan, mk);
    for (int d = 0; d < nd; d++)
        if (fabs(busy[d] - s->busy[d]) > TOL(busy[d])) VIOL("busy[%d] %.17g, expected %.17g", d, s->busy[d], busy[d]);
    /* transfers and arrival times */
    for (int e = 0; e < g->n_edges; e++) {
        int u = g->src[e], v = g->dst[e];
        double arr;
        if (asg[u] == asg[v]) {
            if (xrec[e] >= 0) VIOL("edge %d on one device has a transfer", e);
            arr = s->end[u];
        } else {
            if (xrec[e] < 0) { VIOL("cross-device edge %d (%d->%d) has no transfer", e, u, v); continue; }
            const dp_xfer *x = &s->xfers[xrec[e]];
            if (x->from != asg[u] || x->to != asg[v]) VIOL("edge %d transfer %d->%d, devices %d->%d", e, x->from, x->to, asg[u], asg[v]);
            double dur = dp_xfer_time(c, g->bytes[e], asg[u], asg[v]);
            if (fabs(x->end - x->start - dur) > TOL(dur)) VIOL("edge %d transfer lasts %.17g, expected %.17g", e, x->end - x->start, dur);
            if (c->link == DP_LINK_FREE && fabs(x->start - s->end[u]) > TOL(x->start))
                VIOL("edge %d transfer starts %.17g, source ends %.17g (free links)", e, x->start, s->end[u]);
            if (x->start < s->end[u] - TOL(x->start)) VIOL("edge %d transfer starts before its source ends", e);
            arr = x->end;
        }
        if (arr > ready[v]) ready[v] = arr;
    }
    for (int v = 0; v < n; v++)
        if (s->start[v] < ready[v] - TOL(ready[v])) VIOL("op %d starts %.17g before its inputs arrive %.17g", v, s->start[v], ready[v]);
    /* serial links: per link, transfers in issue order, back to back when queued */
    if (c->link == DP_LINK_SERIAL) {
        for (int a = 0; a < nd; a++)
            for (int b = 0; b < nd; b++) {
                if (a == b) continue;
                int m = 0;
                int *ks = (int *)malloc(sizeof(int) * (size_t)(s->n_xfers + 1));
                for (int k = 0; k < s->n_xfers; k++)
                    if (s->xfers[k].from == a && s->xfers[k].to == b) ks[m++] = k;
                /* sort by (issue time, edge) with insertion sort */
                for (int i = 1; i < m; i++) {
                    int key = ks[i], j = i - 1;
                    double ik = s->end[g->src[s->xfers[key].edge]];
                    while (j >= 0) {
                        double ij = s->end[g->src[s->xfers[ks[j]].edge]];
                        if (ij > ik || (ij == ik && s->xfers[ks[j]].edge > s->xfers[key].edge)) { ks[j + 1] = ks[j]; j--; }
                        else break;
                    }
                    ks[j + 1] = key;
                }
                double link_free = 0;
                for (int i = 0; i < m; i++) {
                    const dp_xfer *x = &s->xfers[ks[i]];
                    double issue = s->end[g->src[x->edge]];
                    double want = issue > link_free ? issue : link_free;
                    if (fabs(x->start - want) > TOL(want))
                        VIOL("link %d->%d: edge %d starts %.17g, expected %.17g", a, b, x->edge, x->start, want);
                    link_free = x->end;
                }
                free(ks);
            }
    }
    /* per device: no overlap, work conservation, choice rule */
    iv_t *iv = (iv_t *)malloc(sizeof(iv_t) * (size_t)n);
    for (int d = 0; d < nd; d++) {
        int m = 0;
        for (int v = 0; v < n; v++)
            if (asg[v] == d) { iv[m].v = v; iv[m].s = s->start[v]; iv[m].e = s->end[v]; m++; }
        qsort(iv, (size_t)m, sizeof iv[0], cmp_iv);
        for (int i = 1; i < m; i++)
            if (iv[i].s < iv[i - 1].e - TOL(iv[i].s))
                VIOL("device %d: ops %d and %d overlap", d, iv[i - 1].v, iv[i].v);
        for (int i = 0; i < m; i++) {
            int v = iv[i].v;
            /* idle time inside [ready v, start v) means a violation */
            double t = ready[v];
            for (int j = 0; j < i; j++)
                if (iv[j].e > t + TOL(t) && iv[j].s > t + TOL(t)) {
                    VIOL("device %d idle at %.17g while op %d is ready (starts %.17g)", d, t, v, s->start[v]);
                    break;
                } else if (iv[j].e > t) {
                    t = iv[j].e;
                }
            if (t < s->start[v] - TOL(t))
                VIOL("device %d idle from %.17g while op %d is ready (starts %.17g)", d, t, v, s->start[v]);
            /* every op u started while v was waiting must beat v */
            for (int j = 0; j < i; j++) {
                int u = iv[j].v;
                if (ready[v] > iv[j].s) continue; /* v not ready yet (exact: both are the simulator's own times) */
                if (iv[j].s == s->start[v]) continue;
                int u_wins;
                if (order == DP_ORDER_FIFO) {
                    u_wins = ready[u] < ready[v] || (ready[u] == ready[v] && u < v);
                } else {
                    u_wins = prio[u] > prio[v] ||
                             (prio[u] == prio[v] && (ready[u] < ready[v] || (ready[u] == ready[v] && u < v)));
                }
                if (!u_wins)
                    VIOL("device %d: op %d (ready %.17g) taken at %.17g before op %d (ready %.17g)", d, u,
                         ready[u], iv[j].s, v, ready[v]);
            }
        }
    }
    /* memory peaks, recomputed */
    if (track) {
        int cap = 4 * n + 2 * g->n_edges + 4, ne = 0;
        mev_t *ev = (mev_t *)malloc(sizeof(mev_t) * (size_t)cap);
        double *peak = (double *)calloc((size_t)nd, sizeof(double));
        for (int d = 0; d < nd; d++) {
            ne = 0;
            for (int v = 0; v < n; v++) {
                if (asg[v] == d) {
                    ev[ne++] = (mev_t){s->start[v], 1, g->out_bytes[v] + g->mem_bytes[v]};
                    ev[ne++] = (mev_t){s->end[v], 0, -g->mem_bytes[v]};
                    int outs = g->out_off[v + 1] - g->out_off[v];
                    if (outs > 0) {
                        double f = 0;
                        for (int k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
                            int e = g->out_edge[k], w = g->dst[e];
                            double done = asg[w] == d ? s->end[w] : (xrec[e] >= 0 ? s->xfers[xrec[e]].end : s->end[v]);
                            if (done > f) f = done;
                        }
                        ev[ne++] = (mev_t){f, 0, -g->out_bytes[v]};
                    }
                }
            }
            for (int e = 0; e < g->n_edges; e++) {
                int u = g->src[e], w = g->dst[e];
                if (asg[w] == d && asg[u] != d) {
                    ev[ne++] = (mev_t){s->end[u], 1, g->bytes[e]};
                    ev[ne++] = (mev_t){s->end[w], 0, -g->bytes[e]};
                }
            }
            qsort(ev, (size_t)ne, sizeof ev[0], cmp_mev);
            double cur = 0;
            for (int i = 0; i < ne; i++) {
                cur += ev[i].delta;
                if (cur > peak[d]) peak[d] = cur;
            }
            if (fabs(peak[d] - s->peak_bytes[d]) > TOL(peak[d]))
                VIOL("device %d: peak %.17g, recomputed %.17g", d, s->peak_bytes[d], peak[d]);
        }
        free(ev);
        free(peak);
    }
    free(iv);
    free(busy);
    free(ready);
    free(xrec);
#undef VIOL
    return bad;
}

static int run_and_check(const dp_graph *g, const dp_cluster *c, const int *asg, dp_order order,
                         const double *prio, const char *what)
{
    dp_sim s;
    memset(&s, 0, sizeof s);
    if (dp_sim_init(&s, g, c, &err) != 0) { CHECK(0, "%s: init: %s", what, err.msg); return 1; }
    dp_sim_opts o;
    memset(&o, 0, sizeof o);
    o.order = order;
    o.priority = prio;
    o.track_memory = 1;
    int rc = dp_sim_run(&s, asg, &o, &err);
    CHECK(rc == 0, "%s: run: %s", what, err.msg);
    int bad = 0;
    if (rc == 0) {
        const double *pr = prio;
        double *bl = NULL;
        if (order == DP_ORDER_PRIORITY && !prio) {
            bl = (double *)malloc(sizeof(double) * (size_t)g->n_ops);
            dp_blevel(g, c, bl);
            pr = bl;
        }
        bad = check_schedule(g, c, &s, asg, order, pr, 1, what);
        CHECK(bad == 0, "%s: %d violations of the runtime model", what, bad);
        free(bl);
    }
    dp_sim_free(&s);
    return bad;
}

int main(void)
{
    memset(&err, 0, sizeof err);
    dp_rng rng;
    dp_rng_seed(&rng, 2024);
    int cases = 0;
    for (int gi = 0; gi < 24; gi++) {
        dp_gen_opts go;
        memset(&go, 0, sizeof go);
        go.shape = gi % 2 ? DP_GEN_RANDOM : DP_GEN_LAYERED;
        go.nodes = 20 + 13 * gi;
        go.ccr = (gi % 3) * 0.8;
        go.seed = 1000 + (uint64_t)gi;
        dp_graph g;
        memset(&g, 0, sizeof g);
        if (dp_gen(&g, &go, &err) != 0) { CHECK(0, "gen: %s", err.msg); continue; }
        /* give the ops outputs and workspaces so memory matters */
        for (int v = 0; v < g.n_ops; v++) {
            g.out_bytes[v] = (double)(1 + dp_rng_int(&rng, 50));
            g.mem_bytes[v] = (double)dp_rng_int(&rng, 3) * 7;
        }
        int nd = 2 + gi % 4;
        dp_cluster c;
        memset(&c, 0, sizeof c);
        if (dp_cluster_homogeneous(&c, nd, 1, 1 + gi % 3, (gi % 4) * 0.25, &err) != 0) {
            CHECK(0, "cluster: %s", err.msg);
            dp_graph_free(&g);
            continue;
        }
        if (gi % 5 == 1) c.speed[nd - 1] = 2.5;
        if (gi % 7 == 3) c.bandwidth[0 * nd + 1] = 0.5;
        int *asg = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
        double *prio = (double *)malloc(sizeof(double) * (size_t)g.n_ops);
        for (int link = 0; link < 2; link++) {
            c.link = link ? DP_LINK_SERIAL : DP_LINK_FREE;
            for (int a = 0; a < 3; a++) {
                for (int v = 0; v < g.n_ops; v++) asg[v] = dp_rng_int(&rng, nd);
                if (a == 2) {
                    dp_place_result res;
                    dp_place_opts po;
                    memset(&po, 0, sizeof po);
                    dp_place(DP_METHOD_HEFT, &g, &c, &po, asg, &res, &err);
                }
                for (int v = 0; v < g.n_ops; v++) prio[v] = (double)dp_rng_int(&rng, 4);
                char what[96];
                snprintf(what, sizeof what, "gen %d link %d asg %d FIFO", gi, link, a);
                run_and_check(&g, &c, asg, DP_ORDER_FIFO, NULL, what);
                snprintf(what, sizeof what, "gen %d link %d asg %d PRIORITY b-level", gi, link, a);
                run_and_check(&g, &c, asg, DP_ORDER_PRIORITY, NULL, what);
                snprintf(what, sizeof what, "gen %d link %d asg %d PRIORITY random", gi, link, a);
                run_and_check(&g, &c, asg, DP_ORDER_PRIORITY, prio, what);
                cases += 3;
            }
        }
        free(asg);
        free(prio);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
    /* the DOPPLER reference graphs with the placers' assignments */
    static const char *refs[] = {"doppler/chain_mm_112nodes.txt", "doppler/ffnn_192nodes.txt",
                                 "doppler/transformer_block_215nodes.txt"};
    for (int r = 0; r < 3; r++) {
        if (!dp_test_have_data(refs[r])) continue;
        char path[1024];
        dp_graph g;
        memset(&g, 0, sizeof g);
        if (dp_graph_read(&g, dp_test_data_path(path, sizeof path, refs[r]), DP_FORMAT_AUTO, &err) != 0) {
            CHECK(0, "read %s: %s", path, err.msg);
            continue;
        }
        dp_cluster c;
        memset(&c, 0, sizeof c);
        dp_cluster_for_graph(&c, &g, 4, &err);
        int *asg = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
        const dp_method ms[4] = {DP_METHOD_ROUND_ROBIN, DP_METHOD_RANDOM, DP_METHOD_CP, DP_METHOD_HEFT};
        for (int link = 0; link < 2; link++) {
            c.link = link ? DP_LINK_SERIAL : DP_LINK_FREE;
            for (int m = 0; m < 4; m++) {
                dp_place_opts po;
                memset(&po, 0, sizeof po);
                dp_place_result res;
                if (dp_place(ms[m], &g, &c, &po, asg, &res, &err) != 0) continue;
                char what[128];
                snprintf(what, sizeof what, "%s %s link %d", refs[r], dp_method_name(ms[m]), link);
                run_and_check(&g, &c, asg, DP_ORDER_FIFO, NULL, what);
                run_and_check(&g, &c, asg, DP_ORDER_PRIORITY, NULL, what);
                cases += 2;
            }
        }
        free(asg);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
    printf("schedule: %d simulations checked\n", cases);
    return dp_test_done();
}
