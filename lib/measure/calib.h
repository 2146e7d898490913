/* calib.h - a target's measured peaks (cpu: single-core), stored on disk */
#ifndef AO_CALIB_H
#define AO_CALIB_H

#include <stddef.h>

/* How cpu-target kernels are compiled: the peaks are measured with the same. */
#define AO_CPU_CC "gcc"
#define AO_CPU_CFLAGS "-O3 -march=native -std=gnu11 -ffp-contract=fast"

/* Bumped whenever peak.c measures differently: older stored calibrations
 * are then measured again (2: register-resident chains, in-cache curve). */
#define AO_PEAK_VERSION 2

/* A calibration is stable when every peak's repetitions agree this well
 * ((max - min) / median); the cpu target measures up to AO_CALIB_TRIES
 * times, each peak the best of all, and stores it either way, with how
 * sure it is (ao_calib.stable). */
#define AO_CALIB_STABLE 0.10
#define AO_CALIB_TRIES 3

struct ao_calib {
    char id[17];             /* short hash of the stored file: part of cache keys */
    char cpu_model[128];
    char cflags[128];
    char created_at[32];
    double bw_gbs, bw_spread;   /* best bytes/s over read, copy, stream, triad, read-mostly */
    char bw_method[16];
    /* bandwidth for working sets that fit in cache: (bytes, GB/s) with
     * bytes rising; past the last point, bw_gbs (memory) applies */
    int ncurve;
    double curve_bytes[8], curve_gbs[8];
    double fma_gflops, fma_spread;
    double vec_gflops, vec_spread;
    /* the machine probe (probe.h) on the quiet machine: its mean round and
     * spread, against which every result says how busy the machine was
     * (0: not taken, an older calibration) */
    double probe_mean_ns, probe_spread;
    /* how sure: the measurements kept into these peaks (each peak the best
     * of them), and whether any of them was stable (its tries agreed
     * within AO_CALIB_STABLE); a busy machine only lowers peaks */
    int measurements, stable;
};

/* Default path of a target's calibration: <state dir>/calibration-<target>.json. */
void ao_calib_default_path(const char *target, char *buf, size_t len);

/* Time the machine probe (probe.h) into c, unless c already holds a
 * quieter one: called with each try of the peaks, the quietest is kept. */
void ao_calib_probe(struct ao_calib *c);

/* Is path's directory ours alone (ao_dir_ours_alone), as the calibration's
 * must be to be read or written?  0, or -1 + err. */
int ao_calib_place_ok(const char *path, char *err, size_t errlen);

/* Load a stored calibration.  Returns 0, 1 if there is none (or it belongs
 * to another model than this machine's, or other flags: measure again),
 * -1 + err if broken, AO_RC_SETTING + err if it is not ours alone to trust (a file
 * another user owns or may write, or in such a directory: issue 56). */
int ao_calib_load(const char *path, const char *model, const char *flags, struct ao_calib *c,
                  char *err, size_t errlen);

/* The in-cache curve never below what a larger working set reached, nor
 * its last point below the memory bandwidth: each point raised to the
 * next's (the last to bw_gbs).  After any merge of maxima, which raise
 * the points and the bandwidth each on its own. */
void ao_calib_curve_bound(struct ao_calib *c);

/* Peaks are maxima: each of c's raised to x's where that is higher (its
 * spread and method with it), the curve point by point at the sizes both
 * measured, then bounded (ao_calib_curve_bound). */
void ao_calib_raise(struct ao_calib *c, const struct ao_calib *x);

/* Peaks are maxima: raise each of c's to the calibration stored at path
 * where that one's is higher (the same machine, flags and peak version),
 * keep its quieter probe, and count its measurements into c's.  A later,
 * higher measurement so replaces a stored peak, a lower one leaves it.
 * 1 if a stored calibration was kept into c, 0 if there was none. */
int ao_calib_keep_best(const char *path, const char *model, const char *flags, struct ao_calib *c);

/* Store c (a target's measured peaks) at path, and set c->id. */
int ao_calib_store(const char *path, const char *target, struct ao_calib *c, char *err,
                   size_t errlen);

/* The highest bandwidth a working set of `bytes` can see: that of the
 * largest calibrated size not above it (cache levels), bw_gbs beyond. */
double ao_calib_bw_for(const struct ao_calib *c, double bytes);

/* This machine's CPU model name. */
void ao_cpu_model(char *buf, size_t len);

#endif
