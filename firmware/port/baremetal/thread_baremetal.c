/*
 * Bare-metal port of the threads: user-level threads, up to SUBUTAI_PTHREAD_THREADS_PER_CORE on
 * each core (limits.h), run by the core's scheduler (ult.c). A waiter of the software objects is a
 * thread slot; its core is the slot's (rt.h, RT_SLOT_CORE()).
 *
 * Core 0 runs main(), the main thread. pthread_create() places a thread on the least-loaded core
 * (cores 1, 2, ... before core 0, so that up to one thread per core the threads have a core each,
 * as before user-level threads) or on the one pinned by the attributes, and sends that core a
 * spawn message through the NoC. A thread runs on its core's own stack in shared RAM when that is
 * free and big enough, on a stack from the heap otherwise; each has its TLS block (errno,
 * thread-specific data).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/lock.h>
#include <picotls.h> /* after a libc header: needs PICOLIBC_TLS from picolibc.h */

#include <irq.h>

#include <subutai_port.h>

#include "ult.h"

extern char __stack_size[], __stacks_end[], __heap_start[], __heap_end[];
extern char _tile_tls[], __tls_size[], __tls_align[];

/* A thread's values of the thread-specific data keys: in its TLS block. */
static __thread struct rt_key_value key_values[SUBUTAI_PTHREAD_KEYS];

/* The default stack of a thread on the heap (one on its core's own stack gets all of it). */
#define STACK_DEFAULT 8192u

SUBUTAI_SYNC_PATH unsigned int rt_waiter(void)
{
	return subutai_port_thread();
}

void rt_yield(void)
{
	ult_yield();
}

struct rt_key_value *rt_key_values(void)
{
	return key_values;
}

unsigned int pthread_core_np(void)
{
	return rt_core();
}

SUBUTAI_SYNC_PATH pthread_t rt_current(void)
{
	return subutai_port_core.owner;
}

size_t rt_stack_default(void)
{
	return STACK_DEFAULT;
}

/* What the heap could hold. */
size_t rt_stack_max(void)
{
	return (size_t)((uintptr_t)__heap_end - (uintptr_t)__heap_start);
}

bool rt_core_can_host(unsigned int core)
{
	return core < subutai_num_tiles();
}

SUBUTAI_SW_PATH void rt_sleep(void)
{
	ult_sleep();
}

SUBUTAI_SW_PATH bool rt_sleep_until(uint64_t deadline)
{
	if (deadline == 0) {
		ult_sleep();
		return true;
	}
	return ult_sleep_until(deadline);
}

void rt_nap_until(uint64_t deadline)
{
	ult_nap_until(deadline);
}

/*
 * A canceller does not wake a thread in a nap or a hardware condition wait (RT_WAIT_POLL): the
 * thread looks at its cancel word every millisecond of a nap (and every SUBUTAI_STOP_POLL_CYCLES
 * of a condition wait, ult.c), the core's other threads running meanwhile.
 */
#define NAP_POLL_CYCLES (CONFIG_CLOCK_FREQUENCY / 1000)

uint32_t rt_wait_tag(void)
{
	return RT_WAIT_POLL;
}

bool rt_nap_cancellable(uint64_t deadline, unsigned int slot)
{
	for (uint64_t now = subutai_cycles(); now < deadline && !rt_cancel_stop(slot);
	     now = subutai_cycles()) {
		rt_nap_until(deadline - now > NAP_POLL_CYCLES ? now + NAP_POLL_CYCLES : deadline);
	}
	return false;
}

/* A waiter on another core gets a NoC message, one on this core is made ready at once (a tile
 * sends itself no message). */
SUBUTAI_SW_PATH void rt_wake(unsigned int slot, uint32_t what)
{
	uint32_t payload = slot;

	(void)what;
	/* This core is the running thread's slot's (no CSR read of the tile id). */
	if (RT_SLOT_CORE(slot) == RT_SLOT_CORE(subutai_port_thread())) {
		ult_wake(slot);
	} else if (subutai_ni_send(RT_SLOT_CORE(slot), SUBUTAI_NI_NORMAL, RT_MSG_WAKE, &payload,
				   1) != 0) {
		rt_fatal("cannot send a wake-up message");
	}
}

