/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* GID tables: reading them, and choosing the entry both sides can use. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rdmakit/gid.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

#include "verbs/device_int.h"

static bool gid_is_v4_mapped(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(gid->raw, prefix, sizeof(prefix));
}

bool rk_gid_is_link_local(const union ibv_gid *gid)
{
	return gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80;
}

bool rk_gid_is_zero(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return !memcmp(gid->raw, zero.raw, sizeof(zero.raw));
}

const char *rk_gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	const uint8_t *r = gid->raw;

	snprintf(buf, len,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", r[0],
		 r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
		 r[14], r[15]);
	return buf;
}

int rk_gid_parse(const char *text, union ibv_gid *gid_p)
{
	union ibv_gid gid;

	if (!text || inet_pton(AF_INET6, text, gid.raw) != 1)
		return -EINVAL;
	*gid_p = gid;
	return 0;
}

const char *rk_gid_type_str(enum rk_gid_type type)
{
	switch (type) {
	case RK_GID_IB: return "IB";
	case RK_GID_ROCE_V1: return "RoCE v1";
	case RK_GID_ROCE_V2: return "RoCE v2";
	}
	return "unknown";
}

void rk_gid_entry_set_ip(struct rk_gid_entry *e)
{
	e->family = 0;
	e->ip[0] = '\0';
	if (e->type == RK_GID_IB)
		return;
	if (gid_is_v4_mapped(&e->gid)) {
		e->family = AF_INET;
		inet_ntop(AF_INET, &e->gid.raw[12], e->ip, sizeof(e->ip));
	} else {
		e->family = AF_INET6;
		inet_ntop(AF_INET6, e->gid.raw, e->ip, sizeof(e->ip));
	}
}

int rk_gid_table_new(uint8_t port_num, uint8_t link_layer, int n, struct rk_gid_table **table_p)
{
	struct rk_gid_table *t;

	if (n < 0)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->entries = calloc(n ? (size_t)n : 1, sizeof(*t->entries));
	if (!t->entries) {
		free(t);
		return -ENOMEM;
	}
	t->port_num = port_num;
	t->link_layer = link_layer;
	*table_p = t;
	return 0;
}

void rk_gid_table_free(struct rk_gid_table *table)
{
	if (!table)
		return;
	free(table->entries);
	free(table);
}

static enum rk_gid_type gid_type_from_verbs(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_ROCE_V1: return RK_GID_ROCE_V1;
	case IBV_GID_TYPE_ROCE_V2: return RK_GID_ROCE_V2;
	default: return RK_GID_IB;
	}
}

