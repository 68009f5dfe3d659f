/*
 * synctest: every Subutai-HW primitive across tiles, and its error answers.
 *
 * Core 0 allocates the primitives on different hosts and publishes their ids; all cores then
 * run: a shared counter under a mutex, barrier rounds (with exactly one serial thread each),
 * a producer/consumer through two condition variables, and error cases. Core 0 prints one
 * "@subutai" JSON line per check.
 */
#include <errno.h>
#include <stdio.h>

#include <subutai/sync.h>

#define MUTEX_ITERS    20
#define BARRIER_ROUNDS 6
#define ITEMS          24

struct shared {
	volatile uint32_t ready;
	subutai_id_t mutex, ec_mutex, barrier, not_empty, not_full;
	uint32_t counter;
	uint32_t arrived[BARRIER_ROUNDS][N_TILES];
	uint32_t serial[BARRIER_ROUNDS][N_TILES];
	uint32_t seen_all[BARRIER_ROUNDS][N_TILES];
	/* one-slot buffer guarded by mutex */
	uint32_t slot, slot_full, produced_done;
	uint32_t consumed_sum, consumed_count;
	int32_t err_eperm, err_ebusy_trylock;
};

static struct shared sh;

static void check(const char *name, int ok, long value)
{
	printf("@subutai {\"program\":\"synctest\",\"check\":\"%s\",\"ok\":%d,\"value\":%ld}\n",
	       name, ok ? 1 : 0, value);
}

static void must(int status, const char *what)
{
	if (status != 0 && status != -1) {
		printf("synctest: tile %u: %s failed: %d\n", subutai_tile_id(), what, status);
		subutai_exit(2);
	}
}

static void mutex_phase(void)
{
	for (int i = 0; i < MUTEX_ITERS; i++) {
		must(subutai_mutex_lock(sh.mutex), "lock");
		uint32_t v = sh.counter;

		/* Widen the window for a lost update if mutual exclusion were broken. */
		for (volatile int k = 0; k < 20; k++) {
		}
		sh.counter = v + 1;
		must(subutai_mutex_unlock(sh.mutex), "unlock");
	}
}

static void barrier_phase(unsigned int tile, unsigned int n)
{
	for (int r = 0; r < BARRIER_ROUNDS; r++) {
		sh.arrived[r][tile] = 1;
		int s = subutai_barrier_wait(sh.barrier);

		must(s, "barrier_wait");
		sh.serial[r][tile] = (s == -1);
		uint32_t all = 1;

		for (unsigned int t = 0; t < n; t++) {
			all &= sh.arrived[r][t];
		}
		sh.seen_all[r][tile] = all;
	}
}

static void consumer(void)
{
	for (;;) {
		must(subutai_mutex_lock(sh.mutex), "lock");
		while (!sh.slot_full && !sh.produced_done) {
			must(subutai_cond_wait(sh.not_empty, sh.mutex), "cond_wait");
		}
		if (!sh.slot_full && sh.produced_done) {
			must(subutai_mutex_unlock(sh.mutex), "unlock");
			return;
		}
		sh.consumed_sum += sh.slot;
		sh.consumed_count++;
		sh.slot_full = 0;
		must(subutai_cond_signal(sh.not_full), "signal");
		must(subutai_mutex_unlock(sh.mutex), "unlock");
	}
}

static void producer(void)
{
	for (uint32_t i = 1; i <= ITEMS; i++) {
		must(subutai_mutex_lock(sh.mutex), "lock");
		while (sh.slot_full) {
			must(subutai_cond_wait(sh.not_full, sh.mutex), "cond_wait");
		}
		sh.slot = i;
		sh.slot_full = 1;
		must(subutai_cond_signal(sh.not_empty), "signal");
		must(subutai_mutex_unlock(sh.mutex), "unlock");
	}
	must(subutai_mutex_lock(sh.mutex), "lock");
	while (sh.slot_full) {
		must(subutai_cond_wait(sh.not_full, sh.mutex), "cond_wait");
	}
	sh.produced_done = 1;
	must(subutai_cond_broadcast(sh.not_empty), "broadcast");
	must(subutai_mutex_unlock(sh.mutex), "unlock");
}

static void run(unsigned int tile, unsigned int n)
{
	mutex_phase();
	must(subutai_barrier_wait(sh.barrier), "barrier_wait");
	barrier_phase(tile, n);

	/* Error-checking mutex: tile 0 holds it while the others try to unlock it. */
	if (tile == 0) {
		must(subutai_mutex_lock(sh.ec_mutex), "lock ec");
	}
	must(subutai_barrier_wait(sh.barrier), "barrier_wait");
	if (tile == n - 1 && n > 1) {
		sh.err_eperm = subutai_mutex_unlock(sh.ec_mutex);
		sh.err_ebusy_trylock = subutai_mutex_trylock(sh.ec_mutex);
	}
	must(subutai_barrier_wait(sh.barrier), "barrier_wait");

	/* Producer/consumer needs a consumer: skipped on a single tile. */
	if (n > 1 && tile == 0) {
		producer();
	} else if (n > 1) {
		consumer();
	}
	must(subutai_barrier_wait(sh.barrier), "barrier_wait");
}

