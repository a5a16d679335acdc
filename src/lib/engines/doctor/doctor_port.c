/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor, each port's checks: its state; on RoCE its netdev, the
 * netdev's addresses, a RoCE v2 GID for each and the MTUs; on InfiniBand its
 * LID and subnet manager; the error counters that moved; the software
 * devices. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/counters.h>
#include <rdmakit/error.h>
#include <rdmakit/gid.h>

#include "engines/doctor/doctor_int.h"

#define SYS_IB	  "/sys/class/infiniband"
#define MAX_ADDRS 32
/* What RoCE v2 puts around a packet's payload at most (IPv6 40, UDP 8, BTH
 * 12, RETH 16, ICRC 4): rxe's RXE_MAX_HDR_LENGTH, which it subtracts from
 * the netdev's MTU to choose the port's. */
#define ROCE_HEADERS 80

/* IB port states (ibv_port_state) and physical states, as sysfs numbers them. */
enum { PORT_ACTIVE = 4, PHYS_POLLING = 2, PHYS_DISABLED = 3, PHYS_LINKUP = 5 };

/* A port: what sysfs says of it. */
struct doc_port {
	struct doc_dev *dd;
	uint8_t num;
	long state, phys;
	char state_text[32], phys_text[32];
	bool roce;  /* an Ethernet port: RoCE, or iWARP */
	bool iwarp; /* node type RNIC: no GIDs, RDMA CM over TCP */
	char netdev[IFNAMSIZ + 1];
	bool netdev_up; /* IFF_UP */
	char operstate[32];
	char addrs[MAX_ADDRS][INET6_ADDRSTRLEN];
	int naddrs;
};

/* The text after "N: " of a sysfs state file, into buf. */
static void state_text(const struct doc *d, const struct doc_port *p, const char *file, char *buf,
		       size_t len)
{
	char text[64];
	const char *colon;

	if (doc_read(d, text, sizeof(text), SYS_IB "/%s/ports/%u/%s", p->dd->name, p->num, file) <
	    0) {
		snprintf(buf, len, "unknown");
		return;
	}
	colon = strchr(text, ':');
	snprintf(buf, len, "%.31s", colon ? colon + 1 + (colon[1] == ' ') : text);
}

/* The netdev under an Ethernet port: the GID table's (gid_attrs/ndevs), else
 * the software device's parent, else (at the real root) what `rdma link show`
 * says: siw has neither. */
static void port_netdev(const struct doc *d, struct doc_port *p)
{
	doc_port_netdev(d, p->dd->name, p->num, p->netdev, sizeof(p->netdev), NULL);
}

/* " netdev NAME" of `rdma link show DEVICE/PORT` (the kernel's netlink
 * view), into netdev. */
static void rdma_link_netdev(const char *device, uint8_t port, char *netdev)
{
	char cmd[128], line[512];
	const char *at;
	FILE *f;

	if (device[strspn(device, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "0123456789_.-")])
		return; /* not a name to put on a command line */
	snprintf(cmd, sizeof(cmd), "rdma link show %s/%u 2>/dev/null", device, port);
	f = popen(cmd, "re");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (at = strstr(line, " netdev ")) != NULL)
		sscanf(at + 8, "%15[^ \n]", netdev);
	pclose(f);
}

int doc_port_netdev(const struct doc *d, const char *device, uint8_t port, char *netdev,
		    size_t len, long *mtu_p)
{
	char text[64];

	netdev[0] = '\0';
	for (int i = 0; i < 16 && !netdev[0]; i++)
		if (doc_read(d, text, sizeof(text), SYS_IB "/%s/ports/%u/gid_attrs/ndevs/%d",
			     device, port, i) > 0)
			snprintf(netdev, len, "%.16s", text);
	if (!netdev[0] && doc_read(d, text, sizeof(text), SYS_IB "/%s/parent", device) > 0)
		snprintf(netdev, len, "%.16s", text);
	if (!netdev[0] && !d->root[0] && len >= IFNAMSIZ)
		rdma_link_netdev(device, port, netdev);
	if (!netdev[0])
		return -ENOENT;
	if (mtu_p && doc_read_num(d, mtu_p, "/sys/class/net/%s/mtu", netdev))
		*mtu_p = 0;
	return 0;
}

