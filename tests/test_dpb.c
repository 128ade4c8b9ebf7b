/* test_dpb.c - the binary graph format (.dpb, DP_FORMAT_BINARY).

   - Round trips: every graph of graphs/, the readable native files of
     tests/corpus/, generated workloads with weights and a graph with every
     field (per-device times, source names, units, shapes, kinds, -0.0)
     written as .dpb and read back (from a file, mapped, from an unaligned
     buffer and through a pipe) write the same native text as the graph
     they came from, and the .dpb file written again is the same bytes.
   - The layout, checked against >>api-formats by code of its own: the
     header's fields, the section table, the sections' bytes, the
     checksums computed as the documentation says, sections of zeros left
     empty.
   - Corruption: the file cut at every length, every byte flipped (refused,
     or a padding byte, which nothing reads), and each kind of fault made
     with checksums that agree (so that the check behind the checksum is
     the one that refuses it): huge counts, offsets past the end, sizes
     that disagree, values out of range, a repeated name or edge; each
     refused with its code and a message naming the file, the offset and
     the value. Run under ASan (./build.sh sanitize): nothing leaks.
   - Formats: detection by content and by name, --format binary forced on
     text and text formats forced on a .dpb. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

static dp_error err;

/* ---- the layout, read as >>api-formats describes it ------------------- */
static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }
static void put32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static void put64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static double f64(const unsigned char *p) { uint64_t u = le64(p); double d; memcpy(&d, &u, 8); return d; }

