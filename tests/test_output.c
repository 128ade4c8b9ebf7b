/* test_output.c - the output rule every writer follows (>>api-formats,
   "Output files"), in a fresh temporary directory under build/tmp:
   a regular file or a new name is written to PATH.tmp and renamed, and a
   failure leaves it as it was with no PATH.tmp; a symbolic link (alone, in
   a chain, relative, dangling) is written through and stays a link; a
   character device (/dev/null, /dev/full) and a FIFO are written in place
   and stay what they are, /dev/full's ENOSPC failing with DP_ERR_IO;
   /dev/fd/N writes to descriptor N at its offset (as /dev/stdout does); a
   loop of links, a directory and a link planted at PATH.tmp are refused.
   A file replaced keeps its mode, owner and group; a read-only file and a
   name in a directory that is not there are refused; a file of several
   hard links is written in place (the links stay one file). Each of the
   library's writers (assignment, graph, cluster, policy, Gantt and curve
   SVGs) goes through the rule. dp_outputs: two names of one file (new or
   existing, through a link or a hard link, NAME and NAME.tmp) and an
   input that is an output are refused; staged outputs are put in place
   together by the commit, and a failure (or no commit) leaves every one
   as it was. */
#define DOPPLER_IMPLEMENTATION
#include "../doppler.h"
#include "dp_test.h"

#include <pthread.h>
#include <fcntl.h>
#include <dirent.h>

static dp_error err;
static char dir[256];

static char *at(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

static int kind_of(const char *path)   /* 'f' file, 'l' link, 'c' char device, 'p' FIFO, 'd', '?', 0 none */
{
    struct stat st;
    if (lstat(path, &st) != 0) return 0;
    if (S_ISREG(st.st_mode)) return 'f';
    if (S_ISLNK(st.st_mode)) return 'l';
    if (S_ISCHR(st.st_mode)) return 'c';
    if (S_ISFIFO(st.st_mode)) return 'p';
    if (S_ISDIR(st.st_mode)) return 'd';
    return '?';
}

static int has_text(const char *path, const char *want)
{
    size_t len = 0;
    char *got = dp_test_read_file(path, &len);
    int same = got && len == strlen(want) && memcmp(got, want, len) == 0;
    free(got);
    return same;
}

static int link_says(const char *path, const char *want)
{
    char buf[512];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0) return 0;
    buf[n] = 0;
    return strcmp(buf, want) == 0;
}

static int no_tmp(const char *path)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    return !dp_test_exists(tmp);
}

/* ---- writers for dp_write_file ------------------------------------------ */
static int put_text(void *ctx, FILE *f, dp_error *e)
{
    (void)e;
    fputs((const char *)ctx, f);
    return 0;
}

/* writes half a line, then fails the way a writer reports a bad value */
static int put_then_fail(void *ctx, FILE *f, dp_error *e)
{
    (void)ctx;
    fputs("half a li", f);
    e->code = DP_ERR_RANGE;
    snprintf(e->msg, sizeof e->msg, "value 7 out of range");
    return DP_ERR_RANGE;
}

static int write_text(const char *path, const char *text)
{
    memset(&err, 0, sizeof err);
    return dp_write_file(path, put_text, (void *)text, &err);
}

/* ---- regular files and new names ---------------------------------------- */
static void test_regular(void)
{
    char p[512];
    at(p, sizeof p, "new.txt");
    CHECK(write_text(p, "one\n") == 0, "new file: %s", err.msg);
    CHECK(kind_of(p) == 'f' && has_text(p, "one\n") && no_tmp(p), "new file: a regular file holding 'one'");
    CHECK(write_text(p, "two\n") == 0, "existing file: %s", err.msg);
    CHECK(kind_of(p) == 'f' && has_text(p, "two\n") && no_tmp(p), "existing file replaced by 'two'");
    memset(&err, 0, sizeof err);
    int rc = dp_write_file(p, put_then_fail, NULL, &err);
    CHECK(rc == DP_ERR_RANGE && strstr(err.msg, "value 7"), "failing writer: rc %d '%s'", rc, err.msg);
    CHECK(has_text(p, "two\n") && no_tmp(p), "a failing writer left the file as it was, no .tmp");
    at(p, sizeof p, "never.txt");
    rc = dp_write_file(p, put_then_fail, NULL, &err);
    CHECK(rc == DP_ERR_RANGE && !dp_test_exists(p) && no_tmp(p), "failing writer on a new name: nothing created (rc %d)", rc);
    memset(&err, 0, sizeof err);
    CHECK(dp_write_file(p, NULL, NULL, &err) == DP_ERR_ARG, "no writer: DP_ERR_ARG");
    CHECK(dp_write_file("", put_text, (void *)"x", &err) == DP_ERR_ARG, "empty name: DP_ERR_ARG");
}

