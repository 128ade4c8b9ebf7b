/* exec_bench.c - the executors' figures behind bench/RESULTS.md.

       build/exec_bench overhead [--ops N] [--backend cpu|cuda] [--dispatch dynamic|static|graph]
       build/exec_bench kernels [--sizes N,N...] [--reps R] [--backend cpu|cuda] [--dispatch ...]
       build/exec_bench simreal GRAPH... [--devices N] [--reps R] [--backend cpu|cuda] [--dispatch dynamic|static|graph]
       build/exec_bench realtrain GRAPH [--devices N] [--il E] [--sim E] [--real E]
       build/exec_bench workloads [--devices N] [--rounds R] [--reps K] [--cal-sweeps N] [--cal-seconds S] [--backend cpu|cuda]
       build/exec_bench gpu [GRAPH...] [--gpus G] [--precision P] [--no-link-pacing]  (each placement under every dispatch)
       build/exec_bench matmul --backend cuda [--precision P[,P...]] [--sizes N[,N...]] [--reps R] [--mm-kernel K[,K...]]
       build/exec_bench rows --backend cuda [--sizes N[,N...]] [--reps R] [--rows-kernel K[,K...]]

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
   workloads: the shipped real-op graphs (graphs/KIND_256_p2.dpg) and chainmm,
             ffnn, llama-block and llama-layer at dim 512 with P = 2 and 4,
             under cp, heft and random placements: the executor's wall time
             against the simulator on a cluster from dp_calibrate_cpu, in R
             rounds (each a calibration, then every run; medians over the
             rounds), and the op-time model's error alone (the simulator
             replaying each op's thread CPU time); also the share of CPU
             time the hypervisor stole meanwhile (a virtual machine's).
   realtrain: trains DOPPLER (il and sim on the simulator, real with the
             executor's wall time as the cost), then the wall time of its
             placement and of cp, heft and enumopt's (3 interleaved rounds
             of 7 runs each, the median of the rounds' medians). An
             opaque graph runs scaled to 20 ms on one device on a cluster
             for the graph; a real-op workload runs for real on a cluster
             from dp_calibrate_cpu.
   gpu:      the CUDA executor on real-op workloads (the given graphs, else
             the four in graphs/): calibrates the GPUs for 1, 2 and 4
             logical devices (dp_calibrate_cuda), then for each graph the
             median wall time (5 runs) of single, round-robin, cp and heft
             placements, with the calibrated simulator's prediction, the
             GPUs used and how many logical devices shared each, and how
             (partitions: green contexts of their own SMs; shared: the
             fallback). Copies between logical devices of one GPU are paced
             to the calibrated link time; --no-link-pacing: not.
             --precision fp32, tf32 or bf16: the matmuls' (default: the
             executor's, tf32 where the GPU and the build have it).
   matmul:   the matmul kernel alone on GPU 0 (dp_cuda_matmul_time): N x N
             times N x N for each size (default 1024,4096) and precision
             (default fp32,tf32,bf16), 3 launches of warm-up, then R (default
             20) launches each timed with CUDA events around the kernel; the
             median's TFLOP/s (2 N^3 / seconds). --mm-kernel: the
             tensor-core kernels to time (0 the executor's default, 1
             dp__k_mma, 2 dp__k_mma2; default 0), for their A/B (the loser
             is to be deleted after it, and this option with it).
   rows:     softmax, rmsnorm and layernorm alone on GPU 0
             (dp__cuda_rows_time_kernel) on N x N floats for each size
             (default 2048,4096,8192), each row kernel of --rows-kernel
             (0 the executor's default, 1 a warp per row, 2 a block per
             long row; default 1,2), the median of R (default 20)
             launches: GB/s of bytes read and written (8 N^2 / seconds),
             and that against a device-to-device copy of the tensor,
             counted the same way; whether the kernels' outputs agree bit
             for bit. For their A/B (the loser is to be deleted after it,
             and this mode with it). */
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int die(const dp_error *e) { fprintf(stderr, "exec_bench: %s\n", e->msg); return 1; }

/* The executor and calibration of --backend (cpu by default). */
typedef int (*exec_fn)(const dp_graph *, const dp_cluster *, const int *, const dp_exec_opts *, dp_exec_result *, dp_error *);
typedef int (*calib_fn)(dp_cluster *, const dp_calibrate_opts *, dp_error *);
static exec_fn g_exec = dp_exec_cpu;
static calib_fn g_calib = dp_calibrate_cpu;
static const char *g_backend = "cpu";
static dp_dispatch_mode g_dispatch = DP_DISPATCH_DYNAMIC;   /* --dispatch; the gpu mode runs both */
static dp_precision g_prec = DP_PREC_DEFAULT;                /* --precision of the gpu mode */

/* "fp32", "tf32", "bf16", "default": the dp_precision, -1 otherwise */
static int parse_prec(const char *s, size_t len)
{
    for (int p = 0; p < DP_PREC__COUNT; p++)
        if (strlen(dp_precision_name(p)) == len && !strncmp(s, dp_precision_name(p), len)) return p;
    return -1;
}

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 2; i < argc - 1; i++) if (!strcmp(argv[i], name)) return argv[i + 1];
    return def;
}

/* "0.42 0.51 0.60" from /proc/loadavg, or "?" */
static const char *loadavg(void)
{
    static char buf[64];
    FILE *f = fopen("/proc/loadavg", "r");
    double a = -1, b = -1, c = -1;
    if (f) { if (fscanf(f, "%lf %lf %lf", &a, &b, &c) != 3) a = -1; fclose(f); }
    if (a < 0) return "?";
    snprintf(buf, sizeof buf, "%.2f %.2f %.2f", a, b, c);
    return buf;
}

