/* stg_bench.c - every placer on the STG set against the proven optima.

       build/stg_bench [--data DIR] [--methods m1,m2,...] [--sizes 50,100]
                       [--procs 2,4,8,16] [--limit N]

   For each size S and processor count P it reads DIR/opt_S_P.csv (rows
   "path,procs,optimal_makespan", path relative to DIR), places each graph on
   P identical unit devices (no communication in STG) with every method and
   prints, per (method, S, P), the mean and worst ratio of the simulated
   makespan to the optimum, as markdown. A ratio below 1 would beat a proven
   optimum: it is counted and reported as an error (exit 1).
   DIR defaults to ../shared/data/stg; --limit N keeps the first N graphs. */
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LIST 16

typedef struct cell {
    int n;
    double sum, worst, seconds;
    int optimal; /* graphs placed at the optimum */
} cell;

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    char buf[256], *tok;
    snprintf(buf, sizeof buf, "%s", s);
    for (tok = strtok(buf, ","); tok && n < max; tok = strtok(NULL, ",")) {
        out[n] = atoi(tok);
        if (out[n] <= 0) return -1;
        n++;
    }
    return n;
}

/* Every method on one STG graph on p processors against its proven
   optimum opt: method k's figures go to row[k * stride]. */
static void run_graph(const char *gpath, int p, double opt, const dp_method *ms, int n_ms, cell *row, size_t stride,
                      int *errors, int *below_opt)
{
    dp_graph g;
    dp_cluster c;
    dp_error e = {0};
    dp_graph_init(&g);
    memset(&c, 0, sizeof c);
    if (dp_graph_read(&g, gpath, DP_FORMAT_STG, &e) ||
        dp_cluster_for_graph(&c, &g, p, &e)) {
        fprintf(stderr, "stg_bench: %s\n", e.msg);
        (*errors)++;
        dp_cluster_free(&c);
        dp_graph_free(&g);
        return;
    }
    int *assign = malloc(sizeof *assign * (size_t)g.n_ops);
    for (int k = 0; assign && k < n_ms; k++) {
        dp_place_opts po = {0};
        dp_place_result res;
        po.seed = 1;
        double t0 = dp_now();
        if (dp_place(ms[k], &g, &c, &po, assign, &res, &e)) {
            fprintf(stderr, "stg_bench: %s, %s: %s\n", gpath,
                    dp_method_name(ms[k]), e.msg);
            (*errors)++;
            continue;
        }
        double r = res.makespan / opt;
        cell *x = &row[(size_t)k * stride];
        x->seconds += dp_now() - t0;
        if (r < 1 - 1e-9) {
            fprintf(stderr, "stg_bench: %s on %d: %s makespan %.17g is below "
                    "the proven optimum %.17g\n", gpath, p,
                    dp_method_name(ms[k]), res.makespan, opt);
            (*below_opt)++;
        }
        x->n++;
        x->sum += r;
        if (r > x->worst) x->worst = r;
        if (r <= 1 + 1e-9) x->optimal++;
    }
    free(assign);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

int main(int argc, char **argv)
{
    const char *dir = "../shared/data/stg", *methods = "all";
    int sizes[MAX_LIST] = {50, 100}, n_sizes = 2;
    int procs[MAX_LIST] = {2, 4, 8, 16}, n_procs = 4;
    int limit = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "stg_bench: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--data")) dir = v;
        else if (!strcmp(a, "--methods")) methods = v;
        else if (!strcmp(a, "--sizes")) n_sizes = parse_list(v, sizes, MAX_LIST);
        else if (!strcmp(a, "--procs")) n_procs = parse_list(v, procs, MAX_LIST);
        else if (!strcmp(a, "--limit")) limit = atoi(v);
        else {
            fprintf(stderr, "usage: stg_bench [--data DIR] [--methods L] [--sizes L] "
                            "[--procs L] [--limit N]\n");
            return 2;
        }
        i++;
        if (n_sizes <= 0 || n_procs <= 0) {
            fprintf(stderr, "stg_bench: bad list '%s'\n", v);
            return 2;
        }
    }
    dp_method ms[DP_METHOD__COUNT];
    int n_ms = 0;
    if (!strcmp(methods, "all")) {
        for (int m = 0; m < DP_METHOD__COUNT; m++) ms[n_ms++] = (dp_method)m;
    } else {
        char buf[256], *tok;
        snprintf(buf, sizeof buf, "%s", methods);
        for (tok = strtok(buf, ","); tok && n_ms < DP_METHOD__COUNT; tok = strtok(NULL, ","))
            if (dp_method_parse(tok, &ms[n_ms++])) {
                fprintf(stderr, "stg_bench: unknown method '%s'\n", tok);
                return 2;
            }
    }

    cell *cells = calloc((size_t)(n_ms * n_sizes * n_procs), sizeof *cells);
    if (!cells) return 1;
#define CELL(k, si, pi) cells[((k) * n_sizes + (si)) * n_procs + (pi)]
    int errors = 0, below_opt = 0;
    double t_all = dp_now();

    for (int si = 0; si < n_sizes; si++) {
        for (int pi = 0; pi < n_procs; pi++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/opt_%d_%d.csv", dir, sizes[si], procs[pi]);
            FILE *f = fopen(path, "r");
            if (!f) {
                fprintf(stderr, "stg_bench: cannot open %s\n", path);
                errors++;
                continue;
            }
            char line[1024];
            int rows = 0;
            while (fgets(line, sizeof line, f) && (!limit || rows < limit)) {
                char rel[512];
                int p;
                double opt;
                if (sscanf(line, "%511[^,],%d,%lf", rel, &p, &opt) != 3) continue;
                if (p != procs[pi] || opt <= 0) continue;
                rows++;
                char gpath[1100];
                snprintf(gpath, sizeof gpath, "%s/%s", dir, rel);
                run_graph(gpath, p, opt, ms, n_ms, &CELL(0, si, pi), (size_t)n_sizes * n_procs, &errors, &below_opt);
            }
            fclose(f);
        }
    }

    /* one table per size: rows methods, columns processor counts */
    for (int si = 0; si < n_sizes; si++) {
        printf("\nSTG, %d tasks: makespan / proven optimum, mean (worst) over the "
               "graphs; [at optimum]\n\n| method |", sizes[si]);
        for (int pi = 0; pi < n_procs; pi++) printf(" %d procs |", procs[pi]);
        printf(" seconds |\n|---|");
        for (int pi = 0; pi < n_procs; pi++) printf("---:|");
        printf("---:|\n");
        for (int k = 0; k < n_ms; k++) {
            double secs = 0;
            printf("| %s |", dp_method_name(ms[k]));
            for (int pi = 0; pi < n_procs; pi++) {
                cell *x = &CELL(k, si, pi);
                secs += x->seconds;
                if (!x->n) printf(" - |");
                else printf(" %.4f (%.3f) [%d/%d] |", x->sum / x->n, x->worst, x->optimal, x->n);
            }
            printf(" %.2f |\n", secs);
        }
    }
    printf("\n%.1f s in all", dp_now() - t_all);
    if (errors) printf("; %d error%s", errors, errors == 1 ? "" : "s");
    if (below_opt) printf("; %d makespan%s BELOW the proven optimum", below_opt,
                          below_opt == 1 ? "" : "s");
    printf("\n");
    free(cells);
    return errors || below_opt ? 1 : 0;
}
