/* memstore.c - the memory this machine keeps between runs (issue 47):
 * <state dir>/memory/<key>.jsonl, one file per memory key, in the form
 * `accelopt memory export` writes.  `accelopt run` (its private Redis)
 * loads a key's file before it starts and saves its memory back at its
 * end, under a lock, merged with what other runs saved meanwhile. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "memfile.h"
#include "memstore.h"
#include "state/memory.h"

/* <state dir>/memory, made owner-only if missing, checked if not. */
static int memstore_dir(char *dir, size_t len, char *err, size_t errlen)
{
    if (ao_name(dir, len, "%s/memory", ao_state_dir()) < 0)
        return ao_errf(err, errlen, "the state dir's path is too long");
    if (ao_mkdirs(dir, 0700) < 0)
        return ao_errf(err, errlen, "cannot make '%s': %s", dir, strerror(errno));
    /* lessons reach the planner's prompts: no other user may plant one */
    return ao_dir_ours_alone(dir, "the memory's directory", err, errlen);
}

int memstore_path(const char *key, char *path, size_t len, char *err, size_t errlen)
{
    char dir[900], name[300];
    size_t i;

    if (memstore_dir(dir, sizeof dir, err, errlen) < 0)
        return -1;
    /* a key is made of checked names and ':' (lib/wire/names.h) */
    for (i = 0; key[i] && i + 1 < sizeof name; i++)
        name[i] = key[i] == ':' || key[i] == '/' ? '.' : key[i];
    name[i] = '\0';
    if (key[i] || name[0] == '.' || ao_name(path, len, "%s/%s.jsonl", dir, name) < 0)
        return ao_errf(err, errlen, "no file for the memory '%.80s'", key);
    return 0;
}

/* Hold the key's lock (its path + ".lock") while the file is read and
 * replaced: two runs ending at once both keep their lessons. */
static int lock_file(const char *path, char *err, size_t errlen)
{
    char lock[1000];
    int fd;

    if (ao_name(lock, sizeof lock, "%s.lock", path) < 0)
        return ao_errf(err, errlen, "the memory's path is too long");
    if ((fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
        return ao_errf(err, errlen, "cannot open '%s': %s", lock, strerror(errno));
    while (flock(fd, LOCK_EX) < 0)
        if (errno != EINTR) {
            close(fd);
            return ao_errf(err, errlen, "cannot lock '%s': %s", lock, strerror(errno));
        }
    return fd;
}

/* items as the key's file, replaced whole (a reader sees the old file or
 * the new, never half of one), owner-only, never through a planted link:
 * the count written, or -1 + err. */
static int write_file(const char *path, const cJSON *items, char *err, size_t errlen)
{
    char tmp[1100];
    FILE *f;
    int fd, n;

    if (ao_name(tmp, sizeof tmp, "%s.tmp", path) < 0)
        return ao_errf(err, errlen, "the memory's path is too long");
    unlink(tmp);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 ||
        !(f = fdopen(fd, "w"))) {
        if (fd >= 0)
            close(fd);
        return ao_errf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
    }
    n = memory_write_items(f, items);
    if (fclose(f) != 0 || rename(tmp, path) < 0) {
        unlink(tmp);
        return ao_errf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    }
    return n;
}

/* The file's items into the key (those it does not hold yet).  A file
 * that cannot be read as a memory is moved aside, said in the log, and
 * the run goes on without it: 0 with *count 0. */
static int load_locked(struct ao_redis *r, const char *key, const char *path, int *count,
                       char *err, size_t errlen)
{
    struct stat st;
    long long pushed = 0;
    char aside[1100];

    *count = 0;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : ao_errf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return ao_errf(err, errlen, "'%s' is not a regular file", path);
    if (memory_import(r, key, path, NULL, &pushed, count, err, errlen) == 0) {
        *count = (int)pushed;
        return 0;
    }
    snprintf(aside, sizeof aside, "%s.unreadable-%lld", path, (long long)time(NULL));
    ao_warn("the machine's memory %s is not one (%s): moved to %s, and this run starts without it",
            path, err, rename(path, aside) == 0 ? aside : "nowhere (it stays)");
    return 0;
}

int memstore_load(struct ao_redis *r, const char *key, int *count, char *err, size_t errlen)
{
    char path[1000];
    int fd, rc;

    *count = 0;
    if (memstore_path(key, path, sizeof path, err, errlen) < 0 || (fd = lock_file(path, err, errlen)) < 0)
        return -1;
    rc = load_locked(r, key, path, count, err, errlen);
    close(fd);
    return rc;
}

int memstore_save(struct ao_redis *r, const char *key, int expn, int *count, char *err,
                  size_t errlen)
{
    char path[1000];
    int fd, merged, rc = -1;
    cJSON *items = NULL;

    *count = 0;
    if (memstore_path(key, path, sizeof path, err, errlen) < 0 || (fd = lock_file(path, err, errlen)) < 0)
        return -1;
    /* what other runs saved since this one loaded, then the newest expn */
    if (load_locked(r, key, path, &merged, err, errlen) < 0)
        goto out;
    if (!(items = ao_memory_read(r, key, expn, err, errlen)))
        goto out;
    if ((*count = write_file(path, items, err, errlen)) < 0)
        goto out;
    rc = 0;
out:
    cJSON_Delete(items);
    close(fd);
    return rc;
}

int memstore_forget(const char *key, int (*drop)(const cJSON *item, void *ctx), void *ctx, int dry,
                    int *removed, int *left, char *err, size_t errlen)
{
    char path[1000];
    cJSON *items = cJSON_CreateArray(), *keep = cJSON_CreateArray(), *it;
    struct stat st;
    int fd, rc = -1;

    *removed = *left = 0;
    if (memstore_path(key, path, sizeof path, err, errlen) < 0 || (fd = lock_file(path, err, errlen)) < 0)
        goto done;
    if (lstat(path, &st) < 0) {
        rc = errno == ENOENT ? 0 : ao_errf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        goto out;
    }
    if (memory_read_file(path, items, err, errlen) < 0)
        goto out;
    while ((it = cJSON_DetachItemFromArray(items, 0))) {
        if (drop(it, ctx)) {
            ++*removed;
            cJSON_Delete(it);
        } else {
            cJSON_AddItemToArray(keep, it);
        }
    }
    *left = cJSON_GetArraySize(keep);
    if (dry || *removed == 0) {
        rc = 0;
        goto out;
    }
    if (write_file(path, keep, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    close(fd);
done:
    cJSON_Delete(items);
    cJSON_Delete(keep);
    return rc;
}
