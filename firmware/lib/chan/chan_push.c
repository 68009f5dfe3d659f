/*
 * Channels as data pushed into the receiver's tile RAM ("push", subutai/chan.h): the channel
 * port writes the message and then its flag word into this tile's slot of
 * subutai_chan_push_slots; the receiver polls the flag and reads the words locally, uncached
 * (the port writes the RAM behind the data cache), then clears the flag and acks. Seed 004's
 * home forwarding puts the sender's data in the receiver's cache; here it is in the receiver's
 * own RAM, a few cycles away. The paths are inline (subutai/chan_port.h); these are the checked
 * calls'.
 */
#include <subutai/chan_port.h>

#include "chan_impl.h"

const char subutai_chan_impl_name[] = "push";
const bool chan_impl_recv_invalidates = false;

struct subutai_chan_push_slot subutai_chan_push_slots[SUBUTAI_CHAN_N_SLOTS] __tile_bss
	__attribute__((aligned(SUBUTAI_CHAN_SLOT_BYTES)));

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
	if (role == SUBUTAI_CHAN_RECEIVER) {
		SUBUTAI_CHAN_REG(SUBUTAI_CHAN_PUSH_BASE) = (uintptr_t)subutai_chan_push_slots;
		subutai_chan_push_words(slot)[SUBUTAI_CHAN_PUSH_FLAG_WORD] = 0;
	}
	subutai_chan_port_connect(role == SUBUTAI_CHAN_SENDER, slot, peer_tile, peer_slot,
				  SUBUTAI_CHAN_KIND_PUSH);
	return 0;
}

int chan_impl_recv(subutai_chan_t *ch, unsigned int slot, uint32_t *words, unsigned int cap,
		   unsigned int *n, bool wait)
{
	(void)ch;
	return subutai_chan_push_recv(slot, words, cap, n, wait);
}

/* The flags in local memory, in turn from start. */
unsigned int chan_impl_wait(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
			    unsigned int start)
{
	uint32_t mask = 0;

	(void)chans;
	for (unsigned int i = 0; i < n; i++) {
		mask |= 1u << slots[i];
	}
	for (;;) {
		for (unsigned int k = 0; k < n; k++) {
			unsigned int i = chan_turn(start, k, n);

			if (subutai_chan_push_words(slots[i])[SUBUTAI_CHAN_PUSH_FLAG_WORD] != 0) {
				return i;
			}
		}
		subutai_chan_port_await(mask);
	}
}
