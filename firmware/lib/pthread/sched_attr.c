/*
 * Scheduling attributes (pthread.h): contention scope, inheritance, policy and priority, and the
 * concurrency hint. Classic suites set them as a matter of course (Phoenix asks for
 * PTHREAD_SCOPE_SYSTEM on every thread it creates; docs/programs.md). The library has one kind
 * of thread, scheduled by its runtime (bare metal: each core's threads in turn; Zephyr: the
 * kernel's threads of one priority): it accepts exactly that, system scope, inherited
 * scheduling, SCHED_OTHER at priority 0, and refuses the rest with ENOTSUP, as POSIX allows for
 * an attribute value not supported, rather than keeping a value it would not honour.
 */
#include <errno.h>
#include <sched.h>

#include "rt.h"

static bool attr_valid(const pthread_attr_t *attr)
{
	return attr && attr->magic == RT_MAGIC_ATTR;
}

/* A setting with one value supported: 0 for it, ENOTSUP for the other value POSIX defines. */
static int only(const pthread_attr_t *attr, int value, int supported, int other)
{
	if (!attr_valid(attr) || (value != supported && value != other)) {
		return EINVAL;
	}
	return value == supported ? 0 : ENOTSUP;
}

/* The value of such a setting. */
static int only_value(const pthread_attr_t *attr, int *value, int supported)
{
	if (!attr_valid(attr) || !value) {
		return EINVAL;
	}
	*value = supported;
	return 0;
}

int pthread_attr_setscope(pthread_attr_t *attr, int scope)
{
	return only(attr, scope, PTHREAD_SCOPE_SYSTEM, PTHREAD_SCOPE_PROCESS);
}

int pthread_attr_getscope(const pthread_attr_t *attr, int *scope)
{
	return only_value(attr, scope, PTHREAD_SCOPE_SYSTEM);
}

int pthread_attr_setinheritsched(pthread_attr_t *attr, int inheritsched)
{
	return only(attr, inheritsched, PTHREAD_INHERIT_SCHED, PTHREAD_EXPLICIT_SCHED);
}

int pthread_attr_getinheritsched(const pthread_attr_t *attr, int *inheritsched)
{
	return only_value(attr, inheritsched, PTHREAD_INHERIT_SCHED);
}

/* A policy and priority: SCHED_OTHER at 0, the one there is; other known policies ENOTSUP. */
static int sched_check(int policy, const struct sched_param *param)
{
	if (policy != SCHED_OTHER && policy != SCHED_FIFO && policy != SCHED_RR) {
		return EINVAL;
	}
	if (policy != SCHED_OTHER || (param && param->sched_priority != 0)) {
		return ENOTSUP;
	}
	return 0;
}

int pthread_attr_setschedpolicy(pthread_attr_t *attr, int policy)
{
	return attr_valid(attr) ? sched_check(policy, NULL) : EINVAL;
}

int pthread_attr_getschedpolicy(const pthread_attr_t *attr, int *policy)
{
	return only_value(attr, policy, SCHED_OTHER);
}

int pthread_attr_setschedparam(pthread_attr_t *attr, const struct sched_param *param)
{
	return attr_valid(attr) && param ? sched_check(SCHED_OTHER, param) : EINVAL;
}

int pthread_attr_getschedparam(const pthread_attr_t *attr, struct sched_param *param)
{
	if (!attr_valid(attr) || !param) {
		return EINVAL;
	}
	param->sched_priority = 0;
	return 0;
}

int pthread_getschedparam(pthread_t thread, int *policy, struct sched_param *param)
{
	(void)thread;
	if (!policy || !param) {
		return EINVAL;
	}
	*policy = SCHED_OTHER;
	param->sched_priority = 0;
	return 0;
}

int pthread_setschedparam(pthread_t thread, int policy, const struct sched_param *param)
{
	(void)thread;
	return param ? sched_check(policy, param) : EINVAL;
}

/* The concurrency hint: kept and returned, as POSIX asks; every thread is a kernel-level one
 * already (one runtime thread per pthread). */
static int concurrency __rt_shared;

int pthread_setconcurrency(int new_level)
{
	if (new_level < 0) {
		return EINVAL;
	}
	concurrency = new_level;
	return 0;
}

int pthread_getconcurrency(void)
{
	return concurrency;
}
