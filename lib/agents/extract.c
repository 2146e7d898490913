/* extract.c - code blocks and summaries out of model replies */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agents/extract.h"
#include "core/alloc.h"
#include "core/util.h"
#include "targets/target.h"

#define MAX_BLOCKS 32
#define SNIPPET_LINES 40

struct block {
    char lang[32];
    struct ao_buf code;
    const char *start; /* where the opening fence is in the reply */
};

/* The next line of s into [*b, *e) without its end of line; returns the
 * start of the line after, or NULL at the end. */
static const char *next_line(const char *s, const char **b, const char **e)
{
    const char *nl;

    if (!*s)
        return NULL;
    nl = strchr(s, '\n');
    *b = s;
    *e = nl ? nl : s + strlen(s);
    if (*e > *b && (*e)[-1] == '\r')
        (*e)--;
    return nl ? nl + 1 : *e + strlen(*e);
}

/* A fence line: optional indent, then 3+ backticks or tildes.  Returns the
 * fence length and its char, and the info string after it. */
static int fence(const char *b, const char *e, char *ch, const char **info)
{
    int n = 0;
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    if (b == e || (*b != '`' && *b != '~'))
        return 0;
    *ch = *b;
    while (b < e && *b == *ch)
        b++, n++;
    *info = b;
    return n >= 3 ? n : 0;
}

static int blank_between(const char *b, const char *e)
{
    for (; b < e; b++)
        if (!isspace((unsigned char)*b))
            return 0;
    return 1;
}

/* Split a reply into its fenced blocks; returns how many (at most max). */
static int find_blocks(const char *reply, struct block *bl, int max)
{
    const char *p = reply, *b, *e, *info = NULL;
    int n = 0, open = 0, flen = 0;
    char fch = 0;

    while (n < max && (p = next_line(p, &b, &e))) {
        char ch = 0;
        int k = fence(b, e, &ch, &info);
        if (!open) {
            if (!k)
                continue;
            memset(&bl[n], 0, sizeof bl[n]);
            while (info < e && isspace((unsigned char)*info))
                info++;
            for (size_t i = 0; info < e && !isspace((unsigned char)*info) && *info != '{' &&
                               i + 1 < sizeof bl[n].lang; info++)
                bl[n].lang[i++] = (char)tolower((unsigned char)*info);
            bl[n].start = b;
            open = 1, flen = k, fch = ch;
        } else if (k >= flen && ch == fch && blank_between(info, e)) {
            ao_buf_append(&bl[n].code, "", 1); /* its text ends in a NUL, not counted */
            bl[n].code.len--;
            open = 0;
            n++;
        } else {
            ao_buf_append(&bl[n].code, b, (size_t)(e - b));
            ao_buf_append(&bl[n].code, "\n", 1);
        }
    }
    if (open && n < max) { /* a last block never closed: keep what there is */
        ao_buf_append(&bl[n].code, "", 1);
        bl[n].code.len--;
        n++;
    }
    return n;
}

static void free_blocks(struct block *bl, int n)
{
    for (int i = 0; i < n; i++)
        ao_buf_release(&bl[i].code);
}

/* A block's tag is one the target's kernels may carry; an unknown target
 * takes none (its name was checked where the message was taken in). */
static int lang_ok(const char *lang, const char *target)
{
    const struct ao_target *t = ao_target_find(target);

    for (const char *const *l = t ? t->fence_tags : NULL; l && *l; l++)
        if (strcmp(*l, lang) == 0)
            return 1;
    return 0;
}

/* Whether code defines a function named kernel: "kernel" as a whole word,
 * then "(", and a "{" after the closing ")" before any ";". */
