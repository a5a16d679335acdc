/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A port's link: active speed and width, decoded as ibv_devinfo does, and the
 * nominal rate, with a word where that rate is not a real link's. */
#include <stddef.h>

#include <rdmakit/device.h>

/* Vendor IDs of the software devices (drivers/infiniband/sw). */

static const struct {
	uint32_t speed; /* the IBTA encoding active_speed(_ex) uses */
	const char *name;
	double lane_gbps;
} speeds[] = {
	{1, "SDR", 2.5},    {2, "DDR", 5.0},   {4, "QDR", 10.0},   {8, "FDR10", 10.0},
	{16, "FDR", 14.0},  {32, "EDR", 25.0}, {64, "HDR", 50.0},  {128, "NDR", 100.0},
	{256, "XDR", 200.0},
};

double rk_speed_lane_gbps(uint32_t speed, const char **name_p)
{
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (speeds[i].speed == speed) {
			if (name_p)
				*name_p = speeds[i].name;
			return speeds[i].lane_gbps;
		}
	if (name_p)
		*name_p = "unknown";
	return 0;
}

int rk_width_lanes(uint8_t width)
{
	switch (width) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	}
	return 0;
}

static const char *emulated_note(const struct rk_device_info *di)
{
	if (di->vendor_id == RK_VENDOR_ID_RXE)
		return "emulated device (Soft-RoCE): a nominal figure rxe derives from its "
		       "netdev's speed, not a link rate to grade against";
	if (di->vendor_id == RK_VENDOR_ID_SIW)
		return "emulated device (Soft-iWARP): a nominal figure siw derives from its "
		       "netdev's speed, not a link rate to grade against";
	return NULL;
}

int rk_port_link_rate(const struct rk_device *dev, uint8_t port_num, struct rk_link_rate *rate_p)
{
	const struct rk_port_info *pi = rk_device_port(dev, port_num);
	struct rk_link_rate r = {.note = ""};
	const char *emulated;

	if (!pi)
		return rk_port_check(dev, port_num);
	r.speed = pi->active_speed_ex;
	r.width = pi->active_width;
	r.lane_gbps = rk_speed_lane_gbps(r.speed, &r.speed_name);
	r.lanes = rk_width_lanes(r.width);
	r.gbps = r.lane_gbps * r.lanes;
	emulated = emulated_note(&dev->info);
	if (pi->state != IBV_PORT_ACTIVE)
		r.note = "the port is not ACTIVE: no link to rate";
	else if (!r.gbps)
		r.note = "the device reports a speed or width this rdmakit does not know";
	else if (emulated)
		r.note = emulated;
	else
		r.meaningful = true;
	*rate_p = r;
	return 0;
}
