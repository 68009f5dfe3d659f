/*
 * subutai/chan.h on a host: the same channel API over glibc's pthreads (a mutex and a condition
 * per channel), so that programs using channels build on the host and give the reference
 * results the simulated runs are checked against. Only what those programs need of the API, with
 * its semantics (a one-position buffer, messages of whole words up to SUBUTAI_CHAN_MAX_BYTES).
 */
#ifndef CHAN_HOST_H
#define CHAN_HOST_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SUBUTAI_CHAN_MAX_BYTES 32

enum subutai_chan_role {
	SUBUTAI_CHAN_SENDER = 0,
	SUBUTAI_CHAN_RECEIVER = 1
};

typedef struct subutai_chan {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool full;
	size_t len;
	uint32_t data[SUBUTAI_CHAN_MAX_BYTES / 4];
} subutai_chan_t;

static inline const char *subutai_chan_impl(void)
{
	return "host";
}

static inline int subutai_chan_create(subutai_chan_t *ch)
{
	memset(ch, 0, sizeof(*ch));
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->changed, NULL);
	return 0;
}

static inline int subutai_chan_connect(subutai_chan_t *ch, enum subutai_chan_role role)
{
	(void)ch, (void)role;
	return 0;
}

static inline int subutai_chan_close(subutai_chan_t *ch, enum subutai_chan_role role)
{
	(void)ch, (void)role;
	return 0;
}

static inline int subutai_chan_send(subutai_chan_t *ch, const void *msg, size_t len)
{
	if (len > SUBUTAI_CHAN_MAX_BYTES || len % 4 != 0) {
		return EINVAL;
	}
	pthread_mutex_lock(&ch->lock);
	while (ch->full) {
		pthread_cond_wait(&ch->changed, &ch->lock);
	}
	memcpy(ch->data, msg, len);
	ch->len = len;
	ch->full = true;
	pthread_cond_broadcast(&ch->changed);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

static inline int subutai_chan_recv(subutai_chan_t *ch, void *buf, size_t cap, size_t *len)
{
	pthread_mutex_lock(&ch->lock);
	while (!ch->full) {
		pthread_cond_wait(&ch->changed, &ch->lock);
	}
	if (ch->len > cap) {
		pthread_mutex_unlock(&ch->lock);
		return EINVAL;
	}
	memcpy(buf, ch->data, ch->len);
	if (len != NULL) {
		*len = ch->len;
	}
	ch->full = false;
	pthread_cond_broadcast(&ch->changed);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

static inline bool chan_host_is(subutai_chan_t *ch, bool full)
{
	pthread_mutex_lock(&ch->lock);
	bool is = ch->full == full;
	pthread_mutex_unlock(&ch->lock);
	return is;
}

static inline unsigned int chan_host_wait(subutai_chan_t *const *chans, unsigned int n,
					  unsigned int *index, bool full)
{
	for (;;) {
		for (unsigned int k = 1; k <= n; k++) {
			unsigned int i = (*index + k) % n;

			if (chan_host_is(chans[i], full)) {
				*index = i;
				return 0;
			}
		}
		sched_yield();
	}
}

static inline int subutai_chan_wait(subutai_chan_t *const *chans, unsigned int n,
				    unsigned int *index)
{
	return chan_host_wait(chans, n, index, true);
}

static inline int subutai_chan_wait_send(subutai_chan_t *const *chans, unsigned int n,
					 unsigned int *index)
{
	return chan_host_wait(chans, n, index, false);
}

#endif /* CHAN_HOST_H */
