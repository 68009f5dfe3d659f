/*
 * The parts of the channel port's implementations ("noc" and "push", subutai/chan.h) that do
 * not depend on where a message lands: a sending end's send, its wait for a credit and the
 * closing of an end are the port's own, the same for both. Compiled with every implementation,
 * empty unless the build's is one of the port's.
 */
#if defined(SUBUTAI_CHAN_IMPL_NOC) || defined(SUBUTAI_CHAN_IMPL_PUSH)

#include <subutai/chan_port.h>

#include "chan_impl.h"

void chan_impl_close(enum subutai_chan_role role, unsigned int slot)
{
	subutai_chan_port_disconnect(role == SUBUTAI_CHAN_SENDER, slot);
}

int chan_impl_send(subutai_chan_t *ch, unsigned int slot, const uint32_t *words, unsigned int n,
		   bool wait)
{
	(void)ch;
	return subutai_chan_port_send(slot, words, n, wait);
}

/* The credits of the port, polled (a slot with one is taken in order from start). */
unsigned int chan_impl_wait_send(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
				 unsigned int start)
{
	(void)chans;
	uint32_t mask = 0;

	for (unsigned int i = 0; i < n; i++) {
		mask |= 1u << (16 + slots[i]);
	}
	for (;;) {
		subutai_chan_port_await(mask);
		uint32_t credits = subutai_chan_port_status() >> 16;

		for (unsigned int k = 0; k < n; k++) {
			unsigned int i = chan_turn(start, k, n);

			if (credits & (1u << slots[i])) {
				return i;
			}
		}
	}
}

#endif /* SUBUTAI_CHAN_IMPL_NOC || SUBUTAI_CHAN_IMPL_PUSH */
