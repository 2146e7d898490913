/* test_config.c - option layering: defaults < file < environment < flags */
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "core/config.h"
#include "core/util.h"

static const struct ao_option opts[] = {
    {"size", 's', AO_OPT_STR, "tiny", "CLASS", "size"},
    {"timeout", 't', AO_OPT_NUM, "60", "SEC", "timeout"},
    {"max-calls", 0, AO_OPT_INT, "200", "N", "calls"},
    {"verbose", 'v', AO_OPT_BOOL, NULL, NULL, "verbose"},
    {"kafka", 'X', AO_OPT_LIST, NULL, "K=V", "librdkafka settings"},
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof opts / sizeof opts[0]))

int main(void)
{
    struct ao_config c;
    char err[AO_ERRLEN], file[] = "/tmp/accelopt-cfg-XXXXXX";
    const char *text = "# a comment\nsize = cpu\ntimeout = 5\nmax-calls = 7\n";
    int fd = mkstemp(file);

    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), "config file written");
    close(fd);

    char *a0[] = {"t", NULL};
    CHECK(ao_config_load(&c, opts, NOPTS, 1, a0, err, sizeof err) == 0, "defaults load");
    CHECK(!strcmp(ao_config_str(&c, "size"), "tiny") && ao_config_num(&c, "timeout") == 60,
          "defaults apply");
    CHECK(!strcmp(ao_config_source(&c, "size"), "default"), "source is default");
    ao_config_release(&c);

    {
        char *ax[] = {"t", "-X", "a=1", "--kafka", "b=2", "-X", "c=x=y", NULL};
        setenv("ACCELOPT_KAFKA", "env=1", 1);
        CHECK(ao_config_load(&c, opts, NOPTS, 7, ax, err, sizeof err) == 0, "a list option repeats");
        CHECK(!strcmp(ao_config_str(&c, "kafka"), "a=1\nb=2\nc=x=y"),
              "its flags are kept in order and replace the environment's");
        ao_config_release(&c);
        CHECK(ao_config_load(&c, opts, NOPTS, 1, a0, err, sizeof err) == 0 &&
              !strcmp(ao_config_str(&c, "kafka"), "env=1"), "the environment's value without flags");
        ao_config_release(&c);
        unsetenv("ACCELOPT_KAFKA");
    }

    char *a1[] = {"t", "--config", file, NULL};
    CHECK(ao_config_load(&c, opts, NOPTS, 3, a1, err, sizeof err) == 0, "file loads: %s", err);
    CHECK(!strcmp(ao_config_str(&c, "size"), "cpu") && ao_config_int(&c, "max-calls") == 7,
          "file beats defaults");
    ao_config_release(&c);

    setenv("ACCELOPT_TIMEOUT", "9", 1);
    setenv("ACCELOPT_MAX_CALLS", "11", 1);
    CHECK(ao_config_load(&c, opts, NOPTS, 3, a1, err, sizeof err) == 0, "env loads");
    CHECK(ao_config_num(&c, "timeout") == 9 && ao_config_int(&c, "max-calls") == 11,
          "environment beats the file");
    CHECK(!strcmp(ao_config_str(&c, "size"), "cpu"), "file value kept where env is silent");
    ao_config_release(&c);

    char *a2[] = {"t", "-t", "3", "--config", file, "--max-calls=13", "pos", "-v", NULL};
    CHECK(ao_config_load(&c, opts, NOPTS, 8, a2, err, sizeof err) == 0, "flags load");
    CHECK(ao_config_num(&c, "timeout") == 3 && ao_config_int(&c, "max-calls") == 13,
          "flags beat the environment");
    CHECK(ao_config_bool(&c, "verbose") && c.nargs == 1 && !strcmp(c.args[0], "pos"),
          "booleans and positional arguments");
    CHECK(!strcmp(ao_config_source(&c, "timeout"), "flag"), "source is flag");
    ao_config_release(&c);
    unsetenv("ACCELOPT_TIMEOUT");
    unsetenv("ACCELOPT_MAX_CALLS");

    char *a6[] = {"t", "-v", "--no-verbose", NULL};
    CHECK(ao_config_load(&c, opts, NOPTS, 3, a6, err, sizeof err) == 0 &&
          !ao_config_bool(&c, "verbose"), "--no-NAME turns a boolean off");
    ao_config_release(&c);
    char *a7[] = {"t", "--no-size", NULL};
    CHECK(ao_config_load(&c, opts, NOPTS, 2, a7, err, sizeof err) < 0 && strstr(err, "--no-size"),
          "--no- is for booleans only: %s", err);
    ao_config_release(&c);

    char *a3[] = {"t", "--max-calls", "many", NULL};
    CHECK(ao_config_load(&c, opts, NOPTS, 3, a3, err, sizeof err) < 0 && strstr(err, "integer"),
          "a bad integer is refused: %s", err);
    ao_config_release(&c);
    char *a4[] = {"t", "--nope", NULL};
    CHECK(ao_config_load(&c, opts, NOPTS, 2, a4, err, sizeof err) < 0 && strstr(err, "--nope"),
          "an unknown flag is refused: %s", err);
    ao_config_release(&c);
    char *a5[] = {"t", "--timeout", NULL};
    CHECK(ao_config_load(&c, opts, NOPTS, 2, a5, err, sizeof err) < 0, "a missing value is refused");
    ao_config_release(&c);

    fd = open(file, O_WRONLY | O_TRUNC);
    CHECK(write(fd, "colour = red\n", 13) == 13, "bad file written");
    close(fd);
    CHECK(ao_config_load(&c, opts, NOPTS, 3, a1, err, sizeof err) < 0 && strstr(err, "line 1"),
          "an unknown file key is refused with its line: %s", err);
    ao_config_release(&c);
    unlink(file);
    return CHECK_DONE();
}
