/*
 * Software-only synchronization: the baseline every Subutai speed-up is measured against.
 *
 * The design follows what fast PThreads libraries do on top of futexes (Drepper, "Futexes are
 * tricky"), with the kernel's part done in place:
 *
 * - Every object is a block of words in the atomic unit: its state word, the spinlock of its
 *   wait queue and the queue's head and tail. The queue links sleeping cores through
 *   wait_next[core]; a core sleeps on one queue at a time.
 * - futex_wait() enqueues the caller if the state word still holds the value it expects (checked
 *   under the queue lock, so no wake-up is lost) and sleeps until a NoC wake-up message;
 *   futex_wake() dequeues and sends the messages after dropping the queue lock.
 * - Mutex: state 0 free, 1 locked, 2 locked and maybe contended (the low two bits). An
 *   uncontended lock or unlock is a single swap; only unlocks of a contended mutex touch the
 *   queue. An unlock leaves its core + 1 in the upper bits of the free state (its last-owner
 *   word), so a lock whose swap finds the mutex released by this same core skips the data-cache
 *   invalidation, as the hardware's GRANT_LOCAL lets the subutai backend do (the coherence rule of
 *   docs/architecture.md; both backends follow it).
 * - Condition: a sequence number; a broadcast wakes one waiter and requeues the others onto the
 *   mutex's queue (no thundering herd), as glibc did with FUTEX_CMP_REQUEUE.
 * - Barrier: arrival count under the queue lock; the last arrival wakes all the waiters.
 */
#include <errno.h>
#include <stdio.h>

#include "rt.h"

/* Words of a block. */
enum {
	W_STATE = 0, /* mutex state, cond sequence, barrier arrivals; free-list link when free */
	W_QLOCK,
	W_HEAD, /* queue of sleepers: waiter + 1, 0 if empty */
	W_TAIL,
	W_AUX,  /* mutex: owner waiter + 1 (error-checking); cond: waiters; barrier: count */
	W_AUX2, /* cond: handle of the waiters' software mutex */
	W_KIND,
};

#define KIND_MUTEX   1
#define KIND_COND    2
#define KIND_BARRIER 3
#define KIND_SPIN    4

static inline unsigned int word(uint32_t handle, unsigned int w)
{
	return RT_POOL + (handle - 1) * RT_BLOCK_WORDS + w;
}

static inline uint32_t ld(uint32_t handle, unsigned int w)
{
	return subutai_atomic_load(word(handle, w));
}

static inline void st(uint32_t handle, unsigned int w, uint32_t value)
{
	subutai_atomic_store(word(handle, w), value);
}

static inline uint32_t swap(uint32_t handle, unsigned int w, uint32_t value)
{
	return subutai_atomic_swap(word(handle, w), value);
}

/* Mutex state word. */
#define M_STATE(word)          ((word)&3u)
#define M_RELEASED_BY_ME(word) ((word) >> 2 == rt_core() + 1)
#define M_FREE_BY_ME           ((rt_core() + 1) << 2)

static inline uint32_t fetch_add(uint32_t handle, unsigned int w, uint32_t value)
{
	return subutai_atomic_fetch_add(word(handle, w), value);
}

/* Pool of blocks. */

static int block_alloc(unsigned int kind, uint32_t *handle)
{
	uint32_t h;

	rt_spin_lock(RT_POOL_LOCK);
	h = subutai_atomic_load(RT_POOL_FREE);
	if (h != 0) {
		subutai_atomic_store(RT_POOL_FREE, ld(h, W_STATE));
	} else {
		h = subutai_atomic_load(RT_POOL_NEXT) + 1;
		if (h > RT_POOL_BLOCKS) {
			rt_spin_unlock(RT_POOL_LOCK);
			return EAGAIN;
		}
		subutai_atomic_store(RT_POOL_NEXT, h);
	}
	rt_spin_unlock(RT_POOL_LOCK);
	for (unsigned int w = 0; w < RT_BLOCK_WORDS; w++) {
		st(h, w, 0);
	}
	st(h, W_KIND, kind);
	*handle = h;
	return 0;
}

static void block_free(uint32_t h)
{
	st(h, W_KIND, 0);
	rt_spin_lock(RT_POOL_LOCK);
	st(h, W_STATE, subutai_atomic_load(RT_POOL_FREE));
	subutai_atomic_store(RT_POOL_FREE, h);
	rt_spin_unlock(RT_POOL_LOCK);
}

