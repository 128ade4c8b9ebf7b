/* doppler - the command-line front end of doppler.h.

       doppler info    GRAPH [--devices N | --cluster C] [--json]
       doppler place   GRAPH --method M [--devices N | --cluster C] [--seed S]
                       [--order fifo|priority] [--budget B] [--start ASSIGN]
                       [--out ASSIGN] [--gantt OUT.svg [--no-transfers]] [--json]
       doppler sim     GRAPH --assign ASSIGN [--devices N | --cluster C]
                       [--order fifo|priority] [--gantt OUT.svg [--no-transfers]] [--json]
       doppler bench   GRAPH... [--methods m1,m2,...|all] [--devices N | --cluster C]
                       [--seed S] [--order O] [--budget B] [--json | --md]
       doppler convert IN OUT [--to FORMAT]
       doppler gen     layered|random [--nodes N] [--width W] [--density D]
                       [--regularity R] [--jump J] [--ccr C] [--seed S] -o GRAPH
       doppler help [COMMAND]

   Every command that reads a graph takes --format F (native, doppler, stg;
   default: detected from the content). Exit status: 0 success, 1 failure
   (the library's message on stderr), 2 bad usage.
   Build: cc -std=gnu11 -O2 -I. -o build/doppler demos/doppler.c -lm
*/
#define DOPPLER_IMPLEMENTATION
#include "doppler.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define DEFAULT_DEVICES 4

/* ----------------------------------------------------------------------
   help texts
   ---------------------------------------------------------------------- */
static const char *help_main =
    "doppler " DP_VERSION " - device placement of dataflow graphs\n"
    "\n"
    "usage: doppler COMMAND [ARGS] [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  info     statistics of a graph and the lower bound on its makespan\n"
    "  place    place a graph with one method, write the assignment\n"
    "  sim      simulate a given assignment\n"
    "  bench    every (graph, method) pair: makespan, lower bound, ratio, seconds\n"
    "  convert  convert a graph between formats\n"
    "  gen      generate a random DAG (layered or random)\n"
    "  help     this text, or 'doppler help COMMAND'\n"
    "\n"
    "methods: single, round-robin, random, cp, heft, enumopt, anneal\n"
    "formats: native (.dpg), doppler (the DOPPLER reference's .txt), stg (.stg)\n"
    "cluster: --devices N (N devices in the graph's own units; default 4, or the\n"
    "         graph's per-device time columns when it has them) or --cluster C\n"
    "         where C is a cluster file (.dpc) or a preset: reference, homogeneous:N\n"
    "exit status: 0 success, 1 failure, 2 bad usage\n";

static const char *help_info =
    "usage: doppler info GRAPH [--devices N | --cluster C] [--format F] [--json]\n"
    "\n"
    "Prints nodes, edges, sources, sinks, depth (ops on the longest chain), total\n"
    "compute, total edge bytes, the critical-path length (fastest device, no\n"
    "communication), the work bound (total work / devices) and the lower bound on\n"
    "the makespan for the cluster (their maximum).\n"
    "\n"
    "  --devices N    N devices in the graph's units (default 4)\n"
    "  --cluster C    cluster file or preset (reference, homogeneous:N)\n"
    "  --format F     graph format: native, doppler, stg (default: detect)\n"
    "  --json         one JSON object\n";

static const char *help_place =
    "usage: doppler place GRAPH --method M [--devices N | --cluster C] [OPTIONS]\n"
    "\n"
    "Places every op of GRAPH on a device with method M, prints the simulated\n"
    "makespan with its ratio to the lower bound and the load of each device.\n"
    "\n"
    "  --method M     single, round-robin, random, cp, heft, enumopt, anneal\n"
    "  --devices N    N devices in the graph's units (default 4)\n"
    "  --cluster C    cluster file or preset (reference, homogeneous:N)\n"
    "  --seed S       seed of random and anneal (default 1)\n"
    "  --order O      runtime order scoring placements: fifo (default), priority\n"
    "  --budget B     anneal: simulations (default 20 x ops x devices)\n"
    "  --start A      enumopt, anneal: initial assignment file (default: cp's)\n"
    "  --out A, -o A  write the assignment (line i: device of node i)\n"
    "  --gantt F.svg  write an SVG Gantt chart of the simulated schedule\n"
    "  --no-transfers leave the transfer arrows out of the chart\n"
    "  --format F     graph format: native, doppler, stg (default: detect)\n"
    "  --json         one JSON object (with the assignment)\n";

static const char *help_sim =
    "usage: doppler sim GRAPH --assign A [--devices N | --cluster C] [OPTIONS]\n"
    "\n"
    "Simulates the assignment in file A (line i: device of node i, '#' comments)\n"
    "on the work-conserving runtime and prints the makespan with its ratio to the\n"
    "lower bound, and per device its ops, busy time, utilisation and peak memory.\n"
    "\n"
    "  --assign A     assignment file (required)\n"
    "  --devices N    N devices in the graph's units (default 4)\n"
    "  --cluster C    cluster file or preset (reference, homogeneous:N)\n"
    "  --order O      fifo (default: earliest ready first) or priority (b-level)\n"
    "  --gantt F.svg  write an SVG Gantt chart of the schedule\n"
    "  --no-transfers leave the transfer arrows out of the chart\n"
    "  --format F     graph format: native, doppler, stg (default: detect)\n"
    "  --json         one JSON object, with every op as\n"
    "                 ops: [{\"node\": i, \"device\": d, \"start\": t0, \"end\": t1}, ...]\n";

