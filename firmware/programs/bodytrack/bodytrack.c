/*
 * bodytrack: a scaled-down PARSEC bodytrack, an annealed particle filter that tracks the pose of
 * an articulated body through a sequence of frames.
 *
 * The model is a 2-D stick figure of 8 limbs (torso, head, two upper arms, two forearms, two
 * thighs) described by a pose of 10 integers: the hip position (Q8 pixels) and 8 joint angles
 * (1/4096 of a turn, relative to the parent limb). The input is a sequence of 64x48 edge maps,
 * one per frame (PARSEC's camera images, already filtered): the true pose of each frame rendered
 * as edges, plus clutter. For each frame, for each annealing layer, the particles are
 *   PROPAGATE  perturbed with a noise that shrinks from layer to layer;
 *   WEIGHTS    weighed: the 24 model points of the pose are projected onto the edge map
 *              (fixed-point forward kinematics) and the missing edge strength is turned into a
 *              weight by an exponential table whose slope grows from layer to layer;
 * and the master does the serial part: it normalizes the weights by their total, at the last
 * layer it estimates the pose of the frame (weighted mean), and it resamples the particles
 * (systematic resampling, one sequential random generator). All of it is integer arithmetic; a
 * particle's noise comes from wl_hash32() of its frame, layer and index, so the result does not
 * depend on which thread handles which particle. The checksum covers the per-layer statistics, the
 * estimated pose of every frame and the final particle set.
 *
 * Synchronization (3 mutexes, 1 condition, 4 barriers, as the paper's Table V counts for
 * bodytrack), mirroring PARSEC's WorkerGroup thread pool and TicketDispenser:
 *   cmd_mutex + cmd_cond  (WorkerGroup's workDispatch / workAvailable): the master posts a
 *       command (PROPAGATE, WEIGHTS, EXIT) under cmd_mutex and broadcasts cmd_cond; a worker
 *       that finds no command (cmd == CMD_IDLE) waits on the condition in a while loop.
 *   ticket_mutex (TicketDispenser): hands out chunks of particles, so threads balance the load.
 *   stats_mutex: guards the statistics all threads accumulate (total weight, error sum, best
 *       error, clamped particles), added once per command by each thread that had a ticket.
 *   propagate_done / weights_done: the end of each command (WorkerGroup's workDoneBarrier, one
 *       per command type); the serial thread of that barrier acknowledges the command by
 *       resetting it to CMD_IDLE under cmd_mutex;
 *   ack_barrier (WorkerGroup's poolReadyBarrier): no thread goes back to wait for a command
 *       before the reset, and the master knows the pool is ready for the next command;
 *   exit_barrier: every thread has seen the EXIT command before the master joins them.
 * Unlike PARSEC, the master thread also works (the target runs one thread per core): after
 * posting a command it takes tickets like the workers. PARSEC's asynchronous image-loading
 * thread is left out: the images are generated before the region of interest.
 *
 * Per layer: 2 commands, each 1 condition broadcast (waits by the workers that found no command),
 * T + n/chunk ticket locks, up to T statistics locks, T + 1 command-mutex locks and 2 barriers.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

#ifdef ENABLE_PARSEC_HOOKS
#include <hooks.h>
#endif

#define IMG_W 64
#define IMG_H 48

#define LIMB_STEPS 3  /* model points per limb, the last one at its end; 8 limbs */
#define DIM        10 /* pose: hip x, hip y (Q8 pixels), 8 joint angles; even */
#define EDGE_MAX   255

/* Angles: 4096 units a turn; the sine table has 256 entries (Q12). */
#define ANGLE_TURN  4096
#define SIN_ENTRIES 256
#define SIN_SHIFT   4 /* angle >> SIN_SHIFT indexes the table */
#define Q12_ONE     4096

/*
 * The model walk is inlined into its two callers, so that the likelihood kernel is specialized
 * (no rendering tests) and keeps everything in registers.
 */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Weight of a particle: wtab[(error * beta) >> 12], decreasing like 0.96^k. */
