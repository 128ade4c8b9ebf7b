/* test_readers.c - the text readers' fast paths against what they stand
   for (see >>formats):
   - the check for bytes no text holds, eight bytes at a time: every byte
     value at every place of a word, and a word's first bad byte told;
   - numbers read without strtod: the same double, bit for bit, for
     integers, decimals and exponents around the fast path's bounds, and
     the same refusals;
   - edge lines read straight from the text: the same graph as the general
     reading of every other spelling of the same edges, and every fault
     told by the general reading;
   - op lines read straight from the text: the same graph or the same
     fault as when every space is a tab (read the general way);
   - DOPPLER's integer lists (eight digits at once) and op lines: values
     as strtoull reads them on both sides of the 15-digit and 2^53 bounds,
     every separator and leading zeros, faults at each place of a word,
     every form of op line, the names op0..op1000;
   - duplicate op names and edges, now found after the fact: told at the
     line of the later one, before any fault met after it, in the native,
     DOPPLER and STG formats;
   - a counts line that declares far more than the file holds: refused
     with its message, nothing sized by it;
   - name lookups after each reader (a DOPPLER file's found by number:
     as a scan of every name finds them), the topological order of a
     file listed out of order. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

static dp_error err;

static int rd(dp_graph *g, const char *text, dp_format fmt)
{
    return dp_graph_read_mem(g, text, strlen(text), "t.dpg", fmt, &err);
}

/* The read must fail with code and a message holding want. */
static void refused(const char *text, dp_format fmt, int code, const char *want, const char *what)
{
    dp_graph g;
    int rc = rd(&g, text, fmt);
    CHECK(rc == code && strstr(err.msg, want) != NULL, "%s: rc %d (want %d) '%s' (want '%s')", what, rc, code, err.msg, want);
    if (rc == 0) dp_graph_free(&g);
}

static char *native_text(const dp_graph *g)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return NULL;
    dp_graph_write_file(g, f, DP_FORMAT_NATIVE, &err);
    fclose(f);
    return buf;
}

/* ---- bytes no text holds --------------------------------------------------- */
static void test_binary_bytes(void)
{
    /* offsets in a 200-byte comment: the first bytes, the edges of the
       64-byte blocks the check reads at once, and the tail after them */
    static const int where[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                                62, 63, 64, 65, 100, 126, 127, 128, 129, 191, 192, 193, 198};
    enum { NW = sizeof where / sizeof where[0] };
    char buf[220], want[96];
    int bad = 0, good = 0;
    for (int c = 0; c < 256; c++) {
        int binary = c == 0 || (c < 32 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r') || c == 127;
        for (int w = 0; w < NW; w++) {
            dp_graph g;
            int at = where[w];
            memset(buf, 'a', sizeof buf);
            memcpy(buf, "#", 1);
            buf[at + 1] = (char)c;   /* a comment line: only the byte check can refuse it */
            int rc = dp_graph_read_mem(&g, buf, 200, "b", DP_FORMAT_NATIVE, &err);
            if (binary) {
                snprintf(want, sizeof want, "binary data (byte 0x%02x at offset %d)", c, at + 1);
                CHECK(rc == DP_ERR_PARSE && strstr(err.msg, want), "byte 0x%02x at %d: '%s'", c, at + 1, err.msg);
                bad++;
            } else {
                CHECK(rc == 0 || !strstr(err.msg, "binary data"), "byte 0x%02x at %d refused as binary: '%s'", c, at + 1, err.msg);
                good++;
            }
            if (!rc) dp_graph_free(&g);
        }
    }
    CHECK(bad == 28 * NW && good == 228 * NW, "%d bad, %d good placements", bad, good);   /* 0..8, 14..31, 127 */
    /* two bad bytes in one word: the first is told */
    {
        dp_graph g;
        memset(buf, 'a', sizeof buf);
        buf[0] = '#'; buf[13] = 0x7f; buf[10] = 0x01;
        int rc = dp_graph_read_mem(&g, buf, 30, "b", DP_FORMAT_NATIVE, &err);
        CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "byte 0x01 at offset 10"), "two bad bytes: '%s'", err.msg);
        memset(buf, 'a', sizeof buf);   /* and in one 64-byte block, the later first in memory order */
        buf[0] = '#'; buf[70] = 0x1f; buf[120] = 0x02;
        rc = dp_graph_read_mem(&g, buf, 200, "b", DP_FORMAT_NATIVE, &err);
        CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "byte 0x1f at offset 70"), "two bad bytes in a block: '%s'", err.msg);
    }
}

/* ---- numbers ------------------------------------------------------------------ */
static uint64_t rs = 0x1234567u;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }

