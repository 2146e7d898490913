/* builtin.c - the builtin offline model: knob moves ranked by memory */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "core/alloc.h"
#include "core/rng.h"
#include "core/util.h"

int ao_knobs_parse(const char *src, struct ao_knob *k, int max)
{
    const char *line = src;
    int n = 0;

    while (line && *line && n < max) {
        const char *end = strchr(line, '\n'), *p = line, *tag;
        int python;
        size_t ll = end ? (size_t)(end - line) : strlen(line);
        struct ao_knob *kn = &k[n];
        char buf[512];

        snprintf(buf, sizeof buf, "%.*s", (int)(ll < sizeof buf - 1 ? ll : sizeof buf - 1), line);
        line = end ? end + 1 : NULL;
        while (*p == ' ' || *p == '\t')
            p++;
        /* C: "#define NAME value", the knob comment after; Python: "NAME = value  # knob: ..." */
        python = strncmp(p, "#define", 7) != 0;
        if (!(tag = strstr(buf, python ? "# knob:" : "/* knob:")))
            continue;
        memset(kn, 0, sizeof *kn);
        if (!python)
            p += 7;
        while (*p == ' ' || *p == '\t')
            p++;
        for (size_t i = 0; (isalnum((unsigned char)*p) || *p == '_') && i + 1 < sizeof kn->name; p++)
            kn->name[i++] = *p;
        while (*p == ' ' || *p == '\t')
            p++;
        if (python) { /* a module-level name, then " = " */
            if (!isalpha((unsigned char)buf[0]) || *p != '=' || p[1] == '=' || !kn->name[0])
                continue;
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
        }
        kn->off = (size_t)(p - src);
        while (p[kn->len] && !isspace((unsigned char)p[kn->len]) && p[kn->len] != '/' && p[kn->len] != '#')
            kn->len++;
        if (!kn->name[0] || !kn->len || kn->len >= sizeof kn->values[0])
            continue;
        for (const char *v = tag + (python ? 7 : 8); *v && kn->nvalues < AO_MAX_KNOB_VALUES;) {
            size_t vl;
            while (*v == ' ')
                v++;
            if (*v == '(' || *v == '*' || !*v)
                break;
            vl = strcspn(v, " (*");
            if (vl >= sizeof kn->values[0])
                break;
            memcpy(kn->values[kn->nvalues++], v, vl);
            v += vl;
        }
        kn->cur = -1;
        for (int i = 0; i < kn->nvalues; i++)
            if (strlen(kn->values[i]) == kn->len && memcmp(kn->values[i], p, kn->len) == 0)
                kn->cur = i;
        if (kn->nvalues >= 2)
            n++;
    }
    return n;
}

/* What the memory says of moving a knob one way: > 0 it sped kernels up,
 * < 0 its reverse did.  Every item's move is the slow->fast rewrite (for a
 * regression, the reverse of what was tried), so it counts for its own
 * direction and against the opposite one. */
static double memory_score(const cJSON *memory, const char *task, const char *knob, int sign,
                           int *seen, double *best)
{
    const cJSON *it;
    double score = 0;

    *seen = 0;
    *best = 0;
    cJSON_ArrayForEach(it, memory) {
        const cJSON *mv = cJSON_GetObjectItemCaseSensitive(it, "move");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(mv, "knob");
        const cJSON *step = cJSON_GetObjectItemCaseSensitive(mv, "step");
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(it, "speedup");
        const cJSON *tk = cJSON_GetObjectItemCaseSensitive(it, "task");
        double w, s;
        if (!cJSON_IsString(name) || !cJSON_IsNumber(step) || step->valuedouble == 0 ||
            strcmp(name->valuestring, knob) != 0 || !cJSON_IsNumber(sp) || sp->valuedouble <= 0)
            continue;
        s = sp->valuedouble >= 1 ? sp->valuedouble : 1 / sp->valuedouble;
        w = log(s) * (cJSON_IsString(tk) && strcmp(tk->valuestring, task) == 0 ? 1.0 : 0.5);
        if ((step->valuedouble > 0) == (sign > 0)) {
            score += w;
            (*seen)++;
            if (s > *best)
                *best = s;
        } else {
            score -= w;
        }
    }
    return score;
}

