/*
 * Threads of the PThreads library, the part common to its ports: handles, attributes, creation,
 * join and detach. A port (firmware/port/baremetal: user-level threads, ult.c; zephyr-app: Zephyr
 * threads) places threads on cores, runs them and puts waiters to sleep.
 *
 * The thread table (start routine, argument, return value) is in shared memory; the states that
 * cores race on (slot generations, join states, live threads) are atomic-unit words.
 *
 * Join state of a slot: 0 while the thread runs and nobody waits, JOIN_WAITING | waiter while a
 * joiner sleeps, JOIN_DETACHED once detached, JOIN_EXITED once it has exited. A swap decides the
 * race between the exit and the join (or detach), so exactly one wake-up is sent when, and only
 * when, the joiner sleeps, and exactly one side frees the slot of a detached thread. The claim
 * word lets only one join or detach through. A join is a cancellation point (join_sleep()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt.h"

#define JOIN_WAITING  0x80000000u
#define JOIN_EXITED   0x40000000u
#define JOIN_DETACHED 0x20000000u

struct rt_thread rt_threads[RT_THREADS_MAX] __rt_shared;

/* Generations are never 0 (a free slot), and fit the handle. */
uint32_t rt_next_gen(void)
{
	uint32_t gen;

	do {
		gen = subutai_atomic_fetch_add(RT_GEN, 1) & ((1u << (32 - RT_SLOT_BITS)) - 1);
	} while (gen == 0);
	return gen;
}

/* A free slot of the core's (RT_SLOT_FIRST()), or -1. */
static int slot_alloc(unsigned int core, uint32_t *gen)
{
	int slot = -1;

	rt_spin_lock(RT_LOCK);
	for (unsigned int s = RT_SLOT_FIRST(core); s < RT_SLOT_FIRST(core) + RT_SLOT_COUNT; s++) {
		if (subutai_atomic_load(RT_THREAD_GEN + s) == 0) {
			*gen = rt_next_gen();
			subutai_atomic_store(RT_THREAD_GEN + s, *gen);
			slot = s;
			break;
		}
	}
	rt_spin_unlock(RT_LOCK);
	return slot;
}

void rt_slot_free(unsigned int slot)
{
	subutai_atomic_store(RT_THREAD_GEN + slot, 0);
#ifdef RT_SLOT_CORE
	/* Bare metal: a core's load is the slots it holds, a thread that exited unjoined included,
	 * so that a core rt_place() claims always has a free slot. Given back after the slot is. */
	rt_unplace(RT_SLOT_CORE(slot));
#endif
}

/* The slot of a live handle, or -1. */
int rt_slot_of(pthread_t t)
{
	unsigned int slot = RT_HANDLE_SLOT(t);

	if (slot >= RT_THREADS_MAX || RT_HANDLE_GEN(t) == 0 ||
	    subutai_atomic_load(RT_THREAD_GEN + slot) != RT_HANDLE_GEN(t)) {
		return -1;
	}
	return slot;
}

int pthread_attr_init(pthread_attr_t *attr)
{
	int err = rt_attr_init(attr ? &attr->magic : NULL);

	if (err == 0) {
		attr->detachstate = PTHREAD_CREATE_JOINABLE;
		attr->core = -1;
		attr->stacksize = 0;
	}
	return err;
}

int pthread_attr_destroy(pthread_attr_t *attr)
{
	return rt_attr_destroy(attr ? &attr->magic : NULL);
}

int pthread_attr_setdetachstate(pthread_attr_t *attr, int detachstate)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR ||
	    (detachstate != PTHREAD_CREATE_JOINABLE && detachstate != PTHREAD_CREATE_DETACHED)) {
		return EINVAL;
	}
	attr->detachstate = detachstate;
	return 0;
}

int pthread_attr_getdetachstate(const pthread_attr_t *attr, int *detachstate)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR || !detachstate) {
		return EINVAL;
	}
	*detachstate = attr->detachstate;
	return 0;
}

int pthread_attr_setstacksize(pthread_attr_t *attr, size_t stacksize)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR || stacksize < RT_STACK_MIN ||
	    stacksize > rt_stack_max()) {
		return EINVAL;
	}
	attr->stacksize = stacksize;
	return 0;
}

int pthread_attr_getstacksize(const pthread_attr_t *attr, size_t *stacksize)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR || !stacksize) {
		return EINVAL;
	}
	*stacksize = attr->stacksize ? attr->stacksize : rt_stack_default();
	return 0;
}

int pthread_attr_setcore_np(pthread_attr_t *attr, int core)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR || core < -1 ||
	    core >= (int)subutai_num_tiles() || (core >= 0 && !rt_core_can_host(core))) {
		return EINVAL;
	}
	attr->core = core;
	return 0;
}

