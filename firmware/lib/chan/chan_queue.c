/*
 * Channels as a FastFlow-style single-producer single-consumer lock-free queue ("queue",
 * subutai/chan.h): the peer baseline of seed 004's Fig. 14 (FastFlow's SWSR buffer). A ring of
 * SUBUTAI_CHAN_QUEUE_SLOTS positions in shared memory; a position is empty (rdy 0) or full
 * (SUBUTAI_CHAN_FULL | length), and each side keeps its own index, so producer and consumer
 * share no index (FastFlow's improvement on Lamport's queue). FastFlow moves pointers; the
 * positions here hold a whole message, so pointer passing is a one-word message, as in the other
 * implementations. The producer writes a position only once it has seen it empty, the consumer
 * reads it only after an invalidation of its data cache (the coherence rule's acquire).
 */
#include "chan_mem.h"

const char subutai_chan_impl_name[] = "queue";
const bool chan_impl_recv_invalidates = true;

void chan_impl_init(subutai_chan_t *ch)
{
	for (unsigned int i = 0; i < SUBUTAI_CHAN_QUEUE_SLOTS; i++) {
		ch->pos[i].rdy = 0;
	}
	ch->send_index = 0;
	ch->recv_index = 0;
}

static unsigned int chan_queue_next(unsigned int index)
{
	return index + 1 == SUBUTAI_CHAN_QUEUE_SLOTS ? 0 : index + 1;
}

int chan_impl_send(subutai_chan_t *ch, unsigned int slot, const uint32_t *words, unsigned int n,
		   bool wait)
{
	unsigned int index = ch->send_index;
	struct subutai_chan_pos *pos = &ch->pos[index];

	(void)slot;
	/* The producer wrote rdy last itself: a stale copy says full, never empty. */
	while (pos->rdy != 0) {
		if (!wait) {
			return EAGAIN;
		}
		CHAN_RELAX();
		subutai_dcache_invalidate();
	}
	chan_mem_put(pos, words, n);
	pos->rdy = SUBUTAI_CHAN_FULL | n;
	ch->send_index = chan_queue_next(index);
	return 0;
}

int chan_impl_recv(subutai_chan_t *ch, unsigned int slot, uint32_t *words, unsigned int cap,
		   unsigned int *n, bool wait)
{
	unsigned int index = ch->recv_index;
	struct subutai_chan_pos *pos = &ch->pos[index];

	(void)slot;
	int err = chan_mem_take(pos, words, cap, n, wait);

	if (err == 0) {
		pos->rdy = 0;
		ch->recv_index = chan_queue_next(index);
	}
	return err;
}

static bool chan_queue_full(subutai_chan_t *ch)
{
	return ch->pos[ch->recv_index].rdy != 0;
}

/* The position the producer writes next (a stale copy says full: not yet). */
static bool chan_queue_free(subutai_chan_t *ch)
{
	return ch->pos[ch->send_index].rdy == 0;
}

unsigned int chan_impl_wait(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
			    unsigned int start)
{
	(void)slots;
	CHAN_RELAX();
	subutai_dcache_invalidate();
	return chan_mem_poll(chans, n, start, chan_queue_full);
}

unsigned int chan_impl_wait_send(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
				 unsigned int start)
{
	(void)slots;
	return chan_mem_poll(chans, n, start, chan_queue_free);
}
