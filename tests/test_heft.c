/* test_heft.c - the HEFT paper's worked example (Topcuoglu, Hariri, Wu,
   IEEE TPDS 2002, Fig. 2 / Fig. 4a / Table of upward ranks), typed in as
   graphs/heft_example.dpg from ../shared/data/heft-example/ (the two csv files).

   Published: upward ranks 108, 77, 80, 80, 69, 63.333, 42.667, 35.667,
   44.333, 14.667 (tasks 1..10); HEFT schedule length 80. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

#define HEFT_FILE "graphs/heft_example.dpg"

/* Execution times (paper Fig. 2 table), row = task 1..10, col = P1..P3. */
static const double W[10][3] = {
    {14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17}, {12, 13, 10},
    {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};

/* Edges (paper Fig. 2), 1-based task numbers and communication cost. */
static const int EDGES[15][3] = {
    {1, 2, 18}, {1, 3, 12}, {1, 4, 9},  {1, 5, 11}, {1, 6, 14},
    {2, 8, 19}, {2, 9, 16}, {3, 7, 23}, {4, 8, 27}, {4, 9, 23},
    {5, 9, 13}, {6, 8, 15}, {7, 10, 17}, {8, 10, 11}, {9, 10, 13}};

/* If the shared CSVs are present, check that heft.dpg says what they say. */
static void check_against_csv(const dp_graph *g)
{
    if (!dp_test_have_data("heft-example/canonicalgraph_task_exe_time.csv")) return;
    char p[1024];
    FILE *f = fopen(dp_test_data_path(p, sizeof p,
                    "heft-example/canonicalgraph_task_exe_time.csv"), "r");
    CHECK(f != NULL, "open %s", p);
    if (!f) return;
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        int t; double a, b, c;
        if (sscanf(line, "T_%d,%lf,%lf,%lf", &t, &a, &b, &c) != 4) continue;
        rows++;
        CHECK(t >= 0 && t < g->n_ops && g->n_dev_time == 3, "csv task %d", t);
        if (t < 0 || t >= g->n_ops || g->n_dev_time != 3) continue;
        CHECK(g->dev_time[t * 3 + 0] == a && g->dev_time[t * 3 + 1] == b &&
              g->dev_time[t * 3 + 2] == c, "heft.dpg times of T%d differ from the csv", t + 1);
    }
    fclose(f);
    CHECK(rows == 10, "csv exe-time rows %d", rows);

    f = fopen(dp_test_data_path(p, sizeof p,
              "heft-example/canonicalgraph_task_connectivity.csv"), "r");
    CHECK(f != NULL, "open %s", p);
    if (!f) return;
    int n_csv_edges = 0;
    while (fgets(line, sizeof line, f)) {
        int i;
        if (sscanf(line, "T%d,", &i) != 1) continue;
        char *s = strchr(line, ',');
        for (int j = 0; s && j < 10; j++) {
            double w = strtod(s + 1, NULL);
            if (w > 0) {
                n_csv_edges++;
                int found = 0;
                for (int e = 0; e < g->n_edges; e++)
                    if (g->src[e] == i && g->dst[e] == j && g->bytes[e] == w) found = 1;
                CHECK(found, "csv edge T%d->T%d (%g) missing in heft.dpg", i + 1, j + 1, w);
            }
            s = strchr(s + 1, ',');
        }
    }
    fclose(f);
    CHECK(n_csv_edges == g->n_edges, "csv has %d edges, heft.dpg %d", n_csv_edges, g->n_edges);
}


/* ---- heft's gaps against the plain scan ---------------------------------
   The scan heft used before its gaps were kept in trees (dp__gaps): per
   device its ops by start, the first k with max(ready, latest finish of
   ops 1..k-1) + w <= start(k), else after them all. Typed here as the
   specification (quadratic, for small graphs); every placement, start and
   finish must equal it bit for bit. *gaps counts the ops put before a
   device's last op (so the comparison is known to test the gaps). */
