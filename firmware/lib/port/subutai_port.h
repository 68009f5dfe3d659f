/*
 * Bare-metal port of the OS-agnostic drivers (ni.c, sync.c): one thread per core, so a request
 * is thread 0's, and the core may stall on the bus until its reply: requests go through the
 * Subutai port's direct window (SUBUTAI_PORT_WINDOW; gateware/ni/subutai_window.py), and the
 * core waits for a reply with a load, except in a wait with a deadline, where it sleeps until
 * the reply interrupt line rises (subutai_port_wait_reply()). The Zephyr port
 * (zephyr-app/include/subutai_port.h) has the same functions and shares the window among the
 * threads of a core.
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
#include <subutai/soc.h>
#include <subutai/sync.h>
#include <subutai/window.h>

#define SUBUTAI_PORT_WINDOW 1

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

/* The reply event is enabled once per core (the NI's event enable is per tile). */
extern bool subutai_reply_irq_ready __tile_bss;

/*
 * Waits for the caller's reply until the global cycle counter reaches deadline (0: no deadline)
 * or stop (NULL or without fn: none) says so; false then. Called with the port lock held (key), which it
 * releases. Without either the core sleeps until the reply interrupt line rises (enabled in the
 * mask, not taken); with one it polls, since nothing else would wake it, and asks stop every
 * SUBUTAI_STOP_POLL_CYCLES.
 */
static inline bool subutai_port_wait_reply(struct subutai_reply *reply, uint64_t deadline,
					   unsigned int key, struct subutai_stop *stop)
{
	uint32_t asked = stop ? subutai_cycles32() : 0;

	if (!subutai_reply_irq_ready) {
		subutai_ev_enable_write(1u << CSR_SUBUTAI_EV_ENABLE_REPLY_OFFSET);
		subutai_reply_irq_ready = true;
	}
	irq_setmask(irq_getmask() | (1u << SUBUTAI_INTERRUPT));
	while (!subutai_window_reply_waits()) {
		if (deadline == 0 && stop == NULL) {
			__asm__ volatile("wfi");
			continue;
		}
		bool stopped = false;

		if (stop && stop->fn && subutai_cycles32() - asked >= SUBUTAI_STOP_POLL_CYCLES) {
			asked = subutai_cycles32();
			stopped = stop->stopped = stop->fn(stop->arg);
		}
		if (stopped || (deadline != 0 && subutai_cycles() >= deadline)) {
			subutai_port_unlock(key);
			return false;
		}
	}
	subutai_reply_pop(reply);
	subutai_port_unlock(key);
	return true;
}

#endif /* SUBUTAI_PORT_H */