static const char *help_bench =
    "usage: doppler bench GRAPH... [--methods m1,m2,...] [OPTIONS]\n"
    "\n"
    "Places every graph with every method; one row per (graph, method) with the\n"
    "makespan, the lower bound, their ratio and the seconds the placer took.\n"
    "\n"
    "  --methods L    comma-separated methods, or all (default: all)\n"
    "  --devices N    N devices in each graph's units (default 4)\n"
    "  --cluster C    cluster file or preset (reference, homogeneous:N)\n"
    "  --seed S       seed of random and anneal (default 1)\n"
    "  --order O      fifo (default) or priority\n"
    "  --budget B     anneal: simulations (default 20 x ops x devices)\n"
    "  --format F     graph format: native, doppler, stg (default: detect)\n"
    "  --json         a JSON array, one object per row\n"
    "  --md           the table as markdown\n";

static const char *help_convert =
    "usage: doppler convert IN OUT [--to FORMAT] [--format F]\n"
    "\n"
    "Reads IN (any readable format) and writes OUT in FORMAT (default: from OUT's\n"
    "extension: .dpg native, .txt doppler, .stg stg; otherwise native). OUT '-' is\n"
    "standard output.\n"
    "\n"
    "  --to FORMAT    native, doppler, stg\n"
    "  --format F     format of IN (default: detect)\n";

static const char *help_gen =
    "usage: doppler gen layered|random [OPTIONS] -o GRAPH\n"
    "\n"
    "Generates a random DAG in the manner of DAGGEN: ops in levels, costs uniform\n"
    "in [1, 10]. layered: edges between consecutive levels only.\n"
    "\n"
    "  --nodes N       ops (default 100)\n"
    "  --width W       mean ops per level (default sqrt(nodes))\n"
    "  --density D     probability of each candidate edge (default 0.3)\n"
    "  --regularity R  1 = all levels the same size (default 0.5)\n"
    "  --jump J        levels an edge may span (default 1 layered, 3 random)\n"
    "  --ccr C         mean transfer time / mean op time (default 0: none)\n"
    "  --seed S        seed (default 1)\n"
    "  --out G, -o G   output graph ('-' = standard output; format by extension)\n";

/* ----------------------------------------------------------------------
   options
   ---------------------------------------------------------------------- */
typedef struct cli {
    const char *cmd;
    const char **pos;       /* positional arguments, at most argc of them */
    int n_pos;
    int devices, devices_set;
    const char *cluster;
    dp_format fmt;
    int json, md, no_transfers;
    const char *method, *methods, *assign, *start, *out, *gantt, *to;
    uint64_t seed;
    dp_order order;
    int budget;
    dp_gen_opts gen;
} cli;

static int usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "doppler%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'doppler help%s%s'.\n", cmd ? " " : "", cmd ? cmd : "");
    return EXIT_USAGE;
}

static int fail(const dp_error *e)
{
    fprintf(stderr, "doppler: %s\n",
            e->msg[0] ? e->msg : dp_code_text(e->code ? e->code : DP_ERR_ARG));
    return EXIT_FAIL;
}

static int parse_long(const char *cmd, const char *opt, const char *s,
                      long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return usage(cmd, "%s: '%s' is not an integer in [%ld, %ld]", opt, s, lo, hi);
    *out = v;
    return 0;
}

static int parse_double(const char *cmd, const char *opt, const char *s,
                        double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi))
        return usage(cmd, "%s: '%s' is not a number in [%g, %g]", opt, s, lo, hi);
    *out = v;
    return 0;
}

static int parse_seed(const char *cmd, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *s == '-' || *end || errno)
        return usage(cmd, "--seed: '%s' is not a non-negative integer", s);
    *out = (uint64_t)v;
    return 0;
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

/* Parses argv[first..argc) for command o->cmd, which accepts the options
   named in `allowed`. Returns 0, EXIT_USAGE, or -1 after printing help. */
