/* once.c - each message id acted on once per run (once.h): hash
 * run:<run>:acted, field <stage>:<id> -> <topic>:<partition>:<offset> of
 * the copy taken to act on; and only for a run this Redis holds as
 * active (runs:active, the selector's: issue 68). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "core/alloc.h"
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
 * copies of one message at once, each from its own partition).  In the
 * same round trip: is the run active here?  A signed message of a run
 * this Redis does not hold as in flight (one that is over, a stopped
 * run's leftovers, another deployment's on the same cluster) is not acted
 * on: no model call for a run nobody waits on.  A task message starts
 * its run, so it is not asked. */
static int claim(void *ctx, const cJSON *j, const struct ao_inmsg *m, char *reason, size_t len)
{
    struct once *o = ctx;
    char key[AO_REDIS_KEY_MAX], field[AO_MSG_ID_MAX + 40], here[300], err[AO_ERRLEN], active[AO_REDIS_KEY_MAX];
    const char *run = ao_json_str(j, "run", "");
    const char *setnx[4] = {"HSETNX", key, field, here}, *get[3] = {"HGET", key, field},
               *ttl[3] = {"EXPIRE", key, ONCE_TTL_S}, *member[3] = {"SISMEMBER", active, run};
    struct ao_redis_cmd cmds[4] = {{4, setnx, NULL}, {3, get, NULL}, {3, ttl, NULL}, {3, member, NULL}};
    int ask = strcmp(ao_json_str(j, "type", ""), "task") != 0, n = ask ? 4 : 3, rc = 0;
    redisReply *rep[4];

    if (where(o, j, key, sizeof key, field, sizeof field) < 0)
        return 0;
    if (ask && !ao_redis_key(o->r, active, sizeof active, AO_KEY_ACTIVE))
        return snprintf(reason, len, "the redis prefix is too long for '%s'", AO_KEY_ACTIVE), -1;
    place(m, here, sizeof here);
    if (ao_redis_pipeline(o->r, n, cmds, rep, err, sizeof err) < 0) {
        snprintf(reason, len, "acted-on marks: %s", err);
        return -1;
    }
    if (ask && rep[3]->type == REDIS_REPLY_INTEGER && rep[3]->integer == 0) {
        const char *del[3] = {"HDEL", key, field};
        redisReply *x;
        rc = 1;
        /* the mark just set goes: a run started later acts on it (best effort) */
        if (rep[1]->type == REDIS_REPLY_STRING && strcmp(rep[1]->str, here) == 0 &&
            (x = ao_redis_argv(o->r, 3, del, NULL, err, sizeof err)))
            freeReplyObject(x);
        snprintf(reason, len, "run '%.128s' is not in flight here (not in %s: over, stopped, or another "
                 "deployment's); its message '%.200s' is not acted on", run, AO_KEY_ACTIVE,
                 ao_json_str(j, "id", "?"));
    } else if (rep[1]->type == REDIS_REPLY_STRING && strcmp(rep[1]->str, here) != 0) {
        rc = 1;
        snprintf(reason, len, "a replay: message '%.200s' of run '%.128s' was taken to act on already "
                 "(at %.100s); this copy (at %.100s) is not acted on again", ao_json_str(j, "id", "?"),
                 run, rep[1]->str, here);
    }
    for (int i = 0; i < n; i++)
        freeReplyObject(rep[i]);
    return rc;
}

void ao_once_guard(struct ao_io *io, struct ao_redis *r, const char *stage)
{
    struct once *o = ao_calloc(1, sizeof *o);

    o->r = r;
    snprintf(o->stage, sizeof o->stage, "%s", stage);
    io->once.claim = claim;
    io->once.release = free;
    io->once.ctx = o;
}