#define WTAB_SIZE 256

#define N_CLUTTER 16 /* spurious edges added to each frame */

struct input_params {
	unsigned int particles;
	unsigned int frames;
	unsigned int layers; /* annealing layers per frame */
	unsigned int chunk;  /* particles per ticket */
};

static const struct input_params input_params[WL_N_INPUTS] = {
	[WL_INPUT_TEST] = {16, 2, 2, 4},
	[WL_INPUT_SIMSMALL] = {64, 4, 4, 8},
	[WL_INPUT_SIMMEDIUM] = {128, 5, 4, 8},
};

/* Limb lengths in steps of the model walk: length / LIMB_STEPS, Q8 pixels. */
#define LIMB_STEP(pixels) (((pixels)*256 + LIMB_STEPS / 2) / LIMB_STEPS)
#define TORSO             LIMB_STEP(14)
#define HEAD              LIMB_STEP(5)
#define UPPERARM          LIMB_STEP(9)
#define FOREARM           LIMB_STEP(8)
#define THIGH             LIMB_STEP(11)

/* Pose of the first frame, and amplitude / speed of the motion the true pose follows. */
static const int32_t base_pose[DIM] = {
	30 << 8, 28 << 8, 0, 0, 2048 + 500, -300, 2048 - 500, 300, 2048 - 250, 2048 + 250,
};
static const int32_t motion_amp[DIM] = {0, 1 << 8, 120, 150, 500, 400, 500, 400, 250, 250};
static const int32_t motion_speed[DIM] = {0, 100, 70, 120, 90, 140, 100, 130, 80, 80};
#define DRIFT_X 96 /* hips move 3/8 pixel to the right per frame */

/* Propagation noise of the first layer (uniform in +-sigma). */
static const int32_t sigma0[DIM] = {256, 256, 40, 60, 100, 100, 100, 100, 60, 60};

enum command {
	CMD_IDLE,
	CMD_PROPAGATE,
	CMD_WEIGHTS,
	CMD_EXIT,
};

struct layer_stats {
	uint32_t weight_sum; /* N * 65535 at most: fits for N < 65536 */
	uint32_t error_sum;
	uint32_t error_min;
	uint32_t clamped; /* particles pushed back into the image by PROPAGATE */
};

/* Read-only tables, filled by main before the threads start. */
static int16_t sin_tab[SIN_ENTRIES];
static uint16_t wtab[WTAB_SIZE];

/* Thread pool: the command and its condition (PARSEC's workDispatch / workAvailable). */
static pthread_mutex_t cmd_mutex;
static pthread_cond_t cmd_cond;
static enum command cmd = CMD_IDLE;
static pthread_barrier_t propagate_done, weights_done, ack_barrier, exit_barrier;

/* Ticket dispenser: next particle to hand out. */
static pthread_mutex_t ticket_mutex;
static unsigned int next_ticket;

/* Statistics of the current layer, accumulated by every thread. */
static pthread_mutex_t stats_mutex;
static struct layer_stats stats;

/*
 * The job of the current command: written by the master only while no command is posted, read
 * by the workers after they have received the command (cmd_mutex orders the two).
 */
static struct {
	unsigned int n;     /* particles */
	unsigned int chunk; /* particles per ticket */
	int32_t (*pose)[DIM];
	uint32_t *weight;
	const uint8_t *image;
	uint32_t noise_key; /* PROPAGATE: hash key of this frame and layer */
	int32_t sigma[DIM]; /* PROPAGATE: noise amplitude of this layer */
	uint32_t beta;      /* WEIGHTS: slope of the likelihood in this layer */
} job;

static inline int32_t isin(int32_t angle)
{
	return sin_tab[(uint32_t)(angle >> SIN_SHIFT) & (SIN_ENTRIES - 1)];
}