static int defines_kernel(const char *code)
{
    for (const char *p = code; (p = strstr(p, "kernel")); p += 6) {
        const char *q = p + 6;
        if (p > code && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        while (*q == ' ' || *q == '\t' || *q == '\n')
            q++;
        if (*q != '(')
            continue;
        q = strchr(q, ')');
        if (!q)
            return 0;
        q += strspn(q + 1, " \t\r\n") + 1;
        if (*q == '{')
            return 1;
    }
    return 0;
}

char *ao_extract_code(const char *reply, const char *target, char *reason, size_t len)
{
    struct block bl[MAX_BLOCKS];
    const char *think = strstr(reply, "</think>");
    int n, pick = -1;
    char *code = NULL;

    /* a reasoning model's drafts come before its answer */
    while (think) {
        reply = think + 8;
        think = strstr(reply, "</think>");
    }
    n = find_blocks(reply, bl, MAX_BLOCKS);
    for (int i = 0; i < n && pick < 0; i++)
        if (lang_ok(bl[i].lang, target) && bl[i].code.len && defines_kernel(bl[i].code.data))
            pick = i;
    for (int i = 0; i < n && pick < 0; i++)
        if (bl[i].code.len && defines_kernel(bl[i].code.data))
            pick = i;
    for (int i = 0; i < n && pick < 0; i++)
        if (lang_ok(bl[i].lang, target) && bl[i].code.len && !blank_between(bl[i].code.data,
                                                                            bl[i].code.data + bl[i].code.len))
            pick = i;
    if (n == 0)
        snprintf(reason, len, "the reply had no code block");
    else if (pick < 0)
        snprintf(reason, len, "the reply's %d code block%s held no %s code", n, n == 1 ? "" : "s",
                 target);
    else
        code = ao_strdup(bl[pick].code.data);
    free_blocks(bl, n);
    return code;
}

/* --- summaries --------------------------------------------------------- */

static char *trimmed(const char *b, const char *e)
{
    char *s;
    while (b < e && isspace((unsigned char)*b))
        b++;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    s = ao_malloc((size_t)(e - b) + 1);
    memcpy(s, b, (size_t)(e - b));
    s[e - b] = '\0';
    return s;
}

/* Strip markdown decoration around a title: #, *, _, "Title:". */
static char *clean_title(const char *b, const char *e)
{
    while (b < e && (isspace((unsigned char)*b) || *b == '#' || *b == '*' || *b == '_'))
        b++;
    if (e - b > 6 && strncasecmp(b, "title:", 6) == 0)
        b += 6;
    while (b < e && (isspace((unsigned char)*b) || *b == '*'))
        b++;
    while (e > b && (isspace((unsigned char)e[-1]) || e[-1] == '*' || e[-1] == '_'))
        e--;
    return trimmed(b, e);
}

/* A line that only labels the next snippet: "Original:", "**Optimized**"... */
static int label_line(const char *b, const char *e)
{
    static const char *const labels[] = {"original", "optimized", "optimised", "before",
                                         "after", "slow", "fast", NULL};
    while (b < e && (isspace((unsigned char)*b) || *b == '*' || *b == '#' || *b == '-'))
        b++;
    for (int i = 0; labels[i]; i++) {
        size_t n = strlen(labels[i]);
        if ((size_t)(e - b) >= n && strncasecmp(b, labels[i], n) == 0 && e - b < (long)n + 30)
            return 1;
    }
    return 0;
}

static char *snippet(const struct block *bl)
{
    const char *p = bl->code.len ? bl->code.data : "";
    const char *q = p;
    for (int lines = 0; *q && lines < SNIPPET_LINES; lines++)
        q = strchr(q, '\n') ? strchr(q, '\n') + 1 : q + strlen(q);
    return trimmed(p, q);
}

/* Control characters out, but newline and tab, in place. */
static void drop_controls(char *s)
{
    char *w = s;

    for (; s && *s; s++)
        if (!(((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f))
            *w++ = *s;
    if (w)
        *w = '\0';
}

int ao_extract_summary(const char *reply, struct ao_summary *s, char *reason, size_t len)
{
    struct block bl[MAX_BLOCKS];
    int n = find_blocks(reply, bl, MAX_BLOCKS), rc = -1;
    const char *p = reply, *b, *e, *first_fence = n ? bl[0].start : reply + strlen(reply);
    struct ao_buf desc = {0};
    char head[400];

    memset(s, 0, sizeof *s);
    snprintf(head, sizeof head, "%s", reply);
    for (char *c = head; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    if (strstr(head, "no optimization found") || strstr(head, "no optimisation found") ||
        strstr(head, "no optimization was found")) {
        s->none = 1;
        rc = 0;
        goto out;
    }
    /* the answer for a pair whose difference may be noise: the reply's first word */
    if (strncmp(head + strspn(head, " \t\r\n*#_"), "inconclusive", 12) == 0) {
        s->none = s->inconclusive = 1;
        rc = 0;
        goto out;
    }
    while ((p = next_line(p, &b, &e)) && b < first_fence) {
        if (blank_between(b, e))
            continue;
        if (!s->title) {
            s->title = clean_title(b, e);
            if (!s->title[0]) {
                free(s->title);
                s->title = NULL;
            }
            continue;
        }
        if (label_line(b, e))
            continue;
        if (desc.len)
            ao_buf_append(&desc, " ", 1);
        ao_buf_append(&desc, b, (size_t)(e - b));
    }
    if (!s->title) {
        snprintf(reason, len, "the summary has no title");
        goto out;
    }
    s->summary = trimmed(desc.len ? desc.data : "", desc.len ? desc.data + desc.len : "");
    if (!s->summary[0]) {
        snprintf(reason, len, "the summary has no description");
        goto out;
    }
    if (strlen(s->summary) > 1500)
        strcpy(s->summary + 1497, "...");
    s->before = n > 0 ? snippet(&bl[0]) : ao_strdup("");
    s->after = n > 1 ? snippet(&bl[1]) : ao_strdup("");
    /* a lesson is text every later prompt quotes, and memory import takes
     * none with a control character: no CR of a CRLF reply, no escape */
    drop_controls(s->title), drop_controls(s->summary), drop_controls(s->before), drop_controls(s->after);
    rc = 0;
out:
    if (rc < 0)
        ao_summary_release(s);
    ao_buf_release(&desc);
    free_blocks(bl, n);
    return rc;
}

void ao_summary_release(struct ao_summary *s)
{
    free(s->title);
    free(s->summary);
    free(s->before);
    free(s->after);
    memset(s, 0, sizeof *s);
}
