/*
 * Subutai-HW driver (see subutai/sync.h).
 */
#include <errno.h>
#include <stddef.h>

#include <generated/subutai_status.h>
#include <subutai/atomic.h>
#include <subutai/ni.h>
#include <subutai/sync.h>
#include <subutai/window.h>
#include <subutai_port.h>

#include "atomic_words.h"

/* Hardware reply status -> the C library's errno value. */
SUBUTAI_HW_PATH static int status_to_errno(unsigned int status)
{
	switch (status) {
	case SUBUTAI_STATUS_OK:
		return 0;
	case SUBUTAI_STATUS_EPERM:
		return EPERM;
	case SUBUTAI_STATUS_EAGAIN:
		return EAGAIN;
	case SUBUTAI_STATUS_EBUSY:
		return EBUSY;
	case SUBUTAI_STATUS_EINVAL:
		return EINVAL;
	case SUBUTAI_STATUS_EDEADLK:
		return EDEADLK;
	default:
		return EIO;
	}
}

/* What a request needs on its way (exchange()). */
enum {
	X_REPLY = 1 << 0,                 /* ask a reply even for a posted op */
	X_VALUE = 1 << 1,                 /* the op takes a value (allocations, condition waits) */
	X_ACQUIRE = SUBUTAI_WAIT_ACQUIRE, /* a long wait may invalidate the data cache meanwhile */
	X_FULL = SUBUTAI_WAIT_FULL,       /* the whole reply value is needed (a new id) */
};

/*
 * A request through the window, with this core's handlers masked (the port lock) so that none
 * issues in between or takes its reply; returns the lock's key.
 */
SUBUTAI_HW_PATH static inline unsigned int locked_issue(subutai_id_t id, unsigned int op,
							uint32_t value, unsigned int how)
{
	unsigned int key = subutai_port_lock();

	if (how & X_VALUE) {
		subutai_window_set_value(value);
	}
	subutai_port_issue(op, (how & X_REPLY) != 0, id);
	return key;
}

/*
 * One request and, when one comes, its reply (false if none: a posted op). *invalidated says
 * whether the data cache was invalidated while waiting (X_ACQUIRE). Where the window is the one
 * thread's of the core, a posted op without a value is one store that nothing can come between;
 * where threads share it, the op carries its thread too (the engine knows a mutex's owner by
 * tile and thread), a store of its own.
 */
SUBUTAI_HW_PATH static inline bool exchange(subutai_id_t id, unsigned int op, uint32_t value,
					    unsigned int how, struct subutai_reply *reply,
					    bool *invalidated)
{
	bool posted = !(how & X_REPLY) && SUBUTAI_OP_IS_POSTED(op);

	*invalidated = false;
	if (!SUBUTAI_PORT_SHARED_WINDOW && posted && !(how & X_VALUE)) {
		subutai_window_issue(op, false, id);
		return false;
	}
	unsigned int key = locked_issue(id, op, value, how);

	if (posted) {
		subutai_port_unlock(key);
		return false;
	}
	return subutai_port_wait(reply, id, how & (X_ACQUIRE | X_FULL), 0, NULL, key, invalidated);
}

/* A request; on a reply, its value goes to *result and the id it concerns to *reply_id. */
SUBUTAI_HW_PATH static inline int request(subutai_id_t id, unsigned int op, uint32_t value,
					  unsigned int how, uint32_t *result,
					  subutai_id_t *reply_id)
{
	struct subutai_reply reply;
	bool invalidated;

	if (!exchange(id, op, value, how, &reply, &invalidated)) {
		return 0;
	}
	if (reply_id) {
		*reply_id = reply.id;
	}
	if (result) {
		*result = reply.value;
	}
	return status_to_errno(reply.status);
}

SUBUTAI_HW_PATH int subutai_request(subutai_id_t id, unsigned int op, uint32_t value,
				    bool want_reply, uint32_t *result)
{
	return request(id, op, value, X_VALUE | X_FULL | (want_reply ? X_REPLY : 0), result, NULL);
}

unsigned int subutai_next_host(void)
{
	return subutai_atomic_fetch_add(RT_ALLOC_RR, 1) % subutai_num_tiles();
}

