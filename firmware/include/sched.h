/*
 * <sched.h> on bare metal: picolibc's, with sched_yield(), which the PThreads library provides
 * (firmware/lib/pthread/clock.c) and picolibc declares only with its POSIX threads. Zephyr's
 * minimal C library has none: zephyr-app/include/sched.h is the Zephyr one.
 */
#ifndef SUBUTAI_SCHED_H
#define SUBUTAI_SCHED_H

#include_next <sched.h>

#ifdef __cplusplus
extern "C" {
#endif

int sched_yield(void);

#ifdef __cplusplus
}
#endif

#endif /* SUBUTAI_SCHED_H */
