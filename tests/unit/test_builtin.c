/* test_builtin.c - the builtin model (knobs, moves ranked by memory,
 * determinism, distilling a pair) and prompt rendering */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agents/builtin.h"
#include "agents/prompt.h"
#include "check.h"
#include "core/util.h"

static char *baseline_ext(const char *task, const char *ext)
{
    char path[600], err[AO_ERRLEN];
    snprintf(path, sizeof path, "%s/nkibench/%s/baseline.%s", ao_home(), task, ext);
    return ao_read_file(path, NULL, err, sizeof err);
}

static char *baseline(const char *task)
{
    return baseline_ext(task, "c");
}

static int same_moves(const struct ao_move *a, const struct ao_move *b, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(a[i].knob, b[i].knob) || a[i].step != b[i].step)
            return 0;
    return 1;
}

int main(void)
{
    char *mm = baseline("matmul"), *bmm = baseline("lora"), *moved, *back, reason[AO_ERRLEN];
    struct ao_knob k[AO_MAX_KNOBS];
    struct ao_move a[12], b[12], c[12];
    struct ao_summary s;
    cJSON *mem, *mv;
    int n, na, nb;

    /* knobs */
    n = ao_knobs_parse(mm, k, AO_MAX_KNOBS);
    CHECK(n == 4 && !strcmp(k[0].name, "BLOCK_M") && !strcmp(k[3].name, "LOOP_ORDER"),
          "matmul declares four knobs (%d)", n);
    CHECK(k[2].nvalues == 5 && !strcmp(k[2].values[k[2].cur], "64"), "BLOCK_K is 64 of 5 values");
    CHECK(k[3].nvalues == 2, "the note after the values is not a value");
    {
        /* the same syntax in a CUDA kernel: the builtin model tunes it too */
        char *cu = baseline_ext("matmul", "cu"), *m2;
        n = ao_knobs_parse(cu, k, AO_MAX_KNOBS);
        CHECK(n == 3 && !strcmp(k[0].name, "BLOCK_X") && !strcmp(k[2].name, "UNROLL_K"),
              "matmul's baseline.cu declares three knobs (%d)", n);
        m2 = cu ? ao_builtin_apply(cu, "move: BLOCK_Y +1\n", 0, reason, sizeof reason) : NULL;
        CHECK(m2 && strstr(m2, "#define BLOCK_Y 16 "), "and a move rewrites a .cu knob");
        free(m2);
        free(cu);
    }

    /* apply: sample 0 takes the step, sample 1 one further, clamped */
    moved = ao_builtin_apply(mm, "Raise it.\nmove: BLOCK_K +1\n", 0, reason, sizeof reason);
    CHECK(moved && strstr(moved, "#define BLOCK_K 128 ") && !strstr(moved, "#define BLOCK_K 64 "),
          "a move rewrites only the knob's value");
    CHECK(moved && strlen(moved) == strlen(mm) + 1, "and nothing else");
    free(moved);
    moved = ao_builtin_apply(mm, "move: BLOCK_K +1", 1, reason, sizeof reason);
    CHECK(moved && strstr(moved, "#define BLOCK_K 256 "), "sample 1 goes one step further");
    free(moved);
    moved = ao_builtin_apply(mm, "move: BLOCK_K +2", 5, reason, sizeof reason);
    CHECK(moved && strstr(moved, "#define BLOCK_K 256 "), "clamped to the last allowed value");
    free(moved);
    CHECK(!ao_builtin_apply(mm, "Tile the loop by 64.", 0, reason, sizeof reason) &&
          strstr(reason, "no 'move:"), "a plan without a move line is refused: %s", reason);
    CHECK(!ao_builtin_apply(mm, "move: NOPE +1", 0, reason, sizeof reason) &&
          strstr(reason, "no knob 'NOPE'"), "an unknown knob is refused");

    /* plans: deterministic for a seed, every move distinct */
    mem = cJSON_CreateArray();
    na = ao_builtin_plan(mm, "matmul", mem, 7, NULL, 0, a, 12);
    nb = ao_builtin_plan(mm, "matmul", mem, 7, NULL, 0, b, 12);
    CHECK(na == 12 && nb == 12 && same_moves(a, b, 12), "the same seed plans the same moves");
    ao_builtin_plan(mm, "matmul", mem, 8, NULL, 0, c, 12);
    CHECK(!same_moves(a, c, 12), "another seed plans another order");
    {
        int dup = 0;
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < i; j++)
                dup += !strcmp(a[i].knob, a[j].knob) && a[i].step == a[j].step;
        CHECK(!dup, "no move is planned twice");
    }
    CHECK(abs(a[0].step) == 1 && abs(a[1].step) == 1, "untried single steps come first");
    {
        /* the plans taken from this kernel before, by their move lines: those
         * moves are not proposed again; with every move taken, none is left */
        struct ao_move all[64], d[64];
        int nall = ao_builtin_plan(mm, "matmul", mem, 7, NULL, 0, all, 64);
        char *t0 = ao_builtin_plan_text(mm, &all[0], "matmul", mem), *t1 = ao_builtin_plan_text(mm, &all[1], "matmul", mem);
        const char *tried[] = {t0, "Tile it by hand (a model's plan: no move line)", t1};
        const char *every[64];
        char *texts[64];
        int nd = ao_builtin_plan(mm, "matmul", mem, 7, tried, 3, d, 64), again = 0;
        for (int i = 0; i < nd; i++)
            again += (!strcmp(d[i].knob, all[0].knob) && d[i].step == all[0].step) ||
                     (!strcmp(d[i].knob, all[1].knob) && d[i].step == all[1].step);
        CHECK(t0 && t1 && nd == nall - 2 && !again, "two moves tried from this kernel are not planned again "
              "(%d of %d)", nd, nall);
        CHECK(nd > 0 && !strcmp(d[0].knob, all[2].knob) && d[0].step == all[2].step, "the next in the order comes first");
        for (int i = 0; i < nall; i++)
            every[i] = texts[i] = ao_builtin_plan_text(mm, &all[i], "matmul", mem);
        CHECK(ao_builtin_plan(mm, "matmul", mem, 7, every, nall, d, 64) == 0, "every move tried: none is left");
        for (int i = 0; i < nall; i++)
            free(texts[i]);
        free(t0);
        free(t1);
    }
    {
        /* a knob a rewrite left behind, read by nothing, is never moved */
        const char *dead = "#define TILE 64 /* knob: 32 64 128 */\n"
                           "#define OLD_UNROLL 4 /* knob: 1 2 4 8 */\n"
                           "void kernel(float *x, int n) { for (int i = 0; i < n; i += TILE) x[i] = 0; }\n";
        struct ao_move d[8];
        int nd = ao_builtin_plan(dead, "matmul", mem, 7, NULL, 0, d, 8), stale = 0;
        for (int i = 0; i < nd; i++)
            stale += !strcmp(d[i].knob, "OLD_UNROLL");
        CHECK(nd > 0 && !stale, "a knob nothing reads is not planned (%d moves)", nd);
    }

    /* distil a pair, then rank by the memory on another task of the target */
    moved = ao_builtin_apply(mm, "move: BLOCK_K +1", 0, reason, sizeof reason);
    mv = ao_builtin_summarize(mm, moved, "matmul", 1.3, "+", &s, reason, sizeof reason);
    CHECK(mv && !strcmp(s.title, "Raise BLOCK_K from 64 to 128"), "a one-knob pair is distilled: %s",
          mv ? s.title : reason);
    CHECK(mv && strstr(s.before, "#define BLOCK_K 64") && strstr(s.after, "#define BLOCK_K 128"),
          "with the define lines as snippets");
    CHECK(mv && cJSON_GetObjectItem(mv, "step")->valueint == 1, "and the move as data");
    {
        cJSON *item = cJSON_CreateObject();
        cJSON_AddItemToObject(item, "move", mv);
        cJSON_AddNumberToObject(item, "speedup", 1.3);
        cJSON_AddStringToObject(item, "task", "matmul");
        cJSON_AddItemToArray(mem, item);
    }
    ao_summary_release(&s);
    nb = ao_builtin_plan(bmm, "lora", mem, 7, NULL, 0, b, 16);
    CHECK(nb > 4 && !strcmp(b[0].knob, "BLOCK_K") && b[0].step == 1,
          "a move that sped up another task comes first (%s %+d)", b[0].knob, b[0].step);
    CHECK(!strcmp(b[nb - 1].knob, "BLOCK_K") && b[nb - 1].step < 0,
          "its reverse comes last (%s %+d)", b[nb - 1].knob, b[nb - 1].step);
    {
        char *text = ao_builtin_plan_text(bmm, &b[0], "lora", mem);
        CHECK(text && strstr(text, "memory holds 1 speedup") && strstr(text, "move: BLOCK_K +1"),
              "the plan says why, and carries the move line");
        free(text);
    }
    {
        /* a regression: the child (slow) came from the fast parent; the
         * lesson names the step taken, as the memory's "slower" does */
        struct ao_summary r = {0};
        cJSON *rmv = ao_builtin_summarize(mm, moved, "matmul", 1.8, "-", &r, reason, sizeof reason);
        CHECK(rmv && !strcmp(r.title, "Avoid: Lower BLOCK_K from 128 to 64") &&
              strstr(r.summary, "from 128 to 64 made the kernel 1.80x slower") &&
              cJSON_GetObjectItem(rmv, "step")->valueint == 1,
              "a regression's lesson: what not to do, and the good move kept as data (%s)",
              rmv ? r.title : reason);
        cJSON_Delete(rmv);
        ao_summary_release(&r);
    }
    back = ao_builtin_apply(moved, "move: BLOCK_K -1", 0, reason, sizeof reason);
    CHECK(back && !strcmp(back, mm), "a move and its reverse give back the source");
    CHECK(!ao_builtin_summarize(mm, back, "matmul", 1.1, "+", &s, reason, sizeof reason) &&
          s.none && strstr(reason, "no knob changed"), "identical kernels teach nothing");
    free(back);
    free(moved);
    cJSON_Delete(mem);

    /* prompt rendering */
    {
        struct ao_prompt_var v[] = {{"a", "1"}, {"b", "two"}};
        unsigned long long used = 0;
        char err[AO_ERRLEN], *r = ao_prompt_render("x {{a}} y {{a}}{{b}}", v, 2, &used, err, sizeof err);
        CHECK(r && !strcmp(r, "x 1 y 1two") && used == 3, "placeholders are substituted");
        free(r);
        used = 0;
        r = ao_prompt_render("{{a}} only", v, 2, &used, err, sizeof err);
        CHECK(r && used == 1, "unused values are reported to the caller");
        free(r);
        CHECK(!ao_prompt_render("{{c}}", v, 2, NULL, err, sizeof err) && strstr(err, "'{{c}}'"),
              "an unknown placeholder is an error: %s", err);
        CHECK(!ao_prompt_render("{{a", v, 2, NULL, err, sizeof err) && strstr(err, "unclosed"),
              "an unclosed placeholder is an error");
    }
    free(mm);
    free(bmm);
    {
        /* an NKI kernel's knobs are Python assignments at module level */
        const char *py = "\"\"\"Knobs: `NAME = value  # knob: values`\"\"\"\n"
                         "TILE_M = 128  # knob: 32 64 128 (rows)\n"
                         "TILE_N = 512  # knob: 128 256 512\n"
                         "    INNER = 4  # knob: 2 4 8 (indented: not a knob)\n"
                         "X == 3  # knob: 1 2 3\n"
                         "def kernel():\n    return TILE_M * TILE_N\n";
        char *pymoved;
        n = ao_knobs_parse(py, k, AO_MAX_KNOBS);
        CHECK(n == 2 && !strcmp(k[0].name, "TILE_M") && k[0].cur == 2 && k[0].nvalues == 3 &&
                  !strcmp(k[1].name, "TILE_N") && k[1].cur == 2,
              "Python knobs: module-level NAME = value with '# knob:' values (%d found)", n);
        pymoved = ao_builtin_apply(py, "move: TILE_N -1\n", 0, reason, sizeof reason);
        CHECK(pymoved && strstr(pymoved, "TILE_N = 256  # knob: 128 256 512\n") &&
                  strstr(pymoved, "TILE_M = 128  # knob"),
              "the builtin executor moves a Python knob's value and nothing else");
        free(pymoved);
    }
    return CHECK_DONE();
}