/* ---- symbolic links ----------------------------------------------------- */
static void test_links(void)
{
    char target[512], link[512], chain[512], sub[512], rel[512], dang[512], made[512], loop1[512], loop2[512];
    at(target, sizeof target, "target.txt");
    at(link, sizeof link, "link.txt");
    dp_test_write_file(target, "old\n", 4);
    CHECK(symlink("target.txt", link) == 0, "symlink: %s", strerror(errno));
    CHECK(write_text(link, "through\n") == 0, "link: %s", err.msg);
    CHECK(kind_of(link) == 'l' && link_says(link, "target.txt"), "the link is still a link to target.txt");
    CHECK(kind_of(target) == 'f' && has_text(target, "through\n"), "the link's target holds the new text");
    CHECK(no_tmp(link) && no_tmp(target), "no .tmp beside the link or the target");

    /* a failure through the link leaves the target as it was */
    memset(&err, 0, sizeof err);
    int rc = dp_write_file(link, put_then_fail, NULL, &err);
    CHECK(rc == DP_ERR_RANGE && has_text(target, "through\n") && no_tmp(target) && kind_of(link) == 'l',
          "failing writer through a link: target unchanged, link kept (rc %d)", rc);

    /* a chain: chain -> link.txt -> target.txt */
    at(chain, sizeof chain, "chain.txt");
    CHECK(symlink("link.txt", chain) == 0, "symlink chain");
    CHECK(write_text(chain, "chained\n") == 0, "chain: %s", err.msg);
    CHECK(kind_of(chain) == 'l' && kind_of(link) == 'l' && has_text(target, "chained\n"),
          "a chain of two links: both stay links, the end holds the text");

    /* a relative link in a subdirectory: sub/rel.txt -> ../target.txt */
    at(sub, sizeof sub, "sub");
    dp_test_mkdir(sub);
    at(rel, sizeof rel, "sub/rel.txt");
    CHECK(symlink("../target.txt", rel) == 0, "symlink rel");
    CHECK(write_text(rel, "relative\n") == 0, "relative link: %s", err.msg);
    CHECK(kind_of(rel) == 'l' && has_text(target, "relative\n"), "a relative link resolves from its own directory");

    /* a link to nothing creates its target */
    at(dang, sizeof dang, "dangling.txt");
    at(made, sizeof made, "made.txt");
    CHECK(symlink("made.txt", dang) == 0, "symlink dangling");
    CHECK(write_text(dang, "created\n") == 0, "dangling link: %s", err.msg);
    CHECK(kind_of(dang) == 'l' && kind_of(made) == 'f' && has_text(made, "created\n") && no_tmp(made),
          "a dangling link's target is created, the link kept");

    /* a loop is refused */
    at(loop1, sizeof loop1, "loop1");
    at(loop2, sizeof loop2, "loop2");
    CHECK(symlink("loop2", loop1) == 0 && symlink("loop1", loop2) == 0, "symlink loop");
    rc = write_text(loop1, "never\n");
    CHECK(rc == DP_ERR_IO && strstr(err.msg, "loop1") && strstr(err.msg, "symbolic links"), "loop: rc %d '%s'", rc, err.msg);
    CHECK(kind_of(loop1) == 'l' && kind_of(loop2) == 'l', "the loop's links are untouched");
}

