/* run.c - accelopt run: the whole loop on one machine.  Starts a private
 * redis-server (AOF on) and the embedded broker unless --redis / --brokers
 * name real ones, starts and supervises the five stages, submits one run per
 * task, shows progress, waits for every `done`, and writes runs/<id>/.
 * accelopt submit: the same runs sent to stages already running; with
 * --wait it too shows progress and writes runs/<id>/. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "agents/builtin.h"
#include "agents/flight.h"
#include "core/alloc.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/rc.h"
#include "core/redis.h"
#include "core/signals.h"
#include "core/task.h"
#include "core/util.h"
#include "front.h"
#include "memfile.h"
#include "localruns.h"
#include "measure/measurement.h"
#include "models.h"
#include "members.h"
#include "procs.h"
#include "profiler/profile.h"
#include "report.h"
#include "memstore.h"
#include "state/memory.h"
#include "state/runstate.h"
#include "state/runstore.h"
#include "targets/target.h"
#include "wire/io.h"
#include "wire/kafka.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/runconfig.h"
#include "wire/sign.h"
#include "wire/stage.h"

#define MAX_TASKS 64
#define RUN_TOPIC_PARTITIONS 12 /* a topic that run --brokers makes, as `accelopt broker` does */
#define MAX_RESTARTS 20

/* What a run is asked to do: `run` and `submit` alike. */
#define RUN_CONFIG_OPTIONS                                                                     \
    {"target", 0, AO_OPT_STR, AO_TARGET_DEFAULT, "NAME", "the target the kernels are for (built in: " AO_TARGET_NAMES ")"},    \
    {"size", 's', AO_OPT_STR, "tiny", "CLASS", "size class: tiny, cpu or paper"},             \
    {"iters", 'i', AO_OPT_INT, "4", "T", "iterations per task"},                                   \
    {"beam", 0, AO_OPT_INT, "2", "B", "kernels kept per iteration"},                             \
    {"plans", 0, AO_OPT_INT, "4", "N", "plans per kept kernel"},                                 \
    {"samples", 'k', AO_OPT_INT, "1", "K", "kernels per plan"},                                    \
    {"topk", 0, AO_OPT_INT, "4", "N", "pairs summarized per iteration at most"},                   \
    {"expn", 0, AO_OPT_INT, "16", "N", "memory items kept"},                                       \
    {"memory-scope", 0, AO_OPT_STR, "target", "SCOPE", "memory: target (shared by tasks), task, run (this run's alone, kept nowhere), or a name"}, \
    {"no-memory", 0, AO_OPT_BOOL, "0", NULL, "no optimization memory (memory scope none): nothing learnt from earlier runs, nothing kept"}, \
    {"memory", 0, AO_OPT_STR, NULL, "FILE", "start warm: import FILE (accelopt memory export's JSON Lines) into the run's memory first"}, \
    {"seed", 0, AO_OPT_INT, "0", "N", "seed of the agents"},                                       \
    {"memory-deadline", 0, AO_OPT_NUM, "600", "SECONDS", "go on without unacked experiences after this"}, \
    {"slot-deadline", 0, AO_OPT_NUM, "1800", "SECONDS", "an iteration's missing results are lost once none came for this long"}, \
    {"fix-attempts", 0, AO_OPT_INT, "2", "F", "send a failed model kernel back to the model this many times (0: never)"}, \
    {"no-compare", 0, AO_OPT_BOOL, "0", NULL, "decide on each child's own measurement, not head to head with its parent (faster; fooled by a busy machine)"}, \
    {"plan-mode", 0, AO_OPT_STR, "distinct", "MODE", "distinct (each plan call told the earlier titles) or independent (the paper's identical calls)"}, \
    {"budget-tokens", 0, AO_OPT_INT, "0", "N", "stop a run after this many model tokens (0: no limit)"}, \
    {"budget-usd", 0, AO_OPT_NUM, "0", "USD", "stop a run after this many dollars (0: no limit)"}, \
    {"wall-time", 0, AO_OPT_NUM, "0", "SECONDS", "stop a run after this long (0: no limit)"},      \
    {"out", 'o', AO_OPT_STR, NULL, "DIR", "where results go (default: runs/<id>)"},            \
    {"json", 0, AO_OPT_BOOL, "0", NULL, "print one done message per task on stdout"},         \
    {"redis-prefix", 0, AO_OPT_STR, "accelopt:", "PREFIX", "prefix of every redis key"},        \
    {"kafka", 'X', AO_OPT_LIST, NULL, "KEY=VALUE", "a librdkafka setting (repeatable)"},          \
    AO_KAFKA_FILE_OPTION,                                                                      \
    AO_TOPIC_PREFIX_OPTION

static const struct ao_option run_opts[] = {
    RUN_CONFIG_OPTIONS,
    RUN_MODEL_OPTIONS,
    {"baseline", 0, AO_OPT_STR, NULL, "FILE",
     "start from this kernel instead of the task's baseline (one task; the run copies the task with it)"},
    {"model-concurrency", 'j', AO_OPT_STR, NULL, "C",
     "model calls in flight to one model server at most, all roles together (default 16)"},
    {"profilers", 0, AO_OPT_INT, "0", "N",
     "profilers side by side, each pinned to a core of its own (0: one per physical core but one, "
     "which is left for everything else; one per GPU for --target cuda)"},
    {"resume", 0, AO_OPT_STR, NULL, "ID",
     "go on with run ID, stopped earlier (its directory: runs/ID, or --out): from its last step"},
    {"redis", 0, AO_OPT_STR, NULL, "URL", "use this redis (default: a private one, AOF on)"},
    {"brokers", 'b', AO_OPT_STR, NULL, "HOST:PORT", "use this Kafka cluster (default: the embedded broker)"},
    AO_COMMON_OPTIONS,
};

static const struct ao_option submit_opts[] = {
    RUN_CONFIG_OPTIONS,
    SUBMIT_MODEL_OPTIONS,
    {"redis", 0, AO_OPT_STR, NULL, "URL", "the stages' redis (required)"},
    {"brokers", 'b', AO_OPT_STR, NULL, "HOST:PORT", "the stages' Kafka cluster (required)"},
    {"wait", 'w', AO_OPT_BOOL, "0", NULL, "wait for every done, show progress, write the results"},
    AO_COMMON_OPTIONS,
};
#define N(a) ((int)(sizeof a / sizeof a[0]))

/* run_opts as run's --help shows them (filled on first use) */
static struct ao_option run_opts_shown[N(run_opts)];


/* The stages a run starts, one row each: the binary is accelopt-<name>
 * (the Makefile builds one per directory under tools/), the topic its
 * replicas share by partition, and whether it calls a model (its calls in
 * flight: --calls).  An agent's role is its name. */
enum stage_id { ST_SELECTOR, ST_PLANNER, ST_EXECUTOR, ST_PROFILER, ST_SUMMARIZER, NSTAGES };
static const struct stage_row {
    const char *name;
    const char *reads; /* a topic, or a prefix (ending in '.') of the per-target ones; NULL: keyed by run */
    int agent;
} stages[NSTAGES] = {
    [ST_SELECTOR] = {"selector", NULL, 0},
    [ST_PLANNER] = {"planner", AO_TOPIC_CANDIDATES, 1},
    [ST_EXECUTOR] = {"executor", AO_TOPIC_PLANS, 1},
    [ST_PROFILER] = {"profiler", AO_TOPIC_KERNELS_PREFIX, 0},
    [ST_SUMMARIZER] = {"summarizer", AO_TOPIC_PAIRS, 1},
};
/* the profilers (one a core or GPU); an agent stage is one process with
 * its calls in flight (agents/flight.h) */
#define MAX_REPLICAS 64
#define MAX_PROCS (4 + MAX_REPLICAS)
#define RUN_DIR_MAX 400 /* --out: what the paths under it leave room for */

struct run {
    struct ao_config c;
    char id[64], dir[600], bindir[PATH_MAX], redis_url[300], brokers[300], props[2048];
    char kafka_file[PATH_MAX]; /* --kafka-file, absolute: the stages read it themselves */
    char redis_pass[64];
    struct ao_broker *broker;
    struct proc redis;
    struct proc stage[MAX_PROCS]; /* every stage process, replicas included */
    int nproc;
    struct members members;       /* what they hold of their groups (members.h) */
    int members_wfd;              /* the stages' end of its pipe, kept for those restarted */
    int replicas[NSTAGES];        /* of each stage: one, but the profilers */
    int calls[NSTAGES];           /* an agent stage's model calls in flight */
    int concurrency;              /* --model-concurrency */
    int prof_cpu[MAX_REPLICAS];   /* each profiler's core (-1: not pinned) */
    int resuming;                 /* --resume: the run's own settings and tasks, from its files */
    char **argv;                  /* then its command line (the config points into it) */
    struct ao_redis *r;
    struct ao_runstore *rs;
    struct ao_io *io;
    struct run_task t[MAX_TASKS];
    int n, ndone;
    int submit; /* accelopt submit: the stages, redis and brokers are already running */
    struct ao_kafka_site site; /* --brokers, --topic-prefix, -X as given */
    int waits;  /* for the done messages, then writes runs/<id>/ (run; submit --wait) */
    time_t started;
    char shown[3][160];           /* the model failures said on the terminal, by role */
    int retry_shown[3];           /* a retried attempt said, by role (the first one only) */
    cJSON *models;                /* submit: the models the run names, by role (NULL: the stages' own) */
    int registered;               /* in the state dir's runs/, for accelopt status */
    int interrupted;              /* a signal stopped the wait */
    int drawn;                    /* lines of progress on the terminal (report_progress) */
};

