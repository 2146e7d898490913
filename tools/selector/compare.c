/* compare.c - a child's head-to-head with its parent (issue 66): the one
 * measurement of a kernel a model wrote, carried in its own result; the
 * iteration closes on these (results.c) */
#include <math.h>

#include "core/util.h"
#include "wire/msg.h"
#include "wire/verdict.h"

#include "selector.h"

int sel_compare_on(const struct ao_run_state *st)
{
    return sel_int_or(st->config.compare, 1) != 0;
}

int sel_compare_of(const struct ao_result_msg *r, struct ao_sel_cmp *c)
{
    const cJSON *h = r->head_to_head;

    c->have = 0;
    c->speedup = c->low = c->high = NAN;
    if (!h || ao_verdict_of(r->status) != AO_V_OK)
        return 0;
    c->speedup = ao_json_num(h, "speedup", NAN);
    c->low = ao_json_num(h, "speedup_low", NAN);
    c->high = ao_json_num(h, "speedup_high", NAN);
    /* a pair whose parent ran well outside its own figures decides
     * nothing (the profiler's hold, profstage.c): the child is a tie */
    c->have = c->speedup > 0 && c->low > 0 && c->high >= c->low &&
              !cJSON_GetObjectItemCaseSensitive(h, "voided");
    return c->have;
}
