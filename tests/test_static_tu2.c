/* test_static_tu2.c - the second translation unit of test_static.c, with
   its own private doppler (DOPPLER_STATIC) and the same calls. */
#define DOPPLER_STATIC
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"

typedef void (*tu2_init_fn)(dp_graph *);
tu2_init_fn tu2_graph_init(void);
int tu2_place(dp_method m, int devices, int *assign, double *makespan, char *err, size_t errlen);

tu2_init_fn tu2_graph_init(void) { return dp_graph_init; }

int tu2_place(dp_method m, int devices, int *assign, double *makespan, char *errbuf, size_t errlen)
{
    dp_gen_opts go = {0};
    dp_place_opts po = {0};
    dp_place_result res;
    dp_error err = {0};
    dp_graph g;
    dp_cluster c;
    int rc;
    go.nodes = 40;
    go.ccr = 0.5;
    go.seed = 7;
    po.seed = 3;
    dp_graph_init(&g);
    if (!(rc = dp_gen(&g, &go, &err)) && !(rc = dp_cluster_for_graph(&c, &g, devices, &err))) {
        rc = dp_place(m, &g, &c, &po, assign, &res, &err);
        if (!rc) *makespan = res.makespan;
        dp_cluster_free(&c);
    }
    dp_graph_free(&g);
    snprintf(errbuf, errlen, "%s", err.msg);
    return rc;
}
