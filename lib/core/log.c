/* log.c - stderr logging with a tool prefix */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"

static const char *tool_name = "accelopt";
static enum ao_log_level cur_level = AO_LOG_INFO;

int ao_log_level_parse(const char *s, enum ao_log_level *out)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (enum ao_log_level)i;
            return 0;
        }
    return -1;
}

void ao_log_init(const char *tool)
{
    const char *env = getenv("ACCELOPT_LOG");
    tool_name = tool;
    if (env)
        ao_log_level_parse(env, &cur_level);
}

void ao_log_set_level(enum ao_log_level level)
{
    cur_level = level;
}

void ao_log(enum ao_log_level level, const char *fmt, ...)
{
    static const char *tags[] = {"error: ", "warning: ", "", "debug: "};
    char line[2048];
    va_list ap;
    int n;

    if (level > cur_level)
        return;
    n = snprintf(line, sizeof line, "%s: %s", tool_name, tags[level]);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    /* messages quote servers, compilers and kernels: no escape sequence
     * from them reaches a terminal */
    ao_terminal_safe(line);
    /* one write per line so lines from several processes do not interleave */
    fprintf(stderr, "%s\n", line);
}
