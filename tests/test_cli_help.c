/* test_cli_help.c - the CLI's help texts against its parser: 'doppler help
   COMMAND' names every option the parser accepts for COMMAND (the
   per-command lists of demos/doppler.c's commands[] table), and every
   option a help text lists in its option block ("  --NAME ...") is one the
   parser accepts. Also 'doppler help help'. demos/doppler.c is compiled
   into this program, its main() renamed. */
#define main doppler_cli_main
#include "../demos/doppler.c"
#undef main
#include "dp_test.h"

/* "--NAME" in text, not followed by another name character */
static int mentions(const char *text, const char *name)
{
    char pat[80];
    size_t n;
    snprintf(pat, sizeof pat, "--%s", name);
    n = strlen(pat);
    for (const char *p = text; (p = strstr(p, pat)) != NULL; p += n) {
        char after = p[n];
        if (!(isalnum((unsigned char)after) || after == '-')) return 1;
    }
    return 0;
}

/* every "--NAME" at the start of an option line ("  --NAME", or after
   ", " on such a line) must be an option of cmd */
static void listed_are_accepted(const command *c)
{
    const char *text = *c->help;
    for (const char *line = text; *line; ) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > 4 && !strncmp(line, "  --", 4)) {
            char buf[256];
            snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), line);
            for (char *p = buf; (p = strstr(p, "--")) != NULL; ) {
                char name[64];
                int k = 0;
                int starts = p == buf + 2 || (p >= buf + 2 && p[-1] == ' ' && p[-2] == ',');
                p += 2;
                while (k < 63 && (isalnum((unsigned char)*p) || *p == '-')) name[k++] = *p++;
                name[k] = 0;
                if (starts && k)
                    CHECK(has_word(c->options, name), "doppler help %s lists --%s, which the parser refuses for %s",
                          c->name, name, c->name);
            }
        }
        if (!end) break;
        line = end + 1;
    }
}

int main(void)
{
    for (int i = 0; i < N_COMMANDS; i++) {
        const command *c = &commands[i];
        char buf[1024], *tok;
        snprintf(buf, sizeof buf, "%s", c->options);
        for (tok = strtok(buf, " "); tok; tok = strtok(NULL, " "))
            CHECK(mentions(*c->help, tok), "doppler help %s does not mention --%s, which the parser accepts", c->name, tok);
        listed_are_accepted(c);
        /* cli.given holds each option once: room for all of them */
        CHECK(strlen(c->options) + 2 < sizeof ((cli *)0)->given, "%s: the option list outgrows cli.given", c->name);
    }
    /* doppler help help */
    {
        char *argv[] = {(char *)"doppler", (char *)"help", (char *)"help", NULL};
        CHECK(doppler_cli_main(3, argv) == 0, "doppler help help: not exit 0");
        fflush(stdout);
    }
    return dp_test_done();
}