/* One more thread on core, if it has a free slot (its load counts the slots it holds). */
static bool claim(unsigned int core)
{
	if (subutai_atomic_fetch_add(RT_CORE_BUSY + core, 1) < RT_SLOT_COUNT) {
		return true;
	}
	subutai_atomic_fetch_add(RT_CORE_BUSY + core, (uint32_t)-1);
	return false;
}

/* Pinned, or the core holding the fewest slots: cores 1 to N-1, then 0 (the main thread's),
 * lowest first. A thread that exited unjoined holds its slot (as a zombie does its process id). */
int rt_place(const pthread_attr_t *attr)
{
	unsigned int n = subutai_num_tiles();

	if (attr && attr->core >= 0) {
		return claim(attr->core) ? attr->core : -1;
	}
	for (unsigned int load = 0; load < RT_SLOT_COUNT; load++) {
		for (unsigned int i = 1; i <= n; i++) {
			unsigned int core = i % n;

			if (subutai_atomic_load(RT_CORE_BUSY + core) <= load && claim(core)) {
				return core;
			}
		}
	}
	return -1;
}

void rt_unplace(unsigned int core)
{
	subutai_atomic_fetch_add(RT_CORE_BUSY + core, (uint32_t)-1);
}

static uintptr_t core_stack_top(unsigned int core)
{
	return (uintptr_t)__stacks_end - core * (uintptr_t)__stack_size;
}

/* Alignment of a heap stack and of the TLS block at its top. */
static size_t tls_align(void)
{
	return (size_t)__tls_align < 16 ? 16 : (size_t)__tls_align;
}

/* A heap stack's bytes below its TLS block. */
static size_t stack_bytes(unsigned int slot)
{
	return (rt_threads[slot].stacksize + tls_align() - 1) & ~(tls_align() - 1);
}

static void spawned(unsigned int slot);

/* The thread's stack: its core's own if free and big enough, else one from the heap. */
int rt_spawn(unsigned int core, unsigned int slot)
{
	uint32_t payload = slot;

	rt_threads[slot].stack = NULL;
	if (rt_threads[slot].stacksize > (size_t)__stack_size ||
	    subutai_atomic_test_and_set(RT_CORE_STACK + core) != 0) {
		size_t tls = ((size_t)__tls_size + tls_align() - 1) & ~(tls_align() - 1);
		void *stack = aligned_alloc(tls_align(), stack_bytes(slot) + tls);

		if (!stack) {
			return EAGAIN;
		}
		rt_threads[slot].stack = stack;
	}
	if (core == rt_core()) {
		spawned(slot);
	} else if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_SPAWN, &payload, 1) != 0) {
		rt_fatal("cannot send a spawn message");
	}
	return 0;
}

static void thread_main(unsigned int slot) __attribute__((noreturn));

/* A thread spawned on this core (at once, or on its spawn message): the thread table was written
 * through before the spawn message was sent. */
static void spawned(unsigned int slot)
{
	/* Thread start is an acquire: the creator's writes become visible. */
	subutai_dcache_invalidate();
	char *stack = rt_threads[slot].stack;

	ult_create(slot, stack ? (uintptr_t)stack + stack_bytes(slot) : core_stack_top(rt_core()),
		   thread_main);
}

static void release_thread_stack(void *stack)
{
	if (stack) {
		free(stack);
	} else {
		subutai_atomic_store(RT_CORE_STACK + rt_core(), 0);
	}
}

/* The stacks of the threads that exited on this core, until the core is off them. */
static void *exited_stack[RT_SLOT_COUNT] __tile_bss;

static void release_exited(unsigned int slot)
{
	release_thread_stack(exited_stack[slot % RT_SLOT_COUNT]);
}

/* The last steps of a thread on its core, the same whether it returned or called pthread_exit(). */
static void thread_exit(unsigned int slot, void *retval) __attribute__((noreturn));
static void thread_exit(unsigned int slot, void *retval)
{
	rt_keys_exit();
	/* The stack is read before the slot may be reused (rt_thread_finish()). */
	exited_stack[slot % RT_SLOT_COUNT] = rt_threads[slot].stack;
	/* The core's load drops when the slot is freed (rt_slot_free(): at the join, or now if
	 * detached). */
	rt_thread_finish(slot, retval);
	/* The process ends with its last thread (the main thread may have exited already). */
	if (subutai_atomic_fetch_add(RT_LIVE, (uint32_t)-1) == 1) {
		exit(0);
	}
	ult_exit(release_exited);
}

