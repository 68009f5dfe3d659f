/*
 * Bare-metal port of the OS-agnostic drivers (ni.c, sync.c): one thread per core, so a request
 * is thread 0's, and the core may stall on the bus until its reply: requests go through the
 * Subutai port's direct window (SUBUTAI_PORT_WINDOW; gateware/ni/subutai_window.py), unless the
 * image is built with -DSUBUTAI_SYNC_CSR, which keeps the CSR path, where waiting for a reply
 * means sleeping until the reply interrupt line rises. The Zephyr port
 * (zephyr-app/include/subutai_port.h) has the same functions, without the window.
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <generated/subutai_window.h>
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
	while (SUBUTAI_FIELD_GET(subutai_status_read(), CSR_SUBUTAI_STATUS_REPLIES) == 0) {
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

#ifndef SUBUTAI_SYNC_CSR
#define SUBUTAI_PORT_WINDOW 1

#define SUBUTAI_WINDOW_REG(offset) (*(volatile uint32_t *)(TILE_SYNC_BASE + (offset)))

/* A request: one store of the id to the op's address (its value is the VALUE register's). */
static inline void subutai_window_issue(unsigned int op, bool want_reply, subutai_id_t id)
{
	SUBUTAI_WINDOW_REG((want_reply ? SUBUTAI_WINDOW_OP_REPLY_BASE : SUBUTAI_WINDOW_OP_BASE) +
			   4 * op) = id;
}

static inline void subutai_window_set_value(uint32_t value)
{
	SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_VALUE) = value;
}

/* The info word of the next reply: the core waits on the bus until it comes. */
static inline uint32_t subutai_window_reply(void)
{
	return SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_REPLY);
}

/* Id and value of the last reply taken. */
static inline subutai_id_t subutai_window_reply_id(void)
{
	return SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_ID);
}

static inline uint32_t subutai_window_reply_value(void)
{
	return SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_VALUE);
}

/*
 * The info word of the reply to an acquire: waits SPIN cycles for it; if it has not come by
 * then, the wait is a long one, and the data cache is invalidated while the core waits for the
 * rest (*invalidated then says so). Both loads and the invalidation are one asm block: between
 * the invalidation and the reply the core touches no memory that could bring back a stale line
 * (no spill, no call), so the cache is as clean at the grant as if invalidated after it.
 */
static inline uint32_t subutai_window_reply_acquire(bool *invalidated)
{
	uint32_t info, brief;

	__asm__ volatile("lw %0, %3(%2)\n"
			 "andi %1, %0, %4\n"
			 "bnez %1, 1f\n" SUBUTAI_INVALIDATE_SHADOW SUBUTAI_INVALIDATE_INSN
			 "lw %0, %5(%2)\n"
			 "1:\n"
			 : "=&r"(info), "=&r"(brief)
			 : "r"(TILE_SYNC_BASE), "i"(SUBUTAI_WINDOW_REPLY_BRIEF),
			   "i"(SUBUTAI_WINDOW_INFO_VALID), "i"(SUBUTAI_WINDOW_REPLY)
			 : "memory");
	*invalidated = brief == 0;
	return info;
}

/*
 * As subutai_window_reply_acquire(), but the wait after the invalidation is the caller's: the
 * info word of the reply if it came within SPIN cycles, else (the data cache invalidated, and
 * *invalidated set) one without SUBUTAI_WINDOW_INFO_VALID.
 */
static inline uint32_t subutai_window_reply_brief_acquire(bool *invalidated)
{
	uint32_t info, brief;

	__asm__ volatile("lw %0, %3(%2)\n"
			 "andi %1, %0, %4\n"
			 "bnez %1, 1f\n" SUBUTAI_INVALIDATE_SHADOW SUBUTAI_INVALIDATE_INSN
			 "1:\n"
			 : "=&r"(info), "=&r"(brief)
			 : "r"(TILE_SYNC_BASE), "i"(SUBUTAI_WINDOW_REPLY_BRIEF),
			   "i"(SUBUTAI_WINDOW_INFO_VALID)
			 : "memory");
	*invalidated = brief == 0;
	return info;
}
#endif

#endif /* SUBUTAI_PORT_H */
