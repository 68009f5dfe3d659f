/*
 * A set of applications sharing the cores (TPDS'21, Subutai, section VII): the launcher, the
 * application's main (subutai_app_main) on core 0.
 *
 * Every instance of the set (src/instance.c, linked apart) runs in a main thread of its own,
 * instance k's on core k mod n, and creates its threads as the program says, placed one per core.
 * Under the policies rr, rr-core and csa (Kconfig SUBUTAI_SCHED) the instances start together;
 * under oat one at a time, in order. Instance k is application k + 1 of the scheduler's rotation
 * (its threads run in the slots of that application on every core). Each instance's start and end
 * are cycles of the global counter; the set's makespan runs from just before the first start to the
 * last end. With CONFIG_SUBUTAI_MULTI_DEADLINE_MS the launcher stops waiting then and reports what
 * has not finished (a deadlocked application must not keep the others from finishing).
 *
 * An entry of the set with several runs ("ep:2*3", MULTI_REPEATS) is one application whose
 * instances run one after the other: while the first run of any application goes on, an
 * application whose run ended starts its next, so that every first run is overlapped by the others
 * all along (seed 002, section 5.2: "We run each workload repeatedly in order to fully overlap
 * their executions"); the set ends with the last first run, runs left over are not started and
 * runs still going are cut short (reported unfinished).
 *
 * Output, once every instance has ended (or the deadline passed), one "@subutai" record per
 * instance ("multi_instance") and one for the set ("multi_set", with the schedule requests of
 * Table VII counted while the set ran), with a barrier waiting policy other than the default
 * one a "multi_barrier" record (the policy, and Tidon's donations), then each instance's own
 * output: its harness records with "instance" added, its other lines behind "[k] ".
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <subutai/sched.h>
#include <subutai/soc.h>

#include "multi.h"

#define MULTI_MAX_INSTANCES SUBUTAI_SCHED_APPS_MAX

struct run {
	const struct multi_instance *instance;
	pthread_t thread;
	uint64_t start, end;
	int exit_code;
	bool done;
#ifdef MULTI_REPEATS
	bool launched; /* started (an application's runs after the first may not be) */
	bool followed; /* its application's next run was considered */
#endif
};

static struct run runs[MULTI_MAX_INSTANCES];
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static unsigned int finished; /* under done_lock */

/* The application of instance k: its place in the rotation and its main thread's core. */
#ifdef MULTI_REPEATS
#define APPLICATION(k) multi_application_of[k]
/* Whether instance k was started. */
#define LAUNCHED(k)    (runs[k].launched)

/* Whether instance k is its application's first run (the others only overlap the first runs). */
static bool first_run(unsigned int k)
{
	return k == 0 || APPLICATION(k - 1) != APPLICATION(k);
}
#else
#define APPLICATION(k) (k)
#define LAUNCHED(k)    ((k) < started) /* the instances are started in order */
#endif

static void *run_instance(void *arg)
{
	struct run *run = arg;

	/* Instance k is application k + 1 of the rotation (of its application, with runs), its
	 * threads too. */
	subutai_sched_join_application(APPLICATION(run - runs) + 1);
	run->start = subutai_cycles();
	run->exit_code = run->instance->main();
	run->end = subutai_cycles();
	pthread_mutex_lock(&done_lock);
	run->done = true;
	finished++;
	pthread_cond_signal(&done_cond);
	pthread_mutex_unlock(&done_lock);
	return NULL;
}

static int start(struct run *run, unsigned int k)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setcore_np(&attr, APPLICATION(k) % subutai_num_tiles());
	pthread_attr_setstacksize(&attr, CONFIG_SUBUTAI_MAIN_STACK_SIZE);
	int err = pthread_create(&run->thread, &attr, run_instance, run);

	if (err != 0) {
		printf("multi: cannot start instance %u (%s): error %d\n", k,
		       run->instance->program, err);
	}
	return err;
}

/* Waits until every started instance has finished or the deadline (cycles, 0: none) passed. */
static void wait_finished(unsigned int count, uint64_t deadline)
{
	pthread_mutex_lock(&done_lock);
	while (finished < count) {
		if (deadline == 0) {
			pthread_cond_wait(&done_cond, &done_lock);
			continue;
		}
		struct timespec until = {
			.tv_sec = deadline / CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC,
			.tv_nsec = deadline % CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC *
				   (1000000000ull / CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC),
		};
		if (pthread_cond_timedwait(&done_cond, &done_lock, &until) == ETIMEDOUT) {
			break;
		}
	}
	pthread_mutex_unlock(&done_lock);
}

