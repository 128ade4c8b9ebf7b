/* example.c - the doppler.h API on one page: build a graph (or read one),
   place it with HEFT on two devices, simulate the placement, print it.

       cc -std=gnu11 -O2 -I. -o build/example demos/example.c -lm -pthread
       build/example [GRAPH]

   It compiles as C++ too (g++ -x c++ ...): tests/test_readme.sh checks both.
*/
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                    \
    do {                                                               \
        if (call) {                                                    \
            fprintf(stderr, "example: %s\n", err.msg);                 \
            return 1;                                                  \
        }                                                              \
    } while (0)

int main(int argc, char **argv)
{
    dp_error err = {DP_OK, {0}};   /* {0} alone is C only: C++ wants a dp_code */
    dp_graph g;
    dp_cluster c;

    dp_graph_init(&g);
    if (argc > 1) {
        CHECK(dp_graph_read(&g, argv[1], DP_FORMAT_AUTO, &err));
    } else {
        /* a diamond: a -> {b, c} -> d, each tensor 1 unit of bytes */
        const char *names[] = {"a", "b", "c", "d"};
        const double cost[] = {2, 3, 3, 1};
        for (int i = 0; i < 4; i++) {
            dp_op_desc op;
            memset(&op, 0, sizeof op);     /* zero = defaults */
            op.name = names[i];
            op.compute = cost[i];
            op.out_bytes = 1;
            int id;
            CHECK(dp_graph_add_op(&g, &op, &id, &err));
        }
        CHECK(dp_graph_add_edge(&g, 0, 1, 1, &err));
        CHECK(dp_graph_add_edge(&g, 0, 2, 1, &err));
        CHECK(dp_graph_add_edge(&g, 1, 3, 1, &err));
        CHECK(dp_graph_add_edge(&g, 2, 3, 1, &err));
        CHECK(dp_graph_finalize(&g, &err));
    }

    /* two devices in the graph's own units */
    CHECK(dp_cluster_for_graph(&c, &g, 2, &err));

    int *assign = (int *)malloc(sizeof *assign * (size_t)g.n_ops);
    if (!assign) return 1;
    dp_place_opts opts;
    memset(&opts, 0, sizeof opts);
    dp_place_result res;
    CHECK(dp_place(DP_METHOD_HEFT, &g, &c, &opts, assign, &res, &err));
    printf("heft: makespan %g, %.3f x the lower bound %g\n", res.makespan,
           res.makespan / res.lower_bound, res.lower_bound);
    for (int v = 0; v < g.n_ops && v < 10; v++)
        printf("  %-8s -> device %d\n", g.name[v], assign[v]);

    /* the same placement, dispatched by b-level priority instead of FIFO */
    dp_sim_opts so;
    memset(&so, 0, sizeof so);
    so.order = DP_ORDER_PRIORITY;
    double makespan;
    CHECK(dp_simulate(&g, &c, assign, &so, &makespan, &err));
    printf("priority order: makespan %g\n", makespan);

    free(assign);
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return 0;
}
