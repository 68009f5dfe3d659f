/*
 * chantest: what channels (subutai/chan.h) promise besides moving messages, checked on any
 * implementation: clear errors for calls on channels that were never created, not connected
 * here, closed or destroyed, and for bad arguments; a full channel makes try_send say EAGAIN and
 * send wait until the receiver has taken the message (nothing dropped, nothing overwritten); an
 * empty one makes try_recv say EAGAIN; a message longer than the buffer stays in the channel;
 * wait() and wait_send() find the channel that is ready; and the NI refuses the channel port's
 * message types from software. One "@subutai" record per check.
 *
 * Tile 0 is the sender and drives the steps; tile 1 the receiver, which follows the steps
 * through a shared word (invalidating its data cache to see it).
 */
#include <errno.h>
#include <stdio.h>

#include <generated/subutai_chan_window.h>
#include <subutai/chan.h>
#include <subutai/ni.h>
#include <subutai/soc.h>

#define N_WAIT 3

static subutai_chan_t data_ch, never_ch, wait_ch[N_WAIT];
static volatile uint32_t created, step, step_done, recv_order_ok, receiver_saw, fillers;
static volatile uint32_t send_returned_at, recv_started_at;
static unsigned int failures;

static void report(const char *check, int ok, long got)
{
	printf("@subutai {\"program\":\"chantest\",\"impl\":\"%s\",\"check\":\"%s\",\"ok\":%s,"
	       "\"got\":%ld}\n",
	       subutai_chan_impl(), check, ok ? "true" : "false", got);
	failures += !ok;
}

static uint32_t shared(volatile uint32_t *word)
{
	subutai_dcache_invalidate();
	return *word;
}

static void wait_step_done(uint32_t s)
{
	while (shared(&step_done) != s) {
	}
}

static void go(uint32_t s)
{
	step = s;
}

/* The receiver (tile 1). */
void tile_main(unsigned int tile)
{
	uint32_t buf[8];
	size_t len;

	if (tile != 1) {
		return;
	}
	while (!shared(&created)) {
	}
	subutai_chan_connect(&data_ch, SUBUTAI_CHAN_RECEIVER);
	for (unsigned int i = 0; i < N_WAIT; i++) {
		subutai_chan_connect(&wait_ch[i], SUBUTAI_CHAN_SENDER);
	}
	for (uint32_t s = 1;; s++) {
		while (shared(&step) != s) {
		}
		switch (s) {
		case 1: /* Take the messages late: the sender's last send waits meanwhile. */
			for (uint32_t t0 = subutai_cycles32(); subutai_cycles32() - t0 < 20000;) {
			}
			recv_started_at = subutai_cycles32();
			recv_order_ok = 1;
			for (uint32_t i = 0; i <= fillers + 1; i++) {
				uint32_t want = i == 0         ? 0x1111
						: i <= fillers ? 0x5000 + i
							       : 0x2222;

				subutai_chan_recv(&data_ch, buf, sizeof(buf), &len);
				recv_order_ok &= buf[0] == want && len == (i <= fillers ? 4 : 32);
				receiver_saw = buf[0];
			}
			break;
		case 2: /* A 32-byte message into an 8-byte buffer stays; then a whole one takes it.
			 */
			receiver_saw = subutai_chan_recv(&data_ch, buf, 8, &len);
			recv_order_ok = len == 32;
			receiver_saw |= subutai_chan_recv(&data_ch, buf, sizeof(buf), &len) << 8;
			recv_order_ok &= len == 32 && buf[7] == 77;
			break;
		case 3: /* try_recv on an empty channel. */
			receiver_saw = subutai_chan_try_recv(&data_ch, buf, sizeof(buf), &len);
			break;
		case 4: { /* One message on the middle of the waited channels. */
			uint32_t word = 42;

			subutai_chan_send(&wait_ch[1], &word, sizeof(word));
			break;
		}
		case 5: /* Close the receiving end: the sender's calls report it. */
			receiver_saw = subutai_chan_close(&data_ch, SUBUTAI_CHAN_RECEIVER);
			receiver_saw |= subutai_chan_recv(&data_ch, buf, sizeof(buf), &len) << 8;
			break;
		default:
			step_done = s;
			return;
		}
		step_done = s;
	}
}

