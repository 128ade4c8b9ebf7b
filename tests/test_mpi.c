/* test_mpi.c - the MPI executor (>>api-mpi), run by tests/test_mpi.sh
   under mpirun with 2 and 3 ranks (any count from 2 works: nothing here
   assumes one). Each rank counts its own checks; rank 0 prints the
   failures of every rank and the closing line of them all.

   Checked, against values that do not come from the executor itself:
   - a distributed run computes what one process does: its digest equals
     dp_exec_cpu's on the same graph (real ops: chainmm, ffnn, llama
     blocks, split across the ranks every way), and rank 0's sinks'
     outputs equal dp_exec_cpu's bit for bit (the same kernels);
   - dependencies hold across ranks (one clock on one machine), and the
     wall time is the latest op's end;
   - an opaque chain across two nodes is paced as the cluster says: op a
     (5 ms) on node 0, then a transfer of 10 time units (50 ms at 5 ms a
     unit: 1 byte at the inter-node bandwidth 0.1 byte per unit), then b
     on node 1 (5 ms): b starts 50 ms after a ends, by hand;
   - bad input on one rank (a different assignment; an assignment another
     rank finds out of range; a rank count the cluster does not have)
     fails every rank with the same message; an op that fails on one rank
     during a run (its device's arena) fails every rank with its message;
     a rank that stops answering (its process stopped mid-run) fails the
     rank waiting for it with DP_ERR_PEER naming it, within twice the
     timeout, while an op longer than the timeout is no failure;
   - stage real's plumbing: rank 0 leads runs of several placements
     through dp_runtime_cost, the others follow until it stops;
   - dp_mpi_agree, dp_mpi_pingpong and dp_calibrate_mpi (one cluster on
     every rank, a machine per rank, its links measured);
   - each rank's devices on its GPUs (built with DP_WITH_CUDA, test_gpu):
     the digest and outputs of dp_exec_cuda, staged or CUDA-aware, and a
     paced edge, where every rank has a GPU; else one clean failure on
     every rank (skipped, saying why, in a build without CUDA). */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

static int rank_, size_;
static volatile int stop_pid;   /* the process stop_later stops, then lets go on */

static void *stop_later(void *arg)
{
    struct timespec a = { 0, 200000000L }, b = { 3, 0 };
    (void)arg;
    nanosleep(&a, NULL);
    kill(stop_pid, SIGSTOP);
    nanosleep(&b, NULL);
    kill(stop_pid, SIGCONT);
    return NULL;
}

/* The same message on every rank: each rank's against rank 0's. */
static void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

static int same_everywhere(const char *msg)
{
    char mine[512], *all = (char *)calloc((size_t)size_, 512);
    int i, same = 1;
    memset(mine, 0, sizeof mine);
    snprintf(mine, sizeof mine, "%s", msg);
    MPI_Allgather(mine, 512, MPI_CHAR, all, 512, MPI_CHAR, MPI_COMM_WORLD);
    for (i = 1; i < size_; i++) if (strcmp(all, all + 512 * (size_t)i)) same = 0;
    free(all);
    return same;
}

/* A cluster of per devices on each of size_ nodes. */
static void nodes_cluster(dp_cluster *c, int per, double bw, double lat, double ibw, double ilat)
{
    dp_error err;
    int rc = dp_cluster_homogeneous(c, per * size_, 1, bw, lat, &err);
    if (!rc) rc = dp_cluster_set_nodes(c, size_, ibw, ilat, &err);
    if (rc) { printf("cluster: %s\n", err.msg); exit(1); }
}

/* Real-op workloads, placed across the ranks three ways: their digest
   and outputs against one process's (mo NULL: the CPU executor's), or,
   with mo (a rank's devices on its GPUs), against dp_exec_cuda's in fp32,
   each placement staged (gpu_direct -1) and then CUDA-aware where MPI is
   (0). */
