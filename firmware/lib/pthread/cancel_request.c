/*
 * pthread_cancel(): the canceller's side of deferred cancellation (cancel.c, rt.h). Alone in its
 * object, so that only programs that call it link it (rt_cancel_linked()).
 */
#include <errno.h>
#include <stddef.h>

#include "rt.h"

/* Gets the thread out of its wait; whether by a wake-up it must take. */
static bool cancel_wake(uint32_t tag)
{
	switch (tag & RT_WAIT_KIND_MASK) {
	case RT_WAIT_WAKE:
		rt_wake(tag >> 2, 0);
		return true;
	case RT_WAIT_COND: {
		pthread_cond_t *cond = (pthread_cond_t *)(uintptr_t)(tag & ~RT_WAIT_KIND_MASK);

		/* Its waiter wrote the condition before its tag; it stays there until DONE. */
		subutai_dcache_invalidate();
		if (cond->magic == RT_MAGIC_COND && cond->impl == RT_IMPL_SW && cond->handle != 0) {
			sw_cond_broadcast(cond->handle);
		}
		return false;
	}
	default:
		return false;
	}
}

int pthread_cancel(pthread_t thread)
{
	int slot = rt_slot_of(thread);

	if (slot < 0) {
		return ESRCH;
	}
	uint32_t old = subutai_atomic_fetch_add(RT_THREAD_CANCEL + slot, RT_CANCEL_REQ);

	if (old >= RT_CANCEL_REQ) {
		/* Requested already: the first canceller does the rest. */
		return 0;
	}
	uint32_t done = RT_CANCEL_DONE;

	/* A thread with cancellation disabled is left alone: it acts once it enables it. */
	if (!(old & RT_CANCEL_DISABLED)) {
		uint32_t tag = subutai_atomic_swap(RT_THREAD_WAIT + slot, 0);

		if (tag != 0 && cancel_wake(tag)) {
			done |= RT_CANCEL_TOOK;
		}
	}
	subutai_atomic_fetch_add(RT_THREAD_CANCEL + slot, done);
	if ((unsigned int)slot == rt_self_slot() && (old & RT_CANCEL_ASYNC) &&
	    !(old & RT_CANCEL_DISABLED)) {
		rt_cancel_act();
	}
	return 0;
}