/* A number as files spell them: digits, '.', an exponent, signs, zeros. */
static void random_number(char *s, size_t cap)
{
    int n = 0, digits = 1 + (int)(rnd() % 20), dot = (int)(rnd() % (digits + 2)) - 1, k;
    if (rnd() % 5 == 0) s[n++] = '-';
    if (rnd() % 4 == 0) for (k = (int)(rnd() % 4); k > 0; k--) s[n++] = '0';
    for (k = 0; k < digits && n < (int)cap - 16; k++) {
        if (k == dot) s[n++] = '.';
        s[n++] = (char)('0' + rnd() % 10);
    }
    if (dot == digits) s[n++] = '.';
    if (rnd() % 3 == 0) n += snprintf(s + n, cap - (size_t)n, "%s%d", rnd() % 2 ? "e" : (rnd() % 2 ? "e-" : "E+"), (int)(rnd() % 30));
    s[n] = 0;
}

static void test_numbers(void)
{
    static const char *const fixed[] = {
        "0", "-0", "1", "9007199254740992", "9007199254740993", "9007199254740991", "90071992547409921", "123456789012345678",
        "1e22", "1e23", "1e-22", "1e-23", "4.5e22", "9007199254740992e22", "9007199254740992e-22", "0.1", "0.30000000000000004",
        "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308", "1e309", "1e-400", "1.", ".5", "-.5", "5e", "5e+",
        "+5", "0x10", "inf", "nan", "-inf", "1e2147483648", "00000000000000000000001", "0.0000000000000000000000001",
        "1.5e-3", "123.456e-7", "-5e3", "1E5", "1e+5", "3.14159265358979323846", "0000.0000", "-0.0e-5", "", "-", ".", "e5" };
    char text[256], s[64];
    int tried = 0, same = 0;
    for (int i = 0; i < (int)(sizeof fixed / sizeof *fixed) + 20000; i++) {
        const char *v = fixed[i < (int)(sizeof fixed / sizeof *fixed) ? i : 0];
        if (i >= (int)(sizeof fixed / sizeof *fixed)) { random_number(s, sizeof s); v = s; }
        for (int signed_field = 0; signed_field < 2; signed_field++) {
            dp_graph g;
            char *e;
            double want;
            int ok;
            errno = 0;
            want = strtod(v, &e);
            ok = *v && *e == 0 && want == want && fabs(want) != HUGE_VAL && !(errno == ERANGE && fabs(want) > 1) && (signed_field || !(want < 0));
            if (signed_field) snprintf(text, sizeof text, "doppler-graph 1\ndevtimes 1\nop a compute=1 time=%s\n", v);
            else snprintf(text, sizeof text, "doppler-graph 1\nop a compute=%s\n", v);
            int rc = rd(&g, text, DP_FORMAT_NATIVE);
            tried++;
            if (ok) {
                double got = rc ? -1 : signed_field ? g.dev_time[0] : g.compute[0];
                CHECK(rc == 0 && memcmp(&got, &want, sizeof got) == 0, "'%s' (%s): rc %d, read %.17g, strtod %.17g: %s", v,
                      signed_field ? "time" : "compute", rc, got, want, err.msg);
                same += rc == 0 && memcmp(&got, &want, sizeof got) == 0;
            } else {
                CHECK(rc != 0, "'%s' (%s) read as %.17g; strtod refuses it", v, signed_field ? "time" : "compute",
                      signed_field ? g.dev_time[0] : g.compute[0]);
            }
            if (!rc) dp_graph_free(&g);
        }
    }
    CHECK(same > tried / 2, "only %d of %d numbers read", same, tried);
    /* integers (shape, arg, counts) as strtoll reads them */
    refused("doppler-graph 1\nop a compute=1 arg=0000000000000000000000000000007 shape=2x3\nop b arg=9223372036854775808\n",
            DP_FORMAT_NATIVE, DP_ERR_PARSE, "t.dpg:3: op 'b': arg '9223372036854775808' is not a non-negative integer", "arg past LLONG_MAX");
    {
        dp_graph g;
        int rc = rd(&g, "doppler-graph 1\nop a compute=1 arg=0000000000000000000000000000007 shape=002x-0003\n", DP_FORMAT_NATIVE);
        CHECK(rc == DP_ERR_PARSE && strstr(err.msg, "shape '002x-0003' is not ROWSxCOLS"), "shape with a sign: '%s'", err.msg);
        rc = rd(&g, "doppler-graph 1\nop a compute=1 arg=0000000000000000000000000000007 shape=002x0003\n", DP_FORMAT_NATIVE);
        CHECK(rc == 0 && g.arg[0] == 7 && g.rows[0] == 2 && g.cols[0] == 3, "leading zeros: rc %d '%s'", rc, err.msg);
        if (!rc) dp_graph_free(&g);
    }
}

