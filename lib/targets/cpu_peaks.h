/* cpu_peaks.h - the cpu target's peaks, measured on this machine */
#ifndef AO_CPU_PEAKS_H
#define AO_CPU_PEAKS_H

#include <stddef.h>

struct ao_calib;

/* A calibration is stable when every peak's repetitions agree this well
 * ((max - min) / median); it is measured up to AO_CALIB_TRIES times, each
 * peak the best of all, and only a stable one is stored. */
#define AO_CALIB_STABLE 0.10
#define AO_CALIB_TRIES 3

/* Measure this machine (compiling nkibench/harness/cpu/peak.c with the
 * target flags), store it at path (NULL, or not stable: not stored, c->id
 * still set), and fill c.  bw_mib sets the array size for the bandwidth
 * runs.  0 or -1 + err. */
int ao_calib_measure(const char *path, int bw_mib, struct ao_calib *c, char *err, size_t errlen);

/* `accelopt calibrate` stores what it measured even when it stayed noisy
 * (the operator asked for it, and is told); a profiler's own calibration
 * is stored only when stable. */
void ao_calib_keep_noisy(int on);

#endif