/* Wait queues (callers hold W_QLOCK). */

SUBUTAI_SW_PATH static void enqueue(uint32_t h, unsigned int waiter)
{
	uint32_t tail = ld(h, W_TAIL);

	subutai_atomic_store(RT_WAIT_NEXT + waiter, 0);
	if (tail == 0) {
		st(h, W_HEAD, waiter + 1);
	} else {
		subutai_atomic_store(RT_WAIT_NEXT + tail - 1, waiter + 1);
	}
	st(h, W_TAIL, waiter + 1);
}

/* Takes a waiter off the queue; false if it is not on it (dequeued by a waker meanwhile). */
SUBUTAI_SW_PATH static bool unlink(uint32_t h, unsigned int waiter)
{
	uint32_t prev = 0;

	for (uint32_t w = ld(h, W_HEAD); w != 0; w = subutai_atomic_load(RT_WAIT_NEXT + w - 1)) {
		if (w == waiter + 1) {
			uint32_t next = subutai_atomic_load(RT_WAIT_NEXT + waiter);

			if (prev == 0) {
				st(h, W_HEAD, next);
			} else {
				subutai_atomic_store(RT_WAIT_NEXT + prev - 1, next);
			}
			if (ld(h, W_TAIL) == waiter + 1) {
				st(h, W_TAIL, prev);
			}
			return true;
		}
		prev = w;
	}
	return false;
}

/* Takes up to n sleepers off the queue; returns the first (waiter + 1, linked by wait_next). */
SUBUTAI_SW_PATH static uint32_t dequeue(uint32_t h, unsigned int n)
{
	uint32_t first = ld(h, W_HEAD);

	if (first == 0 || n == 0) {
		return 0;
	}
	uint32_t last = first;

	for (unsigned int i = 1; i < n; i++) {
		uint32_t next = subutai_atomic_load(RT_WAIT_NEXT + last - 1);

		if (next == 0) {
			break;
		}
		last = next;
	}
	uint32_t rest = subutai_atomic_load(RT_WAIT_NEXT + last - 1);

	st(h, W_HEAD, rest);
	if (rest == 0) {
		st(h, W_TAIL, 0);
	}
	subutai_atomic_store(RT_WAIT_NEXT + last - 1, 0);
	return first;
}

SUBUTAI_SW_PATH static void wake_list(uint32_t first, uint32_t what)
{
	while (first != 0) {
		/* Read the link before the wake-up: the woken waiter may sleep on another queue. */
		uint32_t next = subutai_atomic_load(RT_WAIT_NEXT + first - 1);

		rt_wake(first - 1, what);
		first = next;
	}
}

/* Sleeps on the queue while word w holds expected, until a wake-up or the deadline (global
 * cycles, 0: none); false on timeout.
 */
SUBUTAI_SW_PATH static bool futex_wait(uint32_t h, unsigned int w, uint32_t expected,
				       uint64_t deadline)
{
	rt_spin_lock(word(h, W_QLOCK));
	if (ld(h, w) != expected) {
		rt_spin_unlock(word(h, W_QLOCK));
		return true;
	}
	enqueue(h, rt_waiter());
	rt_spin_unlock(word(h, W_QLOCK));
	if (rt_sleep_until(deadline)) {
		return true;
	}
	rt_spin_lock(word(h, W_QLOCK));
	bool removed = unlink(h, rt_waiter());

	rt_spin_unlock(word(h, W_QLOCK));
	if (!removed) {
		/* A waker took it off the queue (or requeued it): its wake-up is on the way. */
		rt_sleep();
		return true;
	}
	return false;
}

SUBUTAI_SW_PATH static void futex_wake(uint32_t h, unsigned int n)
{
	rt_spin_lock(word(h, W_QLOCK));
	uint32_t first = dequeue(h, n);

	rt_spin_unlock(word(h, W_QLOCK));
	wake_list(first, h);
}

SUBUTAI_SW_PATH static bool valid(uint32_t h, unsigned int kind)
{
	return h >= 1 && h <= RT_POOL_BLOCKS && ld(h, W_KIND) == kind;
}

/* Frees a block of a kind unless its busy word has a bit of mask set (held, waited on,
 * arrivals). */
