/*
 * Zephyr port of the OS-agnostic drivers (firmware/lib/ni.c, sync.c; the contract is
 * subutai/port.h): several threads per core. A request carries the caller's thread slot.
 * Requests go through the direct window, shared by the threads of the core; a reply is taken
 * through the window by its thread, spinning, while no other thread of the core waits for one,
 * and otherwise the reply interrupt hands each reply to its thread, which sleeps in the scheduler
 * meanwhile (drivers/subutai/subutai_ni.c), as it does in timed condition waits.
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <zephyr/irq.h>
#include <zephyr/kernel.h>
#include <subutai/port.h>
#include <subutai/sync.h>
#include <subutai/zephyr.h>
#include <subutai/window.h>

/* The threads of a core share the window. */
#define SUBUTAI_PORT_SHARED_WINDOW 1

/* Calls of the NI from a thread without a waiter id: a fatal error. */
FUNC_NORETURN void subutai_port_no_waiter(void);

/* Thread slot of the calling thread (the PThreads library's, or a kernel thread's own). */
static inline unsigned int subutai_port_thread(void)
{
	const struct subutai_waiter *waiter = k_current_get()->custom_data;

	if (waiter == NULL) {
		subutai_port_no_waiter();
	}
	return waiter->id;
}

/* Replies of this core's requests the reply interrupt will hand over (drivers/subutai). */
extern unsigned int subutai_replies_awaited;

static inline unsigned int subutai_port_lock(void)
{
	return irq_lock();
}

static inline void subutai_port_unlock(unsigned int key)
{
	irq_unlock(key);
}

/* A request of the calling thread: its thread field, then the request. */
static inline void subutai_port_issue(unsigned int op, bool want_reply, subutai_id_t id)
{
	subutai_window_set_thread(subutai_port_thread());
	subutai_window_issue(op, want_reply, id);
}

/*
 * The driver's wait (drivers/subutai/subutai_ni.c), as subutai_port_wait(): spins on the window
 * while the caller is the only thread of its core that can run and no other thread's reply can
 * come first, sleeps in the scheduler otherwise or past a deadline-bound spin.
 */
bool subutai_ni_wait_reply(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
			   uint64_t deadline, struct subutai_stop *stop, unsigned int key,
			   bool *invalidated);

/*
 * See subutai/port.h. An immediate answer (an uncontended lock) comes within a brief load, as on
 * bare metal, when no other thread of the core waits for a reply (the next one through the
 * window is then the caller's); otherwise the driver waits.
 */
static inline bool subutai_port_wait(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
				     uint64_t deadline, struct subutai_stop *stop, unsigned int key,
				     bool *invalidated)
{
	*invalidated = false;
	if (deadline == 0 && subutai_replies_awaited == 0) {
		uint32_t info = (how & SUBUTAI_WAIT_ACQUIRE)
					? subutai_window_reply_brief_acquire(invalidated)
					: subutai_window_reply_brief();

		if (info & SUBUTAI_WINDOW_INFO_VALID) {
			subutai_window_take(info, (how & SUBUTAI_WAIT_FULL) != 0, id,
					    subutai_port_thread(), reply);
			irq_unlock(key);
			return true;
		}
	}
	return subutai_ni_wait_reply(reply, id, how, deadline, stop, key, invalidated);
}

#endif /* SUBUTAI_PORT_H */
