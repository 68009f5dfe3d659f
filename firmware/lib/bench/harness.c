/*
 * Benchmark harness: counts and times the pthread calls of an unmodified program and prints the
 * run's figures as "@subutai {json}" lines (see harness.h).
 *
 * Each thread counts into its own statistics (no shared counter on the hot path: the cores have
 * no atomic instructions and the caches are not coherent); a thread merges them into the totals
 * under the harness's lock when it ends, before its joiner can read them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "hooks.h"

/* Threads alive at once (the largest mesh has 16 tiles; hosts run more). */
#define BENCH_MAX_THREADS 128

enum bench_op {
	OP_THREAD_CREATE,
	OP_THREAD_JOIN,
	OP_MUTEX_LOCK,
	OP_MUTEX_TRYLOCK,
	OP_MUTEX_UNLOCK,
	OP_COND_WAIT,
	OP_COND_SIGNAL,
	OP_COND_BROADCAST,
	OP_BARRIER_WAIT,
	N_OPS,
};

static const char *const op_primitive[N_OPS] = {
	"thread", "thread", "mutex", "mutex", "mutex", "cond", "cond", "cond", "barrier",
};
static const char *const op_name[N_OPS] = {
	"create", "join", "lock", "trylock", "unlock", "wait", "signal", "broadcast", "wait",
};

enum bench_object {
	OBJ_MUTEX,
	OBJ_COND,
	OBJ_BARRIER,
	N_OBJECTS,
};

static const char *const object_name[N_OBJECTS] = {"mutex", "cond", "barrier"};

struct bench_counter {
	uint32_t count;
	uint64_t time; /* in the port's unit, blocked time included */
	uint32_t max;
};

struct bench_stats {
	struct bench_counter op[N_OPS];
	uint32_t objects[N_OBJECTS]; /* successful init calls */
};

struct bench_thread {
	void *(*start)(void *);
	void *arg;
	struct bench_stats stats;
	int used;
};

static pthread_mutex_t bench_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bench_thread bench_threads[BENCH_MAX_THREADS]; /* under bench_lock */
static struct bench_stats bench_totals;                      /* under bench_lock */
static struct bench_stats bench_main_stats;
static uint64_t bench_roi_begin, bench_roi_end;

static __thread struct bench_stats *bench_self;
static __thread struct bench_thread *bench_current;

/* The real implementations (linker --wrap). */
int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
			  void *arg);
int __real_pthread_join(pthread_t thread, void **retval);
void __real_pthread_exit(void *retval) __attribute__((noreturn));
int __real_pthread_mutex_lock(pthread_mutex_t *mutex);
int __real_pthread_mutex_unlock(pthread_mutex_t *mutex);

static inline void bench_account(enum bench_op op, uint32_t since)
{
	uint32_t elapsed = bench_clock32() - since;
	struct bench_counter *c;

	if (bench_self == NULL) {
		return; /* a thread the program did not create (none in a plain program) */
	}
	c = &bench_self->op[op];
	c->count++;
	c->time += elapsed;
	if (elapsed > c->max) {
		c->max = elapsed;
	}
}

static void bench_add(struct bench_stats *to, const struct bench_stats *from)
{
	for (int i = 0; i < N_OPS; i++) {
		to->op[i].count += from->op[i].count;
		to->op[i].time += from->op[i].time;
		if (from->op[i].max > to->op[i].max) {
			to->op[i].max = from->op[i].max;
		}
	}
	for (int i = 0; i < N_OBJECTS; i++) {
		to->objects[i] += from->objects[i];
	}
}

/* The calling thread is done: its figures go to the totals and its slot is free again. */
static void bench_thread_done(void)
{
	struct bench_thread *slot = bench_current;

	if (slot == NULL) {
		return;
	}
	bench_current = NULL;
	bench_self = NULL;
	__real_pthread_mutex_lock(&bench_lock);
	bench_add(&bench_totals, &slot->stats);
	slot->used = 0;
	__real_pthread_mutex_unlock(&bench_lock);
}

