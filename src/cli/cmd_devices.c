/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit devices: what ibv_devinfo, show_gids and the device memory size
 * tell, in one view. One JSON document is built; --json prints it, the text
 * view is rendered from it, so the two cannot disagree. */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

struct devices_opts {
	const char *device;
	bool json;
};

static const char usage_text[] = "rdmakit devices [-d DEV] [--json]";
static const char description[] =
	"Show RDMA devices: node GUID, firmware, limits, atomic capability, device memory\n"
	"size, and per port the state, link layer, MTU, LID, the link's active speed and\n"
	"width and its rate in Gb/s (said when it is not a real link's: a port not ACTIVE,\n"
	"an emulated device), and the GID table with each entry's type (IB, RoCE v1,\n"
	"RoCE v2), IP address and netdev, and which GID rdmakit would choose by itself.";

static void guid_str(uint64_t guid, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned int)(guid >> 48) & 0xffff,
		 (unsigned int)(guid >> 32) & 0xffff, (unsigned int)(guid >> 16) & 0xffff,
		 (unsigned int)guid & 0xffff);
}

static json_object *gid_json(const struct rk_gid_entry *e)
{
	json_object *g = json_object_new_object();
	char text[64], ifname[IF_NAMESIZE] = "";

	cli_add_int(g, "index", e->index);
	cli_add_str(g, "gid", rk_gid_str(&e->gid, text, sizeof(text)));
	cli_add_str(g, "type", rk_gid_type_str(e->type));
	json_object_object_add(g, "ip", e->ip[0] ? json_object_new_string(e->ip) : NULL);
	if (e->ndev_ifindex && !if_indextoname(e->ndev_ifindex, ifname))
		snprintf(ifname, sizeof(ifname), "ifindex %u", e->ndev_ifindex);
	json_object_object_add(g, "netdev", ifname[0] ? json_object_new_string(ifname) : NULL);
	return g;
}

static json_object *link_json(const struct rk_link_rate *r)
{
	json_object *l = json_object_new_object();
	char width[8];

	snprintf(width, sizeof(width), "%dX", r->lanes);
	cli_add_int(l, "active_speed", r->speed);
	cli_add_str(l, "speed", r->speed_name);
	cli_add_double(l, "lane_gbps", r->lane_gbps);
	cli_add_int(l, "active_width", r->width);
	json_object_object_add(l, "width", r->lanes ? json_object_new_string(width) : NULL);
	cli_add_double(l, "rate_gbps", r->gbps);
	cli_add_bool(l, "rate_meaningful", r->meaningful);
	json_object_object_add(l, "note", r->meaningful ? NULL : json_object_new_string(r->note));
	return l;
}

static int port_json(struct rk_device *dev, const struct rk_port_info *pi, json_object **out)
{
	json_object *p = json_object_new_object(), *gids = json_object_new_array();
	struct rk_link_rate rate;
	struct rk_gid_table *t;
	struct rk_gid_choice c;
	int ret;

	cli_add_int(p, "port", pi->port_num);
	cli_add_str(p, "state", rk_port_state_str(pi->state));
	cli_add_str(p, "link_layer", rk_link_layer_str(pi->link_layer));
	cli_add_int(p, "active_mtu", rk_mtu_bytes(pi->active_mtu));
	cli_add_int(p, "max_mtu", rk_mtu_bytes(pi->max_mtu));
	cli_add_int(p, "lid", pi->lid);
	cli_add_int(p, "sm_lid", pi->sm_lid);
	cli_add_int(p, "gid_table_size", pi->gid_tbl_len);
	ret = rk_port_link_rate(dev, pi->port_num, &rate);
	if (ret) {
		json_object_put(gids);
		json_object_put(p);
		return ret;
	}
	json_object_object_add(p, "link", link_json(&rate));
	ret = rk_gid_table_read(dev, pi->port_num, &t);
	if (ret) {
		json_object_put(gids);
		json_object_put(p);
		return ret;
	}
	for (int i = 0; i < t->count; i++)
		json_object_array_add(gids, gid_json(&t->entries[i]));
	json_object_object_add(p, "gids", gids);
	if (!rk_gid_choose(t, NULL, &c)) {
		json_object *ch = json_object_new_object();

		cli_add_int(ch, "index", c.index);
		cli_add_str(ch, "type", rk_gid_type_str(c.type));
		cli_add_str(ch, "why", c.why);
		json_object_object_add(p, "default_gid", ch);
	} else {
		json_object_object_add(p, "default_gid", NULL);
	}
	rk_gid_table_free(t);
	*out = p;
	return 0;
}

