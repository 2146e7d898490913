/* log.h - stderr logging with a tool prefix; stdout is for messages only */
#ifndef AO_LOG_H
#define AO_LOG_H

enum ao_log_level { AO_LOG_ERROR, AO_LOG_WARN, AO_LOG_INFO, AO_LOG_DEBUG };

/* Call once from main.  The level comes from ACCELOPT_LOG (error, warn,
 * info, debug) unless set later with ao_log_set_level. */
void ao_log_init(const char *tool);
void ao_log_set_level(enum ao_log_level level);
int ao_log_level_parse(const char *s, enum ao_log_level *out);
void ao_log(enum ao_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define ao_err(...)   ao_log(AO_LOG_ERROR, __VA_ARGS__)
#define ao_warn(...)  ao_log(AO_LOG_WARN, __VA_ARGS__)
#define ao_info(...)  ao_log(AO_LOG_INFO, __VA_ARGS__)
#define ao_debug(...) ao_log(AO_LOG_DEBUG, __VA_ARGS__)

#endif
