/*
 * Channels between threads: rdy-ack send and receive (seed 004, a run-time support for
 * fine-grained parallelism on the TILEPro64, §6), beside the PThreads API.
 *
 * A channel joins one sending thread and one receiving thread, on any tiles (the same tile too).
 * It is a one-position buffer ("queue": SUBUTAI_CHAN_QUEUE_SLOTS positions): a send puts a message
 * of up to SUBUTAI_CHAN_MAX_BYTES bytes (one cache line, a multiple of 4 bytes: the port moves
 * words) into it and waits while it is full; a receive takes the message and frees it (the "ack").
 * Messages of a channel arrive once each, whole and in the order sent. Larger data goes by pointer
 * (subutai_chan_send_ptr()/recv_ptr()): the receiver then sees what the sender wrote before the
 * send, as after a mutex hand-over (the coherence rule: its data cache is invalidated).
 *
 * Life of a channel:
 *   subutai_chan_create(&ch)                               by any thread, ch in shared memory
 *   subutai_chan_connect(&ch, SUBUTAI_CHAN_SENDER)         by each end's thread, on the tile it
 *   subutai_chan_connect(&ch, SUBUTAI_CHAN_RECEIVER)       runs on; returns once both are connected
 *   subutai_chan_send()/recv() ... try_send()/try_recv()/wait()
 *   subutai_chan_close(&ch, role)                          by each end: its end is gone; further
 *                                                          calls on that end return EBADF
 *   subutai_chan_destroy(&ch)                              by any thread, once both ends are closed
 *
 * The implementation is chosen when the library is built (firmware/Makefile CHAN=..., the
 * Zephyr module's CONFIG_SUBUTAI_CHAN_*), and subutai_chan_impl() names it:
 *   "flags"  rdy and ack words beside the message in shared memory; each side polls the other's
 *            word, invalidating its data cache between polls (seed 004's RA);
 *   "noc"    the tile's channel port (gateware/ni/channel_port.py): a send is stores into its
 *            window, the message and its ack are NoC packets, a receive is a load that waits for
 *            the message, then loads of it from the port (seed 004's RA-UDN, data included);
 *   "push"   the same port, but the message is written into the receiver's tile RAM with a flag
 *            after it, which the receiver polls locally (seed 004's home forwarding: the data
 *            is where the receiver reads it, no refill from main RAM);
 *   "queue"  a FastFlow-style single-producer single-consumer lock-free ring in shared memory
 *            (SUBUTAI_CHAN_QUEUE_SLOTS positions; a position is empty or full by its own word, no
 *            shared indices), the peer baseline of seed 004's Fig. 14.
 * "noc" and "push" need a SoC built with channels (CHANNELS in generated/soc.h); each tile has
 * SUBUTAI_CHAN_N_SLOTS sending and as many receiving ends.
 *
 * Every function returns 0 or an errno value: EINVAL (a message too long or not whole words, a
 * null or misaligned pointer, an end connected twice), EBADF (the channel was never created, was
 * destroyed, or this end is closed), EBUSY (destroy with an end still connected), ENOTCONN (the
 * calling tile has not connected this end of the channel), EAGAIN (try_*: the channel is full or
 * empty), ENOSPC (no free end left on the tile), ENOTSUP (noc/push without a channel port).
 */
#ifndef SUBUTAI_CHAN_H
#define SUBUTAI_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SUBUTAI_CHAN_MAX_BYTES   32
#define SUBUTAI_CHAN_QUEUE_SLOTS 8
#define SUBUTAI_CHAN_LINE        32
#define SUBUTAI_CHAN_FULL        (1u << 31) /* a position's rdy word: full, length in words */

/* One position of a channel in shared memory: the message and the word that says it is full
 * (seed 004's rdy: 0 empty, else SUBUTAI_CHAN_FULL | length) and, for "flags", the ack word on
 * another line. */