static int block_destroy(uint32_t h, unsigned int kind, unsigned int busy, uint32_t mask)
{
	if (!valid(h, kind)) {
		return EINVAL;
	}
	if ((ld(h, busy) & mask) != 0) {
		return EBUSY;
	}
	block_free(h);
	return 0;
}

/* Mutex. */

int sw_mutex_init(uint32_t *handle)
{
	return block_alloc(KIND_MUTEX, handle);
}

int sw_mutex_destroy(uint32_t h)
{
	return block_destroy(h, KIND_MUTEX, W_STATE, 3);
}

/* Lock of a mutex that may have sleepers: leaves it in state 2 so its unlock wakes the next.
 * Returns the free state it found (its last owner). */
SUBUTAI_SW_PATH static uint32_t mutex_lock_contended(uint32_t h)
{
	uint32_t old;

	while (M_STATE(old = swap(h, W_STATE, 2)) != 0) {
		futex_wait(h, W_STATE, 2, 0);
	}
	return old;
}

int sw_mutex_timedlock(uint32_t h, bool checked, uint64_t deadline)
{
	if (checked && ld(h, W_AUX) == rt_waiter() + 1) {
		return EDEADLK;
	}
	uint32_t old;

	/* A wake-up is no hand-over: a woken waiter tries the swap again, so one that then finds
	 * the deadline passed leaves the mutex to the next (its state stays 2: the unlock wakes
	 * one). */
	while (M_STATE(old = swap(h, W_STATE, 2)) != 0) {
		if (!futex_wait(h, W_STATE, 2, deadline)) {
			return ETIMEDOUT;
		}
	}
	if (checked) {
		st(h, W_AUX, rt_waiter() + 1);
	}
	subutai_dcache_invalidate_if(!M_RELEASED_BY_ME(old));
	return 0;
}

SUBUTAI_SW_PATH int sw_mutex_lock(uint32_t h, bool checked)
{
	/* Error checking: the owner word says who holds it. */
	if (checked && ld(h, W_AUX) == rt_waiter() + 1) {
		return EDEADLK;
	}
	uint32_t old = swap(h, W_STATE, 1);

	if (M_STATE(old) != 0) {
		/* A swap to 1 may have hidden a 2: the contended path puts it back before sleeping.
		 */
		old = mutex_lock_contended(h);
	}
	if (checked) {
		st(h, W_AUX, rt_waiter() + 1);
	}
	subutai_dcache_invalidate_if(!M_RELEASED_BY_ME(old));
	return 0;
}

SUBUTAI_SW_PATH int sw_mutex_trylock(uint32_t h, bool checked)
{
	if (M_STATE(ld(h, W_STATE)) != 0) {
		return EBUSY;
	}
	uint32_t old = swap(h, W_STATE, 1);

	if (M_STATE(old) == 2 && M_STATE(old = swap(h, W_STATE, 2)) != 0) {
		/* Restored the contended mark of a held mutex. */
		return EBUSY;
	}
	if (M_STATE(old) == 1) {
		return EBUSY;
	}
	if (checked) {
		st(h, W_AUX, rt_waiter() + 1);
	}
	subutai_dcache_invalidate_if(!M_RELEASED_BY_ME(old));
	return 0;
}

SUBUTAI_SW_PATH int sw_mutex_unlock(uint32_t h, bool checked)
{
	if (checked) {
		if (ld(h, W_AUX) != rt_waiter() + 1) {
			return EPERM;
		}
		st(h, W_AUX, 0);
	}
	if (M_STATE(swap(h, W_STATE, M_FREE_BY_ME)) == 2) {
		futex_wake(h, 1);
	}
	return 0;
}

/* Condition variable. */

int sw_cond_init(uint32_t *handle)
{
	return block_alloc(KIND_COND, handle);
}

int sw_cond_destroy(uint32_t h)
{
	return block_destroy(h, KIND_COND, W_AUX, ~0u);
}

SUBUTAI_SW_PATH uint32_t sw_cond_enter(uint32_t h, uint32_t sw_mutex)
{
	uint32_t seq = ld(h, W_STATE);

	/* Counted before the sequence is checked, so a signaller that sees no waiter cannot have
	 * been missed (it bumps the sequence first).
	 */
	fetch_add(h, W_AUX, 1);
	st(h, W_AUX2, sw_mutex);
	return seq;
}

