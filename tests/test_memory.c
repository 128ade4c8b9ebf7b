/* test_memory.c - memory-true placement: resident bytes and shared
   weights in the graph, the native format, the static and simulated
   memory (by hand), the executors' accounting, and every placer within
   device memory on a graph whose unconstrained answer does not fit. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_error err;

/* ---- by hand: a shared weight on two devices ------------------------------
   a (compute 2, out 10) -> b (compute 3, out 5, resident 100, weight W)
                         -> c (compute 3, out 5, weight W),  W = 1000 bytes,
   edges carry a's 10 bytes; a, b on device 0, c on device 1; unit devices,
   bandwidth 1, no latency.
   Resident: d0 = 100 (b's own) + 1000 (W) = 1100; d1 = 1000 (W again).
   Static: d0 = 1100 + a's 10 + b's 5 = 1115; d1 = 1000 + c's 5 + the copy
   of a -> c, 10 = 1015.
   Run: d0 holds 1100 from the start; a runs [0, 2) (+10: 1110); at 2 b
   starts (+5: 1115) and a -> c is issued (d1: 1000 + 10 = 1010), arriving
   at 12; b ends at 5 (a's output still held for the copy, b's kept: a
   sink); at 12 the copy is done, a's output freed (d0 1105), c starts
   (d1 1015) and ends at 15, freeing the copy (1005). Peaks 1115 and 1015,
   makespan 15. */
static const char *HAND =
    "doppler-graph 1\n"
    "weight W bytes=1000\n"
    "op a compute=2 bytes=10\n"
    "op b compute=3 bytes=5 resident=100 weights=W\n"
    "op c compute=3 bytes=5 weights=W\n"
    "edge a b\n"
    "edge a c\n";