static inline int32_t icos(int32_t angle)
{
	return isin(angle + ANGLE_TURN / 4);
}

/* Edge strength at a pixel; 0 outside the image (unsigned compares reject negatives too). */
static inline uint32_t edge_at(const uint8_t *image, int32_t x, int32_t y)
{
	return (uint32_t)x < IMG_W && (uint32_t)y < IMG_H ? image[y * IMG_W + x] : 0;
}

static void stamp(uint8_t *image, int cx, int cy, int radius, int fade);

/*
 * One limb of the model walk: from (*x, *y), at absolute angle a (0 points up), LIMB_STEPS
 * evenly spaced points, the last one at the limb's end, where (*x, *y) is left. With `canvas`,
 * stamp the points into it (rendering a frame); otherwise return the missing edge strength of the
 * points in `image`.
 */
static ALWAYS_INLINE uint32_t walk_limb(int32_t *x, int32_t *y, int32_t a, int32_t step,
					const uint8_t *image, uint8_t *canvas)
{
	int32_t step_x = (step * isin(a)) >> 12; /* Q8 * Q12 -> Q8 */
	int32_t step_y = -((step * icos(a)) >> 12);
	uint32_t error = 0;

	for (int k = 0; k < LIMB_STEPS; k++) {
		*x += step_x;
		*y += step_y;
		if (canvas) {
			stamp(canvas, *x >> 8, *y >> 8, 2, 80);
		} else {
			error += EDGE_MAX - edge_at(image, *x >> 8, *y >> 8);
		}
	}
	return error;
}

/*
 * Walk the model of a pose: forward kinematics in Q8 pixels, the pose's angles relative to the
 * parent limb. Returns the missing edge strength of the model in `image` (0 when every point
 * lies on a full edge), or stamps the model into `canvas`. Written out limb by limb, without
 * arrays, so that everything stays in registers.
 */
static ALWAYS_INLINE uint32_t walk_model(const int32_t p[DIM], const uint8_t *image,
					 uint8_t *canvas)
{
	int32_t torso = p[2], arm;
	int32_t nx = p[0], ny = p[1]; /* hips, then the neck */
	int32_t x, y;
	uint32_t error;

	error = walk_limb(&nx, &ny, torso, TORSO, image, canvas);
	x = nx, y = ny;
	error += walk_limb(&x, &y, torso + p[3], HEAD, image, canvas);
	x = nx, y = ny, arm = torso + p[4];
	error += walk_limb(&x, &y, arm, UPPERARM, image, canvas);
	error += walk_limb(&x, &y, arm + p[5], FOREARM, image, canvas);
	x = nx, y = ny, arm = torso + p[6];
	error += walk_limb(&x, &y, arm, UPPERARM, image, canvas);
	error += walk_limb(&x, &y, arm + p[7], FOREARM, image, canvas);
	x = p[0], y = p[1]; /* the thighs start at the hips but turn with the torso */
	error += walk_limb(&x, &y, torso + p[8], THIGH, image, canvas);
	x = p[0], y = p[1];
	error += walk_limb(&x, &y, torso + p[9], THIGH, image, canvas);
	return error;
}

/* PROPAGATE: move particles [first, end) by their own noise and keep the hips in the image. */
static void propagate_chunk(unsigned int first, unsigned int end, struct layer_stats *local)
{
	for (unsigned int i = first; i < end; i++) {
		int32_t *p = job.pose[i];

		for (int d = 0; d < DIM; d += 2) {
			/* one hash, two uniform 16-bit draws in +-32768 */
			uint32_t h = wl_hash32(job.noise_key, i * DIM + (uint32_t)d);

			p[d] += (((int32_t)(h & 0xffff) - 0x8000) * job.sigma[d]) >> 15;
			p[d + 1] += (((int32_t)(h >> 16) - 0x8000) * job.sigma[d + 1]) >> 15;
		}
		if (p[0] < 0 || p[0] > (IMG_W - 1) << 8 || p[1] < 0 || p[1] > (IMG_H - 1) << 8) {
			p[0] = p[0] < 0 ? 0 : p[0] > (IMG_W - 1) << 8 ? (IMG_W - 1) << 8 : p[0];
			p[1] = p[1] < 0 ? 0 : p[1] > (IMG_H - 1) << 8 ? (IMG_H - 1) << 8 : p[1];
			local->clamped++;
		}
	}
}

