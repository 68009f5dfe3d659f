/*
 * pthread mutexes, condition variables and barriers: argument checks, attributes, static
 * initializers and recursion here; the synchronization itself in the implementation holding each
 * object: the Subutai hardware (the driver, linked with the subutai backend) or software
 * (swonly.c).
 *
 * An object is given to the hardware when the program is linked with the subutai backend and an
 * engine has room, else to the software implementation (TPDS'21 §III-D). A condition variable is
 * allocated at its first wait, next to the mutex it is used with: the hardware requeues a woken
 * waiter onto a hardware mutex only.
 */
#include <errno.h>
#include <stddef.h>

#include "rt.h"

SUBUTAI_SYNC_PATH static bool use_hw(void)
{
	return rt_backend_hw;
}

/* Mutexes. */

int pthread_mutexattr_init(pthread_mutexattr_t *attr)
{
	int err = rt_attr_init(attr ? &attr->magic : NULL);

	if (err == 0) {
		attr->type = PTHREAD_MUTEX_DEFAULT;
	}
	return err;
}

int pthread_mutexattr_destroy(pthread_mutexattr_t *attr)
{
	return rt_attr_destroy(attr ? &attr->magic : NULL);
}

int pthread_mutexattr_settype(pthread_mutexattr_t *attr, int type)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR ||
	    (type != PTHREAD_MUTEX_NORMAL && type != PTHREAD_MUTEX_ERRORCHECK &&
	     type != PTHREAD_MUTEX_RECURSIVE)) {
		return EINVAL;
	}
	attr->type = type;
	return 0;
}

int pthread_mutexattr_gettype(const pthread_mutexattr_t *attr, int *type)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR || !type) {
		return EINVAL;
	}
	*type = attr->type;
	return 0;
}

static int mutex_setup(pthread_mutex_t *m, int type)
{
	/* Error checking is done by the implementation; recursion by this layer on a normal lock.
	 */
	bool errorcheck = type == PTHREAD_MUTEX_ERRORCHECK;
	int err = EAGAIN;

	if (use_hw()) {
		err = rt_hw_mutex_init(&m->handle, errorcheck);
		m->impl = RT_IMPL_HW;
	}
	if (err == EAGAIN) {
		err = sw_mutex_init(&m->handle);
		m->impl = RT_IMPL_SW;
	}
	if (err != 0) {
		return err;
	}
	m->type = type;
	m->depth = 0;
	m->owner = 0;
	rt_publish(&m->magic, RT_MAGIC_MUTEX);
	return 0;
}

int pthread_mutex_init(pthread_mutex_t *mutex, const pthread_mutexattr_t *attr)
{
	if (!mutex || (attr && attr->magic != RT_MAGIC_ATTR)) {
		return EINVAL;
	}
	return mutex_setup(mutex, attr ? attr->type : PTHREAD_MUTEX_DEFAULT);
}

/*
 * 0 when the object is ready, after setting up a statically initialized one (under the runtime
 * lock: several cores may use it first at once); EINVAL for a destroyed or corrupt one.
 */
SUBUTAI_SYNC_PATH static int lazy_setup(uint32_t *magic, uint32_t want, int (*setup)(void *),
					void *obj)
{
	if (*magic == want) {
		return 0;
	}
	if (*magic != 0) {
		return EINVAL;
	}
	int err = 0;

	rt_spin_lock(RT_LOCK);
	/* Another core may have set it up: our cached copy of the object may be stale. */
	subutai_dcache_invalidate();
	if (*magic == 0) {
		err = setup(obj);
	} else if (*magic != want) {
		err = EINVAL;
	}
	rt_spin_unlock(RT_LOCK);
	return err;
}

int rt_lazy_setup(uint32_t *magic, uint32_t want, int (*setup)(void *), void *obj)
{
	return lazy_setup(magic, want, setup, obj);
}

static int mutex_static_setup(void *m)
{
	return mutex_setup(m, PTHREAD_MUTEX_DEFAULT);
}

