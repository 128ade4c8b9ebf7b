/* exec_bench.c - the executors' figures behind bench/RESULTS.md.

       build/exec_bench overhead [--ops N] [--backend cpu|cuda]
       build/exec_bench simreal GRAPH... [--devices N] [--reps R] [--backend cpu|cuda]
       build/exec_bench realtrain GRAPH [--devices N] [--il E] [--sim E] [--real E]
       build/exec_bench workloads [--devices N] [--backend cpu|cuda]
       build/exec_bench gpu [GRAPH...] [--gpus G]

   --backend cuda needs a build with nvcc (./build.sh builds this program
   with doppler_cuda.cu and -DDP_WITH_CUDA when it finds nvcc) and a GPU;
   the CUDA runs use dp_exec_cuda and dp_calibrate_cuda instead of the CPU's.

   overhead: microseconds per op of dispatch on zero-cost graphs: a chain
             on one device, a chain alternating between two devices (every
             edge a copy), and N independent ops on one device.
   simreal:  for each graph and each of cp, heft and random placements, the
             executor's median wall time against the simulator's makespan
             in seconds (the executor's busy kernels are timed in the same
             units, so no calibration is involved); then the median and the
             worst relative error.
   workloads: calibrates this machine (dp_calibrate_cpu), then chainmm,
             ffnn, llama-block and llama-layer workloads of real ops under cp, heft and random placements:
             the executor's wall time against the calibrated simulator.
   realtrain: trains DOPPLER (il and sim on the simulator, real with the
             executor's wall time as the cost), then the median wall time
             (7 runs) of its placement and of cp, heft and enumopt's.
   gpu:      the CUDA executor on real-op workloads (the given graphs, else
             the four in graphs/): calibrates the GPUs for 1, 2 and 4
             logical devices (dp_calibrate_cuda), then for each graph the
             median wall time (5 runs) of single, round-robin, cp and heft
             placements, with the calibrated simulator's prediction, the
             GPUs used and how many logical devices shared each. */
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <stdlib.h>
#include <string.h>

static int die(const dp_error *e) { fprintf(stderr, "exec_bench: %s\n", e->msg); return 1; }

/* The executor and calibration of --backend (cpu by default). */
typedef int (*exec_fn)(const dp_graph *, const dp_cluster *, const int *, const dp_exec_opts *, dp_exec_result *, dp_error *);
typedef int (*calib_fn)(dp_cluster *, const dp_calibrate_opts *, dp_error *);
static exec_fn g_exec = dp_exec_cpu;
static calib_fn g_calib = dp_calibrate_cpu;
static const char *g_backend = "cpu";

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 2; i < argc - 1; i++) if (!strcmp(argv[i], name)) return argv[i + 1];
    return def;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int overhead(int n)
{
    const char *names[3] = { "chain, 1 device", "chain, alternating 2 devices (a copy per edge)", "independent ops, 1 device" };
    printf("| graph | ops | wall (ms, median of 5) | us per op |\n|---|---:|---:|---:|\n");
    for (int kind = 0; kind < 3; kind++) {
        dp_graph g; dp_cluster c; dp_error e = {0}; dp_exec_result r; dp_exec_opts o;
        dp_graph_init(&g);
        for (int i = 0; i < n; i++) {
            dp_op_desc d;
            memset(&d, 0, sizeof d);
            if (dp_graph_add_op(&g, &d, NULL, &e)) return die(&e);
            if (kind < 2 && i > 0 && dp_graph_add_edge(&g, i - 1, i, 0, &e)) return die(&e);
        }
        if (dp_graph_finalize(&g, &e) || dp_cluster_for_graph(&c, &g, 2, &e)) return die(&e);
        int *a = calloc((size_t)n, sizeof(int));
        for (int i = 0; i < n; i++) a[i] = kind == 1 ? i % 2 : 0;
        memset(&o, 0, sizeof o);
        o.reps = 5; o.seconds_per_unit = 1;   /* every op costs 0 */
        if (g_exec(&g, &c, a, &o, &r, &e)) return die(&e);
        printf("| %s (%s) | %d | %.3f | %.2f |\n", names[kind], g_backend, n, r.wall_median * 1e3, r.wall_median / n * 1e6);
        dp_exec_result_free(&r); free(a); dp_cluster_free(&c); dp_graph_free(&g);
    }
    return 0;
}

