/* sign.c - HMAC-SHA256 signatures over a message's text as sent */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "wire/sign.h"
#include "core/alloc.h"
#include "core/rc.h"
#include "core/util.h"

#define PREFIX "hmac-sha256:"
/* a signed message ends with its signature: ,"sig":"hmac-sha256:<64 hex>"} */
#define SIG_OPEN "\"sig\":\"" PREFIX
#define SIG_MEMBER (sizeof SIG_OPEN - 1 + 64 + 2) /* "sig":"hmac-sha256:<hex>"} */
/* what ao_sign_print adds in place of the closing brace, its NUL included */
#define SIG_TAIL (1 + SIG_MEMBER + 1)

static int hmac_hex(const struct ao_sign_key *key, const char *text, size_t n, char hex[65])
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    static const char digits[] = "0123456789abcdef";

    if (!HMAC(EVP_sha256(), key->k, sizeof key->k, (const unsigned char *)text, n, mac, &len) ||
        len != 32)
        return -1;
    for (unsigned i = 0; i < len; i++) {
        hex[2 * i] = digits[mac[i] >> 4];
        hex[2 * i + 1] = digits[mac[i] & 15];
    }
    hex[64] = '\0';
    OPENSSL_cleanse(mac, sizeof mac);
    return 0;
}