/* The checksum as documented: words little-endian, the last padded. */
typedef struct { uint64_t h, n; } sum_t;
static void sum_init(sum_t *s) { s->h = 0x9E3779B97F4A7C15ULL; s->n = 0; }
static void sum_bytes(sum_t *s, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        unsigned char w[8] = {0};
        memcpy(w, p + i, n - i < 8 ? n - i : 8);
        s->h = (s->h ^ le64(w)) * 0xBF58476D1CE4E5B9ULL;
        s->h ^= s->h >> 31;
    }
    s->n += n;
}
static uint64_t sum_end(const sum_t *s)
{
    uint64_t z = s->h ^ s->n;
    z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27; z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static const char *const TAGS[19] = { "opname", "opkind", "compute", "outbytes", "mem", "resident", "rows", "cols", "arg",
                                      "devtime", "nsource", "source", "src", "dst", "bytes", "wname", "wbytes", "useop", "usewt" };
enum { S_NAME, S_KIND, S_COMPUTE, S_OUT, S_MEM, S_RES, S_ROWS, S_COLS, S_ARG, S_DEVTIME, S_NSOURCE, S_SOURCE,
       S_SRC, S_DST, S_BYTES, S_WNAME, S_WBYTES, S_USEOP, S_USEWT };

static uint64_t sec_off(const unsigned char *b, int s) { return le64(b + 80 + 32 * s + 8); }
static uint64_t sec_len(const unsigned char *b, int s) { return le64(b + 80 + 32 * s + 16); }

/* After an edit of the file b: the checksums of section s (-1: none) and
   of the header made right again. */
static void reseal(unsigned char *b, int s)
{
    sum_t h;
    if (s >= 0) {
        sum_init(&h);
        sum_bytes(&h, b + sec_off(b, s), (size_t)sec_len(b, s));
        put64(b + 80 + 32 * s + 24, sum_end(&h));
    }
    sum_init(&h);
    sum_bytes(&h, b, 72);
    sum_bytes(&h, b + 80, 32 * 19);
    put64(b + 72, sum_end(&h));
}

/* ---- helpers ------------------------------------------------------------- */
/* g written in format fmt, in memory (NULL on failure); *len its size */
static char *written(const dp_graph *g, dp_format fmt, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return NULL;
    int rc = dp_graph_write_file(g, f, fmt, &err);
    fclose(f);
    if (rc) { free(buf); return NULL; }
    if (len) *len = n;
    return buf;
}

static char *native_text(const dp_graph *g, size_t *len) { return written(g, DP_FORMAT_NATIVE, len); }
static unsigned char *dpb_bytes(const dp_graph *g, size_t *len) { return (unsigned char *)written(g, DP_FORMAT_BINARY, len); }

/* Reads b[0..n) as .dpb from memory: rc, the message in err */
static int read_dpb(dp_graph *g, const unsigned char *b, size_t n, dp_format fmt)
{
    return dp_graph_read_mem(g, (const char *)b, n, "t.dpb", fmt, &err);
}

/* g written as .dpb, read back four ways, each the same native text */
static void roundtrip(const dp_graph *g, const char *what)
{
    size_t nl = 0, bl = 0, bl2 = 0;
    char *text = native_text(g, &nl), path[512], *back;
    unsigned char *bin = dpb_bytes(g, &bl), *bin2 = NULL, *odd;
    dp_graph h;
    CHECK(text && bin, "%s: writing: %s", what, err.msg);
    if (!text || !bin) { free(text); free(bin); return; }
    /* 1. from memory */
    int rc = read_dpb(&h, bin, bl, DP_FORMAT_AUTO);
    CHECK(rc == 0, "%s: reading the .dpb back: %s", what, err.msg);
    if (rc == 0) {
        back = native_text(&h, NULL);
        CHECK(back && strcmp(back, text) == 0, "%s: dpg -> dpb -> dpg differs", what);
        CHECK(dp_test_graph_equal(g, &h, 1, what), "%s: the graph read back differs", what);
        CHECK(h.format == DP_FORMAT_BINARY, "%s: format %s", what, dp_format_name(h.format));
        CHECK(h.n_ops == 0 || dp_graph_find(&h, g->name[g->n_ops - 1]) == g->n_ops - 1, "%s: the name index", what);
        for (int v = 0; v < g->n_ops; v++)
            for (int i = 0; i < g->n_source[v]; i++)
                CHECK(strcmp(dp_graph_source(g, v, i), dp_graph_source(&h, v, i)) == 0, "%s: op %d source %d", what, v, i);
        bin2 = dpb_bytes(&h, &bl2);
        CHECK(bin2 && bl2 == bl && memcmp(bin, bin2, bl) == 0, "%s: the .dpb written again differs", what);
        free(back);
        dp_graph_free(&h);
    }
    /* 2. from an unaligned buffer */
    odd = (unsigned char *)malloc(bl + 1);
    memcpy(odd + 1, bin, bl);
    rc = read_dpb(&h, odd + 1, bl, DP_FORMAT_BINARY);
    CHECK(rc == 0, "%s: from an unaligned buffer: %s", what, err.msg);
    if (rc == 0) { back = native_text(&h, NULL); CHECK(back && !strcmp(back, text), "%s: unaligned read differs", what); free(back); dp_graph_free(&h); }
    free(odd);
    /* 3. from a file (mapped), by the library's writer (.dpb by name) */
    dp_test_tmp(path, sizeof path, "dpb_rt.dpb");
    rc = dp_graph_write(g, path, DP_FORMAT_AUTO, &err);
    CHECK(rc == 0, "%s: dp_graph_write .dpb: %s", what, err.msg);
    {
        size_t fl = 0;
        char *f = dp_test_read_file(path, &fl);
        CHECK(f && fl == bl && memcmp(f, bin, bl) == 0, "%s: the file written by name is not the .dpb", what);
        free(f);
    }
    rc = dp_graph_read(&h, path, DP_FORMAT_AUTO, &err);
    CHECK(rc == 0, "%s: reading %s: %s", what, path, err.msg);
    if (rc == 0) { back = native_text(&h, NULL); CHECK(back && !strcmp(back, text), "%s: file read differs", what); free(back); dp_graph_free(&h); }
    free(text); free(bin); free(bin2);
}

/* A graph with every field a native file has. */
static int build_full(dp_graph *g)
{
    static const char *const src_a[2] = {"onnx/Conv 1", "x,y=%#"}, *const src_c[1] = {"\xff\xfe raw"};
    const double t[5][3] = {{1, 2.5, -1}, {0.1, 0.2, 0.3}, {-0.0, 0, 1e-300}, {7, 8, 9}, {1e300, 2, 3}};
    int id, w0, w1, rc = 0;
    dp_graph_init(g);
    rc |= dp_graph_add_weight(g, "w0", 4096, &w0, &err);
    rc |= dp_graph_add_weight(g, "w1", 0.5, &w1, &err);
    for (int i = 0; i < 5 && !rc; i++) {
        dp_op_desc d;
        char nm[16];
        memset(&d, 0, sizeof d);
        snprintf(nm, sizeof nm, "op%d", i);
        d.name = nm;
        d.kind = i == 1 ? DP_OP_MATMUL : i == 3 ? DP_OP_SPLIT : DP_OP_OPAQUE;
        d.compute = i == 2 ? -0.0 : 0.1 * (i + 1);
        d.out_bytes = i == 4 ? 0 : 1e22 / (i + 1);
        d.mem_bytes = i == 1 ? 128 : 0;
        d.resident = i == 3 ? 9007199254740993.0 : 0;
        if (i == 1 || i == 3) { d.rows = 4; d.cols = 2 * i; }
        d.arg = i == 3 ? 1 : 0;
        d.dev_time = t[i]; d.n_dev_time = 3;
        if (i == 0) { d.source = src_a; d.n_source = 2; }
        if (i == 2) { d.source = src_c; d.n_source = 1; }
        rc |= dp_graph_add_op(g, &d, &id, &err);
    }
    rc = rc || dp_graph_use_weight(g, 0, w0, &err) || dp_graph_use_weight(g, 0, w1, &err) || dp_graph_use_weight(g, 3, w1, &err) ||
         dp_graph_add_edge(g, 0, 1, 5, &err) || dp_graph_add_edge(g, 0, 2, 0, &err) || dp_graph_add_edge(g, 1, 3, 1.5, &err) ||
         dp_graph_add_edge(g, 2, 3, 3, &err) || dp_graph_add_edge(g, 3, 4, 4, &err);
    g->unit_speed = 2.5e9; g->unit_bandwidth = 1.25e10; g->n_ext_inputs = 3;
    return rc || dp_graph_finalize(g, &err);
}

/* ---- tests ----------------------------------------------------------------- */
static void test_roundtrips(void)
{
    dp_graph g;
    int files = 0;
    CHECK(build_full(&g) == 0, "building the full graph: %s", err.msg);
    roundtrip(&g, "every field");
    dp_graph_free(&g);
    static const char *const dirs[2] = {"graphs", "tests/corpus/native"};
    for (int d = 0; d < 2; d++) {
        DIR *dir = opendir(dirs[d]);
        struct dirent *e;
        if (!dir) { SKIP("no %s", dirs[d]); continue; }
        while ((e = readdir(dir)) != NULL) {
            char path[1024];
            if (e->d_name[0] == '.' || strstr(e->d_name, ".md")) continue;
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            if (dp_graph_read(&g, path, DP_FORMAT_AUTO, &err)) continue;   /* the corpus holds refused files too */
            roundtrip(&g, path);
            dp_graph_free(&g);
            files++;
        }
        closedir(dir);
    }
    CHECK(files >= 10, "only %d graphs round-tripped", files);
    static const dp_workload kinds[3] = {DP_WL_LLAMA_BLOCK, DP_WL_GPT, DP_WL_FFNN};
    for (int k = 0; k < 3; k++) {
        dp_workload_opts wo;
        memset(&wo, 0, sizeof wo);
        wo.kind = kinds[k]; wo.parts = 2; wo.dim = 32; wo.layers = 1; wo.weights = 1;
        if (dp_gen_workload(&g, &wo, &err)) { CHECK(0, "workload %d: %s", k, err.msg); continue; }
        CHECK(g.n_weights > 0 && g.n_uses > 0, "workload %d has no weights", k);
        roundtrip(&g, k == 0 ? "llama-block with weights" : k == 1 ? "gpt with weights" : "ffnn with weights");
        dp_graph_free(&g);
    }
}

/* The bytes as >>api-formats lays them out, for a graph made by hand. */
static void test_layout(void)
{
    dp_graph g;
    size_t bl = 0;
    CHECK(build_full(&g) == 0, "building: %s", err.msg);
    unsigned char *b = dpb_bytes(&g, &bl);
    CHECK(b != NULL, "writing: %s", err.msg);
    if (!b) { dp_graph_free(&g); return; }
    static const unsigned char magic[8] = {0x89, 'D', 'P', 'B', 0x0D, 0x0A, 0x1A, 0x0A};
    CHECK(bl >= 80 + 32 * 19 && memcmp(b, magic, 8) == 0, "magic");
    CHECK(le32(b + 8) == 1 && le32(b + 12) == 19, "version %u, sections %u", le32(b + 8), le32(b + 12));
    CHECK(le64(b + 16) == bl, "length field %llu, file %zu", (unsigned long long)le64(b + 16), bl);
    CHECK(le32(b + 24) == 5 && le32(b + 28) == 5 && le32(b + 32) == 2 && le32(b + 36) == 3 && le32(b + 40) == 3 && le32(b + 44) == 3,
          "counts %u %u %u %u %u %u", le32(b + 24), le32(b + 28), le32(b + 32), le32(b + 36), le32(b + 40), le32(b + 44));
    CHECK(f64(b + 48) == 2.5e9 && f64(b + 56) == 1.25e10 && le64(b + 64) == 0, "units, reserved");
    {
        sum_t h;
        sum_init(&h);
        sum_bytes(&h, b, 72);
        sum_bytes(&h, b + 80, 32 * 19);
        CHECK(sum_end(&h) == le64(b + 72), "header checksum %016llx, documented %016llx", (unsigned long long)le64(b + 72),
              (unsigned long long)sum_end(&h));
    }
    uint64_t end = 80 + 32 * 19;
    for (int s = 0; s < 19; s++) {
        char tag[9] = {0};
        uint64_t off = sec_off(b, s), n = sec_len(b, s);
        sum_t h;
        memcpy(tag, b + 80 + 32 * s, 8);
        CHECK(strcmp(tag, TAGS[s]) == 0, "section %d tagged '%s', documented '%s'", s, tag, TAGS[s]);
        CHECK(off % 8 == 0 && off >= end && off + n <= bl, "section %s at %llu, %llu bytes", TAGS[s], (unsigned long long)off, (unsigned long long)n);
        for (uint64_t p = end; p < off; p++) CHECK(b[p] == 0, "padding byte %llu is %d", (unsigned long long)p, b[p]);
        sum_init(&h);
        sum_bytes(&h, b + off, (size_t)n);
        CHECK(sum_end(&h) == le64(b + 80 + 32 * s + 24), "section %s checksum", TAGS[s]);
        end = off + n;
    }
    CHECK((end + 7) / 8 * 8 == bl, "the file ends after the last section: %llu, %zu", (unsigned long long)end, bl);
    /* the sections' content, value by value */
    CHECK(sec_len(b, S_NAME) == 20 && memcmp(b + sec_off(b, S_NAME), "op0\0op1\0op2\0op3\0op4\0", 20) == 0, "opname");
    CHECK(sec_len(b, S_KIND) == 5 && b[sec_off(b, S_KIND) + 1] == DP_OP_MATMUL && b[sec_off(b, S_KIND) + 3] == DP_OP_SPLIT &&
          b[sec_off(b, S_KIND)] == DP_OP_OPAQUE, "opkind");
    CHECK(sec_len(b, S_COMPUTE) == 40 && f64(b + sec_off(b, S_COMPUTE) + 8) == 0.2 && le64(b + sec_off(b, S_COMPUTE) + 16) == 0x8000000000000000ULL,
          "compute (op2's -0.0 kept)");
    CHECK(sec_len(b, S_RES) == 40 && f64(b + sec_off(b, S_RES) + 24) == 9007199254740992.0, "resident");
    CHECK(sec_len(b, S_ROWS) == 20 && le32(b + sec_off(b, S_ROWS) + 12) == 4 && le32(b + sec_off(b, S_COLS) + 12) == 6, "rows, cols");
    CHECK(sec_len(b, S_DEVTIME) == 5 * 3 * 8 && f64(b + sec_off(b, S_DEVTIME) + 8 * 2) == -1 && f64(b + sec_off(b, S_DEVTIME) + 8 * 14) == 3, "devtime");
    CHECK(sec_len(b, S_NSOURCE) == 20 && le32(b + sec_off(b, S_NSOURCE)) == 2 && le32(b + sec_off(b, S_NSOURCE) + 8) == 1, "nsource");
    CHECK(sec_len(b, S_SOURCE) == 12 + 7 + 7 && memcmp(b + sec_off(b, S_SOURCE), "onnx/Conv 1\0x,y=%#\0\xff\xfe raw\0", 26) == 0, "source");
    CHECK(sec_len(b, S_SRC) == 20 && le32(b + sec_off(b, S_SRC) + 8) == 1 && le32(b + sec_off(b, S_DST) + 8) == 3, "src, dst");
    CHECK(sec_len(b, S_BYTES) == 40 && f64(b + sec_off(b, S_BYTES) + 16) == 1.5, "bytes");
    CHECK(sec_len(b, S_WNAME) == 6 && memcmp(b + sec_off(b, S_WNAME), "w0\0w1\0", 6) == 0 && f64(b + sec_off(b, S_WBYTES) + 8) == 0.5, "weights");
    CHECK(sec_len(b, S_USEOP) == 12 && le32(b + sec_off(b, S_USEOP) + 8) == 3 && le32(b + sec_off(b, S_USEWT) + 8) == 1, "uses");
    free(b);
    dp_graph_free(&g);
    /* sections of zeros are left empty: a chain of opaque ops, no bytes */
    {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        dp_graph_init(&g);
        d.compute = 1; dp_graph_add_op(&g, &d, NULL, &err);
        d.compute = 2; dp_graph_add_op(&g, &d, NULL, &err);
        dp_graph_add_edge(&g, 0, 1, 0, &err);
        dp_graph_finalize(&g, &err);
        b = dpb_bytes(&g, &bl);
        CHECK(b != NULL, "writing the chain: %s", err.msg);
        if (b) {
            static const int zero[] = {S_KIND, S_OUT, S_MEM, S_RES, S_ROWS, S_COLS, S_ARG, S_NSOURCE, S_BYTES, S_DEVTIME, S_SOURCE, S_WNAME, S_WBYTES, S_USEOP};
            for (size_t k = 0; k < sizeof zero / sizeof *zero; k++) CHECK(sec_len(b, zero[k]) == 0, "section %s not empty", TAGS[zero[k]]);
            CHECK(sec_len(b, S_COMPUTE) == 16 && sec_len(b, S_NAME) == 8 && !memcmp(b + sec_off(b, S_NAME), "op0\0op1\0", 8), "the chain's sections");
            roundtrip(&g, "zero sections");
        }
        free(b);
        dp_graph_free(&g);
    }
}

/* Cut at every length; every byte flipped: refused, or a padding byte. */
static void test_cuts_and_flips(void)
{
    dp_graph g, h;
    size_t bl = 0;
    CHECK(build_full(&g) == 0, "building: %s", err.msg);
    unsigned char *b = dpb_bytes(&g, &bl), *c = (unsigned char *)malloc(bl);
    char *text = native_text(&g, NULL);
    int refused = 0, padding = 0;
    for (size_t n = 0; n < bl; n++) {
        int rc = read_dpb(&h, b, n, DP_FORMAT_AUTO);   /* under 8 bytes: no magic, read as text */
        if (rc == 0) { CHECK(0, "cut at %zu of %zu: read", n, bl); dp_graph_free(&h); continue; }
        CHECK(strstr(err.msg, "t.dpb") != NULL, "cut at %zu: the message does not name the file: %s", n, err.msg);
        CHECK(h.n_ops == 0 && !h.name && !h.dp__pool, "cut at %zu: graph not empty", n);
        rc = read_dpb(&h, b, n, DP_FORMAT_BINARY);
        CHECK(rc == DP_ERR_PARSE && (n < 8 ? strstr(err.msg, "t.dpb: not a .dpb file") :
                                     n < 80 + 32 * 19 ? strstr(err.msg, "t.dpb: truncated: ") : strstr(err.msg, "t.dpb: offset 16: the header says")) &&
              (n < 80 + 32 * 19 || strstr(err.msg, "(truncated)")), "cut at %zu: rc %d '%s'", n, rc, err.msg);
    }
    for (size_t p = 0; p < bl; p++) {
        static const unsigned char flips[3] = {0x01, 0x80, 0xff};
        int in_pad = 1;
        for (int s = 0; s < 19; s++) if (p < 80 + 32 * 19 || (p >= sec_off(b, s) && p < sec_off(b, s) + sec_len(b, s))) in_pad = 0;
        for (int k = 0; k < 3; k++) {
            memcpy(c, b, bl);
            c[p] ^= flips[k];
            int rc = read_dpb(&h, c, bl, DP_FORMAT_BINARY);
            if (rc) {
                refused++;
                CHECK(!in_pad, "byte %zu (padding) flipped: refused: %s", p, err.msg);
                CHECK(strstr(err.msg, "t.dpb: ") && strstr(err.msg, p < 8 ? "not a .dpb file" : "offset"), "byte %zu flipped: '%s'", p, err.msg);
            } else {
                char *back = native_text(&h, NULL);
                padding++;
                CHECK(in_pad && back && !strcmp(back, text), "byte %zu flipped (^%02x): read without an error", p, flips[k]);
                free(back);
                dp_graph_free(&h);
            }
        }
    }
    CHECK(refused > 0 && refused + padding == 3 * (int)bl, "%d refused, %d in padding", refused, padding);
    free(b); free(c); free(text);
    dp_graph_free(&g);
}

/* A copy of b with an edit, its checksums made right: the check behind them refuses it. */
typedef struct { int s; size_t at; int code; const char *want; } fault;

static void expect(unsigned char *b, size_t bl, int code, const char *want, const char *what)
{
    dp_graph h;
    int rc = read_dpb(&h, b, bl, DP_FORMAT_BINARY);
    CHECK(rc == code && strstr(err.msg, want) != NULL, "%s: rc %d (want %d) '%s' (want '%s')", what, rc, code, err.msg, want);
    if (!rc) dp_graph_free(&h);
}

static void test_faults(void)
{
    dp_graph g;
    size_t bl = 0;
    char want[256];
    CHECK(build_full(&g) == 0, "building: %s", err.msg);
    unsigned char *b = dpb_bytes(&g, &bl), *c = (unsigned char *)malloc(bl + 64);
#define EDIT() memcpy(c, b, bl)
    /* the header */
    EDIT(); c[3] = 'X'; expect(c, bl, DP_ERR_PARSE, "t.dpb: not a .dpb file", "magic");
    EDIT(); put32(c + 8, 2); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "t.dpb: offset 8: version 2 (this reader knows 1)", "version");
    EDIT(); put32(c + 12, 18); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "offset 12: 18 sections", "sections");
    EDIT(); snprintf(want, sizeof want, "offset 16: the header says %zu bytes, the file has %zu (truncated)", bl, bl - 8);
    expect(c, bl - 8, DP_ERR_PARSE, want, "cut by 8");
    EDIT(); memset(c + bl, 0, 8); snprintf(want, sizeof want, "the header says %zu bytes, the file has %zu", bl, bl + 8);
    expect(c, bl + 8, DP_ERR_PARSE, want, "8 bytes added");
    EDIT(); c[75] ^= 1; expect(c, bl, DP_ERR_PARSE, "offset 72: header checksum", "header checksum");
    EDIT(); put64(c + 64, 7); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "offset 64: reserved field 7, not 0", "reserved");
    EDIT(); put32(c + 24, 0); reseal(c, -1); expect(c, bl, DP_ERR_GRAPH, "offset 24: no ops", "no ops");
    EDIT(); put32(c + 24, 0xffffffffu); reseal(c, -1); expect(c, bl, DP_ERR_LIMIT, "offset 24: 4294967295 ops exceed the limit 4194304 (DP_MAX_OPS)", "huge op count");
    EDIT(); put32(c + 28, 1u << 30); reseal(c, -1); expect(c, bl, DP_ERR_LIMIT, "offset 28: 1073741824 edges exceed the limit", "huge edge count");
    EDIT(); put32(c + 36, 1u << 31); reseal(c, -1); expect(c, bl, DP_ERR_LIMIT, "offset 36: 2147483648 weight uses", "huge use count");
    EDIT(); put32(c + 40, 100000); reseal(c, -1); expect(c, bl, DP_ERR_LIMIT, "offset 40: 100000 per-device time columns exceed the limit 256", "devtimes");
    EDIT(); put32(c + 28, 6); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "section 'src' holds 20 bytes, but its 6 values take 24", "an edge count the sections disagree with");
    EDIT(); put32(c + 24, 6); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "section 'opkind' holds 5 bytes, but its 6 values take 6", "an op count the sections disagree with");
    { double z = 0; uint64_t u; memcpy(&u, &z, 8); EDIT(); put64(c + 48, u); reseal(c, -1);
      expect(c, bl, DP_ERR_RANGE, "offset 48: units speed '0' must be a positive number", "units speed 0"); }
    /* the section table */
    EDIT(); memcpy(c + 80 + 32 * 2, "comput3\0", 8); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "section 2 is tagged 'comput3', expected 'compute'", "tag");
    EDIT(); put64(c + 80 + 32 * S_SRC + 8, bl + 8); reseal(c, -1);
    snprintf(want, sizeof want, "section 'src' at offset %zu, 20 bytes: past the end of the file", bl + 8); expect(c, bl, DP_ERR_PARSE, want, "offset past the end");
    EDIT(); put64(c + 80 + 32 * S_SRC + 8, ~0ULL - 3); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "not a multiple of 8", "offset near 2^64");
    EDIT(); put64(c + 80 + 32 * S_SRC + 16, ~0ULL); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "past the end of the file", "size near 2^64");
    EDIT(); put64(c + 80 + 32 * S_SRC + 8, sec_off(b, S_SRC - 1)); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "overlaps the header or the section before it", "overlap");
    EDIT(); put64(c + 80 + 32 * S_NAME + 8, 8); reseal(c, -1); expect(c, bl, DP_ERR_PARSE, "overlaps the header", "a section in the header");
    EDIT(); c[sec_off(b, S_DST)] ^= 1; snprintf(want, sizeof want, "section 'dst' (20 bytes at offset %llu) sums to", (unsigned long long)sec_off(b, S_DST));
    expect(c, bl, DP_ERR_PARSE, want, "section checksum");
    /* values, each at its offset */
    {
        double v = -4;
        uint64_t u;
        memcpy(&u, &v, 8);
        EDIT(); put64(c + sec_off(b, S_COMPUTE) + 8, u); reseal(c, S_COMPUTE);
        snprintf(want, sizeof want, "t.dpb: offset %llu (section 'compute', op 1): op 'op1': compute cost '-4' is negative", (unsigned long long)sec_off(b, S_COMPUTE) + 8);
        expect(c, bl, DP_ERR_RANGE, want, "negative compute");
        v = NAN; memcpy(&u, &v, 8);
        EDIT(); put64(c + sec_off(b, S_DEVTIME) + 8 * 4, u); reseal(c, S_DEVTIME);
        snprintf(want, sizeof want, "offset %llu (section 'devtime', op 1): op 'op1': time on device 1 'nan' is not finite", (unsigned long long)sec_off(b, S_DEVTIME) + 32);
        expect(c, bl, DP_ERR_RANGE, want, "NaN time");
        v = INFINITY; memcpy(&u, &v, 8);
        EDIT(); put64(c + sec_off(b, S_BYTES) + 8 * 4, u); reseal(c, S_BYTES);
        expect(c, bl, DP_ERR_RANGE, "(section 'bytes', edge 4): bytes 'inf' is not finite", "infinite edge bytes");
        EDIT(); put64(c + sec_off(b, S_WBYTES), 0x8000000000000001ULL); reseal(c, S_WBYTES);
        expect(c, bl, DP_ERR_RANGE, "(section 'wbytes', weight 0): weight 'w0': bytes '-4.9406564584124654e-324' is negative", "negative weight bytes");
    }
    EDIT(); c[sec_off(b, S_KIND) + 4] = 200; reseal(c, S_KIND); expect(c, bl, DP_ERR_RANGE, "(section 'opkind', op 4): op 'op4': kind 200 is not a kind", "kind");
    EDIT(); put32(c + sec_off(b, S_ROWS) + 4, 0); reseal(c, S_ROWS); expect(c, bl, DP_ERR_RANGE, "(section 'rows', op 1): op 'op1': shape 0x2 out of range", "shape");
    EDIT(); put32(c + sec_off(b, S_ARG) + 12, 0x80000000u); reseal(c, S_ARG); expect(c, bl, DP_ERR_RANGE, "op 'op3': arg -2147483648 is negative", "arg");
    EDIT(); put32(c + sec_off(b, S_NSOURCE), 0x7fffffffu); reseal(c, S_NSOURCE); expect(c, bl, DP_ERR_RANGE, "(section 'nsource', op 0): op 'op0': 2147483647 source names", "huge source count");
    EDIT(); put32(c + sec_off(b, S_NSOURCE), 3); reseal(c, S_NSOURCE); expect(c, bl, DP_ERR_PARSE, "section 'source' (26 bytes) ends before op 2's source name 0", "source names run out");
    EDIT(); c[sec_off(b, S_SOURCE)] = 0; reseal(c, S_SOURCE); expect(c, bl, DP_ERR_PARSE, "(section 'source', op 0): op 'op0': source name 0 is empty", "empty source name");
    EDIT(); c[sec_off(b, S_NAME) + 19] = 'x'; reseal(c, S_NAME); expect(c, bl, DP_ERR_PARSE, "section 'opname' (20 bytes) ends before op 4's name", "names run out");
    EDIT(); c[sec_off(b, S_NAME) + 2] = '1'; reseal(c, S_NAME);
    snprintf(want, sizeof want, "t.dpb: offset %llu (section 'opname', op 1): duplicate op name 'op1' (first defined as op 0)", (unsigned long long)sec_off(b, S_NAME) + 4);
    expect(c, bl, DP_ERR_GRAPH, want, "a repeated op name");
    EDIT(); c[sec_off(b, S_NAME) + 2] = ' '; reseal(c, S_NAME); expect(c, bl, DP_ERR_PARSE, "(section 'opname', op 0): op name 'op ' is empty, longer than", "a name with a space");
    EDIT(); c[sec_off(b, S_WNAME) + 1] = '1'; reseal(c, S_WNAME); expect(c, bl, DP_ERR_GRAPH, "(section 'wname', weight 1): duplicate weight name 'w1'", "a repeated weight name");
    EDIT(); put32(c + sec_off(b, S_SRC) + 12, 99); reseal(c, S_SRC);
    snprintf(want, sizeof want, "t.dpb: offset %llu (section 'src', edge 3): source 99 is not an op (0..4)", (unsigned long long)sec_off(b, S_SRC) + 12);
    expect(c, bl, DP_ERR_GRAPH, want, "an edge's source");
    EDIT(); put32(c + sec_off(b, S_DST) + 16, 3); reseal(c, S_DST); expect(c, bl, DP_ERR_GRAPH, "(section 'dst', edge 4): self loop on op 'op3'", "a self loop");
    EDIT(); put32(c + sec_off(b, S_DST) + 4, 1); reseal(c, S_DST);   /* edge 1 = edge 0: 0 -> 1 */
    snprintf(want, sizeof want, "t.dpb: offset %llu (section 'src', edge 1): duplicate edge op0 -> op1", (unsigned long long)sec_off(b, S_SRC) + 4);
    expect(c, bl, DP_ERR_GRAPH, want, "a repeated edge");
    EDIT(); put32(c + sec_off(b, S_DST) + 12, 0); reseal(c, S_DST); expect(c, bl, DP_ERR_CYCLE, "t.dpb: cycle through op", "a cycle");
    EDIT(); put32(c + sec_off(b, S_USEWT) + 4, 5); reseal(c, S_USEWT); expect(c, bl, DP_ERR_GRAPH, "(section 'usewt', use 1): weight 5 is not a weight (0..1)", "a use's weight");
    EDIT(); put32(c + sec_off(b, S_USEWT) + 4, 0); reseal(c, S_USEWT); expect(c, bl, DP_ERR_GRAPH, "op 'op0' uses weight 'w0' twice", "a weight used twice");
    {   /* a total that is not finite: told by dp_graph_finalize, named */
        double v = 1.5e308;
        uint64_t u;
        memcpy(&u, &v, 8);
        EDIT(); put64(c + sec_off(b, S_COMPUTE), u); put64(c + sec_off(b, S_COMPUTE) + 8, u); reseal(c, S_COMPUTE);
        expect(c, bl, DP_ERR_RANGE, "t.dpb: op 'op1' (node 1): the total compute", "an overflowing total");
    }