static void test_hand(void)
{
    dp_graph g;
    dp_cluster c;
    int asg[3] = {0, 0, 1};
    double b[2];
    dp_sim s;
    dp_sim_opts so;
    dp_graph_init(&g);
    CHECK(dp_graph_read_mem(&g, HAND, strlen(HAND), "hand.dpg", DP_FORMAT_AUTO, &err) == 0, "read: %s", err.msg);
    if (!g.finalized) return;
    CHECK(g.n_weights == 1 && g.n_uses == 2 && g.weight_bytes[0] == 1000 && g.resident[1] == 100, "weights %d, uses %d", g.n_weights, g.n_uses);
    CHECK(g.wuse_off[1] - g.wuse_off[0] == 0 && g.wuse_off[2] - g.wuse_off[1] == 1 && g.wuse_off[3] - g.wuse_off[2] == 1,
          "per-op uses");
    CHECK(g.wop_off[1] - g.wop_off[0] == 2 && g.wop[0] == 1 && g.wop[1] == 2, "W's ops");
    CHECK(dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    dp_resident_memory(&g, &c, asg, b);
    CHECK_NEAR(b[0], 1100, 0, "resident d0");
    CHECK_NEAR(b[1], 1000, 0, "resident d1 (the shared weight again)");
    dp_static_memory(&g, &c, asg, b);
    CHECK_NEAR(b[0], 1115, 0, "static d0");
    CHECK_NEAR(b[1], 1015, 0, "static d1");
    /* b and c on one device: W once */
    {
        int one[3] = {1, 1, 1};
        dp_static_memory(&g, &c, one, b);
        CHECK_NEAR(b[1], 1000 + 100 + 10 + 5 + 5, 0, "static, all on d1: W held once");
        CHECK_NEAR(b[0], 0, 0, "static, all on d1: nothing on d0");
    }
    CHECK(dp_sim_init(&s, &g, &c, &err) == 0, "sim: %s", err.msg);
    memset(&so, 0, sizeof so);
    so.track_memory = 1;
    CHECK(dp_sim_run(&s, asg, &so, &err) == 0, "run: %s", err.msg);
    CHECK_NEAR(s.makespan, 15, 0, "makespan");
    CHECK_NEAR(s.peak_bytes[0], 1115, 0, "peak d0");
    CHECK_NEAR(s.peak_bytes[1], 1015, 0, "peak d1");
    CHECK(dp_sim_check_memory(&s, &err) == 0, "unlimited memory refused: %s", err.msg);
    c.memory[0] = 1115; c.memory[1] = 1015;
    CHECK(dp_sim_check_memory(&s, &err) == 0, "exact memory refused: %s", err.msg);
    c.memory[1] = 1014;
    CHECK(dp_sim_check_memory(&s, &err) == DP_ERR_INFEASIBLE && strstr(err.msg, "device 1") && strstr(err.msg, "1015") && strstr(err.msg, "1014"),
          "over memory: %s", err.msg);
    /* the chart gives each device's peak (of its memory) when tracked:
       1115 bytes as "1.11 kB" (3 digits), d0's 2000 as "2 kB" */
    {
        char svg[256], *txt;
        c.memory[0] = 2000; c.memory[1] = 0;
        dp_test_tmp(svg, sizeof svg, "mem_gantt.svg");
        CHECK(dp_sim_run(&s, asg, &so, &err) == 0 && s.memory_tracked == 1, "tracked run");
        CHECK(dp_gantt_svg(svg, &s, asg, NULL, &err) == 0, "gantt: %s", err.msg);
        txt = dp_test_read_file(svg, NULL);
        CHECK(txt && strstr(txt, ">peak 1.11 kB / 2 kB<") && strstr(txt, ">peak 1.01 kB<"), "gantt peaks missing");
        free(txt);
        so.track_memory = 0;
        CHECK(dp_sim_run(&s, asg, &so, &err) == 0 && s.memory_tracked == 0, "untracked run");
        CHECK(dp_gantt_svg(svg, &s, asg, NULL, &err) == 0, "gantt: %s", err.msg);
        txt = dp_test_read_file(svg, NULL);
        CHECK(txt && !strstr(txt, ">peak "), "gantt peaks without tracking");
        free(txt);
        so.track_memory = 1;
        c.memory[0] = 1115; c.memory[1] = 1014;
    }
    /* without tracking the same run costs the same */
    so.track_memory = 0;
    CHECK(dp_sim_run(&s, asg, &so, &err) == 0 && s.makespan == 15, "untracked run");
    dp_sim_free(&s);
    /* the CPU executor allocates the resident bytes before the run and
       counts them: buffers of at least 8 bytes (b's and c's 5 become 8) */
    {
        dp_exec_result r;
        dp_exec_opts eo;
        memset(&eo, 0, sizeof eo);
        eo.seconds_per_unit = 1e-4;
        c.memory[0] = c.memory[1] = 0;
        CHECK(dp_exec_cpu(&g, &c, asg, &eo, &r, &err) == 0, "exec: %s", err.msg);
        if (r.peak_bytes) {
            CHECK_NEAR(r.peak_bytes[0], 1100 + 10 + 8, 0, "exec peak d0");
            CHECK_NEAR(r.peak_bytes[1], 1000 + 10 + 8, 0, "exec peak d1");
        }
        dp_exec_result_free(&r);
        eo.device_bytes = 1099;   /* less than d0's resident bytes alone */
        CHECK(dp_exec_cpu(&g, &c, asg, &eo, &r, &err) == DP_ERR_INFEASIBLE && strstr(err.msg, "resident"), "exec over its arena: %s", err.msg);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- the format ------------------------------------------------------------ */
static void test_format(void)
{
    dp_graph g, h;
    char path[256], *txt;
    static const char *bad[][2] = {
        {"doppler-graph 1\nop a weights=W\n", "'W' is not a declared weight"},
        {"doppler-graph 1\nop a\nweight W bytes=1\n", "before the first op"},
        {"doppler-graph 1\nweight W bytes=1\nweight W bytes=2\nop a\n", "duplicate weight name 'W'"},
        {"doppler-graph 1\nweight W bytes=1\nop a weights=W,W\n", "uses weight 'W' twice"},
        {"doppler-graph 1\nweight W bytes=-1\nop a\n", "bytes '-1'"},
        {"doppler-graph 1\nop a resident=-3\n", "resident"},
        {"doppler-graph 1\nweight W size=1\nop a\n", "unknown field 'size=1'"},
    };
    dp_graph_init(&g);
    CHECK(dp_graph_read_mem(&g, HAND, strlen(HAND), "hand.dpg", DP_FORMAT_AUTO, &err) == 0, "read: %s", err.msg);
    dp_test_tmp(path, sizeof path, "mem_roundtrip.dpg");
    CHECK(dp_graph_write(&g, path, DP_FORMAT_NATIVE, &err) == 0, "write: %s", err.msg);
    txt = dp_test_read_file(path, NULL);
    CHECK(txt && strstr(txt, "weight W bytes=1000\n") && strstr(txt, " resident=100 weights=W\n"), "written:\n%s", txt ? txt : "");
    free(txt);
    dp_graph_init(&h);
    CHECK(dp_graph_read(&h, path, DP_FORMAT_AUTO, &err) == 0, "read back: %s", err.msg);
    CHECK(dp_test_graph_equal(&g, &h, 1, "round trip"), "the graph read back differs");
    dp_graph_free(&h);
    CHECK(dp_graph_copy(&h, &g, &err) == 0 && dp_test_graph_equal(&g, &h, 1, "copy"), "copy: %s", err.msg);
    dp_graph_free(&h);
    dp_test_tmp(path, sizeof path, "mem_roundtrip.txt");
    CHECK(dp_graph_write(&g, path, DP_FORMAT_DOPPLER, &err) == DP_ERR_FORMAT && strstr(err.msg, "weight"), "DOPPLER format: %s", err.msg);
    CHECK(!dp_test_exists(path), "a refused write left %s", path);
    dp_test_tmp(path, sizeof path, "mem_roundtrip.stg");
    CHECK(dp_graph_write(&g, path, DP_FORMAT_STG, &err) == DP_ERR_FORMAT, "STG format: %s", err.msg);
    dp_graph_free(&g);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dp_graph_init(&g);
        CHECK(dp_graph_read_mem(&g, bad[i][0], strlen(bad[i][0]), "bad.dpg", DP_FORMAT_AUTO, &err) != 0 && strstr(err.msg, bad[i][1]) && strstr(err.msg, "bad.dpg:"),
              "bad %zu: '%s'", i, err.msg);
        CHECK(g.n_ops == 0 && g.n_weights == 0, "bad %zu left a half-read graph", i);
        dp_graph_free(&g);
    }
}

/* ---- every placer within memory ---------------------------------------------
   A chain o0 -> o1 -> o2 -> o3, each op compute 1, output 10 (edges carry
   it, bandwidth 1: a cut costs 10), resident 100 (its weights), on 2 unit
   devices of 250 bytes. One device would run it in 4, but holds 400 + 40.
   Two ops on a device take 200 + 20 and at most 10 of copies (<= 250);
   three take 300 + 30 (> 250). So every placement within memory is a 2 + 2
   split; the contiguous ones ({0,0,1,1}, {1,1,0,0}: one cut) run in
   1 + 1 + 10 + 1 + 1 = 14, the others in 24 or 34. cp's unconstrained
   answer (every op where it starts earliest: device 0) does not fit. */
static int fits(const dp_graph *g, const dp_cluster *c, const int *a)
{
    double b[8];
    dp_static_memory(g, c, a, b);
    for (int d = 0; d < c->n; d++) if (c->memory[d] > 0 && b[d] > c->memory[d]) return 0;
    return 1;
}

static void chain(dp_graph *g, dp_cluster *c, double memory)
{
    dp_graph_init(g);
    for (int i = 0; i < 4; i++) {
        dp_op_desc d;
        char nm[8];
        memset(&d, 0, sizeof d);
        snprintf(nm, sizeof nm, "o%d", i);
        d.name = nm; d.compute = 1; d.out_bytes = 10; d.resident = 100;
        CHECK(dp_graph_add_op(g, &d, NULL, &err) == 0, "op: %s", err.msg);
        if (i) CHECK(dp_graph_add_edge(g, i - 1, i, 10, &err) == 0, "edge: %s", err.msg);
    }
    CHECK(dp_graph_finalize(g, &err) == 0, "finalize: %s", err.msg);
    CHECK(dp_cluster_homogeneous(c, 2, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    c->memory[0] = c->memory[1] = memory;
}

static void test_heuristics(void)
{
    dp_graph g;
    dp_cluster c;
    dp_place_opts po;
    dp_place_result r;
    int a[4], want[4] = {0, 0, 1, 1};
    chain(&g, &c, 250);
    memset(&po, 0, sizeof po);
    for (int m = 0; m < DP_METHOD__COUNT; m++) {
        int rc = dp_place((dp_method)m, &g, &c, &po, a, &r, &err);
        if (m == DP_METHOD_SINGLE) {
            CHECK(rc == DP_ERR_INFEASIBLE && strstr(err.msg, "no single device"), "single: %s", err.msg);
            continue;
        }
        CHECK(rc == 0, "%s: %s", dp_method_name((dp_method)m), err.msg);
        if (rc) continue;
        CHECK(fits(&g, &c, a), "%s: {%d %d %d %d} over memory", dp_method_name((dp_method)m), a[0], a[1], a[2], a[3]);
        CHECK(r.fallback == 0, "%s: a fallback where no device holds the graph", dp_method_name((dp_method)m));
        if (m == DP_METHOD_CP || m == DP_METHOD_HEFT || m == DP_METHOD_PIPELINE || m == DP_METHOD_ENUMOPT || m == DP_METHOD_ANNEAL)
            CHECK_NEAR(r.makespan, 14, 0, dp_method_name((dp_method)m));
        if (m == DP_METHOD_CP || m == DP_METHOD_HEFT || m == DP_METHOD_PIPELINE)
            CHECK(memcmp(a, want, sizeof a) == 0, "%s placed {%d %d %d %d}, expected {0 0 1 1}", dp_method_name((dp_method)m), a[0], a[1], a[2], a[3]);
        if (m == DP_METHOD_ROUND_ROBIN) CHECK_NEAR(r.makespan, 34, 0, "round-robin {0 1 0 1}");
    }
    /* a start of the caller's over memory is refused, not replaced by a
       fallback: all on device 0 needs 400 + 40 */
    {
        int all0[4] = {0, 0, 0, 0};
        po.start = all0;
        CHECK(dp_place(DP_METHOD_ANNEAL, &g, &c, &po, a, &r, &err) == DP_ERR_INFEASIBLE && strstr(err.msg, "device 0's memory: it needs 440 bytes of 250"),
              "anneal from a start over memory: %s", err.msg);
        po.start = NULL;
    }
    /* unlimited: cp keeps the chain on device 0 (4); pipeline balances
       compute, 2 + 2, and pays the cut (14), so its fallback gives one
       device (4) */
    c.memory[0] = c.memory[1] = 0;
    CHECK(dp_place(DP_METHOD_CP, &g, &c, &po, a, &r, &err) == 0 && r.makespan == 4 && a[3] == 0, "cp unlimited: %g", r.makespan);
    po.no_fallback = 1;
    CHECK(dp_place(DP_METHOD_PIPELINE, &g, &c, &po, a, &r, &err) == 0 && memcmp(a, want, sizeof a) == 0 && r.makespan == 14,
          "pipeline unlimited, own answer: %g {%d %d %d %d}", r.makespan, a[0], a[1], a[2], a[3]);
    po.no_fallback = 0;
    CHECK(dp_place(DP_METHOD_PIPELINE, &g, &c, &po, a, &r, &err) == 0 && r.makespan == 4 && r.fallback == 1 && a[0] == 0 && a[3] == 0,
          "pipeline unlimited with the fallback: %g, fallback %d", r.makespan, r.fallback);
    /* nothing fits: 3 op-loads of 130 on 2 devices of 120 */
    c.memory[0] = c.memory[1] = 120;
    CHECK(dp_place(DP_METHOD_CP, &g, &c, &po, a, &r, &err) == DP_ERR_INFEASIBLE && strstr(err.msg, "op 'o") && strstr(err.msg, "free"),
          "cp, nothing fits: %s", err.msg);
    CHECK(dp_place(DP_METHOD_PIPELINE, &g, &c, &po, a, &r, &err) == DP_ERR_INFEASIBLE, "pipeline, nothing fits: %s", err.msg);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* The learned placers: a DOPPLER policy that imitated cp on the
   unlimited chain puts every op on device 0; within 250 bytes the PLC
   mask must split it (a mutation that drops the mask places 4 on one
   device). Per-op logits, Placeto and the polish too. */
static void test_learned(void)
{
    dp_graph g;
    dp_cluster c;
    dp_policy p;
    dp_policy_opts po = {0};
    dp_train_opts to;
    dp_train_result tr;
    dp_infer_opts io;
    const dp_graph *gs[1];
    int a[4], fell = -1;
    double ms = 0;
    chain(&g, &c, 0);
    gs[0] = &g;
    po.hidden = 8; po.layers = 2; po.seed = 3;
    CHECK(dp_policy_init(&p, &po, &err) == 0, "policy: %s", err.msg);
    memset(&to, 0, sizeof to);
    to.seed = 1;
    to.episodes[DP_STAGE_IL] = 100;
    to.lr[DP_STAGE_IL] = 1e-2;
    CHECK(dp_train(&p, gs, 1, &c, &to, &tr, &err) == 0, "il: %s", err.msg);
    memset(&io, 0, sizeof io);
    io.no_fallback = 1;
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &err) == 0 && ms == 4 && a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0,
          "after imitation, unlimited: %g {%d %d %d %d} (cp's: all on 0)", ms, a[0], a[1], a[2], a[3]);
    c.memory[0] = c.memory[1] = 250;
    for (int samples = 0; samples <= 8; samples += 8) {
        memset(&io, 0, sizeof io);
        io.samples = samples; io.seed = 5; io.fallback = &fell;
        CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &err) == 0, "place within memory: %s", err.msg);
        CHECK(fits(&g, &c, a) && (a[0] + a[1] + a[2] + a[3]) == 2, "doppler (%d samples) {%d %d %d %d} over memory", samples, a[0], a[1], a[2], a[3]);
        CHECK(fell == 0, "doppler: a fallback where no device holds the graph");
        CHECK(ms >= 14, "doppler within memory: %g below the best split's 14", ms);
        io.polish = 2;
        CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &err) == 0 && fits(&g, &c, a) && ms == 14, "doppler + polish: %g", ms);
    }
    /* training within memory: REINFORCE against the simulator, each
       episode masked; the policy then places within memory */
    memset(&to, 0, sizeof to);
    to.seed = 2;
    to.episodes[DP_STAGE_SIM] = 60;
    CHECK(dp_train(&p, gs, 1, &c, &to, &tr, &err) == 0, "sim within memory: %s", err.msg);
    memset(&io, 0, sizeof io);
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &err) == 0 && fits(&g, &c, a), "after training within memory: %s", err.msg);
    /* per-op logits (dp_policy_improve), within memory */
    {
        dp_improve_opts im;
        memset(&im, 0, sizeof im);
        im.episodes = 64; im.op_logits = 3; im.seed = 4; im.fallback = &fell;
        CHECK(dp_policy_improve(&p, &g, &c, &im, a, NULL, &ms, &err) == 0, "improve: %s", err.msg);
        CHECK(fits(&g, &c, a) && ms == 14, "per-op logits within memory: %g {%d %d %d %d}", ms, a[0], a[1], a[2], a[3]);
        im.op_logits = 0; im.episodes = 20; im.polish = 1;
        CHECK(dp_policy_improve(&p, &g, &c, &im, a, NULL, &ms, &err) == 0 && fits(&g, &c, a), "improve (network): %s", err.msg);
    }
    /* nothing fits: every rollout meets a dead end, and no device holds it */
    c.memory[0] = c.memory[1] = 120;
    memset(&io, 0, sizeof io);
    io.samples = 4;
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &err) == DP_ERR_INFEASIBLE && strstr(err.msg, "op 'o") && strstr(err.msg, "free"),
          "doppler, nothing fits: %s", err.msg);
    dp_policy_free(&p);
    /* Placeto from cp's placement (within memory): its moves stay within */
    c.memory[0] = c.memory[1] = 250;
    memset(&po, 0, sizeof po);
    po.algo = DP_ALGO_PLACETO; po.devices = 2; po.hidden = 8; po.seed = 1;
    CHECK(dp_policy_init(&p, &po, &err) == 0, "placeto: %s", err.msg);
    /* untrained, its sampled sweeps move ops at random: without the
       memory rule some sweep reaches all four on one device (4) */
    memset(&io, 0, sizeof io);
    io.samples = 32; io.seed = 2;
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &err) == 0 && fits(&g, &c, a) && ms == 14, "placeto (untrained) within memory: %g {%d %d %d %d}", ms, a[0], a[1], a[2], a[3]);
    memset(&to, 0, sizeof to);
    to.seed = 1;
    to.episodes[DP_STAGE_SIM] = 10;
    to.eps_start[DP_STAGE_SIM] = 0.5;
    {
        /* the one-step improvement simulates the visited op on every device
           it may move to: the best placement training saw fits too */
        int tb[4] = {-1, -1, -1, -1}, *tbp = tb, tbo[4], *tbop = tbo;
        double tbc = 0;
        to.best_assign = &tbp; to.best_order = &tbop; to.best_cost = &tbc;
        CHECK(dp_train(&p, gs, 1, &c, &to, &tr, &err) == 0, "placeto train: %s", err.msg);
        CHECK(fits(&g, &c, tb) && tbc == 14, "placeto's best in training: %g {%d %d %d %d}", tbc, tb[0], tb[1], tb[2], tb[3]);
    }
    memset(&io, 0, sizeof io);
    io.samples = 4; io.seed = 2;
    CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &ms, &err) == 0 && fits(&g, &c, a) && ms == 14, "placeto within memory: %g {%d %d %d %d}", ms, a[0], a[1], a[2], a[3]);
    dp_policy_free(&p);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* Memory 0 (unlimited): resident bytes and weights change no placement:
   the same graph with and without them places alike with every placer
   and the pretrained-style policy. */
