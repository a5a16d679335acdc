/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: devices and ports.
 *
 * An rk_device is an opened verbs context together with what was learned by
 * querying it once: device attributes (including the extended ones such as
 * device memory size) and every port.
 */
#ifndef RDMAKIT_DEVICE_H
#define RDMAKIT_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct rk_port_info {
	uint8_t port_num;
	enum ibv_port_state state;
	uint8_t link_layer; /* IBV_LINK_LAYER_INFINIBAND or _ETHERNET */
	enum ibv_mtu active_mtu;
	enum ibv_mtu max_mtu;
	uint16_t lid; /* 0 on RoCE */
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t active_width;
	uint8_t active_speed;
	uint32_t active_speed_ex; /* active_speed with the extended speeds (XDR and later)
				     where libibverbs reports them, else active_speed */
	int gid_tbl_len;
	uint16_t pkey_tbl_len;
};

/* Vendor IDs of the emulated devices: Soft-RoCE (rxe) and Soft-iWARP (siw). */
#define RK_VENDOR_ID_RXE 0xffffff
#define RK_VENDOR_ID_SIW 0x626d74

struct rk_device_info {
	char name[64];
	uint64_t node_guid; /* host byte order */
	uint64_t sys_image_guid;
	char fw_ver[64];
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	enum ibv_transport_type transport;
	uint8_t phys_port_cnt;
	int max_qp;
	int max_qp_wr;
	int max_sge;
	int max_cqe;
	int max_mr;
	uint64_t max_mr_size;
	int max_pd;
	int max_qp_rd_atom;
	int max_qp_init_rd_atom;
	enum ibv_atomic_cap atomic_cap;
	uint64_t device_cap_flags; /* ibv_device_attr_ex.device_cap_flags_ex */
	uint64_t max_dm_size;      /* 0: the device has no on-chip memory */
	uint32_t odp_caps;         /* ibv_odp_caps.general_caps */
	uint32_t odp_rc_caps;      /* ibv_odp_caps.per_transport_caps.rc_odp_caps */
	uint32_t odp_ud_caps;      /* ... ud_odp_caps */
};

struct rk_async_logger;

struct rk_device {
	struct ibv_context *ctx;
	bool owns_ctx; /* false for a context opened by someone else (RDMA CM) */
	struct rk_async_logger *logger; /* see rk_async_log_start() */
	struct rk_device_info info;
	struct rk_port_info *ports; /* ports[i] is port i + 1 */
	int refs; /* references beyond the first (connections sharing it), atomic */
};

/* Names of all verbs devices, in the order libibverbs lists them.
 * *names_p is a NULL-terminated array; free it with rk_device_names_free(). */
int rk_device_names(char ***names_p, int *count_p);

/* Free what rk_device_names() returned. */
void rk_device_names_free(char **names);

/* Open the device called name, or the first one when name is NULL, and query
 * it and all of its ports. -ENODEV (logged, with the names that exist) when
 * there is no such device. */
int rk_device_open(const char *name, struct rk_device **dev_p);

/* Close a device opened by rk_device_open(), or drop one reference to a
 * device the library shares between connections: the last one closes it
 * (a context the library did not open stays open). NULL is ignored. */
void rk_device_close(struct rk_device *dev);

/* Re-query one port (its state can change at run time) into dev->ports and *info_p. */
int rk_port_refresh(struct rk_device *dev, uint8_t port_num, struct rk_port_info *info_p);

/* Check that port_num exists: -EINVAL, logged with the ports there are, when not. */
int rk_port_check(const struct rk_device *dev, uint8_t port_num);

/* Check that port_num exists and is ACTIVE; log what to do when not
 * (-EINVAL no such port, -ENETDOWN not active). */
int rk_port_check_active(const struct rk_device *dev, uint8_t port_num);

/* The port record for port_num, or NULL when the device has no such port. */
const struct rk_port_info *rk_device_port(const struct rk_device *dev, uint8_t port_num);

/* True when port_num is RoCE (Ethernet, not iWARP): addressing needs a GRH and GID. */
bool rk_port_is_roce(const struct rk_device *dev, uint8_t port_num);