static int parse_args(cli *o, int argc, char **argv, int first,
                      const char *allowed, const char *help)
{
    const char *cmd = o->cmd;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help, stdout);
            return -1;
        }
        if (a[0] != '-' || !strcmp(a, "-")) {
            o->pos[o->n_pos++] = a;
            continue;
        }
        char name[64];
        const char *val = NULL;
        if (!strcmp(a, "-o")) {
            strcpy(name, "out");
        } else if (a[1] == '-' && a[2]) {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
            if (n >= sizeof name) return usage(cmd, "unknown option '%s'", a);
            memcpy(name, a + 2, n);
            name[n] = 0;
            if (eq) val = eq + 1;
        } else {
            return usage(cmd, "unknown option '%s'", a);
        }
        if (!has_word(allowed, name))
            return usage(cmd, "unknown option '%s'", a);
        if (!strcmp(name, "json") || !strcmp(name, "md") || !strcmp(name, "no-transfers")) {
            if (val) return usage(cmd, "--%s takes no value", name);
            if (name[0] == 'j') o->json = 1;
            else if (name[0] == 'm') o->md = 1;
            else o->no_transfers = 1;
            continue;
        }
        if (!val) {
            if (i + 1 >= argc) return usage(cmd, "--%s needs a value", name);
            val = argv[++i];
        }
        long l = 0;
        double d = 0;
        int rc = 0;
        if (!strcmp(name, "devices")) {
            rc = parse_long(cmd, "--devices", val, 1, DP_MAX_DEVICES, &l);
            o->devices = (int)l;
            o->devices_set = 1;
        } else if (!strcmp(name, "cluster")) {
            o->cluster = val;
        } else if (!strcmp(name, "format")) {
            if (dp_format_parse(val, &o->fmt))
                rc = usage(cmd, "--format: unknown format '%s' (native, doppler, stg)", val);
        } else if (!strcmp(name, "method")) {
            o->method = val;
        } else if (!strcmp(name, "methods")) {
            o->methods = val;
        } else if (!strcmp(name, "assign")) {
            o->assign = val;
        } else if (!strcmp(name, "start")) {
            o->start = val;
        } else if (!strcmp(name, "out")) {
            o->out = val;
        } else if (!strcmp(name, "gantt")) {
            o->gantt = val;
        } else if (!strcmp(name, "to")) {
            o->to = val;
        } else if (!strcmp(name, "seed")) {
            rc = parse_seed(cmd, val, &o->seed);
            o->gen.seed = o->seed;
        } else if (!strcmp(name, "order")) {
            if (!strcmp(val, "fifo")) o->order = DP_ORDER_FIFO;
            else if (!strcmp(val, "priority")) o->order = DP_ORDER_PRIORITY;
            else rc = usage(cmd, "--order: '%s' is neither fifo nor priority", val);
        } else if (!strcmp(name, "budget")) {
            rc = parse_long(cmd, "--budget", val, 1, INT_MAX, &l);
            o->budget = (int)l;
        } else if (!strcmp(name, "nodes")) {
            rc = parse_long(cmd, "--nodes", val, 1, DP_MAX_OPS, &l);
            o->gen.nodes = (int)l;
        } else if (!strcmp(name, "width")) {
            rc = parse_long(cmd, "--width", val, 1, DP_MAX_OPS, &l);
            o->gen.width = (int)l;
        } else if (!strcmp(name, "jump")) {
            rc = parse_long(cmd, "--jump", val, 1, DP_MAX_OPS, &l);
            o->gen.jump = (int)l;
        } else if (!strcmp(name, "density")) {
            rc = parse_double(cmd, "--density", val, 0, 1, &d);
            o->gen.density = d;
        } else if (!strcmp(name, "regularity")) {
            rc = parse_double(cmd, "--regularity", val, 0, 1, &d);
            o->gen.regularity = d;
        } else if (!strcmp(name, "ccr")) {
            rc = parse_double(cmd, "--ccr", val, 0, 1e6, &d);
            o->gen.ccr = d;
        }
        if (rc) return rc;
    }
    if (o->devices_set && o->cluster)
        return usage(cmd, "give --devices or --cluster, not both");
    if (o->json && o->md)
        return usage(cmd, "give --json or --md, not both");
    return 0;
}

/* ----------------------------------------------------------------------
   helpers: graphs, clusters, numbers, JSON
   ---------------------------------------------------------------------- */
static int load_graph(const char *path, dp_format fmt, dp_graph *g)
{
    dp_error e = {0};
    dp_graph_init(g);
    if (dp_graph_read(g, path, fmt, &e)) {
        dp_graph_free(g);
        return fail(&e);
    }
    return 0;
}

/* A --cluster value names a file when one exists by that name or when it
   looks like a path; otherwise a preset ("reference", "homogeneous:N"). */
static int is_preset_name(const char *s)
{
    return access(s, F_OK) != 0 && !strchr(s, '/') && !strchr(s, '.');
}

static int make_cluster(const cli *o, const dp_graph *g, dp_cluster *c)
{
    dp_error e = {0};
    int rc;
    memset(c, 0, sizeof *c);
    if (o->cluster) {
        rc = is_preset_name(o->cluster) ? dp_cluster_preset(c, o->cluster, &e)
                                        : dp_cluster_read(c, o->cluster, &e);
    } else {
        int n = o->devices_set ? o->devices
              : g->n_dev_time > 0 ? g->n_dev_time : DEFAULT_DEVICES;
        rc = dp_cluster_for_graph(c, g, n, &e);
    }
    if (!rc) rc = dp_check(g, c, &e);
    if (rc) {
        dp_cluster_free(c);
        memset(c, 0, sizeof *c);
        return fail(&e);
    }
    return 0;
}

static double ratio_of(double makespan, double lb)
{
    if (lb > 0) return makespan / lb;
    return makespan == 0 ? 1.0 : INFINITY;
}

