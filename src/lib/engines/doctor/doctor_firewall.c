/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor, the firewall: nftables' and iptables' rules read as their
 * tools print them, held against RoCE v2 (UDP 4791, which RDMA CM over RoCE
 * uses too) and rdmakit's TCP port. A rule decides only when nothing but the
 * protocol and the destination port limits it (an interface, an address or
 * a connection state make it partial: passed over); jumps are not followed;
 * the chain's policy decides what no rule did. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/conn.h>

#include "engines/doctor/doctor_int.h"

#define ROCE_V2_PORT 4791
#define MAX_TEXT     (1 << 20)

/* The packets a firewall must let through. */
static const struct {
	const char *proto;
	int port;
	const char *what;
} packets[] = {
	{"udp", ROCE_V2_PORT, "RoCE v2 and its RDMA CM (UDP 4791)"},
	{"tcp", RK_DEFAULT_PORT, "rdmakit's TCP exchange (TCP 18515, its default port)"},
};
#define NPACKETS (sizeof(packets) / sizeof(packets[0]))

enum verdict { V_NONE, V_ACCEPT, V_DROP };

/* What one packet meets: the first deciding rule of each chain. */
struct finding {
	char rule[256];
	char fix[320];
};

/* A rule or policy that drops packet pk, with its fix; the first for RoCE v2
 * kept in drop (when not NULL) for the path's checks. */
static void found_drop(struct rk_doctor_check *c, struct doc_fw_drop *drop, size_t pk,
		       const char *rule, const char *fix)
{
	doc_seen(c, "%s%s is dropped by: %s", c->seen[0] ? "; " : "", packets[pk].what, rule);
	doc_fix(c, "%s%s", c->fix[0] ? "; " : "", fix);
	if (drop && packets[pk].port == ROCE_V2_PORT && !drop->rule[0]) {
		snprintf(drop->rule, sizeof(drop->rule), "%s", rule);
		snprintf(drop->fix, sizeof(drop->fix), "%s", fix);
	}
}

static void firewall_begin(struct rk_doctor_check *c, const char *tool)
{
	doc_begin(c, "firewall", NULL, 0, "firewall (%s)", tool);
}

static void firewall_end(struct rk_doctor_check *c, int chains)
{
	if (c->fix[0]) {
		doc_status(c, RK_DOCTOR_FAIL, -EPERM);
		return;
	}
	doc_status(c, RK_DOCTOR_PASS, 0);
	if (chains)
		doc_seen(c,
			 "no rule of the %d input and output chain%s drops UDP 4791 or TCP "
			 "18515",
			 chains, chains == 1 ? "" : "s");
	else
		doc_seen(c, "no input or output chain: nothing is filtered");
}

/* Whether a port list ("4791", "4000:5000", "22,4791", "4000-5000",
 * "{ 22, 4791 }") holds port. */
static bool ports_hold(const char *list, int port)
{
	const char *p = list;

	while (*p) {
		char *end;
		long lo, hi;

		while (*p && (*p < '0' || *p > '9'))
			p++;
		if (!*p)
			break;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (*end == ':' || *end == '-')
			hi = strtol(end + 1, &end, 10);
		if (port >= lo && port <= hi)
			return true;
		p = end;
	}
	return false;
}

/* ---- iptables -S ---- */

/* The verdict of one "-A CHAIN ..." line for the packet, V_NONE when it
 * does not decide it. */
static enum verdict ipt_rule(char *words[], int n, const char *proto, int port)
{
	enum verdict v = V_NONE;
	bool proto_ok = true, port_ok = true;

