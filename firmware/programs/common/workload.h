/*
 * Shared helpers of the benchmark programs: command line, deterministic inputs, checksums.
 *
 * Plain C99, no dependency beyond libc, so the programs build unchanged with the
 * bare-metal runtime, under Zephyr and on a host with glibc. Everything here is integer
 * arithmetic: a program's result must not depend on the number of threads, the backend or the
 * machine, so that its checksum can be compared everywhere.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest thread count a program accepts (the largest mesh has 16 tiles). */
#define WL_MAX_THREADS 64

/* Input classes, smallest first, named as PARSEC names its inputs. */
enum wl_input {
	WL_INPUT_TEST,     /* a few hundred thousand cycles on one core: functional tests */
	WL_INPUT_SIMSMALL, /* a few million cycles on one core: the benchmark default */
	WL_INPUT_SIMMEDIUM,
	WL_N_INPUTS,
};

static const char *const wl_input_names[WL_N_INPUTS] = {"test", "simsmall", "simmedium"};

struct wl_options {
	unsigned int threads; /* -t: threads in all, the main thread included */
	enum wl_input input;  /* -i: input class */
	uint32_t seed;        /* -s: seed of the generated input */
};

/*
 * Parse "[-t THREADS] [-i INPUT] [-s SEED]" (each option a separate word, as every libc's
 * getopt would accept; parsed here because not every embedded libc has a usable getopt).
 * Returns 0, or prints what is wrong with the command line and returns -1.
 */
static inline int wl_parse_options(int argc, char **argv, struct wl_options *opt)
{
	const char *prog = argc > 0 ? argv[0] : "program";

	opt->threads = 1;
	opt->input = WL_INPUT_SIMSMALL;
	opt->seed = 1;
	for (int i = 1; i < argc; i += 2) {
		const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (strcmp(name, "-t") != 0 && strcmp(name, "-i") != 0 && strcmp(name, "-s") != 0) {
			printf("%s: unknown argument '%s'\n"
			       "usage: %s [-t THREADS] [-i test|simsmall|simmedium] [-s SEED]\n",
			       prog, name, prog);
			return -1;
		}
		if (value == NULL) {
			printf("%s: %s needs a value\n", prog, name);
			return -1;
		}
		if (name[1] == 't') {
			unsigned long t = strtoul(value, &end, 10);

			if (*value == '\0' || *end != '\0' || t < 1 || t > WL_MAX_THREADS) {
				printf("%s: -t %s: threads must be 1 to %d\n", prog, value,
				       WL_MAX_THREADS);
				return -1;
			}
			opt->threads = (unsigned int)t;
		} else if (name[1] == 'i') {
			int k = 0;

			while (k < WL_N_INPUTS && strcmp(value, wl_input_names[k]) != 0) {
				k++;
			}
			if (k == WL_N_INPUTS) {
				printf("%s: -i %s: input must be test, simsmall or simmedium\n",
				       prog, value);
				return -1;
			}
			opt->input = (enum wl_input)k;
		} else {
			unsigned long s = strtoul(value, &end, 0);

			if (*value == '\0' || *end != '\0') {
				printf("%s: -s %s: seed must be a number\n", prog, value);
				return -1;
			}
			opt->seed = (uint32_t)s;
		}
	}
	return 0;
}

/* 32-bit mix of two words (the finalizer of MurmurHash3): a stateless source of random numbers,
 * so that item i of a generated input does not depend on which thread generates it.
 */
static inline uint32_t wl_hash32(uint32_t a, uint32_t b)
{
	uint32_t h = a ^ (b * 0x9e3779b9u);

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* A sequential generator (xorshift32) for what one thread draws in order. */
struct wl_rng {
	uint32_t state;
};

static inline void wl_rng_seed(struct wl_rng *rng, uint32_t seed, uint32_t stream)
{
	rng->state = wl_hash32(seed, stream) | 1u; /* never zero */
}

static inline uint32_t wl_rng_next(struct wl_rng *rng)
{
	uint32_t x = rng->state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	rng->state = x;
	return x;
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t wl_rng_below(struct wl_rng *rng, uint32_t n)
{
	return (uint32_t)(((uint64_t)wl_rng_next(rng) * n) >> 32);
}

/* FNV-1a, 32 bits: the programs' result checksum. */
#define WL_FNV_INIT 0x811c9dc5u

static inline uint32_t wl_fnv1a(uint32_t hash, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len--) {
		hash ^= *p++;
		hash *= 0x01000193u;
	}
	return hash;
}

static inline uint32_t wl_fnv1a_u32(uint32_t hash, uint32_t value)
{
	unsigned char b[4] = {(unsigned char)value, (unsigned char)(value >> 8),
			      (unsigned char)(value >> 16), (unsigned char)(value >> 24)};

	return wl_fnv1a(hash, b, sizeof(b)); /* byte order fixed: same on every machine */
}

/* The line the tests and scripts read the result from: "<program>: checksum 0x%08x". */
static inline void wl_print_checksum(const char *program, uint32_t checksum)
{
	printf("%s: checksum 0x%08lx\n", program, (unsigned long)checksum);
}

/* Exit with a message when a pthread call fails: a benchmark must not go on with a broken object.
 */
#define WL_CHECK(call)                                                                             \
	do {                                                                                       \
		int wl_err_ = (call);                                                              \
		if (wl_err_ != 0) {                                                                \
			printf("%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, wl_err_);      \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#endif /* WORKLOAD_H */
