/* test_stg.c - the Standard Task Graph set (Kasahara lab) with its proven
   optimal makespans: no placement can beat the optimum, no lower bound may
   exceed it. Every graph under ../shared/data/stg/{50,100}/ on 2, 4, 8, 16
   identical processors. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

#include <dirent.h>

#define MAX_GRAPHS 512

typedef struct {
    char rel[64];        /* "50/rand0000.stg" */
    double opt[4];       /* P = 2, 4, 8, 16; -1 unknown */
} entry_t;

static const int PROCS[4] = {2, 4, 8, 16};

static entry_t ents[MAX_GRAPHS];
static int n_ents;

static entry_t *find_entry(const char *rel, int create)
{
    for (int i = 0; i < n_ents; i++)
        if (strcmp(ents[i].rel, rel) == 0) return &ents[i];
    if (!create || n_ents == MAX_GRAPHS) return NULL;
    entry_t *e = &ents[n_ents++];
    snprintf(e->rel, sizeof e->rel, "%s", rel);
    for (int k = 0; k < 4; k++) e->opt[k] = -1;
    return e;
}

static int cmp_ent(const void *a, const void *b)
{
    return strcmp(((const entry_t *)a)->rel, ((const entry_t *)b)->rel);
}

/* Independent parse of an STG file: task count, edge count (sum of the
   predecessor counts), and the "# CP Length : X" comment. */
static int parse_stg(const char *path, int *n_tasks, int *n_edges, double *cp)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[4096];
    int row = -1;
    *n_tasks = -1; *n_edges = 0; *cp = -1;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') {
            const char *s = strstr(line, "CP Length");
            if (s) {
                s = strchr(s, ':');
                if (s) *cp = strtod(s + 1, NULL);
            }
            continue;
        }
        int a, b, c;
        if (row < 0) {
            if (sscanf(line, "%d", &a) == 1) { *n_tasks = a; row = 0; }
            continue;
        }
        if (sscanf(line, "%d %d %d", &a, &b, &c) == 3) { *n_edges += c; row++; }
    }
    fclose(f);
    return row == *n_tasks + 2 ? 0 : -1;
}

