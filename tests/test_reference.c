/* test_reference.c - the DOPPLER paper's three compute graphs from
   ../shared/data/doppler: counts, single-device makespan against an
   independent parse of the file, and every placer against the lower bound. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

typedef struct {
    const char *file;
    int ops, edges;     /* as documented in ../shared/data/README.md */
} ref_t;

static const ref_t REFS[] = {
    {"chain_mm_112nodes.txt", 76, 80},          /* 112 - 36 inputs */
    {"ffnn_192nodes.txt", 180, 208},            /* 192 - 12 */
    {"transformer_block_215nodes.txt", 182, 234} /* 215 - 33 */
};

/* Independent reader: N on line 1, count of ids on line 2, edge count from
   line 3, sum of the first number of each op line (the compute cost). */
typedef struct { int n_total, n_inputs, n_ops, n_src, n_dst; double sum_comp; int op_lines; } parsed_t;

static int count_numbers(const char *s)
{
    int n = 0;
    while (*s) {
        while (*s && !isdigit((unsigned char)*s)) s++;
        if (!*s) break;
        n++;
        while (isdigit((unsigned char)*s)) s++;
    }
    return n;
}

static int parse_by_hand(const char *path, parsed_t *p)
{
    memset(p, 0, sizeof *p);
    size_t len;
    char *buf = dp_test_read_file(path, &len);
    if (!buf) return -1;
    char *save = NULL;
    int line = 0;
    for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        line++;
        if (line == 1) sscanf(l, "%d", &p->n_total);
        else if (line == 2) p->n_inputs = count_numbers(l);
        else if (line == 3) p->n_src = count_numbers(l);
        else if (line == 4) p->n_dst = count_numbers(l);
        else {
            double comp, comm;
            if (sscanf(l, " %lf , %lf", &comp, &comm) == 2) {
                p->sum_comp += comp;
                p->op_lines++;
            }
        }
    }
    p->n_ops = p->n_total - p->n_inputs;
    free(buf);
    return 0;
}

