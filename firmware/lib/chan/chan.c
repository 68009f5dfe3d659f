/*
 * Channels (subutai/chan.h), the part common to every implementation: creation, the rendezvous
 * of the two ends, each tile's table of its ends, argument checks and errors. The messages
 * themselves are the implementation's (chan_<impl>.c).
 */
#include <errno.h>
#include <string.h>

#include <subutai/chan.h>
#include <subutai/soc.h>
#include <subutai_port.h>

#include "chan_impl.h"

#define CHAN_MAGIC 0x6368616eu /* "chan" */

/* This tile's ends: the channel each slot serves, per role. */
subutai_chan_t *subutai_chan_ends[2][SUBUTAI_CHAN_ENDS] __tile_bss;
#define chan_ends subutai_chan_ends

const char *subutai_chan_impl(void)
{
	return subutai_chan_impl_name;
}

int subutai_chan_create(subutai_chan_t *ch)
{
	if (ch == NULL || ((uintptr_t)ch % SUBUTAI_CHAN_LINE) != 0) {
		return EINVAL;
	}
	memset(ch, 0, sizeof(*ch));
	chan_impl_init(ch);
	/* Stores reach memory in order (write-through, not posted): the magic last. */
	ch->magic = CHAN_MAGIC;
	return 0;
}

/* Reads a word another core writes: the data cache is invalidated first. */
static uint32_t shared_word(volatile uint32_t *word)
{
	subutai_dcache_invalidate();
	return *word;
}

int subutai_chan_connect(subutai_chan_t *ch, enum subutai_chan_role role)
{
	if (ch == NULL || (role != SUBUTAI_CHAN_SENDER && role != SUBUTAI_CHAN_RECEIVER)) {
		return EINVAL;
	}
	if (shared_word(&ch->magic) != CHAN_MAGIC) {
		return EBADF;
	}
	if (ch->end[role] != 0) {
		return (ch->end[role] & SUBUTAI_CHAN_END_CLOSED) ? EBADF
								 : EINVAL; /* connected twice */
	}
	unsigned int key = subutai_port_lock();
	unsigned int slot;

	for (slot = 0; slot < SUBUTAI_CHAN_ENDS && chan_ends[role][slot] != NULL; slot++) {
	}
	if (slot == SUBUTAI_CHAN_ENDS) {
		subutai_port_unlock(key);
		return ENOSPC;
	}
	chan_ends[role][slot] = ch;
	subutai_port_unlock(key);

	unsigned int peer = role ^ 1;
	uint32_t peer_end;
	uint32_t here = (subutai_tile_id() << SUBUTAI_CHAN_END_TILE_SHIFT) | slot;

	ch->end[role] = SUBUTAI_CHAN_END_PUBLISHED | here;
	/* The receiver connects its port as soon as it knows the sender's slot; the sender only
	 * once the receiver's port is connected, since connecting gives the sender its credit and
	 * a message for an unconnected slot would be dropped. */
	uint32_t needed = role == SUBUTAI_CHAN_RECEIVER
				  ? SUBUTAI_CHAN_END_PUBLISHED | SUBUTAI_CHAN_END_CONNECTED
				  : SUBUTAI_CHAN_END_CONNECTED;
	while (((peer_end = shared_word(&ch->end[peer])) & needed) == 0) {
		CHAN_RELAX();
	}
	if (peer_end & SUBUTAI_CHAN_END_CLOSED) {
		return EBADF;
	}
	int err = chan_impl_connect(ch, role, slot, peer_end >> SUBUTAI_CHAN_END_TILE_SHIFT,
				    peer_end & SUBUTAI_CHAN_END_SLOT);

	if (err != 0) {
		chan_ends[role][slot] = NULL;
		ch->end[role] = 0;
		return err;
	}
	ch->end[role] = SUBUTAI_CHAN_END_CONNECTED | here;
	while ((shared_word(&ch->end[peer]) & SUBUTAI_CHAN_END_CONNECTED) == 0) {
		CHAN_RELAX();
	}
	return 0;
}

/* The calling tile's slot of ch's role end, or an errno value (negative). The tile's own table
 * says whether it serves ch: no shared word and no CSR on the path of a message. */
static inline int end_slot(const subutai_chan_t *ch, enum subutai_chan_role role)
{
	if (ch == NULL) {
		return -EINVAL;
	}
	uint32_t end = ch->end[role];
	unsigned int slot = end & SUBUTAI_CHAN_END_SLOT;

	if (__builtin_expect((end & SUBUTAI_CHAN_END_CONNECTED) && slot < SUBUTAI_CHAN_ENDS &&
				     chan_ends[role][slot] == ch,
			     1)) {
		return slot;
	}
	if (ch->magic != CHAN_MAGIC || (end & SUBUTAI_CHAN_END_CLOSED)) {
		return -EBADF;
	}
	return -ENOTCONN;
}

