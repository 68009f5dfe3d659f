/*
 * Channels as NoC messages through the channel port's window ("noc", subutai/chan.h): the
 * message waits in the receiving port's slot memory; a receive is one load that waits for it and
 * loads of its words, then the ack store. No main memory, no CSR, no data cache on the path. The
 * paths themselves are inline (subutai/chan_port.h); these are the checked calls'.
 */
#include <subutai/chan_port.h>

#include "chan_impl.h"

const char subutai_chan_impl_name[] = "noc";
const bool chan_impl_recv_invalidates = false;

void chan_impl_init(subutai_chan_t *ch)
{
	(void)ch;
}

int chan_impl_connect(subutai_chan_t *ch, enum subutai_chan_role role, unsigned int slot,
		      unsigned int peer_tile, unsigned int peer_slot)
{
	(void)ch;
	if (!SUBUTAI_CHAN_PORT_PRESENT) {
		return ENOTSUP;
	}
	subutai_chan_port_connect(role == SUBUTAI_CHAN_SENDER, slot, peer_tile, peer_slot,
				  SUBUTAI_CHAN_KIND_NOC);
	return 0;
}

int chan_impl_recv(subutai_chan_t *ch, unsigned int slot, uint32_t *words, unsigned int cap,
		   unsigned int *n, bool wait)
{
	(void)ch;
	if (!wait && !subutai_chan_port_full(slot)) {
		return EAGAIN;
	}
	return subutai_chan_port_recv(slot, words, cap, n);
}

/* The port's full bits: a slot already full is taken in order from start, else the first to
 * fill (the WAIT_ANY load waits on the bus). */
unsigned int chan_impl_wait(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
			    unsigned int start)
{
	uint32_t mask = 0;

	(void)chans;
	for (unsigned int i = 0; i < n; i++) {
		mask |= 1u << slots[i];
	}
	uint32_t full = subutai_chan_port_status() & mask;

	if (full != 0) {
		for (unsigned int k = 0; k < n; k++) {
			unsigned int i = chan_turn(start, k, n);

			if (full & (1u << slots[i])) {
				return i;
			}
		}
	}
	if (SUBUTAI_CHAN_PORT_SLEEPS) {
		subutai_chan_port_await(mask);
		return chan_impl_wait(chans, slots, n, start);
	}
	SUBUTAI_CHAN_REG(SUBUTAI_CHAN_MASK) = mask;
	unsigned int slot =
		(SUBUTAI_CHAN_REG(SUBUTAI_CHAN_WAIT_ANY) >> SUBUTAI_CHAN_INFO_SLOT_SHIFT) &
		(SUBUTAI_CHAN_N_SLOTS - 1);

	for (unsigned int i = 0; i < n; i++) {
		if (slots[i] == slot) {
			return i;
		}
	}
	return 0; /* never: the port answers with a slot of the mask */
}
