/* dp_test.h - a tiny test harness for the doppler tests.

   Include it AFTER doppler.h (it uses the dp_ types for a few helpers):

       #define DOPPLER_IMPLEMENTATION
       #include "../doppler.h"
       #include "dp_test.h"

   CHECK(cond, fmt, ...)        count a pass, or print "FAIL file:line: msg"
   CHECK_NEAR(a, b, tol, what)  |a - b| <= tol + |b| * 1e-12
   SKIP(fmt, ...)               count a skip, print "SKIP: reason"
   dp_test_done()               print "N passed, N failed, N skipped",
                                return 1 if anything failed, else 0

   The counters are file-static: each test is its own program.
   Tests run with the repository root as the working directory; shared
   reference data is found at $DP_DATA or "../shared/data"; scratch files
   go under build/tmp/. */
#ifndef DP_TEST_H
#define DP_TEST_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static int dp_test_pass_ = 0, dp_test_fail_ = 0, dp_test_skip_ = 0;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            dp_test_pass_++;                                               \
        } else {                                                           \
            dp_test_fail_++;                                               \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                    \
            printf(__VA_ARGS__);                                           \
            printf("\n");                                                  \
            fflush(stdout);                                                \
        }                                                                  \
    } while (0)

#define CHECK_NEAR(a, b, tol, what)                                        \
    do {                                                                   \
        double dp_t_a_ = (double)(a), dp_t_b_ = (double)(b);               \
        double dp_t_tol_ = (double)(tol) + fabs(dp_t_b_) * 1e-12;          \
        if (fabs(dp_t_a_ - dp_t_b_) <= dp_t_tol_) {                        \
            dp_test_pass_++;                                               \
        } else {                                                           \
            dp_test_fail_++;                                               \
            printf("FAIL %s:%d: %s: got %.17g, expected %.17g (tol %g)\n", \
                   __FILE__, __LINE__, (what), dp_t_a_, dp_t_b_,           \
                   dp_t_tol_);                                             \
            fflush(stdout);                                                \
        }                                                                  \
    } while (0)

#define SKIP(...)                                                          \
    do {                                                                   \
        dp_test_skip_++;                                                   \
        printf("SKIP: ");                                                  \
        printf(__VA_ARGS__);                                               \
        printf("\n");                                                      \
        fflush(stdout);                                                    \
    } while (0)

static inline int dp_test_done(void)
{
    printf("%d passed, %d failed, %d skipped\n", dp_test_pass_, dp_test_fail_,
           dp_test_skip_);
    fflush(stdout);
    return dp_test_fail_ ? 1 : 0;
}

/* ---- shared data ----------------------------------------------------- */
static inline const char *dp_test_data_dir(void)
{
    const char *d = getenv("DP_DATA");
    return (d && *d) ? d : "../shared/data";
}

/* buf = DATA/rel; returns buf */
static inline char *dp_test_data_path(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/%s", dp_test_data_dir(), rel);
    return buf;
}

static inline int dp_test_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* 1 if DATA/rel exists, else prints a SKIP and returns 0 */
static inline int dp_test_have_data(const char *rel)
{
    char p[1024];
    dp_test_data_path(p, sizeof p, rel);
    if (dp_test_exists(p)) return 1;
    SKIP("shared data '%s' not found (set DP_DATA or provide ../shared/data)", p);
    return 0;
}

/* ---- scratch files --------------------------------------------------- */
static inline void dp_test_mkdir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        printf("FAIL %s:%d: mkdir %s: %s\n", __FILE__, __LINE__, dir,
               strerror(errno));
        dp_test_fail_++;
    }
}

/* buf = "build/tmp/name" (creating build/tmp); returns buf */
static inline char *dp_test_tmp(char *buf, size_t n, const char *name)
{
    dp_test_mkdir("build");
    dp_test_mkdir("build/tmp");
    snprintf(buf, n, "build/tmp/%s", name);
    return buf;
}

static inline int dp_test_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    int rc = fclose(f);
    return (w == len && rc == 0) ? 0 : -1;
}

/* whole file, NUL-terminated, malloc'd; *len set when non-NULL */
static inline char *dp_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = (char *)malloc(cap + 1);
    if (!b) { fclose(f); return NULL; }
    for (;;) {
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (n < cap) break;
        cap *= 2;
        char *nb = (char *)realloc(b, cap + 1);
        if (!nb) { free(b); fclose(f); return NULL; }
        b = nb;
    }
    fclose(f);
    b[n] = 0;
    if (len) *len = n;
    return b;
}

/* case-insensitive strstr */
static inline const char *dp_test_stristr(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n) return hay;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return hay;
    }
    return NULL;
}

static inline const char *dp_test_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- graph helpers (need doppler.h) ---------------------------------- */
#ifdef DOPPLER_H
static inline int dp_test_same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Compares every user-visible field of two finalised graphs bitwise:
   counts, names, kinds, compute/out_bytes/mem_bytes/resident, dev_time,
   weights and each op's uses, edges in order with bytes, units; n_ext_inputs when check_ext. Prints the first
   few differences under the label `what`; returns 1 when equal. */
