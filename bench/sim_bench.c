/* sim_bench.c - simulator throughput: simulations per second of one fixed
   assignment (cp's) per graph, one thread, each timed over >= 1 second.

       build/sim_bench [--devices N] [--seconds S] GRAPH...

   Prints a markdown table. The target is >= 100,000 simulations per second
   on ffnn_192nodes (4 devices, FIFO); a graph named ffnn* below it makes
   the exit status 1. */
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <stdlib.h>
#include <string.h>

#define TARGET 100000.0

static double rate(dp_sim *s, const int *assign, const dp_sim_opts *so, double min_secs,
                   long *runs)
{
    dp_error e = {0};
    long n = 0, batch = 64;
    double t0 = dp_now(), t;
    for (;;) {
        for (long i = 0; i < batch; i++)
            if (dp_sim_run(s, assign, so, &e)) {
                fprintf(stderr, "sim_bench: %s\n", e.msg);
                return -1;
            }
        n += batch;
        t = dp_now() - t0;
        if (t >= min_secs) break;
        if (t < min_secs / 8) batch *= 2;
    }
    *runs = n;
    return (double)n / t;
}

int main(int argc, char **argv)
{
    int devices = 4, missed = 0, errors = 0, n_graphs = 0, ffnn = 0;
    double min_secs = 1.0;
    const char *graphs[256];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--devices") && i + 1 < argc) devices = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) min_secs = atof(argv[++i]);
        else if (argv[i][0] == '-' || n_graphs == 256) {
            fprintf(stderr, "usage: sim_bench [--devices N] [--seconds S] GRAPH...\n");
            return 2;
        } else graphs[n_graphs++] = argv[i];
    }
    if (!n_graphs || devices < 1 || !(min_secs > 0)) {
        fprintf(stderr, "usage: sim_bench [--devices N] [--seconds S] GRAPH...\n");
        return 2;
    }

    printf("| graph | ops | edges | devices | makespan (cp) | FIFO sims/s | us/sim "
           "| PRIORITY sims/s | us/sim |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n_graphs; i++) {
        dp_graph g;
        dp_cluster c;
        dp_sim s;
        dp_error e = {0};
        dp_graph_init(&g);
        memset(&c, 0, sizeof c);
        memset(&s, 0, sizeof s);
        int *assign = NULL;
        dp_place_result res;
        dp_place_opts po = {0};
        if (dp_graph_read(&g, graphs[i], DP_FORMAT_AUTO, &e) ||
            dp_cluster_for_graph(&c, &g, g.n_dev_time > 0 ? g.n_dev_time : devices, &e) ||
            !(assign = malloc(sizeof *assign * (size_t)g.n_ops)) ||
            dp_place(DP_METHOD_CP, &g, &c, &po, assign, &res, &e) ||
            dp_sim_init(&s, &g, &c, &e)) {
            fprintf(stderr, "sim_bench: %s: %s\n", graphs[i], e.msg[0] ? e.msg : "out of memory");
            errors++;
        } else {
            dp_sim_opts fifo = {0}, prio = {0};
            prio.order = DP_ORDER_PRIORITY;
            long n1 = 0, n2 = 0;
            double r1 = rate(&s, assign, &fifo, min_secs, &n1);
            double r2 = rate(&s, assign, &prio, min_secs, &n2);
            const char *b = strrchr(graphs[i], '/');
            b = b ? b + 1 : graphs[i];
            if (r1 < 0 || r2 < 0) errors++;
            printf("| %s | %d | %d | %d | %.6g | %.0f | %.2f | %.0f | %.2f |\n", b, g.n_ops,
                   g.n_edges, c.n, res.makespan, r1, 1e6 / r1, r2, 1e6 / r2);
            if (!strncmp(b, "ffnn", 4)) {
                ffnn++;
                missed += r1 < TARGET;
            }
        }
        fflush(stdout);
        dp_sim_free(&s);
        free(assign);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
    printf("\nTarget: >= %.0f simulations/s on ffnn_192nodes (FIFO, one core): %s\n", TARGET,
           !ffnn ? "not measured (no ffnn graph given)" : missed ? "MISSED" : "met");
    return errors || missed ? 1 : 0;
}
