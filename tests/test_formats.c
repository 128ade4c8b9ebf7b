/* test_formats.c - readers and writers: exact round trips (bitwise doubles,
   names, kinds, per-device times, edge order), conversions between the
   native, DOPPLER and STG formats, format detection, assignment files. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

#include <float.h>

static dp_error err;

static int add_op(dp_graph *g, const char *name, dp_kind kind, double compute, double out,
                  double mem, const double *dt, int ndt)
{
    dp_op_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.kind = kind;
    d.compute = compute;
    d.out_bytes = out;
    d.mem_bytes = mem;
    d.dev_time = dt;
    d.n_dev_time = ndt;
    int id = -1;
    int rc = dp_graph_add_op(g, &d, &id, &err);
    CHECK(rc == 0, "add op %s: %s", name, err.msg);
    return id;
}

/* A graph with awkward doubles, every field set, edges added out of order. */
static int awkward_graph(dp_graph *g)
{
    dp_graph_init(g);
    g->unit_speed = 2.5e9;
    g->unit_bandwidth = 0.1;
    double t0[2] = {-1, 2.5}, t1[2] = {1e-300, -1}, t2[2] = {0.30000000000000004, 7},
           t3[2] = {-1, -1}, t4[2] = {123456789.123456789, 1.0 / 3.0};
    add_op(g, "in_x", DP_OP_INPUT, 0, 0.1, 0, t0, 2);
    add_op(g, "mm_1", DP_OP_MATMUL, 123456789.123456789, 1e-300, 0.1, t1, 2);
    add_op(g, "relu.2", DP_OP_RELU, 0.1, DBL_MAX, 3, t2, 2);
    add_op(g, "soft-max", DP_OP_SOFTMAX, 1e-300, 0, 0, t3, 2);
    add_op(g, "Cat_4", DP_OP_CONCAT, 2.0 / 3.0, 1e22, 4.9e-30, t4, 2);
    int rc = 0;
    rc |= dp_graph_add_edge(g, 2, 3, 0.1, &err);
    rc |= dp_graph_add_edge(g, 0, 1, 1e-300, &err);
    rc |= dp_graph_add_edge(g, 1, 2, 123456789.123456789, &err);
    rc |= dp_graph_add_edge(g, 0, 3, 0, &err);
    rc |= dp_graph_add_edge(g, 3, 4, 1e22, &err);
    rc |= dp_graph_add_edge(g, 1, 4, 0.1, &err); /* differs from mm_1's out_bytes */
    CHECK(rc == 0, "awkward edges: %s", err.msg);
    rc = dp_graph_finalize(g, &err);
    CHECK(rc == 0, "awkward finalize: %s", err.msg);
    return rc;
}

static int write_read(const dp_graph *g, const char *name, dp_format wfmt, dp_format rfmt,
                      dp_graph *out)
{
    char path[256];
    dp_test_tmp(path, sizeof path, name);
    memset(out, 0, sizeof *out);
    int rc = dp_graph_write(g, path, wfmt, &err);
    CHECK(rc == 0, "write %s: %s", path, err.msg);
    if (rc) return rc;
    rc = dp_graph_read(out, path, rfmt, &err);
    CHECK(rc == 0, "read %s: %s", path, err.msg);
    return rc;
}

static void test_native_roundtrip(void)
{
    dp_graph g, h;
    if (awkward_graph(&g)) return;
    CHECK(g.topo && g.out_off && g.in_off, "finalised graph lacks adjacency");
    if (write_read(&g, "fmt_awkward.dpg", DP_FORMAT_NATIVE, DP_FORMAT_AUTO, &h) == 0) {
        CHECK(dp_test_graph_equal(&g, &h, 1, "awkward native"), "awkward graph round trip");
        CHECK(h.format == DP_FORMAT_NATIVE, "format of the read-back graph %d", (int)h.format);
        CHECK(h.finalized, "read graph not finalised");
        CHECK(dp_graph_find(&h, "soft-max") == 3 && dp_graph_find(&h, "nope") == -1, "find");
        /* a second generation is byte-identical to the first */
        char p1[256], p2[256];
        dp_test_tmp(p1, sizeof p1, "fmt_awkward.dpg");
        dp_test_tmp(p2, sizeof p2, "fmt_awkward2.dpg");
        CHECK(dp_graph_write(&h, p2, DP_FORMAT_NATIVE, &err) == 0, "write gen 2: %s", err.msg);
        size_t l1 = 0, l2 = 0;
        char *b1 = dp_test_read_file(p1, &l1), *b2 = dp_test_read_file(p2, &l2);
        CHECK(b1 && b2 && l1 == l2 && memcmp(b1, b2, l1) == 0, "second write differs from the first");
        CHECK(b1 && strncmp(b1, "doppler-graph 1", 15) == 0, "native file does not start with its header");
        /* the same through FILE* and the memory reader */
        FILE *f = tmpfile();
        CHECK(f != NULL, "tmpfile");
        if (f) {
            CHECK(dp_graph_write_file(&g, f, DP_FORMAT_NATIVE, &err) == 0, "write_file: %s", err.msg);
            long n = ftell(f);
            rewind(f);
            char *buf = (char *)malloc((size_t)n + 1);
            size_t got = fread(buf, 1, (size_t)n, f);
            fclose(f);
            CHECK(got == (size_t)n && b1 && (size_t)n == l1 && memcmp(buf, b1, l1) == 0,
                  "dp_graph_write_file output differs from dp_graph_write");
            dp_graph m;
            memset(&m, 0, sizeof m);
            CHECK(dp_graph_read_mem(&m, buf, got, "mem.dpg", DP_FORMAT_NATIVE, &err) == 0,
                  "read_mem: %s", err.msg);
            CHECK(dp_test_graph_equal(&g, &m, 1, "read_mem"), "read_mem round trip");
            dp_graph_free(&m);
            free(buf);
        }
        free(b1);
        free(b2);
        /* a deep copy is equal too */
        dp_graph cp;
        memset(&cp, 0, sizeof cp);
        CHECK(dp_graph_copy(&cp, &h, &err) == 0, "copy: %s", err.msg);
        CHECK(dp_test_graph_equal(&h, &cp, 1, "copy"), "dp_graph_copy differs");
        dp_graph_free(&cp);
        dp_graph_free(&h);
    }
    dp_graph_free(&g);

    /* the smallest subnormal and the largest double survive */
    dp_graph_init(&g);
    add_op(&g, "tiny", DP_OP_OPAQUE, 4.9406564584124654e-324, DBL_MAX, 2.2250738585072014e-308,
           NULL, 0);
    add_op(&g, "next", DP_OP_OPAQUE, 1, 0, 0, NULL, 0);
    CHECK(dp_graph_add_edge(&g, 0, 1, 4.9406564584124654e-324, &err) == 0, "edge: %s", err.msg);
    if (dp_graph_finalize(&g, &err) == 0 &&
        write_read(&g, "fmt_extremes.dpg", DP_FORMAT_NATIVE, DP_FORMAT_NATIVE, &h) == 0) {
        CHECK(dp_test_graph_equal(&g, &h, 1, "extremes"), "subnormal / DBL_MAX round trip");
        dp_graph_free(&h);
    }
    dp_graph_free(&g);
}

static void test_native_syntax(void)
{
    /* defaults: units 1 1, kind opaque, compute/mem 0; an edge without
       bytes= carries its source's bytes; comments and extra blanks */
    const char *txt =
        "# a comment line\n"
        "doppler-graph 1   # trailing comment\n"
        "\n"
        "op   a   bytes=12 compute=3\n"
        "op b kind=matmul\n"
        "\top c compute=1e3 mem=5\n"
        "edge a b\n"
        "edge a c bytes=3\n"
        "edge b c\n";
    dp_graph g;
    memset(&g, 0, sizeof g);
    int rc = dp_graph_read_mem(&g, txt, strlen(txt), "syntax.dpg", DP_FORMAT_AUTO, &err);
    CHECK(rc == 0, "syntax.dpg: %s", err.msg);
    if (rc) return;
    CHECK(g.n_ops == 3 && g.n_edges == 3, "counts %d %d", g.n_ops, g.n_edges);
    CHECK(g.unit_speed == 1 && g.unit_bandwidth == 1, "default units %g %g", g.unit_speed,
          g.unit_bandwidth);
    CHECK(g.kind[0] == DP_OP_OPAQUE && g.kind[1] == DP_OP_MATMUL, "kinds %d %d", (int)g.kind[0],
          (int)g.kind[1]);
    CHECK(g.compute[0] == 3 && g.compute[1] == 0 && g.compute[2] == 1000, "compute");
    CHECK(g.out_bytes[0] == 12 && g.mem_bytes[2] == 5 && g.mem_bytes[0] == 0, "bytes/mem");
    CHECK(g.n_dev_time == 0, "n_dev_time %d", g.n_dev_time);
    CHECK(g.src[0] == 0 && g.dst[0] == 1 && g.bytes[0] == 12, "edge a b defaults to a's 12 bytes");
    CHECK(g.src[1] == 0 && g.dst[1] == 2 && g.bytes[1] == 3, "edge a c bytes=3");
    CHECK(g.bytes[2] == 0, "edge b c: b has 0 bytes");
    /* topological order: a b c */
    CHECK(g.topo[0] == 0 && g.topo[1] == 1 && g.topo[2] == 2, "topo");
    /* CSR: out of a = edges 0, 1; in of c = edges 1, 2 */
    CHECK(g.out_off[1] - g.out_off[0] == 2 && g.in_off[3] - g.in_off[2] == 2, "CSR degrees");
    dp_graph_free(&g);

    /* topological order breaks ties by lower index: z(0) <- y(1) <- ... */
    const char *t2 = "doppler-graph 1\nop z\nop y\nop x\nop w\nedge y z\nedge x z\nedge w x\n";
    memset(&g, 0, sizeof g);
    if (dp_graph_read_mem(&g, t2, strlen(t2), "topo.dpg", DP_FORMAT_NATIVE, &err) == 0) {
        /* sources y(1), w(3); y first; then w, then x (freed by w), then z */
        int want[4] = {1, 3, 2, 0};
        CHECK(memcmp(g.topo, want, sizeof want) == 0, "topo order %d %d %d %d", g.topo[0], g.topo[1],
              g.topo[2], g.topo[3]);
        dp_graph_free(&g);
    } else {
        CHECK(0, "topo.dpg: %s", err.msg);
    }
}

