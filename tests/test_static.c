/* test_static.c - two translation units of one program each compile their
   own private doppler (DOPPLER_STATIC: every public function static).
   test_static_tu2.c is the other one; the program links only if no
   symbol of the implementation is extern (both copies would define it),
   and each copy works: the same graph gives the same results in both. */
#define DOPPLER_STATIC
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

/* test_static_tu2.c */
typedef void (*tu2_init_fn)(dp_graph *);
tu2_init_fn tu2_graph_init(void);
int tu2_place(dp_method m, int devices, int *assign, double *makespan, char *err, size_t errlen);

#include "static_place.h"

int main(void)
{
    static const dp_method methods[] = {DP_METHOD_HEFT, DP_METHOD_RANDOM, DP_METHOD_ANNEAL};
    dp_error err = {0};
    char err2[512] = "";
    int a1[40], a2[40], i, k;
    double m1 = -1, m2 = -2;

    /* two copies: each translation unit has its own dp_graph_init */
    CHECK(tu2_graph_init() != NULL && tu2_graph_init() != dp_graph_init,
          "test_static_tu2.c's dp_graph_init is this file's: not a private copy");
    for (k = 0; k < 3; k++) {
        const char *name = dp_method_name(methods[k]);
        for (i = 0; i < 40; i++) a1[i] = a2[i] = -1;
        CHECK(static_place(methods[k], 3, a1, &m1, &err) == 0, "%s here: %s", name, err.msg);
        CHECK(tu2_place(methods[k], 3, a2, &m2, err2, sizeof err2) == 0, "%s in tu2: %s", name, err2);
        CHECK(m1 > 0 && m1 == m2, "%s: makespan %.17g here, %.17g in tu2", name, m1, m2);
        CHECK(memcmp(a1, a2, sizeof a1) == 0, "%s: the two copies placed differently", name);
    }
    /* an error from one copy reads the same as from the other */
    CHECK(static_place(DP_METHOD_HEFT, DP_MAX_DEVICES + 1, a1, &m1, &err) != 0 && tu2_place(DP_METHOD_HEFT, DP_MAX_DEVICES + 1, a2, &m2, err2, sizeof err2) != 0 &&
          strcmp(err.msg, err2) == 0 && err.msg[0], "too many devices: '%s' here, '%s' in tu2", err.msg, err2);
    return dp_test_done();
}