/* WEIGHTS: weigh particles [first, end) against the edge image. */
static void weigh_chunk(unsigned int first, unsigned int end, struct layer_stats *local)
{
	for (unsigned int i = first; i < end; i++) {
		uint32_t error = walk_model(job.pose[i], job.image, NULL);
		uint32_t k = (error * job.beta) >> 12;

		job.weight[i] = wtab[k < WTAB_SIZE ? k : WTAB_SIZE - 1];
		local->weight_sum += job.weight[i];
		local->error_sum += error;
		if (error < local->error_min) {
			local->error_min = error;
		}
	}
}

static unsigned int get_ticket(void)
{
	unsigned int t;

	WL_CHECK(pthread_mutex_lock(&ticket_mutex));
	t = next_ticket;
	next_ticket += job.chunk;
	WL_CHECK(pthread_mutex_unlock(&ticket_mutex));
	return t;
}

/*
 * A thread's share of a command: chunks of particles until the dispenser runs dry, then its
 * statistics added to the layer's.
 */
static void exec_cmd(enum command c)
{
	struct layer_stats local = {0, 0, UINT32_MAX, 0};
	unsigned int first, chunks = 0;

	while ((first = get_ticket()) < job.n) {
		unsigned int end = first + job.chunk < job.n ? first + job.chunk : job.n;

		if (c == CMD_PROPAGATE) {
			propagate_chunk(first, end, &local);
		} else {
			weigh_chunk(first, end, &local);
		}
		chunks++;
	}
	if (chunks > 0) {
		/* integer sums and a minimum: the same whatever thread did which chunks */
		WL_CHECK(pthread_mutex_lock(&stats_mutex));
		stats.weight_sum += local.weight_sum;
		stats.error_sum += local.error_sum;
		if (local.error_min < stats.error_min) {
			stats.error_min = local.error_min;
		}
		stats.clamped += local.clamped;
		WL_CHECK(pthread_mutex_unlock(&stats_mutex));
	}
}

static int barrier_wait(pthread_barrier_t *barrier)
{
	int rc = pthread_barrier_wait(barrier);

	if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD) {
		printf("bodytrack: pthread_barrier_wait failed: %d\n", rc);
		exit(1);
	}
	return rc;
}

/*
 * Acknowledge a command (PARSEC's AckCmd): wait for everybody to finish it, let one thread reset
 * the command under its mutex, and wait again so that nobody looks for the next command before
 * the reset (it would run this one twice).
 */
static void ack_cmd(enum command c)
{
	if (barrier_wait(c == CMD_PROPAGATE ? &propagate_done : &weights_done) ==
	    PTHREAD_BARRIER_SERIAL_THREAD) {
		WL_CHECK(pthread_mutex_lock(&cmd_mutex));
		cmd = CMD_IDLE;
		WL_CHECK(pthread_mutex_unlock(&cmd_mutex));
	}
	barrier_wait(&ack_barrier);
}

/* Wait for a command (PARSEC's RecvCmd); it may already be there. */
static enum command recv_cmd(void)
{
	enum command c;

	WL_CHECK(pthread_mutex_lock(&cmd_mutex));
	while (cmd == CMD_IDLE) {
		WL_CHECK(pthread_cond_wait(&cmd_cond, &cmd_mutex));
	}
	c = cmd;
	WL_CHECK(pthread_mutex_unlock(&cmd_mutex));
	return c;
}