	for (int i = 2; i < n; i++) {
		const char *w = words[i], *arg = i + 1 < n ? words[i + 1] : "";

		if (!strcmp(w, "-p") || !strcmp(w, "--protocol")) {
			proto_ok = !strcmp(arg, proto) || !strcmp(arg, "all");
			i++;
		} else if (!strcmp(w, "-m")) {
			if (strcmp(arg, "udp") && strcmp(arg, "tcp") && strcmp(arg, "multiport"))
				return V_NONE;
			i++;
		} else if (!strcmp(w, "--dport") || !strcmp(w, "--dports") ||
			   !strcmp(w, "--destination-port") || !strcmp(w, "--destination-ports")) {
			port_ok = ports_hold(arg, port);
			i++;
		} else if (!strcmp(w, "-j") || !strcmp(w, "--jump")) {
			if (!strcmp(arg, "ACCEPT"))
				v = V_ACCEPT;
			else if (!strcmp(arg, "DROP") || !strcmp(arg, "REJECT"))
				v = V_DROP;
			else
				return V_NONE;
			i++;
			if (!strcmp(arg, "REJECT") && i + 1 < n &&
			    !strcmp(words[i + 1], "--reject-with"))
				i += 2;
		} else {
			return V_NONE; /* any other match: the rule is partial */
		}
	}
	return proto_ok && port_ok ? v : V_NONE;
}

static int split(char *line, char *words[], int max)
{
	int n = 0;

	for (char *t = strtok(line, " \t"); t && n < max; t = strtok(NULL, " \t"))
		words[n++] = t;
	return n;
}

static void ipt_parse(const char *text, struct rk_doctor_check *c, struct doc_fw_drop *drop)
{
	static const char *const chains[] = {"INPUT", "OUTPUT"};
	char *copy, *line, *save, *words[64], orig[512];
	int nchains = 0;

	firewall_begin(c, "iptables");
	for (size_t ch = 0; ch < 2; ch++) {
		bool seen_chain = false;

		for (size_t pk = 0; pk < NPACKETS; pk++) {
			enum verdict v = V_NONE;
			char policy[32] = "ACCEPT", fix[600];

			copy = strdup(text ? text : "");
			if (!copy)
				return;
			for (line = strtok_r(copy, "\n", &save); line && v == V_NONE;
			     line = strtok_r(NULL, "\n", &save)) {
				int n;

				snprintf(orig, sizeof(orig), "%s", line);
				n = split(line, words, 64);
				if (n >= 3 && !strcmp(words[0], "-P") &&
				    !strcmp(words[1], chains[ch])) {
					snprintf(policy, sizeof(policy), "%s", words[2]);
					seen_chain = true;
				}
				if (n < 2 || strcmp(words[0], "-A") || strcmp(words[1], chains[ch]))
					continue;
				seen_chain = true;
				v = ipt_rule(words, n, packets[pk].proto, packets[pk].port);
				if (v == V_DROP) {
					snprintf(fix, sizeof(fix), "iptables -D %s", orig + 3);
					found_drop(c, drop, pk, orig, fix);
				}
			}
			if (v == V_NONE && strcmp(policy, "ACCEPT")) {
				snprintf(orig, sizeof(orig), "-P %s %s", chains[ch], policy);
				snprintf(fix, sizeof(fix),
					 "iptables -I %s -p %s --dport %d -j ACCEPT", chains[ch],
					 packets[pk].proto, packets[pk].port);
				found_drop(c, drop, pk, orig, fix);
			}
			free(copy);
		}
		nchains += seen_chain;
	}
	firewall_end(c, nchains);
}

/* ---- nft -a list ruleset ---- */

struct nft_chain {
	char family[16], table[64], name[64];
	bool base;	 /* "type filter hook input|output" */
	char policy[16]; /* "accept", "drop" */
};

/* The verdict of one rule line ("udp dport 4791 counter packets 0 bytes 0
 * drop # handle 4") for the packet; V_NONE when it does not decide. */
static enum verdict nft_rule(char *line, const char *proto, int port)
{
	char *words[64], *hash = strstr(line, " # handle");
	bool proto_ok = true, port_ok = true;
	enum verdict v = V_NONE;
	int n;