int main(void)
{
    if (!dp_test_have_data("stg")) return dp_test_done();
    double t0 = dp_now();

    /* optimum tables */
    const char *sizes[2] = {"50", "100"};
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 4; k++) {
            char rel[64], path[1024], line[256];
            snprintf(rel, sizeof rel, "stg/opt_%s_%d.csv", sizes[s], PROCS[k]);
            FILE *f = fopen(dp_test_data_path(path, sizeof path, rel), "r");
            CHECK(f != NULL, "cannot open %s", path);
            if (!f) continue;
            int rows = 0;
            while (fgets(line, sizeof line, f)) {
                char name[64];
                int p;
                double opt;
                if (sscanf(line, "%63[^,],%d,%lf", name, &p, &opt) != 3) continue;
                CHECK(p == PROCS[k], "%s: row for %d procs", rel, p);
                entry_t *e = find_entry(name, 1);
                if (e) e->opt[k] = opt;
                rows++;
            }
            fclose(f);
            CHECK(rows == 90, "%s has %d rows, expected 90", rel, rows);
        }

    /* every graph on disk must be in the tables */
    for (int s = 0; s < 2; s++) {
        char dir[1024], rel[64];
        snprintf(rel, sizeof rel, "stg/%s", sizes[s]);
        DIR *d = opendir(dp_test_data_path(dir, sizeof dir, rel));
        CHECK(d != NULL, "opendir %s", dir);
        if (!d) continue;
        int files = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            size_t L = strlen(de->d_name);
            if (L < 4 || strcmp(de->d_name + L - 4, ".stg") != 0) continue;
            char name[300];
            snprintf(name, sizeof name, "%s/%s", sizes[s], de->d_name);
            files++;
            CHECK(find_entry(name, 0) != NULL, "%s has no optimum", name);
        }
        closedir(d);
        CHECK(files == 90, "stg/%s holds %d graphs, expected 90", sizes[s], files);
    }
    qsort(ents, (size_t)n_ents, sizeof ents[0], cmp_ent);

    static const dp_method fast[] = {DP_METHOD_SINGLE, DP_METHOD_ROUND_ROBIN, DP_METHOD_RANDOM,
                                     DP_METHOD_CP, DP_METHOD_HEFT};
    int n_runs = 0, n_slow = 0, n_graphs = 0;
    for (int gi = 0; gi < n_ents; gi++) {
        entry_t *e = &ents[gi];
        char rel[128], path[1024];
        snprintf(rel, sizeof rel, "stg/%.60s", e->rel);
        dp_test_data_path(path, sizeof path, rel);
        int n_tasks = -1, n_edges = -1;
        double cp_file = -1;
        CHECK(parse_stg(path, &n_tasks, &n_edges, &cp_file) == 0, "hand parse of %s", path);

        dp_graph g;
        dp_error err;
        memset(&g, 0, sizeof g);
        memset(&err, 0, sizeof err);
        int rc = dp_graph_read(&g, path, DP_FORMAT_AUTO, &err);
        CHECK(rc == 0, "read %s: %s", path, err.msg);
        if (rc) continue;
        n_graphs++;
        CHECK(g.format == DP_FORMAT_STG, "%s: detected format %d", e->rel, (int)g.format);
        /* tasks 0..n+1 including the two dummies */
        CHECK(g.n_ops == n_tasks + 2, "%s: %d ops, expected %d", e->rel, g.n_ops, n_tasks + 2);
        CHECK(g.n_edges == n_edges, "%s: %d edges, expected %d", e->rel, g.n_edges, n_edges);
        CHECK(g.compute[0] == 0 && g.compute[g.n_ops - 1] == 0, "%s: dummies not zero-cost", e->rel);
        int zero_bytes = 1;
        for (int k = 0; k < g.n_edges; k++) zero_bytes &= g.bytes[k] == 0;
        CHECK(zero_bytes, "%s: STG edges carry bytes", e->rel);

        int *asg = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
        int *start = (int *)malloc(sizeof(int) * (size_t)g.n_ops);
        for (int k = 0; k < 4; k++) {
            int P = PROCS[k];
            double opt = e->opt[k];
            CHECK(opt > 0, "%s: no optimum for %d procs", e->rel, P);
            if (opt <= 0) continue;
            dp_cluster c;
            memset(&c, 0, sizeof c);
            rc = dp_cluster_for_graph(&c, &g, P, &err);
            CHECK(rc == 0, "cluster %d: %s", P, err.msg);
            if (rc) continue;
            dp_stats st;
            CHECK(dp_graph_stats(&g, &c, &st) == 0, "stats %s", e->rel);
            /* the file's own "CP Length" comment (no communication) */
            if (k == 0 && cp_file >= 0) {
                char what[128];
                snprintf(what, sizeof what, "%.60s: cp_length vs the file's CP Length", e->rel);
                CHECK_NEAR(st.cp_length, cp_file, 1e-9, what);
            }
            double lb = dp_lower_bound(&g, &c);
            CHECK(lb <= opt + 1e-9, "%s P=%d: lower bound %.17g > optimum %g", e->rel, P, lb, opt);
            CHECK(lb == st.lower_bound, "%s: dp_lower_bound %.17g vs stats %.17g", e->rel, lb,
                  st.lower_bound);

            for (size_t m = 0; m < sizeof fast / sizeof fast[0]; m++) {
                dp_place_opts po;
                memset(&po, 0, sizeof po);
                po.seed = (uint64_t)gi * 31 + (uint64_t)k;
                dp_place_result res;
                memset(&res, 0, sizeof res);
                rc = dp_place(fast[m], &g, &c, &po, asg, &res, &err);
                n_runs++;
                CHECK(rc == 0, "%s P=%d %s: %s", e->rel, P, dp_method_name(fast[m]), err.msg);
                if (rc) continue;
                CHECK(res.makespan >= opt - 1e-9, "%s P=%d %s: makespan %.17g beats the optimum %g",
                      e->rel, P, dp_method_name(fast[m]), res.makespan, opt);
                CHECK(res.makespan >= lb - 1e-9, "%s P=%d %s: makespan %.17g < lower bound %.17g",
                      e->rel, P, dp_method_name(fast[m]), res.makespan, lb);
                if (fast[m] == DP_METHOD_CP || fast[m] == DP_METHOD_HEFT)
                    CHECK(res.schedule_length >= opt - 1e-9,
                          "%s P=%d %s: schedule length %.17g beats the optimum %g", e->rel, P,
                          dp_method_name(fast[m]), res.schedule_length, opt);
            }
            if (gi % 10 == 0) {
                /* the search placers, small budgets, starting from round-robin */
                dp_place_result rr;
                dp_place_opts po;
                memset(&po, 0, sizeof po);
                rc = dp_place(DP_METHOD_ROUND_ROBIN, &g, &c, &po, start, &rr, &err);
                CHECK(rc == 0, "round-robin start: %s", err.msg);
                static const dp_method slow[] = {DP_METHOD_ENUMOPT, DP_METHOD_ANNEAL};
                for (int m = 0; m < 2 && rc == 0; m++) {
                    memset(&po, 0, sizeof po);
                    po.seed = (uint64_t)gi + 1;
                    po.max_passes = 1;
                    po.budget = 200;
                    po.start = start;
                    dp_place_result res;
                    memset(&res, 0, sizeof res);
                    int rc2 = dp_place(slow[m], &g, &c, &po, asg, &res, &err);
                    n_slow++;
                    CHECK(rc2 == 0, "%s P=%d %s: %s", e->rel, P, dp_method_name(slow[m]), err.msg);
                    if (rc2) continue;
                    CHECK(res.makespan >= opt - 1e-9, "%s P=%d %s: makespan %.17g beats the optimum %g",
                          e->rel, P, dp_method_name(slow[m]), res.makespan, opt);
                    CHECK(res.makespan >= lb - 1e-9, "%s P=%d %s: makespan %.17g < lower bound",
                          e->rel, P, dp_method_name(slow[m]), res.makespan);
                    CHECK(res.makespan <= rr.makespan + 1e-9, "%s P=%d %s: %.17g worse than its start %.17g",
                          e->rel, P, dp_method_name(slow[m]), res.makespan, rr.makespan);
                }
            }
            dp_cluster_free(&c);
        }
        free(asg);
        free(start);
        dp_graph_free(&g);
    }
    CHECK(n_graphs == 180, "%d graphs read, expected 180", n_graphs);
    printf("stg: %d graphs, %d fast placements, %d search placements, %.2f s\n", n_graphs,
           n_runs, n_slow, dp_now() - t0);
    return dp_test_done();
}
