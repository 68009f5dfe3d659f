/*
 * Bare-metal part of the drivers: sleeping for a message, the NI interrupt handler, and the
 * Subutai port's per-core state and long wait for a program without the PThreads runtime.
 */
#include <irq.h>
#include <stdbool.h>

#include <subutai/ni.h>
#include <subutai_port.h>

static subutai_ni_handler_t ni_handler __tile_bss;

/* The NI raises its interrupt line while a complete message waits. */
static void ni_irq_enable(void)
{
	ni_ev_enable_write(1u << CSR_NI_EV_ENABLE_RX_OFFSET);
	irq_setmask(irq_getmask() | (1u << NI_INTERRUPT));
}

SUBUTAI_SYNC_PATH void subutai_ni_recv(enum subutai_ni_class cls, struct subutai_ni_msg *msg)
{
	/* Sleep until the NI interrupt line rises: enabled in the mask but not taken unless global
	 * interrupts are on, so wfi wakes the core either way.
	 */
	ni_irq_enable();
	while (subutai_ni_try_recv(cls, msg) != 0) {
		__asm__ volatile("wfi");
	}
}

void subutai_ni_set_handler(subutai_ni_handler_t handler)
{
	ni_handler = handler;
	if (handler) {
		ni_irq_enable();
		irq_setie(1);
	} else {
		irq_setmask(irq_getmask() & ~(1u << NI_INTERRUPT));
	}
}

SUBUTAI_SYNC_PATH void subutai_ni_isr(void)
{
	if (ni_handler) {
		ni_handler();
	}
}

/*
 * The Subutai port's per-core state (subutai_port.h) and its wait for a program without the
 * PThreads runtime, whose core has one thread: the thread scheduler (pthread/ult.c) defines
 * subutai_port_wait_long() where it is linked.
 */
unsigned int subutai_port_thread_id __tile_bss;
unsigned int subutai_port_replies_awaited __tile_bss;

/*
 * Waits on the bus for the reply, or polls the window in brief loads until it comes, the global
 * cycle counter reaches deadline (0: none) or stop says so (asked every SUBUTAI_STOP_POLL_CYCLES).
 * An acquire that waits invalidated the data cache after its first brief load (watched, or the
 * one here): between the invalidation and the reply the core reads the window, the cycle counter
 * and (in stop) the atomic unit, none of them cached, and its own stack, which no other core
 * writes, so the cache is as clean at the reply as if invalidated after it.
 */
__attribute__((weak)) bool subutai_port_wait_long(struct subutai_reply *reply, subutai_id_t id,
						  unsigned int how, uint64_t deadline,
						  struct subutai_stop *stop, unsigned int key,
						  bool *invalidated, bool watched)
{
	uint32_t info = 0;
	uint32_t asked = subutai_cycles32();

	if (!watched) {
		info = (how & SUBUTAI_WAIT_ACQUIRE)
			       ? subutai_window_reply_brief_acquire(invalidated)
			       : subutai_window_reply_brief();
	}
	if (deadline == 0 && stop == NULL && !(info & SUBUTAI_WINDOW_INFO_VALID)) {
		info = subutai_window_reply();
	}
	while (!(info & SUBUTAI_WINDOW_INFO_VALID)) {
		if (stop && stop->fn && subutai_cycles32() - asked >= SUBUTAI_STOP_POLL_CYCLES) {
			asked = subutai_cycles32();
			if ((stop->stopped = stop->fn(stop->arg))) {
				subutai_port_unlock(key);
				return false;
			}
		}
		if (deadline != 0 && subutai_cycles() >= deadline) {
			subutai_port_unlock(key);
			return false;
		}
		info = subutai_window_reply_brief();
	}
	subutai_window_take(info, (how & SUBUTAI_WAIT_FULL) != 0, id, 0, reply);
	subutai_port_unlock(key);
	return true;
}
