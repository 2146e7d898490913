/* extract.h - reading real model replies: the kernel's code block, and the
 * summarizer's title, description and before/after snippets */
#ifndef AO_EXTRACT_H
#define AO_EXTRACT_H

#include <stddef.h>

/* The kernel in a reply for a target ("cpu", "cuda"): among the fenced
 * blocks (``` or ~~~, any indent, any language tag, an unclosed last block
 * included) the first in a language the target compiles that defines
 * `kernel`; else the first block of any language that does; else the first
 * in a language the target compiles.  Text up to a closing </think> (a
 * reasoning model's drafts) is skipped.  Returns the code (caller frees), or
 * NULL with reason filled ("the reply had no code block", ...). */
char *ao_extract_code(const char *reply, const char *target, char *reason, size_t len);

/* A distilled experience. */
struct ao_summary {
    char *title, *summary, *before, *after; /* before/after may be "" */
    int none;                               /* "no optimization found", or: */
    int inconclusive;                       /* "inconclusive" (none set too) */
};

/* Parse a summarizer reply: a title line (bold, heading or plain), a
 * description, then the original and optimized snippets as the first two
 * code blocks (each cut to 40 lines); or a reply saying no optimization was
 * found (none = 1).  0, or -1 with reason when it has no title or no
 * description. */
int ao_extract_summary(const char *reply, struct ao_summary *s, char *reason, size_t len);
void ao_summary_release(struct ao_summary *s);

#endif
