/*
 * syncstress: every core drives random synchronization traffic at Subutai-HW objects hosted on
 * every tile, plus NoC messages, for a given number of cycles, and checks what must hold.
 *
 * The priority class of the NoC carries core requests, replies and the engines' requests to each
 * other (a condition wait moves its mutex through the mutex's host: LOCK_FOR/UNLOCK_FOR); its
 * deadlock freedom is argued, not proven (docs/architecture.md, "Deadlock freedom"). This program
 * is the load that argument has to survive: each core runs rounds of OPS_PER_ROUND random
 * operations (lock, trylock, signal or broadcast with or without the mutex, a normal-class NoC
 * message, a burst of posted signals and broadcasts), one token given to a condition variable and
 * one token taken from one (waiting on it, untimed or with a short timeout), and ends each round at
 * a barrier; every STORM_EVERY-th round is a storm round (storm_round()). Hosts: two mutexes and
 * one condition per tile, the mutex of tile A's condition on tile B and that of B's on A (tiles
 * paired: every wait and wake-up crosses between engines, both ways), barriers on up to four tiles
 * in turn.
 *
 * Checked: mutual exclusion (an owner word set inside every critical section and a per-mutex
 * count of entries equal to the entries the cores made), barrier generations (nobody leaves a
 * round before every core entered it, exactly one serial waiter per round), tokens (each taken
 * token was given in the same round: a consumer never sees a token that is not there), every
 * NoC message delivered once with its content, and liveness: tokens are balanced per round
 * (the consumers of a condition are a permutation of its producers, and every core gives before
 * it takes), so a core that waits forever is a lost wake-up or a deadlock, which the simulation's
 * cycle limit reports. Core 0 prints a progress line every PROGRESS_ROUNDS rounds and one
 * "@subutai" JSON line per check.
 *
 * STRESS_CYCLES (default ten million) is how long the rounds go on; STRESS_SEED the seed of
 * every core's generator.
 */
#include <errno.h>
#include <stdio.h>

#include <subutai/ni.h>
#include <subutai/sync.h>

#ifndef STRESS_CYCLES
#define STRESS_CYCLES 10000000u
#endif
#ifndef STRESS_SEED
#define STRESS_SEED 20261123u
#endif
#define OPS_PER_ROUND   16
#define PROGRESS_ROUNDS 64
#define MUTEXES         (2 * N_TILES)
#define CONDS           N_TILES
#define BARRIERS        (N_TILES < 4 ? N_TILES : 4)
#define NOBODY          0xffffffffu
#define MSG_TYPE        0x5a
#define MSGS_PER_ROUND  2 /* at most, to one partner: 3 flits each, within the RX FIFO (below) */
#define SHORT_TIMEOUT   2000u
#define STORM_EVERY     4 /* every 4th round is a storm round */
#define STORM_WAKES     64

enum {
	C_LOCKS,
	C_TRYLOCK_BUSY,
	C_WAITS,
	C_TIMEOUTS,
	C_WAKES,
	C_MSGS_RECEIVED,
	C_ROUNDS,
	C_FAILURES,
	N_COUNTS
};

/* Broken invariants (failure codes). */
enum {
	F_INSIDE = 1,    /* a critical section found another core inside */
	F_OVERTAKEN,     /* or was entered while this core was inside */
	F_SEND,          /* a NoC send refused */
	F_STALE_TOKEN,   /* a token of an earlier round was never taken */
	F_WRONG_ROUND,   /* a token taken was given in another round */
	F_EARLY_RELEASE, /* a barrier released before every core entered */
	F_SERIALS,       /* a barrier round without exactly one serial waiter */
	F_BAD_MESSAGE,   /* a NoC message with the wrong type, length, content or receiver */
};

struct shared {
	volatile uint32_t ready, stop;
	subutai_id_t mutex[MUTEXES], cond[CONDS], cond_mutex[CONDS], barrier[BARRIERS];
	/* Under mutex[m]: */
	uint32_t owner[MUTEXES], entries[MUTEXES];
	/* Under cond_mutex[c]: */
	uint32_t cond_owner[CONDS], tokens[CONDS], token_round[CONDS], storm_over[CONDS];
	/* Each core's own row, read after the final barrier: */
	uint32_t entered[N_TILES][MUTEXES];
	uint32_t sent[N_TILES][N_TILES];
	uint32_t counts[N_TILES][N_COUNTS];
	/* Barrier checks: the round a core last entered, a round's serial waiters. */
	uint32_t arrived[N_TILES];
	uint32_t serial[4][N_TILES];
	uint32_t first_failure[N_TILES];
};

