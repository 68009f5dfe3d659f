/*
 * Zephyr port of the OS-agnostic drivers (firmware/lib/ni.c, sync.c): several threads per core.
 * A request carries the caller's thread slot. Requests go through the direct window, shared by
 * the threads of the core (SUBUTAI_PORT_SHARED_WINDOW); a reply is taken through the window by
 * its thread, spinning, while no other thread of the core waits for one, and otherwise the reply
 * interrupt hands each reply to its thread, which sleeps in the scheduler meanwhile
 * (drivers/subutai/subutai_ni.c). Timed and stoppable waits take the CSR path.
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <zephyr/irq.h>
#include <subutai/sync.h>
#include <subutai/window.h>

#define SUBUTAI_PORT_SHARED_WINDOW 1

/* Thread slot of the calling thread (the PThreads library's, or a kernel thread's own). */
unsigned int subutai_port_thread(void);

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
 * port lock held (key), which it releases. acquire: a lock, barrier or condition wait, after which
 * the data cache must be clean (*invalidated says whether it was while waiting); full: the whole
 * reply value is needed.
 */
void subutai_port_window_wait(struct subutai_reply *reply, subutai_id_t id, bool acquire,
			      bool full, bool *invalidated, unsigned int key);

#endif /* SUBUTAI_PORT_H */
