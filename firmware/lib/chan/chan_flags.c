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
#include "chan_mem.h"

const char subutai_chan_impl_name[] = "flags";
const bool chan_impl_recv_invalidates = true;

void chan_impl_init(subutai_chan_t *ch)
{
	ch->pos[0].rdy = 0;
	ch->pos[0].ack = 1;
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
	chan_mem_put(pos, words, n);
	pos->ack = 0;
	pos->rdy = SUBUTAI_CHAN_FULL | n;
	return 0;
}

int chan_impl_recv(subutai_chan_t *ch, unsigned int slot, uint32_t *words, unsigned int cap,
		   unsigned int *n, bool wait)
{
	struct subutai_chan_pos *pos = &ch->pos[0];

	(void)slot;
	int err = chan_mem_take(pos, words, cap, n, wait);

	if (err == 0) {
		pos->rdy = 0;
		pos->ack = 1;
	}
	return err;
}

static bool chan_flags_full(subutai_chan_t *ch)
{
	return ch->pos[0].rdy != 0;
}

/* The ack words (a stale copy says 0: not yet). */
static bool chan_flags_acked(subutai_chan_t *ch)
{
	return ch->pos[0].ack != 0;
}

unsigned int chan_impl_wait(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
			    unsigned int start)
{
	(void)slots;
	CHAN_RELAX();
	subutai_dcache_invalidate();
	return chan_mem_poll(chans, n, start, chan_flags_full);
}

unsigned int chan_impl_wait_send(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
				 unsigned int start)
{
	(void)slots;
	return chan_mem_poll(chans, n, start, chan_flags_acked);
}