struct ranked {
    struct ao_move m;
    int cls;      /* 0 helped before, 1 untried, 2 hurt before */
    double score, jitter;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    int sx = abs(x->m.step), sy = abs(y->m.step);
    if (x->cls != y->cls)
        return x->cls - y->cls;
    if (x->cls == 0 && x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->cls == 2 && x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (sx != sy)
        return sx - sy;
    return x->jitter < y->jitter ? -1 : x->jitter > y->jitter;
}

/* Does anything but its own #define read the knob?  A rewrite can leave a
 * knob nothing uses (the executor prompt asks for it to be deleted then);
 * moving it would change nothing, so it is not planned. */
static int knob_used(const char *src, const char *name)
{
    size_t n = strlen(name);
    int seen = 0;

    for (const char *p = strstr(src, name); p; p = strstr(p + n, name))
        if ((p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
            !(isalnum((unsigned char)p[n]) || p[n] == '_') && ++seen > 1)
            return 1;
    return 0;
}

/* Did one of the plans taken from this source before make this move?  Its
 * `move: KNOB STEP` line, as ao_builtin_plan_text writes it (a model's own
 * plans have none). */
static int move_tried(const char *const *tried, int ntried, const char *knob, int step)
{
    for (int q = 0; q < ntried; q++) {
        const char *mv = tried[q] ? strstr(tried[q], "\nmove: ") : NULL;
        char name[32];
        int was;
        if (mv && sscanf(mv + 7, "%31s %d", name, &was) == 2 && was == step && strcmp(name, knob) == 0)
            return 1;
    }
    return 0;
}

int ao_builtin_plan(const char *src, const char *task, const cJSON *memory, unsigned long long seed,
                    const char *const *tried, int ntried, struct ao_move *moves, int n)
{
    struct ao_knob k[AO_MAX_KNOBS];
    struct ranked all[AO_MAX_KNOBS * 4];
    int nk = ao_knobs_parse(src, k, AO_MAX_KNOBS), na = 0, out = 0;
    char taken[AO_MAX_KNOBS * 4] = {0};
    struct ao_rng rng;

    ao_seed_from_text(rng.s, seed, src);
    for (int i = 0; i < nk; i++) {
        if (k[i].cur < 0 || !knob_used(src, k[i].name))
            continue;
        for (int step = 1; step <= 2; step++)
            for (int sign = -1; sign <= 1; sign += 2) {
                int to = k[i].cur + sign * step, seen;
                double best, sc, jitter;
                if (to < 0 || to >= k[i].nvalues)
                    continue;
                jitter = ao_rng_unit(&rng); /* drawn for a move tried too: the others keep their order */
                if (move_tried(tried, ntried, k[i].name, sign * step))
                    continue;
                sc = memory_score(memory, task, k[i].name, sign, &seen, &best);
                snprintf(all[na].m.knob, sizeof all[na].m.knob, "%s", k[i].name);
                all[na].m.step = sign * step;
                all[na].score = sc;
                all[na].cls = sc > 1e-12 ? 0 : sc < -1e-12 ? 2 : 1;
                all[na].jitter = jitter;
                na++;
            }
    }
    qsort(all, (size_t)na, sizeof all[0], cmp_ranked);
    for (int i = 0; i < n && out < na; i++) {
        int pick = -1;
        if (i % 4 == 3) { /* explore: an untried move at random */
            int untried = 0;
            for (int j = 0; j < na; j++)
                untried += !taken[j] && all[j].cls == 1;
            if (untried) {
                int r = (int)(ao_rng_unit(&rng) * untried);
                for (int j = 0; j < na && pick < 0; j++)
                    if (!taken[j] && all[j].cls == 1 && r-- == 0)
                        pick = j;
            }
        }
        for (int j = 0; j < na && pick < 0; j++)
            if (!taken[j])
                pick = j;
        taken[pick] = 1;
        moves[out++] = all[pick].m;
    }
    return out;
}

static const struct ao_knob *find_knob(const struct ao_knob *k, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(k[i].name, name) == 0)
            return &k[i];
    return NULL;
}

char *ao_builtin_plan_text(const char *src, const struct ao_move *m, const char *task,
                           const cJSON *memory)
{
    struct ao_knob k[AO_MAX_KNOBS];
    int nk = ao_knobs_parse(src, k, AO_MAX_KNOBS), seen;
    const struct ao_knob *kn = find_knob(k, nk, m->knob);
    struct ao_buf b = {0};
    double best, sc;

    if (!kn || kn->cur < 0)
        return NULL;
    sc = memory_score(memory, task, m->knob, m->step > 0 ? 1 : -1, &seen, &best);
    ao_buf_printf(&b, "%s %s from %s to %s (%d step%s %s its allowed values:", m->step > 0 ? "Raise" : "Lower",
                  kn->name, kn->values[kn->cur], kn->values[kn->cur + m->step], abs(m->step),
                  abs(m->step) == 1 ? "" : "s", m->step > 0 ? "up" : "down");
    for (int i = 0; i < kn->nvalues; i++)
        ao_buf_printf(&b, " %s", kn->values[i]);
    ao_buf_printf(&b, ").");
    if (sc > 0)
        ao_buf_printf(&b, " The memory holds %d speedup%s from this move (best %.2fx).", seen,
                      seen == 1 ? "" : "s", best);
    else if (sc < 0)
        ao_buf_printf(&b, " The memory says its reverse sped kernels up; tried for completeness.");
    else
        ao_buf_printf(&b, " Untried so far.");
    ao_buf_printf(&b, "\nmove: %s %+d\n", kn->name, m->step);
    return b.data;
}

char *ao_builtin_apply(const char *src, const char *plan, int sample, char *reason, size_t len)
{
    struct ao_knob k[AO_MAX_KNOBS];
    int nk = ao_knobs_parse(src, k, AO_MAX_KNOBS), step, to;
    const char *mv = plan ? strstr(plan, "move: ") : NULL;
    const struct ao_knob *kn;
    char name[32];
    struct ao_buf b = {0};

    if (!mv || sscanf(mv + 6, "%31s %d", name, &step) != 2 || step == 0) {
        snprintf(reason, len, "the plan has no 'move: KNOB STEP' line for the builtin executor");
        return NULL;
    }
    if (!(kn = find_knob(k, nk, name)) || kn->cur < 0) {
        snprintf(reason, len, "the kernel has no knob '%s' with a listed value", name);
        return NULL;
    }
    to = kn->cur + step + (step > 0 ? sample : -sample);
    to = to < 0 ? 0 : to >= kn->nvalues ? kn->nvalues - 1 : to;
    if (to == kn->cur) {
        snprintf(reason, len, "knob '%s' cannot move %+d from %s", name, step, kn->values[kn->cur]);
        return NULL;
    }
    ao_buf_append(&b, src, kn->off);
    ao_buf_append(&b, kn->values[to], strlen(kn->values[to]));
    ao_buf_append(&b, src + kn->off + kn->len, strlen(src + kn->off + kn->len) + 1);
    return b.data;
}

/* The #define line of a knob, for snippets. */
static char *define_line(const char *src, const struct ao_knob *kn)
{
    const char *b = src + kn->off, *e = strchr(b, '\n');
    while (b > src && b[-1] != '\n')
        b--;
    return ao_strndup(b, e ? (size_t)(e - b) : strlen(b));
}

cJSON *ao_builtin_summarize(const char *slow, const char *fast, const char *task,
                            double speedup, const char *direction, struct ao_summary *s,
                            char *reason, size_t len)
{
    struct ao_knob a[AO_MAX_KNOBS], b[AO_MAX_KNOBS];
    int na = ao_knobs_parse(slow, a, AO_MAX_KNOBS), nb = ao_knobs_parse(fast, b, AO_MAX_KNOBS);
    int diff = 0, from = -1, to = -1;
    const struct ao_knob *ka = NULL, *kb = NULL;
    struct ao_buf t = {0}, d = {0};
    cJSON *mv = NULL;

    memset(s, 0, sizeof *s);
    for (int i = 0; i < na; i++) {
        const struct ao_knob *o = find_knob(b, nb, a[i].name);
        if (o && (a[i].len != o->len || memcmp(slow + a[i].off, fast + o->off, o->len) != 0)) {
            diff++;
            ka = &a[i], kb = o;
        }
    }
    if (diff != 1) {
        s->none = 1;
        snprintf(reason, len, diff ? "%d knobs changed; the builtin summarizer distils single moves"
                                   : "no knob changed between the kernels", diff);
        return NULL;
    }
    from = ka->cur;
    for (int i = 0; i < ka->nvalues; i++)
        if (strlen(ka->values[i]) == kb->len && memcmp(ka->values[i], fast + kb->off, kb->len) == 0)
            to = i;
    if (from < 0 || to < 0) {
        s->none = 1;
        snprintf(reason, len, "knob '%s' moved outside its allowed values", ka->name);
        return NULL;
    }
    if (direction && strcmp(direction, "-") == 0) {
        /* a regression: the step taken was fast -> slow, and the lesson says
         * so, as the memory's "1.80x slower" does; the move kept is still
         * the good one, slow -> fast */
        ao_buf_printf(&t, "Avoid: %s %s from %s to %s", to > from ? "Lower" : "Raise", ka->name,
                      ka->values[to], ka->values[from]);
        ao_buf_printf(&d, "On %s, moving knob %s from %s to %s made the kernel %.2fx slower; the "
                      "opposite move (%s to %s) is the one to make.", task, ka->name, ka->values[to],
                      ka->values[from], speedup, ka->values[from], ka->values[to]);
    } else {
        ao_buf_printf(&t, "%s %s from %s to %s", to > from ? "Raise" : "Lower", ka->name,
                      ka->values[from], ka->values[to]);
        ao_buf_printf(&d, "On %s, moving knob %s from %s to %s made the kernel %.2fx faster.", task,
                      ka->name, ka->values[from], ka->values[to], speedup);
    }
    s->title = t.data;
    s->summary = d.data;
    s->before = define_line(slow, ka);
    s->after = define_line(fast, kb);
    mv = cJSON_CreateObject();
    cJSON_AddStringToObject(mv, "knob", ka->name);
    cJSON_AddNumberToObject(mv, "step", to - from);
    cJSON_AddStringToObject(mv, "from", ka->values[from]);
    cJSON_AddStringToObject(mv, "to", ka->values[to]);
    return mv;
}