static void make_id(char *id, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    unsigned char rnd[2] = {0};
    char stamp[32];

    ao_random_bytes(rnd, sizeof rnd);
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(id, len, "%s-%02x%02x", stamp, rnd[0], rnd[1]);
}

/* The memory scope the stages use: none (--no-memory); for "run", a name
 * of this run's alone; else the one given. */
static const char *memory_scope(struct run *R)
{
    static char own[96];
    const char *scope = ao_config_str(&R->c, "memory-scope");

    if (ao_config_bool(&R->c, "no-memory"))
        return "none";
    if (strcmp(scope, "run") != 0)
        return scope;
    snprintf(own, sizeof own, "run-%s", R->id);
    return own;
}

/* Does the run learn from and add to the memory this machine keeps
 * (memstore.c)?  Only `run` on its private Redis, with a shared scope: a
 * shared Redis (--redis, submit) is itself where runs share it. */
static int memory_persists(struct run *R)
{
    return !R->submit && !ao_config_str(&R->c, "redis") && strcmp(memory_scope(R), "none") != 0 &&
           strcmp(ao_config_str(&R->c, "memory-scope"), "run") != 0;
}

/* The tasks named on the command line: names under nkibench/ or paths. */
static int resolve_tasks(struct run *R, char *err, size_t errlen)
{
    for (int i = 0; i < R->c.nargs; i++) {
        const char *a = R->c.args[i];
        struct ao_task task;
        long long dims[AO_MAX_DIMS];

        if (R->n >= MAX_TASKS)
            return snprintf(err, errlen, "at most %d tasks per run", MAX_TASKS), -1;
        /* a path becomes a task root of this run's stages (they inherit it) */
        if (ao_task_from_user(a, &task, err, errlen) < 0 ||
            ao_task_size(&task, ao_config_str(&R->c, "size"), dims, err, errlen) < 0)
            return -1;
        snprintf(R->t[R->n].spec, sizeof R->t[R->n].spec, "%s", task.dir);
        snprintf(R->t[R->n].task, sizeof R->t[R->n].task, "%s", task.name);
        {
            const struct ao_target *tg = ao_target_find(ao_config_str(&R->c, "target"));
            snprintf(R->t[R->n].ext, sizeof R->t[R->n].ext, "%s", tg ? tg->ext : "c");
        }
        if (ao_name(R->t[R->n].run, sizeof R->t[R->n].run, "%s-%s", R->id, task.name) < 0)
            return ao_errf(err, errlen, "task name '%s' is too long for a run id", task.name);
        /* a task's results go to a folder of its name: a second would take it */
        for (int j = 0; j < R->n; j++)
            if (strcmp(R->t[j].task, task.name) == 0)
                return ao_errf(err, errlen, "the task '%s' is named twice ('%s' and '%s'): a run's results go "
                               "to a folder per task name", task.name, R->c.args[j], a);
        R->n++;
    }
    return 0;
}

static int role_builtin(const char *role);

/* --baseline FILE builds, and passes its target's checks of what was
 * built: found out now, with a compile in the sandbox, not after the
 * whole stack starts; the compiler's words name the user's file, not the
 * job's kernel.c.  0, or -1 + err. */
static int baseline_builds(struct run *R, const struct ao_task *t, const char *file, char *err, size_t errlen)
{
    struct ao_profiler_opts po = AO_PROFILER_DEFAULTS;
    struct ao_profiler *p;
    struct ao_measurement m;
    struct ao_buf words = {0};
    char job[64], *src;
    const char *d;
    int rc;

    if (!(po.target = ao_target_get(ao_config_str(&R->c, "target"), err, errlen)) ||
        !(src = ao_read_file(file, NULL, err, errlen)))
        return -1;
    if (!(p = ao_profiler_new(&po, err, errlen))) {
        free(src);
        return -1;
    }
    ao_measurement_init(&m);
    rc = ao_profiler_build(p, t, src, &m, err, errlen);
    if (rc == 0 && m.verdict != AO_V_OK) {
        snprintf(job, sizeof job, "kernel.%s", R->t[0].ext);
        for (d = m.diagnostics ? m.diagnostics : ""; *d;) { /* kernel.c:4:5: -> FILE:4:5: */
            const char *at = strstr(d, job);
            size_t n = at ? (size_t)(at - d) : strlen(d);
            ao_buf_append(&words, d, n);
            if (!at)
                break;
            ao_buf_printf(&words, "%s", file);
            d = at + strlen(job);
        }
        if (words.data)
            ao_terminal_safe(words.data); /* the compiler quotes the kernel: it may hold escapes */
        rc = ao_errf(err, errlen, "%s: the baseline does not pass: %s (%s)%s%.1500s", file,
                     ao_verdict_name(m.verdict), m.reason ? m.reason : "no reason given",
                     words.len ? ":\n" : "", words.data ? words.data : "");
    }
    ao_buf_release(&words);
    ao_measurement_release(&m);
    ao_profiler_free(p);
    free(src);
    return rc;
}

/* --baseline FILE: the user's kernel is where the run starts.  The task is
 * copied into the run's directory (task/<name>/: its files, FILE as its
 * baseline) and the run is of that copy, so that the stages, the final
 * head-to-head and --resume all read the same baseline. */
