/*
 * Subutai-HW driver (see subutai/sync.h).
 */
#include <errno.h>
#include <stddef.h>

#include <generated/subutai_status.h>
#include <subutai/atomic.h>
#include <subutai/ni.h>
#include <subutai/sync.h>
#include <subutai_port.h>

#include "atomic_words.h"

/* Hardware reply status -> the C library's errno value. */
SUBUTAI_SYNC_PATH static int status_to_errno(unsigned int status)
{
	switch (status) {
	case SUBUTAI_STATUS_OK:
		return 0;
	case SUBUTAI_STATUS_EPERM:
		return EPERM;
	case SUBUTAI_STATUS_EAGAIN:
		return EAGAIN;
	case SUBUTAI_STATUS_EBUSY:
		return EBUSY;
	case SUBUTAI_STATUS_EINVAL:
		return EINVAL;
	case SUBUTAI_STATUS_EDEADLK:
		return EDEADLK;
	default:
		return EIO;
	}
}

SUBUTAI_SYNC_PATH void subutai_reply_pop(struct subutai_reply *reply)
{
	/* Only the info register pops the reply: read the others first. */
	reply->id = subutai_reply_id_read();
	reply->value = subutai_reply_value_read();
	uint32_t info = subutai_reply_info_read();

	reply->status = SUBUTAI_FIELD_GET(info, CSR_SUBUTAI_REPLY_INFO_STATUS);
	reply->thread = SUBUTAI_FIELD_GET(info, CSR_SUBUTAI_REPLY_INFO_THREAD);
}

/*
 * Writes a request. Returns with the port lock held (its key in *key) when a reply will come, so
 * that the caller waits for it before any handler runs; otherwise released.
 */
static inline bool issue(subutai_id_t id, unsigned int op, uint32_t value, bool want_reply,
			 unsigned int *key)
{
	while (!SUBUTAI_FIELD_GET(subutai_status_read(), CSR_SUBUTAI_STATUS_REQ_READY)) {
	}
	/* The three registers form one request: no handler may issue in between. */
	*key = subutai_port_lock();
	subutai_req_id_write(id);
	subutai_req_value_write(value);
	subutai_req_op_write(SUBUTAI_FIELD_PREP(op, CSR_SUBUTAI_REQ_OP_OP) |
			     SUBUTAI_FIELD_PREP(subutai_port_thread(), CSR_SUBUTAI_REQ_OP_THREAD) |
			     SUBUTAI_FIELD_PREP(want_reply ? 1 : 0, CSR_SUBUTAI_REQ_OP_REPLY));
	if (want_reply || !SUBUTAI_OP_IS_POSTED(op)) {
		return true;
	}
	subutai_port_unlock(*key);
	return false;
}

/* A request; on a reply, its value goes to *result and the id it concerns to *reply_id. */
static inline int request(subutai_id_t id, unsigned int op, uint32_t value, bool want_reply,
			  uint32_t *result, subutai_id_t *reply_id)
{
	struct subutai_reply reply;
	unsigned int key;

	if (!issue(id, op, value, want_reply, &key)) {
		return 0;
	}
	subutai_port_wait_reply(&reply, 0, key);
	if (reply_id) {
		*reply_id = reply.id;
	}
	if (result) {
		*result = reply.value;
	}
	return status_to_errno(reply.status);
}

SUBUTAI_SYNC_PATH int subutai_request(subutai_id_t id, unsigned int op, uint32_t value, bool want_reply,
		    uint32_t *result)
{
	return request(id, op, value, want_reply, result, NULL);
}

unsigned int subutai_next_host(void)
{
	return subutai_atomic_fetch_add(RT_ALLOC_RR, 1) % subutai_num_tiles();
}

static int alloc(unsigned int host, unsigned int op, uint32_t value, subutai_id_t *id)
{
	if (host >= subutai_num_tiles()) {
		return EINVAL;
	}
	return request(SUBUTAI_ALLOC_TARGET(host), op, value, false, id, NULL);
}

