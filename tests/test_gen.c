/* test_gen.c - the DAGGEN-style generators: sizes, determinism per seed,
   acyclicity, cost range, communication-to-computation ratio. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_error err;

/* silent structural equality (names, costs, edges) */
static int same_graph(const dp_graph *a, const dp_graph *b)
{
    if (a->n_ops != b->n_ops || a->n_edges != b->n_edges) return 0;
    for (int i = 0; i < a->n_ops; i++)
        if (strcmp(a->name[i], b->name[i]) || a->compute[i] != b->compute[i] ||
            a->out_bytes[i] != b->out_bytes[i])
            return 0;
    for (int e = 0; e < a->n_edges; e++)
        if (a->src[e] != b->src[e] || a->dst[e] != b->dst[e] || a->bytes[e] != b->bytes[e]) return 0;
    return 1;
}

static int gen(dp_graph *g, dp_gen_shape shape, int nodes, double ccr, uint64_t seed)
{
    dp_gen_opts o;
    memset(&o, 0, sizeof o);
    o.shape = shape;
    o.nodes = nodes;
    o.ccr = ccr;
    o.seed = seed;
    memset(g, 0, sizeof *g);
    int rc = dp_gen(g, &o, &err);
    CHECK(rc == 0, "dp_gen shape %d nodes %d ccr %g seed %llu: %s", (int)shape, nodes, ccr,
          (unsigned long long)seed, err.msg);
    return rc;
}

/* acyclic: every edge goes forward in g->topo */
static int topo_ok(const dp_graph *g)
{
    int *pos = (int *)malloc(sizeof(int) * (size_t)g->n_ops);
    for (int i = 0; i < g->n_ops; i++) pos[i] = -1;
    for (int k = 0; k < g->n_ops; k++) pos[g->topo[k]] = k;
    int ok = 1;
    for (int i = 0; i < g->n_ops; i++) ok &= pos[i] >= 0;
    for (int e = 0; e < g->n_edges && ok; e++) ok &= pos[g->src[e]] < pos[g->dst[e]];
    free(pos);
    return ok;
}

