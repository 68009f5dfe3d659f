/*
 * C = A x B of doubles by row blocks, in the style of the classic PThreads suites: options by
 * getopt, input from drand48() seeded by the main thread, workers started through a POSIX
 * semaphore and ended at a barrier built from a mutex and a condition variable, results in blocks
 * each worker allocates, timing with time() and clock().
 *
 *   matmul [-pP] [-nN] [-sSEED] [-t]
 *     -pP  P threads (default: the processors online)   -nN  N x N matrices (default 24)
 *     -t   test: recompute on one thread and compare element by element
 */
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static long P, N = 24, seed = 1;
static int test_result;
static double *A, *B;
static double *rows[MAX_THREADS]; /* each worker's block of C, from its own malloc() */
static sem_t go;
static pthread_mutex_t done_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static long done;

static void *worker(void *arg)
{
	long me = (long)arg;
	long first = me * N / P, last = (me + 1) * N / P;

	if (sem_wait(&go) != 0) {
		perror("sem_wait");
		exit(2);
	}
	double *mine = malloc((size_t)((last - first) * N) * sizeof(double));

	if (mine == NULL && last > first) {
		fprintf(stderr, "worker %ld: out of memory\n", me);
		exit(2);
	}
	for (long i = first; i < last; i++) {
		for (long j = 0; j < N; j++) {
			double sum = 0.0;

			for (long k = 0; k < N; k++) {
				sum += A[i * N + k] * B[k * N + j];
			}
			mine[(i - first) * N + j] = sum;
		}
	}
	rows[me] = mine;
	pthread_mutex_lock(&done_mutex);
	if (++done == P) {
		pthread_cond_broadcast(&done_cv);
	}
	while (done < P) {
		pthread_cond_wait(&done_cv, &done_mutex);
	}
	pthread_mutex_unlock(&done_mutex);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[MAX_THREADS];
	int c;

	P = sysconf(_SC_NPROCESSORS_ONLN);
	while ((c = getopt(argc, argv, "p:n:s:t")) != -1) {
		switch (c) {
		case 'p':
			P = strtol(optarg, NULL, 10);
			break;
		case 'n':
			N = strtol(optarg, NULL, 10);
			break;
		case 's':
			seed = strtol(optarg, NULL, 10);
			break;
		case 't':
			test_result = 1;
			break;
		default:
			fprintf(stderr, "usage: matmul [-pP] [-nN] [-sSEED] [-t]\n");
			return 1;
		}
	}
	if (P < 1 || P > MAX_THREADS || N < 1 || N > 512) {
		fprintf(stderr, "matmul: P must be 1 to %d, N 1 to 512\n", MAX_THREADS);
		return 1;
	}
	time_t started = time(NULL);
	clock_t ticks = clock();

	A = malloc((size_t)(N * N) * sizeof(double));
	B = malloc((size_t)(N * N) * sizeof(double));
	if (A == NULL || B == NULL) {
		fprintf(stderr, "matmul: out of memory\n");
		return 1;
	}
	srand48(seed);
	for (long i = 0; i < N * N; i++) {
		A[i] = drand48() - 0.5;
		B[i] = drand48() - 0.5;
	}
	if (sem_init(&go, 0, 0) != 0) {
		perror("sem_init");
		return 1;
	}
	for (long t = 1; t < P; t++) {
		if (pthread_create(&threads[t], NULL, worker, (void *)t) != 0) {
			fprintf(stderr, "matmul: pthread_create failed\n");
			return 1;
		}
	}
	for (long t = 0; t < P; t++) {
		sem_post(&go);
	}
	worker((void *)0);
	for (long t = 1; t < P; t++) {
		pthread_join(threads[t], NULL);
	}
	int value = -1;

	sem_getvalue(&go, &value);
	sem_destroy(&go);

	double trace = 0.0;

	for (long t = 0; t < P; t++) {
		long first = t * N / P, last = (t + 1) * N / P;

		for (long i = first; i < last; i++) {
			trace += rows[t][(i - first) * N + i];
		}
	}
	printf("matmul: %ld threads, %ldx%ld, trace %.9f, semaphore left at %d\n", P, N, N, trace,
	       value);
	printf("time %lld s, clock %ld ticks\n", (long long)(time(NULL) - started),
	       (long)(clock() - ticks));
	if (test_result) {
		long wrong = 0;

		for (long t = 0; t < P; t++) {
			long first = t * N / P, last = (t + 1) * N / P;

			for (long i = first; i < last; i++) {
				for (long j = 0; j < N; j++) {
					double sum = 0.0;

					for (long k = 0; k < N; k++) {
						sum += A[i * N + k] * B[k * N + j];
					}
					wrong += sum != rows[t][(i - first) * N + j];
				}
			}
		}
		printf("TEST %s (%ld elements differ)\n", wrong ? "FAILED" : "PASSED", wrong);
		return wrong ? 1 : 0;
	}
	return 0;
}
