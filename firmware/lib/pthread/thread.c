/*
 * Threads of the bare-metal runtime: one per core.
 *
 * Core 0 runs main(), the main thread. pthread_create() claims the lowest idle core and sends it a
 * spawn message through the NoC; an idle core sleeps in tile_main() until one arrives. The thread
 * table (start routine, argument, return value) is in shared memory; the states that cores race
 * on (slot generations, join states, idle cores, live threads) are atomic-unit words.
 *
 * Join state of a slot: 0 while the thread runs and nobody waits, JOIN_WAITING | core while a
 * joiner sleeps, JOIN_DETACHED once detached, JOIN_EXITED once it has exited. A swap decides the
 * race between the exit and the join (or detach), so exactly one wake-up is sent when, and only
 * when, the joiner sleeps, and exactly one side frees the slot of a detached thread. The claim
 * word lets only one join or detach through.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt.h"

#define JOIN_WAITING 0x80000000u
#define JOIN_EXITED  0x40000000u
#define JOIN_DETACHED 0x20000000u

#define SLOT_BITS 8
#define HANDLE(slot, gen) (((gen) << SLOT_BITS) | (slot))
#define HANDLE_SLOT(t)    ((t) & ((1u << SLOT_BITS) - 1))
#define HANDLE_GEN(t)     ((t) >> SLOT_BITS)

struct rt_thread {
	void *(*start)(void *);
	void *arg;
	void *retval;
};

static struct rt_thread threads[RT_THREADS_MAX];

/* The thread this core runs, and where pthread_exit() returns to. */
static pthread_t current __tile_bss;
static jmp_buf thread_exit_jmp __tile_bss;

static void fatal(const char *what)
{
	printf("\n*** pthread runtime on tile %u: %s\n", rt_core(), what);
	subutai_exit(4);
}

void rt_sleep(void)
{
	struct subutai_ni_msg msg;

	subutai_ni_recv(SUBUTAI_NI_NORMAL, &msg);
	if (msg.type != RT_MSG_WAKE) {
		fatal("unexpected NoC message while sleeping");
	}
}

void rt_wake(unsigned int core, uint32_t what)
{
	if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_WAKE, &what, 1) != 0) {
		fatal("cannot send a wake-up message");
	}
}

/* Generations are never 0 (a free slot), and fit the handle. */
static uint32_t next_gen(void)
{
	uint32_t gen;

	do {
		gen = subutai_atomic_fetch_add(RT_GEN, 1) & ((1u << (32 - SLOT_BITS)) - 1);
	} while (gen == 0);
	return gen;
}

static int slot_alloc(uint32_t *gen)
{
	int slot = -1;

	rt_spin_lock(RT_LOCK);
	for (unsigned int s = 0; s < RT_THREADS_MAX; s++) {
		if (subutai_atomic_load(RT_THREAD_GEN + s) == 0) {
			*gen = next_gen();
			subutai_atomic_store(RT_THREAD_GEN + s, *gen);
			slot = s;
			break;
		}
	}
	rt_spin_unlock(RT_LOCK);
	return slot;
}

static void slot_free(unsigned int slot)
{
	subutai_atomic_store(RT_THREAD_GEN + slot, 0);
}

/* The slot of a live handle, or -1. */
static int slot_of(pthread_t t)
{
	unsigned int slot = HANDLE_SLOT(t);

	if (slot >= RT_THREADS_MAX || HANDLE_GEN(t) == 0 ||
	    subutai_atomic_load(RT_THREAD_GEN + slot) != HANDLE_GEN(t)) {
		return -1;
	}
	return slot;
}

static int claim_core(void)
{
	for (unsigned int core = 1; core < subutai_num_tiles(); core++) {
		if (subutai_atomic_test_and_set(RT_CORE_BUSY + core) == 0) {
			return core;
		}
	}
	return -1;
}

/* Set up by core 0 before the other cores start (runtime.c), on cleared atomic words. */
void subutai_pthread_init(void)
{
	uint32_t gen = next_gen();

	subutai_atomic_store(RT_THREAD_GEN + 0, gen);
	subutai_atomic_store(RT_THREAD_CLAIM + 0, 1); /* the main thread cannot be joined */
	subutai_atomic_store(RT_CORE_BUSY + 0, 1);
	subutai_atomic_store(RT_LIVE, 1);
	current = HANDLE(0, gen);
}

