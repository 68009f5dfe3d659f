/*
 * What the shared-memory implementations ("flags" and "queue", subutai/chan.h) do alike: a
 * position of the channel holds a message, its rdy word says full (SUBUTAI_CHAN_FULL | length)
 * or empty, and a side that waits for the other's word invalidates its data cache between polls
 * (the caches are not coherent; a stale copy can only be the reader's own last write, so it only
 * delays). Inline: each is a part of one implementation's path.
 */
#ifndef SUBUTAI_CHAN_MEM_H
#define SUBUTAI_CHAN_MEM_H

#include <errno.h>

#include <subutai/soc.h>

#include "chan_impl.h"

/* The n words into a position; the caller then publishes it (rdy last: stores reach memory in
 * program order, the cache being write-through and not posted). */
static inline void chan_mem_put(struct subutai_chan_pos *pos, const uint32_t *words, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		pos->data[i] = words[i];
	}
}

/* Waits (or EAGAIN) until the position is full, then copies its message (EINVAL, message left,
 * when longer than cap); the caller empties the position. The message is read only after an
 * invalidation: the coherence rule's acquire. */
static inline int chan_mem_take(struct subutai_chan_pos *pos, uint32_t *words, unsigned int cap,
				unsigned int *n, bool wait)
{
	uint32_t rdy;

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
	return 0;
}

/* Sweeps the channels in turn from start until ready() holds for one, an invalidation between
 * sweeps; its index. */
static inline unsigned int chan_mem_poll(subutai_chan_t *const *chans, unsigned int n,
					 unsigned int start, bool (*ready)(subutai_chan_t *ch))
{
	for (;;) {
		for (unsigned int k = 0; k < n; k++) {
			unsigned int i = chan_turn(start, k, n);

			if (ready(chans[i])) {
				return i;
			}
		}
		CHAN_RELAX();
		subutai_dcache_invalidate();
	}
}

#endif /* SUBUTAI_CHAN_MEM_H */