/* ---- other kinds of files ----------------------------------------------- */
static void test_refused(void)
{
    char p[512], victim[512], tmp[512];
    /* a directory */
    at(p, sizeof p, "adir");
    dp_test_mkdir(p);
    int rc = write_text(p, "x\n");
    CHECK(rc == DP_ERR_IO && strstr(err.msg, "adir") && kind_of(p) == 'd' && no_tmp(p), "directory: rc %d '%s'", rc, err.msg);
    /* a link planted at PATH.tmp is not written through */
    at(p, sizeof p, "planted.txt");
    at(victim, sizeof victim, "victim.txt");
    at(tmp, sizeof tmp, "planted.txt.tmp");
    dp_test_write_file(victim, "keep\n", 5);
    CHECK(symlink("victim.txt", tmp) == 0, "symlink planted");
    rc = write_text(p, "x\n");
    CHECK(rc == DP_ERR_IO && strstr(err.msg, "planted.txt.tmp"), "planted .tmp link: rc %d '%s'", rc, err.msg);
    CHECK(has_text(victim, "keep\n") && kind_of(tmp) == 'l' && !dp_test_exists(p), "the planted link's target is untouched");
}

static void test_devices(void)
{
    char p[512];
    CHECK(write_text("/dev/null", "discarded\n") == 0, "/dev/null: %s", err.msg);
    CHECK(kind_of("/dev/null") == 'c', "/dev/null is still a character device");
    CHECK(!dp_test_exists("/dev/null.tmp"), "no /dev/null.tmp");
    if (kind_of("/dev/full") != 'c') { SKIP("no /dev/full here"); return; }
    int rc = write_text("/dev/full", "no room\n");
    char enospc[128];
    snprintf(enospc, sizeof enospc, "%s", strerror(ENOSPC));
    CHECK(rc == DP_ERR_IO && strstr(err.msg, "/dev/full") && strstr(err.msg, enospc),
          "/dev/full: rc %d '%s' (expected DP_ERR_IO and '%s')", rc, err.msg, enospc);
    CHECK(kind_of("/dev/full") == 'c', "/dev/full is still a character device");
    CHECK(!dp_test_exists("/dev/full.tmp"), "no /dev/full.tmp");
    /* a link to /dev/null: written through, in place */
    at(p, sizeof p, "null-link");
    CHECK(symlink("/dev/null", p) == 0, "symlink to /dev/null");
    CHECK(write_text(p, "discarded\n") == 0, "link to /dev/null: %s", err.msg);
    CHECK(kind_of(p) == 'l' && kind_of("/dev/null") == 'c', "the link and /dev/null stay what they were");
}

/* /dev/fd/N, one of this process's descriptors (as /dev/stdout is fd 1):
   written through a duplicate, sharing the descriptor's offset, so that
   what the process writes to N before and after lands around it */
static void test_own_fd(void)
{
    char p[512], name[64];
    struct stat before, after;
    at(p, sizeof p, "own-fd.txt");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { CHECK(0, "open %s: %s", p, strerror(errno)); return; }
    if (!dp_test_exists("/dev/fd")) { SKIP("no /dev/fd"); close(fd); return; }
    snprintf(name, sizeof name, "/dev/fd/%d", fd);
    CHECK(write(fd, "head\n", 5) == 5, "write head");
    fstat(fd, &before);
    CHECK(write_text(name, "body\n") == 0, "%s: %s", name, err.msg);
    CHECK(write(fd, "tail\n", 5) == 5, "write tail");
    fstat(fd, &after);
    close(fd);
    CHECK(has_text(p, "head\nbody\ntail\n"), "%s: the text lands between what the descriptor wrote before and after", name);
    CHECK(kind_of(p) == 'f' && before.st_ino == after.st_ino && stat(p, &after) == 0 && after.st_ino == before.st_ino && no_tmp(p),
          "%s: the file open on it is the same file (not renamed over)", name);
}

/* ---- a FIFO, read by a thread ------------------------------------------- */
typedef struct { const char *path; char buf[4096]; size_t n; } fifo_reader;

static void *read_fifo(void *arg)
{
    fifo_reader *r = (fifo_reader *)arg;
    int fd = open(r->path, O_RDONLY);   /* waits for the writer */
    if (fd < 0) return NULL;
    for (;;) {
        ssize_t k = read(fd, r->buf + r->n, sizeof r->buf - 1 - r->n);
        if (k <= 0) break;
        r->n += (size_t)k;
    }
    r->buf[r->n] = 0;
    close(fd);
    return NULL;
}

/* Runs the assignment writer into the FIFO p while a thread reads it;
   whatever happens, the reader is released (an open for writing that
   does not wait, closed at once: its end of file). */