/* The CPU time the hypervisor gave other guests (steal) since `since`,
   as a share of all CPU time, from /proc/stat; since[0..1] are updated
   (call once with since zeroed to start). -1 where /proc/stat is absent.
   A virtual machine's idle vCPU woken for a hand-off can wait for the
   host: that wait shows up here and in the executor's wall time, not in
   any calibration. */
static double steal_share(double since[2])
{
    unsigned long long v[8] = {0};
    double total = 0, share;
    FILE *f = fopen("/proc/stat", "r");
    int k;
    if (!f) return -1;
    k = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (k != 8) return -1;
    for (k = 0; k < 8; k++) total += (double)v[k];
    share = total > since[1] ? ((double)v[7] - since[0]) / (total - since[1]) : 0;
    since[0] = (double)v[7]; since[1] = total;
    return share;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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
        o.dispatch = g_dispatch;
        if (g_exec(&g, &c, a, &o, &r, &e)) return die(&e);
        printf("| %s (%s%s) | %d | %.3f | %.2f |\n", names[kind], g_backend, g_dispatch == DP_DISPATCH_STATIC ? ", static" : g_dispatch == DP_DISPATCH_GRAPH ? ", graph" : "", n, r.wall_median * 1e3, r.wall_median / n * 1e6);
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
            memset(&o, 0, sizeof o); o.reps = reps; o.dispatch = g_dispatch;
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

/* Stage III cost: the executor's wall time for the placement, in the
   graph's time units like the simulator's makespans (opaque ops ran
   seconds_per_unit per unit; a calibrated cluster's unit is the second),
   so that the per-step baseline can compare it with the partial
   schedule. unit: the seconds a graph unit took (spu for an opaque
   graph, 1 for a workload). */
typedef struct { double spu, unit; long runs; } real_ctx;

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
    *cost = r.wall_median / rc->unit;
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
   the placements of doppler, cp, heft and enumopt on the executor; each
   column: measured wall ms (the simulator's prediction in brackets). */
static int realtrain(const char *path, int devices, int il, int sim, int real)
{
    dp_graph g; dp_cluster c; dp_error e = {0}; dp_policy p; dp_policy_opts po; dp_train_opts to;
    dp_train_result tr; dp_infer_opts io; real_ctx rc;
    memset(&po, 0, sizeof po); memset(&to, 0, sizeof to); memset(&io, 0, sizeof io);
    if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &e)) return die(&e);
    int real_ops = 0;
    for (int v = 0; v < g.n_ops; v++) real_ops += g.kind[v] != DP_OP_OPAQUE;
    if (real_ops) {   /* a workload: its ops run for real, on a calibrated cluster */
        dp_calibrate_opts co;
        memset(&co, 0, sizeof co); co.devices = devices;
        if (dp_calibrate_cpu(&c, &co, &e)) return die(&e);
    } else if (dp_cluster_for_graph(&c, &g, devices, &e)) return die(&e);
    if (dp_policy_init(&p, &po, &e)) return die(&e);
    double work = 0;
    for (int v = 0; v < g.n_ops; v++) work += dp_op_time(&g, &c, v, dp_fastest_device(&g, &c, v));
    rc.spu = 0.02 / work; rc.runs = 0;   /* one device: 20 ms a run */
    rc.unit = real_ops ? 1 : rc.spu;
    const dp_graph *gs[1] = { &g };
    to.episodes[DP_STAGE_IL] = il; to.episodes[DP_STAGE_SIM] = sim; to.episodes[DP_STAGE_REAL] = real;
    to.cost = real_cost; to.cost_ctx = &rc; to.seed = 1;
    to.step_baseline = 1;   /* the cost is in the graph's units */
    if (dp_train(&p, gs, 1, &c, &to, &tr, &e)) return die(&e);
    /* The four placements, then their wall times in 3 interleaved rounds
       (each the median of 7 runs): the reported figure is the median of
       the rounds, so a burst of load on the machine does not fall on one
       placement only. */
    int *a[4];
    double ps[4], w[4][3], med[4];
    const dp_method m[3] = { DP_METHOD_CP, DP_METHOD_HEFT, DP_METHOD_ENUMOPT };
    for (int k = 0; k < 4; k++) a[k] = malloc(sizeof(int) * g.n_ops);
    if (dp_policy_place(&p, &g, &c, &io, a[0], NULL, &ps[0], &e)) return die(&e);
    for (int k = 1; k < 4; k++) {
        dp_place_result pr;
        if (dp_place(m[k - 1], &g, &c, NULL, a[k], &pr, &e)) return die(&e);
        ps[k] = pr.makespan;
    }
    for (int k = 0; k < 4; k++) ps[k] *= rc.unit;   /* model units -> the executor's seconds */
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 4; k++) w[k][r] = wall(&g, &c, a[k], rc.spu);
    for (int k = 0; k < 4; k++) med[k] = median_of(w[k], 3);
    const char *b = strrchr(path, '/');
    printf("| %s | %d | %d + %d + %d (%.1f s) | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) |\n", b ? b + 1 : path, devices, il, sim, real,
           tr.seconds, med[0] * 1e3, ps[0] * 1e3, med[1] * 1e3, ps[1] * 1e3, med[2] * 1e3, ps[2] * 1e3, med[3] * 1e3, ps[3] * 1e3);
    for (int k = 0; k < 4; k++) free(a[k]);
    dp_policy_free(&p); dp_cluster_free(&c); dp_graph_free(&g);
    return 0;
}

/* Real-op workloads against the calibrated simulator. The machine is
   calibrated once per round, just before that round's runs; placements are
   made once, on the first round's cluster. Per (graph, placement): the
   median over rounds of the prediction and of the measured wall time (each
   the median of `reps` runs), their relative error, and the range of the
   rounds' own errors; and the simulator replaying the run with every op
   taking its thread CPU time: its error against the prediction is the
   op-time model's alone, free of the time other processes took from the
   executor's threads on a shared machine. */
