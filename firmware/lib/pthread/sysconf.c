/*
 * What a program asks of its system (<unistd.h>): sysconf() and getpid(), as classic PThreads
 * suites call them to size their thread pools and buffers (docs/programs.md, "What classic
 * programs call").
 *
 * The SoC runs one program, the process, on all its cores: sysconf(_SC_NPROCESSORS_ONLN) is the
 * tile count; the thread limits are the library's (limits.h). A name the library knows but has no
 * limit or option for answers -1 and leaves errno alone, an unknown name -1 with EINVAL (POSIX).
 */
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

long sysconf(int name)
{
	switch (name) {
	case _SC_NPROCESSORS_CONF:
	case _SC_NPROCESSORS_ONLN:
		return subutai_num_tiles();
	case _SC_PAGESIZE:
		return RT_PAGE_SIZE;
	case _SC_CLK_TCK:
		return RT_CLK_TCK;
	case _SC_THREAD_THREADS_MAX:
		return PTHREAD_THREADS_MAX;
	case _SC_THREAD_KEYS_MAX:
		return PTHREAD_KEYS_MAX;
	case _SC_THREAD_STACK_MIN:
		return PTHREAD_STACK_MIN;
	case _SC_THREAD_DESTRUCTOR_ITERATIONS:
		return PTHREAD_DESTRUCTOR_ITERATIONS;
	case _SC_SEM_VALUE_MAX:
		return SEM_VALUE_MAX;
	/* The options pthread.h, semaphore.h and time.h implement, at POSIX.1-2008's value. */
	case _SC_VERSION:
	case _SC_THREADS:
	case _SC_THREAD_SAFE_FUNCTIONS:
	case _SC_THREAD_ATTR_STACKSIZE:
	case _SC_BARRIERS:
	case _SC_SPIN_LOCKS:
	case _SC_READER_WRITER_LOCKS:
	case _SC_SEMAPHORES:
	case _SC_CLOCK_SELECTION:
	case _SC_MONOTONIC_CLOCK:
	case _SC_TIMEOUTS:
		return 200809L;
	/* Known, without a limit or option here: no argument list, files, processes or signals
	 * beyond the one program. */
	case _SC_ARG_MAX:
	case _SC_CHILD_MAX:
	case _SC_OPEN_MAX:
	case _SC_PHYS_PAGES:
	case _SC_AVPHYS_PAGES:
	case _SC_THREAD_ATTR_STACKADDR:
	case _SC_THREAD_PRIORITY_SCHEDULING:
	case _SC_THREAD_PRIO_INHERIT:
	case _SC_THREAD_PRIO_PROTECT:
	case _SC_THREAD_PROCESS_SHARED:
	case _SC_TIMERS:
	case _SC_CPUTIME:
	case _SC_THREAD_CPUTIME:
		return -1;
	default:
		errno = EINVAL;
		return -1;
	}
}

/* The one process: POSIX gives the first process id 1 on most systems, and programs only print
 * it or seed with it. */
pid_t getpid(void)
{
	return RT_PROCESS_ID;
}

pid_t getppid(void)
{
	return 0;
}

/* The software objects' pool (swonly.c): how many mutexes, conditions and barriers software can
 * hold at once. */
unsigned int pthread_sw_objects_max_np(void)
{
	return RT_POOL_BLOCKS;
}