static int simreal(int argc, char **argv, int devices, int reps)
{
    dp_method ms[3] = { DP_METHOD_CP, DP_METHOD_HEFT, DP_METHOD_RANDOM };
    double errs[3 * 64];
    int ne = 0;
    printf("| graph | devices | placement | predicted (s) | measured median (s) | error |\n|---|---:|---|---:|---:|---:|\n");
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == '-') { i++; continue; }
        dp_graph g; dp_cluster c; dp_error e = {0};
        if (dp_graph_read(&g, argv[i], DP_FORMAT_AUTO, &e) || dp_cluster_for_graph(&c, &g, devices, &e)) return die(&e);
        int *a = malloc(sizeof(int) * g.n_ops);
        for (int k = 0; k < 3; k++) {
            dp_place_result pr; dp_exec_result r; dp_exec_opts o; dp_place_opts po;
            memset(&po, 0, sizeof po); po.seed = 1;
            memset(&o, 0, sizeof o); o.reps = reps;
            if (dp_place(ms[k], &g, &c, &po, a, &pr, &e) || g_exec(&g, &c, a, &o, &r, &e)) return die(&e);
            double pred = pr.makespan * r.seconds_per_unit, er = (r.wall_median - pred) / pred;
            const char *b = strrchr(argv[i], '/');
            printf("| %s | %d | %s | %.4f | %.4f | %+.1f%% |\n", b ? b + 1 : argv[i], devices, dp_method_name(ms[k]), pred, r.wall_median, 100 * er);
            if (ne < 3 * 64) errs[ne++] = er < 0 ? -er : er;
            dp_exec_result_free(&r);
        }
        free(a); dp_cluster_free(&c); dp_graph_free(&g);
    }
    if (ne) {
        qsort(errs, (size_t)ne, sizeof(double), cmp_double);
        printf("\nrelative error over %d runs: median %.1f%%, worst %.1f%% (target: median <= 10%%)\n",
               ne, 100 * errs[(ne - 1) / 2], 100 * errs[ne - 1]);
    }
    return 0;
}

/* Stage III cost: the executor's wall time (seconds) for the placement. */
typedef struct { double spu; long runs; } real_ctx;

static int real_cost(void *ctx, const dp_graph *g, const dp_cluster *c, const int *assign,
                     const int *order, double *cost, dp_error *err)
{
    real_ctx *rc = (real_ctx *)ctx;
    dp_exec_opts o;
    dp_exec_result r;
    (void)order;
    memset(&o, 0, sizeof o);
    o.seconds_per_unit = rc->spu;
    if (dp_exec_cpu(g, c, assign, &o, &r, err)) return err->code;
    *cost = r.wall_median;
    rc->runs++;
    dp_exec_result_free(&r);
    return 0;
}

static double wall(const dp_graph *g, const dp_cluster *c, const int *a, double spu)
{
    dp_exec_opts o;
    dp_exec_result r;
    dp_error e = {0};
    double w;
    memset(&o, 0, sizeof o);
    o.seconds_per_unit = spu; o.reps = 7;
    if (dp_exec_cpu(g, c, a, &o, &r, &e)) { die(&e); return -1; }
    w = r.wall_median;
    dp_exec_result_free(&r);
    return w;
}

/* Trains il + sim on the simulator and real on the executor, then measures
   the placements of doppler, cp, heft and enumopt on the executor. */
static int realtrain(const char *path, int devices, int il, int sim, int real)
{
    dp_graph g; dp_cluster c; dp_error e = {0}; dp_policy p; dp_policy_opts po; dp_train_opts to;
    dp_train_result tr; dp_infer_opts io; real_ctx rc;
    memset(&po, 0, sizeof po); memset(&to, 0, sizeof to); memset(&io, 0, sizeof io);
    if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &e) || dp_cluster_for_graph(&c, &g, devices, &e) || dp_policy_init(&p, &po, &e))
        return die(&e);
    double work = 0;
    for (int v = 0; v < g.n_ops; v++) work += dp_op_time(&g, &c, v, dp_fastest_device(&g, &c, v));
    rc.spu = 0.02 / work; rc.runs = 0;   /* one device: 20 ms a run */
    const dp_graph *gs[1] = { &g };
    to.episodes[DP_STAGE_IL] = il; to.episodes[DP_STAGE_SIM] = sim; to.episodes[DP_STAGE_REAL] = real;
    to.cost = real_cost; to.cost_ctx = &rc; to.seed = 1;
    if (dp_train(&p, gs, 1, &c, &to, &tr, &e)) return die(&e);
    int *a = malloc(sizeof(int) * g.n_ops);
    double ms, w[4];
    if (dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &e)) return die(&e);
    w[0] = wall(&g, &c, a, rc.spu);
    dp_method m[3] = { DP_METHOD_CP, DP_METHOD_HEFT, DP_METHOD_ENUMOPT };
    for (int k = 0; k < 3; k++) {
        dp_place_result pr;
        if (dp_place(m[k], &g, &c, NULL, a, &pr, &e)) return die(&e);
        w[k + 1] = wall(&g, &c, a, rc.spu);
    }
    const char *b = strrchr(path, '/');
    printf("| %s | %d | %d + %d + %d (%.1f s) | %.2f | %.2f | %.2f | %.2f |\n", b ? b + 1 : path, devices, il, sim, real,
           tr.seconds, w[0] * 1e3, w[1] * 1e3, w[2] * 1e3, w[3] * 1e3);
    free(a); dp_policy_free(&p); dp_cluster_free(&c); dp_graph_free(&g);
    return 0;
}

