/*
 * pthread condition variables: attributes, static initializers and the mutex's owner fields
 * here; the wait itself in the implementation holding the condition. A condition is allocated
 * at its first wait, next to the mutex it is used with: the hardware requeues a woken waiter
 * onto a hardware mutex only (TPDS'21 §III-D).
 */
#include "objects.h"

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

int pthread_condattr_setpshared(pthread_condattr_t *attr, int pshared)
{
	return rt_attr_setpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_condattr_getpshared(const pthread_condattr_t *attr, int *pshared)
{
	return rt_attr_getpshared(attr ? &attr->magic : NULL, pshared);
}

const char *pthread_cond_impl_np(const pthread_cond_t *cond)
{
	return impl_name(cond->magic, RT_MAGIC_COND, cond->impl);
}

int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex,
			   const struct timespec *abstime)
{
	struct timespec t;

	if (rt_abstime_clamp(abstime, &t) != 0) {
		return EINVAL;
	}
	return rt_cond_timedwait(cond, mutex, &t);
}