static inline int mutex_ready(pthread_mutex_t *m)
{
	if (!m) {
		return EINVAL;
	}
	return lazy_setup(&m->magic, RT_MAGIC_MUTEX, mutex_static_setup, m);
}

static inline bool is_errorcheck(const pthread_mutex_t *m)
{
	return m->type == PTHREAD_MUTEX_ERRORCHECK;
}

SUBUTAI_SYNC_PATH static int mutex_lock_raw(pthread_mutex_t *m)
{
	return m->impl == RT_IMPL_HW ? subutai_mutex_lock(m->handle)
				     : sw_mutex_lock(m->handle, is_errorcheck(m));
}

SUBUTAI_SYNC_PATH static int mutex_unlock_raw(pthread_mutex_t *m)
{
	return m->impl == RT_IMPL_HW ? subutai_mutex_unlock(m->handle)
				     : sw_mutex_unlock(m->handle, is_errorcheck(m));
}

/* A lock and an unlock the scheduler is told of (rt_cs_*; the raw ones above are the steps of a
 * condition wait, through which the thread keeps the mutex as far as the scheduler sees). */
#ifdef RT_CS_TRACKING
SUBUTAI_SYNC_PATH static int mutex_lock_cs(pthread_mutex_t *m)
{
	rt_cs_wait();
	int err = mutex_lock_raw(m);

	rt_cs_enter(err);
	return err;
}

SUBUTAI_SYNC_PATH static int mutex_unlock_cs(pthread_mutex_t *m)
{
	int err = mutex_unlock_raw(m);

	rt_cs_exit(err);
	return err;
}
#else
#define mutex_lock_cs   mutex_lock_raw
#define mutex_unlock_cs mutex_unlock_raw
#endif

int pthread_mutex_destroy(pthread_mutex_t *mutex)
{
	if (!mutex || (mutex->magic != RT_MAGIC_MUTEX && mutex->magic != 0)) {
		return EINVAL;
	}
	if (mutex->magic == 0) {
		/* Never used since its static initialization: nothing allocated. */
		mutex->magic = RT_MAGIC_DEAD;
		return 0;
	}
	int err = mutex->impl == RT_IMPL_HW ? subutai_free(mutex->handle)
					    : sw_mutex_destroy(mutex->handle);

	if (err == 0) {
		mutex->magic = RT_MAGIC_DEAD;
	}
	return err;
}

/*
 * Fast paths. A set-up, non-recursive mutex needs no more than its magic, type, impl and
 * handle: that case goes straight to its implementation as a tail call (no stack frame, whose
 * write-through stores and, after an invalidation, refills cost more than the request), the rest
 * (static initializers, recursion, errors) to the *_slow functions.
 */
#define LIKELY(x) __builtin_expect(!!(x), 1)

static inline bool mutex_plain(const pthread_mutex_t *m)
{
	return LIKELY(m != NULL && m->magic == RT_MAGIC_MUTEX && m->type == PTHREAD_MUTEX_NORMAL);
}

/*
 * The pthread object's owner field: the owning thread of a recursive mutex (its depth beside it),
 * and of an error-checking one, so that a timed lock by the owner says EDEADLK (the hardware's
 * TRYLOCK says EBUSY to its owner, and a timed lock only ever tries). Only the owner writes it;
 * another thread reads it only to compare with itself, which a stale copy cannot fool: a thread
 * finds itself there only if it wrote it, and it clears it (write-through) before it unlocks.
 */
static inline bool tracks_owner(const pthread_mutex_t *m)
{
	return m->type != PTHREAD_MUTEX_NORMAL;
}

static int mutex_lock_slow(pthread_mutex_t *mutex);
static int mutex_unlock_slow(pthread_mutex_t *mutex);

SUBUTAI_SYNC_PATH int pthread_mutex_lock(pthread_mutex_t *mutex)
{
	if (mutex_plain(mutex)) {
		return mutex_lock_cs(mutex);
	}
	return mutex_lock_slow(mutex);
}