static int ifaddrs_of(const char *netdev, char (*addrs)[INET6_ADDRSTRLEN], int max)
{
	struct ifaddrs *all, *a;
	int n = 0;

	if (getifaddrs(&all))
		return -errno;
	for (a = all; a && n < max; a = a->ifa_next) {
		const void *src;

		if (!a->ifa_addr || strcmp(a->ifa_name, netdev))
			continue;
		if (a->ifa_addr->sa_family == AF_INET)
			src = &((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr;
		else if (a->ifa_addr->sa_family == AF_INET6)
			src = &((const struct sockaddr_in6 *)(const void *)a->ifa_addr)->sin6_addr;
		else
			continue;
		if (inet_ntop(a->ifa_addr->sa_family, src, addrs[n], INET6_ADDRSTRLEN))
			n++;
	}
	freeifaddrs(all);
	return n;
}

static void port_read(const struct doc *d, struct doc_port *p)
{
	char text[64];
	long flags = 0, node = 0;
	int n;

	if (doc_read_num(d, &p->state, SYS_IB "/%s/ports/%u/state", p->dd->name, p->num))
		p->state = -1;
	if (doc_read_num(d, &p->phys, SYS_IB "/%s/ports/%u/phys_state", p->dd->name, p->num))
		p->phys = -1;
	state_text(d, p, "state", p->state_text, sizeof(p->state_text));
	state_text(d, p, "phys_state", p->phys_text, sizeof(p->phys_text));
	p->roce = doc_read(d, text, sizeof(text), SYS_IB "/%s/ports/%u/link_layer", p->dd->name,
			   p->num) > 0 &&
		  !strcmp(text, "Ethernet");
	if (!p->roce)
		return;
	/* RDMA_NODE_RNIC (4): iWARP, on Ethernet too. */
	p->iwarp = !doc_read_num(d, &node, SYS_IB "/%s/node_type", p->dd->name) && node == 4;
	port_netdev(d, p);
	if (!p->netdev[0])
		return;
	p->netdev_up =
		!doc_read_num(d, &flags, "/sys/class/net/%s/flags", p->netdev) && (flags & IFF_UP);
	if (doc_read(d, p->operstate, sizeof(p->operstate), "/sys/class/net/%s/operstate",
		     p->netdev) < 0)
		snprintf(p->operstate, sizeof(p->operstate), "unknown");
	n = d->o->addrs ? d->o->addrs(p->netdev, p->addrs, MAX_ADDRS, d->o->addrs_arg)
			: ifaddrs_of(p->netdev, p->addrs, MAX_ADDRS);
	p->naddrs = n > 0 ? n : 0;
}

/* The rdma link type that re-creates the port's software device. */
static const char *soft_type(const struct doc_port *p)
{
	return !strcmp(p->dd->module, "siw") || p->iwarp ? "siw" : "rxe";
}

static void check_state(struct doc *d, const struct doc_port *p)
{
	struct rk_doctor_check c;

	doc_begin(&c, "port_state", p->dd->name, p->num, "%s port %u state", p->dd->name, p->num);
	doc_seen(&c, "%s, physical state %s (%s)", p->state_text, p->phys_text,
		 p->iwarp ? "iWARP" : p->roce ? "RoCE" : "InfiniBand");
	if (p->state == PORT_ACTIVE && p->phys == PHYS_LINKUP) {
		doc_status(&c, RK_DOCTOR_PASS, 0);
	} else if (p->roce) {
		doc_status(&c, RK_DOCTOR_FAIL, -ENETDOWN);
		if (!p->netdev[0])
			doc_fix(&c,
				"the port has no netdev: rdma link show; re-create a software "
				"device on its netdev (rdma link add %s type %s netdev IFACE)",
				p->dd->name, soft_type(p));
		else if (!p->netdev_up)
			doc_fix(&c, "ip link set %s up", p->netdev);
		else
			doc_fix(&c,
				"%s is up but has no link (operstate %s): check its cable and "
				"switch port (ethtool %s)",
				p->netdev, p->operstate, p->netdev);
	} else {
		doc_status(&c, RK_DOCTOR_FAIL, -ENETDOWN);
		if (p->phys == PHYS_LINKUP)
			doc_fix(&c,
				"the link is up but no subnet manager brought the port up: run "
				"one on a node of the fabric (systemctl start opensm) or enable "
				"the switch's");
		else if (p->phys == PHYS_DISABLED)
			doc_fix(&c, "the port is disabled: enable it (ibportstate, or on the "
				    "switch)");
		else
			doc_fix(&c, "no link: check the cable and the switch port (ibstat %s %u)",
				p->dd->name, p->num);
	}
	doc_emit(d, &c);
}

static void check_netdev(struct doc *d, const struct doc_port *p)
{
	struct rk_doctor_check c;

	doc_begin(&c, "netdev", p->dd->name, p->num, "%s port %u netdev", p->dd->name, p->num);
	if (!p->netdev[0]) {
		doc_status(&c, RK_DOCTOR_FAIL, -ENODEV);
		doc_seen(&c, "the %s port names no netdev (%s)", p->iwarp ? "iWARP" : "RoCE",
			 p->iwarp ? "no parent, and rdma link show names none" :
				    "its GID table has no ndev");
		doc_fix(&c,
			"rdma link show; re-create a software device on its netdev (rdma "
			"link add %s type %s netdev IFACE), or reload the NIC's driver",
			p->dd->name, soft_type(p));
	} else if (!p->netdev_up) {
		doc_status(&c, RK_DOCTOR_FAIL, -ENETDOWN);
		doc_seen(&c, "%s is down (operstate %s)", p->netdev, p->operstate);
		doc_fix(&c, "ip link set %s up", p->netdev);
	} else if (!strcmp(p->operstate, "down") || !strcmp(p->operstate, "lowerlayerdown")) {
		doc_status(&c, RK_DOCTOR_FAIL, -ENETDOWN);
		doc_seen(&c, "%s is up but has no link (operstate %s)", p->netdev, p->operstate);
		doc_fix(&c, "check %s's cable and switch port (ethtool %s)", p->netdev, p->netdev);
	} else {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "%s is up (operstate %s)", p->netdev, p->operstate);
	}
	doc_emit(d, &c);
}

static bool addr_routable(const char *a)
{
	return !strchr(a, ':') || strncasecmp(a, "fe80:", 5);
}

static void check_addrs(struct doc *d, const struct doc_port *p)
{
	char list[MAX_ADDRS * (INET6_ADDRSTRLEN + 2)] = "";
	struct rk_doctor_check c;
	int routable = 0;

	doc_begin(&c, "addresses", p->dd->name, p->num, "%s port %u addresses", p->dd->name,
		  p->num);
	for (int i = 0; i < p->naddrs; i++) {
		routable += addr_routable(p->addrs[i]);
		doc_add(list, sizeof(list), "%s%s", i ? ", " : "", p->addrs[i]);
	}
	if (routable) {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "%s on %s", list, p->netdev);
		doc_emit(d, &c);
		return;
	}
	doc_status(&c, RK_DOCTOR_FAIL, -EADDRNOTAVAIL);
	if (p->naddrs)
		doc_seen(&c, "%s has no IPv4 or global IPv6 address, only link-local %s", p->netdev,
			 list);
	else
		doc_seen(&c, "%s has no IP address", p->netdev);
	if (p->iwarp)
		doc_seen(&c, " (iWARP runs over TCP from the netdev's addresses: none a peer "
			     "off this link reaches, and RDMA CM cannot resolve an address to %s)",
			 p->dd->name);
	else
		doc_seen(&c,
			 " (RoCE v2 GIDs are made from a netdev's addresses: none a peer off "
			 "this link reaches, and RDMA CM cannot resolve an address to %s)",
			 p->dd->name);
	doc_fix(&c, "ip addr add ADDRESS/PREFIX dev %s (the address peers reach this host at)",
		p->netdev);
	doc_emit(d, &c);
}