#ifdef MULTI_REPEATS
/*
 * Waits until the first run of every application has finished or the deadline passed, starting
 * the next run of an application whose run ended meanwhile; *started counts the instances
 * started. Later runs still going then are cut short (the set's end ends them): they only
 * overlapped the first runs.
 */
static void run_overlapped(unsigned int count, uint64_t deadline, unsigned int *started)
{
	pthread_mutex_lock(&done_lock);
	for (;;) {
		bool overlapping = false;

		for (unsigned int k = 0; k < count; k++) {
			overlapping = overlapping || (first_run(k) && !runs[k].done);
		}
		for (unsigned int k = 0; k < count && overlapping; k++) {
			if (!runs[k].done || runs[k].followed) {
				continue;
			}
			runs[k].followed = true;
			if (k + 1 < count && !first_run(k + 1)) {
				runs[k + 1].instance = multi_instances[k + 1];
				pthread_mutex_unlock(&done_lock);
				int err = start(&runs[k + 1], k + 1);

				pthread_mutex_lock(&done_lock);
				runs[k + 1].launched = err == 0;
				*started += err == 0;
			}
		}
		if (!overlapping) {
			break;
		}
		if (deadline == 0) {
			pthread_cond_wait(&done_cond, &done_lock);
			continue;
		}
		struct timespec until = {
			.tv_sec = deadline / CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC,
			.tv_nsec = deadline % CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC *
				   (1000000000ull / CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC),
		};
		if (pthread_cond_timedwait(&done_cond, &done_lock, &until) == ETIMEDOUT) {
			break;
		}
	}
	pthread_mutex_unlock(&done_lock);
}
#endif

static void print_output(unsigned int k, const struct multi_instance *instance)
{
	static const char record[] = "@subutai {";
	const char *text = instance->output;
	const char *end = text + *instance->output_len;

	while (text < end) {
		const char *eol = memchr(text, '\n', end - text);
		int len = (int)((eol ? eol : end) - text);

		if (len >= (int)sizeof(record) - 1 &&
		    memcmp(text, record, sizeof(record) - 1) == 0) {
			printf("@subutai {\"instance\":%u,%.*s\n", k,
			       len - (int)(sizeof(record) - 1), text + sizeof(record) - 1);
		} else {
			printf("[%u] %.*s\n", k, len, text);
		}
		text += len + 1;
	}
}