static int alloc(unsigned int host, unsigned int op, uint32_t value, subutai_id_t *id)
{
	if (host >= subutai_num_tiles()) {
		return EINVAL;
	}
	return request(SUBUTAI_ALLOC_TARGET(host), op, value, X_VALUE | X_FULL, id, NULL);
}

int subutai_mutex_alloc(unsigned int host, bool errorcheck, subutai_id_t *id)
{
	return alloc(host, SUBUTAI_OP_ALLOC_MUTEX, errorcheck ? 1 : 0, id);
}

int subutai_barrier_alloc(unsigned int host, unsigned int count, subutai_id_t *id)
{
	return alloc(host, SUBUTAI_OP_ALLOC_BARRIER, count, id);
}

int subutai_cond_alloc(unsigned int host, subutai_id_t *id)
{
	return alloc(host, SUBUTAI_OP_ALLOC_COND, 0, id);
}

int subutai_rwlock_alloc(unsigned int host, subutai_id_t *id)
{
	return alloc(host, SUBUTAI_OP_ALLOC_RWLOCK, 0, id);
}

int subutai_free(subutai_id_t id)
{
	return request(id, SUBUTAI_OP_FREE, 0, 0, NULL, NULL);
}

/*
 * The acquire side of the coherence rule (docs/architecture.md): after a grant the data cache is
 * invalidated unless it already was while waiting, or the grant says this core released the
 * mutex last (GRANT_LOCAL: nothing another core wrote can be ordered before this acquire).
 */
SUBUTAI_HW_PATH static inline void acquired(bool invalidated, bool local)
{
	subutai_dcache_invalidate_if(!invalidated && !local);
}

SUBUTAI_HW_PATH static int mutex_acquire(subutai_id_t mutex, unsigned int op)
{
	struct subutai_reply reply;
	bool invalidated;

	exchange(mutex, op, 0, X_ACQUIRE, &reply, &invalidated);
	int status = status_to_errno(reply.status);

	if (status == 0) {
		acquired(invalidated, (reply.value & SUBUTAI_GRANT_LOCAL) != 0);
	}
	return status;
}

/*
 * A read-write lock's grant (never GRANT_LOCAL). Not mutex_acquire(): the compiler sees which ops
 * reach each (none posted) and builds neither a posted path.
 */
SUBUTAI_HW_PATH static int rwlock_acquire(subutai_id_t rwlock, unsigned int op)
{
	struct subutai_reply reply;
	bool invalidated;

	exchange(rwlock, op, 0, X_ACQUIRE, &reply, &invalidated);
	if (reply.status == SUBUTAI_STATUS_OK) {
		acquired(invalidated, false);
	}
	return status_to_errno(reply.status);
}

SUBUTAI_HW_PATH int subutai_mutex_lock(subutai_id_t mutex)
{
	return mutex_acquire(mutex, SUBUTAI_OP_LOCK);
}

SUBUTAI_HW_PATH int subutai_mutex_trylock(subutai_id_t mutex)
{
	return mutex_acquire(mutex, SUBUTAI_OP_TRYLOCK);
}

SUBUTAI_HW_PATH int subutai_mutex_unlock(subutai_id_t mutex)
{
	/* Error-checking mutexes answer unlocks (EPERM for a non-owner); others are posted. */
	bool checked = SUBUTAI_ID_KIND(mutex) == SUBUTAI_KIND_MUTEX_EC;

	return request(mutex, SUBUTAI_OP_UNLOCK, 0, checked ? X_REPLY : 0, NULL, NULL);
}

/* A read-write lock's grant is an acquire as a mutex's (never GRANT_LOCAL). */
SUBUTAI_HW_PATH int subutai_rwlock_rdlock(subutai_id_t rwlock)
{
	return rwlock_acquire(rwlock, SUBUTAI_OP_RDLOCK);
}

SUBUTAI_HW_PATH int subutai_rwlock_tryrdlock(subutai_id_t rwlock)
{
	return rwlock_acquire(rwlock, SUBUTAI_OP_TRYRDLOCK);
}