static int ref_heft(const dp_graph *g, const dp_cluster *c, int *assign, double *st, double *fin, int *gaps)
{
    int n = g->n_ops, nd = c->n;
    double *bl = malloc(sizeof(double) * (size_t)n), *avail = calloc((size_t)nd, sizeof(double));
    int *pend = malloc(sizeof(int) * (size_t)n), *ready = malloc(sizeof(int) * (size_t)n);
    int *slots = malloc(sizeof(int) * (size_t)n * (size_t)nd), *nslot = calloc((size_t)nd, sizeof(int));
    int nready = 0;
    dp_blevel(g, c, bl);
    *gaps = 0;
    for (int v = 0; v < n; v++) {
        assign[v] = -1;
        pend[v] = g->in_off[v + 1] - g->in_off[v];
        if (!pend[v]) ready[nready++] = v;
    }
    while (nready > 0) {
        int bi = 0;   /* the ready op of the highest b-level, ties the lower index */
        for (int i = 1; i < nready; i++)
            if (bl[ready[i]] > bl[ready[bi]] || (bl[ready[i]] == bl[ready[bi]] && ready[i] < ready[bi])) bi = i;
        int v = ready[bi], bd = -1;
        ready[bi] = ready[--nready];
        double bs = 0, bf = 0;
        for (int d = 0; d < nd; d++) {
            double r = 0, w = dp_op_time(g, c, v, d), s = -1, prev = 0;
            for (int k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
                int e = g->in_edge[k], u = g->src[e];
                double x = fin[u] + dp_xfer_time(c, g->bytes[e], assign[u], d);
                if (x > r) r = x;
            }
            int *sl = slots + (size_t)d * n;
            for (int k = 0; k < nslot[d]; k++) {
                double gs = r > prev ? r : prev;
                if (gs + w <= st[sl[k]]) { s = gs; break; }
                if (fin[sl[k]] > prev) prev = fin[sl[k]];
            }
            if (s < 0) s = r > prev ? r : prev;
            if (bd < 0 || s + w < bf) { bd = d; bs = s; bf = s + w; }
        }
        assign[v] = bd; st[v] = bs; fin[v] = bf;
        if (bf < avail[bd]) (*gaps)++;
        if (bf > avail[bd]) avail[bd] = bf;
        int *sl = slots + (size_t)bd * n, k = nslot[bd]++;
        while (k > 0 && st[sl[k - 1]] > bs) { sl[k] = sl[k - 1]; k--; }
        sl[k] = v;
        for (int k2 = g->out_off[v]; k2 < g->out_off[v + 1]; k2++) {
            int x = g->dst[g->out_edge[k2]];
            if (--pend[x] == 0) ready[nready++] = x;
        }
    }
    free(bl); free(avail); free(pend); free(ready); free(slots); free(nslot);
    return 0;
}

/* dp_place_heft on g and c equals ref_heft; returns the gaps taken */
static int same_as_scan(const dp_graph *g, const dp_cluster *c, const char *what)
{
    int n = g->n_ops, gaps = 0, same = 1;
    int *a = malloc(sizeof(int) * (size_t)n), *ra = malloc(sizeof(int) * (size_t)n);
    double *s = malloc(sizeof(double) * (size_t)n), *f = malloc(sizeof(double) * (size_t)n);
    double *rs = malloc(sizeof(double) * (size_t)n), *rf = malloc(sizeof(double) * (size_t)n), len;
    dp_error err;
    memset(&err, 0, sizeof err);
    int rc = dp_place_heft(g, c, a, s, f, &len, &err);
    CHECK(rc == 0, "%s: dp_place_heft: %s", what, err.msg);
    if (rc == 0) {
        ref_heft(g, c, ra, rs, rf, &gaps);
        for (int v = 0; v < n && same; v++)
            if (a[v] != ra[v] || s[v] != rs[v] || f[v] != rf[v]) {
                same = 0;
                CHECK(0, "%s: op %d on %d [%.17g, %.17g], the scan's on %d [%.17g, %.17g]",
                      what, v, a[v], s[v], f[v], ra[v], rs[v], rf[v]);
            }
        if (same) CHECK(1, "%s", what);
    }
    free(a); free(ra); free(s); free(f); free(rs); free(rf);
    return gaps;
}

