/* test_blk.c - the default allocator (doppler.h, DP_MALLOC): on Linux its
   blocks of 2 MiB or more are mappings of whole 2 MiB on a 2 MiB
   boundary (advised as huge pages), smaller ones malloc's, each behind a
   header of 16 bytes. Checks, with every byte's value known: a block
   keeps its contents across every growth and shrink between the two
   kinds (malloc to mapping, a mapping grown where it is and moved, a
   mapping shrunk, a mapping shrunk below 2 MiB); calloc's blocks are
   zero, the fresh room of a grown mapping too; blocks are 16-byte
   aligned (malloc's promise); mappings start 16 bytes past a 2 MiB
   boundary. Elsewhere (DP_NO_HUGEPAGES, a sanitizer's build, not Linux)
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

int main(void)
{
    test_growth();
    test_zero();
    test_array();
    return dp_test_done();
}
