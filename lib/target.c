/* target.c - the registry of built-in targets */
#include <stdio.h>
#include <string.h>

#include "target.h"

static const struct ao_target *const targets[] = {&ao_target_cpu, NULL};

const struct ao_target *ao_target_find(const char *name)
{
    for (int i = 0; name && targets[i]; i++)
        if (strcmp(targets[i]->name, name) == 0)
            return targets[i];
    return NULL;
}

const struct ao_target *ao_target_default(void)
{
    return targets[0];
}

void ao_target_names(char *buf, size_t len)
{
    size_t n = 0;

    if (len)
        buf[0] = '\0';
    for (int i = 0; targets[i] && n < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s", i ? ", " : "", targets[i]->name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

const struct ao_target *ao_target_get(const char *name, char *err, size_t errlen)
{
    const struct ao_target *t = ao_target_find(name);
    char names[200];

    if (!t) {
        ao_target_names(names, sizeof names);
        snprintf(err, errlen, "target '%.40s' is not built into this accelopt (built in: %s)",
                 name ? name : "", names);
    }
    return t;
}