int pthread_attr_getcore_np(const pthread_attr_t *attr, int *core)
{
	if (!attr || attr->magic != RT_MAGIC_ATTR || !core) {
		return EINVAL;
	}
	*core = attr->core;
	return 0;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	if (!thread || !start || (attr && attr->magic != RT_MAGIC_ATTR)) {
		return EINVAL;
	}
	bool detached = attr && attr->detachstate == PTHREAD_CREATE_DETACHED;
	int core = rt_place(attr);

	if (core < 0) {
		return EAGAIN;
	}
	uint32_t gen;
	int slot = slot_alloc(core, &gen);

	if (slot < 0) {
		rt_unplace(core);
		return EAGAIN;
	}
	rt_threads[slot].start = start;
	rt_threads[slot].arg = arg;
	rt_threads[slot].retval = NULL;
	rt_threads[slot].read_locks = 0;
	rt_threads[slot].core = core;
	rt_threads[slot].stacksize = attr && attr->stacksize ? attr->stacksize : rt_stack_default();
	subutai_atomic_store(RT_THREAD_CORE + slot, core);
	subutai_atomic_store(RT_THREAD_JOIN + slot, detached ? JOIN_DETACHED : 0);
	subutai_atomic_store(RT_THREAD_CLAIM + slot, detached ? 1 : 0);
	rt_cancel_reset(slot);
	subutai_atomic_fetch_add(RT_LIVE, 1);
	*thread = RT_HANDLE(slot, gen);
	/* The thread table is written through to memory before the thread is started. */
	int err = rt_spawn(core, slot);

	if (err != 0) {
		subutai_atomic_fetch_add(RT_LIVE, (uint32_t)-1);
		rt_slot_free(slot);
#ifndef RT_SLOT_CORE
		rt_unplace(core);
#endif
	}
	return err;
}

void rt_thread_finish(unsigned int slot, void *retval)
{
	rt_threads[slot].retval = retval;
	uint32_t old = subutai_atomic_swap(RT_THREAD_JOIN + slot, JOIN_EXITED);

	if (old & JOIN_WAITING) {
		rt_wake(old & ~JOIN_WAITING, slot);
	} else if (old == JOIN_DETACHED) {
		rt_slot_free(slot);
	}
}

/*
 * The joiner sleeps until the thread exits: a cancellation point. Cancelled, the joiner takes
 * its join back (a swap, which the exit's swap orders): if the thread has not exited, it never
 * wakes the joiner and stays joinable; if it has, its wake-up is on the way and the join is
 * complete after all (the request is acted on at the next cancellation point). Either way the
 * joiner takes every wake-up sent to it, the exit's and the canceller's.
 */
static void join_sleep(unsigned int slot)
{
	unsigned int self = rt_self_slot();
	uint32_t waiting = JOIN_WAITING | rt_waiter();
	unsigned int taken = 0;
	uint32_t cancel = rt_cancel_enter(self, RT_WAIT_WAKE_TAG(rt_waiter()));

	if (cancel == 0) {
		rt_sleep();
		taken = 1;
		cancel = rt_cancel_exit(self);
		if (cancel == 0) {
			return; /* the exit's wake-up */
		}
	}
	uint32_t state = subutai_atomic_swap(RT_THREAD_JOIN + slot, 0);
	unsigned int sent = ((cancel & RT_CANCEL_TOOK) ? 1 : 0) + (state == JOIN_EXITED ? 1 : 0);

	if (state != JOIN_EXITED && state != waiting) {
		rt_fatal("corrupt join state");
	}
	for (; taken < sent; taken++) {
		rt_sleep();
	}
	if (state != JOIN_EXITED) {
		subutai_atomic_store(RT_THREAD_CLAIM + slot, 0);
		rt_cancel_act();
	}
}

int pthread_join(pthread_t thread, void **retval)
{
	int slot = rt_slot_of(thread);

	if (slot < 0) {
		return ESRCH;
	}
	if (pthread_equal(thread, rt_current())) {
		return EDEADLK;
	}
	/* One join or detach per thread. */
	if (subutai_atomic_test_and_set(RT_THREAD_CLAIM + slot) != 0) {
		return EINVAL;
	}
	uint32_t old = subutai_atomic_swap(RT_THREAD_JOIN + slot, JOIN_WAITING | rt_waiter());

	if (old == 0) {
		join_sleep(slot);
	} else if (old != JOIN_EXITED) {
		rt_fatal("corrupt join state");
	}
	/* Join is an acquire: the thread's writes become visible. */
	subutai_dcache_invalidate();
	if (retval) {
		*retval = rt_threads[slot].retval;
	}
	rt_slot_free(slot);
	return 0;
}

int pthread_detach(pthread_t thread)
{
	int slot = rt_slot_of(thread);

	if (slot < 0) {
		return ESRCH;
	}
	if (subutai_atomic_test_and_set(RT_THREAD_CLAIM + slot) != 0) {
		return EINVAL;
	}
	/* Exited already: nobody else will free the slot. Otherwise thread_finish() does. */
	if (subutai_atomic_swap(RT_THREAD_JOIN + slot, JOIN_DETACHED) == JOIN_EXITED) {
		rt_slot_free(slot);
	}
	return 0;
}

SUBUTAI_SYNC_PATH pthread_t pthread_self(void)
{
	return rt_current();
}

int pthread_equal(pthread_t t1, pthread_t t2)
{
	return t1 == t2;
}
