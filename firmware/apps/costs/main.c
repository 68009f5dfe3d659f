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
		printf("@subutai "                                                                 \
		       "{\"program\":\"costs\",\"tiles\":%u,\"what\":\"%s\",\"min\":%lu}\n",       \
		       subutai_num_tiles(), name, (unsigned long)best);                            \
	} while (0)
#define MEASURE(name, stmt) MEASURE_AFTER(name, (void)0, stmt)

/*
 * Release latencies of a barrier: a thread on every other core waits in it (through the driver,
 * then through pthread_barrier_wait) and stamps the cycle its wait returns; tile 0 stamps the
 * cycle before it arrives last. Per round, the latest waiter's latency; smallest over REPEAT
 * rounds (the first waiter's too).
 */
static subutai_id_t release_barrier;
static pthread_barrier_t release_pbarrier;
static uint32_t release_exit[2][REPEAT][N_TILES];

static void *release_waiter(void *arg)
{
	unsigned int me = (uintptr_t)arg;

	for (unsigned int i = 0; i < REPEAT; i++) {
		subutai_barrier_wait(release_barrier);
		release_exit[0][i][me] = subutai_cycles32();
		subutai_barrier_wait(release_barrier);
	}
	for (unsigned int i = 0; i < REPEAT; i++) {
		pthread_barrier_wait(&release_pbarrier);
		release_exit[1][i][me] = subutai_cycles32();
		pthread_barrier_wait(&release_pbarrier);
	}
	return NULL;
}

static void release_costs(void)
{
	uint32_t enter[2][REPEAT];
	unsigned int n = subutai_num_tiles();
	pthread_t waiter[N_TILES];

	subutai_barrier_alloc(n - 1, n, &release_barrier);
	pthread_barrier_init(&release_pbarrier, NULL, n);
	for (unsigned int t = 1; t < n; t++) {
		pthread_create(&waiter[t], NULL, release_waiter, (void *)(uintptr_t)t);
	}
	for (unsigned int i = 0; i < REPEAT; i++) {
		for (uint32_t t0 = subutai_cycles32(); subutai_cycles32() - t0 < 2000;) {
		}
		enter[0][i] = subutai_cycles32();
		subutai_barrier_wait(release_barrier);
		subutai_barrier_wait(release_barrier);
	}
	for (unsigned int i = 0; i < REPEAT; i++) {
		for (uint32_t t0 = subutai_cycles32(); subutai_cycles32() - t0 < 2000;) {
		}
		enter[1][i] = subutai_cycles32();
		pthread_barrier_wait(&release_pbarrier);
		pthread_barrier_wait(&release_pbarrier);
	}
	for (unsigned int t = 1; t < n; t++) {
		pthread_join(waiter[t], NULL);
	}
	const char *names[2][2] = {
		{"barrier release, first waiter, driver", "barrier release, last waiter, driver"},
		{"barrier release, first waiter, pthread",
		 "barrier release, last waiter, pthread"}};

	for (unsigned int k = 0; k < 2; k++) {
		uint32_t best_first = UINT32_MAX, best_last = UINT32_MAX;

		for (unsigned int i = 0; i < REPEAT; i++) {
			uint32_t first = UINT32_MAX, last = 0;

			for (unsigned int t = 1; t < n; t++) {
				uint32_t d = release_exit[k][i][t] - enter[k][i] - stamp_cost;

				first = d < first ? d : first;
				last = d > last ? d : last;
			}
			best_first = first < best_first ? first : best_first;
			best_last = last < best_last ? last : best_last;
		}
		printf("@subutai "
		       "{\"program\":\"costs\",\"tiles\":%u,\"what\":\"%s\",\"min\":%lu}\n",
		       n, names[k][0], (unsigned long)best_first);
		printf("@subutai "
		       "{\"program\":\"costs\",\"tiles\":%u,\"what\":\"%s\",\"min\":%lu}\n",
		       n, names[k][1], (unsigned long)best_last);
	}
}

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
	MEASURE("subutai last_error read", sink = subutai_last_error_read());
	MEASURE("subutai ev_enable write",
		subutai_ev_enable_write(1u << CSR_SUBUTAI_EV_ENABLE_REPLY_OFFSET));
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
#if !SUBUTAI_PORT_SHARED_WINDOW
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
	MEASURE_AFTER(
		"window unlock (posted)",
		{
			subutai_window_issue(SUBUTAI_OP_LOCK, false, local);
			sink = subutai_window_reply();
		},
		subutai_window_issue(SUBUTAI_OP_UNLOCK, false, local));
	{
		bool inv;

		MEASURE("window lock (acquire wait)+unlock, local engine", {
			subutai_window_issue(SUBUTAI_OP_LOCK, false, local);
			sink = subutai_window_reply_acquire(&inv);
			subutai_window_issue(SUBUTAI_OP_UNLOCK, false, local);
		});
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
	MEASURE_AFTER("pthread lock (free, released here)", pthread_mutex_unlock(&m),
		      pthread_mutex_lock(&m));
	pthread_mutex_unlock(&m);
	if (subutai_num_tiles() > 1) {
		release_costs();
	}
	(void)sink;
	return 0;
}
