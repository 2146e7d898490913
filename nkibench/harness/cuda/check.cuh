/* check.cuh - for the trusted host tools (peak.cu, sgemm.cu): a failed CUDA
 * call ends the tool with the call and the error, and no figures */
#ifndef AO_CHECK_CUH
#define AO_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                  \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));              \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

#endif