struct subutai_chan_pos {
	uint32_t data[SUBUTAI_CHAN_MAX_BYTES / 4];
	volatile uint32_t rdy;
	volatile uint32_t ack;
	uint32_t pad[SUBUTAI_CHAN_LINE / 4 - 2];
} __attribute__((aligned(SUBUTAI_CHAN_LINE)));

/* An end's state word: what it did, its tile, and its slot in the tile's table (and channel
 * port). */
#define SUBUTAI_CHAN_END_SLOT       0xffu
#define SUBUTAI_CHAN_END_TILE_SHIFT 16
#define SUBUTAI_CHAN_END_PUBLISHED  (1u << 8) /* slot taken, port not yet connected */
#define SUBUTAI_CHAN_END_CONNECTED  (1u << 9)
#define SUBUTAI_CHAN_END_CLOSED     (1u << 10)

enum subutai_chan_role {
	SUBUTAI_CHAN_SENDER = 0,
	SUBUTAI_CHAN_RECEIVER = 1
};

typedef struct subutai_chan {
	/* Shared, written at creation and by each end (one line). */
	volatile uint32_t magic;
	/* Each end's state (written by that end only): SUBUTAI_CHAN_END_* | tile | slot. */
	volatile uint32_t end[2];
	uint32_t pad0[5];
	/* Private to the sender (one line) and to the receiver (one line): queue indices. */
	uint32_t send_index;
	uint32_t pad1[7];
	uint32_t recv_index;
	uint32_t pad2[7];
	/* The positions ("flags": the first; "queue": all). */
	struct subutai_chan_pos pos[SUBUTAI_CHAN_QUEUE_SLOTS];
} __attribute__((aligned(SUBUTAI_CHAN_LINE))) subutai_chan_t;

/* Ends per tile and direction (the channel port's slots). */
#define SUBUTAI_CHAN_ENDS 16

/* The implementation of this build: "flags", "noc", "push" or "queue". */
const char *subutai_chan_impl(void);

/* Initializes *ch (in memory every tile sees, SUBUTAI_CHAN_LINE-aligned) as a channel. */
int subutai_chan_create(subutai_chan_t *ch);

/* Connects the calling thread, on the tile it runs on, as the role's end of ch, and waits until
 * the other end is connected too. */
int subutai_chan_connect(subutai_chan_t *ch, enum subutai_chan_role role);

/* Sends len bytes (at most SUBUTAI_CHAN_MAX_BYTES); waits while the channel is full. */
static inline int subutai_chan_send(subutai_chan_t *ch, const void *msg, size_t len);
/* As subutai_chan_send(), but returns EAGAIN at once when the channel is full. */
int subutai_chan_try_send(subutai_chan_t *ch, const void *msg, size_t len);

/* Receives the next message into buf (cap bytes; a longer message is EINVAL and stays in the
 * channel); *len (may be NULL) is its length. Waits while the channel is empty. */
static inline int subutai_chan_recv(subutai_chan_t *ch, void *buf, size_t cap, size_t *len);
/* As subutai_chan_recv(), but returns EAGAIN at once when the channel is empty. */
int subutai_chan_try_recv(subutai_chan_t *ch, void *buf, size_t cap, size_t *len);

/* Pointer passing: the message is the pointer; recv_ptr invalidates the data cache, so the
 * receiver reads what the sender wrote at it before sending. */
int subutai_chan_send_ptr(subutai_chan_t *ch, const void *ptr);
int subutai_chan_recv_ptr(subutai_chan_t *ch, void **ptr);

/* Waits until one of the n channels (all received on the calling tile) has a message and sets
 * *index to it; the message stays in its channel for a recv. Fair among the channels: the search
 * starts after the channel found last time (*index on entry; give n or more the first time). */
int subutai_chan_wait(subutai_chan_t *const *chans, unsigned int n, unsigned int *index);

/* Waits until one of the n channels (all sent on by the calling tile) can take a message without
 * waiting and sets *index to it (the emitter of a farm finds an idle worker so). Fair as
 * subutai_chan_wait(). */
