/* tokens.c - a kernel's source as the compiler's tokens see it, for telling
 * a rewrite from the same kernel with other comments or spacing */
#include <string.h>

#include "core/tokens.h"
#include "core/util.h"

static int word(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c >= 0x80;
}

/* operator characters that would make another token if they touched */
static int joins(char c)
{
    return c && strchr("+-*/%&|^<>=!:.#", c) != NULL;
}

/* Comments go; a run of spaces stays (as one) only between two word
 * characters, or two operator characters, and where a preprocessor line ends; literals stay as written;
 * backslash-newlines are joined. */
static void normalize(const char *s, struct ao_buf *b)
{
    int pending = 0, line_start = 1, directive = 0;
    char last = 0;

    while (*s) {
        if (s[0] == '\\' && s[1] == '\n') {
            s += 2;
            continue;
        }
        if (s[0] == '/' && s[1] == '/') {
            s += strcspn(s, "\n");
            continue;
        }
        if (s[0] == '/' && s[1] == '*') {
            const char *e = strstr(s + 2, "*/");
            s = e ? e + 2 : s + strlen(s);
            pending = 1; /* a comment separates tokens like a space */
            continue;
        }
        if (*s == '\n') {
            if (directive)
                ao_buf_append(b, "\n", 1), last = '\n';
            directive = pending = 0;
            line_start = 1;
            s++;
            continue;
        }
        if (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\f' || *s == '\v') {
            pending = 1;
            s++;
            continue;
        }
        if (line_start && *s == '#')
            directive = 1;
        line_start = 0;
        if (pending && ((word((unsigned char)last) && word((unsigned char)*s)) ||
                        (joins(last) && joins(*s))))
            ao_buf_append(b, " ", 1); /* "a b", and "- -" is not "--" */
        pending = 0;
        if (*s == '"' || *s == '\'') { /* a literal, escapes and all */
            char q = *s;
            const char *p = s + 1;
            while (*p && *p != q && *p != '\n')
                p += p[0] == '\\' && p[1] ? 2 : 1;
            if (*p == q)
                p++;
            ao_buf_append(b, s, (size_t)(p - s));
            last = q;
            s = p;
            continue;
        }
        ao_buf_append(b, s, 1);
        last = *s++;
    }
}

void ao_token_hash(const char *source, char hex[65])
{
    struct ao_buf b = {0};

    normalize(source, &b);
    ao_sha256_hex(b.data ? b.data : "", b.len, hex);
    ao_buf_release(&b);
}
