/* localruns.c - the runs in flight on this machine, registered in the
 * user's state dir (localruns.h) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "localruns.h"
#include "wire/msg.h"

static int reg_path(char *path, size_t len, const char *id)
{
    return ao_run_id_valid(id) ? ao_name(path, len, "%s/runs/%s.json", ao_state_dir(), id) : -1;
}

int localrun_add(const char *id, const char *dir, const char *redis_url, const char *prefix,
                 const char *const *runs, int nruns, char *err, size_t errlen)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8], base[PATH_MAX];
    cJSON *j = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(j, "runs");
    char *text = NULL;
    int fd = -1, rc = -1;

    if (reg_path(path, sizeof path, id) < 0 || ao_name(tmp, sizeof tmp, "%s.tmp", path) < 0 ||
        ao_name(base, sizeof base, "%s/runs", ao_state_dir()) < 0) {
        snprintf(err, errlen, "no place for run '%.80s' in the state dir", id);
        goto out;
    }
    if (ao_mkdirs(base, 0700) < 0) {
        snprintf(err, errlen, "cannot make '%s': %s", base, strerror(errno));
        goto out;
    }
    if (ao_dir_ours_alone(base, "the runs' directory", err, errlen) < 0)
        goto out; /* another user could read the password there, or plant a run */
    cJSON_AddStringToObject(j, "id", id);
    cJSON_AddStringToObject(j, "dir", dir);
    cJSON_AddStringToObject(j, "redis", redis_url);
    cJSON_AddStringToObject(j, "prefix", prefix);
    cJSON_AddNumberToObject(j, "pid", (double)getpid());
    for (int i = 0; i < nruns; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(runs[i]));
    text = cJSON_PrintUnformatted(j);
    /* owner-only from the start, never through a link someone planted */
    unlink(tmp);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 ||
        write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0 || rename(tmp, path) < 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        if (fd >= 0)
            unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    cJSON_free(text);
    cJSON_Delete(j);
    return rc;
}

void localrun_remove(const char *id)
{
    char path[PATH_MAX];

    if (reg_path(path, sizeof path, id) == 0)
        unlink(path);
}

static int alive(double pid)
{
    return pid >= 1 && pid <= INT_MAX && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name); /* the ids start with their time */
}

cJSON *localruns_live(void)
{
    char base[PATH_MAX];
    cJSON *out = cJSON_CreateArray();
    struct dirent **e = NULL;
    int n;

    char why[AO_ERRLEN];

    if (!out || ao_name(base, sizeof base, "%s/runs", ao_state_dir()) < 0 ||
        ao_dir_ours_alone(base, "the runs' directory", why, sizeof why) < 0 ||
        (n = scandir(base, &e, NULL, by_name)) < 0)
        return out;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX], err[AO_ERRLEN], *text;
        size_t len = strlen(e[i]->d_name);
        struct stat st;
        cJSON *j;
        if (len > 5 && strcmp(e[i]->d_name + len - 5, ".json") == 0 &&
            ao_name(path, sizeof path, "%s/%s", base, e[i]->d_name) == 0 && lstat(path, &st) == 0 &&
            S_ISREG(st.st_mode) && st.st_uid == geteuid() && (text = ao_read_file(path, NULL, err, sizeof err))) {
            j = cJSON_Parse(text);
            free(text);
            if (cJSON_IsObject(j) && alive(ao_json_num(j, "pid", 0)))
                cJSON_AddItemToArray(out, j);
            else {
                cJSON_Delete(j);
                unlink(path); /* a run that died without saying so */
            }
        }
        free(e[i]);
    }
    free(e);
    return out;
}
