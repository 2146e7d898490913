/* names.h - the names the stages agree on, spelled once: Kafka topics,
 * Redis keys (after the deployment's prefix) and message ids, with the one
 * checked builder every key, id and path goes through (docs/PROTOCOL.md lists the
 * names; a stage that spells one itself can drift from the others). */
#ifndef AO_NAMES_H
#define AO_NAMES_H

#include <stddef.h>

#include "core/util.h"

/* --- topics ---------------------------------------------------------- */
#define AO_TOPIC_TASKS "accelopt.tasks"
#define AO_TOPIC_CANDIDATES "accelopt.candidates"
#define AO_TOPIC_PLANS "accelopt.plans"
#define AO_TOPIC_KERNELS_PREFIX "accelopt.kernels."
#define AO_TOPIC_KERNELS AO_TOPIC_KERNELS_PREFIX "%s" /* one per target: the target's name */
#define AO_TOPIC_RESULTS "accelopt.results"
#define AO_TOPIC_PAIRS "accelopt.pairs"
#define AO_TOPIC_EXPERIENCES "accelopt.experiences"
#define AO_TOPIC_RUNS "accelopt.runs"
#define AO_TOPIC_DLQ "accelopt.dlq"
#define AO_TOPIC_MAX 128 /* a topic name's buffer */

/* Is it a topic whose messages go round-robin over the partitions (their
 * consumers keep no state per run), not by the run's key?  1 or 0. */
int ao_topic_spread(const char *topic);
/* The partition, among count, of the place-th message of a batch on a
 * spread topic: consecutive places, consecutive partitions, from one the
 * key picks, so a batch is shared out evenly.  -1 for no place (place < 0:
 * round robin). */
int ao_spread_partition(const char *key, size_t keylen, long place, int count);

/* --- Redis keys (ao_redis_* add the deployment's prefix) -------------- */
#define AO_KEY_RUN "run:%s"                    /* run id: the run's state */
#define AO_KEY_ITER "run:%s:iter:%lld"         /* an iteration's slots */
#define AO_KEY_ACKS "run:%s:acks:%lld"         /* an iteration's acked pairs */
#define AO_KEY_CMP "run:%s:cmp:%lld"           /* an iteration's comparisons: slot -> result */
#define AO_KEY_PLANNED "run:%s:planned"        /* a run's plans as written: plan id -> text */
#define AO_KEY_WRITTEN "run:%s:written"        /* a run's kernels as written: kernel id -> message */
#define AO_KEY_SOURCES "run:%s:sources"        /* a run's kernels: sha256 -> the iteration that first brought it */
#define AO_KEY_INFLIGHT "run:%s:inflight"      /* a run's model calls in flight: holder|role|lease_ms, scored by the lease's end */
#define AO_KEY_MODEL_ERRORS "run:%s:model_errors" /* role: a run's last failed model call; role:n: how many */
#define AO_KEY_FIXES "%s:fixes"                /* an AO_KEY_ITER: its fix attempts */
#define AO_KEY_ACTIVE "runs:active"            /* the set of runs in flight */
#define AO_KEY_ATTEMPTS "attempts:%s"           /* consumer group: inputs handed out */
#define AO_KEY_BELL "bell:%s"                   /* a channel: a topic (its name on the cluster) was written to */
#define AO_KEY_ACTED "run:%s:acted"            /* run: stage:message id -> where it was acted on */
#define AO_KEY_PAIRDONE "pairdone:%s"          /* pair id: its summary is stored */
#define AO_KEY_PAIRSUM "pairsum:%s:%s:%s"      /* memory key, slow and fast hash: the item of that pair */
#define AO_KEY_PROF "prof:%s:%s"               /* target, kernel hash: a cached verdict */
#define AO_KEY_FIGURE "figure:%s:%s"           /* target, profile key: a kernel's lowest median (a parent's hold) */
#define AO_KEY_MODELS "models:%s"               /* role: the models its stages serve, "own,other" */
#define AO_KEY_GATE "gate:%s"                  /* a model server (its URL's hash): calls in flight */
#define AO_KEY_GATE_PAUSE "gate:%s:pause"      /* and the pause its 429 asked for */
#define AO_KEY_GATE_WAIT "gate:%s:wait"        /* and the urgent callers waiting */
#define AO_KEY_MEMORY_TARGET "memory:target:%s"
#define AO_KEY_MEMORY_TASK "memory:task:%s:%s" /* target, task */
#define AO_KEY_MEMORY_NAME "memory:name:%s"
#define AO_KEY_MAX 640 /* a key's buffer: a run id (128), an id (512) and a little */

/* --- message ids (docs/PROTOCOL.md) ------------------------------------ */
#define AO_ID_TASK "task:%s"                       /* run */
#define AO_ID_CANDIDATE "candidate:%s:%lld:%d"      /* run, iter, rank */
#define AO_ID_PLAN "plan:%s:%lld:%lld:%ld"          /* run, iter, rank, index */
#define AO_ID_KERNEL "kernel:%s:%lld:%s"            /* run, iter, slot */
#define AO_ID_KERNEL_FIX "kernel:%s:%lld:%s/a%lld"  /* run, iter, slot, attempt */
#define AO_ID_KERNEL_FINAL "kernel:%s:final"        /* run: the closing head-to-head */
#define AO_ID_FIX "fix:%s:%lld:%s/a%lld"            /* run, iter, slot, attempt */
#define AO_ID_RESULT "result:%s"                    /* the kernel's id */
#define AO_ID_PAIR "pair:%s:%lld:%d.%d"             /* run, iter, rank, plan */
#define AO_ID_EXPERIENCE "exp:%s"                   /* the pair's id */
#define AO_ID_DONE "done:%s"                        /* run */
#define AO_ID_DLQ "dlq:%s:%.16s"                    /* stage, the message's hash */
#define AO_ID_BUF 600 /* an id's buffer: a message id (AO_MSG_ID_MAX) and a prefix */

/* ao_name, the one checked builder of every key, id and path, is in
 * core/util.h (the lower layers build paths with it too). */

#endif
