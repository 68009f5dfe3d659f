/*
 * Subutai-HW driver (see subutai/sync.h).
 */
#include <errno.h>
#include <stddef.h>

#include <generated/subutai_status.h>
#include <subutai/atomic.h>
#include <subutai/ni.h>
#include <subutai/sync.h>
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

/* Takes the reply that waits (subutai_window_reply_waits()): the load returns at once. */
SUBUTAI_HW_PATH void subutai_reply_pop(struct subutai_reply *reply)
{
	uint32_t info = subutai_window_reply();

	reply->status = info & SUBUTAI_WINDOW_INFO_STATUS_MASK;
	reply->id = subutai_window_reply_id();
	reply->value = subutai_window_reply_value();
	reply->thread = subutai_window_reply_thread();
}

/* What a request needs on its way (exchange()). */
enum {
	X_REPLY   = 1 << 0, /* ask a reply even for a posted op */
	X_VALUE   = 1 << 1, /* the op takes a value (allocations, condition waits) */
	X_ACQUIRE = 1 << 2, /* an acquire: a long wait may invalidate the data cache meanwhile */
	X_FULL    = 1 << 3, /* the whole reply value is needed (an allocation's new id) */
};

#if !defined(SUBUTAI_PORT_WINDOW) && !defined(SUBUTAI_PORT_SHARED_WINDOW)
#error "subutai_port.h must choose how the core's threads use the window"
#endif

/*
 * A request through the window, with this core's handlers masked (the port lock) so that none
 * issues in between or takes its reply; returns the lock's key. Each thread of a core that shares
 * the window names itself first (the reply's thread field).
 */
SUBUTAI_HW_PATH static inline unsigned int locked_issue(subutai_id_t id, unsigned int op,
							  uint32_t value, unsigned int how)
{
	unsigned int key = subutai_port_lock();

#ifdef SUBUTAI_PORT_SHARED_WINDOW
	subutai_window_set_thread(subutai_port_thread());
#endif
	if (how & X_VALUE) {
		subutai_window_set_value(value);
	}
	subutai_window_issue(op, (how & X_REPLY) != 0, id);
	return key;
}

/*
 * One request and, when one comes, its reply (false if none: a posted op). *invalidated says
 * whether the data cache was invalidated while waiting (window path, X_ACQUIRE).
 *
 * Window path: a store issues the request and the core waits on the bus for the reply, with this
 * core's handlers masked so none can take the reply. Only the low 24 bits of the reply value come
 * with the reply (enough for a grant's GRANT_LOCAL and a barrier's serial bit) unless X_FULL; the
 * reply's id is read when it matters (an error, X_FULL).
 */