	if (hash)
		*hash = '\0';
	n = split(line, words, 64);
	for (int i = 0; i < n; i++) {
		const char *w = words[i];

		if ((!strcmp(w, "udp") || !strcmp(w, "tcp") || !strcmp(w, "th")) && i + 2 < n &&
		    !strcmp(words[i + 1], "dport")) {
			char set[256] = "";

			proto_ok = strcmp(w, "th") ? !strcmp(w, proto) : proto_ok;
			i += 2;
			if (!strcmp(words[i], "{")) {
				while (i < n && strcmp(words[i], "}"))
					doc_add(set, sizeof(set), "%s ", words[i++]);
			} else {
				snprintf(set, sizeof(set), "%s", words[i]);
			}
			port_ok = ports_hold(set, port);
		} else if ((!strcmp(w, "meta") && i + 2 < n && !strcmp(words[i + 1], "l4proto")) ||
			   (!strcmp(w, "ip") && i + 2 < n && !strcmp(words[i + 1], "protocol")) ||
			   (!strcmp(w, "ip6") && i + 2 < n && !strcmp(words[i + 1], "nexthdr"))) {
			i += 2;
			if (!strcmp(words[i], "{")) {
				bool in = false;

				for (; i < n && strcmp(words[i], "}"); i++)
					in |= !strncmp(words[i], proto, 3);
				proto_ok = in;
			} else {
				proto_ok = !strcmp(words[i], proto);
			}
		} else if (!strcmp(w, "counter")) {
			if (i + 4 < n && !strcmp(words[i + 1], "packets"))
				i += 4;
		} else if (!strcmp(w, "accept")) {
			v = V_ACCEPT;
		} else if (!strcmp(w, "drop") || !strcmp(w, "reject")) {
			v = V_DROP;
			if (!strcmp(w, "reject"))
				break; /* "reject with icmp ..." */
		} else {
			return V_NONE; /* another match, a jump, a log: not decisive */
		}
	}
	return proto_ok && port_ok ? v : V_NONE;
}

static void nft_parse(const char *text, struct rk_doctor_check *c, struct doc_fw_drop *drop)
{
	char *copy, *line, *save, rule[512], fix[512];
	struct nft_chain ch = {0};
	int depth = 0, nchains = 0;
	bool in_chain = false;
	enum verdict v[NPACKETS];

	firewall_begin(c, "nftables");
	copy = strdup(text ? text : "");
	if (!copy)
		return;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *l = line, *handle;
		uint64_t nh;

		while (*l == ' ' || *l == '\t')
			l++;
		if (!*l)
			continue;
		if (!strncmp(l, "table ", 6) && depth == 0) {
			sscanf(l + 6, "%15s %63s", ch.family, ch.table);
			depth = 1;
			continue;
		}
		if (!strncmp(l, "chain ", 6) && depth == 1) {
			sscanf(l + 6, "%63s", ch.name);
			ch.base = false;
			snprintf(ch.policy, sizeof(ch.policy), "accept");
			for (size_t k = 0; k < NPACKETS; k++)
				v[k] = V_NONE;
			in_chain = true;
			depth = 2;
			continue;
		}
		if (l[0] == '}') {
			if (depth == 2 && in_chain && ch.base) {
				nchains++;
				for (size_t k = 0; k < NPACKETS && strcmp(ch.policy, "accept");
				     k++) {
					if (v[k] != V_NONE)
						continue;
					snprintf(rule, sizeof(rule), "chain %s %s %s policy %s",
						 ch.family, ch.table, ch.name, ch.policy);
					snprintf(fix, sizeof(fix),
						 "nft insert rule %s %s %s %s dport "
						 "%d accept",
						 ch.family, ch.table, ch.name, packets[k].proto,
						 packets[k].port);
					found_drop(c, drop, k, rule, fix);
				}
			}
			in_chain = in_chain && depth != 2;
			depth = depth > 0 ? depth - 1 : 0;
			continue;
		}
		if (depth != 2 || !in_chain) {
			if (strchr(l, '{') && !strchr(l, '}'))
				depth++;
			continue;
		}
		if (!strncmp(l, "type filter hook ", 17)) {
			const char *pol = strstr(l, "policy ");

			ch.base = (!strncmp(l + 17, "input", 5) || !strncmp(l + 17, "output", 6)) &&
				  (!strcmp(ch.family, "ip") || !strcmp(ch.family, "ip6") ||
				   !strcmp(ch.family, "inet"));
			if (pol)
				sscanf(pol + 7, "%15[a-z]", ch.policy);
			continue;
		}
		if (!ch.base)
			continue;
		handle = strstr(l, "# handle ");
		for (size_t k = 0; k < NPACKETS; k++) {
			char work[512];

			if (v[k] != V_NONE)
				continue;
			snprintf(work, sizeof(work), "%s", l);
			v[k] = nft_rule(work, packets[k].proto, packets[k].port);
			if (v[k] != V_DROP)
				continue;
			snprintf(rule, sizeof(rule), "%.*s (chain %s %s %s)",
				 handle ? (int)(handle - l - 1) : (int)strlen(l), l, ch.family,
				 ch.table, ch.name);
			if (handle && !doc_num_at(handle + 9, false, 1, UINT64_MAX, &nh))
				snprintf(fix, sizeof(fix), "nft delete rule %s %s %s handle %" PRIu64,
					 ch.family, ch.table, ch.name, nh);
			else
				snprintf(fix, sizeof(fix),
					 "nft -a list chain %s %s %s shows the "
					 "rule's handle; nft delete rule %s %s %s handle N",
					 ch.family, ch.table, ch.name, ch.family, ch.table,
					 ch.name);
			found_drop(c, drop, k, rule, fix);
		}
	}
	free(copy);
	firewall_end(c, nchains);
}

