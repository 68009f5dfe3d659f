/*
 * Driver of the Subutai-HW synchronization engine: mutexes, barriers and condition variables
 * hosted in the NIs. OS-agnostic; op codes, statuses and the id layout come from the generated
 * subutai_protocol.h, registers from csr.h.
 *
 * Every function returns 0 or a positive errno value (EINVAL, EPERM, EDEADLK, EBUSY, EAGAIN),
 * like the pthread functions they back. Acquires (lock granted, barrier released, condition
 * woken with the mutex) invalidate the data cache before returning.
 */
#ifndef SUBUTAI_SYNC_H
#define SUBUTAI_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include <generated/subutai_protocol.h>
#include <subutai/soc.h>

typedef uint32_t subutai_id_t;

/* A reply of the engine, as popped from this tile's reply queue. */
struct subutai_reply {
	subutai_id_t id; /* the id it concerns (the new id of an allocation) */
	uint32_t value;
	unsigned int status; /* SUBUTAI_STATUS_* */
	unsigned int thread; /* the requesting thread on this core */
};

/*
 * What may end a condition wait early (subutai_cond_wait_stoppable()): fn(arg) returning true.
 * It is asked while the caller waits, at most every SUBUTAI_STOP_POLL_CYCLES bare-metal (the
 * core polls) and whenever the thread is woken without its reply under Zephyr. The data cache
 * may have been invalidated already: it reads atomic-unit words, never shared memory.
 */
struct subutai_stop {
	bool (*fn)(unsigned int arg);
	unsigned int arg;
	bool stopped; /* set when it ended the wait, or the wait took a wake-up (Zephyr) */
};
#define SUBUTAI_STOP_POLL_CYCLES 2048

/* One request; waits for the reply when the op has one (or want_reply is set). */
int subutai_request(subutai_id_t id, unsigned int op, uint32_t value, bool want_reply,
		    uint32_t *result);

/* Allocation on a given host tile... */
int subutai_mutex_alloc(unsigned int host, bool errorcheck, subutai_id_t *id);
int subutai_barrier_alloc(unsigned int host, unsigned int count, subutai_id_t *id);
int subutai_cond_alloc(unsigned int host, subutai_id_t *id);
int subutai_free(subutai_id_t id);

/* ...or on the next host of a round-robin over all tiles, shared by every core (TPDS'21 §III-D). */
unsigned int subutai_next_host(void);

int subutai_mutex_lock(subutai_id_t mutex);
int subutai_mutex_trylock(subutai_id_t mutex);
int subutai_mutex_unlock(subutai_id_t mutex);

/* Returns 0, or -1 (PTHREAD_BARRIER_SERIAL_THREAD) in exactly one waiter, or an errno value. */
int subutai_barrier_wait(subutai_id_t barrier);

int subutai_cond_wait(subutai_id_t cond, subutai_id_t mutex);
/*
 * As subutai_cond_wait() until the global cycle counter reaches deadline; then ETIMEDOUT, with the
 * mutex held again. The engine cannot take a waiter off a queue, so a waiter that times out
 * broadcasts the condition to get itself out: the other waiters wake spuriously, as POSIX allows.
 */
int subutai_cond_timedwait(subutai_id_t cond, subutai_id_t mutex, uint64_t deadline);
/*
 * subutai_cond_wait() (deadline 0) or subutai_cond_timedwait() that also ends when stop says so
 * (the PThreads library's cancellation): the waiter broadcasts the condition to get itself out of
 * the engine's queue, as on a timeout, and returns EINTR with the mutex held again, leaving no
 * entry of its own behind.
 */
int subutai_cond_wait_stoppable(subutai_id_t cond, subutai_id_t mutex, uint64_t deadline,
				struct subutai_stop *stop);
int subutai_cond_signal(subutai_id_t cond);
int subutai_cond_broadcast(subutai_id_t cond);

/*
 * Read-write locks in the engine (writers preferred: a reader waits while a writer holds the lock
 * or waits for it). A lock is granted when it is the caller's; the unlock is the writer's (the
 * engine checks the owner) or one reader's, posted: its errors are the engine's silent ones.
 */
int subutai_rwlock_alloc(unsigned int host, subutai_id_t *id);
int subutai_rwlock_rdlock(subutai_id_t rwlock);
int subutai_rwlock_tryrdlock(subutai_id_t rwlock);
int subutai_rwlock_wrlock(subutai_id_t rwlock);
int subutai_rwlock_trywrlock(subutai_id_t rwlock);
void subutai_rwlock_unlock(subutai_id_t rwlock);

#endif /* SUBUTAI_SYNC_H */