int pthread_attr_init(pthread_attr_t *attr)
{
	int err = rt_attr_init(attr ? &attr->magic : NULL);

	if (err == 0) {
		attr->detachstate = PTHREAD_CREATE_JOINABLE;
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

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
		   void *arg)
{
	if (!thread || !start || (attr && attr->magic != RT_MAGIC_ATTR)) {
		return EINVAL;
	}
	bool detached = attr && attr->detachstate == PTHREAD_CREATE_DETACHED;
	int core = claim_core();

	if (core < 0) {
		return EAGAIN;
	}
	uint32_t gen;
	int slot = slot_alloc(&gen);

	if (slot < 0) {
		subutai_atomic_store(RT_CORE_BUSY + core, 0);
		return EAGAIN;
	}
	threads[slot].start = start;
	threads[slot].arg = arg;
	threads[slot].retval = NULL;
	subutai_atomic_store(RT_THREAD_JOIN + slot, detached ? JOIN_DETACHED : 0);
	subutai_atomic_store(RT_THREAD_CLAIM + slot, detached ? 1 : 0);
	subutai_atomic_fetch_add(RT_LIVE, 1);
	*thread = HANDLE(slot, gen);

	/* The thread table is written through to memory before the message leaves. */
	uint32_t payload = slot;

	if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_SPAWN, &payload, 1) != 0) {
		fatal("cannot send a spawn message");
	}
	return 0;
}

/* Last steps of a thread on its core. */
static void thread_finish(unsigned int slot, void *retval)
{
	threads[slot].retval = retval;
	uint32_t old = subutai_atomic_swap(RT_THREAD_JOIN + slot, JOIN_EXITED);

	if (old & JOIN_WAITING) {
		rt_wake(old & ~JOIN_WAITING, slot);
	} else if (old == JOIN_DETACHED) {
		slot_free(slot);
	}
}

/* Idle loop of the cores other than 0: run the threads spawned here. */
void tile_main(unsigned int tile)
{
	(void)tile;
	for (;;) {
		struct subutai_ni_msg msg;

		subutai_ni_recv(SUBUTAI_NI_NORMAL, &msg);
		if (msg.type != RT_MSG_SPAWN || msg.length != 1) {
			fatal("unexpected NoC message on an idle core");
		}
		unsigned int slot = msg.payload[0];

		/* Thread start is an acquire: the creator's writes become visible. */
		subutai_dcache_invalidate();
		current = HANDLE(slot, subutai_atomic_load(RT_THREAD_GEN + slot));
		void *retval;

		if (setjmp(thread_exit_jmp) == 0) {
			retval = threads[slot].start(threads[slot].arg);
		} else {
			subutai_dcache_invalidate();
			retval = threads[slot].retval;
		}
		thread_finish(slot, retval);
		current = 0;
		subutai_atomic_store(RT_CORE_BUSY + rt_core(), 0);
		/* The process ends with its last thread (the main thread may have exited already). */
		if (subutai_atomic_fetch_add(RT_LIVE, (uint32_t)-1) == 1) {
			exit(0);
		}
	}
}

void pthread_exit(void *retval)
{
	if (rt_core() != 0) {
		threads[HANDLE_SLOT(current)].retval = retval;
		longjmp(thread_exit_jmp, 1);
	}
	/* The main thread: the program goes on until the last thread exits. */
	if (subutai_atomic_fetch_add(RT_LIVE, (uint32_t)-1) == 1) {
		exit(0);
	}
	irq_setie(0);
	for (;;) {
		__asm__ volatile("wfi");
	}
}

int pthread_join(pthread_t thread, void **retval)
{
	int slot = slot_of(thread);

	if (slot < 0) {
		return ESRCH;
	}
	if (pthread_equal(thread, current)) {
		return EDEADLK;
	}
	/* One join or detach per thread. */
	if (subutai_atomic_test_and_set(RT_THREAD_CLAIM + slot) != 0) {
		return EINVAL;
	}
	uint32_t old = subutai_atomic_swap(RT_THREAD_JOIN + slot, JOIN_WAITING | rt_core());

	if (old == 0) {
		rt_sleep();
	} else if (old != JOIN_EXITED) {
		fatal("corrupt join state");
	}
	/* Join is an acquire: the thread's writes become visible. */
	subutai_dcache_invalidate();
	if (retval) {
		*retval = threads[slot].retval;
	}
	slot_free(slot);
	return 0;
}

int pthread_detach(pthread_t thread)
{
	int slot = slot_of(thread);

	if (slot < 0) {
		return ESRCH;
	}
	if (subutai_atomic_test_and_set(RT_THREAD_CLAIM + slot) != 0) {
		return EINVAL;
	}
	/* Exited already: nobody else will free the slot. Otherwise thread_finish() does. */
	if (subutai_atomic_swap(RT_THREAD_JOIN + slot, JOIN_DETACHED) == JOIN_EXITED) {
		slot_free(slot);
	}
	return 0;
}

pthread_t pthread_self(void)
{
	return current;
}

int pthread_equal(pthread_t t1, pthread_t t2)
{
	return t1 == t2;
}