static void test_doppler_text(void)
{
    /* N = 5 with 2 input ids -> 3 ops; edges 0->1, 1->2; spacing varies;
       an op type word may follow; comm is the cost of sending the output. */
    const char *txt = "5\n0, 1,\n0,1\n1,  2\n10,20\n30, 40, matmul\n50,60\n";
    dp_graph g;
    memset(&g, 0, sizeof g);
    int rc = dp_graph_read_mem(&g, txt, strlen(txt), "small.txt", DP_FORMAT_DOPPLER, &err);
    CHECK(rc == 0, "small DOPPLER text: %s", err.msg);
    if (rc) return;
    CHECK(g.n_ops == 3 && g.n_edges == 2 && g.n_ext_inputs == 2, "counts %d %d %d", g.n_ops,
          g.n_edges, g.n_ext_inputs);
    CHECK(g.compute[0] == 10 && g.compute[1] == 30 && g.compute[2] == 50, "compute");
    CHECK(g.src[0] == 0 && g.dst[0] == 1 && g.src[1] == 1 && g.dst[1] == 2, "edges");
    CHECK(g.bytes[0] == 20 && g.bytes[1] == 40, "edge bytes = comm of the source: %g %g", g.bytes[0],
          g.bytes[1]);
    CHECK(g.unit_speed == 1e10 && g.unit_bandwidth == 1e10, "DOPPLER units");
    CHECK(dp_format_detect(txt, strlen(txt)) == DP_FORMAT_DOPPLER, "detect small DOPPLER text");
    /* on 2 devices in the graph's units, op 1 alone on d1:
       op0 0-1e-9 (10/1e10), transfer 20/1e10 = 2e-9 -> 3e-9, op1 3e-9..6e-9,
       transfer 40/1e10 = 4e-9 -> 1e-8, op2 on d0 1e-8..1.5e-8 */
    dp_cluster c;
    memset(&c, 0, sizeof c);
    if (dp_cluster_for_graph(&c, &g, 2, &err) == 0) {
        int asg[3] = {0, 1, 0};
        double mk = 0;
        CHECK(dp_simulate(&g, &c, asg, NULL, &mk, &err) == 0, "simulate: %s", err.msg);
        CHECK_NEAR(mk, 1.5e-8, 1e-20, "DOPPLER small makespan in the graph's units");
        dp_cluster_free(&c);
    }
    /* write DOPPLER and read back */
    dp_graph h;
    if (write_read(&g, "fmt_small_dop.txt", DP_FORMAT_DOPPLER, DP_FORMAT_DOPPLER, &h) == 0) {
        CHECK(dp_test_graph_equal(&g, &h, 1, "small DOPPLER"), "small DOPPLER round trip");
        dp_graph_free(&h);
    }
    dp_graph_free(&g);
}

static void test_stg_text(void)
{
    /* 3 tasks + dummies 0 and 4: edges 0->1, 0->2, 1->3, 2->3, 3->4 */
    const char *txt = "3\n0 0 0\n1 5 1 0\n2 7 1 0\n3 2 2 1 2\n4 0 1 3\n# comment\n# CP Length : 14\n";
    dp_graph g;
    memset(&g, 0, sizeof g);
    int rc = dp_graph_read_mem(&g, txt, strlen(txt), "small.stg", DP_FORMAT_STG, &err);
    CHECK(rc == 0, "small STG: %s", err.msg);
    if (rc) return;
    CHECK(g.n_ops == 5 && g.n_edges == 5, "STG counts %d %d", g.n_ops, g.n_edges);
    double want_c[5] = {0, 5, 7, 2, 0};
    for (int i = 0; i < 5 && g.n_ops == 5; i++) CHECK(g.compute[i] == want_c[i], "STG cost %d", i);
    int want_e[5][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}};
    for (int k = 0; k < 5; k++) {
        int found = 0;
        for (int e = 0; e < g.n_edges; e++)
            found |= g.src[e] == want_e[k][0] && g.dst[e] == want_e[k][1] && g.bytes[e] == 0;
        CHECK(found, "STG edge %d->%d missing", want_e[k][0], want_e[k][1]);
    }
    CHECK(dp_format_detect(txt, strlen(txt)) == DP_FORMAT_STG, "detect small STG");
    /* cp: 0 + 7 + 2 + 0 = 9 on a unit cluster (the comment's 14 is not used) */
    dp_cluster c;
    memset(&c, 0, sizeof c);
    if (dp_cluster_for_graph(&c, &g, 2, &err) == 0) {
        CHECK(c.speed[0] == 1 && c.bandwidth[1] == 1, "STG units 1 1");
        dp_stats st;
        CHECK(dp_graph_stats(&g, &c, &st) == 0, "stats");
        CHECK_NEAR(st.cp_length, 9, 0, "small STG cp");
        dp_cluster_free(&c);
    }
    dp_graph h;
    if (write_read(&g, "fmt_small.stg", DP_FORMAT_STG, DP_FORMAT_STG, &h) == 0) {
        CHECK(dp_test_graph_equal(&g, &h, 0, "small STG"), "small STG round trip");
        dp_graph_free(&h);
    }
    dp_graph_free(&g);
}

static void test_reference_files(void)
{
    static const char *files[] = {"doppler/chain_mm_112nodes.txt", "doppler/ffnn_192nodes.txt",
                                  "doppler/transformer_block_215nodes.txt"};
    for (int i = 0; i < 3; i++) {
        if (!dp_test_have_data(files[i])) continue;
        char path[1024];
        dp_test_data_path(path, sizeof path, files[i]);
        dp_graph g, h, k;
        memset(&g, 0, sizeof g);
        if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &err) != 0) {
            CHECK(0, "read %s: %s", path, err.msg);
            continue;
        }
        size_t len = 0;
        char *buf = dp_test_read_file(path, &len);
        CHECK(buf && dp_format_detect(buf, len) == DP_FORMAT_DOPPLER, "detect %s", files[i]);
        free(buf);
        /* DOPPLER -> native -> read: equal, external-input count included */
        if (write_read(&g, "fmt_ref.dpg", DP_FORMAT_NATIVE, DP_FORMAT_AUTO, &h) == 0) {
            CHECK(dp_test_graph_equal(&g, &h, 1, files[i]), "%s -> native differs", files[i]);
            /* ... -> DOPPLER again -> equal */
            if (write_read(&h, "fmt_ref_again.txt", DP_FORMAT_DOPPLER, DP_FORMAT_DOPPLER, &k) == 0) {
                CHECK(dp_test_graph_equal(&g, &k, 1, files[i]), "%s -> native -> DOPPLER differs",
                      files[i]);
                dp_graph_free(&k);
            }
            dp_graph_free(&h);
        }
        /* DOPPLER -> DOPPLER -> read: equal */
        if (write_read(&g, "fmt_ref.txt", DP_FORMAT_DOPPLER, DP_FORMAT_AUTO, &h) == 0) {
            CHECK(dp_test_graph_equal(&g, &h, 1, files[i]), "%s -> DOPPLER differs", files[i]);
            CHECK(h.format == DP_FORMAT_DOPPLER, "written DOPPLER file detected as %d", (int)h.format);
            dp_graph_free(&h);
        }
        dp_graph_free(&g);
    }
}

