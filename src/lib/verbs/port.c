/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A device port opened for use, with its GID chosen. */
#include <string.h>

#include <rdmakit/port.h>

#include "verbs/device_int.h"

/* rk_port_open(); with cm_ok an iWARP device is taken too, without a GID. */
static int port_open(const char *device, uint8_t port_num, int gid_index, const char *local_ip,
		     bool cm_ok, struct rk_port_sel *sel_p)
{
	struct rk_gid_want want = {.index = gid_index, .ip = local_ip};
	struct rk_port_sel sel = {.port_num = port_num ? port_num : 1};
	bool iwarp;
	int ret;

	ret = rk_device_open(device, &sel.dev);
	if (ret)
		return ret;
	/* rk_port_open()'s users bring QPs up from a GID (over TCP, or to
	 * themselves). */
	iwarp = rk_device_is_iwarp(sel.dev);
	ret = cm_ok ? 0 : rk_device_check_no_cm(sel.dev, NULL);
	if (ret)
		goto err_close_dev;
	ret = rk_port_check_active(sel.dev, sel.port_num);
	if (ret)
		goto err_close_dev;
	if (!iwarp && (rk_port_is_roce(sel.dev, sel.port_num) || gid_index >= 0)) {
		ret = rk_gid_select(sel.dev, sel.port_num, &want, &sel.gid);
		if (ret)
			goto err_close_dev;
		sel.has_gid = true;
	}
	*sel_p = sel;
	return 0;

err_close_dev:
	rk_device_close(sel.dev);
	return ret;
}

int rk_port_open(const char *device, uint8_t port_num, int gid_index, const char *local_ip,
		 struct rk_port_sel *sel_p)
{
	return port_open(device, port_num, gid_index, local_ip, false, sel_p);
}

int rk_port_open_cm(const char *device, uint8_t port_num, int gid_index, struct rk_port_sel *sel_p)
{
	return port_open(device, port_num, gid_index, NULL, true, sel_p);
}

int rk_port_name_check(const char *name, uint8_t port_num, int gid_index, const char *transport,
		       const char *hint)
{
	struct rk_gid_want want = {.index = gid_index};
	struct rk_device *dev;
	int ret;

	ret = rk_device_open(name, &dev);
	if (ret)
		return ret;
	if (!port_num)
		port_num = 1;
	ret = rk_device_check_no_cm_for(dev, transport, hint);
	if (!ret)
		ret = rk_port_check_active(dev, port_num);
	/* As rk_port_open() chooses, the address the peer talks to not yet known. */
	if (!ret && (rk_port_is_roce(dev, port_num) || gid_index >= 0))
		ret = rk_gid_check(dev, port_num, &want);
	rk_device_close(dev);
	return ret;
}

void rk_port_close(struct rk_port_sel *sel)
{
	if (!sel || !sel->dev)
		return;
	rk_device_close(sel->dev);
	sel->dev = NULL;
}
