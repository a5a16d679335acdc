#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit devices, as a user runs it: text, --json, and bad input.
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

run 0 "$RDMAKIT" devices
has "$out" "port 1"
has "$out" "GID"
has "$out" "device memory"
has "$out" "Gb/s per lane"
cat "$out"

run 0 "$RDMAKIT" devices --json
dev=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["name"])' "$out")
echo "# first device: $dev"
json '
devs = d["devices"]
assert len(devs) >= 1, devs
for dev in devs:
    for k in ("name", "node_guid", "fw_ver", "max_dm_size", "atomic_cap", "ports"):
        assert k in dev, (k, dev.keys())
    assert len(dev["node_guid"]) == 19, dev["node_guid"]
    p = dev["ports"][0]
    assert p["port"] == 1, p["port"]
    for g in p["gids"]:
        assert g["type"] in ("IB", "RoCE v1", "RoCE v2"), g["type"]
        assert len(g["gid"]) == 39, g["gid"]
    for p in dev["ports"]:
        l = p["link"]
        for k in ("active_speed", "speed", "lane_gbps", "active_width", "width", "rate_gbps",
                  "rate_meaningful", "note"):
            assert k in l, (k, l)
        lanes = {"1X": 1, "2X": 2, "4X": 4, "8X": 8, "12X": 12}.get(l["width"], 0)
        assert abs(l["rate_gbps"] - lanes * l["lane_gbps"]) < 1e-9, l
        assert l["rate_meaningful"] == (l["note"] is None), l
        if p["state"] != "ACTIVE":
            assert not l["rate_meaningful"] and "not ACTIVE" in l["note"], l
'

# On Soft-RoCE: an active Ethernet port, device memory 0, and a RoCE v2 GID
# carrying each IPv4 address of the netdev under it, chosen by default.
case "$dev" in
rxe*)
	netdev=$(rdma link show "$dev/1" | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
	ips=$(ip -o -4 addr show dev "$netdev" | awk '{print $4}' | cut -d/ -f1 | tr '\n' ' ')
	echo "# $dev sits on $netdev with IPv4 $ips"
	[ -n "$ips" ] || { echo "FAIL: $netdev has no IPv4 address"; fails=$((fails + 1)); }
	json "
dev = [x for x in d['devices'] if x['name'] == '$dev'][0]
p = dev['ports'][0]
assert p['state'] == 'ACTIVE', p['state']
assert p['link_layer'] == 'Ethernet', p['link_layer']
assert dev['max_dm_size'] == 0, dev['max_dm_size']
assert dev['device_memory'] is False
assert dev['atomic_cap'] == 'HCA', dev['atomic_cap']
v2 = {g['ip']: g for g in p['gids'] if g['type'] == 'RoCE v2'}
for ip in '$ips'.split():
    assert ip in v2, (ip, sorted(v2))
    assert v2[ip]['netdev'] == '$netdev', v2[ip]
link = p['link']
assert link['rate_gbps'] > 0, link
assert link['rate_meaningful'] is False, link
assert 'emulated device (Soft-RoCE)' in link['note'], link
chosen = p['default_gid']
assert chosen['type'] == 'RoCE v2', chosen
g = [x for x in p['gids'] if x['index'] == chosen['index']][0]
assert not g['gid'].startswith('fe80'), ('link-local chosen', g)
assert g['ip'] in '$ips'.split(), (g, '$ips')
"
	run 0 "$RDMAKIT" devices -d "$dev"
	has "$out" "emulated device (Soft-RoCE)"
	;;
esac

run 0 "$RDMAKIT" devices -d "$dev" --json
json "assert [x['name'] for x in d['devices']] == ['$dev'], d"

run 1 "$RDMAKIT" devices -d nosuchdev0
has "$err" "no RDMA device named 'nosuchdev0'"
has "$err" "$dev"

run 0 "$RDMAKIT" devices --help
has "$out" "--json"
finish
