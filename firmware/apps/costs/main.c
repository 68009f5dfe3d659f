/*
 * costs: cycles of the building blocks of the synchronization paths, on tile 0 with the other
 * cores idle: a read of the cycle counter, a tile CSR read, an atomic-unit swap, a data-cache
 * invalidation, a Subutai lock/unlock request on a local and on a remote engine (without the
 * invalidation of an acquire), and the same through pthread_mutex_lock/unlock.
 */
#include <pthread.h>
#include <stdio.h>

#include <subutai/atomic.h>
#include <subutai/ni.h>
#include <subutai/sync.h>
#include <subutai_port.h>

#define REPEAT 8

static uint32_t stamp_cost;

/* Smallest cycles of stmt over REPEAT runs, each after setup (not counted). */
#define MEASURE_AFTER(name, setup, stmt)                                                           \
	do {                                                                                       \
		uint32_t best = UINT32_MAX;                                                        \
		for (unsigned int i = 0; i < REPEAT; i++) {                                        \
			setup;                                                                     \
			uint32_t t0 = subutai_cycles32();                                          \
			stmt;                                                                      \
			uint32_t t1 = subutai_cycles32();                                          \
			if (t1 - t0 - stamp_cost < best) {                                         \
				best = t1 - t0 - stamp_cost;                                       \
			}                                                                          \
		}                                                                                  \
		printf("@subutai {\"program\":\"costs\",\"tiles\":%u,\"what\":\"%s\",\"min\":%lu}\n", \
		       subutai_num_tiles(), name, (unsigned long)best);                            \
	} while (0)
#define MEASURE(name, stmt) MEASURE_AFTER(name, (void)0, stmt)

int main(void)
{
	subutai_id_t local, remote;
	pthread_mutex_t m;
	volatile uint32_t sink;

	stamp_cost = 0;
	MEASURE("cycle counter read", (void)0);
	stamp_cost = UINT32_MAX;
	for (unsigned int i = 0; i < REPEAT; i++) {
		uint32_t a = subutai_cycles32(), b = subutai_cycles32();

		stamp_cost = b - a < stamp_cost ? b - a : stamp_cost;
	}
	MEASURE("tile CSR read", sink = tile_id_read());
	MEASURE("subutai status read", sink = subutai_status_read());
	MEASURE("subutai req_id write", subutai_req_id_write(0));
	MEASURE("subutai ev_enable write", subutai_ev_enable_write(1u << CSR_SUBUTAI_EV_ENABLE_REPLY_OFFSET));
	MEASURE("uart txfull read", sink = uart_txfull_read());
	MEASURE("atomic swap", sink = subutai_atomic_swap(0, 0));
	MEASURE("atomic load", sink = subutai_atomic_load(0));
	MEASURE("dcache invalidate", subutai_dcache_invalidate());
	MEASURE("dcache invalidate + reload 4 stack lines", {
		subutai_dcache_invalidate();
		sink = ((volatile uint32_t *)__builtin_frame_address(0))[-1];
		sink = ((volatile uint32_t *)__builtin_frame_address(0))[-9];
		sink = ((volatile uint32_t *)__builtin_frame_address(0))[-17];
		sink = ((volatile uint32_t *)__builtin_frame_address(0))[-25];
	});
	subutai_mutex_alloc(0, false, &local);
	subutai_mutex_alloc(subutai_num_tiles() - 1, false, &remote);
	MEASURE("subutai lock+unlock request, local engine", {
		subutai_request(local, SUBUTAI_OP_LOCK, 0, false, NULL);
		subutai_request(local, SUBUTAI_OP_UNLOCK, 0, false, NULL);
	});
	MEASURE_AFTER("subutai unlock request (posted)",
		      subutai_request(local, SUBUTAI_OP_LOCK, 0, false, NULL),
		      subutai_request(local, SUBUTAI_OP_UNLOCK, 0, false, NULL));
	MEASURE("subutai lock+unlock request, remote engine", {
		subutai_request(remote, SUBUTAI_OP_LOCK, 0, false, NULL);
		subutai_request(remote, SUBUTAI_OP_UNLOCK, 0, false, NULL);
	});
#ifdef SUBUTAI_PORT_WINDOW
	MEASURE("window register read", sink = subutai_window_reply_id());
	MEASURE("window register write", subutai_window_set_value(0));
	MEASURE("window lock+unlock, local engine", {
		subutai_window_issue(SUBUTAI_OP_LOCK, false, local);
		sink = subutai_window_reply();
		subutai_window_issue(SUBUTAI_OP_UNLOCK, false, local);
	});
	MEASURE("window lock+unlock, remote engine", {
		subutai_window_issue(SUBUTAI_OP_LOCK, false, remote);
		sink = subutai_window_reply();
		subutai_window_issue(SUBUTAI_OP_UNLOCK, false, remote);
	});
	MEASURE_AFTER("window unlock (posted)",
		      { subutai_window_issue(SUBUTAI_OP_LOCK, false, local); sink = subutai_window_reply(); },
		      subutai_window_issue(SUBUTAI_OP_UNLOCK, false, local));
	{
		bool inv = false;
		uint32_t info = 0;

		MEASURE("window lock (acquire wait)+unlock, local engine", {
			subutai_window_issue(SUBUTAI_OP_LOCK, false, local);
			info = subutai_window_reply_acquire(&inv);
			subutai_window_issue(SUBUTAI_OP_UNLOCK, false, local);
		});
		printf("info %08lx invalidated %d\n", (unsigned long)info, inv);
	}
	MEASURE("driver lock+unlock, local engine", {
		subutai_mutex_lock(local);
		subutai_mutex_unlock(local);
	});
	MEASURE("driver lock+unlock, remote engine", {
		subutai_mutex_lock(remote);
		subutai_mutex_unlock(remote);
	});
#endif
	pthread_mutex_init(&m, NULL);
	MEASURE("pthread lock+unlock", {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	});
	MEASURE_AFTER("pthread unlock", pthread_mutex_lock(&m), pthread_mutex_unlock(&m));
	MEASURE_AFTER("pthread lock (free, released here)", (void)0, pthread_mutex_lock(&m); pthread_mutex_unlock(&m));
	{
		pthread_cond_t c;

		pthread_cond_init(&c, NULL);
		pthread_mutex_lock(&m);
		MEASURE("pthread cond broadcast (no waiter)", pthread_cond_broadcast(&c));
		MEASURE("pthread cond signal (no waiter)", pthread_cond_signal(&c));
		pthread_mutex_unlock(&m);
	}
	(void)sink;
	return 0;
}
