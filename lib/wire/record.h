/* record.h - a record as a table of fields: the messages of msg.h and the
 * records without an envelope (the measurement the profile cache keeps,
 * the run's config) are each a C struct described by one such table, so
 * that one decoder checks them all and one encoder writes them */
#ifndef AO_RECORD_H
#define AO_RECORD_H

#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define AO_ABSENT_INT LLONG_MIN /* an optional integer that is not there */
/* optional numbers are NAN when absent, optional strings and JSON NULL,
 * optional booleans -1 */

/* AO_F_ENUM: an int holding 1 + the index of its name in `enums` (0:
 * absent), so that an enum whose first named value is 1 (ao_verdict) is
 * stored as itself. */
enum ao_field_kind { AO_F_STR, AO_F_INT, AO_F_NUM, AO_F_BOOL, AO_F_JSON, AO_F_ENUM };

struct ao_field {
    const char *name;
    enum ao_field_kind kind;
    size_t offset;
    int required;
    const char *const *enums; /* NULL-terminated allowed strings, or NULL */
};

struct ao_msg_type {
    const char *name; /* "result", ... */
    size_t size;      /* sizeof the struct */
    const struct ao_field *fields;
    int nfields;
};

/* A record without an envelope (the measurement the profile cache keeps,
 * the run's config): its fields decoded as a message's are, unknown ones
 * refused, required ones insisted on.  0, or -1 + err (out released). */
int ao_record_decode(const struct ao_msg_type *t, const cJSON *j, void *out, char *err, size_t errlen);

/* Set every field of msg (of type t) to absent. */
void ao_msg_init(const struct ao_msg_type *t, void *msg);
/* Free what the fields own and reset to absent. */
void ao_msg_release(const struct ao_msg_type *t, void *msg);

/* ao_record_decode, with kind (" message", or "") after the type's name in
 * the errors. */
int ao_record_decode_as(const struct ao_msg_type *t, const char *kind, const cJSON *j, void *msg, char *err,
                        size_t errlen);
/* Encode msg as a new JSON object (the caller deletes it). */
cJSON *ao_msg_encode(const struct ao_msg_type *t, const void *msg);

#endif
