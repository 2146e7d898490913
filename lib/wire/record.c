/* record.c - records as tables of fields (record.h): absent values, the
 * fields decoded with their kinds checked, encoded back */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "wire/record.h"

#define AT(msg, f, T) ((T *)((char *)(msg) + (f)->offset))
#define CAT(msg, f, T) ((const T *)((const char *)(msg) + (f)->offset))

void ao_msg_init(const struct ao_msg_type *t, void *msg)
{
    memset(msg, 0, t->size);
    for (int i = 0; i < t->nfields; i++) {
        const struct ao_field *f = &t->fields[i];
        switch (f->kind) {
        case AO_F_INT: *AT(msg, f, long long) = AO_ABSENT_INT; break;
        case AO_F_NUM: *AT(msg, f, double) = NAN; break;
        case AO_F_BOOL: *AT(msg, f, int) = -1; break;
        case AO_F_ENUM: *AT(msg, f, int) = 0; break;
        default: break;
        }
    }
}

void ao_msg_release(const struct ao_msg_type *t, void *msg)
{
    for (int i = 0; i < t->nfields; i++) {
        const struct ao_field *f = &t->fields[i];
        if (f->kind == AO_F_STR)
            free(*AT(msg, f, char *));
        else if (f->kind == AO_F_JSON)
            cJSON_Delete(*AT(msg, f, cJSON *));
    }
    ao_msg_init(t, msg);
}

static int in_enum(const char *const *en, const char *s)
{
    for (; *en; en++)
        if (strcmp(*en, s) == 0)
            return 1;
    return 0;
}

static int decode_field(const struct ao_field *f, const cJSON *v, void *msg,
                        char *err, size_t errlen)
{
    switch (f->kind) {
    case AO_F_STR:
        if (!cJSON_IsString(v)) {
            snprintf(err, errlen, "field '%s' must be a string", f->name);
            return -1;
        }
        if (f->enums && !in_enum(f->enums, v->valuestring)) {
            snprintf(err, errlen, "field '%s' has unknown value '%.40s'", f->name, v->valuestring);
            return -1;
        }
        *AT(msg, f, char *) = ao_strdup(v->valuestring);
        return 0;
    case AO_F_INT:
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
            fabs(v->valuedouble) > 9007199254740992.0) {
            snprintf(err, errlen, "field '%s' must be an integer", f->name);
            return -1;
        }
        *AT(msg, f, long long) = (long long)v->valuedouble;
        return 0;
    case AO_F_NUM:
        if (!cJSON_IsNumber(v)) {
            snprintf(err, errlen, "field '%s' must be a number", f->name);
            return -1;
        }
        *AT(msg, f, double) = v->valuedouble;
        return 0;
    case AO_F_BOOL:
        if (!cJSON_IsBool(v)) {
            snprintf(err, errlen, "field '%s' must be true or false", f->name);
            return -1;
        }
        *AT(msg, f, int) = cJSON_IsTrue(v);
        return 0;
    case AO_F_ENUM:
        for (int i = 0; cJSON_IsString(v) && f->enums[i]; i++)
            if (strcmp(f->enums[i], v->valuestring) == 0) {
                *AT(msg, f, int) = i + 1;
                return 0;
            }
        snprintf(err, errlen, cJSON_IsString(v) ? "field '%s' has unknown value '%.40s'" : "field '%s' must be a string%.0s",
                 f->name, cJSON_IsString(v) ? v->valuestring : "");
        return -1;
    case AO_F_JSON:
        if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) {
            snprintf(err, errlen, "field '%s' must be an object or an array", f->name);
            return -1;
        }
        *AT(msg, f, cJSON *) = cJSON_Duplicate(v, 1);
        return 0;
    }
    return -1; /* (every kind is answered above) */
}

int ao_record_decode_as(const struct ao_msg_type *t, const char *kind, const cJSON *j, void *msg, char *err,
                        size_t errlen)
{
    const cJSON *item;

    ao_msg_init(t, msg);
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "%s is not a JSON object", t->name);
        return -1;
    }
    cJSON_ArrayForEach(item, j) {
        int found = 0;
        for (int i = 0; i < t->nfields && !found; i++)
            found = strcmp(t->fields[i].name, item->string) == 0;
        if (!found) {
            snprintf(err, errlen, "%s%s has unknown field '%.40s'", t->name, kind, item->string);
            goto fail;
        }
    }
    for (int i = 0; i < t->nfields; i++) {
        const struct ao_field *f = &t->fields[i];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, f->name);
        if (!v || cJSON_IsNull(v)) {
            if (f->required) {
                snprintf(err, errlen, "%s%s lacks field '%s'", t->name, kind, f->name);
                goto fail;
            }
            continue;
        }
        if (decode_field(f, v, msg, err, errlen) < 0)
            goto fail;
    }
    return 0;
fail:
    ao_msg_release(t, msg);
    return -1;
}

int ao_record_decode(const struct ao_msg_type *t, const cJSON *j, void *msg, char *err,
                     size_t errlen)
{
    return ao_record_decode_as(t, "", j, msg, err, errlen);
}

cJSON *ao_msg_encode(const struct ao_msg_type *t, const void *msg)
{
    cJSON *j = cJSON_CreateObject();

    for (int i = 0; i < t->nfields; i++) {
        const struct ao_field *f = &t->fields[i];
        cJSON *v = NULL;
        switch (f->kind) {
        case AO_F_STR:
            if (*CAT(msg, f, char *))
                v = cJSON_CreateString(*CAT(msg, f, char *));
            break;
        case AO_F_INT:
            if (*CAT(msg, f, long long) != AO_ABSENT_INT)
                v = cJSON_CreateNumber((double)*CAT(msg, f, long long));
            break;
        case AO_F_NUM:
            /* JSON has no NaN or infinity: a non-finite number is absent */
            if (isfinite(*CAT(msg, f, double)))
                v = cJSON_CreateNumber(*CAT(msg, f, double));
            break;
        case AO_F_BOOL:
            if (*CAT(msg, f, int) >= 0)
                v = cJSON_CreateBool(*CAT(msg, f, int));
            break;
        case AO_F_JSON:
            if (*CAT(msg, f, cJSON *))
                v = cJSON_Duplicate(*CAT(msg, f, cJSON *), 1);
            break;
        case AO_F_ENUM:
            for (int e = 0; e < *CAT(msg, f, int) && f->enums[e]; e++)
                if (e + 1 == *CAT(msg, f, int))
                    v = cJSON_CreateString(f->enums[e]);
            break;
        }
        if (v)
            cJSON_AddItemToObject(j, f->name, v);
    }
    return j;
}
