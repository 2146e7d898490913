/* sign.h - results signed by the profiler and checked by the selector
 *
 * Anyone who can produce to a topic can write a `result`; only a holder of
 * the signing key can write one the selector accepts.  The signature is an
 * HMAC-SHA256 over the message's text as sent without its signature, which
 * is the last member: "{...}" is sent as {...,"sig":"hmac-sha256:<hex>"}.
 * The check is of the bytes received: no canonical form to rebuild (a copy,
 * a sort and a print of every message at both ends), and the bytes checked
 * are the bytes parsed.  The key is 32 random bytes, hex, in a file only
 * its owner may read: ACCELOPT_SIGN_KEY_FILE, else <state dir>/sign.key
 * (made on first use).
 * Profilers and selectors of one deployment share it (docs/OPERATING.md). */
#ifndef AO_SIGN_H
#define AO_SIGN_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define AO_SIGN_KEY_BYTES 32

struct ao_sign_key {
    unsigned char k[AO_SIGN_KEY_BYTES];
};

/* Load the key (making the default file if there is none); 0, -1 + err
 * (none to be had now), or AO_RC_SETTING + err for a setting a restart will not fix:
 * a key file that others may read or own, one that is no key, or a state
 * directory that is not ours alone (issue 56: exit 2, not 1). */
int ao_sign_key_load(struct ao_sign_key *key, char *err, size_t errlen);

/* msg as compact JSON text, signed ("sig" last, any earlier one replaced;
 * msg itself untouched).  Free it with cJSON_free; NULL when msg is not an
 * object (or the hash fails). */
char *ao_sign_print(const cJSON *msg, const struct ao_sign_key *key);

/* 0 if the n bytes of a message as received (NUL-terminated or not) end
 * with a valid signature, else -1 with the reason. */
int ao_sign_check(const char *raw, size_t n, const struct ao_sign_key *key, char *reason,
                  size_t len);

#endif