static void *worker(void *arg)
{
	enum command c;

	(void)arg;
	while ((c = recv_cmd()) != CMD_EXIT) {
		exec_cmd(c);
		ack_cmd(c);
	}
	barrier_wait(&exit_barrier);
	return NULL;
}

/*
 * Master: post a command to the pool and do a share of it (PARSEC's SendCmd, plus the work).
 * Returns when every thread has finished and acknowledged it.
 */
static void send_cmd(enum command c)
{
	next_ticket = 0; /* nobody takes tickets while no command is posted */
	WL_CHECK(pthread_mutex_lock(&cmd_mutex));
	cmd = c;
	WL_CHECK(pthread_cond_broadcast(&cmd_cond));
	WL_CHECK(pthread_mutex_unlock(&cmd_mutex));
	if (c == CMD_EXIT) {
		barrier_wait(&exit_barrier);
		return;
	}
	exec_cmd(c);
	ack_cmd(c);
}

/* Sine table, Q12, by Bhaskara's rational approximation (integer only, exact at 0, 30, 90 deg). */
static void init_tables(void)
{
	for (int i = 0; i < SIN_ENTRIES; i++) {
		int32_t a = i % (SIN_ENTRIES / 2); /* half-turn = 128 */
		int32_t p = a * (SIN_ENTRIES / 2 - a);
		int32_t s = (Q12_ONE * 4 * p) / (5 * (SIN_ENTRIES / 2) * (SIN_ENTRIES / 2) / 4 - p);

		sin_tab[i] = (int16_t)(i < SIN_ENTRIES / 2 ? s : -s);
	}
	wtab[0] = 65535;
	for (int k = 1; k < WTAB_SIZE; k++) {
		wtab[k] = (uint16_t)(wtab[k - 1] - wtab[k - 1] / 25); /* 0.96 ^ k, stays >= 1 */
	}
}

/* True pose of frame f: the base pose, a seed-dependent offset and a periodic motion. */
static void true_pose(uint32_t seed, unsigned int f, int32_t pose[DIM])
{
	for (int d = 0; d < DIM; d++) {
		uint32_t h = wl_hash32(seed, 0x1000u + (uint32_t)d);
		int32_t phase = (int32_t)(h & (ANGLE_TURN - 1));
		int32_t offset = (int32_t)((h >> 16) % 129) - 64; /* +-1/4 pixel or +-6 degrees */

		pose[d] = base_pose[d] + offset +
			  ((motion_amp[d] * isin(phase + (int32_t)f * motion_speed[d])) >> 12);
	}
	pose[0] += (int32_t)f * DRIFT_X;
}

/*
 * Stamp a diamond of edge strength, fading with the distance |dx| + |dy| from the centre, keeping
 * the stronger edge where it overlaps another.
 */
static void stamp(uint8_t *image, int cx, int cy, int radius, int fade)
{
	for (int dy = -radius; dy <= radius; dy++) {
		int y = cy + dy;
		int w = radius - (dy < 0 ? -dy : dy);
		/* clip the row to the image once, not pixel by pixel */
		int x0 = cx - w < 0 ? 0 : cx - w;
		int x1 = cx + w >= IMG_W ? IMG_W - 1 : cx + w;
		uint8_t *row = &image[y * IMG_W];

		if (y < 0 || y >= IMG_H) {
			continue;
		}
		for (int x = x0; x <= x1; x++) {
			int d = (x > cx ? x - cx : cx - x) + (dy < 0 ? -dy : dy);
			int v = EDGE_MAX - fade * d;

			if (v > row[x]) {
				row[x] = (uint8_t)v;
			}
		}
	}
}