/* ---- edge lines ---------------------------------------------------------------- */
static void test_edge_lines(void)
{
    static const char head[] = "doppler-graph 1\nop a compute=1 bytes=4\nop b compute=2 bytes=8\nop c compute=3\n";
    static const char *const spellings[] = {
        "edge a b\nedge b c\nedge a c\n",                 /* the usual form, read straight */
        "edge  a b\nedge b  c\nedge a c \n",              /* two spaces, a trailing one */
        "edge\ta\tb\n edge b c\nedge a c # a comment\n",  /* tabs, a leading space, a comment */
        "edge a b bytes=4\nedge b c bytes=8\r\nedge a c bytes=4\r\n", /* bytes given as they default, CRLF */
        "edge a b#\nedge b c#x\nedge a c",                /* a comment at once, no final newline */
    };
    char text[512], *first = NULL;
    for (int k = 0; k < 5; k++) {
        dp_graph g;
        snprintf(text, sizeof text, "%s%s", head, spellings[k]);
        int rc = rd(&g, text, DP_FORMAT_NATIVE);
        CHECK(rc == 0, "spelling %d: %s", k, err.msg);
        if (rc) continue;
        CHECK(g.n_edges == 3 && g.src[0] == 0 && g.dst[0] == 1 && g.src[1] == 1 && g.dst[1] == 2 && g.bytes[0] == 4 && g.bytes[1] == 8 &&
              g.bytes[2] == 4, "spelling %d: the edges", k);
        char *t = native_text(&g);
        if (!first) first = t;
        else { CHECK(t && !strcmp(t, first), "spelling %d reads another graph", k); free(t); }
        dp_graph_free(&g);
    }
    free(first);
    /* faults, told the general way: each line(s) after the three ops */
    static const struct { const char *tail; dp_code code; const char *msg, *what; } faults[] = {
        { "edge a b\nedge a x\n", DP_ERR_GRAPH, "t.dpg:6: edge target 'x' is not a declared op", "unknown target" },
        { "edge a b\nedge x b\n", DP_ERR_GRAPH, "t.dpg:6: edge source 'x' is not a declared op", "unknown source" },
        { "edge c c\n", DP_ERR_GRAPH, "t.dpg:5: self loop on op 'c'", "self loop" },
        { "edge a=1 b\n", DP_ERR_GRAPH, "t.dpg:5: edge source 'a=1' is not a declared op", "a name with '='" },
        { "edge a\n", DP_ERR_PARSE, "t.dpg:5: 'edge' needs SRC and DST", "one op" },
        { "edge a b c\n", DP_ERR_PARSE, "t.dpg:5: edge: unknown field 'c'", "three ops" },
        { "edge a b bytes=-1\n", DP_ERR_RANGE, "t.dpg:5: edge a -> b: bytes '-1' is negative", "negative bytes" },
        { "edge a b\nend\nedge b c\n", DP_ERR_PARSE, "t.dpg:7: 'edge' after the 'end' line (line 6)", "an edge after the end" } };
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
        snprintf(text, sizeof text, "%s%s", head, faults[k].tail);
        refused(text, DP_FORMAT_NATIVE, faults[k].code, faults[k].msg, faults[k].what);
    }
    refused("edge a b\n", DP_FORMAT_NATIVE, DP_ERR_PARSE, "t.dpg:1: expected 'doppler-graph 1', found 'edge'", "an edge before the header");
    refused("doppler-graph 1\nedge a b\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH, "t.dpg:2: edge source 'a' is not a declared op", "an edge before any op");
}

/* ---- op lines read straight from the text ---------------------------------
   The same file two ways: as given, whose op lines of the usual form the
   reader takes straight from the text, and with every space a tab, which
   it reads the general way (tokens). Both must read the same graph, or
   fail with the same code and message. */
static void same_both_ways(const char *text, const char *what)
{
    char *tabbed = strdup(text);
    dp_graph g1, g2;
    dp_error e1;
    if (!tabbed) return;
    for (char *p = tabbed; *p; p++) if (*p == ' ') *p = '\t';
    int r1 = rd(&g1, text, DP_FORMAT_NATIVE);
    e1 = err;
    int r2 = rd(&g2, tabbed, DP_FORMAT_NATIVE);
    CHECK(r1 == r2 && (r1 == 0 || strcmp(e1.msg, err.msg) == 0), "%s: straight rc %d '%s', general rc %d '%s'", what, r1, r1 ? e1.msg : "",
          r2, r2 ? err.msg : "");
    if (r1 == 0 && r2 == 0) {
        char *t1 = native_text(&g1), *t2 = native_text(&g2);
        CHECK(t1 && t2 && strcmp(t1, t2) == 0, "%s: another graph read straight than the general way", what);
        free(t1); free(t2);
    }
    if (r1 == 0) dp_graph_free(&g1);
    if (r2 == 0) dp_graph_free(&g2);
    free(tabbed);
}