#undef EDIT
    free(b); free(c);
    dp_graph_free(&g);
    /* a count that only empty sections (all zeros) would agree with: the
       names must fit, before anything is sized by it */
    {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        dp_graph_init(&g);
        dp_graph_add_op(&g, &d, NULL, &err);
        dp_graph_add_op(&g, &d, NULL, &err);
        dp_graph_finalize(&g, &err);
        b = dpb_bytes(&g, &bl);
        CHECK(b && sec_len(b, S_COMPUTE) == 0 && sec_len(b, S_KIND) == 0 && sec_len(b, S_NAME) == 8, "two empty ops: their sections");
        if (b) {
            double t0 = dp_now();
            put32(b + 24, 4194304); reseal(b, -1);
            expect(b, bl, DP_ERR_PARSE, "t.dpb: section 'opname' holds 8 bytes, too few for 4194304 names", "a huge op count, all sections empty");
            CHECK(dp_now() - t0 < 0.5, "refusing it took %.2f s", dp_now() - t0);
        }
        free(b);
        dp_graph_free(&g);
    }
}

/* Formats: by name, by content; forced the wrong way. */
static void test_formats(void)
{
    dp_graph g, h;
    dp_format f;
    size_t bl = 0;
    char path[512];
    CHECK(dp_format_from_path("x/g.dpb") == DP_FORMAT_BINARY && dp_format_from_path("g.dpg") == DP_FORMAT_NATIVE, "from_path");
    CHECK(dp_format_parse("binary", &f) == 0 && f == DP_FORMAT_BINARY && !strcmp(dp_format_name(DP_FORMAT_BINARY), "binary"), "parse, name");
    CHECK(build_full(&g) == 0, "building: %s", err.msg);
    unsigned char *b = dpb_bytes(&g, &bl);
    CHECK(dp_format_detect((const char *)b, bl) == DP_FORMAT_BINARY, "detect");
    int rc = read_dpb(&h, b, bl, DP_FORMAT_NATIVE);
    /* 0x1a, the magic's seventh byte, is no text's (0x89 is UTF-8's, CR LF a line's end) */
    CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "t.dpb:2: binary data (byte 0x1a at offset 6)"), "a .dpb read as native: '%s'", err.msg);
    dp_test_tmp(path, sizeof path, "dpb_forced.dpb");
    dp_test_write_file(path, b, bl);
    rc = dp_graph_read(&h, path, DP_FORMAT_STG, &err);
    CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "dpb_forced.dpb:2: binary data (byte 0x1a at offset 6)"), "a .dpb file read as STG: '%s'", err.msg);
    rc = dp_graph_read_mem(&h, "doppler-graph 1\nop a\n", 21, "g.dpg", DP_FORMAT_BINARY, &err);
    CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "g.dpg: not a .dpb file"), "text read as binary: '%s'", err.msg);
    dp_test_tmp(path, sizeof path, "dpb_forced.dpg");
    dp_test_write_file(path, "doppler-graph 1\nop a\n", 21);
    rc = dp_graph_read(&h, path, DP_FORMAT_BINARY, &err);
    CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "not a .dpb file"), "a text file read as binary: '%s'", err.msg);
    rc = dp_graph_read_mem(&h, (const char *)b, 4, "t", DP_FORMAT_BINARY, &err);
    CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "not a .dpb file"), "4 bytes: '%s'", err.msg);
    free(b);
    dp_graph_free(&g);
}

