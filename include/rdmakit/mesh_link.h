/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: one measured link of rdmakit-mesh, without MPI.
 *
 * A rank opens its port once (rk_mesh_port_open(): device, GID, one PD and
 * one MR for every link), then per peer and round makes a link (a CQ and an
 * RC QP), hands its rk_mesh_info to the peer by whatever carries control
 * messages (MPI in rdmakit-mesh), connects with the peer's, measures, and
 * destroys the link: a rank holds only the links of its current round.
 *
 * The MR: [0, size) the bandwidth source, [size, 2 size) where peers write,
 * then a small area for the checked messages and the ping-pong.
 */
#ifndef RDMAKIT_MESH_LINK_H
#define RDMAKIT_MESH_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmakit/cq.h>
#include <rdmakit/mem.h>
#include <rdmakit/traffic.h>
#include <rdmakit/port.h>
#include <rdmakit/qp.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct rk_mesh_port {
	struct rk_port_sel sel;
	struct ibv_pd *pd;
	struct rk_mr *mr;
	size_t size; /* bandwidth message size */
	bool events; /* links' CQs sleep on a completion channel instead of spinning */
	uint8_t qp_timeout; /* RC local ACK timeout (4.096 us * 2^n); 0: rk_path_defaults() */
	struct rk_traffic traffic; /* class, SL, flow label, hop limit of every link */
};

/* What a link tells its peer: plain data, sent as bytes. */
struct rk_mesh_info {
	struct rk_endpoint ep;
	uint64_t addr; /* where the peer writes: our [size, 2 size) */
	uint32_t rkey;
	int32_t error; /* 0, or the negative errno that left us without a QP */
};

struct rk_mesh_link {
	struct rk_mesh_port *port;
	struct rk_cq *cq;
	struct rk_qp *qp;
	struct rk_mesh_info remote;
	bool connected;
	/* private: a completion polled while waiting for the other kind */
	bool stashed[2];
	struct ibv_wc stash[2];
};

/* Open device (NULL: the first) port port_num (0: 1), GID gid_index (-1:
 * chosen), and register an MR for bandwidth messages of size bytes (>= 1).
 * events: the links' CQs sleep on a completion channel (for ranks sharing
 * few cores) instead of spinning (the default: latency as the device gives
 * it). Errors logged; *port_p set only on success. */
int rk_mesh_port_open(const char *device, uint8_t port_num, int gid_index, size_t size,
		      bool events, struct rk_mesh_port **port_p);
void rk_mesh_port_close(struct rk_mesh_port *port);

/* A new link in RESET and its info for the peer. */
int rk_mesh_link_create(struct rk_mesh_port *port, struct rk_mesh_link **link_p,
			struct rk_mesh_info *local_p);
/* Connect (INIT, RTR, RTS) to the peer's info; a receive for the first
 * message is posted first. Errors logged, a sentence in why. */
int rk_mesh_link_connect(struct rk_mesh_link *link, const struct rk_mesh_info *remote, char *why,
			 size_t why_len);
/* NULL is ignored. */
void rk_mesh_link_destroy(struct rk_mesh_link *link);

/* Reachability: send one checked message naming src, dst and nonce, and
 * wait for its completion. Failure: the completion status name or the
 * timeout in why. */
int rk_mesh_reach_send(struct rk_mesh_link *link, int src, int dst, uint32_t nonce,
		       int timeout_ms, char *why, size_t why_len);
/* Wait for the peer's checked message (src -> dst, nonce) on the receive
 * connect posted, and check every byte of it. -EBADMSG for a wrong one. */
int rk_mesh_reach_recv(struct rk_mesh_link *link, int src, int dst, uint32_t nonce,
		       int timeout_ms, char *why, size_t why_len);

/* SEND/RECV ping-pong of small messages, iters round trips; the initiator
 * writes each half round trip in microseconds into samples_us[iters]. Both
 * sides call it (a receive was posted by connect). */
int rk_mesh_pingpong(struct rk_mesh_link *link, bool initiator, int iters, int timeout_ms,
		     double *samples_us, char *why, size_t why_len);

/* iters RDMA WRITEs of the port's size into the peer, window outstanding
 * (1 .. 64); *mbps_p the rate from the first post to the last completion,
 * in MB/s (10^6 bytes). The peer only keeps its link open meanwhile. */
int rk_mesh_write_bw(struct rk_mesh_link *link, int iters, int window, int timeout_ms,
		     double *mbps_p, char *why, size_t why_len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
