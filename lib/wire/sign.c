/* sign.c - HMAC-SHA256 signatures over a message's canonical form */
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
#include "core/util.h"

#define PREFIX "hmac-sha256:"
/* what ao_sign_print adds in place of the closing brace, its NUL included */
#define SIG_TAIL (sizeof ",\"sig\":\"" PREFIX "\"}" + 64)

static int cmp_keys(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

/* Sort every object's members by key, in place (cJSON keeps them as a
 * doubly linked list: relink them in order). */
static int sort_keys(cJSON *j)
{
    cJSON **v = NULL;
    size_t n = 0;

    for (cJSON *c = j->child; c; c = c->next, n++)
        if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && sort_keys(c) < 0)
            return -1;
    if (!cJSON_IsObject(j) || n < 2)
        return 0;
    if (!(v = malloc(n * sizeof *v)))
        return -1;
    n = 0;
    for (cJSON *c = j->child; c; c = c->next)
        v[n++] = c;
    qsort(v, n, sizeof *v, cmp_keys);
    for (size_t i = 0; i < n; i++) {
        v[i]->prev = i ? v[i - 1] : v[n - 1]; /* cJSON: the head's prev is the tail */
        v[i]->next = i + 1 < n ? v[i + 1] : NULL;
    }
    j->child = v[0];
    free(v);
    return 0;
}

/* hex HMAC of the canonical form of msg without "sig" */
static int mac_hex(const cJSON *msg, const struct ao_sign_key *key, char hex[65])
{
    cJSON *c = cJSON_Duplicate(msg, 1);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    char *text = NULL;
    int rc = -1;

    if (!c)
        return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(c, "sig");
    if (sort_keys(c) < 0 || !(text = cJSON_PrintUnformatted(c)))
        goto out;
    if (!HMAC(EVP_sha256(), key->k, sizeof key->k, (const unsigned char *)text, strlen(text), mac,
              &n) || n != 32)
        goto out;
    for (unsigned i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", mac[i]);
    rc = 0;
out:
    cJSON_free(text);
    cJSON_Delete(c);
    return rc;
}

char *ao_sign_print(const cJSON *msg, const struct ao_sign_key *key)
{
    char hex[65], *text, *out = NULL;
    cJSON *bare = NULL;
    size_t n;

    if (!cJSON_IsObject(msg) || mac_hex(msg, key, hex) < 0)
        return NULL;
    /* the message as it was built (its keys in their order, for a reader),
     * less a signature it carried (a dead letter's) */
    if (cJSON_GetObjectItemCaseSensitive(msg, "sig")) {
        if (!(bare = cJSON_Duplicate(msg, 1)))
            return NULL;
        cJSON_DeleteItemFromObjectCaseSensitive(bare, "sig");
    }
    if (!(text = cJSON_PrintUnformatted(bare ? bare : msg)))
        goto out;
    n = strlen(text); /* "{...}": the signature goes in before the closing brace */
    if ((out = cJSON_malloc(n + SIG_TAIL))) {
        memcpy(out, text, n - 1);
        snprintf(out + n - 1, SIG_TAIL + 1, "%s\"sig\":\"" PREFIX "%s\"}", n > 2 ? "," : "", hex);
    }
out:
    cJSON_free(text);
    cJSON_Delete(bare);
    return out;
}

int ao_sign_check(const cJSON *msg, const struct ao_sign_key *key, char *reason, size_t len)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(msg, "sig");
    char hex[65];

    if (!cJSON_IsString(s)) {
        snprintf(reason, len, "not signed: messages are accepted only with the deployment's "
                 "signature (sign.h)");
        return -1;
    }
    if (strncmp(s->valuestring, PREFIX, strlen(PREFIX)) != 0 ||
        strlen(s->valuestring) != strlen(PREFIX) + 64) {
        snprintf(reason, len, "the signature is not hmac-sha256");
        return -1;
    }
    if (mac_hex(msg, key, hex) < 0) {
        snprintf(reason, len, "out of memory checking the signature");
        return -1;
    }
    if (CRYPTO_memcmp(hex, s->valuestring + strlen(PREFIX), 64) != 0) {
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

/* Could anyone but us (and root) have put or replaced what is at path?
 * Every directory on the way must be ours or root's, and not writable by
 * others unless sticky (/tmp); the last one ours alone.  0, or -1 + err. */
static int ours_alone(const char *dir, char *err, size_t errlen)
{
    char p[700];
    struct stat st;
    int last = 1;

    snprintf(p, sizeof p, "%s", dir);
    for (;;) {
        char *slash = strrchr(p, '/');
        const char *at = p[0] ? p : "/";
        if (lstat(at, &st) < 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "'%s' is not a directory", at);
            return -1;
        }
        if ((last ? st.st_uid != geteuid() : st.st_uid != geteuid() && st.st_uid != 0) ||
            ((st.st_mode & 022) && (last || !(st.st_mode & S_ISVTX)))) {
            snprintf(err, errlen, "the signing key's directory '%s' is not safe: '%s' has owner "
                     "uid %u and mode %03o (it must be yours, and writable by you alone)", dir, at,
                     (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
            return -1;
        }
        if (!slash || (slash == p && !p[1]))
            return 0; /* a relative path's start, or the root */
        slash[slash == p] = '\0'; /* "/a" goes on to "/" */
        last = 0;
    }
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
        snprintf(def, sizeof def, "%s/sign.key", ao_state_dir());
        path = def;
        /* with HOME unset the state dir is under /tmp: another user may
         * have made it, or a key in it, first */
        if (ao_mkdirs(ao_state_dir(), 0700) == 0 && ours_alone(ao_state_dir(), err, errlen) < 0)
            return -1;
        /* written whole under a name of its own, then linked into place:
         * stages started together (a pipe of them) never read a key half
         * written, and the first link wins */
        snprintf(tmp, sizeof tmp, "%s/.sign.key-XXXXXX", ao_state_dir());
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
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "the signing key '%s' may be read by others (mode %03o): chmod 600",
                 path, (unsigned)(st.st_mode & 0777));
        return -1;
    }
    if (!(text = ao_read_file_max(path, 4096, NULL, e, sizeof e))) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    rc = parse_key(text, key);
    memset(text, 0, strlen(text));
    free(text);
    if (rc < 0)
        snprintf(err, errlen, "the signing key '%s' is not %d hex digits", path,
                 2 * AO_SIGN_KEY_BYTES);
    return rc;
}
