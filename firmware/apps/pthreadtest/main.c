/*
 * PThreads test: every primitive and error path of pthread.h, on every core of the SoC, checked
 * against what must happen. One source for both runtimes: bare metal (one thread per core) and
 * Zephyr (zephyr-app/apps/pthreadtest builds these files, several threads per core). One file per
 * group of primitives (pthreadtest.h); this one runs them.
 *
 *   pthreadtest [threads-per-core]   (default 1; the Zephyr application passes 3)
 *
 * Plain PThreads C with the library's placement extensions (pthread_attr_setcore_np,
 * pthread_core_np) and its backend query (pthread_*_impl_np). Prints one line per check group,
 * "<group>: ok" or "<group>: FAILED" after the failed checks, then "pthreadtest: <n> failures",
 * and returns 0 only if every check passed. Nothing printed depends on the backend: the tests
 * compare the subutai and swonly runs line by line.
 */
#include "pthreadtest.h"

unsigned int n_cores, n_threads;
int failures;

void report(const char *group, int before)
{
	printf("%s: %s\n", group, failures == before ? "ok" : "FAILED");
}

int join_all(const pthread_t *t, unsigned int n)
{
	int fails = 0;

	for (unsigned int i = 0; i < n; i++) {
		void *ret = (void *)-1;

		CHECK(pthread_join(t[i], &ret) == 0);
		fails += (int)(intptr_t)ret;
	}
	return fails;
}

void run_all(void *(*fn)(void *))
{
	pthread_t t[MAX_THREADS];
	unsigned int created = 1;

	for (; created < n_threads; created++) {
		if (pthread_create(&t[created], NULL, fn, (void *)(uintptr_t)created) != 0) {
			CHECK(!"pthread_create");
			break;
		}
	}
	failures += (int)(intptr_t)fn((void *)0);
	failures += join_all(&t[1], created - 1);
}

/* A gate: threads wait at it until the main thread opens it. Each opening has a number. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_opened = PTHREAD_COND_INITIALIZER;
static unsigned int gate_number;

void *wait_at_gate(void *arg)
{
	unsigned int number = (unsigned int)(uintptr_t)arg;

	pthread_mutex_lock(&gate_lock);
	while (gate_number < number) {
		pthread_cond_wait(&gate_opened, &gate_lock);
	}
	pthread_mutex_unlock(&gate_lock);
	return NULL;
}

void *next_gate(void)
{
	return (void *)(uintptr_t)(gate_number + 1);
}

void open_gate(void)
{
	pthread_mutex_lock(&gate_lock);
	gate_number++;
	pthread_cond_broadcast(&gate_opened);
	pthread_mutex_unlock(&gate_lock);
}

/* The number of cores: one more than the last the placement extension accepts (bare metal, core
 * 0 hosts only the main thread and is refused). */
static unsigned int count_cores(void)
{
	pthread_attr_t attr;
	unsigned int cores = 0;

	pthread_attr_init(&attr);
	for (unsigned int core = 0; core < MAX_THREADS; core++) {
		if (pthread_attr_setcore_np(&attr, (int)core) == 0) {
			cores = core + 1;
		}
	}
	pthread_attr_destroy(&attr);
	return cores;
}

int main(int argc, char **argv)
{
	unsigned int per_core = argc > 1 ? (unsigned int)atoi(argv[1]) : 1;

	n_cores = count_cores();
	n_threads = n_cores * per_core;
	if (n_cores < 2 || per_core < 1 || n_threads > MAX_THREADS) {
		printf("pthreadtest: %u cores, %u threads per core: needs 2 cores or more and "
		       "1 to %d threads\n",
		       n_cores, per_core, MAX_THREADS);
		return 2;
	}
	printf("pthreadtest: %u cores, %u threads\n", n_cores, n_threads);
	test_threads();
	test_thread_errors();
	test_placement(per_core);
	test_mutex();
	test_mutex_types();
	test_mutex_errors();
	test_barrier();
	test_cond();
	test_cond_errors();
	test_timedwait();
	test_timedlock();
	test_clocks_sleep();
	test_cancel();
	test_once_keys();
	test_fallback();
	test_visibility();
	test_headers();
	test_rwlock_spin();
	printf("pthreadtest: %d failures\n", failures);
	return failures ? 1 : 0;
}
