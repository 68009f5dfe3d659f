/*
 * chanstress: random traffic over a channel between every ordered pair of tiles, with both
 * classes of the NoC busy besides: every tile sends plain NI messages of the normal class to
 * random tiles and takes those it gets, and locks and unlocks Subutai mutexes hosted on other
 * tiles (priority-class requests and replies in flight). Each tile sends CHANSTRESS_MESSAGES
 * messages to destinations drawn from its own generator (fixed seed); a message carries its
 * sender, its number on its channel and 0 to 7 words derived from them. Every receiver knows
 * from the senders' generators how many messages each channel carries, and checks that each
 * arrives once, in order, with its words. Sends never wait: a tile whose channel is full takes
 * its incoming messages meanwhile, so the traffic cannot deadlock on the program's side.
 *
 * Tile 0 prints one record with the totals (messages, words, errors of each kind) and exits with
 * 0 only when nothing was lost, duplicated, reordered or corrupted and no channel port reported
 * an error.
 */
#include <errno.h>
#include <stdio.h>

#include <subutai/chan.h>
#include <subutai/ni.h>
#include <subutai/soc.h>
#include <subutai/sync.h>
#ifdef TILE_CHAN_BASE
#include <subutai/chan_port.h>
#endif

#ifndef CHANSTRESS_MESSAGES
#define CHANSTRESS_MESSAGES 300
#endif
#define MAX_TILES 16
#define NI_TYPE   0x33
#define SEED      0x5eed

struct tile_result {
	uint32_t sent, received, words, lost_or_extra, out_of_order, corrupt, ni_sent, ni_received,
		locks, port_errors, done;
	uint32_t pad[5];
} __attribute__((aligned(64)));

static subutai_chan_t chans[MAX_TILES][MAX_TILES]; /* [from][to] */
static subutai_id_t mutexes[MAX_TILES];
static struct tile_result results[MAX_TILES];
static volatile uint32_t ready, all_done;

/* Plain NI messages are taken until every tile is done: one left in a tile's FIFO would hold
 * the normal class's links behind it. */
static void drain_ni(struct tile_result *r)
{
	struct subutai_ni_msg ni;

	while (subutai_ni_try_recv(SUBUTAI_NI_NORMAL, &ni) == 0) {
		r->ni_received++;
		r->corrupt += ni.type != NI_TYPE || ni.length != 3 ||
			      ni.payload[1] != ~ni.payload[2] || ni.payload[0] != ni.src;
	}
}