static int own_baseline(struct run *R, const char *file, char *err, size_t errlen)
{
    char dir[RUN_DIR_MAX + 200], path[RUN_DIR_MAX + 400], from[1200], *src;
    struct ao_task task;
    struct dirent *e;
    DIR *d;
    size_t n;

    if (!(src = ao_source_read(file, err, errlen)))
        return AO_RC_SETTING; /* the user's file to mend: a usage error */
    n = strlen(src);
    if (ao_name(dir, sizeof dir, "%s/task/%s", R->dir, R->t[0].task) < 0 || ao_mkdirs(dir, 0700) < 0) {
        free(src);
        return ao_errf(err, errlen, "cannot make '%s/task'", R->dir);
    }
    if (!(d = opendir(R->t[0].spec))) {
        free(src);
        return ao_errf(err, errlen, "cannot read the task directory '%s'", R->t[0].spec);
    }
    while ((e = readdir(d))) { /* the task's own files: task.json, the reference, ... */
        struct stat st;
        if (e->d_name[0] == '.' || ao_name(from, sizeof from, "%s/%s", R->t[0].spec, e->d_name) < 0 ||
            stat(from, &st) != 0 || !S_ISREG(st.st_mode) ||
            ao_name(path, sizeof path, "%s/%s", dir, e->d_name) < 0)
            continue;
        if (ao_copy_file(from, path, err, errlen) < 0) {
            free(src);
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    if (ao_name(path, sizeof path, "%s/baseline.%s", dir, R->t[0].ext) < 0 ||
        ao_write_file(path, src, n, err, errlen) < 0) {
        free(src);
        return -1;
    }
    free(src);
    if (ao_task_from_user(dir, &task, err, errlen) < 0) /* a task root of this run's stages now */
        return -1;
    snprintf(R->t[0].spec, sizeof R->t[0].spec, "%s", task.dir);
    if (baseline_builds(R, &task, file, err, errlen) < 0) {
        /* refused before it started: nothing of it is left (the --out
         * directory too, when this run made it and it holds nothing else) */
        char top[RUN_DIR_MAX + 8];
        ao_rmtree(dir);
        if (ao_name(top, sizeof top, "%s/task", R->dir) == 0)
            rmdir(top);
        rmdir(R->dir);
        return -1;
    }
    ao_info("%s: the run starts from %s (the task copied to %s with it as its baseline)", R->t[0].task, file, dir);
    return 0;
}

/* The builtin planner moves the knobs a baseline declares: where there are
 * none, each of its plans fails; said once, at the start. */
static void warn_knobless(const struct run *R)
{
    struct ao_knob k[1];

    if (!role_builtin("planner"))
        return;
    for (int i = 0; i < R->n; i++) {
        char path[700], e[AO_ERRLEN];
        char *src;
        if (ao_name(path, sizeof path, "%s/baseline.%s", R->t[i].spec, R->t[i].ext) < 0 ||
            !(src = ao_read_file(path, NULL, e, sizeof e)))
            continue; /* the selector says so when it sends the baseline */
        if (ao_knobs_parse(src, k, 1) == 0)
            ao_warn("%s: the baseline declares no knob the builtin model can move (a `#define NAME "
                    "value  /* knob: v1 v2 ... */` line), so its plans will all fail: give it knobs, "
                    "or use a model (--llm-url, --llm-model; docs/MODELS.md)", R->t[i].task);
        free(src);
    }
}

/* One try at the private redis on a port picked free: 0 up, -1 an error,
 * 1 it exited at start (the port may have been taken since it was picked). */
static int start_redis_once(struct run *R, char *err, size_t errlen)
{
    char dir[700];
    int port = free_port();
    struct proc *p = &R->redis;

    if (!port || ao_name(dir, sizeof dir, "%s/redis", R->dir) < 0 || ao_mkdirs(dir, 0700) < 0 ||
        ao_name(p->log, sizeof p->log, "%s/logs/redis.log", R->dir) < 0)
        return ao_errf(err, errlen, "cannot prepare the private redis in '%s/redis'", R->dir);
    proc_release(p);
    snprintf(p->name, sizeof p->name, "redis");
    /* the settings, with a random password, go in a file only we can read:
     * nothing secret in argv, which every local user can list; and a redis
     * of someone else's that holds the port refuses our password */
    {
        unsigned char rnd[24];
        char conf[800], text[1400];
        if (ao_random_bytes(rnd, sizeof rnd) < 0)
            return snprintf(err, errlen, "getrandom failed"), -1;
        for (size_t i = 0; i < sizeof rnd; i++)
            snprintf(R->redis_pass + 2 * i, 3, "%02x", rnd[i]);
        if (ao_name(conf, sizeof conf, "%s/redis.conf", dir) < 0 ||
            ao_name(text, sizeof text,
                    "port %d\nbind 127.0.0.1\nprotected-mode yes\nrequirepass %s\n"
                    "appendonly yes\nappendfsync always\ndir %s\nsave \"\"\ndaemonize no\nhz 1\n",
                    port, R->redis_pass, dir) < 0)
            return ao_errf(err, errlen, "the run's directory '%s' is too long", R->dir);
        unlink(conf);
        {
            int fd = open(conf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
                if (fd >= 0)
                    close(fd);
                return ao_errf(err, errlen, "cannot write '%s'", conf);
            }
            close(fd);
        }
        if (proc_arg(p, "redis-server") || proc_arg(p, "%s", conf))
            return ao_errf(err, errlen, "redis's command line would not fit");
    }
    if (proc_start(p, err, errlen) < 0)
        return -1;
    snprintf(R->redis_url, sizeof R->redis_url, "redis://:%s@127.0.0.1:%d", R->redis_pass, port);
    for (double until = mono_s() + 10; mono_s() < until;) {
        int st;
        struct timespec ts = {0, 50000000L};
        if (proc_reap(p, &st))
            return ao_errf(err, errlen, "redis-server exited at start (see %s; is it installed? "
                           "apt install redis-server, or name one with --redis)", p->log), 1;
        if ((R->r = ao_redis_new(R->redis_url, ao_config_str(&R->c, "redis-prefix"), err, errlen)))
            return 0;
        nanosleep(&ts, NULL);
    }
    return ao_errf(err, errlen, "redis-server did not answer within 10 s (see %s)", p->log);
}

static int start_redis(struct run *R, char *err, size_t errlen)
{
    int rc = 1;
    for (int try = 0; try < 3 && rc == 1; try++)
        rc = start_redis_once(R, err, errlen);
    return rc == 0 ? 0 : -1;
}

static int stage_args(struct run *R, struct proc *p, int i, int replica)
{
    const char *lv = ao_config_str(&R->c, "log");

    snprintf(p->name, sizeof p->name, "%s", stages[i].name);
    /* the replicas of a stage share its log: each line is one write */
    if (ao_name(p->log, sizeof p->log, "%s/logs/%s.log", R->dir, stages[i].name) < 0)
        return -1;
    /* the redis URL and the -X settings may hold secrets: they go by the
     * environment (ACCELOPT_REDIS, ACCELOPT_KAFKA; see setup), never argv,
     * which every user of the machine can read */
    if (proc_arg(p, "%s/accelopt-%s", R->bindir, stages[i].name) || proc_arg(p, "--brokers") ||
        proc_arg(p, "%s", R->brokers) ||
        proc_arg(p, "--redis-prefix") || proc_arg(p, "%s", ao_config_str(&R->c, "redis-prefix")) ||
        (lv && (proc_arg(p, "--log") || proc_arg(p, "%s", lv))) ||
        (R->site.prefix && (proc_arg(p, "--topic-prefix") || proc_arg(p, "%s", R->site.prefix))) ||
        /* a path: the credentials in it stay in the file */
        (R->site.file && (proc_arg(p, "--kafka-file") || proc_arg(p, "%s", R->site.file))) ||
        /* on a real cluster each replica is a static member: restarted
         * after a crash it takes back its partitions at once, where a new
         * member waits out the dead one's session (45 s).  The id is the
         * replica's, not the run's: the next run on the cluster takes
         * back the last one's partitions too (a static member does not
         * leave its group at exit).  Two runs at once on one cluster want
         * a --topic-prefix each, as their groups do. */
        (!R->broker && (proc_arg(p, "--instance") || proc_arg(p, "%s-%d", stages[i].name, replica))) ||
        (i == ST_PROFILER &&
         (proc_arg(p, "--target") || proc_arg(p, "%s", ao_config_str(&R->c, "target")) ||
          (R->prof_cpu[replica] >= 0 && (proc_arg(p, "--cpu") || proc_arg(p, "%d", R->prof_cpu[replica]))))) ||
        (R->calls[i] > 0 && (proc_arg(p, "--calls") || proc_arg(p, "%d", R->calls[i]))) ||
        (R->resuming && i == ST_SELECTOR && proc_arg(p, "--resend")))
        return -1;
    return 0;
}

/* Does the role's stage answer with the builtin model?  The stages read
 * their model from the environment they inherit (ACCELOPT_<ROLE>_MODEL,
 * ACCELOPT_LLM_MODEL, and the same for _URL), as lib/agents/llm.c does. */
static int role_builtin(const char *role)
{
    char var[64];
    const char *model, *url;

    snprintf(var, sizeof var, "ACCELOPT_%s_MODEL", role);
    for (char *p = var; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    model = getenv(var) ? getenv(var) : getenv("ACCELOPT_LLM_MODEL");
    snprintf(var, sizeof var, "ACCELOPT_%s_URL", role);
    for (char *p = var; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    url = getenv(var) ? getenv(var) : getenv("ACCELOPT_LLM_URL");
    return (model && strcmp(model, "builtin") == 0) || (!model && !url);
}

/* The stages doze when idle (ao_io_kafka_bell) where a model server
 * answers some role: its calls take seconds, against which the 0.4-0.9 s
 * a dozing stage takes to wake is small.  On the builtin model a run's
 * hops follow each other at once, and its stages keep fetching. */
static int doorbell(void)
{
    return !role_builtin("planner") || !role_builtin("executor") || !role_builtin("summarizer");
}

/* --profilers, or by default: one per physical core but the first (left
 * for the other stages and the machine: two timings that share a core
 * disturb each other; docs/BENCHMARKS.md, two profilers on one machine),
 * each pinned to its core's first logical CPU; for cuda, one per GPU
 * (/dev/nvidiaN).  One profiler is not pinned, as before. */
static int profilers(struct run *R)
{
    long n = ao_config_int(&R->c, "profilers");
    int cpus[MAX_REPLICAS], ncores = 0, gpus = 0;
    char seen[4096] = "";

    for (int i = 0; i < MAX_REPLICAS; i++)
        R->prof_cpu[i] = -1;
    for (int cpu = 0; cpu < 4096 && ncores < MAX_REPLICAS; cpu++) {
        char path[120], *pkg, *core, key[64], e[AO_ERRLEN];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
        if (!(pkg = ao_read_file(path, NULL, e, sizeof e)))
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
        core = ao_read_file(path, NULL, e, sizeof e);
        snprintf(key, sizeof key, "|%d.%d|", atoi(pkg), core ? atoi(core) : cpu);
        free(pkg);
        free(core);
        if (!strstr(seen, key) && strlen(seen) + strlen(key) < sizeof seen) { /* a core not seen yet */
            strcat(seen, key);
            cpus[ncores++] = cpu;
        }
    }
    for (int g = 0; g < MAX_REPLICAS; g++) {
        char dev[32];
        snprintf(dev, sizeof dev, "/dev/nvidia%d", g);
        if (access(dev, F_OK) != 0)
            break;
        gpus++;
    }
    if (n <= 0)
        n = strcmp(ao_config_str(&R->c, "target"), "cuda") == 0 ? (gpus > 0 ? gpus : 1)
            : ncores > 1 ? ncores - 1 : 1;
    if (n > MAX_REPLICAS)
        n = MAX_REPLICAS;
    if (n > 1 && n > ncores - 1)
        ao_warn("%ld profilers on %d cores: they share cores, and their timings disturb each other "
                "(one per core but one is what keeps them apart)", n, ncores);
    /* pinned when side by side: to the cores after the first, in turn */
    for (int r = 0; n > 1 && ncores > 1 && r < n; r++)
        R->prof_cpu[r] = cpus[1 + r % (ncores - 1)];
    return (int)n;
}

/* --model-concurrency C: at most C model calls in flight to one model
 * server, all roles together (the stages count them in redis: agents/gate.h).
 * Each agent role is one process that keeps as many messages in hand as
 * can have a call in flight, C at most, and no more than its work can use:
 * a candidate each for the planner (beam x tasks), a plan each for the
 * executor (beam x plans x tasks), a pair each for the summarizer (topk x
 * tasks).  A role on the builtin model answers at once: one in hand.
 * 0, or -1 + err. */
static int plan_replicas(struct run *R, char *err, size_t errlen)
{
    const char *spec = ao_config_str(&R->c, "model-concurrency");
    long long n = R->n, c = 16;
    long long plans = ao_config_int(&R->c, "beam") * ao_config_int(&R->c, "plans") * n;
    long long use[NSTAGES] = {[ST_PLANNER] = ao_config_int(&R->c, "beam") * n, [ST_EXECUTOR] = plans,
                              [ST_SUMMARIZER] = ao_config_int(&R->c, "topk") * n};
    char *end;

    if (spec && ((c = strtoll(spec, &end, 10)) < 1 || c > AO_FLIGHT_CALLS_MAX || *end || end == spec))
        return ao_errf(err, errlen, "--model-concurrency: '%s' is not 1 to %d calls", spec, AO_FLIGHT_CALLS_MAX);
    R->concurrency = (int)c;
    R->nproc = 0;
    for (int i = 0; i < NSTAGES; i++) {
        /* the executor: twice C in hand, so that the plans left at an
         * iteration's end each wait for a free call in its hands (the
         * gate), where a later plan could not overtake them */
        long long want = !stages[i].agent || role_builtin(stages[i].name) ? 1 : i == ST_EXECUTOR ? 2 * c : c;
        if (want > AO_FLIGHT_CALLS_MAX)
            want = AO_FLIGHT_CALLS_MAX;
        R->replicas[i] = i == ST_PROFILER ? profilers(R) : 1;
        R->calls[i] = !stages[i].agent ? 0 : (int)(want < use[i] ? want : use[i] > 0 ? use[i] : 1);
        R->nproc += R->replicas[i];
    }
    return 0;
}

/* The partitions of a topic on the embedded broker: one per replica of
 * the stage that reads it (each replica owns one: work in equal shares),
 * four for the topics a run's messages are keyed on. */
static int topic_parts(const char *topic, void *ctx)
{
    const struct run *R = ctx;

    for (int i = 0; i < NSTAGES; i++) {
        const char *r = stages[i].reads;
        size_t n = r ? strlen(r) : 0;
        if (r && (r[n - 1] == '.' ? strncmp(topic, r, n) == 0 : strcmp(topic, r) == 0))
            return R->replicas[i];
    }
    return 4;
}

/* Restart stages that died; -1 when one cannot be kept running. */
static int supervise(struct run *R, char *err, size_t errlen)
{
    for (int i = 0; i < R->nproc; i++) {
        struct proc *p = &R->stage[i];
        int st;

        if (p->pid > 0 && proc_reap(p, &st)) {
            if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
                return snprintf(err, errlen, "%s refused its settings (see %s)", p->name, p->log), -1;
            if (++p->restarts > MAX_RESTARTS)
                return snprintf(err, errlen, "%s died %d times (see %s)", p->name, p->restarts, p->log), -1;
            ao_warn("%s %s %d; restarting it (see %s)", p->name,
                    WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), p->log);
            p->next_start = mono_s() + 1;
        }
        if (p->pid == 0 && mono_s() >= p->next_start && proc_start(p, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* Wait until every stage has joined its consumer group (each says so on
 * the pipe at its first assignment) before the first task goes out: a
 * stage that joined late would move partitions away from replicas busy
 * with model calls, and a group member busy past the rebalance's deadline
 * (the embedded broker's is the session timeout) is dropped and its work
 * redone.  A stage that refuses its settings is reported here, before any
 * task.  0 (going on after JOIN_WAIT_S with a warning), or -1 + err. */
#define JOIN_WAIT_S 60
static int wait_joined(struct run *R, char *err, size_t errlen)
{
    double start = mono_s(), until = start + JOIN_WAIT_S;
    int joined = 0;

    while (joined < R->nproc && mono_s() < until && !ao_stop_requested()) {
        struct pollfd pf = {R->members.fd, POLLIN, 0};
        if (poll(&pf, 1, 100) > 0)
            members_read(&R->members);
        joined = members_joined(&R->members, R->stage, R->nproc);
        if (supervise(R, err, errlen) < 0)
            return -1;
    }
    if (joined < R->nproc && !ao_stop_requested())
        ao_warn("%d of %d stages had not joined their groups after %d s; going on (the brokers are slow?)",
                R->nproc - joined, R->nproc, JOIN_WAIT_S);
    else
        ao_debug("%d stages joined their groups in %.1f s", joined, mono_s() - start);
    return 0;
}

static int submit(struct run *R, char *err, size_t errlen)
{
    for (int i = 0; i < R->n; i++) {
        struct ao_task_msg t;
        struct ao_run_config cfg;
        char id[AO_ID_BUF];
        cJSON *j;
        int rc;

        ao_msg_init(&ao_msg_task, &t);
        /* the run's config, one record (wire/runconfig.h): budgets only when set */
        ao_msg_init(&ao_rec_run_config, &cfg);
        cfg.beam = ao_config_int(&R->c, "beam");
        cfg.plans = ao_config_int(&R->c, "plans");
        cfg.samples = ao_config_int(&R->c, "samples");
        cfg.iters = ao_config_int(&R->c, "iters");
        cfg.topk = ao_config_int(&R->c, "topk");
        cfg.expn = ao_config_int(&R->c, "expn");
        cfg.seed = ao_config_int(&R->c, "seed");
        cfg.fix_attempts = ao_config_int(&R->c, "fix-attempts");
        cfg.compare = !ao_config_bool(&R->c, "no-compare");
        cfg.memory_deadline_s = ao_config_num(&R->c, "memory-deadline");
        cfg.slot_deadline_s = ao_config_num(&R->c, "slot-deadline");
        cfg.memory_scope = ao_strdup(memory_scope(R));
        cfg.plan_mode = strcmp(ao_config_str(&R->c, "plan-mode"), "independent") == 0 ? AO_PLAN_INDEPENDENT
                                                                                     : AO_PLAN_DISTINCT;
        if (ao_config_int(&R->c, "budget-tokens") > 0)
            cfg.budget_tokens = ao_config_int(&R->c, "budget-tokens");
        if (ao_config_num(&R->c, "budget-usd") > 0)
            cfg.budget_usd = ao_config_num(&R->c, "budget-usd");
        if (ao_config_num(&R->c, "wall-time") > 0)
            cfg.wall_s = ao_config_num(&R->c, "wall-time");
        cfg.models = R->models ? cJSON_Duplicate(R->models, 1) : NULL;
        t.config = cfg.memory_scope && (cfg.models || !R->models) ? ao_run_config_json(&cfg) : NULL;
        ao_run_config_release(&cfg);
        if (ao_name(id, sizeof id, AO_ID_TASK, R->t[i].run) < 0 || !t.config) { /* a run id fits */
            ao_msg_release(&ao_msg_task, &t);
            return ao_errf(err, errlen, "task %s: no task message (its id, or its settings)", R->t[i].task);
        }
        ao_env_set(&t.env, "task", id, R->t[i].run, R->t[i].task, ao_config_str(&R->c, "target"), 0);
        t.spec = ao_strdup(R->t[i].spec);
        t.size = ao_strdup(ao_config_str(&R->c, "size"));
        j = ao_msg_encode(&ao_msg_task, &t);
        rc = j ? ao_io_emit_json(R->io, AO_TOPIC_TASKS, R->t[i].run, j) : -1;
        cJSON_Delete(j);
        ao_msg_release(&ao_msg_task, &t);
        if (rc < 0)
            return ao_errf(err, errlen, "cannot submit: %s", R->io->err);
    }
    {
        struct ao_inmsg none = {0};
        if (ao_io_commit(R->io, &none) < 0)
            return ao_errf(err, errlen, "cannot submit: %s", R->io->err);
    }
    return 0;
}

/* The memory keys of the run's tasks, each once, or 0 when the run has no
 * memory. */
static int memory_keys(struct run *R, char keys[][300], char *err, size_t errlen)
{
    const char *scope = memory_scope(R);
    int n = 0;

    for (int i = 0; i < R->n; i++) {
        int has = ao_memory_key(scope, ao_config_str(&R->c, "target"), R->t[i].task, keys[n], 300,
                                err, errlen);
        if (has < 0)
            return -1;
        for (int j = 0; has && j < n; j++) /* tasks sharing a memory: its key once */
            has = strcmp(keys[j], keys[n]) != 0;
        n += has;
    }
    return n;
}

/* --memory FILE: the run starts with the items of FILE in its memory. */
static int import_memory(struct run *R, char *err, size_t errlen)
{
    char (*keys)[300] = ao_calloc((size_t)R->n + 1, sizeof *keys);
    int n = memory_keys(R, keys, err, errlen), rc = 0;

    if (n == 0)
        ao_warn("--memory: the run has no memory (--no-memory or scope none); not imported");
    for (int i = 0; i < n && rc == 0; i++) {
        long long pushed;
        int count;
        if ((rc = memory_import(R->r, keys[i], ao_config_str(&R->c, "memory"), NULL, &pushed, &count,
                                err, errlen)) == 0)
            ao_info("run %s: %lld of %d memory item%s imported into %s", R->id, pushed, count,
                    count == 1 ? "" : "s", keys[i]);
    }
    free(keys);
    return n < 0 ? -1 : rc;
}

/* dir/memory.jsonl: the run's memory as it stands at the end, in the form
 * `accelopt memory import` and `accelopt run --memory` take. */
static int export_memory(struct run *R, char *err, size_t errlen)
{
    char (*keys)[300] = ao_calloc((size_t)R->n + 1, sizeof *keys), path[700];
    const char **k = ao_calloc((size_t)R->n + 1, sizeof *k);
    int n = memory_keys(R, keys, err, errlen), count = 0, rc = -1;

    if (n >= 0) {
        for (int i = 0; i < n; i++)
            k[i] = keys[i];
        rc = ao_name(path, sizeof path, "%s/memory.jsonl", R->dir) < 0
                 ? ao_errf(err, errlen, "the run's directory '%s' is too long", R->dir)
                 : memory_export(R->r, k, n, path, &count, err, errlen);
    }
    free(keys);
    free(k);
    return rc;
}

/* The machine's memory (memstore.c) into the run's, for each of its keys;
 * or the run's back into the machine's (save).  A failure is said
 * and the run goes on: its own results stand without the memory. */
static void machine_memory(struct run *R, int save)
{
    char (*keys)[300] = ao_calloc((size_t)R->n + 1, sizeof *keys), err[AO_ERRLEN];
    int n = memory_keys(R, keys, err, sizeof err);

    for (int i = 0; i < n; i++) {
        int count = 0;
        if ((save ? memstore_save(R->r, keys[i], ao_config_int(&R->c, "expn"), &count, err, sizeof err)
                  : memstore_load(R->r, keys[i], &count, err, sizeof err)) < 0)
            ao_warn("the machine's memory %s: %s", save ? "not kept" : "not read", err);
        else if (save)
            ao_info("run %s: the machine's memory (%s) now holds %d item%s", R->id, keys[i], count,
                    count == 1 ? "" : "s");
        else
            ao_info("run %s: %d memory item%s from earlier runs on this machine (%s)", R->id, count,
                    count == 1 ? "" : "s", keys[i]);
    }
    if (n < 0)
        ao_warn("the machine's memory: %s", err);
    free(keys);
}

/* What --resume needs, written before the stages start: dir/run.conf, the
 * run's settings as a config file (the ones given, not the defaults; not
 * where the results go, nor the redis, brokers and -X settings, which may
 * hold secrets and are given again), and dir/tasks, a task a line. */
static const char *const not_kept[] = {"resume", "out", "redis", "brokers", "topic-prefix", "kafka", "kafka-file", "memory", "config",
                                       "help", "version", "json", "log", NULL};

static int write_resume_files(struct run *R, char *err, size_t errlen)
{
    struct ao_buf conf = {0}, tasks = {0};
    char path[700];
    int rc;

    ao_buf_printf(&conf, "# accelopt run %s: its settings, for accelopt run --resume %s\n", R->id, R->id);
    for (int i = 0; i < R->c.nopts; i++) {
        const char *name = R->c.opts[i].name;
        int skip = !R->c.values[i] || !strcmp(R->c.source[i], "default") || run_model_secret(name);
        for (int k = 0; !skip && not_kept[k]; k++)
            skip = !strcmp(name, not_kept[k]);
        if (!skip)
            ao_buf_printf(&conf, "%s = %s\n", name, R->c.values[i]);
    }
    for (int i = 0; i < R->n; i++) {
        if (strchr(R->t[i].spec, '\n')) { /* a line each: it would come back as two tasks */
            ao_buf_release(&conf);
            ao_buf_release(&tasks);
            return ao_errf(err, errlen, "task path '%s' holds a newline: it cannot be kept for --resume",
                           R->t[i].spec);
        }
        ao_buf_printf(&tasks, "%s\n", R->t[i].spec);
    }
    if (ao_name(path, sizeof path, "%s/run.conf", R->dir) < 0)
        rc = ao_errf(err, errlen, "the run's directory '%s' is too long", R->dir);
    else if ((rc = ao_write_file(path, conf.data ? conf.data : "", conf.len, err, errlen)) == 0)
        rc = ao_name(path, sizeof path, "%s/tasks", R->dir) < 0
                 ? ao_errf(err, errlen, "the run's directory '%s' is too long", R->dir)
                 : ao_write_file(path, tasks.data ? tasks.data : "", tasks.len, err, errlen);
    ao_buf_release(&conf);
    ao_buf_release(&tasks);
    return rc;
}

/* --resume ID: the command line again, from the run's files: the flags
 * given now (but --resume), then --config dir/run.conf (flags win over
 * it), --out dir and the tasks.  A NULL-terminated argv (each string and
 * the array malloc'd), or NULL + err. */
static char **resume_argv(int argc, char **argv, const char *id, const char *out, int *nargv, char *err,
                          size_t errlen)
{
    char dir[RUN_DIR_MAX], path[RUN_DIR_MAX + 20], conf[RUN_DIR_MAX + 20], *tasks, *save = NULL;
    char **v = NULL;
    int n = 0, cap = argc + 8;

    if (!ao_run_id_valid(id))
        return ao_errf(err, errlen, "--resume: '%s' is not a run id", id), NULL;
    if ((out ? ao_name(dir, sizeof dir, "%s", out) : ao_name(dir, sizeof dir, "runs/%s", id)) < 0 ||
        ao_name(path, sizeof path, "%s/tasks", dir) < 0 || ao_name(conf, sizeof conf, "%s/run.conf", dir) < 0)
        return ao_errf(err, errlen, "--resume: the run's directory is too long"), NULL;
    if (!(tasks = ao_read_file(path, NULL, err, errlen))) {
        char e2[AO_ERRLEN];
        snprintf(e2, sizeof e2, "%s", err);
        return ao_errf(err, errlen, "--resume %s: no run to go on with in '%s' (%s)", id, dir, e2), NULL;
    }
    for (const char *p = tasks; *p; p++)
        cap += *p == '\n';
    v = ao_calloc((size_t)cap + 1, sizeof *v);
    v[n++] = ao_strdup(argv[0]);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--resume")) {
            i++;
            continue;
        }
        if (!strncmp(argv[i], "--resume=", 9))
            continue;
        v[n++] = ao_strdup(argv[i]);
    }
    v[n++] = ao_strdup("--config");
    v[n++] = ao_strdup(conf);
    v[n++] = ao_strdup("--out");
    v[n++] = ao_strdup(dir);
    for (char *t = strtok_r(tasks, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
        v[n++] = ao_strdup(t);
    free(tasks);
    *nargv = n;
    return v;
}

/* The done messages of the runs that had finished before --resume: each is
 * in its run's last phase messages, in our own run store. */
static void resumed_dones(struct run *R)
{
    for (int i = 0; i < R->n; i++) {
        struct ao_run_state st;
        char err[AO_ERRLEN];
        int have;
        if (!R->t[i].done && (R->t[i].done = report_done_of(R->rs, R->t[i].run)))
            R->ndone++;
        have = ao_run_state_load(R->rs, R->t[i].run, &st, err, sizeof err) > 0;
        if (R->t[i].done)
            ao_info("run %s: had finished (%s)", R->t[i].run, ao_json_str(R->t[i].done, "stopped", "?"));
        else if (have && st.history) /* said where it goes on from, before the stages take it */
            ao_info("run %s: resuming after iteration %lld (%lld kernels measured)", R->t[i].run, st.completed,
                    st.kernels);
        else
            ao_info("run %s: resuming from its start (nothing measured yet)", R->t[i].run);
        ao_run_state_release(&st);
    }
}

/* dir/run.json: what the run was (the report's header) */
static int write_run_json(struct run *R, char *err, size_t errlen)
{
    static const char *const ints[] = {"iters", "beam", "plans", "samples", "topk", "expn",
                                       "fix-attempts", "seed"};
    cJSON *j = cJSON_CreateObject(), *c, *tasks;
    char path[700], when[32], *text;
    time_t now = time(NULL);
    int rc;

    cJSON_AddStringToObject(j, "id", R->id);
    cJSON_AddStringToObject(j, "target", ao_config_str(&R->c, "target"));
    cJSON_AddStringToObject(j, "size", ao_config_str(&R->c, "size"));
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&R->started));
    cJSON_AddStringToObject(j, "started_at", when);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON_AddStringToObject(j, "finished_at", when);
    tasks = cJSON_AddArrayToObject(j, "tasks");
    for (int i = 0; tasks && i < R->n; i++) {
        /* what each task came to: the done's figures, as summary.txt shows
         * them (one measurement: the final head-to-head where there was one) */
        static const char *const quoted[] = {"stopped", "speedup", "speedup_low", "speedup_high",
                                             "speedup_method", "baseline_latency_ns", "best_latency_ns",
                                             "baseline_pct_of_peak", "pct_of_peak", "search_speedup"};
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "task", R->t[i].task);
        cJSON_AddStringToObject(t, "run", R->t[i].run);
        for (size_t q = 0; R->t[i].done && q < sizeof quoted / sizeof quoted[0]; q++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(R->t[i].done, quoted[q]);
            if (v)
                cJSON_AddItemToObject(t, quoted[q], cJSON_Duplicate(v, 1));
        }
        cJSON_AddItemToArray(tasks, t);
    }
    if ((c = cJSON_AddObjectToObject(j, "config"))) {
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
            char name[32];
            snprintf(name, sizeof name, "%s", ints[i]);
            for (char *p = name; *p; p++)
                *p = *p == '-' ? '_' : *p;
            cJSON_AddNumberToObject(c, name, (double)ao_config_int(&R->c, ints[i]));
        }
        cJSON_AddStringToObject(c, "memory_scope", memory_scope(R));
        cJSON_AddStringToObject(c, "plan_mode", ao_config_str(&R->c, "plan-mode"));
        if (R->models) /* submit's: the names the run carried */
            cJSON_AddItemToObject(c, "models", cJSON_Duplicate(R->models, 1));
    }
    text = cJSON_Print(j);
    rc = ao_name(path, sizeof path, "%s/run.json", R->dir) < 0
             ? ao_errf(err, errlen, "the run's directory '%s' is too long", R->dir)
             : ao_write_file(path, text, strlen(text), err, errlen);
    cJSON_free(text);
    cJSON_Delete(j);
    return rc;
}

/* Which runs have ended: the selector marks each in the run's own hash,
 * "ended" once its done is stored, "refused" (the reason) where it would
 * not start it (selector/start.c).  Read from our Redis, not from the
 * broker: a consumer of the done messages and dead letters was the
 * largest part of a waiting run's CPU (docs/BENCHMARKS.md, issue 67), and
 * a dead letter, anyone's replay of a task could bring (issue 68).  Every
 * run in one round trip; the number that ended now. */
static int poll_ended(struct run *R)
{
    static const char *const fields[] = {"ended", "refused"};
    static char key[MAX_TASKS][AO_REDIS_KEY_MAX];
    const char *argv[MAX_TASKS][4];
    struct ao_redis_cmd cmd[MAX_TASKS];
    struct redisReply *rep[MAX_TASKS];
    int at[MAX_TASKS], n = 0, ended = 0;
    char e[AO_ERRLEN];

    for (int i = 0; i < R->n; i++)
        if (!R->t[i].done && !R->t[i].refused &&
            ao_redis_key(R->r, key[n], sizeof key[n], AO_KEY_RUN, R->t[i].run)) {
            argv[n][0] = "HMGET", argv[n][1] = key[n];
            memcpy(&argv[n][2], fields, sizeof fields);
            cmd[n] = (struct ao_redis_cmd){4, argv[n], NULL};
            at[n++] = i;
        }
    if (n == 0 || ao_redis_pipeline(R->r, n, cmd, rep, e, sizeof e) < 0)
        return 0; /* asked again in a moment */
    for (int k = 0; k < n; k++) {
        struct run_task *t = &R->t[at[k]];
        const struct redisReply *x = rep[k];
        if (x->type == REDIS_REPLY_ARRAY && x->elements == 2 && x->element[0]->str &&
            (t->done = report_done_of(R->rs, t->run))) {
            ended++;
        } else if (x->type == REDIS_REPLY_ARRAY && x->elements == 2 && x->element[1]->str) {
            ao_err("%s: the selector refused the run: %.400s", t->task, x->element[1]->str);
            t->refused = 1;
            ended++;
        }
        freeReplyObject(rep[k]);
    }
    R->ndone += ended;
    return ended;
}

static int setup(struct run *R, char *err, size_t errlen)
{
    char logs[700], self[PATH_MAX];
    const char *x = ao_config_str(&R->c, "kafka");
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

    if (n <= 0)
        return snprintf(err, errlen, "cannot find where accelopt is installed"), -1;
    self[n] = '\0';
    snprintf(R->bindir, sizeof R->bindir, "%s", dirname(self));
    if (ao_name(logs, sizeof logs, "%s/logs", R->dir) < 0 || ao_mkdirs(logs, 0700) < 0 ||
        chmod(R->dir, 0700) < 0 || chmod(logs, 0700) < 0)
        return ao_errf(err, errlen, "cannot make '%s/logs'", R->dir);
    if (!R->submit && write_resume_files(R, err, errlen) < 0)
        return -1;
    if (ao_config_str(&R->c, "brokers")) {
        if (ao_name(R->brokers, sizeof R->brokers, "%s", ao_config_str(&R->c, "brokers")) < 0)
            return ao_errf(err, errlen, "--brokers is over %zu bytes", sizeof R->brokers - 1);
    } else {
        if (!(R->broker = ao_broker_new_sized(ao_topics(), topic_parts, R, R->brokers, sizeof R->brokers, err, errlen)))
            return -1;
        /* a restarted stage rejoins its group quickly on the embedded
         * broker (the dead member's session ends in 6 s, the others hear
         * of the rebalance within 2 s: at 0.5 s the heartbeats were a
         * quarter of an idle run's CPU, docs/BENCHMARKS.md, issue 67) */
        snprintf(R->props, sizeof R->props, "session.timeout.ms=6000\nheartbeat.interval.ms=2000\n");
    }
    if (x && ao_name(R->props + strlen(R->props), sizeof R->props - strlen(R->props), "%s", x) < 0)
        return ao_errf(err, errlen, "the -X settings are over %zu bytes", sizeof R->props - 100);
    if (ao_config_str(&R->c, "redis")) {
        if (ao_name(R->redis_url, sizeof R->redis_url, "%s", ao_config_str(&R->c, "redis")) < 0)
            return ao_errf(err, errlen, "--redis is over %zu bytes", sizeof R->redis_url - 1);
        if (!(R->r = ao_redis_new(R->redis_url, ao_config_str(&R->c, "redis-prefix"), err, errlen)))
            return -1;
    } else if (start_redis(R, err, errlen) < 0) {
        return -1;
    }
    R->rs = ao_runstore_redis(R->r);
    {
        /* a producer only: the run learns what ended from Redis (poll_ended) */
        struct ao_kafka_site site = R->site;
        site.brokers = R->brokers; /* the embedded broker's too */
        site.props = R->props;
        if (!(R->io = ao_io_kafka_new("run", &site, NULL, NULL, err, errlen)) ||
            ao_io_set_key(R->io, 1, err, errlen) < 0) /* tasks signed */
            return -1;
        /* on the embedded broker: ring the stages' doorbells */
        if (ao_io_kafka_bell(R->io, R->redis_url, ao_config_str(&R->c, "redis-prefix"), R->r, 0, err,
                             errlen) < 0)
            ao_warn("no doorbell (%s): the stages fetch all the time", err);
    }
    if (R->submit)
        return 0;
    char cc[24], rfd[24];
    if (members_open(&R->members, &R->members_wfd) < 0)
        return ao_errf(err, errlen, "cannot make a pipe");
    snprintf(cc, sizeof cc, "%d", R->concurrency);
    snprintf(rfd, sizeof rfd, "%d", R->members_wfd);
    if (setenv("ACCELOPT_READY_FD", rfd, 1) < 0 ||
        setenv("ACCELOPT_REDIS", R->redis_url, 1) < 0 || setenv("ACCELOPT_MODEL_CONCURRENCY", cc, 1) < 0 ||
        (doorbell() ? setenv("ACCELOPT_DOORBELL", "1", 1) : unsetenv("ACCELOPT_DOORBELL")) < 0 ||
        (R->props[0] ? setenv("ACCELOPT_KAFKA", R->props, 1) : unsetenv("ACCELOPT_KAFKA")) < 0)
        return ao_errf(err, errlen, "cannot set the stages' environment: %s", strerror(errno));
    for (int i = 0, k = 0; i < NSTAGES; i++)
        for (int r = 0; r < R->replicas[i]; r++)
            if (stage_args(R, &R->stage[k++], i, r) < 0)
                return ao_errf(err, errlen, "the %s's command line would not fit (its log's path, '%.80s/logs/')",
                               stages[i].name, R->dir);
    {
        char masked[300];
        ao_info("run %s: redis %s, brokers %s, logs in %s; model calls in flight at most: %d planning, "
                "%d writing kernels, %d summarizing; %d profiler%s", R->id,
                ao_redis_url_masked(R->redis_url, masked, sizeof masked), R->brokers, logs, R->calls[ST_PLANNER],
                R->calls[ST_EXECUTOR], R->calls[ST_SUMMARIZER], R->replicas[ST_PROFILER],
                R->replicas[ST_PROFILER] == 1 ? "" : "s");
    }
    /* the pipe stays: a stage restarted later says what it holds too */
    return supervise(R, err, errlen) < 0 ? -1 : wait_joined(R, err, errlen);
}

static void teardown(struct run *R)
{
    proc_stop_all(R->stage, R->nproc, 30); /* a profiler finishes the kernel in hand */
    ao_io_free(R->io);
    R->io = NULL;
    members_close(&R->members);
    if (R->members_wfd >= 0)
        close(R->members_wfd);
    R->members_wfd = -1;
}

/* Say role r's failure if its kind (the reason up to its first number:
 * attempts, a status) is not the one said last.  1 when said. */
static int say_model_error(struct run *R, int r, const char *why, const char *count)
{
    static const char *const roles[] = {"planner", "executor", "summarizer"};
    char kind[160];

    snprintf(kind, sizeof kind, "%.*s", (int)strcspn(why, "0123456789"), why);
    if (strcmp(R->shown[r], kind) == 0)
        return 0;
    snprintf(R->shown[r], sizeof R->shown[r], "%s", kind);
    ao_warn("the %s's model calls fail: %.300s (%s so far; said once: every call is in %s/logs/%s.log)",
            roles[r], why, count ? count : "?", R->dir, roles[r]);
    return 1;
}

/* A model server failing mid-run (down, refusing, out of quota): the
 * stages keep each run's last failed call by role (agents/agent.c); it is
 * said here once per role and kind of failure, not once per call.  Asked
 * every second, so every run in one round trip (one HMGET of the three
 * roles each: 42 round trips a second were a tenth of an idle run's CPU). */
/* The first attempt of a role that failed and is tried again: said as it
 * happens (a model that hangs shows in --llm-stall, not after every
 * attempt), once per role; what comes after is in the role's log. */
static int say_model_retry(struct run *R, int r, const char *task, const char *what)
{
    static const char *const roles[] = {"planner", "executor", "summarizer"};

    if (R->retry_shown[r]++)
        return 0;
    ao_warn("%s: a %s model call: %.400s (said once: every attempt is in %s/logs/%s.log)", task, roles[r],
            what, R->dir, roles[r]);
    return 1;
}

static int show_model_errors(struct run *R)
{
    static const char *const fields[] = {"planner", "planner:n", "planner:retry", "executor", "executor:n",
                                         "executor:retry", "summarizer", "summarizer:n", "summarizer:retry"};
    static char key[MAX_TASKS][AO_REDIS_KEY_MAX];
    const char *argv[MAX_TASKS][11];
    int task[MAX_TASKS];
    struct ao_redis_cmd cmd[MAX_TASKS];
    struct redisReply *rep[MAX_TASKS];
    char e[AO_ERRLEN];
    int said = 0, n = 0;

    for (int i = 0; R->r && i < R->n; i++)
        if (ao_redis_key(R->r, key[n], sizeof key[n], AO_KEY_MODEL_ERRORS, R->t[i].run)) {
            argv[n][0] = "HMGET", argv[n][1] = key[n];
            memcpy(&argv[n][2], fields, sizeof fields);
            cmd[n] = (struct ao_redis_cmd){11, argv[n], NULL};
            task[n++] = i;
        }
    if (n == 0 || ao_redis_pipeline(R->r, n, cmd, rep, e, sizeof e) < 0)
        return 0;
    for (int i = 0; i < n; i++) {
        for (int r = 0; r < 3 && rep[i]->type == REDIS_REPLY_ARRAY && rep[i]->elements == 9; r++) {
            struct redisReply **f = rep[i]->element + 3 * r;
            if (f[0]->str)
                said |= say_model_error(R, r, f[0]->str, f[1]->str);
            else if (f[2]->str) /* a failure said already says more */
                said |= say_model_retry(R, r, R->t[task[i]].task, f[2]->str);
        }
        freeReplyObject(rep[i]);
    }
    return said;
}

/* --resume: what the stages acted on went with the broker that is gone
 * (a new embedded one starts): the run's tasks and its selector's
 * messages come again, to be acted on, not refused as replays
 * (wire/once.h).  0, or -1 + err. */
static int forget_acted(struct run *R, char *err, size_t errlen)
{
    for (int i = 0; i < R->n; i++) {
        char key[AO_REDIS_KEY_MAX];
        const char *argv[2] = {"DEL", key};
        struct redisReply *rep;
        if (!ao_redis_key(R->r, key, sizeof key, AO_KEY_ACTED, R->t[i].run))
            return ao_errf(err, errlen, "run id '%.40s...' is too long for a key", R->t[i].run);
        if (!(rep = ao_redis_argv(R->r, 2, argv, NULL, err, errlen)))
            return -1;
        freeReplyObject(rep);
    }
    return 0;
}

/* run_or_submit's steps, in curl's tool's manner: each one returns 0 to
 * go on, or -1 with the exit status in *code and what to say in err
 * (empty: said already, as ao_tool_setup's usage, or nothing to say). */

/* The command line alone: its options, and how they go together (2). */
static int run_options(struct run *R, int argc, char **argv, int *code, char *err, size_t errlen)
{
    int submitting = R->submit;

    if (!run_opts_shown[0].name) { /* a key is refused on run's command line: not listed there either */
        memcpy(run_opts_shown, run_opts, sizeof run_opts);
        for (int i = 0; i < N(run_opts); i++)
            if (run_model_secret(run_opts_shown[i].name))
                run_opts_shown[i].help = NULL;
    }
    if (ao_tool_setup("accelopt", &R->c, submitting ? submit_opts : run_opts_shown,
                      submitting ? N(submit_opts) : N(run_opts), argc, argv,
                      submitting ? "accelopt submit --brokers B --redis URL [options] TASK..."
                                 : "accelopt run [options] TASK...",
                      code) < 0)
        return -1;
    *code = AO_EXIT_USAGE;
    if (!submitting && ao_config_str(&R->c, "resume")) {
        int n2;
        if (R->c.nargs || ao_config_str(&R->c, "config"))
            return ao_errf(err, errlen, "--resume takes no tasks and no --config: the run's own are used");
        snprintf(R->id, sizeof R->id, "%s", ao_config_str(&R->c, "resume"));
        if (!(R->argv = resume_argv(argc, argv, R->id, ao_config_str(&R->c, "out"), &n2, err, errlen)))
            return -1;
        ao_config_release(&R->c);
        if (ao_tool_setup("accelopt", &R->c, run_opts, N(run_opts), n2, R->argv, "accelopt run --resume ID",
                          code) < 0)
            return -1;
        *code = AO_EXIT_USAGE;
        R->resuming = 1;
    } else {
        make_id(R->id, sizeof R->id);
    }
    R->started = time(NULL);
    if (R->c.nargs < 1)
        return ao_errf(err, errlen, "run needs at least one task (e.g. accelopt run matmul silu)");
    if (ao_config_int(&R->c, "iters") < 0 || ao_config_int(&R->c, "beam") < 1 ||
        ao_config_int(&R->c, "plans") < 1 || ao_config_int(&R->c, "samples") < 1)
        return ao_errf(err, errlen, "--iters must be at least 0; --beam, --plans and --samples at least 1");
    if (strcmp(ao_config_str(&R->c, "plan-mode"), "distinct") != 0 &&
        strcmp(ao_config_str(&R->c, "plan-mode"), "independent") != 0)
        return ao_errf(err, errlen, "--plan-mode is distinct or independent, not '%s'",
                       ao_config_str(&R->c, "plan-mode"));
    R->waits = !R->submit || ao_config_bool(&R->c, "wait");
    if (R->submit && (!ao_config_str(&R->c, "brokers") || !ao_config_str(&R->c, "redis")))
        return ao_errf(err, errlen,
                       "submit wants the stages' --brokers and --redis (or ACCELOPT_BROKERS, ACCELOPT_REDIS)");
    if (ao_config_str(&R->c, "topic-prefix") && !ao_config_str(&R->c, "brokers"))
        return ao_errf(err, errlen, "--topic-prefix names the run's share of a cluster: it goes with --brokers "
                                    "(the embedded broker is the run's alone)");
    if (ao_config_str(&R->c, "kafka-file") && !ao_config_str(&R->c, "brokers"))
        return ao_errf(err, errlen, "--kafka-file holds a cluster's settings: it goes with --brokers (the "
                                    "embedded broker takes none)");
    return 0;
}

/* What the options name: the target and its device, the models, the
 * tasks, the run's directory. */
static int run_resolve(struct run *R, int *code, char *err, size_t errlen)
{
    const struct ao_target *tg;
    char why[AO_ERRLEN];

    if (!(tg = ao_target_get(ao_config_str(&R->c, "target"), why, sizeof why)))
        return ao_errf(err, errlen, "--target: %s", why);
    /* a run's profilers are this machine's: without the target's device
     * (no GPU, no NeuronCore) nothing could be measured, so say so now, in
     * the words accelopt profile uses, not in a restarting profiler's log */
    if (!R->submit && tg->available(err, errlen) < 0) {
        *code = AO_EXIT_FAIL;
        return -1;
    }
    /* before the replicas are counted: a role's model may come from a flag */
    if (!R->submit && run_model_settings(&R->c, err, errlen) < 0)
        return -1;
    if (R->submit && !(R->models = submit_models(&R->c, err, errlen)) && err[0])
        return -1;
    if (resolve_tasks(R, err, errlen) < 0 || (!R->submit && plan_replicas(R, err, errlen) < 0))
        return -1;
    if (ao_config_str(&R->c, "out") ? ao_name(R->dir, RUN_DIR_MAX, "%s", ao_config_str(&R->c, "out"))
                                    : ao_name(R->dir, RUN_DIR_MAX, "runs/%s", R->id))
        return ao_errf(err, errlen, "--out: a directory of at most %d bytes, please", RUN_DIR_MAX - 1);
    if (!R->submit && ao_config_str(&R->c, "baseline") && R->n != 1)
        return ao_errf(err, errlen, "--baseline is the kernel of one task: give one task with it");
    return 0;
}

/* What is outside the run, asked before anything starts: the model
 * server, the brokers and their topics, the deployment's key; then the
 * --baseline kernel, the first thing written. */
static int run_preflight(struct run *R, int *code, char *err, size_t errlen)
{
    struct ao_sign_key key;
    int rc;

    *code = AO_EXIT_FAIL;
    /* a model server that is not there, refuses the key or lacks the
     * model: said now, not in a stage log later (a refused key or a model
     * it lacks is the settings' fault: 2) */
    if (!R->submit && (rc = run_model_probe(&R->c, err, errlen)) < 0) {
        *code = ao_exit_for(rc);
        return -1;
    }
    /* and brokers that do not answer: one line, in bounded time */
    R->site = ao_kafka_site_of(&R->c);
    if (R->site.file && realpath(R->site.file, R->kafka_file))
        R->site.file = R->kafka_file;
    if (R->site.brokers && ao_kafka_reachable(&R->site, 10, err, errlen) < 0)
        return -1;
    if (R->site.brokers && !R->submit) { /* the topics, as `accelopt broker --brokers` makes them: a
                                          * cluster without them left every stage waiting on its group */
        int made = 0;
        if (ao_kafka_make_topics(&R->site, ao_topics(), RUN_TOPIC_PARTITIONS, -1, &made, err, errlen) < 0)
            return -1;
        if (made)
            ao_info("made %d accelopt topics on %s (%d partitions each, the cluster's replication)", made,
                    R->site.brokers, RUN_TOPIC_PARTITIONS);
    }
    /* the deployment's key, from a state directory of ours alone: an
     * unsafe one is a setting (2), said before anything starts (issue 56) */
    rc = ao_sign_key_load(&key, err, errlen);
    memset(&key, 0, sizeof key);
    if (rc < 0) {
        *code = ao_exit_for(rc);
        return -1;
    }
    /* the first thing written: nothing is left behind by a run refused above */
    if (!R->submit && ao_config_str(&R->c, "baseline") && !R->resuming &&
        (rc = own_baseline(R, ao_config_str(&R->c, "baseline"), err, errlen)) < 0) {
        *code = ao_exit_for(rc);
        return -1;
    }
    if (!R->submit)
        warn_knobless(R);
    return 0;
}

/* Start what the run owns (redis, a broker, the stages), register it for
 * accelopt status, and send its tasks.  -1 with *code on a failure, or
 * with AO_EXIT_OK when there is nothing to wait for (submit alone). */
static int run_start(struct run *R, int *code, char *err, size_t errlen)
{
    *code = AO_EXIT_FAIL;
    if (setup(R, err, errlen) < 0)
        return -1;
    /* for accelopt status, which cannot know the private redis: from the
     * moment there is one */
    if (!R->submit) {
        const char *runs[MAX_TASKS];
        char why[AO_ERRLEN];
        for (int i = 0; i < R->n; i++)
            runs[i] = R->t[i].run;
        if (localrun_add(R->id, R->dir, R->redis_url, ao_config_str(&R->c, "redis-prefix"), runs, R->n, why,
                         sizeof why) < 0)
            ao_warn("accelopt status will not find this run: %s", why); /* the run goes on */
        else
            R->registered = 1;
    }
    /* a model the stages do not serve: said before the run is sent */
    if (R->models && submit_models_served(R->r, R->models, err, errlen) < 0) {
        char logs[sizeof R->dir + 8];
        *code = AO_EXIT_USAGE;
        R->waits = 0; /* nothing was sent: nothing to wait for or report */
        if (ao_name(logs, sizeof logs, "%s/logs", R->dir) == 0)
            rmdir(logs); /* setup's, still empty: nothing left of a refused run */
        rmdir(R->dir);
        return -1;
    }
    if (!R->resuming && memory_persists(R))
        machine_memory(R, 0);
    if ((!R->resuming && ao_config_str(&R->c, "memory") && import_memory(R, err, errlen) < 0) ||
        (R->resuming && (resumed_dones(R), forget_acted(R, err, errlen)) < 0) || submit(R, err, errlen) < 0)
        return -1;
    ao_info("run %s: %d task%s %s at size %s", R->id, R->n, R->n == 1 ? "" : "s",
            R->resuming ? "resumed" : "submitted", ao_config_str(&R->c, "size"));
    /* every task delivered: the run sends nothing more, and an idle
     * producer's clock wakes it every second (issue 67) */
    ao_io_free(R->io);
    R->io = NULL;
    if (!R->waits) { /* the run ids, for status and scripts */
        for (int i = 0; i < R->n; i++)
            printf("%s\n", R->t[i].run);
        *code = AO_EXIT_OK;
        err[0] = '\0';
        return -1;
    }
    return 0;
}

/* Until every task is done, or a signal: the stages looked after, the
 * model failures and the progress drawn once a second.  The exit status. */
static int run_wait(struct run *R)
{
    FILE *tty = isatty(2) ? stderr : NULL;
    char err[AO_ERRLEN];
    double last_draw = 0;
    int code;

    while (R->ndone < R->n) {
        if (ao_stop_requested()) {
            R->interrupted = 1;
            break;
        }
        poll(NULL, 0, 250); /* a signal cuts it short */
        poll_ended(R);
        /* (the stages looked after in the last round too: a death just
         * before the end is said, as it was when it came) */
        if (!R->submit && supervise(R, err, sizeof err) < 0)
            return ao_err("%s", err), AO_EXIT_FAIL;
        /* the run's own broker: its groups are its stages' alone */
        if (R->broker && (members_read(&R->members), members_short(&R->members, R->stage, R->nproc, mono_s(),
                                                                    err, sizeof err)))
            return ao_err("%s", err), AO_EXIT_FAIL;
        if (mono_s() - last_draw >= 1) {
            if (show_model_errors(R))
                R->drawn = 0; /* the progress is drawn again below the warning */
            if (tty)
                report_progress(tty, R->rs, R->t, R->n, &R->drawn);
            last_draw = mono_s();
        }
    }
    code = R->interrupted ? AO_EXIT_SIGNAL : AO_EXIT_OK;
    for (int i = 0; i < R->n && !R->interrupted; i++)
        if (R->t[i].refused)
            code = AO_EXIT_FAIL; /* said when its refusal was read */
    show_model_errors(R); /* a failure of the last second */
    return code;
}

/* The exit status the results give a run that ended well so far: a
 * baseline that failed, nothing that worked, or no gain (3). */
static int run_verdict(struct run *R, const struct report_outcome *o, int code)
{
    for (int i = 0; i < R->n; i++) { /* a baseline that fails: said in full, and a failure */
        const char *why = ao_json_str(R->t[i].done, "reason", NULL);
        char *safe;
        if (strcmp(ao_json_str(R->t[i].done, "stopped", ""), "baseline_failed") != 0)
            continue;
        if ((safe = ao_strdup(why ? why : "no reason given"))) {
            ao_terminal_safe(safe); /* the compiler quotes the kernel: it may hold escapes */
            ao_err("%s: %s", R->t[i].task, safe);
            free(safe);
        }
        if (code == AO_EXIT_OK)
            code = AO_EXIT_FAIL;
    }
    if (code != AO_EXIT_OK)
        return code;
    if (o->all_failed) {
        ao_err("not one kernel the model wrote worked (the summary says why, task by task)");
        return AO_EXIT_FAIL;
    }
    if (o->ended == R->n && o->gained == 0 && o->searched > 0) {
        /* exit 0 means a gain measured head to head: a figure the search
         * took of each kernel alone is not one (issue 69) */
        ao_warn("not compared: %d task%s ended above %s baseline by the search's own figure only, the run "
                "stopping before its final head-to-head (--wall-time, a budget); `search` in the table, "
                "exit status %d", o->searched, o->searched == 1 ? "" : "s", o->searched == 1 ? "its" : "their",
                AO_EXIT_NO_GAIN);
        return AO_EXIT_NO_GAIN;
    }
    if (o->ended == R->n && o->gained == 0) { /* every task ended, each one's result its baseline */
        ao_warn("no gain found: %s, so best.* is the baseline (exit status %d)",
                o->none_written ? "no kernel was written (every candidate was a duplicate plan, or the "
                                  "search had no move left)"
                : R->n == 1     ? "no kernel beat the baseline beyond the noise"
                                : "in no task did a kernel beat its baseline beyond the noise",
                AO_EXIT_NO_GAIN);
        return AO_EXIT_NO_GAIN;
    }
    return code;
}

/* Stop what the run started, and write what it waited for: the results,
 * the memory it exports, run.json, report.html.  The exit status. */
static int run_finish(struct run *R, int code)
{
    struct report_outcome o = {0};
    char err[AO_ERRLEN];

    if (R->registered)
        localrun_remove(R->id);
    if (R->interrupted)
        ao_info(R->submit ? "stopped waiting; the runs go on (accelopt status shows them)"
                          : "stopping: the stages finish what they hold, then the partial results are written");
    teardown(R);
    if (!R->rs || !R->waits)
        return code;
    if (isatty(2))
        report_progress(stderr, R->rs, R->t, R->n, &R->drawn);
    if (report_write(R->dir, R->rs, R->t, R->n, ao_config_bool(&R->c, "json") ? NULL : stdout, &o, err,
                     sizeof err) < 0 ||
        export_memory(R, err, sizeof err) < 0 || write_run_json(R, err, sizeof err) < 0) {
        ao_err("%s", err);
        code = AO_EXIT_FAIL;
    } else {
        char page[700];
        if (memory_persists(R))
            machine_memory(R, 1);
        ao_info("results in %s/", R->dir);
        if (R->interrupted && !R->submit) /* the way on */
            ao_info("to go on: accelopt run --resume %s%s%s", R->id, ao_config_str(&R->c, "out") ? " --out " : "",
                    ao_config_str(&R->c, "out") ? ao_config_str(&R->c, "out") : "");
        if (ao_name(page, sizeof page, "%s/report.html", R->dir) < 0 || report_html(R->dir, page, err, sizeof err) < 0)
            ao_warn("no report.html: %s", err); /* the results stand without it */
        else if (ao_config_bool(&R->c, "json"))
            ao_info("report: %s", page);
        else
            printf("report: %s\n", page);
    }
    return run_verdict(R, &o, code);
}

static void run_free(struct run *R)
{
    ao_runstore_free(R->rs);
    ao_redis_free(R->r);
    proc_stop(&R->redis, 10);
    ao_broker_free(R->broker);
    for (int i = 0; i < MAX_PROCS; i++)
        proc_release(&R->stage[i]);
    proc_release(&R->redis);
    for (int i = 0; i < R->n; i++)
        cJSON_Delete(R->t[i].done);
    cJSON_Delete(R->models);
    ao_config_release(&R->c);
    for (int i = 0; R->argv && R->argv[i]; i++)
        free(R->argv[i]);
    free(R->argv);
    free(R);
}

/* accelopt run, or with submit set accelopt submit: check, start, wait,
 * finish (code) */
static int run_or_submit(int argc, char **argv, int submitting)
{
    struct run *R = ao_calloc(1, sizeof *R);
    char err[AO_ERRLEN] = "";
    int code;

    R->submit = submitting;
    R->members.fd = R->members_wfd = -1;
    if (run_options(R, argc, argv, &code, err, sizeof err) == 0 && run_resolve(R, &code, err, sizeof err) == 0 &&
        run_preflight(R, &code, err, sizeof err) == 0) {
        ao_signals_install();
        if (run_start(R, &code, err, sizeof err) == 0)
            code = run_wait(R);
        else if (err[0])
            ao_err("%s", err);
        code = run_finish(R, code);
        if (ao_config_bool(&R->c, "json"))
            for (int i = 0; i < R->n; i++)
                if (R->t[i].done) {
                    char *s = cJSON_PrintUnformatted(R->t[i].done);
                    if (s)
                        printf("%s\n", s);
                    cJSON_free(s);
                }
    } else if (err[0]) {
        ao_err("%s", err);
    }
    run_free(R);
    return code;
}

int cmd_run(int argc, char **argv)
{
    return run_or_submit(argc, argv, 0);
}

int cmd_submit(int argc, char **argv)
{
    return run_or_submit(argc, argv, 1);
}
