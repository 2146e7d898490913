/* vendor.h - the vendor reference point: OpenBLAS's single-thread sgemm,
 * timed outside the sandbox, to check the calibration against */
#ifndef AO_VENDOR_H
#define AO_VENDOR_H

#include <stddef.h>

struct ao_vendor_result {
    char core[32];          /* the OpenBLAS kernel set it ran */
    int M, K, N;
    int repeats;
    double median_ns, min_ns, spread; /* spread: IQR / median */
    double gflops;          /* 2*M*N*K / median */
    double max_rel_err;     /* sampled outputs against double dot products */
};

/* Build nkibench/harness/cpu/sgemm.c against OpenBLAS and time out = lhs @
 * rhs at (M, K, N), pinned to `cpu` (or not, if < 0), with OpenBLAS's
 * kernels for `core` (e.g. "SkylakeX"), or its own choice if NULL.
 * 0, or -1 + err (OpenBLAS missing, or a wrong product). */
int ao_vendor_sgemm(int M, int K, int N, int cpu, const char *core, struct ao_vendor_result *r,
                    char *err, size_t errlen);

#endif
