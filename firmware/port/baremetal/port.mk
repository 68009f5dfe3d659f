# The bare-metal port of the OS-agnostic library (firmware/lib/): its sources, relative to this
# directory. firmware/Makefile includes this file; soc/firmware.py reads the same lines.

# Start-up, C runtime and console of every image (crt0.S: each core's entry; linker.ld: the
# layout).
SUBUTAI_BAREMETAL_START_SRCS := crt0.S runtime.c console.c ni_baremetal.c
# The port's part of the PThreads archive: the threads (user-level, Seed 003) and their scheduler.
SUBUTAI_BAREMETAL_SRCS := thread_baremetal.c ult.c ult_switch.S