SUBUTAI_HW_PATH int subutai_rwlock_wrlock(subutai_id_t rwlock)
{
	return rwlock_acquire(rwlock, SUBUTAI_OP_WRLOCK);
}

SUBUTAI_HW_PATH int subutai_rwlock_trywrlock(subutai_id_t rwlock)
{
	return rwlock_acquire(rwlock, SUBUTAI_OP_TRYWRLOCK);
}

SUBUTAI_HW_PATH void subutai_rwlock_unlock(subutai_id_t rwlock)
{
	request(rwlock, SUBUTAI_OP_RWUNLOCK, 0, 0, NULL, NULL);
}

SUBUTAI_HW_PATH int subutai_barrier_wait(subutai_id_t barrier)
{
	struct subutai_reply reply;
	bool invalidated;

	exchange(barrier, SUBUTAI_OP_BARRIER_WAIT, 0, X_ACQUIRE, &reply, &invalidated);
	int status = status_to_errno(reply.status);

	if (status != 0) {
		return status;
	}
	acquired(invalidated, false);
	/* The serial waiter's value is all ones (the window passes its low bits). */
	return (reply.value & 1) ? SUBUTAI_BARRIER_SERIAL_THREAD : 0;
}

SUBUTAI_HW_PATH int subutai_cond_wait(subutai_id_t cond, subutai_id_t mutex)
{
	struct subutai_reply reply;
	bool invalidated;

	exchange(cond, SUBUTAI_OP_COND_WAIT, mutex, X_VALUE | X_ACQUIRE, &reply, &invalidated);
	int status = status_to_errno(reply.status);

	/* Woken, but the mutex's host had no queue element to requeue us: take the mutex here. */
	if (status == EAGAIN && reply.id == mutex) {
		return subutai_mutex_lock(mutex);
	}
	if (status == 0) {
		acquired(invalidated, false);
	}
	return status;
}

/*
 * The waits below are only those of programs that time out or cancel threads, never on the timed
 * paths (not SUBUTAI_HW_PATH). The engine cannot take a waiter off a queue: a waiter whose wait
 * ends early broadcasts the condition, which wakes every waiter, this one included (its own
 * requests reach the host in order), and it comes back with the mutex. They end as
 * subutai_cond_wait(): woken with the mutex, or woken but the mutex's host had no queue element to
 * requeue the waiter, which takes it itself.
 */
int subutai_cond_wait_stoppable(subutai_id_t cond, subutai_id_t mutex, uint64_t deadline,
				struct subutai_stop *stop)
{
	struct subutai_reply reply;
	bool invalidated;
	int ended = 0;
	unsigned int key = locked_issue(cond, SUBUTAI_OP_COND_WAIT, mutex, X_VALUE);

	if (!subutai_port_wait(&reply, cond, X_ACQUIRE, deadline, stop, key, &invalidated)) {
		/* Out for its reply now: a wake-up that comes meanwhile is only noted. */
		struct subutai_stop note = {.fn = NULL};

		ended = stop && stop->stopped ? EINTR : ETIMEDOUT;
		key = locked_issue(cond, SUBUTAI_OP_COND_BROADCAST, 0, 0);
		subutai_port_wait(&reply, cond, X_ACQUIRE, 0, &note, key, &invalidated);
		if (stop) {
			stop->stopped |= note.stopped;
		}
	}
	int status = status_to_errno(reply.status);

	if (status == EAGAIN && reply.id == mutex) {
		status = subutai_mutex_lock(mutex);
	} else if (status == 0) {
		acquired(invalidated, false);
	}
	return status == 0 ? ended : status;
}

int subutai_cond_timedwait(subutai_id_t cond, subutai_id_t mutex, uint64_t deadline)
{
	return subutai_cond_wait_stoppable(cond, mutex, deadline, NULL);
}

SUBUTAI_HW_PATH int subutai_cond_signal(subutai_id_t cond)
{
	return request(cond, SUBUTAI_OP_COND_SIGNAL, 0, 0, NULL, NULL);
}

SUBUTAI_HW_PATH int subutai_cond_broadcast(subutai_id_t cond)
{
	return request(cond, SUBUTAI_OP_COND_BROADCAST, 0, 0, NULL, NULL);
}
