/*
 * farm: seed 004's farm benchmark (§7.2, Fig. 14) over channels (subutai/chan.h).
 *
 * An emitter (the main thread) streams tasks to W workers, on demand: each task goes to a
 * worker whose channel has room (subutai_chan_wait_send()), as a two-word message (the task's
 * number and a pointer to its M x M matrix, pointer passing). A worker convolves the matrix with
 * a 3 x 3 kernel (a difference method's stencil, as seed 004's workers) into its own output
 * matrix, hashes the result and sends (task, hash) to the collector, which takes results from
 * every worker as they come (subutai_chan_wait()). The matrices are a pool generated before the
 * stream (task t uses matrix t % FARM_POOL), so the emitter's work per task is its message, as
 * in a stream received from the network; elements are int32 or float (-d int|float: the cores
 * have no FPU, float is emulated as on the TILEPro64, a coarser grain for the same data).
 *
 * Usage: farm -t THREADS [-i INPUT] [-s SEED] [-m M] [-d int|float] [-n TASKS]
 *   THREADS 1 runs the tasks sequentially in the main thread (the reference of the speed-up);
 *   THREADS >= 3 is an emitter, a collector and THREADS - 2 workers.
 *
 * Output: the checksum (FNV-1a of the results in task order: the same for every thread count and
 * channel implementation), and a record with the stream's service time (seed 004 measures the
 * speed-up as the sequential time per task over it): the time from the W-th result to the last,
 * divided by the TASKS - W results in between (the pipeline full), in nanoseconds of
 * clock_gettime(); sequentially, the time per task.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

#ifdef ENABLE_PARSEC_HOOKS
#include <hooks.h>
#endif

#if defined(__riscv)
#include <subutai/chan.h>
#include <subutai/soc.h>
#else
#include "chan_host.h"
#endif

#define FARM_POOL        8
#define FARM_MAX_WORKERS 14 /* a 16-tile mesh: the emitter and the collector besides */
#define FARM_STOP        0xffffffffu

enum farm_type {
	FARM_INT,
	FARM_FLOAT
};

struct farm {
	unsigned int m, tasks, workers;
	enum farm_type type;
	void *pool[FARM_POOL];
	subutai_chan_t *to_worker[FARM_MAX_WORKERS];
	subutai_chan_t *to_collector[FARM_MAX_WORKERS];
	uint32_t *hashes;
	uint64_t *done_ns;
	pthread_barrier_t connected;
};

static struct farm g;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* The 3 x 3 stencil 1 2 1 / 2 4 2 / 1 2 1, over 16; the border is copied. */
static void convolve_int(const int32_t *in, int32_t *out, unsigned int m)
{
	memcpy(out, in, m * sizeof(*in));
	memcpy(out + (m - 1) * m, in + (m - 1) * m, m * sizeof(*in));
	for (unsigned int i = 1; i + 1 < m; i++) {
		const int32_t *up = in + (i - 1) * m, *row = in + i * m, *down = in + (i + 1) * m;

		out[i * m] = row[0];
		for (unsigned int j = 1; j + 1 < m; j++) {
			int32_t s = up[j - 1] + 2 * up[j] + up[j + 1] + 2 * row[j - 1] +
				    4 * row[j] + 2 * row[j + 1] + down[j - 1] + 2 * down[j] +
				    down[j + 1];

			out[i * m + j] = s / 16;
		}
		out[i * m + m - 1] = row[m - 1];
	}
}

static void convolve_float(const float *in, float *out, unsigned int m)
{
	memcpy(out, in, m * sizeof(*in));
	memcpy(out + (m - 1) * m, in + (m - 1) * m, m * sizeof(*in));
	for (unsigned int i = 1; i + 1 < m; i++) {
		const float *up = in + (i - 1) * m, *row = in + i * m, *down = in + (i + 1) * m;

		out[i * m] = row[0];
		for (unsigned int j = 1; j + 1 < m; j++) {
			/* One operation at a time, in this order: the same IEEE results everywhere.
			 */
			float s = up[j - 1];

			s += 2.0f * up[j];
			s += up[j + 1];
			s += 2.0f * row[j - 1];
			s += 4.0f * row[j];
			s += 2.0f * row[j + 1];
			s += down[j - 1];
			s += 2.0f * down[j];
			s += down[j + 1];
			out[i * m + j] = s * 0.0625f;
		}
		out[i * m + m - 1] = row[m - 1];
	}
}

/* One task: the result's hash (its words' bit patterns). */
static uint32_t run_task(uint32_t task, void *out)
{
	const void *in = g.pool[task % FARM_POOL];

	if (g.type == FARM_INT) {
		convolve_int(in, out, g.m);
	} else {
		convolve_float(in, out, g.m);
	}
	return wl_fnv1a(WL_FNV_INIT, out, (size_t)g.m * g.m * 4);
}

struct worker_arg {
	unsigned int index;
	void *out;
};