#define WL_MAX 64
typedef struct { const char *label; dp_graph g; } wl_graph;

/* The simulator's makespan for assignment a when every op takes the time
   it took in an executor run (end - start, or its thread CPU time when cpu
   is given), transfers as the cluster says: what the prediction would be
   with a perfect model of each op's time. */
static double replay(const dp_graph *g, const dp_cluster *c, const int *a, const double *start, const double *end, const double *cpu)
{
    dp_graph h;
    dp_error e = {0};
    double ms = -1, *t = malloc(sizeof(double) * (size_t)c->n);
    dp_graph_init(&h);
    h.unit_speed = g->unit_speed; h.unit_bandwidth = g->unit_bandwidth;
    for (int v = 0; v < g->n_ops; v++) {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        for (int k = 0; k < c->n; k++) t[k] = cpu ? cpu[v] : end[v] - start[v];
        d.name = g->name[v]; d.kind = g->kind[v]; d.compute = g->compute[v]; d.out_bytes = g->out_bytes[v];
        d.rows = g->rows[v]; d.cols = g->cols[v]; d.arg = g->arg[v]; d.dev_time = t; d.n_dev_time = c->n;
        if (dp_graph_add_op(&h, &d, NULL, &e)) goto out;
    }
    for (int k = 0; k < g->n_edges; k++) if (dp_graph_add_edge(&h, g->src[k], g->dst[k], g->bytes[k], &e)) goto out;
    if (dp_graph_finalize(&h, &e) || dp_simulate(&h, c, a, NULL, &ms, &e)) ms = -1;
out:
    if (ms < 0) die(&e);
    dp_graph_free(&h);
    free(t);
    return ms;
}

/* cal: the calibration's sweeps and seconds (0: the defaults) */
/* workloads' graphs: the four checked-in real-op graphs, then each
   workload at dim 512 in 2 and 4 parts; *ng of them (-1 after a failure,
   reported). */
static void wl_graphs(wl_graph *gs, int *ng)
{
    static const char *files[4] = { "graphs/chainmm_256_p2.dpg", "graphs/ffnn_256_p2.dpg", "graphs/llama_block_256_p2.dpg", "graphs/llama_layer_256_p2.dpg" };
    static const char *kname[4] = { "chainmm", "ffnn", "llama-block", "llama-layer" };
    static char labels[WL_MAX][96];
    dp_error e = {0};
    int i;
    *ng = 0;
    for (i = 0; i < 4; i++) {
        if (dp_graph_read(&gs[*ng].g, files[i], DP_FORMAT_AUTO, &e)) { die(&e); *ng = -1; return; }
        gs[(*ng)++].label = files[i];
    }
    for (i = 0; i < 4; i++)
        for (int P = 2; P <= 4; P += 2) {
            dp_workload_opts wo;
            memset(&wo, 0, sizeof wo);
            wo.kind = (dp_workload)i; wo.parts = P; wo.dim = 512; wo.batch = 256; wo.layers = 2;
            if (dp_gen_workload(&gs[*ng].g, &wo, &e)) { die(&e); *ng = -1; return; }
            snprintf(labels[*ng], sizeof labels[*ng], "%s dim 512 P %d%s", kname[i], P,
                     i == 0 ? "" : i == 3 ? " (batch 256, 2 blocks)" : " (batch 256)");
            gs[*ng].label = labels[*ng];
            (*ng)++;
        }
}