static const char *fmt_ratio(char *buf, size_t n, double r)
{
    if (isfinite(r)) snprintf(buf, n, "%.3f", r);
    else snprintf(buf, n, "n/a");
    return buf;
}

static const char *base_name(const char *path, char *buf, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(buf, n, "%s", b);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = 0;
    return buf;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void json_num(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, "%.17g", x);
    else fputs("null", f);
}

static void json_key_str(FILE *f, const char *k, const char *v)
{
    fprintf(f, ", \"%s\": ", k);
    if (v) json_str(f, v); else fputs("null", f);
}

static void json_key_num(FILE *f, const char *k, double v)
{
    fprintf(f, ", \"%s\": ", k);
    json_num(f, v);
}

static void json_assignment(FILE *f, const int *assign, int n)
{
    fputs(", \"assignment\": [", f);
    for (int i = 0; i < n; i++) fprintf(f, i ? ", %d" : "%d", assign[i]);
    fputc(']', f);
}

static const char *order_name(dp_order o)
{
    return o == DP_ORDER_PRIORITY ? "priority" : "fifo";
}

/* Runs the simulator once on `assign` and keeps the dp_sim for the caller
   (per-device table, ops, Gantt chart). */
static int simulate(const dp_graph *g, const dp_cluster *c, const int *assign,
                    dp_order order, dp_sim *s)
{
    dp_error e = {0};
    dp_sim_opts so = {0};
    so.order = order;
    so.track_memory = 1;
    memset(s, 0, sizeof *s);
    if (dp_sim_init(s, g, c, &e) || dp_sim_run(s, assign, &so, &e)) {
        dp_sim_free(s);
        memset(s, 0, sizeof *s);
        return fail(&e);
    }
    return 0;
}

static int write_gantt(const char *path, const dp_sim *s, const int *assign,
                       const char *title, int no_transfers)
{
    dp_error e = {0};
    dp_gantt_opts go = {0};
    go.title = title;
    go.hide_transfers = no_transfers;
    int rc = strcmp(path, "-") ? dp_gantt_svg(path, s, assign, &go, &e)
                               : dp_gantt_svg_file(stdout, s, assign, &go, &e);
    return rc ? fail(&e) : 0;
}

static void print_devices(const dp_sim *s, const int *assign)
{
    const dp_graph *g = s->g;
    const dp_cluster *c = s->c;
    printf("\n%-6s  %-12s  %6s  %14s  %6s  %14s\n",
           "device", "name", "ops", "busy", "util", "peak bytes");
    for (int d = 0; d < c->n; d++) {
        int n = 0;
        for (int v = 0; v < g->n_ops; v++) n += assign[v] == d;
        double util = s->makespan > 0 ? 100.0 * s->busy[d] / s->makespan : 0;
        printf("%-6d  %-12.12s  %6d  %14.6g  %5.1f%%  %14.6g\n", d,
               c->name ? c->name[d] : "", n, s->busy[d], util,
               s->peak_bytes ? s->peak_bytes[d] : 0.0);
    }
}

static int cluster_label(const cli *o, const dp_cluster *c, char *buf, size_t n)
{
    if (o->cluster) snprintf(buf, n, "%d (%s)", c->n, o->cluster);
    else snprintf(buf, n, "%d", c->n);
    return 0;
}

/* ----------------------------------------------------------------------
   doppler info
   ---------------------------------------------------------------------- */
static int cmd_info(cli *o)
{
    if (o->n_pos != 1) return usage(o->cmd, "expects exactly one GRAPH");
    const char *path = o->pos[0];
    dp_graph g;
    dp_cluster c;
    dp_stats st;
    if (load_graph(path, o->fmt, &g)) return EXIT_FAIL;
    if (make_cluster(o, &g, &c)) { dp_graph_free(&g); return EXIT_FAIL; }
    memset(&st, 0, sizeof st);
    if (dp_graph_stats(&g, &c, &st)) {
        dp_error e = {DP_ERR_ARG, "dp_graph_stats failed"};
        dp_cluster_free(&c);
        dp_graph_free(&g);
        return fail(&e);
    }
    if (o->json) {
        printf("{\"graph\": ");
        json_str(stdout, path);
        json_key_str(stdout, "format", dp_format_name(g.format));
        printf(", \"devices\": %d, \"nodes\": %d, \"edges\": %d, \"sources\": %d, "
               "\"sinks\": %d, \"depth\": %d",
               c.n, st.nodes, st.edges, st.sources, st.sinks, st.depth);
        json_key_num(stdout, "total_compute", st.total_compute);
        json_key_num(stdout, "total_bytes", st.total_bytes);
        json_key_num(stdout, "cp_length", st.cp_length);
        json_key_num(stdout, "work_bound", st.work_bound);
        json_key_num(stdout, "lower_bound", st.lower_bound);
        printf("}\n");
    } else {
        char dev[96];
        cluster_label(o, &c, dev, sizeof dev);
        printf("%-14s %s\n", "graph", path);
        printf("%-14s %s\n", "format", dp_format_name(g.format));
        printf("%-14s %d\n", "nodes", st.nodes);
        printf("%-14s %d\n", "edges", st.edges);
        printf("%-14s %d\n", "sources", st.sources);
        printf("%-14s %d\n", "sinks", st.sinks);
        printf("%-14s %d\n", "depth", st.depth);
        printf("%-14s %.6g\n", "total compute", st.total_compute);
        printf("%-14s %.6g\n", "total bytes", st.total_bytes);
        printf("%-14s %.6g\n", "cp length", st.cp_length);
        printf("%-14s %s\n", "devices", dev);
        printf("%-14s %.6g\n", "work bound", st.work_bound);
        printf("%-14s %.6g\n", "lower bound", st.lower_bound);
    }
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return EXIT_OK;
}

