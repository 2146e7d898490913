/* probe.h - the machine probe: a fixed piece of the profiler's own code,
 * timed when the machine is calibrated and again after each kernel, so a
 * result can say how busy the machine was while it was measured, in the
 * unit that matters here: how much slower known code ran then (issue 47). */
#ifndef AO_PROBE_H
#define AO_PROBE_H

/* Rounds per probe: each is about an eighth of a millisecond of one core,
 * so a probe costs ~10 ms, and a scheduler slice given to another process
 * (milliseconds) lands in it whenever the machine is oversubscribed. */
#define AO_PROBE_ROUNDS 81

struct ao_probe {
    double median_ns; /* the median round */
    double mean_ns;   /* the mean round: a round the scheduler cut into counts in full */
    double spread;    /* (max - min) / median of the rounds: the quartiles would hide
                         the one or two rounds a slice lands in */
};

/* Time the probe now; 0, or -1 if the clock gave nothing usable. */
int ao_probe_run(struct ao_probe *p);

#endif