void rk_doctor_firewall_iptables(const char *text, struct rk_doctor_check *c)
{
	ipt_parse(text, c, NULL);
}

void rk_doctor_firewall_nft(const char *text, struct rk_doctor_check *c)
{
	nft_parse(text, c, NULL);
}

/* ---- the tools, run ---- */

/* The full path of tool in PATH or the sbin directories, into buf. */
static bool find_tool(const char *tool, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096];

	snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/sbin", path ? path : "/usr/bin:/bin");
	for (char *save, *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", dir, tool);
		if (!access(buf, X_OK))
			return true;
	}
	return false;
}

/* Run "path args" and keep what it prints: NULL when it failed. */
static char *run_tool(const char *path, const char *args)
{
	char cmd[PATH_MAX + 64], *text;
	size_t n = 0, got;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", path, args);
	text = malloc(MAX_TEXT);
	if (!text)
		return NULL;
	f = popen(cmd, "re");
	if (!f) {
		free(text);
		return NULL;
	}
	while (n < MAX_TEXT - 1 && (got = fread(text + n, 1, MAX_TEXT - 1 - n, f)) > 0)
		n += got;
	text[n] = '\0';
	if (pclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* The tools, the arguments that print their rules, and their parsers. */
static const struct {
	const char *tool, *args;
	void (*parse)(const char *text, struct rk_doctor_check *c, struct doc_fw_drop *drop);
} tools[] = {
	{"nft", "-a list ruleset", nft_parse},
	{"iptables", "-S", ipt_parse},
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

void doc_check_firewall(struct doc *d)
{
	const char *given[NTOOLS] = {d->o->nft_text, d->o->iptables_text};
	char path[NTOOLS][PATH_MAX], *text;
	bool has[NTOOLS], any = false;
	struct rk_doctor_check c;

	for (size_t i = 0; i < NTOOLS; i++) {
		has[i] = given[0] || given[1] ? given[i] != NULL
					      : find_tool(tools[i].tool, path[i], sizeof(path[i]));
		any |= has[i];
	}
	doc_begin(&c, "firewall", NULL, 0, "firewall");
	doc_status(&c, RK_DOCTOR_SKIP, 0);
	if (!any) {
		doc_seen(&c, "neither nft nor iptables is installed: no rules to read (rules set "
			     "by other means are not seen)");
	} else if (geteuid() && !given[0] && !given[1]) {
		doc_seen(&c, "reading the rules takes root: run rdmakit doctor as root to check "
			     "them");
	}
	if (c.seen[0]) {
		doc_emit(d, &c);
		return;
	}
	for (size_t i = 0; i < NTOOLS; i++) {
		if (!has[i])
			continue;
		doc_begin(&c, "firewall", NULL, 0, "firewall");
		doc_status(&c, RK_DOCTOR_SKIP, 0);
		text = given[i] ? NULL : run_tool(path[i], tools[i].args);
		if (given[i] || text)
			tools[i].parse(given[i] ? given[i] : text, &c, &d->fw_roce);
		else
			doc_seen(&c, "%s %s failed (as root; its kernel support may be missing)",
				 tools[i].tool, tools[i].args);
		free(text);
		doc_emit(d, &c);
	}
}