SUBUTAI_SYNC_PATH int pthread_mutex_unlock(pthread_mutex_t *mutex)
{
	if (mutex_plain(mutex)) {
		return mutex_unlock_cs(mutex);
	}
	return mutex_unlock_slow(mutex);
}

static __attribute__((noinline)) int mutex_lock_slow(pthread_mutex_t *mutex)
{
	int err = mutex_ready(mutex);

	if (err != 0) {
		return err;
	}
	if (mutex->type == PTHREAD_MUTEX_RECURSIVE) {
		pthread_t self = pthread_self();

		/* Only the owner itself can have written its id (and it clears it before
		 * unlocking). */
		if (mutex->owner == self) {
			if (mutex->depth == UINT16_MAX) {
				return EAGAIN;
			}
			mutex->depth++;
			return 0;
		}
		err = mutex_lock_cs(mutex);
		if (err == 0) {
			mutex->owner = self;
			mutex->depth = 1;
		}
		return err;
	}
	err = mutex_lock_cs(mutex);
	if (err == 0 && tracks_owner(mutex)) {
		mutex->owner = pthread_self();
	}
	return err;
}

SUBUTAI_SYNC_PATH int pthread_mutex_trylock(pthread_mutex_t *mutex)
{
	int err = mutex_ready(mutex);

	if (err != 0) {
		return err;
	}
	bool recursive = mutex->type == PTHREAD_MUTEX_RECURSIVE;

	if (recursive && mutex->owner == pthread_self()) {
		if (mutex->depth == UINT16_MAX) {
			return EAGAIN;
		}
		mutex->depth++;
		return 0;
	}
	/* Marked from the request on: a thread granted a mutex is never taken for one that holds
	 * none (a scheduler may move only the latter between cores). */
	rt_cs_wait();
	err = mutex->impl == RT_IMPL_HW ? subutai_mutex_trylock(mutex->handle)
					: sw_mutex_trylock(mutex->handle, is_errorcheck(mutex));
	rt_cs_enter(err);
	if (err == 0 && tracks_owner(mutex)) {
		mutex->owner = pthread_self();
		mutex->depth = 1;
	}
	return err;
}

/*
 * A lock that gives up at an absolute CLOCK_REALTIME time. Hardware mutexes are never queued for
 * it: the engine cannot take a waiter out of a mutex's queue, and a grant that came after the
 * waiter had given up would be a mutex nobody unlocks. Instead the thread polls with TRYLOCK,
 * sleeping between tries (rt_nap_until(): the core's other threads run, or the core sleeps) for
 * 64 cycles, then twice as long each time up to 16,384, never past the deadline; a TRYLOCK either
 * takes the mutex or leaves no trace. Software mutexes wait in their queue until the deadline and
 * then take themselves off it (swonly.c). Either way a mutex released at the moment of the
 * timeout is taken or left free for the others, never lost.
 */
#define TIMEDLOCK_NAP_MIN 64
#define TIMEDLOCK_NAP_MAX 16384

int rt_hw_timedlock(uint32_t handle, uint64_t deadline, int (*trylock)(uint32_t handle))
{
	uint64_t nap = TIMEDLOCK_NAP_MIN;
	int err;

	while ((err = trylock(handle)) == EBUSY) {
		uint64_t now = subutai_cycles();

		if (now >= deadline) {
			return ETIMEDOUT;
		}
		rt_nap_until(deadline - now > nap ? now + nap : deadline);
		nap = nap < TIMEDLOCK_NAP_MAX ? 2 * nap : TIMEDLOCK_NAP_MAX;
	}
	return err;
}