void tile_main(unsigned int tile)
{
	while (!sh.ready) {
		subutai_dcache_invalidate();
	}
	subutai_dcache_invalidate();
	run(tile, subutai_num_tiles());
}

int main(void)
{
	unsigned int n = subutai_num_tiles();
	subutai_id_t id;

	/* Primitives spread over the hosts; errors of allocation first. */
	check("alloc_bad_host", subutai_mutex_alloc(n, false, &id) == EINVAL, 0);
	check("alloc_barrier_zero", subutai_barrier_alloc(0, 0, &id) == EINVAL, 0);
	must(subutai_mutex_alloc(1 % n, false, &sh.mutex), "alloc mutex");
	must(subutai_mutex_alloc(0, true, &sh.ec_mutex), "alloc ec mutex");
	must(subutai_barrier_alloc((n - 1) % n, n, &sh.barrier), "alloc barrier");
	must(subutai_cond_alloc(2 % n, &sh.not_empty), "alloc cond");
	must(subutai_cond_alloc(3 % n, &sh.not_full), "alloc cond");
	/* Round-robin hosts: n allocations land on n different tiles. */
	uint32_t hosts = 0;

	for (unsigned int i = 0; i < n; i++) {
		subutai_id_t rr;

		must(subutai_cond_alloc(subutai_next_host(), &rr), "alloc rr");
		hosts |= 1u << SUBUTAI_ID_NI(rr);
		must(subutai_free(rr), "free rr");
	}
	check("round_robin_hosts", hosts == (1u << n) - 1, hosts);
	check("ids_hosted_as_asked",
	      SUBUTAI_ID_NI(sh.mutex) == 1 % n && SUBUTAI_ID_NI(sh.barrier) == (n - 1) % n &&
		      SUBUTAI_ID_NI(sh.not_empty) == 2 % n &&
		      SUBUTAI_ID_KIND(sh.ec_mutex) == SUBUTAI_KIND_MUTEX_EC,
	      (long)sh.mutex);
	sh.ready = 1;

	run(0, n);

	check("mutex_counter", sh.counter == n * MUTEX_ITERS, sh.counter);
	int serial_ok = 1, seen_ok = 1;

	for (int r = 0; r < BARRIER_ROUNDS; r++) {
		uint32_t serials = 0;

		for (unsigned int t = 0; t < n; t++) {
			serials += sh.serial[r][t];
			seen_ok &= sh.seen_all[r][t];
		}
		serial_ok &= serials == 1;
	}
	check("barrier_one_serial_per_round", serial_ok, BARRIER_ROUNDS);
	check("barrier_releases_after_all_arrived", seen_ok, BARRIER_ROUNDS);
	check("cond_items_consumed", n == 1 || sh.consumed_count == ITEMS, sh.consumed_count);
	check("cond_sum", n == 1 || sh.consumed_sum == ITEMS * (ITEMS + 1) / 2, sh.consumed_sum);
	if (n > 1) {
		check("unlock_by_non_owner_eperm", sh.err_eperm == EPERM, sh.err_eperm);
		check("trylock_held_ebusy", sh.err_ebusy_trylock == EBUSY, sh.err_ebusy_trylock);
	}
	int relock = subutai_mutex_lock(sh.ec_mutex);

	check("relock_by_owner_edeadlk", relock == EDEADLK, relock);
	check("free_locked_ebusy", subutai_free(sh.ec_mutex) == EBUSY, 0);
	must(subutai_mutex_unlock(sh.ec_mutex), "unlock ec");
	check("free_ok", subutai_free(sh.ec_mutex) == 0, 0);
	check("lock_freed_einval", subutai_mutex_lock(sh.ec_mutex) == EINVAL, 0);
	check("free_twice_einval", subutai_free(sh.ec_mutex) == EINVAL, 0);
	check("lock_bogus_einval",
	      subutai_mutex_lock(SUBUTAI_ID_F | SUBUTAI_ALLOC_TARGET(n - 1) | 0x3ff) == EINVAL, 0);
	check("barrier_op_on_mutex_einval", subutai_barrier_wait(sh.mutex) == EINVAL, 0);
	must(subutai_free(sh.mutex), "free");
	must(subutai_free(sh.barrier), "free");
	must(subutai_free(sh.not_empty), "free");
	must(subutai_free(sh.not_full), "free");
	printf("synctest done\n");
	return 0;
}