static struct shared sh;

static void check(const char *name, int ok, unsigned long value)
{
	printf("@subutai {\"program\":\"syncstress\",\"check\":\"%s\",\"ok\":%d,\"value\":%lu}\n",
	       name, ok ? 1 : 0, value);
}

static void must(int status, const char *what)
{
	if (status != 0 && status != -1) {
		printf("syncstress: tile %u: %s failed: %d\n", subutai_tile_id(), what, status);
		subutai_exit(2);
	}
}

/* xorshift32: a core's own random stream. */
static uint32_t next_random(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/* The same for every core: the shift of round r's consumers. */
static unsigned int round_shift(uint32_t round)
{
	uint32_t x = round * 0x9e3779b9u + STRESS_SEED;

	return next_random(&x) % N_TILES;
}

/* Where a core sends its messages in a round: a shift, so every core gets one sender. */
static unsigned int partner(unsigned int tile, uint32_t round)
{
	return N_TILES == 1 ? tile : (tile + 1 + round % (N_TILES > 1 ? N_TILES - 1 : 1)) % N_TILES;
}

/* Condition k's mutex is on the tile paired with k (k ^ 1), whose conditions have their mutexes on
 * k's tile: engines A and B each send the other LOCK_FOR/UNLOCK_FOR (docs/architecture.md). */
static unsigned int cond_mutex_host(unsigned int k)
{
	return (k ^ 1) < N_TILES ? (k ^ 1) : (k + 1) % N_TILES;
}

struct core {
	unsigned int tile;
	uint32_t rng, round, first_failure;
	uint32_t counts[N_COUNTS];
	uint32_t entered[MUTEXES];
	uint32_t sent[N_TILES];
	unsigned int msgs_this_round;
};

/* A broken invariant: counted, the first one's code kept; core 0 reports them at the end. */
static void failure(struct core *c, unsigned int code)
{
	if (c->counts[C_FAILURES]++ == 0) {
		c->first_failure = code;
	}
}

static void critical_section(struct core *c, uint32_t *owner, uint32_t *entries)
{
	if (*owner != NOBODY) {
		failure(c, F_INSIDE);
	}
	*owner = c->tile;
	if (entries) {
		(*entries)++;
	}
	for (volatile uint32_t k = next_random(&c->rng) % 16; k; k--) {
	}
	if (*owner != c->tile) {
		failure(c, F_OVERTAKEN);
	}
	*owner = NOBODY;
}

static void receive_messages(struct core *c)
{
	struct subutai_ni_msg msg;

	while (subutai_ni_try_recv(SUBUTAI_NI_NORMAL, &msg) == 0) {
		/* Payload: the sender's round and its tile; its length and type as sent. */
		if (msg.type != MSG_TYPE || msg.length != 2 || msg.payload[1] != msg.src ||
		    msg.payload[0] > c->round || partner(msg.src, msg.payload[0]) != c->tile) {
			failure(c, F_BAD_MESSAGE);
		}
		c->counts[C_MSGS_RECEIVED]++;
	}
}

static void lock_op(struct core *c, bool try)
{
	unsigned int m = next_random(&c->rng) % MUTEXES;

	if (try) {
		int s = subutai_mutex_trylock(sh.mutex[m]);

		if (s == EBUSY) {
			c->counts[C_TRYLOCK_BUSY]++;
			return;
		}
		must(s, "trylock");
	} else {
		must(subutai_mutex_lock(sh.mutex[m]), "lock");
	}
	critical_section(c, &sh.owner[m], &sh.entries[m]);
	c->entered[m]++;
	c->counts[C_LOCKS]++;
	must(subutai_mutex_unlock(sh.mutex[m]), "unlock");
}

/* A signal or broadcast nobody may be waiting for, with or without the condition's mutex. */
static void wake_op(struct core *c)
{
	uint32_t r = next_random(&c->rng);
	unsigned int k = r % CONDS;
	bool locked = (r >> 8) & 1;

	if (locked) {
		must(subutai_mutex_lock(sh.cond_mutex[k]), "lock");
		critical_section(c, &sh.cond_owner[k], NULL);
	}
	must((r >> 9) & 1 ? subutai_cond_broadcast(sh.cond[k]) : subutai_cond_signal(sh.cond[k]),
	     "wake");
	if (locked) {
		must(subutai_mutex_unlock(sh.cond_mutex[k]), "unlock");
	}
	c->counts[C_WAKES]++;
}

/* A burst of posted signals and broadcasts, one store each, at conditions of two hosts: the load
 * that fills engines' input paths while they exchange LOCK_FOR/UNLOCK_FOR. */
static void wake_storm(struct core *c)
{
	uint32_t r = next_random(&c->rng);
	unsigned int k = r % CONDS, n = 4 + (r >> 8) % 12;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int to = i & 1 ? cond_mutex_host(k) : k;

		must((r >> (12 + i)) & 1 ? subutai_cond_broadcast(sh.cond[to])
					 : subutai_cond_signal(sh.cond[to]),
		     "wake");
	}
	c->counts[C_WAKES] += n;
}

