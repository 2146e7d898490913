/* inputs.c - the profiler's tensors: inputs drawn from the task's
 * distributions (and the timed calls' stress draws), and outputs checked
 * against the reference */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "measure/job.h"
#include "measure/profiler_int.h"
#include "wire/verdict.h"

void prof_fill(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n)
{
    for (size_t i = 0; i < n; i += 2) {
        double a, b;
        if (x->kind == AO_DIST_UNIFORM) {
            a = x->a + (x->b - x->a) * ao_rng_unit(r);
            b = x->a + (x->b - x->a) * ao_rng_unit(r);
        } else {
            ao_rng_normal2(r, &a, &b);
            a = x->a + x->b * a;
            b = x->a + x->b * b;
            if (x->kind == AO_DIST_ABS_NORMAL) {
                a = fabs(a);
                b = fabs(b);
            }
        }
        p[i] = (float)a;
        if (i + 1 < n)
            p[i + 1] = (float)b;
    }
}

/* Inputs of timed calls, drawn fresh for every call: one 64-bit draw per
 * element (normals as a scaled sum of four 16-bit uniforms, which keeps the
 * mean and spread).  The verified timed sets are drawn the same way, so a
 * kernel cannot tell a checked timed call from an unchecked one. */
void prof_fill_timed(struct ao_rng *r, const struct ao_dist *x, float *p, size_t n)
{
    const double sc = 1.0 / 65536.0, root3 = 1.7320508075688772;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = ao_rng_next(r);
        double a;
        if (x->kind == AO_DIST_UNIFORM) {
            a = x->a + (x->b - x->a) * (((double)(v >> 11) + 0.5) * (1.0 / 9007199254740992.0));
        } else {
            double u = (double)(v & 0xffff) + (double)((v >> 16) & 0xffff) +
                       (double)((v >> 32) & 0xffff) + (double)(v >> 48);
            a = ((u + 2.0) * sc - 2.0) * root3; /* mean 0, variance 1 */
            a = x->a + x->b * a;
            if (x->kind == AO_DIST_ABS_NORMAL)
                a = fabs(a);
        }
        p[i] = (float)a;
    }
}

int prof_dataset_alloc(const struct ao_task *t, struct dataset *d, const long long *dims,
                       int with_outputs)
{
    memcpy(d->dims, dims, sizeof d->dims);
    for (int i = 0; i < t->ninputs + (with_outputs ? t->noutputs : 0); i++)
        if (!(d->t[i] = malloc(sizeof(float) * ao_task_elems(t, i, dims))))
            return -1;
    return 0;
}

void prof_dataset_free(struct dataset *d)
{
    for (int i = 0; i < AO_MAX_TENSORS; i++) {
        free(d->t[i]);
        d->t[i] = NULL;
    }
}

/* relative L2 error in double; +inf when the output is not finite */
static double rel_l2(const float *k, const float *r, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)k[i] - (double)r[i];
        if (!isfinite(k[i]))
            return INFINITY;
        num += d * d;
        den += (double)r[i] * r[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static int add_error(cJSON *arr, const char *set, const char *output, double e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return -1;
    }
    cJSON_AddStringToObject(o, "set", set);
    cJSON_AddStringToObject(o, "output", output);
    if (isfinite(e))
        cJSON_AddNumberToObject(o, "rel_l2", e);
    else
        cJSON_AddStringToObject(o, "rel_l2", "non-finite");
    return 0;
}

/* Compare outputs of a call against a reference; sets j->status on failure. */
int prof_check_outputs(struct ao_job *j, const struct ao_task *t, float **out,
                       const struct dataset *ref, const char *set, cJSON *errors,
                       double *max_err)
{
    for (int o = 0; o < t->noutputs; o++) {
        double e = rel_l2(out[o], ref->t[t->ninputs + o],
                          ao_task_elems(t, t->ninputs + o, ref->dims));
        add_error(errors, set, t->t[t->ninputs + o].name, e);
        if (!(e <= *max_err) && isfinite(*max_err))
            *max_err = e;
        if (!(e <= t->tolerance)) {
            j->status = AO_V_INCORRECT;
            if (isfinite(e))
                snprintf(j->reason, sizeof j->reason, "output '%s' on input set '%s': relative "
                         "L2 error %.3g over the tolerance %.3g", t->t[t->ninputs + o].name, set,
                         e, t->tolerance);
            else
                snprintf(j->reason, sizeof j->reason, "output '%s' on input set '%s' has NaN or "
                         "infinite values (an overflow, or an element never written: outputs "
                         "are poisoned with NaN before each call)", t->t[t->ninputs + o].name, set);
            return -1;
        }
    }
    return 0;
}
