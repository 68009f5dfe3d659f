/*
 * <sched.h> for Zephyr's minimal C library, which has none (Zephyr's own is part of its POSIX
 * layer, which this module does not use): what the project's PThreads library provides.
 * <pthread.h> includes it, as POSIX asks. With the toolchain's picolibc it is picolibc's.
 */
#ifdef CONFIG_PICOLIBC
#include_next <sched.h>
#else
#ifndef SUBUTAI_ZEPHYR_SCHED_H
#define SUBUTAI_ZEPHYR_SCHED_H

#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Scheduling policies (newlib's and picolibc's numbers); the library schedules none itself. */
#define SCHED_OTHER 0
#define SCHED_FIFO  1
#define SCHED_RR    2

struct sched_param {
	int sched_priority;
};

/* Lets the other threads of this core run (k_yield()). */
int sched_yield(void);

#ifdef __cplusplus
}
#endif

#endif /* SUBUTAI_ZEPHYR_SCHED_H */
#endif /* CONFIG_PICOLIBC */
