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
	int gid_tbl_len;
	uint16_t pkey_tbl_len;
};

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
};

struct rk_async_logger;

struct rk_device {
	struct ibv_context *ctx;
	bool owns_ctx; /* false for a context opened by someone else (RDMA CM) */
	struct rk_async_logger *logger; /* see rk_async_log_start() */
	struct rk_device_info info;
	struct rk_port_info *ports; /* ports[i] is port i + 1 */
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

/* Wrap a context opened elsewhere (for example cm_id->verbs of RDMA CM) and
 * query it and its ports; rk_device_close() then leaves the context open. */
int rk_device_wrap(struct ibv_context *ctx, struct rk_device **dev_p);

/* Close a device opened by rk_device_open(). NULL is ignored. */
void rk_device_close(struct rk_device *dev);

/* Re-query one port (its state can change at run time) into dev->ports and *info_p. */
int rk_port_refresh(struct rk_device *dev, uint8_t port_num, struct rk_port_info *info_p);

/* Check that port_num exists and is ACTIVE; log what to do when not
 * (-EINVAL no such port, -ENETDOWN not active). */
int rk_port_check_active(const struct rk_device *dev, uint8_t port_num);

/* The port record for port_num, or NULL when the device has no such port. */
const struct rk_port_info *rk_device_port(const struct rk_device *dev, uint8_t port_num);

/* True when port_num uses Ethernet (RoCE): addressing needs a GRH and GID. */
bool rk_port_is_roce(const struct rk_device *dev, uint8_t port_num);

/* One asynchronous event, copied out of the device's event queue. */
struct rk_async_event {
	enum ibv_event_type type;
	bool has_qp;       /* QP events: qp_num is valid */
	uint32_t qp_num;
	bool has_port;     /* port events: port_num is valid */
	uint8_t port_num;
};

/* Wait up to timeout_ms (-1: forever) for the device's next asynchronous
 * event (port up/down, QP fatal, SQ drained, GID change, ...); it is
 * acknowledged before return. -ETIMEDOUT when none came. Names and hints:
 * rk_async_event_name(), rk_async_event_hint(). */
int rk_async_event_wait(struct rk_device *dev, int timeout_ms, struct rk_async_event *ev_p);

/* Start a thread that logs each asynchronous event of dev as it comes, with
 * its name and hint (errors such as IBV_EVENT_PORT_ERR and QP_FATAL as
 * errors, the rest as info). rk_device_close() stops it. Do not combine with
 * rk_async_event_wait() on the same device. */
int rk_async_log_start(struct rk_device *dev);

/* Names of enum values, for printing. Never NULL. */
const char *rk_port_state_str(enum ibv_port_state state);
const char *rk_link_layer_str(uint8_t link_layer);
const char *rk_atomic_cap_str(enum ibv_atomic_cap cap);

/* Path MTU in bytes (IBV_MTU_1024 -> 1024), 0 when out of range. */
int rk_mtu_bytes(enum ibv_mtu mtu);

/* Byte count -> enum ibv_mtu; 0 when it is not 256, 512, 1024, 2048 or 4096. */
enum ibv_mtu rk_mtu_from_bytes(int bytes);

#ifdef __cplusplus
}
#endif
#endif
