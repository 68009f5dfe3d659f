/*
 * chanbench: one-way latency and throughput of channels (subutai/chan.h) between tile 0 and a
 * tile one hop away, and between tile 0 and the farthest tile of the mesh (seed 004's Table 5).
 *
 * Latency: tile 0 sends a message on "ping", the peer echoes it on "pong"; one-way latency is
 * half the round trip, measured with the global cycle counter less the cost of reading it
 * (warm-up rounds first; min and median of CHANBENCH_ROUNDS rounds). Throughput: tile 0 sends
 * CHANBENCH_STREAM messages back to back, the peer receives them all and answers once; messages
 * per thousand cycles over the whole exchange. Both for 1-word and 8-word (one cache line)
 * messages. One "@subutai" JSON line per (peer, size), with the implementation's name.
 */
#include <stdio.h>
#include <stdlib.h>

#include <generated/mem.h>
#include <generated/soc.h>
#include <subutai/chan.h>
#include <subutai/soc.h>
#ifdef TILE_CHAN_BASE
#include <subutai/chan_port.h>
#define CHAN_REG SUBUTAI_CHAN_REG
#endif

#ifndef CHANBENCH_ROUNDS
#define CHANBENCH_ROUNDS 32
#endif
#ifndef CHANBENCH_WARMUP
#define CHANBENCH_WARMUP 4
#endif
#ifndef CHANBENCH_STREAM
#define CHANBENCH_STREAM 128
#endif

enum {
	CMD_ECHO = 1,
	CMD_STREAM,
	CMD_RAW,
	CMD_STOP
};

#define N_PEERS 2

static subutai_chan_t ping[N_PEERS], pong[N_PEERS];
static volatile uint32_t peers[N_PEERS];
static volatile uint32_t setup_done;

static int check(int err, const char *what)
{
	if (err != 0) {
		printf("chanbench: tile %u: %s failed: %d\n", subutai_tile_id(), what, err);
		subutai_exit(1);
	}
	return err;
}

