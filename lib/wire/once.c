/* once.c - each message id acted on once per run (once.h): hash
 * run:<run>:acted, field <stage>:<id> -> <topic>:<partition>:<offset> of
 * the copy taken to act on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "core/util.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/once.h"

/* a run's marks go with it after a month at the latest */
#define ONCE_TTL_S "2592000"

struct once {
    struct ao_redis *r;
    char stage[32];
};

static void place(const struct ao_inmsg *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%d:%lld", m->topic ? m->topic : "?", m->partition, m->offset);
}

/* The message's key and field; 0, or -1 (no run or id: nothing to guard). */
static int where(const struct once *o, const cJSON *j, char *key, size_t klen, char *field, size_t flen)
{
    const char *run = ao_json_str(j, "run", NULL), *id = ao_json_str(j, "id", NULL);

    if (!run || !id || !*run || !*id || !ao_redis_key(o->r, key, klen, AO_KEY_ACTED, run) ||
        ao_name(field, flen, "%s:%s", o->stage, id) < 0)
        return -1;
    return 0;
}

/* HSETNX the place, then read who has it, in one round trip: the first
 * place to ask has it, whichever replica asks (two replicas may hold two
 * copies of one message at once, each from its own partition). */
static int claim(void *ctx, const cJSON *j, const struct ao_inmsg *m, char *reason, size_t len)
{
    struct once *o = ctx;
    char key[AO_REDIS_KEY_MAX], field[AO_MSG_ID_MAX + 40], here[300], err[AO_ERRLEN];
    const char *setnx[4] = {"HSETNX", key, field, here}, *get[3] = {"HGET", key, field},
               *ttl[3] = {"EXPIRE", key, ONCE_TTL_S};
    struct ao_redis_cmd cmds[3] = {{4, setnx, NULL}, {3, get, NULL}, {3, ttl, NULL}};
    redisReply *rep[3];
    int rc = 0;

    if (where(o, j, key, sizeof key, field, sizeof field) < 0)
        return 0;
    place(m, here, sizeof here);
    if (ao_redis_pipeline(o->r, 3, cmds, rep, err, sizeof err) < 0) {
        snprintf(reason, len, "acted-on marks: %s", err);
        return -1;
    }
    if (rep[1]->type == REDIS_REPLY_STRING && strcmp(rep[1]->str, here) != 0) {
        rc = 1;
        snprintf(reason, len, "a replay: message '%.200s' of run '%.128s' was taken to act on already "
                 "(at %.100s); this copy (at %.100s) is not acted on again", ao_json_str(j, "id", "?"),
                 ao_json_str(j, "run", "?"), rep[1]->str, here);
    }
    for (int i = 0; i < 3; i++)
        freeReplyObject(rep[i]);
    return rc;
}

int ao_once_guard(struct ao_io *io, struct ao_redis *r, const char *stage)
{
    struct once *o = calloc(1, sizeof *o);

    if (!o)
        return -1;
    o->r = r;
    snprintf(o->stage, sizeof o->stage, "%s", stage);
    io->once.claim = claim;
    io->once.release = free;
    io->once.ctx = o;
    return 0;
}