/* heft on generated graphs of every shape, with and without transfers,
   on devices of different speeds, some ops taking no time */
static void test_against_scan(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    int gaps = 0, cases = 0;
    for (int shape = 0; shape < 2; shape++)
        for (int ci = 0; ci < 4; ci++)
            for (int seed = 1; seed <= 6; seed++) {
                static const double ccr[4] = {0, 0.3, 2, 10};
                dp_gen_opts go;
                memset(&go, 0, sizeof go);
                go.shape = shape ? DP_GEN_RANDOM : DP_GEN_LAYERED;
                go.nodes = 60 + 40 * seed;
                go.ccr = ccr[ci];
                go.seed = (uint64_t)seed;
                dp_graph g;
                memset(&g, 0, sizeof g);
                if (dp_gen(&g, &go, &err)) { CHECK(0, "gen: %s", err.msg); continue; }
                if (seed % 2 == 0)   /* every fifth op takes no time */
                    for (int v = 0; v < g.n_ops; v += 5) g.compute[v] = 0;
                dp_cluster c;
                memset(&c, 0, sizeof c);
                int nd = 2 + seed % 4;
                if (dp_cluster_homogeneous(&c, nd, 1, 1, 0, &err)) { CHECK(0, "cluster: %s", err.msg); dp_graph_free(&g); continue; }
                if (seed % 3 != 0)   /* speeds 1, 1.5, 2, ...; latency on half */
                    for (int d = 0; d < nd; d++) {
                        c.speed[d] = 1 + 0.5 * d;
                        for (int e = 0; e < nd; e++) if (d != e && seed % 2) c.latency[d * nd + e] = 0.25;
                    }
                char what[96];
                snprintf(what, sizeof what, "heft = the scan: %s, ccr %g, seed %d, %d devices",
                         shape ? "random" : "layered", ccr[ci], seed, nd);
                gaps += same_as_scan(&g, &c, what);
                cases++;
                dp_cluster_free(&c);
                dp_graph_free(&g);
            }
    static const char *files[] = {"graphs/layered_300.dpg", "graphs/random_150.dpg", "graphs/llama_layer_256_p2.dpg",
                                  "graphs/ffnn_256_p2.dpg", "graphs/chainmm_256_p2.dpg", "graphs/onnx_llama_block.dpg"};
    for (int i = 0; i < 6; i++) {
        dp_graph g;
        dp_cluster c;
        memset(&g, 0, sizeof g);
        memset(&c, 0, sizeof c);
        if (dp_graph_read(&g, files[i], DP_FORMAT_AUTO, &err)) { CHECK(0, "%s: %s", files[i], err.msg); continue; }
        for (int nd = 2; nd <= 8; nd *= 2) {
            if (dp_cluster_for_graph(&c, &g, nd, &err)) { CHECK(0, "%s: %s", files[i], err.msg); break; }
            char what[96];
            snprintf(what, sizeof what, "heft = the scan: %s on %d devices", files[i], nd);
            gaps += same_as_scan(&g, &c, what);
            cases++;
            dp_cluster_free(&c);
        }
        dp_graph_free(&g);
    }
    printf("heft against the scan: %d cases, %d ops put into gaps\n", cases, gaps);
    CHECK(gaps > 100, "the cases put only %d ops into gaps: they do not test the gaps", gaps);
}

