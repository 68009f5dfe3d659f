/* pthreadtest: cond (see main.c). */
#include "pthreadtest.h"

/* Condition variables: a bounded queue, half the threads produce, the others consume. */

#define QUEUE 4
#define ITEMS 60

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_not_full = PTHREAD_COND_INITIALIZER;
static unsigned int q_items[QUEUE], q_head, q_count, q_produced, q_consumed, q_producers;
static unsigned long q_sum;

static void produce(void)
{
	for (;;) {
		pthread_mutex_lock(&q_lock);
		while (q_count == QUEUE && q_produced < ITEMS) {
			pthread_cond_wait(&q_not_full, &q_lock);
		}
		if (q_produced == ITEMS) {
			pthread_mutex_unlock(&q_lock);
			return;
		}
		q_items[(q_head + q_count) % QUEUE] = ++q_produced;
		q_count++;
		/* Alternate the two ways of waking consumers. */
		if (q_produced % 2) {
			pthread_cond_signal(&q_not_empty);
		} else {
			pthread_cond_broadcast(&q_not_empty);
		}
		pthread_mutex_unlock(&q_lock);
	}
}

static void consume(void)
{
	for (;;) {
		pthread_mutex_lock(&q_lock);
		while (q_count == 0 && q_consumed < ITEMS) {
			pthread_cond_wait(&q_not_empty, &q_lock);
		}
		if (q_consumed == ITEMS) {
			pthread_mutex_unlock(&q_lock);
			return;
		}
		q_sum += q_items[q_head];
		q_head = (q_head + 1) % QUEUE;
		q_count--;
		if (++q_consumed == ITEMS) {
			/* Everyone still waiting must see the end. */
			pthread_cond_broadcast(&q_not_empty);
			pthread_cond_broadcast(&q_not_full);
		} else {
			pthread_cond_signal(&q_not_full);
		}
		pthread_mutex_unlock(&q_lock);
	}
}

static void *queue_worker(void *arg)
{
	if ((uintptr_t)arg < q_producers) {
		produce();
	} else {
		consume();
	}
	return NULL;
}

void test_cond(void)
{
	int before = failures;

	q_producers = n_threads / 2;
	run_all(queue_worker);
	CHECK(q_produced == ITEMS && q_consumed == ITEMS && q_count == 0);
	CHECK(q_sum == (unsigned long)ITEMS * (ITEMS + 1) / 2);
	printf("cond: %u items, sum %lu\n", q_consumed, q_sum);
	report("cond", before);
}

static pthread_cond_t busy_cond;
static pthread_mutex_t busy_mutex;
static unsigned int busy_waiting;

static void *wait_once(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&busy_mutex);
	busy_waiting = 1;
	pthread_cond_wait(&busy_cond, &busy_mutex);
	busy_waiting = 0;
	pthread_mutex_unlock(&busy_mutex);
	return NULL;
}

void test_cond_errors(void)
{
	int before = failures;
	pthread_cond_t c, garbage;
	pthread_mutex_t m;
	pthread_mutexattr_t attr;
	pthread_attr_t attr_elsewhere;

	CHECK(pthread_cond_init(NULL, NULL) == EINVAL);
	memset(&garbage, 0x5a, sizeof(garbage));
	CHECK(pthread_cond_signal(&garbage) == EINVAL);
	CHECK(pthread_cond_init(&c, NULL) == 0);
	CHECK(pthread_cond_signal(&c) == 0); /* nobody waits */
	CHECK(pthread_cond_broadcast(&c) == 0);
	CHECK(pthread_mutexattr_init(&attr) == 0);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
	CHECK(pthread_mutex_init(&m, &attr) == 0);
	/* Waiting without owning an error-checking mutex. */
	CHECK(pthread_cond_wait(&c, &m) == EPERM);
	CHECK(pthread_cond_destroy(&c) == 0);
	CHECK(pthread_cond_destroy(&c) == EINVAL);
	CHECK(pthread_cond_wait(&c, &m) == EINVAL);
	CHECK(pthread_mutex_destroy(&m) == 0);

	/* Destroying a condition somebody waits on. The waiter runs on the last core: the main
	 * thread polls for it, which would keep a thread on its own core from running. */
	pthread_t t;

	CHECK(pthread_cond_init(&busy_cond, NULL) == 0);
	CHECK(pthread_mutex_init(&busy_mutex, NULL) == 0);
	CHECK(pthread_attr_init(&attr_elsewhere) == 0);
	CHECK(pthread_attr_setcore_np(&attr_elsewhere, (int)n_cores - 1) == 0);
	CHECK(pthread_create(&t, &attr_elsewhere, wait_once, NULL) == 0);
	CHECK(pthread_attr_destroy(&attr_elsewhere) == 0);
	for (;;) {
		pthread_mutex_lock(&busy_mutex);
		if (busy_waiting) {
			break;
		}
		pthread_mutex_unlock(&busy_mutex);
	}
	/* The waiter released the mutex by waiting: it is queued. */
	CHECK(pthread_cond_destroy(&busy_cond) == EBUSY);
	CHECK(pthread_cond_signal(&busy_cond) == 0);
	CHECK(pthread_mutex_unlock(&busy_mutex) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(pthread_cond_destroy(&busy_cond) == 0);
	CHECK(pthread_mutex_destroy(&busy_mutex) == 0);
	report("cond errors", before);
}

/* Timed waits: nobody signals, the wait ends after its deadline with the mutex held again. */

void test_timedwait(void)
{
	int before = failures;
	pthread_mutex_t m;
	pthread_mutexattr_t attr;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec deadline, after;

	/* Error-checking: only the owner may unlock it, so the unlock proves the ownership. */
	CHECK(pthread_mutexattr_init(&attr) == 0);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
	CHECK(pthread_mutex_init(&m, &attr) == 0);
	CHECK(clock_gettime(CLOCK_REALTIME, &deadline) == 0);
	deadline.tv_nsec += 2000000; /* 2 ms */
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	CHECK(pthread_mutex_lock(&m) == 0);
	CHECK(pthread_cond_timedwait(&c, &m, &deadline) == ETIMEDOUT);
	CHECK(clock_gettime(CLOCK_REALTIME, &after) == 0);
	CHECK(after.tv_sec > deadline.tv_sec ||
	      (after.tv_sec == deadline.tv_sec && after.tv_nsec >= deadline.tv_nsec));
	CHECK(pthread_mutex_unlock(&m) == 0);
	CHECK(pthread_cond_timedwait(&c, &m, NULL) == EINVAL);
	CHECK(pthread_cond_destroy(&c) == 0);
	CHECK(pthread_mutex_destroy(&m) == 0);
	report("timedwait", before);
}
