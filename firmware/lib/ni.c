/*
 * Network interface driver (see subutai/ni.h).
 */
#include <errno.h>

#include <irq.h>
#include <subutai/ni.h>

static subutai_ni_handler_t ni_handler __tile_bss;

int subutai_ni_send(unsigned int dest, enum subutai_ni_class cls, unsigned int type,
		    const uint32_t *payload, unsigned int length)
{
	if (dest >= subutai_num_tiles() || (unsigned int)cls > 1 || length > NOC_MAX_PAYLOAD) {
		return -EINVAL;
	}
#ifndef CSR_NI_RX_PRIO_DATA_ADDR
	/* The priority class belongs to the Subutai hardware in this SoC. */
	if (cls == SUBUTAI_NI_PRIORITY) {
		return -EINVAL;
	}
#endif
	/* The NI reserves room for the whole message when it accepts the header. Check the room
	 * and write the message with interrupts off, so that a handler that sends can neither take
	 * the room nor interleave its words with ours.
	 */
	for (;;) {
		unsigned int ie = irq_getie();

		irq_setie(0);
		if (SUBUTAI_FIELD_GET(ni_tx_status_read(), CSR_NI_TX_STATUS_FREE) >= length + 1) {
			ni_tx_header_write(SUBUTAI_FIELD_PREP(dest, CSR_NI_TX_HEADER_DEST) |
					   SUBUTAI_FIELD_PREP(cls, CSR_NI_TX_HEADER_VC) |
					   SUBUTAI_FIELD_PREP(length, CSR_NI_TX_HEADER_LENGTH) |
					   SUBUTAI_FIELD_PREP(type, CSR_NI_TX_HEADER_TYPE));
			for (unsigned int i = 0; i < length; i++) {
				ni_tx_data_write(payload[i]);
			}
			irq_setie(ie);
			return 0;
		}
		irq_setie(ie);
	}
}

unsigned int subutai_ni_pending(enum subutai_ni_class cls)
{
	uint32_t status = ni_rx_status_read();

	return cls == SUBUTAI_NI_PRIORITY ? SUBUTAI_FIELD_GET(status, CSR_NI_RX_STATUS_PRIO_MESSAGES)
					  : SUBUTAI_FIELD_GET(status, CSR_NI_RX_STATUS_MESSAGES);
}

static inline uint32_t ni_pop(enum subutai_ni_class cls)
{
	(void)cls;
#ifdef CSR_NI_RX_PRIO_DATA_ADDR
	if (cls == SUBUTAI_NI_PRIORITY) {
		return ni_rx_prio_data_read();
	}
#endif
	return ni_rx_data_read();
}

int subutai_ni_try_recv(enum subutai_ni_class cls, struct subutai_ni_msg *msg)
{
	if (subutai_ni_pending(cls) == 0) {
		return -EAGAIN;
	}
	/* The whole message is in the RX FIFO: read it without further checks. */
	uint32_t head = ni_pop(cls);
	unsigned int src_x = SUBUTAI_FIELD_GET(head, NOC_HEAD_SRC_X);
	unsigned int src_y = SUBUTAI_FIELD_GET(head, NOC_HEAD_SRC_Y);

	msg->src = src_y * MESH_X + src_x;
	msg->type = SUBUTAI_FIELD_GET(head, NOC_HEAD_TYPE);
	msg->length = SUBUTAI_FIELD_GET(head, NOC_HEAD_LENGTH);
	for (unsigned int i = 0; i < msg->length; i++) {
		msg->payload[i] = ni_pop(cls);
	}
	return 0;
}

/* The NI raises its interrupt line while a complete message waits. */
static void ni_irq_enable(void)
{
	ni_ev_enable_write(1u << CSR_NI_EV_ENABLE_RX_OFFSET);
	irq_setmask(irq_getmask() | (1u << NI_INTERRUPT));
}

void subutai_ni_recv(enum subutai_ni_class cls, struct subutai_ni_msg *msg)
{
	/* Sleep until the NI interrupt line rises: enabled in the mask but not taken unless global
	 * interrupts are on, so wfi wakes the core either way.
	 */
	ni_irq_enable();
	while (subutai_ni_try_recv(cls, msg) != 0) {
		__asm__ volatile("wfi");
	}
}

void subutai_ni_flush(void)
{
	while (!SUBUTAI_FIELD_GET(ni_tx_status_read(), CSR_NI_TX_STATUS_IDLE)) {
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

void subutai_ni_isr(void)
{
	if (ni_handler) {
		ni_handler();
	}
}