/* A gap taken, by hand (2 devices, bandwidth 1, no latency; time= gives
   each op's time on devices 0 and 1):
     S (1,1); Z (7,4) after S, 2 bytes; X (4,4) after S, 5 bytes;
     W (2,2) after S, 0 bytes; V (0,0) after S, 0 bytes.
   b-levels (mean times, mean transfer = bytes): Z 5.5, X 4, W 2, V 0,
   S 1 + max(2+5.5, 5+4, 2, 0) = 10: order S Z X W V.
     S: both 0..1 -> device 0 [0,1] (a tie: the first).
     Z: dev 0 ready 1 -> [1,8]; dev 1 ready 1+2 = 3 -> [3,7]  -> 1 [3,7]
     X: dev 0 [1,5]; dev 1 ready 6, after Z -> [7,11]        -> 0 [1,5]
     W: dev 0 after X [5,7]; dev 1: the gap before Z, ready 1,
        1 + 2 <= 3 (exactly) -> [1,3]                         -> 1 [1,3]
     V: dev 0: before S? 1 + 0 <= 0 no; before X: max(1, 1) + 0 <= 1
        -> [1,1]; dev 1: before W, 1 + 0 <= 1 -> [1,1]; a tie -> 0 [1,1]
   Length 7. cp (no gaps) puts W on device 0 at [5,7]. */
static void test_gap_by_hand(void)
{
    static const char text[] =
        "doppler-graph 1\ndevtimes 2\n"
        "op S compute=1 time=1,1\nop Z compute=5.5 time=7,4\nop X compute=4 time=4,4\n"
        "op W compute=2 time=2,2\nop V compute=0 time=0,0\n"
        "edge S Z bytes=2\nedge S X bytes=5\nedge S W bytes=0\nedge S V bytes=0\n";
    static const int dev[5] = {0, 1, 0, 1, 0};
    static const double st[5] = {0, 3, 1, 1, 1}, fin[5] = {1, 7, 5, 3, 1};
    dp_error err;
    memset(&err, 0, sizeof err);
    dp_graph g;
    dp_cluster c;
    memset(&g, 0, sizeof g);
    memset(&c, 0, sizeof c);
    int rc = dp_graph_read_mem(&g, text, sizeof text - 1, "gap.dpg", DP_FORMAT_NATIVE, &err);
    CHECK(rc == 0, "gap example: %s", err.msg);
    if (rc) return;
    rc = dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err);
    CHECK(rc == 0, "cluster: %s", err.msg);
    int a[5], order[5];
    double s[5], f[5], len = -1;
    rc = dp_place_heft(&g, &c, a, s, f, &len, &err);
    CHECK(rc == 0, "heft: %s", err.msg);
    for (int v = 0; v < 5 && rc == 0; v++)
        CHECK(a[v] == dev[v] && s[v] == st[v] && f[v] == fin[v], "gap example: op %.1s on %d [%g, %g], by hand %d [%g, %g]",
              "SZXWV" + v, a[v], s[v], f[v], dev[v], st[v], fin[v]);
    CHECK(len == 7, "gap example: length %g, by hand 7", len);
    rc = dp_place_cp(&g, &c, a, order, &len, &err);
    CHECK(rc == 0 && a[3] == 0, "gap example: cp puts W on device %d, by hand 0", a[3]);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