/* The RoCE v2 GID carrying ip in the port's table (sysfs gids/N with
 * gid_attrs/types/N): its index, or -1. */
static int roce_v2_gid(const struct doc *d, const struct doc_port *p, const char *ip)
{
	char text[64], type[32];
	struct rk_gid_entry e;

	for (int i = 0; i < 1024; i++) {
		if (doc_read(d, text, sizeof(text), SYS_IB "/%s/ports/%u/gids/%d", p->dd->name,
			     p->num, i) < 0)
			break;
		if (doc_read(d, type, sizeof(type), SYS_IB "/%s/ports/%u/gid_attrs/types/%d",
			     p->dd->name, p->num, i) < 0 ||
		    strcasecmp(type, "RoCE v2"))
			continue;
		memset(&e, 0, sizeof(e));
		if (rk_gid_parse(text, &e.gid) || rk_gid_is_zero(&e.gid))
			continue;
		e.type = RK_GID_ROCE_V2;
		rk_gid_entry_set_ip(&e);
		if (!strcmp(e.ip, ip))
			return i;
	}
	return -1;
}

static void check_gids(struct doc *d, const struct doc_port *p)
{
	char missing[512] = "", found[512] = "";
	struct rk_doctor_check c;

	doc_begin(&c, "roce_gids", p->dd->name, p->num, "%s port %u RoCE v2 GIDs", p->dd->name,
		  p->num);
	if (!p->naddrs) {
		doc_status(&c, RK_DOCTOR_SKIP, 0);
		doc_seen(&c, "no address on %s to carry a GID (see %s port %u addresses)",
			 p->netdev[0] ? p->netdev : "the netdev", p->dd->name, p->num);
		doc_emit(d, &c);
		return;
	}
	for (int i = 0; i < p->naddrs; i++) {
		int idx = roce_v2_gid(d, p, p->addrs[i]);

		if (idx < 0)
			doc_add(missing, sizeof(missing), "%s%s", missing[0] ? ", " : "",
				p->addrs[i]);
		else
			doc_add(found, sizeof(found), "%s%s index %d", found[0] ? ", " : "",
				p->addrs[i], idx);
	}
	if (!missing[0]) {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "%s", found);
		doc_emit(d, &c);
		return;
	}
	doc_status(&c, RK_DOCTOR_FAIL, -ENOENT);
	doc_seen(&c, "no RoCE v2 GID carries %s of %s%s%s", missing, p->netdev,
		 found[0] ? "; these have one: " : "", found);
	doc_fix(&c,
		"the GID table follows %s's addresses: check rdma link show puts %s on %s "
		"(not on a bridge or VLAN above it), then re-add the address (ip addr del "
		"ADDRESS dev %s; ip addr add ADDRESS/PREFIX dev %s)",
		p->netdev, p->dd->name, p->netdev, p->netdev, p->netdev);
	doc_emit(d, &c);
}