SUBUTAI_SW_PATH void sw_cond_leave(uint32_t h)
{
	fetch_add(h, W_AUX, (uint32_t)-1);
}

SUBUTAI_SW_PATH int sw_cond_sleep(uint32_t h, uint32_t seq, uint64_t deadline, uint32_t sw_mutex,
				  bool checked)
{
	int result = futex_wait(h, W_STATE, seq, deadline) ? 0 : ETIMEDOUT;

	fetch_add(h, W_AUX, (uint32_t)-1);
	if (sw_mutex != 0) {
		/* Woken directly or requeued onto the mutex: either way others may sleep on it. */
		mutex_lock_contended(sw_mutex);
		if (checked) {
			st(sw_mutex, W_AUX, rt_waiter() + 1);
		}
		subutai_dcache_invalidate();
	}
	return result;
}

SUBUTAI_SW_PATH int sw_cond_signal(uint32_t h)
{
	fetch_add(h, W_STATE, 1);
	if (ld(h, W_AUX) != 0) {
		futex_wake(h, 1);
	}
	return 0;
}

SUBUTAI_SW_PATH int sw_cond_broadcast(uint32_t h)
{
	fetch_add(h, W_STATE, 1);
	if (ld(h, W_AUX) == 0) {
		return 0;
	}
	rt_spin_lock(word(h, W_QLOCK));
	uint32_t first = dequeue(h, RT_THREADS_MAX);
	uint32_t mutex = ld(h, W_AUX2);

	rt_spin_unlock(word(h, W_QLOCK));
	if (first == 0) {
		return 0;
	}
	uint32_t rest = subutai_atomic_load(RT_WAIT_NEXT + first - 1);

	if (mutex != 0 && rest != 0) {
		/* Requeue all but the first onto the mutex: each is woken by the unlock before its
		 * turn (the first one takes the mutex in the contended state, so that unlock
		 * wakes).
		 */
		uint32_t last = rest;

		while (subutai_atomic_load(RT_WAIT_NEXT + last - 1) != 0) {
			last = subutai_atomic_load(RT_WAIT_NEXT + last - 1);
		}
		rt_spin_lock(word(mutex, W_QLOCK));
		uint32_t tail = ld(mutex, W_TAIL);

		if (tail == 0) {
			st(mutex, W_HEAD, rest);
		} else {
			subutai_atomic_store(RT_WAIT_NEXT + tail - 1, rest);
		}
		st(mutex, W_TAIL, last);
		rt_spin_unlock(word(mutex, W_QLOCK));
		rt_wake(first - 1, h);
		return 0;
	}
	wake_list(first, h);
	return 0;
}

/* Barrier. */

int sw_barrier_init(uint32_t *handle, unsigned int count)
{
	int err = block_alloc(KIND_BARRIER, handle);

	if (err == 0) {
		st(*handle, W_AUX, count);
	}
	return err;
}

int sw_barrier_destroy(uint32_t h)
{
	return block_destroy(h, KIND_BARRIER, W_STATE, ~0u);
}

SUBUTAI_SW_PATH int sw_barrier_wait(uint32_t h)
{
	rt_spin_lock(word(h, W_QLOCK));
	uint32_t arrived = ld(h, W_STATE) + 1;

	if (arrived == ld(h, W_AUX)) {
		st(h, W_STATE, 0);
		uint32_t first = dequeue(h, RT_THREADS_MAX);

		rt_spin_unlock(word(h, W_QLOCK));
		wake_list(first, h);
		subutai_dcache_invalidate();
		return PTHREAD_BARRIER_SERIAL_THREAD;
	}
	st(h, W_STATE, arrived);
	enqueue(h, rt_waiter());
	rt_spin_unlock(word(h, W_QLOCK));
	rt_sleep();
	subutai_dcache_invalidate();
	return 0;
}

/* Spin lock: W_STATE is the lock word, W_AUX its owner + 1. */

int sw_spin_init(uint32_t *handle)
{
	return block_alloc(KIND_SPIN, handle);
}

int sw_spin_destroy(uint32_t h)
{
	return block_destroy(h, KIND_SPIN, W_STATE, 1);
}

unsigned int sw_spin_word(uint32_t h)
{
	return word(h, W_STATE);
}

unsigned int sw_spin_owner_word(uint32_t h)
{
	return word(h, W_AUX);
}