static void *worker(void *p)
{
	struct worker_arg *arg = p;
	subutai_chan_t *in = g.to_worker[arg->index], *out = g.to_collector[arg->index];

	WL_CHECK(subutai_chan_connect(in, SUBUTAI_CHAN_RECEIVER));
	WL_CHECK(subutai_chan_connect(out, SUBUTAI_CHAN_SENDER));
	pthread_barrier_wait(&g.connected);
	for (;;) {
		uint32_t task[2];
		size_t len;

		WL_CHECK(subutai_chan_recv(in, task, sizeof(task), &len));
		if (task[0] == FARM_STOP) {
			break;
		}
#if defined(__riscv)
		/* The pool was written before the stream: the coherence rule's acquire, once per
		 * task, as a pointer received by subutai_chan_recv_ptr() gets. */
		subutai_dcache_invalidate();
#endif
		uint32_t result[2] = {task[0], run_task(task[0], arg->out)};

		WL_CHECK(subutai_chan_send(out, result, sizeof(result)));
	}
	WL_CHECK(subutai_chan_close(in, SUBUTAI_CHAN_RECEIVER));
	WL_CHECK(subutai_chan_close(out, SUBUTAI_CHAN_SENDER));
	return NULL;
}

static void *collector(void *unused)
{
	unsigned int index = g.workers;

	(void)unused;
	for (unsigned int w = 0; w < g.workers; w++) {
		WL_CHECK(subutai_chan_connect(g.to_collector[w], SUBUTAI_CHAN_RECEIVER));
	}
	pthread_barrier_wait(&g.connected);
	for (unsigned int i = 0; i < g.tasks; i++) {
		uint32_t result[2];
		size_t len;

		WL_CHECK(subutai_chan_wait(g.to_collector, g.workers, &index));
		WL_CHECK(subutai_chan_recv(g.to_collector[index], result, sizeof(result), &len));
		g.done_ns[i] = now_ns();
		if (len != sizeof(result) || result[0] >= g.tasks) {
			printf("farm: a wrong result from worker %u\n", index);
			exit(1);
		}
		g.hashes[result[0]] = result[1];
	}
	for (unsigned int w = 0; w < g.workers; w++) {
		WL_CHECK(subutai_chan_close(g.to_collector[w], SUBUTAI_CHAN_RECEIVER));
	}
	return NULL;
}

