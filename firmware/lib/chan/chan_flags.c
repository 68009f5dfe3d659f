/*
 * Channels as shared flags ("flags", subutai/chan.h; seed 004's RA, Fig. 7): the message, a rdy
 * word and an ack word in shared memory. The sender waits for ack, writes the message, clears
 * ack and sets rdy; the receiver waits for rdy, copies the message, clears rdy and sets ack. The
 * data caches are not coherent: a side that waits for the other's word invalidates its data cache
 * between polls, and the receiver reads the message only after an invalidation (the coherence
 * rule's acquire). Each word has one writer at a time, and a stale copy of it can only be one the
 * reader itself wrote last (rdy 0 for the receiver, ack 0 for the sender), so a stale read only
 * delays.
 */
#include <errno.h>

#include <subutai/soc.h>

#include "chan_impl.h"

const char subutai_chan_impl_name[] = "flags";
const bool chan_impl_recv_invalidates = true;

void chan_impl_init(subutai_chan_t *ch)
{
	ch->pos[0].rdy = 0;
	ch->pos[0].ack = 1;
}

int chan_impl_connect(subutai_chan_t *ch, enum subutai_chan_role role, unsigned int slot,
		      unsigned int peer_tile, unsigned int peer_slot)
{
	(void)ch, (void)role, (void)slot, (void)peer_tile, (void)peer_slot;
	return 0;
}

void chan_impl_close(enum subutai_chan_role role, unsigned int slot)
{
	(void)role, (void)slot;
}

int chan_impl_send(subutai_chan_t *ch, unsigned int slot, const uint32_t *words, unsigned int n,
		   bool wait)
{
	struct subutai_chan_pos *pos = &ch->pos[0];

	(void)slot;
	while (pos->ack == 0) {
		if (!wait) {
			return EAGAIN;
		}
		CHAN_RELAX();
		subutai_dcache_invalidate();
	}
	for (unsigned int i = 0; i < n; i++) {
		pos->data[i] = words[i];
	}
	pos->ack = 0;
	/* Stores reach memory in program order (write-through, not posted): rdy last. */
	pos->rdy = SUBUTAI_CHAN_FULL | n;
	return 0;
}

int chan_impl_recv(subutai_chan_t *ch, unsigned int slot, uint32_t *words, unsigned int cap,
		   unsigned int *n, bool wait)
{
	struct subutai_chan_pos *pos = &ch->pos[0];
	uint32_t rdy;

	(void)slot;
	subutai_dcache_invalidate();
	while ((rdy = pos->rdy) == 0) {
		if (!wait) {
			return EAGAIN;
		}
		CHAN_RELAX();
		subutai_dcache_invalidate();
	}
	unsigned int len = rdy & ~SUBUTAI_CHAN_FULL;

	*n = len;
	if (len > cap) {
		return EINVAL;
	}
	for (unsigned int i = 0; i < len; i++) {
		words[i] = pos->data[i];
	}
	pos->rdy = 0;
	pos->ack = 1;
	return 0;
}

unsigned int chan_impl_wait(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
			    unsigned int start)
{
	(void)slots;
	for (;;) {
		CHAN_RELAX();
		subutai_dcache_invalidate();
		for (unsigned int k = 0; k < n; k++) {
			unsigned int i = start + k < n ? start + k : start + k - n;

			if (chans[i]->pos[0].rdy != 0) {
				return i;
			}
		}
	}
}

/* The ack words, an invalidation between sweeps (a stale copy says 0: not yet). */
unsigned int chan_impl_wait_send(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
				 unsigned int start)
{
	(void)slots;
	for (;;) {
		for (unsigned int k = 0; k < n; k++) {
			unsigned int i = start + k < n ? start + k : start + k - n;

			if (chans[i]->pos[0].ack != 0) {
				return i;
			}
		}
		CHAN_RELAX();
		subutai_dcache_invalidate();
	}
}