int main(void)
{
    memset(&err, 0, sizeof err);
    const dp_gen_shape shapes[2] = {DP_GEN_LAYERED, DP_GEN_RANDOM};
    for (int s = 0; s < 2; s++) {
        const int sizes[4] = {1, 7, 50, 300};
        for (int k = 0; k < 4; k++) {
            dp_graph g;
            if (gen(&g, shapes[s], sizes[k], 1.0, 42)) continue;
            CHECK(g.n_ops == sizes[k], "shape %d: %d ops, asked %d", s, g.n_ops, sizes[k]);
            CHECK(g.finalized, "generated graph not finalised");
            CHECK(topo_ok(&g), "shape %d n %d: not acyclic in topo order", s, sizes[k]);
            int in_range = 1;
            for (int i = 0; i < g.n_ops; i++) in_range &= g.compute[i] >= 1 && g.compute[i] <= 10;
            CHECK(in_range, "shape %d: costs outside [1, 10]", s);
            /* it is a valid graph: a copy finalises, stats agree */
            dp_graph c;
            memset(&c, 0, sizeof c);
            CHECK(dp_graph_copy(&c, &g, &err) == 0 && same_graph(&c, &g), "copy of generated graph");
            dp_graph_free(&c);
            if (sizes[k] >= 50) CHECK(g.n_edges > 0, "shape %d n %d: no edges", s, sizes[k]);
            dp_graph_free(&g);
        }
        /* default size */
        dp_graph g;
        if (gen(&g, shapes[s], 0, 0, 1) == 0) {
            CHECK(g.n_ops == 100, "default nodes %d, expected 100", g.n_ops);
            dp_graph_free(&g);
        }
        /* determinism */
        dp_graph a, b, c;
        if (gen(&a, shapes[s], 80, 0.7, 123) == 0) {
            if (gen(&b, shapes[s], 80, 0.7, 123) == 0) {
                CHECK(dp_test_graph_equal(&a, &b, 1, "same seed"), "shape %d: same seed, different graphs", s);
                dp_graph_free(&b);
            }
            if (gen(&c, shapes[s], 80, 0.7, 124) == 0) {
                CHECK(!same_graph(&a, &c), "shape %d: seeds 123 and 124 give the same graph", s);
                dp_graph_free(&c);
            }
            dp_graph_free(&a);
        }
        /* ccr = 0: no communication at all */
        if (gen(&a, shapes[s], 200, 0, 5) == 0) {
            int zero = 1;
            for (int e = 0; e < a.n_edges; e++) zero &= a.bytes[e] == 0;
            CHECK(zero && a.n_edges > 0, "shape %d: ccr 0 but edges carry bytes", s);
            dp_graph_free(&a);
        }
        /* ccr > 0: mean transfer time / mean op time on a unit cluster
           (speed 1, bandwidth 1, latency 0: transfer time = bytes) within
           50% of the request */
        const double ccrs[4] = {0.1, 1, 2.5, 10};
        for (int i = 0; i < 4; i++) {
            if (gen(&a, shapes[s], 400, ccrs[i], 77 + (uint64_t)i)) continue;
            double sb = 0, sc = 0;
            for (int e = 0; e < a.n_edges; e++) sb += a.bytes[e];
            for (int v = 0; v < a.n_ops; v++) sc += a.compute[v];
            double ratio = (a.n_edges ? sb / a.n_edges : 0) / (sc / a.n_ops);
            CHECK(fabs(ratio - ccrs[i]) <= 0.5 * ccrs[i], "shape %d: asked ccr %g, got %g", s, ccrs[i],
                  ratio);
            dp_graph_free(&a);
        }
    }
    /* the layered shape is a DAG of levels: with one op per level it is a
       chain (every op but the first has a parent in the level before) */
    dp_gen_opts o;
    memset(&o, 0, sizeof o);
    o.shape = DP_GEN_LAYERED;
    o.nodes = 20;
    o.width = 1;
    o.regularity = 1;
    o.density = 1;
    o.seed = 9;
    dp_graph g;
    memset(&g, 0, sizeof g);
    if (dp_gen(&g, &o, &err) == 0) {
        dp_cluster cl;
        memset(&cl, 0, sizeof cl);
        dp_stats st;
        if (dp_cluster_homogeneous(&cl, 2, 1, 1, 0, &err) == 0 && dp_graph_stats(&g, &cl, &st) == 0) {
            CHECK(st.depth == 20 && st.edges == 19 && st.sources == 1 && st.sinks == 1,
                  "width 1, density 1: depth %d edges %d sources %d sinks %d (a chain of 20)", st.depth,
                  st.edges, st.sources, st.sinks);
            dp_cluster_free(&cl);
        }
        dp_graph_free(&g);
    } else {
        CHECK(0, "dp_gen width 1: %s", err.msg);
    }
    /* bad options */
    memset(&o, 0, sizeof o);
    o.nodes = -5;
    memset(&g, 0, sizeof g);
    memset(&err, 0, sizeof err);
    CHECK(dp_gen(&g, &o, &err) != 0 && err.code == DP_ERR_RANGE && strstr(err.msg, "-5"),
          "nodes -5 accepted or unclear: code %d '%s'", (int)err.code, err.msg);
    dp_graph_free(&g);
    o.nodes = DP_MAX_OPS + 1;
    memset(&g, 0, sizeof g);
    memset(&err, 0, sizeof err);
    CHECK(dp_gen(&g, &o, &err) != 0 && err.code != DP_OK, "nodes above DP_MAX_OPS accepted");
    dp_graph_free(&g);
    o.nodes = 10;
    o.ccr = -1;
    memset(&g, 0, sizeof g);
    memset(&err, 0, sizeof err);
    CHECK(dp_gen(&g, &o, &err) != 0 && err.code == DP_ERR_RANGE, "ccr -1 accepted: code %d", (int)err.code);
    dp_graph_free(&g);
    return dp_test_done();
}
