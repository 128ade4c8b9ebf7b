/* static_place.h - the calls both translation units of test_static make,
   each on its own private doppler (DOPPLER_STATIC): a layered DAG from the
   generator, placed by m on `devices` devices. Include it after doppler.h
   with DOPPLER_IMPLEMENTATION. */
static int static_place(dp_method m, int devices, int *assign, double *makespan, dp_error *err)
{
    dp_gen_opts go = {0};
    dp_place_opts po = {0};
    dp_place_result res;
    dp_graph g;
    dp_cluster c;
    int rc;
    go.nodes = 40;
    go.ccr = 0.5;
    go.seed = 7;
    po.seed = 3;
    dp_graph_init(&g);
    if ((rc = dp_gen(&g, &go, err))) return rc;
    if ((rc = dp_cluster_for_graph(&c, &g, devices, err))) { dp_graph_free(&g); return rc; }
    rc = dp_place(m, &g, &c, &po, assign, &res, err);
    if (!rc) *makespan = res.makespan;
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return rc;
}