static uint32_t next_rand(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/* The destination of each message of a tile, from its generator alone. */
static unsigned int destination(unsigned int from, uint32_t *s, unsigned int n)
{
	unsigned int to = next_rand(s) % (n - 1);

	return to >= from ? to + 1 : to;
}

static uint32_t word_of(unsigned int from, uint32_t seq, unsigned int i)
{
	return (from << 24) ^ (seq * 2654435761u) ^ (i * 0x9e3779b9u);
}

static uint32_t shared(volatile uint32_t *word)
{
	subutai_dcache_invalidate();
	return *word;
}

static void run(unsigned int tile)
{
	const unsigned int n = subutai_num_tiles();
	struct tile_result r = {0};
	uint32_t expected[MAX_TILES] = {0}, next_seq[MAX_TILES] = {0}, sent_seq[MAX_TILES] = {0};
	uint32_t total_expected = 0;
	subutai_chan_t *incoming[MAX_TILES];
	unsigned int n_in = 0, index = 0;

	/* Connect: the receiving ends first in tile order, then the sending ones (each connect
	 * returns once its peer has connected its end, so the orders must agree). */
	for (unsigned int step = 0; step < n; step++) {
		for (unsigned int from = 0; from < n; from++) {
			unsigned int to = (from + step) % n;

			if (from == to) {
				continue;
			}
			if (to == tile) {
				subutai_chan_connect(&chans[from][to], SUBUTAI_CHAN_RECEIVER);
			} else if (from == tile) {
				subutai_chan_connect(&chans[from][to], SUBUTAI_CHAN_SENDER);
			}
		}
	}
	for (unsigned int from = 0; from < n; from++) {
		uint32_t s = SEED + from;

		if (from == tile) {
			continue;
		}
		incoming[n_in++] = &chans[from][tile];
		for (unsigned int k = 0; k < CHANSTRESS_MESSAGES; k++) {
			if (destination(from, &s, n) == tile) {
				expected[from]++;
			}
		}
		total_expected += expected[from];
	}

	uint32_t s = SEED + tile, traffic = SEED * 7 + tile;
	unsigned int k = 0, to = destination(tile, &s, n);

	while (k < CHANSTRESS_MESSAGES || r.received < total_expected) {
		/* Send the next message if its channel has room. */
		if (k < CHANSTRESS_MESSAGES) {
			uint32_t msg[8];
			unsigned int words = 1 + next_rand(&traffic) % 8;

			msg[0] = (tile << 24) | sent_seq[to];
			for (unsigned int i = 1; i < words; i++) {
				msg[i] = word_of(tile, sent_seq[to], i);
			}
			if (subutai_chan_try_send(&chans[tile][to], msg, 4 * words) == 0) {
				sent_seq[to]++;
				r.sent++;
				if (++k < CHANSTRESS_MESSAGES) {
					to = destination(tile, &s, n);
				}
			}
		}
		/* Take what came on any channel. */
		for (unsigned int j = 0; j < n_in; j++) {
			uint32_t msg[8];
			size_t len;
			subutai_chan_t *ch = incoming[(index + j) % n_in];

			if (subutai_chan_try_recv(ch, msg, sizeof(msg), &len) != 0) {
				continue;
			}
			index = (index + j + 1) % n_in;
			unsigned int from = msg[0] >> 24;
			uint32_t seq = msg[0] & 0xffffff;

			r.received++;
			r.words += len / 4;
			if (from >= n || &chans[from][tile] != ch) {
				r.corrupt++;
				continue;
			}
			if (seq != next_seq[from]) {
				r.out_of_order++;
			}
			next_seq[from] = seq + 1;
			for (unsigned int i = 1; i < len / 4; i++) {
				r.corrupt += msg[i] != word_of(from, seq, i);
			}
			break;
		}
		/* The other traffic: a plain NI message now and then, a lock of a remote mutex. */
		uint32_t dice = next_rand(&traffic);

		if ((dice & 7) == 0) {
			uint32_t payload[3] = {tile, dice, ~dice};

			if (subutai_ni_send(dice % n, SUBUTAI_NI_NORMAL, NI_TYPE, payload, 3) ==
			    0) {
				r.ni_sent++;
			}
		}
		if ((dice & 15) == 1) {
			subutai_id_t m = mutexes[(tile + 1 + dice % (n - 1)) % n];

			if (subutai_mutex_lock(m) == 0 && subutai_mutex_unlock(m) == 0) {
				r.locks++;
			}
		}
		drain_ni(&r);
	}
	for (unsigned int from = 0; from < n; from++) {
		if (from != tile && next_seq[from] != expected[from]) {
			r.lost_or_extra++;
		}
	}
#ifdef TILE_CHAN_BASE
	r.port_errors = SUBUTAI_CHAN_REG(SUBUTAI_CHAN_ERROR);
#endif
	r.done = 1;
	results[tile] = r;
	if (tile != 0) {
		struct tile_result late = {0};

		while (!shared(&all_done)) {
			drain_ni(&late);
		}
	}
}

void tile_main(unsigned int tile)
{
	while (!shared(&ready)) {
	}
	run(tile);
}

int main(void)
{
	const unsigned int n = subutai_num_tiles();

	if (n < 2 || n > MAX_TILES) {
		printf("chanstress: needs 2 to %u tiles\n", (unsigned int)MAX_TILES);
		return 1;
	}
	for (unsigned int from = 0; from < n; from++) {
		for (unsigned int to = 0; to < n; to++) {
			if (from != to && subutai_chan_create(&chans[from][to]) != 0) {
				printf("chanstress: create failed\n");
				return 1;
			}
		}
		if (subutai_mutex_alloc(from, false, &mutexes[from]) != 0) {
			printf("chanstress: no mutex on tile %u\n", from);
			return 1;
		}
	}
	ready = 1;
	run(0);

	struct tile_result sum = {0};

	struct tile_result late = {0};

	for (unsigned int t = 0; t < n; t++) {
		while (!shared(&results[t].done)) {
			drain_ni(&late);
		}
		struct tile_result *r = &results[t];

		sum.sent += r->sent;
		sum.received += r->received;
		sum.words += r->words;
		sum.lost_or_extra += r->lost_or_extra;
		sum.out_of_order += r->out_of_order;
		sum.corrupt += r->corrupt;
		sum.ni_sent += r->ni_sent;
		sum.ni_received += r->ni_received;
		sum.locks += r->locks;
		sum.port_errors |= r->port_errors;
	}
	all_done = 1;
	sum.corrupt += late.corrupt;
	/* NI messages still in flight to a tile that had finished are not counted as received. */
	int ok = sum.sent == n * CHANSTRESS_MESSAGES && sum.received == sum.sent &&
		 sum.lost_or_extra == 0 && sum.out_of_order == 0 && sum.corrupt == 0 &&
		 sum.port_errors == 0 && sum.locks > 0 && sum.ni_received > 0;

	printf("@subutai {\"program\":\"chanstress\",\"impl\":\"%s\",\"tiles\":%u,\"sent\":%lu,"
	       "\"received\":%lu,\"words\":%lu,\"lost_or_extra\":%lu,\"out_of_order\":%lu,"
	       "\"corrupt\":%lu,\"port_errors\":%lu,\"ni_sent\":%lu,\"ni_received\":%lu,"
	       "\"locks\":%lu,\"ok\":%s}\n",
	       subutai_chan_impl(), n, (unsigned long)sum.sent, (unsigned long)sum.received,
	       (unsigned long)sum.words, (unsigned long)sum.lost_or_extra,
	       (unsigned long)sum.out_of_order, (unsigned long)sum.corrupt,
	       (unsigned long)sum.port_errors, (unsigned long)sum.ni_sent,
	       (unsigned long)sum.ni_received, (unsigned long)sum.locks, ok ? "true" : "false");
	return ok ? 0 : 1;
}
