/*
 * Bare-metal port of the threads: one per core (a waiter of the software objects is a core).
 *
 * Core 0 runs main(), the main thread. pthread_create() claims the lowest idle core (or the one
 * pinned by the attributes) and sends it a spawn message through the NoC; an idle core sleeps in
 * tile_main() until one arrives. A core that waits sleeps until its NI interrupt.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include <irq.h>

#include "rt.h"

extern char __stack_size[];

/* The thread this core runs, and where pthread_exit() returns to. */
static pthread_t current __tile_bss;
static jmp_buf thread_exit_jmp __tile_bss;
static struct rt_key_value key_values[SUBUTAI_PTHREAD_KEYS] __tile_bss;

void rt_fatal(const char *what)
{
	printf("\n*** pthread runtime on tile %u: %s\n", rt_core(), what);
	subutai_exit(4);
}

SUBUTAI_SYNC_PATH unsigned int rt_waiter(void)
{
	return rt_core();
}

void rt_yield(void)
{
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
	return current;
}

/* Every core has one stack of the linker's __stack_size: a thread cannot ask for more. */
size_t rt_stack_default(void)
{
	return (size_t)__stack_size;
}

size_t rt_stack_max(void)
{
	return (size_t)__stack_size;
}

/* Core 0 runs the main thread. */
bool rt_core_can_host(unsigned int core)
{
	return core != 0;
}

SUBUTAI_SW_PATH static void rt_wait_message(struct subutai_ni_msg *msg)
{
	if (msg->type != RT_MSG_WAKE) {
		rt_fatal("unexpected NoC message while sleeping");
	}
}

SUBUTAI_SW_PATH void rt_sleep(void)
{
	struct subutai_ni_msg msg;

	subutai_ni_recv(SUBUTAI_NI_NORMAL, &msg);
	rt_wait_message(&msg);
}

SUBUTAI_SW_PATH bool rt_sleep_until(uint64_t deadline)
{
	struct subutai_ni_msg msg;

	if (deadline == 0) {
		rt_sleep();
		return true;
	}
	/* Nothing but a message would wake the core from wfi: poll the clock meanwhile. */
	while (subutai_ni_try_recv(SUBUTAI_NI_NORMAL, &msg) != 0) {
		if (subutai_cycles() >= deadline) {
			return false;
		}
	}
	rt_wait_message(&msg);
	return true;
}

/*
 * The core sleeps in wfi and its tile timer, one-shot, wakes it at the deadline: the timer's
 * interrupt is enabled in the mask, which wakes wfi even while global interrupts are off; where
 * they are on, the runtime's handler (runtime.c) only disables the timer's event. Other wake-ups
 * (NoC messages) go back to sleep. A wait longer than the timer's 32 bits takes several rounds.
 */
void rt_nap_until(uint64_t deadline)
{
	unsigned int mask = irq_getmask();

	for (uint64_t now = subutai_cycles(); now < deadline; now = subutai_cycles()) {
		uint64_t left = deadline - now;

		timer0_en_write(0);
		timer0_reload_write(0);
		timer0_load_write(left > 0xffffffffu ? 0xffffffffu : (uint32_t)left);
		timer0_ev_pending_write(timer0_ev_pending_read());
		timer0_ev_enable_write(1);
		irq_setmask(mask | (1u << TIMER0_INTERRUPT));
		timer0_en_write(1);
		while (subutai_cycles() < deadline && timer0_ev_enable_read() &&
		       !timer0_ev_pending_read()) {
			__asm__ volatile("wfi");
		}
	}
	timer0_en_write(0);
	timer0_ev_enable_write(0);
	timer0_ev_pending_write(timer0_ev_pending_read());
	irq_setmask(mask);
}

/*
 * Only a NoC message could wake a core in wfi from another core, and messages other than the
 * runtime's are the program's to take: a canceller does not wake a core in a nap or a hardware
 * condition wait (RT_WAIT_POLL), the core looks at its cancel word every millisecond of a nap
 * (and every SUBUTAI_STOP_POLL_CYCLES of a condition wait, sync.c).
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

SUBUTAI_SW_PATH void rt_wake(unsigned int core, uint32_t what)
{
	if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_WAKE, &what, 1) != 0) {
		rt_fatal("cannot send a wake-up message");
	}
}

int rt_place(const pthread_attr_t *attr)
{
	if (attr && attr->core >= 0) {
		return subutai_atomic_test_and_set(RT_CORE_BUSY + attr->core) == 0 ? attr->core
										   : -1;
	}
	for (unsigned int core = 1; core < subutai_num_tiles(); core++) {
		if (subutai_atomic_test_and_set(RT_CORE_BUSY + core) == 0) {
			return core;
		}
	}
	return -1;
}

void rt_unplace(unsigned int core)
{
	subutai_atomic_store(RT_CORE_BUSY + core, 0);
}

int rt_spawn(unsigned int core, unsigned int slot)
{
	uint32_t payload = slot;

	if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_SPAWN, &payload, 1) != 0) {
		rt_fatal("cannot send a spawn message");
	}
	return 0;
}

/* Set up by core 0 before the other cores start (runtime.c), on cleared atomic words. */
void subutai_pthread_init(void)
{
	uint32_t gen = rt_next_gen();

	subutai_atomic_store(RT_THREAD_GEN + 0, gen);
	subutai_atomic_store(RT_THREAD_CLAIM + 0, 1); /* the main thread cannot be joined */
	subutai_atomic_store(RT_CORE_BUSY + 0, 1);
	subutai_atomic_store(RT_LIVE, 1);
	rt_cancel_reset(0);
	current = RT_HANDLE(0, gen);
}

/* Idle loop of the cores other than 0: run the threads spawned here. */
void tile_main(unsigned int tile)
{
	(void)tile;
	for (;;) {
		struct subutai_ni_msg msg;

		subutai_ni_recv(SUBUTAI_NI_NORMAL, &msg);
		if (msg.type != RT_MSG_SPAWN || msg.length != 1) {
			rt_fatal("unexpected NoC message on an idle core");
		}
		unsigned int slot = msg.payload[0];

		/* Thread start is an acquire: the creator's writes become visible. */
		subutai_dcache_invalidate();
		current = RT_HANDLE(slot, subutai_atomic_load(RT_THREAD_GEN + slot));
		void *retval;

		if (setjmp(thread_exit_jmp) == 0) {
			retval = rt_threads[slot].start(rt_threads[slot].arg);
		} else {
			subutai_dcache_invalidate();
			retval = rt_threads[slot].retval;
		}
		rt_keys_exit();
		/* The core is free before the thread is seen gone: a thread created after a join
		 * finds it free. Its spawn message waits in the NI until this loop takes it. */
		rt_unplace(rt_core());
		rt_thread_finish(slot, retval);
		current = 0;
		/* The process ends with its last thread (the main thread may have exited already).
		 */
		if (subutai_atomic_fetch_add(RT_LIVE, (uint32_t)-1) == 1) {
			exit(0);
		}
	}
}

void pthread_exit(void *retval)
{
	rt_exit_cleanup();
	if (rt_core() != 0) {
		rt_threads[RT_HANDLE_SLOT(current)].retval = retval;
		longjmp(thread_exit_jmp, 1);
	}
	/* The main thread: the program goes on until the last thread exits. */
	rt_keys_exit();
	if (subutai_atomic_fetch_add(RT_LIVE, (uint32_t)-1) == 1) {
		exit(0);
	}
	irq_setie(0);
	for (;;) {
		__asm__ volatile("wfi");
	}
}