int pthread_mutex_timedlock(pthread_mutex_t *mutex, const struct timespec *abstime)
{
	/* POSIX: a mutex that can be locked at once is, whatever the timeout says. */
	int err = pthread_mutex_trylock(mutex);

	if (err != EBUSY) {
		return err;
	}
	struct timespec t;

	if (rt_abstime_clamp(abstime, &t) != 0) {
		return EINVAL;
	}
	if (mutex->type == PTHREAD_MUTEX_ERRORCHECK && mutex->owner == pthread_self()) {
		return EDEADLK;
	}
	uint64_t deadline = rt_timespec_to_cycles(&t);

	if (deadline <= subutai_cycles()) {
		/* Already past (a time of 0 included, which the waits below would take for none).
		 */
		return ETIMEDOUT;
	}
	rt_cs_wait();
	err = mutex->impl == RT_IMPL_HW
		      ? rt_hw_timedlock(mutex->handle, deadline, subutai_mutex_trylock)
		      : sw_mutex_timedlock(mutex->handle, is_errorcheck(mutex), deadline);
	rt_cs_enter(err);
	if (err == 0 && tracks_owner(mutex)) {
		mutex->owner = pthread_self();
		mutex->depth = 1;
	}
	return err;
}

static __attribute__((noinline)) int mutex_unlock_slow(pthread_mutex_t *mutex)
{
	int err = mutex_ready(mutex);

	if (err != 0) {
		return err;
	}
	if (mutex->type == PTHREAD_MUTEX_RECURSIVE) {
		if (mutex->owner != pthread_self() || mutex->depth == 0) {
			return EPERM;
		}
		if (--mutex->depth > 0) {
			return 0;
		}
		mutex->owner = 0;
	} else if (tracks_owner(mutex) && mutex->owner == pthread_self()) {
		/* Error-checking: cleared before the unlock (a non-owner's unlock gets EPERM
		 * below). */
		mutex->owner = 0;
	}
	return mutex_unlock_cs(mutex);
}

/* Condition variables. */

int pthread_condattr_init(pthread_condattr_t *attr)
{
	int err = rt_attr_init(attr ? &attr->magic : NULL);

	if (err == 0) {
		attr->clock = CLOCK_REALTIME;
	}
	return err;
}

int pthread_condattr_setclock(pthread_condattr_t *attr, clockid_t clock_id)
{
	/* POSIX: not a CPU-time clock; the SoC has these two. */
	if (!attr || attr->magic != RT_MAGIC_ATTR || !rt_clock_known(clock_id)) {
		return EINVAL;
	}
	attr->clock = clock_id;
	return 0;
}

int pthread_condattr_getclock(const pthread_condattr_t *attr, clockid_t *clock_id)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR || !clock_id) {
		return EINVAL;
	}
	*clock_id = attr->clock;
	return 0;
}

int pthread_condattr_destroy(pthread_condattr_t *attr)
{
	return rt_attr_destroy(attr ? &attr->magic : NULL);
}

static int cond_static_setup(void *obj)
{
	pthread_cond_t *cond = obj;

	cond->handle = 0;
	cond->impl = 0;
	rt_publish(&cond->magic, RT_MAGIC_COND);
	return 0;
}

int pthread_cond_init(pthread_cond_t *cond, const pthread_condattr_t *attr)
{
	if (!cond || (attr && attr->magic != RT_MAGIC_ATTR)) {
		return EINVAL;
	}
	return cond_static_setup(cond);
}

static inline int cond_ready(pthread_cond_t *cond)
{
	if (!cond) {
		return EINVAL;
	}
	return lazy_setup(&cond->magic, RT_MAGIC_COND, cond_static_setup, cond);
}

int pthread_cond_destroy(pthread_cond_t *cond)
{
	int err = cond_ready(cond);

	if (err != 0) {
		return err;
	}
	if (cond->handle != 0) {
		err = cond->impl == RT_IMPL_HW ? subutai_free(cond->handle)
					       : sw_cond_destroy(cond->handle);
	}
	if (err == 0) {
		cond->magic = RT_MAGIC_DEAD;
	}
	return err;
}

/* First wait: the condition goes where its mutex is (the hardware if it has room). */
static int cond_allocate(pthread_cond_t *cond, const pthread_mutex_t *mutex)
{
	int err = 0;

	rt_spin_lock(RT_LOCK);
	subutai_dcache_invalidate();
	if (cond->handle == 0) {
		err = EAGAIN;
		if (mutex->impl == RT_IMPL_HW) {
			err = rt_hw_cond_init(&cond->handle);
			cond->impl = RT_IMPL_HW;
		}
		if (err == EAGAIN) {
			err = sw_cond_init(&cond->handle);
			cond->impl = RT_IMPL_SW;
		}
	}
	rt_spin_unlock(RT_LOCK);
	return err;
}

