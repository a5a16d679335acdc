/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: GID tables and choosing the right GID.
 *
 * The classic RoCE failure is a wrong or mismatched GID index: the two sides
 * pick GIDs of different types (RoCE v1 against v2) or a link-local one the
 * peer cannot route to. rk_gid_choose() picks by the rules below and can say
 * why; an explicit index always wins.
 */
#ifndef RDMAKIT_GID_H
#define RDMAKIT_GID_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum rk_gid_type {
	RK_GID_IB = 0,
	RK_GID_ROCE_V1,
	RK_GID_ROCE_V2,
};

struct rk_gid_entry {
	uint32_t index;
	enum rk_gid_type type;
	union ibv_gid gid;
	uint32_t ndev_ifindex; /* 0 when none (IB) */
	int family;            /* AF_INET, AF_INET6, or 0 for IB GIDs */
	char ip[INET6_ADDRSTRLEN]; /* the IP the GID carries, "" for IB */
};

/* The valid (non-empty) entries of one port's GID table. */
struct rk_gid_table {
	uint8_t port_num;
	uint8_t link_layer;
	int count;
	struct rk_gid_entry *entries;
};

/* Read the valid entries of a port's GID table (ibv_query_gid_table), with
 * type and IP address per entry. Free with rk_gid_table_free(). */
int rk_gid_table_read(struct rk_device *dev, uint8_t port_num, struct rk_gid_table **table_p);

/* Free a table from rk_gid_table_read() or rk_gid_table_new(). NULL is ignored. */
void rk_gid_table_free(struct rk_gid_table *table);

/* An empty table of room for n entries (for building synthetic tables in tests). */
int rk_gid_table_new(uint8_t port_num, uint8_t link_layer, int n, struct rk_gid_table **table_p);

/* Fill e->family and e->ip from e->gid and e->type. */
void rk_gid_entry_set_ip(struct rk_gid_entry *e);

/* Entry with that index, or NULL when the index is not a valid entry. */
const struct rk_gid_entry *rk_gid_table_find(const struct rk_gid_table *table, uint32_t index);

/* What the caller wants from rk_gid_choose(). */
struct rk_gid_want {
	int index;      /* >= 0: use exactly this index; -1: choose */
	const char *ip; /* local IP the peer will talk to, or NULL */
	int family;     /* AF_INET, AF_INET6, or AF_UNSPEC: prefer IPv4 */
};

struct rk_gid_choice {
	uint32_t index;
	enum rk_gid_type type;
	union ibv_gid gid;
	char why[200]; /* one sentence: why this entry */
};

/* Choose a GID. On Ethernet (RoCE) ports, in order of preference:
 *   1. want->index when >= 0 (-ENOENT when it is not a valid entry);
 *   2. the RoCE v2 GID carrying want->ip;
 *   3. a RoCE v2 GID of want->ip's family (or want->family; IPv4 when
 *      unspecified), a non-link-local one before a link-local one;
 *   4. any other RoCE v2 GID, non-link-local first;
 *   5. RoCE v1 GIDs by the same rules.
 * On InfiniBand ports: the explicit index, else index 0.
 * -EINVAL for an unparsable want->ip, -ENOENT when nothing fits. Pure logic,
 * logs nothing: the caller decides what to say. */
int rk_gid_choose(const struct rk_gid_table *table, const struct rk_gid_want *want,
		  struct rk_gid_choice *choice_p);

/* Read port_num's GID table and choose from it (rk_gid_choose()), logging
 * what went wrong, with the table's entries, when nothing fits. */
int rk_gid_select(struct rk_device *dev, uint8_t port_num, const struct rk_gid_want *want,
		  struct rk_gid_choice *choice_p);

/* "IB", "RoCE v1", "RoCE v2". */
const char *rk_gid_type_str(enum rk_gid_type type);

/* The GID as text (IPv6 notation, as the kernel's sysfs shows it) into buf. */
const char *rk_gid_str(const union ibv_gid *gid, char *buf, size_t len);

/* Parse a GID in IPv6 notation. -EINVAL when it is not one. */
int rk_gid_parse(const char *text, union ibv_gid *gid_p);

/* True for fe80::/10 GIDs. */
bool rk_gid_is_link_local(const union ibv_gid *gid);

/* True for an all-zero GID (an empty table slot or an unset field). */
bool rk_gid_is_zero(const union ibv_gid *gid);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