int subutai_mutex_alloc(unsigned int host, bool errorcheck, subutai_id_t *id)
{
	return alloc(host, SUBUTAI_OP_ALLOC_MUTEX, errorcheck ? 1 : 0, id);
}

int subutai_barrier_alloc(unsigned int host, unsigned int count, subutai_id_t *id)
{
	return alloc(host, SUBUTAI_OP_ALLOC_BARRIER, count, id);
}

int subutai_cond_alloc(unsigned int host, subutai_id_t *id)
{
	return alloc(host, SUBUTAI_OP_ALLOC_COND, 0, id);
}

int subutai_free(subutai_id_t id)
{
	return request(id, SUBUTAI_OP_FREE, 0, false, NULL, NULL);
}

SUBUTAI_SYNC_PATH static int acquired(int status)
{
	if (status == 0) {
		subutai_dcache_invalidate();
	}
	return status;
}

SUBUTAI_SYNC_PATH int subutai_mutex_lock(subutai_id_t mutex)
{
	return acquired(request(mutex, SUBUTAI_OP_LOCK, 0, false, NULL, NULL));
}

SUBUTAI_SYNC_PATH int subutai_mutex_trylock(subutai_id_t mutex)
{
	return acquired(request(mutex, SUBUTAI_OP_TRYLOCK, 0, false, NULL, NULL));
}

SUBUTAI_SYNC_PATH int subutai_mutex_unlock(subutai_id_t mutex)
{
	/* Error-checking mutexes answer unlocks (EPERM for a non-owner); others are posted. */
	bool checked = SUBUTAI_ID_KIND(mutex) == SUBUTAI_KIND_MUTEX_EC;

	return request(mutex, SUBUTAI_OP_UNLOCK, 0, checked, NULL, NULL);
}

SUBUTAI_SYNC_PATH int subutai_barrier_wait(subutai_id_t barrier)
{
	uint32_t value = 0;
	int status = request(barrier, SUBUTAI_OP_BARRIER_WAIT, 0, false, &value, NULL);

	if (status != 0) {
		return status;
	}
	subutai_dcache_invalidate();
	return value == SUBUTAI_SERIAL_VALUE ? SUBUTAI_BARRIER_SERIAL_THREAD : 0;
}

SUBUTAI_SYNC_PATH int subutai_cond_wait(subutai_id_t cond, subutai_id_t mutex)
{
	subutai_id_t about = 0;
	int status = request(cond, SUBUTAI_OP_COND_WAIT, mutex, false, NULL, &about);

	/* Woken, but the mutex's host had no queue element to requeue us: take the mutex here. */
	if (status == EAGAIN && about == mutex) {
		status = subutai_mutex_lock(mutex);
	}
	return acquired(status);
}

SUBUTAI_SYNC_PATH int subutai_cond_timedwait(subutai_id_t cond, subutai_id_t mutex, uint64_t deadline)
{
	struct subutai_reply reply;
	bool timed_out = false;
	unsigned int key;

	issue(cond, SUBUTAI_OP_COND_WAIT, mutex, false, &key);
	if (!subutai_port_wait_reply(&reply, deadline, key)) {
		/* Wakes every waiter, this one included: it comes back with the mutex. */
		timed_out = true;
		issue(cond, SUBUTAI_OP_COND_BROADCAST, 0, false, &key);
		subutai_port_wait_reply(&reply, 0, subutai_port_lock());
	}
	int status = status_to_errno(reply.status);

	if (status == EAGAIN && reply.id == mutex) {
		status = subutai_mutex_lock(mutex);
	}
	status = acquired(status);
	return status == 0 && timed_out ? ETIMEDOUT : status;
}

SUBUTAI_SYNC_PATH int subutai_cond_signal(subutai_id_t cond)
{
	return request(cond, SUBUTAI_OP_COND_SIGNAL, 0, false, NULL, NULL);
}

SUBUTAI_SYNC_PATH int subutai_cond_broadcast(subutai_id_t cond)
{
	return request(cond, SUBUTAI_OP_COND_BROADCAST, 0, false, NULL, NULL);
}