static void test_op_lines(void)
{
    /* graphs: every field, none, in any order, big and odd numbers, ops
       after the first edge (then indexed as they come), a counts line */
    same_both_ways("doppler-graph 1\nop a compute=1 bytes=4 mem=2 resident=8\nop b\nop c resident=1 mem=2 bytes=3 compute=4\nedge a b\n"
                   "op d compute=1e300 bytes=0.5\nedge b d\nop e compute=0x10 bytes=1E3\nedge d e\n", "every field, none, any order");
    same_both_ways("doppler-graph 1\ncounts ops=3 edges=2\nop a compute=12345678901234567890 bytes=1.25e-3\nop b compute=0\nop c bytes=7\n"
                   "edge a b\nedge b c\nend\n", "a counts line, long numbers");
    /* ops past the room the reader made (a counts line that says fewer,
       op lines with a tab that the first op's count of "op " lines
       missed): the rest read the general way, the same graph */
    same_both_ways("doppler-graph 1\ncounts ops=2 edges=3\nop a compute=1\nop b compute=2\nop c compute=3 mem=4\nop d resident=5\n"
                   "edge a b\nedge b c\nedge c d\n", "more ops than a counts line says");
    {
        dp_graph g, h;
        int rc = rd(&g, "doppler-graph 1\nop a compute=1\nop\tb compute=2\nop\tc compute=3\nop d compute=4 bytes=2\nop e mem=3\n"
                        "op f resident=9\nedge a b\nedge e f\n", DP_FORMAT_NATIVE);
        int rh = rd(&h, "doppler-graph 1\nop a compute=1\nop b compute=2\nop c compute=3\nop d compute=4 bytes=2\nop e mem=3\n"
                        "op f resident=9\nedge a b\nedge e f\n", DP_FORMAT_NATIVE);
        char *tg = rc ? NULL : native_text(&g), *th = rh ? NULL : native_text(&h);
        CHECK(rc == 0 && rh == 0 && tg && th && strcmp(tg, th) == 0 && g.n_ops == 6 && g.compute[3] == 4 && g.out_bytes[3] == 2 &&
              g.mem_bytes[4] == 3 && g.resident[5] == 9, "op lines past the counted room: rc %d %d '%s'", rc, rh, err.msg);
        free(tg); free(th);
        if (!rc) dp_graph_free(&g);
        if (!rh) dp_graph_free(&h);
    }
    same_both_ways("doppler-graph 1\nop x.y/z:0 compute=1\nop \xc3\xa9t\xc3\xa9 compute=2\nedge x.y/z:0 \xc3\xa9t\xc3\xa9\n", "names with punctuation, UTF-8");
    {
        char text[600], name[200];
        memset(name, 'n', sizeof name);
        name[127] = 0;
        snprintf(text, sizeof text, "doppler-graph 1\nop %s compute=1\nop b\nedge %s b\n", name, name);
        same_both_ways(text, "a name of 127 bytes");
        name[127] = 'n'; name[128] = 0;
        snprintf(text, sizeof text, "doppler-graph 1\nop %s compute=1\nop b\n", name);
        same_both_ways(text, "a name of 128 bytes");
    }
    /* faults: told alike, whichever way the line was read */
    static const char *const faults[] = {
        "doppler-graph 1\nop a compute=1\nop a compute=2\nop b\nedge a b\n",        /* a name twice, before the first edge */
        "doppler-graph 1\nop a\nop b\nedge a b\nop a compute=2\n",                 /* and after it */
        "doppler-graph 1\nop a,b compute=1\n",                                     /* a comma in a name */
        "doppler-graph 1\nop a compute=-1\n",                                      /* negative */
        "doppler-graph 1\nop a compute=1e999\n",                                   /* past a double */
        "doppler-graph 1\nop a compute=nan\n",
        "doppler-graph 1\nop a compute=x\n",
        "doppler-graph 1\nop a compute=\n",                                        /* empty value */
        "doppler-graph 1\nop a compute=1 compute=2\n",                              /* a field twice */
        "doppler-graph 1\nop a compute=1=2\n",
        "doppler-graph 1\nop a cost=1\n",                                          /* unknown field */
        "doppler-graph 1\nop a =1\n",
        "doppler-graph 1\nop a=1 compute=1\n",                                     /* '=' in the name */
        "doppler-graph 1\nop compute=1\n",
        "doppler-graph 1\nop a kind=matmul compute=1\n",                            /* fields the straight reading leaves */
        "doppler-graph 1\ndevtimes 2\nop a compute=1\n",                            /* time= missing */
        "doppler-graph 1\ndevtimes 2\nop a compute=1 time=1,2\n",
        "doppler-graph 1\nop a compute=1\nend\nop b compute=1\n",                   /* after the end */
        "doppler-graph 1\nweight w bytes=4\nop a compute=1 weights=w\nop b weights=v\n",
        "doppler-graph 1\ncounts ops=1\nop a compute=1\nop b compute=1\n",          /* more than counted */
    };
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
        char what[32];
        snprintf(what, sizeof what, "op-line fault %zu", k);
        same_both_ways(faults[k], what);
    }
    /* and with the messages these have always had */
    refused("doppler-graph 1\nop a compute=1\nop a compute=2\nop b\nedge a b\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:3: duplicate op name 'a'", "a name twice, read straight");
    refused("doppler-graph 1\nop a\nop b\nedge a b\nop a compute=2\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH, "t.dpg:5: duplicate op name 'a'",
            "a name twice after the first edge, read straight");
    refused("doppler-graph 1\nop a compute=-1\n", DP_FORMAT_NATIVE, DP_ERR_RANGE, "t.dpg:2: op 'a': compute cost '-1' is negative",
            "a negative compute cost");
}

