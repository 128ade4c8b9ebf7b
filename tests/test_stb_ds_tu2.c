/* test_stb_ds_tu2.c - the second translation unit of test_stb_ds.c:
   doppler's implementation, compiled after stb_ds's header (without its
   implementation, which test_stb_ds.c compiles), with allocation hooks
   that count. */
#include <stdlib.h>

#if defined(__has_include) && !defined(DP_TEST_NO_STB_DS)
#if __has_include(<stb/stb_ds.h>)
#include <stb/stb_ds.h>
#endif
#endif

static long dp_allocs;
static void *t_malloc(size_t n) { dp_allocs++; return malloc(n); }
static void *t_realloc(void *p, size_t n) { dp_allocs++; return realloc(p, n); }

#define DP_MALLOC(sz)     t_malloc(sz)
#define DP_REALLOC(p, sz) t_realloc(p, sz)
#define DP_FREE(p)        free(p)
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"

long tu2_dp_allocs(void);
long tu2_dp_allocs(void) { return dp_allocs; }
