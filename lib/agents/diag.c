/* diag.c - why a kernel failed, as the fixer's model is shown it */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/diag.h"
#include "core/util.h"

/* "FILE:LINE:..." or "FILE: In function ...": the file a compiler line is
 * about, or NULL for a quoted source line, a caret line or other text. */
static int located(const char *line, size_t n, const char **file, size_t *flen)
{
    size_t i = 0;

    if (n && (line[0] == ' ' || line[0] == '\t')) /* "   12 | code", "      |   ^~~" */
        return 0;
    while (i < n && line[i] != ':' && line[i] != ' ')
        i++;
    if (i == 0 || i >= n || line[i] != ':')
        return 0;
    if (!(i + 1 < n && (isdigit((unsigned char)line[i + 1]) || line[i + 1] == ' ')))
        return 0;
    *file = line;
    *flen = i;
    return 1;
}

/* The kernel's own file: kernel.c, kernel.i (gcc), kernel.cu, also as
 * nvcc names a line, "kernel.cu(5)", or kernel.py (the trn build's lines). */
static int the_kernel(const char *file, size_t n)
{
    static const char *const names[] = {"kernel.c", "kernel.i", "kernel.cu", "kernel.py", NULL};
    const char *paren = memchr(file, '(', n);

    if (paren && file[n - 1] == ')') {
        for (const char *d = paren + 1; d < file + n - 1; d++)
            if (!isdigit((unsigned char)*d))
                return 0;
        n = (size_t)(paren - file);
    }
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == n && memcmp(file, names[i], n) == 0)
            return 1;
    return 0;
}

/* The toolchain speaking of itself ("/usr/bin/ld: ...", "collect2: ..."):
 * its words are the kernel's business (an undefined reference). */
static int toolchain(const char *file, size_t n)
{
    static const char *const tools[] = {"ld", "collect2", "cc", "gcc", "cc1", "clang", "nvcc",
                                        "ptxas", "nvlink", "fatbinary", NULL};
    const char *base = file;

    for (size_t i = 0; i < n; i++)
        if (file[i] == '/')
            base = file + i + 1;
    for (int i = 0; tools[i]; i++)
        if (strlen(tools[i]) == (size_t)(file + n - base) && memcmp(base, tools[i], strlen(tools[i])) == 0)
            return 1;
    return 0;
}

/* Append line with every absolute path in it shown as <path>: a token
 * that begins with '/' after a space, a quote or a bracket and holds
 * another '/' (so "a / b" and "x/2" stay as they are). */
static void put_scrubbed(struct ao_buf *b, const char *line, size_t n)
{
    for (size_t i = 0; i < n;) {
        int starts = line[i] == '/' && (i == 0 || strchr(" \t'\"`(<[", line[i - 1]));
        size_t j = i + 1;
        if (starts) {
            while (j < n && (isalnum((unsigned char)line[j]) || strchr("._-+/", line[j])))
                j++;
            if (memchr(line + i + 1, '/', j - i - 1)) {
                ao_buf_printf(b, "<path>");
                i = j;
                continue;
            }
        }
        ao_buf_append(b, line + i, 1);
        i++;
    }
    ao_buf_append(b, "\n", 1);
}

char *ao_diag_for_model(const char *status, const char *reason, const char *diagnostics,
                        size_t max)
{
    struct ao_buf b = {0};
    int keep = 1; /* the lines under a kept location are kept */

    ao_buf_printf(&b, "%s", status ? status : "failed");
    if (reason && *reason) {
        ao_buf_printf(&b, ": ");
        put_scrubbed(&b, reason, strlen(reason));
    } else {
        ao_buf_append(&b, "\n", 1);
    }
    for (const char *p = diagnostics ? diagnostics : ""; *p;) {
        size_t n = strcspn(p, "\n"), flen;
        const char *file;
        if (strncmp(p, "In file included from", 21) == 0 || strncmp(p, "                 from", 21) == 0)
            keep = 0;
        else if (located(p, n, &file, &flen))
            keep = the_kernel(file, flen) || toolchain(file, flen);
        else if (n == 0 || !(p[0] == ' ' || p[0] == '\t'))
            keep = 1; /* "compilation terminated.", the linker's words */
        if (keep)
            put_scrubbed(&b, p, n);
        p += n;
        if (*p == '\n')
            p++;
    }
    if (!b.data)
        return NULL;
    while (b.len && b.data[b.len - 1] == '\n') /* the template puts it on its own lines */
        b.data[--b.len] = '\0';
    if (b.len > max) {
        size_t cut = max > 40 ? max - 40 : max;
        b.len = cut;
        b.data[cut] = '\0';
        ao_buf_printf(&b, "\n[cut at %zu bytes]\n", cut);
    }
    return b.data;
}