int subutai_chan_wait_send(subutai_chan_t *const *chans, unsigned int n, unsigned int *index);

/* Closes the role's end of ch (on its tile). */
int subutai_chan_close(subutai_chan_t *ch, enum subutai_chan_role role);

/* Destroys ch once neither end is connected (EBUSY otherwise); its memory may then be reused,
 * and every call on it returns EBADF until it is created again. */
int subutai_chan_destroy(subutai_chan_t *ch);

/* Internals of the inline paths -------------------------------------------------------------- */

/* Send and receive with every check, out of line: what the inline functions call when their
 * quick look finds something to report, and the whole path of "flags" and "queue". */
int subutai_chan_send_checked(subutai_chan_t *ch, const void *msg, size_t len, bool wait);
int subutai_chan_recv_checked(subutai_chan_t *ch, void *buf, size_t cap, size_t *len, bool wait);

/* The channel each of the calling tile's ends serves (tile RAM), per role. */
extern subutai_chan_t *subutai_chan_ends[2][SUBUTAI_CHAN_ENDS];

/* The calling tile's slot of ch's role end if connected here, else -1 (the checked path says
 * why). The tile's own table decides: no shared word but the end's, no CSR. */
static inline int subutai_chan_slot(const subutai_chan_t *ch, enum subutai_chan_role role)
{
	if (ch == NULL) {
		return -1;
	}
	uint32_t end = ch->end[role];
	unsigned int slot = end & SUBUTAI_CHAN_END_SLOT;

	if ((end & SUBUTAI_CHAN_END_CONNECTED) && slot < SUBUTAI_CHAN_ENDS &&
	    subutai_chan_ends[role][slot] == ch) {
		return slot;
	}
	return -1;
}

#if defined(SUBUTAI_CHAN_IMPL_NOC) || defined(SUBUTAI_CHAN_IMPL_PUSH)
/* The channel port's paths go inline into the caller: a message costs the port's few accesses
 * and the quick look at the end, not a call chain. */
#include <subutai/chan_port.h>

static inline int subutai_chan_send(subutai_chan_t *ch, const void *msg, size_t len)
{
	int slot = subutai_chan_slot(ch, SUBUTAI_CHAN_SENDER);

	if (__builtin_expect(slot >= 0 && len <= SUBUTAI_CHAN_MAX_BYTES && len % 4 == 0 &&
				     ((uintptr_t)msg % 4) == 0 && (msg != NULL || len == 0),
			     1)) {
		return subutai_chan_port_send(slot, (const uint32_t *)msg, len / 4, true);
	}
	return subutai_chan_send_checked(ch, msg, len, true);
}

static inline int subutai_chan_recv(subutai_chan_t *ch, void *buf, size_t cap, size_t *len)
{
	int slot = subutai_chan_slot(ch, SUBUTAI_CHAN_RECEIVER);

	if (__builtin_expect(slot >= 0 && ((uintptr_t)buf % 4) == 0 && (buf != NULL || cap == 0),
			     1)) {
		unsigned int n;
#ifdef SUBUTAI_CHAN_IMPL_PUSH
		int err = subutai_chan_push_recv(slot, (uint32_t *)buf, cap / 4, &n, true);
#else
		int err = subutai_chan_port_recv(slot, (uint32_t *)buf, cap / 4, &n);
#endif

		if (err == 0 && len != NULL) {
			*len = 4 * n;
		}
		return err;
	}
	return subutai_chan_recv_checked(ch, buf, cap, len, true);
}
#else
static inline int subutai_chan_send(subutai_chan_t *ch, const void *msg, size_t len)
{
	return subutai_chan_send_checked(ch, msg, len, true);
}

static inline int subutai_chan_recv(subutai_chan_t *ch, void *buf, size_t cap, size_t *len)
{
	return subutai_chan_recv_checked(ch, buf, cap, len, true);
}
#endif

#endif /* SUBUTAI_CHAN_H */