static int workloads(int devices, int rounds, int reps, const dp_calibrate_opts *cal)
{
    dp_method ms[3] = { DP_METHOD_CP, DP_METHOD_HEFT, DP_METHOD_RANDOM };
    wl_graph gs[WL_MAX];
    int ng = 0, nc, r, i, k;
    dp_error e = {0};
    wl_graphs(gs, &ng);
    if (ng < 0) return 1;
    nc = ng * 3;
    int **as = calloc((size_t)nc, sizeof(int *));
    double *pred = calloc((size_t)nc * rounds, sizeof(double)), *meas = calloc((size_t)nc * rounds, sizeof(double));
    double *rep_ = calloc((size_t)nc * rounds, sizeof(double)), *repc = calloc((size_t)nc * rounds, sizeof(double)), *tmp = calloc((size_t)(nc > rounds ? nc : rounds) * rounds, sizeof(double));
    /* the prediction with the machine's speed re-measured just before the
       run (dp_calibrate_cpu_speed; CPU only), and that speed factor */
    double *pref = calloc((size_t)nc * rounds, sizeof(double)), fmin = 1e300, fmax = 0;
    int refresh = g_calib == dp_calibrate_cpu;
    double t_start = dp_now(), steal0[2] = {0, 0};
    steal_share(steal0);
    printf("%d rounds (a calibration, then every run once), each run the median of %d executions; load average at the start %s\n\n",
           rounds, reps, loadavg());
    printf("| round | matmul FLOP/s (side 128 / 512) | relu FLOP/s (side 512) | per-op overhead (us) | hand-off latency (us) | bandwidth (GB/s) | load average after |\n|---:|---:|---:|---:|---:|---:|---|\n");
    for (r = 0; r < rounds; r++) {
        dp_cluster c;
        dp_calibrate_opts co = *cal;
        co.devices = devices;
        if (g_calib(&c, &co, &e)) return die(&e);
        for (i = 0; i < ng; i++)
            for (k = 0; k < 3; k++) {
                int ci = i * 3 + k;
                dp_graph *g = &gs[i].g;
                dp_exec_result res;
                dp_exec_opts o;
                if (r == 0) {
                    dp_place_result pr;
                    dp_place_opts po;
                    memset(&po, 0, sizeof po); po.seed = 1;
                    as[ci] = malloc(sizeof(int) * (size_t)g->n_ops);
                    if (dp_place(ms[k], g, &c, &po, as[ci], &pr, &e)) return die(&e);
                }
                if (dp_simulate(g, &c, as[ci], NULL, &pred[ci * rounds + r], &e)) return die(&e);
                if (refresh) {
                    /* c scaled by the factor for this prediction, then back
                       (to within rounding) */
                    double f = 1;
                    if (dp_calibrate_cpu_speed(&c, NULL, &f, &e) || dp_cluster_scale_speed(&c, -1, f, &e) ||
                        dp_simulate(g, &c, as[ci], NULL, &pref[ci * rounds + r], &e) || dp_cluster_scale_speed(&c, -1, 1 / f, &e))
                        return die(&e);
                    if (f < fmin) fmin = f;
                    if (f > fmax) fmax = f;
                }
                memset(&o, 0, sizeof o); o.reps = reps;
                if (g_exec(g, &c, as[ci], &o, &res, &e)) return die(&e);
                meas[ci * rounds + r] = res.wall_median;
                rep_[ci * rounds + r] = replay(g, &c, as[ci], res.start, res.end, NULL);
                dp_exec_result_free(&res);
                /* once more with each op's CPU time (its clock reads cost
                   time, so this run's wall time is not the one reported) */
                o.reps = 1; o.cpu_times = 1;
                if (g_exec(g, &c, as[ci], &o, &res, &e)) return die(&e);
                repc[ci * rounds + r] = replay(g, &c, as[ci], res.start, res.end, res.cpu);
                dp_exec_result_free(&res);
            }
        const dp_speed_point *mm = c.curve + (size_t)DP_OP_MATMUL * DP_MAX_CURVE, *rl = c.curve + (size_t)DP_OP_RELU * DP_MAX_CURVE;
        int nmm = c.curve_len[DP_OP_MATMUL], nrl = c.curve_len[DP_OP_RELU];
        printf("| %d | %.3g / %.3g | %.3g | %.2f | %.1f | %.2f | %s |\n", r + 1, nmm > 3 ? mm[3].speed : 0.0, nmm ? mm[nmm - 1].speed : 0.0,
               nrl ? rl[nrl - 1].speed : 0.0, 1e6 * c.overhead[0], devices > 1 ? 1e6 * c.latency[1] : 0.0, devices > 1 ? 1e-9 * c.bandwidth[1] : 0.0, loadavg());
        dp_cluster_free(&c);
    }
    printf("\n| workload | ops | placement | predicted (s) | measured (s) | error | rounds' errors | ops' CPU times replayed (s) | error |\n|---|---:|---|---:|---:|---:|---|---:|---:|\n");
    double *errs = calloc((size_t)nc, sizeof(double)), *rerrs = calloc((size_t)nc * rounds, sizeof(double));
    double *cerr = calloc((size_t)nc, sizeof(double)), *werr = calloc((size_t)nc, sizeof(double)), *ferr = calloc((size_t)nc, sizeof(double));
    int nre = 0;
    for (i = 0; i < ng; i++)
        for (k = 0; k < 3; k++) {
            int ci = i * 3 + k;
            double lo = 1e300, hi = -1e300, pm, mm_, rw, rc_;
            for (r = 0; r < rounds; r++) {
                double er = meas[ci * rounds + r] / pred[ci * rounds + r] - 1;
                if (er < lo) lo = er;
                if (er > hi) hi = er;
                rerrs[nre++] = er < 0 ? -er : er;
            }
            memcpy(tmp, pred + ci * rounds, sizeof(double) * rounds); pm = median_of(tmp, rounds);
            memcpy(tmp, meas + ci * rounds, sizeof(double) * rounds); mm_ = median_of(tmp, rounds);
            memcpy(tmp, rep_ + ci * rounds, sizeof(double) * rounds); rw = median_of(tmp, rounds);
            memcpy(tmp, repc + ci * rounds, sizeof(double) * rounds); rc_ = median_of(tmp, rounds);
            if (refresh) {
                memcpy(tmp, pref + ci * rounds, sizeof(double) * rounds);
                ferr[ci] = fabs(mm_ / median_of(tmp, rounds) - 1);
            }
            errs[ci] = mm_ / pm - 1; cerr[ci] = rc_ / pm - 1; werr[ci] = mm_ / rw - 1;
            printf("| %s | %d | %s | %.4f | %.4f | %+.1f%% | %+.0f%% .. %+.0f%% | %.4f | %+.1f%% |\n", gs[i].label, gs[i].g.n_ops,
                   dp_method_name(ms[k]), pm, mm_, 100 * errs[ci], 100 * lo, 100 * hi, rc_, 100 * cerr[ci]);
            errs[ci] = errs[ci] < 0 ? -errs[ci] : errs[ci];
            cerr[ci] = cerr[ci] < 0 ? -cerr[ci] : cerr[ci];
        }
    double med = median_of(memcpy(tmp, errs, sizeof(double) * nc), nc), worst = tmp[nc - 1];
    double rmed = median_of(rerrs, nre), rworst = rerrs[nre - 1];
    double cmed = median_of(memcpy(tmp, cerr, sizeof(double) * nc), nc), cworst = tmp[nc - 1], wmed = median_of(werr, nc);
    printf("\nrelative error of the medians over %d runs: median %.1f%%, worst %.1f%% (target: median <= 10%%)\n", nc, 100 * med, 100 * worst);
    printf("each round against its own calibration (%d pairs): median %.1f%%, worst %.1f%%\n", nre, 100 * rmed, 100 * rworst);
    printf("the simulator replaying each op's thread CPU time against the prediction (the op-time model's error alone): median %.1f%%, worst %.1f%%\n", 100 * cmed, 100 * cworst);
    printf("measured wall time against the simulator replaying each op's wall time (waits the model does not see): median %+.1f%%\n", 100 * wmed);
    if (refresh) {
        double fmed = median_of(memcpy(tmp, ferr, sizeof(double) * nc), nc);
        printf("with the speed re-measured before each run (dp_calibrate_cpu_speed, factor %.2f..%.2f): median %.1f%%, worst %.1f%%\n",
               fmin, fmax, 100 * fmed, 100 * tmp[nc - 1]);
    }
    {
        double st = steal_share(steal0);
        printf("%.0f s in all; load average at the end %s; CPU time stolen by the hypervisor meanwhile: ", dp_now() - t_start, loadavg());
        if (st < 0) printf("unknown (no /proc/stat)\n"); else printf("%.1f%%\n", 100 * st);
    }
    for (i = 0; i < nc; i++) free(as[i]);
    for (i = 0; i < ng; i++) dp_graph_free(&gs[i].g);
    free(as); free(pred); free(meas); free(rep_); free(repc); free(tmp); free(errs); free(rerrs); free(cerr); free(werr); free(ferr); free(pref);
    return 0;
}

