/*
 * The program's arguments, compiled into the image (there is no loader to pass them): the words
 * of the build's command line (firmware/Makefile's ARGS, PROGRAM_ARGS of zephyr-app/apps/program)
 * split as a POSIX shell splits them, by firmware/lib/program_args.py. The runtime puts the
 * program's name before them (and the benchmark harness, for the project's own benchmark
 * programs, "-t <tiles>") to make main's argv.
 */
#ifndef SUBUTAI_ARGS_H
#define SUBUTAI_ARGS_H

/* Words at most (the generated source asserts it). */
#define SUBUTAI_PROGRAM_ARGS_MAX 64

/* Number of words, and the words (writable, as a hosted main's) followed by a null pointer. */
extern const unsigned int subutai_program_argc;
extern char *const subutai_program_args[];

#endif /* SUBUTAI_ARGS_H */
