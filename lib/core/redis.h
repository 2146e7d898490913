/* redis.h - a Redis connection that reconnects by itself (hiredis 0.14 does not) */
#ifndef AO_REDIS_H
#define AO_REDIS_H

#include <stddef.h>

struct ao_redis;

/* Parse redis://[:password@]host[:port][/db] (or host:port) and connect.
 * NULL + err if the URL is bad or the first connection fails.  The
 * password is never logged. */
struct ao_redis *ao_redis_new(const char *url, const char *prefix, char *err, size_t errlen);
void ao_redis_free(struct ao_redis *r);
/* The URL with its password masked, for logs; returns buf. */
char *ao_redis_url_masked(const char *url, char *buf, size_t len);

/* GET prefix+key: 1 and *val (malloc'd) if present, 0 if absent, -1 + err. */
int ao_redis_get(struct ao_redis *r, const char *key, char **val, char *err, size_t errlen);
/* SET prefix+key val: 0 or -1 + err. */
int ao_redis_set(struct ao_redis *r, const char *key, const char *val, char *err, size_t errlen);
/* The same, expiring after ttl_s seconds (none when ttl_s <= 0). */
int ao_redis_set_ex(struct ao_redis *r, const char *key, const char *val, long ttl_s, char *err,
                    size_t errlen);

/* Run a command given as an argument vector (binary safe; lens may be NULL
 * for C strings), reconnecting when the connection died.  Keys are passed
 * as they are: prefix them with ao_redis_key.  Returns the reply (free it
 * with freeReplyObject) or NULL + err; a Redis error reply is returned
 * as NULL + err too. */
struct redisReply *ao_redis_argv(struct ao_redis *r, int argc, const char **argv,
                                 const size_t *lens, char *err, size_t errlen);
/* Several commands in one round trip (a pipeline; not a transaction: each
 * runs on its own).  replies[i] gets command i's reply (free each with
 * freeReplyObject); 0, or -1 + err with every reply freed and NULL, as when
 * one of them is a Redis error.  A dead connection is reconnected and the
 * whole pipeline sent again, as ao_redis_argv does with one command. */
struct ao_redis_cmd {
    int argc;
    const char **argv;
    const size_t *lens; /* NULL: C strings */
};
int ao_redis_pipeline(struct ao_redis *r, int n, const struct ao_redis_cmd *cmds,
                      struct redisReply **replies, char *err, size_t errlen);

/* This process's Redis round trips so far, and the wall time spent in them. */
void ao_redis_totals(long long *n, long long *ns);

/* A connection that only listens: SUBSCRIBE to the n channels (names as
 * given; ao_redis_key makes them).  Its fd turns readable when one is
 * published to.  0, or -1 + err (the connection is then unusable). */
int ao_redis_listen(struct ao_redis *r, int n, const char *const *channels, char *err, size_t errlen);
int ao_redis_fd(const struct ao_redis *r);
/* The messages heard since the last call, read without waiting; -1 when
 * the connection is gone. */
int ao_redis_heard(struct ao_redis *r);
/* The prefix and the key into buf; returns buf, or NULL (buf emptied) when
 * it would not fit: a cut key would be another key. */
#define AO_REDIS_KEY_MAX 800 /* a key's buffer: a prefix and a names.h key */
char *ao_redis_key(const struct ao_redis *r, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