static void *bench_thread_start(void *arg)
{
	struct bench_thread *slot = arg;
	void *ret;

	bench_current = slot;
	bench_self = &slot->stats;
	ret = slot->start(slot->arg);
	bench_thread_done();
	return ret;
}

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
			  void *arg)
{
	uint32_t since = bench_clock32();
	struct bench_thread *slot = NULL;
	int ret;

	__real_pthread_mutex_lock(&bench_lock);
	for (int i = 0; i < BENCH_MAX_THREADS; i++) {
		if (!bench_threads[i].used) {
			slot = &bench_threads[i];
			slot->used = 1;
			break;
		}
	}
	__real_pthread_mutex_unlock(&bench_lock);
	if (slot == NULL) {
		printf("bench: pthread_create: more than %d threads alive at once\n",
		       BENCH_MAX_THREADS);
		return EAGAIN;
	}
	memset(&slot->stats, 0, sizeof(slot->stats));
	slot->start = start;
	slot->arg = arg;
	ret = __real_pthread_create(thread, attr, bench_thread_start, slot);
	if (ret != 0) {
		__real_pthread_mutex_lock(&bench_lock);
		slot->used = 0;
		__real_pthread_mutex_unlock(&bench_lock);
		return ret; /* not a thread: not counted */
	}
	bench_account(OP_THREAD_CREATE, since);
	return 0;
}

void __wrap_pthread_exit(void *retval)
{
	bench_thread_done();
	__real_pthread_exit(retval);
}

/* A counted and timed call: the wrapper of pthread_<name>. */
#define BENCH_WRAP(op, name, params, args)                                                         \
	int __real_pthread_##name params;                                                          \
	int __wrap_pthread_##name params                                                           \
	{                                                                                          \
		uint32_t since = bench_clock32();                                                  \
		int ret = __real_pthread_##name args;                                              \
		bench_account(op, since);                                                          \
		return ret;                                                                        \
	}

BENCH_WRAP(OP_THREAD_JOIN, join, (pthread_t thread, void **retval), (thread, retval))
BENCH_WRAP(OP_MUTEX_LOCK, mutex_lock, (pthread_mutex_t * mutex), (mutex))
BENCH_WRAP(OP_MUTEX_TRYLOCK, mutex_trylock, (pthread_mutex_t * mutex), (mutex))
BENCH_WRAP(OP_MUTEX_UNLOCK, mutex_unlock, (pthread_mutex_t * mutex), (mutex))
BENCH_WRAP(OP_COND_WAIT, cond_wait, (pthread_cond_t * cond, pthread_mutex_t *mutex), (cond, mutex))
BENCH_WRAP(OP_COND_SIGNAL, cond_signal, (pthread_cond_t * cond), (cond))
BENCH_WRAP(OP_COND_BROADCAST, cond_broadcast, (pthread_cond_t * cond), (cond))
BENCH_WRAP(OP_BARRIER_WAIT, barrier_wait, (pthread_barrier_t * barrier), (barrier))

/* An object's set-up: counted when it succeeds (the objects a program uses, TPDS'21 Table V). */
#define BENCH_WRAP_INIT(obj, name, params, args)                                                   \
	int __real_pthread_##name##_init params;                                                   \
	int __wrap_pthread_##name##_init params                                                    \
	{                                                                                          \
		int ret = __real_pthread_##name##_init args;                                       \
		if (ret == 0 && bench_self != NULL) {                                              \
			bench_self->objects[obj]++;                                                \
		}                                                                                  \
		return ret;                                                                        \
	}

BENCH_WRAP_INIT(OBJ_MUTEX, mutex, (pthread_mutex_t * m, const pthread_mutexattr_t *a), (m, a))
BENCH_WRAP_INIT(OBJ_COND, cond, (pthread_cond_t * c, const pthread_condattr_t *a), (c, a))
BENCH_WRAP_INIT(OBJ_BARRIER, barrier,
		(pthread_barrier_t * b, const pthread_barrierattr_t *a, unsigned int n), (b, a, n))

void __parsec_bench_begin(enum __parsec_benchmark benchmark)
{
	(void)benchmark; /* the harness knows the program by its name */
}

void __parsec_bench_end(void)
{
}

void __parsec_roi_begin(void)
{
	bench_roi_begin = bench_clock();
}

void __parsec_roi_end(void)
{
	bench_roi_end = bench_clock();
}

/* Decimal text of a 64-bit number (not every libc's printf has %llu). */
static const char *bench_u64(char buf[21], uint64_t value)
{
	char *p = buf + 20;

	*p = '\0';
	do {
		*--p = (char)('0' + value % 10);
		value /= 10;
	} while (value != 0);
	return p;
}

/* Program name: argv[0] without its directories. */
static const char *bench_program(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	return slash ? slash + 1 : argv0;
}

/* The fields every record starts with. */
static void bench_record(const char *program, const struct bench_platform *platform,
			 unsigned int threads, const char *event)
{
	printf("@subutai {\"program\":\"%s\",\"backend\":\"%s\",\"tiles\":%u,\"threads\":%u,"
	       "\"event\":\"%s\"",
	       program, platform->backend, platform->cores, threads, event);
}

