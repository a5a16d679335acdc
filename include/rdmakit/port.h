/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: a device port opened for use: the device, a port checked to be
 * ACTIVE, and the GID chosen on it. The one device-open path of the tools
 * that do not go through RDMA CM. */
#ifndef RDMAKIT_PORT_H
#define RDMAKIT_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rdmakit/device.h>
#include <rdmakit/gid.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct rk_port_sel {
	struct rk_device *dev;
	uint8_t port_num;
	bool has_gid;             /* RoCE, or an InfiniBand port with an explicit index */
	struct rk_gid_choice gid;
};

/* Open device (NULL: the first), check port_num (0 means 1) exists and is
 * ACTIVE, and on RoCE (or when gid_index >= 0) choose the GID: gid_index
 * when >= 0, else the one carrying local_ip (NULL: none known). Errors are
 * logged. *sel_p is set only on success; rk_port_close() releases it. */
int rk_port_open(const char *device, uint8_t port_num, int gid_index, const char *local_ip,
		 struct rk_port_sel *sel_p);

/* Close what rk_port_open() opened. NULL device ignored. */
void rk_port_close(struct rk_port_sel *sel);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
