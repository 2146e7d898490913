/* profstage.h - the profiler stage's core: kernel message in, result out,
 * with the task lookup, the calibration and the profile cache around it */
#ifndef AO_PROFSTAGE_H
#define AO_PROFSTAGE_H

#include "profiler/profile.h"
#include "targets/target.h"
#include "wire/msg.h"

struct ao_target;

struct ao_profstage_opts {
    const char *redis_url;   /* shared profile cache; NULL: in memory only */
    const char *redis_prefix;
    const char *calib_path;  /* NULL: the default path */
    int calibrate;           /* measure the peaks when there is no calibration */
    int bw_mib;              /* array size for the bandwidth calibration */
    const struct ao_target *target; /* the kernels it takes */
    struct ao_profiler_opts prof;
};

struct ao_profstage;

struct ao_profstage *ao_profstage_new(const struct ao_profstage_opts *o, char *err, size_t errlen);
void ao_profstage_free(struct ao_profstage *s);
/* The target whose kernels it takes. */
const struct ao_target *ao_profstage_target(const struct ao_profstage *s);

/* Profile one kernel message into a result message (envelope included).
 * Returns 0 with r filled (whatever the verdict), or -1 with reason filled
 * when the message itself is unusable (it goes to the dead letters). */
int ao_profstage_kernel(struct ao_profstage *s, const struct ao_kernel_msg *k,
                        struct ao_result_msg *r, char *reason, size_t len);

/* The calibration in use (NULL when the stage runs without one). */
const struct ao_calib *ao_profstage_calib(const struct ao_profstage *s);

#endif

#include "core/config.h"

/* The options of every command that profiles, for their option tables. */
#define AO_PROFILER_OPTIONS                                                                  \
    {"target", 0, AO_OPT_STR, AO_TARGET_DEFAULT, "NAME", "the target kernels are for (built in: " AO_TARGET_NAMES ")"},     \
    {"redis", 0, AO_OPT_STR, NULL, "URL", "share the profile cache in redis (redis://host:port)"}, \
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},        \
    {"calibration", 0, AO_OPT_STR, NULL, "FILE", "calibration file (default: in the state dir)"}, \
    {"no-calibrate", 0, AO_OPT_BOOL, NULL, NULL, "without a calibration, report no % of peak "  \
     "instead of measuring the peaks"},                                                       \
    {"bw-mib", 0, AO_OPT_INT, "256", "MIB", "array size for the bandwidth calibration"},       \
    {"timeout", 't', AO_OPT_NUM, "60", "SEC", "wall limit for running one kernel"},            \
    {"compile-timeout", 0, AO_OPT_NUM, "60", "SEC", "wall limit for compiling one kernel"},     \
    {"budget", 0, AO_OPT_NUM, "1", "SEC", "measured time to aim for per kernel"},              \
    {"warmup", 0, AO_OPT_NUM, "0.1", "SEC", "run a kernel this long before measuring it"},      \
    {"spread", 0, AO_OPT_NUM, "0.02", "FRAC", "repeat until the IQR/median is under this"},    \
    {"max-calls", 0, AO_OPT_INT, "200", "N", "measured calls at most"},                       \
    {"cpu", 0, AO_OPT_INT, "-1", "N", "pin compiles and kernels to CPU N, one profiler per core (-1: not pinned)"},                \
    {"work-dir", 0, AO_OPT_STR, "/tmp", "DIR", "where job directories are made (a path of 400 bytes at most)"}

/* Fill o from the options above; 0 or -1 + err on a bad value. */
int ao_profstage_opts_from_config(const struct ao_config *c, struct ao_profstage_opts *o,
                                  char *err, size_t errlen);
