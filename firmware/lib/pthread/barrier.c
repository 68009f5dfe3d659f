/*
 * pthread barriers: argument checks and attributes here; the wait itself in the implementation
 * holding the barrier (the Subutai hardware when an engine has room, else software), between the
 * port's barrier tracking calls (rt.h: seed 002's barrier participation status).
 */
#include "objects.h"

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

int pthread_barrierattr_setpshared(pthread_barrierattr_t *attr, int pshared)
{
	return rt_attr_setpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_barrierattr_getpshared(const pthread_barrierattr_t *attr, int *pshared)
{
	return rt_attr_getpshared(attr ? &attr->magic : NULL, pshared);
}

const char *pthread_barrier_impl_np(const pthread_barrier_t *barrier)
{
	return impl_name(barrier->magic, RT_MAGIC_BARRIER, barrier->impl);
}