/* ----------------------------------------------------------------------
   doppler place
   ---------------------------------------------------------------------- */
static int cmd_place(cli *o)
{
    if (o->n_pos != 1) return usage(o->cmd, "expects exactly one GRAPH");
    if (!o->method) return usage(o->cmd, "--method is required");
    dp_method m;
    if (dp_method_parse(o->method, &m))
        return usage(o->cmd, "--method: unknown method '%s'", o->method);
    const char *path = o->pos[0];
    dp_graph g;
    dp_cluster c;
    dp_error e = {0};
    int rc = EXIT_FAIL, *assign = NULL, *start = NULL;
    dp_sim s;
    memset(&s, 0, sizeof s);
    if (load_graph(path, o->fmt, &g)) return EXIT_FAIL;
    if (make_cluster(o, &g, &c)) { dp_graph_free(&g); return EXIT_FAIL; }

    assign = calloc((size_t)g.n_ops + 1, sizeof *assign);
    start = o->start ? calloc((size_t)g.n_ops + 1, sizeof *start) : NULL;
    if (!assign || (o->start && !start)) {
        e.code = DP_ERR_NOMEM;
        snprintf(e.msg, sizeof e.msg, "out of memory");
        fail(&e);
        goto done;
    }
    if (start && dp_assign_read(o->start, g.n_ops, c.n, start, &e)) { fail(&e); goto done; }

    dp_place_opts po = {0};
    po.seed = o->seed;
    po.order = o->order;
    po.budget = o->budget;
    po.start = start;
    dp_place_result res;
    memset(&res, 0, sizeof res);
    double t0 = dp_now();
    if (dp_place(m, &g, &c, &po, assign, &res, &e)) { fail(&e); goto done; }
    double secs = dp_now() - t0;
    if (simulate(&g, &c, assign, o->order, &s)) goto done;
    if (s.makespan != res.makespan)
        fprintf(stderr, "doppler: warning: placer reports makespan %.17g, "
                "the simulator gives %.17g\n", res.makespan, s.makespan);
    double lb = dp_lower_bound(&g, &c);
    double ratio = ratio_of(res.makespan, lb);

    if (o->out && dp_assign_write(o->out, assign, g.n_ops, &e)) { fail(&e); goto done; }
    if (o->gantt) {
        /* the chart's own subtitle gives makespan, lower bound and ratio */
        char title[512], gb[256];
        snprintf(title, sizeof title, "%s: %s on %d devices (%s order)",
                 base_name(path, gb, sizeof gb), dp_method_name(m), c.n, order_name(o->order));
        if (write_gantt(o->gantt, &s, assign, title, o->no_transfers)) goto done;
    }

    if (o->json) {
        printf("{\"graph\": ");
        json_str(stdout, path);
        json_key_str(stdout, "method", dp_method_name(m));
        printf(", \"devices\": %d", c.n);
        json_key_str(stdout, "order", order_name(o->order));
        json_key_num(stdout, "makespan", res.makespan);
        json_key_num(stdout, "lower_bound", lb);
        json_key_num(stdout, "ratio", ratio);
        json_key_num(stdout, "schedule_length", res.schedule_length);
        printf(", \"simulations\": %ld", res.simulations);
        json_key_num(stdout, "seconds", secs);
        json_assignment(stdout, assign, g.n_ops);
        printf("}\n");
    } else {
        char rb[32], dev[96];
        cluster_label(o, &c, dev, sizeof dev);
        printf("%-16s %s\n", "graph", path);
        printf("%-16s %s\n", "method", dp_method_name(m));
        printf("%-16s %s\n", "devices", dev);
        printf("%-16s %.6g  (%s x lower bound)\n", "makespan", res.makespan,
               fmt_ratio(rb, sizeof rb, ratio));
        printf("%-16s %.6g\n", "lower bound", lb);
        if (res.schedule_length != res.makespan)
            printf("%-16s %.6g  (%s x lower bound; the placer's own schedule)\n",
                   "schedule length", res.schedule_length,
                   fmt_ratio(rb, sizeof rb, ratio_of(res.schedule_length, lb)));
        printf("%-16s %ld\n", "simulations", res.simulations);
        printf("%-16s %.4g\n", "seconds", secs);
        if (o->out) printf("%-16s %s\n", "assignment", o->out);
        if (o->gantt) printf("%-16s %s\n", "gantt", o->gantt);
        print_devices(&s, assign);
    }
    rc = EXIT_OK;
done:
    dp_sim_free(&s);
    free(start);
    free(assign);
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler sim
   ---------------------------------------------------------------------- */
static int cmd_sim(cli *o)
{
    if (o->n_pos != 1) return usage(o->cmd, "expects exactly one GRAPH");
    if (!o->assign) return usage(o->cmd, "--assign is required");
    const char *path = o->pos[0];
    dp_graph g;
    dp_cluster c;
    dp_error e = {0};
    dp_sim s;
    int rc = EXIT_FAIL, *assign = NULL;
    memset(&s, 0, sizeof s);
    if (load_graph(path, o->fmt, &g)) return EXIT_FAIL;
    if (make_cluster(o, &g, &c)) { dp_graph_free(&g); return EXIT_FAIL; }
    assign = calloc((size_t)g.n_ops + 1, sizeof *assign);
    if (!assign) {
        e.code = DP_ERR_NOMEM;
        snprintf(e.msg, sizeof e.msg, "out of memory");
        fail(&e);
        goto done;
    }
    if (dp_assign_read(o->assign, g.n_ops, c.n, assign, &e)) { fail(&e); goto done; }
    double t0 = dp_now();
    if (simulate(&g, &c, assign, o->order, &s)) goto done;
    double secs = dp_now() - t0;
    double lb = dp_lower_bound(&g, &c);
    double ratio = ratio_of(s.makespan, lb);
    if (o->gantt) {
        char title[512], gb[256];
        snprintf(title, sizeof title, "%s: assignment %s on %d devices (%s order)",
                 base_name(path, gb, sizeof gb), o->assign, c.n, order_name(o->order));
        if (write_gantt(o->gantt, &s, assign, title, o->no_transfers)) goto done;
    }
    if (o->json) {
        printf("{\"graph\": ");
        json_str(stdout, path);
        json_key_str(stdout, "method", "given");
        json_key_str(stdout, "assign_file", o->assign);
        printf(", \"devices\": %d", c.n);
        json_key_str(stdout, "order", order_name(o->order));
        json_key_num(stdout, "makespan", s.makespan);
        json_key_num(stdout, "lower_bound", lb);
        json_key_num(stdout, "ratio", ratio);
        json_key_num(stdout, "seconds", secs);
        json_assignment(stdout, assign, g.n_ops);
        fputs(",\n \"busy\": [", stdout);
        for (int d = 0; d < c.n; d++) {
            if (d) fputs(", ", stdout);
            json_num(stdout, s.busy[d]);
        }
        fputs("],\n \"peak_bytes\": [", stdout);
        for (int d = 0; d < c.n; d++) {
            if (d) fputs(", ", stdout);
            json_num(stdout, s.peak_bytes ? s.peak_bytes[d] : 0.0);
        }
        fputs("],\n \"ops\": [", stdout);
        for (int v = 0; v < g.n_ops; v++) {
            printf("%s\n  {\"node\": %d, \"device\": %d, \"start\": ", v ? "," : "", v, assign[v]);
            json_num(stdout, s.start[v]);
            fputs(", \"end\": ", stdout);
            json_num(stdout, s.end[v]);
            fputc('}', stdout);
        }
        fputs("],\n \"transfers\": [", stdout);
        for (int i = 0; i < s.n_xfers; i++) {
            const dp_xfer *x = &s.xfers[i];
            printf("%s\n  {\"edge\": %d, \"from\": %d, \"to\": %d, \"start\": ",
                   i ? "," : "", x->edge, x->from, x->to);
            json_num(stdout, x->start);
            fputs(", \"end\": ", stdout);
            json_num(stdout, x->end);
            fputc('}', stdout);
        }
        fputs("]}\n", stdout);
    } else {
        char rb[32], dev[96];
        cluster_label(o, &c, dev, sizeof dev);
        printf("%-12s %s\n", "graph", path);
        printf("%-12s %s\n", "assignment", o->assign);
        printf("%-12s %s\n", "devices", dev);
        printf("%-12s %s\n", "order", order_name(o->order));
        printf("%-12s %.6g  (%s x lower bound)\n", "makespan", s.makespan,
               fmt_ratio(rb, sizeof rb, ratio));
        printf("%-12s %.6g\n", "lower bound", lb);
        printf("%-12s %d\n", "transfers", s.n_xfers);
        if (o->gantt) printf("%-12s %s\n", "gantt", o->gantt);
        print_devices(&s, assign);
    }
    rc = EXIT_OK;
done:
    dp_sim_free(&s);
    free(assign);
    dp_cluster_free(&c);
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler bench
   ---------------------------------------------------------------------- */
static int parse_methods(const cli *o, dp_method *ms, int *n)
{
    *n = 0;
    const char *list = o->methods ? o->methods : "all";
    if (!strcmp(list, "all")) {
        for (int m = 0; m < DP_METHOD__COUNT; m++) ms[(*n)++] = (dp_method)m;
        return 0;
    }
    char buf[512];
    if (strlen(list) >= sizeof buf) return usage(o->cmd, "--methods: list too long");
    strcpy(buf, list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        dp_method m;
        if (dp_method_parse(tok, &m))
            return usage(o->cmd, "--methods: unknown method '%s'", tok);
        if (*n == 64) return usage(o->cmd, "--methods: too many methods");
        ms[(*n)++] = m;
    }
    if (*n == 0) return usage(o->cmd, "--methods: no method given");
    return 0;
}

static int cmd_bench(cli *o)
{
    if (o->n_pos < 1) return usage(o->cmd, "expects at least one GRAPH");
    dp_method ms[64];
    int n_ms, rc = EXIT_OK, rows = 0;
    if (parse_methods(o, ms, &n_ms)) return EXIT_USAGE;

    /* column widths known up front, so rows can be printed as they come */
    int wg = 5, wm = 6;
    char gb[256];
    for (int i = 0; i < o->n_pos; i++) {
        int n = (int)strlen(base_name(o->pos[i], gb, sizeof gb));
        if (n > wg) wg = n;
    }
    for (int k = 0; k < n_ms; k++) {
        int n = (int)strlen(dp_method_name(ms[k]));
        if (n > wm) wm = n;
    }
    const char *sep = o->md ? " | " : "  ";
    const char *lead = o->md ? "| " : "";
    const char *tail = o->md ? " |" : "";
    if (o->json) {
        printf("[");
    } else {
        printf("%s%-*s%s%6s%s%7s%s%-*s%s%12s%s%12s%s%7s%s%10s%s\n", lead, wg, "graph", sep,
               "ops", sep, "devices", sep, wm, "method", sep, "makespan", sep,
               "lower bound", sep, "ratio", sep, "seconds", tail);
        if (o->md) {
            const int widths[8] = {wg, 6, 7, wm, 12, 12, 7, 10};
            const int right[8] = {0, 1, 1, 0, 1, 1, 1, 1};
            for (int k = 0; k < 8; k++) {
                putchar('|');
                for (int j = 0; j < widths[k] + 2 - right[k]; j++) putchar('-');
                if (right[k]) putchar(':');
            }
            printf("|\n");
        }
    }
    fflush(stdout);

    /* best method per graph, for the summary under the human table */
    char (*best_name)[32] = calloc((size_t)o->n_pos, sizeof *best_name);
    double *best_ms = calloc((size_t)o->n_pos, sizeof *best_ms);
    double *best_ratio = calloc((size_t)o->n_pos, sizeof *best_ratio);
    if (!best_name || !best_ms || !best_ratio) {
        free(best_name); free(best_ms); free(best_ratio);
        dp_error e = {DP_ERR_NOMEM, "out of memory"};
        return fail(&e);
    }

    for (int i = 0; i < o->n_pos; i++) {
        const char *path = o->pos[i];
        dp_graph g;
        dp_cluster c;
        best_ms[i] = INFINITY;
        if (load_graph(path, o->fmt, &g)) { rc = EXIT_FAIL; continue; }
        if (make_cluster(o, &g, &c)) { dp_graph_free(&g); rc = EXIT_FAIL; continue; }
        int *assign = calloc((size_t)g.n_ops + 1, sizeof *assign);
        double lb = dp_lower_bound(&g, &c);
        for (int k = 0; assign && k < n_ms; k++) {
            dp_error e = {0};
            dp_place_opts po = {0};
            dp_place_result res;
            memset(&res, 0, sizeof res);
            po.seed = o->seed;
            po.order = o->order;
            po.budget = o->budget;
            double t0 = dp_now();
            if (dp_place(ms[k], &g, &c, &po, assign, &res, &e)) {
                fprintf(stderr, "doppler: %s with %s: %s\n", path, dp_method_name(ms[k]),
                        e.msg[0] ? e.msg : dp_code_text(e.code));
                rc = EXIT_FAIL;
                continue;
            }
            double secs = dp_now() - t0;
            double ratio = ratio_of(res.makespan, lb);
            if (res.makespan < best_ms[i]) {
                best_ms[i] = res.makespan;
                best_ratio[i] = ratio;
                snprintf(best_name[i], sizeof best_name[i], "%s", dp_method_name(ms[k]));
            }
            if (o->json) {
                printf("%s\n{\"graph\": ", rows ? "," : "");
                json_str(stdout, path);
                json_key_str(stdout, "method", dp_method_name(ms[k]));
                printf(", \"devices\": %d, \"ops\": %d", c.n, g.n_ops);
                json_key_str(stdout, "order", order_name(o->order));
                json_key_num(stdout, "makespan", res.makespan);
                json_key_num(stdout, "lower_bound", lb);
                json_key_num(stdout, "ratio", ratio);
                json_key_num(stdout, "schedule_length", res.schedule_length);
                printf(", \"simulations\": %ld", res.simulations);
                json_key_num(stdout, "seconds", secs);
                json_assignment(stdout, assign, g.n_ops);
                printf("}");
            } else {
                char rb[32];
                printf("%s%-*s%s%6d%s%7d%s%-*s%s%12.6g%s%12.6g%s%7s%s%10.6f%s\n", lead, wg,
                       base_name(path, gb, sizeof gb), sep, g.n_ops, sep, c.n, sep, wm,
                       dp_method_name(ms[k]), sep, res.makespan, sep, lb, sep,
                       fmt_ratio(rb, sizeof rb, ratio), sep, secs, tail);
            }
            rows++;
            fflush(stdout);
        }
        if (!assign) {
            dp_error e = {DP_ERR_NOMEM, "out of memory"};
            rc = fail(&e);
        }
        free(assign);
        dp_cluster_free(&c);
        dp_graph_free(&g);
    }
    if (o->json) {
        printf("%s]\n", rows ? "\n" : "");
    } else if (!o->md) {
        for (int i = 0, header = 0; i < o->n_pos; i++) {
            char rb[32];
            if (!best_name[i][0]) continue;
            if (!header++) printf("\nbest per graph:\n");
            printf("  %-*s  %-*s  %12.6g  (%s x lower bound)\n", wg,
                   base_name(o->pos[i], gb, sizeof gb), wm, best_name[i], best_ms[i],
                   fmt_ratio(rb, sizeof rb, best_ratio[i]));
        }
    }
    free(best_name);
    free(best_ms);
    free(best_ratio);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler convert
   ---------------------------------------------------------------------- */
static int write_graph(const dp_graph *g, const char *out, dp_format fmt)
{
    dp_error e = {0};
    if (fmt == DP_FORMAT_AUTO && strcmp(out, "-")) fmt = dp_format_from_path(out);
    if (fmt == DP_FORMAT_AUTO) fmt = DP_FORMAT_NATIVE;
    int rc = strcmp(out, "-") ? dp_graph_write(g, out, fmt, &e)
                              : dp_graph_write_file(g, stdout, fmt, &e);
    if (rc) return fail(&e);
    if (strcmp(out, "-"))
        printf("wrote %s (%s): %d ops, %d edges\n", out, dp_format_name(fmt),
               g->n_ops, g->n_edges);
    return 0;
}

static int cmd_convert(cli *o)
{
    if (o->n_pos != 2) return usage(o->cmd, "expects IN and OUT");
    dp_format to = DP_FORMAT_AUTO;
    if (o->to && (dp_format_parse(o->to, &to) || to == DP_FORMAT_AUTO))
        return usage(o->cmd, "--to: unknown format '%s' (native, doppler, stg)", o->to);
    dp_graph g;
    if (load_graph(o->pos[0], o->fmt, &g)) return EXIT_FAIL;
    int rc = write_graph(&g, o->pos[1], to) ? EXIT_FAIL : EXIT_OK;
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   doppler gen
   ---------------------------------------------------------------------- */
static int cmd_gen(cli *o)
{
    if (o->n_pos != 1) return usage(o->cmd, "expects the shape: layered or random");
    if (!strcmp(o->pos[0], "layered")) o->gen.shape = DP_GEN_LAYERED;
    else if (!strcmp(o->pos[0], "random")) o->gen.shape = DP_GEN_RANDOM;
    else return usage(o->cmd, "unknown shape '%s' (layered or random)", o->pos[0]);
    if (!o->out) return usage(o->cmd, "-o GRAPH is required");
    dp_graph g;
    dp_error e = {0};
    dp_graph_init(&g);
    if (dp_gen(&g, &o->gen, &e)) {
        dp_graph_free(&g);
        return fail(&e);
    }
    int rc = write_graph(&g, o->out, DP_FORMAT_AUTO) ? EXIT_FAIL : EXIT_OK;
    dp_graph_free(&g);
    return rc;
}

/* ----------------------------------------------------------------------
   main
   ---------------------------------------------------------------------- */
typedef struct command {
    const char *name;
    int (*run)(cli *);
    const char *options;
    const char **help;
} command;

static const command commands[] = {
    {"info", cmd_info, "devices cluster format json", &help_info},
    {"place", cmd_place,
     "method devices cluster format seed order budget start out gantt no-transfers json",
     &help_place},
    {"sim", cmd_sim, "assign devices cluster format order gantt no-transfers json", &help_sim},
    {"bench", cmd_bench, "methods devices cluster format seed order budget json md",
     &help_bench},
    {"convert", cmd_convert, "to format", &help_convert},
    {"gen", cmd_gen, "nodes width density regularity jump ccr seed out", &help_gen},
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const command *find_command(const char *name)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(help_main, stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        if (argc > 2) {
            const command *c = find_command(argv[2]);
            if (!c) return usage(NULL, "unknown command '%s'", argv[2]);
            fputs(*c->help, stdout);
        } else {
            fputs(help_main, stdout);
        }
        return EXIT_OK;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("doppler %s\n", DP_VERSION);
        return EXIT_OK;
    }
    const command *c = find_command(name);
    if (!c) return usage(NULL, "unknown command '%s'", name);
    cli o;
    memset(&o, 0, sizeof o);
    o.cmd = c->name;
    o.pos = calloc((size_t)argc, sizeof *o.pos);
    if (!o.pos) return EXIT_FAIL;
    o.seed = 1;
    o.gen.seed = 1;
    int rc = parse_args(&o, argc, argv, 2, c->options, *c->help);
    if (rc < 0) rc = EXIT_OK;   /* --help */
    else if (rc == 0) rc = c->run(&o);
    free(o.pos);
    return rc;
}
