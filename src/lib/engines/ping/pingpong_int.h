/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what the ibv_*_pingpong engines (pingpong.c, and
 * ibv_srq_pingpong's in pingpong_srq.c) share. */
#ifndef RDMAKIT_LIB_PINGPONG_INT_H
#define RDMAKIT_LIB_PINGPONG_INT_H

#include <rdmakit/ctl.h>
#include <rdmakit/pingpong.h>
#include <rdmakit/port.h>

#include "engines/ping/ping_int.h"

#pragma GCC visibility push(hidden)

/* The TCP connection of the exchange: connect, or listen (*listen_fd_p)
 * and accept. */
int pp_tcp(const struct ping_run *r, int *listen_fd_p, struct rk_ctl **ctl_p);

/* Open the device's port for the peer on ctl, start the run's counters,
 * and note the device, GID and LID in the result. */
int pp_port_open(const struct ping_run *r, const struct rk_ctl *ctl, struct rk_port_sel *d);

/* What both engines hold besides their QPs and buffers, released. */
void pp_close_base(struct rk_cq *cq, struct ibv_pd *pd, struct rk_port_sel *d, struct rk_ctl *ctl,
		   int listen_fd);

/* Server: the client's "done" that ends the exchange, or an error logged. */
int pp_recv_done(const struct ping_run *r, struct rk_ctl *ctl);

/* The exchange's I/O failed: logged, ret returned. */
int pp_io_error(const struct ping_run *r, int ret);

/* Receive and parse one address message of the peer into *dest. */
int pp_recv_dest(const struct ping_run *r, struct rk_ctl *ctl, struct rk_pp_dest *dest);

/* Connect qp (in INIT) to remote: RC/UC to RTR and RTS at mtu; UD an
 * address handle into *ah_p. A RoCE peer without a GID is refused. */
int pp_connect_qp(const struct ping_run *r, const struct rk_port_sel *d, struct rk_qp *qp,
		  const struct rk_pp_dest *remote, enum ibv_mtu mtu, struct ibv_ah **ah_p);

/* A ping: a pattern, the first byte of every page 0 (ibv_*_pingpong -c). */
void pp_fill(uint8_t *buf, uint32_t size);

/* ibv_srq_pingpong (opts->srq_qps): the run after the options were checked. */
int pp_srq_run(struct ping_run *r, enum ibv_mtu mtu);

#pragma GCC visibility pop

#endif
