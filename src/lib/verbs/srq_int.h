/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: the engines' refusal of --xrc (srq.c). */
#ifndef RDMAKIT_LIB_SRQ_INT_H
#define RDMAKIT_LIB_SRQ_INT_H


#pragma GCC visibility push(hidden)

/* For an engine asked for XRC (--xrc): open device name (NULL: the first)
 * and refuse, logged once: -EOPNOTSUPP naming the device when it lacks XRC
 * (rk_srq_xrc_check()), and -EOPNOTSUPP too where it has XRC (rdmakit does
 * not implement XRC QPs); or the open's error. Never 0 today. */
int rk_srq_xrc_refuse(const char *what, const char *device);

#pragma GCC visibility pop

#endif
