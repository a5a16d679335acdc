# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The wire cases, shared by guest1.sh (servers), guest2.sh (clients) and
# wire.sh (checks). One line per case, fields separated by '|':
#   name | server options | client options | client outcome (ok|fail) |
#   requester opcodes (client -> server, one per PSN) |
#   responder opcodes (server -> client, one per PSN) |
#   responder AETH syndrome (ack: every AETH an ACK; 0xNN: this NAK seen) |
#   text the client must print
# BTH opcodes (RC): 0/1/2 SEND First/Middle/Last, 4 SEND Only, 5 SEND Only
# with Immediate, 6/7/8 RDMA WRITE First/Middle/Last, 10 RDMA WRITE Only,
# 11 RDMA WRITE Only with Immediate, 12 RDMA READ Request, 13/14/15 READ
# Response First/Middle/Last, 16 READ Response Only, 17 Acknowledge,
# 18 Atomic Acknowledge, 19 Compare & Swap, 20 Fetch & Add.
# AETH syndrome 0x62: NAK (0b011 in bits 7-5), code 2 = Remote Access Error.
# rxe's path MTU here is 1024 (netdev MTU 1500), so 4096 bytes are 4 packets.
# shellcheck disable=SC2034 # used by the scripts that source this file
WIRE_PORT=19100
# The peer-killed case (guest1.sh/guest2.sh, after the capture): a 64 MiB
# WRITE whose server is killed; the client must report IBV_WC_RETRY_EXC_ERR
# within WIRE_KILL_BOUND seconds of its WRITE's start, and exit within
# WIRE_KILL_TOTAL of its own start (64 MiB setup included: that part is the
# host's speed, 30 s in one loaded whole-suite run, not the transport's).
# After the WRITE's start: 4.6 s in an idle guest, 15-22 s in four whole-suite
# runs, 31 s in CI's; what matters is that it ends, with RETRY_EXC_ERR (rxe
# at retry 7 never does), and the client's own timeout (-t 90) is longer.
WIRE_KILL_PORT=19099
WIRE_KILL_BOUND=60
WIRE_KILL_TOTAL=150
# Mixed MTU over RDMA CM (last; guest2.sh puts its netdev at 9000, RoCE MTU
# 4096, guest 1 stays at 1500, 1024). RoCE's CM gives the server the
# client's MTU; rdmakit's two sides take the smaller instead, so its client
# at 4096 and its server at 4096 each move checked data at 1024. rdma-core's
# rping client keeps 4096, which guest 1's link cannot carry back: rdmakit's
# rping server refuses it by name. Ports from WIRE_MTU_PORT: rping, client
# at 4096, server at 4096.
WIRE_MTU_PORT=19095
WIRE_CASES='
send-only|-s 64|--op send -s 64|ok|4|17|ack|step 1/1 SEND
send-first-middle-last|-s 4096|--op send -s 4096|ok|0 1 1 2|17|ack|step 1/1 SEND
send-imm|-s 64|--op send-imm -s 64|ok|5|17|ack|step 1/1 SEND
write-only|-s 64|--op write -s 64|ok|10|17|ack|step 1/1 WRITE
write-first-middle-last|-s 4096|--op write -s 4096|ok|6 7 7 8|17|ack|step 1/1 WRITE
write-imm|-s 64|--op write-imm -s 64|ok|11|17|ack|step 1/1 WRITE
read-response-only|-s 64|--op read -s 64|ok|12|16|ack|step 1/1 READ
read-response-first-middle-last|-s 4096|--op read -s 4096|ok|12|13 14 14 15|ack|step 1/1 READ
fetch-add|-s 64|--op fetch-add -s 64|ok|20|18|ack|FETCH_ADD
cmp-swap|-s 64|--op cmp-swap -s 64|ok|19|18|ack|CMP_SWAP
no-access-read|-s 64 --inject no-access|--op read -s 64|fail|12|17|0x62|IBV_WC_REM_ACCESS_ERR
no-access-write|-s 64 --inject no-access|--op write -s 64|fail|10|17|0x62|IBV_WC_REM_ACCESS_ERR
'

