/*
 * <unistd.h> for Zephyr's minimal C library, which has none (Zephyr's own is part of its POSIX
 * layer, which this module does not use): the sleeping calls of the project's PThreads library.
 */
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

/* The calling thread sleeps; the core's other threads run. */
unsigned int sleep(unsigned int seconds);
int usleep(useconds_t usec);

#ifdef __cplusplus
}
#endif

#endif /* SUBUTAI_ZEPHYR_UNISTD_H */
