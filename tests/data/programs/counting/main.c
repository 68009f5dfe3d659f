#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *work(void *arg)
{
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, work, NULL);
	work(NULL);
	pthread_join(t, NULL);
	printf("counted: %d\n", counter);
	return counter == 200 ? 0 : 1;
}
