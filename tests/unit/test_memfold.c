/* test_memfold.c - equal lessons fold into one item (issue 69, item 4):
 * which items are the same lesson, which figure is kept, the evidence
 * counted once however often the same items are folded */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "state/memfold.h"
#include "state/memory.h"
#include "wire/msg.h"

/* a builtin-model lesson: matmul, raise BLOCK_N from 64 to 256 */
static cJSON *lesson(const char *id, const char *created, double sp, double lo, double hi)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"id\":\"%s\",\"run\":\"r-%s\",\"task\":\"matmul\",\"target\":\"cpu\",\"iter\":1,"
             "\"title\":\"Raise BLOCK_N from 64 to 256\",\"summary\":\"wider tiles\",\"speedup\":%g,"
             "\"direction\":\"+\",\"created_at\":\"%s\",\"move\":{\"knob\":\"BLOCK_N\",\"step\":1,"
             "\"from\":\"64\",\"to\":\"256\"}}",
             id, id, sp, created);
    cJSON *it = cJSON_Parse(text);
    if (lo > 0) {
        cJSON_AddNumberToObject(it, "speedup_low", lo);
        cJSON_AddNumberToObject(it, "speedup_high", hi);
    }
    return it;
}

static void test_same(void)
{
    cJSON *a = lesson("a", "2026-11-01T00:00:00Z", 1.3, 1.2, 1.4), *b = lesson("b", "2026-11-02T00:00:00Z", 1.5, 0, 0);
    cJSON *c = cJSON_Duplicate(b, 1), *d = cJSON_Duplicate(b, 1), *e = cJSON_Duplicate(b, 1);
    cJSON *p = cJSON_Parse("{\"task\":\"bmm\",\"target\":\"cpu\",\"direction\":\"+\",\"title\":\"x\","
                           "\"before\":\"for (i...)\",\"after\":\"for (j...)\"}");
    cJSON *q = cJSON_Duplicate(p, 1);

    CHECK(ao_memory_same_lesson(a, b), "the same knob move on the same task and target: one lesson");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(c, "move"), "to", cJSON_CreateString("128"));
    CHECK(!ao_memory_same_lesson(a, c), "another value of the knob: another lesson");
    cJSON_ReplaceItemInObject(d, "direction", cJSON_CreateString("-"));
    CHECK(!ao_memory_same_lesson(a, d), "the same move as a regression: another lesson");
    cJSON_ReplaceItemInObject(e, "task", cJSON_CreateString("bmm"));
    CHECK(!ao_memory_same_lesson(a, e), "the same move on another task: another lesson");
    CHECK(ao_memory_same_lesson(p, q), "no move: the same before and after snippets are one lesson");
    cJSON_ReplaceItemInObject(q, "after", cJSON_CreateString("for (k...)"));
    CHECK(!ao_memory_same_lesson(p, q), "another after: another lesson");
    cJSON_DeleteItemFromObject(q, "before");
    cJSON_DeleteItemFromObject(p, "before");
    CHECK(!ao_memory_same_lesson(p, q), "nothing to tell them by: not the same");
    cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(c), cJSON_Delete(d), cJSON_Delete(e);
    cJSON_Delete(p), cJSON_Delete(q);
}

static void test_merge(void)
{
    /* older: head to head 1.30 (1.20-1.40); newer: a spread only, 1.50 */
    cJSON *older = lesson("a", "2026-11-01T00:00:00Z", 1.3, 1.2, 1.4), *newer = lesson("b", "2026-11-02T00:00:00Z", 1.5, 0, 0);
    cJSON *m = ao_memory_merge(newer, older), *again, *narrow, *m2;
    char err[256];

    CHECK(m && ao_json_num(m, "speedup", 0) == 1.3 && ao_json_num(m, "speedup_low", 0) == 1.2,
          "the figure kept is the head-to-head one, not the newer's bare figure");
    CHECK(m && strcmp(ao_json_str(m, "created_at", ""), "2026-11-02T00:00:00Z") == 0,
          "dated when it was last learnt");
    CHECK(m && ao_memory_evidence(m) == 2 && cJSON_GetArraySize(cJSON_GetObjectItem(m, "evidence_ids")) == 2,
          "evidence 2, the two ids named");
    CHECK(m && ao_memory_item_check(m, err, sizeof err) == 0, "a merged item is a valid item");
    again = ao_memory_merge(m, newer);
    CHECK(again && ao_memory_evidence(again) == 2, "folding the same item in again counts nothing twice");
    narrow = lesson("c", "2026-11-03T00:00:00Z", 1.35, 1.33, 1.37);
    m2 = ao_memory_merge(narrow, again);
    CHECK(m2 && ao_json_num(m2, "speedup", 0) == 1.35 && ao_memory_evidence(m2) == 3,
          "a narrower interval wins the figure; evidence 3");
    cJSON_Delete(m), cJSON_Delete(again), cJSON_Delete(m2);
    cJSON_Delete(older), cJSON_Delete(newer), cJSON_Delete(narrow);
}

static void test_fold(void)
{
    cJSON *items = cJSON_CreateArray();
    char id[8], day[32];
    int gone;

    for (int i = 9; i >= 0; i--) { /* newest first: ten runs' copies, and one other lesson */
        snprintf(id, sizeof id, "r%d", i);
        snprintf(day, sizeof day, "2026-11-%02dT00:00:00Z", i + 10);
        cJSON_AddItemToArray(items, lesson(id, day, 1.2 + i / 100.0, 0, 0));
        if (i == 5) {
            cJSON *other = lesson("x", day, 0.5, 0, 0);
            cJSON_ReplaceItemInObject(other, "direction", cJSON_CreateString("-"));
            cJSON_AddItemToArray(items, other);
        }
    }
    gone = ao_memory_fold(items);
    CHECK(gone == 9 && cJSON_GetArraySize(items) == 2, "ten copies of one lesson fold into one (%d went, %d left)",
          gone, cJSON_GetArraySize(items));
    CHECK(ao_memory_evidence(cJSON_GetArrayItem(items, 0)) == 10 &&
              strcmp(ao_json_str(cJSON_GetArrayItem(items, 0), "created_at", ""), "2026-11-19T00:00:00Z") == 0,
          "at the newest's place, evidence 10");
    CHECK(strcmp(ao_json_str(cJSON_GetArrayItem(items, 1), "id", ""), "x") == 0, "the other lesson stays");
    CHECK(ao_memory_fold(items) == 0 && ao_memory_evidence(cJSON_GetArrayItem(items, 0)) == 10,
          "a folded memory folds no further");
    cJSON_Delete(items);
}

int main(void)
{
    test_same();
    test_merge();
    test_fold();
    return CHECK_DONE();
}
