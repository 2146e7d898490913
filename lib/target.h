/* target.h - the seam between accelopt and the hardware it optimizes for
 * (DESIGN.md section 7).  A target is a driver: a table of what differs
 * from one target to the next, one file each under lib/targets/, found by
 * name in a registry.  What is the same for every target (input sets,
 * poisoning, the secret checks, the stopping rule, statistics, the
 * roofline, the verdict) stays out of the drivers.
 *
 * This first cut of the seam names the target everywhere a message, a
 * topic, a prompt or a task file depends on it; the measurement itself
 * (build, start a runner, call, stop, calibrate) moves behind it next. */
#ifndef AO_TARGET_H
#define AO_TARGET_H

#include <stddef.h>

struct ao_buf;
struct ao_calib;
struct ao_task;

struct ao_target {
    const char *name;              /* messages' target; prompts/<name>/, accelopt.kernels.<name> */
    const char *ext;               /* a kernel's file: nkibench/<task>/baseline.<ext> */
    const char *const *fence_tags; /* the code-block tags a reply's kernel may carry ("" too) */
    const char *compiler;          /* the compile command, as models and results are told it */
    const char *summary;           /* one line for --help and errors */
    /* How a kernel is called, for the prompts: the signature, the tensors
     * and their order, the sizes it is timed at (dims, of size class
     * `size`), the tolerance and the compile command, appended to b. */
    void (*convention)(const struct ao_task *t, const char *size, const long long *dims,
                       struct ao_buf *b);
    /* Measure this machine's peaks for the target (bw_mib: the array size
     * of the bandwidth runs), store them at path, fill c.  0 or -1 + err. */
    int (*calibrate)(const char *path, int bw_mib, struct ao_calib *c, char *err, size_t errlen);
};

/* The target of that name, or NULL when this build has none by that name. */
const struct ao_target *ao_target_find(const char *name);
/* The default target (cpu). */
const struct ao_target *ao_target_default(void);
/* The built-in targets' names, comma-separated, into buf. */
void ao_target_names(char *buf, size_t len);
/* ao_target_find, or NULL with err saying which targets there are. */
const struct ao_target *ao_target_get(const char *name, char *err, size_t errlen);

extern const struct ao_target ao_target_cpu;

#endif