int main(void)
{
	uint32_t buf[8] = {0}, msg[8] = {1, 2, 3, 4, 5, 6, 7, 77};
	size_t len;
	int err;

	if (subutai_num_tiles() < 2) {
		printf("chantest: needs 2 tiles\n");
		return 1;
	}
	/* Before creation: the memory is zero, not a channel. */
	err = subutai_chan_recv(&never_ch, buf, sizeof(buf), &len);
	report("recv_never_created_ebadf", err == EBADF, err);
	err = subutai_chan_connect(&never_ch, SUBUTAI_CHAN_SENDER);
	report("connect_never_created_ebadf", err == EBADF, err);
	err = subutai_chan_create((subutai_chan_t *)((uintptr_t)&never_ch + 4));
	report("create_misaligned_einval", err == EINVAL, err);
	subutai_chan_create(&never_ch);
	/* Created, never connected here. */
	err = subutai_chan_recv(&never_ch, buf, sizeof(buf), &len);
	report("recv_unconnected_enotconn", err == ENOTCONN, err);
	err = subutai_chan_try_send(&never_ch, msg, 4);
	report("send_unconnected_enotconn", err == ENOTCONN, err);
	err = subutai_chan_connect(&never_ch, (enum subutai_chan_role)7);
	report("connect_bad_role_einval", err == EINVAL, err);

	subutai_chan_create(&data_ch);
	for (unsigned int i = 0; i < N_WAIT; i++) {
		subutai_chan_create(&wait_ch[i]);
	}
	created = 1;
	err = subutai_chan_connect(&data_ch, SUBUTAI_CHAN_SENDER);
	report("connect", err == 0, err);
	err = subutai_chan_connect(&data_ch, SUBUTAI_CHAN_SENDER);
	report("connect_twice_einval", err == EINVAL, err);
	for (unsigned int i = 0; i < N_WAIT; i++) {
		subutai_chan_connect(&wait_ch[i], SUBUTAI_CHAN_RECEIVER);
	}
	err = subutai_chan_try_send(&data_ch, msg, 33);
	report("send_too_long_einval", err == EINVAL, err);
	err = subutai_chan_try_send(&data_ch, msg, 6);
	report("send_not_words_einval", err == EINVAL, err);
	err = subutai_chan_recv(&data_ch, buf, sizeof(buf), &len);
	report("recv_on_sending_end_enotconn", err == ENOTCONN, err);

	/* Step 1: a full channel (one position; the queue's SUBUTAI_CHAN_QUEUE_SLOTS). */
	msg[0] = 0x1111;
	err = subutai_chan_send(&data_ch, msg, 4);
	report("send_first", err == 0, err);
	uint32_t n = 0;

	do {
		msg[0] = 0x5000 + n + 1;
		err = subutai_chan_try_send(&data_ch, msg, 4);
	} while (err == 0 && ++n < 64);
	fillers = n;
	report("try_send_full_eagain",
	       err == EAGAIN &&
		       n + 1 == (subutai_chan_impl()[0] == 'q' ? SUBUTAI_CHAN_QUEUE_SLOTS : 1),
	       n + 1);
	msg[0] = 0x2222;
	go(1);
	err = subutai_chan_send(&data_ch, msg, 32);
	send_returned_at = subutai_cycles32();
	wait_step_done(1);
	report("send_waits_for_the_receiver",
	       err == 0 && (int32_t)(send_returned_at - shared(&recv_started_at)) >= 0,
	       (long)(int32_t)(send_returned_at - recv_started_at));
	report("full_channel_dropped_nothing", shared(&recv_order_ok), receiver_saw);

	/* Step 2: a message longer than the receiver's buffer. */
	subutai_chan_send(&data_ch, msg, 32);
	go(2);
	wait_step_done(2);
	report("recv_too_small_einval_then_whole", shared(&recv_order_ok) && receiver_saw == EINVAL,
	       receiver_saw);

	/* Step 3: try_recv on an empty channel. */
	go(3);
	wait_step_done(3);
	report("try_recv_empty_eagain", shared(&receiver_saw) == EAGAIN, receiver_saw);

	/* Step 4: wait() finds the one channel with a message, wait_send() one with room. */
	unsigned int index = N_WAIT;
	subutai_chan_t *waited[N_WAIT] = {&wait_ch[0], &wait_ch[1], &wait_ch[2]};

	go(4);
	err = subutai_chan_wait(waited, N_WAIT, &index);
	wait_step_done(4);
	report("wait_finds_the_channel", err == 0 && index == 1, index);
	err = subutai_chan_recv(&wait_ch[index], buf, sizeof(buf), &len);
	report("wait_then_recv", err == 0 && buf[0] == 42 && len == 4, buf[0]);
	{
		subutai_chan_t *sending[1] = {&data_ch};

		index = 1;
		err = subutai_chan_wait_send(sending, 1, &index);
		report("wait_send_finds_room", err == 0 && index == 0, index);
		err = subutai_chan_wait_send(waited, N_WAIT, &index);
		report("wait_send_on_receiving_ends_enotconn", err == ENOTCONN, err);
	}

	/* Step 5: the receiver closes its end. */
	go(5);
	wait_step_done(5);
	report("close_then_recv_ebadf", shared(&receiver_saw) == (EBADF << 8), receiver_saw);
	err = subutai_chan_destroy(&data_ch);
	report("destroy_connected_ebusy", err == EBUSY, err);
	subutai_chan_close(&data_ch, SUBUTAI_CHAN_SENDER);
	err = subutai_chan_try_send(&data_ch, msg, 4);
	report("send_after_close_ebadf", err == EBADF, err);
	err = subutai_chan_destroy(&data_ch);
	report("destroy", err == 0, err);
	err = subutai_chan_recv(&data_ch, buf, sizeof(buf), &len);
	report("recv_destroyed_ebadf", err == EBADF, err);
	go(6);
	wait_step_done(6);

	/* The NI keeps the channel port's types for it: the header is refused (sticky flag). */
	ni_tx_error_clear_write(1);
	subutai_ni_send(1, SUBUTAI_NI_NORMAL, SUBUTAI_CHAN_TYPE_VALUE | 5, msg, 0);
	uint32_t tx_error = ni_tx_error_read();

	report("ni_refuses_channel_types",
	       SUBUTAI_FIELD_GET(tx_error, CSR_NI_TX_ERROR_RESERVED_TYPE) == 1, tx_error);
	ni_tx_error_clear_write(1);

	printf("@subutai "
	       "{\"program\":\"chantest\",\"impl\":\"%s\",\"event\":\"done\",\"failures\":%u}\n",
	       subutai_chan_impl(), failures);
	return failures != 0;
}