#ifdef DP_WITH_CUDA
/* The CUDA executor on real-op workloads for 1, 2 and 4 logical devices. */
static int cmp_start(const void *a, const void *b)
{
    const double *p = (const double *)a, *q = (const double *)b;
    return (p[0] > q[0]) - (p[0] < q[0]);
}

/* The fraction of the run's wall time during which GPU p ran an op of a
   logical device on it (the union of their [start, end]), the mean over
   the G GPUs used. */
static double gpu_busy(const dp_exec_result *r, const int *a, int n, int G)
{
    double *iv = malloc(sizeof(double) * 2 * (size_t)(n + 1)), sum = 0;
    for (int p = 0; p < G; p++) {
        int k = 0;
        double u = 0, s = -1, e = -1;
        for (int v = 0; v < n; v++)
            if (a[v] % G == p) { iv[2 * k] = r->start[v]; iv[2 * k + 1] = r->end[v]; k++; }
        qsort(iv, (size_t)k, 2 * sizeof(double), cmp_start);
        for (int i = 0; i < k; i++) {
            if (iv[2 * i] > e) { if (e > s) u += e - s; s = iv[2 * i]; e = iv[2 * i + 1]; }
            else if (iv[2 * i + 1] > e) e = iv[2 * i + 1];
        }
        if (e > s) u += e - s;
        sum += r->wall_median > 0 ? u / r->wall_median : 0;
    }
    free(iv);
    return sum / G;
}

