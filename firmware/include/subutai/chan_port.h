/*
 * The channel port's window (gateware/ni/channel_port.py; registers in
 * generated/subutai_chan_window.h) and the paths of a message through it, inline: what the "noc"
 * and "push" implementations of channels (subutai/chan.h) share, and the fast paths subutai/chan.h
 * puts in the caller. A send is stores of the words and one store that waits for the credit; a
 * "noc" receive is one load that waits for the message, loads of its words and the ack store;
 * a "push" receive polls the flag in the tile's own RAM instead.
 */
#ifndef SUBUTAI_CHAN_PORT_H
#define SUBUTAI_CHAN_PORT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <generated/mem.h>
#include <generated/soc.h>
#include <generated/subutai_chan_window.h>
#include <subutai/soc.h>
#include <subutai_port.h>

#if defined(CHANNELS) && CHANNELS && defined(TILE_CHAN_BASE)
#define SUBUTAI_CHAN_PORT_PRESENT 1
#else
#define SUBUTAI_CHAN_PORT_PRESENT 0
#undef TILE_CHAN_BASE
#define TILE_CHAN_BASE 0
#endif

#define SUBUTAI_CHAN_REG(offset) (*(volatile uint32_t *)(TILE_CHAN_BASE + (offset)))

/* The port's staging registers are the core's: a send holds the runtime's channel lock across
 * its stores (subutai/port.h). */
#define SUBUTAI_CHAN_TX_LOCK()      subutai_port_chan_lock()
#define SUBUTAI_CHAN_TX_UNLOCK(key) subutai_port_chan_unlock(key)

static inline uint32_t subutai_chan_port_status(void)
{
	return SUBUTAI_CHAN_REG(SUBUTAI_CHAN_STATUS);
}

/* Waits until a STATUS bit of bits is set where the runtime sleeps meanwhile (subutai/port.h,
 * SUBUTAI_PORT_CHAN_SLEEPS), so the core runs its other threads; otherwise nothing, the core then
 * waits on the bus (a receive's load, a send's store) or polls. */
#define SUBUTAI_CHAN_PORT_SLEEPS SUBUTAI_PORT_CHAN_SLEEPS

static inline void subutai_chan_port_await(uint32_t bits)
{
	while (SUBUTAI_CHAN_PORT_SLEEPS && (subutai_chan_port_status() & bits) == 0) {
		subutai_port_chan_sleep(bits);
	}
}

static inline bool subutai_chan_port_credit(unsigned int slot)
{
	return (subutai_chan_port_status() >> (16 + slot)) & 1u;
}

static inline bool subutai_chan_port_full(unsigned int slot)
{
	return (subutai_chan_port_status() >> slot) & 1u;
}

static inline void subutai_chan_port_connect(bool sender, unsigned int slot, unsigned int peer_tile,
					     unsigned int peer_slot, unsigned int kind)
{
	uint32_t word = SUBUTAI_CHAN_CONN_VALID | peer_tile | (peer_slot << 8);

	if (sender) {
		SUBUTAI_CHAN_REG(SUBUTAI_CHAN_CONNECT_OUT + 4 * slot) =
			word | (kind << SUBUTAI_CHAN_CONN_KIND_SHIFT);
	} else {
		SUBUTAI_CHAN_REG(SUBUTAI_CHAN_CONNECT_IN + 4 * slot) = word;
	}
}

static inline void subutai_chan_port_disconnect(bool sender, unsigned int slot)
{
	SUBUTAI_CHAN_REG((sender ? SUBUTAI_CHAN_CONNECT_OUT : SUBUTAI_CHAN_CONNECT_IN) + 4 * slot) =
		0;
}

/* The words, then the send: the SEND store waits on the bus for the slot's credit. Without
 * wait, EAGAIN when there is none. */