/* True when dev is an iWARP RNIC (transport IBV_TRANSPORT_IWARP: siw, irdma in
 * iWARP mode, cxgb4): its RC QPs connect only through RDMA CM, which carries no
 * GID; it has no UD or UC QPs, no immediate data, and usually no atomics. */
bool rk_device_is_iwarp(const struct rk_device *dev);

/* One asynchronous event, copied out of the device's event queue. */
struct rk_async_event {
	enum ibv_event_type type;
	bool has_qp;       /* QP events: qp_num is valid */
	uint32_t qp_num;
	bool has_port;     /* port events: port_num is valid */
	uint8_t port_num;
	bool has_srq;      /* SRQ events of an rk_srq (srq.h): the two below are valid */
	uint32_t srq_posted; /* receives it had posted (its own count) when the event came */
	uint32_t srq_limit;  /* the limit that was armed (0: none) */
};

/* Wait up to timeout_ms (-1: forever) for the device's next asynchronous
 * event (port up/down, QP fatal, SQ drained, GID change, ...); it is
 * acknowledged before return. -ETIMEDOUT when none came. Names and hints:
 * rk_async_event_name(), rk_async_event_hint(). */
int rk_async_event_wait(struct rk_device *dev, int timeout_ms, struct rk_async_event *ev_p);

/* Start a thread that logs each asynchronous event of dev as it comes, with
 * its name and hint (errors such as IBV_EVENT_PORT_ERR and QP_FATAL as
 * errors, the rest as info). rk_device_close() stops it. Do not combine with
 * rk_async_event_wait() on the same device. 0 (also when it runs already:
 * one per device) or a negative errno. */
int rk_async_log_start(struct rk_device *dev);

/* Whether that thread saw IBV_EVENT_PORT_ERR on port_num and no
 * IBV_EVENT_PORT_ACTIVE since; false when it does not run. */
bool rk_device_port_down(const struct rk_device *dev, uint8_t port_num);

/* Names of enum values, for printing. Never NULL. */
const char *rk_port_state_str(enum ibv_port_state state);
const char *rk_link_layer_str(uint8_t link_layer);
const char *rk_atomic_cap_str(enum ibv_atomic_cap cap);

/* A port's link as ibv_query_port() reports it: active speed and width decoded as
 * ibv_devinfo does, and the nominal signalling rate (lanes x per-lane speed, as
 * ibstat's "Rate"). */
struct rk_link_rate {
	uint32_t speed;         /* active_speed_ex: IBV_SPEED_SDR (1) .. 256 (XDR) */
	uint8_t width;          /* active_width: 1 (1X), 2 (4X), 4 (8X), 8 (12X), 16 (2X) */
	const char *speed_name; /* "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR",
				   "XDR"; "unknown" */
	double lane_gbps;       /* per lane: 2.5 .. 200; 0 when the speed is unknown */
	int lanes;              /* 1, 2, 4, 8 or 12; 0 when the width is unknown */
	double gbps;            /* lanes * lane_gbps; 0 when either is unknown */
	bool meaningful;        /* a real, active link: a result may be graded against it */
	const char *note;       /* when !meaningful, why ("" otherwise) */
};

/* Per-lane speed in Gb/s of an active_speed value (0: unknown); *name_p (may be
 * NULL) gets its name or "unknown". */
double rk_speed_lane_gbps(uint32_t speed, const char **name_p);

/* Lanes of an active_width value, 0 when unknown. */
int rk_width_lanes(uint8_t width);

/* The link rate of port port_num of dev (as last queried: rk_port_refresh() to
 * re-query). Not meaningful, with a note saying why, when the port is not
 * ACTIVE, the speed or width is unknown, or the device is emulated (Soft-RoCE
 * and Soft-iWARP take a nominal figure from their netdev). -EINVAL (logged) when
 * there is no such port. */
int rk_port_link_rate(const struct rk_device *dev, uint8_t port_num, struct rk_link_rate *rate_p);

/* Path MTU in bytes (IBV_MTU_1024 -> 1024), 0 when out of range. */
int rk_mtu_bytes(enum ibv_mtu mtu);

/* Byte count -> enum ibv_mtu; 0 when it is not 256, 512, 1024, 2048 or 4096. */
enum ibv_mtu rk_mtu_from_bytes(int bytes);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
