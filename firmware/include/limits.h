/*
 * <limits.h> with the limits of the project's PThreads library, replacing those the C library
 * gives for threads it does not provide (Zephyr's are 0 without its own POSIX threads). Keys:
 * POSIX's minimum (_POSIX_THREAD_KEYS_MAX). Threads: one per core bare-metal (the main thread's
 * included), the thread slots under Zephyr (CONFIG_SUBUTAI_THREADS_MAX). Stacks: the smallest
 * pthread_attr_setstacksize() accepts. Synchronization objects: pthread_sw_objects_max_np().
 */
#ifndef SUBUTAI_LIMITS_H
#define SUBUTAI_LIMITS_H

#include_next <limits.h>

#define SUBUTAI_PTHREAD_KEYS                  128
#define SUBUTAI_PTHREAD_DESTRUCTOR_ITERATIONS 4
#define SUBUTAI_PTHREAD_STACK_MIN             256

#undef PTHREAD_KEYS_MAX
#define PTHREAD_KEYS_MAX SUBUTAI_PTHREAD_KEYS
#undef PTHREAD_DESTRUCTOR_ITERATIONS
#define PTHREAD_DESTRUCTOR_ITERATIONS SUBUTAI_PTHREAD_DESTRUCTOR_ITERATIONS
#undef PTHREAD_STACK_MIN
#define PTHREAD_STACK_MIN SUBUTAI_PTHREAD_STACK_MIN
#undef PTHREAD_THREADS_MAX
#ifdef CONFIG_SUBUTAI_THREADS_MAX
#define PTHREAD_THREADS_MAX CONFIG_SUBUTAI_THREADS_MAX
#else
#include <generated/soc.h>
#define PTHREAD_THREADS_MAX N_TILES
#endif

#endif /* SUBUTAI_LIMITS_H */