static void test_stg_files(void)
{
    static const char *files[] = {"stg/50/rand0000.stg", "stg/50/rand0042.stg", "stg/100/rand0000.stg"};
    for (int i = 0; i < 3; i++) {
        if (!dp_test_have_data(files[i])) continue;
        char path[1024];
        dp_test_data_path(path, sizeof path, files[i]);
        dp_graph g, h, k;
        memset(&g, 0, sizeof g);
        if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &err) != 0) {
            CHECK(0, "read %s: %s", path, err.msg);
            continue;
        }
        size_t len = 0;
        char *buf = dp_test_read_file(path, &len);
        CHECK(buf && dp_format_detect(buf, len) == DP_FORMAT_STG, "detect %s", files[i]);
        free(buf);
        /* STG -> STG -> read: equal */
        if (write_read(&g, "fmt_stg_direct.stg", DP_FORMAT_STG, DP_FORMAT_AUTO, &h) == 0) {
            CHECK(dp_test_graph_equal(&g, &h, 0, files[i]), "%s -> STG differs", files[i]);
            CHECK(h.format == DP_FORMAT_STG, "written STG detected as %d", (int)h.format);
            dp_graph_free(&h);
        }
        /* STG -> native -> read -> STG -> read: equal, and the two STG
           files are byte-identical */
        if (write_read(&g, "fmt_stg.dpg", DP_FORMAT_NATIVE, DP_FORMAT_NATIVE, &h) == 0) {
            CHECK(dp_test_graph_equal(&g, &h, 0, files[i]), "%s -> native differs", files[i]);
            if (write_read(&h, "fmt_stg_via_native.stg", DP_FORMAT_STG, DP_FORMAT_STG, &k) == 0) {
                CHECK(dp_test_graph_equal(&g, &k, 0, files[i]), "%s -> native -> STG differs", files[i]);
                dp_graph_free(&k);
                char p1[256], p2[256];
                size_t l1 = 0, l2 = 0;
                char *b1 = dp_test_read_file(dp_test_tmp(p1, sizeof p1, "fmt_stg_direct.stg"), &l1);
                char *b2 = dp_test_read_file(dp_test_tmp(p2, sizeof p2, "fmt_stg_via_native.stg"), &l2);
                CHECK(b1 && b2 && l1 == l2 && memcmp(b1, b2, l1) == 0,
                      "%s: STG written directly and via native differ", files[i]);
                free(b1);
                free(b2);
            }
            dp_graph_free(&h);
        }
        dp_graph_free(&g);
    }
}

static void test_detect_and_names(void)
{
    const char *nat = "doppler-graph 1\nop a\n";
    const char *nat_c = "# leading comment\ndoppler-graph 1\nop a\n";
    CHECK(dp_format_detect(nat, strlen(nat)) == DP_FORMAT_NATIVE, "detect native");
    CHECK(dp_format_detect(nat_c, strlen(nat_c)) == DP_FORMAT_NATIVE, "detect native after a comment");
    CHECK(dp_format_from_path("x/y/graph.dpg") == DP_FORMAT_NATIVE, "from path .dpg");
    CHECK(dp_format_from_path("rand0000.stg") == DP_FORMAT_STG, "from path .stg");
    const dp_format all[3] = {DP_FORMAT_NATIVE, DP_FORMAT_DOPPLER, DP_FORMAT_STG};
    for (int i = 0; i < 3; i++) {
        const char *nm = dp_format_name(all[i]);
        dp_format back = DP_FORMAT_AUTO;
        CHECK(nm && dp_format_parse(nm, &back) == 0 && back == all[i], "format name round trip %d '%s'",
              (int)all[i], nm ? nm : "(null)");
    }
    dp_format f = DP_FORMAT_AUTO;
    CHECK(dp_format_parse("stg", &f) == 0 && f == DP_FORMAT_STG, "dp_format_parse(\"stg\")");
    CHECK(dp_format_parse("no-such-format", &f) != 0, "unknown format name accepted");

    dp_kind k = DP_OP_OPAQUE;
    CHECK(strcmp(dp_kind_name(DP_OP_MATMUL), "matmul") == 0, "kind name matmul");
    CHECK(strcmp(dp_kind_name(DP_OP_OPAQUE), "opaque") == 0, "kind name opaque");
    for (int i = 0; i < DP_KIND__COUNT; i++)
        CHECK(dp_kind_parse(dp_kind_name((dp_kind)i), &k) == 0 && k == (dp_kind)i, "kind round trip %d", i);
    CHECK(dp_kind_parse("frobnicate", &k) != 0, "unknown kind accepted");
    dp_method m;
    for (int i = 0; i < DP_METHOD__COUNT; i++)
        CHECK(dp_method_parse(dp_method_name((dp_method)i), &m) == 0 && m == (dp_method)i,
              "method round trip %d", i);
    CHECK(dp_method_parse("round-robin", &m) == 0 && m == DP_METHOD_ROUND_ROBIN, "round-robin");
    CHECK(dp_method_parse("placeto", &m) != 0, "unknown method accepted");
    CHECK(strcmp(dp_code_text(DP_ERR_PARSE), "parse error") == 0, "code text");
}

static void test_assign(void)
{
    int a[7] = {0, 3, 1, 2, 2, 0, 3}, b[7];
    char path[256];
    dp_test_tmp(path, sizeof path, "fmt_assign.txt");
    CHECK(dp_assign_write(path, a, 7, &err) == 0, "assign write: %s", err.msg);
    memset(b, 0xff, sizeof b);
    CHECK(dp_assign_read(path, 7, 4, b, &err) == 0, "assign read: %s", err.msg);
    CHECK(memcmp(a, b, sizeof a) == 0, "assignment round trip");
    /* the written file: one device per line (comments aside), in op order */
    size_t len;
    char *txt = dp_test_read_file(path, &len);
    int vals[16], lines[16], nv = 0;
    if (txt) {
        int lineno = 0;
        for (char *l = txt; *l; ) {
            char *nl = strchr(l, '\n');
            if (nl) *nl = 0;
            lineno++;
            char *h = strchr(l, '#');
            if (h) *h = 0;
            int v;
            if (sscanf(l, "%d", &v) == 1 && nv < 16) { vals[nv] = v; lines[nv++] = lineno; }
            if (!nl) break;
            l = nl + 1;
        }
        free(txt);
    }
    CHECK(nv == 7 && memcmp(vals, a, sizeof a) == 0, "assignment file holds %d values", nv);
    /* too few devices for the file */
    dp_error e2;
    memset(&e2, 0, sizeof e2);
    char at[32];
    snprintf(at, sizeof at, ":%d:", nv > 1 ? lines[1] : -1); /* op 1 holds device 3 */
    CHECK(dp_assign_read(path, 7, 3, b, &e2) == DP_ERR_RANGE && strstr(e2.msg, at),
          "device 3 of 3 accepted or misplaced (want '%s'): '%s'", at, e2.msg);
    /* comments: whole-line, trailing, before the first entry */
    const char *txt2 = "# placement for 4 ops\n1\n# op 1:\n0   # trailing comment\n  2\n1\n# end\n";
    int c[4];
    CHECK(dp_assign_read_mem(txt2, strlen(txt2), "c.assign", 4, 3, c, &err) == 0,
          "assignment with comments: %s", err.msg);
    CHECK(c[0] == 1 && c[1] == 0 && c[2] == 2 && c[3] == 1, "assignment with comments values");
}

/* Source names (the names ops had in their model): kept exactly through
   the native format and dp_graph_copy (escaped as %XX where the format
   needs it), refused by the other formats, malformed escapes refused;
   the mapping file keyed by them, duplicates as lists. Expected texts are
   written out here by hand from the rules in >>api-formats. */