int rk_gid_table_read(struct rk_device *dev, uint8_t port_num, struct rk_gid_table **table_p)
{
	const struct rk_port_info *pi = rk_device_port(dev, port_num);
	struct ibv_gid_entry *all;
	struct rk_gid_table *t;
	size_t max = 0;
	ssize_t n;
	int ret;

	if (!pi) {
		rk_error("%s has no port %u (ports 1..%u)", dev->info.name, port_num,
			 dev->info.phys_port_cnt);
		return -EINVAL;
	}
	/* ibv_query_gid_table() returns valid entries of every port. */
	for (int i = 0; i < dev->info.phys_port_cnt; i++)
		max += (size_t)dev->ports[i].gid_tbl_len;
	all = calloc(max ? max : 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	n = ibv_query_gid_table(dev->ctx, all, max, 0);
	if (n < 0) {
		ret = (int)n;
		rk_error("read GID table of %s: %s", dev->info.name, rk_strerror(ret));
		goto err_free_all;
	}
	ret = rk_gid_table_new(port_num, pi->link_layer, (int)n, &t);
	if (ret)
		goto err_free_all;
	for (ssize_t i = 0; i < n; i++) {
		struct rk_gid_entry *e;

		if (all[i].port_num != port_num || rk_gid_is_zero(&all[i].gid))
			continue;
		e = &t->entries[t->count++];
		e->index = all[i].gid_index;
		e->type = gid_type_from_verbs(all[i].gid_type);
		e->gid = all[i].gid;
		e->ndev_ifindex = all[i].ndev_ifindex;
		rk_gid_entry_set_ip(e);
	}
	free(all);
	*table_p = t;
	return 0;

err_free_all:
	free(all);
	return ret;
}

const struct rk_gid_entry *rk_gid_table_find(const struct rk_gid_table *table, uint32_t index)
{
	for (int i = 0; i < table->count; i++)
		if (table->entries[i].index == index)
			return &table->entries[i];
	return NULL;
}

/* The preference order of rk_gid_choose(), as a key compared field by field:
 * lower is better. */
struct gid_rank {
	int type;      /* RoCE v2, then v1, then anything else */
	int address;   /* carries the wanted IP */
	int family;    /* of the wanted family */
	int linklocal; /* link-local last */
	uint32_t index;
};

static int rank_cmp(const struct gid_rank *a, const struct gid_rank *b)
{
	if (a->type != b->type)
		return a->type - b->type;
	if (a->address != b->address)
		return a->address - b->address;
	if (a->family != b->family)
		return a->family - b->family;
	if (a->linklocal != b->linklocal)
		return a->linklocal - b->linklocal;
	return a->index < b->index ? -1 : a->index > b->index;
}

static const char *family_str(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

static void set_choice(const struct rk_gid_entry *e, struct rk_gid_choice *c)
{
	memset(c, 0, sizeof(*c));
	c->index = e->index;
	c->type = e->type;
	c->gid = e->gid;
}

int rk_gid_choose(const struct rk_gid_table *table, const struct rk_gid_want *want,
		  struct rk_gid_choice *choice_p)
{
	static const struct rk_gid_want no_want = {.index = -1};
	const struct rk_gid_entry *best = NULL;
	struct gid_rank best_rank = {0};
	struct rk_gid_choice c;
	union ibv_gid want_gid;
	int family = AF_INET;
	bool have_ip = false;

	if (!want)
		want = &no_want;

	if (want->index >= 0) {
		const struct rk_gid_entry *e = rk_gid_table_find(table, (uint32_t)want->index);

		if (!e)
			return -ENOENT;
		set_choice(e, &c);
		snprintf(c.why, sizeof(c.why), "index %u was asked for explicitly (%s%s%s)",
			 e->index, rk_gid_type_str(e->type), e->ip[0] ? " " : "", e->ip);
		*choice_p = c;
		return 0;
	}

	if (table->link_layer != IBV_LINK_LAYER_ETHERNET) {
		const struct rk_gid_entry *e = rk_gid_table_find(table, 0);

		if (!e)
			return -ENOENT;
		set_choice(e, &c);
		snprintf(c.why, sizeof(c.why),
			 "index 0, the port GID, on an InfiniBand port (addressing is by LID)");
		*choice_p = c;
		return 0;
	}

	if (want->ip && want->ip[0]) {
		struct in_addr a4;

		memset(&want_gid, 0, sizeof(want_gid));
		if (inet_pton(AF_INET, want->ip, &a4) == 1) {
			want_gid.raw[10] = want_gid.raw[11] = 0xff;
			memcpy(&want_gid.raw[12], &a4, 4);
			family = AF_INET;
		} else if (inet_pton(AF_INET6, want->ip, want_gid.raw) == 1) {
			family = AF_INET6;
		} else {
			return -EINVAL;
		}
		have_ip = true;
	} else if (want->family == AF_INET6) {
		family = AF_INET6;
	}

	for (int i = 0; i < table->count; i++) {
		const struct rk_gid_entry *e = &table->entries[i];
		struct gid_rank r = {
			.type = e->type == RK_GID_ROCE_V2 ? 0 : e->type == RK_GID_ROCE_V1 ? 1 : 2,
			.address = !(have_ip && !memcmp(e->gid.raw, want_gid.raw, 16)),
			.family = e->family != family,
			.linklocal = rk_gid_is_link_local(&e->gid),
			.index = e->index,
		};

		if (e->type == RK_GID_IB)
			continue; /* not addressable on an Ethernet port */
		if (!best || rank_cmp(&r, &best_rank) < 0) {
			best = e;
			best_rank = r;
		}
	}
	if (!best)
		return -ENOENT;

	set_choice(best, &c);
	if (!best_rank.address)
		snprintf(c.why, sizeof(c.why), "index %u is the %s GID carrying %s, the address "
			 "the peer talks to", best->index, rk_gid_type_str(best->type), best->ip);
	else if (have_ip)
		snprintf(c.why, sizeof(c.why), "index %u is a %s GID (%s); no %s GID carries %s",
			 best->index, rk_gid_type_str(best->type), best->ip,
			 rk_gid_type_str(best->type), want->ip);
	else
		snprintf(c.why, sizeof(c.why), "index %u is the first %s %s GID (%s)%s",
			 best->index, rk_gid_type_str(best->type), family_str(best->family),
			 best->ip, best_rank.linklocal ? ", link-local as no other fits" : "");
	*choice_p = c;
	return 0;
}

/* rk_gid_select(); the choice told (logged as info) only when tell. */
static int gid_select(struct rk_device *dev, uint8_t port_num, const struct rk_gid_want *want,
		      struct rk_gid_choice *choice_p, bool tell)
{
	struct rk_gid_table *t;
	struct rk_gid_choice c;
	char have[512] = "";
	size_t off = 0;
	int ret;

	ret = rk_gid_table_read(dev, port_num, &t);
	if (ret)
		return ret;
	ret = rk_gid_choose(t, want, &c);
	if (ret) {
		for (int i = 0; i < t->count && off < sizeof(have); i++)
			off += snprintf(have + off, sizeof(have) - off, "%s%u (%s %s)",
					i ? ", " : "", t->entries[i].index,
					rk_gid_type_str(t->entries[i].type), t->entries[i].ip);
		if (ret == -EINVAL)
			rk_error("'%s' is not an IPv4 or IPv6 address", want->ip);
		else if (want && want->index >= 0)
			rk_error("%s port %u has no GID at index %d (valid: %s)", dev->info.name,
				 port_num, want->index, t->count ? have : "none");
		else if (rk_device_is_iwarp(dev))
			rk_error("%s is an iWARP device: its QPs are addressed by IP through RDMA "
				 "CM, not by GID (its table: %s); use --cm", dev->info.name,
				 t->count ? have : "empty");
		else
			rk_error("%s port %u has no usable GID (%s); on RoCE the port's netdev "
				 "needs an IP address", dev->info.name, port_num,
				 t->count ? have : "the table is empty");
		goto out_free_table;
	}
	if (tell)
		rk_info("GID: %s", c.why);
	*choice_p = c;
out_free_table:
	rk_gid_table_free(t);
	return ret;
}

int rk_gid_select(struct rk_device *dev, uint8_t port_num, const struct rk_gid_want *want,
		  struct rk_gid_choice *choice_p)
{
	return gid_select(dev, port_num, want, choice_p, true);
}

int rk_gid_check(struct rk_device *dev, uint8_t port_num, const struct rk_gid_want *want)
{
	struct rk_gid_choice c;

	return gid_select(dev, port_num, want, &c, false);
}