/* "-m M", "-d TYPE" and "-n TASKS" are the farm's; the rest goes to wl_parse_options(). */
static int parse(int argc, char **argv, struct wl_options *opt)
{
	char *rest[16];
	int n = 0;

	g.m = 32;
	g.type = FARM_INT;
	g.tasks = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (i > 0 && i + 1 < argc &&
		    (!strcmp(a, "-m") || !strcmp(a, "-d") || !strcmp(a, "-n"))) {
			const char *v = argv[++i];

			if (!strcmp(a, "-d")) {
				if (!strcmp(v, "int") || !strcmp(v, "float")) {
					g.type = !strcmp(v, "int") ? FARM_INT : FARM_FLOAT;
					continue;
				}
				printf("farm: -d %s: int or float\n", v);
				return -1;
			}
			char *end;
			unsigned long x = strtoul(v, &end, 10);

			if (*end != '\0' || (!strcmp(a, "-m") && (x < 3 || x > 256)) ||
			    (!strcmp(a, "-n") && (x < 1 || x > 100000))) {
				printf("farm: %s %s: %s\n", a, v,
				       !strcmp(a, "-m") ? "M from 3 to 256" : "1 to 100000 tasks");
				return -1;
			}
			*(!strcmp(a, "-m") ? &g.m : &g.tasks) = x;
		} else if (n < (int)(sizeof(rest) / sizeof(rest[0]))) {
			rest[n++] = argv[i];
		}
	}
	if (wl_parse_options(n, rest, opt) != 0) {
		return -1;
	}
	if (opt->threads == 2 || opt->threads > FARM_MAX_WORKERS + 2) {
		printf("farm: -t %u: 1 (sequential) or 3 to %u (an emitter, a collector, "
		       "workers)\n",
		       opt->threads, (unsigned int)FARM_MAX_WORKERS + 2);
		return -1;
	}
	if (g.tasks == 0) {
		static const unsigned int per_input[WL_N_INPUTS] = {16, 64, 256};

		g.tasks = per_input[opt->input];
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct wl_options opt;
	pthread_t threads[FARM_MAX_WORKERS + 1];
	static struct worker_arg args[FARM_MAX_WORKERS];

	if (parse(argc, argv, &opt) != 0) {
		return 1;
	}
	g.workers = opt.threads >= 3 ? opt.threads - 2 : 0;
	size_t bytes = (size_t)g.m * g.m * 4;
	struct wl_rng rng;

	wl_rng_seed(&rng, opt.seed, 0);
	for (unsigned int p = 0; p < FARM_POOL; p++) {
		g.pool[p] = malloc(bytes);
		WL_CHECK(g.pool[p] == NULL ? ENOMEM : 0);
		for (size_t e = 0; e < (size_t)g.m * g.m; e++) {
			uint32_t r = wl_rng_next(&rng);

			if (g.type == FARM_INT) {
				((int32_t *)g.pool[p])[e] = (int32_t)(r & 0xffff) - 0x8000;
			} else {
				((float *)g.pool[p])[e] =
					(float)((int32_t)(r & 0xffff) - 0x8000) / 256.0f;
			}
		}
	}
	g.hashes = calloc(g.tasks, sizeof(*g.hashes));
	g.done_ns = calloc(g.tasks, sizeof(*g.done_ns));
	WL_CHECK(g.hashes == NULL || g.done_ns == NULL ? ENOMEM : 0);

	uint64_t start, end;
	unsigned int window = 0;

	if (g.workers == 0) {
		void *out = malloc(bytes);

		WL_CHECK(out == NULL ? ENOMEM : 0);
#ifdef ENABLE_PARSEC_HOOKS
		__parsec_roi_begin();
#endif
		start = now_ns();
		for (uint32_t t = 0; t < g.tasks; t++) {
			g.hashes[t] = run_task(t, out);
			g.done_ns[t] = now_ns();
		}
		end = now_ns();
#ifdef ENABLE_PARSEC_HOOKS
		__parsec_roi_end();
#endif
		free(out);
	} else {
		WL_CHECK(pthread_barrier_init(&g.connected, NULL, g.workers + 2));
		for (unsigned int w = 0; w < g.workers; w++) {
			/* Channels are SUBUTAI_CHAN_LINE-aligned: aligned_alloc, not malloc. */
			g.to_worker[w] = aligned_alloc(64, (sizeof(subutai_chan_t) + 63) & ~63u);
			g.to_collector[w] = aligned_alloc(64, (sizeof(subutai_chan_t) + 63) & ~63u);
			WL_CHECK(g.to_worker[w] == NULL || g.to_collector[w] == NULL ? ENOMEM : 0);
			WL_CHECK(subutai_chan_create(g.to_worker[w]));
			WL_CHECK(subutai_chan_create(g.to_collector[w]));
		}
		WL_CHECK(pthread_create(&threads[0], NULL, collector, NULL));
		for (unsigned int w = 0; w < g.workers; w++) {
			args[w].index = w;
			args[w].out = malloc(bytes);
			WL_CHECK(args[w].out == NULL ? ENOMEM : 0);
			WL_CHECK(pthread_create(&threads[1 + w], NULL, worker, &args[w]));
		}
		for (unsigned int w = 0; w < g.workers; w++) {
			WL_CHECK(subutai_chan_connect(g.to_worker[w], SUBUTAI_CHAN_SENDER));
		}
		pthread_barrier_wait(&g.connected);
#ifdef ENABLE_PARSEC_HOOKS
		__parsec_roi_begin();
#endif
		start = now_ns();
		unsigned int index = g.workers;

		for (uint32_t t = 0; t < g.tasks; t++) {
			uint32_t task[2] = {t, (uint32_t)(uintptr_t)g.pool[t % FARM_POOL]};

			WL_CHECK(subutai_chan_wait_send(g.to_worker, g.workers, &index));
			WL_CHECK(subutai_chan_send(g.to_worker[index], task, sizeof(task)));
		}
		for (unsigned int w = 0; w < g.workers; w++) {
			uint32_t stop[2] = {FARM_STOP, 0};

			WL_CHECK(subutai_chan_send(g.to_worker[w], stop, sizeof(stop)));
		}
		for (unsigned int i = 0; i <= g.workers; i++) {
			WL_CHECK(pthread_join(threads[i], NULL));
		}
		end = now_ns();
#ifdef ENABLE_PARSEC_HOOKS
		__parsec_roi_end();
#endif
		window = g.workers;
		for (unsigned int w = 0; w < g.workers; w++) {
			WL_CHECK(subutai_chan_close(g.to_worker[w], SUBUTAI_CHAN_SENDER));
			free(args[w].out);
		}
	}
	/* Service time: from the W-th result (every worker has had a task: the pipeline is full)
	 * to the last, per task in between; over the whole stream when it is not longer. */
	uint64_t service =
		window >= 1 && window < g.tasks
			? (g.done_ns[g.tasks - 1] - g.done_ns[window - 1]) / (g.tasks - window)
			: (end - start) / g.tasks;
	uint32_t checksum = WL_FNV_INIT;

	for (unsigned int t = 0; t < g.tasks; t++) {
		checksum = wl_fnv1a_u32(checksum, g.hashes[t]);
	}
	printf("@subutai {\"program\":\"farm\",\"impl\":\"%s\",\"m\":%u,\"type\":\"%s\","
	       "\"workers\":%u,\"tasks\":%u,\"stream_ns\":%llu,\"service_ns\":%llu}\n",
	       subutai_chan_impl(), g.m, g.type == FARM_INT ? "int" : "float", g.workers, g.tasks,
	       (unsigned long long)(end - start), (unsigned long long)service);
	wl_print_checksum("farm", checksum);
	return 0;
}