char *ao_sign_print(const cJSON *msg, const struct ao_sign_key *key)
{
    char hex[65], *text, *out = NULL;
    cJSON *bare = NULL;
    size_t n;

    if (!cJSON_IsObject(msg))
        return NULL;
    /* the message as it was built (its keys in their order, for a reader),
     * less a signature it carried (a dead letter's) */
    if (cJSON_GetObjectItemCaseSensitive(msg, "sig")) {
        bare = cJSON_Duplicate(msg, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(bare, "sig");
    }
    text = cJSON_PrintUnformatted(bare ? bare : msg);
    ao_utf8_clean(text); /* what goes out is UTF-8, whatever a compiler wrote into a field */
    n = strlen(text); /* "{...}": signed as it is, the signature goes in before its closing brace */
    if (hmac_hex(key, text, n, hex) == 0) {
        out = cJSON_malloc(n + SIG_TAIL);
        memcpy(out, text, n - 1);
        snprintf(out + n - 1, SIG_TAIL + 1, "%s" SIG_OPEN "%s\"}", n > 2 ? "," : "", hex);
    }
    cJSON_free(text);
    cJSON_Delete(bare);
    return out;
}

static int lower_hex(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return 0;
    return 1;
}

int ao_sign_check(const char *raw, size_t n, const struct ao_sign_key *key, char *reason, size_t len)
{
    const char *at = n >= SIG_MEMBER + 1 ? raw + n - SIG_MEMBER : NULL, *hexp;
    char hex[65], *body;
    size_t body_len;
    int rc;

    if (!at || memcmp(at, "\"sig\":\"", 7) != 0) {
        snprintf(reason, len, memmem(raw, n, "\"sig\"", 5)
                                  ? "the signature is not the message's last member, as a stage "
                                    "writes it (sign.h)"
                                  : "not signed: messages are accepted only with the deployment's "
                                    "signature (sign.h)");
        return -1;
    }
    hexp = at + sizeof SIG_OPEN - 1; /* raw need not end in a NUL: every read is within n */
    if (memcmp(at, SIG_OPEN, sizeof SIG_OPEN - 1) != 0 || !lower_hex(hexp, 64) ||
        memcmp(hexp + 64, "\"}", 2) != 0) {
        snprintf(reason, len, "the signature is not hmac-sha256");
        return -1;
    }
    /* what was signed: the text without its signature member */
    if (at - raw == 1 && raw[0] == '{') {
        body_len = 1; /* "{}" */
    } else if (at - raw >= 3 && at[-1] == ',') { /* "{," would pass for the empty object's "{}" */
        body_len = (size_t)(at - raw) - 1;
    } else {
        snprintf(reason, len, "the signature is not the message's last member, as a stage writes "
                 "it (sign.h)");
        return -1;
    }
    body = ao_malloc(body_len + 1);
    memcpy(body, raw, body_len);
    body[body_len] = '}';
    rc = hmac_hex(key, body, body_len + 1, hex);
    free(body);
    if (rc < 0) {
        snprintf(reason, len, "cannot compute the signature");
        return -1;
    }
    if (CRYPTO_memcmp(hex, hexp, 64) != 0) {
        snprintf(reason, len, "the signature does not match: forged, altered, or signed with "
                 "another key");
        return -1;
    }
    return 0;
}

static int parse_key(const char *text, struct ao_sign_key *key)
{
    for (int i = 0; i < AO_SIGN_KEY_BYTES; i++) {
        unsigned v;
        if (sscanf(text + 2 * i, "%2x", &v) != 1)
            return -1;
        key->k[i] = (unsigned char)v;
    }
    return strspn(text, "0123456789abcdefABCDEF") == 2 * AO_SIGN_KEY_BYTES ? 0 : -1;
}

int ao_sign_key_load(struct ao_sign_key *key, char *err, size_t errlen)
{
    const char *path = getenv("ACCELOPT_SIGN_KEY_FILE");
    char def[700], tmp[720], e[AO_ERRLEN], *text;
    struct stat st;
    int rc;

    if (!path || !*path) {
        /* the default: made once per machine and user, shared by its stages */
        unsigned char rnd[AO_SIGN_KEY_BYTES];
        char hex[2 * AO_SIGN_KEY_BYTES + 2];
        int fd;
        if (ao_path(def, sizeof def, ao_state_dir(), "sign.key", err, errlen) < 0 ||
            ao_path(tmp, sizeof tmp, ao_state_dir(), ".sign.key-XXXXXX", err, errlen) < 0)
            return AO_RC_SETTING;
        path = def;
        /* a state dir another user can write (or made first) could hold a
         * key of theirs: a setting to fix (-2) */
        if (ao_mkdirs(ao_state_dir(), 0700) == 0 && ao_dir_ours_alone(ao_state_dir(), "the signing key's directory", err, errlen) < 0)
            return AO_RC_SETTING;
        /* written whole under a name of its own, then linked into place:
         * stages started together (a pipe of them) never read a key half
         * written, and the first link wins */
        if (access(def, F_OK) < 0 && ao_mkdirs(ao_state_dir(), 0700) == 0 &&
            (fd = mkstemp(tmp)) >= 0) {
            int ok = ao_random_bytes(rnd, sizeof rnd) == 0 && fchmod(fd, 0600) == 0;
            for (int i = 0; i < AO_SIGN_KEY_BYTES; i++)
                snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
            hex[2 * AO_SIGN_KEY_BYTES] = '\n';
            ok = ok && write(fd, hex, sizeof hex - 1) == (ssize_t)(sizeof hex - 1);
            ok = close(fd) == 0 && ok;
            ok = ok && (link(tmp, def) == 0 || errno == EEXIST);
            unlink(tmp);
            if (!ok) {
                snprintf(err, errlen, "cannot make the signing key '%s'", def);
                return -1;
            }
        }
    }
    if (lstat(path, &st) < 0) {
        snprintf(err, errlen, "no signing key at '%s': %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        snprintf(err, errlen, "the signing key '%s' is not a file of yours (owner uid %u): "
                 "whoever owns it can sign as this deployment", path, (unsigned)st.st_uid);
        return AO_RC_SETTING;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "the signing key '%s' may be read by others (mode %03o): chmod 600",
                 path, (unsigned)(st.st_mode & 0777));
        return AO_RC_SETTING;
    }
    if (!(text = ao_read_file_max(path, 4096, NULL, e, sizeof e))) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    rc = parse_key(text, key);
    memset(text, 0, strlen(text));
    free(text);
    if (rc < 0) {
        snprintf(err, errlen, "the signing key '%s' is not %d hex digits", path,
                 2 * AO_SIGN_KEY_BYTES);
        return AO_RC_SETTING;
    }
    return rc;
}