#ifdef BENCH_OWN_PROGRAM
/* A character of a JSON string. */
static void bench_put_json(char ch)
{
	unsigned char c = (unsigned char)ch;

	if (c == '"' || c == '\\') {
		printf("\\%c", c);
	} else if (c < 0x20) {
		printf("\\u%04x", c);
	} else {
		putchar(c);
	}
}

/*
 * The arguments of a program of one's own, which may be any words, in the report (a JSON string):
 * as a shell command line that gives them again, a word with anything but letters, digits and
 * _@%+=:,./- single-quoted ('\'' for a quote inside, '' for an empty word). As a hosted system's
 * process list, this shows what the program left in its argv.
 */
static void bench_print_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i];
		bool plain = *w != '\0';

		for (const char *c = w; *c && plain; c++) {
			plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				(*c >= '0' && *c <= '9') || strchr("_@%+=:,./-", *c) != NULL;
		}
		printf(i > 1 ? (plain ? " " : " '") : (plain ? "" : "'"));
		for (const char *c = w; *c; c++) {
			if (*c == '\'') {
				printf("'\\\\''");
			} else {
				bench_put_json(*c);
			}
		}
		printf(plain ? "" : "'");
	}
}
#endif

static void bench_report(const char *program, const struct bench_platform *platform, int argc,
			 char **argv, int exit_code, uint64_t total)
{
	struct bench_stats all;
	unsigned int threads;
	char a[21], b[21];

	__real_pthread_mutex_lock(&bench_lock);
	all = bench_totals;
	__real_pthread_mutex_unlock(&bench_lock);
	bench_add(&all, &bench_main_stats);
	threads = 1 + all.op[OP_THREAD_CREATE].count;

	bench_record(program, platform, threads, "run");
	printf(",\"args\":\"");
#ifdef BENCH_OWN_PROGRAM
	bench_print_args(argc, argv);
#else
	/* The project's programs get plain words (firmware/Makefile). */
	for (int i = 1; i < argc; i++) {
		for (const char *c = argv[i]; *c; c++) {
			printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
		}
		printf(i + 1 < argc ? " " : "");
	}
#endif
	printf("\",\"exit\":%d,\"unit\":\"%s\",\"time\":%s,\"roi\":%s}\n", exit_code,
	       platform->unit, bench_u64(a, total),
	       bench_u64(b, bench_roi_end > bench_roi_begin ? bench_roi_end - bench_roi_begin
							    : total));
	for (int i = 0; i < N_OPS; i++) {
		bench_record(program, platform, threads, "sync");
		printf(",\"primitive\":\"%s\",\"op\":\"%s\",\"count\":%lu,\"time\":%s,\"max\":%lu}"
		       "\n",
		       op_primitive[i], op_name[i], (unsigned long)all.op[i].count,
		       bench_u64(a, all.op[i].time), (unsigned long)all.op[i].max);
	}
	bench_record(program, platform, threads, "objects");
	for (int i = 0; i < N_OBJECTS; i++) {
		printf(",\"%s\":%lu", object_name[i], (unsigned long)all.objects[i]);
	}
	printf("}\n");
}

#ifdef BENCH_OWN_PROGRAM
/*
 * A program of one's own may end by exit() rather than by returning from main (classic suites do:
 * SPLASH's MAIN_END is exit(0)): its build wraps exit() (firmware/Makefile, apps/program), and the
 * report comes from whichever ends the run first. Threads still running then have not merged
 * their figures into the totals.
 */
static struct {
	const struct bench_platform *platform;
	int argc;
	char **argv;
	uint64_t begin;
	bool reported;
} bench_run;

void __real_exit(int code) __attribute__((noreturn));

static void bench_end(int code)
{
	uint64_t end = bench_clock();

	if (bench_run.platform == NULL || bench_run.reported) {
		return;
	}
	bench_run.reported = true;
	bench_report(bench_program(bench_run.argv[0]), bench_run.platform, bench_run.argc,
		     bench_run.argv, code, end - bench_run.begin);
}

void __wrap_exit(int code)
{
	bench_end(code);
	__real_exit(code);
}

int bench_main(const struct bench_platform *platform, int argc, char **argv)
{
	int ret;

	bench_run.platform = platform;
	bench_run.argc = argc;
	bench_run.argv = argv;
	bench_self = &bench_main_stats;
	bench_run.begin = bench_clock();
	ret = app_main(argc, argv);
	bench_end(ret);
	return ret;
}
#else
int bench_main(const struct bench_platform *platform, int argc, char **argv)
{
	const char *program = bench_program(argv[0]);
	uint64_t begin, end;
	int ret;

	bench_self = &bench_main_stats;
	begin = bench_clock();
	ret = app_main(argc, argv);
	end = bench_clock();
	bench_report(program, platform, argc, argv, ret, end - begin);
	return ret;
}
#endif