static void test_fifo(void)
{
    char p[512];
    pthread_t th;
    fifo_reader r;
    static const int assign[3] = {2, 0, 1};
    at(p, sizeof p, "pipe");
    if (mkfifo(p, 0600) != 0) { SKIP("mkfifo: %s", strerror(errno)); return; }
    memset(&r, 0, sizeof r);
    r.path = p;
    if (pthread_create(&th, NULL, read_fifo, &r) != 0) { SKIP("pthread_create failed"); return; }
    memset(&err, 0, sizeof err);
    int rc = dp_assign_write(p, assign, 3, &err);
    int fd = open(p, O_WRONLY | O_NONBLOCK);
    if (fd >= 0) close(fd);
    pthread_join(th, NULL);
    CHECK(rc == 0, "assignment into a FIFO: %s", err.msg);
    CHECK(strcmp(r.buf, "# device of each op, in the graph file's node order (3 ops)\n2\n0\n1\n") == 0,
          "the FIFO's reader got the assignment: '%s'", r.buf);
    CHECK(kind_of(p) == 'p' && no_tmp(p), "the FIFO is still a FIFO, no .tmp");
}

/* ---- what a replaced file keeps, what is refused before writing --------- */
static void test_keep(void)
{
    char p[512], q[512], ro[512], lk[512];
    struct stat a, b;
    int rc;
    /* mode, owner and group: as root the owner can be given away, else the
       test keeps ours and checks the mode alone */
    at(p, sizeof p, "mode.txt");
    dp_test_write_file(p, "old\n", 4);
    int root = geteuid() == 0 && chown(p, 4321, 8765) == 0;
    CHECK(chmod(p, 0640) == 0, "chmod after chown");
    stat(p, &a);
    CHECK(write_text(p, "new\n") == 0, "replacing mode.txt: %s", err.msg);
    CHECK(stat(p, &b) == 0 && has_text(p, "new\n") && no_tmp(p) && b.st_ino != a.st_ino, "mode.txt replaced by a rename");
    CHECK((b.st_mode & 07777) == 0640, "the replaced file keeps mode 0640 (got %o)", (unsigned)(b.st_mode & 07777));
    if (root) CHECK(b.st_uid == 4321 && b.st_gid == 8765, "the replaced file keeps owner and group (got %d:%d)", (int)b.st_uid, (int)b.st_gid);
    else SKIP("not root: owner and group not given away");

    /* read-only: refused, untouched (root too) */
    at(ro, sizeof ro, "ro.txt");
    dp_test_write_file(ro, "keep\n", 5);
    CHECK(chmod(ro, 0444) == 0, "chmod 0444");
    rc = write_text(ro, "x\n");
    CHECK(rc == DP_ERR_IO && strstr(err.msg, "ro.txt") && strstr(err.msg, "read-only"), "read-only file: rc %d '%s'", rc, err.msg);
    CHECK(has_text(ro, "keep\n") && no_tmp(ro), "the read-only file is as it was, no .tmp");
    /* through a link too */
    at(lk, sizeof lk, "ro-link.txt");
    CHECK(symlink("ro.txt", lk) == 0, "symlink ro");
    rc = write_text(lk, "x\n");
    CHECK(rc == DP_ERR_IO && strstr(err.msg, "read-only") && has_text(ro, "keep\n") && kind_of(lk) == 'l', "read-only through a link: rc %d '%s'", rc, err.msg);

    /* a name in a directory that is not there: refused, nothing made */
    at(p, sizeof p, "nodir/x.txt");
    rc = write_text(p, "x\n");
    CHECK(rc == DP_ERR_IO && strstr(err.msg, "nodir/x.txt") && strstr(err.msg, "no such directory"), "missing directory: rc %d '%s'", rc, err.msg);
    /* a name ending in '/' */
    at(p, sizeof p, "nothere/");
    rc = write_text(p, "x\n");
    CHECK(rc == DP_ERR_IO && !dp_test_exists(p), "a name ending in '/': rc %d '%s'", rc, err.msg);

    /* several hard links: written in place, the links stay one file */
    at(p, sizeof p, "linked-a.txt");
    at(q, sizeof q, "linked-b.txt");
    dp_test_write_file(p, "old\n", 4);
    CHECK(link(p, q) == 0, "link: %s", strerror(errno));
    stat(p, &a);
    CHECK(write_text(p, "both see this\n") == 0, "hard-linked file: %s", err.msg);
    CHECK(stat(p, &b) == 0 && b.st_ino == a.st_ino && b.st_nlink == 2, "a file of two links written in place (same inode, 2 links)");
    CHECK(has_text(q, "both see this\n") && no_tmp(p), "the other link sees the new text, no .tmp");
    memset(&err, 0, sizeof err);
    rc = dp_write_file(q, put_then_fail, NULL, &err);
    CHECK(rc == DP_ERR_RANGE && has_text(p, "both see this\n") && has_text(q, "both see this\n") && no_tmp(q),
          "a failing writer leaves a hard-linked file as it was (rc %d)", rc);
}

