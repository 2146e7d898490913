/* memfold.c - equal lessons folded into one */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "state/memfold.h"
#include "wire/msg.h"

/* Equal JSON values, for fields that may be strings or numbers. */
static int same_value(const cJSON *a, const cJSON *b)
{
    return a && b && cJSON_Compare(a, b, 1);
}

static int same_text(const cJSON *a, const cJSON *b, const char *field)
{
    const char *x = ao_json_str(a, field, NULL), *y = ao_json_str(b, field, NULL);
    return x && y && x[0] && strcmp(x, y) == 0;
}

int ao_memory_same_lesson(const cJSON *a, const cJSON *b)
{
    const cJSON *ma = cJSON_GetObjectItemCaseSensitive(a, "move"),
                *mb = cJSON_GetObjectItemCaseSensitive(b, "move");

    if (!same_text(a, b, "task") || !same_text(a, b, "target") || !same_text(a, b, "direction"))
        return 0;
    if (cJSON_IsObject(ma) && cJSON_IsObject(mb)) {
        static const char *const f[] = {"knob", "from", "to"};
        for (int i = 0; i < 3; i++)
            if (!same_value(cJSON_GetObjectItemCaseSensitive(ma, f[i]), cJSON_GetObjectItemCaseSensitive(mb, f[i])))
                return 0;
        return 1;
    }
    if (same_text(a, b, "slow_sha256") && same_text(a, b, "fast_sha256"))
        return 1;
    return same_text(a, b, "before") && same_text(a, b, "after");
}

int ao_memory_evidence(const cJSON *item)
{
    double n = ao_json_num(item, "evidence", 1);
    return n >= 1 && n < 1e9 ? (int)n : 1;
}

/* How well an item's figure is supported: lower is better.  A head-to-head
 * interval first (its width relative to the speedup), then a spread. */
static double support(const cJSON *it)
{
    double lo = ao_json_num(it, "speedup_low", NAN), hi = ao_json_num(it, "speedup_high", NAN);
    double spread = ao_json_num(it, "speedup_spread", NAN);

    if (isfinite(lo) && isfinite(hi) && lo > 0 && hi >= lo)
        return log(hi / lo);
    return isfinite(spread) && spread >= 0 ? 1000 + spread : 2000;
}

/* Add it's ids (its evidence_ids, else its own id) to ids, those not there
 * yet, while there is room. */
static void add_ids(cJSON *ids, const cJSON *it)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(it, "evidence_ids"), *v;
    cJSON one = {0};

    if (!cJSON_IsArray(list)) { /* an item never folded: its own id */
        one.type = cJSON_String;
        one.valuestring = (char *)ao_json_str(it, "id", "");
        list = NULL;
    }
    for (v = list ? list->child : &one; v; v = list ? v->next : NULL) {
        const cJSON *have;
        int found = 0;
        if (!cJSON_IsString(v) || !v->valuestring[0])
            continue;
        cJSON_ArrayForEach(have, ids)
            found |= strcmp(have->valuestring, v->valuestring) == 0;
        if (!found && cJSON_GetArraySize(ids) < AO_MEMORY_EVIDENCE_IDS)
            cJSON_AddItemToArray(ids, cJSON_CreateString(v->valuestring));
    }
}

cJSON *ao_memory_merge(const cJSON *newer, const cJSON *older)
{
    const cJSON *best = support(older) < support(newer) ? older : newer;
    cJSON *out = cJSON_Duplicate(best, 1), *ids = cJSON_CreateArray();
    int n, na = ao_memory_evidence(newer), nb = ao_memory_evidence(older);

    add_ids(ids, newer);
    add_ids(ids, older);
    n = cJSON_GetArraySize(ids);
    /* past the cap the ids no longer tell overlap from new: the larger
     * count stands (never a count that grows by folding the same twice) */
    if (n >= AO_MEMORY_EVIDENCE_IDS)
        n = na > nb ? (na > n ? na : n) : (nb > n ? nb : n);
    cJSON_DeleteItemFromObjectCaseSensitive(out, "evidence");
    cJSON_DeleteItemFromObjectCaseSensitive(out, "evidence_ids");
    cJSON_DeleteItemFromObjectCaseSensitive(out, "created_at");
    cJSON_AddStringToObject(out, "created_at", ao_json_str(newer, "created_at", ""));
    cJSON_AddNumberToObject(out, "evidence", n);
    cJSON_AddItemToObject(out, "evidence_ids", ids);
    return out;
}

int ao_memory_fold(cJSON *items)
{
    int gone = 0;

    for (cJSON *a = items ? items->child : NULL; a; a = a->next) {
        cJSON *b = a->next;
        while (b) {
            cJSON *next = b->next, *m;
            if (!ao_memory_same_lesson(a, b)) {
                b = next;
                continue;
            }
            m = ao_memory_merge(a, b);
            cJSON_ReplaceItemViaPointer(items, a, m); /* frees a */
            a = m;
            cJSON_Delete(cJSON_DetachItemViaPointer(items, b));
            gone++;
            b = next;
        }
    }
    return gone;
}
