/* test_extract.c - code and summaries out of the corpus of realistic model
 * replies in tests/replies/ (NAME.md with NAME.expect beside it) */
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agents/extract.h"
#include "check.h"
#include "core/util.h"

static char *expect_of(const char *md)
{
    char path[600], err[AO_ERRLEN];
    snprintf(path, sizeof path, "%.*s.expect", (int)(strlen(md) - 3), md);
    return ao_read_file(path, NULL, err, sizeof err);
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void code_case(const char *md)
{
    char err[AO_ERRLEN], reason[AO_ERRLEN] = "";
    char *reply = ao_read_file(md, NULL, err, sizeof err), *exp = expect_of(md), *code;

    if (!reply || !exp) {
        CHECK(0, "%s: reply and .expect readable", md);
        goto out;
    }
    code = ao_extract_code(reply, "cpu", reason, sizeof reason);
    if (strncmp(exp, "CODE\n", 5) == 0)
        CHECK(code && strcmp(code, exp + 5) == 0, "%s: the kernel is extracted exactly%s%s", md,
              code ? "" : ": ", code ? "" : reason);
    else {
        exp[strcspn(exp, "\n")] = '\0';
        CHECK(!code && strstr(reason, exp + 6), "%s: refused with '%s' (got '%s')", md, exp + 6,
              reason);
    }
    free(code);
out:
    free(reply);
    free(exp);
}

static void summary_case(const char *md)
{
    char err[AO_ERRLEN], reason[AO_ERRLEN] = "";
    char *reply = ao_read_file(md, NULL, err, sizeof err), *exp = expect_of(md);
    cJSON *e = exp ? cJSON_Parse(exp) : NULL;
    struct ao_summary s;
    int rc;

    if (!reply || !e) {
        CHECK(0, "%s: reply and .expect readable", md);
        goto out;
    }
    rc = ao_extract_summary(reply, &s, reason, sizeof reason);
    if (jstr(e, "error")) {
        CHECK(rc < 0 && strstr(reason, jstr(e, "error")), "%s: refused (%s)", md, reason);
    } else if (cJSON_IsTrue(cJSON_GetObjectItem(e, "none"))) {
        CHECK(rc == 0 && s.none && s.inconclusive == cJSON_IsTrue(cJSON_GetObjectItem(e, "inconclusive")),
              "%s: %s", md, cJSON_IsTrue(cJSON_GetObjectItem(e, "inconclusive")) ? "inconclusive" : "no optimization found");
    } else {
        CHECK(rc == 0 && !s.none && !strcmp(s.title, jstr(e, "title")), "%s: title '%s'", md,
              rc ? reason : s.title);
        CHECK(rc == 0 && strstr(s.summary, jstr(e, "summary")), "%s: description", md);
        CHECK(rc == 0 && strstr(s.before, jstr(e, "before")) && !strstr(s.before, "```"),
              "%s: original snippet", md);
        CHECK(rc == 0 && strstr(s.after, jstr(e, "after")), "%s: optimized snippet", md);
    }
    if (rc == 0)
        ao_summary_release(&s);
out:
    cJSON_Delete(e);
    free(reply);
    free(exp);
}

int main(void)
{
    glob_t g;

    CHECK(glob("tests/replies/code-*.md", 0, NULL, &g) == 0 && g.gl_pathc >= 15,
          "the code corpus is there");
    for (size_t i = 0; i < g.gl_pathc; i++)
        code_case(g.gl_pathv[i]);
    globfree(&g);
    CHECK(glob("tests/replies/summary-*.md", 0, NULL, &g) == 0 && g.gl_pathc >= 4,
          "the summary corpus is there");
    for (size_t i = 0; i < g.gl_pathc; i++)
        summary_case(g.gl_pathv[i]);
    globfree(&g);
    return CHECK_DONE();
}
