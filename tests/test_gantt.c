/* test_gantt.c - the SVG Gantt chart writer. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_error err;

/* every <title>...</title> text, concatenated with '\n' (malloc'd) */
static char *titles(const char *svg, int *count)
{
    size_t cap = strlen(svg) + 1;
    char *out = (char *)calloc(cap, 1);
    size_t n = 0;
    *count = 0;
    for (const char *p = strstr(svg, "<title>"); p; p = strstr(p, "<title>")) {
        p += 7;
        const char *q = strstr(p, "</title>");
        if (!q) break;
        memcpy(out + n, p, (size_t)(q - p));
        n += (size_t)(q - p);
        out[n++] = '\n';
        (*count)++;
        p = q;
    }
    out[n] = 0;
    return out;
}

int main(void)
{
    memset(&err, 0, sizeof err);
    /* alpha(2.5) d0 -> beta(4) d1 [1 B]; gamma(3) d0 source;
       beta, gamma -> delta(5) d1 [0.5 B from gamma].  Bandwidth 1.
       d0: alpha 0-2.5 (alpha, gamma ready at 0: lower index), gamma 2.5-5.5
       alpha->beta 2.5-3.5, beta 3.5-7.5; gamma->delta 5.5-6;
       delta 7.5-12.5 -> makespan 12.5. The fifth op has an XML-hostile
       name and runs on d0 in parallel: amp<&>op(1) source, 5.5-6.5. */
    const char *names[5] = {"alpha_op", "beta_op", "gamma_op", "delta_op", "amp<&>op"};
    double comp[5] = {2.5, 4, 3, 5, 1};
    double out[5] = {1, 0, 0.5, 0, 0};
    dp_graph g;
    dp_graph_init(&g);
    for (int i = 0; i < 5; i++) {
        dp_op_desc d;
        memset(&d, 0, sizeof d);
        d.name = names[i];
        d.compute = comp[i];
        d.out_bytes = out[i];
        int id;
        CHECK(dp_graph_add_op(&g, &d, &id, &err) == 0, "add %s: %s", names[i], err.msg);
    }
    dp_graph_add_edge(&g, 0, 1, 1, &err);
    dp_graph_add_edge(&g, 1, 3, 0, &err);
    dp_graph_add_edge(&g, 2, 3, 0.5, &err);
    if (dp_graph_finalize(&g, &err) != 0) {
        CHECK(0, "finalize: %s", err.msg);
        return dp_test_done();
    }
    dp_cluster c;
    memset(&c, 0, sizeof c);
    CHECK(dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err) == 0, "cluster");
    dp_sim s;
    memset(&s, 0, sizeof s);
    int asg[5] = {0, 1, 0, 1, 0};
    if (dp_sim_init(&s, &g, &c, &err) != 0) {
        CHECK(0, "sim init: %s", err.msg);
        return dp_test_done();
    }
    dp_sim_opts so;
    memset(&so, 0, sizeof so);
    CHECK(dp_sim_run(&s, asg, &so, &err) == 0, "sim run: %s", err.msg);
    CHECK_NEAR(s.makespan, 12.5, 0, "gantt graph makespan");

    char path[256];
    dp_test_tmp(path, sizeof path, "gantt.svg");
    remove(path);
    dp_gantt_opts go;
    memset(&go, 0, sizeof go);
    go.title = "T&T <chart>";
    int rc = dp_gantt_svg(path, &s, asg, &go, &err);
    CHECK(rc == 0, "gantt: %s", err.msg);
    size_t len = 0;
    char *svg = dp_test_read_file(path, &len);
    CHECK(svg != NULL, "no file at %s", path);
    if (svg) {
        CHECK(strncmp(svg, "<svg", 4) == 0, "file starts with '%.10s', not '<svg'", svg);
        CHECK(strstr(svg, "</svg>") != NULL, "no closing </svg>");
        CHECK(strstr(svg, "12.5") != NULL, "makespan 12.5 not in the chart");
        int nt = 0;
        char *t = titles(svg, &nt);
        CHECK(nt >= 5, "%d <title> elements for 5 ops", nt);
        for (int i = 0; i < 4; i++)
            CHECK(strstr(t, names[i]) != NULL, "no <title> names %s", names[i]);
        /* XML escaping of op names and the chart title */
        CHECK(strstr(t, "amp&lt;&amp;&gt;op") != NULL, "op name not escaped in its title");
        CHECK(strstr(svg, "amp<&>op") == NULL, "raw '<&>' from an op name in the SVG");
        CHECK(strstr(svg, "T&amp;T &lt;chart&gt;") != NULL, "chart title missing or not escaped");
        CHECK(strstr(svg, "<chart>") == NULL, "raw chart title in the SVG");
        /* one op box per op: exactly one title starts with each op's name
           (transfer tooltips may mention it further in) */
        const char *esc[5] = {"alpha_op", "beta_op", "gamma_op", "delta_op", "amp&lt;&amp;&gt;op"};
        for (int i = 0; i < 5; i++) {
            int k = 0;
            size_t L = strlen(esc[i]);
            for (const char *line = t; *line;) {
                const char *nl = strchr(line, '\n');
                if (strncmp(line, esc[i], L) == 0 && (line[L] == ' ' || line[L] == '\n' || !line[L]))
                    k++;
                if (!nl) break;
                line = nl + 1;
            }
            CHECK(k == 1, "%s: %d titles start with it, expected 1", names[i], k);
        }
        free(t);
        free(svg);
    }
    /* the FILE* variant writes the same chart */
    FILE *f = tmpfile();
    if (f) {
        CHECK(dp_gantt_svg_file(f, &s, asg, &go, &err) == 0, "gantt file: %s", err.msg);
        long n = ftell(f);
        CHECK((size_t)n == len, "FILE* chart has %ld bytes, path chart %zu", n, len);
        fclose(f);
    }
    /* hide_transfers and a width */
    go.hide_transfers = 1;
    go.width = 400;
    go.title = NULL;
    char p2[256];
    dp_test_tmp(p2, sizeof p2, "gantt_small.svg");
    CHECK(dp_gantt_svg(p2, &s, asg, &go, &err) == 0, "gantt small: %s", err.msg);
    char *svg2 = dp_test_read_file(p2, NULL);
    CHECK(svg2 && strncmp(svg2, "<svg", 4) == 0 && strstr(svg2, "400"), "small chart");
    free(svg2);

    /* a path that cannot be opened: error, and no file left */
    char bad[300];
    dp_test_tmp(path, sizeof path, "gantt_missing_dir");
    snprintf(bad, sizeof bad, "%s/chart.svg", path);
    memset(&err, 0, sizeof err);
    rc = dp_gantt_svg(bad, &s, asg, &go, &err);
    CHECK(rc != 0 && err.code == DP_ERR_IO, "gantt into a missing directory: rc %d code %d", rc,
          (int)err.code);
    CHECK(strstr(err.msg, "gantt_missing_dir") != NULL, "message does not name the path: '%s'", err.msg);
    CHECK(!dp_test_exists(bad) && !dp_test_exists(path), "file or directory left behind");
    snprintf(bad, sizeof bad, "%s/chart.svg.tmp", path);
    CHECK(!dp_test_exists(bad), "temporary file left behind");
    /* the target is a directory */
    dp_test_tmp(path, sizeof path, "gantt_is_dir");
    dp_test_mkdir(path);
    memset(&err, 0, sizeof err);
    rc = dp_gantt_svg(path, &s, asg, &go, &err);
    CHECK(rc != 0 && err.code == DP_ERR_IO, "gantt onto a directory: rc %d", rc);
    snprintf(bad, sizeof bad, "%s.tmp", path);
    CHECK(!dp_test_exists(bad), "%s left behind", bad);
    /* a simulator that never ran */
    dp_sim s2;
    memset(&s2, 0, sizeof s2);
    if (dp_sim_init(&s2, &g, &c, &err) == 0) {
        dp_test_tmp(path, sizeof path, "gantt_not_run.svg");
        remove(path);
        memset(&err, 0, sizeof err);
        CHECK(dp_gantt_svg(path, &s2, asg, &go, &err) != 0 && err.code != DP_OK, "gantt of a sim never run");
        CHECK(!dp_test_exists(path), "chart of a sim never run left a file");
        dp_sim_free(&s2);
    }
    dp_sim_free(&s);
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return dp_test_done();
}
