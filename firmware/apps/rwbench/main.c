/*
 * rwbench: a read-mostly table behind a read-write lock, one thread per core (make bench-rwlock,
 * scripts/experiments/rwlock.py). Each thread runs OPS operations: a reader takes the read lock and
 * sums the table (every entry must be equal), a writer takes the write lock and increments every
 * entry; between two operations a thread works on its own for WORK iterations. Which operations
 * write comes from a hash of (thread, operation), WRITE_PCT of them in all, the same for both
 * backends. The read-write lock is the library's (pthread.h): the Subutai run's is an engine's
 * (one request per lock, a posted unlock), the SW-only run's a mutex and two conditions in the
 * atomic unit.
 *
 * Prints, per write share, @subutai {"program":"rwbench","backend":...,"tiles":N,"write_pct":W,
 * "ops":...,"writes":...,"cycles":...}: the cycles from the start barrier's release to the last
 * thread's end (the end barrier), on the global cycle counter.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <subutai/soc.h>

#define OPS     64
#define WORK    50
#define ENTRIES 8

static const unsigned int write_pcts[] = {10, 50};

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static uint32_t table[ENTRIES];
static pthread_barrier_t start, end;
static unsigned int n_threads, write_pct;
static volatile unsigned int errors;

static bool writes(unsigned int thread, unsigned int op)
{
	uint32_t h = (thread + 1) * 2654435761u ^ (op + 1) * 2246822519u;

	h ^= h >> 15;
	h *= 2654435761u;
	return (h >> 8) % 100 < write_pct;
}

static void work(void)
{
	for (volatile unsigned int i = 0; i < WORK; i++) {
	}
}

/* The operations of one thread. */
static void run_ops(unsigned int me)
{
	for (unsigned int op = 0; op < OPS; op++) {
		if (writes(me, op)) {
			pthread_rwlock_wrlock(&table_lock);
			for (unsigned int i = 0; i < ENTRIES; i++) {
				table[i]++;
			}
			pthread_rwlock_unlock(&table_lock);
		} else {
			pthread_rwlock_rdlock(&table_lock);
			for (unsigned int i = 1; i < ENTRIES; i++) {
				if (table[i] != table[0]) {
					errors++;
				}
			}
			pthread_rwlock_unlock(&table_lock);
		}
		work();
	}
}

static void *worker(void *arg)
{
	pthread_barrier_wait(&start);
	run_ops((unsigned int)(uintptr_t)arg);
	pthread_barrier_wait(&end);
	return NULL;
}

int main(void)
{
	pthread_t t[64];

	n_threads = subutai_num_tiles();
	for (unsigned int w = 0; w < sizeof(write_pcts) / sizeof(write_pcts[0]); w++) {
		unsigned int expected = 0;

		write_pct = write_pcts[w];
		for (unsigned int i = 0; i < n_threads; i++) {
			for (unsigned int op = 0; op < OPS; op++) {
				expected += writes(i, op);
			}
		}
		uint32_t before = table[0];

		pthread_barrier_init(&start, NULL, n_threads);
		pthread_barrier_init(&end, NULL, n_threads);
		for (unsigned int i = 1; i < n_threads; i++) {
			if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0) {
				printf("rwbench: cannot create thread %u\n", i);
				return 1;
			}
		}
		pthread_barrier_wait(&start);
		uint64_t t0 = subutai_cycles();

		run_ops(0);
		pthread_barrier_wait(&end);
		uint64_t t1 = subutai_cycles();

		for (unsigned int i = 1; i < n_threads; i++) {
			pthread_join(t[i], NULL);
		}
		pthread_barrier_destroy(&start);
		pthread_barrier_destroy(&end);
		pthread_rwlock_rdlock(&table_lock);
		unsigned int writes_seen = table[0] - before;

		pthread_rwlock_unlock(&table_lock);
		printf("@subutai {\"program\":\"rwbench\",\"backend\":\"%s\",\"tiles\":%u,"
		       "\"write_pct\":%u,\"ops\":%u,\"writes\":%u,\"cycles\":%llu}\n",
		       pthread_backend_np, n_threads, write_pct, OPS * n_threads, writes_seen,
		       (unsigned long long)(t1 - t0));
		if (writes_seen != expected || errors != 0) {
			printf("rwbench: %u writes seen of %u, %u torn reads\n", writes_seen,
			       expected, errors);
			return 1;
		}
	}
	return 0;
}