SUBUTAI_HW_PATH static inline bool exchange(subutai_id_t id, unsigned int op, uint32_t value,
					    unsigned int how, struct subutai_reply *reply,
					    bool *invalidated)
{
	bool posted = !(how & X_REPLY) && SUBUTAI_OP_IS_POSTED(op);

	*invalidated = false;
#ifdef SUBUTAI_PORT_WINDOW
	if (posted && !(how & X_VALUE)) {
		/* One store: nothing a handler could come between. */
		subutai_window_issue(op, false, id);
		return false;
	}
#endif
	unsigned int key = locked_issue(id, op, value, how);

	if (posted) {
		subutai_port_unlock(key);
		return false;
	}
#ifdef SUBUTAI_PORT_WINDOW
	uint32_t info = (how & X_ACQUIRE) ? subutai_window_reply_acquire(invalidated)
					  : subutai_window_reply();

	subutai_window_take(info, (how & X_FULL) != 0, id, subutai_port_thread(), reply);
	subutai_port_unlock(key);
#else
	/* The threads of the core share the window: an immediate answer (an uncontended lock)
	 * comes within the brief load, as on bare metal; otherwise the port waits for the reply
	 * (through the window when no other thread's reply can come first). */
	if (subutai_port_window_mine()) {
		uint32_t info = (how & X_ACQUIRE) ? subutai_window_reply_brief_acquire(invalidated)
						  : subutai_window_reply_brief();

		if (info & SUBUTAI_WINDOW_INFO_VALID) {
			subutai_window_take(info, (how & X_FULL) != 0, id, subutai_port_thread(),
					    reply);
			subutai_port_unlock(key);
			return true;
		}
	}
	subutai_port_window_wait(reply, id, (how & X_ACQUIRE) != 0, (how & X_FULL) != 0,
				 invalidated, key, NULL);
#endif
	return true;
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

SUBUTAI_HW_PATH int subutai_request(subutai_id_t id, unsigned int op, uint32_t value, bool want_reply,
		    uint32_t *result)
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

int subutai_cond_timedwait(subutai_id_t cond, subutai_id_t mutex, uint64_t deadline)
{
	/* A deadline needs a sleeping wait: only a poll of the clock ends the wait early. */
	struct subutai_reply reply;
	bool timed_out = false;
	unsigned int key = locked_issue(cond, SUBUTAI_OP_COND_WAIT, mutex, X_VALUE);

	if (!subutai_port_wait_reply(&reply, deadline, key, NULL)) {
		/* Wakes every waiter, this one included: it comes back with the mutex. */
		timed_out = true;
		key = locked_issue(cond, SUBUTAI_OP_COND_BROADCAST, 0, 0);
		subutai_port_wait_reply(&reply, 0, key, NULL);
	}
	int status = status_to_errno(reply.status);

	if (status == EAGAIN && reply.id == mutex) {
		status = subutai_mutex_lock(mutex);
	} else if (status == 0) {
		acquired(false, false);
	}
	return status == 0 && timed_out ? ETIMEDOUT : status;
}

/*
 * The stoppable waits below are only those of programs that can cancel threads, never on the
 * timed paths (not SUBUTAI_HW_PATH). They end as the waits above: woken with the mutex, or
 * woken but the mutex's host had no queue element to requeue the waiter, which takes it itself.
 */
static int cond_woken(const struct subutai_reply *reply, subutai_id_t mutex, bool invalidated)
{
	int status = status_to_errno(reply->status);

	if (status == EAGAIN && reply->id == mutex) {
		return subutai_mutex_lock(mutex);
	}
	if (status == 0) {
		acquired(invalidated, false);
	}
	return status;
}

/*
 * A sleeping condition wait that stop can end, as a timed wait ends at its deadline: the waiter
 * broadcasts the condition, which wakes every waiter, this one included (its own requests reach
 * the host in order), and it comes back with the mutex.
 */
static int sleeping_cond_wait(subutai_id_t cond, subutai_id_t mutex, uint64_t deadline,
			      struct subutai_stop *stop)
{
	struct subutai_reply reply;
	int ended = 0;
	unsigned int key = locked_issue(cond, SUBUTAI_OP_COND_WAIT, mutex, X_VALUE);

	if (!subutai_port_wait_reply(&reply, deadline, key, stop)) {
		/* Out for its reply now: a wake-up that comes meanwhile is only noted. */
		struct subutai_stop note = {.fn = NULL};

		ended = stop->stopped ? EINTR : ETIMEDOUT;
		key = locked_issue(cond, SUBUTAI_OP_COND_BROADCAST, 0, 0);
		subutai_port_wait_reply(&reply, 0, key, &note);
		stop->stopped |= note.stopped;
	}
	int status = cond_woken(&reply, mutex, false);

	return status == 0 ? ended : status;
}

#ifdef SUBUTAI_PORT_WINDOW
/*
 * An untimed wait through the window that stop can end. As subutai_window_reply_acquire(): a
 * brief wait for the reply, then the data cache is invalidated while the core waits for the
 * rest, here in brief loads too, asking stop every SUBUTAI_STOP_POLL_CYCLES. Between the
 * invalidation and the reply the loop reads the window, the cycle counter and (in stop) the atomic
 * unit, none of them cached, and its own stack, which no other core writes: the cache holds no
 * line another core may have written when the grant comes, as if invalidated after it.
 */
static int window_cond_wait(subutai_id_t cond, subutai_id_t mutex, struct subutai_stop *stop)
{
	unsigned int key = subutai_port_lock();
	bool invalidated = false;
	bool stopped = false;

	subutai_window_set_value(mutex);
	subutai_window_issue(SUBUTAI_OP_COND_WAIT, false, cond);
	uint32_t info = subutai_window_reply_brief_acquire(&invalidated);

	if (invalidated) {
		uint32_t asked = subutai_cycles32();

		while (!((info = SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_REPLY_BRIEF)) &
			 SUBUTAI_WINDOW_INFO_VALID)) {
			if (!stopped && subutai_cycles32() - asked >= SUBUTAI_STOP_POLL_CYCLES) {
				asked = subutai_cycles32();
				if (stop->fn(stop->arg)) {
					/* Out of the queue as on a timeout (sleeping_cond_wait()). */
					stopped = stop->stopped = true;
					subutai_window_issue(SUBUTAI_OP_COND_BROADCAST, false, cond);
				}
			}
		}
	}
	__asm__ volatile("" ::: "memory");
	struct subutai_reply reply = {
		.status = info & SUBUTAI_WINDOW_INFO_STATUS_MASK,
		.id = cond,
	};

	if (reply.status != SUBUTAI_STATUS_OK) {
		reply.id = subutai_window_reply_id();
	}
	subutai_port_unlock(key);
	int status = cond_woken(&reply, mutex, invalidated);

	return status == 0 && stopped ? EINTR : status;
}
#endif