static void test_unlimited_alike(void)
{
    dp_graph g, h;
    dp_cluster c;
    dp_gen_opts go;
    int a[200], b[200];
    dp_place_result r1, r2;
    dp_place_opts po;
    memset(&go, 0, sizeof go);
    go.nodes = 60; go.ccr = 1; go.seed = 9;
    CHECK(dp_gen(&g, &go, &err) == 0, "gen: %s", err.msg);
    /* h: g with a resident 1e6 on every op and one weight shared by all */
    dp_graph_init(&h);
    {
        int w;
        CHECK(dp_graph_add_weight(&h, "shared", 5e6, &w, &err) == 0, "weight: %s", err.msg);
        for (int v = 0; v < g.n_ops; v++) {
            dp_op_desc d;
            memset(&d, 0, sizeof d);
            d.name = g.name[v]; d.compute = g.compute[v]; d.out_bytes = g.out_bytes[v]; d.resident = 1e6;
            CHECK(dp_graph_add_op(&h, &d, NULL, &err) == 0, "op");
            CHECK(dp_graph_use_weight(&h, v, w, &err) == 0, "use");
        }
        for (int e = 0; e < g.n_edges; e++) CHECK(dp_graph_add_edge(&h, g.src[e], g.dst[e], g.bytes[e], &err) == 0, "edge");
        CHECK(dp_graph_finalize(&h, &err) == 0, "finalize: %s", err.msg);
    }
    CHECK(dp_cluster_for_graph(&c, &g, 4, &err) == 0, "cluster: %s", err.msg);
    memset(&po, 0, sizeof po);
    po.seed = 3; po.budget = 500;
    for (int m = 0; m < DP_METHOD__COUNT; m++) {
        CHECK(dp_place((dp_method)m, &g, &c, &po, a, &r1, &err) == 0 && dp_place((dp_method)m, &h, &c, &po, b, &r2, &err) == 0, "%s", dp_method_name((dp_method)m));
        CHECK(memcmp(a, b, sizeof(int) * (size_t)g.n_ops) == 0 && r1.makespan == r2.makespan && r1.simulations == r2.simulations,
              "%s places differently with resident bytes and memory 0", dp_method_name((dp_method)m));
    }
    {
        dp_policy p;
        dp_policy_opts pp = {0};
        dp_infer_opts io;
        double m1, m2;
        pp.hidden = 4; pp.insertion = 1; pp.seed = 7;
        CHECK(dp_policy_init(&p, &pp, &err) == 0, "policy");
        memset(&io, 0, sizeof io);
        io.samples = 16; io.seed = 1;
        CHECK(dp_policy_place(&p, &g, &c, &io, a, NULL, &m1, &err) == 0 && dp_policy_place(&p, &h, &c, &io, b, NULL, &m2, &err) == 0, "place");
        CHECK(memcmp(a, b, sizeof(int) * (size_t)g.n_ops) == 0 && m1 == m2, "doppler places differently with resident bytes and memory 0");
        dp_policy_free(&p);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
    dp_graph_free(&h);
}

/* Workloads with their weights as resident weights (by hand: every W
   block of 128 x 128 floats is 65536 bytes). */
static void test_workloads(void)
{
    dp_graph g;
    dp_workload_opts wo;
    int v, w, ok = 1;
    memset(&wo, 0, sizeof wo);
    /* ffnn, P 2, 2 layers: X_0, X_1, and per layer 4 block matmuls, 2
       reduces, 2 relus (18 ops); edges: 4 into the matmuls, 4 into the
       reduces, 2 into the relus per layer (20); 8 weights, each used by
       one matmul */
    wo.kind = DP_WL_FFNN; wo.parts = 2; wo.dim = 256; wo.layers = 2; wo.weights = 1;
    CHECK(dp_gen_workload(&g, &wo, &err) == 0, "ffnn: %s", err.msg);
    CHECK(g.n_ops == 18 && g.n_edges == 20 && g.n_weights == 8 && g.n_uses == 8, "ffnn: %d ops, %d edges, %d weights, %d uses", g.n_ops, g.n_edges, g.n_weights, g.n_uses);
    for (w = 0; w < g.n_weights; w++) ok &= g.weight_bytes[w] == 65536 && g.wop_off[w + 1] - g.wop_off[w] == 1 && g.kind[g.wop[g.wop_off[w]]] == DP_OP_OPAQUE;
    for (v = 0; v < g.n_ops; v++) ok &= g.kind[v] == DP_OP_OPAQUE;
    CHECK(ok, "ffnn: weights of 65536 bytes read by one opaque op each");
    dp_graph_free(&g);
    /* chainmm, P 2, 1 layer: M0's 4 blocks stay inputs, M1's 4 are
       weights; each B[k][j] is read by the 2 row blocks' matmuls (8 uses) */
    wo.kind = DP_WL_CHAINMM; wo.layers = 1;
    CHECK(dp_gen_workload(&g, &wo, &err) == 0, "chainmm: %s", err.msg);
    CHECK(g.n_ops == 4 + 8 + 4 && g.n_weights == 4 && g.n_uses == 8, "chainmm: %d ops, %d weights, %d uses", g.n_ops, g.n_weights, g.n_uses);
    for (w = 0; w < g.n_weights; w++) ok &= g.wop_off[w + 1] - g.wop_off[w] == 2;
    CHECK(ok, "chainmm: each weight read by two matmuls");
    dp_graph_free(&g);
    /* gpt, P 1, dim 64, 1 layer, vocab 512 (8 dim), batch 64: X_0; ln1
       (cat, norm, part), q, k, v, a head (kT, scores, scale, softmax, out),
       o, res1, ln2, 4 MLP chunks (fc, gelu, proj), res2, lnf, the head's
       matmul: 34 ops; weights Wq Wk Wv Wo, 8 chunk matrices of 64 x 64
       (16384 bytes each) and the head's 64 x 512 (131072) */
    wo.kind = DP_WL_GPT; wo.parts = 1; wo.dim = 64; wo.layers = 1; wo.batch = 64;
    CHECK(dp_gen_workload(&g, &wo, &err) == 0, "gpt: %s", err.msg);
    if (g.finalized) {
        double tot = 0, head = -1;
        int hv = dp_graph_find(&g, "head_mm0_0");
        for (w = 0; w < g.n_weights; w++) tot += g.weight_bytes[w];
        CHECK(g.n_ops == 34 && g.n_weights == 13, "gpt: %d ops, %d weights", g.n_ops, g.n_weights);
        CHECK_NEAR(tot, 12 * 16384 + 131072, 0, "gpt: weight bytes");
        if (hv >= 0 && g.wuse_off[hv + 1] - g.wuse_off[hv] == 1) head = g.weight_bytes[g.wuse[g.wuse_off[hv]]];
        CHECK_NEAR(head, 131072, 0, "gpt: the head's weight");
        CHECK(hv >= 0 && g.compute[hv] == 2.0 * 64 * 64 * 512, "gpt: the head's FLOPs");
    }
    dp_graph_free(&g);
    /* real ops without weights: the same gpt runs its kernels */
    wo.weights = 0;
    CHECK(dp_gen_workload(&g, &wo, &err) == 0 && g.n_ops == 34 + 13 && g.n_weights == 0, "gpt, real ops: %s", err.msg);
    dp_graph_free(&g);
    wo.vocab = 3; wo.parts = 2;
    CHECK(dp_gen_workload(&g, &wo, &err) == DP_ERR_RANGE && strstr(err.msg, "vocab 3"), "gpt, vocab not a multiple of parts: %s", err.msg);
}

int main(void)
{
    test_hand();
    test_format();
    test_heuristics();
    test_learned();
    test_unlimited_alike();
    test_workloads();
    return dp_test_done();
}