/* A .dpb through a pipe (not mapped: read as it arrives). */
static void test_pipe(void)
{
    dp_graph g, h;
    size_t bl = 0;
    int fd[2];
    char path[64];
    CHECK(build_full(&g) == 0, "building: %s", err.msg);
    unsigned char *b = dpb_bytes(&g, &bl);
    char *text = native_text(&g, NULL);
    if (!b || pipe(fd) != 0) { SKIP("pipe"); free(b); free(text); dp_graph_free(&g); return; }
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        for (size_t k = 0; k < bl; k += 7) {   /* in small pieces */
            ssize_t w = write(fd[1], b + k, bl - k < 7 ? bl - k : 7);
            if (w <= 0) break;
            if (w < 7 && k + (size_t)w < bl) k -= 7 - (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    snprintf(path, sizeof path, "/dev/fd/%d", fd[0]);
    int rc = dp_graph_read(&h, path, DP_FORMAT_AUTO, &err);
    CHECK(rc == 0, "from a pipe: %s", err.msg);
    if (!rc) {
        char *back = native_text(&h, NULL);
        CHECK(back && !strcmp(back, text), "from a pipe: differs");
        free(back);
        dp_graph_free(&h);
    }
    close(fd[0]);
    waitpid(pid, NULL, 0);
    free(b); free(text);
    dp_graph_free(&g);
}

int main(void)
{
    test_roundtrips();
    test_layout();
    test_cuts_and_flips();
    test_faults();
    test_formats();
    test_pipe();
    return dp_test_done();
}
