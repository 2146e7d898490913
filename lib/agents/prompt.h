/* prompt.h - prompt templates (prompts/<target>/<role>.<part>.txt) with
 * {{name}} placeholders, read at run time */
#ifndef AO_PROMPT_H
#define AO_PROMPT_H

#include <stddef.h>

/* One placeholder value. */
struct ao_prompt_var {
    const char *name, *value;
};

/* Read the template of a role's part ("system" or "user") for a target from
 * dir (NULL: $ACCELOPT_HOME/prompts).  Returns the text (caller frees) or
 * NULL + err naming the file it looked for. */
char *ao_prompt_load(const char *dir, const char *target, const char *role, const char *part,
                     char *err, size_t errlen);

/* Substitute every {{name}} in tmpl; a placeholder with no value is an
 * error (templates and code must agree).  Bit i of *used (when not NULL) is
 * set if vars[i] appeared, so a caller can insist every value was shown.
 * At most 64 values.  Returns the text (caller frees) or NULL + err. */
char *ao_prompt_render(const char *tmpl, const struct ao_prompt_var *vars, int nvars,
                       unsigned long long *used, char *err, size_t errlen);

#endif
