/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what the device's async event reader (device.c)
 * learns from the SRQ code (srq.c) without calling it; a device of a context
 * opened elsewhere (RDMA CM, an import) and shared references to one. */
#ifndef RDMAKIT_LIB_DEVICE_INT_H
#define RDMAKIT_LIB_DEVICE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/port.h>

#pragma GCC visibility push(hidden)

/* Whether srq is a live rk_srq; if so its receives posted and limit
 * (srq.c's srq_async_event()). */
typedef bool (*device_srq_event_fn)(struct ibv_srq *srq, enum ibv_event_type type,
				    uint32_t *posted_p, uint32_t *limit_p);

/* srq.c sets it with its first SRQ; until then an SRQ event names no SRQ,
 * as none of ours exists. */
void device_srq_event_hook(device_srq_event_fn fn);

/* Wrap a context opened elsewhere (for example cm_id->verbs of RDMA CM) and
 * query it and its ports; rk_device_close() then leaves the context open. */
int rk_device_wrap(struct ibv_context *ctx, struct rk_device **dev_p);

/* Another reference to dev (for connections sharing one device, such as a
 * server's RDMA CM clients: one async event logger for them all). Returns
 * dev; each reference is dropped by rk_device_close(). Thread-safe. */
struct rk_device *rk_device_ref(struct rk_device *dev);

/* For a QP brought up without RDMA CM (a GID swapped over TCP, the QP state
 * walk, processes sharing a device): 0, or on iWARP -EPROTONOSUPPORT, logged
 * as "siw0 is an iWARP device: its QPs connect only through RDMA CM; HINT",
 * hint being what the caller can do instead ("use --cm"; NULL: "this
 * command brings them up without it"). */
int rk_device_check_no_cm(const struct rk_device *dev, const char *hint);

/* The same for the device called name (NULL: the first), opened and closed
 * again: for a check before listening or connecting. transport ("RC", "UD",
 * "UC"; NULL: RC) names the QPs wanted: UD and UC on iWARP are refused as
 * "siw0 is an iWARP device: it has only RC QPs, no UD" (-EOPNOTSUPP). */
int rk_device_name_check_no_cm(const char *name, const char *transport, const char *hint);

/* The same on dev, open. */
int rk_device_check_no_cm_for(const struct rk_device *dev, const char *transport,
			      const char *hint);

/* (port.c) rk_port_open() for a caller that connects an iWARP device's QPs
 * through RDMA CM itself: such a device is taken (port ACTIVE, no GID chosen,
 * whatever gid_index says), where rk_port_open() refuses it. */
int rk_port_open_cm(const char *device, uint8_t port_num, int gid_index, struct rk_port_sel *sel_p);

/* (port.c) The same check, and then what rk_port_open() will need once the peer is
 * known: port_num (0: 1) ACTIVE and, on RoCE or with gid_index >= 0, a GID
 * to choose. For a server or client without RDMA CM, before it listens or
 * connects: a host without a (usable) device fails at once, by the device's
 * name, not after waiting for a peer. Errors logged; hint as there. */
int rk_port_name_check(const char *name, uint8_t port_num, int gid_index, const char *transport,
		       const char *hint);

/* (gid.c) rk_gid_select() without telling the choice: whether a GID fits want
 * (errors logged, as rk_gid_select() logs them). */
int rk_gid_check(struct rk_device *dev, uint8_t port_num, const struct rk_gid_want *want);

#pragma GCC visibility pop

#endif
