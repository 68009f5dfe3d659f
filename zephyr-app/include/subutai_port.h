/*
 * Zephyr port of the OS-agnostic drivers (firmware/lib/ni.c, sync.c): several threads per core.
 * A request carries the caller's thread slot; the reply interrupt hands each reply to its thread,
 * which sleeps in the scheduler meanwhile (drivers/subutai/subutai_ni.c).
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <zephyr/irq.h>
#include <subutai/sync.h>

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

#endif /* SUBUTAI_PORT_H */