static int gpu(int argc, char **argv, int gpus)
{
    static const char *defaults[] = {"graphs/chainmm_256_p2.dpg", "graphs/ffnn_256_p2.dpg", "graphs/llama_block_256_p2.dpg", "graphs/llama_layer_256_p2.dpg"};
    const char *paths[64];
    int np = 0, ngpu = 0;
    dp_error e = {0};
    char name[256];
    int pacing = 0;   /* --no-link-pacing: copies within a GPU at its own speed */
    for (int i = 2; i < argc && np < 64; i++) {
        if (!strcmp(argv[i], "--no-link-pacing")) { pacing = -1; continue; }
        if (argv[i][0] == '-') { i++; continue; }
        paths[np++] = argv[i];
    }
    if (!np) for (int i = 0; i < 4; i++) paths[np++] = defaults[i];
    if (dp_cuda_device_count(&ngpu, &e) || ngpu == 0) { fprintf(stderr, "exec_bench: no CUDA device: %s\n", e.msg); return 1; }
    if (gpus <= 0 || gpus > ngpu) gpus = ngpu;
    if (dp_cuda_device_name(0, name, sizeof name, &e)) return die(&e);
    printf("%d GPU%s used (GPU 0: %s)\n\n", gpus, gpus == 1 ? "" : "s", name);
    printf("| graph | ops | logical devices | GPUs (devices per GPU) | placement | predicted (ms, dynamic calibration) | dynamic: measured median (ms) | error | GPU busy | static: measured median (ms) | error (static calibration) | GPU busy | graph: measured median (ms) | error (graph calibration) | GPU busy | outputs vs CPU (same precision) |\n");
    printf("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int nd = 1; nd <= 4; nd *= 2) {
        dp_cluster c, cs, cg;   /* calibrated under dynamic, static, graph dispatch */
        dp_calibrate_opts co;
        memset(&co, 0, sizeof co);
        co.devices = nd;
        co.seconds = 0.2;
        co.precision = g_prec;
        if (dp_calibrate_cuda(&c, &co, &e)) return die(&e);
        co.dispatch = DP_DISPATCH_STATIC;
        if (dp_calibrate_cuda(&cs, &co, &e)) return die(&e);
        co.dispatch = DP_DISPATCH_GRAPH;
        if (dp_calibrate_cuda(&cg, &co, &e)) return die(&e);
        int G = gpus < nd ? gpus : nd;
        for (int p = 0; p < np; p++) {
            dp_graph g;
            if (dp_graph_read(&g, paths[p], DP_FORMAT_AUTO, &e)) return die(&e);
            int *a = malloc(sizeof(int) * (size_t)g.n_ops), *one = calloc((size_t)g.n_ops, sizeof(int));
            dp_exec_opts o;
            dp_exec_result ref;
            int have_ref = 0;
            memset(&o, 0, sizeof o);
            memset(&ref, 0, sizeof ref);
            o.keep_outputs = 1;
            o.precision = g_prec;
            dp_method ms[4] = { DP_METHOD_SINGLE, DP_METHOD_ROUND_ROBIN, DP_METHOD_CP, DP_METHOD_HEFT };
            for (int k = 0; k < (nd == 1 ? 1 : 4); k++) {
                dp_place_result pr; dp_place_opts po; dp_exec_result r, rs, rg;
                double err = -1, err2 = -1, err3 = -1;
                memset(&po, 0, sizeof po); po.seed = 1;
                o.reps = 5; o.gpus = gpus; o.dispatch = DP_DISPATCH_DYNAMIC; o.link_pacing = pacing;
                if (dp_place(ms[k], &g, &c, &po, a, &pr, &e) || dp_exec_cuda(&g, &c, a, &o, &r, &e)) return die(&e);
                if (!have_ref) {
                    /* the CPU reference in the precision the GPU's matmuls
                       ran in (TF32 and BF16 inputs rounded alike): the
                       outputs then differ by the order of FP32 sums and
                       the roundings that follows from it (dp_exec_tolerance) */
                    dp_exec_opts ro;
                    memset(&ro, 0, sizeof ro);
                    ro.keep_outputs = 1; ro.precision = (dp_precision)r.precision;
                    if (dp_exec_cpu(&g, &c, one, &ro, &ref, &e)) return die(&e);
                    have_ref = 1;
                }
                /* the same placement; each dispatch against the simulator
                   calibrated under it */
                double ps = 0, pg = 0;
                o.dispatch = DP_DISPATCH_STATIC;
                if (dp_exec_cuda(&g, &cs, a, &o, &rs, &e) || dp_simulate(&g, &cs, a, NULL, &ps, &e)) return die(&e);
                o.dispatch = DP_DISPATCH_GRAPH;
                if (dp_exec_cuda(&g, &cg, a, &o, &rg, &e) || dp_simulate(&g, &cg, a, NULL, &pg, &e)) return die(&e);
                dp_exec_compare(&g, &r, &ref, &err, NULL, &e);
                dp_exec_compare(&g, &rs, &ref, &err2, NULL, &e);
                dp_exec_compare(&g, &rg, &ref, &err3, NULL, &e);
                if (err2 > err) err = err2;
                if (err3 > err) err = err3;
                const char *b = strrchr(paths[p], '/');
                char share[64];
                const char *how = r.sharing == DP_SHARING_PARTITIONS ? ", partitions" : r.sharing == DP_SHARING_SHARED ? ", shared" : "";
                if (nd % G == 0) snprintf(share, sizeof share, "%d (%d each%s)", G, nd / G, how);
                else snprintf(share, sizeof share, "%d (%d or %d%s)", G, nd / G + 1, nd / G, how);
                printf("| %s | %d | %d | %s | %s | %.3f | %.3f | %+.1f%% | %.0f%% | %.3f | %+.1f%% | %.0f%% | %.3f | %+.1f%% | %.0f%% | %.2g |\n", b ? b + 1 : paths[p], g.n_ops, nd, share,
                       dp_method_name(ms[k]), pr.makespan * 1e3, r.wall_median * 1e3, 100 * (r.wall_median - pr.makespan) / pr.makespan,
                       100 * gpu_busy(&r, a, g.n_ops, G), rs.wall_median * 1e3, 100 * (rs.wall_median - ps) / ps,
                       100 * gpu_busy(&rs, a, g.n_ops, G), rg.wall_median * 1e3, 100 * (rg.wall_median - pg) / pg,
                       100 * gpu_busy(&rg, a, g.n_ops, G), err);
                dp_exec_result_free(&r);
                dp_exec_result_free(&rs);
                dp_exec_result_free(&rg);
            }
            dp_exec_result_free(&ref);
            free(a); free(one);
            dp_graph_free(&g);
        }
        dp_cluster_free(&c); dp_cluster_free(&cs); dp_cluster_free(&cg);
    }
    return 0;
}

/* The item after the one at p in a comma-separated list (the list's end
   after its last item). */
static const char *next_item(const char *p)
{
    p += strcspn(p, ",");
    return p + (*p == ',');
}

/* The matmul kernel alone, per size and precision (see the top). */
static int matmul(int argc, char **argv)
{
    const char *sizes = opt(argc, argv, "--sizes", "1024,4096"), *precs = opt(argc, argv, "--precision", "fp32,tf32,bf16");
    const char *kernels = opt(argc, argv, "--mm-kernel", "0");
    int reps = atoi(opt(argc, argv, "--reps", "20"));
    dp_error e = {0};
    char name[256];
    if (dp_cuda_device_name(0, name, sizeof name, &e)) return die(&e);
    printf("GPU 0: %s; the matmul kernel alone, median of %d launches after 3 of warm-up, CUDA events\n\n", name, reps);
    printf("| N (N x N x N) | precision asked | precision run | kernel | median (ms) | TFLOP/s |\n|---:|---|---|---|---:|---:|\n");
    for (const char *sz = sizes; *sz;) {
        int n = atoi(sz);
        for (const char *pp = precs; *pp;) {
            size_t len = strcspn(pp, ",");
            int p = parse_prec(pp, len), used = 0;
            double t = 0;
            if (p < 0 || n < 1) { fprintf(stderr, "exec_bench: --precision is fp32, tf32, bf16 or default; --sizes positive integers\n"); return 2; }
            for (const char *kp = kernels; *kp;) {
                int k = atoi(kp);
                if (k < 0 || k > 2) { fprintf(stderr, "exec_bench: --mm-kernel is 0 (the default), 1 or 2\n"); return 2; }
                if (dp__cuda_matmul_time_kernel(0, p, k, n, n, n, reps, &t, &used, &e)) return die(&e);
                printf("| %d | %s | %s | %s | %.4f | %.1f |\n", n, dp_precision_name(p), dp_precision_name(used),
                       used == DP_PREC_FP32 ? "fp32" : k == 1 ? "mma (1)" : k == 2 ? "mma2 (2)" : "default", t * 1e3, 2.0 * n * n * (double)n / t / 1e12);
                fflush(stdout);
                if (used == DP_PREC_FP32) break;   /* one FP32 kernel */
                kp = next_item(kp);
            }
            pp = next_item(pp);
        }
        sz = next_item(sz);
    }
    return 0;
}

