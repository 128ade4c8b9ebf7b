/* test_blk.c - the default allocator (doppler.h, DP_MALLOC): on Linux its
   blocks of 2 MiB or more are mappings of whole 2 MiB on a 2 MiB
   boundary (advised as huge pages), smaller ones malloc's, each behind a
   header of 16 bytes. Checks, with every byte's value known: a block
   keeps its contents across every growth and shrink between the two
   kinds (malloc to mapping, a mapping grown where it is and moved, a
   mapping shrunk, a mapping shrunk below 2 MiB); calloc's blocks are
   zero, the fresh room of a grown mapping too; blocks are 16-byte
   aligned (malloc's promise); mappings start 16 bytes past a 2 MiB
   boundary; the huge-page advice covers the whole 2 MiB of the bytes
   asked for (and of an arena's dense part), not the partial last one
   (the kernel's VmFlags). Elsewhere (DP_NO_HUGEPAGES, a sanitizer's build, not Linux)
   the same contents checks run over malloc. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

#define MIB ((size_t)1 << 20)

/* byte i of a block filled by fill(p, n, seed) */
static unsigned char val(size_t i, unsigned seed) { return (unsigned char)((i * 2654435761u) >> 13 ^ seed); }
static void fill(unsigned char *p, size_t n, unsigned seed) { for (size_t i = 0; i < n; i++) p[i] = val(i, seed); }
static size_t bad_bytes(const unsigned char *p, size_t n, unsigned seed)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += p[i] != val(i, seed);
    return bad;
}
static size_t nonzero(const unsigned char *p, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += p[i] != 0;
    return bad;
}

static void check_mapped(const void *p, int want, const char *what)
{
#ifdef DP__HUGE_PAGES
    const dp__blk *b = (const dp__blk *)p - 1;
    CHECK((int)b->mapped == want, "%s: mapped %d, want %d", what, (int)b->mapped, want);
    if (want) CHECK((uintptr_t)b % DP__HUGE_MIN == 0 && b->size % DP__HUGE_MIN == 0, "%s: mapping at %p of %zu bytes, not whole 2 MiB on a 2 MiB boundary", what, (const void *)b, b->size);
#else
    (void)p; (void)want; (void)what;
#endif
    CHECK((uintptr_t)p % 16 == 0, "%s: block at %p not 16-byte aligned", what, p);
}

static void test_growth(void)
{
    /* malloc's block, grown within malloc, then into a mapping */
    size_t n = 1000;
    unsigned char *p = (unsigned char *)DP_MALLOC(n), *q;
    CHECK(p != NULL, "malloc 1000");
    if (!p) return;
    fill(p, n, 1);
    check_mapped(p, 0, "1000 bytes");
    q = (unsigned char *)DP_REALLOC(p, 100000);
    CHECK(q && bad_bytes(q, n, 1) == 0, "1000 -> 100000 bytes: contents kept");
    if (!q) { DP_FREE(p); return; }
    p = q; n = 100000; fill(p, n, 2);
    q = (unsigned char *)DP_REALLOC(p, 3 * MIB);
    CHECK(q && bad_bytes(q, n, 2) == 0, "100000 -> 3 MiB (malloc to a mapping): contents kept");
    if (!q) { DP_FREE(p); return; }
    p = q; n = 3 * MIB; check_mapped(p, 1, "3 MiB");
    fill(p, n, 3 + (unsigned)(n / MIB));
    /* a mapping grown a few times (in place or moved, as the kernel has room) */
    for (size_t to = 5 * MIB; to <= 41 * MIB; to = to * 2 + MIB) {
        q = (unsigned char *)DP_REALLOC(p, to);
        CHECK(q && bad_bytes(q, n, 3 + (unsigned)(n / MIB)) == 0, "%zu -> %zu bytes: contents kept", n, to);
        if (!q) { DP_FREE(p); return; }
        check_mapped(q, 1, "a grown mapping");
        p = q; n = to; fill(p, n, 3 + (unsigned)(n / MIB));
    }
    /* shrunk: still a mapping, contents kept; then below 2 MiB */
    q = (unsigned char *)DP_REALLOC(p, 4 * MIB + 5);
    CHECK(q && bad_bytes(q, 4 * MIB + 5, 3 + (unsigned)(n / MIB)) == 0, "%zu -> 4 MiB + 5 bytes: contents kept", n);
    if (!q) { DP_FREE(p); return; }
    p = q; check_mapped(p, 1, "a shrunk mapping");
    q = (unsigned char *)DP_REALLOC(p, 777);
    CHECK(q && bad_bytes(q, 777, 3 + (unsigned)(n / MIB)) == 0, "4 MiB -> 777 bytes: contents kept");
    if (!q) { DP_FREE(p); return; }
    DP_FREE(q);
}

