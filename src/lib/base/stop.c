/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The stop request of stop.h: one pointer, read where a wait sees EINTR. */
#include <rdmakit/stop.h>

static volatile sig_atomic_t *watched;

void rk_stop_watch(volatile sig_atomic_t *flag)
{
	watched = flag;
}

bool rk_stop_requested(void)
{
	return watched && *watched;
}
