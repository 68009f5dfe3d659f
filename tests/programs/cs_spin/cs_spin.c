/*
 * A deadlocked application, for the scheduling tests (tests/test_multi.py): the main thread takes
 * a mutex, starts a thread that waits for that mutex, then spins inside its critical section
 * for a flag only that thread would set once it had the mutex. Neither ever ends. The waiter
 * sleeps; the spinner keeps its core for as long as its scheduler lets it, which under the
 * critical-section-aware policy without its limit is for ever (TPDS'21 section VII-A: "the
 * scheduler deadlocks if the application also deadlocks").
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int released;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	released = 1;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	(void)argc;
	(void)argv;
	pthread_mutex_lock(&lock);
	if (pthread_create(&thread, NULL, waiter, NULL) != 0) {
		printf("cs_spin: pthread_create failed\n");
		return 1;
	}
	while (!released) {
	}
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	printf("cs_spin: released\n");
	return 0;
}