static inline int subutai_chan_port_send(unsigned int slot, const uint32_t *words, unsigned int n,
					 bool wait)
{
	if (SUBUTAI_CHAN_PORT_SLEEPS && wait) {
		subutai_chan_port_await(1u << (16 + slot));
	}
	unsigned int key = SUBUTAI_CHAN_TX_LOCK();

	if (!wait && !subutai_chan_port_credit(slot)) {
		SUBUTAI_CHAN_TX_UNLOCK(key);
		return EAGAIN;
	}
	for (unsigned int i = 0; i < n; i++) {
		SUBUTAI_CHAN_REG(SUBUTAI_CHAN_TX_DATA + 4 * i) = words[i];
	}
	SUBUTAI_CHAN_REG(SUBUTAI_CHAN_SEND + 4 * slot) = n;
	SUBUTAI_CHAN_TX_UNLOCK(key);
	return 0;
}

/* The message of the slot was taken: the slot is empty and the sender gets its credit. */
static inline void subutai_chan_port_ack(unsigned int slot)
{
	SUBUTAI_CHAN_REG(SUBUTAI_CHAN_ACK + 4 * slot) = 0;
}

/* "noc": waits on the bus until the slot is full; copies the message if it has at most cap
 * words (*n its length either way; a longer one stays, EINVAL). */
static inline int subutai_chan_port_recv(unsigned int slot, uint32_t *words, unsigned int cap,
					 unsigned int *n)
{
	subutai_chan_port_await(1u << slot);
	uint32_t info = SUBUTAI_CHAN_REG(SUBUTAI_CHAN_RECV + 4 * slot);
	unsigned int len = info & SUBUTAI_CHAN_INFO_LENGTH_MASK;
	const uintptr_t base = SUBUTAI_CHAN_RX_DATA + 4 * SUBUTAI_CHAN_MAX_WORDS * slot;

	*n = len;
	if (len > cap) {
		return EINVAL;
	}
	for (unsigned int i = 0; i < len; i++) {
		words[i] = SUBUTAI_CHAN_REG(base + 4 * i);
	}
	subutai_chan_port_ack(slot);
	return 0;
}

/* "push": the tile's pushed slots (in its RAM; the port's PUSH_BASE), as the core reads them:
 * through the RAM's uncached alias, since the port writes behind the data cache. */
struct subutai_chan_push_slot {
	uint32_t words[SUBUTAI_CHAN_SLOT_BYTES / 4];
};
extern struct subutai_chan_push_slot subutai_chan_push_slots[SUBUTAI_CHAN_N_SLOTS];

static inline volatile uint32_t *subutai_chan_push_words(unsigned int slot)
{
#ifdef TILE_RAM_UNCACHED_BASE
	return (volatile uint32_t *)((uintptr_t)subutai_chan_push_slots[slot].words -
				     TILE_RAM_BASE + TILE_RAM_UNCACHED_BASE);
#else
	return subutai_chan_push_slots[slot].words;
#endif
}

/* "push": polls the slot's flag (wait) or looks once (EAGAIN); then as subutai_chan_port_recv. */
static inline int subutai_chan_push_recv(unsigned int slot, uint32_t *words, unsigned int cap,
					 unsigned int *n, bool wait)
{
	volatile uint32_t *slot_words = subutai_chan_push_words(slot);
	uint32_t info;

	while ((info = slot_words[SUBUTAI_CHAN_PUSH_FLAG_WORD]) == 0) {
		if (!wait) {
			return EAGAIN;
		}
		/* The port sets the slot's full bit after the flag. */
		subutai_chan_port_await(1u << slot);
	}
	unsigned int len = info & SUBUTAI_CHAN_INFO_LENGTH_MASK;

	*n = len;
	if (len > cap) {
		return EINVAL;
	}
	for (unsigned int i = 0; i < len; i++) {
		words[i] = slot_words[i];
	}
	slot_words[SUBUTAI_CHAN_PUSH_FLAG_WORD] = 0;
	subutai_chan_port_ack(slot);
	return 0;
}

#endif /* SUBUTAI_CHAN_PORT_H */
