/*
 * What each channel implementation (chan_<impl>.c, one linked per build) gives the common part
 * (chan.c). Slots are the calling tile's ends (its channel port's, for "noc" and "push").
 */
#ifndef SUBUTAI_CHAN_IMPL_H
#define SUBUTAI_CHAN_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <subutai/chan.h>
#include <subutai_port.h>

extern const char subutai_chan_impl_name[];

/* A poll of the memory implementations that found nothing: the runtime may let the core's other
 * threads run (subutai/port.h). */
#define CHAN_RELAX() subutai_port_relax()

/* The k-th channel of n to look at in a sweep that begins at start (a collector's turn). */
static inline unsigned int chan_turn(unsigned int start, unsigned int k, unsigned int n)
{
	return start + k < n ? start + k : start + k - n;
}

/* The channel's memory at creation. */
void chan_impl_init(subutai_chan_t *ch);
/* The port side of connecting an end (the peer's slot is known). */
int chan_impl_connect(subutai_chan_t *ch, enum subutai_chan_role role, unsigned int slot,
		      unsigned int peer_tile, unsigned int peer_slot);
void chan_impl_close(enum subutai_chan_role role, unsigned int slot);
/* n words; wait: block while full, else EAGAIN. */
int chan_impl_send(subutai_chan_t *ch, unsigned int slot, const uint32_t *words, unsigned int n,
		   bool wait);
/* At most cap words into words, *n the message's; EINVAL (message left) when longer than cap. */
int chan_impl_recv(subutai_chan_t *ch, unsigned int slot, uint32_t *words, unsigned int cap,
		   unsigned int *n, bool wait);
/* Whether recv would return invalidated data (the coherence rule's acquire was done). */
extern const bool chan_impl_recv_invalidates;
/* Waits until one of the channels has a message (receiving ends); start: where the search
 * begins. */
unsigned int chan_impl_wait(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
			    unsigned int start);
/* Waits until one of the channels can take a message (sending ends). */
unsigned int chan_impl_wait_send(subutai_chan_t *const *chans, const uint8_t *slots, unsigned int n,
				 unsigned int start);

#endif /* SUBUTAI_CHAN_IMPL_H */