static int device_json(const char *name, json_object **out)
{
	struct rk_device *dev;
	const struct rk_device_info *di;
	json_object *d, *ports;
	char guid[32];
	int ret;

	ret = rk_device_open(name, &dev);
	if (ret)
		return ret;
	di = &dev->info;
	d = json_object_new_object();
	cli_add_str(d, "name", di->name);
	guid_str(di->node_guid, guid, sizeof(guid));
	cli_add_str(d, "node_guid", guid);
	guid_str(di->sys_image_guid, guid, sizeof(guid));
	cli_add_str(d, "sys_image_guid", guid);
	cli_add_str(d, "fw_ver", di->fw_ver);
	cli_add_int(d, "vendor_id", di->vendor_id);
	cli_add_int(d, "vendor_part_id", di->vendor_part_id);
	cli_add_int(d, "hw_ver", di->hw_ver);
	cli_add_int(d, "max_dm_size", (int64_t)di->max_dm_size);
	cli_add_bool(d, "device_memory", di->max_dm_size > 0);
	cli_add_str(d, "atomic_cap", rk_atomic_cap_str(di->atomic_cap));
	cli_add_str(d, "transport", rk_device_is_iwarp(dev) ? "iWARP" : "IB");
	cli_add_int(d, "max_qp", di->max_qp);
	cli_add_int(d, "max_qp_wr", di->max_qp_wr);
	cli_add_int(d, "max_sge", di->max_sge);
	cli_add_int(d, "max_cqe", di->max_cqe);
	cli_add_int(d, "max_mr", di->max_mr);
	cli_add_int(d, "max_mr_size", (int64_t)di->max_mr_size);
	cli_add_int(d, "max_pd", di->max_pd);
	cli_add_int(d, "max_qp_rd_atom", di->max_qp_rd_atom);
	cli_add_int(d, "max_qp_init_rd_atom", di->max_qp_init_rd_atom);
	cli_add_bool(d, "odp", di->odp_caps != 0);
	ports = json_object_new_array();
	json_object_object_add(d, "ports", ports);
	for (int i = 0; i < di->phys_port_cnt; i++) {
		json_object *p;

		ret = port_json(dev, &dev->ports[i], &p);
		if (ret)
			goto err_put;
		json_object_array_add(ports, p);
	}
	rk_device_close(dev);
	*out = d;
	return 0;

err_put:
	json_object_put(d);
	rk_device_close(dev);
	return ret;
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !v)
		return "-";
	return json_object_get_string(v);
}

