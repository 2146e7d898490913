/* signals.h - graceful stop on SIGINT/SIGTERM, immediate exit on the second */
#ifndef AO_SIGNALS_H
#define AO_SIGNALS_H

/* Install handlers for SIGINT and SIGTERM and ignore SIGPIPE (writes then
 * fail with EPIPE, which the tools treat as "the consumer left"). */
void ao_signals_install(void);

/* Nonzero once a stop was requested. */
int ao_stop_requested(void);

#endif