int main(void)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    dp_graph g;
    memset(&g, 0, sizeof g);
    int rc = dp_graph_read(&g, HEFT_FILE, DP_FORMAT_AUTO, &err);
    CHECK(rc == 0, "read %s: %s", HEFT_FILE, err.msg);
    if (rc) return dp_test_done();

    /* ---- the file itself: 10 tasks, 15 edges, 3 time columns ---------- */
    CHECK(g.n_ops == 10, "n_ops %d", g.n_ops);
    CHECK(g.n_edges == 15, "n_edges %d", g.n_edges);
    CHECK(g.n_dev_time == 3, "n_dev_time %d", g.n_dev_time);
    CHECK(g.format == DP_FORMAT_NATIVE, "format detected %d", (int)g.format);
    if (g.n_ops != 10 || g.n_edges != 15 || g.n_dev_time != 3) return dp_test_done();
    for (int t = 0; t < 10; t++) {
        char nm[16];
        snprintf(nm, sizeof nm, "T%d", t + 1);
        CHECK(dp_graph_find(&g, nm) == t, "find %s", nm);
        for (int d = 0; d < 3; d++)
            CHECK(g.dev_time[t * 3 + d] == W[t][d], "T%d time on P%d", t + 1, d + 1);
    }
    for (int e = 0; e < 15; e++)
        CHECK(g.src[e] == EDGES[e][0] - 1 && g.dst[e] == EDGES[e][1] - 1 &&
              g.bytes[e] == EDGES[e][2], "edge %d", e);
    check_against_csv(&g);

    dp_cluster c;
    memset(&c, 0, sizeof c);
    rc = dp_cluster_homogeneous(&c, 3, 1, 1, 0, &err);
    CHECK(rc == 0, "cluster: %s", err.msg);
    if (rc) { dp_graph_free(&g); return dp_test_done(); }
    CHECK(dp_check(&g, &c, &err) == 0, "dp_check: %s", err.msg);

    /* ---- upward ranks ---------------------------------------------------
       mean times w: T1 (14+16+9)/3=13, T2 50/3, T3 43/3, T4 38/3, T5 35/3,
       T6 38/3, T7 11, T8 10, T9 50/3, T10 44/3; mean comm = bytes
       (bandwidth 1 on every distinct pair, latency 0).
       T10 = 14.667
       T9  = 16.667 + 13 + 14.667 = 44.333
       T8  = 10 + 11 + 14.667     = 35.667
       T7  = 11 + 17 + 14.667     = 42.667
       T6  = 12.667 + 15 + 35.667 = 63.333
       T5  = 11.667 + 13 + 44.333 = 69
       T4  = 12.667 + max(27+35.667, 23+44.333) = 80
       T3  = 14.333 + 23 + 42.667 = 80
       T2  = 16.667 + max(19+35.667, 16+44.333) = 77
       T1  = 13 + max(18+77, 12+80, 9+80, 11+69, 14+63.333) = 108
       (= the published table). */
    static const double rank_u[10] = {108, 77, 80, 80, 69, 63.333, 42.667,
                                      35.667, 44.333, 14.667};
    double bl[10], tl[10];
    CHECK(dp_blevel(&g, &c, bl) == 0, "dp_blevel failed");
    for (int t = 0; t < 10; t++) {
        char what[32];
        snprintf(what, sizeof what, "upward rank T%d", t + 1);
        CHECK_NEAR(bl[t], rank_u[t], 1e-3, what);
    }
    /* ---- downward ranks (t-level), by hand ------------------------------
       T1 0; T2 13+18=31; T3 13+12=25; T4 13+9=22; T5 13+11=24; T6 13+14=27;
       T7 = 25+14.333+23 = 62.333
       T8 = max(31+16.667+19, 22+12.667+27, 27+12.667+15) = 66.667
       T9 = max(31+16.667+16, 22+12.667+23, 24+11.667+13) = 63.667
       T10 = max(62.333+11+17, 66.667+10+11, 63.667+16.667+13) = 93.333
       check: rank_u + rank_d = 108 (the critical path) on T1, T2, T9, T10. */
    static const double rank_d[10] = {0, 31, 25, 22, 24, 27, 62.333, 66.667,
                                      63.667, 93.333};
    CHECK(dp_tlevel(&g, &c, tl) == 0, "dp_tlevel failed");
    for (int t = 0; t < 10; t++) {
        char what[32];
        snprintf(what, sizeof what, "downward rank T%d", t + 1);
        CHECK_NEAR(tl[t], rank_d[t], 1e-3, what);
    }

    /* ---- lower bound ----------------------------------------------------
       fastest times: 9,13,11,8,10,9,7,5,12,7 (sum 91).
       longest path without comm: T1-T2-T8-T10 = 9+13+12+7 = 41
       (T1-T4-T8-T10 38, T1-T3-T8.. no edge, T1-T2-T9-T10 9+13+12+7 = 41,
        T1-T3-T7-T10 9+11+5+7 = 32); work 91/3 = 30.333 -> bound 41. */
    double lb = dp_lower_bound(&g, &c);
    CHECK_NEAR(lb, 41, 1e-9, "lower bound");
    dp_stats st;
    CHECK(dp_graph_stats(&g, &c, &st) == 0, "stats");
    CHECK_NEAR(st.cp_length, 41, 1e-9, "cp_length");
    CHECK_NEAR(st.work_bound, 91.0 / 3.0, 1e-9, "work_bound");
    CHECK(st.nodes == 10 && st.edges == 15 && st.sources == 1 && st.sinks == 1,
          "stats counts %d %d %d %d", st.nodes, st.edges, st.sources, st.sinks);
    CHECK(st.depth == 4, "depth %d (T1-T2-T8-T10: 4 ops)", st.depth);
    CHECK_NEAR(st.total_bytes, 18 + 12 + 9 + 11 + 14 + 19 + 16 + 23 + 27 + 23 + 13 + 15 + 17 + 11 + 13,
               1e-9, "total_bytes (sum of the 15 comm costs = 241)");

    /* ---- HEFT -----------------------------------------------------------
       Order by rank: T1 T3 T4 T2 T5 T6 T9 T7 T8 T10 (T3, T4 tie at 80; either
       order gives the same schedule). EFT by hand (P1..P3 = dev 0..2):
       T1: 14/16/9                       -> P3 [0,9]
       T3: P1 21+11=32, P2 21+13=34, P3 9+19=28          -> P3 [9,28]
       T4: P1 18+13=31, P2 18+8=26, P3 28+17=45          -> P2 [18,26]
       T2: P1 27+13=40, P2 27+19=46, P3 28+18=46         -> P1 [27,40]
       T5: P1 40+12=52, P2 26+13=39, P3 28+10=38         -> P3 [28,38]
       T6: P1 40+13=53, P2 26+16=42, P3 38+9=47          -> P2 [26,42]
       T9: ready P1 max(40,49,51)=51 ->69, P2 max(56,26,51)=56 ->68,
           P3 max(56,49,38)=56 ->76                      -> P2 [56,68]
       T7: P1 51+7=58, P2 68+15=83 (gap 42..56 too short), P3 38+11=49
                                                          -> P3 [38,49]
       T8: P1 max(40,53,57)=57 ->62, P2 68+11=79, P3 59+14=73 -> P1 [57,62]
       T10: P1 max(66,62,81)+21=102, P2 max(66,73,68)+7=80,
            P3 max(49,73,81)+16=97                       -> P2 [73,80]
       No insertion into a gap is ever taken, so insertion-based and
       append-only HEFT agree: schedule length 80 (published). */
    static const int heft_dev[10] = {2, 0, 2, 1, 2, 1, 2, 0, 1, 1};
    static const double heft_start[10] = {0, 27, 9, 18, 28, 26, 38, 57, 56, 73};
    static const double heft_finish[10] = {9, 40, 28, 26, 38, 42, 49, 62, 68, 80};
    int assign[10];
    double start[10], finish[10], len = -1;
    rc = dp_place_heft(&g, &c, assign, start, finish, &len, &err);
    CHECK(rc == 0, "dp_place_heft: %s", err.msg);
    CHECK_NEAR(len, 80, 1e-9, "HEFT schedule length (published 80)");
    for (int t = 0; t < 10; t++) {
        CHECK(assign[t] == heft_dev[t], "HEFT puts T%d on P%d, expected P%d",
              t + 1, assign[t] + 1, heft_dev[t] + 1);
        char what[48];
        snprintf(what, sizeof what, "HEFT start T%d", t + 1);
        CHECK_NEAR(start[t], heft_start[t], 1e-9, what);
        snprintf(what, sizeof what, "HEFT finish T%d", t + 1);
        CHECK_NEAR(finish[t], heft_finish[t], 1e-9, what);
    }
    /* NULL start/finish must be accepted too */
    double len2 = -1;
    int assign2[10];
    rc = dp_place_heft(&g, &c, assign2, NULL, NULL, &len2, &err);
    CHECK(rc == 0 && len2 == len && memcmp(assign, assign2, sizeof assign) == 0,
          "dp_place_heft with NULL start/finish");

    /* ---- simulating HEFT's assignment (FIFO, free links) ---------------
       P3: T1 0-9; T3, T5 ready at 9 (tie -> lower index T3) T3 9-28, T5 28-38;
           T7 ready 28, runs 38-49.
       P2: T4 ready 9+9=18 -> 18-26; T6 ready 9+14=23 -> 26-42;
           T9 ready max(40+16, 26, 38+13)=56 -> 56-68;
           T10 ready max(49+17, 62+11, 68)=73 -> 73-80.
       P1: T2 ready 27 -> 27-40; T8 ready max(40, 26+27, 42+15)=57 -> 57-62.
       Makespan 80 >= lower bound 41. */
    dp_sim s;
    memset(&s, 0, sizeof s);
    rc = dp_sim_init(&s, &g, &c, &err);
    CHECK(rc == 0, "sim init: %s", err.msg);
    if (rc == 0) {
        dp_sim_opts so;
        memset(&so, 0, sizeof so);
        rc = dp_sim_run(&s, heft_dev, &so, &err);
        CHECK(rc == 0, "sim run: %s", err.msg);
        CHECK_NEAR(s.makespan, 80, 1e-9, "simulated makespan of HEFT's assignment");
        CHECK(s.makespan >= lb - 1e-9, "makespan %g < lower bound %g", s.makespan, lb);
        static const double sim_start[10] = {0, 27, 9, 18, 28, 26, 38, 57, 56, 73};
        for (int t = 0; t < 10; t++) {
            char what[48];
            snprintf(what, sizeof what, "simulated start T%d", t + 1);
            CHECK_NEAR(s.start[t], sim_start[t], 1e-9, what);
        }
        /* busy: P1 13+5=18, P2 8+16+12+7=43, P3 9+19+10+11=49 */
        CHECK_NEAR(s.busy[0], 18, 1e-9, "busy P1");
        CHECK_NEAR(s.busy[1], 43, 1e-9, "busy P2");
        CHECK_NEAR(s.busy[2], 49, 1e-9, "busy P3");
        dp_sim_free(&s);
    }

    dp_place_result res;
    memset(&res, 0, sizeof res);
    dp_place_opts po;
    memset(&po, 0, sizeof po);
    int assign3[10];
    rc = dp_place(DP_METHOD_HEFT, &g, &c, &po, assign3, &res, &err);
    CHECK(rc == 0, "dp_place heft: %s", err.msg);
    CHECK_NEAR(res.schedule_length, 80, 1e-9, "dp_place heft schedule_length");
    CHECK_NEAR(res.makespan, 80, 1e-9, "dp_place heft simulated makespan (hand: 80)");
    CHECK_NEAR(res.lower_bound, 41, 1e-9, "dp_place heft lower_bound");
    CHECK(memcmp(assign3, heft_dev, sizeof assign3) == 0, "dp_place heft assignment");

    /* ---- round trip through the native writer -------------------------- */
    char tmp[256];
    dp_test_tmp(tmp, sizeof tmp, "heft_roundtrip.dpg");
    rc = dp_graph_write(&g, tmp, DP_FORMAT_NATIVE, &err);
    CHECK(rc == 0, "write %s: %s", tmp, err.msg);
    dp_graph g2;
    memset(&g2, 0, sizeof g2);
    rc = dp_graph_read(&g2, tmp, DP_FORMAT_NATIVE, &err);
    CHECK(rc == 0, "read back %s: %s", tmp, err.msg);
    if (rc == 0) {
        CHECK(dp_test_graph_equal(&g, &g2, 1, "heft round trip"), "heft.dpg round trip differs");
        dp_graph_free(&g2);
    }

    dp_cluster_free(&c);
    dp_graph_free(&g);
    test_gap_by_hand();
    test_against_scan();
    return dp_test_done();
}