/* ---- several outputs put in place together ------------------------------ */
static void test_outputs(void)
{
    char a[512], b[512], c[512], l[512], h[512], t[512], s1[512], sub[512];
    dp_outputs os = {0};
    const char *to = NULL;
    struct stat st;
    int rc;
    at(a, sizeof a, "out-a.txt");
    at(b, sizeof b, "out-b.txt");
    at(c, sizeof c, "out-c.txt");
    dp_test_write_file(a, "a0\n", 3);
    dp_test_write_file(b, "b0\n", 3);

    /* all staged, all committed */
    memset(&err, 0, sizeof err);
    CHECK(dp_outputs_add(&os, a, &err) == 0 && dp_outputs_add(&os, b, &err) == 0 && dp_outputs_add(&os, c, &err) == 0 &&
          dp_outputs_add(&os, "/dev/null", &err) == 0 && os.n == 4, "add four outputs: %s", err.msg);
    CHECK(dp_outputs_stage(&os, 0, &to, &err) == 0 && write_text(to, "a1\n") == 0, "stage and write a: %s", err.msg);
    CHECK(has_text(a, "a0\n"), "a staged output is not in place before the commit");
    CHECK(dp_outputs_stage(&os, 1, &to, &err) == 0 && write_text(to, "b1\n") == 0, "stage and write b: %s", err.msg);
    CHECK(dp_outputs_stage(&os, 2, &to, &err) == 0 && write_text(to, "c1\n") == 0, "stage and write c: %s", err.msg);
    CHECK(dp_outputs_stage(&os, 3, &to, &err) == 0 && to && strcmp(to, "/dev/null") == 0 && write_text(to, "x\n") == 0, "a device: written in place");
    CHECK(dp_outputs_commit(&os, &err) == 0, "commit: %s", err.msg);
    dp_outputs_free(&os);
    CHECK(os.n == 0 && os.impl == NULL, "freed: an empty set again");
    CHECK(has_text(a, "a1\n") && has_text(b, "b1\n") && has_text(c, "c1\n") && no_tmp(a) && no_tmp(b) && no_tmp(c),
          "the commit put all three in place, no .tmp");
    CHECK(kind_of("/dev/null") == 'c' && !dp_test_exists("/dev/null.tmp"), "/dev/null untouched");

    /* a failure after one was written: none replaced, nothing left */
    memset(&err, 0, sizeof err);
    CHECK(dp_outputs_add(&os, a, &err) == 0 && dp_outputs_add(&os, c, &err) == 0, "add: %s", err.msg);
    CHECK(dp_outputs_stage(&os, 0, &to, &err) == 0 && write_text(to, "a2\n") == 0, "stage and write a");
    CHECK(dp_outputs_stage(&os, 1, &to, &err) == 0, "stage c");
    rc = dp_write_file(to, put_then_fail, NULL, &err);
    CHECK(rc == DP_ERR_RANGE, "c's writer fails");
    dp_outputs_free(&os);
    CHECK(has_text(a, "a1\n") && has_text(c, "c1\n") && no_tmp(a) && no_tmp(c), "no commit: both as they were, no .tmp");

    /* mode kept and hard links kept through a staged output */
    at(h, sizeof h, "out-hard.txt");
    CHECK(link(b, h) == 0 && chmod(b, 0604) == 0, "link and chmod b");
    stat(b, &st);
    memset(&err, 0, sizeof err);
    CHECK(dp_outputs_add(&os, h, &err) == 0 && dp_outputs_stage(&os, 0, &to, &err) == 0 && write_text(to, "b3\n") == 0 &&
          dp_outputs_commit(&os, &err) == 0, "hard-linked staged output: %s", err.msg);
    dp_outputs_free(&os);
    {
        struct stat s2;
        CHECK(stat(b, &s2) == 0 && s2.st_ino == st.st_ino && s2.st_nlink == 2 && has_text(b, "b3\n") && no_tmp(h),
              "a staged file of two links written in place");
    }
    CHECK(chmod(c, 0620) == 0, "chmod c");
    memset(&err, 0, sizeof err);
    CHECK(dp_outputs_add(&os, c, &err) == 0 && dp_outputs_stage(&os, 0, &to, &err) == 0 && write_text(to, "c4\n") == 0 &&
          dp_outputs_commit(&os, &err) == 0, "staged output: %s", err.msg);
    dp_outputs_free(&os);
    CHECK(stat(c, &st) == 0 && (st.st_mode & 07777) == 0620 && has_text(c, "c4\n"), "a staged output keeps mode 0620 (got %o)", (unsigned)(st.st_mode & 07777));

    /* two names of one file */
    at(l, sizeof l, "out-link.txt");
    CHECK(symlink("out-a.txt", l) == 0, "symlink");
    at(sub, sizeof sub, "osub");
    dp_test_mkdir(sub);
    at(s1, sizeof s1, "osub/../out-new.txt");
    at(t, sizeof t, "out-new.txt");
    const char *pairs[][2] = {{a, a}, {a, l}, {b, h}, {t, s1}, {t, t}};
    for (int k = 0; k < 5; k++) {
        memset(&err, 0, sizeof err);
        rc = dp_outputs_add(&os, pairs[k][0], &err);
        int rc2 = rc ? rc : dp_outputs_add(&os, pairs[k][1], &err);
        CHECK(rc == 0 && rc2 == DP_ERR_ARG && strstr(err.msg, "same file") && os.n == 1,
              "%s and %s: refused as one file (rc %d %d '%s')", pairs[k][0], pairs[k][1], rc, rc2, err.msg);
        dp_outputs_free(&os);
    }
    CHECK(!dp_test_exists(t) && has_text(a, "a1\n"), "the refusals wrote nothing");
    /* NAME and NAME.tmp */
    at(t, sizeof t, "out-c.txt.tmp");
    memset(&err, 0, sizeof err);
    rc = dp_outputs_add(&os, c, &err);
    rc = rc ? rc : dp_outputs_add(&os, t, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "temporary"), "NAME and NAME.tmp: rc %d '%s'", rc, err.msg);
    dp_outputs_free(&os);
    /* two devices are fine */
    CHECK(dp_outputs_add(&os, "/dev/null", &err) == 0 && dp_outputs_add(&os, "/dev/null", &err) == 0, "/dev/null twice: %s", err.msg);
    dp_outputs_free(&os);

    /* an input that is an output: by another name, through a link */
    memset(&err, 0, sizeof err);
    CHECK(dp_outputs_add(&os, a, &err) == 0 && dp_outputs_add(&os, t, &err) == 0 && dp_outputs_input(&os, b, &err) == 0, "add: %s", err.msg);
    rc = dp_outputs_input(&os, l, &err);
    CHECK(rc == DP_ERR_ARG && strstr(err.msg, "out-a.txt") && strstr(err.msg, "input"), "input = output through a link: rc %d '%s'", rc, err.msg);
    CHECK(dp_outputs_input(&os, "/dev/null", &err) == 0 && dp_outputs_input(&os, sub, &err) == 0 &&
          dp_outputs_input(&os, t, &err) == 0, "inputs that are no output (or not there) pass");
    dp_outputs_free(&os);
    /* what one output cannot be is refused when added */
    rc = dp_outputs_add(&os, sub, &err);
    CHECK(rc == DP_ERR_IO && strstr(err.msg, "directory") && os.n == 0, "a directory: rc %d '%s'", rc, err.msg);
    dp_outputs_free(&os);
}

