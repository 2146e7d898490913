/* task.h - a benchmark task (nkibench/<task>/task.json): tensors, sizes, work */
#ifndef AO_TASK_H
#define AO_TASK_H

#include <stddef.h>

#define AO_MAX_TENSORS 8
#define AO_MAX_DIMS 8
#define AO_MAX_RANK 4
#define AO_MAX_CONSTRAINTS 4

enum ao_dist_kind { AO_DIST_NORMAL, AO_DIST_ABS_NORMAL, AO_DIST_UNIFORM };

struct ao_dist {
    enum ao_dist_kind kind;
    double a, b;          /* normal: mean, std; uniform: low, high */
};

struct ao_tensor {
    char name[32];
    int rank;
    int dim[AO_MAX_RANK]; /* indices into ao_task.dims */
    struct ao_dist dist;  /* how inputs are drawn */
    struct ao_dist stress; /* drawn in the stress check set (e.g. scores that
                              overflow exp unless the max is subtracted) */
};

struct ao_task {
    char name[64];
    char dir[512];        /* the task's directory (reference.c, baseline.c) */
    char signature[512];  /* the C prototype of `kernel`, without the ';' */
    int ninputs, noutputs;
    struct ao_tensor t[AO_MAX_TENSORS]; /* inputs, then outputs */
    int ndims;
    char dims[AO_MAX_DIMS][16];         /* size names in order of first appearance */
    int dim_fixed[AO_MAX_DIMS];         /* may not change in the unannounced shape */
    int dim_multiple[AO_MAX_DIMS];      /* must stay a multiple of this */
    /* each output element at index i of this size depends only on the
     * inputs at index i of it (tensors that have it) and on the tensors
     * that have it not: a timed call's outputs can be checked at a few
     * indices by the reference run on those alone (issue 66) */
    int dim_independent[AO_MAX_DIMS];
    int has_stress;                     /* some input has a stress distribution */
    int nconstraints;                   /* pairs of formulas equal at every shape */
    char constraints[AO_MAX_CONSTRAINTS][2][64];
    double tolerance;                   /* relative L2 error bound */
    char mm_flops[256], vec_flops[256], bytes[256]; /* formulas over the dims */
    char sizes_json[4096];              /* the size classes, kept as JSON text */
    char sha256[65];                    /* what it is, on any machine: of task.json and reference.c */
};

/* Load a task from its directory (or its task.json).  Checks that the
 * declared signature is the one the convention derives.  0 or -1 + err. */
int ao_task_load(const char *path, struct ao_task *t, char *err, size_t errlen);

/* Tasks are found only in the task roots: ACCELOPT_TASK_ROOTS (directories
 * separated by ':', each holding task directories or being one), else
 * $ACCELOPT_HOME/nkibench.  A message can name a task, never a path
 * elsewhere.  ao_task_find takes a task name (searched in the roots in
 * order: ROOT/NAME, or a root that is itself the task NAME) or a directory
 * (refused unless in a root); 0 or -1 + err. */
const char *ao_task_roots(void);
int ao_task_find(const char *name_or_dir, struct ao_task *t, char *err, size_t errlen);
int ao_task_find_dir(const char *dir, struct ao_task *t, char *err, size_t errlen);
/* The task a message names, for a stage on any machine: found by name in
 * this machine's task roots, never by the sender's path.  With the sender's
 * content hash (sha256 may be NULL), the task found must be the same task,
 * else -1 and err says how they differ. */
int ao_task_named(const char *name, const char *sha256, struct ao_task *t, char *err, size_t errlen);
/* 0 when sha256 is NULL or the hash of t, else -1 + err saying how they differ. */
int ao_task_same(const struct ao_task *t, const char *sha256, char *err, size_t errlen);
/* Trusted callers only (a task named on the command line): make dir a task
 * root of this process and the stages it starts.  0 or -1 + err. */
int ao_task_allow(const char *dir, char *err, size_t errlen);
/* A task the user named on the command line: a name in the roots, or a
 * directory (or its task.json), which ao_task_allow makes a root. */
int ao_task_from_user(const char *arg, struct ao_task *t, char *err, size_t errlen);

/* The dims of a size class ("tiny", "cpu", "paper"); 0 or -1 + err. */
int ao_task_size(const struct ao_task *t, const char *size, long long dims[AO_MAX_DIMS],
                 char *err, size_t errlen);

/* Whether dims meet the task's constraints (e.g. H = 2*KH); 0 or -1 + err. */
int ao_task_check_dims(const struct ao_task *t, const long long *dims, char *err, size_t errlen);

/* Work for given dims: matmul FLOPs, vector FLOPs, minimum bytes moved. */
int ao_task_work(const struct ao_task *t, const long long *dims, double *mm, double *vec,
                 double *bytes, char *err, size_t errlen);

/* Elements of tensor i at the given dims. */
size_t ao_task_elems(const struct ao_task *t, int i, const long long *dims);

/* Evaluate an arithmetic formula over named values (+ - * / parentheses,
 * integers and decimals).  0 or -1 + err.  Exposed for the tests. */
int ao_formula_eval(const char *expr, char names[][16], const long long *vals, int n,
                    double *out, char *err, size_t errlen);

#endif
