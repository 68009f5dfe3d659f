/*
 * The words of the atomic unit: the one map of every shared word that several cores modify, for
 * every user (the PThreads runtime, the Subutai driver, the Zephyr port). The unit is uncached and
 * operates at the memory side, so no data cache can hold a stale copy of these words.
 *
 *   RT_LOCK ... RT_PLACE_RR   runtime words (locks, pool, thread counts; Zephyr: heap, console,
 *                             kernels ready, placement)
 *   core_busy[N_TILES]        threads placed on each core (the main thread on core 0)
 *   core_stack[N_TILES]       bare metal: whether the core's own stack hosts a thread
 *   wait_next[RT_THREADS_MAX] link of each waiter in the wait queue it sleeps on (one at a time)
 *   thread_gen/join/claim/core per thread slot: generation (0: free), join state, join/detach
 *                             claim, core it runs on
 *   thread_cancel/wait        per thread slot: cancellation state and requests, what the thread
 *                             blocks on at a cancellation point (pthread/cancel.c)
 *   keys                      per thread-specific data key: its generation, odd while allocated
 *   pool                      blocks of software synchronization objects (pthread/swonly.c)
 *   ATOMIC_WORDS - 1          allocation round-robin of the Subutai driver (sync.c)
 */
#ifndef SUBUTAI_ATOMIC_WORDS_H
#define SUBUTAI_ATOMIC_WORDS_H

#include <generated/soc.h>
#include <pthread.h>

#ifndef RT_THREADS_MAX
/* Thread slots: the bare-metal port's, SUBUTAI_PTHREAD_THREADS_PER_CORE on each core (limits.h);
 * the Zephyr port sets its own. */
#define RT_THREADS_MAX PTHREAD_THREADS_MAX
#endif

enum {
	RT_LOCK = 0,     /* thread slots and lazy initialization */
	RT_POOL_LOCK,    /* software object pool */
	RT_POOL_FREE,    /* free block list: block + 1, 0 if empty */
	RT_POOL_NEXT,    /* first block never allocated */
	RT_GEN,          /* thread generation counter */
	RT_LIVE,         /* threads that have not exited, the main thread included */
	RT_HEAP_LOCK,    /* shared heap (Zephyr port) */
	RT_CONSOLE_LOCK, /* console lines (Zephyr port) */
	RT_READY,        /* kernels up and serving (Zephyr port) */
	RT_PLACE_RR,     /* round-robin placement (Zephyr port) */
	RT_LIBC_LOCK,    /* the C library's lock (malloc), bare metal */
	RT_CORE_BUSY,
	RT_CORE_STACK = RT_CORE_BUSY + N_TILES,
	RT_WAIT_NEXT = RT_CORE_STACK + N_TILES,
	RT_THREAD_GEN = RT_WAIT_NEXT + RT_THREADS_MAX,
	RT_THREAD_JOIN = RT_THREAD_GEN + RT_THREADS_MAX,
	RT_THREAD_CLAIM = RT_THREAD_JOIN + RT_THREADS_MAX,
	RT_THREAD_CORE = RT_THREAD_CLAIM + RT_THREADS_MAX,  /* per thread slot: its core */
	RT_THREAD_CANCEL = RT_THREAD_CORE + RT_THREADS_MAX, /* per thread slot: cancellation */
	RT_THREAD_WAIT =
		RT_THREAD_CANCEL + RT_THREADS_MAX, /* per thread slot: its blocking point */
	RT_KEYS = RT_THREAD_WAIT + RT_THREADS_MAX, /* per key: generation, odd if allocated */
	RT_POOL = RT_KEYS + SUBUTAI_PTHREAD_KEYS,
	/* The last word: the Subutai driver's allocation round-robin. */
	RT_ALLOC_RR = ATOMIC_WORDS - 1,
};

/*
 * The software object pool: one block of RT_BLOCK_WORDS words per mutex, condition variable or
 * barrier, from RT_POOL up to RT_ALLOC_RR at most. Its size is SUBUTAI_PTHREAD_SW_OBJECTS blocks
 * when set (a build option bare-metal, Kconfig SUBUTAI_PTHREAD_SW_OBJECTS under Zephyr, 0 there
 * meaning unset), else every block the atomic unit holds.
 */
#define RT_BLOCK_WORDS   8
#define RT_POOL_CAPACITY ((RT_ALLOC_RR - RT_POOL) / RT_BLOCK_WORDS)
#if !defined(SUBUTAI_PTHREAD_SW_OBJECTS) && defined(CONFIG_SUBUTAI_PTHREAD_SW_OBJECTS) &&          \
	CONFIG_SUBUTAI_PTHREAD_SW_OBJECTS > 0
#define SUBUTAI_PTHREAD_SW_OBJECTS CONFIG_SUBUTAI_PTHREAD_SW_OBJECTS
#endif
#ifdef SUBUTAI_PTHREAD_SW_OBJECTS
#define RT_POOL_BLOCKS (SUBUTAI_PTHREAD_SW_OBJECTS)
_Static_assert(SUBUTAI_PTHREAD_SW_OBJECTS >= 1 && SUBUTAI_PTHREAD_SW_OBJECTS <= RT_POOL_CAPACITY,
	       "SUBUTAI_PTHREAD_SW_OBJECTS: from 1 to the blocks the atomic unit holds after the "
	       "runtime's words (RT_POOL_CAPACITY: fewer thread slots or tiles leave more)");
#else
#define RT_POOL_BLOCKS RT_POOL_CAPACITY
#endif

_Static_assert(RT_POOL < RT_ALLOC_RR, "the atomic unit is too small for the runtime's words");

#endif /* SUBUTAI_ATOMIC_WORDS_H */
