/* test_model.c - the builtin model behind the agents' interface (model.h):
 * what a stage gets from it is what the builtin functions give */
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "agents/builtin.h"
#include "agents/model.h"
#include "check.h"

static const char *src = "#define BLOCK 16 /* knob: 8 16 32 */\n#define UNROLL 1 /* knob: 1 2 4 */\n"
                         "void kernel(const float *x, float *out, int n)\n"
                         "{\n    for (int i = 0; i < n; i += BLOCK * UNROLL)\n        out[i] = x[i];\n}\n";

int main(void)
{
    const struct ao_model_ops *m = &ao_model_builtin;
    struct ao_agent a;
    struct ao_candidate_msg c;
    struct ao_plan_msg p, p2;
    struct ao_kernel_msg k;
    struct ao_pair_msg pair;
    struct ao_summary s;
    struct ao_llm_usage u = {0};
    struct ao_move moves[8];
    cJSON *memory = cJSON_CreateArray(), *move = NULL;
    char reason[256], *why = NULL, *want;
    int n;

    memset(&a, 0, sizeof a);
    ao_msg_init(&ao_msg_candidate, &c);
    ao_env_set(&c.env, "candidate", "candidate:r:1:0", "r", "silu", "cpu", 1);
    c.source = strdup(src);
    CHECK(!m->needs_problem && !strcmp(m->kind, "builtin") && ao_model_llm.needs_problem,
          "the builtin model needs no task text; the model client's prompts do");

    n = ao_builtin_plan(src, "silu", memory, 7, NULL, 0, moves, 8);
    want = ao_builtin_plan_text(src, &moves[1], "silu", memory);
    ao_msg_init(&ao_msg_plan, &p);
    {
        struct ao_plan_ask q = {&c, memory, "", "", NULL, 7, 0, 1, 8, NULL, 0};
        CHECK(m->plan(&a, &q, &p, &u, reason, sizeof reason) == 0 && p.text && !strcmp(p.text, want),
              "plan 1 of 8 is the builtin's second move, as its own functions give it");
        q.index = n;
        ao_msg_init(&ao_msg_plan, &p2);
        CHECK(m->plan(&a, &q, &p2, &u, reason, sizeof reason) == 0 && !p2.text && p2.error &&
                  strstr(p2.error, "no more knob moves"),
              "past the last move: an error, not a plan (%d moves)", n);
        ao_msg_release(&ao_msg_plan, &p2);
        {
            /* every move taken from this kernel before: the first plan of
             * a later iteration says the search is out of moves, not that
             * the kernel has no knobs (issue 66) */
            char *texts[8];
            const char *tried[8];
            for (int i = 0; i < n; i++)
                tried[i] = texts[i] = ao_builtin_plan_text(src, &moves[i], "silu", memory);
            q.index = 0, q.tried = tried, q.ntried = n;
            ao_msg_init(&ao_msg_plan, &p2);
            CHECK(m->plan(&a, &q, &p2, &u, reason, sizeof reason) == 0 && !p2.text && p2.error &&
                      strstr(p2.error, "no more knob moves"),
                  "every move taken before: out of moves, not out of knobs (%s)", p2.error ? p2.error : "a plan");
            ao_msg_release(&ao_msg_plan, &p2);
            for (int i = 0; i < n; i++)
                free(texts[i]);
        }
    }
    free(want);

    p.source = strdup(src);
    ao_msg_init(&ao_msg_kernel, &k);
    CHECK(m->kernel(&a, &p, NULL, 0, &k, &u, reason, sizeof reason) == 0 && k.source && !k.error &&
              strcmp(k.source, src) != 0,
          "a kernel carries out the plan's move");
    ao_msg_release(&ao_msg_kernel, &k);
    ao_msg_init(&ao_msg_kernel, &k);
    CHECK(m->fix(&a, &p, NULL, &k, &u, reason, sizeof reason) == 0 && !k.source && k.error &&
              strstr(k.error, "does not fix"),
          "a fix request: the builtin model says it fixes nothing");
    ao_msg_release(&ao_msg_kernel, &k);

    ao_msg_init(&ao_msg_pair, &pair);
    pair.slow_source = strdup(src);
    pair.fast_source = ao_builtin_apply(src, p.text, 0, reason, sizeof reason);
    pair.speedup = 1.5;
    pair.direction = strdup("+");
    ao_env_set(&pair.env, "pair", "pair:r:1:0.1", "r", "silu", "cpu", 1);
    memset(&s, 0, sizeof s);
    CHECK(m->summarize(&a, &pair, &s, &move, &why, &u, reason, sizeof reason) == 0 && move && !why && s.title &&
              !s.none,
          "a pair one move apart is summarized as that move (%s)", s.title ? s.title : "?");
    ao_summary_release(&s);
    cJSON_Delete(move);
    free(pair.fast_source);
    pair.fast_source = strdup(src);
    memset(&s, 0, sizeof s);
    move = NULL;
    CHECK(m->summarize(&a, &pair, &s, &move, &why, &u, reason, sizeof reason) == 0 && !move && why && s.none,
          "two equal kernels: nothing learned, and why (%s)", why ? why : "?");
    free(why);
    ao_summary_release(&s);
    ao_msg_release(&ao_msg_pair, &pair);
    ao_msg_release(&ao_msg_plan, &p);
    ao_msg_release(&ao_msg_candidate, &c);
    cJSON_Delete(memory);
    CHECK(u.prompt == 0 && u.completion == 0 && u.cost_usd == 0, "and none of it cost a token");
    return CHECK_DONE();
}