int main(void)
{
	unsigned int count = multi_instance_count;
	bool oat = IS_ENABLED(CONFIG_SUBUTAI_SCHED_OAT);
	struct subutai_sched_counts before, after;
	unsigned int started = 0;

	if (count > MULTI_MAX_INSTANCES) {
		printf("multi: %u instances, at most %d\n", count, MULTI_MAX_INSTANCES);
		return 2;
	}
#ifdef MULTI_REPEATS
	subutai_sched_set_applications(multi_application_count);
#else
	subutai_sched_set_applications(count);
#endif
	subutai_sched_counts(&before);
	uint64_t set_start = subutai_cycles();
	uint64_t deadline =
		CONFIG_SUBUTAI_MULTI_DEADLINE_MS == 0
			? 0
			: set_start + (uint64_t)CONFIG_SUBUTAI_MULTI_DEADLINE_MS *
					      (CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC / 1000);

#ifdef MULTI_REPEATS
	/* The first run of each application (alone under oat), the others while they overlap. */
	for (unsigned int k = 0; k < count; k++) {
		runs[k].instance = multi_instances[k];
		if (!first_run(k)) {
			continue;
		}
		if (start(&runs[k], k) != 0) {
			break;
		}
		runs[k].launched = true;
		started++;
		if (oat) {
			wait_finished(started, deadline);
			if (!runs[k].done) {
				break;
			}
		}
	}
	if (!oat) {
		run_overlapped(count, deadline, &started);
	}
#else
	for (unsigned int k = 0; k < count; k++) {
		runs[k].instance = multi_instances[k];
		if (start(&runs[k], k) != 0) {
			break;
		}
		started++;
		if (oat) {
			wait_finished(started, deadline);
			if (!runs[k].done) {
				break;
			}
		}
	}
	if (!oat) {
		wait_finished(started, deadline);
	}
#endif
	/* At once, while the cores that ran the set fall idle: what they did not sleep since the
	 * start is the set's work (a few thousand cycles of the launcher's own after the end). */
	subutai_sched_counts(&after);
	uint64_t counted_to = subutai_cycles();
	uint64_t set_end = set_start;
	unsigned int done = 0;

#ifdef MULTI_REPEATS
	for (unsigned int k = 0; k < count; k++) {
#else
	for (unsigned int k = 0; k < started; k++) {
#endif
		if (runs[k].done) {
			pthread_join(runs[k].thread, NULL);
			done++;
			set_end = runs[k].end > set_end ? runs[k].end : set_end;
		}
	}
	uint64_t busy = (uint64_t)subutai_num_tiles() * (counted_to - set_start) -
			(uint32_t)(after.idle - before.idle);

	for (unsigned int k = 0; k < count; k++) {
		const struct run *run = &runs[k];

		printf("@subutai {\"event\":\"multi_instance\",\"instance\":%u,\"program\":\"%s\","
		       "\"threads\":%u,\"started\":%s,\"finished\":%s,\"start\":%lu,\"end\":%lu,"
		       "\"exit\":%d}\n",
		       k, multi_instances[k]->program, multi_instances[k]->threads,
		       LAUNCHED(k) ? "true" : "false", run->done ? "true" : "false",
		       (unsigned long)(LAUNCHED(k) ? run->start - set_start : 0),
		       (unsigned long)(run->done ? run->end - set_start : 0), run->exit_code);
#ifdef MULTI_REPEATS
		/* Its application and run (the records above the set's, read by the reports). */
		printf("@subutai {\"event\":\"multi_run\",\"instance\":%u,\"application\":%u,"
		       "\"first\":%s}\n",
		       k, APPLICATION(k), first_run(k) ? "true" : "false");
#endif
	}
	printf("@subutai "
	       "{\"event\":\"multi_set\",\"policy\":\"%s\",\"ts_us\":%u,\"backend\":\"%s\","
	       "\"tiles\":%u,\"instances\":%u,\"finished\":%u,\"makespan\":%lu,"
	       "\"req_outside_cs\":%lu,\"req_cs_csa\":%lu,\"req_cs_rr\":%lu,\"requests\":%lu,"
	       "\"busy\":%llu,\"start_cycle\":%llu,\"migration\":\"%s\"",
	       subutai_sched_policy(), subutai_sched_timeslot_us(), pthread_backend_np,
	       subutai_num_tiles(), count, done, (unsigned long)(set_end - set_start),
	       (unsigned long)(after.outside_cs - before.outside_cs),
	       (unsigned long)(after.cs_csa - before.cs_csa),
	       (unsigned long)(after.cs_rr - before.cs_rr),
	       (unsigned long)(after.requests - before.requests), (unsigned long long)busy,
	       (unsigned long long)set_start, subutai_sched_migration());
#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
	printf(",\"moved\":%lu,\"steal_misses\":%lu,\"move_latency\":%lu,\"move_work\":%lu",
	       (unsigned long)(after.moved_in - before.moved_in),
	       (unsigned long)(after.steal_misses - before.steal_misses),
	       (unsigned long)(after.move_latency - before.move_latency),
	       (unsigned long)(after.move_work - before.move_work));
#endif
	printf("}\n");
#ifdef CONFIG_SUBUTAI_BARRIER_TRACK
	/* A barrier waiting policy other than the default one (seed 002's comparison), with Tidon's
	 * work over the set. */
	printf("@subutai {\"event\":\"multi_barrier\",\"barrier\":\"%s\"",
	       subutai_barrier_policy());
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	printf(",\"donated_local\":%lu,\"donated_remote\":%lu,\"laggard_messages\":%lu",
	       (unsigned long)(after.donated_local - before.donated_local),
	       (unsigned long)(after.donated_remote - before.donated_remote),
	       (unsigned long)(after.laggard_messages - before.laggard_messages));
#endif
	printf("}\n");
#endif
	subutai_sched_print_slot_log();
	for (unsigned int k = 0; k < count; k++) {
#ifdef MULTI_REPEATS
		if (!runs[k].done) {
			continue; /* cut short, or not started: half an output, or none */
		}
#endif
		print_output(k, multi_instances[k]);
	}
#ifdef MULTI_REPEATS
	/* The runs after an application's first only overlap the first runs, which must end. */
	for (unsigned int k = 0; k < count; k++) {
		if (first_run(k) && !runs[k].done) {
			printf("multi: the first run of instance %u did not finish\n", k);
			exit(3);
		}
	}
#else
	if (done < count) {
		printf("multi: %u of %u instances did not finish\n", count - done, count);
		exit(3);
	}
#endif
	for (unsigned int k = 0; k < count; k++) {
		if (runs[k].exit_code != 0) {
			return 1;
		}
	}
	return 0;
}
