/* tokens.h - kernels equal but for comments and spacing are one kernel */
#ifndef AO_TOKENS_H
#define AO_TOKENS_H

/* SHA-256 (hex) of source with comments removed and spacing reduced to
 * what separates tokens: two kernels with the same hash compile the same
 * (a repeat with new comments is a duplicate, not a new measurement). */
void ao_token_hash(const char *source, char hex[65]);

#endif
