/* test_stb_ds.c - doppler links into a program that has its own stb_ds.

   This file compiles stb_ds's implementation (STB_DS_IMPLEMENTATION) with
   the program's own STBDS_REALLOC / STBDS_FREE and includes doppler.h;
   test_stb_ds_tu2.c, linked in, compiles doppler's implementation
   (DOPPLER_IMPLEMENTATION, after stb_ds's header) with counting DP_MALLOC,
   DP_REALLOC and DP_FREE. Checks: the program links (before, doppler's
   implementation compiled stb_ds's too: "multiple definition of
   stbds_arrgrowf"), stb_ds and doppler both work side by side, and each
   allocates through its own hooks only: doppler's allocations never reach
   STBDS_REALLOC, stb_ds's never DP_MALLOC. Skips without <stb/stb_ds.h>. */
#include <stddef.h>
#include <stdlib.h>

#if defined(__has_include) && !defined(DP_TEST_NO_STB_DS)   /* -D it to try the skip */
#if __has_include(<stb/stb_ds.h>)
#define HAVE_STB_DS 1
#endif
#endif

#ifdef HAVE_STB_DS
static long stb_reallocs, stb_frees;   /* stb_ds's allocations, this program's hooks */
static void *t_stb_realloc(void *p, size_t n) { stb_reallocs++; return realloc(p, n); }
static void t_stb_free(void *p) { if (p) stb_frees++; free(p); }

#define STBDS_REALLOC(ctx, p, sz) t_stb_realloc(p, sz)
#define STBDS_FREE(ctx, p)        t_stb_free(p)
#define STB_DS_IMPLEMENTATION
#include <stb/stb_ds.h>
#endif

#include "../doppler.h"   /* the implementation is test_stb_ds_tu2.c's */
#include "dp_test.h"

#ifdef HAVE_STB_DS
long tu2_dp_allocs(void);   /* test_stb_ds_tu2.c: doppler's allocations */

/* the diamond a -> {b, c} -> d, costs 2 3 3 1, on two unit devices,
   unit tensors: b and c run in parallel, one transfer each way */
static int diamond(dp_graph *g, dp_error *err)
{
    const char *names[] = {"a", "b", "c", "d"};
    const double cost[] = {2, 3, 3, 1};
    int i, rc;
    dp_graph_init(g);
    for (i = 0; i < 4; i++) {
        dp_op_desc op = {0};
        op.name = names[i];
        op.compute = cost[i];
        op.out_bytes = 1;
        if ((rc = dp_graph_add_op(g, &op, NULL, err))) return rc;
    }
    if ((rc = dp_graph_add_edge(g, 0, 1, 1, err)) || (rc = dp_graph_add_edge(g, 0, 2, 1, err)) ||
        (rc = dp_graph_add_edge(g, 1, 3, 1, err)) || (rc = dp_graph_add_edge(g, 2, 3, 1, err)))
        return rc;
    return dp_graph_finalize(g, err);
}
#endif /* HAVE_STB_DS */

int main(void)
{
#ifndef HAVE_STB_DS
    SKIP("<stb/stb_ds.h> not installed (Debian/Ubuntu: sudo apt-get install libstb-dev)");
    return dp_test_done();
#else
    dp_error err = {0};
    dp_graph g;
    dp_cluster c;
    struct { char *key; int value; } *ids = NULL;   /* stb_ds string hash map */
    int *order = NULL;                              /* stb_ds array */
    int assign[4] = {0, 0, 1, 0}, i;
    long stb_before, dp_before;
    double makespan = -1;

    /* doppler alone: stb_ds's hooks are not called */
    stb_before = stb_reallocs;
    CHECK(diamond(&g, &err) == 0, "diamond: %s", err.msg);
    CHECK(dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    CHECK(dp_simulate(&g, &c, assign, NULL, &makespan, &err) == 0, "simulate: %s", err.msg);
    /* a 2, then b on 0 (3) and c on 1 after a 1-unit transfer (3), d after
       c's transfer back: 2 + 1 + 3 + 1 + 1 = 8 */
    CHECK_NEAR(makespan, 8, 0, "diamond makespan, b and c apart");
    CHECK(stb_reallocs == stb_before, "doppler allocated through STBDS_REALLOC (%ld calls)", stb_reallocs - stb_before);

    CHECK(tu2_dp_allocs() > 0, "doppler did not allocate through DP_MALLOC / DP_REALLOC");

    /* stb_ds beside it: a hash map of doppler's op names, an array of ids */
    dp_before = tu2_dp_allocs();
    sh_new_strdup(ids);
    for (i = 0; i < g.n_ops; i++) {
        shput(ids, g.name[i], i);
        arrput(order, g.topo[i]);
    }
    CHECK(shlen(ids) == 4 && arrlen(order) == 4, "stb_ds: %d names, %d ids", (int)shlen(ids), (int)arrlen(order));
    for (i = 0; i < g.n_ops; i++) {
        int id = shget(ids, g.name[i]);
        CHECK(id == dp_graph_find(&g, g.name[i]), "'%s': stb_ds says %d, doppler %d", g.name[i], id,
              dp_graph_find(&g, g.name[i]));
    }
    CHECK(order[0] == dp_graph_find(&g, "a") && order[3] == dp_graph_find(&g, "d"), "topological order");
    CHECK(stb_reallocs > stb_before, "stb_ds did not allocate through this program's STBDS_REALLOC");
    shfree(ids);
    arrfree(order);
    CHECK(stb_frees > 0, "stb_ds did not free through this program's STBDS_FREE");
    CHECK(tu2_dp_allocs() == dp_before, "stb_ds allocated through DP_MALLOC / DP_REALLOC (%ld calls)",
          tu2_dp_allocs() - dp_before);

    dp_cluster_free(&c);
    dp_graph_free(&g);
    return dp_test_done();
#endif
}