# The iWARP cases (MODE iwarp: two siw guests, every case over RDMA CM, the
# capture on their TCP ports, checked from tshark's iWARP dissectors). One
# line per case, fields separated by '|':
#   name | server options | client options | client outcome (ok|fail) |
#   client -> server messages | server -> client messages | client text
# A message is OPCODE/MODEL/SEGMENTS/BYTES: RDMAP opcode send, write,
# readreq (RDMA Read Request), readresp (RDMA Read Response) or terminate;
# DDP buffer model T (tagged: placed by STag and offset) or U (untagged: a
# queue); SEGMENTS 1 (one DDP segment, its last flag set) or n (more than
# one, the last flag on the last only; here, MSS 1448, at most 1424 bytes
# each untagged, 1428 tagged: 4096 bytes are 3); BYTES after the DDP/RDMAP
# headers (a READ Request is 28: sink STag and offset, size, source STag and
# offset), for a terminate its layer, error
# type and code: 1.1.0 is DDP, tagged buffer error, invalid STag (what siw
# says for a WRITE to an MR without remote write access). rdmakit's own SYNC
# messages (untagged Sends before and after each step) are left out.
# no-access-read: siw serves a READ of an MR registered without remote read
# access (seen, Linux 6.1: its transmit path checks a READ Response's source
# with no permission, siw_check_sgl_tx(qp->pd, wqe, 0) in siw_qp_tx.c; rxe
# refuses it, see WIRE_CASES); the case records that. The refused WRITE: the client's WRITE completes (iWARP WRITEs are not
# acknowledged), the server's QP gets IBV_EVENT_QP_ACCESS_ERR, sends the
# Terminate and the connection is reset; both sides fail.
WIRE_IWARP_PORT=19200
WIRE_IWARP_CASES='
send-small|-s 64|--op send -s 64|ok|send/U/1/64||step 1/1 SEND
send-multi-segment|-s 4096|--op send -s 4096|ok|send/U/n/4096||step 1/1 SEND
write|-s 64|--op write -s 64|ok|write/T/1/64||step 1/1 WRITE
write-multi-segment|-s 4096|--op write -s 4096|ok|write/T/n/4096||step 1/1 WRITE
read|-s 64|--op read -s 64|ok|readreq/U/1/28|readresp/T/1/64|step 1/1 READ
read-multi-segment|-s 4096|--op read -s 4096|ok|readreq/U/1/28|readresp/T/n/4096|step 1/1 READ
no-access-read|-s 64 --inject no-access|--op read -s 64|ok|readreq/U/1/28|readresp/T/1/64|every byte checked: OK
no-access-write|-s 64 --inject no-access|--op write -s 64|fail|write/T/1/64|terminate/U/1/1.1.0|64 bytes: FAILED
'
# wire_mode MODE: for roce (the RoCE cases) or iwarp, set CASES, PORT (the
# first case's port less 1), CM (the rc option both sides add), TRAFFIC (the
# traffic cases) and FILTER (dumpcap's capture filter).
wire_mode() {
	if [ "$1" = iwarp ]; then
		CASES=$WIRE_IWARP_CASES PORT=$WIRE_IWARP_PORT CM=--cm TRAFFIC=''
		FILTER="tcp portrange $((PORT + 1))-$((PORT + 99))"
	else
		CASES=$WIRE_CASES PORT=$WIRE_PORT CM='' TRAFFIC=$WIRE_TRAFFIC_CASES
		FILTER='udp port 4791'
	fi
}

# The traffic cases (after those above, captured with them): `rdmakit rc`
# with --tclass/--dscp/--hop-limit, over the TCP exchange and RDMA CM; the
# check is the IP header of every packet of the two data QPs, each way. One
# line per case, fields separated by '|':
#   name | server options | client options |
#   client -> server DSCP/TTL | server -> client DSCP/TTL |
#   text the client must print | text the server must print
# TCP exchange: each side's own class (its address vector). Soft-RoCE sends
# the IP route's TTL (64), whatever --hop-limit says, and each side says so.
# RDMA CM: the client's class is its id's type of service; the server's QP
# takes the class of the client's connect request, not its listener's
# (measured), and the server says so.
WIRE_TRAFFIC_PORT=19150
WIRE_TRAFFIC_CASES='
dscp-tcp|-s 64 --dscp 10 --hop-limit 9|--op write -s 64 --tclass 184 --hop-limit 17|46/64|10/64|tclass 184 (DSCP 46, ECN 0), hop limit 17|hop limit 9 is not on the wire
dscp-cm|-s 64 --cm --dscp 10|--op write -s 64 --cm --dscp 26|26/64|26/64|tclass 104 (DSCP 26, ECN 0)|takes the traffic class of the client
'