static int64_t jint(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

static json_object *jget(json_object *o, const char *k)
{
	json_object *v = NULL;

	json_object_object_get_ex(o, k, &v);
	return v;
}

static void link_text(json_object *l)
{
	json_object *note = jget(l, "note");

	printf("    link %s %s, %.1f Gb/s per lane: %.1f Gb/s%s%s\n", jstr(l, "width"),
	       jstr(l, "speed"), json_object_get_double(jget(l, "lane_gbps")),
	       json_object_get_double(jget(l, "rate_gbps")), note ? "; " : "",
	       note ? json_object_get_string(note) : "");
}

static void print_text(json_object *doc)
{
	json_object *devs = jget(doc, "devices");

	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		json_object *d = json_object_array_get_idx(devs, i);
		json_object *ports = jget(d, "ports");
		int64_t dm = jint(d, "max_dm_size");

		printf("%s\n", jstr(d, "name"));
		printf("  node GUID      %s\n  firmware       %s\n", jstr(d, "node_guid"),
		       jstr(d, "fw_ver"));
		printf("  vendor         0x%" PRIx64 " part %" PRId64 " hw %" PRId64 "\n",
		       jint(d, "vendor_id"), jint(d, "vendor_part_id"), jint(d, "hw_ver"));
		if (dm)
			printf("  device memory  %" PRId64 " bytes (max_dm_size)\n", dm);
		else
			printf("  device memory  none (max_dm_size 0)\n");
		if (!strcmp(jstr(d, "transport"), "iWARP"))
			printf("  transport      iWARP: RC QPs only, connected through RDMA CM; no "
			       "GID, no immediate data\n");
		printf("  atomics        %s\n", jstr(d, "atomic_cap"));
		printf("  limits         %" PRId64 " QPs, %" PRId64 " WRs/QP, %" PRId64
		       " SGEs, %" PRId64 " CQEs, %" PRId64 " MRs, %" PRId64
		       " outstanding READ/atomic\n",
		       jint(d, "max_qp"), jint(d, "max_qp_wr"), jint(d, "max_sge"),
		       jint(d, "max_cqe"), jint(d, "max_mr"), jint(d, "max_qp_rd_atom"));
		for (size_t j = 0; j < json_object_array_length(ports); j++) {
			json_object *p = json_object_array_get_idx(ports, j);
			json_object *gids = jget(p, "gids"), *def = jget(p, "default_gid");

			printf("  port %" PRId64 "         %s, link layer %s, MTU %" PRId64
			       " (max %" PRId64 "), LID %" PRId64 "\n",
			       jint(p, "port"), jstr(p, "state"), jstr(p, "link_layer"),
			       jint(p, "active_mtu"), jint(p, "max_mtu"), jint(p, "lid"));
			link_text(jget(p, "link"));
			printf("    %-5s %-8s %-8s %-40s %s\n", "GID", "type", "netdev", "gid", "ip");
			for (size_t k = 0; k < json_object_array_length(gids); k++) {
				json_object *g = json_object_array_get_idx(gids, k);

				printf("    %-5" PRId64 " %-8s %-8s %-40s %s\n", jint(g, "index"),
				       jstr(g, "type"), jstr(g, "netdev"), jstr(g, "gid"),
				       jstr(g, "ip"));
			}
			if (!strcmp(jstr(d, "transport"), "iWARP"))
				printf("    iWARP addresses QPs by IP through RDMA CM: no GID is "
				       "chosen\n");
			else if (def)
				printf("    chosen by default: %s\n", jstr(def, "why"));
			else
				printf("    no GID to choose by default\n");
		}
	}
}

int cmd_devices(int argc, char **argv)
{
	struct devices_opts o = {0};
	const struct cli_opt opts[] = {
		{"device", 'd', CLI_OPT_STRING, &o.device, 0, 0, "DEV", "only this device"},
		CLI_JSON_OPT(&o.json),
		CLI_OPT_END,
	};
	json_object *doc, *devs;
	char **names = NULL;
	int ret, n = 0;

	ret = cli_parse_noargs("devices", usage_text, description, opts, argc, argv);
	if (ret >= 0)
		return ret;
	if (!o.device) {
		ret = rk_device_names(&names, &n);
		if (ret)
			return cli_fail(ret);
		if (n == 0) {
			struct rk_device *dev;

			/* The library says why, with the hint for where the user is
			 * (installed, or a build tree); a device that came since is
			 * left to the next run. */
			if (!rk_device_open(NULL, &dev))
				rk_device_close(dev);
			rk_device_names_free(names);
			return cli_fail(-ENODEV);
		}
	}
	doc = json_object_new_object();
	devs = json_object_new_array();
	json_object_object_add(doc, "devices", devs);
	for (int i = 0; i < (o.device ? 1 : n); i++) {
		json_object *d;

		ret = device_json(o.device ? o.device : names[i], &d);
		if (ret)
			break;
		json_object_array_add(devs, d);
	}
	rk_device_names_free(names);
	if (ret) {
		json_object_put(doc);
		return cli_fail(ret);
	}
	if (o.json) {
		cli_json_print(doc);
	} else {
		print_text(doc);
		json_object_put(doc);
	}
	return CLI_OK;
}
