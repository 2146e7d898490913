/* msg_fuzz.c - libFuzzer target: the strict parse and every decoder on
 * arbitrary bytes (`make fuzz-msg`; needs clang).  Issue 14 ran it 7M times. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "wire/msg.h"
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    char err[512];
    cJSON *j = ao_msg_parse((const char *)d, n, err, sizeof err);
    if (j) {
        for (int i = 0; ao_msg_types[i]; i++) {
            union { struct ao_result_msg r; struct ao_plan_msg p; struct ao_task_msg t; struct ao_kernel_msg k; struct ao_candidate_msg c; struct ao_pair_msg pa; struct ao_experience_msg e; struct ao_done_msg dn; struct ao_dlq_msg dl; } m;
            if (ao_msg_decode(ao_msg_types[i], j, &m, err, sizeof err) == 0)
                ao_msg_release(ao_msg_types[i], &m);
        }
        cJSON_Delete(j);
    }
    return 0;
}