/* Calibrates this machine, then measures real-op workloads under cp, heft
   and random placements against the calibrated simulator. */
static int workloads(int devices)
{
    dp_cluster c;
    dp_error e = {0};
    dp_calibrate_opts co;
    double errs[128];
    int ne = 0;
    memset(&co, 0, sizeof co);
    co.devices = devices;
    co.seconds = 0.3;   /* longer than the default: steadier on a shared machine */
    if (g_calib(&c, &co, &e)) return die(&e);
    printf("calibrated (%s): matmul %.3g FLOP/s, relu %.3g, reduce %.3g, copies %.3g bytes/s, hand-off %.3g s\n\n",
           g_backend, c.speed[0], c.kind_speed[DP_OP_RELU], c.kind_speed[DP_OP_REDUCE], c.bandwidth[devices > 1 ? 1 : 0], devices > 1 ? c.latency[1] : 0.0);
    printf("| workload | ops | placement | predicted (s) | measured median (s) | error |\n|---|---:|---|---:|---:|---:|\n");
    static const char *kname[4] = { "chainmm", "ffnn (batch 256)", "llama-block (batch 256)", "llama-layer (2 blocks, batch 256)" };
    for (int kind = 0; kind < 4; kind++)
        for (int P = 2; P <= 4; P += 2) {
            dp_graph g;
            dp_workload_opts wo;
            memset(&wo, 0, sizeof wo);
            wo.kind = (dp_workload)kind; wo.parts = P; wo.dim = 512; wo.batch = 256; wo.layers = 2;
            if (dp_gen_workload(&g, &wo, &e)) return die(&e);
            int *a = malloc(sizeof(int) * g.n_ops);
            dp_method ms[3] = { DP_METHOD_CP, DP_METHOD_HEFT, DP_METHOD_RANDOM };
            for (int k = 0; k < 3; k++) {
                dp_place_result pr; dp_exec_result r; dp_exec_opts o; dp_place_opts po;
                memset(&po, 0, sizeof po); po.seed = 1;
                memset(&o, 0, sizeof o); o.reps = 5;
                if (dp_place(ms[k], &g, &c, &po, a, &pr, &e) || g_exec(&g, &c, a, &o, &r, &e)) return die(&e);
                double er = (r.wall_median - pr.makespan) / pr.makespan;
                printf("| %s dim 512 P %d | %d | %s | %.4f | %.4f | %+.1f%% |\n", kname[kind], P, g.n_ops,
                       dp_method_name(ms[k]), pr.makespan, r.wall_median, 100 * er);
                errs[ne++] = er < 0 ? -er : er;
                dp_exec_result_free(&r);
            }
            free(a);
            dp_graph_free(&g);
        }
    qsort(errs, (size_t)ne, sizeof(double), cmp_double);
    printf("\nrelative error over %d runs: median %.1f%%, worst %.1f%% (target: median <= 10%%)\n", ne, 100 * errs[(ne - 1) / 2], 100 * errs[ne - 1]);
    dp_cluster_free(&c);
    return 0;
}

