/* test_replace.c - ao_replace_file: a reader that has the old file open
 * keeps reading it whole while the new one takes its name (the calibration,
 * read by profilers while `accelopt calibrate` writes it) */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"

/* entries in dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

int main(void)
{
    char dir[] = "/tmp/accelopt-test-replace-XXXXXX", path[200], bad[260], err[300], got[64] = "";
    const char *old = "the old calibration, whole", *new = "new";
    int fd;
    char *now;

    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/calibration-cpu.json", dir);
    CHECK(ao_replace_file(path, old, strlen(old), err, sizeof err) == 0, "a new file is written");
    fd = open(path, O_RDONLY);
    CHECK(ao_replace_file(path, new, strlen(new), err, sizeof err) == 0, "and replaced");
    CHECK(fd >= 0 && read(fd, got, sizeof got - 1) == (ssize_t)strlen(old) && strcmp(got, old) == 0,
          "a reader of the old file still reads it whole (%s)", got);
    now = ao_read_file(path, NULL, err, sizeof err);
    CHECK(now && strcmp(now, new) == 0, "the name now holds the new one");
    CHECK(entries(dir) == 1, "no temporary file is left beside it (%d entries)", entries(dir));
    snprintf(bad, sizeof bad, "%s/no-such-dir/x.json", dir);
    CHECK(ao_replace_file(bad, new, strlen(new), err, sizeof err) == -1 && strstr(err, "no-such-dir"),
          "a path it cannot write is an error that names it (%s)", err);
    free(now);
    if (fd >= 0)
        close(fd);
    unlink(path);
    rmdir(dir);
    return CHECK_DONE();
}
