/*
 * swonly backend: every synchronization object is implemented in software (swonly.c).
 */
#include "rt.h"

const bool rt_backend_hw SUBUTAI_TIMED_CONST = false;

const char pthread_backend_np[] = "swonly";
