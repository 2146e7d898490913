/* prompt.c - prompt templates with {{name}} placeholders */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/prompt.h"
#include "core/util.h"

char *ao_prompt_load(const char *dir, const char *target, const char *role, const char *part,
                     char *err, size_t errlen)
{
    char path[1024], e[AO_ERRLEN];
    char *t;

    if (dir ? ao_name(path, sizeof path, "%s/%s/%s.%s.txt", dir, target, role, part)
            : ao_name(path, sizeof path, "%s/prompts/%s/%s.%s.txt", ao_home(), target, role, part)) {
        snprintf(err, errlen, "no %s prompt for target '%.40s': the path is too long", role, target);
        return NULL;
    }
    if (!(t = ao_read_file(path, NULL, e, sizeof e)))
        snprintf(err, errlen, "no %s prompt for target '%s': %s", role, target, e);
    return t;
}

char *ao_prompt_render(const char *tmpl, const struct ao_prompt_var *vars, int nvars,
                       unsigned long long *used, char *err, size_t errlen)
{
    struct ao_buf out = {0};
    const char *p = tmpl, *open;

    if (nvars > 64) {
        snprintf(err, errlen, "too many prompt values");
        return NULL;
    }
    while ((open = strstr(p, "{{"))) {
        const char *close = strstr(open + 2, "}}");
        size_t n;
        int i;
        if (!close) {
            snprintf(err, errlen, "unclosed '{{' in the prompt template");
            goto fail;
        }
        n = (size_t)(close - open - 2);
        for (i = 0; i < nvars; i++)
            if (strlen(vars[i].name) == n && memcmp(vars[i].name, open + 2, n) == 0)
                break;
        if (i == nvars) {
            snprintf(err, errlen, "the prompt template names '{{%.*s}}', which has no value",
                     (int)(n < 40 ? n : 40), open + 2);
            goto fail;
        }
        if (used)
            *used |= 1ull << i;
        ao_buf_append(&out, p, (size_t)(open - p));
        ao_buf_append(&out, vars[i].value, strlen(vars[i].value));
        p = close + 2;
    }
    ao_buf_append(&out, p, strlen(p) + 1);
    return out.data;
fail:
    ao_buf_release(&out);
    return NULL;
}
