/*
 * Network interface driver, bare-metal part: sleeping for a message and the interrupt handler.
 */
#include <irq.h>
#include <stdbool.h>

#include <subutai/ni.h>

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
