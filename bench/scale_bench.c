/* scale_bench.c - the library's steps on one large graph: seconds and peak
   memory of reading it, cp, heft, one simulation, anneal under a time
   limit and the DOPPLER policy's greedy placement plus K samples.

       build/scale_bench [--devices N] [--time-limit S] [--samples K]
                         [--threads T] [--budget B] [--no-move-bound]
                         [--policy P.dpl] [--steps LIST] GRAPH

   One line per step on standard output, tab-separated:

       step  seconds  peak_bytes  makespan  note

   (read's note: the ops, the edges and the bytes resident once read,
   the graph's own memory and the program's.) Step arrays, only when
   --steps names it: the graph's memory as the ratios of bench/RESULTS.md
   part 3 take it, every page of every array of the graph touched (the
   zeros a reader leaves untouched included), less the program's own
   resident bytes before the read.

   The graph is read once; every other step runs in a child process
   (fork) so that its peak resident memory (getrusage's ru_maxrss, which
   counts the graph the child shares with its parent) is its own: the
   graph plus what the step allocates. Steps: read, cp, heft, sim (cp's
   placement, simulated once), anneal (--time-limit S, default 10, or
   --budget B moves), doppler (--policy, default
   policies/doppler_family.dpl; greedy and K samples, default 64, drawn
   by T threads, default 1: the same placement with any T), and,
   only when --steps names it, enumopt (--time-limit S). --steps takes a
   comma-separated subset. The searches' notes give their moves scored
   per second, simulated or decided by the move bound (--no-move-bound:
   every move simulated, the same search).
   bench/scale.sh runs it over graphs of 10^4..10^6 ops and fits the
   growth exponents. POSIX only (fork, getrusage). */
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double peak_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0;   /* Linux: kilobytes */
}

/* resident bytes now (Linux /proc/self/statm; 0 elsewhere) */
static double resident_bytes(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    fclose(f);
    return (double)rss * (double)sysconf(_SC_PAGESIZE);
}

/* every page of [p, p + n) written with its own bytes: resident */
static void touch(const void *p, size_t n)
{
    volatile char *c = (volatile char *)p;
    size_t i;
    if (!p || !n) return;
    for (i = 0; i < n; i += 4096) c[i] = c[i];
    c[n - 1] = c[n - 1];
}