#ifdef DP_WITH_CUDA
/* The CUDA executor on real-op workloads for 1, 2 and 4 logical devices. */
static int gpu(int argc, char **argv, int gpus)
{
    static const char *defaults[] = {"graphs/chainmm_256_p2.dpg", "graphs/ffnn_256_p2.dpg", "graphs/llama_block_256_p2.dpg", "graphs/llama_layer_256_p2.dpg"};
    const char *paths[64];
    int np = 0, ngpu = 0;
    dp_error e = {0};
    char name[256];
    for (int i = 2; i < argc && np < 64; i++) {
        if (argv[i][0] == '-') { i++; continue; }
        paths[np++] = argv[i];
    }
    if (!np) for (int i = 0; i < 4; i++) paths[np++] = defaults[i];
    if (dp_cuda_device_count(&ngpu, &e) || ngpu == 0) { fprintf(stderr, "exec_bench: no CUDA device: %s\n", e.msg); return 1; }
    if (gpus <= 0 || gpus > ngpu) gpus = ngpu;
    if (dp_cuda_device_name(0, name, sizeof name, &e)) return die(&e);
    printf("%d GPU%s used (GPU 0: %s)\n\n", gpus, gpus == 1 ? "" : "s", name);
    printf("| graph | ops | logical devices | GPUs (devices per GPU) | placement | predicted (ms) | measured median (ms) | error | outputs vs CPU |\n");
    printf("|---|---:|---:|---|---|---:|---:|---:|---:|\n");
    for (int nd = 1; nd <= 4; nd *= 2) {
        dp_cluster c;
        dp_calibrate_opts co;
        memset(&co, 0, sizeof co);
        co.devices = nd;
        co.seconds = 0.2;
        if (dp_calibrate_cuda(&c, &co, &e)) return die(&e);
        int G = gpus < nd ? gpus : nd;
        for (int p = 0; p < np; p++) {
            dp_graph g;
            if (dp_graph_read(&g, paths[p], DP_FORMAT_AUTO, &e)) return die(&e);
            int *a = malloc(sizeof(int) * (size_t)g.n_ops), *one = calloc((size_t)g.n_ops, sizeof(int));
            dp_exec_opts o;
            dp_exec_result ref;
            memset(&o, 0, sizeof o);
            o.keep_outputs = 1;
            if (dp_exec_cpu(&g, &c, one, &o, &ref, &e)) return die(&e);
            dp_method ms[4] = { DP_METHOD_SINGLE, DP_METHOD_ROUND_ROBIN, DP_METHOD_CP, DP_METHOD_HEFT };
            for (int k = 0; k < (nd == 1 ? 1 : 4); k++) {
                dp_place_result pr; dp_place_opts po; dp_exec_result r;
                double err = -1;
                memset(&po, 0, sizeof po); po.seed = 1;
                o.reps = 5; o.gpus = gpus;
                if (dp_place(ms[k], &g, &c, &po, a, &pr, &e) || dp_exec_cuda(&g, &c, a, &o, &r, &e)) return die(&e);
                dp_exec_compare(&g, &r, &ref, &err, NULL, &e);
                const char *b = strrchr(paths[p], '/');
                char share[64];
                if (nd % G == 0) snprintf(share, sizeof share, "%d (%d each)", G, nd / G);
                else snprintf(share, sizeof share, "%d (%d or %d)", G, nd / G + 1, nd / G);
                printf("| %s | %d | %d | %s | %s | %.3f | %.3f | %+.1f%% | %.2g |\n", b ? b + 1 : paths[p], g.n_ops, nd, share,
                       dp_method_name(ms[k]), pr.makespan * 1e3, r.wall_median * 1e3, 100 * (r.wall_median - pr.makespan) / pr.makespan, err);
                dp_exec_result_free(&r);
            }
            dp_exec_result_free(&ref);
            free(a); free(one);
            dp_graph_free(&g);
        }
        dp_cluster_free(&c);
    }
    return 0;
}
#endif

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: exec_bench overhead [--ops N] | simreal GRAPH... [--devices N] [--reps R] | workloads | realtrain GRAPH | gpu [GRAPH...]  [--backend cpu|cuda]\n"); return 2; }
    g_backend = opt(argc, argv, "--backend", "cpu");
    if (!strcmp(g_backend, "cuda")) {
#ifdef DP_WITH_CUDA
        g_exec = dp_exec_cuda;
        g_calib = dp_calibrate_cuda;
#else
        fprintf(stderr, "exec_bench: built without CUDA: build it with nvcc (./build.sh does when it finds nvcc)\n");
        return 1;
#endif
    } else if (strcmp(g_backend, "cpu")) {
        fprintf(stderr, "exec_bench: unknown backend '%s' (cpu, cuda)\n", g_backend);
        return 2;
    }
    if (!strcmp(argv[1], "gpu")) {
#ifdef DP_WITH_CUDA
        return gpu(argc, argv, atoi(opt(argc, argv, "--gpus", "0")));
#else
        fprintf(stderr, "exec_bench: built without CUDA: build it with nvcc (./build.sh does when it finds nvcc)\n");
        return 1;
#endif
    }
    if (!strcmp(argv[1], "overhead")) return overhead(atoi(opt(argc, argv, "--ops", "2000")));
    if (!strcmp(argv[1], "workloads")) return workloads(atoi(opt(argc, argv, "--devices", "2")));
    if (!strcmp(argv[1], "realtrain"))
        return realtrain(argv[2], atoi(opt(argc, argv, "--devices", "2")), atoi(opt(argc, argv, "--il", "300")),
                         atoi(opt(argc, argv, "--sim", "1000")), atoi(opt(argc, argv, "--real", "200")));
    if (!strcmp(argv[1], "simreal")) return simreal(argc, argv, atoi(opt(argc, argv, "--devices", "2")), atoi(opt(argc, argv, "--reps", "3")));
    fprintf(stderr, "exec_bench: unknown mode '%s'\n", argv[1]);
    return 2;
}
