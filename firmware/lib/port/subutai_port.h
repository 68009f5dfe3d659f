/*
 * Bare-metal port of the OS-agnostic drivers (ni.c, sync.c): one thread per core, so a request
 * is thread 0's and waiting for its reply means sleeping until the reply interrupt line rises.
 * The Zephyr port (zephyr-app/include/subutai_port.h) has the same functions.
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <irq.h>
#include <subutai/ni.h>   /* SUBUTAI_FIELD_GET */
#include <subutai/soc.h>
#include <subutai/sync.h>

/* Thread id of the caller in its requests (the reply's thread field). */
static inline unsigned int subutai_port_thread(void)
{
	return 0;
}

/* Masks the interrupt handlers of this core that could issue requests or send messages. */
static inline unsigned int subutai_port_lock(void)
{
	unsigned int ie = irq_getie();

	irq_setie(0);
	return ie;
}

static inline void subutai_port_unlock(unsigned int key)
{
	irq_setie(key);
}

/* The reply event is enabled once per core (the NI's event enable is per tile). */
extern bool subutai_reply_irq_ready __tile_bss;

/*
 * Waits for the caller's reply until the global cycle counter reaches deadline (0: no deadline);
 * false on timeout. Called with the port lock held (key), which it releases. Without a deadline
 * the core sleeps until the reply interrupt line rises (enabled in the mask, not taken); with one
 * it polls, since nothing else would wake it.
 */
static inline bool subutai_port_wait_reply(struct subutai_reply *reply, uint64_t deadline,
					   unsigned int key)
{
	if (!subutai_reply_irq_ready) {
		subutai_ev_enable_write(1u << CSR_SUBUTAI_EV_ENABLE_REPLY_OFFSET);
		subutai_reply_irq_ready = true;
	}
	irq_setmask(irq_getmask() | (1u << SUBUTAI_INTERRUPT));
	while (SUBUTAI_FIELD_GET(subutai_status_read(), CSR_SUBUTAI_STATUS_REPLIES) == 0) {
		if (deadline == 0) {
			__asm__ volatile("wfi");
		} else if (subutai_cycles() >= deadline) {
			subutai_port_unlock(key);
			return false;
		}
	}
	subutai_reply_pop(reply);
	subutai_port_unlock(key);
	return true;
}

#endif /* SUBUTAI_PORT_H */
