/*
 * POSIX unnamed semaphores (<semaphore.h>) over the library's mutexes and condition variables
 * (firmware/lib/pthread/semaphore.c): with the subutai backend they synchronize through the
 * engines of the NIs as any pthread object. Classic suites include this header whether or not they
 * use it (SPLASH-3's macros include it in every program). Named semaphores (sem_open) need a
 * file system and are not provided: a program that calls them fails to link, naming them.
 */
#ifndef SUBUTAI_SEMAPHORE_H
#define SUBUTAI_SEMAPHORE_H

#include <limits.h>
#include <pthread.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	int value;          /* under mutex */
	unsigned int magic; /* SUBUTAI_SEM_MAGIC while initialized */
} sem_t;

#define SEM_FAILED ((sem_t *)0)

/* pshared: every thread of the SoC is of the one process, so either value shares among all. */
int sem_init(sem_t *sem, int pshared, unsigned int value);
int sem_destroy(sem_t *sem);
/* A cancellation point; it blocks while the value is 0. */
int sem_wait(sem_t *sem);
int sem_timedwait(sem_t *restrict sem, const struct timespec *restrict abstime);
int sem_clockwait(sem_t *restrict sem, clockid_t clock, const struct timespec *restrict abstime);
int sem_trywait(sem_t *sem);
int sem_post(sem_t *sem);
int sem_getvalue(sem_t *restrict sem, int *restrict sval);

#ifdef __cplusplus
}
#endif

#endif /* SUBUTAI_SEMAPHORE_H */
