/*
 * <limits.h> with the limits of the project's PThreads library, replacing those the C library
 * gives for threads it does not provide (Zephyr's are 0 without its own POSIX threads). Keys:
 * POSIX's minimum (_POSIX_THREAD_KEYS_MAX). Threads: the thread slots, bare-metal
 * SUBUTAI_PTHREAD_THREADS_PER_CORE user-level threads on each core (the main thread's included),
 * under Zephyr CONFIG_SUBUTAI_THREADS_MAX. Stacks: the smallest pthread_attr_setstacksize()
 * accepts. Synchronization objects: pthread_sw_objects_max_np().
 */
#ifndef SUBUTAI_LIMITS_H
#define SUBUTAI_LIMITS_H

#include_next <limits.h>

#define SUBUTAI_PTHREAD_KEYS                  128
#define SUBUTAI_PTHREAD_DESTRUCTOR_ITERATIONS 4
#define SUBUTAI_PTHREAD_STACK_MIN             256

/* The largest value of a semaphore (semaphore.h): its count is an int. */
#undef SEM_VALUE_MAX
#define SEM_VALUE_MAX __INT_MAX__

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
/*
 * Bare metal: threads per core, a power of two (a thread's core is its slot shifted), at most 32
 * and 128 slots in all (their atomic-unit words leave room for the software objects): 32 per core
 * up to 4 tiles, 16 on 8, 8 on 16, 2 on 64. A build option (EXTRA_CFLAGS) may set another.
 */
#ifndef SUBUTAI_PTHREAD_THREADS_PER_CORE
#if N_TILES <= 4
#define SUBUTAI_PTHREAD_THREADS_PER_CORE 32
#elif N_TILES <= 8
#define SUBUTAI_PTHREAD_THREADS_PER_CORE 16
#elif N_TILES <= 16
#define SUBUTAI_PTHREAD_THREADS_PER_CORE 8
#elif N_TILES <= 32
#define SUBUTAI_PTHREAD_THREADS_PER_CORE 4
#else
#define SUBUTAI_PTHREAD_THREADS_PER_CORE 2
#endif
#endif
#define PTHREAD_THREADS_MAX (N_TILES * SUBUTAI_PTHREAD_THREADS_PER_CORE)
#endif

#endif /* SUBUTAI_LIMITS_H */
