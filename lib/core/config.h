/* config.h - options with layering: defaults < --config FILE < ACCELOPT_* env < flags */
#ifndef AO_CONFIG_H
#define AO_CONFIG_H

#include <stdio.h>

/* AO_OPT_LIST repeats (-X a=1 -X b=2): the values of one layer are kept in
 * order, joined by newlines; a later layer replaces the whole list.  In the
 * environment one variable holds a whole list, a value a line. */
enum ao_opt_kind { AO_OPT_STR, AO_OPT_INT, AO_OPT_NUM, AO_OPT_BOOL, AO_OPT_LIST };

/* One option: the long flag `--name`, the config-file key `name` and the
 * environment variable ACCELOPT_NAME (dashes become underscores). */
struct ao_option {
    const char *name;
    char short_name;
    enum ao_opt_kind kind;
    const char *def;     /* default as text; NULL for unset */
    const char *metavar; /* shown in --help; NULL for booleans */
    const char *help;    /* NULL: hidden from --help (another tool's key that
                            a shared config file may hold; its value is unused) */
};

/* The options every tool has; put at the end of a tool's table. */
#define AO_COMMON_OPTIONS                                                        \
    {"config", 'c', AO_OPT_STR, NULL, "FILE", "read options from FILE (key = value lines)"}, \
    {"log", 0, AO_OPT_STR, "info", "LEVEL", "log level: error, warn, info, debug"},          \
    {"help", 'h', AO_OPT_BOOL, NULL, NULL, "show this help and exit"},                     \
    {"version", 'V', AO_OPT_BOOL, NULL, NULL, "show the version and exit"}

struct ao_config {
    const struct ao_option *opts;
    int nopts;
    char **values;       /* current value of each option, NULL if unset */
    const char **source; /* "default", "file", "env" or "flag" */
    char **args;         /* positional arguments (point into argv) */
    int nargs;
};

/* Fill c from the layers.  Returns 0, or -1 with err filled on a usage or
 * config error (the caller exits with AO_EXIT_USAGE).  `--` ends options. */
int ao_config_load(struct ao_config *c, const struct ao_option *opts, int nopts,
                   int argc, char **argv, char *err, size_t errlen);
void ao_config_release(struct ao_config *c);

/* Typed getters; values were validated at load time. */
const char *ao_config_str(const struct ao_config *c, const char *name);
long ao_config_int(const struct ao_config *c, const char *name);
double ao_config_num(const struct ao_config *c, const char *name);
int ao_config_bool(const struct ao_config *c, const char *name);
/* Where the value came from ("default", "file", "env", "flag"). */
const char *ao_config_source(const struct ao_config *c, const char *name);

void ao_config_usage(FILE *out, const char *synopsis, const struct ao_option *opts, int nopts);

#endif
