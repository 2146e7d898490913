/* util.c - small helpers: growable buffers, files, time, hashing */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/alloc.h"
#include "core/util.h"

extern char **environ;

void ao_buf_append(struct ao_buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *d;
        while (cap < b->len + n + 1)
            cap *= 2;
        d = ao_realloc(b->data, cap);
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ao_buf_printf(struct ao_buf *b, const char *fmt, ...)
{
    char small[512], *big;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) /* a format of ours that does not print: nothing to add */
        return;
    if ((size_t)n < sizeof small) {
        ao_buf_append(b, small, (size_t)n);
        return;
    }
    big = ao_malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ao_buf_append(b, big, (size_t)n);
    free(big);
}

void ao_buf_release(struct ao_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *ao_read_file_max(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
    struct ao_buf b = {0};
    char chunk[65536];
    struct stat st;
    ssize_t n;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

    if (fd < 0) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "'%s' is not a regular file", path);
        goto fail;
    }
    for (;;) {
        n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        if (b.len + (size_t)n > max) {
            snprintf(err, errlen, "'%s' is over the %zu byte limit", path, max);
            goto fail;
        }
        ao_buf_append(&b, chunk, (size_t)n);
    }
    close(fd);
    if (!b.data)
        ao_buf_append(&b, "", 0);
    if (len)
        *len = b.len;
    return b.data;
fail:
    close(fd);
    ao_buf_release(&b);
    return NULL;
}

char *ao_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    return ao_read_file_max(path, AO_FILE_MAX, len, err, errlen);
}

int ao_spawn(char *const argv[], char *const envp[], char **out, size_t out_max, int *status,
             char *err, size_t errlen)
{
    posix_spawn_file_actions_t fa;
    struct ao_buf b = {0};
    int pipefd[2] = {-1, -1}, rc = -1, have_fa = 0;
    pid_t pid;
    char chunk[4096];
    ssize_t n;

    if (out)
        *out = NULL;
    if (pipe2(pipefd, O_CLOEXEC) < 0 || posix_spawn_file_actions_init(&fa) != 0) {
        snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(errno));
        goto out;
    }
    have_fa = 1;
    if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2) != 0) {
        snprintf(err, errlen, "cannot run '%s'", argv[0]);
        goto out;
    }
    if ((errno = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp ? envp : environ)) != 0) {
        snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(errno));
        goto out;
    }
    close(pipefd[1]);
    pipefd[1] = -1;
    /* read it all (a full pipe would stall the child), keep up to out_max */
    while ((n = read(pipefd[0], chunk, sizeof chunk)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (b.len < out_max)
            ao_buf_append(&b, chunk, (size_t)n < out_max - b.len ? (size_t)n : out_max - b.len);
    }
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "lost '%s': %s", argv[0], strerror(errno));
            goto out;
        }
    if (!b.data)
        ao_buf_append(&b, "", 0);
    if (out) {
        *out = b.data;
        b.data = NULL;
    }
    rc = 0;
out:
    if (have_fa)
        posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 2; i++)
        if (pipefd[i] >= 0)
            close(pipefd[i]);
    ao_buf_release(&b);
    return rc;
}