static void message_op(struct core *c)
{
	if (N_TILES == 1 || c->msgs_this_round == MSGS_PER_ROUND) {
		return;
	}
	unsigned int to = partner(c->tile, c->round);
	uint32_t payload[2] = {c->round, c->tile};

	if (subutai_ni_send(to, SUBUTAI_NI_NORMAL, MSG_TYPE, payload, 2) != 0) {
		failure(c, F_SEND);
	}
	c->msgs_this_round++;
	c->sent[to]++;
}

/* Round r's token: core i gives one to condition (i + r) % CONDS... */
static unsigned int given_to(unsigned int tile, uint32_t round)
{
	return (tile + round) % CONDS;
}

static void give_token(struct core *c)
{
	unsigned int k = given_to(c->tile, c->round);
	uint32_t r = next_random(&c->rng);

	must(subutai_mutex_lock(sh.cond_mutex[k]), "lock");
	critical_section(c, &sh.cond_owner[k], NULL);
	if (sh.tokens[k] != 0 && sh.token_round[k] != c->round) {
		failure(c, F_STALE_TOKEN);
	}
	sh.tokens[k]++;
	sh.token_round[k] = c->round;
	must(r & 1 ? subutai_cond_broadcast(sh.cond[k]) : subutai_cond_signal(sh.cond[k]), "wake");
	must(subutai_mutex_unlock(sh.cond_mutex[k]), "unlock");
}

/* ...and core j takes one from the condition core (j + shift(r)) % N gave to: a permutation,
 * so every condition has as many takers as givers in every round. */
static void take_token(struct core *c)
{
	unsigned int k = given_to((c->tile + round_shift(c->round)) % N_TILES, c->round);
	bool timed = next_random(&c->rng) & 1;

	must(subutai_mutex_lock(sh.cond_mutex[k]), "lock");
	critical_section(c, &sh.cond_owner[k], NULL);
	while (sh.tokens[k] == 0) {
		if (timed) {
			int s = subutai_cond_timedwait(sh.cond[k], sh.cond_mutex[k],
						       subutai_cycles() + SHORT_TIMEOUT);

			if (s == ETIMEDOUT) {
				c->counts[C_TIMEOUTS]++;
			} else {
				must(s, "cond_timedwait");
			}
		} else {
			must(subutai_cond_wait(sh.cond[k], sh.cond_mutex[k]), "cond_wait");
		}
		c->counts[C_WAITS]++;
		/* The mutex is held again: nobody else may be inside. */
		critical_section(c, &sh.cond_owner[k], NULL);
	}
	if (sh.token_round[k] != c->round) {
		failure(c, F_WRONG_ROUND);
	}
	sh.tokens[k]--;
	must(subutai_mutex_unlock(sh.cond_mutex[k]), "unlock");
}

/*
 * A storm round: each even tile that has a pair waits on its own condition (whose mutex is on the
 * pair) until the pair ends the storm; the pair first posts STORM_WAKES signals and broadcasts at
 * both tiles' conditions as fast as it can. Every wake-up moves the mutex between the two engines
 * (LOCK_FOR; the re-wait's WAIT_CHECK, COND_ENQUEUE and UNLOCK_FOR) while the posted requests
 * keep both engines' input paths full: the cyclic wait of docs/architecture.md, if it can happen.
 */
