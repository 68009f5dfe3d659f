/*
 * pi by the midpoint rule, in the style of the classic PThreads suites (SPLASH-2's options and
 * statistics, a barrier built from a mutex and a condition variable, gettimeofday timing):
 *
 *   integrate [-pP] [-nN] [-t] [-s] [-h]
 *     -pP  P threads (default: the processors online)     -nN  N intervals (default 4096)
 *     -t   test: compare with M_PI and report PASSED/FAILED  -s  per-thread statistics
 *
 * Each thread sums its stripe into a block of its own from malloc(), then all meet at the barrier
 * and thread 0 adds the partial sums. A failed test exits with 1 through exit().
 */
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_THREADS 64

struct barrier {
	pthread_mutex_t mutex;
	pthread_cond_t cv;
	unsigned long counter;
	unsigned long cycle;
};

static struct barrier bar;
static long P, N = 4096;
static int test_result, dostats;
static double *partial[MAX_THREADS];
static double pi;
static unsigned long thread_time[MAX_THREADS];
static pthread_mutex_t idlock = PTHREAD_MUTEX_INITIALIZER;
static long next_id;

static unsigned long clock_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (unsigned long)(tv.tv_usec + tv.tv_sec * 1000000);
}

static void barrier_wait(struct barrier *b, long count)
{
	pthread_mutex_lock(&b->mutex);
	unsigned long cycle = b->cycle;

	if (++b->counter != (unsigned long)count) {
		while (cycle == b->cycle) {
			pthread_cond_wait(&b->cv, &b->mutex);
		}
	} else {
		b->cycle = !b->cycle;
		b->counter = 0;
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mutex);
}

static void *slave(void *arg)
{
	(void)arg;
	long me;

	pthread_mutex_lock(&idlock);
	me = next_id++;
	pthread_mutex_unlock(&idlock);

	unsigned long start = clock_us();
	double *mine = malloc(4 * sizeof(double));
	double h = 1.0 / (double)N;

	if (mine == NULL) {
		fprintf(stderr, "thread %ld: out of memory\n", me);
		exit(2);
	}
	mine[0] = 0.0;
	for (long i = me; i < N; i += P) {
		double x = h * ((double)i + 0.5);

		mine[0] += 4.0 / (1.0 + x * x);
	}
	mine[0] *= h;
	partial[me] = mine;
	barrier_wait(&bar, P);
	if (me == 0) {
		pi = 0.0;
		for (long t = 0; t < P; t++) {
			pi += partial[t][0];
		}
	}
	barrier_wait(&bar, P);
	thread_time[me] = clock_us() - start;
	free(mine);
	return NULL;
}

int main(int argc, char **argv)
{
	int c;
	pthread_t threads[MAX_THREADS];

	P = sysconf(_SC_NPROCESSORS_ONLN);
	while ((c = getopt(argc, argv, "p:n:tsh")) != -1) {
		switch (c) {
		case 'p':
			P = atol(optarg);
			if (P < 1 || P > MAX_THREADS) {
				fprintf(stderr, "P must be 1 to %d\n", MAX_THREADS);
				exit(-1);
			}
			break;
		case 'n':
			N = atol(optarg);
			if (N < 1) {
				fprintf(stderr, "N must be >= 1\n");
				exit(-1);
			}
			break;
		case 't':
			test_result = !test_result;
			break;
		case 's':
			dostats = !dostats;
			break;
		case 'h':
		default:
			printf("usage: integrate [-pP] [-nN] [-t] [-s]\n");
			exit(c == 'h' ? 0 : -1);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "integrate: unexpected argument '%s'\n", argv[optind]);
		exit(-1);
	}

	unsigned long start = clock_us();

	pthread_mutex_init(&bar.mutex, NULL);
	pthread_cond_init(&bar.cv, NULL);
	for (long i = 0; i < P - 1; i++) {
		if (pthread_create(&threads[i], NULL, slave, NULL) != 0) {
			printf("Error in pthread_create().\n");
			exit(-1);
		}
	}
	slave(NULL);
	for (long i = 0; i < P - 1; i++) {
		pthread_join(threads[i], NULL);
	}
	unsigned long finish = clock_us();

	printf("integrate: %ld threads, %ld intervals\n", P, N);
	printf("pi = %.12f\n", pi);
	if (dostats) {
		for (long i = 0; i < P; i++) {
			printf("  thread %ld: %lu us\n", i, thread_time[i]);
		}
	}
	printf("Total time: %lu us\n", finish - start);
	if (test_result) {
		/* The midpoint rule's error is below 1/(12 N^2) of the integrand's second derivative's
		 * bound (8): 1e-6 holds for N >= 4096, rounding included. */
		double err = fabs(pi - M_PI);

		printf("TEST %s (error %.3e)\n", err < 1e-6 ? "PASSED" : "FAILED", err);
		if (err >= 1e-6) {
			exit(1);
		}
	}
	exit(0);
}
