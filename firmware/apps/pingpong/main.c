/*
 * pingpong: round-trip cycles between every ordered pair of tiles through the NoC.
 *
 * Every tile other than 0 serves messages: PING is answered with PONG; CMD(target, rounds)
 * makes it ping target and REPORT the round trips to tile 0; STOP ends it. Tile 0 drives every
 * pair and prints one "@subutai" JSON line per pair.
 *
 * Built with -DPINGPONG_IRQ the servers answer from the NI interrupt handler and sleep in
 * between; otherwise they poll the NI. The timed code sits with the NI driver's at a fixed place
 * in the instruction cache (SUBUTAI_SYNC_PATH, subutai/timed.h).
 */
#include <stdio.h>

#include <subutai/ni.h>

#ifndef PINGPONG_ROUNDS
#define PINGPONG_ROUNDS 16
#endif

enum {
	MSG_PING = 1,
	MSG_PONG,
	MSG_CMD,
	MSG_REPORT,
	MSG_STOP
};

struct rtt_stats {
	uint32_t min, max, sum;
};

static volatile uint32_t stop_requested __tile_bss;
static volatile uint32_t cmd_pending __tile_bss;
static uint32_t cmd_target __tile_bss, cmd_rounds __tile_bss;
static volatile uint32_t pong_seen __tile_bss;
static volatile uint32_t report_seen __tile_bss;
static uint32_t report[4] __tile_bss;

SUBUTAI_SYNC_PATH static void send(unsigned int dest, unsigned int type, const uint32_t *words,
				   unsigned int n)
{
	if (subutai_ni_send(dest, SUBUTAI_NI_NORMAL, type, words, n) != 0) {
		printf("pingpong: send to %u refused\n", dest);
		subutai_exit(1);
	}
}

/* Handles one message; PONGs are counted for the pinger. */
SUBUTAI_SYNC_PATH static void handle(const struct subutai_ni_msg *m)
{
	switch (m->type) {
	case MSG_PING:
		send(m->src, MSG_PONG, m->payload, m->length);
		break;
	case MSG_PONG:
		pong_seen++;
		break;
	case MSG_CMD:
		cmd_target = m->payload[0];
		cmd_rounds = m->payload[1];
		cmd_pending = 1;
		break;
	case MSG_REPORT:
		for (unsigned int i = 0; i < 4; i++) {
			report[i] = m->payload[i];
		}
		report_seen++;
		break;
	case MSG_STOP:
		stop_requested = 1;
		break;
	default:
		printf("pingpong: tile %u got unknown type %u\n", subutai_tile_id(), m->type);
		subutai_exit(1);
	}
}

SUBUTAI_SYNC_PATH static void pump(void)
{
	struct subutai_ni_msg m;

	while (subutai_ni_try_recv(SUBUTAI_NI_NORMAL, &m) == 0) {
		handle(&m);
	}
}

/* Waits until *counter differs from seen, serving messages meanwhile. */
SUBUTAI_SYNC_PATH static void wait_change(volatile uint32_t *counter, uint32_t seen)
{
	while (*counter == seen) {
#ifdef PINGPONG_IRQ
		__asm__ volatile("wfi");
#else
		pump();
#endif
	}
}

SUBUTAI_SYNC_PATH static void measure(unsigned int target, unsigned int rounds, struct rtt_stats *s)
{
	s->min = UINT32_MAX;
	s->max = 0;
	s->sum = 0;
	for (unsigned int r = 0; r < rounds; r++) {
		uint32_t seen = pong_seen;
		uint32_t word = r;
		uint32_t t0 = (uint32_t)subutai_cycles();

		send(target, MSG_PING, &word, 1);
		wait_change(&pong_seen, seen);
		uint32_t rtt = (uint32_t)subutai_cycles() - t0;

		s->min = rtt < s->min ? rtt : s->min;
		s->max = rtt > s->max ? rtt : s->max;
		s->sum += rtt;
	}
}

SUBUTAI_SYNC_PATH void tile_main(unsigned int tile)
{
	(void)tile;
#ifdef PINGPONG_IRQ
	subutai_ni_set_handler(pump);
#endif
	while (!stop_requested) {
#ifdef PINGPONG_IRQ
		__asm__ volatile("wfi");
#else
		pump();
#endif
		if (cmd_pending) {
			struct rtt_stats s;

			cmd_pending = 0;
			measure(cmd_target, cmd_rounds, &s);
			uint32_t words[4] = {cmd_target, s.min, s.max, s.sum};

			send(0, MSG_REPORT, words, 4);
		}
	}
}

int main(void)
{
	unsigned int n = subutai_num_tiles();

#ifdef PINGPONG_IRQ
	subutai_ni_set_handler(pump);
#endif
	for (unsigned int src = 0; src < n; src++) {
		for (unsigned int dst = 0; dst < n; dst++) {
			struct rtt_stats s;

			if (src == dst) {
				continue;
			}
			if (src == 0) {
				measure(dst, PINGPONG_ROUNDS, &s);
			} else {
				uint32_t cmd[2] = {dst, PINGPONG_ROUNDS};
				uint32_t seen = report_seen;

				send(src, MSG_CMD, cmd, 2);
				/* Tile 0 keeps serving (src may ping it) until the report comes. */
				wait_change(&report_seen, seen);
				s.min = report[1];
				s.max = report[2];
				s.sum = report[3];
			}
			int dx = (int)(src % MESH_X) - (int)(dst % MESH_X);
			int dy = (int)(src / MESH_X) - (int)(dst / MESH_X);

			printf("@subutai {\"program\":\"pingpong\",\"mode\":\"%s\",\"tiles\":%u,"
			       "\"src\":%u,\"dst\":%u,\"hops\":%d,\"rounds\":%u,"
			       "\"min\":%lu,\"max\":%lu,\"avg\":%lu}\n",
#ifdef PINGPONG_IRQ
			       "irq",
#else
			       "poll",
#endif
			       n, src, dst, (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy),
			       (unsigned int)PINGPONG_ROUNDS, (unsigned long)s.min,
			       (unsigned long)s.max, (unsigned long)(s.sum / PINGPONG_ROUNDS));
		}
	}
	for (unsigned int t = 1; t < n; t++) {
		send(t, MSG_STOP, NULL, 0);
	}
	subutai_ni_flush();
	return 0;
}
