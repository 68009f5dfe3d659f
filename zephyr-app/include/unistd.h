/*
 * <unistd.h>. With the toolchain's picolibc (a program of one's own, apps/program) it is
 * picolibc's, which declares every call below. Zephyr's minimal C library has none (Zephyr's own
 * is part of its POSIX layer, which this module does not use): this one declares what the
 * project's PThreads library provides, sysconf() with picolibc's numbers of its names.
 */
#ifdef CONFIG_PICOLIBC
#include_next <unistd.h>
#else

#ifndef SUBUTAI_ZEPHYR_UNISTD_H
#define SUBUTAI_ZEPHYR_UNISTD_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(__useconds_t_defined)
#define __useconds_t_defined
typedef unsigned long useconds_t;
#endif
#if !defined(__pid_t_defined)
#define __pid_t_defined
typedef int pid_t;
#endif

/* The calling thread sleeps; the core's other threads run. */
unsigned int sleep(unsigned int seconds);
int usleep(useconds_t usec);

/* The process: the one program on all cores (firmware/lib/pthread/sysconf.c). */
pid_t getpid(void);
pid_t getppid(void);
long sysconf(int name);

/* The names sysconf() knows (picolibc's numbers, sys/unistd.h). */
#define _SC_ARG_MAX                      0
#define _SC_CHILD_MAX                    1
#define _SC_CLK_TCK                      2
#define _SC_OPEN_MAX                     4
#define _SC_VERSION                      7
#define _SC_PAGESIZE                     8
#define _SC_PAGE_SIZE                    _SC_PAGESIZE
#define _SC_NPROCESSORS_CONF             9
#define _SC_NPROCESSORS_ONLN             10
#define _SC_PHYS_PAGES                   11
#define _SC_AVPHYS_PAGES                 12
#define _SC_SEM_VALUE_MAX                17
#define _SC_SEMAPHORES                   30
#define _SC_TIMERS                       33
#define _SC_THREAD_KEYS_MAX              38
#define _SC_THREAD_STACK_MIN             39
#define _SC_THREAD_THREADS_MAX           40
#define _SC_THREADS                      42
#define _SC_THREAD_ATTR_STACKADDR        43
#define _SC_THREAD_ATTR_STACKSIZE        44
#define _SC_THREAD_PRIORITY_SCHEDULING   45
#define _SC_THREAD_PRIO_INHERIT          46
#define _SC_THREAD_PRIO_PROTECT          47
#define _SC_THREAD_PROCESS_SHARED        48
#define _SC_THREAD_SAFE_FUNCTIONS        49
#define _SC_THREAD_DESTRUCTOR_ITERATIONS 53
#define _SC_BARRIERS                     56
#define _SC_CLOCK_SELECTION              61
#define _SC_CPUTIME                      63
#define _SC_MONOTONIC_CLOCK              69
#define _SC_READER_WRITER_LOCKS          71
#define _SC_SPIN_LOCKS                   76
#define _SC_THREAD_CPUTIME               80
#define _SC_TIMEOUTS                     82

#ifdef __cplusplus
}
#endif

#endif /* SUBUTAI_ZEPHYR_UNISTD_H */
#endif /* CONFIG_PICOLIBC */