int ao_is_identifier(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max || !(s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z')))
        return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

int ao_write_file(const char *path, const void *p, size_t n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "wb");

    if (!f) {
        snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
        return -1;
    }
    if (fwrite(p, 1, n, f) != n) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        fclose(f);
        return -1;
    }
    if (fclose(f) != 0) { /* the stream is gone either way */
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int ao_replace_file(const char *path, const void *p, size_t n, char *err, size_t errlen)
{
    char tmp[PATH_MAX];
    int fd = -1;

    if (ao_name(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) < 0)
        return ao_errf(err, errlen, "the path '%s' is too long", path);
    /* a new file, never through a link someone planted at the name (issue
     * 56): what is there is taken away, once, and the name made anew */
    for (int tries = 0; tries < 2 && fd < 0; tries++)
        if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 && errno == EEXIST)
            unlink(tmp);
    if (fd < 0)
        return ao_errf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
    if (write(fd, p, n) != (ssize_t)n || close(fd) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

char *ao_terminal_safe(char *s)
{
    for (unsigned char *p = (unsigned char *)s; p && *p; p++)
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
            *p = ' ';
    return s;
}

int ao_copy_file(const char *from, const char *to, char *err, size_t errlen)
{
    size_t n;
    char *d = ao_read_file(from, &n, err, errlen);
    struct stat st;
    int rc;

    if (!d)
        return -1;
    rc = ao_write_file(to, d, n, err, errlen);
    free(d);
    /* an executable stays one (a trusted runner copied into a job) */
    if (rc == 0 && stat(from, &st) == 0 && (st.st_mode & S_IXUSR) && chmod(to, 0755) < 0)
        rc = ao_errf(err, errlen, "cannot make '%s' executable: %s", to, strerror(errno));
    return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int ao_rmtree(const char *path)
{
    return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

int ao_mkdirs(const char *path, int mode)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);

    if (n == 0 || n >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, (mode_t)mode) < 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    if (mkdir(tmp, (mode_t)mode) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

int64_t ao_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ao_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ao_utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void ao_sha256_hex(const void *data, size_t n, char hex[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;

    EVP_Digest(data, n, md, &mdlen, EVP_sha256(), NULL);
    for (unsigned i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

int ao_random_bytes(void *p, size_t n)
{
    unsigned char *c = p;
    while (n > 0) {
        ssize_t r = getrandom(c, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

const char *ao_home(void)
{
    static char home[PATH_MAX];
    char exe[PATH_MAX], data[PATH_MAX + 32];
    const char *env = getenv("ACCELOPT_HOME");
    struct stat st;
    ssize_t n;

    if (env && *env)
        return env;
    if (home[0])
        return home;
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return ".";
    exe[n] = '\0';
    /* installed: PREFIX/bin/accelopt finds PREFIX/share/accelopt */
    if (ao_name(home, sizeof home, "%s", dirname(dirname(exe))) < 0)
        return ".";
    if (ao_name(data, sizeof data, "%s/share/accelopt", home) == 0 && stat(data, &st) == 0 &&
        S_ISDIR(st.st_mode) && strlen(data) < sizeof home) {
        memcpy(home, data, strlen(data) + 1);
        return home;
    }
    /* in the source tree: bin/accelopt -> the tree; tests live in
     * build/tests, the same depth */
    if (strcmp(home + strlen(home) - (strlen(home) >= 6 ? 6 : 0), "/build") == 0)
        home[strlen(home) - 6] = '\0';
    return home;
}

/* The state directory as the environment names it: 0, or -1 when that
 * name is longer than AO_STATE_DIR_MAX (dir then holds what it would be,
 * cut, for the message alone). */
static int state_dir_of(char *dir, size_t len)
{
    const char *env = getenv("ACCELOPT_STATE_DIR");
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *h = getenv("HOME");
    struct passwd *pw;
    int n;

    if (env && *env)
        n = snprintf(dir, len, "%s", env);
    else if (xdg && *xdg)
        n = snprintf(dir, len, "%s/accelopt", xdg);
    else if ((h && *h) || ((pw = getpwuid(geteuid())) && (h = pw->pw_dir) && *h))
        n = snprintf(dir, len, "%s/.local/state/accelopt", h);
    else /* no home: nothing is kept, never in a place another user could prepare (issue 56) */
        n = snprintf(dir, len, "/nonexistent/accelopt-state");
    return n < 0 || n > AO_STATE_DIR_MAX ? -1 : 0;
}

const char *ao_state_dir(void)
{
    static char dir[PATH_MAX];

    /* one too long was refused at the start (ao_dirs_check): a library
     * user that skipped the check keeps nothing, rather than a cut path */
    if (state_dir_of(dir, sizeof dir) < 0)
        snprintf(dir, sizeof dir, "/nonexistent/accelopt-state");
    return dir;
}

int ao_dirs_check(char *err, size_t errlen)
{
    char dir[PATH_MAX];
    const char *home = ao_home();

    if (state_dir_of(dir, sizeof dir) < 0)
        return ao_errf(err, errlen, "the state directory '%.60s...' (ACCELOPT_STATE_DIR, XDG_STATE_HOME or "
                       "HOME) is %zu bytes: at most %d, so that the paths built under it fit",
                       dir, strlen(dir), AO_STATE_DIR_MAX);
    if (strlen(home) > AO_HOME_MAX)
        return ao_errf(err, errlen, "the data directory '%.60s...' (ACCELOPT_HOME, or where accelopt is "
                       "installed) is %zu bytes: at most %d", home, strlen(home), AO_HOME_MAX);
    return 0;
}

int ao_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void ao_seed_from_text(uint64_t s[4], unsigned long long seed, const char *text)
{
    struct ao_buf b = {0};
    char hex[65];

    ao_buf_printf(&b, "%llu:%s", seed, text);
    ao_sha256_hex(b.data ? b.data : "", b.len, hex);
    ao_buf_release(&b);
    for (int i = 0; i < 4; i++) {
        char w[17];
        memcpy(w, hex + 16 * i, 16);
        w[16] = '\0';
        s[i] = strtoull(w, NULL, 16);
    }
    if (!(s[0] | s[1] | s[2] | s[3]))
        s[0] = 1;
}

int ao_errf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!len)
        return -1;
    va_start(ap, fmt);
    n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n < 0)
        buf[0] = '\0';
    else if ((size_t)n >= len && len > 4) {
        size_t at = len - 4; /* not inside a UTF-8 character */
        while (at > 0 && ((unsigned char)buf[at] & 0xC0) == 0x80)
            at--;
        memcpy(buf + at, "...", 4);
    }
    return -1;
}

size_t ao_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0], need, cp;

    if (c < 0x80)
        return 1;
    need = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!need || need > n)
        return 0;
    cp = c & (0x7F >> need);
    for (unsigned i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((need == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (need == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return need;
}

int ao_utf8_text(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;

    for (size_t i = 0, k; i < n; i += k)
        if (!p[i] || !(k = ao_utf8_seq(p + i, n - i)))
            return 0;
    return 1;
}

size_t ao_utf8_clean(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t n = strlen(s), bad = 0;

    for (size_t i = 0, k; i < n; i += k)
        if (!(k = ao_utf8_seq(p + i, n - i))) {
            p[i] = '?';
            k = 1;
            bad++;
        }
    return bad;
}

int ao_name(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len) {
        if (len)
            buf[0] = '\0';
        return -1;
    }
    return 0;
}

int ao_path(char *buf, size_t len, const char *dir, const char *name, char *err, size_t errlen)
{
    if (ao_name(buf, len, "%s/%s", dir, name) == 0)
        return 0;
    return ao_errf(err, errlen, "the path '%.80s%s/%s' would be %zu bytes: at most %zu", dir,
                   strlen(dir) > 80 ? "..." : "", name, strlen(dir) + 1 + strlen(name), len - 1);
}

int ao_dir_ours_alone(const char *dir, const char *what, char *err, size_t errlen)
{
    char p[PATH_MAX];
    struct stat st;
    int last = 1;

    if (ao_name(p, sizeof p, "%s", dir) < 0)
        return snprintf(err, errlen, "%s '%.200s...' is too long", what, dir), -1;
    for (;;) {
        char *slash = strrchr(p, '/');
        const char *at = p[0] ? p : "/";
        if (lstat(at, &st) < 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: '%s' is not a directory", what, at);
            return -1;
        }
        if ((last ? st.st_uid != geteuid() : st.st_uid != geteuid() && st.st_uid != 0) ||
            ((st.st_mode & 022) && (last || !(st.st_mode & S_ISVTX)))) {
            snprintf(err, errlen, "%s '%s' is not safe: '%s' has owner uid %u and mode %03o (it must "
                     "be yours, and writable by you alone)", what, dir, at, (unsigned)st.st_uid,
                     (unsigned)(st.st_mode & 07777));
            return -1;
        }
        if (!slash || (slash == p && !p[1]))
            return 0; /* a relative path's start, or the root */
        slash[slash == p] = '\0'; /* "/a" goes on to "/" */
        last = 0;
    }
}
