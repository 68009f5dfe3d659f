/*
 * Network interface driver (see subutai/ni.h), OS-agnostic part: sending and polling.
 */
#include <errno.h>

#include <subutai/ni.h>
#include <subutai_port.h>

SUBUTAI_SYNC_PATH int subutai_ni_send(unsigned int dest, enum subutai_ni_class cls,
				      unsigned int type, const uint32_t *payload,
				      unsigned int length)
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
		unsigned int key = subutai_port_lock();

		if (SUBUTAI_FIELD_GET(ni_tx_status_read(), CSR_NI_TX_STATUS_FREE) >= length + 1) {
			ni_tx_header_write(SUBUTAI_FIELD_PREP(dest, CSR_NI_TX_HEADER_DEST) |
					   SUBUTAI_FIELD_PREP(cls, CSR_NI_TX_HEADER_VC) |
					   SUBUTAI_FIELD_PREP(length, CSR_NI_TX_HEADER_LENGTH) |
					   SUBUTAI_FIELD_PREP(type, CSR_NI_TX_HEADER_TYPE));
			for (unsigned int i = 0; i < length; i++) {
				ni_tx_data_write(payload[i]);
			}
			subutai_port_unlock(key);
			return 0;
		}
		subutai_port_unlock(key);
	}
}

SUBUTAI_SYNC_PATH unsigned int subutai_ni_pending(enum subutai_ni_class cls)
{
	uint32_t status = ni_rx_status_read();

	return cls == SUBUTAI_NI_PRIORITY
		       ? SUBUTAI_FIELD_GET(status, CSR_NI_RX_STATUS_PRIO_MESSAGES)
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

SUBUTAI_SYNC_PATH int subutai_ni_try_recv(enum subutai_ni_class cls, struct subutai_ni_msg *msg)
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

void subutai_ni_flush(void)
{
	while (!SUBUTAI_FIELD_GET(ni_tx_status_read(), CSR_NI_TX_STATUS_IDLE)) {
	}
}