/* The row kernels alone, per size, kind and kernel (see the top). */
static int rows(int argc, char **argv)
{
    const char *sizes = opt(argc, argv, "--sizes", "2048,4096,8192"), *kernels = opt(argc, argv, "--rows-kernel", "1,2");
    int reps = atoi(opt(argc, argv, "--reps", "20"));
    static const dp_kind kinds[] = {DP_OP_SOFTMAX, DP_OP_RMSNORM, DP_OP_LAYERNORM};
    dp_error e = {0};
    char name[256];
    if (dp_cuda_device_name(0, name, sizeof name, &e)) return die(&e);
    printf("GPU 0: %s; each row kernel alone, median of %d launches after 3 of warm-up, CUDA events; GB/s of bytes read + written\n\n", name, reps);
    printf("| N x N | op | row kernel | median (ms) | GB/s | of the copy's | outputs as the first kernel's |\n|---:|---|---|---:|---:|---:|---|\n");
    for (const char *sz = sizes; *sz;) {
        int n = atoi(sz);
        double tc = 0, bytes = 8.0 * n * (double)n;
        if (n < 1) { fprintf(stderr, "exec_bench: --sizes are positive integers\n"); return 2; }
        if (dp__cuda_rows_time_kernel(0, DP_OP_COPY, 0, n, n, reps, &tc, NULL, &e)) return die(&e);
        printf("| %d | copy (device to device) | | %.4f | %.0f | 100%% | |\n", n, tc * 1e3, bytes / tc / 1e9);
        for (int ki = 0; ki < 3; ki++) {
            float *first = (float *)malloc(sizeof(float) * (size_t)n * n), *out = (float *)malloc(sizeof(float) * (size_t)n * n);
            int have = 0;
            if (!first || !out) { free(first); free(out); fprintf(stderr, "exec_bench: out of memory\n"); return 1; }
            for (const char *kp = kernels; *kp;) {
                int k = atoi(kp);
                double t = 0;
                const char *same = "";
                if (k < 0 || k > 2) { free(first); free(out); fprintf(stderr, "exec_bench: --rows-kernel is 0 (the default), 1 or 2\n"); return 2; }
                if (dp__cuda_rows_time_kernel(0, kinds[ki], k, n, n, reps, &t, have ? out : first, &e)) { free(first); free(out); return die(&e); }
                if (have) same = memcmp(first, out, sizeof(float) * (size_t)n * n) ? "NO: they differ" : "yes";
                have = 1;
                printf("| %d | %s | %s | %.4f | %.0f | %.0f%% | %s |\n", n, dp_kind_name(kinds[ki]), k == 1 ? "warp per row (1)" : k == 2 ? "block per long row (2)" : "default",
                       t * 1e3, bytes / t / 1e9, 100 * tc / t, same);
                fflush(stdout);
                kp = next_item(kp);
            }
            free(first); free(out);
        }
        sz = next_item(sz);
    }
    return 0;
}
#endif

/* kernels: every memory-bound kernel on N x N float tensors (each N of
   --sizes), one graph per N: two inputs A and B and, reading them, add,
   mul, scale, relu, gelu, silu, softmax, rmsnorm, layernorm, transpose,
   concat (N x 2N), split (the first N/2 columns) and copy (the executor's
   cudaMemcpyAsync: the device-to-device copy bandwidth the others are
   measured against). Each op's time is its end minus its start in the
   median run (--reps, graph dispatch unless --dispatch says otherwise; one
   logical device, every op in topological order); bandwidth = bytes read
   + bytes written / time. */