static int want(const char *steps, const char *step)
{
    size_t n = strlen(step);
    const char *p = steps;
    if (!steps) return 1;
    while ((p = strstr(p, step))) {
        if ((p == steps || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
        p += n;
    }
    return 0;
}

typedef struct run {
    double base;   /* resident bytes before the read: the program's */
    const dp_graph *g;
    const dp_cluster *c;
    double time_limit;
    int samples, threads, budget, no_move_bound;
    const char *policy;
} run;

/* One step in this (child) process; prints its line. 0 on success. */
static int step(const run *r, const char *name)
{
    const dp_graph *g = r->g;
    const dp_cluster *c = r->c;
    int *assign = (int *)malloc(sizeof(int) * (size_t)(g->n_ops + 1));
    dp_error e;
    double t0, secs, ms = 0, len = 0;
    char note[160] = "";
    int rc = 0;
    memset(&e, 0, sizeof e);
    if (!assign) { fprintf(stderr, "scale_bench: %s: out of memory\n", name); return 1; }
    t0 = dp_now();
    if (!strcmp(name, "arrays")) {
        size_t n = (size_t)g->n_ops, m = (size_t)g->n_edges;
        int v;
        touch(g->name, n * sizeof *g->name);
        for (v = 0; v < g->n_ops; v++) touch(g->name[v], strlen(g->name[v]) + 1);
        touch(g->kind, n * sizeof *g->kind); touch(g->compute, n * 8); touch(g->out_bytes, n * 8);
        touch(g->mem_bytes, n * 8); touch(g->resident, n * 8); touch(g->rows, n * 4); touch(g->cols, n * 4);
        touch(g->arg, n * 4); touch(g->n_source, g->n_source ? n * 4 : 0); touch(g->source, g->source ? n * sizeof *g->source : 0);
        touch(g->dev_time, n * (size_t)g->n_dev_time * 8);
        touch(g->src, m * 4); touch(g->dst, m * 4); touch(g->bytes, m * 8);
        touch(g->out_off, (n + 1) * 4); touch(g->in_off, (n + 1) * 4); touch(g->out_edge, m * 4); touch(g->in_edge, m * 4);
        touch(g->topo, n * 4);
        touch(g->wuse_off, g->wuse_off ? (n + 1) * 4 : 0); touch(g->wuse, g->wuse_off ? (size_t)g->wuse_off[n] * 4 : 0);
        touch(g->use_op, (size_t)g->n_uses * 4); touch(g->use_weight, (size_t)g->n_uses * 4);
        touch(g->weight_bytes, (size_t)g->n_weights * 8);
        snprintf(note, sizeof note, "%.0f bytes: the graph's arrays, every page touched (the program's %.0f not counted)",
                 resident_bytes() - r->base, r->base);
    } else if (!strcmp(name, "cp")) rc = dp_place_cp(g, c, assign, NULL, &len, &e), ms = len;
    else if (!strcmp(name, "heft")) rc = dp_place_heft(g, c, assign, NULL, NULL, &len, &e), ms = len;
    else if (!strcmp(name, "sim")) {
        dp_sim s;
        dp_sim_opts so;
        memset(&s, 0, sizeof s);
        memset(&so, 0, sizeof so);
        rc = dp_place_cp(g, c, assign, NULL, &len, &e);
        t0 = dp_now();   /* the simulation alone: its workspace and one run */
        if (!rc) rc = dp_sim_init(&s, g, c, &e);
        if (!rc) rc = dp_sim_run(&s, assign, &so, &e);
        ms = s.makespan;
        dp_sim_free(&s);
    } else if (!strcmp(name, "anneal") || !strcmp(name, "enumopt")) {
        dp_place_opts po;
        dp_place_result res;
        double ts;
        memset(&po, 0, sizeof po);
        if (r->budget && name[0] == 'a') po.budget = r->budget;
        else po.time_limit = r->time_limit;
        po.seed = 1;
        po.no_move_bound = r->no_move_bound;
        rc = dp_place(name[0] == 'a' ? DP_METHOD_ANNEAL : DP_METHOD_ENUMOPT, g, c, &po, assign, &res, &e);
        ms = res.makespan;
        ts = res.seconds > 0 ? res.seconds : 1e-9;
        snprintf(note, sizeof note, "%ld simulations + %ld moves bounded, %.0f moves/s%s", res.simulations, res.bounded,
                 (res.simulations + res.bounded) / ts, res.time_limited ? ", stopped by the time limit" : "");
    } else if (!strcmp(name, "doppler")) {
        dp_policy p;
        dp_infer_opts io;
        long sims = 0;
        char on[32] = "";   /* " on T threads" */
        memset(&p, 0, sizeof p);
        memset(&io, 0, sizeof io);
        rc = dp_policy_load(&p, r->policy, &e);
        t0 = dp_now();   /* placing, not loading the policy */
        io.samples = r->samples;
        io.threads = r->threads;
        io.seed = 1;
        io.simulations = &sims;
        if (!rc) rc = dp_policy_place(&p, g, c, &io, assign, NULL, &ms, &e);
        if (r->threads > 1) snprintf(on, sizeof on, " on %d threads", r->threads);
        snprintf(note, sizeof note, "greedy + %d samples%s, %ld simulations", r->samples, on, sims);
        dp_policy_free(&p);
    } else {
        fprintf(stderr, "scale_bench: unknown step '%s'\n", name);
        free(assign);
        return 1;
    }
    secs = dp_now() - t0;
    free(assign);
    if (rc) { fprintf(stderr, "scale_bench: %s: %s\n", name, e.msg); return 1; }
    printf("%s\t%.3f\t%.0f\t%.6g\t%s\n", name, secs, peak_bytes(), ms, note);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *steps[] = {"arrays", "cp", "heft", "sim", "anneal", "doppler", "enumopt"};
    const char *path = NULL, *only = NULL;
    run r;
    dp_graph g;
    dp_cluster c;
    dp_error e;
    int devices = 4, i, failed = 0;
    double t0;
    memset(&r, 0, sizeof r);
    r.time_limit = 10;
    r.samples = 64;
    r.policy = "policies/doppler_family.dpl";
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--devices") && i + 1 < argc) devices = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--time-limit") && i + 1 < argc) r.time_limit = atof(argv[++i]);
        else if (!strcmp(argv[i], "--samples") && i + 1 < argc) r.samples = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) r.threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) r.budget = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-move-bound")) r.no_move_bound = 1;
        else if (!strcmp(argv[i], "--policy") && i + 1 < argc) r.policy = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) only = argv[++i];
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else {
            fprintf(stderr, "usage: scale_bench [--devices N] [--time-limit S] [--samples K] [--threads T] [--budget B] [--no-move-bound] [--policy P.dpl] [--steps LIST] GRAPH\n");
            return 2;
        }
    }
    if (!path || devices < 1 || r.time_limit <= 0 || r.samples < 0 || r.threads < 0 || r.budget < 0) {
        fprintf(stderr, "usage: scale_bench [--devices N] [--time-limit S] [--samples K] [--threads T] [--budget B] [--no-move-bound] [--policy P.dpl] [--steps LIST] GRAPH\n");
        return 2;
    }
    memset(&g, 0, sizeof g);
    memset(&c, 0, sizeof c);
    memset(&e, 0, sizeof e);
    r.base = resident_bytes();
    t0 = dp_now();
    if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &e)) { fprintf(stderr, "scale_bench: %s\n", e.msg); return 1; }
    if (want(only, "read")) {
        double secs = dp_now() - t0;
        printf("read\t%.3f\t%.0f\t\t%d ops, %d edges, %.0f bytes resident after\n", secs, peak_bytes(), g.n_ops, g.n_edges, resident_bytes());
        fflush(stdout);
    }
    if (dp_cluster_for_graph(&c, &g, devices, &e)) { fprintf(stderr, "scale_bench: %s\n", e.msg); dp_graph_free(&g); return 1; }
    r.g = &g;
    r.c = &c;
    for (i = 0; i < (int)(sizeof steps / sizeof *steps); i++) {
        pid_t pid;
        int status = 0;
        if (!want(only, steps[i]) || (!only && (!strcmp(steps[i], "enumopt") || !strcmp(steps[i], "arrays")))) continue;
        fflush(stdout);
        pid = fork();
        if (pid < 0) { perror("scale_bench: fork"); failed = 1; break; }
        if (pid == 0) _exit(step(&r, steps[i]));
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) failed = 1;
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return failed;
}
