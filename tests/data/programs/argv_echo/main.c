/*
 * Prints what a hosted program learns from its system: its arguments, and what sysconf(),
 * getpid(), gettimeofday(), time() and clock() say; checks that the clocks agree with each other.
 * Exit code 0 when they do.
 */
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int bad = 0;

	printf("argc=%d\n", argc);
	for (int i = 0; i < argc; i++) {
		printf("argv[%d]=<%s>\n", i, argv[i]);
	}
	printf("argv[argc]=%s\n", argv[argc] == NULL ? "NULL" : "set");
	/* The strings are the program's to change, as a hosted program's. */
	if (argc > 1 && argv[1][0]) {
		argv[1][0] = 'X';
	}

	printf("nprocessors_onln=%ld nprocessors_conf=%ld\n", sysconf(_SC_NPROCESSORS_ONLN),
	       sysconf(_SC_NPROCESSORS_CONF));
	printf("pagesize=%ld clk_tck=%ld threads_max=%ld keys_max=%ld stack_min=%ld\n",
	       sysconf(_SC_PAGESIZE), sysconf(_SC_CLK_TCK), sysconf(_SC_THREAD_THREADS_MAX),
	       sysconf(_SC_THREAD_KEYS_MAX), sysconf(_SC_THREAD_STACK_MIN));
	printf("threads_option=%ld barriers_option=%ld semaphores_option=%ld\n",
	       sysconf(_SC_THREADS), sysconf(_SC_BARRIERS), sysconf(_SC_SEMAPHORES));
	printf("pid=%ld\n", (long)getpid());

	struct timeval before, after;
	struct timespec now;

	gettimeofday(&before, NULL);
	clock_gettime(CLOCK_REALTIME, &now);
	volatile unsigned int spin = 0;
	for (int i = 0; i < 2000; i++) {
		spin += i;
	}
	gettimeofday(&after, NULL);
	long long us_before = before.tv_sec * 1000000LL + before.tv_usec;
	long long us_after = after.tv_sec * 1000000LL + after.tv_usec;
	long long us_now = now.tv_sec * 1000000LL + now.tv_nsec / 1000;

	/* gettimeofday() and clock_gettime() read one clock; time flows forward. */
	if (!(us_before <= us_now && us_now <= us_after && us_before < us_after)) {
		printf("clocks disagree: %lld %lld %lld\n", us_before, us_now, us_after);
		bad = 1;
	}
	if (before.tv_usec < 0 || before.tv_usec >= 1000000) {
		printf("tv_usec out of range: %ld\n", (long)before.tv_usec);
		bad = 1;
	}
	time_t t = time(NULL);

	if (t != after.tv_sec && t != after.tv_sec + 1) {
		printf("time() %lld, gettimeofday() %lld\n", (long long)t, (long long)after.tv_sec);
		bad = 1;
	}
	clock_t c = clock();

	/* clock() counts CLOCKS_PER_SEC a second from the same start. */
	if (c == (clock_t)-1 || (long long)c > (us_after / 1000000 + 1) * CLOCKS_PER_SEC) {
		printf("clock() %ld out of step\n", (long)c);
		bad = 1;
	}
	printf("elapsed_us=%lld clocks_per_sec=%ld\n", us_after - us_before, (long)CLOCKS_PER_SEC);
	printf("clocks %s\n", bad ? "BAD" : "OK");
	return bad;
}