static void storm_round(struct core *c)
{
	unsigned int pair = c->tile ^ 1;

	if (pair >= N_TILES) {
		return;
	}
	if ((c->tile & 1) == 0) {
		unsigned int k = c->tile;

		must(subutai_mutex_lock(sh.cond_mutex[k]), "lock");
		critical_section(c, &sh.cond_owner[k], NULL);
		while (sh.storm_over[k] != c->round + 1) {
			must(subutai_cond_wait(sh.cond[k], sh.cond_mutex[k]), "cond_wait");
			c->counts[C_WAITS]++;
			critical_section(c, &sh.cond_owner[k], NULL);
		}
		must(subutai_mutex_unlock(sh.cond_mutex[k]), "unlock");
		return;
	}
	uint32_t r = next_random(&c->rng);

	for (unsigned int i = 0; i < STORM_WAKES; i++) {
		subutai_id_t cond = sh.cond[i & 1 ? c->tile : pair];

		must((r >> (i % 32)) & 1 ? subutai_cond_broadcast(cond) : subutai_cond_signal(cond),
		     "wake");
	}
	c->counts[C_WAKES] += STORM_WAKES;
	must(subutai_mutex_lock(sh.cond_mutex[pair]), "lock");
	critical_section(c, &sh.cond_owner[pair], NULL);
	sh.storm_over[pair] = c->round + 1;
	must(subutai_cond_broadcast(sh.cond[pair]), "wake");
	must(subutai_mutex_unlock(sh.cond_mutex[pair]), "unlock");
}

static void end_round(struct core *c)
{
	uint32_t r = c->round;

	sh.arrived[c->tile] = r + 1;
	int s = subutai_barrier_wait(sh.barrier[r % BARRIERS]);

	must(s, "barrier_wait");
	sh.serial[r % 4][c->tile] = (s == -1);
	for (unsigned int t = 0; t < N_TILES; t++) {
		if (sh.arrived[t] < r + 1) {
			failure(c, F_EARLY_RELEASE);
		}
	}
	if (c->tile == 0) {
		/* Round r - 1's serial flags are final: every core wrote them before entering round
		 * r. */
		if (r > 0) {
			uint32_t serials = 0;

			for (unsigned int t = 0; t < N_TILES; t++) {
				serials += sh.serial[(r - 1) % 4][t];
			}
			if (serials != 1) {
				failure(c, F_SERIALS);
			}
		}
		if (r % PROGRESS_ROUNDS == PROGRESS_ROUNDS - 1) {
			printf("syncstress: round %lu, cycle %lu\n", (unsigned long)r + 1,
			       (unsigned long)subutai_cycles32());
		}
		sh.stop = subutai_cycles() - subutai_release_cycle >= STRESS_CYCLES;
	}
	/* Everyone reads the same verdict: it was written before this second barrier. */
	must(subutai_barrier_wait(sh.barrier[(r + 1) % BARRIERS]), "barrier_wait");
	c->round++;
}

static void run(unsigned int tile)
{
	static struct core cores[N_TILES];
	struct core *c = &cores[tile];

	c->tile = tile;
	c->rng = STRESS_SEED ^ (0x9e3779b9u * (tile + 1));
	do {
		if (c->round % STORM_EVERY == STORM_EVERY - 1) {
			storm_round(c);
			end_round(c);
			c->counts[C_ROUNDS]++;
			continue;
		}
		unsigned int give_at = next_random(&c->rng) % OPS_PER_ROUND;
		unsigned int take_at = give_at + next_random(&c->rng) % (OPS_PER_ROUND - give_at);

		c->msgs_this_round = 0;
		for (unsigned int op = 0; op < OPS_PER_ROUND; op++) {
			receive_messages(c);
			if (op == give_at) {
				give_token(c);
			}
			uint32_t kind = next_random(&c->rng) % 100;

			if (kind < 40) {
				lock_op(c, false);
			} else if (kind < 60) {
				lock_op(c, true);
			} else if (kind < 70) {
				message_op(c);
			} else if (kind < 90) {
				wake_op(c);
			} else {
				wake_storm(c);
			}
			if (op == take_at) {
				take_token(c);
			}
		}
		receive_messages(c);
		end_round(c);
		c->counts[C_ROUNDS]++;
	} while (!sh.stop);

	/* Publish this core's tallies; messages still on their way are counted in main(). */
	for (unsigned int m = 0; m < MUTEXES; m++) {
		sh.entered[tile][m] = c->entered[m];
	}
	for (unsigned int t = 0; t < N_TILES; t++) {
		sh.sent[tile][t] = c->sent[t];
	}
	must(subutai_barrier_wait(sh.barrier[0]), "barrier_wait");
	/* Every message sent is on its way: wait for this core's (bounded, so a lost one shows). */
	uint32_t expected = 0;

	for (unsigned int t = 0; t < N_TILES; t++) {
		expected += sh.sent[t][tile];
	}
	uint64_t deadline = subutai_cycles() + 1000000;

	while (c->counts[C_MSGS_RECEIVED] < expected && subutai_cycles() < deadline) {
		receive_messages(c);
	}
	for (unsigned int i = 0; i < N_COUNTS; i++) {
		sh.counts[tile][i] = c->counts[i];
	}
	sh.first_failure[tile] = c->first_failure;
	must(subutai_barrier_wait(sh.barrier[0]), "barrier_wait");
}