/*
 * A wait on a software condition, with a mutex of either implementation. Where cancellation can
 * come (slot, else RT_NO_SLOT), the thread publishes its tag once it is in the condition's queue
 * (cancel.c): a canceller's broadcast then wakes it. ECANCELED: cancelled before it released
 * the mutex.
 */
#define RT_NO_SLOT (~0u)

SUBUTAI_SYNC_PATH static inline __attribute__((always_inline)) int
sw_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t deadline, unsigned int slot)
{
	uint32_t sw_mutex = mutex->impl == RT_IMPL_SW ? mutex->handle : 0;
	uint32_t seq = sw_cond_enter(cond->handle, sw_mutex);

	if (slot != RT_NO_SLOT &&
	    rt_cancel_enter(slot, (uint32_t)(uintptr_t)cond | RT_WAIT_COND) != 0) {
		sw_cond_leave(cond->handle);
		return ECANCELED;
	}
	int err = mutex_unlock_raw(mutex);

	if (err != 0) {
		sw_cond_leave(cond->handle);
		return err;
	}
	int result = sw_cond_sleep(cond->handle, seq, deadline, sw_mutex, is_errorcheck(mutex));

	if (sw_mutex == 0) {
		err = mutex_lock_raw(mutex);
	}
	return err != 0 ? err : result;
}

/*
 * The owner fields of a mutex a thread waits with: a recursive or error-checking mutex forgets
 * its owner while the thread waits (owner_release()) and has it back after (owner_restore(): on
 * success and on a timeout the mutex is owned again; on an error it was not released).
 */
static inline int owner_release(pthread_mutex_t *mutex, pthread_t *owner)
{
	*owner = mutex->owner;
	if (mutex->type == PTHREAD_MUTEX_RECURSIVE) {
		if (*owner != pthread_self()) {
			return EPERM;
		}
		mutex->owner = 0;
		mutex->depth = 0;
	} else if (tracks_owner(mutex) && *owner == pthread_self()) {
		mutex->owner = 0;
	}
	return 0;
}

static inline void owner_restore(pthread_mutex_t *mutex, pthread_t owner)
{
	if (mutex->type == PTHREAD_MUTEX_RECURSIVE) {
		mutex->owner = owner;
		mutex->depth = 1;
	} else if (tracks_owner(mutex) && owner == pthread_self()) {
		mutex->owner = owner;
	}
}

/*
 * A condition wait of a program that can cancel threads (it links pthread_cancel()): a
 * cancellation point. A request is acted on at the entry, with the mutex held, and on the way
 * out, with the mutex held again (the cleanup handlers run with it, as POSIX says); a waiter of a
 * hardware condition gets itself out of the engine's queue when cancelled
 * (subutai_cond_wait_stoppable()).
 */
static __attribute__((noinline)) int
cond_wait_cancellable(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t deadline)
{
	unsigned int slot = rt_self_slot();
	bool hw = cond->impl == RT_IMPL_HW;
	uint32_t cancel = rt_cancel_enter(slot, hw ? rt_wait_tag() : 0);

	if (cancel != 0) {
		rt_cancel_take_wake(cancel, false);
		rt_cancel_act();
	}
	pthread_t owner;
	int err = owner_release(mutex, &owner);

	if (err != 0) {
		return err;
	}
	struct subutai_stop stop = {.fn = rt_cancel_stop, .arg = slot};

	rt_cs_wait();
	if (!hw) {
		err = sw_cond_wait(cond, mutex, deadline, slot);
	} else if (mutex->impl != RT_IMPL_HW) {
		err = EINVAL;
	} else {
		err = subutai_cond_wait_stoppable(cond->handle, mutex->handle, deadline, &stop);
		if (err == EINTR) {
			err = 0; /* stopped by cancellation, acted on below */
		}
	}
	rt_cs_woken();
	owner_restore(mutex, owner);
	cancel = rt_cancel_exit(slot);
	if (cancel != 0) {
		rt_cancel_take_wake(cancel, stop.stopped);
		if (err == 0 || err == ETIMEDOUT || err == ECANCELED) {
			rt_cancel_act();
		}
	}
	return err;
}

