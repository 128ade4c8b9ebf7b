/* fuzz.c - one fuzz target per reader of doppler.h.

   Built with libFuzzer (./build.sh fuzz):
       clang -fsanitize=fuzzer,address,undefined -DDP_FUZZ_TARGET=DP_FUZZ_NATIVE \
             -I. tests/fuzz/fuzz.c -lm -pthread
   Built without it (-DDP_FUZZ_REPLAY, as ./build.sh sanitize does), main()
   runs every target on every file named on the command line: the replay of
   tests/corpus/ through every reader.

   Targets: native, doppler, stg (graph readers, each forced to its format),
   auto (format detection), binary (the .dpb reader: each input read as it
   is, then, when it has a header and a section table, again with its
   checksums made right, so that the checks behind them are reached),
   cluster, assign, policy. Each input that reads
   without error must also satisfy the reader's promises, checked here:
   a graph is finalised, acyclic (its topological order is a permutation
   respecting every edge), round-trips through the native writer, and is
   simulated and placed without error; a cluster has positive speeds and
   bandwidths; an assignment's devices are in range; a policy places a
   small graph. A broken promise traps, which the fuzzer reports. */
#define DOPPLER_IMPLEMENTATION
#include "../../doppler.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DP_FUZZ_NATIVE = 1, DP_FUZZ_DOPPLER, DP_FUZZ_STG, DP_FUZZ_AUTO, DP_FUZZ_CLUSTER,
       DP_FUZZ_ASSIGN, DP_FUZZ_POLICY, DP_FUZZ_BINARY, DP_FUZZ__COUNT };

#define REQUIRE(c) do { if (!(c)) { fprintf(stderr, "fuzz: broken promise: %s (line %d)\n", #c, __LINE__); __builtin_trap(); } } while (0)

/* g written in fmt to memory and read back into h (the binary one as
   DP_FORMAT_AUTO: by its magic): 1 when it was; 0 when the writer refused
   it (only as it may: a graph the native format cannot hold, or out of
   memory) or memory ran out first. */
static int round_trip(const dp_graph *g, dp_format fmt, dp_graph *h)
{
    dp_error e = {0};
    char *buf = NULL;
    size_t len = 0;
    int rc, read = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return 0;
    rc = dp_graph_write_file(g, f, fmt, &e);
    fclose(f);
    if (rc == 0) {
        int bin = fmt == DP_FORMAT_BINARY;
        REQUIRE(dp_graph_read_mem(h, buf, len, bin ? "roundtrip.dpb" : "roundtrip", bin ? DP_FORMAT_AUTO : fmt, &e) == 0);
        read = 1;
    } else {
        REQUIRE((rc == DP_ERR_FORMAT && fmt == DP_FORMAT_NATIVE) || rc == DP_ERR_NOMEM || rc == DP_ERR_IO);
    }
    free(buf);
    return read;
}

