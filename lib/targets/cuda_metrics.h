/* cuda_metrics.h - what a planner is told of a cuda kernel on its device
 * (issue 71): the counters of the metrics pass, one untimed call whose
 * runner ran under CUPTI's activity records (runner_proto.h
 * ao_run_kernel), with the rates its measured latency gives. */
#ifndef AO_CUDA_METRICS_H
#define AO_CUDA_METRICS_H

#include "runner_proto.h"

struct cJSON;

/* The counters of h's last call as a JSON object (each name is explained
 * to the planner in prompts/cuda/planner.system.txt), given the kernel's
 * measured latency and the task's minimum bytes and flops at its shape;
 * NULL when the call left no kernel record.  h is the
 * kernel's process's word: every figure is bounded, none is judged. */
struct cJSON *ao_cuda_metrics(const struct ao_run_hdr *h, double latency_ns, double bytes,
                              double flops);

/* How many blocks of one launch shape an SM holds at once, and which of
 * its limits binds ("threads", "registers", "shared memory", "blocks");
 * 0 and "unknown" where the device's limits are missing. */
int ao_cuda_blocks_per_sm(const struct ao_run_device *d, const struct ao_run_kernel *k,
                          const char **limit);

#endif
