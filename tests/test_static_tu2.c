/* test_static_tu2.c - the second translation unit of test_static.c, with
   its own private doppler (DOPPLER_STATIC) and the same calls. */
#define DOPPLER_STATIC
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"

typedef void (*tu2_init_fn)(dp_graph *);
tu2_init_fn tu2_graph_init(void);
int tu2_place(dp_method m, int devices, int *assign, double *makespan, char *err, size_t errlen);

tu2_init_fn tu2_graph_init(void) { return dp_graph_init; }

#include "static_place.h"

int tu2_place(dp_method m, int devices, int *assign, double *makespan, char *errbuf, size_t errlen)
{
    dp_error err = {0};
    int rc = static_place(m, devices, assign, makespan, &err);
    snprintf(errbuf, errlen, "%s", err.msg);
    return rc;
}
