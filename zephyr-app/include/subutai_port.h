/*
 * Zephyr port of the OS-agnostic drivers (firmware/lib/ni.c, sync.c): several threads per core.
 * A request carries the caller's thread slot. Requests go through the direct window, shared by
 * the threads of the core (SUBUTAI_PORT_SHARED_WINDOW); a reply is taken through the window by
 * its thread, spinning, while no other thread of the core waits for one, and otherwise the reply
 * interrupt hands each reply to its thread, which sleeps in the scheduler meanwhile
 * (drivers/subutai/subutai_ni.c), as it does in timed condition waits.
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <zephyr/irq.h>
#include <zephyr/kernel.h>
#include <subutai/sync.h>
#include <subutai/zephyr.h>
#include <subutai/window.h>

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

/* No other thread of the core waits for a reply: the next one through the window is the
 * caller's. Interrupts locked. */
static inline bool subutai_port_window_mine(void)
{
	return subutai_replies_awaited == 0;
}

static inline unsigned int subutai_port_lock(void)
{
	return irq_lock();
}

static inline void subutai_port_unlock(unsigned int key)
{
	irq_unlock(key);
}

/*
 * Sleeps until the caller's reply arrives, the global cycle counter reaches deadline (0: none) or,
 * woken without its reply (subutai_waiter_wake()), stop's fn says so; false then. A wake-up taken
 * is noted in stop (NULL: ignored). Called
 * with the port lock held (key, taken before the request was written, so a quick reply is not
 * taken by the interrupt handler first), which it releases.
 */
bool subutai_port_wait_reply(struct subutai_reply *reply, uint64_t deadline, unsigned int key,
			     struct subutai_stop *stop);

/*
 * Waits for the reply of the caller's request on id, just written through the window with the
 * port lock held (key), which it releases (after a brief load that brought nothing, when
 * subutai_port_window_mine()). acquire: a lock, barrier or condition wait, after which
 * the data cache must be clean (*invalidated says whether it was while waiting); full: the whole
 * reply value is needed. As subutai_port_wait_reply(), a wake-up ends it when stop's fn says so
 * (false then; NULL: none).
 */
bool subutai_port_window_wait(struct subutai_reply *reply, subutai_id_t id, bool acquire,
			      bool full, bool *invalidated, unsigned int key,
			      struct subutai_stop *stop);

#endif /* SUBUTAI_PORT_H */
