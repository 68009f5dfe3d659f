/*
 * Driver of the basic network interface (NI) of a tile: messages between tiles through the NoC.
 *
 * OS-agnostic (bare metal and Zephyr). Registers, fields and the head-flit layout come from the
 * SoC's generated headers.
 */
#ifndef SUBUTAI_NI_H
#define SUBUTAI_NI_H

#include <stdbool.h>
#include <stdint.h>

#include <subutai/soc.h>

/* Value of field F (a generated CSR_<REG>_<FIELD> prefix) in register value v. */
#define SUBUTAI_FIELD_GET(v, F)  (((v) >> F##_OFFSET) & ((1u << F##_SIZE) - 1))
#define SUBUTAI_FIELD_PREP(x, F) (((uint32_t)(x) & ((1u << F##_SIZE) - 1)) << F##_OFFSET)

enum subutai_ni_class {
	SUBUTAI_NI_NORMAL = 0,   /* software messages */
	SUBUTAI_NI_PRIORITY = 1, /* synchronization control packets */
};

struct subutai_ni_msg {
	unsigned int src;    /* source tile id */
	unsigned int type;   /* message type (8 bits) */
	unsigned int length; /* payload words */
	uint32_t payload[NOC_MAX_PAYLOAD];
};

/* Sends a message; waits for room in the TX FIFO. Returns 0, or -EINVAL for a destination
 * outside the mesh, a class other than 0/1 (or the priority class where it belongs to the
 * Subutai hardware) or a payload longer than NOC_MAX_PAYLOAD words. In a SoC with channels the
 * types under SUBUTAI_CHAN_TYPE_MASK equal to SUBUTAI_CHAN_TYPE_VALUE (0x80-0xbf) are the
 * channel port's: the NI refuses such a header (ni_tx_error's sticky reserved_type flag) and the
 * message is not sent.
 */
int subutai_ni_send(unsigned int dest, enum subutai_ni_class cls, unsigned int type,
		    const uint32_t *payload, unsigned int length);

/* Receives one message of a class if a complete one is waiting: 0, or -EAGAIN if none. */
int subutai_ni_try_recv(enum subutai_ni_class cls, struct subutai_ni_msg *msg);

/* Waits for a message of a class (the core sleeps until the NI interrupt), then receives it. */
void subutai_ni_recv(enum subutai_ni_class cls, struct subutai_ni_msg *msg);

/* Number of complete messages waiting in a class. */
unsigned int subutai_ni_pending(enum subutai_ni_class cls);

/* Waits until everything sent has left the NI. */
void subutai_ni_flush(void);

/* Interrupt mode: handler called from the NI interrupt while a complete message waits; it must
 * receive at least one message. NULL disables the interrupt.
 */
typedef void (*subutai_ni_handler_t)(void);
void subutai_ni_set_handler(subutai_ni_handler_t handler);

#endif /* SUBUTAI_NI_H */