/* ---- every writer of the library, through a link and into devices ------- */
static void test_writers(void)
{
    dp_graph g;
    dp_cluster c;
    dp_sim s;
    dp_policy pol;
    dp_policy_opts po;
    static const op_t ops[3] = {{"a", 2, 1, 0}, {"b", 3, 0, 0}, {"c", 1, 0, 0}};
    static const ed_t eds[2] = {{0, 1, 1}, {0, 2, 1}};
    static const int assign[3] = {0, 1, 0};
    dp_episode_info rec[2];
    char plain[512], link[512], target[512];
    const char *names[6] = {"assignment", "graph", "cluster", "policy", "gantt", "curve"};
    int have_full = kind_of("/dev/full") == 'c';
    memset(&po, 0, sizeof po);
    memset(rec, 0, sizeof rec);
    po.hidden = 4; po.layers = 1; po.seed = 1;
    rec[0].cost = 6; rec[0].lower_bound = 4; rec[1].cost = 5; rec[1].lower_bound = 4; rec[1].episode = 1;
    if (dp_test_build(&g, 3, ops, 2, eds)) return;
    if (dp_cluster_homogeneous(&c, 2, 1, 1, 0, &err) || dp_sim_init(&s, &g, &c, &err) ||
        dp_sim_run(&s, assign, NULL, &err) || dp_policy_init(&pol, &po, &err)) {
        CHECK(0, "setup: %s", err.msg);
        dp_graph_free(&g);
        return;
    }
    for (int w = 0; w < 6; w++) {
        const char *dest[5];
        int rc[5], k;
        char name[64];
        snprintf(name, sizeof name, "plain-%s", names[w]);
        at(plain, sizeof plain, name);
        snprintf(name, sizeof name, "link-%s", names[w]);
        at(link, sizeof link, name);
        snprintf(name, sizeof name, "target-%s", names[w]);
        at(target, sizeof target, name);
        dp_test_write_file(target, "old\n", 4);
        if (symlink(name, link) != 0) { CHECK(0, "symlink %s", link); continue; }
        dest[0] = plain; dest[1] = link; dest[2] = "/dev/null"; dest[3] = "/dev/full";
        for (k = 0; k < (have_full ? 4 : 3); k++) {
            memset(&err, 0, sizeof err);
            switch (w) {
            case 0: rc[k] = dp_assign_write(dest[k], assign, 3, &err); break;
            case 1: rc[k] = dp_graph_write(&g, dest[k], DP_FORMAT_NATIVE, &err); break;
            case 2: rc[k] = dp_cluster_write(&c, dest[k], &err); break;
            case 3: rc[k] = dp_policy_save(&pol, dest[k], &err); break;
            case 4: rc[k] = dp_gantt_svg(dest[k], &s, assign, NULL, &err); break;
            default: rc[k] = dp_curve_svg(dest[k], rec, 2, "t", &err); break;
            }
            if (k < 3) CHECK(rc[k] == 0, "%s to %s: %s", names[w], dest[k], err.msg);
            else CHECK(rc[k] == DP_ERR_IO && strstr(err.msg, "/dev/full"), "%s to /dev/full: rc %d '%s'", names[w], rc[k], err.msg);
        }
        /* the link's target got what the plain file got; the link stays */
        size_t n1 = 0, n2 = 0;
        char *a = dp_test_read_file(plain, &n1), *b = dp_test_read_file(target, &n2);
        CHECK(a && b && n1 > 4 && n1 == n2 && memcmp(a, b, n1) == 0, "%s through a link: the target differs from a plain write", names[w]);
        CHECK(kind_of(link) == 'l' && link_says(link, name) && no_tmp(target) && no_tmp(link), "%s: the link stays a link, no .tmp", names[w]);
        CHECK(kind_of("/dev/null") == 'c' && (!have_full || kind_of("/dev/full") == 'c'), "%s: /dev/null and /dev/full stay character devices", names[w]);
        free(a);
        free(b);
    }
    dp_policy_free(&pol);
    dp_sim_free(&s);
    dp_cluster_free(&c);
    dp_graph_free(&g);
}

/* ---- cleaning up the temporary directory -------------------------------- */
/* Removes what the tests made: links themselves (lstat), never what they
   point to; directories after their contents. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char sub[1024];
        while (d && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
        if (d) closedir(d);
    }
    if (remove(path) != 0) printf("note: could not remove %s\n", path);
}

int main(void)
{
    dp_test_mkdir("build");
    dp_test_mkdir("build/tmp");
    snprintf(dir, sizeof dir, "build/tmp/output-XXXXXX");
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp: %s", strerror(errno)); return dp_test_done(); }
    test_regular();
    test_links();
    test_refused();
    test_devices();
    test_own_fd();
    test_fifo();
    test_keep();
    test_outputs();
    test_writers();
    remove_tree(dir);
    return dp_test_done();
}
