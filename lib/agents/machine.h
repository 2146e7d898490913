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

#endif