static void test_zero(void)
{
    /* calloc's blocks of both kinds are zero, also when memory was used
       and freed before */
    for (int round = 0; round < 2; round++) {
        size_t sizes[3] = {100, 300000, 5 * MIB + 3};
        for (int k = 0; k < 3; k++) {
            unsigned char *p = (unsigned char *)DP_CALLOC(sizes[k], 1);
            CHECK(p && nonzero(p, sizes[k]) == 0, "calloc %zu bytes (round %d): zero", sizes[k], round);
            if (p) { check_mapped(p, sizes[k] >= 2 * MIB, "calloc"); fill(p, sizes[k], 9); DP_FREE(p); }
        }
    }
    /* dp__calloc (doppler_cuda.cu's way in), overflow refused */
    double *d = (double *)dp__calloc(3 * MIB / sizeof(double), sizeof(double));
    CHECK(d && d[0] == 0 && d[3 * MIB / sizeof(double) - 1] == 0, "dp__calloc 3 MiB of doubles: zero");
    dp__free(d);
    CHECK(dp__calloc((size_t)-1 / 2, 4) == NULL, "dp__calloc of more than size_t holds: NULL");
#ifdef DP__HUGE_PAGES   /* (malloc's answer is malloc's: a sanitizer reports it) */
    CHECK(DP_MALLOC((size_t)-1 - 8) == NULL, "DP_MALLOC of nearly SIZE_MAX bytes: NULL");
#endif
    dp__free(NULL);
    DP_FREE(NULL);
}

/* a growable array (DP__PUSH) of doubles past 2 MiB: every value kept */
static void test_array(void)
{
    double *a = NULL;
    int n = 700000, bad = 0, fails = 0;
    for (int i = 0; i < n; i++) fails += DP__PUSH(a, (double)i * 0.5) != 0;
    CHECK(fails == 0 && (int)DP__LEN(a) == n, "%d pushes: %d failed, length %zu", n, fails, (size_t)DP__LEN(a));
    for (int i = 0; i < (int)DP__LEN(a); i++) bad += a[i] != (double)i * 0.5;
    CHECK(bad == 0, "%d of %d values changed by growth", bad, n);
    if (a) check_mapped(DP__HDR(a), 1, "a 5.6 MB growable array's block");
    DP__ARRFREE(a);
}

#ifdef DP__HUGE_PAGES
/* The bytes of [p, p + len) that the kernel has as advised for huge pages
   (the "hg" of /proc/self/smaps' VmFlags: madvise's mark on the mapping,
   whether or not the machine gives any huge page); -1 when smaps cannot
   be read. */
static long advised(const void *p, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    uintptr_t a = (uintptr_t)p, e = a + len, lo = 0, hi = 0;
    long total = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long x, y;
        if (sscanf(line, "%lx-%lx ", &x, &y) == 2 && strchr(line, '-') < strchr(line, ' ')) { lo = x; hi = y; continue; }
        if (!strncmp(line, "VmFlags:", 8) && strstr(line, " hg")) {
            uintptr_t s = lo > a ? lo : a, t = hi < e ? hi : e;
            if (t > s) total += (long)(t - s);
        }
    }
    fclose(f);
    return total;
}
#endif

/* Huge-page advice covers the whole 2 MiB of what was asked for, never
   the partial last one (a touch there takes a small page, not 2 MiB of
   bytes no one asked for), and an arena's arrays written only in part
   (dp__alloc_dense) none; checked in the kernel's record of the advice. */
static void test_advice(void)
{
#ifdef DP__HUGE_PAGES
    {   /* a kernel without transparent huge pages refuses the advice: nothing to check */
        char *m = (char *)mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        int refused = m == (char *)MAP_FAILED || madvise(m, 2 * MIB, MADV_HUGEPAGE) != 0;
        if (m != (char *)MAP_FAILED) munmap(m, 2 * MIB);
        if (refused) { SKIP("this kernel refuses huge-page advice: the advised ranges not checked"); return; }
    }
    struct { size_t size, dense; long want; } cases[] = {
        { 5 * MIB, 5 * MIB, 4 * (long)MIB },           /* 2 MiB pages for 4 MiB, the last 1 MiB small */
        { 4 * MIB - 16, 4 * MIB, 4 * (long)MIB },      /* exactly two pages with its header */
        { 3 * MIB, MIB, 0 },                           /* its dense part less than a page */
        { 9 * MIB, 6 * MIB + 7, 6 * (long)MIB },       /* three dense pages, the rest small */
    };
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        dp_error e;
        unsigned char *p = (unsigned char *)dp__alloc_dense(cases[k].size, cases[k].dense, &e, "test");
        CHECK(p != NULL, "case %d: %s", k, e.msg);
        if (!p) continue;
        check_mapped(p, 1, "a dense block");
        long got = advised((const dp__blk *)p - 1, ((const dp__blk *)p - 1)->size);
        if (got < 0) { SKIP("/proc/self/smaps unreadable: huge-page advice not checked"); DP_FREE(p); return; }
        CHECK(got == cases[k].want, "case %d: %zu bytes, %zu dense: %ld bytes advised, want %ld", k, cases[k].size, cases[k].dense, got, cases[k].want);
        CHECK(nonzero(p, cases[k].size) == 0, "case %d: not zeroed", k);
        DP_FREE(p);
    }
    /* a plain block, then grown: the advice follows the size asked for */
    unsigned char *p = (unsigned char *)DP_MALLOC(3 * MIB), *q;
    CHECK(p && advised((const dp__blk *)p - 1, 4 * MIB) == (long)(2 * MIB), "3 MiB: not 2 MiB advised");
    q = p ? (unsigned char *)DP_REALLOC(p, 7 * MIB) : NULL;
    CHECK(q && advised((const dp__blk *)q - 1, 8 * MIB) == (long)(6 * MIB), "3 -> 7 MiB: not 6 MiB advised");
    DP_FREE(q ? q : p);
#endif
}

int main(void)
{
    test_growth();
    test_zero();
    test_array();
    test_advice();
    return dp_test_done();
}