/* deadline: global cycles, 0 for none. */
SUBUTAI_SYNC_PATH static int cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex,
				       uint64_t deadline)
{
	int err = cond_ready(cond);

	if (err == 0) {
		err = mutex_ready(mutex);
	}
	if (err != 0) {
		return err;
	}
	if (mutex->type == PTHREAD_MUTEX_RECURSIVE && mutex->depth > 1) {
		/* Waiting would keep the mutex locked: nobody could signal. */
		return EPERM;
	}
	if (cond->handle == 0) {
		err = cond_allocate(cond, mutex);
		if (err != 0) {
			return err;
		}
	}
	if (rt_cancel_linked()) {
		return cond_wait_cancellable(cond, mutex, deadline);
	}
	pthread_t owner;

	err = owner_release(mutex, &owner);
	if (err != 0) {
		return err;
	}
	rt_cs_wait();
	if (cond->impl == RT_IMPL_HW) {
		/* A hardware condition is only ever used with the hardware mutex it was made for.
		 */
		if (mutex->impl != RT_IMPL_HW) {
			err = EINVAL;
		} else if (deadline == 0) {
			err = subutai_cond_wait(cond->handle, mutex->handle);
		} else {
			err = subutai_cond_timedwait(cond->handle, mutex->handle, deadline);
		}
	} else {
		err = sw_cond_wait(cond, mutex, deadline, RT_NO_SLOT);
	}
	rt_cs_woken();
	owner_restore(mutex, owner);
	return err;
}

SUBUTAI_SYNC_PATH int pthread_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex)
{
	return cond_wait(cond, mutex, 0);
}

int rt_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime)
{
	if (!rt_timespec_valid(abstime)) {
		return EINVAL;
	}
	/* A time of the condition's clock (its attribute): both clocks count the same cycles. */
	uint64_t deadline = rt_timespec_to_cycles(abstime);

	if (deadline <= subutai_cycles()) {
		/* Already past: no wait, but the mutex is released and taken again as for a wait.
		 */
		deadline = subutai_cycles() + 1;
	}
	return cond_wait(cond, mutex, deadline);
}

/* A set-up hardware condition that has had a waiter: signal and broadcast go straight to the
 * engine. */
SUBUTAI_SYNC_PATH static inline bool cond_hw_ready(const pthread_cond_t *cond)
{
	return LIKELY(cond != NULL && cond->magic == RT_MAGIC_COND && cond->impl == RT_IMPL_HW &&
		      cond->handle != 0);
}

/* Signal (all false) or broadcast; inlined into both, so each folds its own branch. */
SUBUTAI_SYNC_PATH static inline __attribute__((always_inline)) int cond_wake(pthread_cond_t *cond,
									     bool all)
{
	if (cond_hw_ready(cond)) {
		return all ? subutai_cond_broadcast(cond->handle)
			   : subutai_cond_signal(cond->handle);
	}
	int err = cond_ready(cond);

	if (err != 0 || cond->handle == 0) {
		/* Never waited on: nobody to wake. */
		return err;
	}
	if (cond->impl == RT_IMPL_HW) {
		return all ? subutai_cond_broadcast(cond->handle)
			   : subutai_cond_signal(cond->handle);
	}
	return all ? sw_cond_broadcast(cond->handle) : sw_cond_signal(cond->handle);
}

SUBUTAI_SYNC_PATH int pthread_cond_signal(pthread_cond_t *cond)
{
	return cond_wake(cond, false);
}

SUBUTAI_SYNC_PATH int pthread_cond_broadcast(pthread_cond_t *cond)
{
	return cond_wake(cond, true);
}

