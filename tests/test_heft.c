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
    return dp_test_done();
}