static inline int dp_test_graph_equal(const dp_graph *a, const dp_graph *b,
                                      int check_ext, const char *what)
{
    int diffs = 0;
#define DP_T_DIFF(...)                                                     \
    do {                                                                   \
        if (diffs++ < 5) { printf("  %s: ", what); printf(__VA_ARGS__); printf("\n"); } \
    } while (0)
    if (a->n_ops != b->n_ops) DP_T_DIFF("n_ops %d vs %d", a->n_ops, b->n_ops);
    if (a->n_edges != b->n_edges) DP_T_DIFF("n_edges %d vs %d", a->n_edges, b->n_edges);
    if (a->n_dev_time != b->n_dev_time)
        DP_T_DIFF("n_dev_time %d vs %d", a->n_dev_time, b->n_dev_time);
    if (!dp_test_same_double(a->unit_speed, b->unit_speed))
        DP_T_DIFF("unit_speed %.17g vs %.17g", a->unit_speed, b->unit_speed);
    if (!dp_test_same_double(a->unit_bandwidth, b->unit_bandwidth))
        DP_T_DIFF("unit_bandwidth %.17g vs %.17g", a->unit_bandwidth, b->unit_bandwidth);
    if (check_ext && a->n_ext_inputs != b->n_ext_inputs)
        DP_T_DIFF("n_ext_inputs %d vs %d", a->n_ext_inputs, b->n_ext_inputs);
    if (diffs) return 0;
    for (int i = 0; i < a->n_ops; i++) {
        if (strcmp(a->name[i], b->name[i]) != 0)
            DP_T_DIFF("op %d name '%s' vs '%s'", i, a->name[i], b->name[i]);
        if (a->kind[i] != b->kind[i])
            DP_T_DIFF("op %d kind %d vs %d", i, (int)a->kind[i], (int)b->kind[i]);
        if (!dp_test_same_double(a->compute[i], b->compute[i]))
            DP_T_DIFF("op %d compute %.17g vs %.17g", i, a->compute[i], b->compute[i]);
        if (!dp_test_same_double(a->out_bytes[i], b->out_bytes[i]))
            DP_T_DIFF("op %d out_bytes %.17g vs %.17g", i, a->out_bytes[i], b->out_bytes[i]);
        if (!dp_test_same_double(a->mem_bytes[i], b->mem_bytes[i]))
            DP_T_DIFF("op %d mem_bytes %.17g vs %.17g", i, a->mem_bytes[i], b->mem_bytes[i]);
        if (!dp_test_same_double(a->resident[i], b->resident[i]))
            DP_T_DIFF("op %d resident %.17g vs %.17g", i, a->resident[i], b->resident[i]);
        for (int d = 0; d < a->n_dev_time; d++)
            if (!dp_test_same_double(a->dev_time[i * a->n_dev_time + d],
                                     b->dev_time[i * b->n_dev_time + d]))
                DP_T_DIFF("op %d dev_time[%d] %.17g vs %.17g", i, d,
                          a->dev_time[i * a->n_dev_time + d],
                          b->dev_time[i * b->n_dev_time + d]);
    }
    for (int e = 0; e < a->n_edges; e++) {
        if (a->src[e] != b->src[e] || a->dst[e] != b->dst[e])
            DP_T_DIFF("edge %d %d->%d vs %d->%d", e, a->src[e], a->dst[e], b->src[e], b->dst[e]);
        if (!dp_test_same_double(a->bytes[e], b->bytes[e]))
            DP_T_DIFF("edge %d bytes %.17g vs %.17g", e, a->bytes[e], b->bytes[e]);
    }
    if (a->n_weights != b->n_weights || a->n_uses != b->n_uses)
        DP_T_DIFF("weights %d (%d uses) vs %d (%d uses)", a->n_weights, a->n_uses, b->n_weights, b->n_uses);
    else {
        for (int w = 0; w < a->n_weights; w++)
            if (strcmp(a->weight_name[w], b->weight_name[w]) != 0 || !dp_test_same_double(a->weight_bytes[w], b->weight_bytes[w]))
                DP_T_DIFF("weight %d '%s' %.17g vs '%s' %.17g", w, a->weight_name[w], a->weight_bytes[w], b->weight_name[w], b->weight_bytes[w]);
        for (int v = 0; v < a->n_ops && a->wuse_off && b->wuse_off; v++) {
            int na = a->wuse_off[v + 1] - a->wuse_off[v], nb = b->wuse_off[v + 1] - b->wuse_off[v];
            if (na != nb) { DP_T_DIFF("op %d uses %d vs %d weights", v, na, nb); continue; }
            for (int k = 0; k < na; k++)
                if (a->wuse[a->wuse_off[v] + k] != b->wuse[b->wuse_off[v] + k])
                    DP_T_DIFF("op %d weight use %d: %d vs %d", v, k, a->wuse[a->wuse_off[v] + k], b->wuse[b->wuse_off[v] + k]);
        }
    }
#undef DP_T_DIFF
    return diffs == 0;
}
#endif /* DOPPLER_H */


/* ---- building small graphs by hand --------------------------------------- */
typedef struct { const char *name; double compute, out, mem; } op_t;
typedef struct { int s, d; double bytes; } ed_t;

/* Builds and finalises a graph of n ops and m edges; every step is a check.
   Returns 0 on success. */
static inline int dp_test_build(dp_graph *g, int n, const op_t *ops, int m, const ed_t *eds)
{
    dp_error err;
    memset(&err, 0, sizeof err);
    dp_graph_init(g);
    for (int i = 0; i < n; i++) {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        d.name = ops[i].name;
        d.compute = ops[i].compute;
        d.out_bytes = ops[i].out;
        d.mem_bytes = ops[i].mem;
        int id = -1;
        int rc = dp_graph_add_op(g, &d, &id, &err);
        CHECK(rc == 0 && id == i, "add op %s: rc %d id %d: %s", ops[i].name, rc, id, err.msg);
        if (rc) return rc;
    }
    for (int e = 0; e < m; e++) {
        int rc = dp_graph_add_edge(g, eds[e].s, eds[e].d, eds[e].bytes, &err);
        CHECK(rc == 0, "add edge %d: %s", e, err.msg);
        if (rc) return rc;
    }
    int rc = dp_graph_finalize(g, &err);
    CHECK(rc == 0, "finalize: %s", err.msg);
    return rc;
}

#endif /* DP_TEST_H */
