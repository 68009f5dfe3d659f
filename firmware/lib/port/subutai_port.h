/*
 * Bare-metal port of the OS-agnostic drivers (ni.c, sync.c; the contract is subutai/port.h): one
 * thread per core, so a request is thread 0's, and the core may stall on the bus until its
 * reply: requests go through the Subutai port's direct window (gateware/ni/subutai_window.py)
 * and the core waits for the reply with a load; a wait with a deadline or one that stop can end
 * polls the window in brief loads.
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <irq.h>
#include <subutai/port.h>
#include <subutai/soc.h>
#include <subutai/sync.h>
#include <subutai/window.h>

/* The window is the one thread's of the core. */
#define SUBUTAI_PORT_SHARED_WINDOW 0

/* Thread id of the caller in its requests (the reply's thread field). */
static inline unsigned int subutai_port_thread(void)
{
	return 0;
}

/* Masks the interrupt handlers of this core that could issue requests or send messages. */
static inline unsigned int subutai_port_lock(void)
{
	unsigned int ie = irq_getie();

	/* Most of the time they are already masked: a CSR write costs more than this test. */
	if (__builtin_expect(ie != 0, 0)) {
		irq_setie(0);
	}
	return ie;
}

static inline void subutai_port_unlock(unsigned int key)
{
	if (__builtin_expect(key != 0, 0)) {
		irq_setie(1);
	}
}

/* A request of the core's thread: one store. */
static inline void subutai_port_issue(unsigned int op, bool want_reply, subutai_id_t id)
{
	subutai_window_issue(op, want_reply, id);
}

/*
 * Polls the window in brief loads until a reply comes (its info word goes to *info), the global
 * cycle counter reaches deadline (0: none) or stop says so (false then; asked every
 * SUBUTAI_STOP_POLL_CYCLES). An acquire invalidates the data cache once the first brief load has
 * not brought the reply: between the invalidation and the reply the loop reads the window, the
 * cycle counter and (in stop) the atomic unit, none of them cached, and its own stack, which no
 * other core writes, so the cache holds no line another core may have written when the reply
 * comes, as if invalidated after it.
 */
static inline bool subutai_port_poll_for_reply(uint32_t *info, unsigned int how, uint64_t deadline,
					       struct subutai_stop *stop, bool *invalidated)
{
	uint32_t got = (how & SUBUTAI_WAIT_ACQUIRE)
			       ? subutai_window_reply_brief_acquire(invalidated)
			       : subutai_window_reply_brief();
	uint32_t asked = subutai_cycles32();

	while (!(got & SUBUTAI_WINDOW_INFO_VALID)) {
		if (stop && stop->fn && subutai_cycles32() - asked >= SUBUTAI_STOP_POLL_CYCLES) {
			asked = subutai_cycles32();
			if ((stop->stopped = stop->fn(stop->arg))) {
				return false;
			}
		}
		if (deadline != 0 && subutai_cycles() >= deadline) {
			return false;
		}
		got = subutai_window_reply_brief();
	}
	__asm__ volatile("" ::: "memory");
	*info = got;
	return true;
}

/* See subutai/port.h. The core waits on the bus unless a deadline or stop makes it poll. */
static inline bool subutai_port_wait(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
				     uint64_t deadline, struct subutai_stop *stop, unsigned int key,
				     bool *invalidated)
{
	uint32_t info;
	bool replied = true;

	*invalidated = false;
	if (deadline == 0 && stop == NULL) {
		info = (how & SUBUTAI_WAIT_ACQUIRE) ? subutai_window_reply_acquire(invalidated)
						    : subutai_window_reply();
	} else {
		replied = subutai_port_poll_for_reply(&info, how, deadline, stop, invalidated);
	}
	if (replied) {
		subutai_window_take(info, (how & SUBUTAI_WAIT_FULL) != 0, id, 0, reply);
	}
	subutai_port_unlock(key);
	return replied;
}

#endif /* SUBUTAI_PORT_H */
