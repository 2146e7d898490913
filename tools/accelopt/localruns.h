/* localruns.h - the runs `accelopt run` has in flight on this machine, so
 * that `accelopt status` finds them with no --redis (a run's private Redis
 * has a random password that no log shows) */
#ifndef AO_LOCALRUNS_H
#define AO_LOCALRUNS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Register run id (its directory, the Redis it keeps its state in and its
 * key prefix, the runs of its tasks) as this process's, in the user's state
 * dir: runs/<id>.json, mode 0600 in a 0700 directory (the URL holds the
 * password).  0, or -1 + err. */
int localrun_add(const char *id, const char *dir, const char *redis_url, const char *prefix,
                 const char *const *runs, int nruns, char *err, size_t errlen);
/* The run has ended: its file goes. */
void localrun_remove(const char *id);
/* The registrations of runs whose process still lives, oldest first: an
 * array of {id, dir, redis, prefix, pid, runs: [...]}; the files of runs
 * that died without removing theirs are removed. */
cJSON *localruns_live(void);

#endif