/* Frame f: the edge map of its true pose plus clutter (PARSEC reads it from disk). */
static void make_frame(uint32_t seed, unsigned int f, uint8_t *image)
{
	int32_t truth[DIM];
	struct wl_rng rng;

	/* word stores: a byte-wise memset costs 4 times more stores on the target */
	for (unsigned int k = 0; k < IMG_W * IMG_H / 4; k++) {
		((uint32_t *)image)[k] = 0;
	}
	true_pose(seed, f, truth);
	walk_model(truth, NULL, image);
	wl_rng_seed(&rng, seed, 0x2000u + f);
	for (int k = 0; k < N_CLUTTER; k++) {
		int x = (int)wl_rng_below(&rng, IMG_W);
		int y = (int)wl_rng_below(&rng, IMG_H);

		stamp(image, x, y, 1, 90);
	}
}

/* Weighted mean of the particles (the pose estimate of the frame). */
static void estimate(unsigned int n, int32_t (*pose)[DIM], const uint32_t *weight,
		     uint32_t weight_sum, int32_t est[DIM])
{
	for (int d = 0; d < DIM; d++) {
		int64_t acc = 0;

		for (unsigned int i = 0; i < n; i++) {
			acc += (int64_t)weight[i] * pose[i][d];
		}
		est[d] = (int32_t)(acc / (int64_t)weight_sum);
	}
}

/*
 * Systematic resampling: n equally spaced pointers, the first one random, into the cumulative
 * weights scaled by n (so no division and no rounding). Particle i is copied about
 * n * weight[i] / weight_sum times.
 */
static void resample(unsigned int n, int32_t (*from)[DIM], int32_t (*to)[DIM],
		     const uint32_t *weight, uint32_t weight_sum, struct wl_rng *rng)
{
	uint64_t target = wl_rng_below(rng, weight_sum);
	uint64_t high = (uint64_t)weight[0] * n;
	unsigned int j = 0;

	for (unsigned int k = 0; k < n; k++) {
		while (target >= high) {
			j++;
			high += (uint64_t)weight[j] * n;
		}
		memcpy(to[k], from[j], sizeof(to[k]));
		target += weight_sum;
	}
}

static uint32_t hash_pose(uint32_t sum, const int32_t pose[DIM])
{
	for (int d = 0; d < DIM; d++) {
		sum = wl_fnv1a_u32(sum, (uint32_t)pose[d]);
	}
	return sum;
}

