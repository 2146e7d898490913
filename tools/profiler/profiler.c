/* profiler.c - accelopt-profiler: kernel messages in, one result each out */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/exitcode.h"
#include "core/log.h"
#include "core/util.h"
#include "profiler/profstage.h"
#include "wire/io.h"
#include "wire/msg.h"
#include "wire/names.h"
#include "wire/stage.h"

static const struct ao_option options[] = {
    AO_PROFILER_OPTIONS,
    AO_STAGE_OPTIONS,
    AO_COMMON_OPTIONS,
};
#define NOPTS ((int)(sizeof options / sizeof options[0]))

/* the kernels of the profiler's --target (lib/wire/stage.c names it) */
static const char *const topics[] = {AO_TOPIC_KERNELS_PREFIX "{target}", NULL};

struct profiler {
    struct ao_profstage *st;
};

/* One kernel message: decode, profile, emit its signed result. */
static int process(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    struct profiler *pr = ctx;
    struct ao_profstage *st = pr->st;
    struct ao_kernel_msg k;
    struct ao_result_msg r;
    cJSON *out = NULL;
    int rc = -1;

    ao_msg_init(&ao_msg_result, &r);
    if (ao_msg_decode(&ao_msg_kernel, msg, &k, reason, len) < 0)
        return -1;
    {
        int64_t t0 = ao_now_ns();
        if (ao_profstage_kernel(st, &k, &r, reason, len) < 0)
            goto out;
        /* what each kernel cost the profiler: the operator's (and the
         * comparisons' cost benchmark's) figure */
        ao_info("%s: %s%s%s (%.2f s)", k.env.id, r.status, r.reason ? ": " : "", r.reason ? r.reason : "",
                (double)(ao_now_ns() - t0) / 1e9);
    }
    out = ao_msg_encode(&ao_msg_result, &r);
    /* signed on the way out, as every stage's messages: the selector takes no other */
    rc = ao_io_emit_json(io, AO_TOPIC_RESULTS, r.env.run, out);
out:
    cJSON_Delete(out);
    ao_msg_release(&ao_msg_kernel, &k);
    ao_msg_release(&ao_msg_result, &r);
    return rc;
}

int main(int argc, char **argv)
{
    struct ao_stage s;
    struct ao_profstage_opts po;
    struct profiler pr;
    char err[AO_ERRLEN];
    int code;

    if (!ao_stage_open(&s, "accelopt-profiler",
                       "accelopt-profiler [options] < kernels.jsonl > results.jsonl", options,
                       NOPTS, topics, argc, argv, &code))
        return ao_stage_close(&s, code);
    if (ao_profstage_opts_from_config(&s.cfg, &po, err, sizeof err) < 0) {
        ao_err("%s", err);
        return ao_stage_close(&s, AO_EXIT_USAGE);
    }
    if (!(pr.st = ao_profstage_new(&po, err, sizeof err))) {
        ao_err("%s", err);
        return ao_stage_close(&s, AO_EXIT_FAIL);
    }
    code = ao_stage_run(&s, process, &pr, "kernels", "results");
    ao_profstage_free(pr.st);
    return code;
}
