/*
 * <time.h> with the clocks and sleep the PThreads library provides (firmware/lib/pthread/clock.c).
 * The C libraries declare these only with the POSIX timers they build (picolibc's _POSIX_TIMERS
 * and _POSIX_MONOTONIC_CLOCK, Zephyr's CONFIG_POSIX_*), which they do not here: a program that
 * includes <time.h> alone finds them, as on a POSIX system.
 */
#ifndef SUBUTAI_TIME_H
#define SUBUTAI_TIME_H

#include_next <time.h>

/* Where the C library has clockid_t (picolibc always; Zephyr's minimal C library where POSIX is
 * asked for, or with its POSIX headers), which it declares by the macros of newlib's lineage. */
#if defined(_CLOCKID_T_DECLARED) || defined(__clockid_t_defined)

#ifdef __cplusplus
extern "C" {
#endif

/* Both clocks count the global cycle counter from the SoC's reset (pthread.h). */
#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC ((clockid_t)4) /* picolibc's number */
#endif

int clock_gettime(clockid_t clock_id, struct timespec *tp);
int clock_getres(clockid_t clock_id, struct timespec *res);
int nanosleep(const struct timespec *req, struct timespec *rem);

#ifdef __cplusplus
}
#endif

#endif /* clockid_t */

#endif /* SUBUTAI_TIME_H */