/* Barriers. */

int pthread_barrierattr_init(pthread_barrierattr_t *attr)
{
	return rt_attr_init(attr ? &attr->magic : NULL);
}

int pthread_barrierattr_destroy(pthread_barrierattr_t *attr)
{
	return rt_attr_destroy(attr ? &attr->magic : NULL);
}

int pthread_barrier_init(pthread_barrier_t *barrier, const pthread_barrierattr_t *attr,
			 unsigned int count)
{
	if (!barrier || count == 0 || count > UINT16_MAX ||
	    (attr && attr->magic != RT_MAGIC_ATTR)) {
		return EINVAL;
	}
	int err = EAGAIN;

	if (use_hw()) {
		err = rt_hw_barrier_init(&barrier->handle, count);
		barrier->impl = RT_IMPL_HW;
	}
	if (err == EAGAIN) {
		err = sw_barrier_init(&barrier->handle, count);
		barrier->impl = RT_IMPL_SW;
	}
	if (err != 0) {
		return err;
	}
	barrier->count = count;
	rt_publish(&barrier->magic, RT_MAGIC_BARRIER);
	return 0;
}

int pthread_barrier_destroy(pthread_barrier_t *barrier)
{
	if (!barrier || barrier->magic != RT_MAGIC_BARRIER) {
		return EINVAL;
	}
	int err = barrier->impl == RT_IMPL_HW ? subutai_free(barrier->handle)
					      : sw_barrier_destroy(barrier->handle);

	if (err == 0) {
		barrier->magic = RT_MAGIC_DEAD;
	}
	return err;
}

SUBUTAI_SYNC_PATH int pthread_barrier_wait(pthread_barrier_t *barrier)
{
	if (!barrier || barrier->magic != RT_MAGIC_BARRIER) {
		return EINVAL;
	}
	rt_barrier_arrive(barrier);
	int ret = barrier->impl == RT_IMPL_HW ? subutai_barrier_wait(barrier->handle)
					      : sw_barrier_wait(barrier->handle);

	rt_barrier_leave();
	return ret;
}

/* Reports. */

static const char *impl_name(uint32_t magic, uint32_t want, uint8_t impl)
{
	if (magic != want) {
		return "none";
	}
	return impl == RT_IMPL_HW ? "subutai" : impl == RT_IMPL_SW ? "swonly" : "none";
}

const char *pthread_mutex_impl_np(const pthread_mutex_t *mutex)
{
	return impl_name(mutex->magic, RT_MAGIC_MUTEX, mutex->impl);
}

const char *pthread_cond_impl_np(const pthread_cond_t *cond)
{
	return impl_name(cond->magic, RT_MAGIC_COND, cond->impl);
}

const char *pthread_barrier_impl_np(const pthread_barrier_t *barrier)
{
	return impl_name(barrier->magic, RT_MAGIC_BARRIER, barrier->impl);
}

unsigned int pthread_sw_objects_max_np(void)
{
	return RT_POOL_BLOCKS;
}

int pthread_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared)
{
	return rt_attr_setpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_mutexattr_getpshared(const pthread_mutexattr_t *attr, int *pshared)
{
	return rt_attr_getpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_condattr_setpshared(pthread_condattr_t *attr, int pshared)
{
	return rt_attr_setpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_condattr_getpshared(const pthread_condattr_t *attr, int *pshared)
{
	return rt_attr_getpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_barrierattr_setpshared(pthread_barrierattr_t *attr, int pshared)
{
	return rt_attr_setpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_barrierattr_getpshared(const pthread_barrierattr_t *attr, int *pshared)
{
	return rt_attr_getpshared(attr ? &attr->magic : NULL, pshared);
}

/* After everything else in this file: the code before it keeps its place (rt_cond_timedwait()). */
int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex,
			   const struct timespec *abstime)
{
	struct timespec t;

	if (rt_abstime_clamp(abstime, &t) != 0) {
		return EINVAL;
	}
	return rt_cond_timedwait(cond, mutex, &t);
}