int main(void)
{
    if (!dp_test_have_data("doppler")) return dp_test_done();
    for (size_t r = 0; r < sizeof REFS / sizeof REFS[0]; r++) {
        const ref_t *ref = &REFS[r];
        char rel[256], path[1024];
        snprintf(rel, sizeof rel, "doppler/%s", ref->file);
        if (!dp_test_have_data(rel)) continue;
        dp_test_data_path(path, sizeof path, rel);

        parsed_t p;
        CHECK(parse_by_hand(path, &p) == 0, "cannot read %s", path);
        CHECK(p.n_ops == ref->ops && p.n_src == ref->edges && p.n_dst == ref->edges &&
              p.op_lines == ref->ops,
              "%s by hand: ops %d src %d dst %d op lines %d", ref->file, p.n_ops, p.n_src,
              p.n_dst, p.op_lines);

        dp_graph g;
        dp_error err;
        memset(&g, 0, sizeof g);
        memset(&err, 0, sizeof err);
        int rc = dp_graph_read(&g, path, DP_FORMAT_AUTO, &err);
        CHECK(rc == 0, "read %s: %s", path, err.msg);
        if (rc) continue;
        CHECK(g.format == DP_FORMAT_DOPPLER, "%s detected as format %d", ref->file, (int)g.format);
        CHECK(g.n_ops == ref->ops, "%s: %d ops, expected %d", ref->file, g.n_ops, ref->ops);
        CHECK(g.n_edges == ref->edges, "%s: %d edges, expected %d", ref->file, g.n_edges, ref->edges);
        CHECK(g.n_ext_inputs == p.n_inputs, "%s: n_ext_inputs %d, expected %d", ref->file,
              g.n_ext_inputs, p.n_inputs);
        CHECK(g.unit_speed == 1e10 && g.unit_bandwidth == 1e10,
              "%s: units %g %g, expected 1e10 1e10", ref->file, g.unit_speed, g.unit_bandwidth);
        double sum = 0;
        for (int i = 0; i < g.n_ops; i++) sum += g.compute[i];
        CHECK_NEAR(sum, p.sum_comp, 1e-9 * p.sum_comp, "total compute vs hand parse");

        dp_cluster c;
        memset(&c, 0, sizeof c);
        rc = dp_cluster_for_graph(&c, &g, 4, &err);
        CHECK(rc == 0, "cluster for %s: %s", ref->file, err.msg);
        if (rc) { dp_graph_free(&g); continue; }
        CHECK(c.n == 4, "cluster has %d devices", c.n);

        /* everything on device 0: no transfers, the device never idles, so
           the makespan is the total compute / speed 1e10 */
        int *asg = (int *)calloc((size_t)g.n_ops, sizeof(int));
        double mk = -1;
        rc = dp_simulate(&g, &c, asg, NULL, &mk, &err);
        CHECK(rc == 0, "simulate %s: %s", ref->file, err.msg);
        char what[160];
        snprintf(what, sizeof what, "%s: makespan on one device = sum(comp)/1e10", ref->file);
        CHECK_NEAR(mk, p.sum_comp / 1e10, 1e-9 * (p.sum_comp / 1e10), what);

        double lb = dp_lower_bound(&g, &c);
        CHECK(lb > 0 && lb <= mk + 1e-9, "%s: lower bound %g vs single %g", ref->file, lb, mk);
        /* work bound: sum/4/1e10 is part of the bound */
        CHECK(lb >= p.sum_comp / 4 / 1e10 * (1 - 1e-12), "%s: lower bound %g below work/4 %g",
              ref->file, lb, p.sum_comp / 4 / 1e10);

        double got[DP_METHOD__COUNT] = {0};
        for (int m = 0; m < DP_METHOD__COUNT; m++) {
            dp_place_opts po;
            memset(&po, 0, sizeof po);
            po.seed = 7;
            if (m == DP_METHOD_ANNEAL) po.budget = 400;
            if (m == DP_METHOD_ENUMOPT) po.max_passes = 2;
            dp_place_result res;
            memset(&res, 0, sizeof res);
            for (int i = 0; i < g.n_ops; i++) asg[i] = -1;
            rc = dp_place((dp_method)m, &g, &c, &po, asg, &res, &err);
            CHECK(rc == 0, "%s: %s: %s", ref->file, dp_method_name((dp_method)m), err.msg);
            got[m] = res.makespan;
            if (rc) continue;
            int ok = 1;
            for (int i = 0; i < g.n_ops; i++) ok &= asg[i] >= 0 && asg[i] < 4;
            CHECK(ok, "%s: %s: device out of range", ref->file, dp_method_name((dp_method)m));
            CHECK(res.makespan >= lb * (1 - 1e-9), "%s: %s makespan %.17g < lower bound %.17g",
                  ref->file, dp_method_name((dp_method)m), res.makespan, lb);
            snprintf(what, sizeof what, "%s: %s result.lower_bound", ref->file,
                     dp_method_name((dp_method)m));
            CHECK_NEAR(res.lower_bound, lb, 1e-9 * lb, what);
            /* the reported makespan is the simulated one of the assignment */
            double mk2 = -1;
            dp_sim_opts so;
            memset(&so, 0, sizeof so);
            CHECK(dp_simulate(&g, &c, asg, &so, &mk2, &err) == 0, "resimulate");
            snprintf(what, sizeof what, "%s: %s reported vs re-simulated", ref->file,
                     dp_method_name((dp_method)m));
            CHECK_NEAR(res.makespan, mk2, 1e-9 * mk2, what);
        }
        /* single is the all-on-one-device makespan */
        snprintf(what, sizeof what, "%s: single", ref->file);
        CHECK_NEAR(got[DP_METHOD_SINGLE], mk, 1e-9 * mk, what);
        if (r == 1) { /* ffnn: the list schedulers beat one device */
            CHECK(got[DP_METHOD_CP] < got[DP_METHOD_SINGLE], "ffnn: cp %.17g not better than single %.17g",
                  got[DP_METHOD_CP], got[DP_METHOD_SINGLE]);
            CHECK(got[DP_METHOD_HEFT] < got[DP_METHOD_SINGLE],
                  "ffnn: heft %.17g not better than single %.17g", got[DP_METHOD_HEFT],
                  got[DP_METHOD_SINGLE]);
        }
        printf("%-32s ops %3d lb %.6g single %.6g rr %.6g random %.6g cp %.6g heft %.6g enumopt %.6g anneal %.6g\n",
               ref->file, g.n_ops, lb, got[0], got[1], got[2], got[3], got[4], got[5], got[6]);
        free(asg);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
    return dp_test_done();
}
