/*
 * pthread mutexes: argument checks, attributes, static initializers and recursion here; the
 * synchronization itself in the implementation holding each mutex: the Subutai hardware (the
 * driver, linked with the subutai backend) or software (swonly.c). A mutex is given to the
 * hardware when the program is linked with the subutai backend and an engine has room, else to
 * the software implementation (TPDS'21 §III-D).
 */
#include "objects.h"

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

int pthread_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared)
{
	return rt_attr_setpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_mutexattr_getpshared(const pthread_mutexattr_t *attr, int *pshared)
{
	return rt_attr_getpshared(attr ? &attr->magic : NULL, pshared);
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

int rt_lazy_setup(uint32_t *magic, uint32_t want, int (*setup)(void *), void *obj)
{
	return lazy_setup(magic, want, setup, obj);
}

int rt_mutex_static_setup(void *m)
{
	return mutex_setup(m, PTHREAD_MUTEX_DEFAULT);
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
static inline bool mutex_plain(const pthread_mutex_t *m)
{
	return LIKELY(m != NULL && m->magic == RT_MAGIC_MUTEX && m->type == PTHREAD_MUTEX_NORMAL);
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

const char *pthread_mutex_impl_np(const pthread_mutex_t *mutex)
{
	return impl_name(mutex->magic, RT_MAGIC_MUTEX, mutex->impl);
}