int main(int argc, char **argv)
{
	struct wl_options opt;
	const struct input_params *ip;
	int32_t(*pose)[DIM], (*spare)[DIM];
	int32_t start[DIM], est[DIM];
	uint8_t *images;
	uint32_t *weight;
	pthread_t *threads;
	struct wl_rng rng;
	uint32_t sum = WL_FNV_INIT;

#ifdef ENABLE_PARSEC_HOOKS
	__parsec_bench_begin(__parsec_bodytrack);
#endif
	if (wl_parse_options(argc, argv, &opt) != 0) {
		return 1;
	}
	ip = &input_params[opt.input];
	printf("bodytrack: %u particles, %u frames x %u layers, chunk %u, %u threads\n",
	       ip->particles, ip->frames, ip->layers, ip->chunk, opt.threads);

	pose = malloc(ip->particles * sizeof(*pose));
	spare = malloc(ip->particles * sizeof(*spare));
	weight = malloc(ip->particles * sizeof(*weight));
	images = malloc(ip->frames * IMG_W * IMG_H);
	threads = malloc(opt.threads * sizeof(*threads));
	if (!pose || !spare || !weight || !images || !threads) {
		printf("bodytrack: out of memory\n");
		return 1;
	}

	/*
	 * Input: the tables, the edge maps of all frames (PARSEC's images) and every particle at a
	 * pose near the first frame's.
	 */
	init_tables();
	for (unsigned int f = 0; f < ip->frames; f++) {
		make_frame(opt.seed, f, &images[f * IMG_W * IMG_H]);
	}
	true_pose(opt.seed, 0, start);
	for (unsigned int i = 0; i < ip->particles; i++) {
		for (int d = 0; d < DIM; d++) {
			pose[i][d] = start[d] + (d < 2 ? 256 : 80);
		}
	}
	wl_rng_seed(&rng, opt.seed, 0x3000u);
	job.n = ip->particles;
	job.chunk = ip->chunk;
	job.weight = weight;

	WL_CHECK(pthread_mutex_init(&cmd_mutex, NULL));
	WL_CHECK(pthread_mutex_init(&ticket_mutex, NULL));
	WL_CHECK(pthread_mutex_init(&stats_mutex, NULL));
	WL_CHECK(pthread_cond_init(&cmd_cond, NULL));
	WL_CHECK(pthread_barrier_init(&propagate_done, NULL, opt.threads));
	WL_CHECK(pthread_barrier_init(&weights_done, NULL, opt.threads));
	WL_CHECK(pthread_barrier_init(&ack_barrier, NULL, opt.threads));
	WL_CHECK(pthread_barrier_init(&exit_barrier, NULL, opt.threads));

#ifdef ENABLE_PARSEC_HOOKS
	__parsec_roi_begin();
#endif
	for (unsigned int t = 1; t < opt.threads; t++) {
		WL_CHECK(pthread_create(&threads[t], NULL, worker, NULL));
	}

	for (unsigned int f = 0; f < ip->frames; f++) {
		job.image = &images[f * IMG_W * IMG_H];
		for (unsigned int l = 0; l < ip->layers; l++) {
			int32_t(*tmp)[DIM];

			/* noise shrinks and the likelihood sharpens from layer to layer (annealing)
			 */
			job.pose = pose;
			job.noise_key = wl_hash32(opt.seed ^ 0x5eedu, f * ip->layers + l);
			for (int d = 0; d < DIM; d++) {
				job.sigma[d] = sigma0[d] * 4 / (4 + 3 * (int32_t)l);
			}
			job.beta = 53 + 32 * l;
			stats = (struct layer_stats){0, 0, UINT32_MAX, 0};
			send_cmd(CMD_PROPAGATE);
			send_cmd(CMD_WEIGHTS);

			/* serial part: statistics, estimate, resampling */
			sum = wl_fnv1a_u32(sum, stats.weight_sum);
			sum = wl_fnv1a_u32(sum, stats.error_sum);
			sum = wl_fnv1a_u32(sum, stats.error_min);
			sum = wl_fnv1a_u32(sum, stats.clamped);
			if (l == ip->layers - 1) {
				estimate(ip->particles, pose, weight, stats.weight_sum, est);
				sum = hash_pose(sum, est);
			}
			resample(ip->particles, pose, spare, weight, stats.weight_sum, &rng);
			tmp = pose;
			pose = spare;
			spare = tmp;
		}
	}
	send_cmd(CMD_EXIT);

	for (unsigned int t = 1; t < opt.threads; t++) {
		WL_CHECK(pthread_join(threads[t], NULL));
	}
#ifdef ENABLE_PARSEC_HOOKS
	__parsec_roi_end();
#endif

	for (unsigned int i = 0; i < ip->particles; i++) {
		sum = hash_pose(sum, pose[i]);
	}
	wl_print_checksum("bodytrack", sum);

	WL_CHECK(pthread_barrier_destroy(&propagate_done));
	WL_CHECK(pthread_barrier_destroy(&weights_done));
	WL_CHECK(pthread_barrier_destroy(&ack_barrier));
	WL_CHECK(pthread_barrier_destroy(&exit_barrier));
	WL_CHECK(pthread_cond_destroy(&cmd_cond));
	WL_CHECK(pthread_mutex_destroy(&stats_mutex));
	WL_CHECK(pthread_mutex_destroy(&ticket_mutex));
	WL_CHECK(pthread_mutex_destroy(&cmd_mutex));
	free(threads);
	free(images);
	free(weight);
	free(spare);
	free(pose);
#ifdef ENABLE_PARSEC_HOOKS
	__parsec_bench_end();
#endif
	return 0;
}
