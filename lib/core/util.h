/* util.h - small helpers: growable buffers, files, time, hashing */
#ifndef AO_UTIL_H
#define AO_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define AO_ERRLEN 512

/* A growable byte buffer, always NUL-terminated when len > 0. */
struct ao_buf {
    char *data;
    size_t len, cap;
};

/* The one builder of keys, ids and paths: snprintf that never cuts.  0, or
 * -1 (buf emptied) when the name would not fit in len bytes: two names that
 * differ only past the end of a buffer must not become one. */
int ao_name(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), warn_unused_result));

/* A message (an error, a reason) into buf, for people: one that does not
 * fit is cut and ends in "...", so that the cut shows.  Returns -1, for
 * `return ao_errf(err, errlen, ...);`.  Names go through ao_name (above),
 * which never cuts. */
int ao_errf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* dir/name into buf through ao_name: 0, or -1 + err saying which path
 * would not fit (a path is refused, never cut). */
int ao_path(char *buf, size_t len, const char *dir, const char *name, char *err, size_t errlen);

void ao_buf_append(struct ao_buf *b, const void *p, size_t n);
void ao_buf_printf(struct ao_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ao_buf_release(struct ao_buf *b);

/* Read a whole regular file (NUL-terminated); NULL with err filled on
 * failure.  A FIFO, device or directory is refused without blocking, and a
 * file over max bytes (AO_FILE_MAX for ao_read_file) is refused.  The caller
 * frees the result. */
#define AO_FILE_MAX (16u << 20)
char *ao_read_file(const char *path, size_t *len, char *err, size_t errlen);
char *ao_read_file_max(const char *path, size_t max, size_t *len, char *err, size_t errlen);
int ao_write_file(const char *path, const void *p, size_t n, char *err, size_t errlen);
/* The same, written whole beside it and then renamed over it: a reader sees
 * the old file or the new one, never a part.  0 or -1 + err. */
int ao_replace_file(const char *path, const void *p, size_t n, char *err, size_t errlen);
/* Make text from elsewhere (a server's error, a compiler's words about a
 * model's kernel) safe for a terminal: every control character but newline
 * and tab becomes a space, so that no escape sequence reaches it.  In place;
 * returns s. */
char *ao_terminal_safe(char *s);
/* The length of the valid UTF-8 sequence at s (n bytes left), or 0: an
 * overlong form, a surrogate, a code point past U+10FFFF, a stray or cut
 * byte are not. */
size_t ao_utf8_seq(const unsigned char *s, size_t n);
/* Are the n bytes at s UTF-8 text, with no NUL among them? */
int ao_utf8_text(const char *s, size_t n);
/* Every byte of s that is not part of a valid UTF-8 sequence becomes '?',
 * in place (what we print stays UTF-8 whatever a compiler or a kernel
 * wrote into it); returns how many. */
size_t ao_utf8_clean(char *s);
/* Copy a file's bytes (ao_read_file, then ao_write_file), executable if it was.  0 or -1 + err. */
int ao_copy_file(const char *from, const char *to, char *err, size_t errlen);

/* Run argv[0] (searched in PATH) with that argv, no shell, stdin from
 * /dev/null, stdout and stderr captured together into *out (up to out_max
 * bytes kept; the caller frees it; out may be NULL).  envp NULL keeps ours.
 * Waits for it; 0 with *status its wait status, or -1 + err if it could not
 * be run. */
int ao_spawn(char *const argv[], char *const envp[], char **out, size_t out_max, int *status,
             char *err, size_t errlen);

/* Is s a C identifier of 1..max characters ([A-Za-z_][A-Za-z0-9_]*)? */
int ao_is_identifier(const char *s, size_t max);

/* Remove a directory tree (no symlinks followed); 0 or -1. */
int ao_rmtree(const char *path);
/* mkdir -p; 0 or -1 with errno. */
int ao_mkdirs(const char *path, int mode);

/* Monotonic clock in nanoseconds. */
int64_t ao_now_ns(void);
/* The wall clock in ns (for times compared across machines, e.g. Kafka timestamps). */
int64_t ao_wall_ns(void);
/* Wall clock as an RFC 3339 UTC string into buf (at least 32 bytes). */
void ao_utc_now(char *buf, size_t len);

/* Lowercase hex SHA-256 of data into hex (65 bytes). */
void ao_sha256_hex(const void *data, size_t n, char hex[65]);

/* Fill with bytes from getrandom(2). */
int ao_random_bytes(void *p, size_t n);

/* Directory holding the data (nkibench/, prompts/, the runner sources):
 * ACCELOPT_HOME; else PREFIX/share/accelopt when the executable is
 * PREFIX/bin/x (installed); else the source tree the executable was built
 * in (bin/.. or build/..). */
const char *ao_home(void);

/* Directory for persistent state (calibrations): ACCELOPT_STATE_DIR, or
 * $XDG_STATE_HOME/accelopt, or ~/.local/state/accelopt. */
const char *ao_state_dir(void);

/* The longest data and state directories: every path built under them
 * (the state's runs/, memory/, keys; the harness's sources) fits its
 * buffer.  ao_dirs_check (every tool, at its start: exit 2) refuses a
 * longer one; ao_state_dir never returns one cut. */
#define AO_HOME_MAX 400
#define AO_STATE_DIR_MAX 400
int ao_dirs_check(char *err, size_t errlen);

/* Could anyone but us (and root) have put or replaced what is in dir?
 * Every directory on the way must be ours or root's, and not writable by
 * others unless sticky (/tmp); dir itself ours alone.  0, or -1 + err
 * ("WHAT '<dir>' is not safe: ..."). */
int ao_dir_ours_alone(const char *dir, const char *what, char *err, size_t errlen);

/* Four 64-bit words of seed state from a number and a text (SHA-256 of
 * both): deterministic choices that differ per kernel. */
void ao_seed_from_text(uint64_t s[4], unsigned long long seed, const char *text);

/* qsort comparator for doubles, ascending. */
int ao_cmp_double(const void *a, const void *b);

#endif