static void test_sources(void)
{
    char long1[202], long2[202];
    memset(long1, 'n', 201); long1[201] = 0;
    memcpy(long2, long1, sizeof long1); long2[200] = 'm';        /* the same first 200 bytes */
    const char *s0[] = {"x", "a b", "a_b"};
    const char *s1[] = {"dup", "\xd0\xbd#=,%", long1};
    const char *s2[] = {"dup", long2, "tab\there\r\n", "\xff\xfe"};   /* the last: not UTF-8 */
    const char *const *srcs[] = {s0, s1, s2};
    int ns[] = {3, 3, 4};
    dp_graph g, h, c;
    dp_graph_init(&g);
    for (int i = 0; i < 3; i++) {
        dp_op_desc d;
        char name[16];
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "op%d", i);
        d.name = name; d.compute = i + 1; d.out_bytes = 4;
        d.source = srcs[i]; d.n_source = ns[i];
        CHECK(dp_graph_add_op(&g, &d, NULL, &err) == 0, "add op with sources: %s", err.msg);
    }
    {   /* an op without sources */
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        d.name = "plain"; d.compute = 1;
        CHECK(dp_graph_add_op(&g, &d, NULL, &err) == 0, "add plain: %s", err.msg);
    }
    CHECK(dp_graph_add_edge(&g, 0, 1, 4, &err) == 0 && dp_graph_add_edge(&g, 0, 2, 4, &err) == 0 &&
          dp_graph_add_edge(&g, 2, 3, 4, &err) == 0, "edges: %s", err.msg);
    CHECK(dp_graph_finalize(&g, &err) == 0, "finalize: %s", err.msg);
    CHECK(g.n_source[3] == 0 && dp_graph_source(&g, 3, 0) == NULL, "op without sources");
    CHECK(dp_graph_source(&g, 0, 3) == NULL && dp_graph_source(&g, 0, -1) == NULL && dp_graph_source(&g, 9, 0) == NULL,
          "dp_graph_source out of range gives NULL");
    if (write_read(&g, "fmt_sources.dpg", DP_FORMAT_NATIVE, DP_FORMAT_NATIVE, &h) == 0) {
        int same = h.n_ops == 4;
        for (int i = 0; i < 3 && same; i++) {
            same = h.n_source[i] == ns[i];
            for (int k = 0; k < ns[i] && same; k++) same = strcmp(dp_graph_source(&h, i, k), srcs[i][k]) == 0;
        }
        CHECK(same && h.n_source[3] == 0, "source names round-trip exactly through the native format");
        dp_graph_free(&h);
    }
    {   /* the op lines as written: escapes where the format needs them */
        char path[256];
        size_t len;
        dp_test_tmp(path, sizeof path, "fmt_sources.dpg");
        char *txt = dp_test_read_file(path, &len);
        CHECK(txt && strstr(txt, "op op0 compute=1 bytes=4 source=x,a%20b,a_b\n") != NULL, "op0's line: %s", txt ? txt : "");
        CHECK(txt && strstr(txt, " source=dup,\xd0\xbd%23%3D%2C%25,nnnn") != NULL, "op1's escapes");
        CHECK(txt && strstr(txt, ",tab%09here%0D%0A,\xff\xfe\n") != NULL, "op2's control bytes escaped, others as is");
        CHECK(txt && strstr(txt, "op plain compute=1\n") != NULL, "an op without sources has no source=");
        free(txt);
    }
    CHECK(dp_graph_copy(&c, &g, &err) == 0 && c.n_source[2] == 4 && strcmp(dp_graph_source(&c, 2, 3), "\xff\xfe") == 0 &&
          strcmp(dp_graph_source(&c, 1, 2), long1) == 0, "dp_graph_copy keeps source names: %s", err.msg);
    dp_graph_free(&c);
    {   /* other formats cannot carry them */
        char path[256];
        dp_error e2;
        memset(&e2, 0, sizeof e2);
        dp_test_tmp(path, sizeof path, "fmt_sources.stg");
        CHECK(dp_graph_write(&g, path, DP_FORMAT_STG, &e2) == DP_ERR_FORMAT && strstr(e2.msg, "op0") && strstr(e2.msg, "source"),
              "STG writer refuses source names: %s", e2.msg);
    }
    {   /* the mapping file */
        char path[256];
        size_t len;
        int assign[4] = {1, 0, 2, 2};
        dp_mapping_info mi;
        memset(&mi, 0, sizeof mi);
        mi.graph = "g \"q\".dpg"; mi.method = "cp"; mi.devices = 3; mi.makespan = 2.5;
        dp_test_tmp(path, sizeof path, "fmt_sources.json");
        CHECK(dp_mapping_write(path, &g, assign, &mi, &err) == 0, "mapping write: %s", err.msg);
        char *txt = dp_test_read_file(path, &len);
        char want[2048];
        snprintf(want, sizeof want,
                 "{\"format\": \"doppler-mapping 1\", \"graph\": \"g \\\"q\\\".dpg\", \"method\": \"cp\", \"devices\": 3, "
                 "\"makespan\": 2.5, \"ops\": 4, \"entries\": 11,\n \"mapping\": {\n"
                 "  \"x\": 1,\n  \"a b\": 1,\n  \"a_b\": 1,\n  \"dup\": [0, 2],\n  \"\xd0\xbd#=,%%\": 0,\n  \"%s\": 0,\n"
                 "  \"%s\": 2,\n  \"tab\\u0009here\\u000d\\u000a\": 2,\n  \"\\u00ff\\u00fe\": 2,\n  \"plain\": 2\n}}\n",
                 long1, long2);
        CHECK(txt && strcmp(txt, want) == 0, "mapping file:\n%s\nwanted:\n%s", txt ? txt : "", want);
        free(txt);
        /* no info: nulls, devices from the assignment */
        CHECK(dp_mapping_write(path, &g, assign, NULL, &err) == 0, "mapping write, no info: %s", err.msg);
        txt = dp_test_read_file(path, &len);
        const char *head = "{\"format\": \"doppler-mapping 1\", \"graph\": null, \"method\": null, \"devices\": 3, \"makespan\": null,";
        CHECK(txt && strncmp(txt, head, strlen(head)) == 0,
              "mapping without info: %.120s", txt ? txt : "");
        free(txt);
        int bad[4] = {0, -1, 0, 0};
        dp_error e2;
        memset(&e2, 0, sizeof e2);
        CHECK(dp_mapping_write(path, &g, bad, NULL, &e2) == DP_ERR_RANGE && strstr(e2.msg, "op1") && strstr(e2.msg, "-1"),
              "a negative device is refused naming the op: %s", e2.msg);
    }
    {   /* reading mappings back: the file just written, hand-written ones, refusals */
        char path[256];
        int assign[4] = {1, 0, 2, 2}, back[4] = {-1, -1, -1, -1};
        dp_test_tmp(path, sizeof path, "fmt_sources.json");
        {   /* a graph whose names are all UTF-8 round-trips */
            const char *r0[] = {"x", "a b"}, *r1[] = {"dup"}, *r2[] = {"dup", long1, "\xe3\x83\x8e#\"\\\t"};
            const char *const *rs[] = {r0, r1, r2, NULL};
            int rn[] = {2, 1, 3, 0};
            dp_graph r;
            dp_graph_init(&r);
            for (int i = 0; i < 4; i++) {
                dp_op_desc d;
                char name[16];
                memset(&d, 0, sizeof d);
                snprintf(name, sizeof name, "r%d", i);
                d.name = name; d.compute = 1; d.source = rs[i]; d.n_source = rn[i];
                CHECK(dp_graph_add_op(&r, &d, NULL, &err) == 0, "round-trip graph: %s", err.msg);
            }
            CHECK(dp_graph_finalize(&r, &err) == 0, "round-trip graph: %s", err.msg);
            CHECK(dp_mapping_write(path, &r, assign, NULL, &err) == 0 && dp_mapping_read(path, &r, 3, back, &err) == 0 &&
                  memcmp(assign, back, sizeof back) == 0, "mapping round trip: %s (%d %d %d %d)", err.msg, back[0], back[1], back[2], back[3]);
            dp_graph_free(&r);
        }
        char txt[1200];
        snprintf(txt, sizeof txt, "\xef\xbb\xbf { \"extra\": {\"a\": [1, {\"b\": null}], \"c\": \"}\"}, \"mapping\": {\"plain\": 0, \"x\": 2, "
                 "\"a b\": 2, \"a_b\": 2, \"dup\": [1, 0], \"\\u043d#=,%%\": 1, \"%s\": 1, \"%s\": 0, "
                 "\"tab\\there\\r\\n\": 0, \"\\u00ff\\u00fe\": 0}}\n", long1, long2);
        /* the last key decodes to U+00FF U+00FE, not the bytes FF FE: no entry */
        dp_error e2;
        memset(&e2, 0, sizeof e2);
        CHECK(dp_mapping_read_mem(txt, strlen(txt), "m.json", &g, 3, back, &e2) == DP_ERR_GRAPH && strstr(e2.msg, "no op's source name"),
              "a non-UTF-8 name does not come back: %s", e2.msg);
        char *cut = strstr(txt, ", \"\\u00ff");
        if (cut) strcpy(cut, "}}");
        memset(&e2, 0, sizeof e2);
        CHECK(dp_mapping_read_mem(txt, strlen(txt), "m.json", &g, 3, back, &e2) == DP_ERR_GRAPH && strstr(e2.msg, "op 'op2': no device for"),
              "an entry left out is named: %s", e2.msg);
        static const struct { const char *text, *want; dp_code code; } bad[] = {
            {"[1]", "m.json:1: a mapping file is a JSON object", DP_ERR_PARSE},
            {"{\"devices\": 3}", "no \"mapping\" object", DP_ERR_PARSE},
            {"{\"mapping\": {\"x\": 3}}", "'x': device '3' is not an integer in 0..2", DP_ERR_RANGE},
            {"{\"mapping\": {\"x\": 1.5}}", "device '1.5'", DP_ERR_PARSE},
            {"{\"mapping\": {\"nobody\": 1}}", "'nobody' is no op's source name", DP_ERR_GRAPH},
            {"{\"mapping\": {\"x\": 1, \"x\": 1}}", "'x' is given twice", DP_ERR_GRAPH},
            {"{\"mapping\": {\"dup\": 1}}", "'dup' names several entries", DP_ERR_GRAPH},
            {"{\"mapping\": {\"dup\": [1]}}", "'dup' lists 1 devices", DP_ERR_GRAPH},
            {"{\"mapping\": {\"dup\": [1, 1, 1]}}", "more than the graph's 2 entries", DP_ERR_GRAPH},
            {"{\"mapping\": {\"x\": 1, \"a b\": 0}}", "", DP_ERR_GRAPH},
            {"{\"mapping\": {\"x\": 1}} x", "text after the mapping object", DP_ERR_PARSE},
            {"{\"mapping\": {\"x\\q\": 1}}", "unknown escape", DP_ERR_PARSE},
            {"{\"mapping\": {\"x\": 1", "m.json:1: expected ',' or '}'", DP_ERR_PARSE},
            {"{\n\"mapping\":\n {\"x", "m.json:3: unterminated string", DP_ERR_PARSE},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            int keep[4] = {7, 7, 7, 7};
            memset(&e2, 0, sizeof e2);
            int rc = dp_mapping_read_mem(bad[i].text, strlen(bad[i].text), "m.json", &g, 3, keep, &e2);
            CHECK(rc == (int)bad[i].code && strstr(e2.msg, bad[i].want) && keep[0] == 7 && keep[3] == 7,
                  "mapping '%s': rc %d, '%s'", bad[i].text, rc, e2.msg);
        }
        /* an op whose names disagree */
        snprintf(txt, sizeof txt, "{\"mapping\": {\"plain\": 0, \"x\": 2, \"a b\": 1, \"a_b\": 2, \"dup\": [1, 0], \"\\u043d#=,%%\": 1, "
                 "\"%s\": 1, \"%s\": 0, \"tab\\there\\r\\n\": 0}}", long1, long2);
        memset(&e2, 0, sizeof e2);
        CHECK(dp_mapping_read_mem(txt, strlen(txt), "m.json", &g, 3, back, &e2) == DP_ERR_GRAPH &&
              strstr(e2.msg, "op 'op0': its names disagree ('a b' on device 1, an earlier one on 2)"), "disagreeing names: %s", e2.msg);
    }
    dp_graph_free(&g);
    {   /* malformed source fields: each names the line, op and entry */
        static const struct { const char *field, *want; } bad[] = {
            {"source=a,,b", "source name 1 is empty"}, {"source=a,", "source name 1 is empty"},
            {"source=", "source name 0 is empty"}, {"source=a%2", "'%2' is not an escape"},
            {"source=%GG", "'%GG' is not an escape"}, {"source=b,a%00", "'%00' is not an escape"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char txt[256];
            dp_error e2;
            memset(&e2, 0, sizeof e2);
            snprintf(txt, sizeof txt, "doppler-graph 1\nop ok compute=1\nop v compute=1 %s\n", bad[i].field);
            CHECK(dp_graph_read_mem(&h, txt, strlen(txt), "s.dpg", DP_FORMAT_NATIVE, &e2) == DP_ERR_PARSE &&
                  strstr(e2.msg, "s.dpg:3:") && strstr(e2.msg, "op 'v'") && strstr(e2.msg, bad[i].want),
                  "%s: %s", bad[i].field, e2.msg);
        }
        const char *empty[] = {"a", ""};
        dp_op_desc d;
        dp_error e2;
        memset(&d, 0, sizeof d);
        memset(&e2, 0, sizeof e2);
        dp_graph_init(&h);
        d.name = "v"; d.source = empty; d.n_source = 2;
        CHECK(dp_graph_add_op(&h, &d, NULL, &e2) == DP_ERR_ARG && strstr(e2.msg, "source name 1 is empty") && h.n_ops == 0,
              "an empty source name is refused, nothing added: %s", e2.msg);
        dp_graph_free(&h);
    }
}