static unsigned int hops(unsigned int a, unsigned int b)
{
	int dx = (int)(a % MESH_X) - (int)(b % MESH_X);
	int dy = (int)(a / MESH_X) - (int)(b / MESH_X);

	return (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
}

/* The peer: echoes, swallows streams, stops. */
static void serve(unsigned int k)
{
	uint32_t msg[8];
	size_t len;

	check(subutai_chan_connect(&ping[k], SUBUTAI_CHAN_RECEIVER), "connect ping");
	check(subutai_chan_connect(&pong[k], SUBUTAI_CHAN_SENDER), "connect pong");
	for (;;) {
		check(subutai_chan_recv(&ping[k], msg, sizeof(msg), &len), "recv");
		if (msg[0] == CMD_ECHO) {
			check(subutai_chan_send(&pong[k], msg, len), "echo");
		} else if (msg[0] == CMD_STREAM) {
			uint32_t count = msg[1];

			for (uint32_t i = 0; i < count; i++) {
				check(subutai_chan_recv(&ping[k], msg, sizeof(msg), &len),
				      "recv stream");
				if (msg[0] != i) {
					printf("chanbench: stream message %lu arrived as %lu\n",
					       (unsigned long)i, (unsigned long)msg[0]);
					subutai_exit(1);
				}
			}
			check(subutai_chan_send(&pong[k], &count, sizeof(count)), "stream answer");
#ifdef TILE_CHAN_BASE
		} else if (msg[0] == CMD_RAW) {
			/* The port alone: one-word echoes by window accesses, no library. */
			unsigned int in =
				ping[k].end[SUBUTAI_CHAN_RECEIVER] & SUBUTAI_CHAN_END_SLOT;
			unsigned int out = pong[k].end[SUBUTAI_CHAN_SENDER] & SUBUTAI_CHAN_END_SLOT;

			for (uint32_t i = 0; i < msg[1]; i++) {
				(void)CHAN_REG(SUBUTAI_CHAN_RECV + 4 * in);
				uint32_t w = CHAN_REG(SUBUTAI_CHAN_RX_DATA +
						      4 * SUBUTAI_CHAN_MAX_WORDS * in);

				CHAN_REG(SUBUTAI_CHAN_ACK + 4 * in) = 0;
				CHAN_REG(SUBUTAI_CHAN_TX_DATA) = w;
				CHAN_REG(SUBUTAI_CHAN_SEND + 4 * out) = 1;
			}
#endif
		} else {
			break;
		}
	}
	check(subutai_chan_close(&ping[k], SUBUTAI_CHAN_RECEIVER), "close ping");
	check(subutai_chan_close(&pong[k], SUBUTAI_CHAN_SENDER), "close pong");
}

void tile_main(unsigned int tile)
{
	while (!setup_done) {
		subutai_dcache_invalidate();
	}
	for (unsigned int k = 0; k < N_PEERS; k++) {
		if (peers[k] == tile) {
			serve(k);
		}
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Inline with a constant size: the copies of the message unroll, as in a program whose messages
 * have a fixed type. */
static inline __attribute__((always_inline)) void measure(unsigned int k, unsigned int words,
							  uint32_t overhead)
{
	static uint32_t rtt[CHANBENCH_ROUNDS]; /* one per size: each inline copy has its own */
	uint32_t msg[8] = {CMD_ECHO, 1, 2, 3, 4, 5, 6, 7}, back[8];
	size_t len;

	for (unsigned int r = 0; r < CHANBENCH_WARMUP + CHANBENCH_ROUNDS; r++) {
		msg[1] = r;
		uint32_t t0 = subutai_cycles32();

		subutai_chan_send(&ping[k], msg, 4 * words);
		subutai_chan_recv(&pong[k], back, sizeof(back), &len);
		uint32_t t1 = subutai_cycles32();

		if (len != 4 * words || (words > 1 && back[1] != r)) {
			printf("chanbench: echo %u came back wrong: len %u back %lx %lx\n", r,
			       (unsigned)len, (unsigned long)back[0], (unsigned long)back[1]);
			subutai_exit(1);
		}
		if (r >= CHANBENCH_WARMUP) {
			rtt[r - CHANBENCH_WARMUP] = t1 - t0 - overhead;
		}
	}
	qsort(rtt, CHANBENCH_ROUNDS, sizeof(rtt[0]), cmp_u32);

	/* The two calls alone: a send with the credit there, a receive with the message there. */
	uint32_t t_send, t_recv;
	{
		uint32_t t0 = subutai_cycles32();

		subutai_chan_send(&ping[k], msg, 4 * words);
		t_send = subutai_cycles32() - t0 - overhead;
		for (uint32_t w0 = subutai_cycles32(); subutai_cycles32() - w0 < 4000;) {
		}
		t0 = subutai_cycles32();
		subutai_chan_recv(&pong[k], back, sizeof(back), &len);
		t_recv = subutai_cycles32() - t0 - overhead;
	}

	/* The port alone (noc): one-word round trips by window accesses. */
	uint32_t raw = 0;
#ifdef TILE_CHAN_BASE
	if (words == 1 && subutai_chan_impl()[0] == 'n') {
		unsigned int out = ping[k].end[SUBUTAI_CHAN_SENDER] & SUBUTAI_CHAN_END_SLOT;
		unsigned int in = pong[k].end[SUBUTAI_CHAN_RECEIVER] & SUBUTAI_CHAN_END_SLOT;
		uint32_t cmd[2] = {CMD_RAW, CHANBENCH_ROUNDS};

		check(subutai_chan_send(&ping[k], cmd, sizeof(cmd)), "raw command");
		raw = ~0u;
		for (uint32_t r = 0; r < CHANBENCH_ROUNDS; r++) {
			uint32_t t0 = subutai_cycles32();

			CHAN_REG(SUBUTAI_CHAN_TX_DATA) = r;
			CHAN_REG(SUBUTAI_CHAN_SEND + 4 * out) = 1;
			(void)CHAN_REG(SUBUTAI_CHAN_RECV + 4 * in);
			uint32_t w =
				CHAN_REG(SUBUTAI_CHAN_RX_DATA + 4 * SUBUTAI_CHAN_MAX_WORDS * in);

			CHAN_REG(SUBUTAI_CHAN_ACK + 4 * in) = 0;
			uint32_t dt = subutai_cycles32() - t0 - overhead;

			if (w != r) {
				printf("chanbench: raw echo %lu came back as %lu\n",
				       (unsigned long)r, (unsigned long)w);
				subutai_exit(1);
			}
			if (dt < raw) {
				raw = dt;
			}
		}
	}
#endif

	/* Throughput: a stream of messages, then the peer's one answer. */
	uint32_t cmd[2] = {CMD_STREAM, CHANBENCH_STREAM};

	check(subutai_chan_send(&ping[k], cmd, sizeof(cmd)), "stream command");
	uint32_t t0 = subutai_cycles32();

	for (uint32_t i = 0; i < CHANBENCH_STREAM; i++) {
		msg[0] = i;
		subutai_chan_send(&ping[k], msg, 4 * words);
	}
	check(subutai_chan_recv(&pong[k], back, sizeof(back), &len), "stream answer");
	uint32_t stream = subutai_cycles32() - t0 - overhead;
	uint32_t median = rtt[CHANBENCH_ROUNDS / 2];

	printf("@subutai {\"program\":\"chanbench\",\"impl\":\"%s\",\"tiles\":%u,\"peer\":%lu,"
	       "\"hops\":%u,\"words\":%u,\"rounds\":%u,\"rtt_min\":%lu,\"rtt_median\":%lu,"
	       "\"rtt_max\":%lu,\"latency_cycles\":%lu.%lu,\"stream_messages\":%u,"
	       "\"stream_cycles\":%lu,\"send_cycles\":%lu,\"recv_cycles\":%lu,\"port_rtt_min\":%lu}"
	       "\n",
	       subutai_chan_impl(), subutai_num_tiles(), (unsigned long)peers[k], hops(0, peers[k]),
	       words, (unsigned int)CHANBENCH_ROUNDS, (unsigned long)rtt[0], (unsigned long)median,
	       (unsigned long)rtt[CHANBENCH_ROUNDS - 1], (unsigned long)(median / 2),
	       (unsigned long)(median % 2 ? 5 : 0), (unsigned int)CHANBENCH_STREAM,
	       (unsigned long)stream, (unsigned long)t_send, (unsigned long)t_recv,
	       (unsigned long)raw);
}

int main(void)
{
	unsigned int n = subutai_num_tiles();

	if (n < 2) {
		printf("chanbench: needs 2 tiles or more\n");
		return 1;
	}
	peers[0] = 1;     /* one hop away */
	peers[1] = n - 1; /* the farthest corner */
	unsigned int n_peers = peers[1] == peers[0] ? 1 : 2;

	for (unsigned int k = 0; k < n_peers; k++) {
		check(subutai_chan_create(&ping[k]), "create ping");
		check(subutai_chan_create(&pong[k]), "create pong");
	}
	if (n_peers == 1) {
		peers[1] = ~0u;
	}
	setup_done = 1;

	/* What reading the counter twice costs. */
	uint32_t overhead = ~0u;

	for (unsigned int i = 0; i < 8; i++) {
		uint32_t t0 = subutai_cycles32();
		uint32_t t1 = subutai_cycles32();

		if (t1 - t0 < overhead) {
			overhead = t1 - t0;
		}
	}
	for (unsigned int k = 0; k < n_peers; k++) {
		check(subutai_chan_connect(&ping[k], SUBUTAI_CHAN_SENDER), "connect ping");
		check(subutai_chan_connect(&pong[k], SUBUTAI_CHAN_RECEIVER), "connect pong");
		measure(k, 1, overhead);
		measure(k, 8, overhead);
		uint32_t stop = CMD_STOP;

		check(subutai_chan_send(&ping[k], &stop, sizeof(stop)), "stop");
	}
	return 0;
}