#ifdef SUBUTAI_PORT_SHARED_WINDOW
/* An untimed wait through the shared window that stop can end, as sleeping_cond_wait() does. */
static int shared_window_cond_wait(subutai_id_t cond, subutai_id_t mutex,
				   struct subutai_stop *stop)
{
	struct subutai_reply reply;
	bool invalidated;
	int ended = 0;
	unsigned int key = locked_issue(cond, SUBUTAI_OP_COND_WAIT, mutex, X_VALUE);

	if (!subutai_port_window_wait(&reply, cond, true, false, &invalidated, key, stop)) {
		/* Out for its reply now: a wake-up that comes meanwhile is only noted. */
		struct subutai_stop note = {.fn = NULL};

		ended = EINTR;
		key = locked_issue(cond, SUBUTAI_OP_COND_BROADCAST, 0, 0);
		subutai_port_window_wait(&reply, cond, true, false, &invalidated, key, &note);
		stop->stopped |= note.stopped;
	}
	int status = cond_woken(&reply, mutex, invalidated);

	return status == 0 ? ended : status;
}
#endif

int subutai_cond_wait_stoppable(subutai_id_t cond, subutai_id_t mutex, uint64_t deadline,
				struct subutai_stop *stop)
{
#ifdef SUBUTAI_PORT_WINDOW
	if (deadline == 0) {
		return window_cond_wait(cond, mutex, stop);
	}
#elif defined(SUBUTAI_PORT_SHARED_WINDOW)
	if (deadline == 0) {
		return shared_window_cond_wait(cond, mutex, stop);
	}
#endif
	return sleeping_cond_wait(cond, mutex, deadline, stop);
}

SUBUTAI_HW_PATH int subutai_cond_signal(subutai_id_t cond)
{
	return request(cond, SUBUTAI_OP_COND_SIGNAL, 0, 0, NULL, NULL);
}

SUBUTAI_HW_PATH int subutai_cond_broadcast(subutai_id_t cond)
{
	return request(cond, SUBUTAI_OP_COND_BROADCAST, 0, 0, NULL, NULL);
}