/* The real-GPU presets: every figure here is worked out by hand from the
   datasheet numbers and the stated fractions in >>api-cluster (70% of the
   dense matrix peak, 90% of HBM over the bytes per FLOP, 80% of a link's
   per-direction bandwidth, 5 us per op). */
static void test_gpu_presets(void)
{
    dp_cluster c;
    dp_error e2;
    const double GiB = 1073741824.0;
    memset(&e2, 0, sizeof e2);
    CHECK(dp_cluster_preset_at(&c, "h100-sxm:4", "bf16", &e2) == 0, "h100-sxm:4 bf16: %s", e2.msg);
    if (c.n == 4) {
        CHECK_NEAR(c.speed[2], 692.58e12, 1e3, "H100 SXM bf16 matmul: 0.7 x 989.4 TFLOP/s");
        CHECK_NEAR(c.kind_speed[2 * DP_KIND__COUNT + DP_OP_MATMUL], 0, 0, "matmul uses the device speed");
        /* add: 3 bf16 elements (6 bytes) per FLOP at 0.9 x 3.35 TB/s */
        CHECK_NEAR(c.kind_speed[1 * DP_KIND__COUNT + DP_OP_ADD], 0.9 * 3.35e12 / 6, 1, "H100 add speed");
        /* softmax: 2 elements per 5 FLOPs, 0.8 bytes per FLOP */
        CHECK_NEAR(c.kind_speed[DP_OP_SOFTMAX], 0.9 * 3.35e12 / 0.8, 1, "H100 softmax speed");
        CHECK_NEAR(c.bandwidth[0 * 4 + 3], 360e9, 0, "NVLink 4: 0.8 x 450 GB/s a direction");
        CHECK_NEAR(c.latency[1 * 4 + 2], 5e-6, 0, "NVLink latency");
        CHECK_NEAR(c.latency[2 * 4 + 2], 0, 0, "no latency to itself");
        CHECK_NEAR(c.memory[3], 80 * GiB, 0, "80 GiB each");
        CHECK_NEAR(c.overhead[0], 5e-6, 0, "5 us per op");
        CHECK(c.link == DP_LINK_SERIAL && strcmp(c.name[1], "h100-sxm:1") == 0, "serial links, names '%s'", c.name[1]);
        /* an op of 1e9 FLOPs of kind add takes 5 us + 1e9 / 5.025e11 s */
        dp_graph g;
        dp_graph_init(&g);
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        d.name = "a"; d.kind = DP_OP_ADD; d.compute = 1e9;
        CHECK(dp_graph_add_op(&g, &d, NULL, &err) == 0 && dp_graph_finalize(&g, &err) == 0, "graph: %s", err.msg);
        CHECK_NEAR(dp_op_time(&g, &c, 0, 1), 5e-6 + 1e9 / 5.025e11, 1e-15, "time of a 1 GFLOP add on an H100");
        dp_graph_free(&g);
        dp_cluster_free(&c);
    }
    CHECK(dp_cluster_preset(&c, "a100-pcie", &e2) == 0 && c.n == 8, "a100-pcie: 8 devices by default: %s", e2.msg);
    if (c.n == 8) {
        CHECK_NEAR(c.speed[0], 13.65e12, 1e2, "A100 fp32 (the default): 0.7 x 19.5 TFLOP/s");
        CHECK_NEAR(c.kind_speed[5 * DP_KIND__COUNT + DP_OP_RELU], 0.9 * 1.935e12 / 8, 1, "A100 PCIe relu at fp32: 8 bytes per FLOP");
        CHECK_NEAR(c.bandwidth[7 * 8 + 6], 25.6e9, 0, "PCIe Gen4: 0.8 x 32 GB/s a direction");
        CHECK_NEAR(c.latency[0 * 8 + 1], 10e-6, 0, "PCIe latency");
        dp_cluster_free(&c);
    }
    CHECK(dp_cluster_preset_at(&c, "h200-sxm:1", "fp8", &e2) == 0 && c.n == 1, "h200-sxm:1 fp8: %s", e2.msg);
    if (c.n == 1) {
        CHECK_NEAR(c.speed[0], 0.7 * 1978.9e12, 1e3, "H200 fp8 matmul");
        CHECK_NEAR(c.kind_speed[DP_OP_COPY], 0.9 * 4.8e12 / 2, 1, "H200 copy at fp8: 2 bytes per FLOP");
        CHECK_NEAR(c.memory[0], 141 * GiB, 0, "141 GiB");
        dp_cluster_free(&c);
    }
    CHECK(dp_cluster_preset_at(&c, "h100-pcie:2", "tf32", &e2) == 0 && c.n == 2, "h100-pcie:2 tf32: %s", e2.msg);
    if (c.n == 2) {
        CHECK_NEAR(c.speed[1], 0.7 * 378e12, 1e3, "H100 PCIe tf32");
        CHECK_NEAR(c.kind_speed[DP_KIND__COUNT + DP_OP_LAYERNORM], 0.9 * 2.0e12 / 1.6, 1, "H100 PCIe layernorm, 4-byte elements");
        CHECK_NEAR(c.bandwidth[1], 51.2e9, 0, "PCIe Gen5: 0.8 x 64 GB/s");
        dp_cluster_free(&c);
    }
    static const struct { const char *name, *prec, *want; dp_code code; } bad[] = {
        {"a100-sxm:2", "fp8", "has no fp8", DP_ERR_ARG}, {"h100-sxm:9", NULL, "'9' not in 1..8", DP_ERR_RANGE},
        {"h100-sxm:0", "bf16", "'0' not in 1..8", DP_ERR_RANGE}, {"h100-sxm:x", NULL, "'x' not in 1..8", DP_ERR_RANGE},
        {"h100-sxm:4", "int8", "unknown precision 'int8'", DP_ERR_ARG},
        {"homogeneous:4", "bf16", "GPU presets only", DP_ERR_ARG}, {"h100", NULL, "unknown cluster preset 'h100'", DP_ERR_ARG},
        {"h100-sxmx", NULL, "unknown cluster preset", DP_ERR_ARG},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&e2, 0, sizeof e2);
        CHECK(dp_cluster_preset_at(&c, bad[i].name, bad[i].prec, &e2) == (int)bad[i].code && strstr(e2.msg, bad[i].want) && c.n == 0,
              "%s %s: %s", bad[i].name, bad[i].prec ? bad[i].prec : "", e2.msg);
    }
}

