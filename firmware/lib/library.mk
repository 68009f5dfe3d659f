# The OS-agnostic C library shared by the bare-metal firmware and the Zephyr module: the one list
# of its sources, relative to firmware/lib/. firmware/Makefile includes this file;
# zephyr-app/CMakeLists.txt reads the same lines (so each list stays on one line). Each side adds
# its OS port (bare metal: firmware/port/baremetal/, port.mk; Zephyr: zephyr-app/) and the
# backend, pthread/backend_<BACKEND>.c.

# NoC messages and the Subutai driver.
SUBUTAI_DRIVER_SRCS  := ni.c sync.c
# The PThreads library (common part).
SUBUTAI_PTHREAD_SRCS := pthread/thread.c pthread/mutex.c pthread/cond.c pthread/barrier.c pthread/swonly.c pthread/once_key.c pthread/clock.c pthread/cancel.c pthread/cancel_request.c pthread/rwlock.c pthread/spin.c pthread/semaphore.c pthread/sysconf.c pthread/sched_attr.c
# Channels (include/subutai/chan.h): the common part and the parts two implementations share
# (each empty in the other implementations' builds); the implementation, chan/chan_<CHAN>.c, is
# chosen when the library is built.
SUBUTAI_CHAN_SRCS    := chan/chan.c chan/port_ends.c chan/mem_ends.c