static int kernels(const char *sizes, int reps)
{
    static const struct { const char *kind, *args; int nin, wcols2; double rw; } K[] = {
        {"add", "", 2, 0, 3}, {"mul", "", 2, 0, 3}, {"scale", " arg=64", 1, 0, 2}, {"relu", "", 1, 0, 2},
        {"gelu", "", 1, 0, 2}, {"silu", "", 1, 0, 2}, {"softmax", "", 1, 0, 2}, {"rmsnorm", "", 1, 0, 2},
        {"layernorm", "", 1, 0, 2}, {"transpose", "", 1, 0, 2}, {"concat", "", 2, 1, 4}, {"split", "", 1, -1, 1},
        {"copy", "", 1, 0, 2},
    };
    const int nk = (int)(sizeof K / sizeof K[0]);
    char list[256];
    snprintf(list, sizeof list, "%s", sizes);
    printf("| N | tensor (MB) | kernel | us | GB/s (read + write) | of copy's |\n|---:|---:|---|---:|---:|---:|\n");
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int n = atoi(tok);
        size_t cap = 4096 + 256 * (size_t)nk;
        char *txt = malloc(cap), *p = txt;
        if (!txt || n < 2) { fprintf(stderr, "exec_bench: kernels: bad size '%s'\n", tok); free(txt); return 2; }
        double bytes = 4.0 * n * n;
        p += sprintf(p, "doppler-graph 1\nop A kind=input compute=%.17g bytes=%.17g shape=%dx%d\n", (double)n * n, bytes, n, n);
        p += sprintf(p, "op B kind=input compute=%.17g bytes=%.17g shape=%dx%d\n", (double)n * n, bytes, n, n);
        for (int k = 0; k < nk; k++) {
            int c = K[k].wcols2 > 0 ? 2 * n : K[k].wcols2 < 0 ? n / 2 : n;
            p += sprintf(p, "op %s kind=%s compute=%.17g bytes=%.17g shape=%dx%d%s\n", K[k].kind, K[k].kind, (double)n * c, 4.0 * n * c, n, c, K[k].args);
        }
        for (int k = 0; k < nk; k++) {
            p += sprintf(p, "edge A %s\n", K[k].kind);
            if (K[k].nin == 2) p += sprintf(p, "edge B %s\n", K[k].kind);
        }
        p += sprintf(p, "end\n");
        dp_graph g; dp_cluster c; dp_error e = {0}; dp_exec_result r; dp_exec_opts o;
        if (dp_graph_read_mem(&g, txt, (size_t)(p - txt), "kernels", DP_FORMAT_AUTO, &e)) { free(txt); return die(&e); }
        free(txt);
        if (dp_cluster_for_graph(&c, &g, 1, &e)) return die(&e);
        int *a = calloc((size_t)g.n_ops, sizeof(int));
        memset(&o, 0, sizeof o);
        o.reps = reps;
        o.dispatch = g_dispatch;
        if (!a || g_exec(&g, &c, a, &o, &r, &e)) return die(&e);
        double copy_bw = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int v = 0; v < g.n_ops; v++) {
                const char *name = g.name[v];
                double t = r.end[v] - r.start[v], rw;
                int k;
                for (k = 0; k < nk && strcmp(K[k].kind, name); k++) {}
                rw = k < nk ? K[k].rw * bytes : bytes;   /* an input: written only */
                double bw = t > 0 ? rw / t : 0;
                if (pass == 0) { if (k < nk && !strcmp(name, "copy")) copy_bw = bw; continue; }
                printf("| %d | %.0f | %s | %.1f | %.0f | %.0f%% |\n", n, bytes / 1e6, k < nk ? name : "input fill", t * 1e6, bw / 1e9, copy_bw > 0 ? 100 * bw / copy_bw : 0);
            }
        dp_exec_result_free(&r); free(a); dp_cluster_free(&c); dp_graph_free(&g);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: exec_bench overhead [--ops N] | kernels [--sizes N,N] [--reps R] | simreal GRAPH... [--devices N] [--reps R] | realtrain GRAPH | workloads [--devices N] [--rounds R] [--reps K] [--cal-sweeps N] [--cal-seconds S] | gpu [GRAPH...] [--gpus G] [--precision P] [--no-link-pacing] | matmul [--precision P,...] [--sizes N,...] [--reps R] [--mm-kernel K,...] | rows [--sizes N,...] [--reps R] [--rows-kernel K,...]; --backend cpu|cuda\n"); return 2; }
    g_backend = opt(argc, argv, "--backend", "cpu");
    if (!strcmp(opt(argc, argv, "--dispatch", "dynamic"), "static")) g_dispatch = DP_DISPATCH_STATIC;
    else if (!strcmp(opt(argc, argv, "--dispatch", "dynamic"), "graph")) g_dispatch = DP_DISPATCH_GRAPH;
    else if (strcmp(opt(argc, argv, "--dispatch", "dynamic"), "dynamic")) { fprintf(stderr, "exec_bench: --dispatch is dynamic, static or graph\n"); return 2; }
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
    if (!strcmp(argv[1], "matmul")) {
#ifdef DP_WITH_CUDA
        if (strcmp(g_backend, "cuda")) { fprintf(stderr, "exec_bench: matmul times the CUDA kernel: --backend cuda\n"); return 2; }
        return matmul(argc, argv);
#else
        fprintf(stderr, "exec_bench: built without CUDA: build it with nvcc (./build.sh does when it finds nvcc)\n");
        return 1;
#endif
    }
    if (!strcmp(argv[1], "rows")) {
#ifdef DP_WITH_CUDA
        if (strcmp(g_backend, "cuda")) { fprintf(stderr, "exec_bench: rows times the CUDA kernels: --backend cuda\n"); return 2; }
        return rows(argc, argv);
#else
        fprintf(stderr, "exec_bench: built without CUDA: build it with nvcc (./build.sh does when it finds nvcc)\n");
        return 1;
#endif
    }
    if (!strcmp(argv[1], "gpu")) {
        const char *ps = opt(argc, argv, "--precision", "default");
        int p = parse_prec(ps, strlen(ps));
        if (p < 0) { fprintf(stderr, "exec_bench: --precision is fp32, tf32, bf16 or default\n"); return 2; }
        g_prec = (dp_precision)p;
#ifdef DP_WITH_CUDA
        return gpu(argc, argv, atoi(opt(argc, argv, "--gpus", "0")));
#else
        fprintf(stderr, "exec_bench: built without CUDA: build it with nvcc (./build.sh does when it finds nvcc)\n");
        return 1;
#endif
    }
    if (!strcmp(argv[1], "kernels")) return kernels(opt(argc, argv, "--sizes", "2048,4096,8192"), atoi(opt(argc, argv, "--reps", "5")));
    if (!strcmp(argv[1], "overhead")) return overhead(atoi(opt(argc, argv, "--ops", "2000")));
    if (!strcmp(argv[1], "workloads")) {
        dp_calibrate_opts cal;
        memset(&cal, 0, sizeof cal);
        cal.sweeps = atoi(opt(argc, argv, "--cal-sweeps", "0"));
        cal.seconds = atof(opt(argc, argv, "--cal-seconds", "0"));
        return workloads(atoi(opt(argc, argv, "--devices", "2")), atoi(opt(argc, argv, "--rounds", "3")), atoi(opt(argc, argv, "--reps", "3")), &cal);
    }
    if (!strcmp(argv[1], "realtrain"))
        return realtrain(argv[2], atoi(opt(argc, argv, "--devices", "2")), atoi(opt(argc, argv, "--il", "300")),
                         atoi(opt(argc, argv, "--sim", "1000")), atoi(opt(argc, argv, "--real", "200")));
    if (!strcmp(argv[1], "simreal")) return simreal(argc, argv, atoi(opt(argc, argv, "--devices", "2")), atoi(opt(argc, argv, "--reps", "3")));
    fprintf(stderr, "exec_bench: unknown mode '%s'\n", argv[1]);
    return 2;
}