/* What a new thread runs: its start routine, then its exit. */
static void thread_main(unsigned int slot)
{
	char *stack = rt_threads[slot].stack;
	void *tls = stack ? stack + stack_bytes(slot) : (void *)_tile_tls;

	_init_tls(tls);
	_set_tls(tls);
	ult_set_handle(RT_HANDLE(slot, subutai_atomic_load(RT_THREAD_GEN + slot)));
	thread_exit(slot, rt_threads[slot].start(rt_threads[slot].arg));
}

void pthread_exit(void *retval)
{
	rt_exit_cleanup();
	thread_exit(ult_slot(), retval);
}

/* Set up by core 0 before the other cores start (runtime.c), on cleared atomic words. */
void subutai_pthread_init(void)
{
	uint32_t gen = rt_next_gen();

	subutai_atomic_store(RT_THREAD_GEN + 0, gen);
	subutai_atomic_store(RT_THREAD_CLAIM + 0, 1); /* the main thread cannot be joined */
	subutai_atomic_store(RT_CORE_BUSY + 0, 1);
	subutai_atomic_store(RT_CORE_STACK + 0, 1);
	subutai_atomic_store(RT_LIVE, 1);
	rt_cancel_reset(0);
	ult_adopt(0, spawned);
	ult_set_handle(RT_HANDLE(0, gen));
}

/* The cores other than 0: their scheduler runs the threads spawned there. */
void tile_main(unsigned int tile)
{
	(void)tile;
	ult_idle(spawned);
}

/*
 * The C library's lock (picolibc's retargetable locking: malloc, the heap of the threads'
 * stacks): one recursive lock on an atomic-unit word for every core. Its holder never blocks
 * inside it, so a waiter on the holder's core cannot be waiting for a thread that does not run.
 */
struct __lock {
	int unused;
};
struct __lock __lock___libc_recursive_mutex;

static pthread_t libc_owner;
static unsigned int libc_depth;

/* The calling thread, or the core's idle context (no thread handle has all bits set). */
static pthread_t libc_self(void)
{
	pthread_t self = ult_handle();

	return self ? self : ~(pthread_t)rt_core();
}

void __retarget_lock_init(_LOCK_T *lock)
{
	*lock = &__lock___libc_recursive_mutex;
}

void __retarget_lock_init_recursive(_LOCK_T *lock)
{
	*lock = &__lock___libc_recursive_mutex;
}

void __retarget_lock_close(_LOCK_T lock)
{
	(void)lock;
}

void __retarget_lock_close_recursive(_LOCK_T lock)
{
	(void)lock;
}

void __retarget_lock_acquire_recursive(_LOCK_T lock)
{
	(void)lock;
	pthread_t self = libc_self();

	if (subutai_atomic_load(RT_LIBC_LOCK) != 0 && *(volatile pthread_t *)&libc_owner == self) {
		libc_depth++;
		return;
	}
	rt_spin_lock(RT_LIBC_LOCK);
	/* The heap's words may have been written by another core: see them. */
	subutai_dcache_invalidate();
	libc_owner = self;
	libc_depth = 1;
}

void __retarget_lock_release_recursive(_LOCK_T lock)
{
	(void)lock;
	if (--libc_depth == 0) {
		libc_owner = 0;
		rt_spin_unlock(RT_LIBC_LOCK);
	}
}

void __retarget_lock_acquire(_LOCK_T lock)
{
	__retarget_lock_acquire_recursive(lock);
}

int __retarget_lock_try_acquire(_LOCK_T lock)
{
	__retarget_lock_acquire_recursive(lock);
	return 1;
}

int __retarget_lock_try_acquire_recursive(_LOCK_T lock)
{
	__retarget_lock_acquire_recursive(lock);
	return 1;
}

void __retarget_lock_release(_LOCK_T lock)
{
	__retarget_lock_release_recursive(lock);
}
