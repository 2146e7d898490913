/* cpu_peaks.h - the cpu target's peaks, measured on this machine */
#ifndef AO_CPU_PEAKS_H
#define AO_CPU_PEAKS_H

#include <stddef.h>

struct ao_calib;

/* Measure this machine (compiling nkibench/harness/cpu/peak.c with the
 * target flags), fill c, and store it at path (NULL: not stored, c->id
 * still set), each peak the best of this measurement's tries and of the
 * calibration stored there before (ao_calib_keep_best): on a busy machine
 * too, so that a start never measures again unless asked.  bw_mib sets
 * the array size for the bandwidth runs.  0 or -1 + err. */
int ao_calib_measure(const char *path, int bw_mib, struct ao_calib *c, char *err, size_t errlen);

#endif
