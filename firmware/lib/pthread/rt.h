/*
 * Internals of the bare-metal PThreads runtime, shared by its parts.
 *
 * Shared state that several cores modify lives in the atomic unit (uncached, operated on at the
 * memory side), so no data cache can hold a stale copy of it. Layout of its words:
 *
 *   RT_LOCK ... RT_LIVE     runtime words (locks, pool, thread counts)
 *   core_busy[N_TILES]      1 while a core runs a thread (core 0: the main thread)
 *   wait_next[N_TILES]      link of each core in the wait queue it sleeps on (one at a time)
 *   thread_gen/join/claim   per thread slot: generation (0: free), join state, join/detach claim
 *   pool                    blocks of software synchronization objects (swonly.c)
 *   ATOMIC_WORDS - 1        allocation round-robin of the Subutai driver
 */
#ifndef SUBUTAI_RT_H
#define SUBUTAI_RT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>
#include <subutai/atomic.h>
#include <subutai/ni.h>
#include <subutai/soc.h>
#include <subutai/sync.h>

#define RT_THREADS_MAX 32

enum {
	RT_LOCK = 0,  /* thread slots and lazy initialization */
	RT_POOL_LOCK, /* software object pool */
	RT_POOL_FREE, /* free block list: block + 1, 0 if empty */
	RT_POOL_NEXT, /* first block never allocated */
	RT_GEN,       /* thread generation counter */
	RT_LIVE,      /* threads that have not exited, the main thread included */
	RT_CORE_BUSY,
	RT_WAIT_NEXT = RT_CORE_BUSY + N_TILES,
	RT_THREAD_GEN = RT_WAIT_NEXT + N_TILES,
	RT_THREAD_JOIN = RT_THREAD_GEN + RT_THREADS_MAX,
	RT_THREAD_CLAIM = RT_THREAD_JOIN + RT_THREADS_MAX,
	RT_POOL = RT_THREAD_CLAIM + RT_THREADS_MAX,
};

#define RT_BLOCK_WORDS 8
#define RT_POOL_BLOCKS ((ATOMIC_WORDS - 1 - RT_POOL) / RT_BLOCK_WORDS)

/* NoC message types of the runtime (normal class). */
#define RT_MSG_SPAWN 0xf0 /* payload: thread slot */
#define RT_MSG_WAKE  0xf1 /* payload: what the sleeper waited on (for traces) */

/* Which implementation holds a synchronization object. */
#define RT_IMPL_SW 1
#define RT_IMPL_HW 2

#define RT_MAGIC_MUTEX   0x4d555458u
#define RT_MAGIC_COND    0x434f4e44u
#define RT_MAGIC_BARRIER 0x42415252u
#define RT_MAGIC_DEAD    0xdeadbeefu
#define RT_MAGIC_ATTR    0x41545452u

/* Attribute objects: a magic word marks them initialized. */
static inline int rt_attr_init(uint32_t *magic)
{
	if (!magic) {
		return EINVAL;
	}
	*magic = RT_MAGIC_ATTR;
	return 0;
}

static inline int rt_attr_destroy(uint32_t *magic)
{
	if (!magic || *magic != RT_MAGIC_ATTR) {
		return EINVAL;
	}
	*magic = RT_MAGIC_DEAD;
	return 0;
}

static inline unsigned int rt_core(void)
{
	return subutai_tile_id();
}

/* Short internal critical sections only (a few atomic-unit accesses): users of the
 * synchronization objects never spin, they sleep.
 */
static inline void rt_spin_lock(unsigned int word)
{
	while (subutai_atomic_test_and_set(word) != 0) {
		while (subutai_atomic_load(word) != 0) {
		}
	}
}

static inline void rt_spin_unlock(unsigned int word)
{
	subutai_atomic_store(word, 0);
}

/* Sleeps until a wake-up message arrives. */
void rt_sleep(void);
/* Wakes a core sleeping in rt_sleep() (or about to). */
void rt_wake(unsigned int core, uint32_t what);

/* Software implementation (swonly.c). Handles are pool block + 1. */
int sw_mutex_init(uint32_t *handle);
int sw_mutex_destroy(uint32_t handle);
/* checked: error-checking mutex (its type is in the pthread object, cached) */
int sw_mutex_lock(uint32_t handle, bool checked);
int sw_mutex_trylock(uint32_t handle, bool checked);
int sw_mutex_unlock(uint32_t handle, bool checked);
int sw_cond_init(uint32_t *handle);
int sw_cond_destroy(uint32_t handle);
int sw_cond_wait(uint32_t handle, pthread_mutex_t *mutex);
int sw_cond_signal(uint32_t handle);
int sw_cond_broadcast(uint32_t handle);
int sw_barrier_init(uint32_t *handle, unsigned int count);
int sw_barrier_destroy(uint32_t handle);
int sw_barrier_wait(uint32_t handle);

/* The mutex's implementation without the recursion bookkeeping of the pthread layer (sync.c). */
int rt_mutex_lock_raw(pthread_mutex_t *mutex);
int rt_mutex_unlock_raw(pthread_mutex_t *mutex);

/*
 * Hardware implementation: the Subutai driver (subutai/sync.h), linked only with the subutai
 * backend. Weak here, so programs linked with the swonly backend contain no hardware path (and
 * never call one: no object is ever RT_IMPL_HW there). Direct calls rather than a table of
 * pointers: right after an acquire has invalidated the data cache, every pointer read would be a
 * miss. The allocation functions (backend_subutai.c) try every engine and return EAGAIN when
 * every scratchpad is full.
 */
#pragma weak subutai_free
#pragma weak subutai_mutex_lock
#pragma weak subutai_mutex_trylock
#pragma weak subutai_mutex_unlock
#pragma weak subutai_barrier_wait
#pragma weak subutai_cond_wait
#pragma weak subutai_cond_signal
#pragma weak subutai_cond_broadcast
int rt_hw_mutex_init(uint32_t *handle, bool errorcheck) __attribute__((weak));
int rt_hw_cond_init(uint32_t *handle) __attribute__((weak));
int rt_hw_barrier_init(uint32_t *handle, unsigned int count) __attribute__((weak));

/* Defined by each backend (and so pulling it in from the archive): does it use the hardware? */
extern const bool rt_backend_hw;

#endif /* SUBUTAI_RT_H */