static void test_workloads(dp_mpi_opts *mo)
{
    static const dp_workload kinds[3] = { DP_WL_CHAINMM, DP_WL_FFNN, DP_WL_LLAMA_BLOCK };
    const char *on = mo ? "gpu " : "";
    int w, p;
    for (w = 0; w < 3; w++) {
        dp_workload_opts wo;
        dp_graph g;
        dp_cluster c;
        dp_error err;
        dp_exec_opts eo;
        dp_exec_result ref, got;
        int *one, *as, v, k, rc;
        memset(&wo, 0, sizeof wo);
        wo.kind = kinds[w]; wo.parts = 2; wo.dim = 32; wo.batch = 16; wo.layers = 2;
        if (dp_gen_workload(&g, &wo, &err)) { CHECK(0, "workload %d: %s", w, err.msg); continue; }
        nodes_cluster(&c, 2, 1e9, 1e-5, 1e8, 1e-4);
        one = (int *)calloc((size_t)g.n_ops, sizeof(int));
        as = (int *)calloc((size_t)g.n_ops, sizeof(int));
        memset(&eo, 0, sizeof eo);
        eo.keep_outputs = 1; eo.reps = 2;
#ifdef DP_WITH_CUDA
        if (mo) eo.precision = DP_PREC_FP32;
        rc = mo ? dp_exec_cuda(&g, &c, one, &eo, &ref, &err) : dp_exec_cpu(&g, &c, one, &eo, &ref, &err);
#else
        rc = dp_exec_cpu(&g, &c, one, &eo, &ref, &err);
#endif
        CHECK(rc == 0, "%s reference: %s", mo ? "cuda" : "cpu", err.msg);
        for (p = 0; p < (mo ? 6 : 3) && !rc; p++) {
            double mx = -1, last = 0;
            int bad_dep = 0, worst = -1;
            if (mo) mo->gpu_direct = p < 3 ? -1 : 0;
            /* round robin over every device; all on the last node's two;
               stages of the topological order, one a node */
            for (v = 0; v < g.n_ops; v++) as[v] = p % 3 == 0 ? v % c.n : c.n - 1 - v % 2;
            for (k = 0; p % 3 == 2 && k < g.n_ops; k++) as[g.topo[k]] = (int)((long long)k * size_ / g.n_ops) * 2;
            eo.mpi = mo;
            rc = dp_exec_mpi(&g, &c, as, &eo, &got, &err);
            eo.mpi = NULL;
            CHECK(rc == 0, "%sworkload %d placement %d: rc %d '%s'", on, w, p, rc, err.msg);
            if (rc) break;
            CHECK(got.digest == ref.digest && (!mo || got.precision == DP_PREC_FP32), "%sworkload %d placement %d: digest %016llx against one process's %016llx, precision %d",
                  on, w, p, (unsigned long long)got.digest, (unsigned long long)ref.digest, got.precision);
            if (rank_ == 0) {
                rc = dp_exec_compare(&g, &got, &ref, &mx, &worst, &err);
                CHECK(rc == 0 && mx == 0, "%sworkload %d placement %d: outputs differ by %g at op %d (%s)", on, w, p, mx, worst, rc ? err.msg : "");
            }
            /* GPU stamps are taken to the host clock: 0.1 ms of slack */
            for (k = 0; k < g.n_edges; k++)
                if (got.start[g.dst[k]] < got.end[g.src[k]] - (mo ? 1e-4 : 1e-6)) bad_dep++;
            CHECK(bad_dep == 0, "%sworkload %d placement %d: %d edges whose consumer started before its producer ended", on, w, p, bad_dep);
            for (v = 0; v < g.n_ops; v++) if (got.end[v] > last) last = got.end[v];
            CHECK(mo || (got.wall_median == last && got.reps == 2), "workload %d placement %d: wall %g, last end %g", w, p, got.wall_median, last);
            dp_exec_result_free(&got);
        }
        if (!rc) dp_exec_result_free(&ref);
        free(one); free(as);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
}

/* a (5 ms) on node 0 -> 1 byte at 0.1 byte/unit (10 units, 50 ms) -> b
   on node 1 (5 ms): b starts at 55 ms and ends at 60 ms. mo: NULL, or a
   rank's devices on its GPUs. */
static void test_paced(const dp_mpi_opts *mo)
{
    dp_graph g;
    dp_cluster c;
    dp_error err;
    dp_exec_opts eo;
    dp_exec_result r;
    dp_op_desc d;
    int as[2], rc;
    dp_graph_init(&g);
    memset(&d, 0, sizeof d);
    d.name = "a"; d.compute = 1; d.out_bytes = 1;
    dp_graph_add_op(&g, &d, NULL, &err);
    d.name = "b";
    dp_graph_add_op(&g, &d, NULL, &err);
    dp_graph_add_edge(&g, 0, 1, 1, &err);
    rc = dp_graph_finalize(&g, &err);
    nodes_cluster(&c, 1, 1, 0, 0.1, 0);
    as[0] = 0; as[1] = 1;
    memset(&eo, 0, sizeof eo);
    eo.seconds_per_unit = 0.005; eo.reps = 3; eo.mpi = mo;
    if (!rc) rc = dp_exec_mpi(&g, &c, as, &eo, &r, &err);
    CHECK(rc == 0, "paced chain%s: %s", mo ? " (gpu)" : "", err.msg);
    if (!rc) {
        /* durations, not times from the start (a loaded machine may
           start a late): a runs 5 ms, the transfer 50 ms, b 5 ms */
        CHECK(r.end[0] - r.start[0] >= 0.005 && r.end[0] - r.start[0] < 0.008, "paced chain: a ran %g s, by hand 0.005", r.end[0] - r.start[0]);
        CHECK(r.start[1] - r.end[0] >= 0.050 && r.start[1] - r.end[0] < 0.060, "paced chain: a's end to b's start %g s, by hand 0.050",
              r.start[1] - r.end[0]);
        CHECK(r.end[1] - r.start[1] >= 0.005 && r.end[1] - r.start[1] < 0.008, "paced chain: b ran %g s, by hand 0.005", r.end[1] - r.start[1]);
        CHECK(r.wall_median >= 0.060 && r.wall_median == r.end[1], "paced chain: wall %g s, b's end %g, by hand at least 0.060", r.wall_median, r.end[1]);
        dp_exec_result_free(&r);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* a chain of n opaque ops round robin over the devices */
static int chain(dp_graph *g, int n, double compute)
{
    dp_error err;
    int v, rc = 0;
    dp_graph_init(g);
    for (v = 0; v < n && !rc; v++) {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        d.compute = compute; d.out_bytes = 64;
        rc = dp_graph_add_op(g, &d, NULL, &err);
        if (!rc && v) rc = dp_graph_add_edge(g, v - 1, v, 64, &err);
    }
    return rc ? rc : dp_graph_finalize(g, &err);
}

/* A chain of n unit ops, one device a machine, and the exec options of
   these tests: 0.1 ms a unit, ranks giving up on each other after
   timeout seconds. */
static void chain_setup(dp_graph *g, int n, dp_cluster *c, dp_exec_opts *eo, dp_mpi_opts *mo, double timeout)
{
    chain(g, n, 1);
    nodes_cluster(c, 1, 1e9, 0, 1e9, 0);
    memset(eo, 0, sizeof *eo);
    memset(mo, 0, sizeof *mo);
    mo->timeout = timeout;
    eo->mpi = mo;
    eo->seconds_per_unit = 1e-4;
}

static void test_refusals(void)
{
    dp_graph g;
    dp_cluster c, c3;
    dp_error err;
    dp_exec_result r;
    dp_exec_opts eo;
    dp_mpi_opts mo;
    int as[8], v, rc;
    double t0;
    chain_setup(&g, 8, &c, &eo, &mo, 2);
    /* a different assignment on the last rank */
    for (v = 0; v < 8; v++) as[v] = v % size_;
    if (rank_ == size_ - 1) as[0] = (as[0] + 1) % size_;
    rc = dp_exec_mpi(&g, &c, as, &eo, &r, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "assignment differs from rank 0's"), "different assignment: rc %d '%s'", rc, err.msg);
    CHECK(same_everywhere(err.msg), "different assignment: messages differ between ranks ('%s')", err.msg);
    /* a device out of range on the last rank only */
    for (v = 0; v < 8; v++) as[v] = v % size_;
    if (rank_ == size_ - 1) as[3] = 99;
    rc = dp_exec_mpi(&g, &c, as, &eo, &r, &err);
    {
        char want[64];
        snprintf(want, sizeof want, "rank %d: exec (mpi): op 3", size_ - 1);
        CHECK(rc == DP_ERR_RANGE && !strncmp(err.msg, want, strlen(want)), "bad device on one rank: rc %d '%s'", rc, err.msg);
    }
    CHECK(same_everywhere(err.msg), "bad device on one rank: messages differ ('%s')", err.msg);
    /* a cluster of one node more than there are ranks */
    dp_cluster_homogeneous(&c3, size_ + 1, 1, 1e9, 0, &err);
    dp_cluster_set_nodes(&c3, size_ + 1, 1e9, 0, &err);
    for (v = 0; v < 8; v++) as[v] = 0;
    rc = dp_exec_mpi(&g, &c3, as, &eo, &r, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "one rank per node"), "rank count: rc %d '%s'", rc, err.msg);
    CHECK(same_everywhere(err.msg), "rank count: messages differ ('%s')", err.msg);
    dp_cluster_free(&c3);
    /* an op of the last rank's device past its arena during the run */
    c.memory[size_ - 1] = 100;   /* outputs are 64 bytes: the second one held at once overflows */
    for (v = 0; v < 8; v++) as[v] = v < 4 ? 0 : size_ - 1;
    {
        dp_graph w;
        dp_op_desc d;
        dp_graph_init(&w);
        memset(&d, 0, sizeof d);
        d.compute = 1; d.out_bytes = 64;
        for (v = 0; v < 3; v++) dp_graph_add_op(&w, &d, NULL, &err);
        dp_graph_add_edge(&w, 0, 1, 64, &err);
        dp_graph_add_edge(&w, 0, 2, 64, &err);
        dp_graph_finalize(&w, &err);
        as[0] = 0; as[1] = size_ - 1; as[2] = size_ - 1;   /* two copies into the last device: 128 bytes */
        rc = dp_exec_mpi(&w, &c, as, &eo, &r, &err);
        {
            char want[64];
            snprintf(want, sizeof want, "rank %d: exec: device %d arena full", size_ - 1, size_ - 1);
            CHECK(rc == DP_ERR_INFEASIBLE && !strncmp(err.msg, want, strlen(want)), "arena full on one rank: rc %d '%s'", rc, err.msg);
        }
        CHECK(same_everywhere(err.msg), "arena full: messages differ ('%s')", err.msg);
        dp_graph_free(&w);
    }
    c.memory[size_ - 1] = 0;
    /* the last rank stops answering: rank 0 stops its process (SIGSTOP)
       0.2 s into a run, during its op of 0.5 s, and lets it go on 3 s
       later; rank 0 waits at most 1 s for a silent rank */
    {
        dp_graph w;
        dp_op_desc d;
        pthread_t th;
        int pids[64], stopper = 0;
        pids[rank_] = (int)getpid();
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, pids, 1, MPI_INT, MPI_COMM_WORLD);
        dp_graph_init(&w);
        memset(&d, 0, sizeof d);
        d.out_bytes = 8;
        d.compute = 1; dp_graph_add_op(&w, &d, NULL, &err);
        d.compute = 500; dp_graph_add_op(&w, &d, NULL, &err);
        d.compute = 1; dp_graph_add_op(&w, &d, NULL, &err);
        dp_graph_add_edge(&w, 0, 1, 8, &err);
        dp_graph_add_edge(&w, 1, 2, 8, &err);
        dp_graph_finalize(&w, &err);
        as[0] = 0; as[1] = size_ - 1; as[2] = 0;
        mo.timeout = 1;
        eo.seconds_per_unit = 1e-3;
        stop_pid = pids[size_ - 1];
        if (rank_ == 0) stopper = pthread_create(&th, NULL, stop_later, NULL) == 0;
        t0 = dp_now();
        rc = dp_exec_mpi(&w, &c, as, &eo, &r, &err);
        t0 = dp_now() - t0;
        if (stopper) pthread_join(th, NULL);
        {
            char want[96];
            snprintf(want, sizeof want, "rank 0: exec (mpi): rank 0 waited for rank %d to send edge 1", size_ - 1);
            CHECK(rc == DP_ERR_PEER && !strncmp(err.msg, want, strlen(want)), "stopped rank: rc %d '%s'", rc, err.msg);
            snprintf(want, sizeof want, "rank %d has been silent for", size_ - 1);
            CHECK(rc == DP_ERR_PEER && strstr(err.msg, want), "stopped rank not named: '%s'", err.msg);
        }
        /* rank 0 within the timeout (and a heartbeat's period) twice: the
           run, then the agreement; the stopped rank a timeout after it
           goes on */
        CHECK(rank_ == size_ - 1 ? t0 < 6 : t0 < 3.5, "stopped rank: rank %d failed after %g s", rank_, t0);
        CHECK(same_everywhere(err.msg), "stopped rank: messages differ ('%s')", err.msg);
        dp_graph_free(&w);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* Stage real's plumbing: dp_runtime_cost with dp_exec_mpi_lead on rank 0,
   dp_exec_mpi_follow elsewhere, then stop. */
static void test_lead_follow(void)
{
    dp_graph g;
    dp_cluster c;
    dp_error err;
    dp_exec_opts eo;
    dp_mpi_opts mo;
    int rc, k, v, as[12], order[12];
    chain_setup(&g, 12, &c, &eo, &mo, 1.0);   /* a follower gives up on a leader silent for 1 s */
    if (rank_ == 0) {
        dp_runtime rt;
        double cost = 0;
        memset(&rt, 0, sizeof rt);
        rt.exec = dp_exec_mpi_lead; rt.exec_opts = &eo; rt.order = DP_ORDER_PRIORITY;
        for (v = 0; v < 12; v++) order[v] = v;
        for (k = 0; k < 3; k++) {
            for (v = 0; v < 12; v++) as[v] = (v / (k + 1)) % size_;
            rc = dp_runtime_cost(&rt, &g, &c, as, order, &cost, &err);
            /* 12 ops of 1 unit one after another: at least 12 units */
            CHECK(rc == 0 && cost >= 12 && cost < 1e4, "lead run %d: rc %d cost %g '%s'", k, rc, cost, rc ? err.msg : "");
            if (k == 0) {
                /* training between runs for 2.5 timeouts, beating every
                   0.2 s: the followers wait on */
                double t0 = dp_now();
                while (dp_now() - t0 < 2.5 * mo.timeout) {
                    rc = dp_exec_mpi_beat(&eo, &err);
                    CHECK(rc == 0, "beat: %s", err.msg);
                    sleep_s(0.2);
                }
            }
        }
        rc = dp_exec_mpi_beat(NULL, &err);   /* the world's rank 0: a beat with the defaults */
        CHECK(rc == 0, "beat with no options: %s", err.msg);
        rc = dp_exec_mpi_stop(&eo, &err);
        CHECK(rc == 0, "stop: %s", err.msg);
    } else {
        rc = dp_exec_mpi_follow(&g, &c, &eo, &err);
        CHECK(rc == 0, "follow: rc %d '%s'", rc, err.msg);
        rc = dp_exec_mpi_lead(&g, &c, as, &eo, NULL, &err);
        CHECK(rc == DP_ERR_ARG && strstr(err.msg, "only rank 0 leads"), "lead on rank %d: '%s'", rank_, err.msg);
        rc = dp_exec_mpi_beat(&eo, &err);
        CHECK(rc == DP_ERR_ARG && strstr(err.msg, "only rank 0 leads"), "beat on rank %d: '%s'", rank_, err.msg);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* A leader that stops answering between runs (no beat for 3 timeouts):
   every follower fails within about the timeout, naming rank 0. Last of
   the tests: a follower's wait for the next command is left behind (as
   after any DP_ERR_PEER, the program is to end); rank 0's stop then
   matches the communicator it was making, so that the ranks' collectives
   stay in one order for main's closing count. */
static void test_lead_silent(void)
{
    dp_graph g;
    dp_cluster c;
    dp_error err;
    dp_exec_opts eo;
    dp_mpi_opts mo;
    int rc, v, as[12];
    chain_setup(&g, 12, &c, &eo, &mo, 1.0);
    for (v = 0; v < 12; v++) as[v] = v % size_;
    if (rank_ == 0) {
        dp_exec_result r;
        rc = dp_exec_mpi_lead(&g, &c, as, &eo, &r, &err);
        CHECK(rc == 0, "lead: %s", err.msg);
        if (rc == 0) dp_exec_result_free(&r);
        sleep_s(3 * mo.timeout);   /* stopped: no beat */
        (void)dp_exec_mpi_stop(&eo, &err);   /* nobody listens: its outcome is MPI's */
    } else {
        double t0 = dp_now();
        rc = dp_exec_mpi_follow(&g, &c, &eo, &err);
        t0 = dp_now() - t0;
        /* the one run (milliseconds), then silence: the follower gives up
           one timeout after the run's end, long before rank 0 goes on */
        CHECK(rc == DP_ERR_PEER && strstr(err.msg, "rank 0 did not answer"), "silent leader: rc %d '%s'", rc, err.msg);
        CHECK(t0 >= mo.timeout && t0 < 2.5 * mo.timeout, "silent leader: the follower gave up after %.3f s (timeout %g s)", t0, mo.timeout);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

static void test_agree_pingpong(void)
{
    dp_error err;
    double t = -1;
    int rc;
    rc = dp_mpi_agree(0, &err, NULL);
    CHECK(rc == 0 && err.code == DP_OK, "agree, no failure: rc %d", rc);
    if (rank_ == size_ - 1) { err.code = DP_ERR_IO; snprintf(err.msg, sizeof err.msg, "x.txt: cannot open"); }
    rc = dp_mpi_agree(rank_ == size_ - 1 ? DP_ERR_IO : 0, &err, NULL);
    {
        char want[64];
        snprintf(want, sizeof want, "rank %d: x.txt: cannot open", size_ - 1);
        CHECK(rc == DP_ERR_IO && !strcmp(err.msg, want), "agree: rc %d '%s'", rc, err.msg);
    }
    rc = dp_mpi_pingpong(NULL, 1, 0, 20, &t, &err);
    CHECK(rc == 0 && t > 0 && t < 0.1, "pingpong 0 bytes: rc %d %g s '%s'", rc, t, rc ? err.msg : "");
    CHECK(same_everywhere(rc ? "" : "ok"), "pingpong: outcome differs");
    rc = dp_mpi_pingpong(NULL, size_, 8, 20, &t, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "peer"), "pingpong bad peer: rc %d '%s'", rc, err.msg);
}

/* dp_calibrate_mpi: a machine of one device per rank, the machines'
   links from the ranks (positive, finite), the same cluster on every rank. */
static void test_calibrate(void)
{
    dp_calibrate_opts co;
    dp_cluster c;
    dp_error err;
    int rc, d, ok = 1;
    double sig[3];
    memset(&co, 0, sizeof co);
    co.devices = 1; co.size = 64; co.seconds = 0.001; co.sweeps = 1;
    rc = dp_calibrate_mpi(&c, &co, NULL, &err);
    CHECK(rc == 0, "calibrate: rc %d '%s'", rc, rc ? err.msg : "");
    if (rc) return;
    CHECK(c.n == size_, "calibrate: %d devices for %d ranks", c.n, size_);
    for (d = 0; d < c.n; d++) ok &= c.node[d] == d && c.overhead[d] > 0 && c.speed[d] > 0;
    CHECK(ok, "calibrate: a device not on its rank's machine, or no overhead or speed");
    CHECK(c.bandwidth[1] > 0 && isfinite(c.bandwidth[1]) && c.latency[1] >= 0 && isfinite(c.latency[1]) && c.latency[0] == 0,
          "calibrate: link between machines %g B/s, %g s", c.bandwidth[1], c.latency[1]);
    sig[0] = c.bandwidth[1]; sig[1] = c.latency[1]; sig[2] = c.speed[0];
    {
        double lo[3], hi[3];
        MPI_Allreduce(sig, lo, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(sig, hi, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        CHECK(lo[0] == hi[0] && lo[1] == hi[1] && lo[2] == hi[2], "calibrate: ranks got different clusters");
    }
    dp_cluster_free(&c);
    {
        /* a kind of device that is neither, on the last rank alone: every
           rank fails with that rank's message, and nothing is written */
        dp_mpi_opts mo;
        char want[96];
        memset(&mo, 0, sizeof mo);
        mo.devices = rank_ == size_ - 1 ? 7 : DP_MPI_CPU;
        memset(&c, 0, sizeof c);
        rc = dp_calibrate_mpi(&c, &co, &mo, &err);
        snprintf(want, sizeof want, "rank %d: calibrate (mpi): devices 7 is neither", size_ - 1);
        CHECK(rc == DP_ERR_RANGE && strstr(err.msg, want) && same_everywhere(err.msg) && c.n == 0,
              "calibrate, devices 7 on rank %d: rc %d '%s' (%d devices written), want DP_ERR_RANGE '...%s...' on every rank",
              size_ - 1, rc, err.msg, c.n, want);
        if (!rc) dp_cluster_free(&c);
    }
}

#ifdef DP_WITH_CUDA
/* Each rank's devices on its GPUs (dp_mpi_opts.devices DP_MPI_CUDA). With
   a GPU on every rank: chainmm, ffnn and llama_block placed across the
   ranks (as test_workloads) in fp32, the tensors crossing through
   pinned host buffers (gpu_direct -1) and, where MPI is CUDA-aware, in
   GPU memory: the digest equals dp_exec_cuda's on one device (the same
   kernels and sinks' hashes) and rank 0's outputs equal its outputs bit
   for bit; the paced opaque chain of test_paced on GPUs (b starts 50 ms
   after a ends). Without one on some rank: every rank fails with
   DP_ERR_DEVICE and one message, the lowest such rank's "no CUDA
   device: " and the runtime's reason, in dp_exec_mpi and dp_calibrate_mpi
   alike. */
static void test_gpu(void)
{
    dp_workload_opts wo;
    dp_graph g;
    dp_cluster c;
    dp_error err;
    dp_exec_opts eo;
    dp_mpi_opts mo;
    dp_exec_result got;
    int n = 0, have, all, rc, v, *as;
    char want[64], why[sizeof err.msg];
    memset(&err, 0, sizeof err);
    have = dp_cuda_device_count(&n, &err) == 0 && n > 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    memset(&mo, 0, sizeof mo);
    mo.devices = DP_MPI_CUDA;
    if (!all) {
        int first = have ? size_ : rank_, low;
        dp_calibrate_opts co;
        dp_cluster cc;
        MPI_Allreduce(&first, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        snprintf(want, sizeof want, "rank %d: no CUDA device: ", low);
        memset(&wo, 0, sizeof wo);
        wo.kind = DP_WL_CHAINMM; wo.parts = 2; wo.dim = 32;
        if (dp_gen_workload(&g, &wo, &err)) { CHECK(0, "workload: %s", err.msg); return; }
        nodes_cluster(&c, 1, 1e9, 1e-5, 1e8, 1e-4);
        as = (int *)calloc((size_t)g.n_ops, sizeof(int));
        for (v = 0; v < g.n_ops; v++) as[v] = v % c.n;
        memset(&eo, 0, sizeof eo);
        eo.mpi = &mo;
        rc = dp_exec_mpi(&g, &c, as, &eo, &got, &err);
        CHECK(rc == DP_ERR_DEVICE && !strncmp(err.msg, want, strlen(want)) && strstr(err.msg, "(cuda") && same_everywhere(err.msg),
              "no GPU: exec rc %d '%s', want DP_ERR_DEVICE '%s...' and the runtime's reason, the same on every rank", rc, err.msg, want);
        snprintf(why, sizeof why, "%s", err.msg);
        if (!rc) dp_exec_result_free(&got);
        memset(&co, 0, sizeof co);
        rc = dp_calibrate_mpi(&cc, &co, &mo, &err);
        CHECK(rc == DP_ERR_DEVICE && strstr(err.msg, "no CUDA device: ") && same_everywhere(err.msg),
              "no GPU: calibrate rc %d '%s', want DP_ERR_DEVICE 'no CUDA device: ...', the same on every rank", rc, err.msg);
        if (!rc) dp_cluster_free(&cc);
        free(as);
        dp_cluster_free(&c);
        dp_graph_free(&g);
        if (rank_ == 0) SKIP("no CUDA device on every rank (%s): the MPI executor on GPUs (digest and outputs against dp_exec_cuda, staged and CUDA-aware; a paced edge) not run", why);
        return;
    }
    test_workloads(&mo);
    mo.gpu_direct = 0;
    test_paced(&mo);   /* on GPUs */
}
#else
static void test_gpu(void)
{
    if (rank_ == 0) SKIP("built without DP_WITH_CUDA (./build.sh adds it where nvcc is found): the MPI executor on GPUs not run");
}
#endif

int main(int argc, char **argv)
{
    int provided = 0, counts[3], all[3];
    (void)argc; (void)argv;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) { printf("MPI_Init_thread failed\n"); return 1; }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (size_ < 2) {
        if (rank_ == 0) SKIP("test_mpi needs 2 ranks or more (mpirun -np 2)");
    } else {
        test_agree_pingpong();
        test_calibrate();
        test_workloads(NULL);
        test_paced(NULL);
        test_gpu();
        test_lead_follow();
        test_refusals();
        test_lead_silent();   /* last: it leaves a follower's wait behind */
    }
    counts[0] = dp_test_pass_; counts[1] = dp_test_fail_; counts[2] = dp_test_skip_;
    MPI_Reduce(counts, all, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank_ != 0) return dp_test_fail_ ? 1 : 0;
    dp_test_pass_ = all[0]; dp_test_fail_ = all[1]; dp_test_skip_ = all[2];
    return dp_test_done();
}
