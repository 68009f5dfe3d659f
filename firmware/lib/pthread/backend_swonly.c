/*
 * swonly backend: every synchronization object is implemented in software (swonly.c).
 */
#include "rt.h"

const struct rt_hw_ops *const rt_hw = NULL;

const char pthread_backend_np[] = "swonly";