static void check_mtu(struct doc *d, const struct doc_port *p)
{
	const struct rk_port_info *pi = p->dd->dev ? rk_device_port(p->dd->dev, p->num) : NULL;
	int active, best = 0, max;
	struct rk_doctor_check c;
	long mtu;

	doc_begin(&c, "mtu", p->dd->name, p->num, "%s port %u MTU", p->dd->name, p->num);
	if (!pi || doc_read_num(d, &mtu, "/sys/class/net/%s/mtu", p->netdev)) {
		doc_status(&c, RK_DOCTOR_SKIP, 0);
		doc_seen(&c, pi ? "cannot read %s's MTU" : "libibverbs could not open %s",
			 pi ? p->netdev : p->dd->name);
		doc_emit(d, &c);
		return;
	}
	active = rk_mtu_bytes(pi->active_mtu);
	max = rk_mtu_bytes(pi->max_mtu);
	for (int b = 256; b <= 4096 && b <= max; b *= 2)
		if (b + ROCE_HEADERS <= mtu)
			best = b;
	doc_seen(&c, "%s MTU %ld, the port's active MTU %d (max %d)", p->netdev, mtu, active, max);
	if (active + ROCE_HEADERS > mtu) {
		doc_status(&c, RK_DOCTOR_FAIL, -EMSGSIZE);
		doc_seen(&c,
			 ": a full %d-byte packet and its %d bytes of RoCE v2 headers do not "
			 "fit %s's %ld: such packets are dropped",
			 active, ROCE_HEADERS, p->netdev, mtu);
		doc_fix(&c,
			"ip link set %s mtu %d (on every host and switch on the path), or "
			"give the QPs a path MTU of %d",
			p->netdev, active + ROCE_HEADERS, best ? best : 256);
	} else if (best > active) {
		doc_status(&c, RK_DOCTOR_WARN, -EMSGSIZE);
		doc_seen(&c, ": %s carries %d-byte packets, the port uses %d", p->netdev, best,
			 active);
		doc_fix(&c,
			"the port did not follow %s's MTU: reload the driver or re-create "
			"the link (rdma link delete %s; rdma link add ...)",
			p->netdev, p->dd->name);
	} else {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, ": %d bytes and %d of headers fit", active, ROCE_HEADERS);
	}
	doc_emit(d, &c);
}

