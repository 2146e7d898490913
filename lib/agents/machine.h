/* machine.h - the machine the kernels run on, in words for the prompts */
#ifndef AO_MACHINE_H
#define AO_MACHINE_H

#include <stddef.h>

/* A few lines on the machine that runs the target's kernels: for cpu, the
 * CPU model and count, its vector ISA (/proc/cpuinfo) and caches (/sys);
 * for every target, the peaks accelopt calibrate measured (when this
 * machine has a calibration of its own).  With path, that file's text
 * instead (at most 4 KiB): the operator's description, for agents that
 * run on another machine than the profilers.  Malloc'd, or NULL + err. */
char *ao_machine_text(const char *target, const char *path, char *err, size_t errlen);

/* The cpu target's core, from /proc/cpuinfo's text, cpu0's
 * thread_siblings_list and shmem_enabled of transparent huge pages (each
 * may be NULL): the microarchitecture from the family and model with what
 * its FMA units do, or said unknown; the clock; the TLB; SMT; how the
 * profiler hands memory to a kernel (issue 47: what a real model asked
 * for).  Appended to b. */
struct ao_buf;

/* The instruction-set extensions in a compiler's predefined macros (the
 * output of `gcc -march=native -dM -E -x c /dev/null`), one line:
 * "Instruction sets ...: AVX, AVX2, AVX512F, AVX512DQ, FMA, ...".  The
 * count named (0: none, nothing appended). */
int ao_machine_isa_from_macros(const char *macros, struct ao_buf *b);

/* The caches of core 0, one line: from sys (a cpu directory of sysfs:
 * /sys/devices/system/cpu/cpu0), else from CPUID (x86), each line saying
 * which; nothing where neither tells.  Appended to b. */
void ao_machine_caches(const char *sys, struct ao_buf *b);

void ao_machine_core(const char *cpuinfo, const char *siblings, const char *shmem_thp, struct ao_buf *b);

#endif