/* Nodes (machines): devices split into nodes, the links between nodes
   their own bandwidth and latency; a transfer across nodes against one
   inside a node worked out by hand; the file round trip. */
static void test_cluster_nodes(void)
{
    dp_cluster c, d;
    dp_error e2;
    memset(&e2, 0, sizeof e2);
    CHECK(dp_cluster_homogeneous(&c, 6, 1, 1e10, 1e-6, &err) == 0, "cluster: %s", err.msg);
    CHECK(dp_cluster_set_nodes(&c, 2, 1e9, 2e-5, &err) == 0, "set_nodes: %s", err.msg);
    CHECK(c.node[0] == 0 && c.node[2] == 0 && c.node[3] == 1 && c.node[5] == 1, "6 devices in 2 nodes: 0-2, 3-5");
    /* 1e8 bytes: inside a node 1e-6 + 1e8 / 1e10 = 0.010001 s; across
       2e-5 + 1e8 / 1e9 = 0.10002 s */
    CHECK_NEAR(dp_xfer_time(&c, 1e8, 1, 2), 0.010001, 1e-12, "a transfer inside node 0");
    CHECK_NEAR(dp_xfer_time(&c, 1e8, 2, 3), 0.10002, 1e-12, "a transfer from node 0 to node 1");
    CHECK_NEAR(dp_xfer_time(&c, 1e8, 5, 0), 0.10002, 1e-12, "a transfer from node 1 to node 0");
    {   /* two ops, 1e8 bytes between them, each 1 s: on devices 1 and 2
           the simulated makespan is 2.010001 s, on 2 and 3 2.10002 s */
        dp_graph g;
        dp_op_desc o;
        int as[2] = {1, 2}, bs[2] = {2, 3};
        double ms = 0;
        dp_graph_init(&g);
        memset(&o, 0, sizeof o);
        o.name = "a"; o.compute = 1; o.out_bytes = 1e8;
        CHECK(dp_graph_add_op(&g, &o, NULL, &err) == 0, "%s", err.msg);
        o.name = "b";
        CHECK(dp_graph_add_op(&g, &o, NULL, &err) == 0 && dp_graph_add_edge(&g, 0, 1, 1e8, &err) == 0 &&
              dp_graph_finalize(&g, &err) == 0, "%s", err.msg);
        CHECK(dp_simulate(&g, &c, as, NULL, &ms, &err) == 0, "%s", err.msg);
        CHECK_NEAR(ms, 2.010001, 1e-12, "makespan inside a node");
        CHECK(dp_simulate(&g, &c, bs, NULL, &ms, &err) == 0, "%s", err.msg);
        CHECK_NEAR(ms, 2.10002, 1e-12, "makespan across nodes");
        dp_graph_free(&g);
    }
    {   /* the file: written with node=, read back the same */
        char path[256];
        dp_test_tmp(path, sizeof path, "fmt_nodes.dpc");
        CHECK(dp_cluster_write(&c, path, &err) == 0 && dp_cluster_read(&d, path, &err) == 0, "nodes file: %s", err.msg);
        CHECK(d.n == 6 && d.node[4] == 1 && d.node[1] == 0 && d.bandwidth[1 * 6 + 4] == 1e9 && d.latency[4 * 6 + 0] == 2e-5 &&
              d.bandwidth[3 * 6 + 5] == 1e10, "nodes file round trip");
        dp_cluster_free(&d);
    }
    {   /* the common case in two lines */
        const char *txt = "doppler-cluster 1\ndevices 8\nbandwidth 3e11\nlatency 5e-6\nnodes 2\ninternode bandwidth=2.5e10 latency=1e-5\n";
        CHECK(dp_cluster_read_mem(&d, txt, strlen(txt), "n.dpc", &err) == 0, "nodes lines: %s", err.msg);
        CHECK(d.n == 8 && d.node[3] == 0 && d.node[4] == 1 && d.bandwidth[0 * 8 + 3] == 3e11 && d.bandwidth[3 * 8 + 4] == 2.5e10 &&
              d.latency[7 * 8 + 0] == 1e-5 && d.latency[7 * 8 + 6] == 5e-6, "nodes 2 of 8, internode links");
        dp_cluster_free(&d);
        static const struct { const char *text, *want; } bad[] = {
            {"doppler-cluster 1\nnodes 2\ndevices 4\n", "'nodes' before 'devices N'"},
            {"doppler-cluster 1\ndevices 4\nnodes 5\n", "nodes '5' not in 1..4"},
            {"doppler-cluster 1\ndevices 4\nnodes 2\ninternode bandwidth=0\n", "internode bandwidth '0' must be a positive number"},
            {"doppler-cluster 1\ndevices 4\ninternode speed=1\n", "unknown field 'speed=1'"},
            {"doppler-cluster 1\ndevices 4\ndevice 1 node=4\n", "node '4' not in 0..3"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            memset(&e2, 0, sizeof e2);
            CHECK(dp_cluster_read_mem(&d, bad[i].text, strlen(bad[i].text), "n.dpc", &e2) != 0 && strstr(e2.msg, bad[i].want),
                  "'%s': %s", bad[i].want, e2.msg);
        }
    }
    memset(&e2, 0, sizeof e2);
    CHECK(dp_cluster_set_nodes(&c, 7, 1e9, 0, &e2) == DP_ERR_RANGE && strstr(e2.msg, "7 nodes for 6 devices"), "7 nodes: %s", e2.msg);
    CHECK(dp_cluster_set_nodes(&c, 2, 0, 0, &e2) == DP_ERR_RANGE, "zero bandwidth refused");
    dp_cluster_free(&c);
}


static void test_cluster_files(void)
{
    const char *txt =
        "# three devices\n"
        "doppler-cluster 1\n"
        "devices 3\n"
        "link serial\n"
        "speed 2\n"
        "bandwidth 10\n"
        "latency 0.5\n"
        "memory 1e9\n"
        "device 1 name=gpu1 speed=4 memory=2e9\n"
        "pair 0 2 bandwidth=5 latency=1   # one direction only\n";
    dp_cluster c;
    memset(&c, 0, sizeof c);
    int rc = dp_cluster_read_mem(&c, txt, strlen(txt), "three.dpc", &err);
    CHECK(rc == 0, "three.dpc: %s", err.msg);
    if (rc) return;
    CHECK(c.n == 3 && c.link == DP_LINK_SERIAL, "n %d link %d", c.n, (int)c.link);
    CHECK(c.speed[0] == 2 && c.speed[1] == 4 && c.speed[2] == 2, "speeds %g %g %g", c.speed[0],
          c.speed[1], c.speed[2]);
    CHECK(c.memory[0] == 1e9 && c.memory[1] == 2e9 && c.memory[2] == 1e9, "memory");
    CHECK(strcmp(c.name[1], "gpu1") == 0, "device 1 name '%s'", c.name[1]);
    CHECK(c.bandwidth[0 * 3 + 2] == 5 && c.latency[0 * 3 + 2] == 1, "pair 0 2");
    CHECK(c.bandwidth[2 * 3 + 0] == 10 && c.latency[2 * 3 + 0] == 0.5, "pair 2 0 keeps the defaults");
    CHECK(c.bandwidth[1 * 3 + 2] == 10 && c.latency[1 * 3 + 0] == 0.5, "other pairs");
    /* 20 bytes 0 -> 2: 1 + 20/5 = 5; 2 -> 0: 0.5 + 20/10 = 2.5 */
    CHECK_NEAR(dp_xfer_time(&c, 20, 0, 2), 5, 0, "xfer 0->2");
    CHECK_NEAR(dp_xfer_time(&c, 20, 2, 0), 2.5, 0, "xfer 2->0");
    /* write and read back */
    char path[256];
    dp_test_tmp(path, sizeof path, "fmt_three.dpc");
    CHECK(dp_cluster_write(&c, path, &err) == 0, "cluster write: %s", err.msg);
    dp_cluster d;
    memset(&d, 0, sizeof d);
    if (dp_cluster_read(&d, path, &err) == 0) {
        int same = d.n == c.n && d.link == c.link;
        for (int i = 0; same && i < c.n; i++) {
            same &= dp_test_same_double(c.speed[i], d.speed[i]) && dp_test_same_double(c.memory[i], d.memory[i]) &&
                    strcmp(c.name[i], d.name[i]) == 0;
            for (int j = 0; j < c.n; j++)
                if (i != j)
                    same &= dp_test_same_double(c.bandwidth[i * 3 + j], d.bandwidth[i * 3 + j]) &&
                            dp_test_same_double(c.latency[i * 3 + j], d.latency[i * 3 + j]);
        }
        CHECK(same, "cluster round trip differs");
        dp_cluster_free(&d);
    } else {
        CHECK(0, "cluster read back: %s", err.msg);
    }
    dp_cluster_free(&c);

    /* presets */
    memset(&c, 0, sizeof c);
    if (dp_cluster_preset(&c, "reference", &err) == 0) {
        int ok = c.n == 4 && c.link == DP_LINK_FREE;
        for (int i = 0; ok && i < 4; i++) {
            ok &= c.speed[i] == 1e10 && c.memory[i] == 0;
            for (int j = 0; j < 4; j++)
                if (i != j) ok &= c.bandwidth[i * 4 + j] == 1e10 && c.latency[i * 4 + j] == 0;
        }
        CHECK(ok, "preset 'reference' is not 4 x 1e10 with free links");
        dp_cluster_free(&c);
    } else {
        CHECK(0, "preset reference: %s", err.msg);
    }
    memset(&c, 0, sizeof c);
    if (dp_cluster_preset(&c, "homogeneous:3", &err) == 0) {
        CHECK(c.n == 3 && c.speed[2] == 1 && c.bandwidth[1] == 1, "preset homogeneous:3");
        dp_cluster_free(&c);
    } else {
        CHECK(0, "preset homogeneous:3: %s", err.msg);
    }
    memset(&c, 0, sizeof c);
    dp_error e2;
    memset(&e2, 0, sizeof e2);
    CHECK(dp_cluster_preset(&c, "warp-drive", &e2) != 0 && strstr(e2.msg, "warp-drive"),
          "unknown preset accepted: '%s'", e2.msg);
    dp_cluster_free(&c);
    memset(&c, 0, sizeof c);
    CHECK(dp_cluster_preset(&c, "homogeneous:0", &e2) != 0, "homogeneous:0 accepted");
    dp_cluster_free(&c);
    memset(&c, 0, sizeof c);
    CHECK(dp_cluster_homogeneous(&c, DP_MAX_DEVICES + 1, 1, 1, 0, &e2) != 0 && e2.code == DP_ERR_LIMIT,
          "%d devices accepted", DP_MAX_DEVICES + 1);
    dp_cluster_free(&c);
}

/* The calibrated cost model, by hand: overhead + compute / speed, the speed
   from the kind's curve (linear in ln work, the end speeds outside), else
   the kind's single speed, else the device's; per-device times exact. */
static void test_cluster_cost_model(void)
{
    const char *txt =
        "doppler-cluster 1\n"
        "devices 2\n"
        "speed 2\n"
        "overhead 0.5\n"
        "device 1 overhead=0.25\n"
        "kindspeed all matmul 100:1 10000:3\n"
        "kindspeed 1 relu 4\n"
        "kindspeed 0 add 8\n"
        "kindspeed 0 add 10:1 1000:5 100000:6\n"   /* a curve replaces the single speed */
        "kindspeed 1 mul 10:1 1000:5\n"
        "kindspeed 1 mul 7\n";                     /* and a single speed the curve */
    dp_cluster c;
    memset(&c, 0, sizeof c);
    int rc = dp_cluster_read_mem(&c, txt, strlen(txt), "model.dpc", &err);
    CHECK(rc == 0, "model.dpc: %s", err.msg);
    if (rc) return;
    CHECK(c.overhead[0] == 0.5 && c.overhead[1] == 0.25, "overheads %g %g", c.overhead[0], c.overhead[1]);
    dp_graph g;
    dp_graph_init(&g);
    const double dt[2] = {7, -1};
    int mm1k = add_op(&g, "mm1k", DP_OP_MATMUL, 1000, 0, 0, NULL, 0);
    int mm50 = add_op(&g, "mm50", DP_OP_MATMUL, 50, 0, 0, NULL, 0);
    int mm1e5 = add_op(&g, "mm1e5", DP_OP_MATMUL, 1e5, 0, 0, NULL, 0);
    int mm10k = add_op(&g, "mm10k", DP_OP_MATMUL, 10000, 0, 0, NULL, 0);
    int relu = add_op(&g, "relu", DP_OP_RELU, 8, 0, 0, NULL, 0);
    int opq = add_op(&g, "opq", DP_OP_OPAQUE, 6, 0, 0, NULL, 0);
    int add = add_op(&g, "add", DP_OP_ADD, 100, 0, 0, NULL, 0);
    int mul = add_op(&g, "mul", DP_OP_MUL, 14, 0, 0, NULL, 0);
    int zero = add_op(&g, "zero", DP_OP_MATMUL, 0, 0, 0, NULL, 0);
    CHECK(dp_graph_finalize(&g, &err) == 0, "finalize: %s", err.msg);
    /* 1000 is halfway between 100 and 10000 in ln: speed 2 */
    CHECK_NEAR(dp_op_time(&g, &c, mm1k, 0), 0.5 + 500, 1e-9, "matmul 1000 on 0");
    CHECK_NEAR(dp_op_time(&g, &c, mm1k, 1), 0.25 + 500, 1e-9, "matmul 1000 on 1");
    CHECK_NEAR(dp_op_time(&g, &c, mm50, 0), 0.5 + 50, 0, "matmul below the curve: its first speed");
    CHECK_NEAR(dp_op_time(&g, &c, mm1e5, 0), 0.5 + 1e5 / 3, 0, "matmul above the curve: its last speed");
    CHECK_NEAR(dp_op_time(&g, &c, mm10k, 0), 0.5 + 10000.0 / 3, 0, "matmul on the last point");
    CHECK_NEAR(dp_op_time(&g, &c, relu, 0), 0.5 + 4, 0, "relu on 0: the device speed 2");
    CHECK_NEAR(dp_op_time(&g, &c, relu, 1), 0.25 + 2, 0, "relu on 1: its kind speed 4");
    CHECK_NEAR(dp_op_time(&g, &c, opq, 1), 0.25 + 3, 0, "opaque: the device speed");
    /* add 100 on 0: halfway between 10 and 1000 in ln -> speed 3 */
    CHECK_NEAR(dp_op_time(&g, &c, add, 0), 0.5 + 100.0 / 3, 1e-9, "add: the curve that replaced the speed");
    CHECK_NEAR(dp_op_time(&g, &c, mul, 1), 0.25 + 2, 0, "mul: the speed that replaced the curve");
    CHECK_NEAR(dp_op_time(&g, &c, zero, 1), 0.25, 0, "no work: the overhead alone");
    /* write and read back: bitwise the same model */
    char path[256];
    dp_test_tmp(path, sizeof path, "fmt_model.dpc");
    CHECK(dp_cluster_write(&c, path, &err) == 0, "write: %s", err.msg);
    dp_cluster d;
    memset(&d, 0, sizeof d);
    if (dp_cluster_read(&d, path, &err) == 0) {
        int same = d.n == 2;
        for (int i = 0; same && i < 2; i++) {
            same &= dp_test_same_double(c.overhead[i], d.overhead[i]);
            for (int k = 0; k < DP_KIND__COUNT; k++) {
                size_t at = (size_t)i * DP_KIND__COUNT + k;
                same &= c.curve_len[at] == d.curve_len[at] && dp_test_same_double(c.kind_speed[at], d.kind_speed[at]);
                for (int j = 0; same && j < c.curve_len[at]; j++)
                    same &= dp_test_same_double(c.curve[at * DP_MAX_CURVE + j].work, d.curve[at * DP_MAX_CURVE + j].work) &&
                            dp_test_same_double(c.curve[at * DP_MAX_CURVE + j].speed, d.curve[at * DP_MAX_CURVE + j].speed);
            }
        }
        CHECK(same, "cost model round trip differs");
        for (int v = 0; v < g.n_ops; v++)
            for (int k = 0; k < 2; k++)
                CHECK(dp_op_time(&g, &c, v, k) == dp_op_time(&g, &d, v, k), "op %d on %d: time differs after the round trip", v, k);
        dp_cluster_free(&d);
    } else CHECK(0, "read back: %s", err.msg);
    /* awkward doubles survive too */
    dp_speed_point pts[3] = {{0.1, 1.0 / 3}, {0.7, 2.0 / 3}, {1e300, DBL_MAX}};
    CHECK(dp_cluster_set_curve(&c, 1, DP_OP_SILU, pts, 3, &err) == 0, "set_curve: %s", err.msg);
    CHECK(dp_cluster_write(&c, path, &err) == 0, "write: %s", err.msg);
    memset(&d, 0, sizeof d);
    if (dp_cluster_read(&d, path, &err) == 0) {
        size_t at = (size_t)1 * DP_KIND__COUNT + DP_OP_SILU;
        int same = d.curve_len[at] == 3 && d.curve_len[DP_OP_SILU] == 0;
        for (int j = 0; same && j < 3; j++)
            same &= dp_test_same_double(d.curve[at * DP_MAX_CURVE + j].work, pts[j].work) &&
                    dp_test_same_double(d.curve[at * DP_MAX_CURVE + j].speed, pts[j].speed);
        CHECK(same, "awkward curve round trip differs");
        dp_cluster_free(&d);
    } else CHECK(0, "read back: %s", err.msg);
    /* dp_cluster_set_curve refuses what the reader refuses */
    dp_speed_point bad[2] = {{10, 1}, {10, 2}};
    CHECK(dp_cluster_set_curve(&c, 0, DP_OP_RELU, bad, 2, &err) == DP_ERR_RANGE, "equal works accepted");
    bad[1].work = 20; bad[1].speed = -1;
    CHECK(dp_cluster_set_curve(&c, 0, DP_OP_RELU, bad, 2, &err) == DP_ERR_RANGE, "negative speed accepted");
    bad[1].speed = HUGE_VAL;
    CHECK(dp_cluster_set_curve(&c, 0, DP_OP_RELU, bad, 2, &err) == DP_ERR_RANGE, "infinite speed accepted");
    CHECK(dp_cluster_set_curve(&c, 2, DP_OP_RELU, bad, 1, &err) == DP_ERR_RANGE, "device 2 of 2 accepted");
    CHECK(dp_cluster_set_curve(&c, 0, DP_OP_RELU, bad, DP_MAX_CURVE + 1, &err) == DP_ERR_LIMIT, "too many points accepted");
    /* setting every device at once; then clearing one: the plain model there */
    CHECK(dp_cluster_set_curve(&c, -1, DP_OP_RELU, bad, 1, &err) == 0, "set_curve all: %s", err.msg);
    CHECK_NEAR(dp_op_time(&g, &c, relu, 0), 0.5 + 8, 0, "relu on 0 at the 1-point curve's speed 1");
    CHECK_NEAR(dp_op_time(&g, &c, relu, 1), 0.25 + 8, 0, "relu on 1: the curve replaced kind speed 4");
    CHECK(dp_cluster_set_curve(&c, 1, DP_OP_RELU, NULL, 0, &err) == 0, "clear: %s", err.msg);
    CHECK_NEAR(dp_op_time(&g, &c, relu, 1), 0.25 + 4, 0, "relu on 1 after clearing: the device speed");
    /* the simulator charges the same: relu then mm1k on device 1 in a chain */
    dp_graph h;
    dp_graph_init(&h);
    int a0 = add_op(&h, "a", DP_OP_RELU, 8, 0, 0, NULL, 0);
    int a1 = add_op(&h, "b", DP_OP_MATMUL, 1000, 0, 0, NULL, 0);
    CHECK(dp_graph_add_edge(&h, a0, a1, 0, &err) == 0 && dp_graph_finalize(&h, &err) == 0, "chain: %s", err.msg);
    int asg[2] = {1, 1};
    double ms = 0;
    CHECK(dp_simulate(&h, &c, asg, NULL, &ms, &err) == 0, "simulate: %s", err.msg);
    CHECK_NEAR(ms, (0.25 + 4) + (0.25 + 500), 1e-9, "makespan of relu + matmul on device 1");
    /* a per-device time is taken as it is, no overhead; -1 = the model */
    dp_graph k;
    dp_graph_init(&k);
    const double dt2[2] = {-1, -1};
    int t0 = add_op(&k, "t0", DP_OP_MATMUL, 1, 0, 0, dt, 2);
    int t1 = add_op(&k, "t1", DP_OP_MATMUL, 1, 0, 0, dt2, 2);
    CHECK(dp_graph_finalize(&k, &err) == 0, "finalize: %s", err.msg);
    CHECK_NEAR(dp_op_time(&k, &c, t0, 0), 7, 0, "time= on device 0");
    CHECK_NEAR(dp_op_time(&k, &c, t0, 1), 0.25 + 1, 0, "time -1 on device 1: matmul 1 below the curve, speed 1");
    CHECK_NEAR(dp_op_time(&k, &c, t1, 0), 0.5 + 1, 0, "time -1 on device 0");
    dp_graph_free(&k);
    dp_graph_free(&h);
    dp_graph_free(&g);
    dp_cluster_free(&c);
}

/* A UTF-8 byte-order mark at the start of any text input is skipped (as
   some editors save files), with CRLF line ends too; elsewhere it is text.
   Values: the native graph a(2) -> b(3) carrying 5 bytes; DOPPLER 3
   nodes, input 0, ops 7,1 and 9,2 with edge 0 -> 1; STG tasks 0..3 with
   costs 0 4 6 0. */
static void test_bom(void)
{
    static const char nat[] = "\xEF\xBB\xBF" "doppler-graph 1\r\nop a compute=2\r\nop b compute=3\r\nedge a b bytes=5\r\n";
    static const char dop[] = "\xEF\xBB\xBF" "3\n0,\n0,\n1,\n7,1\n9,2\n";
    static const char stg[] = "\xEF\xBB\xBF" "2\n0 0 0\n1 4 1 0\n2 6 1 1\n3 0 1 2\n";
    static const char clu[] = "\xEF\xBB\xBF" "doppler-cluster 1\r\ndevices 2\r\nspeed 4\r\n";
    static const char asg[] = "\xEF\xBB\xBF" "1\r\n0\r\n";
    dp_graph g;
    dp_cluster c;
    int a[2] = {-1, -1};
    CHECK(dp_format_detect(nat, sizeof nat - 1) == DP_FORMAT_NATIVE, "detect: native after a BOM");
    CHECK(dp_format_detect(dop, sizeof dop - 1) == DP_FORMAT_DOPPLER, "detect: DOPPLER after a BOM");
    CHECK(dp_format_detect(stg, sizeof stg - 1) == DP_FORMAT_STG, "detect: STG after a BOM");
    for (int forced = 0; forced < 2; forced++) {
        int rc = dp_graph_read_mem(&g, nat, sizeof nat - 1, "bom.dpg", forced ? DP_FORMAT_NATIVE : DP_FORMAT_AUTO, &err);
        CHECK(rc == 0 && g.n_ops == 2 && g.n_edges == 1 && !strcmp(g.name[0], "a") && g.compute[0] == 2 &&
              g.compute[1] == 3 && g.bytes[0] == 5, "native with a BOM and CRLF (format %s): rc %d '%s'",
              forced ? "native" : "auto", rc, err.msg);
        dp_graph_free(&g);
        rc = dp_graph_read_mem(&g, dop, sizeof dop - 1, "bom.txt", forced ? DP_FORMAT_DOPPLER : DP_FORMAT_AUTO, &err);
        CHECK(rc == 0 && g.n_ops == 2 && g.n_edges == 1 && g.n_ext_inputs == 1 && g.compute[0] == 7 && g.compute[1] == 9 &&
              g.bytes[0] == 1, "DOPPLER with a BOM: rc %d '%s'", rc, err.msg);
        dp_graph_free(&g);
        rc = dp_graph_read_mem(&g, stg, sizeof stg - 1, "bom.stg", forced ? DP_FORMAT_STG : DP_FORMAT_AUTO, &err);
        CHECK(rc == 0 && g.n_ops == 4 && g.n_edges == 3 && g.compute[1] == 4 && g.compute[2] == 6,
              "STG with a BOM: rc %d '%s'", rc, err.msg);
        dp_graph_free(&g);
    }
    int rc = dp_cluster_read_mem(&c, clu, sizeof clu - 1, "bom.dpc", &err);
    CHECK(rc == 0 && c.n == 2 && c.speed[0] == 4 && c.speed[1] == 4, "cluster with a BOM: rc %d '%s'", rc, err.msg);
    dp_cluster_free(&c);
    rc = dp_assign_read_mem(asg, sizeof asg - 1, "bom.assign", 2, 2, a, &err);
    CHECK(rc == 0 && a[0] == 1 && a[1] == 0, "assignment with a BOM: rc %d '%s'", rc, err.msg);
    /* from a file, as the CLI reads it */
    char path[256];
    dp_test_tmp(path, sizeof path, "fmt_bom.dpg");
    dp_test_write_file(path, nat, sizeof nat - 1);
    rc = dp_graph_read(&g, path, DP_FORMAT_AUTO, &err);
    CHECK(rc == 0 && g.n_ops == 2, "native file with a BOM: rc %d '%s'", rc, err.msg);
    dp_graph_free(&g);
    remove(path);
    /* only at the start: a second mark is an unknown record, on line 2 */
    static const char two[] = "\xEF\xBB\xBF" "doppler-graph 1\n\xEF\xBB\xBF" "op a\n";
    rc = dp_graph_read_mem(&g, two, sizeof two - 1, "two.dpg", DP_FORMAT_AUTO, &err);
    CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "two.dpg:2:"), "a mark inside the file: rc %d '%s'", rc, err.msg);
    dp_graph_free(&g);
}

int main(void)
{
    memset(&err, 0, sizeof err);
    test_native_roundtrip();
    test_native_syntax();
    test_doppler_text();
    test_stg_text();
    test_reference_files();
    test_stg_files();
    test_detect_and_names();
    test_assign();
    test_sources();
    test_cluster_files();
    test_gpu_presets();
    test_cluster_nodes();
    test_cluster_cost_model();
    test_bom();
    return dp_test_done();
}