static void check_ib(struct doc *d, const struct doc_port *p)
{
	struct rk_doctor_check c;
	long lid = 0, sm = 0;

	doc_begin(&c, "ib_lid_sm", p->dd->name, p->num, "%s port %u LID and SM", p->dd->name,
		  p->num);
	if (doc_read_num(d, &lid, SYS_IB "/%s/ports/%u/lid", p->dd->name, p->num) ||
	    doc_read_num(d, &sm, SYS_IB "/%s/ports/%u/sm_lid", p->dd->name, p->num)) {
		doc_status(&c, RK_DOCTOR_SKIP, 0);
		doc_seen(&c, "sysfs shows no lid or sm_lid for the port");
		doc_emit(d, &c);
		return;
	}
	doc_seen(&c, "LID 0x%lx, SM LID 0x%lx", lid, sm);
	if (lid && sm) {
		doc_status(&c, RK_DOCTOR_PASS, 0);
	} else {
		doc_status(&c, RK_DOCTOR_FAIL, -ENETUNREACH);
		doc_seen(&c, lid ? ": no subnet manager is known"
				 : ": no LID, so no subnet manager has configured the port");
		doc_fix(&c, "run a subnet manager on one node of the fabric (systemctl start "
			    "opensm; package opensm) or enable the switch's; sminfo shows one");
	}
	doc_emit(d, &c);
}

/* Each port of each device, in order. fn gets every port's record. */
static void each_port(struct doc *d, void (*fn)(struct doc *d, struct doc_port *p))
{
	char path[PATH_MAX];
	struct dirent **names;

	for (int i = 0; i < d->ndevs; i++) {
		int n;

		doc_path(d, path, sizeof(path), SYS_IB "/%s/ports", d->devs[i].name);
		n = scandir(path, &names, NULL, versionsort);
		for (int k = 0; k < n; k++) {
			struct doc_port *p;
			uint64_t num;

			/* A port's directory is its number, 1 to 255. */
			if (!doc_num_at(names[k]->d_name, false, 1, 255, &num) &&
			    (p = calloc(1, sizeof(*p))) != NULL) {
				p->dd = &d->devs[i];
				p->num = (uint8_t)num;
				port_read(d, p);
				fn(d, p);
				free(p);
			}
			free(names[k]);
		}
		if (n >= 0)
			free(names);
	}
}

static void port_checks(struct doc *d, struct doc_port *p)
{
	check_state(d, p);
	if (p->roce) {
		check_netdev(d, p);
		check_addrs(d, p);
		/* iWARP has no GID table to follow the addresses, and runs
		 * over TCP, which sizes its own segments. */
		if (!p->iwarp) {
			check_gids(d, p);
			check_mtu(d, p);
		}
	} else {
		check_ib(d, p);
	}
}

void doc_check_ports(struct doc *d)
{
	each_port(d, port_checks);
}

/* Counters that count trouble, and what each means: the IB port counters
 * (counters/), rxe's and mlx5's hw_counters. */