static void check_graph(const dp_graph *g)
{
    dp_error e = {0};
    dp_graph h;
    int n = g->n_ops, k, *pos;
    REQUIRE(g->finalized && n > 0 && n <= DP_MAX_OPS && g->n_edges >= 0);
    pos = (int *)calloc((size_t)n, sizeof(int));
    if (!pos) return;
    for (k = 0; k < n; k++) pos[k] = -1;
    for (k = 0; k < n; k++) { REQUIRE(g->topo[k] >= 0 && g->topo[k] < n && pos[g->topo[k]] < 0); pos[g->topo[k]] = k; }
    for (k = 0; k < g->n_edges; k++) REQUIRE(pos[g->src[k]] < pos[g->dst[k]]);
    free(pos);
    /* native round trip */
    if (round_trip(g, DP_FORMAT_NATIVE, &h)) {
        REQUIRE(h.n_ops == g->n_ops && h.n_edges == g->n_edges);
        for (k = 0; k < n; k++) REQUIRE(!strcmp(h.name[k], g->name[k]) && h.compute[k] == g->compute[k]);
        dp_graph_free(&h);
    }
    /* binary round trip: the same graph */
    if (round_trip(g, DP_FORMAT_BINARY, &h)) {
        REQUIRE(h.n_ops == g->n_ops && h.n_edges == g->n_edges && h.n_weights == g->n_weights && h.n_uses == g->n_uses);
        for (k = 0; k < n; k++) REQUIRE(!strcmp(h.name[k], g->name[k]) && !memcmp(&h.compute[k], &g->compute[k], sizeof(double)));
        for (k = 0; k < g->n_edges; k++) REQUIRE(h.src[k] == g->src[k] && h.dst[k] == g->dst[k]);
        dp_graph_free(&h);
    }
    /* simulate and place on a small cluster (small graphs only: speed) */
    if (n <= 300) {
        dp_cluster c;
        if (dp_cluster_for_graph(&c, g, 0, &e) == 0) {
            int *a = (int *)calloc((size_t)n, sizeof(int));
            dp_place_result pr;
            if (a) {
                int rc = dp_place(DP_METHOD_HEFT, g, &c, NULL, a, &pr, &e);
                REQUIRE(rc == 0 || rc == DP_ERR_INFEASIBLE);
                if (rc == 0) { for (k = 0; k < n; k++) REQUIRE(a[k] >= 0 && a[k] < c.n); REQUIRE(pr.makespan >= 0); }
                free(a);
            }
            dp_cluster_free(&c);
        }
    }
}

static const dp_graph *small_graph(void)
{
    static dp_graph g;   /* read-only after the first call (a fixture) */
    static int made = 0;
    if (!made) {
        static const char text[] = "doppler-graph 1\nop a compute=2 bytes=1\nop b compute=3\nop c compute=1\n"
                                   "op d compute=2\nedge a b\nedge a c\nedge b d\nedge c d\n";
        dp_error e = {0};
        if (dp_graph_read_mem(&g, text, sizeof text - 1, "fixture", DP_FORMAT_NATIVE, &e)) __builtin_trap();
        made = 1;
    }
    return &g;
}

/* A .dpb input's checksums made right (in place), as >>api-formats
   defines them (this file links an implementation compiled apart: its
   own code): every section's whose bounds lie in the file, then the
   header's. */