void tile_main(unsigned int tile)
{
	while (!sh.ready) {
		subutai_dcache_invalidate();
	}
	subutai_dcache_invalidate();
	run(tile);
}

int main(void)
{
	for (unsigned int m = 0; m < MUTEXES; m++) {
		must(subutai_mutex_alloc(m % N_TILES, false, &sh.mutex[m]), "alloc mutex");
		sh.owner[m] = NOBODY;
	}
	for (unsigned int k = 0; k < CONDS; k++) {
		must(subutai_cond_alloc(k, &sh.cond[k]), "alloc cond");
		must(subutai_mutex_alloc(cond_mutex_host(k), false, &sh.cond_mutex[k]),
		     "alloc mutex");
		sh.cond_owner[k] = NOBODY;
	}
	for (unsigned int b = 0; b < BARRIERS; b++) {
		must(subutai_barrier_alloc(b * N_TILES / BARRIERS, N_TILES, &sh.barrier[b]),
		     "alloc barrier");
	}
	printf("syncstress: %u tiles, %u mutexes, %u conditions, %u barriers, %lu cycles\n",
	       N_TILES, MUTEXES, CONDS, BARRIERS, (unsigned long)STRESS_CYCLES);
	sh.ready = 1;

	run(0);

	uint32_t rounds = sh.counts[0][C_ROUNDS], entries_ok = 1, sums[N_COUNTS] = {0};
	uint32_t sent = 0, tokens_left = 0, rounds_ok = 1, first_failure = 0;

	for (unsigned int m = 0; m < MUTEXES; m++) {
		uint32_t entered = 0;

		for (unsigned int t = 0; t < N_TILES; t++) {
			entered += sh.entered[t][m];
		}
		entries_ok &= entered == sh.entries[m];
	}
	for (unsigned int t = 0; t < N_TILES; t++) {
		for (unsigned int i = 0; i < N_COUNTS; i++) {
			sums[i] += sh.counts[t][i];
		}
		if (!first_failure) {
			first_failure = sh.first_failure[t];
		}
		for (unsigned int d = 0; d < N_TILES; d++) {
			sent += sh.sent[t][d];
		}
		rounds_ok &= sh.counts[t][C_ROUNDS] == rounds;
	}
	for (unsigned int k = 0; k < CONDS; k++) {
		tokens_left += sh.tokens[k];
	}
	printf("@subutai {\"program\":\"syncstress\",\"tiles\":%u,\"rounds\":%lu,\"cycles\":%lu,"
	       "\"locks\":%lu,\"trylock_busy\":%lu,\"waits\":%lu,\"timeouts\":%lu,\"wakes\":%lu,"
	       "\"messages\":%lu}\n",
	       N_TILES, (unsigned long)rounds,
	       (unsigned long)(subutai_cycles() - subutai_release_cycle),
	       (unsigned long)sums[C_LOCKS], (unsigned long)sums[C_TRYLOCK_BUSY],
	       (unsigned long)sums[C_WAITS], (unsigned long)sums[C_TIMEOUTS],
	       (unsigned long)sums[C_WAKES], (unsigned long)sent);
	check("invariants", sums[C_FAILURES] == 0, first_failure);
	check("mutex_entries_counted", entries_ok, sums[C_LOCKS]);
	check("every_core_ran_every_round", rounds_ok, rounds);
	check("tokens_all_taken", tokens_left == 0, tokens_left);
	check("messages_delivered", sums[C_MSGS_RECEIVED] == sent, sums[C_MSGS_RECEIVED]);
	check("ran_long_enough", subutai_cycles() - subutai_release_cycle >= STRESS_CYCLES, rounds);
	return sums[C_FAILURES] == 0 && entries_ok && rounds_ok && tokens_left == 0 &&
			       sums[C_MSGS_RECEIVED] == sent
		       ? 0
		       : 1;
}