static const struct {
	const char *name;
	const char *meaning;
} error_counters[] = {
	{"symbol_error", "symbol errors on the link (a bad cable or connector)"},
	{"link_error_recovery", "the link retrained"},
	{"link_downed", "the link went down"},
	{"port_rcv_errors", "packets received with errors"},
	{"port_rcv_remote_physical_errors", "packets received marked bad upstream"},
	{"port_rcv_switch_relay_errors", "packets a switch could not forward"},
	{"port_xmit_discards", "packets the port discarded instead of sending"},
	{"port_xmit_constraint_errors", "packets not sent for partition or filter rules"},
	{"port_rcv_constraint_errors", "packets refused for partition or filter rules"},
	{"local_link_integrity_errors", "link integrity errors"},
	{"excessive_buffer_overrun_errors", "receive buffer overruns"},
	{"VL15_dropped", "subnet management packets dropped"},
	{"retry_exceeded_err", "retries exhausted: a peer never answered"},
	{"retry_rnr_exceeded_err", "RNR retries exhausted: a peer posted no receive"},
	{"completer_retry_err", "packets sent again after an ACK timeout"},
	{"send_err", "packets the device could not send (netdev down or too small an MTU)"},
	{"rcvd_seq_err", "NAKs for packets out of sequence"},
	{"out_of_seq_request", "requests received out of sequence (packets lost)"},
	{"duplicate_request", "requests received twice (the peer sent them again)"},
	{"rcvd_rnr_err", "RNR NAKs received: a peer had no receive posted"},
	{"send_rnr_err", "RNR NAKs sent: no receive was posted here"},
	{"out_of_sequence", "packets received out of sequence (packets lost)"},
	{"packet_seq_err", "NAKs for sequence errors received"},
	{"local_ack_timeout_err", "ACK timeouts: packets sent again"},
	{"rnr_nak_retry_err", "RNR retries exhausted"},
	{"implied_nak_seq_err", "implied NAKs: packets sent again"},
	{"req_cqe_error", "requests that completed in error"},
	{"resp_cqe_error", "responses that completed in error"},
	{"req_remote_access_errors", "remote access errors"},
	{"req_remote_invalid_request", "requests a peer found invalid"},
	{"resp_local_length_error", "messages longer than the receive posted"},
};

static void counters_port(struct doc *d, struct doc_port *p)
{
	struct rk_counters *snap = NULL;
	struct rk_doctor_check c;
	char path[PATH_MAX];
	int moved = 0;

	doc_begin(&c, "error_counters", p->dd->name, p->num, "%s port %u error counters",
		  p->dd->name, p->num);
	doc_path(d, path, sizeof(path), SYS_IB "/%s/ports/%u", p->dd->name, p->num);
	if (rk_counters_read_dir(path, p->dd->name, p->num, &snap) || !snap->groups) {
		doc_status(&c, RK_DOCTOR_SKIP, 0);
		doc_seen(&c, "%s exposes no counters (no counters/ or hw_counters/)%s", p->dd->name,
			 !strcmp(p->dd->module, "siw") ? ": siw keeps none" : "");
		rk_counters_free(snap);
		doc_emit(d, &c);
		return;
	}
	for (int i = 0; i < snap->n; i++)
		for (size_t k = 0; k < sizeof(error_counters) / sizeof(error_counters[0]); k++)
			if (snap->v[i].value && !strcmp(snap->v[i].name, error_counters[k].name))
				doc_seen(&c, "%s%s %" PRIu64 " (%s)", moved++ ? ", " : "",
					 snap->v[i].name, snap->v[i].value,
					 error_counters[k].meaning);
	if (moved) {
		doc_status(&c, RK_DOCTOR_WARN, -EIO);
		doc_seen(&c, ": counted since boot or since %s was made, maybe long ago",
			 p->dd->name);
		doc_fix(&c,
			"watch them while the trouble happens: rdmakit counters -d %s -i %u "
			"--watch 1 (a counter that rises then is live trouble)",
			p->dd->name, p->num);
	} else {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "none of the %d counters that count errors moved", snap->n);
	}
	rk_counters_free(snap);
	doc_emit(d, &c);
}

void doc_check_counters(struct doc *d)
{
	each_port(d, counters_port);
}

void doc_check_software(struct doc *d)
{
	struct rk_doctor_check c;

	for (int i = 0; i < d->ndevs; i++) {
		const char *m = d->devs[i].module;
		bool rxe = !strcmp(m, "rdma_rxe"), siw = !strcmp(m, "siw");

		if (!rxe && !siw)
			continue;
		doc_begin(&c, "software_device", d->devs[i].name, 0, "%s software device",
			  d->devs[i].name);
		/* A PASS with its note: nothing to fix for function, and a
		 * healthy software pair exits 0. */
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c,
			 "%s is %s, emulated by the kernel on its netdev's CPU time: no line "
			 "rate to expect (tens to hundreds of MB/s, latency in tens of us); "
			 "measure performance on an RNIC (its hardware provider, not rxe or siw)",
			 d->devs[i].name, rxe ? "Soft-RoCE (rdma_rxe)" : "Soft-iWARP (siw)");
		doc_emit(d, &c);
	}
}