static uint64_t fz_le64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void fz_put64(uint8_t *p, uint64_t v)
{
    int i;
    for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t fz_sum(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL, z;
    size_t i, n = na + nb;
    for (i = 0; i < n; i += 8) {   /* na is 0 or 72: a multiple of 8 */
        uint8_t w[8] = {0};
        const uint8_t *p = i < na ? a + i : b + (i - na);
        size_t left = i < na ? na - i : n - i;
        memcpy(w, p, left < 8 ? left : 8);
        h = (h ^ fz_le64(w)) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    z = h ^ n;
    z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27; z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void reseal_dpb(uint8_t *b, size_t size)
{
    enum { HEADER = 80, SECTIONS = 19 };
    int s;
    if (size < HEADER + 32 * SECTIONS || memcmp(b, "\x89" "DPB\r\n\x1a\n", 8) != 0) return;
    for (s = 0; s < SECTIONS; s++) {
        uint8_t *t = b + HEADER + 32 * s;
        uint64_t off = fz_le64(t + 8), n = fz_le64(t + 16);
        if (off <= size && n <= size - off) fz_put64(t + 24, fz_sum(NULL, 0, b + off, (size_t)n));
    }
    fz_put64(b + 72, fz_sum(b, 72, b + HEADER, 32 * SECTIONS));
}

static int run_target(int target, const uint8_t *data, size_t size)
{
    dp_error e = {0};
    switch (target) {
    case DP_FUZZ_BINARY: {
        dp_graph g;
        uint8_t *copy = (uint8_t *)malloc(size ? size : 1);
        int pass, rc;
        if (!copy) return 0;
        memcpy(copy, data, size);
        for (pass = 0; pass < 2; pass++) {
            if (pass == 1) reseal_dpb(copy, size);
            rc = dp_graph_read_mem(&g, (const char *)copy, size, "fuzz", DP_FORMAT_BINARY, &e);
            if (rc == 0) check_graph(&g);
            else REQUIRE((int)e.code == rc && e.msg[0] && strstr(e.msg, "fuzz"));
            dp_graph_free(&g);
        }
        free(copy);
        break;
    }
    case DP_FUZZ_NATIVE: case DP_FUZZ_DOPPLER: case DP_FUZZ_STG: case DP_FUZZ_AUTO: {
        static const dp_format fmt[] = {0, DP_FORMAT_NATIVE, DP_FORMAT_DOPPLER, DP_FORMAT_STG, DP_FORMAT_AUTO};
        dp_graph g;
        int rc = dp_graph_read_mem(&g, (const char *)data, size, "fuzz", fmt[target], &e);
        if (rc == 0) check_graph(&g);
        else REQUIRE((int)e.code == rc && e.msg[0] && strstr(e.msg, "fuzz"));
        dp_graph_free(&g);
        break;
    }
    case DP_FUZZ_CLUSTER: {
        dp_cluster c;
        int rc = dp_cluster_read_mem(&c, (const char *)data, size, "fuzz", &e), i, j;
        if (rc == 0) {
            REQUIRE(c.n >= 1 && c.n <= DP_MAX_DEVICES);
            for (i = 0; i < c.n; i++) {
                REQUIRE(c.speed[i] > 0 && c.memory[i] >= 0 && c.overhead[i] >= 0 && c.overhead[i] < HUGE_VAL);
                for (j = 0; j < c.n; j++) REQUIRE(i == j || (c.bandwidth[i * c.n + j] > 0 && c.latency[i * c.n + j] >= 0));
                for (j = 0; j < DP_KIND__COUNT; j++) {
                    /* a kind's speed curve: positive, finite, work increasing */
                    size_t at = (size_t)i * DP_KIND__COUNT + j;
                    int p, len = c.curve_len[at];
                    REQUIRE(len >= 0 && len <= DP_MAX_CURVE && c.kind_speed[at] >= 0);
                    for (p = 0; p < len; p++) {
                        const dp_speed_point *q = c.curve + at * DP_MAX_CURVE + p;
                        REQUIRE(q->work > 0 && q->work < HUGE_VAL && q->speed > 0 && q->speed < HUGE_VAL);
                        REQUIRE(p == 0 || q->work > q[-1].work);
                    }
                }
            }
        } else {
            REQUIRE((int)e.code == rc && strstr(e.msg, "fuzz"));
        }
        dp_cluster_free(&c);
        break;
    }
    case DP_FUZZ_ASSIGN: {
        /* the first two bytes choose the graph size and the device count */
        int n_ops, nd, a[256], k, rc;
        if (size < 2) return 0;
        n_ops = 1 + data[0] % 255; nd = 1 + data[1] % 16;
        for (k = 0; k < n_ops; k++) a[k] = -7;
        rc = dp_assign_read_mem((const char *)data + 2, size - 2, "fuzz", n_ops, nd, a, &e);
        if (rc == 0) for (k = 0; k < n_ops; k++) REQUIRE(a[k] >= 0 && a[k] < nd);
        else REQUIRE((int)e.code == rc && strstr(e.msg, "fuzz"));
        break;
    }
    case DP_FUZZ_POLICY: {
        dp_policy p;
        int rc = dp_policy_load_mem(&p, data, size, "fuzz", &e);
        if (rc == 0) {
            const dp_graph *g = small_graph();
            dp_cluster c;
            int a[4];
            double ms;
            REQUIRE(p.plc && (p.algo == DP_ALGO_DOPPLER) == (p.sel != NULL));
            if (dp_cluster_homogeneous(&c, p.algo == DP_ALGO_PLACETO ? p.opts.devices : 3, 1, 1, 0, &e) == 0) {
                if ((size_t)p.n_sel + p.n_plc < 200000) {
                    rc = dp_policy_place(&p, g, &c, NULL, a, NULL, &ms, &e);
                    REQUIRE(rc == 0 || rc == DP_ERR_NOMEM);
                    if (rc == 0) REQUIRE(ms > 0 && a[0] >= 0 && a[0] < c.n);
                }
                dp_cluster_free(&c);
            }
            dp_policy_free(&p);
        } else {
            REQUIRE((int)e.code == rc && strstr(e.msg, "fuzz") && p.plc == NULL && p.sel == NULL);
        }
        break;
    }
    }
    return 0;
}

#ifdef DP_FUZZ_REPLAY
#include <dirent.h>

static const char *target_names[DP_FUZZ__COUNT] = {"", "native", "doppler", "stg", "auto", "cluster", "assign", "policy", "binary"};

/* Every file of every directory under root, through every target. */
static int replay_dir(const char *root, int *files, int *runs)
{
    DIR *top = opendir(root), *sub;
    struct dirent *d, *f;
    char dir[1024], path[2048];
    if (!top) return -1;
    while ((d = readdir(top))) {
        if (d->d_name[0] == '.') continue;
        snprintf(dir, sizeof dir, "%s/%s", root, d->d_name);
        if (!(sub = opendir(dir))) continue;
        while ((f = readdir(sub))) {
            FILE *fp;
            uint8_t *buf;
            long len;
            int t;
            if (f->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
            if (!(fp = fopen(path, "rb"))) continue;
            fseek(fp, 0, SEEK_END); len = ftell(fp); fseek(fp, 0, SEEK_SET);
            buf = (uint8_t *)malloc(len > 0 ? (size_t)len : 1);
            if (!buf || (len > 0 && fread(buf, 1, (size_t)len, fp) != (size_t)len)) { fclose(fp); free(buf); continue; }
            fclose(fp);
            for (t = 1; t < DP_FUZZ__COUNT; t++) {
                /* a copy of exactly len bytes, so that ASan sees any over-read */
                uint8_t *copy = (uint8_t *)malloc(len > 0 ? (size_t)len : 1);
                if (!copy) break;
                memcpy(copy, buf, (size_t)len);
                run_target(t, copy, (size_t)len);
                free(copy);
                ++*runs;
            }
            free(buf);
            ++*files;
        }
        closedir(sub);
    }
    closedir(top);
    return 0;
}

/* With no arguments: replays tests/corpus and prints the harness's closing
   line (one pass per file and reader; a broken promise or a sanitizer
   report aborts the program, which the test runner counts as a failure).
   With arguments: those files, through every reader. */
int main(int argc, char **argv)
{
    int files = 0, runs = 0, t, i;
    if (argc == 1) {
        if (replay_dir("tests/corpus", &files, &runs) != 0 || files == 0) {
            printf("SKIP: tests/corpus not found or empty (run from the repository root)\n0 passed, 0 failed, 1 skipped\n");
            return 0;
        }
    }
    for (i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        uint8_t *buf;
        long len;
        if (!fp) { fprintf(stderr, "replay: cannot open %s\n", argv[i]); return 1; }
        fseek(fp, 0, SEEK_END); len = ftell(fp); fseek(fp, 0, SEEK_SET);
        buf = (uint8_t *)malloc(len > 0 ? (size_t)len : 1);
        if (!buf || (len > 0 && fread(buf, 1, (size_t)len, fp) != (size_t)len)) { fprintf(stderr, "replay: cannot read %s\n", argv[i]); return 1; }
        fclose(fp);
        for (t = 1; t < DP_FUZZ__COUNT; t++) { run_target(t, buf, (size_t)len); runs++; }
        free(buf);
        files++;
    }
    printf("replay: %d files through the %d readers (", files, DP_FUZZ__COUNT - 1);
    for (t = 1; t < DP_FUZZ__COUNT; t++) printf("%s%s", target_names[t], t + 1 < DP_FUZZ__COUNT ? ", " : ")\n");
    printf("%d passed, 0 failed, 0 skipped\n", runs);
    return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return run_target(DP_FUZZ_TARGET, data, size); }
#endif