int subutai_chan_send_checked(subutai_chan_t *ch, const void *msg, size_t len, bool wait)
{
	int slot = end_slot(ch, SUBUTAI_CHAN_SENDER);

	if (slot < 0) {
		return -slot;
	}
	if ((msg == NULL && len != 0) || len > SUBUTAI_CHAN_MAX_BYTES || len % 4 != 0 ||
	    ((uintptr_t)msg % 4) != 0) {
		return EINVAL;
	}
	return chan_impl_send(ch, slot, msg, len / 4, wait);
}

int subutai_chan_try_send(subutai_chan_t *ch, const void *msg, size_t len)
{
	return subutai_chan_send_checked(ch, msg, len, false);
}

int subutai_chan_recv_checked(subutai_chan_t *ch, void *buf, size_t cap, size_t *len, bool wait)
{
	int slot = end_slot(ch, SUBUTAI_CHAN_RECEIVER);

	if (slot < 0) {
		return -slot;
	}
	if ((buf == NULL && cap != 0) || ((uintptr_t)buf % 4) != 0) {
		return EINVAL;
	}
	unsigned int n;
	int err = chan_impl_recv(ch, slot, buf, cap / 4, &n, wait);

	if (err == 0 && len != NULL) {
		*len = 4 * n;
	}
	return err;
}

int subutai_chan_try_recv(subutai_chan_t *ch, void *buf, size_t cap, size_t *len)
{
	return subutai_chan_recv_checked(ch, buf, cap, len, false);
}

int subutai_chan_send_ptr(subutai_chan_t *ch, const void *ptr)
{
	uint32_t word = (uintptr_t)ptr;

	return subutai_chan_send(ch, &word, sizeof(word));
}

int subutai_chan_recv_ptr(subutai_chan_t *ch, void **ptr)
{
	uint32_t word;
	size_t len;

	if (ptr == NULL) {
		return EINVAL;
	}
	int err = subutai_chan_recv(ch, &word, sizeof(word), &len);

	if (err != 0) {
		return err;
	}
	if (len != sizeof(word)) {
		return EINVAL;
	}
	/* The acquire of the data behind the pointer (the coherence rule). */
	if (!chan_impl_recv_invalidates) {
		subutai_dcache_invalidate();
	}
	*ptr = (void *)(uintptr_t)word;
	return 0;
}

static int wait_any(subutai_chan_t *const *chans, unsigned int n, unsigned int *index,
		    enum subutai_chan_role role)
{
	uint8_t slots[SUBUTAI_CHAN_ENDS];

	if (chans == NULL || index == NULL || n == 0 || n > SUBUTAI_CHAN_ENDS) {
		return EINVAL;
	}
	for (unsigned int i = 0; i < n; i++) {
		int slot = end_slot(chans[i], role);

		if (slot < 0) {
			return -slot;
		}
		slots[i] = slot;
	}
	unsigned int start = *index + 1 >= n ? 0 : *index + 1;

	*index = role == SUBUTAI_CHAN_RECEIVER ? chan_impl_wait(chans, slots, n, start)
					       : chan_impl_wait_send(chans, slots, n, start);
	return 0;
}

int subutai_chan_wait(subutai_chan_t *const *chans, unsigned int n, unsigned int *index)
{
	return wait_any(chans, n, index, SUBUTAI_CHAN_RECEIVER);
}

int subutai_chan_wait_send(subutai_chan_t *const *chans, unsigned int n, unsigned int *index)
{
	return wait_any(chans, n, index, SUBUTAI_CHAN_SENDER);
}

int subutai_chan_close(subutai_chan_t *ch, enum subutai_chan_role role)
{
	if (role != SUBUTAI_CHAN_SENDER && role != SUBUTAI_CHAN_RECEIVER) {
		return EINVAL;
	}
	int slot = end_slot(ch, role);

	if (slot < 0) {
		return -slot;
	}
	chan_impl_close(role, slot);
	ch->end[role] = SUBUTAI_CHAN_END_CLOSED | (ch->end[role] & ~SUBUTAI_CHAN_END_CONNECTED);
	chan_ends[role][slot] = NULL;
	return 0;
}

int subutai_chan_destroy(subutai_chan_t *ch)
{
	if (ch == NULL) {
		return EINVAL;
	}
	if (shared_word(&ch->magic) != CHAN_MAGIC) {
		return EBADF;
	}
	for (unsigned int role = 0; role < 2; role++) {
		uint32_t end = ch->end[role];

		if (end != 0 && !(end & SUBUTAI_CHAN_END_CLOSED)) {
			return EBUSY;
		}
	}
	ch->magic = 0;
	return 0;
}