/* ---- DOPPLER's integer lists and op lines ------------------------------------- */
/* The value of the decimal digits s (at most 2^53: checked by the caller), by strtoull. */
static double digits_value(const char *s) { return (double)strtoull(s, NULL, 10); }

static void test_doppler_lists(void)
{
    /* entries of 1 to 24 characters (leading zeros), each on both sides of
       the eight-at-once reading and of the 15-digit bound, as an op's
       compute cost: in the usual op line "V,1" and spaced " V , 1" (the
       general way); kept when at most 2^53, else refused */
    static const char *const vals[] = {
        "0", "7", "12", "1234567", "12345678", "123456789", "00000000", "000000001", "99999999", "100000000",
        "999999999999999", "1000000000000000", "0000000000000005", "9007199254740991", "9007199254740992",
        "9007199254740993", "9303353250990973", "99999999999999999", "000000000000000000000009", "18446744073709551616" };
    char text[512];
    for (int i = 0; i < (int)(sizeof vals / sizeof *vals); i++) {
        int ok = strlen(vals[i]) < 32 && strtoull(vals[i], NULL, 10) <= (1ULL << 53) && strlen(vals[i]) - strspn(vals[i], "0") <= 16;
        for (int spaced = 0; spaced < 2; spaced++) {
            dp_graph g;
            int rc;
            snprintf(text, sizeof text, spaced ? "4\n0\n0, 1, \n1, 2, \n %s , 1\n2,3\n4,5\n" : "4\n0\n0, 1, \n1, 2, \n%s,1\n2,3\n4,5\n", vals[i]);
            rc = rd(&g, text, DP_FORMAT_DOPPLER);
            if (ok) {
                CHECK(rc == 0 && g.compute[0] == digits_value(vals[i]) && g.out_bytes[0] == 1 && g.compute[1] == 2 && g.out_bytes[2] == 5,
                      "compute '%s'%s: rc %d, read %.17g: %s", vals[i], spaced ? " (spaced)" : "", rc, rc ? -1 : g.compute[0], err.msg);
            } else {
                CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "t.dpg:5: integer overflow") && strstr(err.msg, vals[i]),
                      "compute '%s'%s: rc %d '%s', want an overflow at line 5", vals[i], spaced ? " (spaced)" : "", rc, err.msg);
            }
            if (!rc) dp_graph_free(&g);
        }
    }
    /* edge lists: a chain of 40 ops, its ids written with every separator
       and 0 to 20 leading zeros, long lines and short: the same edges */
    {
        static const char *const seps[] = { ", ", ",", " ", "\t", ",,", " , ", ",\t", ",  " };
        static char big[16384];
        for (int round = 0; round < 64; round++) {
            size_t n = 0;
            dp_graph g;
            int rc, same = 1;
            n += (size_t)snprintf(big + n, sizeof big - n, "41\n0, \n");
            for (int list = 0; list < 2; list++) {
                for (int e = 0; e < 39; e++) {
                    int z = (round * 7 + e * 3 + list) % 21 * (round % 3 != 0);
                    for (int k = 0; k < z; k++) big[n++] = '0';
                    n += (size_t)snprintf(big + n, sizeof big - n, "%d%s", e + list, e < 38 || round % 2 ? seps[(round + e + list) % 8] : "");
                }
                big[n++] = '\n';
            }
            for (int v = 0; v < 40; v++) n += (size_t)snprintf(big + n, sizeof big - n, "%d,%d\n", v + 1, 1000 + v);
            big[n] = 0;
            rc = rd(&g, big, DP_FORMAT_DOPPLER);
            CHECK(rc == 0 && g.n_ops == 40 && g.n_edges == 39, "round %d: rc %d, %d ops, %d edges: %s", round, rc, rc ? 0 : g.n_ops, rc ? 0 : g.n_edges, err.msg);
            if (rc) continue;
            for (int e = 0; e < 39; e++) same &= g.src[e] == e && g.dst[e] == e + 1 && g.bytes[e] == 1000 + e;
            for (int v = 0; v < 40; v++) same &= g.compute[v] == v + 1 && g.out_bytes[v] == 1000 + v;
            CHECK(same, "round %d: the chain's edges or costs differ", round);
            dp_graph_free(&g);
        }
    }
    /* faults in a list, at each place of an eight-byte word */
    refused("4\n0\n0, 1, 12x, \n1, 2, 3, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_PARSE, "t.dpg:3: '12x' is not a non-negative integer", "letter after digits");
    refused("4\n0\n0, 1, 2, \n1, 2, 1234567x9, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_PARSE, "t.dpg:4: '1234567x9' is not a non-negative integer", "letter at the eighth byte");
    refused("4\n0\n0, 1, 2, \n1, 2, 12345678-, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_PARSE, "t.dpg:4: '12345678-' is not a non-negative integer", "sign after eight digits");
    refused("4\n0\n0, 1, 2, \n1, 2, 9007199254740993, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_RANGE, "t.dpg:4: integer overflow: '9007199254740993'", "2^53 + 1 in a list");
    refused("4\n0\n0, 1, 2, \n1, 2, 3\xfa" "4, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_PARSE, "is not a non-negative integer", "a byte past 0xF9 after a digit");
    refused("4\n0\n0, 1, 1, \n1, 2, 1, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_GRAPH, "t.dpg:4: self loop on op 'op1'", "a self loop");
    /* op lines: the usual form and every other, which goes the general way */
    {
        dp_graph g;
        int rc = rd(&g, "5\n\n0, 1, 2, 3, \n1, 2, 3, 4, \n1,2\r\n  3 ,4\n5,6,matmul\n\n7,8\n9,10", DP_FORMAT_DOPPLER);
        CHECK(rc == 0 && g.n_ops == 5 && g.compute[0] == 1 && g.out_bytes[0] == 2 && g.compute[1] == 3 && g.out_bytes[1] == 4 &&
              g.compute[2] == 5 && g.out_bytes[2] == 6 && g.kind[2] == DP_OP_MATMUL && g.kind[1] == DP_OP_OPAQUE &&
              g.compute[3] == 7 && g.compute[4] == 9 && g.out_bytes[4] == 10 && g.bytes[3] == 8,
              "op lines of every form: rc %d '%s'", rc, err.msg);
        CHECK(rc == 0 && strcmp(g.name[4], "op4") == 0 && dp_graph_find(&g, "op3") == 3, "op names op0..op4");
        if (!rc) dp_graph_free(&g);
    }
    refused("3\n\n0, 1, \n1, 2, \n1,2\n3,4,\n5,6\n", DP_FORMAT_DOPPLER, DP_ERR_PARSE, "t.dpg:6: op 1: expected 'comp,comm[,type]', found '3,4,'", "a trailing comma");
    refused("3\n\n0, 1, \n1, 2, \n1,2\n3,4\n", DP_FORMAT_DOPPLER, DP_ERR_PARSE, "t.dpg:6: truncated: expected 3 op lines 'comp,comm', found 2", "an op line short");
    refused("3\n\n0, 1, \n1, 2, \n1,2\n3,4\n5,6\n7,8\n", DP_FORMAT_DOPPLER, DP_ERR_PARSE, "t.dpg:8: unexpected line after the 3 op lines: '7,8'", "an op line over");
    /* ops named up to op1000 and past each power of ten */
    {
        static char big[16384];
        size_t n = 0;
        dp_graph g;
        int rc;
        n += (size_t)snprintf(big + n, sizeof big - n, "1001\n\n0, \n1, \n");
        for (int v = 0; v < 1001; v++) n += (size_t)snprintf(big + n, sizeof big - n, "%d,1\n", v);
        rc = rd(&g, big, DP_FORMAT_DOPPLER);
        CHECK(rc == 0 && g.n_ops == 1001, "1001 ops: rc %d '%s'", rc, err.msg);
        if (!rc) {
            char want[16];
            int same = 1;
            for (int v = 0; v < 1001; v++) {
                snprintf(want, sizeof want, "op%d", v);
                same &= strcmp(g.name[v], want) == 0 && (unsigned char)g.name[v][-1] == strlen(want) && dp_graph_find(&g, want) == v && g.compute[v] == v;
            }
            CHECK(same, "names op0..op1000 or their costs differ");
            dp_graph_free(&g);
        }
    }
}

/* ---- duplicates, found after the fact, told where they are --------------------- */
static void test_duplicates(void)
{
    /* native: an edge repeated at line 6, a fault at line 8 after it */
    refused("doppler-graph 1\nop a\nop b\nop c\nedge a b\nedge a b\nedge b c\nbogus\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:6: duplicate edge a -> b", "repeated edge, then an unknown record");
    refused("doppler-graph 1\nop a\nop b\nop c\nedge b c\nedge a b\nedge b c\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:7: duplicate edge b -> c", "repeated edge at the end");
    refused("doppler-graph 1\nop a\nop b\nop c\nedge a c\nedge b c\nedge a b\nedge b c\nedge a c\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:8: duplicate edge b -> c", "two repeated edges: the first told");
    refused("doppler-graph 1\ncounts ops=2 edges=3\nop a\nop b\nedge a b\nedge a b\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:6: duplicate edge a -> b", "repeated edge in a file cut short");
    refused("doppler-graph 1\nop a compute=1e308\nop b compute=1e308\nedge a b\nedge a b\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:5: duplicate edge a -> b", "repeated edge in a graph whose sum overflows");
    refused("doppler-graph 1\nop a\nop b\nedge a b\nedge a b\nop a\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:5: duplicate edge a -> b", "repeated edge, then a repeated name");
    /* names: before the first edge, after it */
    refused("doppler-graph 1\nop a\nop b\nop a\nop c compute=-1\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:4: duplicate op name 'a' (first defined as op 0)", "repeated name, then a fault");
    refused("doppler-graph 1\nop a\nop b\nop b\nop a\nedge a b\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:4: duplicate op name 'b' (first defined as op 1)", "two repeated names: the first told");
    refused("doppler-graph 1\nop a\nop b\nop a\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:4: duplicate op name 'a' (first defined as op 0)", "repeated name, no edges");
    refused("doppler-graph 1\nop a\nop b\nedge a b\nop c\nop b\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:6: duplicate op name 'b' (first defined as op 1)", "repeated name after the edges");
    refused("doppler-graph 1\nop a\nop b\nop a\nop a\nend\nbogus\n", DP_FORMAT_NATIVE, DP_ERR_GRAPH,
            "t.dpg:4: duplicate op name 'a' (first defined as op 0)", "a name three times");
    /* DOPPLER: every edge is told at the target list's line */
    refused("4\n0,\n0, 1, 0, \n1, 2, 1, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_GRAPH,
            "t.dpg:4: duplicate edge op0 -> op1", "DOPPLER: a repeated edge");
    refused("4\n0,\n0, 0, 2, \n1, 1, 7, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_GRAPH,
            "t.dpg:4: duplicate edge op0 -> op1", "DOPPLER: a repeated edge before an edge out of range");
    refused("4\n0,\n0, 2, \n1, 7, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_GRAPH,
            "t.dpg:4: edge 1: target 7 is not an op (0..2)", "DOPPLER: an edge out of range");
    refused("4\n0,\n0, 9007199254740992, \n1, 2, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER, DP_ERR_GRAPH,
            "t.dpg:3: edge 1: source 9007199254740992 is not an op (0..2)", "DOPPLER: a source of 2^53, told exactly");
    /* STG: a predecessor listed twice, told at its line */
    refused("2\n0 0 0\n1 3 1 0\n2 4 2 1\n1\n3 0 1 2\n", DP_FORMAT_STG, DP_ERR_GRAPH, "t.dpg:5: duplicate edge t1 -> t2", "STG: a repeated predecessor");
}

/* ---- a counts line that lies ------------------------------------------------------ */
static void test_counts(void)
{
    double t0 = dp_now();
    refused("doppler-graph 1\ncounts ops=2147483647 edges=2147483647\nop a\nop b\nedge a b\nend\n", DP_FORMAT_NATIVE, DP_ERR_PARSE,
            "t.dpg:6: the file holds 2 of 2147483647 ops, 1 of 2147483647 edges, but its 'counts' line 2 declares", "counts far past the file");
    CHECK(dp_now() - t0 < 1, "a lying counts line took %.2f s", dp_now() - t0);
    refused("doppler-graph 1\ncounts ops=2147483648\n", DP_FORMAT_NATIVE, DP_ERR_LIMIT, "t.dpg:2: counts: ops '2147483648' is not a count", "counts past INT_MAX");
}

/* ---- lookups, topological order ------------------------------------------------------ */
static void test_lookups(void)
{
    dp_graph g;
    int rc = rd(&g, "4\n0,\n0, 1, \n1, 2, \n1,1\n2,2\n3,3\n", DP_FORMAT_DOPPLER);
    CHECK(rc == 0 && dp_graph_find(&g, "op2") == 2 && dp_graph_find(&g, "op0") == 0 && dp_graph_find(&g, "op3") == -1, "DOPPLER names: %s", err.msg);
    if (!rc) dp_graph_free(&g);
    /* a DOPPLER file's ops are found by their number, not indexed: the
       same answer as a scan of every name, for each name and for strings
       near one (leading zeros, signs, spaces, too many digits, past the
       last op); the same as the answer of the graph copied (indexed) */
    {
        static char big[16384];
        static const char *const near[] = {
            "", "o", "op", "Op1", "op-1", "op+1", "op 1", " op1", "op1 ", "op00", "op01", "op007", "op1a", "opx",
            "op1200", "op1201", "op9999", "op2147483647", "op2147483648", "op99999999999", "op18446744073709551617", "oop1", "op1199" };
        size_t n = 0;
        n += (size_t)snprintf(big + n, sizeof big - n, "1200\n\n0, 1, \n1, 2, \n");
        for (int v = 0; v < 1200; v++) n += (size_t)snprintf(big + n, sizeof big - n, "%d,1\n", v);
        rc = rd(&g, big, DP_FORMAT_DOPPLER);
        CHECK(rc == 0 && g.n_ops == 1200, "1200 ops: rc %d '%s'", rc, err.msg);
        if (!rc) {
            dp_graph c;
            int copied = dp_graph_copy(&c, &g, &err) == 0, same = 1;
            char probe[40];
            for (int k = 0; k < 1200 + (int)(sizeof near / sizeof *near); k++) {
                const char *s = near[k < 1200 ? 0 : k - 1200];
                int scan = -1, got;
                if (k < 1200) { snprintf(probe, sizeof probe, "op%d", k); s = probe; }
                for (int v = 0; v < g.n_ops && scan < 0; v++) if (strcmp(g.name[v], s) == 0) scan = v;
                got = dp_graph_find(&g, s);
                if (got != scan || (copied && dp_graph_find(&c, s) != scan)) {
                    same = 0;
                    CHECK(0, "find '%s': %d, the scan %d, the copy %d", s, got, scan, copied ? dp_graph_find(&c, s) : -2);
                }
            }
            CHECK(copied && same && dp_graph_find(&g, NULL) == -1, "names found by number as by a scan (copied: %d)", copied);
            if (copied) dp_graph_free(&c);
            dp_graph_free(&g);
        }
    }
    rc = rd(&g, "2\n0 0 0\n1 3 1 0\n2 4 1 1\n3 0 1 2\n", DP_FORMAT_STG);
    CHECK(rc == 0 && dp_graph_find(&g, "t3") == 3 && dp_graph_find(&g, "t1") == 1, "STG names: %s", err.msg);
    if (!rc) dp_graph_free(&g);
    /* ops after edges; listed out of topological order: the lowest ready op first */
    rc = rd(&g, "doppler-graph 1\nop d\nop c\nop b\nedge c d\nop a\nedge a b\nedge b c\n", DP_FORMAT_NATIVE);
    CHECK(rc == 0, "ops after edges: %s", err.msg);
    if (!rc) {
        CHECK(dp_graph_find(&g, "a") == 3 && dp_graph_find(&g, "d") == 0 && dp_graph_find(&g, "e") == -1, "names after edges");
        CHECK(g.topo[0] == 3 && g.topo[1] == 2 && g.topo[2] == 1 && g.topo[3] == 0, "topo %d %d %d %d, want 3 2 1 0",
              g.topo[0], g.topo[1], g.topo[2], g.topo[3]);
        dp_graph_free(&g);
    }
    rc = rd(&g, "doppler-graph 1\nop a\nop b\nop c\nop d\nedge a c\nedge b c\nedge a d\n", DP_FORMAT_NATIVE);
    CHECK(rc == 0 && g.topo[0] == 0 && g.topo[1] == 1 && g.topo[2] == 2 && g.topo[3] == 3, "a file in order: topo 0 1 2 3");
    if (!rc) {
        CHECK(g.out_off[0] == 0 && g.out_off[1] == 2 && g.out_edge[0] == 0 && g.out_edge[1] == 2 && g.in_off[2] == 0 && g.in_off[3] == 2 &&
              g.in_edge[0] == 0 && g.in_edge[1] == 1 && g.in_edge[2] == 2, "adjacency of edges listed out of source order");
        dp_graph_free(&g);
    }
    refused("doppler-graph 1\nop a\nop b\nop c\nedge a b\nedge c a\nedge b c\n", DP_FORMAT_NATIVE, DP_ERR_CYCLE, "t.dpg: cycle through op", "a cycle");
}

int main(void)
{
    test_binary_bytes();
    test_numbers();
    test_edge_lines();
    test_op_lines();
    test_doppler_lists();
    test_duplicates();
    test_counts();
    test_lookups();
    return dp_test_done();
}
