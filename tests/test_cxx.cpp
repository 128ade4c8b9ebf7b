// test_cxx.cpp - the implementation compiles as C++ (g++ -std=c++17 -Wall
// -Wextra -Werror) and works: a three-op graph simulated and checked by hand.
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

#include <string>

int main()
{
    dp_error err = {};
    dp_graph g;
    dp_graph_init(&g);
    const char *names[3] = {"a", "b", "c"};
    const double comp[3] = {1, 2, 3};
    for (int i = 0; i < 3; i++) {
        dp_op_desc d = {};
        d.name = names[i];
        d.kind = DP_OP_MATMUL;
        d.compute = comp[i];
        d.out_bytes = 1;
        int id = -1;
        CHECK(dp_graph_add_op(&g, &d, &id, &err) == 0 && id == i, "add %s: %s", names[i], err.msg);
    }
    CHECK(dp_graph_add_edge(&g, 0, 1, 1, &err) == 0, "edge a b: %s", err.msg);
    CHECK(dp_graph_add_edge(&g, 1, 2, 1, &err) == 0, "edge b c: %s", err.msg);
    CHECK(dp_graph_finalize(&g, &err) == 0, "finalize: %s", err.msg);

    dp_cluster c = {};
    CHECK(dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err) == 0, "cluster: %s", err.msg);
    // a d0 0-1, transfer 1-2 (1 byte / bandwidth 1), b d1 2-4,
    // transfer 4-5, c d0 5-8 -> makespan 8
    const int asg[3] = {0, 1, 0};
    dp_sim s = {};
    CHECK(dp_sim_init(&s, &g, &c, &err) == 0, "sim init: %s", err.msg);
    dp_sim_opts so = {};
    CHECK(dp_sim_run(&s, asg, &so, &err) == 0, "sim run: %s", err.msg);
    CHECK_NEAR(s.makespan, 8, 0, "C++ makespan");
    CHECK_NEAR(s.start[2], 5, 0, "C++ start of c");
    CHECK(s.n_xfers == 2, "C++ transfers %d", s.n_xfers);
    dp_sim_free(&s);
    // all on one device: 1 + 2 + 3 = 6
    const int one[3] = {1, 1, 1};
    double mk = -1;
    CHECK(dp_simulate(&g, &c, one, &so, &mk, &err) == 0, "simulate: %s", err.msg);
    CHECK_NEAR(mk, 6, 0, "C++ one-device makespan");
    // a placer runs too; cp keeps the chain on one device (6)
    dp_place_opts po = {};
    dp_place_result res = {};
    int out[3];
    CHECK(dp_place(DP_METHOD_CP, &g, &c, &po, out, &res, &err) == 0, "cp: %s", err.msg);
    CHECK_NEAR(res.makespan, 6, 0, "C++ cp makespan");
    CHECK(std::string(dp_kind_name(g.kind[0])) == "matmul", "kind name");
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return dp_test_done();
}
